//===- Registration.cpp - Pipeline names and extension points -------------===//
#include "IRInterface.h"
#include "jitlock/Passes.h"

#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"

using namespace llvm;

namespace jitlock {

namespace {
/// Stands where a jitlock pass whose parameters do not parse would be, and
/// reports why when the pipeline runs. A parsing callback can only accept a
/// name or decline it, and declining makes the PassBuilder report an
/// "unknown pass name" instead of the real problem; this way the message
/// arrives as an error diagnostic of the module's context (opt prints
/// "error: ..." and exits with 1, a JIT's handler sees DS_Error).
struct BadParametersPass : PassInfoMixin<BadParametersPass> {
  explicit BadParametersPass(std::string Message)
      : Message(std::move(Message)) {}
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    reportError(M.getContext(), Message);
    return PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
  std::string Message;
};
} // namespace

void addLoweringPasses(ModulePassManager &MPM, const LoweringConfig &Config) {
  MPM.addPass(VerifyPass());
  // While the monitor calls are still there to say what each frame holds.
  MPM.addPass(DeoptStatePass());
  // Before lower-thread, which materializes the thread its check requests.
  MPM.addPass(LowerStackBangPass(Config));
  MPM.addPass(LowerMonitorsPass(Config));
  // After the monitors, whose slow calls it then knows not to poll; before
  // lower-thread, which materializes the thread the polls request.
  MPM.addPass(PlacePollsPass(Config, PlacePollsPass::Scope::AutoOnly));
  MPM.addPass(LowerSafepointsPass(Config));
  MPM.addPass(LowerThreadPass(Config));
}

/// Pipeline parameters override the registered configuration field by field.
static LoweringConfig overlay(LoweringConfig Base, const LoweringConfig &Top) {
#define JITLOCK_MODE(Type, Field, Param, Flag, NameFn, ParseFn)                \
  if (Top.Field)                                                               \
    Base.Field = Top.Field;
#include "jitlock/LoweringModes.def"
#define JITLOCK_CONFIG_FIELD(Field)                                            \
  if (Top.Field)                                                               \
    Base.Field = Top.Field;
#include "ConfigFields.def"
  return Base;
}

void registerPasses(PassBuilder &PB, const LoweringConfig &Config) {
  PB.registerAnalysisRegistrationCallback([](ModuleAnalysisManager &MAM) {
    MAM.registerPass([] { return ResolvedConfigAnalysis(); });
  });
  PB.registerPipelineParsingCallback(
      [Config](StringRef Name, ModulePassManager &MPM,
               ArrayRef<PassBuilder::PipelineElement>) {
#define MODULE_PASS(NAME, ADD)                                                 \
  if (Name == NAME) {                                                          \
    ADD;                                                                       \
    return true;                                                               \
  }
#define MODULE_PASS_WITH_PARAMS(NAME, PARSER, ADD)                             \
  if (PassBuilder::checkParametrizedPassName(Name, NAME)) {                    \
    auto Params = PassBuilder::parsePassParameters(PARSER, Name, NAME);        \
    if (!Params) {                                                             \
      MPM.addPass(BadParametersPass(                                           \
          (Name + ": " + toString(Params.takeError())).str()));                \
      return true;                                                             \
    }                                                                          \
    LoweringConfig C = overlay(Config, *Params);                               \
    ADD;                                                                       \
    return true;                                                               \
  }
#include "PassRegistry.def"
        return false;
      });
  // Lower the monitors and the polls before the optimizer runs: the thread
  // parameter (arg mode) is then used before FunctionAttrs or DeadArgElim
  // look at it, and O1-O3 optimize the fast paths along with the code around
  // them. polls=auto thus places its polls before inlining: an inlined
  // callee brings its return poll along, which keeps a loop that polled
  // through the call polling.
  //
  // At O2 and O3 the locks that cannot matter go first (jitlock-elide,
  // unless Config.Elide is false), and
  // at every level each deopt bundle learns the frame's monitors while the
  // monitor calls still say what they are.
  PB.registerPipelineStartEPCallback([Config](ModulePassManager &MPM,
                                              OptimizationLevel Level) {
    MPM.addPass(VerifyPass());
    if (Level.getSpeedupLevel() >= 2 && Config.Elide.value_or(true))
      MPM.addPass(ElidePass(Config));
    MPM.addPass(DeoptStatePass());
    MPM.addPass(
        LowerStackBangPass(Config, LowerStackBangPass::Scope::ArgModeOnly));
    MPM.addPass(LowerMonitorsPass(Config));
    MPM.addPass(PlacePollsPass(Config, PlacePollsPass::Scope::AutoOnly));
    MPM.addPass(LowerSafepointsPass(Config));
    // Unsplit coroutines wait for the instance at the end, after
    // CoroSplit: see LowerThreadPass::Coroutines.
    MPM.addPass(LowerThreadPass(Config, LowerThreadPass::Coroutines::Defer));
  });
  // The entry checks go in after the optimizer, once per machine frame: an
  // inlined callee has no frame of its own to check, and a check inserted
  // earlier lands in the loop header that tail-recursion elimination makes
  // of the entry block, where it runs again on every iteration and keeps the
  // slow call's operands live across the loop. Arg mode cannot wait (see
  // LowerStackBangPass::Scope) and is lowered at the start. The thread
  // requests of coroutines, left at the start, are lowered here, in the
  // functions CoroSplit made of them.
  PB.registerOptimizerLastEPCallback(
      [Config](ModulePassManager &MPM, OptimizationLevel) {
        MPM.addPass(LowerStackBangPass(Config));
        MPM.addPass(LowerThreadPass(Config));
      });
}

} // namespace jitlock
