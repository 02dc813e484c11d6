//===- X64EmitterTest.cpp - The x86_64 emitters, executed natively --------===//
//
// Every sequence is emitted into a fresh CodeHolder, added to a JitRuntime
// and run on this machine. A "probe" wraps one monitor operation: it loads
// every general-purpose register, every vector register (xmm, ymm or zmm,
// whatever the CPU has, plus the AVX-512 mask registers) with sentinels, runs
// the sequence, and stores them all back, so each step checks that nothing
// but the scratch registers changed. The slow paths go through a shim that
// checks the stack alignment of the call and clobbers every caller-saved
// register before returning, so the glue must really preserve them; counting
// the shim's calls tells which steps stayed inline.
//
// The paths are the scenarios of MonitorPathScenarios.h, shared with the
// AArch64 suite. After every step the lock state is checked through the
// runtime's queries (jitlock_rt_inspect, jitlock_rt_lock_stack) and the
// header word itself.
// Every path runs for every register assignment, without and with the
// optional third scratch register (x64::MonitorOperands::Scratch2).
//
//===----------------------------------------------------------------------===//
#include "EmitterTestUtil.h"
#include "MonitorPathScenarios.h"
#include "StorageLayout.h"

#include "../Runtime/RuntimeTestUtil.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>

namespace jitlock::emit::x64::detail {
void setVectorSaveForTesting(int Mode);
} // namespace jitlock::emit::x64::detail

using namespace emit_test;
using namespace jitlock_test;
using namespace monitor_scenarios;

namespace {

//===-- The probe --------------------------------------------------------===//

using ProbeFrame = RegisterFrame;

struct ProbeOptions {
  SlowPathMode Mode = SlowPathMode::OutOfLine;
  bool Misalign = false; ///< rsp = 8 mod 16 when the sequence starts
  VecLevel Level = VecLevel::Xmm;
  bool Shim = true; ///< slow paths through a RuntimeShim, else the runtime
  /// The inflated exit to emit (JITLOCK_EXIT_STORE or _FENCE); 0: the
  /// runtime's layout's. Either is correct for a single thread.
  uint32_t Exit = 0;
};

std::string describe(const Assignment &As, const ProbeOptions &O) {
  return As.str() +
         (O.Mode == SlowPathMode::Labels ? " labels" : " out-of-line") +
         (O.Misalign ? " rsp%16=8" : " rsp%16=0") + " " + vecName(O.Level) +
         (O.Shim ? " shim" : " runtime") +
         (O.Exit == JITLOCK_EXIT_STORE   ? " exit=store"
          : O.Exit == JITLOCK_EXIT_FENCE ? " exit=fence"
                                         : "");
}

/// enter(thread, obj) and exit(thread, obj), each one emitted sequence in a
/// wrapper that checks every register around it. The enter and the exit may
/// be emitted with different assignments (e.g. with and without Scratch2).
/// The x86_64 target of MonitorPathScenarios.h.
class Probe : public PathTarget {
public:
  Probe(const Assignment &As, const ProbeOptions &O) : Probe(As, As, O) {}
  Probe(const Assignment &EnterAs, const Assignment &ExitAs,
        const ProbeOptions &O)
      : EnterAs(EnterAs), ExitAs(ExitAs), Opts(O), Shim(O.Level) {
    RuntimeEntries RT = O.Shim ? Shim.entries() : RuntimeEntries{};
    EnterFn = build(/*Enter=*/true, RT);
    ExitFn = build(/*Enter=*/false, RT);
  }
  ~Probe() override {
    if (EnterFn)
      jit().release(EnterFn);
    if (ExitFn)
      jit().release(ExitFn);
  }
  Probe(const Probe &) = delete;
  Probe &operator=(const Probe &) = delete;

  void enter(jitlock_thread *T, void *Obj) override {
    run(EnterFn, EnterAs, T, Obj, "enter");
  }
  void exit(jitlock_thread *T, void *Obj) override {
    run(ExitFn, ExitAs, T, Obj, "exit");
  }
  SlowCalls slowCalls() const override {
    return {slowEnters(), slowExits(), slowQueuedExits()};
  }
  void fakeQueue(const std::atomic<uint64_t> *OwnerWord) override {
    FakedQueue &Fake = fakedQueue();
    Fake = FakedQueue{};
    Fake.Active = true;
    Fake.OwnerWord = OwnerWord;
  }
  QueuedExitRecord stopFakingQueue() override {
    FakedQueue &Fake = fakedQueue();
    Fake.Active = false;
    return {Fake.Thread, Fake.Obj, Fake.OwnerAtCall};
  }

  /// Slow-path calls so far (through the shim).
  uint64_t slowEnters() const { return Shim.enters(); }
  uint64_t slowExits() const { return Shim.exits(); }
  uint64_t slowQueuedExits() const { return Shim.queuedExits(); }
  uint64_t misalignedCalls() const { return Shim.misaligned(); }
  bool built() const { return EnterFn && ExitFn; }

private:
  using Fn = void (*)(ProbeFrame *);

  Fn build(bool Enter, const RuntimeEntries &RT) {
    const Assignment &As = Enter ? EnterAs : ExitAs;
    Emission Em;
    auto &[Code, A] = Em;
    emitProbeEntry<ProbeFrame>(A, Opts.Level, Opts.Misalign,
                               [](x86::Assembler &) {});

    SlowPathLabels Labels;
    jitlock_rt_layout L = layout();
    if (Opts.Exit)
      L.monitor_exit = Opts.Exit;
    Error E =
        Enter
            ? jx::emitMonitorEnter(A, L, As.operands(), Opts.Mode, &Labels, RT)
            : jx::emitMonitorExit(A, L, As.operands(), Opts.Mode, &Labels, RT);
    EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);

    emitProbeExit<ProbeFrame>(A, Opts.Level, Opts.Misalign);
    if (Opts.Mode == SlowPathMode::Labels) {
      E = jx::emitSlowCall(A, Enter, As.operands(), Labels, RT);
      EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
    }
    void *Out = nullptr;
    E = jit().add(&Out, &Code);
    EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
    return reinterpret_cast<Fn>(Out);
  }

  void run(Fn F, const Assignment &As, jitlock_thread *T, void *Obj,
           const char *What) {
    ProbeFrame P;
    std::memset(&P, 0, sizeof P);
    // Threads may share a probe.
    const uint64_t Round = Rounds.fetch_add(1) + 1;
    for (uint32_t Id = 0; Id < 16; ++Id)
      P.GprIn[Id] = 0x5EED000000000000ull | (uint64_t(Id) << 40) | Round;
    P.GprIn[As.Obj.id()] = reinterpret_cast<uint64_t>(Obj);
    P.GprIn[As.Thread.id()] = reinterpret_cast<uint64_t>(T);
    for (unsigned I = 0; I < 32; ++I)
      for (unsigned B = 0; B < 64; ++B)
        P.VecIn[I][B] = uint8_t(I * 64 + B + Round);
    for (unsigned I = 0; I < 8; ++I)
      P.KIn[I] = (0xA5A5u + I * 0x1111u + Round) & 0xFFFF;
    callJit(F, &P);
    EXPECT_EQ(P.RspOut, P.RspIn) << What << ": rsp changed";
    for (uint32_t Id = 0; Id < 16; ++Id) {
      if (Id == x86::Gp::kIdSp || As.isScratch(Id))
        continue;
      EXPECT_EQ(P.GprOut[Id], P.GprIn[Id])
          << What << ": " << regName(Id) << " not preserved";
    }
    unsigned Bytes = vecBytes(Opts.Level);
    for (unsigned I = 0; I < vecCount(Opts.Level); ++I)
      EXPECT_EQ(std::memcmp(P.VecOut[I], P.VecIn[I], Bytes), 0)
          << What << ": " << vecName(Opts.Level) << I << " not preserved";
    if (Opts.Level == VecLevel::Zmm)
      for (unsigned I = 1; I < 8; ++I)
        EXPECT_EQ(P.KOut[I] & 0xFFFF, P.KIn[I]) << What << ": k" << I;
  }

  Assignment EnterAs, ExitAs;
  ProbeOptions Opts;
  RuntimeShim Shim;
  Fn EnterFn = nullptr, ExitFn = nullptr;
  std::atomic<uint64_t> Rounds{0};
};

//===-- The fixture ------------------------------------------------------===//

class X64EmitterTest : public RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    L = layout();
  }
  void TearDown() override {
    jitlock::emit::x64::detail::setVectorSaveForTesting(0);
    RuntimeTest::TearDown();
  }

  /// A fresh unlocked object with embedder bits in its header, whose header
  /// sits at the configured offset from the returned pointer.
  void *object() {
    Obj &O = Arena.emplace_back();
    Objects.push_back(&O);
    // Obj keeps the header in its first word; the object pointer is placed
    // so that pointer + header_offset is that word.
    return reinterpret_cast<char *>(&O) - L.header_offset;
  }
  uint64_t header(const void *P) const {
    return reinterpret_cast<const std::atomic<uint64_t> *>(
               static_cast<const char *>(P) + L.header_offset)
        ->load();
  }

  void expectLock(const void *P, uint32_t State, jitlock_thread *Owner,
                  uint64_t Holds, const char *Step) {
    jitlock_lock_info I = inspect(P);
    EXPECT_EQ(I.state, State) << Step << ": " << jitlock_test::describe(P);
    EXPECT_EQ(I.owner, Owner) << Step << ": " << jitlock_test::describe(P);
    EXPECT_EQ(I.holds, Holds) << Step << ": " << jitlock_test::describe(P);
    EXPECT_EQ(I.anonymous_owner, 0u) << Step;
  }
  void expectStack(std::vector<void *> Expect, const char *Step) {
    EXPECT_EQ(lockStack(self), Expect) << Step;
  }
  /// expectDetachedEnterRefused for each of `All` (alternating the slow-path
  /// mode), with the runtime configured for `Storage` and a misuse log,
  /// then without the log (the storage stays: it changes only with no
  /// monitor in memory).
  void expectDetachedRefused(uint32_t Storage,
                             const std::vector<Assignment> &All) {
    MisuseLog Log;
    jitlock_rt_config Cfg;
    jitlock_rt_default_config(&Cfg);
    Cfg.monitor_storage = Storage;
    Cfg.misuse_handler = MisuseLog::handler;
    Cfg.misuse_ctx = &Log;
    reconfigure(Cfg);
    for (size_t I = 0; I < All.size(); ++I) {
      ProbeOptions O;
      O.Mode = I % 2 ? SlowPathMode::Labels : SlowPathMode::OutOfLine;
      O.Level = hostVecLevel();
      SCOPED_TRACE(describe(All[I], O));
      Probe P(All[I], O);
      ASSERT_TRUE(P.built());
      expectDetachedEnterRefused(
          object(), Log, [&](jitlock_thread *T, void *Obj) { P.enter(T, Obj); },
          [&](jitlock_thread *T, void *Obj) { P.exit(T, Obj); });
      EXPECT_EQ(P.misalignedCalls(), 0u);
      if (HasFailure())
        break;
    }
    Cfg.misuse_handler = nullptr;
    Cfg.misuse_ctx = nullptr;
    reconfigure(Cfg);
  }

  /// Every path a single thread can take (MonitorPathScenarios.h), with the
  /// state checked after each step and the slow-path calls counted (so
  /// inline paths stay inline).
  void runPaths(Probe &P);

  /// Runs runPaths for one configuration and reports it on failure.
  void runConfig(const Assignment &As, const ProbeOptions &O) {
    runConfig(As, As, O);
  }
  /// The same with the enters and the exits emitted for different
  /// assignments.
  void runConfig(const Assignment &EnterAs, const Assignment &ExitAs,
                 const ProbeOptions &O) {
    SCOPED_TRACE(&EnterAs == &ExitAs ? describe(EnterAs, O)
                                     : "enter " + describe(EnterAs, O) +
                                           "; exit " + describe(ExitAs, O));
    Probe P(EnterAs, ExitAs, O);
    ASSERT_TRUE(P.built());
    runPaths(P);
    EXPECT_EQ(P.misalignedCalls(), 0u) << "a slow-path call was misaligned";
  }

  jitlock_rt_layout L{};
  std::deque<Obj> Arena;
  std::vector<Obj *> Objects;
  ObjectArena PathObjects;
};

void X64EmitterTest::runPaths(Probe &P) {
  for (const Scenario &S : pathScenarios()) {
    runScenario(S, P, self, L, PathObjects);
    if (HasFailure())
      return;
  }
}

//===-- Every path, parameterized -----------------------------------------===//

/// Which register assignments a case runs (the shape of the operands).
enum class Registers {
  All,             ///< every (Obj, Thread, Scratch1): 14 x 13 x 12
  AllThreeScratch, ///< every (Obj, Thread, Scratch1, Scratch2)
  Sample,          ///< sampleAssignmentsOfBothForms()
  Mixed,           ///< enters of one form, exits of the other, both ways
};

/// One runtime configuration and one way of varying the probe; every path
/// of runPaths runs for each assignment of `Regs` under it. Alternate*
/// derive the mode and the alignment from the assignment's index (odd:
/// Labels; index / 2 odd: misaligned), otherwise each listed value runs.
struct PathCase {
  const char *Name;
  Registers Regs;
  jitlock::MonitorStorage Storage = jitlock::MonitorStorage::Pointer;
  int32_t HeaderOffset = 0;
  std::vector<SlowPathMode> Modes = {}; ///< empty: alternate
  std::vector<int> Misaligns = {};      ///< empty: alternate; 2: Obj's parity
  std::vector<uint32_t> Exits = {JITLOCK_EXIT_AUTO};
  bool Fxsave = false; ///< the fxsave glue with xmm state only
};

std::ostream &operator<<(std::ostream &OS, const PathCase &C) {
  return OS << C.Name;
}

const SlowPathMode OutOfLine = SlowPathMode::OutOfLine,
                   LabelsMode = SlowPathMode::Labels;

/// The cases: register shapes x slow-path modes and alignment x inflated
/// exits x monitor storage x header offset.
const PathCase PathCases[] = {
    // All 2184 two-scratch choices and all 24024 three-scratch ones. The
    // probe lets only rax and the scratch registers change.
    {"EveryRegisterAssignment", Registers::All},
    {"EveryThreeScratchAssignment", Registers::AllThreeScratch},
    {"SampleEveryModeAndAlignment",
     Registers::Sample,
     jitlock::MonitorStorage::Pointer,
     0,
     {OutOfLine, LabelsMode},
     {0, 1}},
    // The glue for CPUs without XSAVE: fxsave keeps x87 and xmm0-15.
    {"FxsaveFallbackPreservesXmm",
     Registers::Sample,
     jitlock::MonitorStorage::Pointer,
     0,
     {OutOfLine},
     {2},
     {JITLOCK_EXIT_AUTO},
     /*Fxsave=*/true},
    // The header offset comes from the layout: 8 bytes below the object
    // pointer, or 24 above, every path must still work.
    {"HeaderAtANegativeOffset",
     Registers::Sample,
     jitlock::MonitorStorage::Pointer,
     -8,
     {OutOfLine},
     {0}},
    {"HeaderAtAPositiveOffset",
     Registers::Sample,
     jitlock::MonitorStorage::Pointer,
     24,
     {LabelsMode},
     {0}},
    // exit=store and exit=fence, the faked entry count of runPaths among
    // the paths, in both slow-path modes.
    {"BothInflatedExits",
     Registers::Sample,
     jitlock::MonitorStorage::Pointer,
     0,
     {OutOfLine, LabelsMode},
     {0},
     {JITLOCK_EXIT_STORE, JITLOCK_EXIT_FENCE}},
    // Enters emitted with Scratch2 and exits without it, and the other way
    // round: the two forms share the lock stack and the monitors.
    {"FormsWithAndWithoutScratch2Mix", Registers::Mixed},
    // Index and table storage: every path through the inflated monitor's
    // lookup (M1, N2) of that storage, under both inflated exits.
    {"IndexStorage",
     Registers::Sample,
     jitlock::MonitorStorage::Index,
     0,
     {},
     {},
     {JITLOCK_EXIT_STORE, JITLOCK_EXIT_FENCE}},
    {"TableStorage",
     Registers::Sample,
     jitlock::MonitorStorage::Table,
     0,
     {},
     {},
     {JITLOCK_EXIT_STORE, JITLOCK_EXIT_FENCE}},
};

/// The runtime configured for the case (storage, header offset), and the
/// emitters following its layout.
class X64EmitterPathTest : public X64EmitterTest,
                           public ::testing::WithParamInterface<PathCase> {
protected:
  void configure() {
    const PathCase &C = GetParam();
    jitlock_rt_config Cfg;
    jitlock_rt_default_config(&Cfg);
    Cfg.monitor_storage = uint32_t(C.Storage);
    Cfg.header_offset = C.HeaderOffset;
    reconfigure(Cfg);
    L = layout();
    ASSERT_EQ(L.header_offset, C.HeaderOffset);
    if (C.Storage != jitlock::MonitorStorage::Pointer)
      ASSERT_EQ(L.monitor_storage, uint32_t(C.Storage));
  }
};

TEST_P(X64EmitterPathTest, EveryPath) {
  const PathCase &C = GetParam();
  configure();
  ASSERT_FALSE(HasFatalFailure());
  if (C.Fxsave)
    jitlock::emit::x64::detail::setVectorSaveForTesting(1);
  if (C.Regs == Registers::Mixed) {
    std::vector<Assignment> Two = sampleAssignments(),
                            Three = sampleThreeScratchAssignments();
    for (size_t I = 0; I < Two.size(); ++I) {
      ProbeOptions O;
      O.Mode = I % 2 ? LabelsMode : OutOfLine;
      O.Misalign = (I / 2) % 2;
      O.Level = hostVecLevel();
      runConfig(Three[I], Two[(I + 3) % Two.size()], O);
      runConfig(Two[I], Three[(I + 7) % Three.size()], O);
      if (HasFailure())
        return;
    }
    return;
  }
  std::vector<Assignment> All;
  switch (C.Regs) {
  case Registers::All:
    All = allAssignments();
    ASSERT_EQ(All.size(), 14u * 13u * 12u);
    break;
  case Registers::AllThreeScratch:
    All = allThreeScratchAssignments();
    ASSERT_EQ(All.size(), 14u * 13u * 12u * 11u);
    break;
  default:
    All = sampleAssignmentsOfBothForms();
    break;
  }
  for (size_t I = 0; I < All.size(); ++I) {
    std::vector<SlowPathMode> Modes = C.Modes;
    if (Modes.empty())
      Modes = {I % 2 ? LabelsMode : OutOfLine};
    std::vector<int> Misaligns = C.Misaligns;
    if (Misaligns.empty())
      Misaligns = {int((I / 2) % 2)};
    for (SlowPathMode M : Modes)
      for (int Mis : Misaligns)
        for (uint32_t Exit : C.Exits) {
          ProbeOptions O;
          O.Mode = M;
          O.Misalign = Mis == 2 ? All[I].Obj.id() % 2 : Mis;
          O.Level = C.Fxsave ? VecLevel::Xmm : hostVecLevel();
          O.Exit = Exit; // AUTO (0): the layout's
          runConfig(All[I], O);
          if (HasFailure())
            return; // one failing assignment is enough output
        }
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, X64EmitterPathTest,
                         ::testing::ValuesIn(PathCases), [](const auto &Info) {
                           return std::string(Info.param.Name);
                         });

TEST_F(X64EmitterTest, SlowPathCallsTheRuntimeDirectlyAtAnyAlignment) {
  // No shim: the runtime itself (with whatever SSE spills the compiler gave
  // it) is called from stacks that were misaligned on entry.
  for (const Assignment &As : sampleAssignmentsOfBothForms())
    for (bool Mis : {false, true}) {
      ProbeOptions O;
      O.Misalign = Mis;
      O.Shim = false;
      O.Mode = Mis ? SlowPathMode::Labels : SlowPathMode::OutOfLine;
      SCOPED_TRACE(describe(As, O));
      Probe P(As, O);
      void *A = object(), *B = object();
      P.enter(self, A);
      P.enter(self, B);
      P.enter(self, A); // the runtime inflates A
      expectLock(A, JITLOCK_STATE_INFLATED, self, 2, "A B A");
      P.exit(self, A);
      P.exit(self, B);
      P.exit(self, A);
      expectLock(A, JITLOCK_STATE_INFLATED, nullptr, 0, "A B A");
      expectLock(B, JITLOCK_STATE_UNLOCKED, nullptr, 0, "A B A");
      expectStack({}, "A B A");
      if (HasFailure())
        return;
    }
}

/// A thread that is not attached has no index base (0) and an empty
/// monitor cache: its exit of the inflated object reaches N2 and must go to
/// the runtime, which refuses it, instead of reading near address 0. (As
/// X64EmitterThreadTest.DetachedThreadEnterOfAFreeMonitorIsRefused, under
/// each storage.)
class X64EmitterStorageTest
    : public X64EmitterTest,
      public ::testing::WithParamInterface<jitlock::MonitorStorage> {};

TEST_P(X64EmitterStorageTest, DetachedThreadIsRefused) {
  expectDetachedRefused(uint32_t(GetParam()), sampleAssignments());
}

INSTANTIATE_TEST_SUITE_P(Storage, X64EmitterStorageTest,
                         ::testing::Values(jitlock::MonitorStorage::Index,
                                           jitlock::MonitorStorage::Table),
                         [](const auto &Info) {
                           return Info.param == jitlock::MonitorStorage::Index
                                      ? "Index"
                                      : "Table";
                         });

//===-- What Scratch2 changes in the code --------------------------------===//

/// asmjit's listing of one sequence for layout `L`, in Labels mode (no
/// glue).
std::string listing(const Assignment &As, const jitlock_rt_layout &L,
                    bool Enter) {
  Emission Em;
  auto &[Code, A] = Em;
  StringLogger Log;
  Code.setLogger(&Log);
  SlowPathLabels Labels;
  Error E = Enter ? jx::emitMonitorEnter(A, L, As.operands(),
                                         SlowPathMode::Labels, &Labels)
                  : jx::emitMonitorExit(A, L, As.operands(),
                                        SlowPathMode::Labels, &Labels);
  EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
  return std::string(Log.data(), Log.dataSize());
}
std::string listing(const Assignment &As, bool Enter) {
  return listing(As, layout(), Enter);
}

/// Lines of `Text` that contain `Needle`.
unsigned countLines(const std::string &Text, const std::string &Needle) {
  unsigned N = 0;
  size_t Begin = 0;
  while (Begin < Text.size()) {
    size_t End = Text.find('\n', Begin);
    if (End == std::string::npos)
      End = Text.size();
    if (Text.substr(Begin, End - Begin).find(Needle) != std::string::npos)
      ++N;
    Begin = End + 1;
  }
  return N;
}

TEST(X64EmitterCode, Scratch2KeepsTheTopAndTheStackUntouched) {
  // The point of Scratch2 (docs/benchmarks.md): the enter reads the
  // lock-stack top once, before the CAS, and pushes with it; without it the
  // top is read again after the CAS. Neither form's inline part touches
  // the stack (the inflated exit has no CAS, so no register to borrow).
  // Checked on asmjit's listing of the inline part.
  jitlock_rt_layout L = layout();
  ASSERT_EQ(L.lock_stack_top_offset, 0u) << "the default layout";
  auto TopOf = [](const Assignment &As) {
    return std::string("dword ptr [") + regName(As.Thread.id()) + "]";
  };
  for (const Assignment &As : sampleAssignments()) {
    SCOPED_TRACE(As.str());
    std::string Enter = listing(As, true), Exit = listing(As, false);
    // Reads: `mov eax, dword ptr [thread]`; the store is `mov dword ...`.
    EXPECT_EQ(countLines(Enter, ", " + TopOf(As)), 2u) << Enter;
    EXPECT_EQ(countLines(Exit, "push "), 0u) << Exit;
    EXPECT_EQ(countLines(Exit, "pop "), 0u) << Exit;
  }
  for (const Assignment &As : sampleThreeScratchAssignments()) {
    SCOPED_TRACE(As.str());
    std::string Enter = listing(As, true), Exit = listing(As, false);
    const std::string T = regName(As.Scratch2.id());
    EXPECT_EQ(countLines(Enter, ", " + TopOf(As)), 1u) << Enter;
    // The one read is into Scratch2 (its 32-bit name: e.g. edx or r9d),
    // and the push goes through it.
    std::string T32 =
        T[0] == 'r' && T[1] >= '0' && T[1] <= '9' ? T + "d" : "e" + T.substr(1);
    EXPECT_EQ(countLines(Enter, "mov " + T32 + ", " + TopOf(As)), 1u) << Enter;
    EXPECT_EQ(countLines(Enter, "mov " + TopOf(As) + ", " + T32), 1u) << Enter;
    EXPECT_EQ(countLines(Enter, "push "), 0u) << Enter;
    EXPECT_EQ(countLines(Exit, "push "), 0u) << Exit;
    EXPECT_EQ(countLines(Exit, "pop "), 0u) << Exit;
  }
}

//===-- The inflated exit in the code ------------------------------------===//

/// asmjit's listing of an exit for `L` with monitor_exit = `Exit`, from N1
/// (the second load of the header) on.
std::string inflatedExitListing(const Assignment &As, jitlock_rt_layout L,
                                uint32_t Exit) {
  L.monitor_exit = Exit;
  std::string Text = listing(As, L, /*Enter=*/false);
  // N1 reloads the header into Scratch1: the last `mov H, qword ptr [obj`.
  const std::string N1 = "mov " + std::string(regName(As.Scratch1.id())) +
                         ", qword ptr [" + regName(As.Obj.id());
  size_t At = Text.rfind(N1);
  EXPECT_NE(At, std::string::npos) << Text;
  return At == std::string::npos ? Text : Text.substr(At);
}

TEST(X64EmitterCode, InflatedExitStoresThenFencesOnlyForExitFence) {
  // N3 is a plain store of 0 to the owner word, then (exit=fence only) one
  // `lock or dword ptr [rsp], 0`, then a compare of the entry count and a
  // jump to Queued; from N1 on there is no CAS, and exit=store has no
  // locked instruction or fence at all.
  for (jitlock::MonitorStorage S :
       {jitlock::MonitorStorage::Pointer, jitlock::MonitorStorage::Index,
        jitlock::MonitorStorage::Table}) {
    const jitlock_rt_layout L = jitlock_test::withStorage(layout(), S);
    for (const Assignment &As : sampleAssignmentsOfBothForms()) {
      SCOPED_TRACE(As.str());
      const std::string H = regName(As.Scratch1.id());
      const int64_t Bias =
          S == jitlock::MonitorStorage::Pointer ? int64_t(L.monitor_value) : 0;
      auto Field = [&](uint32_t Off) {
        const int64_t D = int64_t(Off) - Bias;
        return "[" + H + (D < 0 ? "-" : "+") + std::to_string(D < 0 ? -D : D) +
               "]";
      };
      for (uint32_t Exit : {JITLOCK_EXIT_STORE, JITLOCK_EXIT_FENCE}) {
        const std::string Code = inflatedExitListing(As, L, Exit);
        EXPECT_EQ(countLines(Code, "cmpxchg"), 0u) << Code;
        EXPECT_EQ(countLines(Code, "mfence"), 0u) << Code;
        EXPECT_EQ(countLines(Code, "lock "),
                  Exit == JITLOCK_EXIT_FENCE ? 1u : 0u)
            << Code;
        EXPECT_EQ(countLines(Code, "lock or dword ptr [rsp], 0"),
                  Exit == JITLOCK_EXIT_FENCE ? 1u : 0u)
            << Code;
        const size_t Store =
            Code.find("mov qword ptr " + Field(L.monitor_owner_offset) + ", 0");
        const size_t Count = Code.find(
            "cmp dword ptr " + Field(L.monitor_entry_count_offset) + ", 0");
        ASSERT_NE(Store, std::string::npos) << Code;
        ASSERT_NE(Count, std::string::npos) << Code;
        EXPECT_LT(Store, Count) << Code;
        if (Exit == JITLOCK_EXIT_FENCE) {
          const size_t Fence = Code.find("lock or");
          EXPECT_LT(Store, Fence) << Code;
          EXPECT_LT(Fence, Count) << Code;
        }
      }
    }
  }
}

TEST(X64EmitterContract, UnknownInflatedExitIsRefused) {
  // monitor_exit is STORE or FENCE; AUTO (the config's, never a layout's)
  // and anything else are refused with nothing emitted.
  for (uint32_t Bad : {uint32_t(JITLOCK_EXIT_AUTO), 3u, ~0u}) {
    jitlock_rt_layout L = layout();
    L.monitor_exit = Bad;
    Emission Em;
    auto &[Code, A] = Em;
    SlowPathLabels Labels;
    for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels}) {
      EXPECT_EQ(jx::emitMonitorEnter(A, L, sampleAssignments()[0].operands(), M,
                                     &Labels),
                kErrorInvalidArgument);
      EXPECT_EQ(jx::emitMonitorExit(A, L, sampleAssignments()[0].operands(), M,
                                    &Labels),
                kErrorInvalidArgument);
    }
    EXPECT_EQ(Code.codeSize(), 0u);
    EXPECT_EQ(Code.labelCount(), 0u);
  }
}

TEST(X64EmitterContract, ExitStubsInLabelsMode) {
  // An exit's Labels mode has two stubs: emitSlowCall(false) emits both;
  // the SlowCall form emits one, each once; an ExitQueued stub needs the
  // exit's Queued label and an entry point.
  const jitlock_rt_layout L = layout();
  const jx::MonitorOperands Ops = sampleAssignments()[0].operands();
  {
    Emission Em;
    auto &[Code, A] = Em;
    SlowPathLabels Labels;
    ASSERT_EQ(jx::emitMonitorExit(A, L, Ops, SlowPathMode::Labels, &Labels),
              kErrorOk);
    EXPECT_TRUE(Labels.Queued.isValid());
    EXPECT_EQ(
        jx::emitSlowCall(A, jitlock::emit::SlowCall::ExitQueued, Ops, Labels),
        kErrorOk);
    EXPECT_EQ(
        jx::emitSlowCall(A, jitlock::emit::SlowCall::ExitQueued, Ops, Labels),
        kErrorInvalidArgument);
    // The bool form would emit ExitQueued again: refused, nothing emitted.
    const size_t Size = Code.codeSize();
    EXPECT_EQ(jx::emitSlowCall(A, false, Ops, Labels), kErrorInvalidArgument);
    EXPECT_EQ(Code.codeSize(), Size);
    EXPECT_EQ(jx::emitSlowCall(A, jitlock::emit::SlowCall::Exit, Ops, Labels),
              kErrorOk);
  }
  {
    Emission Em;
    auto &[Code, A] = Em;
    SlowPathLabels Labels;
    ASSERT_EQ(jx::emitMonitorEnter(A, L, Ops, SlowPathMode::Labels, &Labels),
              kErrorOk);
    EXPECT_FALSE(Labels.Queued.isValid()) << "an enter has no Queued";
    EXPECT_EQ(
        jx::emitSlowCall(A, jitlock::emit::SlowCall::ExitQueued, Ops, Labels),
        kErrorInvalidArgument);
    EXPECT_EQ(jx::emitSlowCall(A, jitlock::emit::SlowCall(7), Ops, Labels),
              kErrorInvalidArgument);
    EXPECT_EQ(jx::emitSlowCall(A, true, Ops, Labels), kErrorOk);
  }
  {
    // Out of line, the exit needs both entry points.
    Emission Em;
    auto &[Code, A] = Em;
    RuntimeEntries NoQueued;
    NoQueued.ExitQueued = nullptr;
    EXPECT_EQ(jx::emitMonitorExit(A, L, Ops, SlowPathMode::OutOfLine, nullptr,
                                  NoQueued),
              kErrorInvalidArgument);
    EXPECT_EQ(Code.codeSize(), 0u);
    SlowPathLabels Labels;
    ASSERT_EQ(
        jx::emitMonitorExit(A, L, Ops, SlowPathMode::Labels, &Labels, NoQueued),
        kErrorOk);
    EXPECT_EQ(jx::emitSlowCall(A, false, Ops, Labels, NoQueued),
              kErrorInvalidArgument);
  }
}

//===-- Monitor storage in the code --------------------------------------===//

jitlock_rt_layout storageLayout(jitlock::MonitorStorage S) {
  return jitlock_test::withStorage(layout(), S);
}

TEST(X64EmitterCode, IndexStorageComputesTheMonitorFromTheHeader) {
  // M1 and N2 turn the header (in Scratch1) into base + (h >> shift) *
  // stride, the base read from the thread, and address the owner and
  // recursion words from there, unbiased by the tag.
  const jitlock_rt_layout L = storageLayout(jitlock::MonitorStorage::Index);
  for (const Assignment &As : sampleAssignments()) {
    SCOPED_TRACE(As.str());
    const std::string H = regName(As.Scratch1.id()),
                      T = regName(As.Thread.id());
    // The enter adds the base from memory; the exit loads it into rax
    // first and sends a 0 (a thread that is not attached) to the runtime.
    const std::string BaseMem =
        "qword ptr [" + T + "+" + std::to_string(L.monitor_base_offset) + "]";
    for (bool Enter : {true, false}) {
      std::string Code = listing(As, L, Enter);
      EXPECT_EQ(countLines(Code, "shr " + H + ", " +
                                     std::to_string(L.monitor_index_shift)),
                1u)
          << Code;
      EXPECT_EQ(countLines(Code, "imul " + H + ", " + H + ", " +
                                     std::to_string(L.monitor_stride)),
                1u)
          << Code;
      EXPECT_EQ(countLines(Code, BaseMem), 1u) << Code;
      if (Enter) {
        EXPECT_EQ(countLines(Code, "add " + H + ", " + BaseMem), 1u) << Code;
      } else {
        EXPECT_EQ(countLines(Code, "mov rax, " + BaseMem), 1u) << Code;
        EXPECT_EQ(countLines(Code, "test rax, rax"), 1u) << Code;
        EXPECT_EQ(countLines(Code, "add " + H + ", rax"), 1u) << Code;
      }
      EXPECT_EQ(countLines(Code, "[" + H + "+" +
                                     std::to_string(L.monitor_owner_offset) +
                                     "]"),
                2u)
          << Code;
      EXPECT_EQ(
          countLines(Code, "[" + H + "+" +
                               std::to_string(L.monitor_recursions_offset) +
                               "]"),
          Enter ? 1u : 2u)
          << Code;
    }
  }
}

TEST(X64EmitterCode, TableStorageProbesTheThreadsCache) {
  // M1 and N2 compare obj with each probed entry's object, in order, and
  // take the monitor from the word after the first that matches; there is
  // one compare per probe and no other read of the cache.
  const jitlock_rt_layout L = storageLayout(jitlock::MonitorStorage::Table);
  ASSERT_GE(L.monitor_cache_probes, 2u);
  for (const Assignment &As : sampleAssignments()) {
    SCOPED_TRACE(As.str());
    const std::string H = regName(As.Scratch1.id()),
                      T = regName(As.Thread.id()), O = regName(As.Obj.id());
    for (bool Enter : {true, false}) {
      std::string Code = listing(As, L, Enter);
      size_t At = 0;
      for (uint32_t I = 0; I != L.monitor_cache_probes; ++I) {
        const uint32_t Entry = L.monitor_cache_offset + 16 * I;
        const std::string Cmp =
            "cmp qword ptr [" + T + "+" + std::to_string(Entry) + "], " + O;
        const std::string Load = "mov " + H + ", qword ptr [" + T + "+" +
                                 std::to_string(Entry + 8) + "]";
        EXPECT_EQ(countLines(Code, Cmp), 1u) << Code;
        EXPECT_EQ(countLines(Code, Load), 1u) << Code;
        size_t CmpAt = Code.find(Cmp, At);
        ASSERT_NE(CmpAt, std::string::npos) << "probe " << I << ":\n" << Code;
        EXPECT_LT(CmpAt, Code.find(Load, CmpAt)) << Code;
        At = CmpAt;
      }
      // Fields from the monitor's address, unbiased.
      EXPECT_EQ(countLines(Code, "[" + H + "+" +
                                     std::to_string(L.monitor_owner_offset) +
                                     "]"),
                2u)
          << Code;
      // No probe past the layout's count.
      const uint32_t Beyond =
          L.monitor_cache_offset + 16 * L.monitor_cache_probes;
      EXPECT_EQ(countLines(Code, "[" + T + "+" + std::to_string(Beyond) + "]"),
                0u)
          << Code;
    }
  }
}

//===-- Contract violations ----------------------------------------------===//

/// Every entry point refuses `Ops` with layout `L`, in both slow-path modes,
/// and leaves the CodeHolder without code or labels.
void expectRefused(const jx::MonitorOperands &Ops, const jitlock_rt_layout &L) {
  Emission Em;
  auto &[Code, A] = Em;
  SlowPathLabels Labels;
  for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels}) {
    EXPECT_EQ(jx::emitMonitorEnter(A, L, Ops, M, &Labels),
              kErrorInvalidArgument);
    EXPECT_EQ(jx::emitMonitorExit(A, L, Ops, M, &Labels),
              kErrorInvalidArgument);
  }
  EXPECT_EQ(jx::emitSlowCall(A, true, Ops, Labels), kErrorInvalidArgument);
  EXPECT_EQ(Code.codeSize(), 0u) << "something was emitted";
  EXPECT_EQ(Code.labelCount(), 0u) << "a label was created";
}

void expectOperandsRefused(const jx::MonitorOperands &Ops) {
  expectRefused(Ops, layout());
}

TEST(X64EmitterContract, MonitorStorageWithoutItsFieldsEmitsNothing) {
  // A layout that names a storage without the fields the inline code needs
  // (a runtime that does not implement it leaves them 0), an unknown
  // storage, more probes than entries or than the unrolling allows, and a
  // stride no imul immediate holds, are all refused.
  const jx::MonitorOperands Ops{x86::rdi, x86::rsi, x86::rax, x86::rdx};
  std::vector<std::pair<const char *, jitlock_rt_layout>> Bad;
  auto Add = [&](const char *Why, jitlock::MonitorStorage S, auto Change) {
    jitlock_rt_layout L = storageLayout(S);
    Change(L);
    Bad.push_back({Why, L});
  };
  using jitlock::MonitorStorage;
  Add("index, no stride", MonitorStorage::Index,
      [](jitlock_rt_layout &L) { L.monitor_stride = 0; });
  Add("index, no base", MonitorStorage::Index,
      [](jitlock_rt_layout &L) { L.monitor_base_offset = 0; });
  Add("index, shift keeps the tag", MonitorStorage::Index,
      [](jitlock_rt_layout &L) { L.monitor_index_shift = 1; });
  Add("index, shift 64", MonitorStorage::Index,
      [](jitlock_rt_layout &L) { L.monitor_index_shift = 64; });
  Add("index, stride beyond imm32", MonitorStorage::Index,
      [](jitlock_rt_layout &L) { L.monitor_stride = 0x80000000u; });
  Add("table, no cache", MonitorStorage::Table,
      [](jitlock_rt_layout &L) { L.monitor_cache_offset = 0; });
  Add("table, no entries", MonitorStorage::Table,
      [](jitlock_rt_layout &L) { L.monitor_cache_entries = 0; });
  Add("table, no probes", MonitorStorage::Table,
      [](jitlock_rt_layout &L) { L.monitor_cache_probes = 0; });
  Add("table, more probes than entries", MonitorStorage::Table,
      [](jitlock_rt_layout &L) {
        L.monitor_cache_probes = L.monitor_cache_entries + 1;
      });
  Add("table, more probes than unrolled", MonitorStorage::Table,
      [](jitlock_rt_layout &L) {
        L.monitor_cache_entries = 1000;
        L.monitor_cache_probes = jitlock::MaxMonitorCacheProbes + 1;
      });
  Add("table, cache beyond disp32", MonitorStorage::Table,
      [](jitlock_rt_layout &L) { L.monitor_cache_offset = 0x7ffffff0u; });
  Add("unknown storage", MonitorStorage::Pointer,
      [](jitlock_rt_layout &L) { L.monitor_storage = 3; });
  for (auto &[Why, L] : Bad) {
    SCOPED_TRACE(Why);
    expectRefused(Ops, L);
  }
}

TEST(X64EmitterContract, InvalidOperandsEmitNothing) {
  using namespace x86;
  const jx::MonitorOperands Bad[] = {
      {rdi, rsi, rcx, rdx},     // Scratch0 is not rax
      {rdi, rdi, rax, rdx},     // Obj == Thread
      {rdi, rsi, rax, rdi},     // Scratch1 == Obj
      {rax, rsi, rax, rdx},     // Obj == Scratch0
      {rsp, rsi, rax, rdx},     // rsp
      {rdi, rsp, rax, rdx},     // rsp
      {rdi, rsi, rax, rsp},     // rsp
      {edi, esi, eax, edx},     // 32-bit registers
      {rdi, rsi, rax, Gp()},    // no register
      {rdi, rsi, rax, gpq(16)}, // no such register
  };
  for (const jx::MonitorOperands &Ops : Bad)
    expectOperandsRefused(Ops);
}

TEST(X64EmitterContract, InvalidThirdScratchRegistersEmitNothing) {
  jitlock_rt_layout L = layout();
  using namespace x86;
  const Gp Bad[] = {
      rsp,             // rsp
      rax,             // == Scratch0
      rdi,             // == Obj
      rsi,             // == Thread
      rdx,             // == Scratch1
      ecx,             // 32-bit
      cx,              // 16-bit
      cl,              // 8-bit
      gpq(16),         // no such register
      gpq(Gp::kIdBad), // a 64-bit register without an id
  };
  for (const Gp &S2 : Bad) {
    SCOPED_TRACE("scratch2 id " + std::to_string(S2.id()));
    expectOperandsRefused({rdi, rsi, rax, rdx, S2});
  }
  // The same operands with a good third register, or none, are accepted.
  const Gp Good[] = {rcx, r8, rbx, rbp, r12, r13, r15, Gp()};
  for (const Gp &S2 : Good) {
    const jx::MonitorOperands Ops{rdi, rsi, rax, rdx, S2};
    Emission Em;
    auto &[Code, A] = Em;
    SlowPathLabels Enter, Exit;
    EXPECT_EQ(jx::emitMonitorEnter(A, L, Ops, SlowPathMode::Labels, &Enter),
              kErrorOk);
    EXPECT_EQ(jx::emitMonitorExit(A, L, Ops, SlowPathMode::Labels, &Exit),
              kErrorOk);
    EXPECT_EQ(jx::emitSlowCall(A, true, Ops, Enter), kErrorOk);
    EXPECT_EQ(jx::emitSlowCall(A, false, Ops, Exit), kErrorOk);
  }
}

TEST(X64EmitterContract, MissingLabelsOrEntriesOrBadLayoutEmitNothing) {
  jitlock_rt_layout L = layout();
  const jx::MonitorOperands Ops{x86::rdi, x86::rsi, x86::rax, x86::rdx};
  Emission Em;
  auto &[Code, A] = Em;
  // Labels mode needs somewhere to put the labels.
  EXPECT_EQ(jx::emitMonitorEnter(A, L, Ops, SlowPathMode::Labels, nullptr),
            kErrorInvalidArgument);
  EXPECT_EQ(jx::emitMonitorExit(A, L, Ops, SlowPathMode::Labels, nullptr),
            kErrorInvalidArgument);
  // emitSlowCall needs the labels a sequence created.
  EXPECT_EQ(jx::emitSlowCall(A, false, Ops, SlowPathLabels{}),
            kErrorInvalidArgument);
  RuntimeEntries NoEntries;
  NoEntries.Enter = nullptr;
  EXPECT_EQ(jx::emitMonitorEnter(A, L, Ops, SlowPathMode::OutOfLine, nullptr,
                                 NoEntries),
            kErrorInvalidArgument);
  jitlock_rt_layout Other = L;
  Other.abi_version = JITLOCK_RT_ABI_VERSION + 1;
  EXPECT_EQ(jx::emitMonitorEnter(A, Other, Ops, SlowPathMode::OutOfLine),
            kErrorInvalidArgument);
  Other = L;
  Other.monitor_owner_offset = 0x90000000u;
  EXPECT_EQ(jx::emitMonitorExit(A, Other, Ops, SlowPathMode::OutOfLine),
            kErrorInvalidArgument);
  EXPECT_EQ(Code.codeSize(), 0u);

  // An assembler for another architecture.
  CodeHolder Code64;
  Environment Env = jit().environment();
  Env.setArch(Arch::kX86);
  Code64.init(Env);
  x86::Assembler A32(&Code64);
  EXPECT_EQ(jx::emitMonitorEnter(A32, L, Ops, SlowPathMode::OutOfLine),
            kErrorInvalidArgument);
  EXPECT_EQ(Code64.codeSize(), 0u);
}

TEST(X64EmitterContract, BoundLabelsAreRefused) {
  jitlock_rt_layout L = layout();
  const jx::MonitorOperands Ops{x86::rdi, x86::rsi, x86::rax, x86::rdx};
  Emission Em;
  auto &[Code, A] = Em;
  SlowPathLabels Labels;
  Labels.Done = A.newLabel();
  A.bind(Labels.Done);
  size_t Size = Code.codeSize();
  EXPECT_EQ(jx::emitMonitorEnter(A, L, Ops, SlowPathMode::Labels, &Labels),
            kErrorInvalidArgument)
      << "Done is already bound";
  EXPECT_EQ(Code.codeSize(), Size);
  // emitSlowCall binds Slow once.
  SlowPathLabels Fresh;
  ASSERT_EQ(jx::emitMonitorExit(A, L, Ops, SlowPathMode::Labels, &Fresh),
            kErrorOk);
  ASSERT_EQ(jx::emitSlowCall(A, false, Ops, Fresh), kErrorOk);
  Size = Code.codeSize();
  EXPECT_EQ(jx::emitSlowCall(A, false, Ops, Fresh), kErrorInvalidArgument);
  EXPECT_EQ(Code.codeSize(), Size);
  // Labels of another CodeHolder are not this one's.
  CodeHolder Other;
  Other.init(jit().environment());
  x86::Assembler B(&Other);
  SlowPathLabels Foreign{B.newLabel(), B.newLabel()};
  Foreign.Slow = Label(Foreign.Slow.id() + 100);
  EXPECT_EQ(jx::emitSlowCall(A, true, Ops, Foreign), kErrorInvalidArgument);
  // An assembler attached to nothing.
  x86::Assembler Detached;
  EXPECT_EQ(jx::emitMonitorEnter(Detached, L, Ops, SlowPathMode::OutOfLine),
            kErrorInvalidArgument);
}

TEST(X64EmitterContract, LabelsModeCreatesAndBindsDone) {
  // Labels left invalid are created; Done is bound at the end of the
  // sequence, Slow by emitSlowCall.
  jitlock_rt_layout L = layout();
  const jx::MonitorOperands Ops{x86::rdi, x86::rsi, x86::rax, x86::rdx};
  Emission Em;
  auto &[Code, A] = Em;
  SlowPathLabels Labels;
  ASSERT_EQ(jx::emitMonitorEnter(A, L, Ops, SlowPathMode::Labels, &Labels),
            kErrorOk);
  ASSERT_TRUE(Labels.Slow.isValid());
  ASSERT_TRUE(Labels.Done.isValid());
  EXPECT_TRUE(Code.isLabelBound(Labels.Done));
  EXPECT_FALSE(Code.isLabelBound(Labels.Slow));
  size_t SequenceSize = Code.codeSize();
  A.ret();
  ASSERT_EQ(jx::emitSlowCall(A, true, Ops, Labels), kErrorOk);
  EXPECT_TRUE(Code.isLabelBound(Labels.Slow));
  // The glue is out of the sequence: the sequence itself holds no call.
  EXPECT_GT(Code.codeSize(), SequenceSize + 1);
}

//===-- Threads ----------------------------------------------------------===//

class X64EmitterThreadTest : public X64EmitterTest {
public:
  /// The anonymous-owner fix-up: the main thread holds A fast-locked
  /// (`Depth` times) through emitted code; a contender inflates it with an
  /// anonymous owner and parks; the emitted outermost exit's X4 CAS fails
  /// (the header is 10), pushes A back and calls the runtime, which fixes
  /// the owner and hands over.
  void fixup(const Assignment &MainAs, const Assignment &OtherAs,
             bool EmittedContender, unsigned Depth) {
    SCOPED_TRACE(MainAs.str() + " / contender " + OtherAs.str() +
                 (EmittedContender ? " emitted" : " runtime") + " depth " +
                 std::to_string(Depth));
    ProbeOptions O;
    O.Level = hostVecLevel();
    O.Mode = Depth % 2 ? SlowPathMode::Labels : SlowPathMode::OutOfLine;
    Probe P(MainAs, O);
    Probe Q(OtherAs, O);
    void *A = object();
    for (unsigned K = 0; K < Depth; ++K)
      P.enter(self, A);
    expectLock(A, JITLOCK_STATE_FAST, self, Depth, "held");

    Worker W;
    jitlock_thread *WT = W.thread();
    W.post([&] {
      if (EmittedContender)
        Q.enter(WT, A);
      else
        EXPECT_EQ(jitlock_rt_monitor_enter(WT, A), JITLOCK_OK);
    });
    ASSERT_TRUE(waitUntil([&] {
      jitlock_lock_info I = inspect(A);
      return I.state == JITLOCK_STATE_INFLATED && I.entry_queued >= 1;
    })) << "the contender never inflated and queued: "
        << jitlock_test::describe(A);
    jitlock_lock_info I = inspect(A);
    EXPECT_EQ(I.anonymous_owner, 1u) << jitlock_test::describe(A);
    // The owner still finds A on its lock stack.
    expectStack(std::vector<void *>(Depth, A), "contended");
    EXPECT_EQ(P.slowEnters(), 0u);

    // Inner exits are recursive (X3), inline; the outermost one fails X4.
    for (unsigned K = Depth; K > 1; --K)
      P.exit(self, A);
    EXPECT_EQ(P.slowExits(), 0u) << "recursive exits stayed inline";
    EXPECT_FALSE(W.finished());
    P.exit(self, A);
    EXPECT_EQ(P.slowExits(), 1u) << "X4 failed and pushed back";
    expectStack({}, "handed over");
    ASSERT_TRUE(W.join()) << "the contender never got the monitor";
    I = inspect(A);
    EXPECT_EQ(I.state, JITLOCK_STATE_INFLATED);
    EXPECT_EQ(I.owner, WT) << jitlock_test::describe(A);
    EXPECT_EQ(I.anonymous_owner, 0u);
    EXPECT_EQ(I.holds, 1u);
    EXPECT_FALSE(jitlock_rt_holds_lock(self, A));
    W.call([&] { Q.exit(WT, A); });
    expectReleased(A, "after the contender's exit");
    W.stop();
    EXPECT_EQ(P.misalignedCalls() + Q.misalignedCalls(), 0u);
  }
};

TEST_F(X64EmitterThreadTest, AnonymousOwnerFixupThenHandover) {
  // The holder and the contender each without and with Scratch2.
  const std::vector<Assignment> Forms[2] = {sampleAssignments(),
                                            sampleThreeScratchAssignments()};
  for (unsigned HolderForm : {0u, 1u})
    for (unsigned ContenderForm : {0u, 1u}) {
      const std::vector<Assignment> &S = Forms[HolderForm],
                                    &C = Forms[ContenderForm];
      for (size_t I = 0; I < S.size(); ++I) {
        fixup(S[I], C[(I + 5) % C.size()], /*EmittedContender=*/I % 2 == 0,
              /*Depth=*/1 + I % 3);
        if (HasFailure())
          return;
      }
    }
}

TEST_F(X64EmitterThreadTest, AnonymousOwnerFixedAtExitAndAtEnter) {
  // The scenarios of MonitorPathScenarios.h with a contender thread, for
  // both forms, both slow-path modes and both stack alignments.
  const std::vector<Assignment> All = sampleAssignmentsOfBothForms();
  for (size_t I = 0; I < All.size(); ++I) {
    ProbeOptions O;
    O.Mode = I % 2 ? SlowPathMode::Labels : SlowPathMode::OutOfLine;
    O.Misalign = (I / 2) % 2;
    O.Level = hostVecLevel();
    SCOPED_TRACE(describe(All[I], O));
    Probe P(All[I], O);
    ASSERT_TRUE(P.built());
    for (const Scenario &S : contendedScenarios())
      runScenario(S, P, self, L, PathObjects);
    EXPECT_EQ(P.misalignedCalls(), 0u);
    if (HasFailure())
      return;
  }
}

TEST_F(X64EmitterThreadTest, DetachedThreadEnterOfAFreeMonitorIsRefused) {
  // A thread that is not attached has a full lock stack: its emitted enter
  // tests that (E2) before the header, so it never takes a free monitor
  // (M1) inline, and the runtime refuses it.
  expectDetachedRefused(JITLOCK_MONITORS_POINTER,
                        sampleAssignmentsOfBothForms());
}

TEST_F(X64EmitterThreadTest, ContendedMutualExclusion) {
  // Threads running emitted code on shared objects, with unguarded counters:
  // simple, recursive and nested (always A before B) critical sections, so
  // that objects go through fast locking, anonymous inflation, queued
  // monitors (N3 finding the entry count and calling ExitQueued) and
  // handover.
  const unsigned Threads = 4;
  // Doubled on every attempt that saw no contention (a thread can finish a
  // short run inside one time slice when the threads share a CPU).
  uint64_t Iterations = 20000;
  // Threads 1 and 2 emit with Scratch2, 0 and 3 without.
  std::vector<Assignment> S = sampleAssignments(),
                          S3 = sampleThreeScratchAssignments();
  void *A = object(), *B = object();
  uint64_t CounterA = 0, CounterB = 0;
  RuntimeShim Shim(hostVecLevel());
  std::vector<std::unique_ptr<Program>> Programs;
  for (unsigned T = 0; T < Threads; ++T) {
    SlowPathMode M = T % 2 ? SlowPathMode::Labels : SlowPathMode::OutOfLine;
    RuntimeEntries RT = T < 2 ? Shim.entries() : RuntimeEntries{};
    const std::vector<Op> &Body = T % 3 == 0   ? SimpleBody
                                  : T % 3 == 1 ? RecursiveBody
                                               : NestedBody;
    const Assignment &As = T == 1 || T == 2 ? S3[T] : S[T];
    Programs.push_back(std::make_unique<Program>(As, Body, M, RT));
  }
  // One attempt: every thread runs its program; the counters must come out
  // exact. So that the test is never vacuous on a loaded machine, where the
  // threads may well run one after another, a holder thread owns A when
  // they start and lets go only once one of them is parked on it; attempts
  // still repeat (a few at most) until the threads have met on the objects.
  uint64_t Contended = 0, Expected = 0, ExpectedB = 0;
  for (unsigned Attempt = 0; Attempt < 6 && !Contended && !HasFailure();
       ++Attempt, Iterations *= 2) {
    const jitlock_rt_stats Before = stats();
    std::atomic<unsigned> Ready{0};
    std::atomic<bool> HolderHasA{false};
    std::thread Holder([&] {
      jitlock_thread *Self = jitlock_rt_attach();
      EXPECT_EQ(jitlock_rt_monitor_enter(Self, A), JITLOCK_OK);
      HolderHasA = true;
      jitlock_lock_info Info{};
      auto Deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (std::chrono::steady_clock::now() < Deadline &&
             (jitlock_rt_inspect(A, &Info) != JITLOCK_OK ||
              Info.entry_queued == 0))
        std::this_thread::yield();
      EXPECT_EQ(jitlock_rt_monitor_exit(Self, A), JITLOCK_OK);
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
    while (!HolderHasA.load())
      std::this_thread::yield();
    std::vector<std::thread> Pool;
    for (unsigned T = 0; T < Threads; ++T)
      Pool.emplace_back([&, T] {
        ProgramCtx Ctx;
        Ctx.Thread = jitlock_rt_attach();
        Ctx.Objs[0] = A;
        Ctx.Objs[1] = B;
        Ctx.Counters[0] = &CounterA;
        Ctx.Counters[1] = &CounterB;
        Ready.fetch_add(1);
        while (Ready.load() < Threads)
          std::this_thread::yield();
        // Rounds, checking the thread's own lock stack in between.
        for (unsigned Round = 0; Round < 4; ++Round) {
          Ctx.Remaining = Iterations / 4;
          Programs[T]->run(Ctx);
          EXPECT_TRUE(lockStack(Ctx.Thread).empty()) << "thread " << T;
          EXPECT_FALSE(jitlock_rt_holds_lock(Ctx.Thread, A));
          EXPECT_FALSE(jitlock_rt_holds_lock(Ctx.Thread, B));
        }
        EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK) << "thread " << T;
      });
    for (std::thread &T : Pool)
      T.join();
    Holder.join();
    for (unsigned T = 0; T < Threads; ++T) {
      Expected += Iterations;
      ExpectedB += T % 3 == 2 ? Iterations : 0;
    }
    ASSERT_EQ(CounterA, Expected) << "lost updates under A";
    ASSERT_EQ(CounterB, ExpectedB) << "lost updates under B";
    expectReleased(A, "A");
    expectReleased(B, "B");
    // The runtime's counters accumulate over the process: take the delta.
    Contended = stats().contended_enters - Before.contended_enters;
  }
  EXPECT_GT(Contended, 0u) << "the threads never met on the objects";
  RecordProperty("contended_enters", std::to_string(Contended));
  EXPECT_EQ(Shim.misaligned(), 0u);
}

//===-- The listings in docs/emitters.md ---------------------------------===//

TEST(X64SequenceDump, Scratch2Sequences) {
  // jitlock-baseline --dump-sequences writes the two-register sequences;
  // this writes the same ones with Scratch2 = rdx (enter3.bin, exit3.bin).
  const char *Dir = std::getenv("JITLOCK_EMITTER_DUMP");
  if (!Dir)
    GTEST_SKIP() << "set JITLOCK_EMITTER_DUMP=dir to write the sequences";
  const jitlock_rt_layout L = layout();
  const jx::MonitorOperands Ops{x86::r13, x86::r12, x86::rax, x86::rcx,
                                x86::rdx};
  for (bool Enter : {true, false}) {
    Emission Em;
    auto &[Code, A] = Em;
    Error E = Enter ? jx::emitMonitorEnter(A, L, Ops, SlowPathMode::OutOfLine)
                    : jx::emitMonitorExit(A, L, Ops, SlowPathMode::OutOfLine);
    ASSERT_EQ(E, kErrorOk);
    ASSERT_EQ(Code.flatten(), kErrorOk);
    ASSERT_EQ(Code.resolveUnresolvedLinks(), kErrorOk);
    const CodeBuffer &B = Code.textSection()->buffer();
    std::string Path =
        std::string(Dir) + (Enter ? "/enter3.bin" : "/exit3.bin");
    FILE *F = std::fopen(Path.c_str(), "wb");
    ASSERT_NE(F, nullptr) << Path;
    EXPECT_EQ(std::fwrite(B.data(), 1, B.size(), F), B.size());
    std::fclose(F);
  }
}

} // namespace
