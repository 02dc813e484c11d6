//===- SafepointPollTest.cpp - x86_64 safepoint polls, executed -----------===//
//
// jitlock::emit::x64::emitSafepointPoll, run natively (labels asmjit,
// safepoint). The scenarios are those of SafepointScenarios.h, which the
// AArch64 suite (A64SafepointTest.cpp) runs too; this file supplies the
// x86_64 code:
//
//   SafepointPollProbe    a probe loop (poll; count; until stopped) inside a
//                         wrapper that loads every GPR, vector and mask
//                         register with sentinels and checks them when the
//                         loop returns; the slow path goes through a shim
//                         that checks the call's stack alignment and clobbers
//                         every caller-saved register on its way back. On a
//                         fake thread, for every thread register, both
//                         slow-path modes and both stack alignments: the
//                         poll word cases. Layouts with the armed bit and the
//                         poll word elsewhere.
//   SafepointPollRuntime  the same probe against the runtime, for every
//                         thread register: stopAtPoll and handshakeAtPoll.
//   SafepointPollThreads  runWorld: threads running emitted programs, plain
//                         and with the poll inside a monitor (emitted enter
//                         and exit), under many safepoints and handshakes.
//   SafepointPollEncoding the steady state is `test byte ptr [...], bit`
//                         and one branch, and writes no register.
//   SafepointPollContract invalid operands, layouts and labels are refused
//                         and nothing is emitted.
//
// The poll needs no scratch register on x86_64, so the register choice is
// the thread register alone: all fifteen are run.
//
//===----------------------------------------------------------------------===//
#include "EmitterTestUtil.h"
#include "SafepointScenarios.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace jitlock::emit::x64::detail {
void setVectorSaveForTesting(int Mode);
} // namespace jitlock::emit::x64::detail

using namespace emit_test;
using namespace safepoint_scenarios;

namespace {

const char *modeName(SlowPathMode M) {
  return M == SlowPathMode::OutOfLine ? "out-of-line" : "labels";
}

/// Every register that may hold the thread: all but rsp.
std::vector<uint32_t> threadRegisterIds() {
  std::vector<uint32_t> Ids;
  for (uint32_t Id = 0; Id < 16; ++Id)
    if (Id != x86::Gp::kIdSp)
      Ids.push_back(Id);
  return Ids;
}

/// The runtime is left as the tests found it: every thread detached,
/// shut down, the default configuration. The test's own thread is the VM
/// thread of the scenarios and stays unattached.
class SafepointPollRuntime : public ::testing::Test {
protected:
  void SetUp() override {
    jitlock_rt_config C;
    jitlock_rt_default_config(&C);
    ASSERT_EQ(jitlock_rt_configure(&C), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_current(), nullptr);
  }
  void TearDown() override {
    jitlock::emit::x64::detail::setVectorSaveForTesting(0);
    EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    jitlock_rt_stats S;
    jitlock_rt_get_stats(&S);
    EXPECT_EQ(S.monitors_alive, 0u);
  }
};

//===----------------------------------------------------------------------===//
// The probe loop
//===----------------------------------------------------------------------===//

struct alignas(64) PollFrame {
  uint64_t GprIn[16];
  uint64_t GprOut[16];
  uint64_t RspIn, RspOut;
  LoopCtx *Ctx;
  uint64_t KIn[8], KOut[8];
  alignas(64) uint8_t VecIn[32][64];
  alignas(64) uint8_t VecOut[32][64];
};

struct PollConfig {
  x86::Gp Thread;
  SlowPathMode Mode = SlowPathMode::OutOfLine;
  bool Misalign = false;
  VecLevel Level = VecLevel::Xmm;
  std::string str() const {
    return std::string("thread=") + regName(Thread.id()) + " " +
           modeName(Mode) + (Misalign ? " rsp%16=8" : " rsp%16=0") + " " +
           vecName(Level);
  }
};

/// do { poll; Ctx->Iterations += 1 } while (!Ctx->Stop), in the probe
/// wrapper, its slow path through a shim in front of `Target`.
class PollProbe {
public:
  PollProbe(const PollConfig &C, const void *Target,
            const jitlock_rt_layout &L = layout())
      : C(C), ShimFn(buildShim(Target, Shim, C.Level)) {
    RuntimeEntries RT;
    RT.SafepointPoll = ShimFn;
    Fn = build(L, RT);
  }
  ~PollProbe() {
    if (Fn)
      jit().release(reinterpret_cast<void *>(Fn));
    if (ShimFn)
      jit().release(ShimFn);
  }
  PollProbe(const PollProbe &) = delete;
  PollProbe &operator=(const PollProbe &) = delete;

  bool built() const { return Fn != nullptr; }
  uint64_t calls() const { return Shim.Calls.load(); }
  uint64_t misaligned() const { return Shim.Misaligned.load(); }

  /// Runs the loop on `Ctx` (Ctx.Thread in the thread register) until
  /// Ctx.Stop, then checks that every register came back.
  void run(LoopCtx &Ctx) {
    PollFrame P;
    std::memset(&P, 0, sizeof P);
    ++Round;
    for (uint32_t Id = 0; Id < 16; ++Id)
      P.GprIn[Id] = 0x5EED000000000000ull | (uint64_t(Id) << 40) | Round;
    P.GprIn[C.Thread.id()] = reinterpret_cast<uint64_t>(Ctx.Thread);
    P.Ctx = &Ctx;
    for (unsigned I = 0; I < 32; ++I)
      for (unsigned B = 0; B < 64; ++B)
        P.VecIn[I][B] = uint8_t(I * 64 + B + Round);
    for (unsigned I = 0; I < 8; ++I)
      P.KIn[I] = (0xA5A5u + I * 0x1111u + Round) & 0xFFFF;
    callJit(Fn, &P);
    EXPECT_EQ(P.RspOut, P.RspIn) << "rsp changed";
    // The poll clobbers no register: every GPR must come back, the thread
    // register included.
    for (uint32_t Id = 0; Id < 16; ++Id)
      if (Id != x86::Gp::kIdSp)
        EXPECT_EQ(P.GprOut[Id], P.GprIn[Id]) << regName(Id) << " changed";
    const unsigned Bytes = vecBytes(C.Level);
    for (unsigned I = 0; I < vecCount(C.Level); ++I)
      EXPECT_EQ(std::memcmp(P.VecOut[I], P.VecIn[I], Bytes), 0)
          << vecName(C.Level) << I << " changed";
    if (C.Level == VecLevel::Zmm)
      for (unsigned I = 1; I < 8; ++I)
        EXPECT_EQ(P.KOut[I] & 0xFFFF, P.KIn[I]) << "k" << I << " changed";
  }

private:
  using FnTy = void (*)(PollFrame *);

  FnTy build(const jitlock_rt_layout &L, const RuntimeEntries &RT) {
    Emission Em;
    auto &[Code, A] = Em;
    emitProbeEntry<PollFrame>(A, C.Level, C.Misalign, [](x86::Assembler &) {});
    Label Loop = A.newLabel();
    A.bind(Loop);
    SlowPathLabels Labels;
    Error E = jx::emitSafepointPoll(A, L, {C.Thread}, C.Mode, &Labels, RT);
    EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
    // The loop's own bookkeeping through rax, saved around it: the frame
    // pointer is at [rsp] (the entry put it there), the context in it.
    A.push(x86::rax);
    A.mov(x86::rax, x86::qword_ptr(x86::rsp, 8));
    A.mov(x86::rax, x86::qword_ptr(x86::rax, offsetof(PollFrame, Ctx)));
    A.add(x86::qword_ptr(x86::rax, offsetof(LoopCtx, Iterations)), 1);
    A.cmp(x86::dword_ptr(x86::rax, offsetof(LoopCtx, Stop)), 0);
    A.pop(x86::rax); // pop keeps the flags
    A.je(Loop);
    emitProbeExit<PollFrame>(A, C.Level, C.Misalign);
    if (C.Mode == SlowPathMode::Labels) {
      E = jx::emitSafepointPollSlowCall(A, {C.Thread}, Labels, RT);
      EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
    }
    void *Out = nullptr;
    E = jit().add(&Out, &Code);
    EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
    return reinterpret_cast<FnTy>(Out);
  }

  PollConfig C;
  ShimCounters Shim;
  void *ShimFn;
  FnTy Fn = nullptr;
  uint64_t Round = 0;
};

/// A fake jitlock_thread, large enough for any poll word offset the layout
/// tests use: only the poll word is read.
class FakeThread {
public:
  explicit FakeThread(size_t Bytes = 4096) : Words(Bytes / 8 + 1) {}
  uint64_t &pollWord(const jitlock_rt_layout &L) {
    EXPECT_EQ(L.poll_word_offset % 8, 0u);
    return Words.at(L.poll_word_offset / 8);
  }
  jitlock_thread *self() {
    return reinterpret_cast<jitlock_thread *>(Words.data());
  }

private:
  std::vector<uint64_t> Words;
};

/// Every poll word case once, on a fake thread with `L`'s layout.
void checkPollWordCases(const PollConfig &C, const jitlock_rt_layout &L) {
  SCOPED_TRACE(C.str());
  FakeThread Fake(size_t(L.poll_word_offset) + 64);
  PollProbe P(C, reinterpret_cast<const void *>(&recordedSafepointPoll), L);
  ASSERT_TRUE(P.built());
  for (const PollWordCase &K : pollWordCases(L)) {
    SCOPED_TRACE(K.What);
    pollCounts().reset();
    Fake.pollWord(L) = K.Word;
    LoopCtx Ctx;
    Ctx.Thread = Fake.self();
    Ctx.Stop = 1; // one poll
    const uint64_t Before = P.calls();
    P.run(Ctx);
    EXPECT_EQ(Ctx.Iterations, 1u);
    EXPECT_EQ(P.calls() - Before, uint64_t(K.Calls));
    EXPECT_EQ(pollCounts().Entered.load(), uint64_t(K.Calls));
    if (K.Calls) {
      EXPECT_EQ(pollCounts().LastThread.load(), Fake.self()) << "argument";
    }
    EXPECT_EQ(Fake.pollWord(L), K.Word) << "the poll wrote its word";
  }
  EXPECT_EQ(P.misaligned(), 0u) << "the slow call was misaligned";
}

TEST(SafepointPollProbe, PollWordCasesForEveryThreadRegister) {
  // Fifteen thread registers, both modes, both stack alignments.
  const jitlock_rt_layout L = layout();
  for (uint32_t T : threadRegisterIds())
    for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels})
      for (bool Mis : {false, true}) {
        PollConfig C{x86::gpq(T), M, Mis, hostVecLevel()};
        checkPollWordCases(C, L);
        if (HasFailure())
          return;
      }
}

TEST(SafepointPollProbe, FxsaveGlue) {
  // The glue's form for CPUs without XSAVE.
  jitlock::emit::x64::detail::setVectorSaveForTesting(1);
  const jitlock_rt_layout L = layout();
  for (uint32_t T : {0u, 3u, 7u, 12u, 15u}) {
    checkPollWordCases({x86::gpq(T), SlowPathMode::Labels, T % 2 == 1}, L);
    if (HasFailure())
      break;
  }
  jitlock::emit::x64::detail::setVectorSaveForTesting(0);
}

TEST(SafepointPollProbe, ArmedBitAndPollWordAnywhere) {
  // The poll follows the layout: the armed bit in any byte of the word
  // (byte test at word + bit / 8), the word near and far (disp8, disp32).
  const jitlock_rt_layout Runtime = layout();
  const uint32_t Offsets[] = {0, 8, 120, 4096, 70000};
  const unsigned Bits[] = {0, 1, 7, 8, 13, 31, 32, 63};
  unsigned N = 0;
  for (uint32_t Off : Offsets)
    for (unsigned Bit : Bits) {
      jitlock_rt_layout L = Runtime;
      L.poll_word_offset = Off;
      L.poll_armed_bit = uint64_t(1) << Bit;
      SCOPED_TRACE("poll word at " + std::to_string(Off) + ", armed bit " +
                   std::to_string(Bit));
      const uint32_t T = threadRegisterIds()[N % 15];
      checkPollWordCases(
          {x86::gpq(T), N % 2 ? SlowPathMode::Labels : SlowPathMode::OutOfLine,
           (N / 2) % 2 == 1, VecLevel::Xmm},
          L);
      ++N;
      if (HasFailure())
        return;
    }
}

//===----------------------------------------------------------------------===//
// Against the runtime
//===----------------------------------------------------------------------===//

/// A probe loop whose slow path is the runtime's, counted.
LoopRunner probeRunner(PollProbe &P) {
  return [&P](LoopCtx &Ctx) { P.run(Ctx); };
}

std::vector<PollConfig> runtimeConfigs() {
  std::vector<PollConfig> Out;
  unsigned N = 0;
  for (uint32_t T : threadRegisterIds())
    for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels})
      Out.push_back({x86::gpq(T), M, ++N % 3 == 0, hostVecLevel()});
  return Out;
}

TEST_F(SafepointPollRuntime, ArmedBySafepointStopsUntilItEnds) {
  for (const PollConfig &C : runtimeConfigs()) {
    SCOPED_TRACE(C.str());
    PollProbe P(C, reinterpret_cast<const void *>(&countedSafepointPoll));
    ASSERT_TRUE(P.built());
    stopAtPoll(probeRunner(P));
    EXPECT_EQ(P.calls(), 1u);
    EXPECT_EQ(P.misaligned(), 0u);
    if (HasFailure())
      return;
  }
}

TEST_F(SafepointPollRuntime, ArmedByHandshakeRunsItOnceAtThePoll) {
  for (const PollConfig &C : runtimeConfigs()) {
    SCOPED_TRACE(C.str());
    PollProbe P(C, reinterpret_cast<const void *>(&countedSafepointPoll));
    ASSERT_TRUE(P.built());
    handshakeAtPoll(probeRunner(P));
    EXPECT_EQ(P.calls(), 1u);
    EXPECT_EQ(P.misaligned(), 0u);
    if (HasFailure())
      return;
  }
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

/// The registers of one program: the context, the thread (also the
/// monitor operands' Thread), and for locked programs the monitor's Obj
/// and Scratch1 (Scratch0 is rax).
struct ProgramRegs {
  x86::Gp Ctx, Thread, Obj, Scratch1;
  std::string str() const {
    return std::string("ctx=") + regName(Ctx.id()) +
           " thread=" + regName(Thread.id()) + " obj=" + regName(Obj.id()) +
           " scratch=rax," + regName(Scratch1.id());
  }
};

/// Four distinct registers, none rsp or rax, from `Rng`.
ProgramRegs randomRegs(std::mt19937_64 &Rng) {
  std::vector<uint32_t> Ids;
  for (uint32_t Id = 0; Id < 16; ++Id)
    if (Id != x86::Gp::kIdSp && Id != x86::Gp::kIdAx)
      Ids.push_back(Id);
  std::shuffle(Ids.begin(), Ids.end(), Rng);
  return {x86::gpq(Ids[0]), x86::gpq(Ids[1]), x86::gpq(Ids[2]),
          x86::gpq(Ids[3])};
}

/// The program of SafepointScenarios.h: do { [enter]; Iterations += 1;
/// [*Shared += 1]; poll; [exit] } while (!Stop).
class PollProgram {
public:
  PollProgram(const ProgramRegs &R, bool Locked, SlowPathMode Mode,
              const RuntimeEntries &RT) {
    Emission Em;
    auto &[Code, A] = Em;
    const jitlock_rt_layout L = layout();
    const jx::MonitorOperands MO{R.Obj, R.Thread, x86::rax, R.Scratch1};
    const jx::SafepointPollOperands PO{R.Thread};
    const x86::Gp CalleeSaved[] = {x86::rbx, x86::rbp, x86::r12,
                                   x86::r13, x86::r14, x86::r15};
    for (const x86::Gp &Reg : CalleeSaved)
      A.push(Reg);
    A.sub(x86::rsp, 8);
    A.mov(R.Ctx, x86::rdi);
    A.mov(R.Thread, x86::qword_ptr(R.Ctx, offsetof(LoopCtx, Thread)));
    if (Locked)
      A.mov(R.Obj, x86::qword_ptr(R.Ctx, offsetof(LoopCtx, Obj)));
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
    Label Loop = A.newLabel();
    A.bind(Loop);
    if (Locked)
      Check(jx::emitMonitorEnter(A, L, MO, Mode, Labels(Stub::Enter), RT));
    A.add(x86::qword_ptr(R.Ctx, offsetof(LoopCtx, Iterations)), 1);
    if (Locked) {
      // An unguarded read-modify-write: only the monitor keeps it exact.
      A.mov(R.Scratch1, x86::qword_ptr(R.Ctx, offsetof(LoopCtx, Shared)));
      A.mov(x86::rax, x86::qword_ptr(R.Scratch1));
      A.add(x86::rax, 1);
      A.mov(x86::qword_ptr(R.Scratch1), x86::rax);
    }
    Check(jx::emitSafepointPoll(A, L, PO, Mode, Labels(Stub::Poll), RT));
    if (Locked)
      Check(jx::emitMonitorExit(A, L, MO, Mode, Labels(Stub::Exit), RT));
    A.cmp(x86::dword_ptr(R.Ctx, offsetof(LoopCtx, Stop)), 0);
    A.je(Loop);
    A.add(x86::rsp, 8);
    for (int I = 5; I >= 0; --I)
      A.pop(CalleeSaved[I]);
    A.ret();
    for (const Cold &S : Stubs)
      Check(S.Kind == Stub::Poll
                ? jx::emitSafepointPollSlowCall(A, PO, S.Labels, RT)
                : jx::emitSlowCall(A, S.Kind == Stub::Enter, MO, S.Labels, RT));
    Check(jit().add(&Fn, &Code));
  }
  ~PollProgram() {
    if (Fn)
      jit().release(Fn);
  }
  PollProgram(const PollProgram &) = delete;
  PollProgram &operator=(const PollProgram &) = delete;

  void run(LoopCtx &Ctx) const { callJit(Fn, &Ctx); }

private:
  static void Check(Error E) {
    EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
  }
  void (*Fn)(LoopCtx *) = nullptr;
};

class SafepointPollThreads : public SafepointPollRuntime {};

TEST_F(SafepointPollThreads, StopAtSafepointsAndRunHandshakesOnce) {
  // Four threads, two with the poll inside a monitor; registers, modes and
  // whether the slow paths go through a shim are drawn from the seed.
  const uint64_t Seed = scenarioSeed();
  std::mt19937_64 Rng(Seed);
  WorldConfig Cfg;
  Cfg.Locked = {false, true, false, true};
  Cfg.Safepoints = 300;
  Cfg.HandshakeRounds = 60;
  Cfg.Seed = Seed;
  Cfg.Layout = layout();
  RuntimeShim MonitorShim(hostVecLevel());
  ShimCounters PollShim;
  void *PollShimFn =
      buildShim(reinterpret_cast<const void *>(&countedSafepointPoll), PollShim,
                hostVecLevel());
  std::vector<std::unique_ptr<PollProgram>> Programs;
  for (unsigned I = 0; I < Cfg.Locked.size(); ++I) {
    const ProgramRegs R = randomRegs(Rng);
    const SlowPathMode M =
        Rng() % 2 ? SlowPathMode::Labels : SlowPathMode::OutOfLine;
    RuntimeEntries RT;
    if (Rng() % 2) {
      RT = MonitorShim.entries();
      RT.SafepointPoll = PollShimFn;
    }
    std::printf("  thread %u: %s %s %s %s\n", I, R.str().c_str(), modeName(M),
                Cfg.Locked[I] ? "locked" : "plain",
                RT.SafepointPoll == PollShimFn ? "shim" : "runtime");
    Programs.push_back(std::make_unique<PollProgram>(R, Cfg.Locked[I], M, RT));
  }
  pollCounts().reset();
  runWorld(Cfg, [&](unsigned I, LoopCtx &Ctx) { Programs[I]->run(Ctx); });
  EXPECT_EQ(PollShim.Misaligned.load() + MonitorShim.misaligned(), 0u);
  EXPECT_EQ(pollCounts().Entered.load(), pollCounts().Returned.load());
  jit().release(PollShimFn);
}

//===----------------------------------------------------------------------===//
// What is emitted
//===----------------------------------------------------------------------===//

/// asmjit's listing of one poll, and the number of bytes it took.
std::string listing(const jitlock_rt_layout &L, const x86::Gp &Thread,
                    SlowPathMode Mode, size_t *Size = nullptr) {
  CodeHolder Code;
  Code.init(jit().environment());
  StringLogger Log;
  Code.setLogger(&Log);
  x86::Assembler A(&Code);
  SlowPathLabels Labels;
  Error E = jx::emitSafepointPoll(A, L, {Thread}, Mode, &Labels);
  EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
  if (Size)
    *Size = Code.codeSize();
  return std::string(Log.data(), Log.dataSize());
}

std::vector<std::string> instructions(const std::string &Listing) {
  std::vector<std::string> Out;
  size_t Begin = 0;
  while (Begin < Listing.size()) {
    size_t End = Listing.find('\n', Begin);
    if (End == std::string::npos)
      End = Listing.size();
    std::string Line = Listing.substr(Begin, End - Begin);
    Begin = End + 1;
    // Labels ("L0:") are not instructions.
    if (!Line.empty() && Line.back() != ':')
      Out.push_back(Line);
  }
  return Out;
}

TEST(SafepointPollEncoding, LabelsModeIsOneTestAndOneJnz) {
  const jitlock_rt_layout L = layout();
  for (uint32_t T : threadRegisterIds()) {
    SCOPED_TRACE(regName(T));
    size_t Size = 0;
    std::vector<std::string> I =
        instructions(listing(L, x86::gpq(T), SlowPathMode::Labels, &Size));
    ASSERT_EQ(I.size(), 2u);
    // asmjit prints displacements and immediates in decimal.
    EXPECT_EQ(I[0], std::string("test byte ptr [") + regName(T) + "+" +
                        std::to_string(L.poll_word_offset) + "], 1");
    EXPECT_EQ(I[1].rfind("jnz ", 0), 0u) << I[1];
    // test m8, imm8 (REX, opcode, ModRM, SIB for r12, disp32, imm8), then
    // jnz rel32.
    EXPECT_LE(Size, 9u + 6u);
  }
}

TEST(SafepointPollEncoding, OutOfLineJumpsOverTheGlueWhenDisarmed) {
  const jitlock_rt_layout L = layout();
  std::vector<std::string> I =
      instructions(listing(L, x86::r12, SlowPathMode::OutOfLine));
  ASSERT_GE(I.size(), 3u);
  EXPECT_EQ(I[0].rfind("test byte ptr [r12", 0), 0u) << I[0];
  EXPECT_EQ(I[1].rfind("jz ", 0), 0u) << I[1];
  unsigned Calls = 0, Stores = 0;
  for (const std::string &S : I) {
    Calls += S.rfind("call ", 0) == 0;
    // The glue's only memory writes are its own stack slots.
    Stores += S.find("[r12") != std::string::npos && S.rfind("test", 0) != 0;
  }
  EXPECT_EQ(Calls, 1u);
  EXPECT_EQ(Stores, 0u) << "the poll wrote through the thread";
  // The thread goes to rdi as P2's one argument; rsi is not loaded.
  std::string All;
  for (const std::string &S : I)
    All += S + "\n";
  EXPECT_NE(All.find("mov rdi, r12\n"), std::string::npos) << All;
  EXPECT_EQ(All.find("rsi,"), std::string::npos) << All;
}

TEST(SafepointPollEncoding, TheArmedByteFollowsTheLayout) {
  jitlock_rt_layout L = layout();
  L.poll_word_offset = 0x100;
  L.poll_armed_bit = uint64_t(1) << 13; // byte 1, bit 5
  std::vector<std::string> I =
      instructions(listing(L, x86::rbx, SlowPathMode::Labels));
  ASSERT_EQ(I.size(), 2u);
  EXPECT_EQ(I[0], "test byte ptr [rbx+257], 32");
  L.poll_armed_bit = uint64_t(1) << 63; // byte 7, bit 7
  I = instructions(listing(L, x86::r13, SlowPathMode::Labels));
  ASSERT_EQ(I.size(), 2u);
  EXPECT_EQ(I[0], "test byte ptr [r13+263], 128");
}

//===----------------------------------------------------------------------===//
// Contract violations
//===----------------------------------------------------------------------===//

TEST(SafepointPollContract, InvalidOperandsLayoutsAndLabelsEmitNothing) {
  const jitlock_rt_layout L = layout();
  using namespace x86;
  const jx::SafepointPollOperands BadOps[] = {
      {rsp}, {esp}, {edi}, {di}, {dil}, {Gp()}, {gpq(16)}, {gpq(Gp::kIdBad)},
  };
  const jx::SafepointPollOperands Good{r12};
  jitlock_rt_layout OtherAbi = L, NoBit = L, TwoBits = L, Far = L, FarByte = L;
  OtherAbi.abi_version = JITLOCK_RT_ABI_VERSION + 1;
  NoBit.poll_armed_bit = 0;
  TwoBits.poll_armed_bit = 3;
  Far.poll_word_offset = 0x80000000u;
  FarByte.poll_word_offset = 0x7FFFFFF8u;
  FarByte.poll_armed_bit = uint64_t(1) << 63; // byte 0x7FFFFFFF: fits
  jitlock_rt_layout FarByteBeyond = FarByte;
  FarByteBeyond.poll_word_offset = 0x7FFFFFFCu; // its byte 7 does not
  RuntimeEntries NoEntry;
  NoEntry.SafepointPoll = nullptr;
  struct Case {
    const char *What;
    jx::SafepointPollOperands Ops;
    const jitlock_rt_layout *Layout;
    SlowPathMode Mode;
    bool WithLabels;
    const RuntimeEntries *RT;
  };
  std::vector<Case> Cases;
  for (const jx::SafepointPollOperands &Ops : BadOps)
    for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels})
      Cases.push_back({"operands", Ops, &L, M, true, nullptr});
  for (const jitlock_rt_layout *Bad :
       {&OtherAbi, &NoBit, &TwoBits, &Far, &FarByteBeyond})
    for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels})
      Cases.push_back({"layout", Good, Bad, M, true, nullptr});
  Cases.push_back({"slow path mode", Good, &L, SlowPathMode(5), true, nullptr});
  Cases.push_back({"labels mode without labels", Good, &L, SlowPathMode::Labels,
                   false, nullptr});
  Cases.push_back({"out of line without an entry", Good, &L,
                   SlowPathMode::OutOfLine, true, &NoEntry});
  for (const Case &K : Cases) {
    SCOPED_TRACE(std::string(K.What) + " " + modeName(K.Mode) + " thread id " +
                 std::to_string(K.Ops.Thread.id()));
    Emission Em;
    auto &[Code, A] = Em;
    SlowPathLabels Labels;
    EXPECT_EQ(jx::emitSafepointPoll(A, *K.Layout, K.Ops, K.Mode,
                                    K.WithLabels ? &Labels : nullptr,
                                    K.RT ? *K.RT : RuntimeEntries{}),
              kErrorInvalidArgument);
    EXPECT_EQ(Code.codeSize(), 0u) << "something was emitted";
    EXPECT_EQ(Code.labelCount(), 0u) << "a label was created";
  }
  // The largest byte offset that encodes is accepted.
  {
    Emission Em;
    auto &[Code, A] = Em;
    EXPECT_EQ(jx::emitSafepointPoll(A, FarByte, Good, SlowPathMode::OutOfLine),
              kErrorOk);
  }
  // The slow call: bad operands, no labels, no entry, Slow bound twice.
  Emission Em;
  auto &[Code, A] = Em;
  SlowPathLabels Labels;
  ASSERT_EQ(jx::emitSafepointPoll(A, L, Good, SlowPathMode::Labels, &Labels),
            kErrorOk);
  const size_t Size = Code.codeSize();
  EXPECT_EQ(jx::emitSafepointPollSlowCall(A, {rsp}, Labels),
            kErrorInvalidArgument);
  EXPECT_EQ(jx::emitSafepointPollSlowCall(A, Good, SlowPathLabels{}),
            kErrorInvalidArgument);
  EXPECT_EQ(jx::emitSafepointPollSlowCall(A, Good, Labels, NoEntry),
            kErrorInvalidArgument);
  EXPECT_EQ(Code.codeSize(), Size);
  ASSERT_EQ(jx::emitSafepointPollSlowCall(A, Good, Labels), kErrorOk);
  const size_t After = Code.codeSize();
  EXPECT_EQ(jx::emitSafepointPollSlowCall(A, Good, Labels),
            kErrorInvalidArgument)
      << "Slow is bound already";
  EXPECT_EQ(Code.codeSize(), After);
  // A bound Done, another architecture, no CodeHolder.
  SlowPathLabels Bound;
  Bound.Done = A.newLabel();
  A.bind(Bound.Done);
  EXPECT_EQ(jx::emitSafepointPoll(A, L, Good, SlowPathMode::Labels, &Bound),
            kErrorInvalidArgument);
  EXPECT_EQ(Code.codeSize(), After);
  CodeHolder Code32;
  Environment Env = jit().environment();
  Env.setArch(Arch::kX86);
  Code32.init(Env);
  x86::Assembler A32(&Code32);
  EXPECT_EQ(jx::emitSafepointPoll(A32, L, Good, SlowPathMode::OutOfLine),
            kErrorInvalidArgument);
  EXPECT_EQ(Code32.codeSize(), 0u);
  x86::Assembler Detached;
  EXPECT_EQ(jx::emitSafepointPoll(Detached, L, Good, SlowPathMode::OutOfLine),
            kErrorInvalidArgument);
}

TEST(SafepointPollContract, LabelsModeUsesTheCallersLabels) {
  const jitlock_rt_layout L = layout();
  Emission Em;
  auto &[Code, A] = Em;
  SlowPathLabels Labels{A.newLabel(), A.newLabel()};
  const SlowPathLabels Mine = Labels;
  ASSERT_EQ(
      jx::emitSafepointPoll(A, L, {x86::r12}, SlowPathMode::Labels, &Labels),
      kErrorOk);
  EXPECT_EQ(Labels.Slow.id(), Mine.Slow.id());
  EXPECT_EQ(Labels.Done.id(), Mine.Done.id());
  EXPECT_TRUE(Code.isLabelBound(Labels.Done));
  EXPECT_FALSE(Code.isLabelBound(Labels.Slow));
  // Left invalid, they are created.
  SlowPathLabels Fresh;
  ASSERT_EQ(
      jx::emitSafepointPoll(A, L, {x86::r12}, SlowPathMode::Labels, &Fresh),
      kErrorOk);
  EXPECT_TRUE(Fresh.Slow.isValid());
  EXPECT_TRUE(Code.isLabelBound(Fresh.Done));
}

} // namespace
