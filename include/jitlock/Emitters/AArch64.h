//===- jitlock/Emitters/AArch64.h - AArch64 emitters ------------*- C++ -*-===//
//
// The AArch64 emitters (lib/Emitters/AArch64); they need asmjit's AArch64
// backend. The contract shared by both targets (operands, slow paths, stack
// banging, safepoint polls, the current thread) is stated in
// jitlock/Emitters/Common.h.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_EMITTERS_AARCH64_H
#define JITLOCK_EMITTERS_AARCH64_H

#include "jitlock/Emitters/Common.h"

#include <asmjit/arm/a64assembler.h>

namespace jitlock::emit {

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
/// As x64::emitSlowCall (both forms).
asmjit::Error emitSlowCall(asmjit::a64::Assembler &A, bool Enter,
                           const MonitorOperands &Ops,
                           const SlowPathLabels &Labels,
                           const RuntimeEntries &RT = {});
asmjit::Error emitSlowCall(asmjit::a64::Assembler &A, SlowCall Call,
                           const MonitorOperands &Ops,
                           const SlowPathLabels &Labels,
                           const RuntimeEntries &RT = {});

/// Three distinct x registers (x0-x30); the scratch registers may be x16
/// and x17 but not x18. Watermark with ExtraBytes == 0 writes only
/// Scratch1; the slow path writes both.
struct StackBangOperands {
  asmjit::a64::Gp Thread;
  asmjit::a64::Gp Scratch0;
  asmjit::a64::Gp Scratch1;
};

/// As x64::emitStackBang.
asmjit::Error emitStackBang(asmjit::a64::Assembler &A,
                            const jitlock_rt_layout &L,
                            const StackBangOperands &Ops, uint32_t ExtraBytes,
                            BangMode Bang, SlowPathMode Mode,
                            SlowPathLabels *Labels = nullptr,
                            const RuntimeEntries &RT = {});
asmjit::Error emitStackBangSlowCall(asmjit::a64::Assembler &A,
                                    const StackBangOperands &Ops,
                                    uint32_t ExtraBytes,
                                    const SlowPathLabels &Labels,
                                    const RuntimeEntries &RT = {});

/// Two distinct x registers (x0-x30): Thread is only read; Scratch, not
/// x18, receives the poll byte and is clobbered (x16 and x17 are allowed).
struct SafepointPollOperands {
  asmjit::a64::Gp Thread;
  asmjit::a64::Gp Scratch;
};

/// As x64::emitSafepointPoll: `ldrb wScratch, [Thread, #off]` then `tbnz
/// wScratch, #bit, Labels.Slow` (Labels; the slow call must be within
/// tbnz's +-32 KiB), or `tbz` over the glue (OutOfLine).
asmjit::Error emitSafepointPoll(asmjit::a64::Assembler &A,
                                const jitlock_rt_layout &L,
                                const SafepointPollOperands &Ops,
                                SlowPathMode Mode,
                                SlowPathLabels *Labels = nullptr,
                                const RuntimeEntries &RT = {});
asmjit::Error emitSafepointPollSlowCall(asmjit::a64::Assembler &A,
                                        const SafepointPollOperands &Ops,
                                        const SlowPathLabels &Labels,
                                        const RuntimeEntries &RT = {});

/// As x64::emitLoadThread: `mrs Dst, tpidr_el0` plus the offset. Dst is an
/// x register (x0-x30).
asmjit::Error emitLoadThread(asmjit::a64::Assembler &A,
                             const jitlock_rt_layout &L,
                             const asmjit::a64::Gp &Dst);

} // namespace a64

} // namespace jitlock::emit

#endif // JITLOCK_EMITTERS_AARCH64_H
