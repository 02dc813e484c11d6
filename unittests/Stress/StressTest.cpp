//===- StressTest.cpp - Multi-threaded stress test of the jitlock runtime -===//
//
// Eight (by default) attached threads run a seeded random program over six
// shared object slots through the public C ABI only:
//
//  * nested enter/exit up to depth 12 (deeper than the lock stack's 8 slots,
//    so the oldest entry must be inflated), with adjacent (A A) and
//    non-adjacent (A B A) recursion, and unstructured exits (release a
//    non-top object: lock A; lock B; unlock A; unlock B);
//  * untimed and timed wait (on a recursively held object, and timed waits
//    while other objects stay held), notify and notifyAll;
//  * misuse: exit, wait and notify on objects the thread does not hold must
//    return JITLOCK_ENOT_OWNER, call the misuse handler and change nothing;
//  * identity hashes installed and read concurrently with locking.
//
// With JITLOCK_STRESS_LOCKING=heavy (the jitlock_stress_heavy CTest entry)
// the same program runs in the heavy-monitor locking mode, where every
// runtime enter of an object without a monitor inflates it.
//
// Nothing deflates while threads run, so an object that saw
// contention stays inflated. To keep the fast path, contender inflation with
// an anonymous owner and lock stack overflow in play for the whole run, the
// main thread retires one slot's object every TotalOps/kMaxRetirements
// operations and puts a fresh, unlocked object in its place. Threads keep
// using the objects they already hold; the lock order is by slot, and a
// thread holds at most one object per slot. A retired object is "closed"
// under its lock: its untimed waiters get tickets and a notifyAll, and no
// untimed wait blocks on it afterwards. Each thread also has three private
// objects, locked by nobody else (see kPrivate).
//
// What is checked:
//  * mutual exclusion: every object carries a plain (non-atomic) shadow
//    counter incremented only while holding its lock (ThreadSanitizer sees a
//    missing happens-before edge as a race) and an owner slot (a relaxed
//    atomic, so a violation is detected rather than undefined) that the
//    holder sets after its first hold, checks while holding and clears before
//    its last release; at the end the shadow counters add up to the
//    increments the threads recorded;
//  * wait: JITLOCK_OK only after a notify could have chosen the waiter (a
//    per-object credit bound, see StressObject::Credit), JITLOCK_ETIMEDOUT
//    only for timed waits, and on return the thread owns the monitor again
//    with the same hold count (jitlock_rt_holds_lock, jitlock_rt_inspect);
//  * no lost notification: untimed waits follow a ticket protocol (wait only
//    while the object's ticket count is zero, consume one after), producers
//    add a ticket and notify; once every thread is either finished or parked
//    in an untimed wait, the main thread hands out tickets one notify (or
//    notifyAll) at a time, and a ticket that no waiter consumes within
//    kLostNotifySeconds is a lost notification;
//  * liveness: a watchdog fails the test (printing the seed, every thread's
//    state, every object's lock state and jitlock_rt_find_deadlocks' report)
//    when no thread makes progress for JITLOCK_STRESS_WATCHDOG_S (60) s; a
//    prober calls jitlock_rt_find_deadlocks throughout the run, and any cycle
//    is a failure: shared objects are always taken in increasing slot order
//    and private ones never block, so no cycle can exist;
//  * at the end: every thread detaches with JITLOCK_OK, every object is
//    unlocked and unowned, jitlock_rt_shutdown() returns JITLOCK_OK and
//    restores every header (embedder bits and hash kept), and the statistics
//    show inflations and contended enters. Before that, with every worker
//    detached, jitlock_rt_deflate_idle must deflate exactly the inflated
//    objects and leave no monitor alive.
//
// A second test, DeflationRounds, deflates between rounds of locking while
// every worker waits at a gate; see its own comment below.
//
// Environment: JITLOCK_STRESS_SEED (default: from the clock),
// JITLOCK_STRESS_OPS (total runtime calls over all threads, default 10^6),
// JITLOCK_STRESS_THREADS (default 8), JITLOCK_STRESS_WATCHDOG_S (default 60),
// JITLOCK_STRESS_LOCKING (lightweight, the default, or heavy),
// JITLOCK_STRESS_MONITORS (the monitor storage: pointer, the default, index
// or table).
// The seed is printed first ("jitlock stress seed=..."); each thread's random
// choices derive from it alone. Interleavings, and so which waits block, are
// up to the scheduler.
//
// Invariant violations inside the worker threads print a report and abort:
// a broken lock leaves nothing that could be unwound safely.
//
//===----------------------------------------------------------------------===//

#include "../Runtime/RuntimeTestUtil.h"

#include "jitlock/jitlock_rt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kObjects = 6; // shared slots: the lock order is by slot index
constexpr int kMaxRetirements = 1000;
// Per-thread private slots: nobody else locks them, so they never block and
// are taken in any order. They keep the uncontended fast path, lock stack
// overflow and fast-locked unstructured exits busy. Between nests, an
// inflated private object is replaced (one time in four) by a fresh one from
// the thread's pool, which holds budget/64 objects (64 to 4096).
constexpr int kPrivate = 3;
constexpr int kSlots = kObjects + kPrivate;
constexpr int kMaxDepth = 12;
// Tickets are capped so that untimed waits really block now and then.
constexpr uint64_t kTicketCap = 2;
constexpr unsigned kLostNotifySeconds = 10;
constexpr uint64_t kDefaultOps = 1000000;
constexpr uint64_t kDefaultMinSafepoints = 10000;
constexpr unsigned kDefaultThreads = 8;
constexpr unsigned kDefaultWatchdogSeconds = 60;

//===-- Small helpers -----------------------------------------------------===//

uint64_t envU64(const char *Name, uint64_t Default) {
  const char *S = std::getenv(Name);
  if (!S || !*S)
    return Default;
  char *End = nullptr;
  errno = 0;
  unsigned long long V = std::strtoull(S, &End, 0);
  if (errno != 0 || *End != '\0') {
    std::fprintf(stderr, "jitlock stress: cannot parse %s=%s\n", Name, S);
    std::exit(2);
  }
  return V;
}

uint64_t mix64(uint64_t Z) {
  Z = (Z ^ (Z >> 30)) * 0xBF58476D1CE4E5B9ull;
  Z = (Z ^ (Z >> 27)) * 0x94D049BB133111EBull;
  return Z ^ (Z >> 31);
}

// splitmix64: tiny, fast, and good enough for choosing operations.
struct Rng {
  uint64_t State;
  uint64_t next() { return mix64(State += 0x9E3779B97F4A7C15ull); }
  uint32_t below(uint32_t N) {
    return static_cast<uint32_t>(((next() >> 32) * uint64_t(N)) >> 32);
  }
  bool chance(uint32_t Percent) { return below(100) < Percent; }
};

/// JITLOCK_STRESS_LOCKING: the locking mode both tests configure.
uint32_t lockingModeFromEnv() {
  const char *S = std::getenv("JITLOCK_STRESS_LOCKING");
  if (!S || !*S || std::strcmp(S, "lightweight") == 0)
    return JITLOCK_LOCKING_LIGHTWEIGHT;
  if (std::strcmp(S, "heavy") == 0)
    return JITLOCK_LOCKING_HEAVY;
  std::fprintf(stderr,
               "jitlock stress: JITLOCK_STRESS_LOCKING=%s is neither "
               "lightweight nor heavy\n",
               S);
  std::exit(2);
}

/// JITLOCK_STRESS_MONITORS: the monitor storage both tests configure.
uint32_t monitorStorageFromEnv() {
  const char *S = std::getenv("JITLOCK_STRESS_MONITORS");
  if (!S || !*S || std::strcmp(S, "pointer") == 0)
    return JITLOCK_MONITORS_POINTER;
  if (std::strcmp(S, "index") == 0)
    return JITLOCK_MONITORS_INDEX;
  if (std::strcmp(S, "table") == 0)
    return JITLOCK_MONITORS_TABLE;
  std::fprintf(stderr,
               "jitlock stress: JITLOCK_STRESS_MONITORS=%s is not pointer, "
               "index or table\n",
               S);
  std::exit(2);
}

const char *storageName(uint32_t Storage) {
  static const char *const Names[] = {"pointer", "index", "table"};
  return Storage < 3 ? Names[Storage] : "?";
}

const char *modeName(uint32_t Mode) {
  return Mode == JITLOCK_LOCKING_HEAVY ? "heavy" : "lightweight";
}

const char *statusName(int S) {
  const char *N = jitlock_rt_status_name(S);
  return N ? N : "(null)";
}

double secondsSince(Clock::time_point T) {
  return std::chrono::duration<double>(Clock::now() - T).count();
}

//===-- Shared objects ----------------------------------------------------===//

struct alignas(64) StressObject {
  // The header word at byte offset 0 (the default layout). Only the runtime
  // touches it while threads run.
  uint64_t Header = 0;

  // Guarded by this object's monitor: plain on purpose.
  uint64_t Shadow = 0;
  uint64_t Tickets = 0;
  // Threads between "about to wait" and "returned from wait" (the bound a on
  // the number of threads in the wait set or woken and not yet returned).
  uint64_t Registered = 0;
  uint64_t UntimedRegistered = 0;
  // An upper bound c on the JITLOCK_OK returns still owed to notifies. With
  // S the wait set and P the woken-not-yet-returned waiters, P <= c and
  // S + P <= a hold: a notify raises c when a > c (if S > 0 then P < a, so
  // when a <= c the new P still fits), notifyAll raises c to a, an OK return
  // lowers c, and c is clamped to a. An OK return with c == 0 is spurious.
  uint64_t Credit = 0;
  // Retired from its slot: untimed waits no longer block on it.
  bool Closed = false;

  // Thread id of the holder; relaxed, so a violation is a detected failure
  // and not undefined behaviour.
  std::atomic<uint64_t> Owner{0};
  // The identity hash first seen by any thread (0: none yet).
  std::atomic<uint64_t> Hash{0};
  // Racy-read mirrors for diagnostics only.
  std::atomic<uint64_t> DiagTickets{0};
  std::atomic<uint64_t> DiagRegistered{0};
  std::atomic<uint64_t> DiagUntimed{0};

  uint64_t InitialHeader = 0;
  int Id = 0;   // index in the pool
  int Slot = 0; // lock-order key; -1 for a private object

  void *ptr() { return this; }
  const void *ptr() const { return this; }
  void mirror() {
    DiagTickets.store(Tickets, std::memory_order_relaxed);
    DiagRegistered.store(Registered, std::memory_order_relaxed);
    DiagUntimed.store(UntimedRegistered, std::memory_order_relaxed);
  }
  // Wait-credit bookkeeping; the caller holds the lock.
  void creditNotify(bool All) {
    if (All)
      Credit = std::max(Credit, Registered);
    else if (Registered > Credit)
      ++Credit;
  }
  void clampCredit() { Credit = std::min(Credit, Registered); }
};

//===-- Worker threads ----------------------------------------------------===//

enum WorkerState : int {
  WsStarting,
  WsRunning,
  WsEntering,
  WsExiting,
  WsWaitUntimed,
  WsWaitTimed,
  WsNotifying,
  WsMisuse,
  WsHashing,
  WsDone,
  WsDetached,
};

const char *workerStateName(int S) {
  switch (S) {
  case WsStarting:
    return "starting";
  case WsRunning:
    return "running";
  case WsEntering:
    return "in monitor_enter";
  case WsExiting:
    return "in monitor_exit";
  case WsWaitUntimed:
    return "in untimed wait loop";
  case WsWaitTimed:
    return "in timed wait";
  case WsNotifying:
    return "in notify";
  case WsMisuse:
    return "in misuse call";
  case WsHashing:
    return "in identity_hash";
  case WsDone:
    return "done (detaching)";
  case WsDetached:
    return "detached";
  }
  return "?";
}

struct Counters {
  uint64_t Ops = 0;
  uint64_t Increments = 0;
  uint64_t Enters = 0, Exits = 0;
  uint64_t AdjacentRecursion = 0, NonAdjacentRecursion = 0;
  uint64_t UnstructuredExits = 0;
  uint64_t DeepestNesting = 0, Depth9Plus = 0;
  uint64_t UntimedWaitOps = 0, UntimedWaitCalls = 0, UntimedOk = 0;
  uint64_t RecursiveWaits = 0, WaitsHoldingOthers = 0;
  uint64_t TimedWaits = 0, TimedOk = 0, TimedOut = 0;
  uint64_t Notifies = 0, NotifyAlls = 0;
  uint64_t Produced = 0, Consumed = 0;
  uint64_t Misuse = 0;
  uint64_t Hashes = 0, Inspects = 0;

  void add(const Counters &O) {
    Ops += O.Ops;
    Increments += O.Increments;
    Enters += O.Enters;
    Exits += O.Exits;
    AdjacentRecursion += O.AdjacentRecursion;
    NonAdjacentRecursion += O.NonAdjacentRecursion;
    UnstructuredExits += O.UnstructuredExits;
    DeepestNesting = std::max(DeepestNesting, O.DeepestNesting);
    Depth9Plus += O.Depth9Plus;
    UntimedWaitOps += O.UntimedWaitOps;
    UntimedWaitCalls += O.UntimedWaitCalls;
    UntimedOk += O.UntimedOk;
    RecursiveWaits += O.RecursiveWaits;
    WaitsHoldingOthers += O.WaitsHoldingOthers;
    TimedWaits += O.TimedWaits;
    TimedOk += O.TimedOk;
    TimedOut += O.TimedOut;
    Notifies += O.Notifies;
    NotifyAlls += O.NotifyAlls;
    Produced += O.Produced;
    Consumed += O.Consumed;
    Misuse += O.Misuse;
    Hashes += O.Hashes;
    Inspects += O.Inspects;
  }
};

struct Stress;

struct alignas(64) Worker {
  Stress *S = nullptr;
  int Index = 0;
  Rng R{0};
  uint64_t Budget = 0;
  std::thread Thread;

  jitlock_thread *Self = nullptr;
  uint64_t Tid = 0;

  // The thread's model of what it holds: slots in acquisition order, oldest
  // first; the object held in each slot, and how many times.
  int Stack[kMaxDepth] = {};
  int Depth = 0;
  int Count[kSlots] = {};
  StressObject *Held[kSlots] = {};
  // The private objects in use, and the thread's pool of fresh ones.
  StressObject *Private[kPrivate] = {};
  StressObject *PrivatePool = nullptr;
  int PrivatePoolSize = 0;
  std::atomic<int> PrivateUsed{0};

  enum Phase { Grow, Inner, Shrink } Ph = Grow;
  int Target = 1;
  int InnerLeft = 0;

  Counters C;

  // Diagnostics, read by the watchdog and by failure reports.
  std::atomic<int> State{WsStarting};
  std::atomic<int> StateObj{-1};
  std::atomic<uint64_t> DiagOps{0};
  std::atomic<int> DiagDepth{0};
  std::atomic<int> DiagStack[kMaxDepth] = {}; // object ids
  std::atomic<jitlock_thread *> DiagSelf{nullptr};
  std::atomic<uint64_t> DiagTid{0};

  void run();

private:
  [[noreturn]] void fail(const char *Fmt, ...)
      __attribute__((format(printf, 2, 3)));

  // The object this thread holds in slot `I`.
  StressObject &obj(int I) { return *Held[I]; }
  void setState(int St, const StressObject *Obj = nullptr) {
    State.store(St, std::memory_order_relaxed);
    StateObj.store(Obj ? Obj->Id : -1, std::memory_order_relaxed);
  }
  /// P1 of the safepoint protocol, through the layout, as compiled code
  /// does it.
  void poll();
  void countOp() {
    ++C.Ops;
    DiagOps.store(C.Ops, std::memory_order_relaxed);
  }

  int distinctHeld() const {
    int N = 0;
    for (int I = 0; I < kSlots; ++I)
      N += Count[I] > 0;
    return N;
  }
  int distinctSharedHeld() const {
    int N = 0;
    for (int I = 0; I < kObjects; ++I)
      N += Count[I] > 0;
    return N;
  }
  int maxSharedHeld() const {
    for (int I = kObjects - 1; I >= 0; --I)
      if (Count[I] > 0)
        return I;
    return -1;
  }
  int randomHeld() { return Stack[R.below(Depth)]; }
  int pickTarget() {
    uint32_t X = R.below(100);
    if (X < 30)
      return kMaxDepth;
    if (X < 40)
      return 9 + int(R.below(kMaxDepth - 9));
    return 1 + int(R.below(8));
  }

  void push(int O);
  void removeAt(int Pos);
  void claimOwnerSlot(int O, const char *What);
  void releaseOwnerSlot(int O, const char *What);
  void checkOwnerSlot(int O, const char *What);
  void checkStillHolding(const char *What);
  void verifyReacquired(int O, uint64_t Holds, const char *What);

  void refreshPrivate();
  void step();
  void innerOp();
  int chooseLockTarget();
  void lockOp();
  void unlockOp();
  void incrementOp(int O);
  void notifyOp(int O, bool All);
  void untimedWaitOp(int O);
  void timedWaitOp(int O);
  void misuseOp();
  void hashOp();
  void inspectOp();
};

//===-- The shared test state ---------------------------------------------===//

struct Stress {
  uint64_t Seed = 0;
  uint64_t TotalOps = 0;
  unsigned NumThreads = 0;
  // The VM thread's safepoints: at least MinSafepoints while the workers
  // run, each with a deflation and a root scan inside, and a handshake with
  // every thread after every fourth.
  uint64_t MinSafepoints = 0;
  std::atomic<uint64_t> Safepoints{0}, Handshakes{0}, DeflatedAtSafepoints{0};
  std::atomic<bool> VmDone{false};
  unsigned WatchdogSeconds = 0;
  Clock::time_point Start;
  jitlock_rt_layout Layout{};

  // Every object the test may use: first the shared ones, [0, PoolUsed) in
  // use, then PrivatePoolSize private ones per worker. Slots[k] is shared slot
  // k's current object.
  std::unique_ptr<StressObject[]> Pool;
  size_t PoolSize = 0;
  size_t SharedSize = 0;
  size_t PrivatePoolSize = 0; // per worker
  std::atomic<size_t> PoolUsed{0};
  std::atomic<StressObject *> Slots[kObjects] = {};
  uint64_t RetireEvery = 1;
  std::vector<std::unique_ptr<Worker>> Workers;

  std::atomic<unsigned> Attached{0};
  std::atomic<bool> Go{false};
  std::atomic<uint64_t> MainProgress{0};
  std::atomic<uint64_t> Probes{0};
  // Nanoseconds since Start at which the prober entered find_deadlocks; 0
  // while it is outside.
  std::atomic<int64_t> ProbeCallStart{0};

  std::mutex StopMu;
  std::condition_variable StopCv;
  bool Stop = false;

  std::atomic<bool> Failing{false};

  StressObject *current(int Slot) const {
    return Slots[Slot].load(std::memory_order_acquire);
  }
  int objectIndex(const void *P) const {
    auto *O = static_cast<const StressObject *>(P);
    if (!Pool || O < &Pool[0] || O >= &Pool[0] + PoolSize)
      return -1;
    return int(O - &Pool[0]);
  }
  // Whether pool object `I` has been handed out.
  bool inUse(size_t I) const {
    if (I < SharedSize)
      return I < PoolUsed.load(std::memory_order_acquire);
    size_t W = (I - SharedSize) / PrivatePoolSize;
    return W < Workers.size() &&
           int((I - SharedSize) % PrivatePoolSize) <
               Workers[W]->PrivateUsed.load(std::memory_order_relaxed);
  }
  int workerIndex(const jitlock_thread *T) const {
    if (!T)
      return -1;
    for (const auto &W : Workers)
      if (W->DiagSelf.load(std::memory_order_relaxed) == T)
        return W->Index;
    return -1;
  }
  uint64_t progress() const {
    uint64_t P = MainProgress.load(std::memory_order_relaxed);
    for (const auto &W : Workers)
      P += W->DiagOps.load(std::memory_order_relaxed);
    return P;
  }
  int64_t nowNs() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() -
                                                                Start)
        .count();
  }

  void dump(FILE *Out);
  [[noreturn]] void fatal(const char *Who, const std::string &Msg,
                          bool RunDeadlockFinder);
};

Stress *GStress = nullptr;

// Misuse handler bookkeeping (the handler must not call into the runtime).
std::atomic<uint64_t> GMisuseCalls[16];

void misuseHandler(void *, jitlock_status Status, jitlock_thread *, void *,
                   const char *) {
  unsigned I = unsigned(Status) < 16 ? unsigned(Status) : 15;
  GMisuseCalls[I].fetch_add(1, std::memory_order_relaxed);
}

struct CycleReport {
  Stress *S;
  std::string Text;
  size_t Cycles = 0;
};

void describeCycle(void *Ctx, size_t N, jitlock_thread *const *Threads,
                   void *const *Objs) {
  auto *Rep = static_cast<CycleReport *>(Ctx);
  ++Rep->Cycles;
  char Buf[160];
  std::snprintf(Buf, sizeof Buf, "  deadlock cycle of %zu:\n", N);
  Rep->Text += Buf;
  for (size_t I = 0; I < N; ++I) {
    std::snprintf(Buf, sizeof Buf,
                  "    thread %p (worker %d) waits to enter %p (object #%d)\n",
                  (void *)Threads[I], Rep->S->workerIndex(Threads[I]), Objs[I],
                  Rep->S->objectIndex(Objs[I]));
    Rep->Text += Buf;
  }
}

void Stress::dump(FILE *Out) {
  std::fprintf(Out,
               "  seed=%llu threads=%u ops=%llu elapsed=%.1fs; reproduce with "
               "JITLOCK_STRESS_SEED=%llu JITLOCK_STRESS_OPS=%llu "
               "JITLOCK_STRESS_THREADS=%u\n",
               (unsigned long long)Seed, NumThreads,
               (unsigned long long)TotalOps, secondsSince(Start),
               (unsigned long long)Seed, (unsigned long long)TotalOps,
               NumThreads);
  std::fprintf(Out, "  threads:\n");
  for (const auto &W : Workers) {
    int D = W->DiagDepth.load(std::memory_order_relaxed);
    std::string Held;
    for (int I = 0; I < D && I < kMaxDepth; ++I) {
      int Id = W->DiagStack[I].load(std::memory_order_relaxed);
      Held += I ? " " : "";
      Held += "#" + std::to_string(Id);
      if (Id >= 0 && size_t(Id) < PoolSize)
        Held += Pool[Id].Slot >= 0 ? "/s" + std::to_string(Pool[Id].Slot)
                                   : std::string("/p");
    }
    int On = W->StateObj.load(std::memory_order_relaxed);
    std::string OnText = On >= 0 ? " on object #" + std::to_string(On) : "";
    std::fprintf(Out,
                 "    worker %d tid=%llu rt=%p: %s%s, ops %llu/%llu, holds "
                 "[%s] (#object/slot, p: private)\n",
                 W->Index,
                 (unsigned long long)W->DiagTid.load(std::memory_order_relaxed),
                 (void *)W->DiagSelf.load(std::memory_order_relaxed),
                 workerStateName(W->State.load(std::memory_order_relaxed)),
                 OnText.c_str(),
                 (unsigned long long)W->DiagOps.load(std::memory_order_relaxed),
                 (unsigned long long)W->Budget, Held.c_str());
  }
  std::fprintf(Out,
               "  objects (%zu shared in use; listed: the slots' current ones "
               "and every one that is owned, queued on or waited on):\n",
               PoolUsed.load());
  for (size_t I = 0; I < PoolSize; ++I) {
    if (!inUse(I))
      continue;
    StressObject &O = Pool[I];
    jitlock_lock_info Info{};
    int Rc = jitlock_rt_inspect(O.ptr(), &Info);
    bool Current = O.Slot >= 0 && current(O.Slot) == &O;
    if (!Current && Rc == JITLOCK_OK && !Info.owner && !Info.holds &&
        !Info.anonymous_owner && !Info.entry_queued && !Info.waiting &&
        !O.Owner.load(std::memory_order_relaxed) &&
        !O.DiagRegistered.load(std::memory_order_relaxed))
      continue;
    std::fprintf(
        Out,
        "    object #%zu (%s %d%s) at %p: inspect=%s state=%s anon=%u "
        "owner=%p (worker %d) holds=%llu entry_queued=%llu waiting=%llu; "
        "owner slot=%llu tickets=%llu registered=%llu untimed=%llu\n",
        I, O.Slot >= 0 ? "slot" : "private to worker",
        O.Slot >= 0 ? O.Slot : int((I - SharedSize) / PrivatePoolSize),
        O.Slot < 0 ? ""
        : Current  ? ", current"
                   : ", retired",
        O.ptr(), statusName(Rc), jitlock_test::stateName(Info.state).c_str(),
        Info.anonymous_owner, (void *)Info.owner, workerIndex(Info.owner),
        (unsigned long long)Info.holds, (unsigned long long)Info.entry_queued,
        (unsigned long long)Info.waiting,
        (unsigned long long)O.Owner.load(std::memory_order_relaxed),
        (unsigned long long)O.DiagTickets.load(std::memory_order_relaxed),
        (unsigned long long)O.DiagRegistered.load(std::memory_order_relaxed),
        (unsigned long long)O.DiagUntimed.load(std::memory_order_relaxed));
  }
  jitlock_rt_stats St{};
  jitlock_rt_get_stats(&St);
  std::fprintf(
      Out,
      "  stats: fast_locks=%llu recursive_locks=%llu "
      "monitor_enters=%llu inflations=%llu contended_enters=%llu "
      "parks=%llu slow_path_calls=%llu waits=%llu notifies=%llu "
      "monitors_alive=%llu\n",
      (unsigned long long)St.fast_locks, (unsigned long long)St.recursive_locks,
      (unsigned long long)St.monitor_enters, (unsigned long long)St.inflations,
      (unsigned long long)St.contended_enters, (unsigned long long)St.parks,
      (unsigned long long)St.slow_path_calls, (unsigned long long)St.waits,
      (unsigned long long)St.notifies, (unsigned long long)St.monitors_alive);
  std::fflush(Out);
}

void Stress::fatal(const char *Who, const std::string &Msg,
                   bool RunDeadlockFinder) {
  if (Failing.exchange(true)) {
    // Another thread is already reporting; it aborts the process.
    for (;;)
      std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::fprintf(stderr, "\njitlock stress FAILED (%s): %s\n", Who, Msg.c_str());
  dump(stderr);
  if (RunDeadlockFinder) {
    // Ask the runtime for deadlock cycles, but do not hang on it.
    auto Rep = std::make_shared<CycleReport>();
    Rep->S = this;
    auto Done = std::make_shared<std::atomic<bool>>(false);
    std::thread([Rep, Done] {
      jitlock_rt_find_deadlocks(describeCycle, Rep.get());
      Done->store(true, std::memory_order_release);
    }).detach();
    for (int I = 0; I < 100 && !Done->load(std::memory_order_acquire); ++I)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (Done->load(std::memory_order_acquire))
      std::fprintf(stderr, "  jitlock_rt_find_deadlocks: %zu cycle(s)\n%s",
                   Rep->Cycles, Rep->Text.c_str());
    else
      std::fprintf(stderr,
                   "  jitlock_rt_find_deadlocks did not return within 5 s\n");
  }
  std::fprintf(stderr, "jitlock stress FAILED with seed=%llu\n",
               (unsigned long long)Seed);
  std::fflush(stderr);
  std::abort();
}

//===-- Worker implementation ---------------------------------------------===//

void Worker::fail(const char *Fmt, ...) {
  char Buf[1024];
  va_list Ap;
  va_start(Ap, Fmt);
  std::vsnprintf(Buf, sizeof Buf, Fmt, Ap);
  va_end(Ap);
  std::string HeldText;
  for (int I = 0; I < Depth; ++I) {
    HeldText += I ? " " : "";
    HeldText += "s" + std::to_string(Stack[I]) + "/#" +
                std::to_string(Held[Stack[I]]->Id);
  }
  char Who[300];
  std::snprintf(Who, sizeof Who,
                "worker %d, tid %llu, op %llu, holding [%s] (slot/#object)",
                Index, (unsigned long long)Tid, (unsigned long long)C.Ops,
                HeldText.c_str());
  S->fatal(Who, Buf, /*RunDeadlockFinder=*/false);
}

void Worker::push(int O) {
  Stack[Depth] = O;
  DiagStack[Depth].store(Held[O]->Id, std::memory_order_relaxed);
  ++Depth;
  ++Count[O];
  DiagDepth.store(Depth, std::memory_order_relaxed);
  C.DeepestNesting = std::max<uint64_t>(C.DeepestNesting, Depth);
  if (Depth >= 9)
    ++C.Depth9Plus;
}

void Worker::removeAt(int Pos) {
  int O = Stack[Pos];
  for (int I = Pos; I + 1 < Depth; ++I) {
    Stack[I] = Stack[I + 1];
    DiagStack[I].store(Held[Stack[I]]->Id, std::memory_order_relaxed);
  }
  --Depth;
  --Count[O];
  DiagDepth.store(Depth, std::memory_order_relaxed);
}

void Worker::claimOwnerSlot(int O, const char *What) {
  uint64_t Prev = obj(O).Owner.exchange(Tid, std::memory_order_relaxed);
  if (Prev != 0)
    fail("mutual exclusion violated after %s of object #%d (slot %d): its "
         "owner slot already names thread %llu",
         What, obj(O).Id, O, (unsigned long long)Prev);
}

void Worker::releaseOwnerSlot(int O, const char *What) {
  uint64_t Prev = obj(O).Owner.exchange(0, std::memory_order_relaxed);
  if (Prev != Tid)
    fail("mutual exclusion violated before %s of object #%d (slot %d): its "
         "owner slot names thread %llu, not this thread",
         What, obj(O).Id, O, (unsigned long long)Prev);
}

void Worker::checkOwnerSlot(int O, const char *What) {
  uint64_t Cur = obj(O).Owner.load(std::memory_order_relaxed);
  if (Cur != Tid)
    fail("mutual exclusion violated (%s): object #%d (slot %d) is held by "
         "this thread but its owner slot names thread %llu",
         What, obj(O).Id, O, (unsigned long long)Cur);
}

void Worker::checkStillHolding(const char *What) {
  for (int I = 0; I < kSlots; ++I) {
    if (Count[I] == 0)
      continue;
    checkOwnerSlot(I, What);
    if (!jitlock_rt_holds_lock(Self, obj(I).ptr()))
      fail("after %s, jitlock_rt_holds_lock says this thread no longer holds "
           "object #%d (slot %d, held %d times)",
           What, obj(I).Id, I, Count[I]);
  }
}

void Worker::verifyReacquired(int O, uint64_t Holds, const char *What) {
  StressObject &Ob = obj(O);
  if (!jitlock_rt_holds_lock(Self, Ob.ptr()))
    fail("%s of object #%d returned but the thread does not hold it", What,
         Ob.Id);
  jitlock_lock_info Info{};
  int Rc = jitlock_rt_inspect(Ob.ptr(), &Info);
  if (Rc != JITLOCK_OK)
    fail("jitlock_rt_inspect after %s returned %s", What, statusName(Rc));
  if (Info.owner != Self || Info.holds != Holds)
    fail("%s of object #%d returned with owner=%p (self %p, worker %d) "
         "holds=%llu state=%s anon=%u; expected this thread with holds=%llu",
         What, Ob.Id, (void *)Info.owner, (void *)Self,
         S->workerIndex(Info.owner), (unsigned long long)Info.holds,
         jitlock_test::stateName(Info.state).c_str(), Info.anonymous_owner,
         (unsigned long long)Holds);
}

void Worker::run() {
  Self = jitlock_rt_attach();
  if (!Self)
    fail("jitlock_rt_attach returned null");
  if (jitlock_rt_current() != Self)
    fail("jitlock_rt_current() != jitlock_rt_attach()");
  if (jitlock_rt_attach() != Self)
    fail("jitlock_rt_attach is not idempotent");
  Tid = jitlock_rt_thread_id(Self);
  if (Tid == 0)
    fail("jitlock_rt_thread_id returned 0");
  DiagSelf.store(Self, std::memory_order_relaxed);
  DiagTid.store(Tid, std::memory_order_relaxed);

  S->Attached.fetch_add(1, std::memory_order_acq_rel);
  while (!S->Go.load(std::memory_order_acquire))
    std::this_thread::yield();
  setState(WsRunning);

  for (int P = 0; P < kPrivate; ++P)
    Private[P] = &PrivatePool[P];
  PrivateUsed.store(kPrivate, std::memory_order_relaxed);
  Target = pickTarget();
  Ph = Grow;
  // The mix polls between operations, as compiled code would; once its
  // budget is spent it unwinds, then polls alone until the VM thread has
  // taken its safepoints.
  while (C.Ops < Budget || Depth > 0) {
    if (C.Ops >= Budget)
      unlockOp(); // the budget is spent: unwind
    else
      step();
    poll();
  }

  void *Entries[16];
  size_t N = jitlock_rt_lock_stack(Self, Entries, 16);
  if (N != 0)
    fail("the lock stack has %zu entries after releasing everything", N);
  for (int I = 0; I < kSlots; ++I) {
    if (I < kObjects && jitlock_rt_holds_lock(Self, S->current(I)->ptr()))
      fail("jitlock_rt_holds_lock says slot %d's current object is still "
           "held after releasing everything",
           I);
    if (Held[I] && jitlock_rt_holds_lock(Self, Held[I]->ptr()))
      fail("jitlock_rt_holds_lock says object #%d is still held after "
           "releasing everything",
           Held[I]->Id);
  }
  setState(WsDone);
  while (!S->VmDone.load(std::memory_order_acquire))
    poll();
  int Rc = jitlock_rt_detach();
  if (Rc != JITLOCK_OK)
    fail("jitlock_rt_detach returned %s", statusName(Rc));
  if (jitlock_rt_current() != nullptr)
    fail("jitlock_rt_current() is not null after detaching");
  setState(WsDetached);
}

// Between nests: replace inflated private objects by fresh ones, so that
// the private slots keep starting from an unlocked header.
void Worker::refreshPrivate() {
  for (int P = 0; P < kPrivate; ++P) {
    int Used = PrivateUsed.load(std::memory_order_relaxed);
    if (Used >= PrivatePoolSize)
      return;
    jitlock_lock_info Info{};
    int Rc = jitlock_rt_inspect(Private[P]->ptr(), &Info);
    if (Rc != JITLOCK_OK)
      fail("jitlock_rt_inspect(private object #%d) returned %s", Private[P]->Id,
           statusName(Rc));
    if (Info.owner || Info.holds || Info.entry_queued || Info.waiting)
      fail("private object #%d, which no thread holds, is reported owner=%p "
           "holds=%llu queued=%llu waiting=%llu",
           Private[P]->Id, (void *)Info.owner, (unsigned long long)Info.holds,
           (unsigned long long)Info.entry_queued,
           (unsigned long long)Info.waiting);
    if (Info.state == JITLOCK_STATE_INFLATED) {
      if (!R.chance(25))
        continue;
      Private[P] = &PrivatePool[Used];
      PrivateUsed.store(Used + 1, std::memory_order_relaxed);
    } else if (Info.state != JITLOCK_STATE_UNLOCKED) {
      fail("private object #%d, which no thread holds, is reported %s",
           Private[P]->Id, jitlock_test::stateName(Info.state).c_str());
    }
  }
}

void Worker::poll() {
  auto *Word = reinterpret_cast<std::atomic<uint64_t> *>(
      reinterpret_cast<char *>(Self) + S->Layout.poll_word_offset);
  if (Word->load(std::memory_order_relaxed) & S->Layout.poll_armed_bit)
    jitlock_rt_safepoint_poll(Self);
}

void Worker::step() {
  switch (Ph) {
  case Grow:
    if (Depth >= Target) {
      Ph = Inner;
      InnerLeft = int(R.below(4));
      return;
    }
    if (Depth > 0 && R.chance(8))
      unlockOp();
    else if (Depth > 0 && R.chance(5))
      innerOp();
    else
      lockOp();
    return;
  case Inner:
    if (Depth == 0 || InnerLeft-- == 0) {
      Ph = Shrink;
      return;
    }
    innerOp();
    return;
  case Shrink:
    if (Depth == 0) {
      refreshPrivate();
      Target = pickTarget();
      Ph = Grow;
      return;
    }
    if (Depth < kMaxDepth && R.chance(8))
      lockOp();
    else if (R.chance(5))
      innerOp();
    else
      unlockOp();
    return;
  }
}

void Worker::innerOp() {
  uint32_t X = R.below(100);
  // Private objects never block anybody, so they do not count here.
  int Shared = maxSharedHeld();
  bool Single = distinctSharedHeld() == 1;
  if (X < 20) {
    incrementOp(randomHeld());
  } else if (X < 36) {
    notifyOp(randomHeld(), /*All=*/false);
  } else if (X < 41) {
    notifyOp(randomHeld(), /*All=*/true);
  } else if (X < 55) {
    // Untimed waits only when the waited-on object is the only distinct
    // shared object held: a waiter that kept another one could starve every
    // notifier that needs it.
    if (Single)
      untimedWaitOp(Shared);
    else
      notifyOp(randomHeld(), /*All=*/false);
  } else if (X < 65) {
    // Timed waits on the highest shared slot held, keeping the others: the
    // re-acquisition then respects the lock order, and the wait is bounded.
    // With no shared object held, on a private one (nobody notifies it).
    timedWaitOp(Shared >= 0 ? Shared : randomHeld());
  } else if (X < 72) {
    misuseOp();
  } else if (X < 77) {
    hashOp();
  } else {
    inspectOp();
  }
}

int Worker::chooseLockTarget() {
  if (Depth == 0)
    return R.chance(20) ? kObjects + int(R.below(kPrivate))
                        : int(R.below(kObjects));
  int Top = Stack[Depth - 1];
  uint32_t X = R.below(100);
  if (X < 35)
    return Top; // adjacent recursion
  if (X < 60) {
    // Non-adjacent recursion: a held object other than the top one.
    int Cand[kMaxDepth];
    int N = 0;
    for (int I = 0; I + 1 < Depth; ++I)
      if (Stack[I] != Top)
        Cand[N++] = Stack[I];
    if (N > 0)
      return Cand[R.below(N)];
  }
  if (X < 72) {
    // A private object not held yet: any time, in any order.
    int P = kObjects + int(R.below(kPrivate));
    if (Count[P] == 0)
      return P;
  }
  // A new shared object: always in a slot above every shared slot held (the
  // lock order).
  int Max = maxSharedHeld();
  if (Max < kObjects - 1) {
    int Span = kObjects - 1 - Max;
    return Max + 1 + (R.chance(50) ? 0 : int(R.below(Span)));
  }
  return Top;
}

void Worker::lockOp() {
  int O = chooseLockTarget();
  if (Count[O] == 0)
    Held[O] = O < kObjects ? S->current(O) : Private[O - kObjects];
  StressObject &Ob = obj(O);
  bool Adjacent = Depth > 0 && Stack[Depth - 1] == O;
  bool NonAdjacent = !Adjacent && Count[O] > 0;
  setState(WsEntering, &Ob);
  int Rc = jitlock_rt_monitor_enter(Self, Ob.ptr());
  countOp();
  if (Rc != JITLOCK_OK)
    fail("jitlock_rt_monitor_enter(object #%d) returned %s", Ob.Id,
         statusName(Rc));
  push(O);
  ++C.Enters;
  C.AdjacentRecursion += Adjacent;
  C.NonAdjacentRecursion += NonAdjacent;
  if (Count[O] == 1)
    claimOwnerSlot(O, "monitor_enter");
  else
    checkOwnerSlot(O, "recursive monitor_enter");
  ++Ob.Shadow;
  ++C.Increments;
  if (!jitlock_rt_holds_lock(Self, Ob.ptr()))
    fail("jitlock_rt_holds_lock is false right after entering object #%d",
         Ob.Id);
  setState(WsRunning);
}

void Worker::unlockOp() {
  int Pos = Depth - 1;
  if (Depth > 1 && R.chance(20))
    Pos = int(R.below(Depth - 1)); // an unstructured exit
  int O = Stack[Pos];
  StressObject &Ob = obj(O);
  bool Unstructured = O != Stack[Depth - 1];
  bool Last = Count[O] == 1;
  checkOwnerSlot(O, "before monitor_exit");
  ++Ob.Shadow;
  ++C.Increments;
  if (Last)
    releaseOwnerSlot(O, "the last monitor_exit");
  setState(WsExiting, &Ob);
  int Rc = jitlock_rt_monitor_exit(Self, Ob.ptr());
  countOp();
  if (Rc != JITLOCK_OK)
    fail("jitlock_rt_monitor_exit(object #%d, %s) returned %s", Ob.Id,
         Unstructured ? "unstructured" : "structured", statusName(Rc));
  removeAt(Pos);
  ++C.Exits;
  C.UnstructuredExits += Unstructured;
  bool StillHeld = jitlock_rt_holds_lock(Self, Ob.ptr()) != 0;
  if (StillHeld != (Count[O] > 0))
    fail("after monitor_exit(object #%d) jitlock_rt_holds_lock=%d but the "
         "thread holds it %d more times",
         Ob.Id, int(StillHeld), Count[O]);
  setState(WsRunning);
}

void Worker::incrementOp(int O) {
  checkOwnerSlot(O, "increment");
  ++obj(O).Shadow;
  ++C.Increments;
}

void Worker::notifyOp(int O, bool All) {
  StressObject &Ob = obj(O);
  checkOwnerSlot(O, "notify");
  uint64_t Add = All ? 1 + R.below(2) : (R.chance(75) ? 1 : 0);
  Add = Ob.Tickets >= kTicketCap ? 0 : std::min(Add, kTicketCap - Ob.Tickets);
  Ob.Tickets += Add;
  C.Produced += Add;
  Ob.creditNotify(All);
  Ob.mirror();
  setState(WsNotifying, &Ob);
  int Rc = All ? jitlock_rt_notify_all(Self, Ob.ptr())
               : jitlock_rt_notify(Self, Ob.ptr());
  countOp();
  if (Rc != JITLOCK_OK)
    fail("jitlock_rt_%s(object #%d) returned %s", All ? "notify_all" : "notify",
         Ob.Id, statusName(Rc));
  (All ? C.NotifyAlls : C.Notifies) += 1;
  checkOwnerSlot(O, "after notify");
  setState(WsRunning);
}

void Worker::untimedWaitOp(int O) {
  StressObject &Ob = obj(O);
  uint64_t Holds = uint64_t(Count[O]);
  checkOwnerSlot(O, "before wait");
  ++C.UntimedWaitOps;
  setState(WsWaitUntimed, &Ob);
  while (Ob.Tickets == 0 && !Ob.Closed) {
    ++Ob.Registered;
    ++Ob.UntimedRegistered;
    Ob.mirror();
    if (Holds > 1)
      ++C.RecursiveWaits;
    releaseOwnerSlot(O, "wait");
    int Rc = jitlock_rt_wait(Self, Ob.ptr());
    countOp();
    ++C.UntimedWaitCalls;
    if (Rc != JITLOCK_OK)
      fail("jitlock_rt_wait(object #%d, holds %llu) returned %s", Ob.Id,
           (unsigned long long)Holds, statusName(Rc));
    claimOwnerSlot(O, "returning from wait");
    --Ob.Registered;
    --Ob.UntimedRegistered;
    if (Ob.Credit == 0)
      fail("spurious wakeup: jitlock_rt_wait(object #%d) returned JITLOCK_OK "
           "but no notify since this thread started waiting can have chosen "
           "it",
           Ob.Id);
    --Ob.Credit;
    Ob.clampCredit();
    Ob.mirror();
    ++C.UntimedOk;
    verifyReacquired(O, Holds, "untimed wait");
    ++Ob.Shadow;
    ++C.Increments;
  }
  if (Ob.Tickets > 0) {
    --Ob.Tickets;
    ++C.Consumed;
  }
  Ob.mirror();
  setState(WsRunning);
}

void Worker::timedWaitOp(int O) {
  static constexpr uint64_t Timeouts[] = {0, 1000, 20000, 100000, 300000};
  StressObject &Ob = obj(O);
  uint64_t Holds = uint64_t(Count[O]);
  uint64_t Timeout = Timeouts[R.below(5)];
  checkOwnerSlot(O, "before timed wait");
  ++C.TimedWaits;
  if (Holds > 1)
    ++C.RecursiveWaits;
  if (distinctHeld() > 1)
    ++C.WaitsHoldingOthers;
  ++Ob.Registered;
  Ob.mirror();
  releaseOwnerSlot(O, "timed wait");
  setState(WsWaitTimed, &Ob);
  int Rc = jitlock_rt_wait_timed(Self, Ob.ptr(), Timeout);
  countOp();
  claimOwnerSlot(O, "returning from timed wait");
  --Ob.Registered;
  if (Rc == JITLOCK_OK) {
    if (Ob.Credit == 0)
      fail("spurious wakeup: jitlock_rt_wait_timed(object #%d, %llu ns) "
           "returned JITLOCK_OK but no notify since this thread started "
           "waiting can have chosen it",
           Ob.Id, (unsigned long long)Timeout);
    --Ob.Credit;
    ++C.TimedOk;
    // A notified waiter consumes the ticket the notify announced, so that an
    // untimed waiter never sits in the wait set while tickets are left.
    if (Ob.Tickets > 0) {
      --Ob.Tickets;
      ++C.Consumed;
    }
  } else if (Rc == JITLOCK_ETIMEDOUT) {
    ++C.TimedOut;
  } else {
    fail("jitlock_rt_wait_timed(object #%d, %llu ns, holds %llu) returned %s",
         Ob.Id, (unsigned long long)Timeout, (unsigned long long)Holds,
         statusName(Rc));
  }
  Ob.clampCredit();
  Ob.mirror();
  verifyReacquired(O, Holds, "timed wait");
  checkStillHolding("a timed wait");
  ++Ob.Shadow;
  ++C.Increments;
  setState(WsRunning);
}

void Worker::misuseOp() {
  // A slot whose current object this thread does not hold.
  StressObject *Cand[kSlots];
  int N = 0;
  for (int I = 0; I < kSlots; ++I) {
    StressObject *Cur = I < kObjects ? S->current(I) : Private[I - kObjects];
    if (Count[I] == 0 || Held[I] != Cur)
      Cand[N++] = Cur;
  }
  if (N == 0)
    return;
  StressObject &Ob = *Cand[R.below(N)];
  void *Before[16], *After[16];
  size_t NB = jitlock_rt_lock_stack(Self, Before, 16);
  uint32_t Kind = R.below(10);
  const char *What;
  int Rc;
  setState(WsMisuse, &Ob);
  if (Kind < 6) {
    What = "monitor_exit";
    Rc = jitlock_rt_monitor_exit(Self, Ob.ptr());
  } else if (Kind == 6) {
    What = "wait";
    Rc = jitlock_rt_wait(Self, Ob.ptr());
  } else if (Kind == 7) {
    What = "wait_timed";
    Rc = jitlock_rt_wait_timed(Self, Ob.ptr(), 1000000);
  } else if (Kind == 8) {
    What = "notify";
    Rc = jitlock_rt_notify(Self, Ob.ptr());
  } else {
    What = "notify_all";
    Rc = jitlock_rt_notify_all(Self, Ob.ptr());
  }
  countOp();
  ++C.Misuse;
  if (Rc != JITLOCK_ENOT_OWNER)
    fail("jitlock_rt_%s on object #%d, which this thread does not hold, "
         "returned %s instead of JITLOCK_ENOT_OWNER",
         What, Ob.Id, statusName(Rc));
  if (jitlock_rt_holds_lock(Self, Ob.ptr()))
    fail("after a refused jitlock_rt_%s, jitlock_rt_holds_lock says this "
         "thread holds object #%d",
         What, Ob.Id);
  size_t NA = jitlock_rt_lock_stack(Self, After, 16);
  if (NA != NB || std::memcmp(Before, After,
                              std::min<size_t>(NA, 16) * sizeof(void *)) != 0)
    fail("a refused jitlock_rt_%s on object #%d changed the lock stack "
         "(depth %zu -> %zu)",
         What, Ob.Id, NB, NA);
  checkStillHolding("a refused call");
  setState(WsRunning);
}

void Worker::hashOp() {
  int Slot = int(R.below(kSlots));
  StressObject &Ob = Count[Slot] > 0 && R.chance(50) ? obj(Slot)
                     : Slot < kObjects               ? *S->current(Slot)
                                       : *Private[Slot - kObjects];
  setState(WsHashing, &Ob);
  uint64_t H = jitlock_rt_identity_hash(Self, Ob.ptr());
  countOp();
  ++C.Hashes;
  if (H == 0)
    fail("jitlock_rt_identity_hash(object #%d) returned 0", Ob.Id);
  uint64_t Expected = 0;
  if (!Ob.Hash.compare_exchange_strong(Expected, H,
                                       std::memory_order_relaxed) &&
      Expected != H)
    fail("the identity hash of object #%d changed from %#llx to %#llx", Ob.Id,
         (unsigned long long)Expected, (unsigned long long)H);
  uint64_t Peek = jitlock_rt_peek_hash(Ob.ptr());
  if (Peek != H)
    fail("jitlock_rt_peek_hash(object #%d)=%#llx but identity_hash=%#llx",
         Ob.Id, (unsigned long long)Peek, (unsigned long long)H);
  setState(WsRunning);
}

void Worker::inspectOp() {
  int O = randomHeld();
  StressObject &Ob = obj(O);
  ++C.Inspects;
  checkOwnerSlot(O, "inspect");
  jitlock_lock_info Info{};
  int Rc = jitlock_rt_inspect(Ob.ptr(), &Info);
  if (Rc != JITLOCK_OK)
    fail("jitlock_rt_inspect(object #%d) returned %s", Ob.Id, statusName(Rc));
  if (Info.state != JITLOCK_STATE_FAST && Info.state != JITLOCK_STATE_INFLATED)
    fail("object #%d, held %d times by this thread, is reported %s", Ob.Id,
         Count[O], jitlock_test::stateName(Info.state).c_str());
  if (Info.owner == Self) {
    if (Info.holds != uint64_t(Count[O]))
      fail("jitlock_rt_inspect(object #%d) reports holds=%llu (state %s) but "
           "this thread holds it %d times",
           Ob.Id, (unsigned long long)Info.holds,
           jitlock_test::stateName(Info.state).c_str(), Count[O]);
  } else if (Info.owner != nullptr) {
    fail("jitlock_rt_inspect(object #%d), held by this thread, reports owner "
         "%p (worker %d)",
         Ob.Id, (void *)Info.owner, S->workerIndex(Info.owner));
  }
  jitlock_thread *OwnerOf = jitlock_rt_owner_of(Ob.ptr());
  if (OwnerOf != Self)
    fail("jitlock_rt_owner_of(object #%d) = %p (worker %d) while this thread "
         "holds it",
         Ob.Id, (void *)OwnerOf, S->workerIndex(OwnerOf));
  void *Entries[16];
  size_t N = jitlock_rt_lock_stack(Self, Entries, 16);
  if (N > S->Layout.lock_stack_capacity)
    fail("jitlock_rt_lock_stack reports depth %zu > capacity %u", N,
         S->Layout.lock_stack_capacity);
  for (size_t I = 0; I < N && I < 16; ++I) {
    bool Mine = false;
    for (int K = 0; K < kSlots; ++K)
      Mine |= Count[K] > 0 && Held[K]->ptr() == Entries[I];
    if (!Mine)
      fail("lock stack entry %zu is %p (object #%d), which this thread does "
           "not hold",
           I, Entries[I], S->objectIndex(Entries[I]));
  }
}

//===-- Watchdog and deadlock prober --------------------------------------===//

void watchdogLoop(Stress &S) {
  uint64_t Last = ~0ull;
  Clock::time_point LastChange = Clock::now();
  std::unique_lock<std::mutex> Lock(S.StopMu);
  while (!S.Stop) {
    S.StopCv.wait_for(Lock, std::chrono::milliseconds(100));
    if (S.Stop)
      break;
    uint64_t P = S.progress();
    if (P != Last) {
      Last = P;
      LastChange = Clock::now();
    } else if (secondsSince(LastChange) > S.WatchdogSeconds) {
      Lock.unlock();
      S.fatal("watchdog",
              "no thread made progress for " +
                  std::to_string(S.WatchdogSeconds) + " s",
              /*RunDeadlockFinder=*/S.ProbeCallStart.load() == 0);
    }
    int64_t Call = S.ProbeCallStart.load(std::memory_order_relaxed);
    if (Call != 0 && double(S.nowNs() - Call) / 1e9 > S.WatchdogSeconds) {
      Lock.unlock();
      S.fatal("watchdog",
              "jitlock_rt_find_deadlocks did not return for " +
                  std::to_string(S.WatchdogSeconds) + " s",
              /*RunDeadlockFinder=*/false);
    }
  }
}

void proberLoop(Stress &S) {
  std::unique_lock<std::mutex> Lock(S.StopMu);
  while (!S.Stop) {
    S.StopCv.wait_for(Lock, std::chrono::milliseconds(200));
    if (S.Stop)
      break;
    Lock.unlock();
    CycleReport Rep;
    Rep.S = &S;
    S.ProbeCallStart.store(std::max<int64_t>(1, S.nowNs()));
    size_t N = jitlock_rt_find_deadlocks(describeCycle, &Rep);
    S.ProbeCallStart.store(0);
    S.Probes.fetch_add(1, std::memory_order_relaxed);
    if (N != 0 || Rep.Cycles != 0)
      S.fatal("deadlock prober",
              "jitlock_rt_find_deadlocks reported " + std::to_string(N) +
                  " cycle(s) (" + std::to_string(Rep.Cycles) +
                  " via the callback), but the test takes shared objects in "
                  "increasing slot order and private ones never block, so no "
                  "cycle can exist:\n" +
                  Rep.Text,
              /*RunDeadlockFinder=*/false);
    Lock.lock();
  }
}

//===-- The main thread: retirements and the end phase --------------------===//

struct MainThread {
  Stress &S;
  jitlock_thread *Self;
  uint64_t Produced = 0, Rescues = 0, Increments = 0, Retirements = 0;
  unsigned Round = 0;

  void enter(StressObject &Ob) {
    int Rc = jitlock_rt_monitor_enter(Self, Ob.ptr());
    if (Rc != JITLOCK_OK)
      S.fatal("main",
              "monitor_enter(object #" + std::to_string(Ob.Id) + ") returned " +
                  statusName(Rc),
              false);
    if (Ob.Owner.exchange(~0ull, std::memory_order_relaxed) != 0)
      S.fatal("main",
              "mutual exclusion violated: object #" + std::to_string(Ob.Id) +
                  "'s owner slot is set although main entered it",
              false);
    ++Ob.Shadow;
    ++Increments;
  }
  void exit(StressObject &Ob) {
    if (Ob.Owner.exchange(0, std::memory_order_relaxed) != ~0ull)
      S.fatal("main",
              "mutual exclusion violated: object #" + std::to_string(Ob.Id) +
                  "'s owner slot changed while main held it",
              false);
    int Rc = jitlock_rt_monitor_exit(Self, Ob.ptr());
    if (Rc != JITLOCK_OK)
      S.fatal("main",
              "monitor_exit(object #" + std::to_string(Ob.Id) + ") returned " +
                  statusName(Rc),
              false);
  }
  // Adds tickets and notifies, with the object held.
  void produce(StressObject &Ob, uint64_t Add, bool All) {
    Ob.Tickets += Add;
    Produced += Add;
    Ob.creditNotify(All);
    Ob.mirror();
    int Rc = All ? jitlock_rt_notify_all(Self, Ob.ptr())
                 : jitlock_rt_notify(Self, Ob.ptr());
    if (Rc != JITLOCK_OK)
      S.fatal("main", std::string("notify returned ") + statusName(Rc), false);
  }

  // Replaces slot `Slot`'s object with a fresh one and closes the old one.
  void retire(int Slot) {
    size_t Next = S.PoolUsed.load(std::memory_order_relaxed);
    StressObject &Fresh = S.Pool[Next];
    StressObject &Old = *S.current(Slot);
    if (Fresh.Slot != Slot)
      S.fatal("main", "test bug: pool object in the wrong slot", false);
    S.PoolUsed.store(Next + 1, std::memory_order_release);
    S.Slots[Slot].store(&Fresh, std::memory_order_release);
    enter(Old);
    Old.Closed = true;
    if (Old.UntimedRegistered > 0)
      produce(Old, Old.UntimedRegistered, /*All=*/true);
    exit(Old);
    ++Retirements;
    S.MainProgress.fetch_add(1, std::memory_order_relaxed);
  }

  // Runs until every worker has detached. While workers run, retires slot
  // objects as their operation count grows. Once every worker is either
  // finished or inside its untimed wait loop, nobody else will produce
  // tickets: hands them out one notify (or notifyAll) at a time, and fails
  // when a ticket is not consumed by any of the registered untimed waiters
  // within kLostNotifySeconds.
  void run() {
    std::vector<Clock::time_point> PendingSince(S.PoolSize);
    std::vector<char> Pending(S.PoolSize, 0);
    for (;;) {
      bool AllDetached = true, Quiescent = true;
      for (const auto &W : S.Workers) {
        int St = W->State.load(std::memory_order_relaxed);
        AllDetached &= St == WsDetached;
        Quiescent &= St == WsDetached || St == WsDone || St == WsWaitUntimed;
      }
      if (AllDetached)
        return;
      uint64_t Progress = 0;
      for (const auto &W : S.Workers)
        Progress += W->DiagOps.load(std::memory_order_relaxed);
      while (S.PoolUsed.load(std::memory_order_relaxed) < S.SharedSize &&
             Progress >= (Retirements + 1) * S.RetireEvery && !Quiescent)
        retire(int(Retirements % kObjects));
      if (!Quiescent) {
        std::fill(Pending.begin(), Pending.end(), 0);
        nap();
        continue;
      }
      size_t Used = S.PoolUsed.load(std::memory_order_relaxed);
      for (size_t I = 0; I < Used; ++I) {
        StressObject &Ob = S.Pool[I];
        if (Ob.DiagUntimed.load(std::memory_order_relaxed) == 0 && !Pending[I])
          continue;
        enter(Ob);
        if (Ob.UntimedRegistered == 0) {
          Pending[I] = 0;
        } else if (Ob.Tickets == 0) {
          bool All = (Round++ & 1) != 0;
          produce(Ob, All ? Ob.UntimedRegistered : 1, All);
          ++Rescues;
          S.MainProgress.fetch_add(1, std::memory_order_relaxed);
          Pending[I] = 1;
          PendingSince[I] = Clock::now();
        } else if (!Pending[I]) {
          Pending[I] = 1;
          PendingSince[I] = Clock::now();
        } else if (secondsSince(PendingSince[I]) > kLostNotifySeconds) {
          char Buf[400];
          std::snprintf(Buf, sizeof Buf,
                        "lost notification: object #%zu has had %llu "
                        "ticket(s) and %llu registered untimed waiter(s) for "
                        "%u s after a notify, while no other thread could "
                        "take a ticket",
                        I, (unsigned long long)Ob.Tickets,
                        (unsigned long long)Ob.UntimedRegistered,
                        kLostNotifySeconds);
          // Report with the object released, so that the dump shows the
          // waiters' own state.
          exit(Ob);
          S.fatal("main", Buf, /*RunDeadlockFinder=*/true);
        }
        exit(Ob);
      }
      nap();
    }
  }

  // Sleeps in native, so that safepoints do not wait for the sleep.
  void nap() {
    if (jitlock_rt_enter_native(Self) != JITLOCK_OK)
      S.fatal("main", "enter native failed", false);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (jitlock_rt_leave_native(Self) != JITLOCK_OK)
      S.fatal("main", "leave native failed", false);
  }
};

/// What a handshake with every thread counts: one run per target.
struct HandshakeTally {
  std::mutex Mu;
  std::vector<jitlock_thread *> Targets;
  static void fn(void *Ctx, jitlock_thread *Target) {
    auto *T = static_cast<HandshakeTally *>(Ctx);
    std::lock_guard<std::mutex> G(T->Mu);
    T->Targets.push_back(Target);
  }
};

/// The VM thread (not attached): safepoints back to back, each deflating
/// idle monitors and checking that every lock-stack root is an object of
/// the pool, and a handshake with every thread after every fourth, until it
/// has taken MinSafepoints and the workers are done.
void vmLoop(Stress &S, const std::atomic<unsigned> &WorkersLeft) {
  struct RootCheck {
    Stress *S;
    uint64_t Bad = 0;
    static void fn(void *Ctx, void **Slot, uint32_t Kind, jitlock_thread *) {
      auto *C = static_cast<RootCheck *>(Ctx);
      auto *Ob = static_cast<StressObject *>(*Slot);
      if (Kind == JITLOCK_ROOT_LOCK_STACK &&
          (Ob < &C->S->Pool[0] || Ob >= &C->S->Pool[C->S->PoolSize]))
        ++C->Bad;
    }
  };
  for (uint64_t N = 0;
       N < S.MinSafepoints || WorkersLeft.load(std::memory_order_acquire);
       ++N) {
    if (int Rc = jitlock_rt_safepoint_begin())
      S.fatal("vm", std::string("safepoint begin: ") + statusName(Rc), true);
    // Stopped means stopped: no worker completes an operation meanwhile.
    auto OpsNow = [&] {
      uint64_t Sum = 0;
      for (const auto &W : S.Workers)
        Sum += W->DiagOps.load(std::memory_order_relaxed);
      return Sum;
    };
    uint64_t OpsAtBegin = OpsNow();
    S.DeflatedAtSafepoints.fetch_add(jitlock_rt_deflate_idle());
    RootCheck Roots{&S};
    jitlock_rt_enumerate_roots(&RootCheck::fn, &Roots);
    if (Roots.Bad)
      S.fatal("vm", "a lock-stack root is not an object of the test", false);
    if (OpsNow() != OpsAtBegin)
      S.fatal("vm", "a worker ran an operation during a safepoint", false);
    if (int Rc = jitlock_rt_safepoint_end())
      S.fatal("vm", std::string("safepoint end: ") + statusName(Rc), true);
    S.Safepoints.fetch_add(1, std::memory_order_relaxed);
    if (N % 4 == 3) {
      HandshakeTally Tally;
      if (int Rc = jitlock_rt_handshake_all(&HandshakeTally::fn, &Tally))
        S.fatal("vm", std::string("handshake: ") + statusName(Rc), true);
      std::sort(Tally.Targets.begin(), Tally.Targets.end());
      if (std::adjacent_find(Tally.Targets.begin(), Tally.Targets.end()) !=
          Tally.Targets.end())
        S.fatal("vm", "a handshake ran twice for one thread", false);
      S.Handshakes.fetch_add(1, std::memory_order_relaxed);
    }
    if (N + 1 == S.MinSafepoints)
      S.VmDone.store(true, std::memory_order_release);
  }
  S.VmDone.store(true, std::memory_order_release);
}

//===-- The test ----------------------------------------------------------===//

TEST(JitlockStress, RandomOpsOverSharedObjects) {
  Stress S;
  GStress = &S;
  S.Seed = envU64(
      "JITLOCK_STRESS_SEED",
      uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) ^
          (uint64_t(getpid()) << 32));
  S.TotalOps = envU64("JITLOCK_STRESS_OPS", kDefaultOps);
  S.NumThreads = unsigned(envU64("JITLOCK_STRESS_THREADS", kDefaultThreads));
  S.WatchdogSeconds =
      unsigned(envU64("JITLOCK_STRESS_WATCHDOG_S", kDefaultWatchdogSeconds));
  S.MinSafepoints = envU64("JITLOCK_STRESS_SAFEPOINTS", kDefaultMinSafepoints);
  const uint32_t Mode = lockingModeFromEnv();
  std::printf("jitlock stress seed=%llu threads=%u ops=%llu slots=%d mode=%s "
              "monitors=%s safepoints>=%llu\n",
              (unsigned long long)S.Seed, S.NumThreads,
              (unsigned long long)S.TotalOps, kObjects, modeName(Mode),
              storageName(monitorStorageFromEnv()),
              (unsigned long long)S.MinSafepoints);
  std::fflush(stdout);
  ASSERT_GE(S.NumThreads, 1u);
  ASSERT_GE(S.TotalOps, 1u);

  // A misuse handler, installed while no thread is attached.
  for (auto &M : GMisuseCalls)
    M.store(0);
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.misuse_handler = misuseHandler;
  Cfg.misuse_ctx = &S;
  Cfg.locking_mode = Mode;
  Cfg.monitor_storage = monitorStorageFromEnv();
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);

  jitlock_rt_get_layout(&S.Layout);
  ASSERT_EQ(S.Layout.locking_mode, Mode);
  ASSERT_EQ(S.Layout.header_offset, 0);
  ASSERT_GT(S.Layout.lock_stack_capacity, 0u);
  ASSERT_LT(S.Layout.lock_stack_capacity, unsigned(kMaxDepth))
      << "nesting must exceed the lock stack's capacity";
  ASSERT_GT(S.Layout.hash_bits, 0u) << "the test installs identity hashes";
  const uint64_t HashMask =
      (S.Layout.hash_bits >= 64 ? ~0ull : (1ull << S.Layout.hash_bits) - 1)
      << S.Layout.hash_shift;

  // The object pool: headers unlocked, no hash, and embedder bits that must
  // survive everything.
  uint64_t PerThread = (S.TotalOps + S.NumThreads - 1) / S.NumThreads;
  S.SharedSize = kObjects + kMaxRetirements;
  S.PrivatePoolSize = std::clamp<uint64_t>(PerThread / 64, 64, 4096);
  S.PoolSize = S.SharedSize + size_t(S.NumThreads) * S.PrivatePoolSize;
  S.Pool.reset(new StressObject[S.PoolSize]);
  for (size_t I = 0; I < S.PoolSize; ++I) {
    StressObject &Ob = S.Pool[I];
    uint64_t Embedder = (0xA5C3ull + I) << 48 | ((I & 0xF) << 44) |
                        0xB4ull; // bits [7:2] are embedder bits too
    Embedder &= ~HashMask & ~S.Layout.lock_mask;
    Ob.Id = int(I);
    // Retirement r refills shared slot r % kObjects.
    Ob.Slot = I < S.SharedSize ? int(I % kObjects) : -1;
    Ob.InitialHeader = Embedder | S.Layout.unlocked_value;
    Ob.Header = Ob.InitialHeader;
  }
  for (int I = 0; I < kObjects; ++I)
    S.Slots[I].store(&S.Pool[I]);
  S.PoolUsed.store(kObjects);
  S.RetireEvery = std::max<uint64_t>(1, S.TotalOps / kMaxRetirements);

  jitlock_thread *Main = jitlock_rt_attach();
  ASSERT_NE(Main, nullptr);

  for (unsigned I = 0; I < S.NumThreads; ++I) {
    auto W = std::make_unique<Worker>();
    W->S = &S;
    W->Index = int(I);
    W->R.State = mix64(S.Seed ^ mix64(0x51ED2701ull + I));
    W->Budget = PerThread;
    W->PrivatePool = &S.Pool[S.SharedSize + size_t(I) * S.PrivatePoolSize];
    W->PrivatePoolSize = int(S.PrivatePoolSize);
    S.Workers.push_back(std::move(W));
  }
  // The worker list is complete before the watchdog and the prober read it.
  S.Start = Clock::now();
  std::thread Watchdog(watchdogLoop, std::ref(S));
  std::thread Prober(proberLoop, std::ref(S));
  for (auto &W : S.Workers)
    W->Thread = std::thread([W = W.get()] { W->run(); });
  while (S.Attached.load(std::memory_order_acquire) < S.NumThreads)
    std::this_thread::yield();
  S.Go.store(true, std::memory_order_release);

  std::atomic<unsigned> WorkersLeft{S.NumThreads};
  std::thread Vm(vmLoop, std::ref(S), std::cref(WorkersLeft));
  MainThread M{S, Main};
  M.run();
  ASSERT_EQ(jitlock_rt_enter_native(Main), JITLOCK_OK);
  for (auto &W : S.Workers)
    W->Thread.join();
  WorkersLeft.store(0, std::memory_order_release);
  Vm.join();
  ASSERT_EQ(jitlock_rt_leave_native(Main), JITLOCK_OK);
  double RunSeconds = secondsSince(S.Start);
  std::printf("  safepoints %llu (handshakes %llu), deflated inside them "
              "%llu\n",
              (unsigned long long)S.Safepoints.load(),
              (unsigned long long)S.Handshakes.load(),
              (unsigned long long)S.DeflatedAtSafepoints.load());
  EXPECT_GE(S.Safepoints.load(), S.MinSafepoints);
  {
    std::lock_guard<std::mutex> G(S.StopMu);
    S.Stop = true;
  }
  S.StopCv.notify_all();
  Watchdog.join();
  Prober.join();

  Counters Tot;
  for (auto &W : S.Workers)
    Tot.add(W->C);

  // Every object unlocked and unowned, the bookkeeping consistent.
  size_t Used = 0;
  uint64_t ShadowSum = 0, TicketSum = 0, Inflated = 0;
  for (size_t I = 0; I < S.PoolSize; ++I) {
    if (!S.inUse(I))
      continue;
    ++Used;
    StressObject &Ob = S.Pool[I];
    SCOPED_TRACE("object #" + std::to_string(I));
    jitlock_lock_info Info{};
    EXPECT_EQ(jitlock_rt_inspect(Ob.ptr(), &Info), JITLOCK_OK);
    EXPECT_TRUE(Info.state == JITLOCK_STATE_UNLOCKED ||
                Info.state == JITLOCK_STATE_INFLATED)
        << jitlock_test::stateName(Info.state).c_str();
    Inflated += Info.state == JITLOCK_STATE_INFLATED;
    EXPECT_EQ(Info.owner, nullptr);
    EXPECT_EQ(Info.anonymous_owner, 0u);
    EXPECT_EQ(Info.holds, 0u);
    EXPECT_EQ(Info.entry_queued, 0u);
    EXPECT_EQ(Info.waiting, 0u);
    EXPECT_EQ(jitlock_rt_owner_of(Ob.ptr()), nullptr);
    EXPECT_FALSE(jitlock_rt_holds_lock(Main, Ob.ptr()));
    EXPECT_EQ(Ob.Owner.load(), 0u);
    EXPECT_EQ(Ob.Registered, 0u);
    EXPECT_EQ(Ob.UntimedRegistered, 0u);
    ShadowSum += Ob.Shadow;
    TicketSum += Ob.Tickets;
  }
  // Mutual exclusion: no increment was lost.
  EXPECT_EQ(ShadowSum, Tot.Increments + M.Increments)
      << "shadow counters lost updates: mutual exclusion was violated";
  EXPECT_EQ(TicketSum + Tot.Consumed, Tot.Produced + M.Produced)
      << "tickets produced and consumed do not add up";
  EXPECT_GE(Tot.Ops, S.TotalOps);

  // Misuse: every refused call reached the handler, and nothing else did.
  EXPECT_EQ(GMisuseCalls[JITLOCK_ENOT_OWNER].load(), Tot.Misuse);
  for (int I = 0; I < 16; ++I)
    if (I != JITLOCK_ENOT_OWNER)
      EXPECT_EQ(GMisuseCalls[I].load(), 0u)
          << "misuse handler called with " << statusName(I);

  // Every worker is gone and main holds nothing: every monitor is idle.
  jitlock_rt_stats BeforeDeflation{};
  jitlock_rt_get_stats(&BeforeDeflation);
  EXPECT_EQ(BeforeDeflation.monitors_alive, Inflated);
  size_t Deflated = jitlock_rt_deflate_idle();
  EXPECT_EQ(Deflated, Inflated) << "deflation missed idle monitors";
  jitlock_rt_stats AfterDeflation{};
  jitlock_rt_get_stats(&AfterDeflation);
  EXPECT_EQ(AfterDeflation.monitors_alive, 0u) << "monitors leaked";
  for (size_t I = 0; I < S.PoolSize; ++I) {
    StressObject &Ob = S.Pool[I];
    uint64_t H = __atomic_load_n(&Ob.Header, __ATOMIC_ACQUIRE);
    EXPECT_EQ(H & ~HashMask, Ob.InitialHeader)
        << "object #" << I << std::hex << ": header " << H
        << " after deflation, initially " << Ob.InitialHeader;
  }

  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);

  jitlock_rt_stats St{};
  jitlock_rt_get_stats(&St);
  std::printf(
      "jitlock stress: %.2f s, %llu ops (%llu enters, %llu exits, adjacent "
      "recursion %llu, non-adjacent %llu, unstructured exits %llu, deepest "
      "%llu, ops at depth >= 9: %llu)\n"
      "  untimed waits: %llu ops, %llu calls, %llu OK (recursive waits %llu); "
      "timed waits: %llu (OK %llu, ETIMEDOUT %llu, holding others %llu)\n"
      "  notify %llu, notifyAll %llu, tickets produced %llu (+%llu by main in "
      "%llu rescues), consumed %llu; misuse %llu; hashes %llu; inspects %llu; "
      "deadlock probes %llu\n"
      "  objects used %zu (%llu retirements), inflated at the end %llu; shadow "
      "sum %llu, recorded increments %llu (+%llu by main)\n"
      "  stats: fast_locks=%llu recursive_locks=%llu monitor_enters=%llu "
      "inflations=%llu contended_enters=%llu parks=%llu slow_path_calls=%llu "
      "waits=%llu notifies=%llu monitors_alive=%llu\n",
      RunSeconds, (unsigned long long)Tot.Ops, (unsigned long long)Tot.Enters,
      (unsigned long long)Tot.Exits, (unsigned long long)Tot.AdjacentRecursion,
      (unsigned long long)Tot.NonAdjacentRecursion,
      (unsigned long long)Tot.UnstructuredExits,
      (unsigned long long)Tot.DeepestNesting,
      (unsigned long long)Tot.Depth9Plus,
      (unsigned long long)Tot.UntimedWaitOps,
      (unsigned long long)Tot.UntimedWaitCalls,
      (unsigned long long)Tot.UntimedOk, (unsigned long long)Tot.RecursiveWaits,
      (unsigned long long)Tot.TimedWaits, (unsigned long long)Tot.TimedOk,
      (unsigned long long)Tot.TimedOut,
      (unsigned long long)Tot.WaitsHoldingOthers,
      (unsigned long long)Tot.Notifies, (unsigned long long)Tot.NotifyAlls,
      (unsigned long long)Tot.Produced, (unsigned long long)M.Produced,
      (unsigned long long)M.Rescues, (unsigned long long)Tot.Consumed,
      (unsigned long long)Tot.Misuse, (unsigned long long)Tot.Hashes,
      (unsigned long long)Tot.Inspects, (unsigned long long)S.Probes.load(),
      Used, (unsigned long long)M.Retirements, (unsigned long long)Inflated,
      (unsigned long long)ShadowSum, (unsigned long long)Tot.Increments,
      (unsigned long long)M.Increments, (unsigned long long)St.fast_locks,
      (unsigned long long)St.recursive_locks,
      (unsigned long long)St.monitor_enters, (unsigned long long)St.inflations,
      (unsigned long long)St.contended_enters, (unsigned long long)St.parks,
      (unsigned long long)St.slow_path_calls, (unsigned long long)St.waits,
      (unsigned long long)St.notifies, (unsigned long long)St.monitors_alive);
  std::fflush(stdout);
  EXPECT_GT(St.inflations, 0u);
  EXPECT_GT(St.contended_enters, 0u);
  if (S.TotalOps >= 100000) {
    // Sanity: a full-size run exercised what it is meant to.
    EXPECT_GT(Tot.UntimedOk, 0u) << "no untimed wait ever blocked";
    EXPECT_GT(Tot.TimedOut, 0u);
    EXPECT_GT(Tot.TimedOk, 0u);
    EXPECT_GT(Tot.NonAdjacentRecursion, 0u);
    EXPECT_GT(Tot.UnstructuredExits, 0u);
    EXPECT_GT(Tot.RecursiveWaits, 0u);
    EXPECT_GT(Tot.WaitsHoldingOthers, 0u);
    EXPECT_EQ(Tot.DeepestNesting, uint64_t(kMaxDepth));
    if (Mode == JITLOCK_LOCKING_HEAVY)
      EXPECT_EQ(St.fast_locks, 0u) << "heavy mode fast-locked";
    else
      EXPECT_GT(St.fast_locks, 0u);
  }

  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  jitlock_rt_stats After{};
  jitlock_rt_get_stats(&After);
  EXPECT_EQ(After.monitors_alive, 0u) << "monitors left after shutdown";

  // Shutdown restored every header: unlocked, embedder bits and hash kept.
  for (size_t I = 0; I < S.PoolSize; ++I) {
    StressObject &Ob = S.Pool[I];
    SCOPED_TRACE("object #" + std::to_string(I));
    uint64_t H = __atomic_load_n(&Ob.Header, __ATOMIC_ACQUIRE);
    EXPECT_EQ(H & ~HashMask, Ob.InitialHeader)
        << std::hex << "header " << H << ", initially " << Ob.InitialHeader;
    // Table storage hashes every object it inflates, asked or not.
    if (Ob.Hash.load() || Cfg.monitor_storage != JITLOCK_MONITORS_TABLE)
      EXPECT_EQ(jitlock_rt_peek_hash(Ob.ptr()), Ob.Hash.load());
  }

  jitlock_rt_default_config(&Cfg);
  EXPECT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  GStress = nullptr;
}

//===-- Deflation rounds --------------------------------------------------===//
//
// The threads run rounds of random nested locking over kRoundShared shared
// objects (taken in slot order) and one fresh private object per nest: adjacent
// and non-adjacent recursion, unstructured exits, timed waits on the highest
// shared object held, notify, notifyAll and identity hashes. Between rounds
// every worker waits at a gate, holding nothing and running no lock code,
// and the main thread calls jitlock_rt_deflate_idle. Then no monitor may be
// alive, and every header must be its initial unlocked form with its hash.
// The private objects' memory is reused for fresh objects in the next round,
// as an embedder reuses memory after deflation. At the end the shadow
// counters must add up and every inflation must have been deflated.
//
// Run in the mode JITLOCK_STRESS_LOCKING selects; in heavy mode every nest
// inflates its private object, so each round churns through monitors.

constexpr int kRoundShared = 6;
constexpr unsigned kRounds = 50;

struct alignas(64) RoundObject {
  uint64_t Header = 0;
  uint64_t Shadow = 0; // guarded by the object's lock: plain on purpose
  std::atomic<uint64_t> Owner{0};
  std::atomic<uint64_t> Hash{0};
  uint64_t Initial = 0;
  void reset(uint64_t H) {
    __atomic_store_n(&Header, H, __ATOMIC_RELAXED);
    Initial = H;
    Hash.store(0, std::memory_order_relaxed);
  }
};

struct Rounds {
  uint64_t Seed = 0;
  uint64_t HashMask = 0;
  /// An unlocked header with `Bits` outside the lock and hash fields.
  uint64_t embedderBits(uint64_t Bits) const {
    return (Bits & ~HashMask & ~uint64_t(3)) | 1;
  }
  RoundObject Shared[kRoundShared];
  std::mutex Mu;
  std::condition_variable Cv;
  unsigned Arrived = 0;
  unsigned Released = 0; // rounds the main thread has finished
  std::atomic<uint64_t> Progress{0};

  [[noreturn]] void fail(unsigned Thread, const char *Fmt, ...)
      __attribute__((format(printf, 3, 4))) {
    char Buf[512];
    va_list Ap;
    va_start(Ap, Fmt);
    std::vsnprintf(Buf, sizeof Buf, Fmt, Ap);
    va_end(Ap);
    std::fprintf(stderr,
                 "\njitlock stress (deflation rounds) FAILED in thread %u: %s\n"
                 "  reproduce with JITLOCK_STRESS_SEED=%llu\n",
                 Thread, Buf, (unsigned long long)Seed);
    std::fflush(stderr);
    std::abort();
  }
};

struct RoundWorker {
  Rounds &R;
  unsigned Id;
  uint64_t OpsPerRound;
  Rng Rand;
  jitlock_thread *Self = nullptr;

  RoundWorker(Rounds &R, unsigned Id, uint64_t OpsPerRound, uint64_t Seed)
      : R(R), Id(Id), OpsPerRound(OpsPerRound), Rand{Seed},
        // A nest makes at least two calls.
        Private(new RoundObject[OpsPerRound / 2 + 1]),
        NumPrivate(OpsPerRound / 2 + 1) {}
  // One per nest, reused every round.
  std::unique_ptr<RoundObject[]> Private;
  size_t NumPrivate = 0;
  uint64_t Increments = 0, Calls = 0, TimedWaits = 0, Unstructured = 0;
  std::vector<RoundObject *> Held; // oldest first

  int sharedIndex(const RoundObject *O) const {
    return O >= R.Shared && O < R.Shared + kRoundShared ? int(O - R.Shared)
                                                        : -1;
  }
  uint64_t tag() const { return uint64_t(Id) + 1; }
  uint64_t embedderBits(uint64_t Bits) const { return R.embedderBits(Bits); }
  void call(int Rc, const char *What, RoundObject *O) {
    ++Calls;
    if (Rc != JITLOCK_OK)
      R.fail(Id, "%s(%p) returned %s", What, (void *)O, statusName(Rc));
  }
  void lock(RoundObject *O) {
    call(jitlock_rt_monitor_enter(Self, O), "monitor_enter", O);
    uint64_t Expect = std::count(Held.begin(), Held.end(), O) ? tag() : 0;
    uint64_t Prev = O->Owner.exchange(tag(), std::memory_order_relaxed);
    if (Prev != Expect)
      R.fail(Id, "mutual exclusion: entered %p whose owner slot was %llu",
             (void *)O, (unsigned long long)Prev);
    ++O->Shadow;
    ++Increments;
    Held.push_back(O);
  }
  void unlockAt(size_t K) {
    RoundObject *O = Held[K];
    Held.erase(Held.begin() + long(K));
    if (O->Owner.load(std::memory_order_relaxed) != tag())
      R.fail(Id, "mutual exclusion: %p held but its owner slot moved",
             (void *)O);
    ++O->Shadow;
    ++Increments;
    if (!std::count(Held.begin(), Held.end(), O))
      O->Owner.store(0, std::memory_order_relaxed);
    call(jitlock_rt_monitor_exit(Self, O), "monitor_exit", O);
  }
  void timedWait(RoundObject *O) {
    size_t Holds = size_t(std::count(Held.begin(), Held.end(), O));
    O->Owner.store(0, std::memory_order_relaxed);
    static constexpr uint64_t Timeouts[] = {0, 1000, 20000, 100000};
    int Rc = jitlock_rt_wait_timed(Self, O, Timeouts[Rand.below(4)]);
    ++Calls;
    ++TimedWaits;
    if (Rc != JITLOCK_OK && Rc != JITLOCK_ETIMEDOUT)
      R.fail(Id, "wait_timed returned %s", statusName(Rc));
    if (O->Owner.exchange(tag(), std::memory_order_relaxed) != 0)
      R.fail(Id, "mutual exclusion: %p owned by another after wait", (void *)O);
    jitlock_lock_info Info{};
    jitlock_rt_inspect(O, &Info);
    if (Info.owner != Self || Info.holds != Holds)
      R.fail(Id, "after wait: owner %p holds %llu, expected self with %zu",
             (void *)Info.owner, (unsigned long long)Info.holds, Holds);
    ++O->Shadow;
    ++Increments;
  }
  void hash(RoundObject *O) {
    uint64_t H = jitlock_rt_identity_hash(Self, O);
    ++Calls;
    uint64_t Old = 0;
    if (H == 0 || (!O->Hash.compare_exchange_strong(Old, H) && Old != H))
      R.fail(Id, "identity hash of %p changed from %#llx to %#llx", (void *)O,
             (unsigned long long)Old, (unsigned long long)H);
  }

  void nest(RoundObject *Fresh) {
    int Slot = int(Rand.below(kRoundShared));
    bool FreshDone = false;
    while (Slot < kRoundShared) {
      lock(&R.Shared[Slot]);
      if (Rand.chance(25))
        lock(&R.Shared[Slot]); // adjacent
      if (!FreshDone && Rand.chance(50)) {
        lock(Fresh);
        FreshDone = true;
      }
      if (Held.size() > 2 && Rand.chance(20))
        lock(Held[Rand.below(unsigned(Held.size() - 1))]); // non-adjacent
      Slot += 1 + int(Rand.below(3));
    }
    if (!FreshDone)
      lock(Fresh);
    uint32_t X = Rand.below(100);
    RoundObject *Top = nullptr; // the highest shared slot held
    for (RoundObject *O : Held)
      if (sharedIndex(O) >= 0 && (!Top || O > Top))
        Top = O;
    if (X < 15 && Top)
      timedWait(Top);
    else if (X < 30)
      call(jitlock_rt_notify(Self, Held[Rand.below(unsigned(Held.size()))]),
           "notify", nullptr);
    else if (X < 35)
      call(jitlock_rt_notify_all(Self, Held.back()), "notify_all", nullptr);
    else if (X < 45)
      hash(Held[Rand.below(unsigned(Held.size()))]);
    if (Held.size() > 1 && Rand.chance(25)) {
      unlockAt(Rand.below(unsigned(Held.size() - 1)));
      ++Unstructured;
    }
    while (!Held.empty())
      unlockAt(Held.size() - 1);
    if (jitlock_rt_lock_stack(Self, nullptr, 0) != 0)
      R.fail(Id, "lock stack not empty after a nest");
  }

  void run() {
    Self = jitlock_rt_attach();
    for (unsigned Round = 0; Round < kRounds; ++Round) {
      // Fresh private objects in the memory of the last round's, which
      // deflation has detached from their monitors.
      for (size_t I = 0; I < NumPrivate; ++I)
        Private[I].reset(embedderBits((uint64_t(Id) << 20 | I) << 40 | 0x94));
      uint64_t Start = Calls;
      size_t Next = 0;
      while (Calls - Start < OpsPerRound && Next < NumPrivate) {
        nest(&Private[Next++]);
        R.Progress.fetch_add(1, std::memory_order_relaxed);
      }
      // The gate: native (so that deflation's safepoint does not wait for
      // us), holding nothing, until main has deflated.
      if (jitlock_rt_enter_native(Self) != JITLOCK_OK)
        R.fail(Id, "enter native failed");
      {
        std::unique_lock<std::mutex> G(R.Mu);
        ++R.Arrived;
        R.Cv.notify_all();
        R.Cv.wait(G, [&] { return R.Released > Round; });
      }
      if (jitlock_rt_leave_native(Self) != JITLOCK_OK)
        R.fail(Id, "leave native failed");
    }
    if (jitlock_rt_detach() != JITLOCK_OK)
      R.fail(Id, "detach failed");
  }
};

TEST(JitlockStress, DeflationRounds) {
  Rounds R;
  R.Seed = envU64(
      "JITLOCK_STRESS_SEED",
      uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) ^
          (uint64_t(getpid()) << 32));
  uint64_t TotalOps = envU64("JITLOCK_STRESS_OPS", kDefaultOps);
  unsigned NumThreads =
      unsigned(envU64("JITLOCK_STRESS_THREADS", kDefaultThreads));
  unsigned WatchdogSeconds =
      unsigned(envU64("JITLOCK_STRESS_WATCHDOG_S", kDefaultWatchdogSeconds));
  const uint32_t Mode = lockingModeFromEnv();
  uint64_t OpsPerRound =
      std::max<uint64_t>(1, TotalOps / std::max(1u, NumThreads) / kRounds);
  std::printf("jitlock stress (deflation rounds) seed=%llu threads=%u "
              "rounds=%u calls/round/thread=%llu mode=%s monitors=%s\n",
              (unsigned long long)R.Seed, NumThreads, kRounds,
              (unsigned long long)OpsPerRound, modeName(Mode),
              storageName(monitorStorageFromEnv()));
  std::fflush(stdout);
  ASSERT_GE(NumThreads, 1u);

  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.locking_mode = Mode;
  Cfg.monitor_storage = monitorStorageFromEnv();
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  jitlock_rt_layout L{};
  jitlock_rt_get_layout(&L);
  ASSERT_EQ(L.header_offset, 0);
  R.HashMask = ((1ull << L.hash_bits) - 1) << L.hash_shift;
  for (int I = 0; I < kRoundShared; ++I)
    R.Shared[I].reset(R.embedderBits((0x5A5ull + uint64_t(I)) << 48 | 0xB4));
  jitlock_rt_stats S0{};
  jitlock_rt_get_stats(&S0);

  std::vector<std::unique_ptr<RoundWorker>> Workers;
  for (unsigned I = 0; I < NumThreads; ++I) {
    Workers.push_back(std::make_unique<RoundWorker>(
        R, I, OpsPerRound, mix64(R.Seed ^ mix64(0xDEF1A7E0ull + I))));
  }
  std::vector<std::thread> Threads;
  for (auto &W : Workers)
    Threads.emplace_back([W = W.get()] { W->run(); });

  uint64_t Deflated = 0, MaxAlive = 0;
  for (unsigned Round = 0; Round < kRounds; ++Round) {
    {
      std::unique_lock<std::mutex> G(R.Mu);
      // A watchdog: rounds only end by progress.
      uint64_t Seen = R.Progress.load();
      while (!R.Cv.wait_for(G, std::chrono::seconds(WatchdogSeconds), [&] {
        return R.Arrived == NumThreads * (Round + 1);
      })) {
        if (R.Progress.load() == Seen)
          R.fail(~0u, "no progress for %u s in round %u (%u arrived)",
                 WatchdogSeconds, Round, R.Arrived);
        Seen = R.Progress.load();
      }
    }
    // Every worker is stopped at the gate.
    for (RoundObject &O : R.Shared) {
      jitlock_lock_info Info{};
      ASSERT_EQ(jitlock_rt_inspect(&O, &Info), JITLOCK_OK);
      EXPECT_EQ(Info.owner, nullptr);
      EXPECT_EQ(Info.holds + Info.entry_queued + Info.waiting, 0u);
    }
    jitlock_rt_stats Before{};
    jitlock_rt_get_stats(&Before);
    MaxAlive = std::max(MaxAlive, Before.monitors_alive);
    size_t N = jitlock_rt_deflate_idle();
    Deflated += N;
    EXPECT_EQ(N, Before.monitors_alive) << "round " << Round;
    jitlock_rt_stats After{};
    jitlock_rt_get_stats(&After);
    ASSERT_EQ(After.monitors_alive, 0u)
        << "round " << Round << ", seed " << R.Seed;
    auto CheckHeader = [&](RoundObject &O) {
      uint64_t H = __atomic_load_n(&O.Header, __ATOMIC_ACQUIRE);
      uint64_t Hash = O.Hash.load(std::memory_order_relaxed);
      EXPECT_EQ(H & ~R.HashMask, O.Initial)
          << std::hex << "header " << H << " after deflation, seed " << std::dec
          << R.Seed;
      if (Hash)
        EXPECT_EQ((H & R.HashMask) >> L.hash_shift, Hash);
    };
    for (RoundObject &O : R.Shared)
      CheckHeader(O);
    for (auto &W : Workers)
      for (size_t I = 0; I < W->NumPrivate; ++I)
        CheckHeader(W->Private[I]);
    if (testing::Test::HasFailure())
      R.fail(~0u, "round %u failed its checks", Round);
    {
      std::lock_guard<std::mutex> G(R.Mu);
      ++R.Released;
    }
    R.Cv.notify_all();
  }
  for (auto &T : Threads)
    T.join();

  uint64_t Shadow = 0, Increments = 0, Calls = 0, Waits = 0, Unstructured = 0;
  for (RoundObject &O : R.Shared)
    Shadow += O.Shadow;
  for (auto &W : Workers) {
    for (size_t I = 0; I < W->NumPrivate; ++I)
      Shadow += W->Private[I].Shadow;
    Increments += W->Increments;
    Calls += W->Calls;
    Waits += W->TimedWaits;
    Unstructured += W->Unstructured;
  }
  jitlock_rt_stats S1{};
  jitlock_rt_get_stats(&S1);
  std::printf("jitlock stress (deflation rounds): %llu calls, %llu timed "
              "waits, %llu unstructured exits; inflations %llu, deflated "
              "%llu, at most %llu alive at a gate; contended %llu, fast "
              "locks %llu\n",
              (unsigned long long)Calls, (unsigned long long)Waits,
              (unsigned long long)Unstructured,
              (unsigned long long)(S1.inflations - S0.inflations),
              (unsigned long long)Deflated, (unsigned long long)MaxAlive,
              (unsigned long long)(S1.contended_enters - S0.contended_enters),
              (unsigned long long)(S1.fast_locks - S0.fast_locks));
  EXPECT_EQ(Shadow, Increments) << "lost updates: mutual exclusion violated";
  EXPECT_EQ(Deflated, S1.inflations - S0.inflations)
      << "every monitor created must have been deflated";
  EXPECT_EQ(S1.monitors_alive, 0u);
  EXPECT_GT(Deflated, 0u);
  if (Mode == JITLOCK_LOCKING_HEAVY)
    EXPECT_EQ(S1.fast_locks, S0.fast_locks);

  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  jitlock_rt_default_config(&Cfg);
  EXPECT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
}

} // namespace
