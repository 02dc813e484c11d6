//===- jitlock/Passes.h - The jitlock LLVM passes ---------------*- C++ -*-===//
//
// The LLVM front door. A frontend declares and calls
//
//   declare void @jitlock.monitor.enter(ptr)
//   declare void @jitlock.monitor.exit(ptr)
//   declare void @jitlock.safepoint.poll()
//   declare ptr  @jitlock.thread()
//   define ... @f(...) "jitlock-stack-bang"[="<extra frame bytes>"] { ... }
//
// and these passes lower the calls into inline x86_64/AArch64 fast paths that
// call the runtime (include/jitlock/jitlock_rt.h) only on their slow paths.
//
// Six passes, one job each, run in this order by `jitlock-lower`:
//   jitlock-verify            diagnoses bad input; lowers nothing
//   jitlock-deopt-state       describes the frame's monitors in each "deopt"
//                             operand bundle (docs/deopt.md)
//   jitlock-lower-stack-bang  "jitlock-stack-bang" functions -> method-entry
//                             stack check (docs/stack-banging.md)
//   jitlock-lower-monitors    enter/exit -> inline fast paths + slow calls
//   jitlock-lower-safepoints  polls -> inline poll-word test + slow call;
//                             with polls=auto it places polls first
//   jitlock-lower-thread      materializes the current thread once per
//                             function (in a coroutine not yet split, at
//                             each request: docs/robustness.md)
// At O2 and O3 jitlock-elide runs before them and removes the locks that
// cannot matter (docs/deopt.md).
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_PASSES_H
#define JITLOCK_PASSES_H

#include "jitlock/MonitorStorage.h"
#include "jitlock/StackBang.h"
#include "jitlock/jitlock_rt.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace llvm {
class Instruction;
class Module;
class PassBuilder;
} // namespace llvm

namespace jitlock {

/// How lowered code finds the current runtime thread.
enum class ThreadMode {
  /// llvm.thread.pointer + the runtime's thread_tls_offset: one instruction
  /// on x86_64 and AArch64. The offset is per process, so it comes from the
  /// runtime in the JIT's own process, or must be given explicitly.
  TLS,
  /// A function parameter the frontend marks with the "jitlock.thread"
  /// attribute.
  Arg,
  /// A call to jitlock_rt_code_thread(): portable, and the default for code
  /// lowered outside the process that runs it.
  Call,
};

/// Which enter fast path the lowering emits.
enum class LockingMode {
  /// Fast locking on the lock stack (E1-E5), then the monitor path.
  Lightweight,
  /// No fast lock and no lock-stack push: after the full lock-stack test
  /// (E2), an object that has a monitor takes the inline monitor path
  /// (M1-M2), any other goes to the runtime, which inflates it when the
  /// runtime runs in JITLOCK_LOCKING_HEAVY. Code lowered in either mode is
  /// correct on a runtime in either mode.
  Heavy,
  /// Lightweight, plus lock reservation (R1, R4): the reserving thread
  /// enters and exits with no atomic instruction; the fast lock's CAS takes
  /// only a header whose reservation field is 0. Needs a layout with the
  /// field (the runtime in JITLOCK_LOCKING_RESERVED).
  Reserved,
};

/// Which safepoint polls the lowering emits.
enum class PollMode {
  /// Every jitlock.safepoint.poll() is removed: code that never stops at a
  /// safepoint, for measuring what the polls cost.
  None,
  /// The frontend's polls, and no others.
  Explicit,
  /// The frontend's polls, plus one at every function return and on every
  /// loop back-edge whose iterations do not poll already (see
  /// lib/Passes/LowerSafepoints.cpp for the rule).
  Auto,
};

/// Everything the lowering needs. Every field is optional: an unset field
/// takes the value from module flags, then from the runtime's layout. A
/// value set in two places that disagree is a conflicting configuration.
struct LoweringConfig {
  std::optional<ThreadMode> Thread;
  std::optional<int64_t> TlsOffset;
  std::optional<int32_t> HeaderOffset;
  std::optional<uint32_t> Capacity;
  /// false sends every operation to the runtime's C functions (the reference
  /// for differential testing); true (the default) inlines the fast paths.
  std::optional<bool> Inline;
  /// The method-entry check of "jitlock-stack-bang" functions; default
  /// Watermark.
  std::optional<BangMode> Bang;
  /// The enter fast path; default from the runtime layout's locking_mode.
  std::optional<LockingMode> Locking;
  /// Which safepoint polls are emitted; default Explicit.
  std::optional<PollMode> Polls;
  /// The functions jitlock-elide takes for allocators of fresh objects,
  /// besides those with allockind("alloc") or a noalias return.
  std::optional<std::vector<std::string>> Allocators;
  /// The most instructions a region jitlock-elide coarsens (merges with the
  /// next region on the same object) may reach, which bounds how long the
  /// merged hold runs without a poll of its own; 0 turns coarsening off.
  /// Unset: DefaultCoarsenLimit.
  std::optional<uint32_t> CoarsenLimit;
  static constexpr uint32_t DefaultCoarsenLimit = 64;
  /// false keeps jitlock-elide out of the default pipelines, also at O2 and
  /// O3: every lock stays in the code, so the runtime's queries count every
  /// hold (docs/deopt.md). Unset: elide at O2 and O3.
  std::optional<bool> Elide;
  /// How the monitor paths find a monitor; default from the runtime layout's
  /// monitor_storage. The code runs only on a runtime configured for the
  /// same storage (it is in the layout stamp).
  std::optional<MonitorStorage> Monitors;
  /// How the inflated exit orders its release before reading the entry
  /// count; default from the runtime layout's monitor_exit. Store code runs
  /// only on a runtime whose exit is store (it is in the layout stamp).
  std::optional<InflatedExit> Exit;
  /// The header's reservation field (locking=reserved): reserve_bits bits at
  /// reserve_shift; default the runtime layout's, which has them only when
  /// the runtime runs JITLOCK_LOCKING_RESERVED. Set, they stand for such a
  /// runtime's layout (and stamp), as header-offset stands for its own.
  std::optional<uint32_t> ReserveShift;
  std::optional<uint32_t> ReserveBits;

  /// The configuration of a JIT that links the runtime: TLS mode with this
  /// process's offset, and the runtime's layout.
  static LoweringConfig forThisProcess();

  /// Parses `jitlock-lower` pipeline parameters, e.g.
  /// "thread=tls;tls-offset=-320;capacity=8;header-offset=0;inline;
  /// bang=watermark;locking=lightweight;polls=explicit;monitors=pointer;
  /// exit=store;reserve-shift=40;reserve-bits=16".
  static llvm::Expected<LoweringConfig> parse(llvm::StringRef Params);
  /// Parses `jitlock-elide` pipeline parameters: empty, or
  /// "coarsen-limit=N", "allocators=name1;name2" (the rest of the text is
  /// the list), or both in that order, separated by ';'.
  static llvm::Expected<LoweringConfig> parseElide(llvm::StringRef Params);
};

/// One value of a mode option of LoweringConfig (LoweringModes.def).
template <typename T> struct ModeValue {
  T Value;
  const char *Spelling;
  const char *Help;
};

/// What LoweringModes.def says about mode `T` besides its values.
template <typename T> struct ModeTraits;
#define JITLOCK_MODE(Type, FieldName, ParamName, FlagName, NameFn, ParseFn)    \
  template <> struct ModeTraits<Type> {                                        \
    static constexpr const char *Param = ParamName;                            \
    static constexpr const char *Flag = FlagName;                              \
    static constexpr std::optional<Type> LoweringConfig::*Field =              \
        &LoweringConfig::FieldName;                                            \
  };
#include "jitlock/LoweringModes.def"

/// Every value of mode `T`, in the table's order.
template <typename T> llvm::ArrayRef<ModeValue<T>> modeValues() {
  static const std::vector<ModeValue<T>> Values = [] {
    std::vector<ModeValue<T>> V;
#define JITLOCK_MODE_VALUE(Type, Value, Spelling, Help)                        \
  if constexpr (std::is_same_v<T, Type>)                                       \
    V.push_back({Type::Value, Spelling, Help});
#include "jitlock/LoweringModes.def"
    return V;
  }();
  return Values;
}

/// The value of mode `T` spelled `S`, if any.
template <typename T> std::optional<T> parseMode(llvm::StringRef S) {
  for (const ModeValue<T> &V : modeValues<T>())
    if (S == V.Spelling)
      return V.Value;
  return std::nullopt;
}

/// How `M` is spelled.
template <typename T> llvm::StringRef modeName(T M) {
  for (const ModeValue<T> &V : modeValues<T>())
    if (M == V.Value)
      return V.Spelling;
  return "?";
}

/// "a|b|c": every spelling of mode `T`.
template <typename T> std::string modeSpellings() {
  std::string List;
  for (const ModeValue<T> &V : modeValues<T>())
    List += (List.empty() ? "" : "|") + std::string(V.Spelling);
  return List;
}

/// "unknown polls 'sometimes'; expected none|explicit|auto".
template <typename T> std::string unknownModeMessage(llvm::StringRef Value) {
  return "unknown " + std::string(ModeTraits<T>::Param) + " '" + Value.str() +
         "'; expected " + modeSpellings<T>();
}

/// The values of mode `T` for a tool's cl::opt, in place of cl::values(...):
///   cl::opt<PollMode> Polls("polls", modeOptionValues<PollMode>(), ...);
template <typename T> struct ModeOptionValues {
  template <typename Opt> void apply(Opt &O) const {
    for (const ModeValue<T> &V : modeValues<T>())
      O.getParser().addLiteralOption(V.Spelling, V.Value, V.Help);
  }
};
template <typename T> ModeOptionValues<T> modeOptionValues() { return {}; }

/// threadModeName, parseThreadMode, bangModeName, ...: the name and parse
/// functions of each mode, by the names the table gives them.
#define JITLOCK_MODE(Type, Field, Param, Flag, NameFn, ParseFn)                \
  inline llvm::StringRef NameFn(Type M) { return modeName(M); }                \
  inline std::optional<Type> ParseFn(llvm::StringRef S) {                      \
    return parseMode<Type>(S);                                                 \
  }
#include "jitlock/LoweringModes.def"

/// The configuration resolved for one module: every value known.
struct ResolvedConfig {
  ThreadMode Thread;
  int64_t TlsOffset;
  bool Inline;
  BangMode Bang;
  LockingMode Locking;
  PollMode Polls;
  MonitorStorage Monitors;
  InflatedExit Exit;
  /// header_offset and capacity included; monitor_storage is Monitors,
  /// monitor_exit is Exit.
  jitlock_rt_layout Layout;
};

/// Merges `Explicit` (pass parameters or the C++ struct), the module's
/// `jitlock.*` flags and the runtime layout. Returns a message naming the
/// conflict, or the unmet requirement, on failure.
llvm::Expected<ResolvedConfig> resolveConfig(const llvm::Module &M,
                                             const LoweringConfig &Explicit);

/// resolveConfig as a module analysis, so that the passes of one pipeline
/// resolve the module's configuration once instead of each on its own. A
/// pass's explicit configuration is part of the question: the result keeps
/// one answer (the configuration, or the message saying why there is none)
/// per explicit configuration asked about. The lowering passes preserve it,
/// since they change no jitlock.* flag it reads.
class ResolvedConfigAnalysis
    : public llvm::AnalysisInfoMixin<ResolvedConfigAnalysis> {
  friend llvm::AnalysisInfoMixin<ResolvedConfigAnalysis>;
  static llvm::AnalysisKey Key;

public:
  class Result {
  public:
    /// The configuration of `M` under `Explicit`, or why there is none.
    const std::variant<ResolvedConfig, std::string> &
    get(const llvm::Module &M, const LoweringConfig &Explicit);
    bool invalidate(llvm::Module &, const llvm::PreservedAnalyses &PA,
                    llvm::ModuleAnalysisManager::Invalidator &);

  private:
    std::map<std::string, std::variant<ResolvedConfig, std::string>> Answers;
  };
  Result run(llvm::Module &, llvm::ModuleAnalysisManager &) { return {}; }
};

/// What each lowering pass shares: its configuration, and that the pass
/// manager runs it on every function, optnone ones included (what it
/// lowers has no other implementation).
template <typename PassT>
struct RequiredLoweringPass : llvm::PassInfoMixin<PassT> {
  explicit RequiredLoweringPass(LoweringConfig C = {}) : Config(std::move(C)) {}
  static bool isRequired() { return true; }
  LoweringConfig Config;
};

/// Diagnoses bad input: wrong signatures, non-pointer operands, unknown
/// jitlock.* names, and exits without a matching enter on some path.
struct VerifyPass : llvm::PassInfoMixin<VerifyPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
};

/// Removes monitor enter/exit pairs that cannot matter (docs/deopt.md): a
/// nested re-entry of a monitor the function holds around it, and the
/// monitor of an object from a known allocator that never escapes. Each
/// removed call becomes an elided marker, jitlock.monitor.elided.enter/exit,
/// which jitlock-deopt-state consumes. Run at O2 and O3 only.
struct ElidePass : llvm::PassInfoMixin<ElidePass> {
  explicit ElidePass(LoweringConfig C = {}) : Config(std::move(C)) {}
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
  LoweringConfig Config;
};

/// Appends the frame's monitors, held and elided, outermost first, to each
/// "deopt" operand bundle (include/jitlock/DeoptState.h), then deletes the
/// elided markers. Monitors that cannot be known at a deopt point are an
/// error. Runs before the monitors are lowered, after which they cannot be
/// known.
struct DeoptStatePass : llvm::PassInfoMixin<DeoptStatePass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
};

/// Gives every function with the "jitlock-stack-bang" attribute its
/// method-entry stack check, adds "probe-stack"="inline-asm", and removes the
/// attribute, so that lowering again adds nothing.
struct LowerStackBangPass : RequiredLoweringPass<LowerStackBangPass> {
  /// Which functions an instance lowers, for its place in a pipeline.
  enum class Scope {
    /// Every function with the attribute: what pipeline text asks for.
    All,
    /// Only modules in arg mode. The default pipelines run this instance at
    /// their start, where the thread parameter is still used (DeadArgElim
    /// later deletes unused parameters of internal functions).
    ArgModeOnly,
  };
  explicit LowerStackBangPass(LoweringConfig C = {}, Scope S = Scope::All)
      : RequiredLoweringPass(std::move(C)), Only(S) {}
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
  Scope Only;
};

/// Lowers jitlock.monitor.enter/exit.
struct LowerMonitorsPass : RequiredLoweringPass<LowerMonitorsPass> {
  using RequiredLoweringPass::RequiredLoweringPass;
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
};

/// Places jitlock.safepoint.poll() calls at returns and on loop back-edges,
/// by the rule in lib/Passes/PlacePolls.cpp, in each function not placed
/// already (PollsPlacedAttr).
struct PlacePollsPass : RequiredLoweringPass<PlacePollsPass> {
  /// When an instance places polls, for its place in a pipeline: Always,
  /// whatever the poll mode (what pipeline text asks for); AutoOnly, only
  /// for polls=auto, from the configuration or the module flag (the
  /// instance addLoweringPasses and the default pipelines run).
  enum class Scope { Always, AutoOnly };
  explicit PlacePollsPass(LoweringConfig C = {}, Scope S = Scope::Always)
      : RequiredLoweringPass(std::move(C)), Only(S) {}
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
  Scope Only;
};

/// Lowers jitlock.safepoint.poll() to the inline poll (a test of the
/// thread's poll word, calling jitlock_rt_safepoint_poll when it is armed);
/// with polls=none it removes them. It places none: jitlock-place-polls
/// does, before it, for polls=auto.
struct LowerSafepointsPass : RequiredLoweringPass<LowerSafepointsPass> {
  using RequiredLoweringPass::RequiredLoweringPass;
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
};

/// Replaces jitlock.thread() with the current thread, materialized once per
/// function in its entry block; in a coroutine not yet split, at each
/// request (lib/Passes/LowerThread.cpp).
struct LowerThreadPass : RequiredLoweringPass<LowerThreadPass> {
  /// What an instance does in a coroutine that CoroSplit has not split.
  enum class Coroutines {
    /// Materializes the thread at each request: what pipeline text asks
    /// for, since nothing may come after it.
    AtEachRequest,
    /// Leaves the requests to an instance after CoroSplit, which gives each
    /// function it produces the thread once. The default pipelines run this
    /// instance at their start and an AtEachRequest one at their end.
    Defer,
  };
  explicit LowerThreadPass(LoweringConfig C = {},
                           Coroutines K = Coroutines::AtEachRequest)
      : RequiredLoweringPass(std::move(C)), InCoroutines(K) {}
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
  Coroutines InCoroutines;
};

/// Adds verify + deopt-state + lower-stack-bang + lower-monitors +
/// place-polls (polls=auto only) + lower-safepoints + lower-thread to `MPM`.
void addLoweringPasses(llvm::ModulePassManager &MPM,
                       const LoweringConfig &Config);

/// Registers the pipeline names (jitlock-lower<...>, jitlock-verify,
/// jitlock-elide<...>, jitlock-deopt-state, jitlock-lower-stack-bang,
/// jitlock-lower-monitors, jitlock-place-polls, jitlock-lower-safepoints,
/// jitlock-lower-thread)
/// and adds the lowering to the start of the default pipelines
/// (PipelineStartEP), after jitlock-elide at O2 and O3 unless
/// `Config.Elide` is false.
/// A JIT calls this with LoweringConfig::forThisProcess().
void registerPasses(llvm::PassBuilder &PB, const LoweringConfig &Config);

/// The module flag the lowering stamps with the layout it lowered for
/// (see layoutFingerprint); a JIT refuses code whose stamp differs from the
/// runtime it runs on.
inline constexpr const char *LoweredLayoutFlag = "jitlock.lowered-layout";
/// The module flag stamped with how lowered code finds the thread:
/// "tls;tls-offset=N", "arg" or "call".
inline constexpr const char *LoweredThreadFlag = "jitlock.lowered-thread";

/// The function attribute that asks for a method-entry stack check. Its
/// value is empty or the decimal count of extra frame bytes the check must
/// find room for below the stack pointer.
inline constexpr const char *StackBangAttr = "jitlock-stack-bang";
/// The largest extra frame byte count "jitlock-stack-bang" accepts (1 GiB,
/// more than any thread stack).
inline constexpr uint64_t MaxStackBangExtra = uint64_t(1) << 30;

/// The function attribute jitlock-place-polls adds to each function it
/// placed polls in, so that lowering the output again places none twice.
inline constexpr const char *PollsPlacedAttr = "jitlock-polls-placed";

/// Whether `I` may reach a safepoint poll: a poll, or a call to anything but
/// an intrinsic or the runtime's other entry points. jitlock-place-polls
/// places polls by this rule, and a loop none of whose instructions may poll
/// never polls.
bool mayPoll(const llvm::Instruction &I);

/// "pointer", "index", "table", and its inverse.
llvm::StringRef monitorStorageName(MonitorStorage S);
std::optional<MonitorStorage> parseMonitorStorage(llvm::StringRef S);

/// A printable summary of every layout value compiled into lowered code:
/// the header and lock-stack fields, the monitor fields, the stack-bang
/// watermark offset, page size and shadow page count, and the poll word's
/// offset and armed bit, and the monitor storage with the fields it uses.
/// The locking mode is not one: code lowered for either mode runs correctly
/// on both.
std::string layoutFingerprint(const jitlock_rt_layout &L);

} // namespace jitlock

#endif
