//===- jitlock/Emitters/X86.h - x86_64 emitters -----------------*- C++ -*-===//
//
// The x86_64 emitters (lib/Emitters/X86); they need asmjit's x86 backend. The
// contract shared by both targets (operands, slow paths, stack banging,
// safepoint polls, the current thread) is stated in jitlock/Emitters/Common.h.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_EMITTERS_X86_H
#define JITLOCK_EMITTERS_X86_H

#include "jitlock/Emitters/Common.h"

#include <asmjit/x86.h>

namespace jitlock::emit {

namespace x64 {

// x86_64 specifics. The caller's code follows the SysV ABI at the sequence
// (the direction flag is clear). The slow-path glue saves rax rcx rdx rsi
// rdi r8-r11 and the vector state (xsave of x87/SSE/AVX/AVX-512 state when
// the CPU running the emitter has XSAVE, else fxsave: the choice is made when
// the code is emitted, for the machine that emits it), realigns the stack
// through rbx (saved too), and calls the entry point through rax.
//
// Scratch2 is optional. Not given (default-constructed, as when an
// aggregate initializer stops after Scratch1), the sequences use rax and
// Scratch1 only: the enter reloads the lock-stack top after its CAS
// (cmpxchg took rax, which held it). Given, it must be a 64-bit GPR like
// the others (not rsp, distinct from all four); the enter keeps the top in
// it from E2 to the push, so nothing is reloaded after the CAS. The exit
// does not use it. Like the other scratch registers, it is clobbered. Code
// emitted with and without it locks the same objects together correctly.
struct MonitorOperands {
  asmjit::x86::Gp Obj;
  asmjit::x86::Gp Thread;
  asmjit::x86::Gp Scratch0; ///< must be rax
  asmjit::x86::Gp Scratch1;
  asmjit::x86::Gp Scratch2{}; ///< optional: default-constructed = not given
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
/// For an exit (Enter false) it then binds Labels.Queued, when the exit
/// created it, and calls RT.ExitQueued the same way: the exit's whole slow
/// side in one call.
asmjit::Error emitSlowCall(asmjit::x86::Assembler &A, bool Enter,
                           const MonitorOperands &Ops,
                           const SlowPathLabels &Labels,
                           const RuntimeEntries &RT = {});
/// One stub: binds the label of `Call` (Slow, or Queued for ExitQueued),
/// calls its entry point with every register preserved, and jumps to
/// Labels.Done.
asmjit::Error emitSlowCall(asmjit::x86::Assembler &A, SlowCall Call,
                           const MonitorOperands &Ops,
                           const SlowPathLabels &Labels,
                           const RuntimeEntries &RT = {});

/// Two distinct 64-bit GPRs, neither rsp. Scratch is written only by
/// Watermark with ExtraBytes != 0 (lea Scratch, [rsp - ExtraBytes]).
struct StackBangOperands {
  asmjit::x86::Gp Thread;
  asmjit::x86::Gp Scratch;
};

/// Emits the method-entry stack check (see "Stack banging"). Returns
/// kErrorOk, or kErrorInvalidArgument when the operands, layout or sizes
/// break the contract (nothing is emitted then).
asmjit::Error emitStackBang(asmjit::x86::Assembler &A,
                            const jitlock_rt_layout &L,
                            const StackBangOperands &Ops, uint32_t ExtraBytes,
                            BangMode Bang, SlowPathMode Mode,
                            SlowPathLabels *Labels = nullptr,
                            const RuntimeEntries &RT = {});

/// For BangMode::Watermark with SlowPathMode::Labels: binds Labels.Slow,
/// calls RT.StackBang(Thread, sp - ExtraBytes) with every register
/// preserved, and jumps to Labels.Done. ExtraBytes must be the sequence's.
asmjit::Error emitStackBangSlowCall(asmjit::x86::Assembler &A,
                                    const StackBangOperands &Ops,
                                    uint32_t ExtraBytes,
                                    const SlowPathLabels &Labels,
                                    const RuntimeEntries &RT = {});

/// A 64-bit GPR other than rsp holding the current jitlock_thread; it is
/// only read. The poll needs no scratch register.
struct SafepointPollOperands {
  asmjit::x86::Gp Thread;
};

/// Emits the safepoint poll (see "Safepoint polls"): `test byte ptr
/// [Thread + off], bit` then `jnz Labels.Slow` (Labels), or `jz` over the
/// glue (OutOfLine). Returns kErrorOk, or kErrorInvalidArgument when the
/// operands, layout or labels break the contract (nothing is emitted then).
asmjit::Error emitSafepointPoll(asmjit::x86::Assembler &A,
                                const jitlock_rt_layout &L,
                                const SafepointPollOperands &Ops,
                                SlowPathMode Mode,
                                SlowPathLabels *Labels = nullptr,
                                const RuntimeEntries &RT = {});

/// For SlowPathMode::Labels: binds Labels.Slow, calls
/// RT.SafepointPoll(Thread) with every register preserved, and jumps to
/// Labels.Done.
asmjit::Error emitSafepointPollSlowCall(asmjit::x86::Assembler &A,
                                        const SafepointPollOperands &Ops,
                                        const SlowPathLabels &Labels,
                                        const RuntimeEntries &RT = {});

/// Writes the current jitlock_thread* into Dst (see "The current thread").
asmjit::Error emitLoadThread(asmjit::x86::Assembler &A,
                             const jitlock_rt_layout &L,
                             const asmjit::x86::Gp &Dst);

} // namespace x64

} // namespace jitlock::emit

#endif // JITLOCK_EMITTERS_X86_H
