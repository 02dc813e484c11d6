//===- ExampleHarness.cpp - Runs a lowered example on AArch64 -------------===//
//
// Linked statically with the cross-compiled runtime and one example module
// that opt (with the jitlock plugin) lowered and llc compiled for AArch64.
// The example follows the convention of examples/*.ll:
//
//   void @jitlock_example_setup()                       optional
//   i64  @jitlock_example_run(i64 %tid, i64 %nthreads)  on N attached threads
//   i64  @jitlock_example_check(i64 %nthreads)          0 iff the invariant
//                                                      holds
//   i64  @jitlock_example_result()                      optional, printed
//   i64  @jitlock_example_iterations                    optional global, set
//                                                      by --iterations
//
// As in tools/common/ExampleRunner.cpp, the main thread is attached for setup
// and check (which may lock objects too) and the N threads start run together.
//
// stamp-lowered.py adds three constants to the lowered module, describing
// what the code was lowered for; before running anything the harness checks
// them against this process's runtime and refuses (exit status 3) on any
// difference (Lowered.h).
//
// --monitors pointer|index|table configures the runtime's monitor storage
// before anything else (the code must have been lowered for it: the layout
// stamp names it), and --deflation-thread runs the runtime's deflation
// thread while the threads run, deflating every idle monitor each
// millisecond.
//
// Without an example linked in (every example symbol is weak) the harness
// still answers --print-tls-offset: lit (test/AArch64/lit.local.cfg) runs
// that "probe" to learn the runtime's TLS offset in a static AArch64
// executable, which the link fixes: the example objects define no TLS, so
// adding one does not move it. The harness itself must define no TLS either.
//
//===----------------------------------------------------------------------===//
#include "Lowered.h"

#include "jitlock/jitlock_rt.h"

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <string>
#include <thread>
#include <vector>

extern "C" {
__attribute__((weak)) void jitlock_example_setup(void);
__attribute__((weak)) int64_t jitlock_example_run(int64_t tid,
                                                  int64_t nthreads);
__attribute__((weak)) int64_t jitlock_example_check(int64_t nthreads);
__attribute__((weak)) int64_t jitlock_example_result(void);
__attribute__((weak)) extern int64_t jitlock_example_iterations;
}

namespace {

using jitlock_aarch64::checkLowering;
using jitlock_aarch64::threadPointer;

constexpr int ExitFailed = 1;
constexpr int ExitUsage = 2;

void usage(const char *Argv0) {
  fprintf(stderr,
          "usage: %s [--threads N] [--iterations N] [--print-tls-offset] "
          "[--print-layout] [--monitors pointer|index|table] "
          "[--deflation-thread]\n",
          Argv0);
  exit(ExitUsage);
}

} // namespace

int main(int argc, char **argv) {
  long NThreads = 4;
  long long Iterations = -1;
  bool DeflationThread = false;
  for (int I = 1; I < argc; ++I) {
    char *End;
    if (!strcmp(argv[I], "--threads") && I + 1 < argc) {
      NThreads = strtol(argv[++I], &End, 10);
      if (*End || NThreads < 1 || NThreads > 256)
        usage(argv[0]);
    } else if (!strcmp(argv[I], "--iterations") && I + 1 < argc) {
      Iterations = strtoll(argv[++I], &End, 10);
      if (*End || Iterations < 0)
        usage(argv[0]);
    } else if (!strcmp(argv[I], "--print-tls-offset")) {
      jitlock_rt_layout L;
      jitlock_rt_get_layout(&L);
      printf("%" PRId64 "\n", L.thread_tls_offset);
      return 0;
    } else if (!strcmp(argv[I], "--monitors") && I + 1 < argc) {
      static const char *const Names[] = {"pointer", "index", "table"};
      const char *Name = argv[++I];
      uint32_t Storage = 0;
      while (Storage != 3 && strcmp(Name, Names[Storage]))
        ++Storage;
      if (Storage == 3)
        usage(argv[0]);
      jitlock_rt_config Cfg;
      jitlock_rt_default_config(&Cfg);
      Cfg.monitor_storage = Storage;
      if (int St = jitlock_rt_configure(&Cfg); St != JITLOCK_OK) {
        fprintf(stderr, "harness: --monitors %s: jitlock_rt_configure: %s\n",
                Name, jitlock_rt_status_name(St));
        return ExitUsage;
      }
    } else if (!strcmp(argv[I], "--deflation-thread")) {
      DeflationThread = true;
    } else if (!strcmp(argv[I], "--print-layout")) {
      jitlock_rt_print_layout(stdout);
      return 0;
    } else {
      usage(argv[0]);
    }
  }

  if (!jitlock_example_run || !jitlock_example_check) {
    fprintf(stderr, "harness: no example is linked in (this is the probe "
                    "binary; it only answers --print-tls-offset)\n");
    return ExitUsage;
  }

  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  bool Tls = checkLowering(L);
  printf("harness: %s, thread=%s, tls-offset %" PRId64 ", layout '%s'\n",
         argv[0], jitlock_lowered_thread, L.thread_tls_offset,
         jitlock_lowered_layout);
  fflush(stdout);

  if (Iterations >= 0) {
    if (!&jitlock_example_iterations) {
      fprintf(stderr, "harness: --iterations, but the example has no "
                      "@jitlock_example_iterations\n");
      return ExitUsage;
    }
    jitlock_example_iterations = Iterations;
  }

  // Attaches the calling thread and checks that it is where the lowered code
  // looks for it (in tls mode: thread pointer + the offset compiled in).
  auto Attach = [Tls](const char *Who) {
    jitlock_thread *Self = jitlock_rt_attach();
    if (Self && (!Tls || threadPointer() + jitlock_lowered_tls_offset ==
                             reinterpret_cast<char *>(Self)))
      return true;
    fprintf(stderr,
            "harness: %s: thread pointer + %" PRId64
            " is not the attached thread\n",
            Who, jitlock_lowered_tls_offset);
    return false;
  };
  if (!Attach("main thread"))
    return ExitFailed;
  if (jitlock_example_setup)
    jitlock_example_setup();

  jitlock_deflation_stats D0{};
  jitlock_rt_get_deflation_stats(&D0);
  if (DeflationThread) {
    jitlock_deflation_policy P;
    jitlock_rt_default_deflation_policy(&P);
    P.period_ms = 1;
    P.idle_threshold = 1;
    if (int St = jitlock_rt_start_deflation(&P); St != JITLOCK_OK) {
      fprintf(stderr, "harness: jitlock_rt_start_deflation: %s\n",
              jitlock_rt_status_name(St));
      return ExitFailed;
    }
  }

  std::vector<int64_t> Results(size_t(NThreads), 0);
  std::atomic<int> Failures{0};
  std::latch Start(NThreads);
  std::vector<std::thread> Threads;
  for (long T = 0; T != NThreads; ++T)
    Threads.emplace_back([&, T] {
      std::string Who = "thread " + std::to_string(T);
      if (!Attach(Who.c_str())) {
        Failures.fetch_add(1);
        Start.count_down();
        return;
      }
      Start.arrive_and_wait();
      Results[size_t(T)] = jitlock_example_run(T, NThreads);
      if (int S = jitlock_rt_detach(); S != JITLOCK_OK) {
        fprintf(stderr, "harness: thread %ld: detach: %s\n", T,
                jitlock_rt_status_name(S));
        Failures.fetch_add(1);
      }
    });
  // The main thread waits native: a handshake (the deflation thread's, A6)
  // must not wait for an attached thread that runs no code meanwhile.
  jitlock_thread *Main = jitlock_rt_current();
  jitlock_rt_enter_native(Main);
  for (std::thread &T : Threads)
    T.join();
  jitlock_rt_leave_native(Main);
  if (DeflationThread) {
    if (int St = jitlock_rt_stop_deflation(); St != JITLOCK_OK) {
      fprintf(stderr, "harness: jitlock_rt_stop_deflation: %s\n",
              jitlock_rt_status_name(St));
      return ExitFailed;
    }
  }
  if (Failures.load())
    return ExitFailed;

  int64_t Sum = 0;
  for (int64_t R : Results)
    Sum += R;
  jitlock_rt_stats S;
  jitlock_rt_get_stats(&S);
  printf("harness: %ld threads, run results sum %" PRId64 "\n", NThreads, Sum);
  printf("harness: runtime stats: slow_path_calls %" PRIu64
         ", fast_locks %" PRIu64 ", recursive_locks %" PRIu64
         ", monitor_enters %" PRIu64 ", inflations %" PRIu64
         ", contended_enters %" PRIu64 ", parks %" PRIu64
         ", monitors_alive %" PRIu64 "\n",
         S.slow_path_calls, S.fast_locks, S.recursive_locks, S.monitor_enters,
         S.inflations, S.contended_enters, S.parks, S.monitors_alive);
  if (DeflationThread) {
    jitlock_deflation_stats D1;
    jitlock_rt_get_deflation_stats(&D1);
    printf("harness: deflation thread: %" PRIu64 " cycles, %" PRIu64
           " monitors deflated, %" PRIu64 " cancelled\n",
           D1.thread_cycles - D0.thread_cycles,
           D1.monitors_deflated - D0.monitors_deflated,
           D1.cancelled - D0.cancelled);
  }

  int64_t Check = jitlock_example_check(NThreads);
  if (jitlock_example_result)
    printf("harness: result %" PRId64 "\n", jitlock_example_result());
  if (int St = jitlock_rt_detach(); St != JITLOCK_OK) {
    fprintf(stderr,
            "harness: main thread: detach: %s (setup or check left "
            "a lock held)\n",
            jitlock_rt_status_name(St));
    return ExitFailed;
  }
  if (int St = jitlock_rt_shutdown(); St != JITLOCK_OK) {
    fprintf(stderr, "harness: shutdown: %s\n", jitlock_rt_status_name(St));
    return ExitFailed;
  }
  if (Check != 0) {
    printf("harness: FAIL: jitlock_example_check returned %" PRId64 "\n",
           Check);
    return ExitFailed;
  }
  printf("harness: PASS\n");
  return 0;
}
