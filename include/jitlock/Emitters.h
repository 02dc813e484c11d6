//===- jitlock/Emitters.h - asmjit monitor fast paths -----------*- C++ -*-===//
//
// The second front door: emitters that write the monitor enter/exit fast
// paths into an asmjit assembler, for baseline JITs and template
// interpreters. They implement the same protocol as the LLVM lowering
// (labels E1-E5, M1-M2, X1-X4, N1-N3 of lib/Runtime/Synchronizer.cpp), with
// the same checks and memory orderings, and call the same runtime slow paths,
// so code from both tiers can lock the same object at the same time.
//
// Every offset comes from jitlock_rt_get_layout(); nothing here or in the
// emitters restates the layout.
//
// The caller's contract:
//   - Obj and Thread hold the object and the current jitlock_thread; both
//     are preserved.
//   - Scratch registers are clobbered; nothing else is. They must be
//     distinct from each other and from Obj and Thread. On x86_64 the first
//     scratch register must be rax (cmpxchg's implicit operand).
//   - The slow path preserves every register, general-purpose and vector,
//     and the flags need not be preserved. It keeps the stack aligned and
//     works at any stack alignment the caller has on entry to the sequence.
//   - A sequence may write below the stack pointer, as a call would (the
//     slow path is one): the caller keeps nothing in a red zone across it.
//   - SlowPathMode::OutOfLine emits the slow call after a jump at the end of
//     the sequence (the caller continues after it). SlowPathMode::Labels
//     leaves the slow path to the caller: the sequence jumps to Slow, and the
//     caller emits, anywhere, a call to the slow-path stub and a jump back to
//     Done (see emitSlowCall). Labels the caller left invalid (default
//     constructed) are created by the emitter; the sequence binds Done at
//     its end (so Done must not be bound already) and emitSlowCall binds
//     Slow. One SlowPathLabels per sequence.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_EMITTERS_H
#define JITLOCK_EMITTERS_H

#include "jitlock/jitlock_rt.h"

#include <asmjit/arm/a64assembler.h>
#include <asmjit/x86.h>

#include <cstdint>

namespace jitlock::emit {

enum class SlowPathMode { OutOfLine, Labels };

/// Where a sequence's slow path goes, for SlowPathMode::Labels.
struct SlowPathLabels {
  asmjit::Label Slow; ///< The sequence jumps here to take the slow path.
  asmjit::Label Done; ///< The slow path jumps back here.
};

/// Runtime entry points the slow-path stubs call; by default the runtime's
/// jitlock_rt_monitor_enter/exit. Tests and embedders may substitute.
struct RuntimeEntries {
  const void *Enter = reinterpret_cast<const void *>(&jitlock_rt_monitor_enter);
  const void *Exit = reinterpret_cast<const void *>(&jitlock_rt_monitor_exit);
};

namespace x64 {

// x86_64 specifics. The caller's code follows the SysV ABI at the sequence
// (the direction flag is clear). The slow-path glue saves rax rcx rdx rsi
// rdi r8-r11 and the vector state (xsave of x87/SSE/AVX/AVX-512 state when
// the CPU running the emitter has XSAVE, else fxsave: the choice is made when
// the code is emitted, for the machine that emits it), realigns the stack
// through rbx (saved too), and calls the entry point through rax. The
// inflated exit (N3) saves Thread with a push/pop around its CAS.
struct MonitorOperands {
  asmjit::x86::Gp Obj;
  asmjit::x86::Gp Thread;
  asmjit::x86::Gp Scratch0; ///< must be rax
  asmjit::x86::Gp Scratch1;
};

/// Emits monitor enter / exit. Returns kErrorOk, or kErrorInvalidArgument
/// when the operands break the contract (nothing is emitted then).
asmjit::Error emitMonitorEnter(asmjit::x86::Assembler &A,
                               const jitlock_rt_layout &L,
                               const MonitorOperands &Ops, SlowPathMode Mode,
                               SlowPathLabels *Labels = nullptr,
                               const RuntimeEntries &RT = {});
asmjit::Error emitMonitorExit(asmjit::x86::Assembler &A,
                              const jitlock_rt_layout &L,
                              const MonitorOperands &Ops, SlowPathMode Mode,
                              SlowPathLabels *Labels = nullptr,
                              const RuntimeEntries &RT = {});

/// For SlowPathMode::Labels: binds Labels.Slow, calls the runtime's enter or
/// exit slow path with every register preserved, and jumps to Labels.Done.
asmjit::Error emitSlowCall(asmjit::x86::Assembler &A, bool Enter,
                           const MonitorOperands &Ops,
                           const SlowPathLabels &Labels,
                           const RuntimeEntries &RT = {});

} // namespace x64

namespace a64 {

struct MonitorOperands {
  asmjit::a64::Gp Obj;      ///< x register
  asmjit::a64::Gp Thread;   ///< x register
  asmjit::a64::Gp Scratch0; ///< x registers; x16-x18 and sp are not allowed
  asmjit::a64::Gp Scratch1;
  asmjit::a64::Gp Scratch2;
};

/// Which atomics to emit: LSE (casa/casl) or load/store-exclusive loops.
enum class Atomics { LLSC, LSE };

asmjit::Error emitMonitorEnter(asmjit::a64::Assembler &A,
                               const jitlock_rt_layout &L,
                               const MonitorOperands &Ops, Atomics At,
                               SlowPathMode Mode,
                               SlowPathLabels *Labels = nullptr,
                               const RuntimeEntries &RT = {});
asmjit::Error emitMonitorExit(asmjit::a64::Assembler &A,
                              const jitlock_rt_layout &L,
                              const MonitorOperands &Ops, Atomics At,
                              SlowPathMode Mode,
                              SlowPathLabels *Labels = nullptr,
                              const RuntimeEntries &RT = {});
asmjit::Error emitSlowCall(asmjit::a64::Assembler &A, bool Enter,
                           const MonitorOperands &Ops,
                           const SlowPathLabels &Labels,
                           const RuntimeEntries &RT = {});

} // namespace a64

} // namespace jitlock::emit

#endif
