//===- Plugin.cpp - The opt -load-pass-plugin entry point -----------------===//
#include "jitlock/Passes.h"

#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"

#ifndef NDEBUG
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Debug.h"

namespace {
/// LLVM's -debug-only exists only in an LLVM built with assertions, and a
/// release LLVM (Debian's) still exports the state it sets, so that code
/// built without NDEBUG, like this plugin then, can print its LLVM_DEBUG
/// output. This option sets that state; its name cannot clash with
/// -debug-only in an opt that has it. An NDEBUG build has no such option.
llvm::cl::list<std::string> DebugOnly(
    "jitlock-debug-only",
    llvm::cl::desc("Print the LLVM_DEBUG output of these DEBUG_TYPEs "
                   "(jitlock-lower-monitors, ...); only in a plugin built "
                   "without NDEBUG"),
    llvm::cl::value_desc("type,..."), llvm::cl::CommaSeparated,
    llvm::cl::callback([](const std::string &) {
      // Each value is in the list before its callback runs: hand LLVM all
      // of them, since setCurrentDebugTypes replaces the previous set.
      llvm::SmallVector<const char *, 8> Types;
      for (const std::string &Type : DebugOnly)
        Types.push_back(Type.c_str());
      llvm::DebugFlag = true;
      llvm::setCurrentDebugTypes(Types.data(), Types.size());
    }));
} // namespace
#endif

extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo
llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "jitlock", "0.1", [](llvm::PassBuilder &PB) {
            // Code lowered by opt runs in some other process, so nothing is
            // taken from this one: the thread mode defaults to `call` and
            // `tls` needs an explicit tls-offset.
            jitlock::registerPasses(PB, jitlock::LoweringConfig());
          }};
}
