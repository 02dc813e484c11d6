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

} // namespace

int main(int Argc, char **Argv) {
  testing::InitGoogleTest(&Argc, Argv);
  for (int I = 1; I < Argc; ++I) {
    if (!strcmp(Argv[I], "--locking=heavy")) {
      Heavy = true;
    } else if (strcmp(Argv[I], "--locking=lightweight")) {
      fprintf(stderr, "usage: %s [--locking=lightweight|heavy]\n", Argv[0]);
      return 2;
    }
  }
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  jitlock_aarch64::checkLowering(L);
  printf("harness: %s, thread=%s, locking=%s\n", Argv[0],
         jitlock_lowered_thread, Heavy ? "heavy" : "lightweight");
  fflush(stdout);
  return RUN_ALL_TESTS();
}
