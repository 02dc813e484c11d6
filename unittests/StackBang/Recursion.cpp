//===- Recursion.cpp - Deep recursions for the stack banging tests -------===//
#include "Recursion.h"

namespace stackbang_test {

static uintptr_t watermarkOffset() {
  static const uint32_t Offset = [] {
    jitlock_rt_layout L{};
    jitlock_rt_get_layout(&L);
    return L.stack_watermark_offset;
  }();
  return Offset;
}

// Its own frame lies just below the caller's stack pointer.
__attribute__((noinline)) uintptr_t frameAddress() {
  return reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
}

__attribute__((noinline)) void checkedRecurse(CheckedRecursion &R,
                                              unsigned Depth) {
  // The method entry check.
  uintptr_t SpNeeded =
      reinterpret_cast<uintptr_t>(__builtin_frame_address(0)) - R.FrameBytes;
  uintptr_t Mark =
      __atomic_load_n(reinterpret_cast<uintptr_t *>(
                          reinterpret_cast<char *>(R.Self) + watermarkOffset()),
                      __ATOMIC_RELAXED);
  if (SpNeeded <= Mark)
    jitlock_rt_stack_bang(R.Self, SpNeeded);

  volatile char Pad[64];
  Pad[Depth % 64] = char(Depth);
  if (Depth > R.Deepest)
    R.Deepest = Depth;
  void *Lock = R.LockAt ? R.LockAt(R.Ctx, Depth) : nullptr;
  if (Lock && R.NumTaken < R.TakenCap &&
      jitlock_rt_monitor_enter(R.Self, Lock) == JITLOCK_OK)
    R.Taken[R.NumTaken++] = Lock;
  else
    Lock = nullptr;
  if (Depth < R.MaxDepth)
    checkedRecurse(R, Depth + 1);
  if (Lock) {
    jitlock_rt_monitor_exit(R.Self, Lock);
    --R.NumTaken;
  }
  // Used after the call: no tail call.
  Pad[(Depth + 1) % 64] = 0;
}

// Not instrumented by the sanitizers, like the JIT code it stands for, so
// that its overflow faults in its own frames. Instrumented, each level calls
// into the sanitizer's runtime, and a guard fault can land there, in code
// that holds a runtime lock (TSan's per-thread slot lock, which it takes to
// switch trace parts, among others); recovery abandons the lock with the
// frames (see docs/stack-banging.md), and the thread deadlocks in its next
// intercepted mutex operation, holding the monitors its guarded call took.
__attribute__((noinline, disable_sanitizer_instrumentation)) unsigned
nativeRecurse(unsigned Depth, unsigned Max) {
  volatile char Buf[192];
  Buf[Depth % 192] = char(Depth);
  if (Depth >= Max)
    return Buf[0];
  return nativeRecurse(Depth + 1, Max) + Buf[(Depth * 7) % 192];
}

} // namespace stackbang_test
