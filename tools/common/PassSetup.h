//===- PassSetup.h - The analysis managers of a new-PM pipeline -*- C++ -*-===//
//
// The four analysis managers a pipeline built with a PassBuilder runs
// against, registered and cross-proxied in one step, for the tools that
// build their own pipelines.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_TOOLS_PASSSETUP_H
#define JITLOCK_TOOLS_PASSSETUP_H

#include "llvm/Passes/PassBuilder.h"

namespace jitlock::tools {

/// Every analysis manager, with `PB`'s analyses registered: construct it
/// after anything that adds analysis registration callbacks to `PB`
/// (jitlock::registerPasses). Pipelines run with MAM.
struct AnalysisManagers {
  // In this order: each is destroyed before those it proxies to.
  llvm::LoopAnalysisManager LAM;
  llvm::FunctionAnalysisManager FAM;
  llvm::CGSCCAnalysisManager CGAM;
  llvm::ModuleAnalysisManager MAM;

  explicit AnalysisManagers(llvm::PassBuilder &PB) {
    PB.registerModuleAnalyses(MAM);
    PB.registerCGSCCAnalyses(CGAM);
    PB.registerFunctionAnalyses(FAM);
    PB.registerLoopAnalyses(LAM);
    PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  }
};

} // namespace jitlock::tools

#endif
