//===- DetachedHarness.cpp - Lowered monitor code, thread not attached ----===//
//
// Linked statically with the cross-compiled runtime and lock.ll, lowered by
// opt (jitlock-lower<thread=T;locking=L>) and compiled by llc for AArch64
// (test/AArch64/Detached/lock.ll), and run under qemu-aarch64. A thread that
// never attached runs the lowered enter on an object whose monitor is free:
// the runtime must refuse it and the monitor must stay free, and an attached
// thread contending through the same code must get it. This is the scenario
// every front door passes (expectDetachedEnterRefused in
// unittests/Runtime/RuntimeTestUtil.h), here on AArch64 machine code from
// llc.
//
//   --locking=heavy  configures the runtime in heavy mode, for code lowered
//                    with locking=heavy (lightweight otherwise)
//   --misuse=default instead of the test, leaves the runtime's default for
//                    misuse from compiled code: an object is locked and
//                    unlocked by an attached thread (in heavy mode it keeps
//                    its monitor), the thread detaches and runs the lowered
//                    enter, and the process must abort with a message
//                    naming the thread and the object
//
// Exits 3 before any test when the module was lowered for another runtime
// (Lowered.h).
//
//===----------------------------------------------------------------------===//
#include "Lowered.h"

#include "../../../unittests/Runtime/RuntimeTestUtil.h"

#include "jitlock/jitlock_rt.h"

#include <gtest/gtest.h>

#include <cstring>

extern "C" {
// lock.ll.
void detached_lock(void *Obj);
void detached_unlock(void *Obj);
}

namespace {

bool Heavy = false;

TEST(LoweredDetachedThread, InlineEnterOfAFreeMonitorIsRefused) {
  jitlock_test::MisuseLog Log;
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.misuse_handler = jitlock_test::MisuseLog::handler;
  Cfg.misuse_ctx = &Log;
  Cfg.compiled_code_misuse = JITLOCK_MISUSE_REPORT; // refusals, not aborts
  Cfg.locking_mode =
      Heavy ? JITLOCK_LOCKING_HEAVY : JITLOCK_LOCKING_LIGHTWEIGHT;
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  // Never freed: a failed run may leave a monitor that names it.
  auto *O = new jitlock_test::Obj;
  // The lowered code finds its thread itself (TLS or jitlock_rt_code_thread).
  jitlock_test::expectDetachedEnterRefused(
      O, Log, [](jitlock_thread *, void *P) { detached_lock(P); },
      [](jitlock_thread *, void *P) { detached_unlock(P); });
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  jitlock_rt_default_config(&Cfg);
  EXPECT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
}

/// The reproducer with the default policy; returns only if it did not abort.
int enterAfterDetachWithDefaults() {
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.locking_mode =
      Heavy ? JITLOCK_LOCKING_HEAVY : JITLOCK_LOCKING_LIGHTWEIGHT;
  if (jitlock_rt_configure(&Cfg) != JITLOCK_OK)
    return 2;
  auto *O = new jitlock_test::Obj;
  jitlock_thread *T = jitlock_rt_attach();
  if (jitlock_rt_monitor_enter(T, O) != JITLOCK_OK ||
      jitlock_rt_monitor_exit(T, O) != JITLOCK_OK ||
      jitlock_rt_detach() != JITLOCK_OK)
    return 2;
  printf("detached; entering %p\n", static_cast<void *>(O));
  fflush(stdout);
  detached_lock(O);
  printf("the lowered enter returned on a detached thread\n");
  return 1;
}

} // namespace

int main(int Argc, char **Argv) {
  testing::InitGoogleTest(&Argc, Argv);
  bool MisuseDefault = false;
  for (int I = 1; I < Argc; ++I) {
    if (!strcmp(Argv[I], "--locking=heavy")) {
      Heavy = true;
    } else if (!strcmp(Argv[I], "--misuse=default")) {
      MisuseDefault = true;
    } else if (strcmp(Argv[I], "--locking=lightweight")) {
      fprintf(stderr,
              "usage: %s [--locking=lightweight|heavy] [--misuse=default]\n",
              Argv[0]);
      return 2;
    }
  }
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  jitlock_aarch64::checkLowering(L);
  printf("harness: %s, thread=%s, locking=%s\n", Argv[0],
         jitlock_lowered_thread, Heavy ? "heavy" : "lightweight");
  fflush(stdout);
  if (MisuseDefault)
    return enterAfterDetachWithDefaults();
  return RUN_ALL_TESTS();
}
