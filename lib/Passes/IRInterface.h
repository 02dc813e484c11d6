//===- IRInterface.h - The jitlock.* calls a frontend makes -----*- C++ -*-===//
//
// What the passes share about their input: the names and signatures of the
// jitlock.* functions a frontend calls, the thread-parameter rule of `arg`
// mode, the diagnostics that name the offending function and instruction,
// and the module flag that records the layout lowered code was built for.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_PASSES_IRINTERFACE_H
#define JITLOCK_PASSES_IRINTERFACE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"

#include <string>

struct jitlock_rt_layout;

namespace llvm {
class Module;
} // namespace llvm

namespace jitlock {

inline constexpr llvm::StringLiteral MonitorEnterName = "jitlock.monitor.enter";
inline constexpr llvm::StringLiteral MonitorExitName = "jitlock.monitor.exit";
inline constexpr llvm::StringLiteral ThreadName = "jitlock.thread";
inline constexpr llvm::StringLiteral SafepointPollName =
    "jitlock.safepoint.poll";
/// The parameter attribute that marks the thread argument in `arg` mode.
inline constexpr llvm::StringLiteral ThreadArgAttr = "jitlock.thread";

/// Whether `CB` calls `Name` with exactly the contract's signature. The
/// verifier diagnoses every call that fails this; the lowerings skip them.
bool isWellFormedCall(const llvm::CallBase &CB, llvm::StringRef Name);

/// What keeps `F` from providing the thread in `arg` mode (no parameter
/// marked "jitlock.thread", or a marked one that is not a pointer), or null.
const char *threadParameterProblem(const llvm::Function &F);

/// "in function 'f': <what>: <instruction>", for diagnostics.
std::string describe(const llvm::Instruction &I, const llvm::Twine &What);

/// Reports an error diagnostic through the context (opt exits non-zero; a
/// JIT's handler sees DS_Error).
void reportError(const llvm::Instruction &I, const llvm::Twine &What);
/// The same, for errors that concern the whole module (configuration).
void reportError(llvm::LLVMContext &Ctx, const llvm::Twine &What);
/// The same, for errors that concern a function as a whole:
/// "in function 'f': <what>".
void reportError(const llvm::Function &F, const llvm::Twine &What);

/// Stamps `M` with the layout its lowered code compiled in (module flag
/// jitlock.lowered-layout), or reports a conflict when it already carries
/// another layout's stamp.
void stampLoweredLayout(llvm::Module &M, const jitlock_rt_layout &L);

} // namespace jitlock

#endif
