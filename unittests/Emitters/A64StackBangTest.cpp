//===- A64StackBangTest.cpp - AArch64 stack banging, executed -------------===//
//
// jitlock::emit::a64::emitStackBang, run on AArch64 (under qemu-aarch64 -cpu
// max; labels aarch64, asmjit, stackbang). What is checked is shared with the
// x86_64 suite (StackBangEmitterTest.cpp): StackBangScenarios.h.
//
//   A64StackBangProbe      one check in a wrapper that loads x0-x30 and
//                          q0-q31 and stores them afterwards, on a fake
//                          thread whose watermark the wrapper sets relative
//                          to its own sp: unsigned compare, `<=` calls, the
//                          slow path gets (thread, sp - ExtraBytes) and every
//                          register but the two scratch ones survives, at
//                          aligned and misaligned sp. Always and None.
//   A64StackBangRecursion  the scenarios' recursions, emitted (the monitors
//                          with emitMonitorEnter/Exit, LSE and LL/SC) for
//                          several register assignments, frame sizes and both
//                          slow-path modes.
//   A64StackBangContract   invalid operands, layouts and labels: refused,
//                          nothing emitted.
//
// `--dump-stackbang watermark|labels|always` prints a sequence's bytes for
// llvm-mc (docs/emitters.md; test/Emitters/AArch64/stackbang.test checks
// them).
//
//===----------------------------------------------------------------------===//
#include "A64TestUtil.h"
#include "StackBangScenarios.h"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace a64_test;
using namespace stackbang_scenarios;
using J::BangMode;
using J::a64::StackBangOperands;

int dumpStackBang(int Argc, char **Argv);

namespace {

const char *bangName(BangMode B) {
  return B == BangMode::Watermark ? "watermark"
         : B == BangMode::Always  ? "always"
                                  : "none";
}
const char *modeName(SlowPathMode M) {
  return M == SlowPathMode::OutOfLine ? "OutOfLine" : "Labels";
}

/// x = Value, in movz and movk.
void movImm(A64::Assembler &A, const A64::Gp &X, uint64_t Value, Checked &Ok) {
  Ok(A.movz(X, Value & 0xffff, 0));
  for (unsigned I = 1; I != 4; ++I)
    if (uint64_t Chunk = (Value >> (16 * I)) & 0xffff)
      Ok(A.movk(X, Chunk, 16 * I));
}

//===----------------------------------------------------------------------===//
// Shims for the stack-bang entry
//===----------------------------------------------------------------------===//

struct BangLog {
  std::atomic<uint64_t> Calls{0}, Misaligned{0};
  jitlock_thread *Thread = nullptr;
  uintptr_t Need = 0;
};
BangLog Log;

void logCall(jitlock_thread *T, uintptr_t Need) {
  if (!stackPointerAligned())
    ++Log.Misaligned;
  ++Log.Calls;
  Log.Thread = T;
  Log.Need = Need;
}

/// Logs and calls the runtime, which may not return (it unwinds).
extern "C" void shimStackBang(jitlock_thread *T, uintptr_t Need) {
  clobberAllCallerSaved();
  logCall(T, Need);
  jitlock_rt_stack_bang(T, Need);
  clobberAllCallerSaved();
}
/// Logs only (fake threads).
extern "C" void recordStackBang(jitlock_thread *T, uintptr_t Need) {
  clobberAllCallerSaved();
  logCall(T, Need);
  clobberAllCallerSaved();
}

RuntimeEntries entries(void (*Fn)(jitlock_thread *, uintptr_t)) {
  RuntimeEntries RT;
  RT.StackBang = reinterpret_cast<const void *>(Fn);
  return RT;
}

//===----------------------------------------------------------------------===//
// Probes
//===----------------------------------------------------------------------===//

struct alignas(16) BangFrame {
  RegState In;
  RegState Out;
  uint64_t SpAt = 0; ///< sp when the sequence starts
  uint64_t SpAfter = 0;
  /// When WmSlot is set, the wrapper stores ((SpAt - Extra) & WmMask) +
  /// WmAdd there before the sequence.
  uint64_t *WmSlot = nullptr;
  uint64_t WmMask = 0, WmAdd = 0;
};

struct BangConfig {
  uint32_t Thread, S0, S1;
  uint32_t Extra = 0;
  BangMode Bang = BangMode::Watermark;
  SlowPathMode Mode = SlowPathMode::OutOfLine;
  bool Misalign = false;
  StackBangOperands operands() const {
    return {A64::x(Thread), A64::x(S0), A64::x(S1)};
  }
  std::string str() const {
    return "thread=x" + std::to_string(Thread) + " scratch=x" +
           std::to_string(S0) + ",x" + std::to_string(S1) +
           " extra=" + std::to_string(Extra) + " " + bangName(Bang) + " " +
           modeName(Mode) + (Misalign ? " sp%16=8" : " sp%16=0");
  }
};

using BangProbeFn = void (*)(BangFrame *);

/// The wrapper around one check (see the file comment).
BangProbeFn buildBangProbe(const BangConfig &C, const RuntimeEntries &RT) {
  Emission Em;
  auto &[Code, A] = Em;
  Checked Ok;
  using namespace A64;
  probe::saveCallerState(A, Ok);
  // The sequence's sp, and the fake watermark relative to it.
  Ok(A.mov(x1, sp));
  if (C.Misalign)
    Ok(A.sub(x1, x1, 8));
  Ok(A.str(x1, ptr(x0, offsetof(BangFrame, SpAt))));
  asmjit::Label NoWm = A.newLabel();
  Ok(A.ldr(x2, ptr(x0, offsetof(BangFrame, WmSlot))));
  Ok(A.cbz(x2, NoWm));
  movImm(A, x3, C.Extra, Ok);
  Ok(A.sub(x3, x1, x3));
  Ok(A.ldr(x4, ptr(x0, offsetof(BangFrame, WmMask))));
  Ok(A.and_(x3, x3, x4));
  Ok(A.ldr(x4, ptr(x0, offsetof(BangFrame, WmAdd))));
  Ok(A.add(x3, x3, x4));
  Ok(A.str(x3, ptr(x2)));
  Ok(A.bind(NoWm));
  probe::loadInRegisters(A, Ok, C.Misalign);

  SlowPathLabels Labels;
  asmjit::Error E = J::a64::emitStackBang(A, layout(), C.operands(), C.Extra,
                                          C.Bang, C.Mode, &Labels, RT);
  EXPECT_EQ(E, asmjit::kErrorOk) << asmjit::DebugUtils::errorAsString(E);

  probe::storeOutAndReturn(A, Ok, C.Misalign, offsetof(BangFrame, Out),
                           offsetof(BangFrame, SpAfter));
  if (C.Mode == SlowPathMode::Labels && C.Bang == BangMode::Watermark) {
    E = J::a64::emitStackBangSlowCall(A, C.operands(), C.Extra, Labels, RT);
    EXPECT_EQ(E, asmjit::kErrorOk) << asmjit::DebugUtils::errorAsString(E);
  }
  EXPECT_EQ(Ok.Err, asmjit::kErrorOk)
      << asmjit::DebugUtils::errorAsString(Ok.Err);
  if (E || Ok.Err)
    return nullptr;
  BangProbeFn Fn = nullptr;
  E = jit().add(&Fn, &Code);
  EXPECT_EQ(E, asmjit::kErrorOk) << asmjit::DebugUtils::errorAsString(E);
  return E ? nullptr : Fn;
}

/// Runs a probe; checks that everything but the scratch registers came
/// back. Returns the frame.
BangFrame runProbe(BangProbeFn Fn, const BangConfig &C, jitlock_thread *Thread,
                   uint64_t Seed, uint64_t *WmSlot = nullptr,
                   uint64_t WmMask = 0, uint64_t WmAdd = 0) {
  BangFrame F;
  fillPattern(F.In, Seed);
  F.In.X[C.Thread] = reinterpret_cast<uint64_t>(Thread);
  F.WmSlot = WmSlot;
  F.WmMask = WmMask;
  F.WmAdd = WmAdd;
  Fn(&F);
  for (uint32_t I = 0; I != 31; ++I) {
    if (I == C.S0 || I == C.S1)
      continue;
    EXPECT_EQ(F.Out.X[I], F.In.X[I]) << "x" << I << " changed";
  }
  for (unsigned I = 0; I != 32; ++I)
    EXPECT_EQ(memcmp(F.Out.V[I], F.In.V[I], 16), 0) << "q" << I << " changed";
  EXPECT_EQ(F.SpAfter, F.SpAt + (C.Misalign ? 8 : 0)) << "sp changed";
  return F;
}

/// A fake jitlock_thread: only the watermark is read.
struct alignas(64) FakeThread {
  uint64_t Words[512] = {};
  uint64_t *watermark() { return &Words[layout().stack_watermark_offset / 8]; }
  jitlock_thread *self() { return reinterpret_cast<jitlock_thread *>(this); }
};

void checkBoundaries(const BangConfig &C) {
  SCOPED_TRACE(C.str());
  FakeThread Fake;
  BangProbeFn Fn = buildBangProbe(C, entries(&recordStackBang));
  ASSERT_NE(Fn, nullptr);
  uint64_t Seed = 0;
  for (const WatermarkCase &K : watermarkCases()) {
    SCOPED_TRACE(K.What);
    Log.Calls = 0;
    Log.Misaligned = 0;
    BangFrame F =
        runProbe(Fn, C, Fake.self(), ++Seed, Fake.watermark(), K.Mask, K.Add);
    EXPECT_EQ(Log.Calls.load(), uint64_t(K.Calls));
    EXPECT_EQ(Log.Misaligned.load(), 0u) << "the call's sp was misaligned";
    if (K.Calls) {
      EXPECT_EQ(Log.Thread, Fake.self()) << "argument 0";
      EXPECT_EQ(Log.Need, F.SpAt - C.Extra) << "argument 1";
    }
  }
  releaseProbe(reinterpret_cast<ProbeFn>(Fn));
}

/// Register choices: the argument registers (the glue moves Thread to x0),
/// x16/x17 as scratch (free at a method entry), callee-saved ones, x29/x30.
std::vector<BangConfig> sampleConfigs() {
  const uint32_t Regs[][3] = {
      {28, 9, 10}, {0, 1, 2},   {1, 0, 2},    {2, 1, 0},   {19, 16, 17},
      {16, 17, 9}, {17, 16, 0}, {18, 29, 30}, {30, 3, 29}, {5, 27, 26},
  };
  const uint32_t Extras[] = {0, 16, 4096, 4100, 100000, 0x7FFF0000};
  std::vector<BangConfig> Out;
  unsigned N = 0;
  for (const auto &R : Regs)
    for (uint32_t Extra : Extras)
      for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels}) {
        BangConfig C{R[0], R[1], R[2]};
        C.Extra = Extra;
        C.Mode = M;
        C.Misalign = ++N % 3 == 0;
        Out.push_back(C);
      }
  return Out;
}

TEST(A64StackBangProbe, WatermarkBoundaryArgumentsAndRegisters) {
  for (const BangConfig &C : sampleConfigs()) {
    checkBoundaries(C);
    if (testing::Test::HasFailure())
      return;
  }
}

TEST(A64StackBangProbe, AlwaysAndNoneNeverCallAndPreserveRegisters) {
  FakeThread Fake;
  for (BangMode B : {BangMode::Always, BangMode::None})
    for (uint32_t Extra : {0u, 48u, 9000u, 70000u}) {
      BangConfig C{28, 16, 17};
      C.Extra = Extra;
      C.Bang = B;
      C.Misalign = Extra == 48;
      SCOPED_TRACE(C.str());
      BangProbeFn Fn = buildBangProbe(C, entries(&recordStackBang));
      ASSERT_NE(Fn, nullptr);
      Log.Calls = 0;
      runProbe(Fn, C, Fake.self(), 7, Fake.watermark(), 0, ~0ull);
      EXPECT_EQ(Log.Calls.load(), 0u);
      releaseProbe(reinterpret_cast<ProbeFn>(Fn));
    }
}

TEST(A64StackBangProbe, AlwaysStoresExactlyToTheShadowPagesBelowTheFrame) {
  // Each probe runs on a fresh thread whose stack (ours) is filled with a
  // pattern; nothing ran below the probe's sp on it before, so the zero
  // words found there are the stores of the check. The C++ code after the
  // probe writes a little below that sp too: the first KiB is not looked
  // at (every store is at least a page down).
  const jitlock_rt_layout &L = layout();
  const size_t Bytes = 4 << 20;
  void *Stack = mmap(nullptr, Bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(Stack, MAP_FAILED);
  for (uint32_t Extra : {0u, 48u, 4096u, 3 * 4096u + 112u, 70000u}) {
    SCOPED_TRACE("extra=" + std::to_string(Extra));
    BangConfig C{28, 9, 10};
    C.Extra = Extra;
    C.Bang = BangMode::Always;
    BangProbeFn Fn = buildBangProbe(C, entries(&recordStackBang));
    ASSERT_NE(Fn, nullptr);
    memset(Stack, 0xA7, Bytes);
    BangFrame F;
    onThread(Bytes, [&] { F = runProbe(Fn, C, nullptr, 3); }, Stack);
    std::set<uint64_t> Seen;
    const uint8_t *Lo = static_cast<const uint8_t *>(Stack);
    const uint32_t Zero = 0;
    for (const uint8_t *Q = Lo; Q + 4 <= (const uint8_t *)F.SpAt - 1024; Q += 4)
      if (memcmp(Q, &Zero, 4) == 0)
        Seen.insert(F.SpAt - uint64_t(uintptr_t(Q)));
    EXPECT_EQ(Seen, alwaysStoreOffsets(L, Extra));
    releaseProbe(reinterpret_cast<ProbeFn>(Fn));
  }
  munmap(Stack, Bytes);
}

TEST(A64StackBangProbe, TheRuntimeBehindTheGlue) {
  // The real jitlock_rt_stack_bang on a fresh thread: the first check calls
  // it (the watermark starts at the stack base), it returns and lowers the
  // watermark below need; a second check at the same sp does not call.
  onThread(kThreadStack, [] {
    jitlock_thread *Self = jitlock_rt_attach();
    ASSERT_NE(Self, nullptr);
    for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels}) {
      BangConfig C{1, 0, 2};
      C.Extra = 512;
      C.Mode = M;
      SCOPED_TRACE(C.str());
      BangProbeFn Fn = buildBangProbe(C, entries(&shimStackBang));
      ASSERT_NE(Fn, nullptr);
      jitlock_stack_info Before{};
      ASSERT_EQ(jitlock_rt_stack_info(Self, &Before), JITLOCK_OK);
      Log.Calls = 0;
      BangFrame F = runProbe(Fn, C, Self, 1);
      const uint64_t Need = F.SpAt - C.Extra;
      EXPECT_EQ(Log.Calls.load(), Need <= Before.watermark ? 1u : 0u);
      jitlock_stack_info After{};
      ASSERT_EQ(jitlock_rt_stack_info(Self, &After), JITLOCK_OK);
      EXPECT_LT(After.watermark, Need);
      runProbe(Fn, C, Self, 2);
      EXPECT_EQ(Log.Calls.load(), Need <= Before.watermark ? 1u : 0u)
          << "a second check at the same sp called the runtime";
      EXPECT_EQ(Log.Misaligned.load(), 0u);
      releaseProbe(reinterpret_cast<ProbeFn>(Fn));
    }
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

//===----------------------------------------------------------------------===//
// Recursion in emitted code
//===----------------------------------------------------------------------===//

/// Thread, the check's two scratch registers, Depth and Ctx (live across
/// everything), Obj and the monitors' three scratch registers.
struct RecRegs {
  uint32_t Thread, B0, B1, Depth, Ctx, Obj, M0, M1, M2;
  std::string name() const {
    return "t" + std::to_string(Thread) + "_b" + std::to_string(B0) + "_" +
           std::to_string(B1);
  }
};

/// void fn(RecCtx *), the recursion of StackBangScenarios.h: rec checks for
/// a frame of Extra bytes at its entry, allocates it (saving fp/lr at its
/// bottom, Depth above them and at its top), takes a monitor when Depth % 4
/// == 0, recurses until Depth is 0, and releases on the way back.
class EmittedRecursion {
public:
  EmittedRecursion(const RecRegs &R, BangMode Bang, SlowPathMode Mode,
                   Atomics At, uint32_t Extra, const RuntimeEntries &RT) {
    Emission Em;
    auto &[Code, A] = Em;
    Checked Ok;
    using namespace A64;
    const StackBangOperands BO{x(R.Thread), x(R.B0), x(R.B1)};
    const MonitorOperands MO{x(R.Obj), x(R.Thread), x(R.M0), x(R.M1), x(R.M2)};
    const GpX T = x(R.Thread), D = x(R.Depth), C = x(R.Ctx), O = x(R.Obj),
              M0 = x(R.M0), M1 = x(R.M1);
    auto Field = [&](size_t Off) { return ptr(C, int32_t(Off)); };
    asmjit::Label Rec = A.newLabel();

    // Entry: x0 = ctx. Saves x19-x28, x18, fp, lr.
    Ok(A.stp(x29, x30, ptr_pre(sp, -112)));
    Ok(A.mov(x29, sp));
    for (uint32_t I = 19; I != 29; I += 2)
      Ok(A.stp(x(I), x(I + 1), ptr(sp, 16 + 8 * int32_t(I - 19))));
    Ok(A.str(x18, ptr(sp, 96)));
    Ok(A.mov(x17, x0));
    Ok(A.ldr(T, ptr(x17, offsetof(RecCtx, Thread))));
    Ok(A.ldr(D, ptr(x17, offsetof(RecCtx, Depth))));
    Ok(A.mov(C, x17));
    Ok(A.bl(Rec));
    Ok(A.ldr(x18, ptr(sp, 96)));
    for (uint32_t I = 19; I != 29; I += 2)
      Ok(A.ldp(x(I), x(I + 1), ptr(sp, 16 + 8 * int32_t(I - 19))));
    Ok(A.ldp(x29, x30, ptr_post(sp, 112)));
    Ok(A.ret(x30));

    // rec.
    Ok(A.bind(Rec));
    SlowPathLabels BangL, EnterL, ExitL;
    Ok(J::a64::emitStackBang(A, layout(), BO, Extra, Bang, Mode, &BangL, RT));
    auto AdjustSp = [&](bool Down) {
      for (uint32_t Left = Extra; Left;) {
        uint32_t Step = Left >= 4096 ? Left & ~4095u : Left;
        Step = Step > 0xfff000 ? 0xfff000 : Step;
        Ok(Down ? A.sub(sp, sp, Step) : A.add(sp, sp, Step));
        Left -= Step;
      }
    };
    AdjustSp(true);
    Ok(A.stp(x29, x30, ptr(sp)));
    Ok(A.str(D, ptr(sp, 16)));
    Ok(A.str(D, ptr(sp, int32_t(Extra - 8))));
    asmjit::Label Lower = A.newLabel(), NoLock = A.newLabel(),
                  Base = A.newLabel(), NoUnlock = A.newLabel();
    Ok(A.ldr(M0, Field(offsetof(RecCtx, MinNeed))));
    Ok(A.mov(M1, sp));
    Ok(A.cmp(M0, M1));
    Ok(A.b_ls(Lower));
    Ok(A.str(M1, Field(offsetof(RecCtx, MinNeed))));
    Ok(A.bind(Lower));
    auto Bump = [&](size_t Off, bool Up) {
      Ok(A.ldr(M0, Field(Off)));
      Ok(Up ? A.add(M0, M0, 1) : A.sub(M0, M0, 1));
      Ok(A.str(M0, Field(Off)));
    };
    Bump(offsetof(RecCtx, Entered), true);
    auto LoadObj = [&] {
      Ok(A.ubfx(M0, D, 2, 1));
      Ok(A.add(M1, C, offsetof(RecCtx, Objs)));
      Ok(A.ldr(O, ptr(M1, M0, asmjit::arm::lsl(3))));
    };
    Ok(A.tst(D, 3));
    Ok(A.b_ne(NoLock));
    LoadObj();
    Ok(J::a64::emitMonitorEnter(A, layout(), MO, At, Mode, &EnterL, RT));
    Bump(offsetof(RecCtx, Holds), true);
    Ok(A.bind(NoLock));
    Ok(A.subs(D, D, 1));
    Ok(A.b_eq(Base));
    Ok(A.bl(Rec));
    Ok(A.bind(Base));
    Ok(A.ldr(D, ptr(sp, 16)));
    Ok(A.tst(D, 3));
    Ok(A.b_ne(NoUnlock));
    LoadObj();
    Ok(J::a64::emitMonitorExit(A, layout(), MO, At, Mode, &ExitL, RT));
    Bump(offsetof(RecCtx, Holds), false);
    Ok(A.bind(NoUnlock));
    Ok(A.ldp(x29, x30, ptr(sp)));
    AdjustSp(false);
    Ok(A.ret(x30));

    if (Mode == SlowPathMode::Labels) {
      if (Bang == BangMode::Watermark)
        Ok(J::a64::emitStackBangSlowCall(A, BO, Extra, BangL, RT));
      Ok(J::a64::emitSlowCall(A, true, MO, EnterL, RT));
      Ok(J::a64::emitSlowCall(A, false, MO, ExitL, RT));
    }
    EXPECT_EQ(Ok.Err, asmjit::kErrorOk)
        << asmjit::DebugUtils::errorAsString(Ok.Err);
    if (!Ok.Err) {
      asmjit::Error E = jit().add(&Fn, &Code);
      EXPECT_EQ(E, asmjit::kErrorOk) << asmjit::DebugUtils::errorAsString(E);
    }
  }
  ~EmittedRecursion() {
    if (Fn)
      jit().release(Fn);
  }
  EmittedRecursion(const EmittedRecursion &) = delete;
  EmittedRecursion &operator=(const EmittedRecursion &) = delete;

  bool built() const { return Fn != nullptr; }
  void run(RecCtx &C) const { Fn(&C); }

private:
  void (*Fn)(RecCtx *) = nullptr;
};

struct RecParam {
  RecRegs Regs;
  SlowPathMode Mode;
  Atomics At;
  uint32_t Extra;
};

std::vector<RecParam> recParams() {
  // Thread, B0, B1, Depth, Ctx, Obj, M0, M1, M2. The check's scratch
  // registers are dead at entry; the monitors' may overlap them.
  const RecRegs Regs[] = {
      {28, 16, 17, 19, 20, 0, 1, 2, 3},  {0, 9, 10, 2, 3, 1, 9, 10, 11},
      {1, 0, 2, 3, 4, 5, 0, 2, 6},       {18, 9, 16, 21, 22, 23, 24, 25, 26},
      {20, 19, 0, 27, 28, 7, 8, 19, 15},
  };
  const uint32_t Extras[] = {1024, 32, 4096 + 64, 208, 2048};
  std::vector<RecParam> Out;
  unsigned N = 0;
  for (const RecRegs &R : Regs)
    for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels}) {
      Out.push_back({R, M, N % 2 ? Atomics::LLSC : Atomics::LSE,
                     Extras[N / 2 % std::size(Extras)]});
      ++N;
    }
  return Out;
}

std::string recName(const testing::TestParamInfo<RecParam> &Info) {
  const RecParam &P = Info.param;
  return P.Regs.name() + "_" + modeName(P.Mode) + "_" +
         (P.At == Atomics::LSE ? "LSE" : "LLSC") + "_" +
         std::to_string(P.Extra);
}

/// A test object with the header where the runtime's layout says.
struct alignas(16) Object {
  uint64_t Words[8] = {};
  void *init() {
    void *O = reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(&Words[4]) -
                                       layout().header_offset);
    Words[4] = layout().unlocked_value;
    return O;
  }
};

/// The recursions of StackBangScenarios.h, emitted for one assignment, slow
/// path mode, atomics and frame size; the check's slow path goes through
/// shimStackBang.
class A64StackBangRecursion : public testing::TestWithParam<RecParam> {
protected:
  void SetUp() override {
    if (GetParam().At == Atomics::LSE && !hasLSE())
      GTEST_SKIP() << "no LSE atomics (qemu-aarch64 needs -cpu max)";
    ObjA = Objects.emplace_back().init();
    ObjB = Objects.emplace_back().init();
    Log.Calls = 0;
    Log.Misaligned = 0;
  }
  void TearDown() override {
    Emitted.reset();
    // Frees the monitors and restores the headers while the objects live.
    EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  }

  /// Runs `Scenario` on the recursion checking in mode `Bang`: bl pushes
  /// nothing, so a level takes its frame alone.
  void run(BangMode Bang, void (*Scenario)(const Recursion &)) {
    const RecParam &P = GetParam();
    Emitted = std::make_unique<EmittedRecursion>(
        P.Regs, Bang, P.Mode, P.At, P.Extra, entries(&shimStackBang));
    ASSERT_TRUE(Emitted->built());
    Scenario({[this](RecCtx &C) { Emitted->run(C); },
              [] { return Log.Calls.load(); },
              [] { return Log.Misaligned.load(); }, P.Extra, ObjA, ObjB});
  }

  std::deque<Object> Objects;
  std::unique_ptr<EmittedRecursion> Emitted;
  void *ObjA = nullptr, *ObjB = nullptr;
};

JITLOCK_STACKBANG_RECURSION_TESTS(A64StackBangRecursion)

INSTANTIATE_TEST_SUITE_P(Assignments, A64StackBangRecursion,
                         testing::ValuesIn(recParams()), recName);

//===----------------------------------------------------------------------===//
// The contract
//===----------------------------------------------------------------------===//

TEST(A64StackBangContract, InvalidArgumentsEmitNothing) {
  using namespace A64;
  const jitlock_rt_layout &L = layout();
  const StackBangOperands Good{x28, x9, x10};
  const StackBangOperands BadOps[] = {
      {sp, x9, x10},  {x28, sp, x10},  {x28, x9, xzr}, {x28, x28, x10},
      {x28, x9, x9},  {w28, x9, x10},  {x28, w9, x10}, {x28, x18, x10},
      {x28, x9, x18}, {Gp(), x9, x10},
  };
  jitlock_rt_layout OtherAbi = L, FarWatermark = L, OddPage = L;
  OtherAbi.abi_version = JITLOCK_RT_ABI_VERSION + 1;
  FarWatermark.stack_watermark_offset = 0x80000000u;
  OddPage.stack_page_size = 3000;
  RuntimeEntries NoEntry;
  NoEntry.StackBang = nullptr;
  struct Case {
    const char *What;
    StackBangOperands Ops;
    const jitlock_rt_layout *Layout;
    uint32_t Extra;
    BangMode Bang;
    SlowPathMode Mode;
    bool WithLabels;
    const RuntimeEntries *RT;
  };
  std::vector<Case> Cases;
  for (const StackBangOperands &Ops : BadOps)
    for (BangMode B : {BangMode::Watermark, BangMode::Always, BangMode::None})
      Cases.push_back(
          {"operands", Ops, &L, 64, B, SlowPathMode::OutOfLine, true, nullptr});
  Cases.push_back({"abi", Good, &OtherAbi, 64, BangMode::Watermark,
                   SlowPathMode::OutOfLine, true, nullptr});
  Cases.push_back({"watermark offset", Good, &FarWatermark, 64,
                   BangMode::Watermark, SlowPathMode::OutOfLine, true,
                   nullptr});
  Cases.push_back({"page size", Good, &OddPage, 64, BangMode::Always,
                   SlowPathMode::OutOfLine, true, nullptr});
  Cases.push_back({"extra", Good, &L, 0x80000000u, BangMode::Watermark,
                   SlowPathMode::OutOfLine, true, nullptr});
  Cases.push_back({"extra + shadow", Good, &L, 0x7FFFF000u, BangMode::Always,
                   SlowPathMode::OutOfLine, true, nullptr});
  Cases.push_back({"bang mode", Good, &L, 64, BangMode(9),
                   SlowPathMode::OutOfLine, true, nullptr});
  Cases.push_back({"slow path mode", Good, &L, 64, BangMode::Watermark,
                   SlowPathMode(9), true, nullptr});
  Cases.push_back({"no labels", Good, &L, 64, BangMode::Watermark,
                   SlowPathMode::Labels, false, nullptr});
  Cases.push_back({"no entry", Good, &L, 64, BangMode::Watermark,
                   SlowPathMode::OutOfLine, true, &NoEntry});
  for (const Case &K : Cases) {
    SCOPED_TRACE(std::string(K.What) + " " + bangName(K.Bang));
    asmjit::CodeHolder Code;
    Code.init(asmjit::Environment(asmjit::Arch::kAArch64));
    A64::Assembler A(&Code);
    SlowPathLabels Labels;
    EXPECT_EQ(J::a64::emitStackBang(A, *K.Layout, K.Ops, K.Extra, K.Bang,
                                    K.Mode, K.WithLabels ? &Labels : nullptr,
                                    K.RT ? *K.RT : RuntimeEntries{}),
              asmjit::kErrorInvalidArgument);
    EXPECT_EQ(Code.codeSize(), 0u);
    EXPECT_EQ(Code.labelCount(), 0u);
  }
  // None emits nothing and creates no label.
  {
    asmjit::CodeHolder Code;
    Code.init(asmjit::Environment(asmjit::Arch::kAArch64));
    A64::Assembler A(&Code);
    SlowPathLabels Labels;
    EXPECT_EQ(J::a64::emitStackBang(A, L, Good, 64, BangMode::None,
                                    SlowPathMode::Labels, &Labels),
              asmjit::kErrorOk);
    EXPECT_EQ(Code.codeSize(), 0u);
    EXPECT_EQ(Code.labelCount(), 0u);
  }
  // The slow call: bad operands or labels, no entry, Slow bound twice.
  asmjit::CodeHolder Code;
  Code.init(asmjit::Environment(asmjit::Arch::kAArch64));
  A64::Assembler A(&Code);
  SlowPathLabels Labels;
  ASSERT_EQ(J::a64::emitStackBang(A, L, Good, 64, BangMode::Watermark,
                                  SlowPathMode::Labels, &Labels),
            asmjit::kErrorOk);
  const size_t Size = Code.codeSize();
  EXPECT_EQ(J::a64::emitStackBangSlowCall(A, {x28, x28, x9}, 64, Labels),
            asmjit::kErrorInvalidArgument);
  EXPECT_EQ(J::a64::emitStackBangSlowCall(A, Good, 64, SlowPathLabels{}),
            asmjit::kErrorInvalidArgument);
  EXPECT_EQ(J::a64::emitStackBangSlowCall(A, Good, 64, Labels, NoEntry),
            asmjit::kErrorInvalidArgument);
  EXPECT_EQ(Code.codeSize(), Size);
  ASSERT_EQ(J::a64::emitStackBangSlowCall(A, Good, 64, Labels),
            asmjit::kErrorOk);
  const size_t After = Code.codeSize();
  EXPECT_EQ(J::a64::emitStackBangSlowCall(A, Good, 64, Labels),
            asmjit::kErrorInvalidArgument);
  EXPECT_EQ(Code.codeSize(), After);
  // An x86 assembler's CodeHolder is not an AArch64 one.
  asmjit::CodeHolder X86;
  X86.init(asmjit::Environment(asmjit::Arch::kX64));
  A64::Assembler Wrong(&X86);
  EXPECT_EQ(J::a64::emitStackBang(Wrong, L, Good, 64, BangMode::Watermark,
                                  SlowPathMode::OutOfLine),
            asmjit::kErrorInvalidArgument);
}

} // namespace

//===----------------------------------------------------------------------===//
// --dump-stackbang
//===----------------------------------------------------------------------===//

/// Prints one stack-bang sequence as `0x.. 0x.. 0x.. 0x..` lines for
/// llvm-mc-19 --disassemble: the thread pinned in x28, scratch x16/x17 (free
/// at a method entry), a 1024-byte frame. `labels` adds a `ret` (the method
/// body) and the slow call after it.
int dumpStackBang(int Argc, char **Argv) {
  if (Argc != 3 || (strcmp(Argv[2], "watermark") && strcmp(Argv[2], "labels") &&
                    strcmp(Argv[2], "always"))) {
    fprintf(stderr, "usage: %s --dump-stackbang watermark|labels|always\n",
            Argv[0]);
    return 2;
  }
  asmjit::CodeHolder Code;
  Code.init(asmjit::Environment(asmjit::Arch::kAArch64));
  A64::Assembler A(&Code);
  const StackBangOperands Ops{A64::x28, A64::x16, A64::x17};
  const bool Always = !strcmp(Argv[2], "always");
  const bool Labels = !strcmp(Argv[2], "labels");
  SlowPathLabels L;
  asmjit::Error E = J::a64::emitStackBang(
      A, layout(), Ops, 1024, Always ? BangMode::Always : BangMode::Watermark,
      Labels ? SlowPathMode::Labels : SlowPathMode::OutOfLine, &L);
  if (!E && Labels) {
    E = A.ret(A64::x30);
    if (!E)
      E = J::a64::emitStackBangSlowCall(A, Ops, 1024, L);
  }
  return printDump(Code, E);
}
