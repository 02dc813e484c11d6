//===- StackBangHarness.cpp - Runs LLVM-lowered stack checks --------------===//
//
// Linked statically with the cross-compiled runtime and recurse.ll, lowered
// by opt (jitlock-lower<...;bang=watermark|always>) and compiled by llc for
// AArch64 (test/AArch64/StackBang/recurse.ll), and run under qemu-aarch64:
//
//   --mode watermark  a fresh thread's first recursion calls the slow path
//                     (the watermark starts at the stack base), later ones
//                     of the same depth never do; then, inside
//                     jitlock_rt_call_guarded, a recursion deeper than the
//                     thread's stack is caught by the entry check (zone
//                     SHADOW, not a signal) and recovers, --rounds times in a
//                     row, with exactly the monitor holds the recursion had
//                     released.
//   --mode always     no slow call ever; the overflow is caught by the
//                     runtime's SIGSEGV backstop (from_signal = 1).
//
// The link wraps jitlock_rt_stack_bang (-Wl,--wrap), so the lowered code's
// slow calls are counted. Prints "harness: PASS" and exits 0, or says what
// failed and exits 1; exits 3 when the module was lowered for another
// runtime (Lowered.h). Defines no TLS (see ExampleHarness.cpp).
//
//===----------------------------------------------------------------------===//
#include "Lowered.h"

#include "jitlock/jitlock_rt.h"

#include <pthread.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
// recurse.ll.
void sb_recurse(int64_t Depth);
extern int64_t sb_entered, sb_holds, sb_corrupted;
extern uint64_t sb_objects[4]; // two { header, count }

void __real_jitlock_rt_stack_bang(jitlock_thread *Self, uintptr_t SpNeeded);
}

namespace {

std::atomic<uint64_t> SlowCalls{0};
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

void *object(int I) { return &sb_objects[2 * I]; }

void resetCounters() {
  sb_entered = 0;
  sb_holds = 0;
  sb_corrupted = 0;
}

/// Neither object is held, and the lock stack is empty.
void expectReleased(jitlock_thread *Self, const char *When) {
  for (int I = 0; I != 2; ++I) {
    jitlock_lock_info Info{};
    EXPECT(jitlock_rt_inspect(object(I), &Info) == JITLOCK_OK, "%s", When);
    EXPECT(Info.owner == nullptr && Info.holds == 0,
           "%s: object %d still held (%" PRIu64 " holds)", When, I, Info.holds);
  }
  void *Stack[16];
  size_t Depth = jitlock_rt_lock_stack(Self, Stack, 16);
  EXPECT(Depth == 0, "%s: lock stack depth %zu", When, Depth);
}

/// How many holds of object 0 and 1 levels 1..Entered of a recursion from
/// `Depth` took (level k runs with depth Depth - k + 1).
void expectedHolds(uint64_t Depth, uint64_t Entered, uint64_t Holds[2]) {
  Holds[0] = Holds[1] = 0;
  for (uint64_t K = 1; K <= Entered; ++K) {
    uint64_t D = Depth - K + 1;
    if (D % 4 == 0)
      ++Holds[(D >> 2) & 1];
  }
}

struct Options {
  bool Always = false;
  int Rounds = 100;
};

void recurseGuarded(void *Depth) { sb_recurse(*static_cast<int64_t *>(Depth)); }

void run(const Options &O, bool Tls) {
  jitlock_thread *Self = jitlock_rt_attach();
  EXPECT(jitlock_aarch64::threadIsWhereLowered(Tls, Self),
         "the attached thread is not where the lowered code looks");
  if (Failures)
    return;

  // The fast path.
  resetCounters();
  sb_recurse(40);
  EXPECT(sb_entered == 40 && sb_holds == 0 && sb_corrupted == 0,
         "depth 40: entered %" PRId64 ", holds %" PRId64 ", corrupted %" PRId64,
         sb_entered, sb_holds, sb_corrupted);
  const uint64_t First = SlowCalls.load();
  if (O.Always)
    EXPECT(First == 0, "bang=always called the slow path %" PRIu64 " times",
           First);
  else
    EXPECT(First >= 1, "a fresh thread's first checks did not call the slow "
                       "path");
  for (int64_t Depth : {40, 40, 20, 1, 39}) {
    resetCounters();
    sb_recurse(Depth);
    EXPECT(sb_entered == Depth && sb_holds == 0 && sb_corrupted == 0,
           "depth %" PRId64 ": entered %" PRId64 ", holds %" PRId64, Depth,
           sb_entered, sb_holds);
    EXPECT(SlowCalls.load() == First,
           "depth %" PRId64 " called the slow path again (%" PRIu64
           " calls, %" PRIu64 " before)",
           Depth, SlowCalls.load(), First);
  }
  expectReleased(Self, "after the shallow runs");
  printf("harness: fast path: %" PRIu64 " slow call(s) on the first run, "
         "none after\n",
         First);

  // Overflows, recovered.
  std::vector<void *> Released(1 << 16);
  int64_t FirstEntered = -1;
  for (int Round = 0; Round != O.Rounds && !Failures; ++Round) {
    resetCounters();
    int64_t Deep = int64_t(1) << 30;
    jitlock_guarded_result R{};
    R.released = Released.data();
    R.released_cap = Released.size();
    int Rc = jitlock_rt_call_guarded(Self, &recurseGuarded, &Deep, &R);
    EXPECT(Rc == JITLOCK_ESTACK_OVERFLOW, "round %d: %s", Round,
           jitlock_rt_status_name(Rc));
    const jitlock_stack_overflow &V = R.overflow;
    if (O.Always) {
      EXPECT(V.from_signal == 1 && (V.zone == JITLOCK_ZONE_RESERVED ||
                                    V.zone == JITLOCK_ZONE_YELLOW),
             "round %d: from_signal %u, zone %u", Round, V.from_signal, V.zone);
    } else {
      EXPECT(V.from_signal == 0 && V.zone == JITLOCK_ZONE_SHADOW &&
                 V.fault_addr == 0,
             "round %d: from_signal %u, zone %u: not the entry check", Round,
             V.from_signal, V.zone);
      EXPECT(V.sp <= V.stack.safe_limit,
             "round %d: sp_needed %#" PRIxPTR " above safe_limit %#" PRIxPTR,
             Round, V.sp, V.stack.safe_limit);
    }
    EXPECT(V.thread == Self, "round %d: the overflow names another thread",
           Round);
    EXPECT(sb_entered > 100 && sb_corrupted == 0,
           "round %d: entered %" PRId64 ", corrupted %" PRId64, Round,
           sb_entered, sb_corrupted);
    if (FirstEntered < 0)
      FirstEntered = sb_entered;
    else if (!O.Always)
      EXPECT(sb_entered == FirstEntered,
             "round %d: %" PRId64 " levels, %" PRId64 " in round 0", Round,
             sb_entered, FirstEntered);
    uint64_t Want[2];
    expectedHolds(uint64_t(Deep), uint64_t(sb_entered), Want);
    EXPECT(uint64_t(sb_holds) == Want[0] + Want[1] &&
               R.released_count == Want[0] + Want[1],
           "round %d: holds %" PRId64 ", released %zu, expected %" PRIu64,
           Round, sb_holds, R.released_count, Want[0] + Want[1]);
    uint64_t Seen[2] = {0, 0};
    for (size_t I = 0; I < R.released_count && I < Released.size(); ++I)
      for (int J = 0; J != 2; ++J)
        Seen[J] += Released[I] == object(J);
    EXPECT(Seen[0] == Want[0] && Seen[1] == Want[1],
           "round %d: released %" PRIu64 " x A and %" PRIu64
           " x B, expected %" PRIu64 " and %" PRIu64,
           Round, Seen[0], Seen[1], Want[0], Want[1]);
    expectReleased(Self, "after an overflow");
  }
  jitlock_stack_info Info{};
  EXPECT(jitlock_rt_stack_info(Self, &Info) == JITLOCK_OK, "stack_info");
  EXPECT(Info.overflows == uint64_t(O.Rounds), "%" PRIu64 " overflows",
         Info.overflows);
  printf("harness: %d overflow(s) recovered (%s), %" PRId64
         " levels deep, %zu lock holds released each\n",
         O.Rounds, O.Always ? "SIGSEGV backstop" : "entry check", FirstEntered,
         size_t(sb_holds));

  // And the thread runs as before.
  const uint64_t Calls = SlowCalls.load();
  resetCounters();
  sb_recurse(50);
  EXPECT(sb_entered == 50 && sb_holds == 0 && SlowCalls.load() == Calls,
         "a normal run after the overflows: entered %" PRId64 ", %" PRIu64
         " new slow calls",
         sb_entered, SlowCalls.load() - Calls);
  expectReleased(Self, "after a normal run");
  EXPECT(jitlock_rt_detach() == JITLOCK_OK, "detach");
}

} // namespace

/// -Wl,--wrap=jitlock_rt_stack_bang sends the lowered code's calls here.
extern "C" void __wrap_jitlock_rt_stack_bang(jitlock_thread *Self,
                                             uintptr_t SpNeeded) {
  SlowCalls.fetch_add(1, std::memory_order_relaxed);
  __real_jitlock_rt_stack_bang(Self, SpNeeded);
}

int main(int Argc, char **Argv) {
  Options O;
  for (int I = 1; I < Argc; ++I) {
    if (!strcmp(Argv[I], "--mode") && I + 1 < Argc) {
      const char *M = Argv[++I];
      if (strcmp(M, "watermark") && strcmp(M, "always"))
        return 2;
      O.Always = !strcmp(M, "always");
    } else if (!strcmp(Argv[I], "--rounds") && I + 1 < Argc) {
      O.Rounds = atoi(Argv[++I]);
    } else {
      fprintf(stderr, "usage: %s --mode watermark|always [--rounds N]\n",
              Argv[0]);
      return 2;
    }
  }
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  const bool Tls = jitlock_aarch64::checkLowering(L);
  printf("harness: %s, thread=%s, bang=%s\n", Argv[0], jitlock_lowered_thread,
         O.Always ? "always" : "watermark");
  fflush(stdout);

  // On a thread with a stack of known size.
  pthread_attr_t Attr;
  pthread_attr_init(&Attr);
  pthread_attr_setstacksize(&Attr, 1 << 20);
  struct Args {
    const Options *O;
    bool Tls;
  } A{&O, Tls};
  pthread_t T;
  if (pthread_create(
          &T, &Attr,
          [](void *P) -> void * {
            Args &A = *static_cast<Args *>(P);
            run(*A.O, A.Tls);
            return nullptr;
          },
          &A)) {
    fprintf(stderr, "harness: pthread_create failed\n");
    return 1;
  }
  pthread_join(T, nullptr);
  pthread_attr_destroy(&Attr);
  EXPECT(jitlock_rt_shutdown() == JITLOCK_OK, "shutdown");
  if (Failures)
    return 1;
  printf("harness: PASS\n");
  return 0;
}
