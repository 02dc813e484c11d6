//===- StackBangEmitterTest.cpp - x86_64 stack banging, executed ----------===//
//
// jitlock::emit::x64::emitStackBang, run natively (labels asmjit, stackbang).
// What is checked is shared with the AArch64 suite (A64StackBangTest.cpp):
// StackBangScenarios.h.
//
//   StackBangProbe       one check inside a wrapper that loads every GPR and
//                        vector register with sentinels and compares them
//                        afterwards, on a fake thread whose watermark the
//                        wrapper sets relative to its own stack pointer: the
//                        compare is unsigned and `<=` calls, the slow path
//                        gets (thread, sp - ExtraBytes), every register but
//                        the scratch one survives. Every ordered (Thread,
//                        Scratch) pair, both slow-path modes, several frame
//                        sizes. Then against the real runtime.
//   StackBangAlways      which addresses BangMode::Always stores to,
//                        observed on a stack of our own.
//   StackBangRecursion   the scenarios' recursions, emitted (the monitors
//                        with emitMonitorEnter/Exit) for several register
//                        assignments, frame sizes and both slow-path modes.
//   StackBangEncoding    None emits nothing; the bytes of the steady state.
//   StackBangContract    invalid operands, layouts and labels are refused and
//                        nothing is emitted.
//   StackBangDump        with JITLOCK_STACKBANG_DUMP=dir, writes the
//                        sequences shown in docs/emitters.md.
//
//===----------------------------------------------------------------------===//
#include "EmitterTestUtil.h"
#include "StackBangScenarios.h"

#include "../Runtime/RuntimeTestUtil.h"

#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace emit_test;
using namespace stackbang_scenarios;
using jitlock::emit::BangMode;

namespace {

const char *modeName(SlowPathMode M) {
  return M == SlowPathMode::OutOfLine ? "out-of-line" : "labels";
}
const char *bangName(BangMode B) {
  return B == BangMode::Watermark ? "watermark"
         : B == BangMode::Always  ? "always"
                                  : "none";
}

/// The runtime is left as the tests found it: every thread detached,
/// shutdown (which restores the headers of inflated objects, so the objects
/// live until then), the default configuration.
class StackBangRuntimeTest : public ::testing::Test {
protected:
  void SetUp() override {
    jitlock_rt_config C;
    jitlock_rt_default_config(&C);
    ASSERT_EQ(jitlock_rt_configure(&C), JITLOCK_OK);
    L = layout();
  }
  void TearDown() override {
    EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    jitlock_rt_stats S;
    jitlock_rt_get_stats(&S);
    EXPECT_EQ(S.monitors_alive, 0u);
  }
  void *object() { return &Arena.emplace_back(); }

  jitlock_rt_layout L{};
  std::deque<jitlock_test::Obj> Arena;
};

//===----------------------------------------------------------------------===//
// Probes
//===----------------------------------------------------------------------===//

struct alignas(64) BangFrame {
  uint64_t GprIn[16];
  uint64_t GprOut[16];
  uint64_t RspIn;  ///< rsp when the sequence starts
  uint64_t RspOut; ///< rsp after it
  /// When WmSlot is set, the wrapper stores ((RspIn - Extra) & WmMask) +
  /// WmAdd there just before the sequence: a watermark relative to `need`.
  uint64_t *WmSlot;
  uint64_t WmMask, WmAdd;
  uint64_t KIn[8], KOut[8];
  alignas(64) uint8_t VecIn[32][64];
  alignas(64) uint8_t VecOut[32][64];
};

/// Where the recording entry point writes what it was called with.
struct BangRecord {
  uint64_t Calls = 0;
  jitlock_thread *Thread = nullptr;
  uintptr_t Need = 0;
};
BangRecord Recorded;

extern "C" void recordBang(jitlock_thread *T, uintptr_t Need) {
  ++Recorded.Calls;
  Recorded.Thread = T;
  Recorded.Need = Need;
}

struct ProbeConfig {
  jx::StackBangOperands Ops;
  uint32_t Extra = 0;
  BangMode Bang = BangMode::Watermark;
  SlowPathMode Mode = SlowPathMode::OutOfLine;
  bool Misalign = false;
  VecLevel Level = VecLevel::Xmm;
  std::string str() const {
    return std::string("thread=") + regName(Ops.Thread.id()) +
           " scratch=" + regName(Ops.Scratch.id()) +
           " extra=" + std::to_string(Extra) + " " + bangName(Bang) + " " +
           modeName(Mode) + (Misalign ? " rsp%16=8" : " rsp%16=0") + " " +
           vecName(Level);
  }
};

/// One emitted check in a wrapper that checks every register around it.
/// The slow path goes through a shim (alignment check, caller-saved state
/// clobbered on return) in front of `Target`.
class BangProbe {
public:
  BangProbe(const ProbeConfig &C, const void *Target)
      : C(C), ShimFn(buildShim(Target, Shim, C.Level)) {
    RuntimeEntries RT;
    RT.StackBang = ShimFn;
    Fn = build(RT);
  }
  ~BangProbe() {
    if (Fn)
      jit().release(reinterpret_cast<void *>(Fn));
    if (ShimFn)
      jit().release(ShimFn);
  }
  BangProbe(const BangProbe &) = delete;
  BangProbe &operator=(const BangProbe &) = delete;

  bool built() const { return Fn != nullptr; }
  uint64_t calls() const { return Shim.Calls.load(); }
  /// When non-zero, the scratch register's value on entry.
  uint64_t ScratchValue = 0;
  uint64_t misaligned() const { return Shim.Misaligned.load(); }

  /// Runs the check with `Thread` in the thread register; Wm* as in
  /// BangFrame. Returns the frame for the caller's own checks.
  BangFrame run(jitlock_thread *Thread, uint64_t *WmSlot = nullptr,
                uint64_t WmMask = 0, uint64_t WmAdd = 0) {
    BangFrame P;
    std::memset(&P, 0, sizeof P);
    ++Round;
    for (uint32_t Id = 0; Id < 16; ++Id)
      P.GprIn[Id] = 0x5EED000000000000ull | (uint64_t(Id) << 40) | Round;
    P.GprIn[C.Ops.Thread.id()] = reinterpret_cast<uint64_t>(Thread);
    if (ScratchValue)
      P.GprIn[C.Ops.Scratch.id()] = ScratchValue;
    P.WmSlot = WmSlot;
    P.WmMask = WmMask;
    P.WmAdd = WmAdd;
    for (unsigned I = 0; I < 32; ++I)
      for (unsigned B = 0; B < 64; ++B)
        P.VecIn[I][B] = uint8_t(I * 64 + B + Round);
    for (unsigned I = 0; I < 8; ++I)
      P.KIn[I] = (0xA5A5u + I * 0x1111u + Round) & 0xFFFF;
    callJit(Fn, &P);
    EXPECT_EQ(P.RspOut, P.RspIn) << "rsp changed";
    // The scratch register is written only to hold need = rsp - Extra.
    const bool ScratchWritten = C.Bang == BangMode::Watermark && C.Extra;
    for (uint32_t Id = 0; Id < 16; ++Id) {
      if (Id == x86::Gp::kIdSp)
        continue;
      if (Id == C.Ops.Scratch.id() && ScratchWritten) {
        EXPECT_EQ(P.GprOut[Id], P.RspIn - C.Extra) << "scratch = need";
        continue;
      }
      EXPECT_EQ(P.GprOut[Id], P.GprIn[Id]) << regName(Id) << " changed";
    }
    const unsigned Bytes = vecBytes(C.Level);
    for (unsigned I = 0; I < vecCount(C.Level); ++I)
      EXPECT_EQ(std::memcmp(P.VecOut[I], P.VecIn[I], Bytes), 0)
          << vecName(C.Level) << I << " changed";
    if (C.Level == VecLevel::Zmm)
      for (unsigned I = 1; I < 8; ++I)
        EXPECT_EQ(P.KOut[I] & 0xFFFF, P.KIn[I]) << "k" << I << " changed";
    return P;
  }

private:
  using FnTy = void (*)(BangFrame *);

  FnTy build(const RuntimeEntries &RT) {
    Emission Em;
    auto &[Code, A] = Em;
    emitProbeEntry<BangFrame>(A, C.Level, C.Misalign, [&](x86::Assembler &A) {
      // The fake watermark, relative to this rsp (the sequence's).
      Label NoWm = A.newLabel();
      A.mov(x86::rax, x86::qword_ptr(x86::rdi, offsetof(BangFrame, WmSlot)));
      A.test(x86::rax, x86::rax);
      A.jz(NoWm);
      A.lea(x86::rcx, x86::ptr(x86::rsp, -int32_t(C.Extra)));
      A.and_(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(BangFrame, WmMask)));
      A.add(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(BangFrame, WmAdd)));
      A.mov(x86::qword_ptr(x86::rax), x86::rcx);
      A.bind(NoWm);
    });

    SlowPathLabels Labels;
    Error E = jx::emitStackBang(A, layout(), C.Ops, C.Extra, C.Bang, C.Mode,
                                &Labels, RT);
    EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);

    emitProbeExit<BangFrame>(A, C.Level, C.Misalign);
    if (C.Mode == SlowPathMode::Labels && C.Bang == BangMode::Watermark) {
      E = jx::emitStackBangSlowCall(A, C.Ops, C.Extra, Labels, RT);
      EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
    }
    void *Out = nullptr;
    E = jit().add(&Out, &Code);
    EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
    return reinterpret_cast<FnTy>(Out);
  }

  ProbeConfig C;
  ShimCounters Shim;
  void *ShimFn;
  FnTy Fn = nullptr;
  uint64_t Round = 0;
};

/// A fake jitlock_thread: only the watermark is read.
struct alignas(64) FakeThread {
  uint64_t Words[512] = {};
  uint64_t *watermark(const jitlock_rt_layout &L) {
    return &Words[L.stack_watermark_offset / 8];
  }
  jitlock_thread *self() { return reinterpret_cast<jitlock_thread *>(this); }
};

/// The watermark boundary: need > wm skips, need <= wm calls, unsigned.
void checkBoundaries(const ProbeConfig &C) {
  SCOPED_TRACE(C.str());
  const jitlock_rt_layout L = layout();
  ASSERT_LT(L.stack_watermark_offset / 8, 512u);
  FakeThread Fake;
  BangProbe P(C, reinterpret_cast<const void *>(&recordBang));
  ASSERT_TRUE(P.built());
  for (const WatermarkCase &K : watermarkCases()) {
    SCOPED_TRACE(K.What);
    Recorded = BangRecord{};
    uint64_t Before = P.calls();
    BangFrame F = P.run(Fake.self(), Fake.watermark(L), K.Mask, K.Add);
    EXPECT_EQ(P.calls() - Before, uint64_t(K.Calls));
    EXPECT_EQ(Recorded.Calls, uint64_t(K.Calls));
    if (K.Calls) {
      EXPECT_EQ(Recorded.Thread, Fake.self()) << "argument 0";
      EXPECT_EQ(Recorded.Need, F.RspIn - C.Extra) << "argument 1";
    }
  }
  EXPECT_EQ(P.misaligned(), 0u) << "the slow call was misaligned";
}

std::vector<uint32_t> usableIds() {
  std::vector<uint32_t> Ids;
  for (uint32_t Id = 0; Id < 16; ++Id)
    if (Id != x86::Gp::kIdSp)
      Ids.push_back(Id);
  return Ids;
}

TEST(StackBangProbe, EveryRegisterPairAtTheWatermarkBoundary) {
  const VecLevel Level = hostVecLevel();
  const uint32_t Extras[] = {0, 24, 4096 + 8, 0x7FFF0000};
  unsigned N = 0;
  for (uint32_t T : usableIds())
    for (uint32_t S : usableIds()) {
      if (T == S)
        continue;
      ProbeConfig C;
      C.Ops = {x86::gpq(T), x86::gpq(S)};
      C.Extra = Extras[N % 4];
      C.Mode = (N / 4) % 2 ? SlowPathMode::Labels : SlowPathMode::OutOfLine;
      C.Misalign = (N / 8) % 2;
      C.Level = Level;
      ++N;
      checkBoundaries(C);
      if (::testing::Test::HasFailure())
        return;
    }
  EXPECT_EQ(N, 15u * 14u) << "every ordered pair";
}

TEST(StackBangProbe, SampleRegistersEveryModeSizeAndAlignment) {
  const VecLevel Level = hostVecLevel();
  using namespace x86;
  const jx::StackBangOperands Sample[] = {
      {rdi, rsi}, {rsi, rdi}, {r12, r13}, {r13, rax}, {rbx, rbp},
      {rbp, rbx}, {rax, r11}, {r15, rcx}, {rdx, r8},
  };
  for (const jx::StackBangOperands &Ops : Sample)
    for (uint32_t Extra : {0u, 8u, 120u, 128u, 4096u, 100000u})
      for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels})
        for (bool Misalign : {false, true}) {
          ProbeConfig C;
          C.Ops = Ops;
          C.Extra = Extra;
          C.Mode = M;
          C.Misalign = Misalign;
          C.Level = Level;
          checkBoundaries(C);
          if (::testing::Test::HasFailure())
            return;
        }
}

TEST(StackBangProbe, AlwaysAndNonePreserveEveryRegisterAndNeverCall) {
  const VecLevel Level = hostVecLevel();
  FakeThread Fake;
  const jitlock_rt_layout L = layout();
  for (BangMode B : {BangMode::Always, BangMode::None})
    for (uint32_t Extra : {0u, 64u, 9000u}) {
      ProbeConfig C;
      C.Ops = {x86::r14, x86::rcx};
      C.Extra = Extra;
      C.Bang = B;
      C.Level = Level;
      SCOPED_TRACE(C.str());
      BangProbe P(C, reinterpret_cast<const void *>(&recordBang));
      ASSERT_TRUE(P.built());
      // Whatever the watermark says: no watermark in these modes.
      P.run(Fake.self(), Fake.watermark(L), 0, ~0ull);
      EXPECT_EQ(P.calls(), 0u);
    }
}

TEST_F(StackBangRuntimeTest, ProbeCallsTheRuntimeAndPreservesEverything) {
  // The real jitlock_rt_stack_bang behind the glue, on a fresh thread whose
  // watermark starts at its stack base: the first check calls it (and it
  // returns: there is room), and lowers the watermark; the next does not.
  onThread(kThreadStack, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    ASSERT_NE(Self, nullptr);
    for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels})
      for (bool Misalign : {false, true}) {
        ProbeConfig C;
        C.Ops = {x86::rsi, x86::rdi};
        C.Extra = 512;
        C.Mode = M;
        C.Misalign = Misalign;
        C.Level = hostVecLevel();
        SCOPED_TRACE(C.str());
        jitlock_stack_info Before{};
        ASSERT_EQ(jitlock_rt_stack_info(Self, &Before), JITLOCK_OK);
        BangProbe P(C, reinterpret_cast<const void *>(&jitlock_rt_stack_bang));
        ASSERT_TRUE(P.built());
        BangFrame F = P.run(Self);
        const uint64_t Need = F.RspIn - C.Extra;
        EXPECT_EQ(P.calls(), Need <= Before.watermark ? 1u : 0u);
        jitlock_stack_info After{};
        ASSERT_EQ(jitlock_rt_stack_info(Self, &After), JITLOCK_OK);
        EXPECT_LT(After.watermark, Need) << "the watermark went below need";
        EXPECT_EQ(After.overflows, 0u);
        const uint64_t Calls = P.calls();
        P.run(Self);
        EXPECT_EQ(P.calls(), Calls) << "a second check at the same depth";
        EXPECT_EQ(P.misaligned(), 0u);
      }
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

//===----------------------------------------------------------------------===//
// Always: the addresses it stores to
//===----------------------------------------------------------------------===//

TEST(StackBangAlways, StoresExactlyToTheShadowPagesBelowTheFrame) {
  const jitlock_rt_layout L = layout();
  // A stack of our own, filled with a pattern the stores cannot produce.
  const size_t Bytes = 4 << 20;
  void *Stack = mmap(nullptr, Bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(Stack, MAP_FAILED);
  std::memset(Stack, 0xA7, Bytes);
  const uint32_t Extras[] = {0, 40, 4096, 3 * 4096 + 100};
  std::vector<std::pair<uint64_t, uint32_t>> Runs; // (RspIn, Extra)
  onThread(
      Bytes,
      [&] {
        for (uint32_t Extra : Extras) {
          ProbeConfig C;
          C.Ops = {x86::r12, x86::rdx};
          C.Extra = Extra;
          C.Bang = BangMode::Always;
          BangProbe P(C, reinterpret_cast<const void *>(&recordBang));
          ASSERT_TRUE(P.built());
          // The value stored is the scratch register's low half: one that
          // neither the fill nor earlier frames (nor earlier runs) left.
          const uint32_t Value = 0x9E3779B9u ^ (Extra * 0x01000193u);
          P.ScratchValue = 0xC0DE000000000000ull | Value;
          BangFrame F = P.run(nullptr);
          Runs.push_back({F.RspIn, Extra});
          // Find every copy of the stored value below the probe's rsp.
          const uint8_t *Lo = static_cast<const uint8_t *>(Stack);
          std::set<uint64_t> Seen;
          for (const uint8_t *Q = Lo; Q + 4 <= (const uint8_t *)F.RspIn; ++Q)
            if (std::memcmp(Q, &Value, 4) == 0)
              Seen.insert(F.RspIn - uint64_t(uintptr_t(Q)));
          EXPECT_EQ(Seen, alwaysStoreOffsets(L, Extra)) << "extra=" << Extra;
        }
      },
      Stack);
  EXPECT_EQ(Runs.size(), std::size(Extras));
  munmap(Stack, Bytes);
}

//===----------------------------------------------------------------------===//
// Recursion in emitted code
//===----------------------------------------------------------------------===//

/// Registers of a recursion: Thread and Scratch for the check, Obj, Thread,
/// rax, Scratch1 for the monitors, Depth and Ctx live across both.
struct RecRegs {
  x86::Gp Thread, BangScratch, Depth, Ctx, Obj, Scratch1;
  std::string str() const {
    return std::string("thread=") + regName(Thread.id()) +
           " bang-scratch=" + regName(BangScratch.id()) +
           " depth=" + regName(Depth.id()) + " ctx=" + regName(Ctx.id()) +
           " obj=" + regName(Obj.id()) + " scratch1=" + regName(Scratch1.id());
  }
};

std::vector<RecRegs> recRegs() {
  using namespace x86;
  return {
      {r12, rax, r13, r14, rbx, rcx}, {rdi, rsi, rdx, rcx, r8, r9},
      {rsi, rdi, r8, r9, r10, r11},   {rbx, r11, rbp, r15, rdi, rsi},
      {r15, r12, r8, r9, r10, r11},   {rbp, rbx, rdi, rsi, r12, r13},
  };
}

/// void fn(RecCtx *), the recursion of StackBangScenarios.h: rec checks the
/// stack at its entry for a frame of `Extra` bytes, allocates it (writing
/// its lowest and highest words), counts itself, takes a monitor when
/// Depth % 4 == 0, recurses with Depth - 1 until 0, and releases what it
/// took on the way back.
class EmittedRecursion {
public:
  EmittedRecursion(const RecRegs &R, BangMode Bang, SlowPathMode Mode,
                   uint32_t Extra, const RuntimeEntries &RT) {
    Emission Em;
    auto &[Code, A] = Em;
    const jitlock_rt_layout L = layout();
    const jx::StackBangOperands BO{R.Thread, R.BangScratch};
    const jx::MonitorOperands MO{R.Obj, R.Thread, x86::rax, R.Scratch1};
    auto Ok = [](Error E) {
      EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
    };
    auto Field = [&](size_t Off) {
      return x86::qword_ptr(R.Ctx, int32_t(Off));
    };
    Label Rec = A.newLabel();

    // Entry (SysV): rdi = ctx.
    const x86::Gp CalleeSaved[] = {x86::rbx, x86::rbp, x86::r12,
                                   x86::r13, x86::r14, x86::r15};
    for (const x86::Gp &G : CalleeSaved)
      A.push(G);
    A.sub(x86::rsp, 8);
    A.mov(x86::rax, x86::rdi);
    A.mov(R.Thread, x86::qword_ptr(x86::rax, offsetof(RecCtx, Thread)));
    A.mov(R.Depth, x86::qword_ptr(x86::rax, offsetof(RecCtx, Depth)));
    A.mov(R.Ctx, x86::rax);
    A.call(Rec);
    A.add(x86::rsp, 8);
    for (int I = 5; I >= 0; --I)
      A.pop(CalleeSaved[I]);
    A.ret();

    // rec: Thread, Depth, Ctx.
    A.bind(Rec);
    SlowPathLabels BangL, EnterL, ExitL;
    Ok(jx::emitStackBang(A, L, BO, Extra, Bang, Mode, &BangL, RT));
    A.sub(x86::rsp, int32_t(Extra));
    A.mov(x86::qword_ptr(x86::rsp), R.Depth);
    A.mov(x86::qword_ptr(x86::rsp, int32_t(Extra - 8)), R.Depth);
    Label Lower = A.newLabel(), NoLock = A.newLabel(), Base = A.newLabel(),
          NoUnlock = A.newLabel();
    A.cmp(Field(offsetof(RecCtx, MinNeed)), x86::rsp);
    A.jbe(Lower);
    A.mov(Field(offsetof(RecCtx, MinNeed)), x86::rsp);
    A.bind(Lower);
    A.add(Field(offsetof(RecCtx, Entered)), 1);
    auto LoadObj = [&] {
      A.mov(R.Scratch1, R.Depth);
      A.shr(R.Scratch1, 2);
      A.and_(R.Scratch1, 1);
      A.mov(R.Obj, x86::qword_ptr(R.Ctx, R.Scratch1, 3,
                                  int32_t(offsetof(RecCtx, Objs))));
    };
    A.test(R.Depth, 3);
    A.jnz(NoLock);
    LoadObj();
    Ok(jx::emitMonitorEnter(A, L, MO, Mode, &EnterL, RT));
    A.add(Field(offsetof(RecCtx, Holds)), 1);
    A.bind(NoLock);
    A.sub(R.Depth, 1);
    A.jz(Base);
    A.call(Rec);
    A.bind(Base);
    A.mov(R.Depth, x86::qword_ptr(x86::rsp));
    A.test(R.Depth, 3);
    A.jnz(NoUnlock);
    LoadObj();
    Ok(jx::emitMonitorExit(A, L, MO, Mode, &ExitL, RT));
    A.sub(Field(offsetof(RecCtx, Holds)), 1);
    A.bind(NoUnlock);
    A.add(x86::rsp, int32_t(Extra));
    A.ret();

    if (Mode == SlowPathMode::Labels) {
      if (Bang == BangMode::Watermark)
        Ok(jx::emitStackBangSlowCall(A, BO, Extra, BangL, RT));
      Ok(jx::emitSlowCall(A, true, MO, EnterL, RT));
      Ok(jx::emitSlowCall(A, false, MO, ExitL, RT));
    }
    Ok(jit().add(&Fn, &Code));
  }
  ~EmittedRecursion() {
    if (Fn)
      jit().release(Fn);
  }
  EmittedRecursion(const EmittedRecursion &) = delete;
  EmittedRecursion &operator=(const EmittedRecursion &) = delete;

  bool built() const { return Fn != nullptr; }
  void run(RecCtx &C) const { callJit(Fn, &C); }

private:
  void (*Fn)(RecCtx *) = nullptr;
};

struct RecParam {
  RecRegs Regs;
  SlowPathMode Mode;
  uint32_t Extra;
};

std::vector<RecParam> recParams() {
  std::vector<RecParam> Out;
  const uint32_t Extras[] = {1024, 16, 4096 + 64, 200, 2048, 520};
  std::vector<RecRegs> All = recRegs();
  for (size_t I = 0; I < All.size(); ++I)
    for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels})
      Out.push_back({All[I], M, Extras[I % std::size(Extras)]});
  return Out;
}

std::string recName(const ::testing::TestParamInfo<RecParam> &Info) {
  const RecParam &P = Info.param;
  return std::string(regName(P.Regs.Thread.id())) + "_" +
         regName(P.Regs.BangScratch.id()) + "_" +
         (P.Mode == SlowPathMode::Labels ? "Labels" : "OutOfLine") + "_" +
         std::to_string(P.Extra);
}

/// The recursions of StackBangScenarios.h, emitted for one assignment, slow
/// path mode and frame size; the check's slow path goes through a counting
/// shim in front of the runtime.
class StackBangRecursion : public StackBangRuntimeTest,
                           public ::testing::WithParamInterface<RecParam> {
protected:
  void SetUp() override {
    StackBangRuntimeTest::SetUp();
    ObjA = object();
    ObjB = object();
    ShimFn = buildShim(reinterpret_cast<const void *>(&jitlock_rt_stack_bang),
                       Counters, hostVecLevel());
  }
  void TearDown() override {
    Emitted.reset();
    if (ShimFn)
      jit().release(ShimFn);
    StackBangRuntimeTest::TearDown();
  }

  /// Runs `Scenario` on the recursion checking in mode `Bang`: a level
  /// takes its frame and the return address its call pushes.
  void run(BangMode Bang, void (*Scenario)(const Recursion &)) {
    const RecParam &P = GetParam();
    SCOPED_TRACE(P.Regs.str());
    RuntimeEntries RT;
    RT.StackBang = ShimFn;
    Emitted =
        std::make_unique<EmittedRecursion>(P.Regs, Bang, P.Mode, P.Extra, RT);
    ASSERT_TRUE(Emitted->built());
    Scenario({[this](RecCtx &C) { Emitted->run(C); },
              [this] { return Counters.Calls.load(); },
              [this] { return Counters.Misaligned.load(); }, P.Extra + 8, ObjA,
              ObjB});
  }

  ShimCounters Counters;
  void *ShimFn = nullptr;
  std::unique_ptr<EmittedRecursion> Emitted;
  void *ObjA = nullptr, *ObjB = nullptr;
};

JITLOCK_STACKBANG_RECURSION_TESTS(StackBangRecursion)

INSTANTIATE_TEST_SUITE_P(Assignments, StackBangRecursion,
                         ::testing::ValuesIn(recParams()), recName);

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

std::vector<uint8_t> bytesOf(CodeHolder &Code) {
  Code.flatten();
  Code.resolveUnresolvedLinks();
  const CodeBuffer &B = Code.textSection()->buffer();
  return std::vector<uint8_t>(B.data(), B.data() + B.size());
}

TEST(StackBangEncoding, NoneEmitsNothing) {
  const jitlock_rt_layout L = layout();
  for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels}) {
    Emission Em;
    auto &[Code, A] = Em;
    SlowPathLabels Labels;
    EXPECT_EQ(jx::emitStackBang(A, L, {x86::rdi, x86::rax}, 64, BangMode::None,
                                M, &Labels),
              kErrorOk);
    EXPECT_EQ(Code.codeSize(), 0u);
    EXPECT_EQ(Code.labelCount(), 0u) << "no label is created";
    EXPECT_FALSE(Labels.Slow.isValid());
  }
}

TEST(StackBangEncoding, WatermarkSteadyStateIsLeaCmpBranch) {
  // Labels mode, Thread = rdi, Scratch = rax: the sequence is exactly
  //   lea rax, [rsp - Extra]; cmp rax, [rdi + watermark]; jbe Slow
  // with no store, and with Extra == 0 the lea is gone.
  const jitlock_rt_layout L = layout();
  ASSERT_LT(L.stack_watermark_offset, 128u) << "a disp8 below";
  const uint8_t Wm = uint8_t(L.stack_watermark_offset);
  for (uint32_t Extra : {0u, 96u, 4096u}) {
    Emission Em;
    auto &[Code, A] = Em;
    SlowPathLabels Labels;
    ASSERT_EQ(jx::emitStackBang(A, L, {x86::rdi, x86::rax}, Extra,
                                BangMode::Watermark, SlowPathMode::Labels,
                                &Labels),
              kErrorOk);
    const size_t SeqSize = Code.codeSize();
    A.ret();
    ASSERT_EQ(jx::emitStackBangSlowCall(A, {x86::rdi, x86::rax}, Extra, Labels),
              kErrorOk);
    std::vector<uint8_t> B = bytesOf(Code);
    std::vector<uint8_t> Want;
    if (Extra == 0) {
      Want = {0x48, 0x3B, 0x67, Wm}; // cmp rsp, [rdi + wm]
    } else if (Extra < 128) {
      Want = {0x48, 0x8D, 0x44, 0x24, uint8_t(-int8_t(Extra))}; // lea disp8
      Want.insert(Want.end(), {0x48, 0x3B, 0x47, Wm}); // cmp rax, [rdi + wm]
    } else {
      int32_t D = -int32_t(Extra);
      Want = {0x48, 0x8D, 0x84, 0x24};
      for (int I = 0; I < 4; ++I)
        Want.push_back(uint8_t(uint32_t(D) >> (8 * I)));
      Want.insert(Want.end(), {0x48, 0x3B, 0x47, Wm});
    }
    Want.insert(Want.end(), {0x0F, 0x86}); // jbe rel32 (to the slow call)
    ASSERT_EQ(SeqSize, Want.size() + 4) << "extra=" << Extra;
    EXPECT_TRUE(std::equal(Want.begin(), Want.end(), B.begin()))
        << "extra=" << Extra;
    // The jbe lands on the glue after the ret.
    int32_t Rel;
    std::memcpy(&Rel, &B[Want.size()], 4);
    EXPECT_EQ(size_t(int64_t(SeqSize) + Rel), SeqSize + 1) << "extra=" << Extra;
  }
}

TEST(StackBangEncoding, AlwaysIsOneStorePerShadowPage) {
  // mov dword ptr [rsp - off], eax: 89 84 24 disp32, one per offset.
  const jitlock_rt_layout L = layout();
  for (uint32_t Extra : {0u, 200u, 2 * 4096u}) {
    Emission Em;
    auto &[Code, A] = Em;
    ASSERT_EQ(jx::emitStackBang(A, L, {x86::rdi, x86::rax}, Extra,
                                BangMode::Always, SlowPathMode::OutOfLine),
              kErrorOk);
    std::vector<uint8_t> B = bytesOf(Code);
    std::vector<uint32_t> Offs;
    const uint64_t Page = L.stack_page_size;
    for (uint64_t Off = Page; Off <= Extra; Off += Page)
      Offs.push_back(uint32_t(Off));
    for (uint64_t I = 1; I <= L.stack_shadow_pages; ++I)
      Offs.push_back(uint32_t(Extra + I * Page));
    ASSERT_EQ(B.size(), 7 * Offs.size()) << "extra=" << Extra;
    for (size_t I = 0; I < Offs.size(); ++I) {
      const uint8_t *Q = &B[7 * I];
      EXPECT_EQ(Q[0], 0x89);
      EXPECT_EQ(Q[1], 0x84);
      EXPECT_EQ(Q[2], 0x24);
      int32_t D;
      std::memcpy(&D, Q + 3, 4);
      EXPECT_EQ(D, -int32_t(Offs[I])) << "store " << I;
    }
  }
}

//===----------------------------------------------------------------------===//
// The contract
//===----------------------------------------------------------------------===//

TEST(StackBangContract, InvalidOperandsLayoutsAndSizesEmitNothing) {
  const jitlock_rt_layout L = layout();
  using namespace x86;
  const jx::StackBangOperands BadOps[] = {
      {rsp, rax}, {rdi, rsp},  {rdi, rdi},  {edi, rax},
      {rdi, eax}, {Gp(), rax}, {rdi, Gp()},
  };
  const jx::StackBangOperands Good{rdi, rax};
  jitlock_rt_layout OtherAbi = L, FarWatermark = L, NoPage = L, OddPage = L,
                    HugeShadow = L;
  OtherAbi.abi_version = JITLOCK_RT_ABI_VERSION + 1;
  FarWatermark.stack_watermark_offset = 0x80000000u;
  NoPage.stack_page_size = 0;
  OddPage.stack_page_size = 3000;
  HugeShadow.stack_shadow_pages = 0x80000000u / L.stack_page_size;
  RuntimeEntries NoEntry;
  NoEntry.StackBang = nullptr;
  struct Case {
    const char *What;
    jx::StackBangOperands Ops;
    const jitlock_rt_layout *Layout;
    uint32_t Extra;
    BangMode Bang;
    SlowPathMode Mode;
    bool WithLabels;
    const RuntimeEntries *RT;
  };
  std::vector<Case> Cases;
  for (const jx::StackBangOperands &Ops : BadOps)
    for (BangMode B : {BangMode::Watermark, BangMode::Always, BangMode::None})
      Cases.push_back(
          {"operands", Ops, &L, 64, B, SlowPathMode::OutOfLine, true, nullptr});
  for (BangMode B : {BangMode::Watermark, BangMode::Always, BangMode::None})
    Cases.push_back({"abi version", Good, &OtherAbi, 64, B,
                     SlowPathMode::OutOfLine, true, nullptr});
  Cases.push_back({"watermark offset", Good, &FarWatermark, 64,
                   BangMode::Watermark, SlowPathMode::OutOfLine, true,
                   nullptr});
  Cases.push_back({"page size 0", Good, &NoPage, 64, BangMode::Always,
                   SlowPathMode::OutOfLine, true, nullptr});
  Cases.push_back({"page size 3000", Good, &OddPage, 64, BangMode::Always,
                   SlowPathMode::OutOfLine, true, nullptr});
  Cases.push_back({"shadow zone beyond disp32", Good, &HugeShadow, 0,
                   BangMode::Always, SlowPathMode::OutOfLine, true, nullptr});
  Cases.push_back({"extra beyond disp32", Good, &L, 0x80000000u,
                   BangMode::Watermark, SlowPathMode::OutOfLine, true,
                   nullptr});
  Cases.push_back({"extra + shadow beyond disp32", Good, &L, 0x7FFFF000u,
                   BangMode::Always, SlowPathMode::OutOfLine, true, nullptr});
  Cases.push_back({"bang mode", Good, &L, 64, BangMode(7),
                   SlowPathMode::OutOfLine, true, nullptr});
  Cases.push_back({"slow path mode", Good, &L, 64, BangMode::Watermark,
                   SlowPathMode(5), true, nullptr});
  Cases.push_back({"labels mode without labels", Good, &L, 64,
                   BangMode::Watermark, SlowPathMode::Labels, false, nullptr});
  Cases.push_back({"out of line without an entry", Good, &L, 64,
                   BangMode::Watermark, SlowPathMode::OutOfLine, true,
                   &NoEntry});
  for (const Case &K : Cases) {
    SCOPED_TRACE(std::string(K.What) + " " + bangName(K.Bang));
    Emission Em;
    auto &[Code, A] = Em;
    SlowPathLabels Labels;
    EXPECT_EQ(jx::emitStackBang(A, *K.Layout, K.Ops, K.Extra, K.Bang, K.Mode,
                                K.WithLabels ? &Labels : nullptr,
                                K.RT ? *K.RT : RuntimeEntries{}),
              kErrorInvalidArgument);
    EXPECT_EQ(Code.codeSize(), 0u) << "something was emitted";
    EXPECT_EQ(Code.labelCount(), 0u) << "a label was created";
  }
  // emitStackBangSlowCall: bad operands, no labels, no entry, a bound Slow.
  Emission Em;
  auto &[Code, A] = Em;
  SlowPathLabels Labels;
  ASSERT_EQ(jx::emitStackBang(A, L, Good, 64, BangMode::Watermark,
                              SlowPathMode::Labels, &Labels),
            kErrorOk);
  const size_t Size = Code.codeSize();
  EXPECT_EQ(jx::emitStackBangSlowCall(A, {rsp, rax}, 64, Labels),
            kErrorInvalidArgument);
  EXPECT_EQ(jx::emitStackBangSlowCall(A, Good, 64, SlowPathLabels{}),
            kErrorInvalidArgument);
  EXPECT_EQ(jx::emitStackBangSlowCall(A, Good, 64, Labels, NoEntry),
            kErrorInvalidArgument);
  EXPECT_EQ(jx::emitStackBangSlowCall(A, Good, 0x80000000u, Labels),
            kErrorInvalidArgument);
  EXPECT_EQ(Code.codeSize(), Size);
  ASSERT_EQ(jx::emitStackBangSlowCall(A, Good, 64, Labels), kErrorOk);
  const size_t After = Code.codeSize();
  EXPECT_EQ(jx::emitStackBangSlowCall(A, Good, 64, Labels),
            kErrorInvalidArgument)
      << "Slow is bound already";
  EXPECT_EQ(Code.codeSize(), After);
  // A bound Done, another architecture, no CodeHolder.
  SlowPathLabels Bound;
  Bound.Done = A.newLabel();
  A.bind(Bound.Done);
  EXPECT_EQ(jx::emitStackBang(A, L, Good, 64, BangMode::Watermark,
                              SlowPathMode::Labels, &Bound),
            kErrorInvalidArgument);
  EXPECT_EQ(Code.codeSize(), After);
  CodeHolder Code32;
  Environment Env = jit().environment();
  Env.setArch(Arch::kX86);
  Code32.init(Env);
  x86::Assembler A32(&Code32);
  EXPECT_EQ(jx::emitStackBang(A32, L, Good, 64, BangMode::Watermark,
                              SlowPathMode::OutOfLine),
            kErrorInvalidArgument);
  EXPECT_EQ(Code32.codeSize(), 0u);
  x86::Assembler Detached;
  EXPECT_EQ(jx::emitStackBang(Detached, L, Good, 64, BangMode::None,
                              SlowPathMode::OutOfLine),
            kErrorInvalidArgument);
}

TEST(StackBangContract, LabelsModeUsesTheCallersLabels) {
  const jitlock_rt_layout L = layout();
  Emission Em;
  auto &[Code, A] = Em;
  SlowPathLabels Labels{A.newLabel(), A.newLabel()};
  const SlowPathLabels Mine = Labels;
  ASSERT_EQ(jx::emitStackBang(A, L, {x86::r12, x86::r11}, 0,
                              BangMode::Watermark, SlowPathMode::Labels,
                              &Labels),
            kErrorOk);
  EXPECT_EQ(Labels.Slow.id(), Mine.Slow.id());
  EXPECT_EQ(Labels.Done.id(), Mine.Done.id());
  EXPECT_TRUE(Code.isLabelBound(Labels.Done));
  EXPECT_FALSE(Code.isLabelBound(Labels.Slow));
  // Always has no slow path: the labels are left alone.
  SlowPathLabels Untouched;
  ASSERT_EQ(jx::emitStackBang(A, L, {x86::r12, x86::r11}, 0, BangMode::Always,
                              SlowPathMode::Labels, &Untouched),
            kErrorOk);
  EXPECT_FALSE(Untouched.Slow.isValid());
  EXPECT_FALSE(Untouched.Done.isValid());
}

//===----------------------------------------------------------------------===//
// The listings in docs/emitters.md
//===----------------------------------------------------------------------===//

TEST(StackBangDump, Sequences) {
  const char *Dir = std::getenv("JITLOCK_STACKBANG_DUMP");
  if (!Dir)
    GTEST_SKIP() << "set JITLOCK_STACKBANG_DUMP=dir to write the sequences";
  const jitlock_rt_layout L = layout();
  // The registers of the listings: the thread in r12 (as in
  // jitlock-baseline), scratch r11; a 1024-byte frame.
  const jx::StackBangOperands Ops{x86::r12, x86::r11};
  struct Dump {
    const char *Name;
    BangMode Bang;
    SlowPathMode Mode;
  };
  for (const Dump &D :
       {Dump{"watermark.labels", BangMode::Watermark, SlowPathMode::Labels},
        Dump{"watermark.outofline", BangMode::Watermark,
             SlowPathMode::OutOfLine},
        Dump{"always", BangMode::Always, SlowPathMode::OutOfLine}}) {
    Emission Em;
    auto &[Code, A] = Em;
    SlowPathLabels Labels;
    ASSERT_EQ(jx::emitStackBang(A, L, Ops, 1024, D.Bang, D.Mode, &Labels, {}),
              kErrorOk);
    if (D.Mode == SlowPathMode::Labels) {
      A.ret(); // the method body would be here
      ASSERT_EQ(jx::emitStackBangSlowCall(A, Ops, 1024, Labels), kErrorOk);
    }
    std::vector<uint8_t> B = bytesOf(Code);
    std::string Path = std::string(Dir) + "/stackbang." + D.Name + ".bin";
    FILE *F = std::fopen(Path.c_str(), "wb");
    ASSERT_NE(F, nullptr) << Path;
    std::fwrite(B.data(), 1, B.size(), F);
    std::fclose(F);
  }
}

} // namespace
