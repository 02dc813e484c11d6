//===- LayoutCheckTest.cpp - Lowered code refuses another layout ----------===//
//
// Code lowered for one runtime layout and run against another must stop with
// a message, not miscount or fault (label jit):
//
//   LayoutCheck.MatchingLayoutRuns      the module constructor the lowering
//                                       adds passes, in a bare LLJIT that
//                                       runs constructors (initialize)
//   LayoutCheck.HeaderOffsetMismatch    lowered for header offset 8, run on a
//                                       runtime at 0: the constructor aborts
//                                       naming both layouts
//   LayoutCheck.StorageMismatch         lowered for index monitors, run on
//                                       pointer monitors: the same
//   LayoutCheck.ReconfigureRefused      once the layout was handed out,
//                                       configure refuses another layout
//                                       (naming both), takes the same one,
//                                       and takes another after shutdown
//   LayoutCheck.CheckLayoutEntry        jitlock_rt_check_layout itself: a
//                                       null or foreign fingerprint under
//                                       JITLOCK_MISUSE_REPORT returns
//                                       JITLOCK_EINVAL through the handler
//   LayoutCheck.DeferredUntilHandedOut  a check before the layout is handed
//                                       out (a constructor before main)
//                                       waits for the configuration, and
//                                       fails at the first attach
//
//===----------------------------------------------------------------------===//
#include "jitlock/Passes.h"
#include "jitlock/RuntimeSymbols.h"
#include "jitlock/jitlock_rt.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>

using namespace llvm;

namespace {

constexpr const char *CounterIR = R"IR(
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @bump(ptr %obj, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.monitor.enter(ptr %obj)
  %field = getelementptr inbounds i8, ptr %obj, i64 16
  %v = load i64, ptr %field
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %field
  call void @jitlock.monitor.exit(ptr %obj)
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
)IR";

/// Lowers the counter module with `Config`, loads it into a bare LLJIT
/// (only the runtime's table), runs its constructors, as an embedder's JIT
/// must, and returns @bump.
void (*loadLowered(const jitlock::LoweringConfig &Config,
                   std::unique_ptr<orc::LLJIT> &Keep))(void *, int64_t) {
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  auto Ctx = std::make_unique<LLVMContext>();
  SMDiagnostic Err;
  std::unique_ptr<Module> M = parseAssemblyString(CounterIR, Err, *Ctx);
  if (!M) {
    ADD_FAILURE() << Err.getMessage().str();
    return nullptr;
  }
  {
    ModulePassManager MPM;
    jitlock::addLoweringPasses(MPM, Config);
    PassBuilder PB;
    ModuleAnalysisManager MAM;
    PB.registerModuleAnalyses(MAM);
    MPM.run(*M, MAM);
  }
  auto J = orc::LLJITBuilder().create();
  if (!J) {
    ADD_FAILURE() << toString(J.takeError());
    return nullptr;
  }
  orc::SymbolMap Map;
  for (const jitlock::RuntimeSymbol &S : jitlock::runtimeSymbols())
    Map[(*J)->mangleAndIntern(S.Name)] = orc::ExecutorSymbolDef(
        orc::ExecutorAddr::fromPtr(S.Addr),
        JITSymbolFlags::Exported | JITSymbolFlags::Callable);
  if (Error E =
          (*J)->getMainJITDylib().define(orc::absoluteSymbols(std::move(Map))))
    ADD_FAILURE() << toString(std::move(E));
  if (Error E = (*J)->addIRModule(
          orc::ThreadSafeModule(std::move(M), std::move(Ctx))))
    ADD_FAILURE() << toString(std::move(E));
  if (Error E = (*J)->initialize((*J)->getMainJITDylib())) {
    ADD_FAILURE() << "initialize: " << toString(std::move(E));
    return nullptr;
  }
  auto Addr = (*J)->lookup("bump");
  if (!Addr) {
    ADD_FAILURE() << toString(Addr.takeError());
    return nullptr;
  }
  Keep = std::move(*J);
  return Addr->toPtr<void (*)(void *, int64_t)>();
}

/// Runs @bump on the calling thread, attached, `N` times on a fresh object
/// whose header sits at offset 0, and returns the count.
uint64_t runBump(const jitlock::LoweringConfig &Config, int64_t N) {
  std::unique_ptr<orc::LLJIT> Keep;
  auto *Bump = loadLowered(Config, Keep);
  if (!Bump)
    return ~uint64_t(0);
  EXPECT_NE(jitlock_rt_attach(), nullptr);
  alignas(16) uint64_t Obj[3] = {1, 1, 0};
  Bump(Obj, N);
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  return Obj[2];
}

void restoreDefaults() {
  ASSERT_EQ(jitlock_rt_current(), nullptr);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
}

TEST(LayoutCheck, MatchingLayoutRuns) {
  EXPECT_EQ(runBump(jitlock::LoweringConfig::forThisProcess(), 1000), 1000u);
  restoreDefaults();
}

TEST(LayoutCheck, HeaderOffsetMismatch) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  jitlock::LoweringConfig Config = jitlock::LoweringConfig::forThisProcess();
  Config.HeaderOffset = 8;
  EXPECT_DEATH(runBump(Config, 1000),
               "layout check failed: the code was generated for layout "
               "'abi=[0-9]+;header=8;.*', but this runtime's layout is "
               "'abi=[0-9]+;header=0;");
}

TEST(LayoutCheck, StorageMismatch) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  jitlock::LoweringConfig Config = jitlock::LoweringConfig::forThisProcess();
  Config.Monitors = jitlock::MonitorStorage::Index;
  EXPECT_DEATH(runBump(Config, 1000),
               "generated for layout '[^']*monitors=index,[^']*', but this "
               "runtime's layout is '[^']*monitors=pointer'");
}

struct MisuseLog {
  int Count = 0;
  int LastStatus = 0;
  std::string Last;
  static void handler(void *Ctx, jitlock_status Status, jitlock_thread *,
                      void *, const char *What) {
    auto *Log = static_cast<MisuseLog *>(Ctx);
    ++Log->Count;
    Log->LastStatus = Status;
    Log->Last = What;
  }
};

TEST(LayoutCheck, ReconfigureRefused) {
  restoreDefaults();
  MisuseLog Log;
  jitlock_rt_config Same;
  jitlock_rt_default_config(&Same);
  Same.misuse_handler = &MisuseLog::handler;
  Same.misuse_ctx = &Log;
  ASSERT_EQ(jitlock_rt_configure(&Same), JITLOCK_OK);
  // Not handed out yet: any layout goes.
  jitlock_rt_config Other = Same;
  Other.header_offset = 8;
  ASSERT_EQ(jitlock_rt_configure(&Other), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_configure(&Same), JITLOCK_OK);

  // A code generator takes the layout.
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  for (auto Change :
       {+[](jitlock_rt_config &C) { C.header_offset = 8; },
        +[](jitlock_rt_config &C) {
          C.monitor_storage = JITLOCK_MONITORS_INDEX;
        },
        +[](jitlock_rt_config &C) { C.stack_shadow_pages = 7; },
        +[](jitlock_rt_config &C) { C.inflated_exit = JITLOCK_EXIT_FENCE; }}) {
    jitlock_rt_config Changed = Same;
    Change(Changed);
    jitlock_rt_layout Now;
    jitlock_rt_get_layout(&Now);
    if (Changed.inflated_exit == JITLOCK_EXIT_FENCE &&
        Now.monitor_exit == JITLOCK_EXIT_FENCE)
      continue; // This kernel's auto exit is the fence already.
    Log = MisuseLog{};
    EXPECT_EQ(jitlock_rt_configure(&Changed), JITLOCK_ESTATE);
    EXPECT_EQ(Log.Count, 1);
    EXPECT_NE(Log.Last.find("changes the layout after it was handed out"),
              std::string::npos)
        << Log.Last;
    char Mine[512];
    jitlock_rt_layout_fingerprint(&Now, Mine, sizeof(Mine));
    EXPECT_NE(Log.Last.find(Mine), std::string::npos) << Log.Last;
  }
  // The layout stayed as it was.
  jitlock_rt_layout After;
  jitlock_rt_get_layout(&After);
  EXPECT_EQ(After.header_offset, 0);
  EXPECT_EQ(After.monitor_storage, uint32_t(JITLOCK_MONITORS_POINTER));

  // Layout-neutral settings still change.
  jitlock_rt_config Neutral = Same;
  Neutral.spin_limit = 7;
  Neutral.locking_mode = JITLOCK_LOCKING_HEAVY;
  EXPECT_EQ(jitlock_rt_configure(&Neutral), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_configure(&Same), JITLOCK_OK);

  // An attached thread hands the layout out too, and shutdown ends it.
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_configure(&Same), JITLOCK_OK);
  ASSERT_NE(jitlock_rt_attach(), nullptr);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_configure(&Other), JITLOCK_ESTATE);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_configure(&Other), JITLOCK_OK);
  restoreDefaults();
}

TEST(LayoutCheck, CheckLayoutEntry) {
  restoreDefaults();
  MisuseLog Log;
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.misuse_handler = &MisuseLog::handler;
  Cfg.misuse_ctx = &Log;
  Cfg.compiled_code_misuse = JITLOCK_MISUSE_REPORT;
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  char Mine[512];
  jitlock_rt_layout_fingerprint(&L, Mine, sizeof(Mine));
  EXPECT_EQ(jitlock_rt_check_layout(Mine), JITLOCK_OK);
  EXPECT_EQ(Log.Count, 0);
  EXPECT_EQ(jitlock_rt_check_layout(nullptr), JITLOCK_EINVAL);
  EXPECT_EQ(jitlock_rt_check_layout("abi=1;header=0"), JITLOCK_EINVAL);
  EXPECT_EQ(Log.Count, 2);
  EXPECT_EQ(Log.LastStatus, JITLOCK_EINVAL);
  EXPECT_NE(Log.Last.find("'abi=1;header=0'"), std::string::npos) << Log.Last;
  EXPECT_NE(Log.Last.find(Mine), std::string::npos) << Log.Last;
  restoreDefaults();
}

TEST(LayoutCheck, DeferredUntilHandedOut) {
  restoreDefaults();
  MisuseLog Log;
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.misuse_handler = &MisuseLog::handler;
  Cfg.misuse_ctx = &Log;
  Cfg.compiled_code_misuse = JITLOCK_MISUSE_REPORT;
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  // Code lowered for header offset 8 is loaded before the runtime is
  // configured so: nothing is decided yet.
  jitlock_rt_config Eight = Cfg;
  Eight.header_offset = 8;
  ASSERT_EQ(jitlock_rt_configure(&Eight), JITLOCK_OK);
  jitlock_rt_layout L;
  ASSERT_EQ(jitlock_rt_fill_layout(&(L = jitlock_rt_layout{sizeof(L)})),
            JITLOCK_OK);
  char ForEight[512];
  jitlock_rt_layout_fingerprint(&L, ForEight, sizeof(ForEight));
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK); // hands nothing out
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_check_layout(ForEight), JITLOCK_OK);
  EXPECT_EQ(Log.Count, 0);
  // The embedder then configures what the code expects: the attach finds
  // them equal.
  ASSERT_EQ(jitlock_rt_configure(&Eight), JITLOCK_OK);
  ASSERT_NE(jitlock_rt_attach(), nullptr);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  EXPECT_EQ(Log.Count, 0) << Log.Last;
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);

  // It does not: the first attach reports the mismatch.
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_check_layout(ForEight), JITLOCK_OK);
  ASSERT_NE(jitlock_rt_attach(), nullptr);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  EXPECT_EQ(Log.Count, 1);
  EXPECT_EQ(Log.LastStatus, JITLOCK_EINVAL);
  EXPECT_NE(Log.Last.find(std::string("'") + ForEight + "'"), std::string::npos)
      << Log.Last;
  restoreDefaults();
}

} // namespace
