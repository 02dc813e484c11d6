//===- RuntimeKernels.cpp - The runtime, pthread and allocation kernels ---===//
//
// The runtime path is what an interpreter does: C++ loops calling
// jitlock_rt_monitor_enter/exit. The pthread path locks a pthread_mutex_t per
// object; churn/alloc only allocates, so that churn's locking cost can be
// read off.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"

#include <benchmark/benchmark.h>

namespace jitlock::bench {

std::atomic<bool> KernelFailed{false};

namespace {

/// The churn allocator, shared by every path: the next 64 bytes of the arena,
/// zeroed (which is also PTHREAD_MUTEX_INITIALIZER, checked in main), with
/// the unlocked header. shapes.ll and the asmjit churn kernel do the same.
inline Object *allocObject(Object *Slot) {
  memset(Slot, 0, sizeof(Object));
  Slot->Header = 1;
  return Slot;
}

__attribute__((noinline)) void rtSimple(jitlock_thread *T, Object *A, Object *,
                                        uint64_t N) {
  int Bad = 0;
  for (uint64_t I = 0; I < N; ++I) {
    Bad |= jitlock_rt_monitor_enter(T, A);
    A->Payload = A->Payload + 1;
    Bad |= jitlock_rt_monitor_exit(T, A);
  }
  if (Bad)
    KernelFailed = true;
}

__attribute__((noinline)) void rtRecursive(jitlock_thread *T, Object *A,
                                           Object *, uint64_t N) {
  int Bad = 0;
  for (uint64_t I = 0; I < N; ++I) {
    Bad |= jitlock_rt_monitor_enter(T, A);
    Bad |= jitlock_rt_monitor_enter(T, A);
    A->Payload = A->Payload + 1;
    Bad |= jitlock_rt_monitor_exit(T, A);
    Bad |= jitlock_rt_monitor_exit(T, A);
  }
  if (Bad)
    KernelFailed = true;
}

__attribute__((noinline)) void rtSerial(jitlock_thread *T, Object *A, Object *B,
                                        uint64_t N) {
  int Bad = 0;
  for (uint64_t I = 0; I < N; ++I) {
    Bad |= jitlock_rt_monitor_enter(T, A);
    Bad |= jitlock_rt_monitor_enter(T, B);
    B->Payload = B->Payload + 1;
    Bad |= jitlock_rt_monitor_exit(T, B);
    Bad |= jitlock_rt_monitor_exit(T, A);
  }
  if (Bad)
    KernelFailed = true;
}

__attribute__((noinline)) void rtChurn(jitlock_thread *T, Object *Arena,
                                       Object *, uint64_t N) {
  int Bad = 0;
  for (uint64_t I = 0; I < N; ++I) {
    Object *O = allocObject(Arena + I);
    Bad |= jitlock_rt_monitor_enter(T, O);
    O->Payload = O->Payload + 1;
    Bad |= jitlock_rt_monitor_exit(T, O);
  }
  if (Bad)
    KernelFailed = true;
}

__attribute__((noinline)) void pthSimple(jitlock_thread *, Object *A, Object *,
                                         uint64_t N) {
  int Bad = 0;
  for (uint64_t I = 0; I < N; ++I) {
    Bad |= pthread_mutex_lock(&A->Mutex);
    A->Payload = A->Payload + 1;
    Bad |= pthread_mutex_unlock(&A->Mutex);
  }
  if (Bad)
    KernelFailed = true;
}

__attribute__((noinline)) void pthChurn(jitlock_thread *, Object *Arena,
                                        Object *, uint64_t N) {
  int Bad = 0;
  for (uint64_t I = 0; I < N; ++I) {
    Object *O = allocObject(Arena + I);
    Bad |= pthread_mutex_lock(&O->Mutex);
    O->Payload = O->Payload + 1;
    Bad |= pthread_mutex_unlock(&O->Mutex);
  }
  if (Bad)
    KernelFailed = true;
}

/// churn/alloc: the allocation and the increment, with compiler barriers
/// where the lock operations would be, so that the compiler neither merges
/// the objects' stores nor vectorizes across objects.
__attribute__((noinline)) void allocChurn(jitlock_thread *, Object *Arena,
                                          Object *, uint64_t N) {
  for (uint64_t I = 0; I < N; ++I) {
    Object *O = allocObject(Arena + I);
    benchmark::ClobberMemory();
    O->Payload = O->Payload + 1;
    benchmark::ClobberMemory();
  }
}

} // namespace

KernelFn runtimeKernel(Kernel K) {
  const KernelFn Rt[NumKernels] = {rtSimple, rtRecursive, rtSerial, rtChurn};
  return Rt[K];
}

KernelFn pthreadKernel(Kernel K) { return K == KChurn ? pthChurn : pthSimple; }

KernelFn allocKernel() { return allocChurn; }

} // namespace jitlock::bench
