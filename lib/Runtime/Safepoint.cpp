//===- Safepoint.cpp - Thread states, safepoints and handshakes -----------===//
//
// THE SAFEPOINT PROTOCOL. LowerSafepoints and the emitters' emitSafepointPoll
// implement P1 and cite it.
//
// A thread is safe when it is native or blocked: from there it touches no
// object and no lock state before a transition back (T1), which checks for a
// stop in progress. Managed and runtime threads are unsafe.
//
// The poll, inline part:
//   P1  w = load thread.poll_word; if w & ArmedBit: call the slow path (P2).
//       Nothing else: the slow path re-reads the word and the counter.
// The poll, slow path (jitlock_rt_safepoint_poll):
//   P2  while the poll word is armed: if SafepointBit, stop (B1-B4); if
//       HandshakeBit, run the pending operation (K4).
//
// A safepoint (one at a time; the operation lock serializes safepoints,
// handshakes and detach):
//   S1  lock the operation lock and the thread registry (held until S6, so no
//       thread attaches or leaves meanwhile).
//   S2  id = counter + 1 (odd: in progress); arm the WaitBarrier with id, then
//       publish the counter (seq_cst).
//   S3  for every thread: poll_word |= SafepointBit | ArmedBit (seq_cst).
//   S4  wait until every thread is seen safe by a stable load: state, then
//       safepoint id, then state again (all seq_cst). Safe when both states
//       are equal and native or blocked, and the id is 0 or this safepoint's.
//       A thread blocked at the barrier of an earlier safepoint, or waking
//       from it (an old id), may run at any moment: unsafe until it comes
//       round again. Spin first, then yield, then sleep for growing periods.
// ... the caller's operation runs ...
//   S5  counter = id + 1 (even); clear SafepointBit on every poll word
//       (ArmedBit too unless a handshake is pending).
//   S6  disarm the WaitBarrier: every stopped thread wakes at once. Unlock.
//
// Stopping, on the stopping thread (from P2 or T1, in an unsafe state):
//   B1  id = counter; if even, return: the safepoint ended already.
//   B2  thread.safepoint_id = id, then thread.state = blocked (seq_cst):
//       the id first, so that S4 never takes a stale blocked for this one.
//   B3  WaitBarrier.wait(id): returns at once if the barrier is no longer
//       armed with id.
//   B4  thread.state = the previous state, then safepoint_id = 0.
//
// Transitions to an unsafe state (leave_native, leaving blocked):
//   T1  thread.state = managed or runtime (seq_cst), then load the poll word
//       (seq_cst); if armed, P2. Against S3-S4 this is Dekker's pattern: S4
//       reads the state after S3's store, T1 reads the poll word after its
//       own store, so either S4 sees the thread unsafe and waits, or T1 sees
//       the poll armed and stops.
//   T2  entering native or blocked is a plain seq_cst store: becoming safe
//       never waits.
//
// A handshake (handshake_all is K1-K5 for each target at once):
//   K1  lock the operation lock (blocked while waiting, for an attached
//       requester); no safepoint or other handshake runs from here to K5,
//       and no target can leave: detach takes the operation lock too.
//   K2  under target.handshake.lock, set target.pending = op; then
//       poll_word |= HandshakeBit | ArmedBit.
//   K3  requester: until op is done: try target.handshake.lock; holding it,
//       if op is still pending and the stable load (S4's, id 0) sees the
//       target safe, take op, run it there, then clear HandshakeBit. The
//       target cannot leave its safe state meanwhile: its T1 sees HandshakeBit
//       (still set while op runs) and waits for the lock at K4.
//   K4  target, at P2 or T1: under its own handshake.lock, take op if still
//       pending, clear HandshakeBit and run it.
//   K5  whoever ran op marks it done last: the requester may free it then.
//   So op runs exactly once: taking it from `pending` under the lock is the
//   one decision.
//
// Parking is blocked (T2 before the park, T1 after it), so parked threads
// never delay a safepoint, and one that wakes during a safepoint stops
// before it touches the monitor it was woken for.
//
//===----------------------------------------------------------------------===//
#include "Safepoint.h"

#include "Config.h"
#include "Parker.h"
#include "WaitBarrier.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <sched.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace jitlock {

namespace {
/// Odd while a safepoint is in progress; its value is the safepoint's id.
std::atomic<uint64_t> Counter{0};
WaitBarrier Barrier;
std::mutex OperationMutex;
/// Set on the OS thread that holds a safepoint (S1-S6).
thread_local bool HoldsSafepoint = false;
/// Set while the safepoint held is one jitlock_rt_safepoint_begin took (not
/// a SafepointScope's): only that one may be ended by the ABI.
thread_local bool ApiSafepoint = false;
/// SafepointScopes open on this thread.
thread_local unsigned OpenScopes = 0;
/// Nonzero while this thread requests a handshake or runs a handshake
/// operation: it may then start no other VM operation, since the operation
/// lock is held for it (by it, or by the requester it runs for).
thread_local unsigned BusyInOperation = 0;

struct BusyScope {
  BusyScope() { ++BusyInOperation; }
  ~BusyScope() { --BusyInOperation; }
};

/// Set once the thread's SafepointExitHook has run. Trivially destructible,
/// so that a begin from a later TLS destructor can still read it.
thread_local bool SafepointExitHookRan = false;

/// Releases, as its thread exits, a safepoint the thread still holds: the
/// operation lock and the thread registry would otherwise stay locked for
/// good. Armed by the thread's first jitlock_rt_safepoint_begin, attached or
/// not (only attached threads have the exit hook of Runtime.cpp); whichever
/// of the two runs first releases it.
struct SafepointExitHook {
  /// Written by begin, which is what registers the destructor.
  bool Armed = false;
  ~SafepointExitHook();
};
thread_local SafepointExitHook ExitHook;

/// Set on an attached thread that waited for the registry lock blocked:
/// it polls once it has released the lock (lockWhileSafe).
thread_local bool PollAfterRegistry = false;

constexpr auto SeqCst = std::memory_order_seq_cst;
} // namespace

/// A handshake operation for one target, owned by the requester.
struct HandshakeOp {
  HandshakeOp(jitlock_handshake_fn Fn, void *Arg, jitlock_thread *Target)
      : Fn(Fn), Arg(Arg), Target(Target) {}

  jitlock_handshake_fn Fn;
  void *Arg;
  jitlock_thread *Target;
  /// K5: Ran, with release, after Fn returned. A futex word: a requester
  /// about to sleep on it marks it Sleeping, and then whoever ran Fn wakes
  /// it; otherwise running Fn costs no system call.
  enum : uint32_t { Pending = 0, Ran = 1, Sleeping = 2 };
  std::atomic<uint32_t> Done{Pending};

  bool ran() const { return Done.load(std::memory_order_acquire) == Ran; }
  void run() {
    {
      BusyScope Busy;
      Fn(Arg, Target);
    }
    if (Done.exchange(Ran, std::memory_order_acq_rel) == Sleeping)
      wakeAll(Done);
  }
};

std::mutex &operationLock() { return OperationMutex; }
static void endSafepoint();

bool holdsSafepoint() { return HoldsSafepoint; }
bool inHandshake() { return BusyInOperation != 0; }

OperationMarks operationMarks() {
  return {HoldsSafepoint, BusyInOperation, OpenScopes};
}

void releaseSafepointAtExit() {
  if (!HoldsSafepoint)
    return;
  ApiSafepoint = false;
  OpenScopes = 0;
  endSafepoint();
}

SafepointExitHook::~SafepointExitHook() {
  SafepointExitHookRan = true;
  if (!HoldsSafepoint)
    return;
  misuse(JITLOCK_ESTATE, currentThread(), nullptr,
         "thread exited while holding a safepoint; released it");
  releaseSafepointAtExit();
}

void unwindOperations(const OperationMarks &Entry) {
  if (BusyInOperation > Entry.Busy) {
    // Its lock and its done flag are left behind with the frames: the
    // requester, and every later VM operation, would wait for good.
    fprintf(stderr, "jitlock: fatal: a stack overflow abandoned a handshake "
                    "operation, which cannot be completed\n");
    abort();
  }
  OpenScopes = Entry.Scopes;
  // A safepoint taken inside the abandoned frames is released, as the
  // locks they took are.
  if (HoldsSafepoint && !Entry.HeldSafepoint) {
    ApiSafepoint = false;
    endSafepoint();
  }
}

static void armPoll(jitlock_thread &T, uint64_t Reason) {
  T.PollWord.fetch_or(Reason | poll::ArmedBit, SeqCst);
}

static void disarmPoll(jitlock_thread &T, uint64_t Reason) {
  uint64_t W = T.PollWord.load(std::memory_order_relaxed);
  for (;;) {
    uint64_t Left = W & ~Reason & ~poll::ArmedBit;
    uint64_t New = Left ? Left | poll::ArmedBit : 0;
    if (T.PollWord.compare_exchange_weak(W, New, SeqCst,
                                         std::memory_order_relaxed))
      return;
  }
}

/// S4's stable load.
static bool isSafe(const jitlock_thread &T, uint64_t CurrentId) {
  uint32_t Before = T.State.load(SeqCst);
  uint64_t Id = T.SafepointId.load(SeqCst);
  uint32_t After = T.State.load(SeqCst);
  if (Before != After || (Id != 0 && Id != CurrentId))
    return false;
  return Before == JITLOCK_THREAD_NATIVE || Before == JITLOCK_THREAD_BLOCKED;
}

/// The waiting side of S4 and K3: spin, then yield, then sleep for growing
/// periods up to 1 ms, as a thread that has not reached a poll is usually
/// running (spin) or waiting for a core (yield, sleep).
class Backoff {
public:
  /// Waits a little longer each call. Past the spinning and yielding, it
  /// sleeps on `Word` while it holds `Value` (when given), so that a store
  /// and wake-up there end the sleep early.
  void pause(std::atomic<uint32_t> *Word = nullptr, uint32_t Value = 0) {
    ++Rounds;
    if (Rounds < 64) {
      spinPause();
    } else if (Rounds < 128) {
      sched_yield();
    } else {
      if (Word) {
        parkWhile(*Word, Value, monotonicNowNs() + SleepNs);
      } else {
        timespec Nap{0, long(SleepNs)};
        nanosleep(&Nap, nullptr);
      }
      SleepNs = SleepNs * 2 > 1000000 ? 1000000 : SleepNs * 2;
    }
  }

  /// Whether the next pause() sleeps.
  bool sleepsNext() const { return Rounds + 1 >= 128; }

private:
  unsigned Rounds = 0;
  uint64_t SleepNs = 1000;
};

/// B1-B4.
static void stopAtSafepoint(jitlock_thread &T) {
  uint64_t Id = Counter.load(SeqCst);
  if (Id % 2 == 0)
    return;
  uint32_t Prev = T.State.load(std::memory_order_relaxed);
  T.SafepointId.store(Id, SeqCst);
  T.State.store(JITLOCK_THREAD_BLOCKED, SeqCst);
  Barrier.wait(uint32_t(Id));
  T.State.store(Prev, SeqCst);
  T.SafepointId.store(0, SeqCst);
}

/// K4.
static void runOwnHandshake(jitlock_thread &T) {
  std::lock_guard<std::mutex> Guard(T.Handshake.Lock);
  HandshakeOp *Op = T.Handshake.Pending;
  if (!Op)
    return;
  T.Handshake.Pending = nullptr;
  disarmPoll(T, poll::HandshakeBit);
  Op->run();
}

/// P2.
static void pollSlowPath(jitlock_thread &T) {
  for (;;) {
    uint64_t W = T.PollWord.load(SeqCst);
    if (!(W & poll::ArmedBit))
      return;
    if (W & poll::SafepointBit)
      stopAtSafepoint(T);
    if (W & poll::HandshakeBit)
      runOwnHandshake(T);
    // S5 may not have cleared this thread's bit yet.
    spinPause();
  }
}

/// T1.
static void becomeUnsafe(jitlock_thread &T, uint32_t State) {
  T.State.store(State, SeqCst);
  if (T.PollWord.load(SeqCst) & poll::ArmedBit)
    pollSlowPath(T);
}

uint32_t enterBlocked(jitlock_thread &T) {
  uint32_t Prev = T.State.load(std::memory_order_relaxed);
  T.State.store(JITLOCK_THREAD_BLOCKED, SeqCst);
  return Prev;
}

void leaveBlocked(jitlock_thread &T, uint32_t Prev) {
  // Back to a safe state (a parked safepoint holder, for one) is T2.
  if (Prev == JITLOCK_THREAD_NATIVE || Prev == JITLOCK_THREAD_BLOCKED)
    T.State.store(Prev, SeqCst);
  else
    becomeUnsafe(T, Prev);
}

void restoreThreadState(jitlock_thread &T, uint32_t State) {
  if (T.State.load(std::memory_order_relaxed) != State)
    leaveBlocked(T, State);
}

bool parkBlocked(jitlock_thread &T, std::atomic<uint32_t> &Word, uint32_t Value,
                 uint64_t DeadlineNs) {
  uint32_t Prev = enterBlocked(T);
  bool InTime = parkWhile(Word, Value, DeadlineNs);
  leaveBlocked(T, Prev);
  return InTime;
}

/// Locks `M`; an attached, unsafe caller that has to wait is blocked until it
/// has `M`. Returns the state it then went back to, or ~0u when it did not
/// wait blocked.
static uint32_t lockBlocked(std::mutex &M) {
  if (M.try_lock())
    return ~0u;
  jitlock_thread *T = currentThread();
  uint32_t Prev = T ? T->State.load(std::memory_order_relaxed) : 0;
  if (!T || HoldsSafepoint || Prev == JITLOCK_THREAD_NATIVE ||
      Prev == JITLOCK_THREAD_BLOCKED) {
    M.lock();
    return ~0u;
  }
  enterBlocked(*T);
  M.lock();
  T->State.store(Prev, SeqCst);
  return Prev;
}

void lockWhileSafe(std::mutex &M) {
  // No safepoint or handshake is in progress while we hold the operation
  // lock, so T1's check finds nothing; it is made for form's sake. Holding
  // the deflation cycle lock, we may stop or run a handshake here: neither
  // ever waits for that lock.
  if (lockBlocked(M) != ~0u)
    pollSlowPath(*currentThread());
}

void lockRegistryWhileSafe(std::mutex &Registry) {
  // A handshake (which does not hold the registry) may have started running
  // for us while we waited. T1's poll check therefore comes once the lock is
  // released (pollAfterRegistry): a handshake run here, under the registry,
  // could not call the queries. Meanwhile we only run registry-protected
  // runtime code, which reads and does not change lock state.
  if (lockBlocked(Registry) != ~0u)
    PollAfterRegistry = true;
}

void pollAfterRegistry() {
  if (!PollAfterRegistry)
    return;
  PollAfterRegistry = false;
  if (jitlock_thread *T = currentThread())
    pollSlowPath(*T);
}

void resetSafepointState(jitlock_thread &T) {
  T.State.store(JITLOCK_THREAD_MANAGED, SeqCst);
  T.SafepointId.store(0, std::memory_order_relaxed);
  T.PollWord.store(0, std::memory_order_relaxed);
  T.Handshake.Pending = nullptr;
}

//===----------------------------------------------------------------------===//
// The time-to-safepoint watchdog
//===----------------------------------------------------------------------===//

namespace {
/// A safepoint that never completes is otherwise silent: typically an
/// attached thread in `managed` blocked outside the runtime (pthread_join,
/// a read) without jitlock_rt_enter_native. Past the configured time, the
/// watchdog names the threads not yet safe, once per safepoint, and then
/// keeps waiting or aborts.
class SafepointWatchdog {
public:
  SafepointWatchdog() {
    uint32_t Ms = Config.safepoint_timeout_ms;
    Abort = Config.safepoint_timeout_action == JITLOCK_SAFEPOINT_TIMEOUT_ABORT;
    if (Ms == 0) {
      // The environment's, as for a VM that cannot change its configure.
      static const uint64_t EnvMs = envNumber("JITLOCK_SAFEPOINT_TIMEOUT_MS");
      static const bool EnvAbort =
          envIs("JITLOCK_SAFEPOINT_TIMEOUT_ACTION", "abort");
      Ms = uint32_t(EnvMs);
      Abort = Abort || EnvAbort;
    }
    LimitNs = uint64_t(Ms) * 1000000;
    if (LimitNs)
      StartNs = monotonicNowNs();
  }

  /// Called between rounds of the wait; `Unsafe` are the threads not yet
  /// seen safe (the registry lock is held, so they stay attached).
  void check(const std::vector<jitlock_thread *> &Unsafe, uint64_t Id) {
    if (!LimitNs || Reported)
      return;
    uint64_t Waited = monotonicNowNs() - StartNs;
    if (Waited < LimitNs)
      return;
    Reported = true;
    std::string Text;
    char Line[256];
    snprintf(Line, sizeof(Line),
             "jitlock: safepoint %llu has waited %llu ms (time-to-safepoint "
             "limit %llu ms) for %zu thread(s) not yet safe:\n",
             (unsigned long long)Id, (unsigned long long)(Waited / 1000000),
             (unsigned long long)(LimitNs / 1000000), Unsafe.size());
    Text += Line;
    for (const jitlock_thread *T : Unsafe) {
      uint32_t State = T->State.load(std::memory_order_seq_cst);
      snprintf(Line, sizeof(Line), "jitlock:   thread %llu: %s%s\n",
               (unsigned long long)T->Id, stateName(State),
               State == JITLOCK_THREAD_MANAGED
                   ? " (has not reached a poll: managed code that does not "
                     "poll, or a wait outside the runtime without "
                     "jitlock_rt_enter_native)"
               : State == JITLOCK_THREAD_RUNTIME
                   ? " (inside VM work: jitlock_rt_leave_runtime stops "
                     "it)"
                   : " (moving between states)");
      Text += Line;
    }
    Text += Abort ? "jitlock: fatal: aborting "
                    "(safepoint_timeout_action = "
                    "JITLOCK_SAFEPOINT_TIMEOUT_ABORT)\n"
                  : "jitlock: still waiting\n";
    // One write, so that the report stays in one piece.
    ssize_t Written = ::write(STDERR_FILENO, Text.data(), Text.size());
    (void)Written;
    if (Abort)
      abort();
  }

private:
  static const char *stateName(uint32_t State) {
    switch (State) {
    case JITLOCK_THREAD_MANAGED:
      return "managed";
    case JITLOCK_THREAD_NATIVE:
      return "native";
    case JITLOCK_THREAD_RUNTIME:
      return "runtime";
    case JITLOCK_THREAD_BLOCKED:
      return "blocked";
    }
    return "unknown";
  }
  static uint64_t envNumber(const char *Name) {
    const char *Text = getenv(Name);
    if (!Text || !*Text)
      return 0;
    char *End = nullptr;
    unsigned long long Value = strtoull(Text, &End, 10);
    if (*End != '\0' || Value > UINT32_MAX) {
      fprintf(stderr,
              "jitlock: warning: %s='%s' is not a number of milliseconds "
              "(at most %u); the time-to-safepoint watchdog stays off\n",
              Name, Text, UINT32_MAX);
      return 0;
    }
    return Value;
  }
  static bool envIs(const char *Name, const char *Value) {
    const char *Text = getenv(Name);
    return Text && strcmp(Text, Value) == 0;
  }

  uint64_t LimitNs = 0;
  uint64_t StartNs = 0;
  bool Abort = false;
  bool Reported = false;
};
} // namespace

//===----------------------------------------------------------------------===//
// Safepoints
//===----------------------------------------------------------------------===//

/// S1-S4. The caller is unattached, native or (SafepointScope) counted as
/// native.
static void beginSafepoint() {
  lockWhileSafe(OperationMutex);
  detail::lockThreadRegistry();
  HoldsSafepoint = true;
  uint64_t Id = Counter.load(std::memory_order_relaxed) + 1;
  Barrier.arm(uint32_t(Id));
  Counter.store(Id, SeqCst);
  std::vector<jitlock_thread *> Unsafe;
  for (size_t I = 0, E = detail::attachedThreadCount(); I != E; ++I) {
    jitlock_thread *T = detail::attachedThread(I);
    armPoll(*T, poll::SafepointBit);
    Unsafe.push_back(T);
  }
  Backoff Wait;
  SafepointWatchdog Watchdog;
  for (;;) {
    std::erase_if(Unsafe, [&](jitlock_thread *T) { return isSafe(*T, Id); });
    if (Unsafe.empty())
      break;
    Watchdog.check(Unsafe, Id);
    Wait.pause();
  }
  // Every thread is native or blocked, so no lock stack is mid-operation.
  if constexpr (AssertionsEnabled)
    for (size_t I = 0, E = detail::attachedThreadCount(); I != E; ++I)
      LockStack(*detail::attachedThread(I)).validate();
}

/// S5-S6.
static void endSafepoint() {
  Counter.store(Counter.load(std::memory_order_relaxed) + 1, SeqCst);
  for (size_t I = 0, E = detail::attachedThreadCount(); I != E; ++I)
    disarmPoll(*detail::attachedThread(I), poll::SafepointBit);
  Barrier.disarm();
  HoldsSafepoint = false;
  detail::unlockThreadRegistry();
  OperationMutex.unlock();
}

SafepointScope::SafepointScope() {
  ++OpenScopes;
  if (HoldsSafepoint)
    return;
  if (BusyInOperation) {
    Refused = true;
    return;
  }
  Caller = currentThread();
  if (Caller) {
    CallerState = Caller->State.load(std::memory_order_relaxed);
    Caller->State.store(JITLOCK_THREAD_NATIVE, SeqCst);
  }
  beginSafepoint();
  Took = true;
}

SafepointScope::~SafepointScope() {
  --OpenScopes;
  if (!Took)
    return;
  endSafepoint();
  if (Caller)
    becomeUnsafe(*Caller, CallerState);
}

//===----------------------------------------------------------------------===//
// Handshakes
//===----------------------------------------------------------------------===//

/// K1-K5 for `Ops` (one per target), the operation lock held.
static void handshakeLocked(std::deque<HandshakeOp> &Ops) {
  jitlock_thread *Self = currentThread();
  for (HandshakeOp &Op : Ops) {
    if (Op.Target == Self)
      continue;
    {
      std::lock_guard<std::mutex> Guard(Op.Target->Handshake.Lock);
      Op.Target->Handshake.Pending = &Op;
    }
    armPoll(*Op.Target, poll::HandshakeBit);
  }
  // The requester's own operation runs here, on its own thread.
  for (HandshakeOp &Op : Ops)
    if (Op.Target == Self)
      Op.run();
  Backoff Wait;
  for (;;) {
    HandshakeOp *NotDone = nullptr;
    for (HandshakeOp &Op : Ops) {
      if (Op.ran())
        continue;
      NotDone = &Op;
      jitlock_thread &T = *Op.Target;
      if (!T.Handshake.Lock.try_lock())
        continue;
      if (T.Handshake.Pending == &Op && isSafe(T, /*CurrentId=*/0)) {
        T.Handshake.Pending = nullptr;
        // The bit stays set while Op runs: a target waking meanwhile must
        // stop at K4 (waiting for the lock), not pass T1 and run on.
        Op.run();
        disarmPoll(T, poll::HandshakeBit);
      }
      T.Handshake.Lock.unlock();
    }
    if (!NotDone)
      return;
    // Running targets finish at their next poll: sleep until one of them
    // does (or the period ends, to look at the safe ones again).
    uint32_t Seen = HandshakeOp::Pending;
    if (Wait.sleepsNext() &&
        !NotDone->Done.compare_exchange_strong(Seen, HandshakeOp::Sleeping) &&
        Seen == HandshakeOp::Ran)
      continue; // It ran meanwhile.
    Wait.pause(&NotDone->Done, HandshakeOp::Sleeping);
  }
}

/// Runs the handshake; false when `Target` is not attached. Its operations
/// live only in here: the caller reports misuse once they are gone, so that
/// an overflow in the misuse handler abandons nothing allocated.
static bool runHandshake(jitlock_thread *Target, jitlock_handshake_fn Fn,
                         void *Arg) {
  std::deque<HandshakeOp> Ops;
  auto Collect = [&] {
    for (size_t I = 0, E = detail::attachedThreadCount(); I != E; ++I) {
      jitlock_thread *T = detail::attachedThread(I);
      if (!Target || T == Target)
        Ops.emplace_back(Fn, Arg, T);
    }
  };
  if (HoldsSafepoint) {
    // Every other thread is stopped and safe: run each operation here.
    Collect();
    for (HandshakeOp &Op : Ops)
      Op.run();
    return !Target || !Ops.empty();
  }
  bool TargetFound;
  BusyScope Busy;
  lockWhileSafe(OperationMutex);
  // Targets stay attached until the operation lock is released (K1).
  detail::lockThreadRegistry();
  Collect();
  detail::unlockThreadRegistry();
  TargetFound = !Target || !Ops.empty();
  if (TargetFound)
    handshakeLocked(Ops);
  OperationMutex.unlock();
  return TargetFound;
}

bool handshakeWith(jitlock_thread *Target, jitlock_handshake_fn Fn, void *Arg) {
  return runHandshake(Target, Fn, Arg);
}

/// Handshakes with `Target`, or with every attached thread when null.
static int handshake(jitlock_thread *Target, jitlock_handshake_fn Fn,
                     void *Arg) {
  if (!Fn)
    return misuse(JITLOCK_EINVAL, Target, nullptr, "handshake with no fn");
  if (!HoldsSafepoint && BusyInOperation)
    return misuse(JITLOCK_ESTATE, Target, nullptr,
                  "handshake from inside a handshake");
  // Reported outside the busy scope: an overflow in the misuse handler
  // abandons no operation, so it recovers like any other misuse report.
  if (!runHandshake(Target, Fn, Arg))
    return misuse(JITLOCK_ENOT_ATTACHED, Target, nullptr,
                  "handshake with a thread that is not attached");
  return JITLOCK_OK;
}

} // namespace jitlock

using namespace jitlock;

//===----------------------------------------------------------------------===//
// The C ABI
//===----------------------------------------------------------------------===//

/// `Self` must be the calling, attached thread in state `From`.
static int transition(jitlock_thread *Self, uint32_t From, uint32_t To,
                      const char *What) {
  if (!Self || Self != currentThread())
    return misuse(JITLOCK_ENOT_ATTACHED, Self, nullptr, What);
  if (Self->State.load(std::memory_order_relaxed) != From)
    return misuse(JITLOCK_ESTATE, Self, nullptr, What);
  // Its own safepoint would stop it at T1 for good.
  if (To != JITLOCK_THREAD_NATIVE && HoldsSafepoint)
    return misuse(JITLOCK_ESTATE, Self, nullptr,
                  "leaving native while holding a safepoint");
  leaveBlocked(*Self, To); // T2 to native, T1 to managed or runtime
  return JITLOCK_OK;
}

int jitlock_rt_enter_native(jitlock_thread *Self) {
  return transition(Self, JITLOCK_THREAD_MANAGED, JITLOCK_THREAD_NATIVE,
                    "enter native from a state other than managed");
}

int jitlock_rt_leave_native(jitlock_thread *Self) {
  return transition(Self, JITLOCK_THREAD_NATIVE, JITLOCK_THREAD_MANAGED,
                    "leave native from a state other than native");
}

int jitlock_rt_enter_runtime(jitlock_thread *Self) {
  if (!Self || Self != currentThread())
    return misuse(JITLOCK_ENOT_ATTACHED, Self, nullptr, "enter runtime");
  if (Self->State.load(std::memory_order_relaxed) != JITLOCK_THREAD_MANAGED)
    return misuse(JITLOCK_ESTATE, Self, nullptr,
                  "enter runtime from a state other than managed");
  // Both states are unsafe: nothing to check.
  Self->State.store(JITLOCK_THREAD_RUNTIME, SeqCst);
  return JITLOCK_OK;
}

int jitlock_rt_leave_runtime(jitlock_thread *Self) {
  return transition(Self, JITLOCK_THREAD_RUNTIME, JITLOCK_THREAD_MANAGED,
                    "leave runtime from a state other than runtime");
}

int jitlock_rt_thread_state(const jitlock_thread *Thread) {
  int State = -1;
  withAttachedThread(
      Thread, [&](jitlock_thread &T) { State = int(T.State.load(SeqCst)); });
  return State;
}

void jitlock_rt_safepoint_poll(jitlock_thread *Self) {
  if (!Self || Self != &currentThreadStorage() || !Self->Attached)
    return;
  pollSlowPath(*Self);
}

int jitlock_rt_safepoint_begin(void) {
  if (HoldsSafepoint)
    return misuse(JITLOCK_ESTATE, nullptr, nullptr,
                  "safepoint begin while holding a safepoint");
  if (BusyInOperation)
    return misuse(JITLOCK_ESTATE, nullptr, nullptr,
                  "safepoint begin from inside a handshake");
  jitlock_thread *Self = currentThread();
  if (Self &&
      Self->State.load(std::memory_order_relaxed) != JITLOCK_THREAD_NATIVE)
    return misuse(JITLOCK_ESTATE, Self, nullptr,
                  "safepoint begin from an attached thread outside native");
  // Nothing would release it at the thread's exit any more.
  if (SafepointExitHookRan)
    return misuse(JITLOCK_ESTATE, Self, nullptr,
                  "safepoint begin from a thread that is exiting (its "
                  "safepoint exit hook has run)");
  ExitHook.Armed = true;
  beginSafepoint();
  ApiSafepoint = true;
  return JITLOCK_OK;
}

int jitlock_rt_safepoint_end(void) {
  if (!HoldsSafepoint || !ApiSafepoint || OpenScopes)
    return misuse(JITLOCK_ESTATE, nullptr, nullptr,
                  HoldsSafepoint ? "safepoint end from inside the runtime's "
                                   "own safepoint (a callback)"
                                 : "safepoint end without a safepoint");
  ApiSafepoint = false;
  endSafepoint();
  return JITLOCK_OK;
}

int jitlock_rt_in_safepoint(void) { return HoldsSafepoint; }

int jitlock_rt_handshake(jitlock_thread *Target, jitlock_handshake_fn Fn,
                         void *Arg) {
  if (!Target)
    return misuse(JITLOCK_ENOT_ATTACHED, nullptr, nullptr,
                  "handshake with a null thread");
  return handshake(Target, Fn, Arg);
}

int jitlock_rt_handshake_all(jitlock_handshake_fn Fn, void *Arg) {
  return handshake(nullptr, Fn, Arg);
}
