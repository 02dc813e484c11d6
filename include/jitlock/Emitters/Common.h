//===- jitlock/Emitters/Common.h - What both emitters share -----*- C++ -*-===//
//
// The second front door: emitters that write the monitor enter/exit fast
// paths into an asmjit assembler, for baseline JITs and template
// interpreters. They implement the same protocol as the LLVM lowering
// (labels E1-E5, M1-M2, X1-X4, N1-N3 of lib/Runtime/Synchronizer.cpp), with
// the same checks and memory orderings, and call the same runtime slow paths,
// so code from both tiers can lock the same object at the same time.
//
// Every offset comes from jitlock_rt_get_layout(); nothing here or in the
// emitters restates the layout. So does the monitor storage: the layout's
// monitor_storage (pointer, index or table, jitlock/MonitorStorage.h)
// decides how M1 and N2 find an inflated object's monitor, with no extra
// register; a layout without that storage's fields is refused like any
// other bad layout (kErrorInvalidArgument, nothing emitted). See
// docs/emitters.md, "Monitor storage".
//
// The caller's contract:
//   - Obj and Thread hold the object and the current jitlock_thread; both
//     are preserved.
//   - Scratch registers are clobbered; nothing else is. They must be
//     distinct from each other and from Obj and Thread. On x86_64 the first
//     scratch register must be rax (cmpxchg's implicit operand), and a third
//     one (Scratch2) is optional: left default-constructed, the sequences
//     are those of the two-register form; given, the enter keeps the
//     lock-stack top in it across its CAS (see x64::MonitorOperands).
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
//   - An exit has a second call: its inflated exit (N3) releases the
//     monitor and then, when threads are queued to enter it, calls
//     RT.ExitQueued (jitlock_rt_monitor_exit_queued_slow), not RT.Exit: the
//     monitor is no longer this thread's. OutOfLine emits both calls. In
//     Labels mode the exit jumps to Labels.Queued for it, and
//     emitSlowCall(A, /*Enter=*/false, ...) emits both stubs (RT.Exit at
//     Slow, RT.ExitQueued at Queued); emitSlowCall with a SlowCall emits one
//     of them, for a caller that places them apart. An enter leaves Queued
//     alone.
//   - The inflated exit takes its barrier from the layout's monitor_exit
//     (JITLOCK_EXIT_STORE: none; JITLOCK_EXIT_FENCE: a full fence between
//     the release store and the entry-count load); any other value is
//     refused like any other bad layout.
//
// Method-entry stack banging (emitStackBang) and safepoint polls
// (emitSafepointPoll) have contracts of their own; see "Stack banging" and
// "Safepoint polls" below. emitLoadThread fills the Thread register from
// TLS; see "The current thread".
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_EMITTERS_COMMON_H
#define JITLOCK_EMITTERS_COMMON_H

#include "jitlock/MonitorStorage.h"
#include "jitlock/StackBang.h"
#include "jitlock/jitlock_rt.h"

#include <asmjit/core.h>

#include <cstdint>

namespace jitlock::emit {

enum class SlowPathMode { OutOfLine, Labels };

/// Where a sequence's slow path goes, for SlowPathMode::Labels.
struct SlowPathLabels {
  asmjit::Label Slow; ///< The sequence jumps here to take the slow path.
  asmjit::Label Done; ///< The slow path jumps back here.
  /// Exits only: the inflated exit jumps here after releasing the monitor
  /// when threads are queued to enter it, for the RT.ExitQueued call.
  /// Created by the exit when left invalid; enters leave it untouched.
  asmjit::Label Queued = asmjit::Label();
};

/// Which runtime call a caller-placed stub makes (emitSlowCall).
enum class SlowCall {
  Enter,     ///< RT.Enter, bound at Labels.Slow of an enter
  Exit,      ///< RT.Exit, bound at Labels.Slow of an exit
  ExitQueued ///< RT.ExitQueued, bound at Labels.Queued of an exit
};

/// Runtime entry points the slow-path stubs call; by default the runtime's
/// jitlock_rt_monitor_enter/exit/exit_queued_slow, jitlock_rt_stack_bang and
/// jitlock_rt_safepoint_poll. Tests and embedders may substitute (a
/// substitute for StackBang must behave like it: return when there is room,
/// else not return; one for SafepointPoll must call jitlock_rt_safepoint_poll
/// or do what it does; one for ExitQueued must call
/// jitlock_rt_monitor_exit_queued_slow or do what it does, or queued threads
/// are never woken).
struct RuntimeEntries {
  const void *Enter =
      reinterpret_cast<const void *>(&jitlock_rt_monitor_enter_slow);
  const void *Exit =
      reinterpret_cast<const void *>(&jitlock_rt_monitor_exit_slow);
  const void *ExitQueued =
      reinterpret_cast<const void *>(&jitlock_rt_monitor_exit_queued_slow);
  const void *StackBang =
      reinterpret_cast<const void *>(&jitlock_rt_stack_bang);
  const void *SafepointPoll =
      reinterpret_cast<const void *>(&jitlock_rt_safepoint_poll);
};

//===----------------------------------------------------------------------===//
// Stack banging
//
// emitStackBang writes the method-entry stack check (docs/stack-banging.md),
// the same check as the LLVM lowering (pass parameter
// bang=watermark|always|none):
//
//   Watermark: need = sp - ExtraBytes; if need > [Thread +
//     stack_watermark_offset] (unsigned) the sequence falls through;
//     otherwise it calls RT.StackBang (jitlock_rt_stack_bang) with
//     (Thread, need), every register preserved, and continues after it.
//     The steady state is a load, a compare and a branch; nothing is stored.
//   Always: stores to the stack_shadow_pages pages below the frame, at
//     sp - ExtraBytes - i * stack_page_size (i = 1..shadow pages), every
//     time, nearest first; a frame larger than a page first gets its own
//     pages touched too (sp - j * page while within the frame), so that no
//     guard zone can be stepped over. There is no watermark and no slow
//     call: a guard-zone fault is the runtime's SIGSEGV backstop.
//   None: nothing is emitted (kErrorOk), labels are left untouched.
//
// Where it goes: at method entry, BEFORE the frame is set up (before
// callee-saved registers are pushed and sp is lowered), with ExtraBytes the
// number of bytes the prologue will then move sp down by (pushes, locals,
// outgoing arguments). Before, because
//   - the check must cover the frame before any of it is written, so that
//     no prologue store can be the one that faults in a guard zone;
//   - the slow path may not return: when there is no room it reports a
//     stack overflow and the default handler unwinds to the innermost
//     jitlock_rt_call_guarded, abandoning this frame and its callers. At
//     method entry the method holds nothing yet. Callers must hold nothing
//     that such an unwind would leak either: monitors taken through jitlock
//     (inline or runtime) are released by jitlock_rt_call_guarded, but
//     nothing else is (no malloc'd memory, foreign locks or half-updated
//     state may be owned only by the abandoned frames);
//   - the watermark slow path runs on the stack below sp: the shadow zone,
//     which the check itself guarantees, holds it (it needs about 2.6 KB
//     on x86_64 with AVX-512 state, under 1 KB on AArch64, plus the
//     runtime's own frames).
// (The LLVM lowering cannot choose: it reads sp after the prologue, so its
// extra bytes are those beyond the function's frame. Both compare
// sp - extra with the same watermark.)
// Thread must hold the current jitlock_thread at entry (a pinned register
// or an argument), and the scratch registers must be free at entry (on
// AArch64 not x30, which holds the return address; x16/x17 are allowed).
//
// Clobbered: the scratch registers and the flags, nothing else, the slow
// path included (it saves every other GPR and the vector state as the
// monitor glue does, and realigns the stack itself). Watermark with
// ExtraBytes == 0 leaves the scratch registers of x86_64 (and Scratch0 of
// AArch64) untouched. Always writes below sp, as a call would.
//
// ExtraBytes must be at most INT32_MAX; for Always, ExtraBytes plus the
// shadow zone must be too. SlowPathMode/SlowPathLabels work as for the
// monitor sequences, for Watermark only (Always and None have no slow
// path and ignore them). In Labels mode the caller emits the slow call with
// emitStackBangSlowCall, passing the same ExtraBytes: the glue recomputes
// `need` from the stack pointer, so the scratch registers need not survive
// until the call.
//===----------------------------------------------------------------------===//

/// How a method entry checks its stack (see above): one enum for both front
/// doors, so that jitlock::emit::BangMode still names it.
using jitlock::BangMode;

//===----------------------------------------------------------------------===//
// Safepoint polls
//
// emitSafepointPoll writes the inline poll of the safepoint protocol (P1 at
// the top of lib/Runtime/Safepoint.cpp): it tests the armed bit of the poll
// word at [Thread + poll_word_offset] and, when the bit is set, calls
// RT.SafepointPoll (jitlock_rt_safepoint_poll, P2) with Thread, every
// register preserved, and continues after it. P2 returns once a safepoint in
// progress has ended and the handshakes pending for the thread have run.
// The steady state, disarmed, is one byte load (x86_64: the memory operand
// of `test`; AArch64: `ldrb`), a bit test and a branch not taken (Labels) or
// taken over the glue (OutOfLine). Nothing is stored.
//
// Where it goes: wherever managed code must reach a poll in bounded time,
// typically loop back-edges and method returns. An attached thread in the
// `managed` state that runs a loop without a poll keeps every safepoint
// waiting. At the poll the thread may hold monitors and live values in any
// register: the slow path saves everything, and a safepoint or handshake
// only reads the thread's state.
//
// The poll word is read with a plain load (relaxed): P2 re-reads it
// (seq_cst) and decides, and an arm the load missed is seen by a later poll.
// The armed bit may be any single bit of the 64-bit word (the runtime's is
// bit 0): the emitters test the byte that holds it, both targets being
// little-endian. A layout with another armed mask, another ABI version, or a
// poll byte beyond INT32_MAX from the thread is refused.
//
// Clobbered: x86_64, the flags only (no scratch register at all); AArch64,
// Scratch and the flags. SlowPathMode and SlowPathLabels work as for the
// monitor sequences; in Labels mode the caller emits the slow call with
// emitSafepointPollSlowCall. The glue writes below the stack pointer, as a
// call would, and works at any stack alignment.
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// The current thread
//
// Every sequence above takes the current jitlock_thread in a register.
// emitLoadThread puts it there the way the LLVM lowering's thread=tls mode
// does (lib/Passes/LowerThread.cpp): the thread pointer plus the layout's
// thread_tls_offset.
//
//   x86_64:  mov Dst, qword ptr fs:[0]   ; the thread pointer (TCB self)
//            lea Dst, [Dst + off]
//   AArch64: mrs Dst, tpidr_el0
//            add Dst, Dst, #off          ; one or two add/sub immediates
//
// (no lea or add when the offset is 0). Only Dst is written: no flags, no
// memory, no call. The result is the calling OS thread's structure, what
// jitlock_rt_code_thread() returns, attached or not; on an attached thread
// it equals jitlock_rt_current(). The structure lives in static TLS, so its
// address never changes for the life of the OS thread: load it once at a
// method's entry and keep it in a register. On a thread that is not attached
// its lock stack reads as full, so every monitor sequence takes its slow
// path, where the runtime handles the call as misuse (docs/runtime.md)
// instead of touching memory.
//
// The TLS offset is a property of the process (of the executable and the
// libraries it loaded), so code emitted with it runs only in the process
// that emitted it, as any JIT code with absolute addresses does.
//
// Returns kErrorInvalidArgument, emitting nothing, when Dst is not a 64-bit
// GPR (rsp on x86_64; sp, xzr or a w register on AArch64), when the layout
// has another ABI version, or when no short sequence encodes the offset
// (beyond the int32 range on x86_64, beyond +-(2^24 - 1) on AArch64).
//===----------------------------------------------------------------------===//

} // namespace jitlock::emit

#endif // JITLOCK_EMITTERS_COMMON_H
