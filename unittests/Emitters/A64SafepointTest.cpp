//===- A64SafepointTest.cpp - AArch64 safepoint polls, executed -----------===//
//
// jitlock::emit::a64::emitSafepointPoll, run on AArch64 (under qemu-aarch64
// -cpu max; labels aarch64, asmjit, safepoint). The scenarios are those of
// unittests/Emitters/SafepointScenarios.h, which the x86_64 suite runs too;
// this file supplies the AArch64 code:
//
//   A64PollProbe     a probe loop (poll; count; until stopped) in a wrapper
//                    that loads x0-x30 and q0-q31 and checks them, and sp,
//                    when the loop returns; the slow path goes through a
//                    shim that checks sp's alignment and clobbers x0-x18 and
//                    all of v0-v31 around the call. On a fake thread: the
//                    poll word cases, for many (Thread, Scratch) pairs, both
//                    slow-path modes, sp aligned and 8 off. Layouts with the
//                    armed bit and the poll word elsewhere (ldrb's scaled
//                    immediate, and an offset beyond it).
//   A64PollRuntime   the same probe against the runtime: stopAtPoll and
//                    handshakeAtPoll, a real safepoint stopping a thread
//                    under qemu and releasing it.
//   A64PollThreads   runWorld: threads running emitted programs, plain and
//                    with the poll inside a monitor, under many safepoints
//                    and handshakes.
//   A64PollContract  invalid operands, layouts and labels are refused and
//                    nothing is emitted.
//
// The poll has no atomic instruction (an ldrb and a tbnz) and
// emitSafepointPoll no Atomics parameter: its bytes are the same for LSE
// and LL/SC machines, so it runs once, not per atomics variant. Only the
// monitors of the locked programs, which are not under test here, come in
// both variants, alternating between threads.
//
// `--dump-poll outofline|labels` prints the poll's bytes for llvm-mc
// (docs/emitters.md; test/Emitters/AArch64/poll.test checks them).
//
//===----------------------------------------------------------------------===//
#include "A64TestUtil.h"
#include "SafepointScenarios.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace a64_test;
using namespace safepoint_scenarios;
using J::a64::SafepointPollOperands;

int dumpPoll(int Argc, char **Argv);

namespace {

const char *modeName(SlowPathMode M) {
  return M == SlowPathMode::OutOfLine ? "OutOfLine" : "Labels";
}

//===----------------------------------------------------------------------===//
// Shims for the poll's entry
//===----------------------------------------------------------------------===//

struct PollShimLog {
  std::atomic<uint64_t> Calls{0}, Misaligned{0};
};
PollShimLog ShimLog;

void logShimCall() {
  if (!stackPointerAligned())
    ++ShimLog.Misaligned;
  ++ShimLog.Calls;
}

/// P2 through the runtime, counted (SafepointScenarios.h).
extern "C" void shimCountedPoll(jitlock_thread *T) {
  clobberAllCallerSaved();
  logShimCall();
  countedSafepointPoll(T);
  clobberAllCallerSaved();
}
/// Counted only (fake threads).
extern "C" void shimRecordedPoll(jitlock_thread *T) {
  clobberAllCallerSaved();
  logShimCall();
  recordedSafepointPoll(T);
  clobberAllCallerSaved();
}

RuntimeEntries pollEntries(void (*Fn)(jitlock_thread *)) {
  RuntimeEntries RT;
  RT.SafepointPoll = reinterpret_cast<const void *>(Fn);
  return RT;
}

//===----------------------------------------------------------------------===//
// The probe loop
//===----------------------------------------------------------------------===//

struct alignas(16) PollFrame {
  RegState In;
  RegState Out;
  uint64_t SpAt = 0; ///< sp when the loop starts
  uint64_t SpAfter = 0;
  LoopCtx *Ctx = nullptr;
};

struct PollConfig {
  uint32_t Thread, Scratch;
  SlowPathMode Mode = SlowPathMode::OutOfLine;
  bool Misalign = false;
  SafepointPollOperands operands() const {
    return {A64::x(Thread), A64::x(Scratch)};
  }
  std::string str() const {
    return "thread=x" + std::to_string(Thread) + " scratch=x" +
           std::to_string(Scratch) + " " + modeName(Mode) +
           (Misalign ? " sp%16=8" : " sp%16=0");
  }
};

using PollProbeFn = void (*)(PollFrame *);

/// do { poll; Ctx->Iterations += 1 } while (!Ctx->Stop), in a wrapper that
/// loads and stores every register.
PollProbeFn buildPollProbe(const PollConfig &C, const RuntimeEntries &RT,
                           const jitlock_rt_layout &L = layout()) {
  Emission Em;
  auto &[Code, A] = Em;
  Checked Ok;
  using namespace A64;
  probe::saveCallerState(A, Ok);
  Ok(A.mov(x1, sp));
  if (C.Misalign)
    Ok(A.sub(x1, x1, 8));
  Ok(A.str(x1, ptr(x0, offsetof(PollFrame, SpAt))));
  probe::loadInRegisters(A, Ok, C.Misalign);

  asmjit::Label Loop = A.newLabel();
  Ok(A.bind(Loop));
  SlowPathLabels Labels;
  asmjit::Error E =
      J::a64::emitSafepointPoll(A, L, C.operands(), C.Mode, &Labels, RT);
  EXPECT_EQ(E, asmjit::kErrorOk) << asmjit::DebugUtils::errorAsString(E);
  // The loop's own bookkeeping: Scratch (the poll's to clobber) and T,
  // spilled below sp for it. sp may be 8 off alignment, so the stack is
  // addressed through Scratch, never through sp.
  const GpX S = x(C.Scratch);
  uint32_t TId = 9;
  while (TId == C.Thread || TId == C.Scratch)
    ++TId;
  const GpX T = x(TId);
  const int32_t FrameAt = 16 + (C.Misalign ? 8 : 0) + probe::FrameSlot;
  Ok(A.sub(sp, sp, 16));
  Ok(A.mov(S, sp));
  Ok(A.str(T, ptr(S)));
  Ok(A.ldr(S, ptr(S, FrameAt)));
  Ok(A.ldr(S, ptr(S, offsetof(PollFrame, Ctx))));
  Ok(A.ldr(T, ptr(S, offsetof(LoopCtx, Iterations))));
  Ok(A.add(T, T, 1));
  Ok(A.str(T, ptr(S, offsetof(LoopCtx, Iterations))));
  Ok(A.ldr(T.w(), ptr(S, offsetof(LoopCtx, Stop))));
  Ok(A.cmp(T.w(), 0));
  Ok(A.mov(S, sp)); // neither this, ldr nor add changes the flags
  Ok(A.ldr(T, ptr(S)));
  Ok(A.add(sp, sp, 16));
  Ok(A.b_eq(Loop));

  probe::storeOutAndReturn(A, Ok, C.Misalign, offsetof(PollFrame, Out),
                           offsetof(PollFrame, SpAfter));
  if (C.Mode == SlowPathMode::Labels) {
    E = J::a64::emitSafepointPollSlowCall(A, C.operands(), Labels, RT);
    EXPECT_EQ(E, asmjit::kErrorOk) << asmjit::DebugUtils::errorAsString(E);
  }
  EXPECT_EQ(Ok.Err, asmjit::kErrorOk)
      << asmjit::DebugUtils::errorAsString(Ok.Err);
  if (E || Ok.Err)
    return nullptr;
  PollProbeFn Fn = nullptr;
  E = jit().add(&Fn, &Code);
  EXPECT_EQ(E, asmjit::kErrorOk) << asmjit::DebugUtils::errorAsString(E);
  return E ? nullptr : Fn;
}

/// Runs the probe loop on `Ctx` until Ctx.Stop and checks that everything
/// but the scratch register came back.
void runProbe(PollProbeFn Fn, const PollConfig &C, LoopCtx &Ctx,
              uint64_t Seed) {
  PollFrame F;
  fillPattern(F.In, Seed);
  F.In.X[C.Thread] = reinterpret_cast<uint64_t>(Ctx.Thread);
  F.Ctx = &Ctx;
  Fn(&F);
  for (uint32_t I = 0; I != 31; ++I) {
    if (I != C.Scratch) {
      EXPECT_EQ(F.Out.X[I], F.In.X[I]) << "x" << I << " changed";
    }
  }
  for (unsigned I = 0; I != 32; ++I)
    EXPECT_EQ(memcmp(F.Out.V[I], F.In.V[I], 16), 0) << "q" << I << " changed";
  EXPECT_EQ(F.SpAfter, F.SpAt + (C.Misalign ? 8 : 0)) << "sp changed";
}

/// A fake jitlock_thread: only the poll word is read.
class FakeThread {
public:
  explicit FakeThread(size_t Bytes) : Words(Bytes / 8 + 1) {}
  uint64_t &pollWord(const jitlock_rt_layout &L) {
    return Words.at(L.poll_word_offset / 8);
  }
  jitlock_thread *self() {
    return reinterpret_cast<jitlock_thread *>(Words.data());
  }

private:
  std::vector<uint64_t> Words;
};

void checkPollWordCases(const PollConfig &C, const jitlock_rt_layout &L) {
  SCOPED_TRACE(C.str());
  FakeThread Fake(size_t(L.poll_word_offset) + 64);
  PollProbeFn Fn = buildPollProbe(C, pollEntries(&shimRecordedPoll), L);
  ASSERT_NE(Fn, nullptr);
  uint64_t Seed = 0;
  for (const PollWordCase &K : pollWordCases(L)) {
    SCOPED_TRACE(K.What);
    pollCounts().reset();
    ShimLog.Calls = 0;
    ShimLog.Misaligned = 0;
    Fake.pollWord(L) = K.Word;
    LoopCtx Ctx;
    Ctx.Thread = Fake.self();
    Ctx.Stop = 1; // one poll
    runProbe(Fn, C, Ctx, ++Seed);
    EXPECT_EQ(Ctx.Iterations, 1u);
    EXPECT_EQ(ShimLog.Calls.load(), uint64_t(K.Calls));
    EXPECT_EQ(pollCounts().Entered.load(), uint64_t(K.Calls));
    EXPECT_EQ(ShimLog.Misaligned.load(), 0u) << "the call's sp was misaligned";
    if (K.Calls) {
      EXPECT_EQ(pollCounts().LastThread.load(), Fake.self()) << "argument";
    }
    EXPECT_EQ(Fake.pollWord(L), K.Word) << "the poll wrote its word";
  }
  jit().release(Fn);
}

/// (Thread, Scratch) pairs: every thread register with a scratch register
/// that moves with it, the argument registers, x16/x17 (allowed as
/// scratch), x18 as the thread, x29/x30, and seeded random pairs.
std::vector<PollConfig> pollConfigs() {
  std::vector<std::pair<uint32_t, uint32_t>> Pairs = {
      {0, 1},  {1, 0},   {28, 16}, {28, 17}, {16, 17}, {17, 16},
      {18, 9}, {29, 30}, {30, 29}, {0, 30},  {19, 0},  {2, 28},
  };
  for (uint32_t T = 0; T != 31; ++T) {
    uint32_t S = (T + 7) % 31;
    if (S == 18)
      S = 19;
    Pairs.push_back({T, S});
  }
  std::mt19937 Rng(20240607);
  while (Pairs.size() < 64) {
    uint32_t T = Rng() % 31, S = Rng() % 31;
    if (T != S && S != 18)
      Pairs.push_back({T, S});
  }
  std::vector<PollConfig> Out;
  unsigned N = 0;
  for (auto [T, S] : Pairs)
    for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels})
      Out.push_back({T, S, M, ++N % 3 == 0});
  return Out;
}

TEST(A64PollProbe, PollWordCasesForManyRegisterPairs) {
  for (const PollConfig &C : pollConfigs()) {
    checkPollWordCases(C, layout());
    if (HasFailure())
      return;
  }
}

TEST(A64PollProbe, ArmedBitAndPollWordAnywhere) {
  // The byte P1 loads follows the layout: any bit of the word, the word
  // within ldrb's scaled immediate (up to 4095) and beyond it (the offset
  // then goes through Scratch).
  const uint32_t Offsets[] = {0, 8, 4088, 4096, 70000};
  const unsigned Bits[] = {0, 7, 8, 13, 63};
  unsigned N = 0;
  for (uint32_t Off : Offsets)
    for (unsigned Bit : Bits) {
      jitlock_rt_layout L = layout();
      L.poll_word_offset = Off;
      L.poll_armed_bit = uint64_t(1) << Bit;
      SCOPED_TRACE("poll word at " + std::to_string(Off) + ", armed bit " +
                   std::to_string(Bit));
      const std::vector<PollConfig> All = pollConfigs();
      checkPollWordCases(All[(7 * N++) % All.size()], L);
      if (HasFailure())
        return;
    }
}

//===----------------------------------------------------------------------===//
// Against the runtime
//===----------------------------------------------------------------------===//

class A64PollRuntime : public testing::Test {
protected:
  void SetUp() override { ASSERT_EQ(jitlock_rt_current(), nullptr); }
};

/// A sample of pollConfigs(), both modes each.
std::vector<PollConfig> runtimeConfigs() {
  std::vector<PollConfig> All = pollConfigs(), Out;
  for (size_t I = 0; I < 24 && I < All.size(); ++I)
    Out.push_back(All[I]);
  return Out;
}

TEST_F(A64PollRuntime, ArmedBySafepointStopsUntilItEnds) {
  for (const PollConfig &C : runtimeConfigs()) {
    SCOPED_TRACE(C.str());
    PollProbeFn Fn = buildPollProbe(C, pollEntries(&shimCountedPoll));
    ASSERT_NE(Fn, nullptr);
    ShimLog.Calls = 0;
    ShimLog.Misaligned = 0;
    uint64_t Seed = 0;
    stopAtPoll([&](LoopCtx &Ctx) { runProbe(Fn, C, Ctx, ++Seed); });
    EXPECT_EQ(ShimLog.Calls.load(), 1u);
    EXPECT_EQ(ShimLog.Misaligned.load(), 0u);
    jit().release(Fn);
    if (HasFailure())
      return;
  }
}

TEST_F(A64PollRuntime, ArmedByHandshakeRunsItOnceAtThePoll) {
  for (const PollConfig &C : runtimeConfigs()) {
    SCOPED_TRACE(C.str());
    PollProbeFn Fn = buildPollProbe(C, pollEntries(&shimCountedPoll));
    ASSERT_NE(Fn, nullptr);
    ShimLog.Calls = 0;
    ShimLog.Misaligned = 0;
    uint64_t Seed = 0;
    handshakeAtPoll([&](LoopCtx &Ctx) { runProbe(Fn, C, Ctx, ++Seed); });
    EXPECT_EQ(ShimLog.Calls.load(), 1u);
    EXPECT_EQ(ShimLog.Misaligned.load(), 0u);
    jit().release(Fn);
    if (HasFailure())
      return;
  }
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

/// One program's registers: the context, the thread, the poll's scratch
/// register and, for locked programs, the monitor's object and scratch.
struct ProgramRegs {
  uint32_t Ctx, Thread, Poll, Obj, S0, S1, S2;
  std::string str() const {
    return "ctx=x" + std::to_string(Ctx) + " thread=x" +
           std::to_string(Thread) + " poll=x" + std::to_string(Poll) +
           " obj=x" + std::to_string(Obj) + " scratch=x" + std::to_string(S0) +
           ",x" + std::to_string(S1) + ",x" + std::to_string(S2);
  }
};

/// Distinct registers from `Rng`: the monitor's scratch registers never
/// x16-x18; the poll's scratch register x16/x17 at times, one of the
/// monitor's (dead between the sequences) at others.
ProgramRegs randomRegs(std::mt19937_64 &Rng) {
  std::vector<uint32_t> Ids;
  for (uint32_t Id = 0; Id != 29; ++Id)
    if (Id < 16 || Id > 18)
      Ids.push_back(Id);
  std::shuffle(Ids.begin(), Ids.end(), Rng);
  ProgramRegs R{Ids[0], Ids[1], Ids[2], Ids[3], Ids[4], Ids[5], Ids[6]};
  switch (Rng() % 3) {
  case 0:
    R.Poll = 16 + uint32_t(Rng() % 2);
    break;
  case 1:
    R.Poll = R.S0;
    break;
  default:
    break;
  }
  return R;
}

/// The program of SafepointScenarios.h.
class PollProgram {
public:
  PollProgram(const ProgramRegs &R, bool Locked, Atomics At, SlowPathMode Mode,
              const RuntimeEntries &RT) {
    using namespace A64;
    Emission Em;
    auto &[Code, A] = Em;
    Checked Ok;
    const jitlock_rt_layout &L = layout();
    const MonitorOperands MO{x(R.Obj), x(R.Thread), x(R.S0), x(R.S1), x(R.S2)};
    const SafepointPollOperands PO{x(R.Thread), x(R.Poll)};
    const GpX Ctx = x(R.Ctx), P = x(R.Poll);
    Ok(A.stp(x29, x30, ptr_pre(sp, -96)));
    Ok(A.mov(x29, sp));
    for (uint32_t I = 19; I != 29; I += 2)
      Ok(A.stp(x(I), x(I + 1), ptr(sp, 16 + 8 * int32_t(I - 19))));
    Ok(A.mov(Ctx, x0));
    Ok(A.ldr(x(R.Thread), ptr(Ctx, offsetof(LoopCtx, Thread))));
    if (Locked)
      Ok(A.ldr(x(R.Obj), ptr(Ctx, offsetof(LoopCtx, Obj))));
    enum class Stub { Enter, Exit, Poll };
    struct Cold {
      Stub Kind;
      SlowPathLabels Labels;
    };
    std::deque<Cold> Stubs;
    auto Labels = [&](Stub Kind) -> SlowPathLabels * {
      if (Mode != SlowPathMode::Labels)
        return nullptr;
      Stubs.push_back({Kind, {}});
      return &Stubs.back().Labels;
    };
    asmjit::Label Loop = A.newLabel();
    Ok(A.bind(Loop));
    if (Locked)
      Ok(J::a64::emitMonitorEnter(A, L, MO, At, Mode, Labels(Stub::Enter), RT));
    Ok(A.ldr(P, ptr(Ctx, offsetof(LoopCtx, Iterations))));
    Ok(A.add(P, P, 1));
    Ok(A.str(P, ptr(Ctx, offsetof(LoopCtx, Iterations))));
    if (Locked) {
      // An unguarded read-modify-write: only the monitor keeps it exact.
      const GpX Addr = x(R.S1), Val = x(R.S2);
      Ok(A.ldr(Addr, ptr(Ctx, offsetof(LoopCtx, Shared))));
      Ok(A.ldr(Val, ptr(Addr)));
      Ok(A.add(Val, Val, 1));
      Ok(A.str(Val, ptr(Addr)));
    }
    Ok(J::a64::emitSafepointPoll(A, L, PO, Mode, Labels(Stub::Poll), RT));
    if (Locked)
      Ok(J::a64::emitMonitorExit(A, L, MO, At, Mode, Labels(Stub::Exit), RT));
    Ok(A.ldr(P.w(), ptr(Ctx, offsetof(LoopCtx, Stop))));
    Ok(A.cbz(P.w(), Loop));
    for (uint32_t I = 19; I != 29; I += 2)
      Ok(A.ldp(x(I), x(I + 1), ptr(sp, 16 + 8 * int32_t(I - 19))));
    Ok(A.ldp(x29, x30, ptr_post(sp, 96)));
    Ok(A.ret(x30));
    for (const Cold &S : Stubs)
      Ok(S.Kind == Stub::Poll
             ? J::a64::emitSafepointPollSlowCall(A, PO, S.Labels, RT)
             : J::a64::emitSlowCall(A, S.Kind == Stub::Enter, MO, S.Labels,
                                    RT));
    EXPECT_EQ(Ok.Err, asmjit::kErrorOk)
        << asmjit::DebugUtils::errorAsString(Ok.Err);
    if (!Ok.Err)
      Ok(jit().add(&Fn, &Code));
    EXPECT_NE(Fn, nullptr);
  }
  ~PollProgram() {
    if (Fn)
      jit().release(Fn);
  }
  PollProgram(const PollProgram &) = delete;
  PollProgram &operator=(const PollProgram &) = delete;

  void run(LoopCtx &Ctx) const { Fn(&Ctx); }

private:
  void (*Fn)(LoopCtx *) = nullptr;
};

class A64PollThreads : public A64PollRuntime {};

TEST_F(A64PollThreads, StopAtSafepointsAndRunHandshakesOnce) {
  // Four threads, two with the poll inside a monitor (one LSE, one LL/SC);
  // registers, modes and shims are drawn from the seed.
  const uint64_t Seed = scenarioSeed();
  std::mt19937_64 Rng(Seed);
  WorldConfig Cfg;
  Cfg.Locked = {false, true, false, true};
  Cfg.Safepoints = 100;
  Cfg.HandshakeRounds = 30;
  Cfg.MaxHoldUs = 1000;
  Cfg.MaxGapUs = 500;
  Cfg.Seed = Seed;
  Cfg.Layout = layout();
  std::vector<std::unique_ptr<PollProgram>> Programs;
  unsigned LockedSoFar = 0;
  for (unsigned I = 0; I < Cfg.Locked.size(); ++I) {
    const ProgramRegs R = randomRegs(Rng);
    const SlowPathMode M =
        Rng() % 2 ? SlowPathMode::Labels : SlowPathMode::OutOfLine;
    const Atomics At = Cfg.Locked[I] && LockedSoFar++ % 2 == 0 && hasLSE()
                           ? Atomics::LSE
                           : Atomics::LLSC;
    RuntimeEntries RT;
    const bool Shim = Rng() % 2;
    if (Shim) {
      RT = runtimeShims();
      RT.SafepointPoll = reinterpret_cast<const void *>(&shimCountedPoll);
    }
    std::printf("  thread %u: %s %s %s%s %s\n", I, R.str().c_str(), modeName(M),
                Cfg.Locked[I] ? "locked " : "plain",
                Cfg.Locked[I] ? (At == Atomics::LSE ? "LSE" : "LLSC") : "",
                Shim ? "shim" : "runtime");
    Programs.push_back(
        std::make_unique<PollProgram>(R, Cfg.Locked[I], At, M, RT));
  }
  pollCounts().reset();
  ShimLog.Misaligned = 0;
  runWorld(Cfg, [&](unsigned I, LoopCtx &Ctx) { Programs[I]->run(Ctx); });
  EXPECT_EQ(ShimLog.Misaligned.load(), 0u);
  EXPECT_EQ(pollCounts().Entered.load(), pollCounts().Returned.load());
}

//===----------------------------------------------------------------------===//
// Contract violations
//===----------------------------------------------------------------------===//

TEST(A64PollContract, InvalidOperandsLayoutsAndLabelsEmitNothing) {
  const jitlock_rt_layout &L = layout();
  using namespace A64;
  const SafepointPollOperands BadOps[] = {
      {x28, x28},                                       // the same register
      {sp, x16},   {x28, sp},   {xzr, x16}, {x28, xzr}, // sp, xzr
      {w28, x16},  {x28, w16},                          // w registers
      {x28, x18},                                       // the platform register
      {Gp(), x16}, {x28, Gp()},                         // no register
  };
  const SafepointPollOperands Good{x28, x16};
  jitlock_rt_layout OtherAbi = L, NoBit = L, TwoBits = L, Far = L;
  OtherAbi.abi_version = JITLOCK_RT_ABI_VERSION + 1;
  NoBit.poll_armed_bit = 0;
  TwoBits.poll_armed_bit = 0x101;
  Far.poll_word_offset = 0x80000000u;
  RuntimeEntries NoEntry;
  NoEntry.SafepointPoll = nullptr;
  struct Case {
    const char *What;
    SafepointPollOperands Ops;
    const jitlock_rt_layout *Layout;
    SlowPathMode Mode;
    bool WithLabels;
    const RuntimeEntries *RT;
  };
  std::vector<Case> Cases;
  for (const SafepointPollOperands &Ops : BadOps)
    for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels})
      Cases.push_back({"operands", Ops, &L, M, true, nullptr});
  for (const jitlock_rt_layout *Bad : {&OtherAbi, &NoBit, &TwoBits, &Far})
    for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels})
      Cases.push_back({"layout", Good, Bad, M, true, nullptr});
  Cases.push_back({"slow path mode", Good, &L, SlowPathMode(5), true, nullptr});
  Cases.push_back({"labels mode without labels", Good, &L, SlowPathMode::Labels,
                   false, nullptr});
  Cases.push_back({"out of line without an entry", Good, &L,
                   SlowPathMode::OutOfLine, true, &NoEntry});
  for (const Case &K : Cases) {
    SCOPED_TRACE(std::string(K.What) + " " + modeName(K.Mode) + " ids " +
                 std::to_string(K.Ops.Thread.id()) + "," +
                 std::to_string(K.Ops.Scratch.id()));
    Emission Em;
    auto &[Code, A] = Em;
    SlowPathLabels Labels;
    EXPECT_EQ(J::a64::emitSafepointPoll(A, *K.Layout, K.Ops, K.Mode,
                                        K.WithLabels ? &Labels : nullptr,
                                        K.RT ? *K.RT : RuntimeEntries{}),
              asmjit::kErrorInvalidArgument);
    EXPECT_EQ(Code.codeSize(), 0u) << "something was emitted";
    EXPECT_EQ(Code.labelCount(), 0u) << "a label was created";
  }
  // The slow call: bad operands, no labels, no entry, Slow bound twice.
  Emission Em;
  auto &[Code, A] = Em;
  SlowPathLabels Labels;
  ASSERT_EQ(
      J::a64::emitSafepointPoll(A, L, Good, SlowPathMode::Labels, &Labels),
      asmjit::kErrorOk);
  const size_t Size = Code.codeSize();
  EXPECT_EQ(J::a64::emitSafepointPollSlowCall(A, {x28, x18}, Labels),
            asmjit::kErrorInvalidArgument);
  EXPECT_EQ(J::a64::emitSafepointPollSlowCall(A, Good, SlowPathLabels{}),
            asmjit::kErrorInvalidArgument);
  EXPECT_EQ(J::a64::emitSafepointPollSlowCall(A, Good, Labels, NoEntry),
            asmjit::kErrorInvalidArgument);
  EXPECT_EQ(Code.codeSize(), Size);
  ASSERT_EQ(J::a64::emitSafepointPollSlowCall(A, Good, Labels),
            asmjit::kErrorOk);
  const size_t After = Code.codeSize();
  EXPECT_EQ(J::a64::emitSafepointPollSlowCall(A, Good, Labels),
            asmjit::kErrorInvalidArgument)
      << "Slow is bound already";
  EXPECT_EQ(Code.codeSize(), After);
  // A bound Done, another architecture, no CodeHolder.
  SlowPathLabels Bound;
  Bound.Done = A.newLabel();
  A.bind(Bound.Done);
  EXPECT_EQ(J::a64::emitSafepointPoll(A, L, Good, SlowPathMode::Labels, &Bound),
            asmjit::kErrorInvalidArgument);
  EXPECT_EQ(Code.codeSize(), After);
  asmjit::CodeHolder X86;
  X86.init(asmjit::Environment(asmjit::Arch::kX64));
  A64::Assembler Wrong(&X86);
  EXPECT_EQ(J::a64::emitSafepointPoll(Wrong, L, Good, SlowPathMode::OutOfLine),
            asmjit::kErrorInvalidArgument);
  A64::Assembler Detached;
  EXPECT_EQ(
      J::a64::emitSafepointPoll(Detached, L, Good, SlowPathMode::OutOfLine),
      asmjit::kErrorInvalidArgument);
}

TEST(A64PollContract, LabelsModeUsesTheCallersLabels) {
  Emission Em;
  auto &[Code, A] = Em;
  SlowPathLabels Labels{A.newLabel(), A.newLabel()};
  const SlowPathLabels Mine = Labels;
  ASSERT_EQ(J::a64::emitSafepointPoll(A, layout(), {A64::x28, A64::x16},
                                      SlowPathMode::Labels, &Labels),
            asmjit::kErrorOk);
  EXPECT_EQ(Labels.Slow.id(), Mine.Slow.id());
  EXPECT_EQ(Labels.Done.id(), Mine.Done.id());
  EXPECT_TRUE(Code.isLabelBound(Labels.Done));
  EXPECT_FALSE(Code.isLabelBound(Labels.Slow));
  // The steady state is two instructions.
  EXPECT_EQ(Code.codeSize(), 8u);
}

} // namespace

//===----------------------------------------------------------------------===//
// --dump-poll
//===----------------------------------------------------------------------===//

/// Prints the poll as `0x.. 0x.. 0x.. 0x..` lines for llvm-mc-19
/// --disassemble: the thread pinned in x28, scratch x16. `labels` adds a
/// `ret` (the rest of the method) and the slow call after it.
int dumpPoll(int Argc, char **Argv) {
  if (Argc != 3 ||
      (strcmp(Argv[2], "outofline") && strcmp(Argv[2], "labels"))) {
    fprintf(stderr, "usage: %s --dump-poll outofline|labels\n", Argv[0]);
    return 2;
  }
  asmjit::CodeHolder Code;
  Code.init(asmjit::Environment(asmjit::Arch::kAArch64));
  A64::Assembler A(&Code);
  const SafepointPollOperands Ops{A64::x28, A64::x16};
  const bool Labels = !strcmp(Argv[2], "labels");
  SlowPathLabels L;
  asmjit::Error E = J::a64::emitSafepointPoll(
      A, layout(), Ops, Labels ? SlowPathMode::Labels : SlowPathMode::OutOfLine,
      &L);
  if (!E && Labels) {
    E = A.ret(A64::x30);
    if (!E)
      E = J::a64::emitSafepointPollSlowCall(A, Ops, L);
  }
  return printDump(Code, E);
}
