//===- EmitterTestUtil.h - Shared helpers for the x86_64 emitter tests ----===//
//
// Register assignments, a runtime shim that checks the stack alignment of
// every slow-path call and clobbers every caller-saved register on its way
// back, and "programs": loops of monitor operations compiled with the
// emitters and run natively, for the contended and mixed-tier tests.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_EMITTERS_EMITTERTESTUTIL_H
#define JITLOCK_UNITTESTS_EMITTERS_EMITTERTESTUTIL_H

#include "Emission.h"
#include "LockState.h"

#include "jitlock/Emitters.h"
#include "jitlock/jitlock_rt.h"

#include <asmjit/x86.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cpuid.h>
#include <cstdint>
#include <string>
#include <vector>

namespace emit_test {

using namespace asmjit;
namespace jx = jitlock::emit::x64;
using jitlock::emit::RuntimeEntries;
using jitlock::emit::SlowPathLabels;
using jitlock::emit::SlowPathMode;

/// Calls JIT-compiled code through a function pointer. UBSan's
/// -fsanitize=function (part of the asan preset's `undefined`) checks a
/// signature word just before the callee, which JIT code does not have and
/// which may lie on an unmapped page; calls into JIT code go through here.
template <typename Fn, typename... Args>
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
inline void
callJit(Fn *F, Args... As) {
  F(As...);
}

inline JitRuntime &jit() {
  static JitRuntime R;
  return R;
}

using Emission = emit_test_common::Emission<x86::Assembler, jit>;

inline jitlock_rt_layout layout() {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  return L;
}

inline const char *regName(uint32_t Id) {
  static const char *const Names[16] = {
      "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
      "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
  return Id < 16 ? Names[Id] : "?";
}

/// Which registers hold the object, the thread and the second scratch value
/// (the first scratch register is always rax), and the optional third
/// scratch register (left default-constructed: the two-register form).
struct Assignment {
  x86::Gp Obj, Thread, Scratch1;
  x86::Gp Scratch2{};
  bool hasScratch2() const { return !Scratch2.equals(x86::Gp()); }
  jx::MonitorOperands operands() const {
    return {Obj, Thread, x86::rax, Scratch1, Scratch2};
  }
  std::string str() const {
    return std::string("obj=") + regName(Obj.id()) +
           " thread=" + regName(Thread.id()) + " scratch=rax," +
           regName(Scratch1.id()) +
           (hasScratch2() ? std::string(",") + regName(Scratch2.id()) : "");
  }
  /// Whether the sequences may write register `Id`.
  bool isScratch(uint32_t Id) const {
    return Id == x86::Gp::kIdAx || Id == Scratch1.id() ||
           (hasScratch2() && Id == Scratch2.id());
  }
  bool uses(uint32_t Id) const {
    return Id == Obj.id() || Id == Thread.id() || isScratch(Id);
  }
};

/// The registers an assignment may use: every GPR but rsp and rax.
inline std::vector<uint32_t> assignableIds() {
  std::vector<uint32_t> Ids;
  for (uint32_t Id = 0; Id < 16; ++Id)
    if (Id != x86::Gp::kIdSp && Id != x86::Gp::kIdAx)
      Ids.push_back(Id);
  return Ids;
}

/// Every ordered choice of (Obj, Thread, Scratch1): 14 * 13 * 12 = 2184.
inline std::vector<Assignment> allAssignments() {
  std::vector<Assignment> Out;
  for (uint32_t O : assignableIds())
    for (uint32_t T : assignableIds())
      for (uint32_t S : assignableIds())
        if (O != T && O != S && T != S)
          Out.push_back({x86::gpq(O), x86::gpq(T), x86::gpq(S)});
  return Out;
}

/// Every ordered choice of (Obj, Thread, Scratch1, Scratch2):
/// 14 * 13 * 12 * 11 = 24024.
inline std::vector<Assignment> allThreeScratchAssignments() {
  std::vector<Assignment> Out;
  for (const Assignment &As : allAssignments())
    for (uint32_t S2 : assignableIds())
      if (!As.uses(S2))
        Out.push_back({As.Obj, As.Thread, As.Scratch1, x86::gpq(S2)});
  return Out;
}

/// A small spread for the threaded tests: the argument registers in both
/// orders, the REX registers (r12 and r13 need special ModRM/SIB forms as
/// bases), rbx/rbp, and the registers the glue itself uses.
inline std::vector<Assignment> sampleAssignments() {
  using namespace x86;
  return {
      {rdi, rsi, rdx}, {rsi, rdi, rcx}, {r12, r13, r8},  {r13, r12, r15},
      {rbx, rbp, r11}, {rbp, rbx, r9},  {r8, r9, r10},   {r15, r14, rbx},
      {r11, r10, rdi}, {rdx, rcx, rsi}, {rcx, r11, r12}, {r14, r15, r13},
  };
}

/// The same spread with a third scratch register, which indexes the lock
/// stack off Thread ([thread + scratch2]): rbp, r12 and r13 as the base
/// (they need a displacement or SIB byte), REX and legacy registers as the
/// index, and the argument registers the glue loads.
inline std::vector<Assignment> sampleThreeScratchAssignments() {
  using namespace x86;
  return {
      {rdi, rsi, rdx, rcx}, {rsi, rdi, rcx, r9},  {r13, r12, r11, rdx},
      {r12, r13, r8, r9},   {rbx, rbp, r11, r12}, {rbp, rbx, r9, r13},
      {r8, r9, r10, r11},   {r15, r14, rbx, rbp}, {r11, r10, rdi, rsi},
      {rdx, rcx, rsi, rdi}, {rcx, r11, r12, r8},  {r14, r15, r13, rbx},
  };
}

/// Both spreads: without Scratch2, then with it.
inline std::vector<Assignment> sampleAssignmentsOfBothForms() {
  std::vector<Assignment> Out = sampleAssignments();
  for (const Assignment &As : sampleThreeScratchAssignments())
    Out.push_back(As);
  return Out;
}

//===-- Vector state the tests can check ---------------------------------===//

enum class VecLevel { Xmm, Ymm, Zmm };

inline uint64_t xcr0() {
  unsigned A, B, C, D;
  if (!__get_cpuid(1, &A, &B, &C, &D) || !(C & (1u << 27)))
    return 0;
  uint32_t Lo, Hi;
  __asm__ volatile("xgetbv" : "=a"(Lo), "=d"(Hi) : "c"(0));
  return (uint64_t(Hi) << 32) | Lo;
}

/// The widest vector state this CPU and OS have enabled.
inline VecLevel hostVecLevel() {
  const CpuFeatures::X86 &F = CpuInfo::host().features().x86();
  uint64_t X = xcr0();
  if (F.hasAVX512_F() && (X & 0xE6) == 0xE6)
    return VecLevel::Zmm;
  if (F.hasAVX() && (X & 0x6) == 0x6)
    return VecLevel::Ymm;
  return VecLevel::Xmm;
}

inline const char *vecName(VecLevel V) {
  return V == VecLevel::Zmm ? "zmm" : V == VecLevel::Ymm ? "ymm" : "xmm";
}

/// Number of vector registers and bytes per register at a level.
inline unsigned vecCount(VecLevel V) { return V == VecLevel::Zmm ? 32 : 16; }
inline unsigned vecBytes(VecLevel V) {
  return V == VecLevel::Zmm ? 64 : V == VecLevel::Ymm ? 32 : 16;
}

inline x86::Vec vecReg(VecLevel V, unsigned I) {
  return V == VecLevel::Zmm   ? x86::Vec(x86::zmm(I))
         : V == VecLevel::Ymm ? x86::Vec(x86::ymm(I))
                              : x86::Vec(x86::xmm(I));
}

inline void emitVecLoad(x86::Assembler &A, VecLevel V, unsigned I,
                        const x86::Mem &M) {
  if (V == VecLevel::Zmm)
    A.vmovdqu64(x86::zmm(I), M);
  else if (V == VecLevel::Ymm)
    A.vmovdqu(x86::ymm(I), M);
  else
    A.movdqu(x86::xmm(I), M);
}
inline void emitVecStore(x86::Assembler &A, VecLevel V, unsigned I,
                         const x86::Mem &M) {
  if (V == VecLevel::Zmm)
    A.vmovdqu64(M, x86::zmm(I));
  else if (V == VecLevel::Ymm)
    A.vmovdqu(M, x86::ymm(I));
  else
    A.movdqu(M, x86::xmm(I));
}

//===-- The probe wrapper ------------------------------------------------===//
//
// A probe is a function `void (Frame *)` around a sequence under test. It
// loads every general-purpose, vector and mask register from the frame, runs
// the sequence, and stores them all back, so that a test sees exactly what
// the sequence changed. `Frame` is any standard-layout struct with GprIn[16],
// GprOut[16], RspIn, RspOut, KIn[8], KOut[8], VecIn[32][64] and
// VecOut[32][64].

inline const x86::Gp ProbeCalleeSaved[] = {x86::rbx, x86::rbp, x86::r12,
                                           x86::r13, x86::r14, x86::r15};

/// The frame of a probe that checks every register around what it wraps
/// (emitProbeEntry, emitProbeExit), when it needs no fields of its own.
struct alignas(64) RegisterFrame {
  uint64_t GprIn[16];
  uint64_t GprOut[16];
  uint64_t RspIn, RspOut;
  uint64_t KIn[8], KOut[8];
  alignas(64) uint8_t VecIn[32][64];
  alignas(64) uint8_t VecOut[32][64];
};

/// The entry: saves the callee-saved registers, leaves rsp 0 mod 16 (or 8,
/// `Misalign`) with the frame pointer at [rsp], records rsp in RspIn, calls
/// `Setup(A)` (rdi = the frame; rax and rcx free), then loads the registers.
template <typename Frame, typename SetupFn>
void emitProbeEntry(x86::Assembler &A, VecLevel V, bool Misalign,
                    SetupFn &&Setup) {
  for (const x86::Gp &R : ProbeCalleeSaved)
    A.push(R);
  // Entry: rsp = 8 mod 16; after six pushes still 8 mod 16.
  A.sub(x86::rsp, Misalign ? 16 : 8);
  A.mov(x86::qword_ptr(x86::rsp), x86::rdi);
  A.mov(x86::qword_ptr(x86::rdi, offsetof(Frame, RspIn)), x86::rsp);
  Setup(A);
  for (unsigned I = 0; I < vecCount(V); ++I)
    emitVecLoad(A, V, I,
                x86::ptr(x86::rdi, int32_t(offsetof(Frame, VecIn) + 64 * I)));
  if (V == VecLevel::Zmm)
    for (unsigned I = 1; I < 8; ++I)
      A.kmovw(x86::k(I),
              x86::word_ptr(x86::rdi, int32_t(offsetof(Frame, KIn) + 8 * I)));
  for (uint32_t Id = 0; Id < 16; ++Id)
    if (Id != x86::Gp::kIdSp && Id != x86::Gp::kIdDi)
      A.mov(x86::gpq(Id),
            x86::qword_ptr(x86::rdi, int32_t(offsetof(Frame, GprIn) + 8 * Id)));
  A.mov(x86::rdi, x86::qword_ptr(x86::rdi, int32_t(offsetof(Frame, GprIn) +
                                                   8 * x86::Gp::kIdDi)));
}

/// The exit: stores every register (and rsp) into the frame and returns.
template <typename Frame>
void emitProbeExit(x86::Assembler &A, VecLevel V, bool Misalign) {
  A.push(x86::rax);
  A.mov(x86::rax, x86::qword_ptr(x86::rsp, 8));
  for (uint32_t Id = 1; Id < 16; ++Id)
    if (Id != x86::Gp::kIdSp)
      A.mov(x86::qword_ptr(x86::rax, int32_t(offsetof(Frame, GprOut) + 8 * Id)),
            x86::gpq(Id));
  A.pop(x86::rcx);
  A.mov(x86::qword_ptr(x86::rax, offsetof(Frame, GprOut)), x86::rcx);
  A.mov(x86::qword_ptr(x86::rax, offsetof(Frame, RspOut)), x86::rsp);
  for (unsigned I = 0; I < vecCount(V); ++I)
    emitVecStore(A, V, I,
                 x86::ptr(x86::rax, int32_t(offsetof(Frame, VecOut) + 64 * I)));
  if (V == VecLevel::Zmm)
    for (unsigned I = 1; I < 8; ++I)
      A.kmovw(x86::word_ptr(x86::rax, int32_t(offsetof(Frame, KOut) + 8 * I)),
              x86::k(I));
  A.add(x86::rsp, Misalign ? 16 : 8);
  for (int I = 5; I >= 0; --I)
    A.pop(ProbeCalleeSaved[I]);
  if (V != VecLevel::Xmm)
    A.vzeroupper();
  A.ret();
}

//===-- The runtime shim -------------------------------------------------===//

/// Counts the calls that reach it and the ones whose stack was not 16-byte
/// aligned at the call.
struct ShimCounters {
  std::atomic<uint64_t> Calls{0};
  std::atomic<uint64_t> Misaligned{0};
};

/// A function with the runtime entry points' signature that checks the
/// stack alignment at its call, calls `Target`, and then, like any C
/// function may, overwrites every caller-saved register but rax (all GPRs,
/// and all vector state up to `Level`) before returning.
inline void *buildShim(const void *Target, ShimCounters &C, VecLevel Level) {
  Emission Em;
  auto &[Code, A] = Em;
  Label Aligned = A.newLabel();
  // The ABI: rsp + 8 is 16-byte aligned at entry.
  A.mov(x86::rax, x86::rsp);
  A.and_(x86::eax, 15);
  A.cmp(x86::eax, 8);
  A.je(Aligned);
  A.mov(x86::r11, reinterpret_cast<uint64_t>(&C.Misaligned));
  A.lock().inc(x86::qword_ptr(x86::r11));
  A.bind(Aligned);
  A.mov(x86::r11, reinterpret_cast<uint64_t>(&C.Calls));
  A.lock().inc(x86::qword_ptr(x86::r11));
  A.sub(x86::rsp, 8);
  A.mov(x86::rax, reinterpret_cast<uint64_t>(Target));
  A.call(x86::rax);
  A.add(x86::rsp, 8);
  for (uint32_t Id : {1u, 2u, 6u, 7u, 8u, 9u, 10u, 11u})
    A.mov(x86::gpq(Id), uint64_t(0xBADC0DE000000000ull | Id));
  for (unsigned I = 0; I < vecCount(Level); ++I) {
    if (Level == VecLevel::Zmm)
      A.vpternlogd(x86::zmm(I), x86::zmm(I), x86::zmm(I), 0xFF);
    else if (Level == VecLevel::Ymm)
      A.vpcmpeqd(x86::ymm(I), x86::ymm(I), x86::ymm(I));
    else
      A.pcmpeqd(x86::xmm(I), x86::xmm(I));
  }
  if (Level == VecLevel::Zmm)
    for (unsigned I = 1; I < 8; ++I)
      A.kxnorw(x86::k(I), x86::k(I), x86::k(I));
  A.ret();
  void *Fn = nullptr;
  Error E = jit().add(&Fn, &Code);
  EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
  return Fn;
}

/// What the ExitQueued shim's target saw while a test fakes a nonzero entry
/// count (the calling thread's; the call runs on the thread that exits).
struct FakedQueue {
  /// Set: record the call instead of calling the runtime, whose XQ would
  /// wait for a queue that does not exist.
  bool Active = false;
  /// The owner word of the monitor whose count is faked, read at the call.
  const std::atomic<uint64_t> *OwnerWord = nullptr;
  jitlock_thread *Thread = nullptr;
  void *Obj = nullptr;
  uint64_t OwnerAtCall = ~uint64_t(0);
};
inline FakedQueue &fakedQueue() {
  static thread_local FakedQueue F;
  return F;
}
/// The ExitQueued shim's target: the runtime, or a record (fakedQueue()).
inline int exitQueuedOrRecord(jitlock_thread *T, void *Obj) {
  FakedQueue &F = fakedQueue();
  if (!F.Active)
    return jitlock_rt_monitor_exit_queued_slow(T, Obj);
  F.Thread = T;
  F.Obj = Obj;
  F.OwnerAtCall = F.OwnerWord ? F.OwnerWord->load() : ~uint64_t(0);
  return JITLOCK_OK;
}

/// Shims in front of jitlock_rt_monitor_enter/exit and
/// jitlock_rt_monitor_exit_queued_slow (through exitQueuedOrRecord).
class RuntimeShim {
public:
  explicit RuntimeShim(VecLevel Level) {
    EnterFn =
        buildShim(reinterpret_cast<const void *>(&jitlock_rt_monitor_enter),
                  Enter, Level);
    ExitFn = buildShim(reinterpret_cast<const void *>(&jitlock_rt_monitor_exit),
                       Exit, Level);
    ExitQueuedFn = buildShim(
        reinterpret_cast<const void *>(&exitQueuedOrRecord), ExitQueued, Level);
  }
  ~RuntimeShim() {
    jit().release(EnterFn);
    jit().release(ExitFn);
    jit().release(ExitQueuedFn);
  }
  RuntimeShim(const RuntimeShim &) = delete;
  RuntimeShim &operator=(const RuntimeShim &) = delete;
  RuntimeEntries entries() const {
    RuntimeEntries RT;
    RT.Enter = EnterFn;
    RT.Exit = ExitFn;
    RT.ExitQueued = ExitQueuedFn;
    return RT;
  }
  uint64_t enters() const { return Enter.Calls.load(); }
  uint64_t exits() const { return Exit.Calls.load(); }
  uint64_t queuedExits() const { return ExitQueued.Calls.load(); }
  uint64_t misaligned() const {
    return Enter.Misaligned.load() + Exit.Misaligned.load() +
           ExitQueued.Misaligned.load();
  }

  ShimCounters Enter, Exit, ExitQueued;

private:
  void *EnterFn = nullptr, *ExitFn = nullptr, *ExitQueuedFn = nullptr;
};

//===-- Programs: loops of monitor operations ----------------------------===//

enum class OpKind { Enter, Exit, Inc };
struct Op {
  OpKind Kind;
  unsigned Index; ///< into ProgramCtx::Objs / Counters
};

constexpr unsigned MaxProgramObjects = 8;

struct ProgramCtx {
  jitlock_thread *Thread = nullptr;
  uint64_t Remaining = 0; ///< iterations left; the loop runs while > 0
  void *Objs[MaxProgramObjects] = {};
  uint64_t *Counters[MaxProgramObjects] = {};
};

/// The bodies the threaded tests run: one lock, a recursive lock, and two
/// nested locks (always 0 before 1), each counting under its locks.
inline const std::vector<Op> SimpleBody = {
    {OpKind::Enter, 0}, {OpKind::Inc, 0}, {OpKind::Exit, 0}};
inline const std::vector<Op> RecursiveBody = {{OpKind::Enter, 0},
                                              {OpKind::Enter, 0},
                                              {OpKind::Inc, 0},
                                              {OpKind::Exit, 0},
                                              {OpKind::Exit, 0}};
inline const std::vector<Op> NestedBody = {
    {OpKind::Enter, 0}, {OpKind::Enter, 1}, {OpKind::Inc, 0},
    {OpKind::Inc, 1},   {OpKind::Exit, 1},  {OpKind::Exit, 0}};

/// void fn(ProgramCtx *): `Remaining` times, the ops in order. Inc is an
/// unguarded read-modify-write of *Counters[i] (a plain load, add, store):
/// only the monitor keeps increments from being lost.
class Program {
public:
  Program(const Assignment &As, const std::vector<Op> &Ops, SlowPathMode Mode,
          const RuntimeEntries &RT = {}) {
    Emission Em;
    auto &[Code, A] = Em;
    jitlock_rt_layout L = layout();
    jx::MonitorOperands MO = As.operands();
    // The context pointer lives in a register the assignment leaves free.
    x86::Gp Ctx;
    for (uint32_t Id : {3u, 5u, 12u, 13u, 14u, 15u, 1u, 2u, 6u, 7u, 8u, 9u})
      if (!As.uses(Id)) {
        Ctx = x86::gpq(Id);
        break;
      }
    const x86::Gp CalleeSaved[] = {x86::rbx, x86::rbp, x86::r12,
                                   x86::r13, x86::r14, x86::r15};
    for (const x86::Gp &R : CalleeSaved)
      A.push(R);
    A.sub(x86::rsp, 8);
    A.mov(Ctx, x86::rdi);
    A.mov(MO.Thread, x86::qword_ptr(Ctx, offsetof(ProgramCtx, Thread)));
    std::vector<SlowPathLabels> Slow;
    std::vector<bool> SlowIsEnter;
    Label Loop = A.newLabel();
    A.bind(Loop);
    for (const Op &O : Ops) {
      if (O.Kind == OpKind::Inc) {
        A.mov(MO.Scratch1,
              x86::qword_ptr(
                  Ctx, int32_t(offsetof(ProgramCtx, Counters) + 8 * O.Index)));
        A.mov(x86::rax, x86::qword_ptr(MO.Scratch1));
        A.add(x86::rax, 1);
        A.mov(x86::qword_ptr(MO.Scratch1), x86::rax);
        continue;
      }
      A.mov(MO.Obj, x86::qword_ptr(Ctx, int32_t(offsetof(ProgramCtx, Objs) +
                                                8 * O.Index)));
      SlowPathLabels *Labels = nullptr;
      if (Mode == SlowPathMode::Labels) {
        Slow.emplace_back();
        SlowIsEnter.push_back(O.Kind == OpKind::Enter);
        Labels = &Slow.back();
      }
      Error E = O.Kind == OpKind::Enter
                    ? jx::emitMonitorEnter(A, L, MO, Mode, Labels, RT)
                    : jx::emitMonitorExit(A, L, MO, Mode, Labels, RT);
      EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
    }
    A.sub(x86::qword_ptr(Ctx, offsetof(ProgramCtx, Remaining)), 1);
    A.jnz(Loop);
    A.add(x86::rsp, 8);
    for (int I = 5; I >= 0; --I)
      A.pop(CalleeSaved[I]);
    A.ret();
    for (size_t I = 0; I < Slow.size(); ++I) {
      Error E = jx::emitSlowCall(A, SlowIsEnter[I], MO, Slow[I], RT);
      EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
    }
    Error E = jit().add(&Fn, &Code);
    EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
  }
  ~Program() {
    if (Fn)
      jit().release(Fn);
  }
  Program(const Program &) = delete;
  Program &operator=(const Program &) = delete;

  /// Runs the loop `Ctx.Remaining` times (at least once).
  void run(ProgramCtx &Ctx) const { callJit(Fn, &Ctx); }

private:
  void (*Fn)(ProgramCtx *) = nullptr;
};

} // namespace emit_test

#endif // JITLOCK_UNITTESTS_EMITTERS_EMITTERTESTUTIL_H
