//===- MisuseDeathTest.cpp - Misuse from lowered code fails loudly --------===//
//
// The LLVM front door: lowered code calls jitlock_rt_monitor_enter_slow and
// _exit_slow, so its misuse (a thread that detached, an unbalanced exit)
// aborts by default with a message naming the thread and the object, and is
// reported and refused with compiled_code_misuse = JITLOCK_MISUSE_REPORT.
// Death tests fork while the parent has no thread but the main one.
//
//===----------------------------------------------------------------------===//
#include "ExampleRunner.h"
#include "jitlock/JIT.h"
#include "jitlock/jitlock_rt.h"

#include "../Runtime/RuntimeTestUtil.h"
#include "LoweredPair.h"

#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <string>

using namespace jitlock;
using jitlock_test::LoweredPair;
using llvm::toString;

namespace {

std::string hexAddress(const void *P) {
  char Buf[32];
  snprintf(Buf, sizeof(Buf), "%p", P);
  return Buf;
}

/// Applies the defaults with `Locking`, and `Log`'s handler and
/// report-and-continue when given one.
void configure(LockingMode Locking, jitlock_test::MisuseLog *Log) {
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.locking_mode = Locking == LockingMode::Heavy
                         ? JITLOCK_LOCKING_HEAVY
                         : JITLOCK_LOCKING_LIGHTWEIGHT;
  if (Log) {
    Cfg.misuse_handler = jitlock_test::MisuseLog::handler;
    Cfg.misuse_ctx = Log;
    Cfg.compiled_code_misuse = JITLOCK_MISUSE_REPORT;
  }
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
}

/// Back to the defaults, every monitor freed, for the next test.
void restoreDefaults() {
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  EXPECT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
}

class LoweredMisuseDeathTest : public ::testing::TestWithParam<LockingMode> {};

// The reproducer: an object inflated by a thread that then detaches and runs
// the lowered pair while four attached threads run it too.
TEST_P(LoweredMisuseDeathTest, DetachedPairUnderContentionAborts) {
  configure(GetParam(), nullptr);
  LoweredPair Code(GetParam());
  ASSERT_TRUE(Code.Lock && Code.Unlock);
  jitlock_test::MisuseLog Unused;
  // Kept to the end of the process, reachable (the child inflates it).
  static std::deque<jitlock_test::Obj> Kept;
  jitlock_test::Obj *O = &Kept.emplace_back();
  EXPECT_DEATH(jitlock_test::runDetachedPairUnderContention(
                   O, Unused, Code.enter(), Code.exit(), /*contenders=*/4,
                   /*iterations=*/2000),
               "jitlock: fatal: misuse from compiled code: monitor enter "
               "\\(JITLOCK_ENOT_ATTACHED\\) on a thread that is not "
               "attached, object " +
                   hexAddress(O) + "; aborting");
  restoreDefaults();
}

TEST_P(LoweredMisuseDeathTest, DetachedPairUnderContentionIsRefused) {
  jitlock_test::MisuseLog Log;
  configure(GetParam(), &Log);
  LoweredPair Code(GetParam());
  ASSERT_TRUE(Code.Lock && Code.Unlock);
  // Kept to the end of the process (a failed run may leave a monitor that
  // names it), where LeakSanitizer still finds it reachable.
  static std::deque<jitlock_test::Obj> Kept;
  jitlock_test::Obj *O = &Kept.emplace_back();
  jitlock_test::runDetachedPairUnderContention(O, Log, Code.enter(),
                                               Code.exit(), /*contenders=*/4,
                                               /*iterations=*/2000);
  restoreDefaults();
}

INSTANTIATE_TEST_SUITE_P(Locking, LoweredMisuseDeathTest,
                         ::testing::Values(LockingMode::Lightweight,
                                           LockingMode::Heavy),
                         [](const auto &Info) {
                           return std::string(Info.param == LockingMode::Heavy
                                                  ? "Heavy"
                                                  : "Lightweight");
                         });

// An example whose run() exits an object it never entered: jitlock-verify
// lets it through (the function does not enter @obj itself), the runtime
// catches it.
const char *const UnbalancedExample = R"(
  %Object = type { i64, i64 }
  @obj = global %Object { i64 1, i64 0 }
  declare void @jitlock.monitor.exit(ptr)
  define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
    call void @jitlock.monitor.exit(ptr @obj)
    ret i64 0
  }
  define i64 @jitlock_example_check(i64 %nthreads) {
    ret i64 0
  }
)";

class UnbalancedExampleDeathTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto S = JitSession::loadBuffer(UnbalancedExample, "unbalanced.ll");
    ASSERT_TRUE(!!S) << toString(S.takeError());
    Session = std::move(*S);
    auto Addr = Session->lookup("obj");
    ASSERT_TRUE(!!Addr) << toString(Addr.takeError());
    Obj = *Addr;
  }
  // Before the session, whose memory holds the object, goes away.
  void TearDown() override { restoreDefaults(); }

  std::unique_ptr<JitSession> Session;
  void *Obj = nullptr;
};

TEST_F(UnbalancedExampleDeathTest, Aborts) {
  ExampleOptions EO;
  EO.Threads = 2;
  EXPECT_DEATH(consumeError(runExample(*Session, EO).takeError()),
               "misuse from compiled code: monitor exit by a non-owner "
               "\\(JITLOCK_ENOT_OWNER\\) on thread [0-9]+, object " +
                   hexAddress(Obj) + "; aborting");
}

TEST_F(UnbalancedExampleDeathTest, IsReportedWhenReporting) {
  jitlock_test::MisuseLog Log;
  configure(LockingMode::Lightweight, &Log);
  ExampleOptions EO;
  EO.Threads = 4;
  auto R = runExample(*Session, EO);
  ASSERT_TRUE(!!R) << toString(R.takeError());
  EXPECT_EQ(R->Check, 0);
  ASSERT_EQ(Log.count(), 4u) << "one report per thread";
  for (const jitlock_test::MisuseRecord &Rec : Log.records) {
    EXPECT_EQ(Rec.status, JITLOCK_ENOT_OWNER)
        << jitlock_rt_status_name(Rec.status);
    EXPECT_EQ(Rec.obj, Obj);
  }
  EXPECT_EQ(*static_cast<uint64_t *>(Obj), 1u) << "the header changed";
}

} // namespace
