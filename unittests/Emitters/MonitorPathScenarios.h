//===- MonitorPathScenarios.h - Monitor paths of both targets ---*- C++ -*-===//
//
// The monitor enter and exit tests of x86_64 (X64EmitterTest.cpp, run
// natively) and AArch64 (A64EmitterTest.cpp, cross-built and run under
// qemu-aarch64) take the same paths through the protocol, written once here.
// Each target supplies only what is its own (a PathTarget): its emitted
// enter and exit, run on the calling thread with every register checked
// around them, and the slow-path calls its shims counted. This header needs
// nothing but the runtime's C ABI, the runtime test utilities, GoogleTest and
// the standard library, so the AArch64 cross build compiles it as it is.
//
// Every scenario starts from fresh objects (their headers at the layout's
// offset, with embedder bits) and checks, after each step, the lock state
// through the runtime's queries, the thread's lock stack, the header word,
// and the slow-path calls since the last step (so that inline paths stay
// inline). A target runs each single-thread scenario (pathScenarios()) for
// each of its register assignments, and the two with a contender
// (contendedScenarios()) for some of them.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_EMITTERS_MONITORPATHSCENARIOS_H
#define JITLOCK_UNITTESTS_EMITTERS_MONITORPATHSCENARIOS_H

#include "../Runtime/RuntimeTestUtil.h"

#include "jitlock/jitlock_rt.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <thread>
#include <vector>

namespace monitor_scenarios {

/// Slow-path calls so far, as a target's shims count them, and how many of
/// them the runtime refused (for a target whose shims see the result).
struct SlowCalls {
  uint64_t Enters = 0, Exits = 0, QueuedExits = 0, Refused = 0;
};

/// What the ExitQueued shim saw while a scenario fakes a nonzero entry
/// count (the runtime, which would wait for a queue that does not exist, is
/// not called then).
struct QueuedExitRecord {
  jitlock_thread *Thread = nullptr;
  void *Obj = nullptr;
  uint64_t OwnerAtCall = ~uint64_t(0); ///< the monitor's owner word then
};

/// One target's emitted enter and exit.
class PathTarget {
public:
  virtual ~PathTarget() = default;
  /// Runs the emitted enter (exit) of `Obj` on the calling thread, whose
  /// structure is `T`, checking the registers around it.
  virtual void enter(jitlock_thread *T, void *Obj) = 0;
  virtual void exit(jitlock_thread *T, void *Obj) = 0;
  virtual SlowCalls slowCalls() const = 0;
  virtual bool countsRefusals() const { return false; }
  /// From now until stopFakingQueue, ExitQueued calls on this thread are
  /// recorded, not sent to the runtime; `OwnerWord` is read at the call.
  virtual void fakeQueue(const std::atomic<uint64_t> *OwnerWord) = 0;
  virtual QueuedExitRecord stopFakingQueue() = 0;
};

/// Objects for the runtime's layout: each header at the layout's offset
/// from the object pointer (-32 to +24), unlocked, with embedder bits above
/// the hash field that every path must keep. An arena lives as long as the
/// runtime may keep monitors of its objects: a monitor must not see its
/// object's address reused.
class ObjectArena {
public:
  void *make(const jitlock_rt_layout &L) {
    Storage &S = Arena.emplace_back();
    void *O = reinterpret_cast<char *>(&S.Words[4]) - L.header_offset;
    headerWord(O, L) = (uint64_t(0xC0DE) << 48) |
                       ((Arena.size() & 0xff) << 40) | L.unlocked_value;
    return O;
  }
  static uint64_t &headerWord(const void *O, const jitlock_rt_layout &L) {
    return *reinterpret_cast<uint64_t *>(
        const_cast<char *>(static_cast<const char *>(O)) + L.header_offset);
  }

private:
  struct alignas(16) Storage {
    uint64_t Words[8] = {};
  };
  std::deque<Storage> Arena;
};

/// One scenario's run: the target, the attached calling thread, and the
/// checks each step makes.
class PathRun {
public:
  PathRun(PathTarget &Target, jitlock_thread *Self, const jitlock_rt_layout &L,
          ObjectArena &Objects)
      : Target(Target), Self(Self), L(L), Objects(Objects),
        Seen(Target.slowCalls()) {}

  void *object() { return Objects.make(L); }
  uint64_t header(const void *O) const {
    return __atomic_load_n(&ObjectArena::headerWord(O, L), __ATOMIC_SEQ_CST);
  }
  uint64_t withLockBits(uint64_t H, uint64_t Bits) const {
    return (H & ~L.lock_mask) | Bits;
  }

  /// The emitted enter (exit) of `O`, which must make `SlowEnters` calls of
  /// the runtime's enter (`SlowExits` of its exit) and no other.
  void enter(void *O, uint64_t SlowEnters, const std::string &Step) {
    Target.enter(Self, O);
    expectSlow(SlowEnters, 0, Step);
  }
  void exit(void *O, uint64_t SlowExits, const std::string &Step) {
    Target.exit(Self, O);
    expectSlow(0, SlowExits, Step);
  }

  /// Slow-path calls since the last check.
  SlowCalls slowSinceLastCheck() {
    SlowCalls Now = Target.slowCalls(), D;
    D.Enters = Now.Enters - Seen.Enters;
    D.Exits = Now.Exits - Seen.Exits;
    D.QueuedExits = Now.QueuedExits - Seen.QueuedExits;
    D.Refused = Now.Refused - Seen.Refused;
    Seen = Now;
    return D;
  }
  void expectSlow(uint64_t Enters, uint64_t Exits, const std::string &Step,
                  uint64_t QueuedExits = 0, uint64_t Refused = 0) {
    SlowCalls D = slowSinceLastCheck();
    EXPECT_EQ(D.Enters, Enters) << Step << ": slow enters";
    EXPECT_EQ(D.Exits, Exits) << Step << ": slow exits";
    EXPECT_EQ(D.QueuedExits, QueuedExits) << Step << ": ExitQueued calls";
    if (Target.countsRefusals())
      EXPECT_EQ(D.Refused, Refused) << Step << ": calls the runtime refused";
  }
  void expectNoneRefused(const SlowCalls &D, const std::string &Step) {
    if (Target.countsRefusals())
      EXPECT_EQ(D.Refused, 0u) << Step << ": calls the runtime refused";
  }
  /// An exit the runtime must refuse (the caller does not own `O`).
  void refusedExit(void *O, const std::string &Step) {
    Target.exit(Self, O);
    expectSlow(0, 1, Step, 0, /*Refused=*/1);
  }
  void expectLock(const void *O, uint32_t State, const jitlock_thread *Owner,
                  uint64_t Holds, const std::string &Step) {
    jitlock_lock_info I = jitlock_test::inspect(O);
    EXPECT_EQ(I.state, State) << Step << ": " << jitlock_test::describe(O);
    EXPECT_EQ(I.owner, Owner) << Step << ": " << jitlock_test::describe(O);
    EXPECT_EQ(I.holds, Holds) << Step << ": " << jitlock_test::describe(O);
    EXPECT_EQ(I.anonymous_owner, 0u) << Step;
  }
  void expectUnlocked(const void *O, const std::string &Step) {
    expectLock(O, JITLOCK_STATE_UNLOCKED, nullptr, 0, Step);
  }
  void expectStack(const std::vector<void *> &Want, const std::string &Step) {
    EXPECT_EQ(jitlock_test::lockStack(Self), Want) << Step;
  }
  /// Exits inflated `O`, held `Holds` times, until it is free: N2 counts
  /// the recursions down, N3 releases it; all inline.
  void exitInflated(void *O, uint64_t Holds) {
    for (uint64_t K = Holds - 1; K >= 1; --K) {
      exit(O, 0, "N2: recursions - 1");
      expectLock(O, JITLOCK_STATE_INFLATED, Self, K, "N2 (recursions)");
    }
    exit(O, 0, "N3");
    expectLock(O, JITLOCK_STATE_INFLATED, nullptr, 0, "N3");
  }
  /// Inflates `O` (A B A: E5's CAS fails, the runtime inflates A) and
  /// leaves it free, with nothing else held.
  void inflateFree(void *O, const std::string &Step) {
    void *B = object();
    enter(O, 0, Step);
    enter(B, 0, Step);
    enter(O, 1, Step + ": A B A, the runtime inflates A");
    exit(O, 0, Step);
    exit(B, 0, Step);
    exit(O, 0, Step);
    expectLock(O, JITLOCK_STATE_INFLATED, nullptr, 0, Step);
    expectStack({}, Step);
  }

  PathTarget &Target;
  jitlock_thread *const Self;
  const jitlock_rt_layout L;

private:
  ObjectArena &Objects;
  SlowCalls Seen;
};

//===-- The scenarios ----------------------------------------------------===//

/// Fast: E1-E5 then X1-X4, all inline; the embedder bits survive.
inline void fastLockAndUnlock(PathRun &R) {
  void *A = R.object();
  const uint64_t H0 = R.header(A);
  R.enter(A, 0, "E1-E5, push");
  R.expectLock(A, JITLOCK_STATE_FAST, R.Self, 1, "fast enter");
  R.expectStack({A}, "fast enter");
  EXPECT_EQ(R.header(A), R.withLockBits(H0, R.L.locked_value))
      << "the upper header bits survive";
  R.exit(A, 0, "X1-X4");
  R.expectUnlocked(A, "fast exit");
  R.expectStack({}, "fast exit");
  EXPECT_EQ(R.header(A), H0);
}

/// Recursive: E4 pushes with no atomic; X3 pops.
inline void recursive(PathRun &R) {
  void *A = R.object();
  const uint64_t H0 = R.header(A);
  std::vector<void *> Stack;
  for (uint64_t K = 1; K <= 3; ++K) {
    R.enter(A, 0, "E4: recursive push, no atomic");
    Stack.push_back(A);
    R.expectLock(A, JITLOCK_STATE_FAST, R.Self, K, "recursive enter");
    R.expectStack(Stack, "recursive enter");
  }
  EXPECT_EQ(R.header(A), R.withLockBits(H0, R.L.locked_value));
  for (uint64_t K = 3; K >= 1; --K) {
    R.exit(A, 0, "X3: recursive exit");
    Stack.pop_back();
    R.expectStack(Stack, "recursive exit");
    if (K > 1)
      R.expectLock(A, JITLOCK_STATE_FAST, R.Self, K - 1, "recursive exit");
  }
  R.expectUnlocked(A, "recursive exit");
  EXPECT_EQ(R.header(A), H0);
}

/// Serial: two objects, nested.
inline void nested(PathRun &R) {
  void *A = R.object(), *B = R.object();
  R.enter(A, 0, "serial enter");
  R.enter(B, 0, "serial enter");
  R.expectStack({A, B}, "serial enter");
  R.expectLock(B, JITLOCK_STATE_FAST, R.Self, 1, "serial enter");
  R.exit(B, 0, "serial exit");
  R.exit(A, 0, "serial exit");
  R.expectStack({}, "serial exit");
  R.expectUnlocked(A, "serial exit");
  R.expectUnlocked(B, "serial exit");
}

/// Non-adjacent re-entry A B A: E4 sees B, E5's CAS fails, the runtime
/// inflates A; from then on the inflated paths M1, M2, N2 and N3 stay
/// inline, and so does an inflated object under a fast-locked one.
inline void nonAdjacentThenInflated(PathRun &R) {
  void *A = R.object(), *B = R.object();
  R.enter(A, 0, "A");
  R.enter(B, 0, "A B");
  R.expectStack({A, B}, "A B");
  R.enter(A, 1, "A B A: the runtime inflates A");
  R.expectLock(A, JITLOCK_STATE_INFLATED, R.Self, 2, "A B A");
  R.expectLock(B, JITLOCK_STATE_FAST, R.Self, 1, "A B A");
  R.expectStack({B}, "A B A");
  EXPECT_EQ(R.header(A) & R.L.lock_mask, R.L.monitor_value);
  // X1 sees B on top -> N1 (10) -> N2 (recursions 1, owner self).
  R.exit(A, 0, "A B A: exit A, N2 inline");
  R.expectLock(A, JITLOCK_STATE_INFLATED, R.Self, 1, "A B A: exit A");
  R.exit(B, 0, "A B A: exit B");
  R.expectUnlocked(B, "A B A: exit B");
  R.expectStack({}, "A B A: exit B");
  R.exit(A, 0, "N3: owner self -> 0, nobody queued");
  R.expectLock(A, JITLOCK_STATE_INFLATED, nullptr, 0, "A B A: last exit");
  if (::testing::Test::HasFailure())
    return;

  R.enter(A, 0, "M1: owner 0 -> self");
  R.expectLock(A, JITLOCK_STATE_INFLATED, R.Self, 1, "M1");
  R.expectStack({}, "M1");
  R.enter(A, 0, "M2: recursions + 1");
  R.expectLock(A, JITLOCK_STATE_INFLATED, R.Self, 2, "M2");
  R.enter(A, 0, "M2 again");
  R.expectLock(A, JITLOCK_STATE_INFLATED, R.Self, 3, "M2 again");
  R.exitInflated(A, 3);
  // An inflated object under a fast-locked one: X1 -> N1 -> N3 inline.
  R.enter(A, 0, "inflated under fast");
  R.enter(B, 0, "inflated under fast");
  R.expectStack({B}, "inflated under fast");
  R.exit(B, 0, "inflated under fast");
  R.exit(A, 0, "inflated under fast");
  R.expectLock(A, JITLOCK_STATE_INFLATED, nullptr, 0, "inflated under fast");
  R.expectStack({}, "inflated under fast");
}

/// The owner word is tested exactly, before the recursions: another owner
/// (a fake one) sends N2 to the runtime, which refuses the exit and changes
/// nothing. A nonzero entry count (faked too: nobody is queued) leaves a
/// recursive exit inline, and makes the last one release the monitor and
/// then call ExitQueued once, with (thread, obj), the owner already 0.
inline void ownerWordAndEntryCount(PathRun &R) {
  void *A = R.object();
  R.inflateFree(A, "inflate");
  R.enter(A, 0, "M1");
  R.enter(A, 0, "M2");
  R.expectLock(A, JITLOCK_STATE_INFLATED, R.Self, 2, "M1, M2");
  const uintptr_t Monitor = reinterpret_cast<uintptr_t>(
      jitlock_test::inlineMonitor(R.L, R.Self, A, R.header(A)));
  ASSERT_NE(Monitor, 0u) << "the monitor is not in the thread's cache";
  auto &OwnerWord = *reinterpret_cast<std::atomic<uint64_t> *>(
      Monitor + R.L.monitor_owner_offset);
  auto &EntryCount = *reinterpret_cast<std::atomic<uint32_t> *>(
      Monitor + R.L.monitor_entry_count_offset);
  const uint64_t Self = reinterpret_cast<uintptr_t>(R.Self);
  ASSERT_EQ(OwnerWord.load(), Self);
  ASSERT_EQ(EntryCount.load(), 0u);
  auto *Other = static_cast<jitlock_thread *>(R.object());
  OwnerWord.store(reinterpret_cast<uintptr_t>(Other));
  R.refusedExit(A, "N2 (another owner)");
  R.expectLock(A, JITLOCK_STATE_INFLATED, Other, 2, "N2 (another owner)");
  OwnerWord.store(Self);

  R.Target.fakeQueue(&OwnerWord);
  EntryCount.store(1);
  R.exit(A, 0, "N2 (recursions, threads queued)");
  R.expectLock(A, JITLOCK_STATE_INFLATED, R.Self, 1, "N2 (threads queued)");
  R.Target.exit(R.Self, A);
  EntryCount.store(0);
  QueuedExitRecord Rec = R.Target.stopFakingQueue();
  R.expectSlow(0, 0, "N3 (threads queued)", /*QueuedExits=*/1);
  EXPECT_EQ(Rec.Thread, R.Self) << "N3 (threads queued)";
  EXPECT_EQ(Rec.Obj, A) << "N3 (threads queued)";
  EXPECT_EQ(Rec.OwnerAtCall, 0u) << "released before the call";
  R.expectLock(A, JITLOCK_STATE_INFLATED, nullptr, 0, "N3 (threads queued)");
  // Back to two holds, inline.
  R.enter(A, 0, "M1");
  R.enter(A, 0, "M2");
  R.expectLock(A, JITLOCK_STATE_INFLATED, R.Self, 2, "M1, M2");
  R.exitInflated(A, 2);
}

/// Full stack: the enter beyond the capacity fails E2; the runtime inflates
/// the oldest entry. Then the same with the top re-entered (the runtime
/// inflates the oldest and pushes).
inline void fullLockStack(PathRun &R) {
  const uint32_t Cap = R.L.lock_stack_capacity;
  std::vector<void *> O, Stack;
  std::vector<uint64_t> H0;
  for (uint32_t K = 0; K <= Cap; ++K) {
    O.push_back(R.object());
    H0.push_back(R.header(O.back()));
  }
  for (uint32_t K = 0; K < Cap; ++K) {
    R.enter(O[K], 0, "fill the stack");
    Stack.push_back(O[K]);
    R.expectStack(Stack, "fill the stack");
  }
  R.enter(O[Cap], 1, "E2: full -> the runtime inflates the oldest entry");
  Stack.erase(Stack.begin());
  Stack.push_back(O[Cap]);
  R.expectStack(Stack, "enter beyond the capacity");
  R.expectLock(O[0], JITLOCK_STATE_INFLATED, R.Self, 1, "beyond the capacity");
  for (uint32_t K = 1; K <= Cap; ++K)
    R.expectLock(O[K], JITLOCK_STATE_FAST, R.Self, 1, "beyond the capacity");
  for (uint32_t K = Cap; K >= 1; --K) {
    R.exit(O[K], 0, "unwind the full stack");
    R.expectUnlocked(O[K], "unwind the full stack");
    EXPECT_EQ(R.header(O[K]), H0[K]) << K;
    Stack.pop_back();
    R.expectStack(Stack, "unwind the full stack");
  }
  R.exit(O[0], 0, "N3 inline");
  R.expectLock(O[0], JITLOCK_STATE_INFLATED, nullptr, 0, "full stack unwound");
  R.expectStack({}, "full stack unwound");
  if (::testing::Test::HasFailure())
    return;

  for (uint32_t K = 1; K <= Cap; ++K)
    R.enter(O[K], 0, "full stack, adjacent re-entry");
  R.enter(O[Cap], 1, "full stack, adjacent re-entry");
  R.expectLock(O[Cap], JITLOCK_STATE_FAST, R.Self, 2, "full, adjacent");
  R.expectLock(O[1], JITLOCK_STATE_INFLATED, R.Self, 1, "full, adjacent");
  R.exit(O[Cap], 0, "full stack, adjacent re-entry: unwind");
  for (uint32_t K = Cap; K >= 1; --K)
    R.exit(O[K], 0, "full stack, adjacent re-entry: unwind");
  R.expectStack({}, "full stack, adjacent re-entry: unwind");
  R.expectLock(O[1], JITLOCK_STATE_INFLATED, nullptr, 0, "full, adjacent");
}

/// Full stack, and a free monitor: E2 fails before the header is tested,
/// so M1 is not tried; the runtime makes room first, then takes it.
inline void fullLockStackFreeMonitor(PathRun &R) {
  const uint32_t Cap = R.L.lock_stack_capacity;
  void *M = R.object();
  R.inflateFree(M, "inflate");
  std::vector<void *> N;
  for (uint32_t K = 0; K < Cap; ++K) {
    N.push_back(R.object());
    R.enter(N.back(), 0, "fill the stack");
  }
  R.enter(M, 1, "full stack, free monitor");
  R.expectLock(M, JITLOCK_STATE_INFLATED, R.Self, 1, "full, monitor");
  R.expectLock(N[0], JITLOCK_STATE_INFLATED, R.Self, 1, "full, monitor");
  R.expectStack(std::vector<void *>(N.begin() + 1, N.end()), "full, monitor");
  R.Target.exit(R.Self, M); // N3 inline
  for (size_t K = N.size(); K-- > 0;)
    R.Target.exit(R.Self, N[K]);
  // Table storage: the runtime's enter put both monitors in the thread's
  // cache, in an order of its choosing; one beyond the probed entries costs
  // its exit a slow call (a miss), which releases it all the same.
  SlowCalls D = R.slowSinceLastCheck();
  EXPECT_LE(D.Exits, R.L.monitor_storage == JITLOCK_MONITORS_TABLE ? 1u : 0u)
      << "full stack, free monitor: unwind";
  EXPECT_EQ(D.Enters, 0u) << "full stack, free monitor: unwind";
  EXPECT_EQ(D.QueuedExits, 0u) << "full stack, free monitor: unwind";
  R.expectNoneRefused(D, "full stack, free monitor: unwind");
  R.expectStack({}, "full stack, free monitor: unwind");
  R.expectLock(M, JITLOCK_STATE_INFLATED, nullptr, 0, "full, monitor");
  R.expectLock(N[0], JITLOCK_STATE_INFLATED, nullptr, 0, "full, monitor");
}

/// Identity hash: installed before the lock and while fast-locked (X4's CAS
/// must use the header it reloads); it never inflates.
inline void identityHash(PathRun &R) {
  void *C = R.object();
  uint64_t H1 = jitlock_rt_identity_hash(R.Self, C);
  EXPECT_NE(H1, 0u);
  uint64_t Hashed = R.header(C);
  R.enter(C, 0, "hashed enter");
  EXPECT_EQ(R.header(C), R.withLockBits(Hashed, R.L.locked_value));
  R.expectLock(C, JITLOCK_STATE_FAST, R.Self, 1, "hashed enter");
  R.exit(C, 0, "hashed exit");
  EXPECT_EQ(R.header(C), Hashed);
  void *D = R.object();
  R.enter(D, 0, "hash while locked");
  uint64_t H2 = jitlock_rt_identity_hash(R.Self, D);
  EXPECT_NE(H2, 0u);
  R.expectLock(D, JITLOCK_STATE_FAST, R.Self, 1, "hash while locked");
  R.exit(D, 0, "hash while locked");
  R.expectUnlocked(D, "hash while locked");
  EXPECT_EQ(jitlock_rt_peek_hash(D), H2);
  EXPECT_EQ(jitlock_rt_peek_hash(C), H1);
  EXPECT_EQ(R.header(D) & R.L.lock_mask, R.L.unlocked_value);
}

/// Unstructured: lock E; lock F; unlock E (X1 sees F -> N1: 00 -> the
/// runtime); unlock F. Then an exit of an object nobody holds goes to the
/// runtime, which refuses it; nothing changes.
inline void unstructuredAndNonOwnerExit(PathRun &R) {
  void *E = R.object(), *F = R.object();
  const uint64_t HE = R.header(E), HF = R.header(F);
  R.enter(E, 0, "unstructured");
  R.enter(F, 0, "unstructured");
  R.exit(E, 1, "unstructured exit");
  R.expectUnlocked(E, "unstructured exit");
  R.expectStack({F}, "unstructured exit");
  R.exit(F, 0, "unstructured exit F");
  R.expectStack({}, "unstructured exit");
  R.expectUnlocked(F, "unstructured exit");
  EXPECT_EQ(R.header(E), HE);
  EXPECT_EQ(R.header(F), HF);

  R.refusedExit(E, "exit by a non-owner");
  R.expectUnlocked(E, "exit by a non-owner");
  EXPECT_EQ(R.header(E), HE);
  R.expectStack({}, "exit by a non-owner");
}

//===-- With a contender -------------------------------------------------===//

/// The run's emitted enter fast-locks `O`; then another attached thread
/// enters it through the runtime (inflating it with an anonymous owner) and
/// exits once it has the lock.
class Contender {
public:
  Contender(PathRun &R, void *O)
      : Obj((R.enter(O, 0, "fast enter"), O)), Thread([this, O] {
          jitlock_thread *T = jitlock_rt_attach();
          Entered = jitlock_rt_monitor_enter(T, O) == JITLOCK_OK;
          Exited = jitlock_rt_monitor_exit(T, O) == JITLOCK_OK;
          Detached = jitlock_rt_detach() == JITLOCK_OK;
          Done = true;
        }) {}
  ~Contender() {
    if (Thread.joinable())
      Thread.detach();
  }

  /// Waits for the contender to have had the lock. If a failed test left
  /// `O` held by `Self`, releases it through the runtime first; a contender
  /// that never gets the lock fails the test instead of hanging it (the
  /// thread is left behind).
  /// Waits until the contender has inflated the object.
  bool inflatedAnonymously() const {
    return jitlock_test::waitUntil([&] {
      jitlock_lock_info I{};
      return jitlock_rt_inspect(Obj, &I) == JITLOCK_OK &&
             I.state == JITLOCK_STATE_INFLATED && I.anonymous_owner;
    });
  }

  void join(jitlock_thread *Self, void *O) {
    for (int I = 0; I != 8 && ::testing::Test::HasFailure() &&
                    jitlock_rt_holds_lock(Self, O);
         ++I)
      jitlock_rt_monitor_exit(Self, O);
    auto Deadline =
        std::chrono::steady_clock::now() +
        std::chrono::seconds(::testing::Test::HasFailure() ? 1 : 20);
    while (!Done.load()) {
      if (std::chrono::steady_clock::now() > Deadline) {
        ADD_FAILURE() << "the contender never got the lock";
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    Thread.join();
    EXPECT_TRUE(Entered && Exited && Detached);
  }

private:
  void *const Obj;
  std::atomic<bool> Entered{false}, Exited{false}, Detached{false}, Done{false};
  std::thread Thread;
};

/// X4: the header is 10 (a contender inflated the object with an anonymous
/// owner): the exit pushes the object back and the runtime fixes the owner.
inline void anonymousOwnerFixedAtExit(PathRun &R) {
  void *O = R.object();
  Contender C(R, O);
  ASSERT_TRUE(C.inflatedAnonymously());
  EXPECT_TRUE(jitlock_rt_holds_lock(R.Self, O));
  R.expectStack({O}, "inflated anonymously");
  R.exit(O, 1, "X4: bits 10, push back, the runtime fixes the owner");
  R.expectStack({}, "X4");
  EXPECT_FALSE(jitlock_rt_holds_lock(R.Self, O));
  C.join(R.Self, O);
  R.expectLock(O, JITLOCK_STATE_INFLATED, nullptr, 0, "after the contender");
}

/// E3, M1 fails on the anonymous owner, M2 -> the runtime fixes it; then
/// N2 and N3 inline.
inline void anonymousOwnerFixedAtEnter(PathRun &R) {
  void *O = R.object();
  Contender C(R, O);
  ASSERT_TRUE(C.inflatedAnonymously());
  R.enter(O, 1, "E3, M1 fails on the anonymous owner, M2 -> the runtime");
  R.expectLock(O, JITLOCK_STATE_INFLATED, R.Self, 2, "owner fixed");
  R.expectStack({}, "owner fixed");
  // The contender may have queued meanwhile: that changes only the entry
  // count, not the owner word, so N2 stays inline.
  R.exit(O, 0, "N2: recursions 1 -> 0, inline even if queued");
  R.expectLock(O, JITLOCK_STATE_INFLATED, R.Self, 1, "N2");
  // N3 releases inline, and calls ExitQueued once the contender has queued
  // (while it still spins, nothing).
  R.Target.exit(R.Self, O);
  SlowCalls D = R.slowSinceLastCheck();
  EXPECT_EQ(D.Enters + D.Exits, 0u) << "N3";
  EXPECT_LE(D.QueuedExits, 1u) << "N3";
  R.expectNoneRefused(D, "N3");
  EXPECT_FALSE(jitlock_rt_holds_lock(R.Self, O));
  C.join(R.Self, O);
  R.expectLock(O, JITLOCK_STATE_INFLATED, nullptr, 0, "after the contender");
}

//===-- The lists --------------------------------------------------------===//

struct Scenario {
  const char *Name;
  void (*Run)(PathRun &);
};

/// The single-thread scenarios, each from fresh objects.
inline const std::vector<Scenario> &pathScenarios() {
  static const std::vector<Scenario> List = {
      {"FastLockAndUnlock", fastLockAndUnlock},
      {"Recursive", recursive},
      {"Nested", nested},
      {"NonAdjacentThenInflated", nonAdjacentThenInflated},
      {"OwnerWordAndEntryCount", ownerWordAndEntryCount},
      {"FullLockStack", fullLockStack},
      {"FullLockStackFreeMonitor", fullLockStackFreeMonitor},
      {"IdentityHash", identityHash},
      {"UnstructuredAndNonOwnerExit", unstructuredAndNonOwnerExit},
  };
  return List;
}

/// The scenarios with a contender thread.
inline const std::vector<Scenario> &contendedScenarios() {
  static const std::vector<Scenario> List = {
      {"AnonymousOwnerFixedAtExit", anonymousOwnerFixedAtExit},
      {"AnonymousOwnerFixedAtEnter", anonymousOwnerFixedAtEnter},
  };
  return List;
}

/// Runs `S` for `Target` on the calling thread `Self`, with objects from
/// `Objects`.
inline void runScenario(const Scenario &S, PathTarget &Target,
                        jitlock_thread *Self, const jitlock_rt_layout &L,
                        ObjectArena &Objects) {
  SCOPED_TRACE(S.Name);
  PathRun R(Target, Self, L, Objects);
  S.Run(R);
  EXPECT_TRUE(jitlock_test::lockStack(Self).empty())
      << S.Name << " left locks held";
}

} // namespace monitor_scenarios

#endif // JITLOCK_UNITTESTS_EMITTERS_MONITORPATHSCENARIOS_H
