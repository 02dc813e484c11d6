//===- SafepointHarness.cpp - Runs LLVM-lowered safepoint polls -----------===//
//
// Linked statically with the cross-compiled runtime and poll.ll, lowered by
// opt (jitlock-lower, polls=auto from the module's flag) and compiled by
// llc for AArch64 (test/AArch64/Safepoint/poll.ll), and run under
// qemu-aarch64:
//
//   --threads N      attached threads run the loops of poll.ll: even ones
//                    @sp_count_explicit (the frontend's poll), odd ones
//                    @sp_count_locked (a poll that polls=auto placed, and
//                    the fast paths of a monitor of their own);
//   --safepoints K   meanwhile the main thread, unattached (the VM thread),
//                    takes K safepoints: while each is held no counter
//                    moves (read twice, 1 ms apart) and every thread is
//                    blocked; once it is released every counter moves
//                    again. It also handshakes each thread: the operation
//                    runs once, on its target's own thread (at a poll: a
//                    looping thread is never safe for the requester to run
//                    it there). Then it stops the loops: each returns its
//                    count, which its monitor's total matches.
//
// Prints "harness: PASS" and exits 0, or says what failed and exits 1 (a
// safepoint or handshake that does not complete in 60 s too, rather than
// hang); exits 3 when the module was lowered for another runtime
// (Lowered.h). Defines no TLS (see ExampleHarness.cpp).
//
//===----------------------------------------------------------------------===//
#include "../../../unittests/Runtime/Watchdog.h"
#include "Lowered.h"

#include "jitlock/jitlock_rt.h"

#include <atomic>
#include <barrier>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

extern "C" {
// poll.ll.
int64_t sp_count_explicit(int64_t Tid);
int64_t sp_count_locked(int64_t Tid);
extern uint64_t sp_locks[64][2]; // { header, total } per thread
extern int64_t sp_counters[64];
extern int64_t sp_stop;
}

namespace {

int Failures = 0;

#define EXPECT(Cond, ...)                                                      \
  do {                                                                         \
    if (!(Cond)) {                                                             \
      ++Failures;                                                              \
      fprintf(stderr, "harness: FAIL: %s: ", #Cond);                           \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
    }                                                                          \
  } while (0)

int64_t counter(int I) {
  return __atomic_load_n(&sp_counters[I], __ATOMIC_RELAXED);
}

/// Ends the process as a failure when a phase takes longer than the limit:
/// a loop that never polls would make a safepoint wait forever.
void stuckInPhase(const std::string &Phase) {
  fprintf(stderr, "harness: FAIL: stuck in %s\n", Phase.c_str());
  fflush(stderr);
  _exit(1);
}

/// What a handshake operation saw.
struct HandshakeRecord {
  std::atomic<int> Runs{0};
  std::atomic<jitlock_thread *> RanOn{nullptr};
  std::atomic<jitlock_thread *> Target{nullptr};
};

void recordHandshake(void *Arg, jitlock_thread *Target) {
  auto *R = static_cast<HandshakeRecord *>(Arg);
  R->RanOn.store(jitlock_rt_current());
  R->Target.store(Target);
  R->Runs.fetch_add(1);
}

bool locks(int Tid) { return Tid % 2 == 1; }

/// Waits until counter I is above Past[I] for every thread; false after
/// 30 s.
bool allMovePast(int NThreads, const std::vector<int64_t> &Past) {
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (int I = 0; I != NThreads; ++I)
    while (counter(I) <= Past[size_t(I)]) {
      if (std::chrono::steady_clock::now() > Deadline) {
        EXPECT(counter(I) > Past[size_t(I)],
               "thread %d's counter stays at %" PRId64, I, counter(I));
        return false;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  return true;
}

void run(int NThreads, int NSafepoints, bool Tls) {
  std::vector<jitlock_thread *> Threads(size_t(NThreads), nullptr);
  std::vector<int64_t> Returned(size_t(NThreads), 0);
  std::atomic<int> Misplaced{0};
  for (int T = 0; T != NThreads; ++T)
    sp_locks[T][0] = 1; // unlocked
  std::barrier Start(NThreads + 1);
  std::vector<std::thread> Workers;
  for (int T = 0; T != NThreads; ++T)
    Workers.emplace_back([&, T] {
      jitlock_thread *Self = jitlock_rt_attach();
      Threads[size_t(T)] = Self;
      if (!jitlock_aarch64::threadIsWhereLowered(Tls, Self))
        Misplaced.fetch_add(1);
      // Safe while it waits for the others, outside the runtime.
      jitlock_rt_enter_native(Self);
      Start.arrive_and_wait();
      jitlock_rt_leave_native(Self);
      if (Misplaced.load())
        return;
      Returned[size_t(T)] =
          locks(T) ? sp_count_locked(T) : sp_count_explicit(T);
      if (int S = jitlock_rt_detach(); S != JITLOCK_OK)
        EXPECT(S == JITLOCK_OK, "thread %d: detach: %s", T,
               jitlock_rt_status_name(S));
    });
  Start.arrive_and_wait();
  EXPECT(!Misplaced.load(),
         "the attached threads are not where the lowered code looks");

  jitlock_test::Watchdog Dog(std::chrono::seconds(60), "start", stuckInPhase);
  auto StopAndJoin = [&] {
    __atomic_store_n(&sp_stop, 1, __ATOMIC_RELAXED);
    for (std::thread &W : Workers)
      if (W.joinable())
        W.join();
  };
  if (Failures) {
    StopAndJoin();
    return;
  }

  Dog.phase("the first iterations");
  std::vector<int64_t> Held(size_t(NThreads), 0);
  allMovePast(NThreads, Held);
  int Handshakes = 0;
  for (int Round = 0; Round != NSafepoints && !Failures; ++Round) {
    Dog.phase("safepoint " + std::to_string(Round));
    EXPECT(jitlock_rt_safepoint_begin() == JITLOCK_OK, "safepoint %d", Round);
    for (int I = 0; I != NThreads; ++I)
      Held[size_t(I)] = counter(I);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (int I = 0; I != NThreads; ++I) {
      EXPECT(counter(I) == Held[size_t(I)],
             "thread %d's counter moved from %" PRId64 " to %" PRId64
             " during safepoint %d",
             I, Held[size_t(I)], counter(I), Round);
      int State = jitlock_rt_thread_state(Threads[size_t(I)]);
      EXPECT(State == JITLOCK_THREAD_BLOCKED,
             "thread %d is in state %d during safepoint %d", I, State, Round);
    }
    EXPECT(jitlock_rt_safepoint_end() == JITLOCK_OK, "safepoint %d", Round);
    Dog.phase("the iterations after safepoint " + std::to_string(Round));
    allMovePast(NThreads, Held);

    // Every tenth round, a handshake with each thread.
    if (Round % 10 != 0)
      continue;
    for (int I = 0; I != NThreads && !Failures; ++I) {
      Dog.phase("a handshake with thread " + std::to_string(I));
      HandshakeRecord R;
      jitlock_thread *Target = Threads[size_t(I)];
      EXPECT(jitlock_rt_handshake(Target, recordHandshake, &R) == JITLOCK_OK,
             "handshake with thread %d", I);
      EXPECT(R.Runs.load() == 1 && R.Target.load() == Target,
             "thread %d's handshake ran %d times", I, R.Runs.load());
      EXPECT(R.RanOn.load() == Target,
             "thread %d's handshake ran on another thread", I);
      ++Handshakes;
    }
  }

  Dog.phase("stopping the loops");
  StopAndJoin();
  for (int I = 0; I != NThreads; ++I) {
    EXPECT(Returned[size_t(I)] == counter(I),
           "thread %d returned %" PRId64 ", its counter is %" PRId64, I,
           Returned[size_t(I)], counter(I));
    if (locks(I))
      EXPECT(sp_locks[I][0] == 1 && int64_t(sp_locks[I][1]) == counter(I),
             "thread %d's object: header %#" PRIx64 ", total %" PRIu64
             ", counted %" PRId64,
             I, sp_locks[I][0], sp_locks[I][1], counter(I));
  }
  printf("harness: %d threads stopped at %d safepoints and released; %d "
         "handshakes, each run by its target; counters",
         NThreads, NSafepoints, Handshakes);
  for (int I = 0; I != NThreads; ++I)
    printf(" %" PRId64, counter(I));
  printf("\n");
}

} // namespace

int main(int Argc, char **Argv) {
  int NThreads = 4, NSafepoints = 100;
  for (int I = 1; I < Argc; ++I) {
    if (!strcmp(Argv[I], "--threads") && I + 1 < Argc) {
      NThreads = atoi(Argv[++I]);
    } else if (!strcmp(Argv[I], "--safepoints") && I + 1 < Argc) {
      NSafepoints = atoi(Argv[++I]);
    } else {
      NThreads = 0;
      break;
    }
  }
  if (NThreads < 1 || NThreads > 64 || NSafepoints < 1) {
    fprintf(stderr, "usage: %s [--threads 1..64] [--safepoints N]\n", Argv[0]);
    return 2;
  }
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  const bool Tls = jitlock_aarch64::checkLowering(L);
  printf("harness: %s, thread=%s, %d threads, %d safepoints\n", Argv[0],
         jitlock_lowered_thread, NThreads, NSafepoints);
  fflush(stdout);
  run(NThreads, NSafepoints, Tls);
  EXPECT(jitlock_rt_shutdown() == JITLOCK_OK, "shutdown");
  if (Failures)
    return 1;
  printf("harness: PASS\n");
  return 0;
}
