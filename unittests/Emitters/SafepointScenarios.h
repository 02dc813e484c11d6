//===- SafepointScenarios.h - Poll scenarios of both targets ----*- C++ -*-===//
//
// The safepoint-poll tests of x86_64 (SafepointPollTest.cpp, run natively)
// and AArch64 (A64SafepointTest.cpp, cross-built and run under qemu-aarch64)
// run the same scenarios, written once here. Each target supplies only what
// is its own: the emitted code and how to call it. This header needs nothing
// but the runtime's C ABI, GoogleTest and the standard library, so the
// AArch64 cross build compiles it as it is.
//
// The emitted code is a loop over a LoopCtx. Every target builds two kinds:
//
//   probe loop   do { poll; Iterations += 1 } while (!Stop), inside a
//                wrapper that loads every register with a sentinel and
//                checks them all when the loop returns: what the poll
//                changed, through any number of disarmed and armed polls;
//   program      do { [enter Obj]; Iterations += 1; [*Shared += 1 (plain
//                load, add, store)]; poll; [exit Obj] } while (!Stop), the
//                bracketed parts for a "locked" loop, whose poll is then
//                inside the critical section.
//
// The scenarios, on a VM thread that is not attached (the test's main
// thread):
//
//   pollWordCases       the poll word values a probe loop is run with on a
//                       fake thread: it must call the slow path exactly when
//                       the layout's armed bit is set, whatever other bits
//                       are.
//   stopAtPoll          (one attached thread in a probe loop) disarmed polls
//                       never call the runtime; a safepoint arms the poll,
//                       the loop's next poll calls P2, which stops there
//                       (the thread is blocked, the loop does not move) and
//                       returns only after jitlock_rt_safepoint_end.
//   handshakeAtPoll     (the same) a handshake with the looping thread runs
//                       exactly once, on that thread, inside its poll.
//   runWorld            several attached threads run programs, plain and
//                       locked, while the VM thread takes many safepoints
//                       (the counters must not move while one is held,
//                       and every thread must move again after it), then
//                       handshakes with each thread and with all of them
//                       (each must run exactly once per target, while its
//                       target's loop stands still). Locked loops must count
//                       exactly (no update lost under the monitor).
//
// Threads that wait outside emitted code (for the start, at the end) do so
// in `native` or detached, so that a safepoint never waits for them. The
// randomized choices (register assignments, hold times, pauses) come from
// one seed, printed by scenarioSeed() and taken from JITLOCK_SAFEPOINT_SEED
// when set.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_EMITTERS_SAFEPOINTSCENARIOS_H
#define JITLOCK_UNITTESTS_EMITTERS_SAFEPOINTSCENARIOS_H

#include "../Runtime/Watchdog.h"

#include "jitlock/jitlock_rt.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace safepoint_scenarios {

//===-- What the emitted loops read and write ----------------------------===//

/// One loop's state. Standard layout: the emitted code addresses the fields
/// with offsetof. The loop writes Iterations (and *Shared) with plain
/// stores; other threads read them with relaxed atomic loads.
struct alignas(64) LoopCtx {
  jitlock_thread *Thread = nullptr; ///< what the thread register holds
  void *Obj = nullptr;              ///< locked programs: the monitor
  uint64_t *Shared = nullptr;       ///< locked programs: counted under Obj
  uint64_t Iterations = 0;
  uint32_t Stop = 0; ///< set by the VM thread; seen at the loop's end
};

inline uint64_t iterations(const LoopCtx &C) {
  return __atomic_load_n(&C.Iterations, __ATOMIC_RELAXED);
}
inline void requestStop(LoopCtx &C) {
  __atomic_store_n(&C.Stop, 1u, __ATOMIC_RELAXED);
}

/// Runs the emitted loop for `Ctx` on the calling thread (attached, in
/// `managed`, Ctx.Thread set) until Ctx.Stop; the target's checks of what
/// the code preserved go inside.
using LoopRunner = std::function<void(LoopCtx &Ctx)>;
/// The same for thread `Index` of runWorld.
using WorldRunner = std::function<void(unsigned Index, LoopCtx &Ctx)>;

//===-- The poll word ----------------------------------------------------===//

struct PollWordCase {
  uint64_t Word;
  bool Calls;
  const char *What;
};

/// Poll words and whether P1 must call P2 for them, for layout `L`.
inline std::vector<PollWordCase> pollWordCases(const jitlock_rt_layout &L) {
  const uint64_t Armed = L.poll_armed_bit;
  return {
      {0, false, "disarmed"},
      {Armed, true, "armed"},
      {~Armed, false, "every bit but the armed one"},
      {~uint64_t(0), true, "every bit"},
      {Armed | 0x6 | (uint64_t(1) << 63), true, "armed among others"},
  };
}

//===-- The slow path's entry, counted -----------------------------------===//

/// Calls that reached the entries below, and returned from them.
struct PollCounts {
  std::atomic<uint64_t> Entered{0}, Returned{0};
  std::atomic<jitlock_thread *> LastThread{nullptr};
  void reset() {
    Entered = 0;
    Returned = 0;
    LastThread = nullptr;
  }
};

inline PollCounts &pollCounts() {
  static PollCounts C;
  return C;
}

/// P2 through the runtime, counted. The targets' shims (which check the
/// stack alignment and clobber the caller-saved registers) call this.
inline void countedSafepointPoll(jitlock_thread *T) {
  PollCounts &C = pollCounts();
  C.LastThread = T;
  ++C.Entered;
  jitlock_rt_safepoint_poll(T);
  ++C.Returned;
}

/// Counted only, for fake threads the runtime does not know.
inline void recordedSafepointPoll(jitlock_thread *T) {
  PollCounts &C = pollCounts();
  C.LastThread = T;
  ++C.Entered;
  ++C.Returned;
}

//===-- Helpers ----------------------------------------------------------===//

/// Long enough for qemu on a loaded two-core machine.
constexpr std::chrono::seconds kDeadline{60};

template <typename Pred> bool waitUntil(Pred P) {
  const auto End = std::chrono::steady_clock::now() + kDeadline;
  while (!P()) {
    if (std::chrono::steady_clock::now() > End)
      return false;
    std::this_thread::yield();
  }
  return true;
}

/// Busy for `Us` microseconds (a VM thread holding a safepoint does not
/// sleep in the tests: the stopped threads must stay put however long).
inline void hold(uint64_t Us) {
  const auto End =
      std::chrono::steady_clock::now() + std::chrono::microseconds(Us);
  while (std::chrono::steady_clock::now() < End)
    std::this_thread::yield();
}

/// Ends the process when a safepoint or handshake does not return in time:
/// a thread that never reaches its poll keeps the VM thread waiting for
/// ever, and a message is better than the test's timeout.
class OperationWatchdog : public jitlock_test::Watchdog {
public:
  explicit OperationWatchdog(const char *What)
      : Watchdog(kDeadline, What, [](const std::string &Stuck) {
          std::fprintf(stderr,
                       "safepoint scenarios: %s did not return within %lld "
                       "s: a thread never reached its poll\n",
                       Stuck.c_str(),
                       static_cast<long long>(kDeadline.count()));
          std::_Exit(3);
        }) {}
};

/// jitlock_rt_safepoint_begin, watched.
inline int beginSafepoint() {
  OperationWatchdog W("jitlock_rt_safepoint_begin");
  return jitlock_rt_safepoint_begin();
}

/// The seed of the randomized choices: JITLOCK_SAFEPOINT_SEED, or a fresh
/// one. Printed either way, so that a failure can be replayed.
inline uint64_t scenarioSeed() {
  uint64_t Seed;
  if (const char *Env = std::getenv("JITLOCK_SAFEPOINT_SEED"))
    Seed = std::strtoull(Env, nullptr, 0);
  else
    Seed = (uint64_t(std::random_device()()) << 32) ^ std::random_device()();
  std::printf("safepoint scenarios: JITLOCK_SAFEPOINT_SEED=%llu\n",
              static_cast<unsigned long long>(Seed));
  std::fflush(stdout);
  ::testing::Test::RecordProperty("seed", std::to_string(Seed));
  return Seed;
}

/// An attached thread that runs `Run(Ctx)` and detaches. It waits for the
/// start in `native`.
class LoopThread {
public:
  LoopThread(LoopCtx &Ctx, std::function<void(LoopCtx &)> Run) {
    Thread = std::thread([this, &Ctx, Run = std::move(Run)] {
      Ctx.Thread = jitlock_rt_attach();
      EXPECT_NE(Ctx.Thread, nullptr);
      EXPECT_EQ(jitlock_rt_enter_native(Ctx.Thread), JITLOCK_OK);
      Attached = true;
      while (!Go.load())
        std::this_thread::yield();
      EXPECT_EQ(jitlock_rt_leave_native(Ctx.Thread), JITLOCK_OK);
      Run(Ctx);
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
    EXPECT_TRUE(waitUntil([&] { return Attached.load(); }));
  }
  ~LoopThread() {
    Go = true;
    join();
  }
  void start() { Go = true; }
  void join() {
    if (Thread.joinable())
      Thread.join();
  }

private:
  std::atomic<bool> Attached{false}, Go{false};
  std::thread Thread;
};

/// On the way out of a scenario, an assertion's early return included: no
/// safepoint left held, and every loop asked to stop, so that the
/// LoopThreads (declared before it) can be joined.
class StopOnExit {
public:
  explicit StopOnExit(std::vector<LoopCtx *> Ctx) : Ctx(std::move(Ctx)) {}
  ~StopOnExit() {
    if (jitlock_rt_in_safepoint()) {
      EXPECT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);
    }
    for (LoopCtx *C : Ctx)
      requestStop(*C);
  }
  StopOnExit(const StopOnExit &) = delete;
  StopOnExit &operator=(const StopOnExit &) = delete;

private:
  std::vector<LoopCtx *> Ctx;
};

inline void expectUnattachedVmThread() {
  ASSERT_EQ(jitlock_rt_current(), nullptr)
      << "the scenarios' VM thread must not be attached";
}

//===-- Scenario: one thread stopped at its poll -------------------------===//

/// `Run` runs a probe loop whose slow path reaches countedSafepointPoll.
inline void stopAtPoll(const LoopRunner &Run) {
  expectUnattachedVmThread();
  PollCounts &C = pollCounts();
  C.reset();
  LoopCtx Ctx;
  LoopThread W(Ctx, Run);
  StopOnExit Guard({&Ctx});
  W.start();
  // Disarmed: the loop runs without ever calling the runtime.
  ASSERT_TRUE(waitUntil([&] { return iterations(Ctx) >= 1000; }));
  EXPECT_EQ(C.Entered.load(), 0u) << "a disarmed poll called the runtime";

  ASSERT_EQ(beginSafepoint(), JITLOCK_OK);
  // S4 saw the thread safe. Looping in managed code, it can only have got
  // there through its poll: P2 has stopped it (B2, blocked).
  EXPECT_EQ(C.Entered.load(), 1u) << "the armed poll did not call P2 once";
  EXPECT_EQ(C.Returned.load(), 0u);
  EXPECT_EQ(C.LastThread.load(), Ctx.Thread) << "P2's argument";
  EXPECT_EQ(jitlock_rt_thread_state(Ctx.Thread), int(JITLOCK_THREAD_BLOCKED));
  const uint64_t Held = iterations(Ctx);
  hold(20000);
  EXPECT_EQ(iterations(Ctx), Held) << "the loop ran during the safepoint";
  EXPECT_EQ(C.Returned.load(), 0u) << "P2 returned inside the safepoint";
  ASSERT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);

  // Released: P2 returns and the loop goes on, its polls disarmed again.
  EXPECT_TRUE(waitUntil([&] {
    return C.Returned.load() == 1 && iterations(Ctx) >= Held + 1000;
  })) << "the thread did not resume after the safepoint";
  EXPECT_EQ(C.Entered.load(), 1u) << "one safepoint, one slow call";
  requestStop(Ctx);
  W.join();
}

//===-- Scenario: a handshake run at the poll ----------------------------===//

struct HandshakeAtPollRecord {
  const LoopCtx *Ctx = nullptr;
  std::atomic<int> Runs{0};
  jitlock_thread *Target = nullptr, *RanOn = nullptr;
  uint64_t Before = 0, After = 0;
};

inline void handshakeAtPoll(const LoopRunner &Run) {
  expectUnattachedVmThread();
  PollCounts &C = pollCounts();
  C.reset();
  LoopCtx Ctx;
  LoopThread W(Ctx, Run);
  StopOnExit Guard({&Ctx});
  W.start();
  ASSERT_TRUE(waitUntil([&] { return iterations(Ctx) >= 1000; }));
  EXPECT_EQ(C.Entered.load(), 0u) << "a disarmed poll called the runtime";

  HandshakeAtPollRecord Rec;
  Rec.Ctx = &Ctx;
  auto Op = [](void *Arg, jitlock_thread *Target) {
    auto &R = *static_cast<HandshakeAtPollRecord *>(Arg);
    ++R.Runs;
    R.Target = Target;
    R.RanOn = jitlock_rt_current();
    R.Before = iterations(*R.Ctx);
    hold(2000);
    R.After = iterations(*R.Ctx);
  };
  {
    OperationWatchdog Watch("jitlock_rt_handshake");
    ASSERT_EQ(jitlock_rt_handshake(Ctx.Thread, Op, &Rec), JITLOCK_OK);
  }
  EXPECT_EQ(Rec.Runs.load(), 1) << "the handshake must run exactly once";
  EXPECT_EQ(Rec.Target, Ctx.Thread);
  // The target loops in managed code and is never safe, so the requester
  // cannot run the operation (K3): the target runs it in its poll (K4).
  EXPECT_EQ(Rec.RanOn, Ctx.Thread) << "not run by the target at its poll";
  EXPECT_EQ(Rec.Before, Rec.After) << "the loop ran during the operation";
  EXPECT_TRUE(waitUntil([&] {
    return C.Returned.load() == 1 && iterations(Ctx) >= Rec.After + 1000;
  })) << "the thread did not resume after the handshake";
  EXPECT_EQ(C.Entered.load(), 1u) << "one handshake, one slow call";
  EXPECT_EQ(C.LastThread.load(), Ctx.Thread) << "P2's argument";
  requestStop(Ctx);
  W.join();
  EXPECT_EQ(Rec.Runs.load(), 1);
}

//===-- Scenario: many threads, many safepoints and handshakes -----------===//

struct WorldConfig {
  /// One entry per thread: whether its program is a locked one.
  std::vector<bool> Locked;
  unsigned Safepoints = 100;
  unsigned HandshakeRounds = 20;
  /// The longest a safepoint is held, and the longest pause between two.
  uint64_t MaxHoldUs = 300, MaxGapUs = 200;
  uint64_t Seed = 0;
  /// The layout of the shared object's header (jitlock_rt_get_layout).
  jitlock_rt_layout Layout{};
};

/// The object the locked programs share, its header at the layout's offset.
struct alignas(64) SharedObject {
  uint64_t Words[8] = {};
  void *init(const jitlock_rt_layout &L) {
    Words[4] = L.unlocked_value;
    return reinterpret_cast<char *>(&Words[4]) - L.header_offset;
  }
};

struct WorldHandshakes {
  std::mutex Mu;
  std::map<jitlock_thread *, unsigned> Runs;
  std::map<jitlock_thread *, const LoopCtx *> CtxOf;
  unsigned MovedDuringOp = 0, UnknownTarget = 0;
};

inline void worldHandshakeOp(void *Arg, jitlock_thread *Target) {
  auto &H = *static_cast<WorldHandshakes *>(Arg);
  const LoopCtx *Ctx;
  {
    std::lock_guard<std::mutex> G(H.Mu);
    auto It = H.CtxOf.find(Target);
    if (It == H.CtxOf.end()) {
      ++H.UnknownTarget;
      return;
    }
    Ctx = It->second;
    ++H.Runs[Target];
  }
  // Run by the target at its poll, or by the requester while the target is
  // parked on the monitor (blocked): either way its loop stands still.
  const uint64_t Before = iterations(*Ctx);
  hold(50);
  if (iterations(*Ctx) != Before) {
    std::lock_guard<std::mutex> G(H.Mu);
    ++H.MovedDuringOp;
  }
}

inline void runWorld(const WorldConfig &Cfg, const WorldRunner &Run) {
  expectUnattachedVmThread();
  SCOPED_TRACE("JITLOCK_SAFEPOINT_SEED=" + std::to_string(Cfg.Seed));
  const unsigned N = unsigned(Cfg.Locked.size());
  std::mt19937_64 Rng(Cfg.Seed);
  SharedObject Object;
  void *Obj = Object.init(Cfg.Layout);
  uint64_t Shared = 0;
  std::vector<std::unique_ptr<LoopCtx>> Ctx;
  std::vector<std::unique_ptr<LoopThread>> Threads;
  for (unsigned I = 0; I < N; ++I) {
    Ctx.push_back(std::make_unique<LoopCtx>());
    Ctx[I]->Obj = Obj;
    Ctx[I]->Shared = &Shared;
    Threads.push_back(std::make_unique<LoopThread>(
        *Ctx[I], [&Run, I](LoopCtx &C) { Run(I, C); }));
  }
  std::vector<LoopCtx *> AllCtx;
  for (auto &C : Ctx)
    AllCtx.push_back(C.get());
  StopOnExit Guard(AllCtx);
  for (auto &T : Threads)
    T->start();
  auto Snapshot = [&] {
    std::vector<uint64_t> S;
    for (auto &C : Ctx)
      S.push_back(iterations(*C));
    S.push_back(__atomic_load_n(&Shared, __ATOMIC_RELAXED));
    return S;
  };
  auto EveryoneMovedSince = [&](const std::vector<uint64_t> &S) {
    for (unsigned I = 0; I < N; ++I)
      if (iterations(*Ctx[I]) <= S[I])
        return false;
    return true;
  };
  ASSERT_TRUE(waitUntil([&] {
    return EveryoneMovedSince(std::vector<uint64_t>(N + 1, 0));
  })) << "not every loop started";

  // Safepoints: nothing moves while one is held; everyone moves after it.
  unsigned Moved = 0, NotBlocked = 0, Stuck = 0;
  uint64_t HeldUs = 0;
  for (unsigned S = 0; S < Cfg.Safepoints && !Stuck; ++S) {
    ASSERT_EQ(beginSafepoint(), JITLOCK_OK) << "safepoint " << S;
    const std::vector<uint64_t> At = Snapshot();
    // Stopped at a poll, or parked on the monitor: blocked either way.
    for (auto &C : Ctx)
      NotBlocked +=
          jitlock_rt_thread_state(C->Thread) != int(JITLOCK_THREAD_BLOCKED);
    const uint64_t Us = Rng() % (Cfg.MaxHoldUs + 1);
    hold(Us);
    HeldUs += Us;
    Moved += Snapshot() != At;
    ASSERT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK) << "safepoint " << S;
    if (!waitUntil([&] { return EveryoneMovedSince(At); }))
      ++Stuck;
    hold(Rng() % (Cfg.MaxGapUs + 1));
  }
  EXPECT_EQ(Moved, 0u) << "a counter moved while a safepoint was held";
  EXPECT_EQ(NotBlocked, 0u) << "a thread was not blocked in a safepoint";
  EXPECT_EQ(Stuck, 0u) << "a thread did not move after a safepoint ended";

  // Handshakes: each runs exactly once per target.
  WorldHandshakes H;
  for (auto &C : Ctx)
    H.CtxOf[C->Thread] = C.get();
  std::map<jitlock_thread *, unsigned> Want;
  for (unsigned R = 0; R < Cfg.HandshakeRounds; ++R) {
    OperationWatchdog Watch("a handshake");
    if (R % 2 == 0) {
      ASSERT_EQ(jitlock_rt_handshake_all(worldHandshakeOp, &H), JITLOCK_OK);
      for (auto &C : Ctx)
        ++Want[C->Thread];
    } else {
      jitlock_thread *T = Ctx[Rng() % N]->Thread;
      ASSERT_EQ(jitlock_rt_handshake(T, worldHandshakeOp, &H), JITLOCK_OK);
      ++Want[T];
    }
    std::lock_guard<std::mutex> G(H.Mu);
    ASSERT_EQ(H.Runs, Want) << "after handshake round " << R;
  }
  EXPECT_EQ(H.UnknownTarget, 0u) << "a handshake ran for another thread";
  EXPECT_EQ(H.MovedDuringOp, 0u) << "a loop ran during its handshake";

  for (auto &C : Ctx)
    requestStop(*C);
  for (auto &T : Threads)
    T->join();
  uint64_t LockedIterations = 0;
  for (unsigned I = 0; I < N; ++I)
    if (Cfg.Locked[I])
      LockedIterations += Ctx[I]->Iterations;
  EXPECT_EQ(Shared, LockedIterations) << "an update under the monitor was lost";
  jitlock_lock_info Info{};
  ASSERT_EQ(jitlock_rt_inspect(Obj, &Info), JITLOCK_OK);
  EXPECT_EQ(Info.owner, nullptr);
  EXPECT_EQ(Info.holds, 0u);
  // The object lives in this frame: like a collector about to free it, give
  // it its header back before it goes (a monitor the runtime kept would be
  // written to at shutdown).
  jitlock_rt_deflate_idle();
  ASSERT_EQ(jitlock_rt_inspect(Obj, &Info), JITLOCK_OK);
  EXPECT_EQ(Info.state, uint32_t(JITLOCK_STATE_UNLOCKED))
      << "the shared object kept its monitor";
  std::printf("safepoint scenarios: %u threads, %u safepoints (held %llu us "
              "in all), %u handshake rounds, %llu locked iterations\n",
              N, Cfg.Safepoints, static_cast<unsigned long long>(HeldUs),
              Cfg.HandshakeRounds,
              static_cast<unsigned long long>(LockedIterations));
}

} // namespace safepoint_scenarios

#endif // JITLOCK_UNITTESTS_EMITTERS_SAFEPOINTSCENARIOS_H
