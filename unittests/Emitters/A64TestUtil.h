//===- A64TestUtil.h - Running AArch64 emitter output under test -*- C++
//-*-===//
//
// The machinery of the AArch64 emitter tests (A64EmitterTest.cpp), which run
// on AArch64 (under qemu-aarch64 -cpu max):
//
//  * Assignments: which registers hold the object, the thread and the three
//    scratch values.
//  * Probes: functions generated around emitted sequences. A probe loads
//    every general-purpose register (x0-x30) and every vector register
//    (q0-q31) from a RegState, runs the sequences, and stores all of them
//    into another RegState, so that a test sees exactly which registers the
//    sequences changed. A probe may run with sp misaligned by 8.
//  * Shims: the RuntimeEntries the probes call instead of the runtime. A
//    shim counts the call, records its arguments and whether sp was 16-byte
//    aligned, overwrites every register a C function may overwrite (all of
//    x0-x18 and v0-v31, including the upper halves of v8-v15) on the way in
//    and out, and calls the runtime (or, for the synthetic layouts, nothing).
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_EMITTERS_A64TESTUTIL_H
#define JITLOCK_UNITTESTS_EMITTERS_A64TESTUTIL_H

#include "Emission.h"

#include "jitlock/Emitters/AArch64.h"
#include "jitlock/jitlock_rt.h"

#include <asmjit/arm/a64assembler.h>
#include <asmjit/core.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace a64_test {

namespace A64 = asmjit::a64;
namespace J = jitlock::emit;
using J::RuntimeEntries;
using J::SlowPathLabels;
using J::SlowPathMode;
using J::a64::Atomics;
using J::a64::MonitorOperands;

//===-- What every emitter test emits with --------------------------------===//

/// The runtime's layout, read once.
const jitlock_rt_layout &layout();
/// The one JitRuntime that holds every test's code (code is released
/// through the runtime that added it).
asmjit::JitRuntime &jit();

using Emission = emit_test_common::Emission<A64::Assembler, jit>;

/// Keeps the first error of a series of emitter calls.
struct Checked {
  asmjit::Error Err = asmjit::kErrorOk;
  void operator()(asmjit::Error E) {
    if (!Err)
      Err = E;
  }
};

//===-- Register assignments ----------------------------------------------===//

/// Register ids (0-30) of the object, the thread and the scratch registers.
struct Assignment {
  uint32_t Obj, Thread, S0, S1, S2;

  MonitorOperands operands() const {
    return {A64::x(Obj), A64::x(Thread), A64::x(S0), A64::x(S1), A64::x(S2)};
  }
  bool isScratch(uint32_t Id) const { return Id == S0 || Id == S1 || Id == S2; }
  bool uses(uint32_t Id) const {
    return Id == Obj || Id == Thread || isScratch(Id);
  }
  std::string str() const;
  /// A gtest-safe name: "o0_t1_s2_3_4".
  std::string name() const;
};

/// Hand-picked assignments (x0/x1 in both orders, x19-x28, x29/x30, x16-x18
/// as object or thread, scratch registers in x0-x7) and seeded random ones.
std::vector<Assignment> assignments();

/// Registers, other than those of `As`, for a probe's own values (counters,
/// a second object, a loop count).
std::vector<uint32_t> freeRegisters(const Assignment &As);

//===-- Probes
//-------------------------------------------------------------===//

struct alignas(16) RegState {
  uint64_t X[32]; ///< x0-x30; X[31] unused.
  uint8_t V[32][16];
};

struct alignas(16) ProbeFrame {
  RegState In;
  RegState Out;
  uint64_t SpBefore = 0, SpAfter = 0;
};

/// The wrapper every A64 probe builds around the code it tests, in three
/// parts (the x86_64 suites have emitProbeEntry/emitProbeExit). Its frame
/// argument (x0) starts with a `RegState In`; `OutOff` and `SpAfterOff` are
/// where the probe's frame struct keeps `Out` and the sp the code ended
/// with.
namespace probe {
/// The wrapper's own stack frame: callee-saved registers, the frame
/// argument and x18.
constexpr int32_t FrameSize = 192;
constexpr int32_t FrameSlot = 160, SavedX0Slot = 168, SavedX18Slot = 176;
/// Saves the callee-saved registers, the frame argument (x0) and x18.
void saveCallerState(A64::Assembler &A, Checked &Ok);
/// Loads every register from the frame's `In` (x0, the frame, last), then
/// misaligns sp by 8 if asked.
void loadInRegisters(A64::Assembler &A, Checked &Ok, bool MisalignSp);
/// Undoes the misalignment, stores every register into `Out` and sp at
/// `SpAfterOff`, restores what saveCallerState saved and returns.
void storeOutAndReturn(A64::Assembler &A, Checked &Ok, bool MisalignSp,
                       int32_t OutOff, int32_t SpAfterOff);
} // namespace probe

/// The end of every --dump mode: unless emitting failed (`E`), lays out
/// `Code` and prints its words as bytes, four to a line, for
/// llvm-mc --disassemble; returns the process's exit status.
int printDump(asmjit::CodeHolder &Code, asmjit::Error E);

/// One monitor operation in a probe's body.
struct Op {
  bool Enter;
  uint32_t ObjReg; ///< The register holding the object (operands' Obj).
};

/// What a probe runs.
struct ProbeSpec {
  Assignment As;
  Atomics At = Atomics::LSE;
  SlowPathMode Mode = SlowPathMode::OutOfLine;
  bool MisalignSp = false;
  const jitlock_rt_layout *Layout = nullptr;
  RuntimeEntries Entries;
  std::vector<Op> Ops;
  /// When set, the body is a loop: Ops, then Increment (a 64-bit add of 1
  /// at [x(CounterReg)]) after the op at index IncrementAfter, repeated
  /// x(LoopReg) times.
  bool Loop = false;
  uint32_t LoopReg = 0, CounterReg = 0;
  std::vector<size_t> IncrementAfter;
  /// Loop only: emitted at the top of every iteration (it may use the
  /// scratch registers).
  std::function<void(A64::Assembler &)> EachIteration;
};

using ProbeFn = void (*)(ProbeFrame *);

/// Generates the probe; returns null (and records a gtest failure) when an
/// emitter or the assembler fails.
ProbeFn buildProbe(const ProbeSpec &Spec);
void releaseProbe(ProbeFn Fn);

/// Fills `S` with a pattern derived from `Seed`, distinct per register.
void fillPattern(RegState &S, uint64_t Seed);

/// Checks that every register but the scratch ones has its value from In,
/// and that sp came back. Records gtest failures naming `What`.
void expectPreserved(const ProbeFrame &F, const Assignment &As,
                     const std::string &What);

//===-- Shims
//--------------------------------------------------------------===//

struct ShimLog {
  int Enters = 0, Exits = 0;
  int QueuedExits = 0; ///< Calls of RuntimeEntries::ExitQueued.
  /// When set, an ExitQueued call records *WatchOwner (the owner word of
  /// the monitor the exit released) in OwnerAtQueuedExit.
  const uint64_t *WatchOwner = nullptr;
  uint64_t OwnerAtQueuedExit = ~uint64_t(0);
  /// Set: runtimeShims' ExitQueued records the call and returns, instead of
  /// calling the runtime (whose XQ would wait for a queue a test faked).
  bool FakeQueuedExit = false;
  int MisalignedSp = 0;
  int Errors = 0;     ///< Runtime calls that did not return JITLOCK_OK.
  int LastResult = 0; ///< The last runtime call's result.
  /// When set, every call checks that *WatchTop == WantTop (a lock stack
  /// top the call must see) and counts the calls that do not.
  const uint32_t *WatchTop = nullptr;
  uint32_t WantTop = 0;
  int TopMismatches = 0;
  jitlock_thread *LastThread = nullptr;
  void *LastObj = nullptr;
};

/// The calling thread's log (each thread has its own).
ShimLog &shimLog();

/// Entries that log and then call jitlock_rt_monitor_enter/exit and
/// jitlock_rt_monitor_exit_queued_slow.
RuntimeEntries runtimeShims();
/// Entries that log and do nothing else (for synthetic layouts).
RuntimeEntries recordingShims();

bool hasLSE();

/// For shims of other entry points: overwrites every register a C function
/// may overwrite (as the monitor shims do), and whether the caller's sp was
/// 16-byte aligned.
void clobberAllCallerSaved();
bool stackPointerAligned();

} // namespace a64_test

#endif
