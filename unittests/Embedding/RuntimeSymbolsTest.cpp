//===- RuntimeSymbolsTest.cpp - The public runtime symbol table -----------===//
//
// jitlock::runtimeSymbols() (include/jitlock/RuntimeSymbols.h), label jit:
//
//   RuntimeSymbols.Table          names unique and prefixed, addresses those
//                                 of the functions; lookup by name; what the
//                                 embedder calls itself is absent
//   RuntimeSymbols.CoversLowering every runtime function that lowered code
//                                 calls, in every lowering mode, is listed
//   RuntimeSymbols.OwnLLJIT       a bare LLJIT, with nothing from this
//                                 process but the table, runs lowered code
//
//===----------------------------------------------------------------------===//
#include "jitlock/RuntimeSymbols.h"
#include "jitlock/Passes.h"
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

#include <set>
#include <string>

using namespace llvm;

namespace {

/// Every construct the passes lower: monitors, a poll, a checked entry.
constexpr const char *LoweredIR = R"IR(
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @jitlock.safepoint.poll()

define void @bump(ptr %obj, i64 %n) "jitlock-stack-bang" {
entry:
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.monitor.enter(ptr %obj)
  %field = getelementptr inbounds i8, ptr %obj, i64 8
  %v = load i64, ptr %field
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %field
  call void @jitlock.monitor.exit(ptr %obj)
  call void @jitlock.safepoint.poll()
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done

done:
  ret void
}
)IR";

std::unique_ptr<Module> parse(LLVMContext &C) {
  SMDiagnostic Err;
  std::unique_ptr<Module> M = parseAssemblyString(LoweredIR, Err, C);
  if (!M) {
    std::string Text;
    raw_string_ostream OS(Text);
    Err.print("RuntimeSymbolsTest", OS);
    ADD_FAILURE() << Text;
  }
  return M;
}

TEST(RuntimeSymbols, Table) {
  const jitlock::RuntimeSymbolTable Table = jitlock::runtimeSymbols();
  EXPECT_GT(Table.size(), 0u);
  std::set<std::string> Names;
  for (const jitlock::RuntimeSymbol &S : Table) {
    EXPECT_TRUE(StringRef(S.Name).starts_with("jitlock_rt_")) << S.Name;
    EXPECT_NE(S.Addr, nullptr) << S.Name;
    EXPECT_TRUE(Names.insert(S.Name).second) << S.Name << " twice";
    EXPECT_EQ(Table.lookup(S.Name), S.Addr) << S.Name;
  }
  EXPECT_EQ(Table.lookup("jitlock_rt_monitor_enter"),
            reinterpret_cast<void *>(&jitlock_rt_monitor_enter));
  EXPECT_EQ(Table.lookup("jitlock_rt_safepoint_poll"),
            reinterpret_cast<void *>(&jitlock_rt_safepoint_poll));
  // The embedder's own calls: JIT code that names them must fail to link.
  for (const char *Absent :
       {"jitlock_rt_configure", "jitlock_rt_shutdown",
        "jitlock_rt_deflate_idle", "jitlock_rt_safepoint_begin",
        "jitlock_rt_handshake_all", "jitlock_rt_set_overflow_handler",
        "jitlock_rt_monitor_enter2", ""})
    EXPECT_EQ(Table.lookup(Absent), nullptr) << Absent;
}

TEST(RuntimeSymbols, CoversLowering) {
  using jitlock::LoweringConfig;
  struct Mode {
    const char *Name;
    LoweringConfig Config;
  };
  std::vector<Mode> Modes;
  auto Add = [&](const char *Name, auto Change) {
    LoweringConfig C = LoweringConfig::forThisProcess();
    Change(C);
    Modes.push_back({Name, C});
  };
  Add("tls, inline", [](LoweringConfig &) {});
  Add("call", [](LoweringConfig &C) { C.Thread = jitlock::ThreadMode::Call; });
  Add("no-inline", [](LoweringConfig &C) { C.Inline = false; });
  Add("heavy",
      [](LoweringConfig &C) { C.Locking = jitlock::LockingMode::Heavy; });
  Add("polls=auto",
      [](LoweringConfig &C) { C.Polls = jitlock::PollMode::Auto; });
  Add("bang=always",
      [](LoweringConfig &C) { C.Bang = jitlock::BangMode::Always; });

  const jitlock::RuntimeSymbolTable Table = jitlock::runtimeSymbols();
  for (const Mode &Md : Modes) {
    LLVMContext C;
    std::unique_ptr<Module> M = parse(C);
    ASSERT_TRUE(M);
    ModulePassManager MPM;
    jitlock::addLoweringPasses(MPM, Md.Config);
    PassBuilder PB;
    ModuleAnalysisManager MAM;
    PB.registerModuleAnalyses(MAM);
    MPM.run(*M, MAM);
    unsigned Calls = 0;
    for (Function &F : *M) {
      if (!F.isDeclaration() || F.use_empty())
        continue;
      EXPECT_FALSE(F.getName().starts_with("jitlock."))
          << Md.Name << ": " << F.getName().str() << " was not lowered";
      if (!F.getName().starts_with("jitlock_rt_"))
        continue;
      ++Calls;
      EXPECT_NE(Table.lookup(F.getName().str().c_str()), nullptr)
          << Md.Name << ": lowered code calls " << F.getName().str()
          << ", which the table lacks";
    }
    EXPECT_GT(Calls, 0u) << Md.Name << ": no runtime call at all";
  }
}

TEST(RuntimeSymbols, OwnLLJIT) {
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  auto Ctx = std::make_unique<LLVMContext>();
  std::unique_ptr<Module> M = parse(*Ctx);
  ASSERT_TRUE(M);
  {
    ModulePassManager MPM;
    jitlock::addLoweringPasses(MPM, jitlock::LoweringConfig::forThisProcess());
    PassBuilder PB;
    ModuleAnalysisManager MAM;
    PB.registerModuleAnalyses(MAM);
    MPM.run(*M, MAM);
  }
  // No generator for the process's symbols: only the table.
  auto J =
      orc::LLJITBuilder()
          .setProcessSymbolsJITDylibSetup(
              [](orc::LLJIT &J) -> Expected<orc::JITDylibSP> {
                return &J.getExecutionSession().createBareJITDylib("<nothing>");
              })
          .create();
  ASSERT_TRUE(!!J) << toString(J.takeError());
  orc::SymbolMap Map;
  for (const jitlock::RuntimeSymbol &S : jitlock::runtimeSymbols())
    Map[(*J)->mangleAndIntern(S.Name)] = orc::ExecutorSymbolDef(
        orc::ExecutorAddr::fromPtr(S.Addr),
        JITSymbolFlags::Exported | JITSymbolFlags::Callable);
  ASSERT_FALSE(
      !!(*J)->getMainJITDylib().define(orc::absoluteSymbols(std::move(Map))));
  ASSERT_FALSE(
      !!(*J)->addIRModule(orc::ThreadSafeModule(std::move(M), std::move(Ctx))));
  auto Addr = (*J)->lookup("bump");
  ASSERT_TRUE(!!Addr) << toString(Addr.takeError());
  auto *Bump = Addr->toPtr<void (*)(void *, int64_t)>();

  jitlock_thread *Self = jitlock_rt_attach();
  ASSERT_NE(Self, nullptr);
  alignas(8) uint64_t Obj[2] = {1, 0};
  struct Call {
    decltype(Bump) Fn;
    uint64_t *Obj;
  } Args{Bump, Obj};
  EXPECT_EQ(jitlock_rt_call_guarded(
                Self,
                [](void *P) {
                  auto *A = static_cast<Call *>(P);
                  A->Fn(A->Obj, 1000);
                },
                &Args, nullptr),
            JITLOCK_OK);
  EXPECT_EQ(Obj[1], 1000u);
  EXPECT_EQ(Obj[0], 1u) << "the header is unlocked again";
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
}

} // namespace
