//===- Plugin.cpp - The opt -load-pass-plugin entry point -----------------===//
#include "jitlock/Passes.h"

#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"

extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo
llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "jitlock", "0.1", [](llvm::PassBuilder &PB) {
            // Code lowered by opt runs in some other process, so nothing is
            // taken from this one: the thread mode defaults to `call` and
            // `tls` needs an explicit tls-offset.
            jitlock::registerPasses(PB, jitlock::LoweringConfig());
          }};
}
