//===- A64EmitterTest.cpp - The AArch64 emitters, executed ----------------===//
//
// Runs what jitlock::emit::a64 (lib/Emitters/AArch64/AArch64Emitter.cpp) emits,
// on AArch64: CTest runs this binary under qemu-aarch64 -cpu max (see
// CMakeLists.txt beside this file). Every test runs with both LSE and LL/SC
// atomics, both slow-path modes, and many register assignments
// (A64TestUtil.cpp), and checks after every emitted sequence that no
// register outside the scratch set changed (x0-x30, q0-q31, sp).
//
//   RuntimePaths   the real runtime: every scenario of MonitorPathScenarios.h
//                  (shared with the x86_64 suite: fast, recursive, nested,
//                  non-adjacent, inflated M1/M2/N2/N3 with the owner word and
//                  the entry count, a full lock stack, the identity hash,
//                  unstructured and non-owner exits, the anonymous owner
//                  fixed at exit and at enter), the lock state checked
//                  through the runtime's queries and the slow calls counted
//                  after each step; RuntimeDetachedThread, a thread that is
//                  not attached.
//   SyntheticLayout  layouts with large and negative offsets, on fake threads,
//                  objects and monitors: each path's exact memory effect, and
//                  that nothing else in memory changed.
//   SyntheticRace  X4's CAS losing a race against another thread: the
//                  object is pushed back before the runtime is called.
//   Contended      threads with different assignments and atomics running
//                  emitted loops on the same objects; unguarded counters
//                  show mutual exclusion.
//   Operands       contract violations are refused, and nothing is emitted.
//
// `--header-offset=N` configures the runtime with the header at N (-32 to
// +24) first, and `--monitors=index|table` its monitor storage; CTest runs
// RuntimePaths those ways too.
// `--dump enter|exit lse|llsc [pointer|index|table] [store|fence]` prints
// the bytes of one sequence (with the runtime's layout, or that layout with
// the given monitor storage and inflated exit) for llvm-mc-19 --disassemble;
// docs/emitters.md shows the result. The stack-bang tests are in
// A64StackBangTest.cpp (and
// `--dump-stackbang`), the safepoint-poll tests in A64SafepointTest.cpp
// (and `--dump-poll`).
//
//===----------------------------------------------------------------------===//
#include "A64TestUtil.h"
#include "MonitorPathScenarios.h"
#include "StorageLayout.h"

#include "../Runtime/RuntimeTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

using namespace a64_test;

namespace {

const jitlock_rt_layout &runtimeLayout() {
  static const jitlock_rt_layout L = [] {
    jitlock_rt_layout R;
    jitlock_rt_get_layout(&R);
    return R;
  }();
  return L;
}

const char *atomicsName(Atomics At) {
  return At == Atomics::LSE ? "LSE" : "LLSC";
}
const char *modeName(SlowPathMode M) {
  return M == SlowPathMode::OutOfLine ? "OutOfLine" : "Labels";
}

//===----------------------------------------------------------------------===//
// The real runtime
//===----------------------------------------------------------------------===//

/// Room for an object whose header sits at any offset from -32 to +24
/// (--header-offset); the header is Words[4].
struct alignas(16) ObjectStorage {
  uint64_t Words[8];
};

uint64_t &headerOf(const void *O) {
  return *reinterpret_cast<uint64_t *>(reinterpret_cast<uintptr_t>(O) +
                                       runtimeLayout().header_offset);
}

/// A fresh unlocked object with embedder bits above the hash field. Never
/// freed: a monitor the runtime keeps must not see its address reused.
void *newObject() {
  static std::atomic<uint64_t> Count{1};
  const jitlock_rt_layout &L = runtimeLayout();
  auto *S = new ObjectStorage{};
  void *O = reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(&S->Words[4]) -
                                     L.header_offset);
  headerOf(O) =
      (uint64_t(0xC0DE) << 48) | ((Count++ & 0xff) << 40) | L.unlocked_value;
  return O;
}

void expectStack(const jitlock_thread *T, std::vector<const void *> Want) {
  void *Got[64];
  size_t N = jitlock_rt_lock_stack(T, Got, 64);
  ASSERT_EQ(N, Want.size()) << "lock stack depth";
  for (size_t I = 0; I != N; ++I)
    EXPECT_EQ(Got[I], Want[I]) << "lock stack entry " << I;
}

template <typename Pred> bool waitFor(Pred P, int Seconds = 60) {
  auto Deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(Seconds);
  while (!P()) {
    if (std::chrono::steady_clock::now() > Deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

struct PathParam {
  Assignment As;
  Atomics At;
  SlowPathMode Mode;
  bool Misalign;
};

std::vector<PathParam> pathParams() {
  std::vector<PathParam> Out;
  std::vector<Assignment> All = assignments();
  for (size_t I = 0; I != All.size(); ++I)
    for (Atomics At : {Atomics::LSE, Atomics::LLSC})
      for (SlowPathMode M : {SlowPathMode::OutOfLine, SlowPathMode::Labels})
        Out.push_back({All[I], At, M, I % 3 == 1});
  return Out;
}

std::string pathName(const PathParam &P) {
  return P.As.name() + "_" + atomicsName(P.At) + "_" + modeName(P.Mode) +
         (P.Misalign ? "_MisalignedSp" : "");
}

/// The AArch64 target of MonitorPathScenarios.h: enter and exit probes for
/// one assignment, run against the runtime through runtimeShims().
class RuntimeProbes : public monitor_scenarios::PathTarget {
public:
  explicit RuntimeProbes(const PathParam &P) : As(P.As) {
    ProbeSpec S;
    S.As = P.As;
    S.At = P.At;
    S.Mode = P.Mode;
    S.MisalignSp = P.Misalign;
    S.Layout = &runtimeLayout();
    S.Entries = runtimeShims();
    S.Ops = {{true, P.As.Obj}};
    EnterFn = buildProbe(S);
    S.Ops = {{false, P.As.Obj}};
    ExitFn = buildProbe(S);
  }
  ~RuntimeProbes() override {
    releaseProbe(EnterFn);
    releaseProbe(ExitFn);
  }
  bool built() const { return EnterFn && ExitFn; }

  void enter(jitlock_thread *T, void *O) override { run(true, O, T); }
  void exit(jitlock_thread *T, void *O) override { run(false, O, T); }
  monitor_scenarios::SlowCalls slowCalls() const override { return Calls; }
  bool countsRefusals() const override { return true; }
  void fakeQueue(const std::atomic<uint64_t> *OwnerWord) override {
    FakedOwnerWord = reinterpret_cast<const uint64_t *>(OwnerWord);
    Faking = true;
    Faked = {};
  }
  monitor_scenarios::QueuedExitRecord stopFakingQueue() override {
    Faking = false;
    return Faked;
  }

  /// Runs the emitted enter (exit) on `O` on the calling thread, whose
  /// structure is `T`, and counts its slow-path calls; the registers, the
  /// stack alignment at the calls and their arguments are checked. A call
  /// the runtime refused counts only when `T` is the calling thread's own.
  void run(bool Enter, const void *O, jitlock_thread *T) {
    ProbeFrame F;
    fillPattern(F.In, Seed.fetch_add(1) + 1);
    F.In.X[As.Obj] = reinterpret_cast<uint64_t>(O);
    F.In.X[As.Thread] = reinterpret_cast<uint64_t>(T);
    ShimLog &Log = shimLog();
    Log = ShimLog{};
    Log.FakeQueuedExit = Faking;
    Log.WatchOwner = Faking ? FakedOwnerWord : nullptr;
    (Enter ? EnterFn : ExitFn)(&F);
    expectPreserved(F, As, Enter ? "enter" : "exit");
    EXPECT_EQ(Log.MisalignedSp, 0) << "the runtime was called with sp "
                                      "misaligned";
    EXPECT_EQ(Enter ? Log.Exits + Log.QueuedExits : Log.Enters, 0)
        << "the wrong slow path";
    if (Log.Enters + Log.Exits + Log.QueuedExits) {
      EXPECT_EQ(Log.LastThread, T) << "slow path argument 0";
      EXPECT_EQ(Log.LastObj, O) << "slow path argument 1";
    }
    Calls.Enters += Log.Enters;
    Calls.Exits += Log.Exits;
    Calls.QueuedExits += Log.QueuedExits;
    if (jitlock_rt_current() == T)
      Calls.Refused += Log.Errors;
    if (Faking && Log.QueuedExits)
      Faked = {Log.LastThread, Log.LastObj, Log.OwnerAtQueuedExit};
  }

private:
  Assignment As;
  ProbeFn EnterFn = nullptr, ExitFn = nullptr;
  std::atomic<uint64_t> Seed{0};
  monitor_scenarios::SlowCalls Calls;
  bool Faking = false;
  const uint64_t *FakedOwnerWord = nullptr;
  monitor_scenarios::QueuedExitRecord Faked;
};

/// The objects of every scenario: kept, since the runtime may keep their
/// monitors.
monitor_scenarios::ObjectArena &pathObjects() {
  static monitor_scenarios::ObjectArena Arena;
  return Arena;
}

struct ScenarioParam {
  const monitor_scenarios::Scenario *Scenario;
  PathParam Path;
};

std::vector<ScenarioParam> scenarioParams() {
  std::vector<ScenarioParam> Out;
  for (const auto *List : {&monitor_scenarios::pathScenarios(),
                           &monitor_scenarios::contendedScenarios()})
    for (const monitor_scenarios::Scenario &S : *List)
      for (const PathParam &P : pathParams())
        Out.push_back({&S, P});
  return Out;
}

/// One scenario of MonitorPathScenarios.h for one assignment, atomics,
/// slow-path mode and stack alignment.
class RuntimePaths : public testing::TestWithParam<ScenarioParam> {};

TEST_P(RuntimePaths, Scenario) {
  const ScenarioParam &P = GetParam();
  if (P.Path.At == Atomics::LSE && !hasLSE())
    GTEST_SKIP() << "no LSE atomics (qemu-aarch64 needs -cpu max)";
  jitlock_thread *Self = jitlock_rt_attach();
  ASSERT_NE(Self, nullptr);
  RuntimeProbes Probes(P.Path);
  ASSERT_TRUE(Probes.built());
  monitor_scenarios::runScenario(*P.Scenario, Probes, Self, runtimeLayout(),
                                 pathObjects());
}

INSTANTIATE_TEST_SUITE_P(Runtime, RuntimePaths,
                         testing::ValuesIn(scenarioParams()),
                         [](const testing::TestParamInfo<ScenarioParam> &Info) {
                           return std::string(Info.param.Scenario->Name) + "_" +
                                  pathName(Info.param.Path);
                         });

class RuntimeDetachedThread : public testing::TestWithParam<PathParam> {};

TEST_P(RuntimeDetachedThread, EnterOfAFreeMonitorIsRefused) {
  // A thread that is not attached has a full lock stack: its emitted enter
  // tests that (E2) before the header, so it never takes a free monitor
  // (M1) inline, and the runtime refuses it. The misuse handler needs a
  // configure, which needs every thread detached.
  // The header offset and the monitor storage stay those of the run
  // (--header-offset, --monitors).
  if (GetParam().At == Atomics::LSE && !hasLSE())
    GTEST_SKIP() << "no LSE atomics (qemu-aarch64 needs -cpu max)";
  const int32_t HeaderOffset = runtimeLayout().header_offset;
  const uint32_t Storage = runtimeLayout().monitor_storage;
  auto Configure = [&](jitlock_test::MisuseLog *Log) {
    if (jitlock_rt_current())
      ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    jitlock_rt_config Cfg;
    jitlock_rt_default_config(&Cfg);
    Cfg.header_offset = HeaderOffset;
    Cfg.monitor_storage = Storage;
    if (Log) {
      Cfg.misuse_handler = jitlock_test::MisuseLog::handler;
      Cfg.misuse_ctx = Log;
    }
    EXPECT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
    ASSERT_NE(jitlock_rt_attach(), nullptr);
  };
  RuntimeProbes Probes(GetParam());
  ASSERT_TRUE(Probes.built());
  jitlock_test::MisuseLog Log;
  Configure(&Log);
  auto Run = [&](bool Enter) {
    return [&Probes, Enter](jitlock_thread *T, void *O) {
      Probes.run(Enter, O, T);
    };
  };
  jitlock_test::expectDetachedEnterRefused(newObject(), Log, Run(true),
                                           Run(false));
  EXPECT_EQ(Probes.slowCalls().Refused, 0u)
      << "the runtime refused a slow-path call of an attached thread";
  Configure(nullptr);
  expectStack(jitlock_rt_current(), {});
}

INSTANTIATE_TEST_SUITE_P(Runtime, RuntimeDetachedThread,
                         testing::ValuesIn(pathParams()),
                         [](const testing::TestParamInfo<PathParam> &Info) {
                           return pathName(Info.param);
                         });

//===----------------------------------------------------------------------===//
// Synthetic layouts: large and negative offsets
//===----------------------------------------------------------------------===//

struct SynthLayout {
  const char *Name;
  int32_t HeaderOffset;
  uint32_t TopOffset;
  uint32_t Capacity;
  uint32_t OwnerOffset, RecursionsOffset, EntryCountOffset;
};

/// Offsets that exercise every addressing form the emitter picks: scaled
/// immediates, unscaled (ldur/stur, negative), add/sub immediates, and
/// offsets materialized into a register.
const SynthLayout SynthLayouts[] = {
    {"Small", 0, 0, 8, 64, 72, 80},
    {"NegativeHeader", -8, 8, 4, 0, 8, 16},
    {"UnscaledOffsets", 300, 16380, 3, 4000, 4104, 4012},
    {"LargeOffsets", -40000, 70000, 5, 5000, 9000, 20004},
    {"PageOffsets", 4096, 4092, 3, 256, 4088, 16380},
};

jitlock_rt_layout makeLayout(const SynthLayout &S) {
  jitlock_rt_layout L = runtimeLayout(); // the lock bits and markers
  L.header_offset = S.HeaderOffset;
  L.lock_stack_top_offset = S.TopOffset;
  L.lock_stack_sentinel_offset = (S.TopOffset + 4 + 7) / 8 * 8;
  L.lock_stack_base_offset = L.lock_stack_sentinel_offset + 8;
  L.lock_stack_capacity = S.Capacity;
  L.lock_stack_end_offset = L.lock_stack_base_offset + 8 * S.Capacity;
  L.monitor_owner_offset = S.OwnerOffset;
  L.monitor_recursions_offset = S.RecursionsOffset;
  L.monitor_entry_count_offset = S.EntryCountOffset;
  return L;
}

/// A fake thread, object and monitor laid out as a SynthLayout says.
struct World {
  explicit World(const jitlock_rt_layout &L)
      : L(L), ThreadMem((L.lock_stack_end_offset + 64) / 8, 0xEEEEEEEEEEEEEEEE),
        MonMem((std::max({L.monitor_owner_offset, L.monitor_recursions_offset,
                          L.monitor_entry_count_offset}) +
                16) /
                   8,
               0xDDDDDDDDDDDDDDDD) {
    Thread = reinterpret_cast<uint8_t *>(ThreadMem.data());
    Mon = reinterpret_cast<uint8_t *>(MonMem.data());
    // The object pointer is never dereferenced except at the header.
    Obj = reinterpret_cast<uintptr_t>(&HeaderWord) - L.header_offset;
    memcpy(Thread + L.lock_stack_sentinel_offset, &L.lock_stack_sentinel, 8);
    setStack({});
    owner() = 0;
    recursions() = 0;
    entryCount() = 0;
  }

  uint32_t &top() {
    return *reinterpret_cast<uint32_t *>(Thread + L.lock_stack_top_offset);
  }
  uint64_t &slot(size_t I) {
    return *reinterpret_cast<uint64_t *>(Thread + L.lock_stack_base_offset +
                                         8 * I);
  }
  uint64_t &owner() {
    return *reinterpret_cast<uint64_t *>(Mon + L.monitor_owner_offset);
  }
  uint64_t &recursions() {
    return *reinterpret_cast<uint64_t *>(Mon + L.monitor_recursions_offset);
  }
  uint32_t &entryCount() {
    return *reinterpret_cast<uint32_t *>(Mon + L.monitor_entry_count_offset);
  }
  uint64_t monitorHeader() const {
    return reinterpret_cast<uintptr_t>(Mon) | L.monitor_value;
  }
  void setStack(std::vector<uint64_t> Entries) {
    for (size_t I = 0; I != Entries.size(); ++I)
      slot(I) = Entries[I];
    top() = L.lock_stack_base_offset + 8 * uint32_t(Entries.size());
  }

  struct Snapshot {
    std::vector<uint64_t> Thread, Mon;
    uint64_t Header;
    bool operator==(const Snapshot &) const = default;
  };
  Snapshot snapshot() const { return {ThreadMem, MonMem, HeaderWord}; }
  /// Applies `Change` to a snapshot of this world (the expected state).
  template <typename Fn> Snapshot expected(Fn Change) {
    Snapshot Saved = snapshot();
    Change(*this);
    Snapshot Want = snapshot();
    ThreadMem = Saved.Thread;
    MonMem = Saved.Mon;
    HeaderWord = Saved.Header;
    return Want;
  }

  const jitlock_rt_layout &L;
  std::vector<uint64_t> ThreadMem, MonMem;
  alignas(16) uint64_t HeaderWord = 0;
  uint8_t *Thread, *Mon;
  uintptr_t Obj;
};

uint64_t withLockBits(const jitlock_rt_layout &L, uint64_t H, uint64_t Bits) {
  return (H & ~L.lock_mask) | Bits;
}

struct SynthParam {
  const SynthLayout *Layout;
  Assignment As;
  Atomics At;
  SlowPathMode Mode;
  uint32_t Exit; ///< the layout's monitor_exit
};

std::vector<SynthParam> synthParams() {
  std::vector<SynthParam> Out;
  std::vector<Assignment> All = assignments();
  for (const SynthLayout &S : SynthLayouts)
    for (size_t I = 0; I != All.size(); ++I)
      for (Atomics At : {Atomics::LSE, Atomics::LLSC})
        Out.push_back({&S, All[I], At,
                       I % 2 ? SlowPathMode::Labels : SlowPathMode::OutOfLine,
                       I % 4 < 2 ? uint32_t(JITLOCK_EXIT_STORE)
                                 : uint32_t(JITLOCK_EXIT_FENCE)});
  return Out;
}

std::string synthName(const testing::TestParamInfo<SynthParam> &Info) {
  const SynthParam &P = Info.param;
  return std::string(P.Layout->Name) + "_" + P.As.name() + "_" +
         atomicsName(P.At) + "_" + modeName(P.Mode) +
         (P.Exit == JITLOCK_EXIT_STORE ? "_ExitStore" : "_ExitFence");
}

class SyntheticLayout : public testing::TestWithParam<SynthParam> {
protected:
  void SetUp() override {
    const SynthParam &P = GetParam();
    if (P.At == Atomics::LSE && !hasLSE())
      GTEST_SKIP() << "no LSE atomics (qemu-aarch64 needs -cpu max)";
    L = makeLayout(*P.Layout);
    L.monitor_exit = P.Exit;
    ProbeSpec S;
    S.As = P.As;
    S.At = P.At;
    S.Mode = P.Mode;
    S.Layout = &L;
    S.Entries = recordingShims();
    S.Ops = {{true, P.As.Obj}};
    EnterFn = buildProbe(S);
    S.Ops = {{false, P.As.Obj}};
    ExitFn = buildProbe(S);
    ASSERT_TRUE(EnterFn && ExitFn);
  }
  void TearDown() override {
    releaseProbe(EnterFn);
    releaseProbe(ExitFn);
  }

  /// Runs enter or exit in `W`; returns the slow calls made. Checks the
  /// registers and, when `Want` is given, all of the world's memory.
  int run(World &W, bool Enter, const World::Snapshot &Want) {
    const Assignment &As = GetParam().As;
    ProbeFrame F;
    fillPattern(F.In, ++Seed);
    F.In.X[As.Obj] = W.Obj;
    F.In.X[As.Thread] = reinterpret_cast<uint64_t>(W.Thread);
    ShimLog &Log = shimLog();
    Log = ShimLog{};
    Log.WatchOwner = &W.owner();
    (Enter ? EnterFn : ExitFn)(&F);
    expectPreserved(F, As, Enter ? "enter" : "exit");
    EXPECT_EQ(Log.MisalignedSp, 0);
    EXPECT_EQ(Enter ? Log.Exits : Log.Enters, 0) << "the wrong slow path";
    QueuedExits = Log.QueuedExits;
    OwnerAtQueuedExit = Log.OwnerAtQueuedExit;
    int Calls = Log.Enters + Log.Exits;
    if (Log.QueuedExits) {
      EXPECT_EQ(Log.LastThread, reinterpret_cast<jitlock_thread *>(W.Thread));
      EXPECT_EQ(reinterpret_cast<uintptr_t>(Log.LastObj), W.Obj);
    }
    if (Calls) {
      EXPECT_EQ(Log.LastThread, reinterpret_cast<jitlock_thread *>(W.Thread));
      EXPECT_EQ(reinterpret_cast<uintptr_t>(Log.LastObj), W.Obj);
    }
    World::Snapshot Got = W.snapshot();
    EXPECT_TRUE(Got.Header == Want.Header)
        << std::hex << "header " << Got.Header << ", want " << Want.Header;
    EXPECT_TRUE(Got.Thread == Want.Thread) << "thread memory differs";
    EXPECT_TRUE(Got.Mon == Want.Mon) << "monitor memory differs";
    return Calls;
  }
  /// A case where the sequence only calls the runtime (RT.Enter or
  /// RT.Exit, never ExitQueued).
  void expectSlow(World &W, bool Enter) {
    EXPECT_EQ(run(W, Enter, W.snapshot()), 1);
    EXPECT_EQ(QueuedExits, 0);
  }

  uint64_t withBits(uint64_t H, uint64_t Bits) {
    return withLockBits(L, H, Bits);
  }
  uint64_t self(World &W) { return reinterpret_cast<uintptr_t>(W.Thread); }

  jitlock_rt_layout L;
  ProbeFn EnterFn = nullptr, ExitFn = nullptr;
  uint64_t Seed = 0;
  /// The last run's ExitQueued calls, and the owner word at the last one.
  int QueuedExits = 0;
  uint64_t OwnerAtQueuedExit = 0;
  static constexpr uint64_t Upper = 0x7A5C000000123400; // embedder bits
  static constexpr uint64_t Other = 0x0000BEEF00C0FFE0; // another object
};

TEST_P(SyntheticLayout, EnterPaths) {
  {
    SCOPED_TRACE("E5: unlocked, empty stack -> fast-locked, pushed");
    World W(L);
    W.HeaderWord = withBits(Upper, L.unlocked_value);
    auto Want = W.expected([&](World &X) {
      X.HeaderWord = withBits(Upper, L.locked_value);
      X.setStack({W.Obj});
    });
    EXPECT_EQ(run(W, true, Want), 0);
  }
  {
    SCOPED_TRACE("E5: the last free slot");
    World W(L);
    W.HeaderWord = withBits(Upper, L.unlocked_value);
    std::vector<uint64_t> Stack(L.lock_stack_capacity - 1, Other);
    W.setStack(Stack);
    auto Want = W.expected([&](World &X) {
      X.HeaderWord = withBits(Upper, L.locked_value);
      Stack.push_back(W.Obj);
      X.setStack(Stack);
    });
    EXPECT_EQ(run(W, true, Want), 0);
  }
  {
    SCOPED_TRACE("E4: recursive push, header untouched");
    World W(L);
    W.HeaderWord = withBits(Upper, L.locked_value);
    W.setStack({Other, W.Obj});
    auto Want =
        W.expected([&](World &X) { X.setStack({Other, W.Obj, W.Obj}); });
    EXPECT_EQ(run(W, true, Want), 0);
  }
  {
    SCOPED_TRACE("E5 CAS fails (fast-locked, not on top) -> slow");
    World W(L);
    W.HeaderWord = withBits(Upper, L.locked_value);
    W.setStack({W.Obj, Other});
    expectSlow(W, true);
  }
  {
    SCOPED_TRACE("E2: full -> slow");
    World W(L);
    W.HeaderWord = withBits(Upper, L.unlocked_value);
    W.setStack(std::vector<uint64_t>(L.lock_stack_capacity, Other));
    expectSlow(W, true);
    W.setStack(std::vector<uint64_t>(L.lock_stack_capacity, W.Obj));
    expectSlow(W, true);
  }
  {
    SCOPED_TRACE("E3: 11 (the embedder's) -> slow");
    World W(L);
    W.HeaderWord = withBits(Upper, L.lock_mask);
    expectSlow(W, true);
  }
  {
    SCOPED_TRACE("E2: full, a free monitor -> slow, no CAS");
    World W(L);
    W.HeaderWord = W.monitorHeader();
    W.setStack(std::vector<uint64_t>(L.lock_stack_capacity, Other));
    expectSlow(W, true);
    // As a detached thread's lock stack reads: full, no entries.
    W.setStack(std::vector<uint64_t>(L.lock_stack_capacity, 0));
    expectSlow(W, true);
    W.owner() = self(W);
    expectSlow(W, true);
  }
  {
    SCOPED_TRACE("M1: free monitor -> owner = thread");
    World W(L);
    W.HeaderWord = W.monitorHeader();
    W.recursions() = 0;
    auto Want = W.expected([&](World &X) { X.owner() = self(W); });
    EXPECT_EQ(run(W, true, Want), 0);
  }
  {
    SCOPED_TRACE("M2: owned by this thread -> recursions + 1");
    World W(L);
    W.HeaderWord = W.monitorHeader();
    W.owner() = self(W);
    W.recursions() = 5;
    auto Want = W.expected([&](World &X) { X.recursions() = 6; });
    EXPECT_EQ(run(W, true, Want), 0);
  }
  for (uint64_t Owner : {uint64_t(L.monitor_anonymous_owner), Other}) {
    SCOPED_TRACE("M1 test: anonymous or another owner -> slow, no CAS");
    World W(L);
    W.HeaderWord = W.monitorHeader();
    W.owner() = Owner;
    expectSlow(W, true);
    W.entryCount() = 3;
    expectSlow(W, true);
  }
}

TEST_P(SyntheticLayout, ExitPaths) {
  {
    SCOPED_TRACE("X4: fast unlock, pop");
    World W(L);
    W.HeaderWord = withBits(Upper, L.locked_value);
    W.setStack({Other, W.Obj});
    auto Want = W.expected([&](World &X) {
      X.HeaderWord = withBits(Upper, L.unlocked_value);
      X.top() -= 8;
    });
    EXPECT_EQ(run(W, false, Want), 0);
  }
  {
    SCOPED_TRACE("X3: recursive exit, header untouched");
    World W(L);
    W.HeaderWord = withBits(Upper, L.locked_value);
    W.setStack({W.Obj, W.Obj});
    auto Want = W.expected([&](World &X) { X.top() -= 8; });
    EXPECT_EQ(run(W, false, Want), 0);
  }
  {
    SCOPED_TRACE("X4: inflated by a contender -> restore the top, slow");
    World W(L);
    W.HeaderWord = W.monitorHeader();
    W.owner() = L.monitor_anonymous_owner;
    W.setStack({W.Obj});
    expectSlow(W, false);
    W.HeaderWord = withBits(Upper, L.unlocked_value);
    expectSlow(W, false);
  }
  {
    SCOPED_TRACE("N3: owner thread -> 0, nobody queued: no call");
    World W(L);
    W.HeaderWord = W.monitorHeader();
    W.owner() = self(W);
    W.setStack({Other});
    auto Want = W.expected([&](World &X) { X.owner() = 0; });
    EXPECT_EQ(run(W, false, Want), 0);
    EXPECT_EQ(QueuedExits, 0);
  }
  for (uint32_t Count : {1u, 2u, 0x80000000u}) {
    SCOPED_TRACE("N3: owner thread -> 0, threads queued: ExitQueued once, "
                 "after the release");
    World W(L);
    W.HeaderWord = W.monitorHeader();
    W.owner() = self(W);
    W.entryCount() = Count;
    auto Want = W.expected([&](World &X) { X.owner() = 0; });
    EXPECT_EQ(run(W, false, Want), 0) << "no RT.Exit";
    EXPECT_EQ(QueuedExits, 1);
    EXPECT_EQ(OwnerAtQueuedExit, 0u) << "the owner word at the call";
  }
  {
    SCOPED_TRACE("N2: recursions, owner thread -> recursions - 1");
    World W(L);
    W.HeaderWord = W.monitorHeader();
    W.owner() = self(W);
    W.recursions() = 3;
    auto Want = W.expected([&](World &X) { X.recursions() = 2; });
    EXPECT_EQ(run(W, false, Want), 0);
    W.setStack({Other});
    Want = W.expected([&](World &X) { X.recursions() = 1; });
    EXPECT_EQ(run(W, false, Want), 0);
    // Threads queued: a recursive exit does not look at them.
    W.entryCount() = 1;
    Want = W.expected([&](World &X) { X.recursions() = 0; });
    EXPECT_EQ(run(W, false, Want), 0);
    EXPECT_EQ(QueuedExits, 0);
  }
  for (uint64_t Owner :
       {uint64_t(L.monitor_anonymous_owner), Other, uint64_t(0)}) {
    for (uint64_t Recursions : {uint64_t(3), uint64_t(0)})
      for (uint32_t Count : {0u, 1u}) {
        SCOPED_TRACE("N2: anonymous, another or no owner -> slow, untouched");
        World W(L);
        W.HeaderWord = W.monitorHeader();
        W.recursions() = Recursions;
        W.entryCount() = Count;
        W.owner() = Owner;
        expectSlow(W, false);
      }
  }
  for (uint64_t Bits : {L.unlocked_value, L.locked_value, L.lock_mask}) {
    SCOPED_TRACE("N1: not on top, not 10 -> slow");
    World W(L);
    W.HeaderWord = withBits(Upper, Bits);
    W.setStack({W.Obj, Other});
    expectSlow(W, false);
  }
}

/// X4's CAS failing: another thread changes the header (an embedder bit;
/// the lock bits stay 00) between X4's load and its CAS. The sequence must
/// push the object back before it calls the runtime. The loop re-locks the
/// fake object before every exit, and runs until the race has been lost
/// often enough (or a generous bound).
TEST(SyntheticRace, X4CasFailurePushesBack) {
  std::vector<Assignment> All = assignments();
  for (Atomics At : {Atomics::LSE, Atomics::LLSC}) {
    if (At == Atomics::LSE && !hasLSE())
      continue;
    for (const SynthLayout *SL : {&SynthLayouts[0], &SynthLayouts[1]}) {
      SCOPED_TRACE(std::string(SL->Name) + " " + atomicsName(At));
      const jitlock_rt_layout L = makeLayout(*SL);
      World W(L);
      const Assignment As = All[At == Atomics::LSE ? 4 : 7];
      std::vector<uint32_t> Free = freeRegisters(As);
      ProbeSpec S;
      S.As = As;
      S.At = At;
      S.Layout = &L;
      S.Entries = recordingShims();
      S.Ops = {{false, As.Obj}};
      S.Loop = true;
      S.LoopReg = Free[0];
      // Before each exit: the lock stack holds obj (top = base + 8), and
      // the header's lock bits are 00.
      S.EachIteration = [&](A64::Assembler &A) {
        A64::GpX Obj = A64::x(As.Obj), Thread = A64::x(As.Thread),
                 S0 = A64::x(As.S0);
        A.mov(S0, L.lock_stack_base_offset + 8);
        A.str(S0.w(), A64::ptr(Thread, L.lock_stack_top_offset));
        A.str(Obj, A64::ptr(Thread, L.lock_stack_base_offset));
        A.ldur(S0, A64::ptr(Obj, L.header_offset));
        A.and_(S0, S0, ~L.lock_mask);
        A.stur(S0, A64::ptr(Obj, L.header_offset));
      };
      ProbeFn Fn = buildProbe(S);
      ASSERT_NE(Fn, nullptr);

      W.HeaderWord = withLockBits(L, 0x7A5C000000123400, L.locked_value);
      std::atomic<bool> Stop{false};
      std::atomic<uint64_t> Flips{0};
      std::thread Flipper([&] {
        std::atomic_ref<uint64_t> H(W.HeaderWord);
        while (!Stop.load(std::memory_order_relaxed)) {
          H.fetch_xor(uint64_t(1) << 44);
          Flips.fetch_add(1, std::memory_order_relaxed);
        }
      });
      ASSERT_TRUE(waitFor([&] { return Flips.load() != 0; }));
      ShimLog &Log = shimLog();
      Log = ShimLog{};
      Log.WatchTop = &W.top();
      Log.WantTop = L.lock_stack_base_offset + 8;
      // Until the race was lost 20 times; on a loaded machine the two
      // threads may run together only now and then.
      auto Deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(60);
      uint64_t Runs = 0;
      for (; Log.Exits < 20 && std::chrono::steady_clock::now() < Deadline;
           ++Runs) {
        ProbeFrame F;
        fillPattern(F.In, Runs);
        F.In.X[As.Obj] = W.Obj;
        F.In.X[As.Thread] = reinterpret_cast<uint64_t>(W.Thread);
        F.In.X[S.LoopReg] = 5000;
        Fn(&F);
        F.In.X[S.LoopReg] = 0;
        expectPreserved(F, As, "exit loop");
        if (testing::Test::HasFailure())
          break;
      }
      Stop = true;
      Flipper.join();
      releaseProbe(Fn);
      printf("%s %s: %d of %llu exits lost the race to the flipping "
             "thread\n",
             SL->Name, atomicsName(At), Log.Exits,
             (unsigned long long)(Runs * 5000));
      EXPECT_GT(Log.Exits, 0) << "the race never happened";
      EXPECT_EQ(Log.TopMismatches, 0)
          << "the runtime was called without obj pushed back";
      EXPECT_EQ(Log.Enters, 0);
      EXPECT_EQ(Log.MisalignedSp, 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Synthetic, SyntheticLayout,
                         testing::ValuesIn(synthParams()), synthName);

//===----------------------------------------------------------------------===//
// Contended: threads with different registers and atomics, same objects
//===----------------------------------------------------------------------===//

struct LoopThread {
  Assignment As;
  Atomics At;
  SlowPathMode Mode;
  uint32_t ObjB, Counter, LoopReg;
  ProbeFn Fn = nullptr;
};

/// One round: `Threads` threads run `Iterations` times: enter A twice,
/// ++c0, enter B, ++c1, exit B, exit A, ++c2, exit A (or, `Simple`, enter A,
/// ++c0, exit A), on fresh objects. Thread i uses the i-th probe.
void runRound(const std::vector<LoopThread> &Ts, uint64_t Iterations,
              bool Simple) {
  const unsigned Threads = unsigned(Ts.size());
  void *A = newObject(), *B = newObject();
  alignas(64) static uint64_t Counters[3];
  memset(Counters, 0, sizeof Counters);
  std::atomic<unsigned> Ready{0};
  // Contention is forced rather than hoped for: this thread holds A when the
  // workers start, so their first enters find it taken (inflation, spinning,
  // parking) however the machine schedules them, and it lets go only once
  // one of them has contended.
  bool WasAttached = jitlock_rt_current() != nullptr;
  jitlock_thread *Main = jitlock_rt_attach();
  jitlock_rt_stats Before;
  jitlock_rt_get_stats(&Before);
  EXPECT_EQ(jitlock_rt_monitor_enter(Main, A), JITLOCK_OK);
  std::vector<std::thread> Workers;
  for (unsigned I = 0; I != Threads; ++I)
    Workers.emplace_back([&, I] {
      const LoopThread &T = Ts[I];
      jitlock_thread *Self = jitlock_rt_attach();
      ProbeFrame F;
      fillPattern(F.In, 1000 + I);
      F.In.X[T.As.Obj] = reinterpret_cast<uint64_t>(A);
      F.In.X[T.ObjB] = reinterpret_cast<uint64_t>(B);
      F.In.X[T.As.Thread] = reinterpret_cast<uint64_t>(Self);
      F.In.X[T.Counter] = reinterpret_cast<uint64_t>(Counters);
      F.In.X[T.LoopReg] = Iterations;
      ++Ready;
      while (Ready.load() != Threads)
        std::this_thread::yield();
      T.Fn(&F);
      F.In.X[T.LoopReg] = 0; // counted down
      expectPreserved(F, T.As, "thread " + std::to_string(I));
      expectStack(Self, {});
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
  for (auto Deadline =
           std::chrono::steady_clock::now() + std::chrono::minutes(2);
       std::chrono::steady_clock::now() < Deadline;) {
    jitlock_rt_stats Now;
    jitlock_rt_get_stats(&Now);
    if (Now.contended_enters != Before.contended_enters)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(jitlock_rt_monitor_exit(Main, A), JITLOCK_OK);
  for (std::thread &W : Workers)
    W.join();
  if (!WasAttached) {
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  }

  uint64_t Want = uint64_t(Threads) * Iterations;
  EXPECT_EQ(Counters[0], Want) << "lost updates: no mutual exclusion";
  if (!Simple) {
    EXPECT_EQ(Counters[1], Want);
    EXPECT_EQ(Counters[2], Want);
  }
  for (void *O : {A, B}) {
    jitlock_lock_info I = jitlock_test::inspect(O);
    EXPECT_EQ(I.owner, nullptr);
    EXPECT_EQ(I.holds, 0u);
    EXPECT_TRUE(I.state == JITLOCK_STATE_UNLOCKED ||
                I.state == JITLOCK_STATE_INFLATED);
    EXPECT_EQ(I.entry_queued, 0u);
  }
}

/// Threads with different register assignments, LSE and LL/SC by turns and
/// both slow-path modes run emitted loops on the same objects. Each round
/// starts with A held by the test's thread (see runRound), so every round
/// contends (inflation, spinning, parking) even on a loaded or single-core
/// machine; three rounds are required.
void runContended(unsigned Threads, uint64_t Iterations, bool Simple) {
  std::vector<Assignment> All = assignments();
  std::vector<LoopThread> Ts;
  for (unsigned I = 0; I != Threads; ++I) {
    LoopThread T;
    T.As = All[(I * 7 + 3) % All.size()];
    T.At = (I % 2 || !hasLSE()) ? Atomics::LLSC : Atomics::LSE;
    T.Mode = I % 4 >= 2 ? SlowPathMode::Labels : SlowPathMode::OutOfLine;
    std::vector<uint32_t> Free = freeRegisters(T.As);
    T.ObjB = Free[I % 3];
    T.Counter = Free[3 + I % 5];
    T.LoopReg = Free[9 + I % 7];
    ProbeSpec S;
    S.As = T.As;
    S.At = T.At;
    S.Mode = T.Mode;
    S.Layout = &runtimeLayout();
    S.Entries = RuntimeEntries{}; // the runtime itself
    S.Loop = true;
    S.LoopReg = T.LoopReg;
    S.CounterReg = T.Counter;
    if (Simple) {
      S.Ops = {{true, T.As.Obj}, {false, T.As.Obj}};
      S.IncrementAfter = {0};
    } else {
      S.Ops = {{true, T.As.Obj}, {true, T.As.Obj},  {true, T.ObjB},
               {false, T.ObjB},  {false, T.As.Obj}, {false, T.As.Obj}};
      S.IncrementAfter = {1, 2, 4};
    }
    T.Fn = buildProbe(S);
    ASSERT_NE(T.Fn, nullptr);
    Ts.push_back(T);
  }

  unsigned Contended = 0, Rounds = 0;
  jitlock_rt_stats Total{};
  for (; Rounds != 40 && Contended != 3 && !testing::Test::HasFailure();
       ++Rounds) {
    jitlock_rt_stats Before, After;
    jitlock_rt_get_stats(&Before);
    runRound(Ts, Iterations, Simple);
    jitlock_rt_get_stats(&After);
    Contended += After.contended_enters != Before.contended_enters;
    Total.inflations += After.inflations - Before.inflations;
    Total.contended_enters += After.contended_enters - Before.contended_enters;
    Total.parks += After.parks - Before.parks;
  }
  for (LoopThread &T : Ts)
    releaseProbe(T.Fn);
  printf("%u rounds of %u threads x %llu iterations: %llu inflations, %llu "
         "contended enters, %llu parks\n",
         Rounds, Threads, (unsigned long long)Iterations,
         (unsigned long long)Total.inflations,
         (unsigned long long)Total.contended_enters,
         (unsigned long long)Total.parks);
  EXPECT_EQ(Contended, 3u) << "the threads never contended";
}

TEST(Contended, NestedFourThreads) { runContended(4, 4000, false); }
TEST(Contended, SimpleEightThreads) { runContended(8, 4000, true); }

//===----------------------------------------------------------------------===//
// Operands: the contract is enforced, and a refusal emits nothing
//===----------------------------------------------------------------------===//

class Operands : public testing::Test {
protected:
  void SetUp() override {
    Code.init(asmjit::Environment(asmjit::Arch::kAArch64));
    Code.attach(&A);
  }
  /// Emits enter and exit in both atomics; returns the first error, and
  /// checks that a refused sequence left no bytes.
  asmjit::Error both(const MonitorOperands &Ops,
                     const jitlock_rt_layout &L = runtimeLayout(),
                     SlowPathMode Mode = SlowPathMode::OutOfLine,
                     SlowPathLabels *Labels = nullptr,
                     const RuntimeEntries &RT = {}) {
    asmjit::Error First = asmjit::kErrorOk;
    for (Atomics At : {Atomics::LSE, Atomics::LLSC})
      for (bool Enter : {true, false}) {
        size_t Before = A.offset();
        asmjit::Error E =
            Enter ? J::a64::emitMonitorEnter(A, L, Ops, At, Mode, Labels, RT)
                  : J::a64::emitMonitorExit(A, L, Ops, At, Mode, Labels, RT);
        if (E) {
          EXPECT_EQ(A.offset(), Before) << "a refused sequence emitted code";
        }
        if (!First)
          First = E;
      }
    return First;
  }

  asmjit::CodeHolder Code;
  A64::Assembler A;
};

TEST_F(Operands, ValidAssignmentsAreAccepted) {
  for (const Assignment &As : assignments())
    EXPECT_EQ(both(As.operands()), asmjit::kErrorOk) << As.str();
  using namespace A64;
  // x16-x18 may hold the object and the thread, only not be scratch.
  EXPECT_EQ(both({x16, x17, x0, x1, x2}), asmjit::kErrorOk);
  EXPECT_EQ(both({x18, x30, x29, x28, x27}), asmjit::kErrorOk);
}

TEST_F(Operands, ContractViolationsAreRefused) {
  using namespace A64;
  const MonitorOperands Bad[] = {
      {x0, x0, x2, x3, x4},  // obj == thread
      {x0, x1, x0, x3, x4},  // scratch == obj
      {x0, x1, x2, x1, x4},  // scratch == thread
      {x0, x1, x2, x3, x3},  // scratch == scratch
      {sp, x1, x2, x3, x4},  // sp
      {x0, sp, x2, x3, x4},  //
      {x0, x1, x2, sp, x4},  //
      {xzr, x1, x2, x3, x4}, // xzr
      {x0, x1, x2, x3, xzr}, //
      {w0, x1, x2, x3, x4},  // a w register
      {x0, x1, x2, w3, x4},  //
      {x0, x1, x16, x3, x4}, // x16-x18 as scratch
      {x0, x1, x2, x17, x4}, //
      {x0, x1, x2, x3, x18}, //
      {},                    // no registers at all
  };
  for (const MonitorOperands &Ops : Bad)
    EXPECT_EQ(both(Ops), asmjit::kErrorInvalidArgument);
  EXPECT_EQ(A.offset(), 0u);
}

TEST_F(Operands, OtherMisuseIsRefused) {
  using namespace A64;
  MonitorOperands Ok = {x0, x1, x2, x3, x4};
  // Labels mode needs somewhere to put the labels.
  EXPECT_EQ(both(Ok, runtimeLayout(), SlowPathMode::Labels, nullptr),
            asmjit::kErrorInvalidArgument);
  // Out of line needs the runtime's entry points.
  RuntimeEntries NoEntries;
  NoEntries.Enter = NoEntries.Exit = nullptr;
  EXPECT_EQ(
      both(Ok, runtimeLayout(), SlowPathMode::OutOfLine, nullptr, NoEntries),
      asmjit::kErrorInvalidArgument);
  // Layouts the instructions cannot express.
  jitlock_rt_layout L = runtimeLayout();
  L.locked_value = L.unlocked_value;
  EXPECT_EQ(both(Ok, L), asmjit::kErrorInvalidArgument);
  L = runtimeLayout();
  L.lock_mask = 0b101;
  L.monitor_value = 0b100;
  EXPECT_EQ(both(Ok, L), asmjit::kErrorInvalidArgument)
      << "mask not contiguous";
  L = runtimeLayout();
  L.lock_stack_sentinel_offset += 8;
  EXPECT_EQ(both(Ok, L), asmjit::kErrorInvalidArgument);
  L = runtimeLayout();
  L.abi_version += 1;
  EXPECT_EQ(both(Ok, L), asmjit::kErrorInvalidArgument);
  EXPECT_EQ(A.offset(), 0u);
  // emitSlowCall: labels it can bind and jump to, valid operands.
  SlowPathLabels None;
  EXPECT_EQ(J::a64::emitSlowCall(A, true, Ok, None),
            asmjit::kErrorInvalidArgument);
  SlowPathLabels Labels{A.newLabel(), A.newLabel()};
  EXPECT_EQ(J::a64::emitSlowCall(A, true, {x0, x0, x2, x3, x4}, Labels),
            asmjit::kErrorInvalidArgument);
  EXPECT_EQ(A.offset(), 0u);
  EXPECT_EQ(J::a64::emitSlowCall(A, true, Ok, Labels), asmjit::kErrorOk);
  EXPECT_EQ(J::a64::emitSlowCall(A, false, Ok, Labels),
            asmjit::kErrorInvalidArgument)
      << "Slow is already bound";
}

TEST_F(Operands, LabelsModeUsesTheCallersLabels) {
  using namespace A64;
  MonitorOperands Ok = {x0, x1, x2, x3, x4};
  SlowPathLabels Labels{A.newLabel(), A.newLabel()};
  SlowPathLabels Given = Labels;
  EXPECT_EQ(J::a64::emitMonitorEnter(A, runtimeLayout(), Ok, Atomics::LSE,
                                     SlowPathMode::Labels, &Labels),
            asmjit::kErrorOk);
  EXPECT_EQ(Labels.Slow.id(), Given.Slow.id());
  EXPECT_EQ(Labels.Done.id(), Given.Done.id());
  EXPECT_TRUE(Code.isLabelBound(Labels.Done));
  EXPECT_FALSE(Code.isLabelBound(Labels.Slow));
  SlowPathLabels Fresh;
  EXPECT_EQ(J::a64::emitMonitorExit(A, runtimeLayout(), Ok, Atomics::LLSC,
                                    SlowPathMode::Labels, &Fresh),
            asmjit::kErrorOk);
  EXPECT_TRUE(Code.isLabelValid(Fresh.Slow));
  EXPECT_TRUE(Code.isLabelBound(Fresh.Done));
  EXPECT_EQ(J::a64::emitSlowCall(A, true, Ok, Labels), asmjit::kErrorOk);
  EXPECT_EQ(J::a64::emitSlowCall(A, false, Ok, Fresh), asmjit::kErrorOk);
  EXPECT_EQ(Code.flatten(), asmjit::kErrorOk);
  EXPECT_EQ(Code.resolveUnresolvedLinks(), asmjit::kErrorOk);
  EXPECT_FALSE(Code.hasUnresolvedLinks());
}

//===----------------------------------------------------------------------===//
// --dump
//===----------------------------------------------------------------------===//

/// Prints one sequence as `0x.. 0x.. 0x.. 0x..` lines, one per instruction,
/// for llvm-mc-19 --disassemble. The assignment is a JIT's typical one: the
/// object in x0, the thread pinned in x28 (as HotSpot's rthread), scratch
/// x9-x11.
int dump(int Argc, char **Argv) {
  // After the two required words, in any order: a monitor storage and an
  // inflated exit (store|fence).
  std::optional<jitlock::MonitorStorage> Storage;
  uint32_t Exit = 0;
  bool Bad = Argc < 4 || Argc > 6 ||
             (strcmp(Argv[2], "enter") && strcmp(Argv[2], "exit")) ||
             (strcmp(Argv[3], "lse") && strcmp(Argv[3], "llsc"));
  for (int I = 4; !Bad && I < Argc; ++I) {
    if (!strcmp(Argv[I], "store") || !strcmp(Argv[I], "fence")) {
      Bad = Exit != 0;
      Exit = Argv[I][0] == 's' ? JITLOCK_EXIT_STORE : JITLOCK_EXIT_FENCE;
    } else {
      Bad = Storage.has_value();
      Storage = jitlock_test::storageNamed(Argv[I]);
      Bad = Bad || !Storage;
    }
  }
  if (Bad) {
    fprintf(stderr,
            "usage: %s --dump enter|exit lse|llsc [pointer|index|table] "
            "[store|fence]\n",
            Argv[0]);
    return 2;
  }
  // Another storage than the runtime's: the runtime's layout with that
  // storage (StorageLayout.h fills the fields a runtime without it lacks).
  jitlock_rt_layout L =
      Storage ? jitlock_test::withStorage(runtimeLayout(), *Storage)
              : runtimeLayout();
  if (Exit)
    L.monitor_exit = Exit;
  asmjit::CodeHolder Code;
  Code.init(asmjit::Environment(asmjit::Arch::kAArch64));
  A64::Assembler A(&Code);
  MonitorOperands Ops = {A64::x0, A64::x28, A64::x9, A64::x10, A64::x11};
  Atomics At = strcmp(Argv[3], "lse") ? Atomics::LLSC : Atomics::LSE;
  asmjit::Error E =
      strcmp(Argv[2], "enter")
          ? J::a64::emitMonitorExit(A, L, Ops, At, SlowPathMode::OutOfLine)
          : J::a64::emitMonitorEnter(A, L, Ops, At, SlowPathMode::OutOfLine);
  return printDump(Code, E);
}

} // namespace

// A64StackBangTest.cpp.
int dumpStackBang(int Argc, char **Argv);
// A64SafepointTest.cpp.
int dumpPoll(int Argc, char **Argv);

int main(int Argc, char **Argv) {
  if (Argc >= 2 && !strcmp(Argv[1], "--dump"))
    return dump(Argc, Argv);
  if (Argc >= 2 && !strcmp(Argv[1], "--dump-stackbang"))
    return dumpStackBang(Argc, Argv);
  if (Argc >= 2 && !strcmp(Argv[1], "--dump-poll"))
    return dumpPoll(Argc, Argv);
  testing::InitGoogleTest(&Argc, Argv);
  // --header-offset=N: configure the runtime's header offset (before any
  // thread attaches); the emitters take it from the layout.
  for (int I = 1; I < Argc; ++I) {
    int Offset;
    if (sscanf(Argv[I], "--header-offset=%d", &Offset) != 1)
      continue;
    jitlock_rt_config Cfg;
    jitlock_rt_default_config(&Cfg);
    Cfg.header_offset = Offset;
    if (Offset < -32 || Offset > 24 || Offset % 8 ||
        jitlock_rt_configure(&Cfg) != JITLOCK_OK) {
      fprintf(stderr, "--header-offset=%d: not a usable header offset\n",
              Offset);
      return 2;
    }
    printf("runtime configured: header at offset %d\n",
           runtimeLayout().header_offset);
  }
  // --monitors=index|table: configure the runtime's monitor storage; the
  // emitters follow the layout, so RuntimePaths then runs every path through
  // that storage's lookup (M1, N2).
  for (int I = 1; I < Argc; ++I) {
    if (strncmp(Argv[I], "--monitors=", 11))
      continue;
    std::optional<jitlock::MonitorStorage> Storage =
        jitlock_test::storageNamed(Argv[I] + 11);
    jitlock_rt_config Cfg;
    jitlock_rt_default_config(&Cfg);
    if (Storage)
      Cfg.monitor_storage = uint32_t(*Storage);
    if (!Storage || jitlock_rt_configure(&Cfg) != JITLOCK_OK) {
      fprintf(stderr, "%s: not a monitor storage this runtime provides\n",
              Argv[I]);
      return 2;
    }
    printf("runtime configured: %s monitor storage\n", Argv[I] + 11);
  }
  if (getenv("JITLOCK_REQUIRE_LSE") && !hasLSE()) {
    fprintf(stderr, "JITLOCK_REQUIRE_LSE is set, but this CPU has no LSE "
                    "atomics (qemu-aarch64 needs -cpu max)\n");
    return 1;
  }
  return RUN_ALL_TESTS();
}
