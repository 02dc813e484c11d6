//===- MonitorStorageTest.cpp - The examples under each monitor storage ---===//
//
// The runtime configured for index and for table monitor storage, the
// examples lowered for it (the lowering follows the layout) and run on 4
// and 8 threads while the deflation thread deflates every idle monitor each
// millisecond: inflated objects are entered and exited inline through the
// storage's lookup (M1, N2) while their monitors come and go. Each run must
// hold its invariant and leave every lock released, the lowered module must
// name the storage in its layout stamp, and deflation must have happened.
//
//===----------------------------------------------------------------------===//
#include "ExampleRunner.h"
#include "jitlock/JIT.h"
#include "jitlock/Passes.h"
#include "jitlock/jitlock_rt.h"

#include "DeflationWait.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

using namespace jitlock;
using namespace llvm;

namespace {

struct StorageCase {
  MonitorStorage Storage;
  const char *Example;
  int64_t Iterations;
};

std::string caseName(const ::testing::TestParamInfo<StorageCase> &Info) {
  return monitorStorageName(Info.param.Storage).str() + "_" +
         Info.param.Example;
}

class MonitorStorageTest : public ::testing::TestWithParam<StorageCase> {
protected:
  void SetUp() override {
    ASSERT_EQ(jitlock_rt_current(), nullptr);
    jitlock_rt_config Cfg;
    jitlock_rt_default_config(&Cfg);
    Cfg.monitor_storage = uint32_t(GetParam().Storage);
    int RC = jitlock_rt_configure(&Cfg);
    ASSERT_EQ(RC, JITLOCK_OK) << jitlock_rt_status_name(RC);
    Configured = true;
  }
  void TearDown() override {
    if (!Configured)
      return;
    jitlock_rt_config Cfg;
    jitlock_rt_default_config(&Cfg);
    EXPECT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  }
  bool Configured = false;
};

TEST_P(MonitorStorageTest, ExampleUnderTheDeflationThread) {
  const StorageCase &C = GetParam();
  const std::string Storage = monitorStorageName(C.Storage).str();
  for (unsigned Threads : {4u, 8u}) {
    SCOPED_TRACE(std::string(C.Example) + " on " + std::to_string(Threads) +
                 " threads, " + Storage + " storage");
    auto S = JitSession::loadFile(std::string(JITLOCK_EXAMPLES_DIR "/") +
                                  C.Example + ".ll");
    ASSERT_TRUE(!!S) << toString(S.takeError());
    // The lowering followed the runtime's layout.
    std::string IR;
    raw_string_ostream OS(IR);
    (*S)->printIR(OS);
    EXPECT_NE(IR.find(";monitors=" + Storage + ","), std::string::npos)
        << "the layout stamp does not name " << Storage << " storage";

    jitlock_deflation_stats D0{};
    jitlock_rt_get_deflation_stats(&D0);
    jitlock_deflation_policy P;
    jitlock_rt_default_deflation_policy(&P);
    P.period_ms = 1;
    P.idle_threshold = 1;
    ASSERT_EQ(jitlock_rt_start_deflation(&P), JITLOCK_OK);
    ExampleOptions EO;
    EO.Threads = Threads;
    EO.Iterations = C.Iterations;
    auto R = runExample(**S, EO);
    EXPECT_TRUE(jitlock_test::waitForDeflationCycle(D0.thread_cycles))
        << "the deflation thread ran no cycle in 10 s";
    ASSERT_EQ(jitlock_rt_stop_deflation(), JITLOCK_OK);
    ASSERT_TRUE(!!R) << toString(R.takeError());
    EXPECT_TRUE(R->ok()) << (R->Problems.empty() ? "" : R->Problems[0]);
    EXPECT_EQ(R->Check, 0);
    EXPECT_EQ(R->RunReturns.size(), Threads);

    jitlock_deflation_stats D1{};
    jitlock_rt_get_deflation_stats(&D1);
    EXPECT_GT(D1.thread_cycles, D0.thread_cycles);
    std::printf(
        "  %s, %s storage, %u threads: %llu inflations, %llu "
        "contended enters; %llu monitors deflated, %llu deflations "
        "cancelled\n",
        C.Example, Storage.c_str(), Threads,
        (unsigned long long)R->Stats.inflations,
        (unsigned long long)R->Stats.contended_enters,
        (unsigned long long)(D1.monitors_deflated - D0.monitors_deflated),
        (unsigned long long)(D1.cancelled - D0.cancelled));

    // Nobody holds anything; shutdown gives every object its header back.
    auto Objects = (*S)->objects();
    ASSERT_TRUE(!!Objects) << toString(Objects.takeError());
    for (const ModuleObject &O : *Objects) {
      jitlock_lock_info I{};
      ASSERT_EQ(jitlock_rt_inspect(O.Addr, &I), JITLOCK_OK) << O.Name;
      EXPECT_EQ(I.owner, nullptr) << O.Name;
      EXPECT_EQ(I.holds, 0u) << O.Name;
      EXPECT_EQ(I.entry_queued, 0u) << O.Name;
      EXPECT_EQ(I.waiting, 0u) << O.Name;
    }
    ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    for (const ModuleObject &O : *Objects) {
      jitlock_lock_info I{};
      ASSERT_EQ(jitlock_rt_inspect(O.Addr, &I), JITLOCK_OK) << O.Name;
      EXPECT_EQ(I.state, JITLOCK_STATE_UNLOCKED) << O.Name;
    }
    if (HasFailure())
      return;
  }
}

// deep.ll re-enters its objects non-adjacently, so they are inflated and
// then entered and exited inline through the storage (M1-M2, N2-N3) on every
// lock level; the others contend on shared objects.
const StorageCase Cases[] = {
    {MonitorStorage::Index, "counter", 20000},
    {MonitorStorage::Index, "bank", 20000},
    {MonitorStorage::Index, "prodcons", 5000},
    {MonitorStorage::Index, "recursive", 2000},
    {MonitorStorage::Index, "deep", 2000},
    {MonitorStorage::Table, "counter", 20000},
    {MonitorStorage::Table, "bank", 20000},
    {MonitorStorage::Table, "prodcons", 5000},
    {MonitorStorage::Table, "recursive", 2000},
    {MonitorStorage::Table, "deep", 2000},
};

INSTANTIATE_TEST_SUITE_P(Storage, MonitorStorageTest,
                         ::testing::ValuesIn(Cases), caseName);

} // namespace
