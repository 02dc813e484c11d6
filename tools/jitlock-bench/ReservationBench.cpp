//===- ReservationBench.cpp - Lock reservation handed off and revoked -----===//
//
// handoff/llvm and handoff/reserved: two threads take turns over 256 objects
// (reservable at allocation), a whole round each: the benchmark thread locks
// and unlocks every object once, then its partner does, and so on. Under
// reserved locking the first round reserves every object (R2) and the
// partner's first round revokes each (R3, a handshake with the benchmark
// thread); a revoked object is never reserved again, so after the warm-up
// rounds (untimed) both modes lock by a lightweight CAS, reserved mode's
// inline paths with a compare against the thread's tag besides. ns_per_pair
// is the median round's time per pair: the turns' hand-over (a wake-up on a
// loaded machine) and the rounds a preemption stretched are left out, as
// they would swamp the locking. Also the run's revocations, threads_stopped
// and the timed rounds' runtime calls per pair (none for either mode).
//
// revoke/held and revoke/unheld: a reserving thread locks a fresh object
// (reserving it) and keeps it locked or unlocks it, then polls; the benchmark
// thread, the contender, locks it. Per revocation: revoke_*_ns from the
// contender's enter to the moment the reserving thread, back from its poll,
// sees the reservation gone, and enter_*_ns the contender's whole first
// enter (for a held object, up to the holder's unlock).
//
// The handoff threads share one CPU, the revoke threads have one each
// (Handoff::Cpu, Revoker::Cpu). Every waiting loop polls (the revocation
// handshake runs at the waiting thread's poll) and gives up after
// WaitLimit, failing the run.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <sched.h>
#include <utility>
#include <vector>

namespace jitlock::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto WaitLimit = std::chrono::seconds(10);
constexpr const char *TimedOut =
    "a waiting thread timed out: a handshake or a turn was never served";

void pollIfArmed(jitlock_thread *T, const jitlock_rt_layout &L) {
  auto *Word = reinterpret_cast<std::atomic<uint64_t> *>(
      reinterpret_cast<char *>(T) + L.poll_word_offset);
  if (Word->load(std::memory_order_relaxed) & L.poll_armed_bit)
    jitlock_rt_safepoint_poll(T);
}

/// Waits until Ready(), polling each time round (a revocation of one of T's
/// reservations runs there), yielding once the first spins found nothing.
/// False when Abort is set or WaitLimit passes; a timeout sets Abort, so
/// that the other thread gives up too.
bool waitPolling(jitlock_thread *T, const jitlock_rt_layout &L,
                 std::atomic<bool> &Abort, const std::function<bool()> &Ready) {
  const Clock::time_point Deadline = Clock::now() + WaitLimit;
  for (unsigned Spins = 0;; ++Spins) {
    if (Ready())
      return true;
    pollIfArmed(T, L);
    if (Spins < 64)
      continue;
    if (Abort.load(std::memory_order_relaxed))
      return false;
    if (Spins % 64 == 0 && Clock::now() > Deadline) {
      Abort.store(true);
      return false;
    }
    std::this_thread::yield();
  }
}

/// Binds the calling thread to `Cpu`, when the system lets it.
void pinTo(int Cpu) {
  cpu_set_t Set;
  CPU_ZERO(&Set);
  CPU_SET(Cpu, &Set);
  sched_setaffinity(0, sizeof(Set), &Set);
}

/// Binds the calling thread to the CPU it runs on until restore() or the
/// end of the scope, then gives it back the CPUs it had.
class PinnedHere {
  cpu_set_t Saved;
  bool Restored = false;

public:
  const int Cpu = sched_getcpu();
  PinnedHere() {
    sched_getaffinity(0, sizeof(Saved), &Saved);
    pinTo(Cpu);
  }
  ~PinnedHere() { restore(); }
  void restore() {
    if (!std::exchange(Restored, true))
      sched_setaffinity(0, sizeof(Saved), &Saved);
  }
  /// Another CPU the thread may run on, or its own when it has no other.
  int otherCpu() const {
    for (int I = 1; I < CPU_SETSIZE; ++I)
      if (CPU_ISSET((Cpu + I) % CPU_SETSIZE, &Saved))
        return (Cpu + I) % CPU_SETSIZE;
    return Cpu;
  }
};

/// Joins `Other` in the native state, where a handshake it may still be
/// waiting for (one that timed out here) is run for `Self` without it.
void joinSafe(std::thread &Other, jitlock_thread *Self) {
  jitlock_rt_enter_native(Self);
  Other.join();
  jitlock_rt_leave_native(Self);
}

uint64_t loadHeader(const Object &O) {
  return __atomic_load_n(&O.Header, __ATOMIC_ACQUIRE);
}

uint64_t reserveTagOf(jitlock_thread *T, const jitlock_rt_layout &L) {
  uint64_t Tag;
  memcpy(&Tag, reinterpret_cast<const char *>(T) + L.reserve_tag_offset,
         sizeof(Tag));
  return Tag;
}

/// A freshly allocated object, marked reservable (a no-op unless the
/// runtime is in reserved mode).
void allocate(Object &O, const jitlock_rt_layout &L) {
  resetObject(O);
  O.Header |= L.reservable_value;
}

jitlock_reservation_stats reservationStats() {
  jitlock_reservation_stats S{};
  S.struct_size = sizeof(S);
  jitlock_rt_fill_reservation_stats(&S);
  return S;
}

uint64_t revocations(const jitlock_reservation_stats &S) {
  return S.revocations_held + S.revocations_unheld + S.revocations_detached;
}

/// The nearest-rank percentile Q of sorted samples.
double rank(const std::vector<double> &Sorted, double Q) {
  size_t K = size_t(std::ceil(Q * double(Sorted.size())));
  return Sorted[std::min(Sorted.size(), std::max<size_t>(K, 1)) - 1];
}

void setupReservedLocking(const benchmark::State &) {
  int RC = setRuntimeConfig(JITLOCK_LOCKING_RESERVED, JITLOCK_MONITORS_POINTER);
  SetupError = RC == JITLOCK_OK ? ""
                                : std::string("cannot configure reserved "
                                              "locking: ") +
                                      jitlock_rt_status_name(RC);
}

/// Fails the run unless the runtime is in `Mode`; returns the layout.
bool checkMode(benchmark::State &St, uint32_t Mode, jitlock_rt_layout &L) {
  jitlock_rt_get_layout(&L);
  if (!SetupError.empty())
    St.SkipWithError(SetupError.c_str());
  else if (L.locking_mode != Mode)
    St.SkipWithError("the runtime is in the wrong locking mode");
  return SetupError.empty() && L.locking_mode == Mode;
}

//===----------------------------------------------------------------------===//
// handoff
//===----------------------------------------------------------------------===//

constexpr unsigned HandoffObjects = 256, HandoffWarmupRounds = 4;
alignas(64) Object HandoffObjs[HandoffObjects];

struct Handoff {
  Handoff(const jitlock_rt_layout &L, KernelFn Fn) : L(L), Fn(Fn) {}
  const jitlock_rt_layout &L;
  KernelFn Fn;
  /// Rounds done; the benchmark thread's turn while even.
  std::atomic<uint64_t> Rounds{0};
  /// Each thread's rounds' times (not the waits for a turn), written only
  /// in its turn.
  std::vector<double> RoundNs[2];
  std::atomic<bool> Stop{false}, Abort{false};
  std::string PartnerError;
  /// Both threads run on this CPU: the objects' cache lines stay put, and
  /// the scheduler cannot move one thread's rounds between a CPU that has
  /// them and one that must fetch them.
  int Cpu = -1;

  /// Waits for the turn of thread `Parity`, then runs its round.
  bool takeTurn(jitlock_thread *T, uint64_t Parity) {
    if (!waitPolling(T, L, Abort,
                     [&] { return (Rounds.load() & 1) == Parity; }))
      return false;
    const Clock::time_point Start = Clock::now();
    for (Object &O : HandoffObjs)
      callKernel(Fn, T, &O, nullptr, 1);
    RoundNs[Parity].push_back(
        double(std::chrono::nanoseconds(Clock::now() - Start).count()));
    Rounds.fetch_add(1);
    return true;
  }

  void partner() {
    pinTo(Cpu);
    jitlock_thread *T = jitlock_rt_attach();
    if (!T) {
      PartnerError = "jitlock_rt_attach failed";
      Abort.store(true);
      return;
    }
    while (waitPolling(T, L, Abort,
                       [&] { return Stop.load() || (Rounds.load() & 1); }) &&
           !Stop.load())
      takeTurn(T, 1);
    if (jitlock_rt_detach() != JITLOCK_OK)
      PartnerError = "jitlock_rt_detach failed: a lock is still held";
  }
};

/// Detaches the benchmark thread at the end of a run; false, with the run
/// skipped (once), when that or anything before it failed.
bool detachOrSkip(benchmark::State &St, std::string &Error) {
  if (jitlock_rt_detach() != JITLOCK_OK && Error.empty())
    Error = "jitlock_rt_detach failed: a lock is still held";
  if (St.error_occurred())
    return false;
  if (!Error.empty())
    St.SkipWithError(Error.c_str());
  return Error.empty();
}

void runHandoff(benchmark::State &St, uint32_t Mode) {
  jitlock_rt_layout L;
  if (!checkMode(St, Mode, L))
    return;
  std::string Error;
  KernelFn Fn =
      Mode == JITLOCK_LOCKING_RESERVED
          ? (LlvmReserved ? kernelOf(*LlvmReserved, KSimple, Error) : nullptr)
          : kernelOf(*Llvm, KSimple, Error);
  if (!Fn)
    return St.SkipWithError(Error.empty() ? ReservedError.c_str()
                                          : Error.c_str());
  jitlock_thread *T = jitlock_rt_attach();
  if (!T)
    return St.SkipWithError("jitlock_rt_attach failed");
  for (Object &O : HandoffObjs)
    allocate(O, L);
  KernelFailed = false;
  const jitlock_reservation_stats Before = reservationStats();

  Handoff H(L, Fn);
  PinnedHere Pin;
  H.Cpu = Pin.Cpu;
  std::thread Partner([&H] { H.partner(); });
  jitlock_rt_stats TimedStart{}, TimedEnd{};
  // Stops the partner after its last round; the run's error, if any.
  auto Finish = [&](bool Ok) {
    Ok = Ok && waitPolling(T, L, H.Abort, [&] { return !(H.Rounds & 1); });
    jitlock_rt_get_stats(&TimedEnd); // the partner still attached
    H.Stop.store(true);
    joinSafe(Partner, T);
    if (!Ok || !H.PartnerError.empty())
      Error = H.PartnerError.empty() ? TimedOut : H.PartnerError;
  };
  bool Ok = true;
  for (unsigned I = 0; I != HandoffWarmupRounds && Ok; ++I)
    Ok = H.takeTurn(T, 0);
  // Timed from the end of the partner's last warm-up round.
  Ok = Ok && waitPolling(T, L, H.Abort, [&] { return !(H.Rounds & 1); });
  H.RoundNs[0].clear();
  H.RoundNs[1].clear();
  jitlock_rt_get_stats(&TimedStart);
  for (auto _ : St)
    if (!Ok || !(Ok = H.takeTurn(T, 0))) {
      Finish(false);
      St.SkipWithError(Error.c_str());
      break;
    }
  if (Ok)
    Finish(true);
  const jitlock_reservation_stats After = reservationStats();

  if (Error.empty() && KernelFailed)
    Error = "a runtime call failed";
  if (Error.empty() && !H.PartnerError.empty())
    Error = H.PartnerError;
  const uint64_t Rounds = H.Rounds.load();
  for (const Object &O : HandoffObjs)
    if (Error.empty() && O.Payload != Rounds)
      Error = "lost updates: an object's payload is " +
              std::to_string(O.Payload) + " after " + std::to_string(Rounds) +
              " rounds";
  // Reserved by the first round (inline, uncounted), each revoked by the
  // partner's first lock, and never reserved again.
  const uint64_t Revocations = revocations(After) - revocations(Before);
  const uint64_t Expected =
      Mode == JITLOCK_LOCKING_RESERVED ? HandoffObjects : 0;
  if (Error.empty() && Revocations != Expected)
    Error = std::to_string(Revocations) + " revocations, expected " +
            std::to_string(Expected);
  Pin.restore();
  jitlock_rt_deflate_idle();
  for (const Object &O : HandoffObjs)
    if (Error.empty() && O.Header != 1)
      Error = "an object is not unlocked and unreservable after the run";
  jitlock_rt_stats End{};
  jitlock_rt_get_stats(&End);
  if (!detachOrSkip(St, Error))
    return;

  const uint64_t Pairs = uint64_t(St.iterations()) * 2 * HandoffObjects;
  std::vector<double> &Times = H.RoundNs[0];
  Times.insert(Times.end(), H.RoundNs[1].begin(), H.RoundNs[1].end());
  std::sort(Times.begin(), Times.end());
  St.counters["ns_per_pair"] =
      Times.empty() ? 0 : rank(Times, 0.5) / HandoffObjects;
  St.counters["revocations"] = double(Revocations);
  St.counters["slow_calls_per_pair"] =
      Pairs ? double(TimedEnd.slow_path_calls - TimedStart.slow_path_calls) /
                  double(Pairs)
            : 0;
  St.counters["threads_stopped"] =
      double(After.threads_stopped - Before.threads_stopped);
  St.counters["monitors_alive"] = double(End.monitors_alive);
}

//===----------------------------------------------------------------------===//
// revoke
//===----------------------------------------------------------------------===//

/// Fresh objects for the samples; the pool is reused after a deflation.
constexpr unsigned RevokePool = 1024;
alignas(64) Object RevokeObjs[RevokePool];

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             Clock::now().time_since_epoch())
      .count();
}

/// The reserving thread's side of the samples: sample N is asked for by
/// Asked == N, its object ready (reserved, held or not) at Ready == N, its
/// revocation seen at RevokedAt, and done (released) at Done == N.
struct Revoker {
  Revoker(const jitlock_rt_layout &L, bool Held) : L(L), Held(Held) {}
  const jitlock_rt_layout &L;
  bool Held;
  std::atomic<Object *> Target{nullptr};
  std::atomic<uint64_t> Asked{0}, Ready{0}, Done{0};
  std::atomic<int64_t> RevokedAt{0};
  std::atomic<bool> Stop{false}, Abort{false};
  std::string Error;
  /// A CPU of its own, away from the contender's: neither thread's waiting
  /// (the contender's spin on a held object) delays the other's part of the
  /// handshake, and the median moves far less with the machine's load.
  int Cpu = -1;

  bool fail(const char *Why) {
    Error = Why;
    Abort.store(true);
    return false;
  }

  /// Sample N: reserve (and hold) the target, then poll until a
  /// revocation takes the reservation away.
  bool serve(jitlock_thread *&T, uint64_t N) {
    // A thread past reserve_revoke_limit no longer reserves: a new
    // thread (attachment) takes over.
    if (reserveTagOf(T, L) == ~uint64_t(0) &&
        (jitlock_rt_detach() != JITLOCK_OK || !(T = jitlock_rt_attach())))
      return fail("cannot re-attach the reserving thread");
    Object &O = *Target.load();
    const uint64_t Tag = reserveTagOf(T, L);
    if (jitlock_rt_monitor_enter(T, &O) != JITLOCK_OK)
      return fail("the reserving thread's enter failed");
    if ((loadHeader(O) & L.reserve_mask) != Tag)
      return fail("the first lock of a fresh object did not reserve it");
    if (!Held && jitlock_rt_monitor_exit(T, &O) != JITLOCK_OK)
      return fail("the reserving thread's exit failed");
    Ready.store(N);
    if (!waitPolling(T, L, Abort,
                     [&] { return (loadHeader(O) & L.reserve_mask) != Tag; })) {
      if (Held) // let the contender in when this thread detaches
        jitlock_rt_monitor_exit(T, &O);
      return fail(TimedOut);
    }
    RevokedAt.store(nowNs());
    if (Held && jitlock_rt_monitor_exit(T, &O) != JITLOCK_OK)
      return fail("the holder's exit after the revocation failed");
    Done.store(N);
    return true;
  }

  void run() {
    pinTo(Cpu);
    jitlock_thread *T = jitlock_rt_attach();
    if (!T) {
      fail("jitlock_rt_attach failed");
      return;
    }
    for (uint64_t N = 1;; ++N)
      if (!waitPolling(T, L, Abort,
                       [&] { return Stop.load() || Asked.load() == N; }) ||
          Stop.load() || !serve(T, N))
        break;
    if (jitlock_rt_detach() != JITLOCK_OK && Error.empty())
      Error = "jitlock_rt_detach failed: a lock is still held";
  }
};

void reportNs(benchmark::State &St, const std::string &Prefix,
              std::vector<double> &Ns) {
  if (Ns.empty())
    return;
  std::sort(Ns.begin(), Ns.end());
  St.counters[Prefix + "_median_ns"] = rank(Ns, 0.5);
  St.counters[Prefix + "_p99_ns"] = rank(Ns, 0.99);
}

void runRevoke(benchmark::State &St, bool Held) {
  jitlock_rt_layout L;
  if (!checkMode(St, JITLOCK_LOCKING_RESERVED, L))
    return;
  jitlock_thread *T = jitlock_rt_attach();
  if (!T)
    return St.SkipWithError("jitlock_rt_attach failed");
  const jitlock_reservation_stats Before = reservationStats();
  Revoker R(L, Held);
  PinnedHere Pin;
  R.Cpu = Pin.otherCpu();
  std::thread Reserving([&R] { R.run(); });
  std::vector<double> RevokeNs, EnterNs;
  std::string Error;
  // Stops the reserving thread; the run's error, if any.
  auto Finish = [&](const char *Why) {
    R.Stop.store(true);
    joinSafe(Reserving, T);
    if (Why)
      Error = R.Error.empty() ? Why : R.Error;
  };
  uint64_t N = 0;
  for (auto _ : St) {
    Object &O = RevokeObjs[N % RevokePool];
    if (N % RevokePool == 0 && N)
      jitlock_rt_deflate_idle(); // the pool's last use inflated some
    allocate(O, L);
    R.Target.store(&O);
    R.Asked.store(++N);
    if (!waitPolling(T, L, R.Abort, [&] { return R.Ready.load() == N; })) {
      Finish(TimedOut);
      St.SkipWithError(Error.c_str());
      break;
    }
    const int64_t Start = nowNs();
    const bool Entered = jitlock_rt_monitor_enter(T, &O) == JITLOCK_OK;
    const int64_t EnteredAt = nowNs();
    if (!Entered || jitlock_rt_monitor_exit(T, &O) != JITLOCK_OK ||
        !waitPolling(T, L, R.Abort, [&] { return R.Done.load() == N; })) {
      Finish(Entered ? TimedOut : "the contender's enter or exit failed");
      St.SkipWithError(Error.c_str());
      break;
    }
    RevokeNs.push_back(double(R.RevokedAt.load() - Start));
    EnterNs.push_back(double(EnteredAt - Start));
  }
  if (Reserving.joinable())
    Finish(R.Error.empty() ? nullptr : "");
  const jitlock_reservation_stats After = reservationStats();
  // Every sample revoked once, with the object held or not as asked.
  const uint64_t Counted =
      Held ? After.revocations_held - Before.revocations_held
           : After.revocations_unheld - Before.revocations_unheld;
  if (Error.empty() && Counted != N)
    Error = std::to_string(Counted) + (Held ? " held" : " unheld") +
            " revocations counted for " + std::to_string(N) + " samples";
  Pin.restore();
  jitlock_rt_deflate_idle();
  jitlock_rt_stats End{};
  jitlock_rt_get_stats(&End);
  if (!detachOrSkip(St, Error))
    return;
  reportNs(St, "revoke", RevokeNs);
  reportNs(St, "enter", EnterNs);
  St.counters["revocations"] = double(Counted);
  St.counters["monitors_alive"] = double(End.monitors_alive);
}

} // namespace

void registerReservationBenchmarks() {
  benchmark::RegisterBenchmark(
      "handoff/llvm",
      [](benchmark::State &St) { runHandoff(St, JITLOCK_LOCKING_LIGHTWEIGHT); })
      ->UseRealTime()
      ->Setup(setupLightweight);
  benchmark::RegisterBenchmark(
      "handoff/reserved",
      [](benchmark::State &St) { runHandoff(St, JITLOCK_LOCKING_RESERVED); })
      ->UseRealTime()
      ->Setup(setupReservedLocking)
      ->Teardown(restoreDefaultConfig);
  for (bool Held : {true, false})
    benchmark::RegisterBenchmark(
        Held ? "revoke/held" : "revoke/unheld",
        [Held](benchmark::State &St) { runRevoke(St, Held); })
        ->UseRealTime()
        ->Setup(setupReservedLocking)
        ->Teardown(restoreDefaultConfig);
}

} // namespace jitlock::bench
