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

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/IR/EHPersonalities.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/PassManager.h"

#include <string>

struct jitlock_rt_layout;

namespace llvm {
class MDString;
class Module;
} // namespace llvm

namespace jitlock {

struct LoweringConfig;
struct ResolvedConfig;

inline constexpr llvm::StringLiteral MonitorEnterName = "jitlock.monitor.enter";
inline constexpr llvm::StringLiteral MonitorExitName = "jitlock.monitor.exit";
inline constexpr llvm::StringLiteral ThreadName = "jitlock.thread";
inline constexpr llvm::StringLiteral SafepointPollName =
    "jitlock.safepoint.poll";
/// The runtime's poll, P2 of the inline poll (lib/Runtime/Safepoint.cpp).
inline constexpr llvm::StringLiteral RuntimePollName =
    "jitlock_rt_safepoint_poll";
/// The markers jitlock-elide leaves where it removed a monitor enter or exit
/// (same signature); jitlock-deopt-state reads and deletes them.
inline constexpr llvm::StringLiteral MonitorElidedEnterName =
    "jitlock.monitor.elided.enter";
inline constexpr llvm::StringLiteral MonitorElidedExitName =
    "jitlock.monitor.elided.exit";
/// The parameter attribute that marks the thread argument in `arg` mode.
inline constexpr llvm::StringLiteral ThreadArgAttr = "jitlock.thread";

/// Whether `CB` calls `Name` with exactly the contract's signature. The
/// verifier diagnoses every call that fails this; the lowerings skip them.
bool isWellFormedCall(const llvm::CallBase &CB, llvm::StringRef Name);
/// Whether `CB` is a well-formed call of any of the jitlock functions (the
/// four of the contract and the elided markers).
bool isJitlockCall(const llvm::CallBase &CB);

/// Whether `F` is a coroutine that CoroSplit has not split yet: it has the
/// presplitcoroutine attribute, or (CoroEarly adds the attribute later) it
/// calls llvm.coro.id or llvm.coro.suspend. Such a function can be resumed
/// on another thread after each suspend point, so nothing derived from the
/// current thread may live across one.
bool isUnsplitCoroutine(const llvm::Function &F);
/// Whether `I` is a coroutine suspend point (llvm.coro.suspend and its
/// retcon and async forms).
bool isCoroutineSuspend(const llvm::Instruction &I);

/// The EH funclets of a module's functions, for the calls the lowerings
/// create. Under a funclet-based personality (MSVC C++, SEH, CoreCLR) code
/// generation deletes a call inside a catchpad or cleanuppad that does not
/// carry the pad's "funclet" operand bundle, so that a slow path there would
/// become unreachable. A function is coloured when first asked about, and
/// blocks created later are not in its colouring: ask about every
/// instruction to be lowered before lowering any of them.
class FuncletColors {
public:
  /// The funclet pad `I` runs in, or null: outside every funclet, under a
  /// personality without funclets, or in a block several funclets share
  /// (code generation clones those). A call the frontend gave a "funclet"
  /// bundle keeps its pad when the colours do not decide.
  llvm::Instruction *padOf(const llvm::Instruction &I);

private:
  llvm::DenseMap<const llvm::Function *,
                 llvm::DenseMap<llvm::BasicBlock *, llvm::ColorVector>>
      Colors;
};

/// The operand bundles of a call created inside `Pad` (a funclet pad from
/// FuncletColors::padOf, or null for none).
llvm::SmallVector<llvm::OperandBundleDef, 1>
funcletBundle(llvm::Instruction *Pad);

/// Creates a call of `Callee` at `B`'s insertion point, inside `Pad`.
llvm::CallInst *createCallIn(llvm::IRBuilderBase &B,
                             llvm::FunctionCallee Callee,
                             llvm::ArrayRef<llvm::Value *> Args,
                             llvm::Instruction *Pad,
                             const llvm::Twine &Name = "");

/// A call of jitlock.thread() at `B`'s insertion point, inside `Pad`: the
/// lowerings request the current thread this way, and jitlock-lower-thread
/// materializes it. Unnamed: the materialized value gets the name.
llvm::CallInst *requestThread(llvm::IRBuilderBase &B, llvm::Instruction *Pad);

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

/// The configuration of `M` under `Explicit`, from `MAM`'s
/// ResolvedConfigAnalysis (registered here if the pipeline's builder did
/// not); null after reporting the error when it does not resolve.
const ResolvedConfig *getResolvedConfig(llvm::Module &M,
                                        llvm::ModuleAnalysisManager &MAM,
                                        const LoweringConfig &Explicit);
/// What a lowering pass that changed the module preserves: the resolved
/// configuration, whose module flags it leaves alone.
llvm::PreservedAnalyses preservedByLowering();
/// The same, for errors that concern a function as a whole:
/// "in function 'f': <what>".
void reportError(const llvm::Function &F, const llvm::Twine &What);
/// A warning about `I`, "in function 'f': <what>: <instruction>": the
/// input is lowered anyway (opt exits with 0; a JIT's handler sees
/// DS_Warning).
void reportWarning(const llvm::Instruction &I, const llvm::Twine &What);

/// Stamps `M` with the string module flag `Flag` = `Stamp` when it has no
/// flag of that name. Returns the stamp an earlier lowering left, for the
/// caller to compare; reports an error, and returns null, when the flag is
/// there but not a string.
llvm::MDString *stampModule(llvm::Module &M, llvm::StringRef Flag,
                            llvm::StringRef Stamp);

/// Deletes the elided markers jitlock-elide left (lib/Passes/DeoptState.cpp):
/// they never reach code generation. Returns whether there were any.
bool eraseElidedMarkers(llvm::Module &M);

/// Stamps `M` with the layout its lowered code compiled in (module flag
/// jitlock.lowered-layout), or reports a conflict when it already carries
/// another layout's stamp.
void stampLoweredLayout(llvm::Module &M, const jitlock_rt_layout &L);
/// The internal module constructor stampLoweredLayout adds, which calls
/// jitlock_rt_check_layout with the stamp (no dot: it is not one of the
/// jitlock.* functions the lowering replaces).
inline constexpr llvm::StringLiteral LayoutCheckName = "jitlock_layout_check";

} // namespace jitlock

#endif
