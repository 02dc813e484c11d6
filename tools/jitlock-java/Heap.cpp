//===- Heap.cpp - Bump-pointer allocation with a limit --------------------===//
//
// One reserved address range of --heap bytes; each thread bumps a pointer
// through chunks (TLABs) it takes from the range with one atomic add. Fresh
// pages are zero, and nothing is ever freed (there is no collector), so an
// allocation is a bump and two stores. Past the limit: OutOfMemoryError.
//
//===----------------------------------------------------------------------===//
#include "Dependencies.h"
#include "VM.h"

#include <sys/mman.h>

namespace jitlock::java {

namespace {
char *HeapBase = nullptr;
uint64_t HeapSize = 0;
std::atomic<uint64_t> HeapTop{0};
constexpr uint64_t TlabSize = 64 * 1024;

/// Takes `Size` bytes (a multiple of 8) from the shared range.
char *takeShared(uint64_t Size) {
  uint64_t Old = HeapTop.load(std::memory_order_relaxed);
  do {
    if (Old + Size > HeapSize)
      return nullptr;
  } while (!HeapTop.compare_exchange_weak(Old, Old + Size,
                                          std::memory_order_relaxed));
  return HeapBase + Old;
}

char *allocate(VMThread *T, uint64_t Size) {
  Size = (Size + 7) & ~uint64_t(7);
  if (uint64_t(T->TlabEnd - T->TlabTop) >= Size) {
    char *P = T->TlabTop;
    T->TlabTop += Size;
    return P;
  }
  if (Size > TlabSize / 4)
    return takeShared(Size);
  char *Tlab = takeShared(TlabSize);
  if (!Tlab)
    return takeShared(Size); // what is left may still fit this one
  T->TlabTop = Tlab + Size;
  T->TlabEnd = Tlab + TlabSize;
  return Tlab;
}

void initObject(Object *O, Class *C) {
  // Reservable in the reserved locking mode (reservable_value is 0 in the
  // others): the first thread to lock the object reserves it (R2).
  O->Header = Layout.unlocked_value | Layout.reservable_value;
  O->Cls = C;
}

} // namespace

void initHeap(uint64_t Limit) {
  HeapSize = Limit;
  void *P = mmap(nullptr, Limit, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  HeapBase = P == MAP_FAILED ? nullptr : static_cast<char *>(P);
  if (!HeapBase)
    HeapSize = 0;
}

uint64_t heapUsed() { return HeapTop.load(std::memory_order_relaxed); }

Object *allocObject(VMThread *T, Class *C) {
  char *P = allocate(T, C->InstanceSize);
  if (!P) {
    throwOutOfMemory(T);
    return nullptr;
  }
  auto *O = reinterpret_cast<Object *>(P);
  initObject(O, C);
  if (!C->Instantiated.load(std::memory_order_acquire))
    noteInstantiated(C);
  return O;
}

Array *allocArray(VMThread *T, Class *ArrayClass, int32_t Length) {
  if (Length < 0) {
    throwNew(T, "java/lang/NegativeArraySizeException", std::to_string(Length));
    return nullptr;
  }
  uint64_t Size = sizeof(Array) + uint64_t(Length) * ArrayClass->ElemSize;
  char *P = Size > HeapSize ? nullptr : allocate(T, Size);
  if (!P) {
    throwOutOfMemory(T);
    return nullptr;
  }
  auto *A = reinterpret_cast<Array *>(P);
  initObject(A, ArrayClass);
  A->Length = Length;
  return A;
}

} // namespace jitlock::java
