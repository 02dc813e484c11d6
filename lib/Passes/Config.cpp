//===- Config.cpp - Resolving the lowering configuration ------------------===//
//
// Three sources, checked against each other: the explicit configuration
// (pipeline parameters or the C++ struct), the module's jitlock.* flags, and
// the runtime's layout, which supplies every default.
//
//===----------------------------------------------------------------------===//
#include "IRInterface.h"
#include "jitlock/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <cstdint>

using namespace llvm;

namespace jitlock {

static Error configError(const Twine &Msg) {
  return make_error<StringError>(Msg, inconvertibleErrorCode());
}

/// Checks the ranges the layout can hold.
static Error checkRange(StringRef Name, int64_t V, int64_t Lo, int64_t Hi) {
  if (V < Lo || V > Hi)
    return configError(
        formatv("{0}={1} is out of range [{2}, {3}]", Name, V, Lo, Hi));
  return Error::success();
}

std::optional<MonitorStorage> parseMonitorStorage(StringRef S) {
  return monitorStorageNamed(std::string_view(S.data(), S.size()));
}

StringRef monitorStorageName(MonitorStorage S) { return describe(S).Name; }

/// The storage names of MonitorStorage.def as "a|b|c", as the modes table
/// spells its choices.
static std::string monitorStorageChoices() {
  std::string Choices;
  for (const MonitorStorageDescriptor &Info : MonitorStorages)
    Choices += (Choices.empty() ? "" : "|") + std::string(Info.Name);
  return Choices;
}

LoweringConfig LoweringConfig::forThisProcess() {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  LoweringConfig C;
  C.Thread = ThreadMode::TLS;
  C.TlsOffset = L.thread_tls_offset;
  return C;
}

Expected<LoweringConfig> LoweringConfig::parse(StringRef Params) {
  LoweringConfig C;
  while (!Params.empty()) {
    StringRef Param;
    std::tie(Param, Params) = Params.split(';');
    auto [Key, Value] = Param.split('=');
    auto NeedInt = [&](auto &Field, int64_t Lo, int64_t Hi) -> Error {
      int64_t N;
      if (Value.getAsInteger(0, N))
        return configError("parameter '" + Key + "' needs an integer, got '" +
                           Value + "'");
      if (Error E = checkRange(Key, N, Lo, Hi))
        return E;
      Field = N;
      return Error::success();
    };
#define JITLOCK_MODE(Type, Field, Param, Flag, NameFn, ParseFn)                \
  if (Key == Param) {                                                          \
    C.Field = ParseFn(Value);                                                  \
    if (!C.Field)                                                              \
      return configError(unknownModeMessage<Type>(Value));                     \
    continue;                                                                  \
  }
#include "jitlock/LoweringModes.def"
    if (Key == "tls-offset") {
      if (Error E = NeedInt(C.TlsOffset, INT32_MIN, INT32_MAX))
        return std::move(E);
    } else if (Key == "header-offset") {
      if (Error E = NeedInt(C.HeaderOffset, INT32_MIN, INT32_MAX))
        return std::move(E);
    } else if (Key == "capacity") {
      if (Error E = NeedInt(C.Capacity, 1, INT32_MAX))
        return std::move(E);
    } else if (Key == "reserve-shift") {
      if (Error E = NeedInt(C.ReserveShift, 0, 63))
        return std::move(E);
    } else if (Key == "reserve-bits") {
      if (Error E = NeedInt(C.ReserveBits, 0, 64))
        return std::move(E);
    } else if (Key == "inline" || Key == "no-inline") {
      if (!Value.empty())
        return configError("'" + Key + "' takes no value");
      C.Inline = Key == "inline";
    } else if (Key == "monitors") {
      C.Monitors = parseMonitorStorage(Value);
      if (!C.Monitors)
        return configError("unknown monitors '" + Value + "'; expected " +
                           monitorStorageChoices());
    } else {
      std::string Keys;
#define JITLOCK_MODE(Type, Field, Param, Flag, NameFn, ParseFn)                \
  Keys += Param ", ";
#include "jitlock/LoweringModes.def"
      return configError("unknown jitlock-lower parameter '" + Key +
                         "' (expected " + Keys +
                         "tls-offset, header-offset, capacity, "
                         "reserve-shift, reserve-bits, inline, no-inline or "
                         "monitors)");
    }
  }
  return C;
}

/// Reads the integer module flag `jitlock.<Name>`, if present.
static Expected<std::optional<int64_t>> intFlag(const Module &M,
                                                StringRef Name) {
  Metadata *MD = M.getModuleFlag(("jitlock." + Name).str());
  if (!MD)
    return std::nullopt;
  auto *CI = mdconst::dyn_extract_or_null<ConstantInt>(MD);
  if (!CI || CI->getBitWidth() > 64)
    return configError("module flag jitlock." + Name +
                       " must be an integer constant");
  return CI->getSExtValue();
}

/// Reads the string module flag `jitlock.<Name>`, if present, with `Parse`;
/// `Unknown` says what is wrong with a string it does not accept, and
/// `Spellings` lists the accepted ones.
template <typename T>
static Expected<std::optional<T>>
modeFlag(const Module &M, StringRef Name,
         function_ref<std::optional<T>(StringRef)> Parse,
         function_ref<std::string(StringRef)> Unknown, StringRef Spellings) {
  Metadata *MD = M.getModuleFlag(("jitlock." + Name).str());
  if (!MD)
    return std::nullopt;
  auto *S = dyn_cast<MDString>(MD);
  if (!S)
    return configError("module flag jitlock." + Name +
                       " must be a string; expected " + Spellings);
  std::optional<T> V = Parse(S->getString());
  if (!V)
    return configError("module flag jitlock." + Name + ": " +
                       Unknown(S->getString()));
  return V;
}

/// Picks one value from the explicit config and the module flag, failing
/// when both are present and differ.
template <typename T>
static Expected<std::optional<T>>
pickOne(StringRef Name, std::optional<T> Explicit, std::optional<T> FromModule,
        function_ref<std::string(T)> Print) {
  if (Explicit && FromModule && *Explicit != *FromModule)
    return configError(formatv("conflicting configuration: {0} is {1} in the "
                               "pass configuration but {2} in module flag "
                               "jitlock.{0}",
                               Name, Print(*Explicit), Print(*FromModule)));
  return Explicit ? Explicit : FromModule;
}

/// Picks integer parameter `Name` from the explicit config and the module
/// flag jitlock.<Name>, refusing a flag outside [Lo, Hi].
template <typename IntT>
static Expected<std::optional<int64_t>>
pickInt(const Module &M, StringRef Name, std::optional<IntT> Explicit,
        int64_t Lo = INT64_MIN, int64_t Hi = INT64_MAX) {
  auto Flag = intFlag(M, Name);
  if (!Flag)
    return Flag.takeError();
  if (*Flag)
    if (Error E = checkRange(("jitlock." + Name).str(), **Flag, Lo, Hi))
      return std::move(E);
  std::optional<int64_t> Given;
  if (Explicit)
    Given = int64_t(*Explicit);
  return pickOne<int64_t>(Name, Given, *Flag,
                          [](int64_t V) { return std::to_string(V); });
}

/// Picks mode `T` (LoweringModes.def) from the explicit config and the
/// module flag.
template <typename T>
static Expected<std::optional<T>> pickMode(const Module &M,
                                           const LoweringConfig &Explicit) {
  auto FromModule = modeFlag<T>(M, ModeTraits<T>::Flag, parseMode<T>,
                                unknownModeMessage<T>, modeSpellings<T>());
  if (!FromModule)
    return FromModule.takeError();
  return pickOne<T>(ModeTraits<T>::Flag, Explicit.*ModeTraits<T>::Field,
                    *FromModule, [](T V) { return modeName(V).str(); });
}

/// Sets `Out` to what was picked (pickOne), or else to `FromLayout`, what
/// the runtime layout's `Field` (of value `LayoutValue`) names; an error
/// when nothing was picked and this lowering does not know that value.
template <typename T>
static Error pickedOrLayout(Expected<std::optional<T>> Picked, T &Out,
                            std::optional<T> FromLayout, StringRef Field,
                            uint32_t LayoutValue) {
  if (!Picked)
    return Picked.takeError();
  if (!*Picked && !FromLayout)
    return configError(
        formatv("the runtime layout's {0} {1} is unknown to this lowering",
                Field, LayoutValue));
  Out = *Picked ? **Picked : *FromLayout;
  return Error::success();
}

/// The reservation field of the layout `L`: the runtime's, or the explicit
/// configuration's or module flags' reserve-shift and reserve-bits, which
/// stand for a runtime in JITLOCK_LOCKING_RESERVED (checked as it checks
/// them) when this one is not.
static Error resolveReservation(const Module &M, const LoweringConfig &Explicit,
                                jitlock_rt_layout &L) {
  std::optional<int64_t> Field[2];
  const char *Names[2] = {"reserve-shift", "reserve-bits"};
  std::optional<uint32_t> Given[2] = {Explicit.ReserveShift,
                                      Explicit.ReserveBits};
  for (int I = 0; I != 2; ++I) {
    auto Picked = pickInt(M, Names[I], Given[I]);
    if (!Picked)
      return Picked.takeError();
    Field[I] = *Picked;
  }
  auto [Shift, Bits] = std::pair(Field[0], Field[1]);
  if (!Shift && !Bits)
    return Error::success();
  if (!Shift || !Bits)
    return configError("reserve-shift and reserve-bits go together: the "
                       "reservation field needs both");
  if (L.reserve_bits != 0) {
    if (*Shift != L.reserve_shift || *Bits != L.reserve_bits)
      return configError(formatv(
          "conflicting configuration: reserve-shift={0};reserve-bits={1}, "
          "but the runtime's reservation field is {2} bits at bit {3}",
          *Shift, *Bits, L.reserve_bits, L.reserve_shift));
    return Error::success();
  }
  bool OverlapsHash = L.hash_bits != 0 && *Shift < L.hash_shift + L.hash_bits &&
                      L.hash_shift < *Shift + *Bits;
  if (*Bits < 2 || *Bits > 32 || *Shift < 2 || *Shift + *Bits > 64 ||
      OverlapsHash)
    return configError(formatv(
        "reserve-shift={0};reserve-bits={1}: the reservation field needs 2 to "
        "32 bits within bits [2,64), clear of the hash field ({2} bits at "
        "bit {3})",
        *Shift, *Bits, L.hash_bits, L.hash_shift));
  uint64_t Ones = ~uint64_t(0) >> (64 - *Bits);
  L.locking_mode = JITLOCK_LOCKING_RESERVED;
  L.reserve_shift = uint32_t(*Shift);
  L.reserve_bits = uint32_t(*Bits);
  L.reservable_value = Ones << *Shift;
  L.reserve_mask = L.lock_mask | L.reservable_value;
  return Error::success();
}

Expected<ResolvedConfig> resolveConfig(const Module &M,
                                       const LoweringConfig &Explicit) {
  ResolvedConfig R;
  jitlock_rt_get_layout(&R.Layout);

  // The thread mode, from a string flag.
  auto Mode = pickMode<ThreadMode>(M, Explicit);
  if (!Mode)
    return Mode.takeError();
  R.Thread = Mode->value_or(ThreadMode::Call);

  auto TlsOffset =
      pickInt(M, "tls-offset", Explicit.TlsOffset, INT32_MIN, INT32_MAX);
  if (!TlsOffset)
    return TlsOffset.takeError();
  if (R.Thread == ThreadMode::TLS && !*TlsOffset)
    return configError(
        "thread=tls needs the runtime's thread_tls_offset, which is per "
        "process: pass tls-offset=N (from jitlock_rt_get_layout in the target "
        "process), or use LoweringConfig::forThisProcess() in a JIT");
  R.TlsOffset = TlsOffset->value_or(0);

  auto HeaderOffset =
      pickInt(M, "header-offset", Explicit.HeaderOffset, INT32_MIN, INT32_MAX);
  if (!HeaderOffset)
    return HeaderOffset.takeError();
  if (*HeaderOffset) {
    if (**HeaderOffset % 8 != 0)
      return configError("header-offset must be a multiple of 8");
    R.Layout.header_offset = int32_t(**HeaderOffset);
  }

  auto Capacity = pickInt(M, "capacity", Explicit.Capacity);
  if (!Capacity)
    return Capacity.takeError();
  if (*Capacity && **Capacity != int64_t(R.Layout.lock_stack_capacity))
    return configError(formatv(
        "conflicting configuration: capacity={0}, but the runtime's lock "
        "stack holds {1} entries",
        **Capacity, R.Layout.lock_stack_capacity));

  R.Inline = Explicit.Inline.value_or(true);

  // The stack-bang mode: watermark unless asked otherwise.
  auto Bang = pickMode<BangMode>(M, Explicit);
  if (!Bang)
    return Bang.takeError();
  R.Bang = Bang->value_or(BangMode::Watermark);

  // The locking mode: the runtime's unless asked otherwise. A layout with a
  // reservation field needs the reserved fast paths (or heavy's, which
  // leave every header but a monitor's to the runtime): the lightweight ones
  // would CAS a header reserved to another thread to fast-locked.
  if (Error E = resolveReservation(M, Explicit, R.Layout))
    return std::move(E);
  auto Locking = pickMode<LockingMode>(M, Explicit);
  if (!Locking)
    return Locking.takeError();
  R.Locking =
      Locking->value_or(R.Layout.reserve_bits != 0 ? LockingMode::Reserved
                        : R.Layout.locking_mode == JITLOCK_LOCKING_HEAVY
                            ? LockingMode::Heavy
                            : LockingMode::Lightweight);
  if (R.Locking == LockingMode::Reserved && R.Layout.reserve_bits == 0)
    return configError(
        "locking=reserved needs the layout's reservation field, which is "
        "empty: the runtime is not in JITLOCK_LOCKING_RESERVED (pass "
        "reserve-shift=N;reserve-bits=N for one that is)");
  if (R.Locking == LockingMode::Lightweight && R.Layout.reserve_bits != 0)
    return configError(formatv(
        "locking=lightweight against a layout with a reservation field ({0} "
        "bits at bit {1}): its fast lock would take objects reserved to "
        "other threads; lower with locking=reserved",
        R.Layout.reserve_bits, R.Layout.reserve_shift));

  // The safepoint polls: the frontend's unless asked otherwise.
  auto Polls = pickMode<PollMode>(M, Explicit);
  if (!Polls)
    return Polls.takeError();
  R.Polls = Polls->value_or(PollMode::Explicit);

  // The monitor storage: the runtime's unless asked otherwise. The layout
  // carries every storage's fields, so code for another one can be lowered
  // (and is stamped as such); a runtime without that storage leaves them 0.
  auto MonitorsFlag = modeFlag<MonitorStorage>(
      M, "monitors", parseMonitorStorage,
      [](StringRef V) {
        return "unknown monitors '" + V.str() + "'; expected " +
               monitorStorageChoices();
      },
      monitorStorageChoices());
  if (!MonitorsFlag)
    return MonitorsFlag.takeError();
  auto Monitors = pickOne<MonitorStorage>(
      "monitors", Explicit.Monitors, *MonitorsFlag,
      [](MonitorStorage S) { return monitorStorageName(S).str(); });
  if (Error E = pickedOrLayout(std::move(Monitors), R.Monitors,
                               monitorStorageOf(R.Layout.monitor_storage),
                               "monitor_storage", R.Layout.monitor_storage))
    return std::move(E);
  if (const char *Field = monitorStorageProblem(R.Layout, R.Monitors))
    return configError(
        formatv("monitors={0} needs the runtime layout's {1}, which is 0 or "
                "out of range: this runtime does not provide {0} monitor "
                "storage",
                monitorStorageName(R.Monitors), Field));
  R.Layout.monitor_storage = describe(R.Monitors).Value;

  // The inflated exit: the runtime's unless asked otherwise. Fence code is
  // correct on any runtime, but is stamped as such all the same.
  if (Error E = pickedOrLayout(pickMode<InflatedExit>(M, Explicit), R.Exit,
                               inflatedExitOf(R.Layout.monitor_exit),
                               "monitor_exit", R.Layout.monitor_exit))
    return std::move(E);
  if (R.Layout.monitor_entry_count_offset == 0)
    return configError("the runtime layout has no monitor_entry_count_offset: "
                       "this runtime is too old for this lowering");
  R.Layout.monitor_exit = uint32_t(R.Exit);
  return R;
}

AnalysisKey ResolvedConfigAnalysis::Key;

/// Appends one field of a LoweringConfig to a key that tells apart any two
/// configurations that differ.
template <typename T>
static void appendKey(std::string &Key, const std::optional<T> &Field) {
  if (!Field) {
    Key += "-;";
    return;
  }
  if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    for (const std::string &S : *Field)
      Key += S + ",";
  } else {
    Key += std::to_string(int64_t(*Field));
  }
  Key += ";";
}

const std::variant<ResolvedConfig, std::string> &
ResolvedConfigAnalysis::Result::get(const Module &M,
                                    const LoweringConfig &Explicit) {
  std::string Key;
#define JITLOCK_MODE(Type, Field, Param, Flag, NameFn, ParseFn)                \
  appendKey(Key, Explicit.Field);
#include "jitlock/LoweringModes.def"
#define JITLOCK_CONFIG_FIELD(Field) appendKey(Key, Explicit.Field);
#include "ConfigFields.def"
  auto [It, New] = Answers.try_emplace(Key);
  if (New) {
    if (Expected<ResolvedConfig> R = resolveConfig(M, Explicit))
      It->second = *R;
    else
      It->second = toString(R.takeError());
  }
  return It->second;
}

bool ResolvedConfigAnalysis::Result::invalidate(
    Module &, const PreservedAnalyses &PA,
    ModuleAnalysisManager::Invalidator &) {
  auto Checker = PA.getChecker<ResolvedConfigAnalysis>();
  return !Checker.preserved() && !Checker.preservedSet<AllAnalysesOn<Module>>();
}

const ResolvedConfig *getResolvedConfig(Module &M, ModuleAnalysisManager &MAM,
                                        const LoweringConfig &Explicit) {
  MAM.registerPass([] { return ResolvedConfigAnalysis(); });
  const auto &Answer =
      MAM.getResult<ResolvedConfigAnalysis>(M).get(M, Explicit);
  if (const auto *Message = std::get_if<std::string>(&Answer)) {
    reportError(M.getContext(), *Message);
    return nullptr;
  }
  return &std::get<ResolvedConfig>(Answer);
}

PreservedAnalyses preservedByLowering() {
  PreservedAnalyses PA = PreservedAnalyses::none();
  PA.preserve<ResolvedConfigAnalysis>();
  return PA;
}

std::string layoutFingerprint(const jitlock_rt_layout &L) {
  // The runtime owns the format, so that loaders without LLVM (the AArch64
  // harnesses) compare the same text.
  std::string Stamp(jitlock_rt_layout_fingerprint(&L, nullptr, 0), '\0');
  jitlock_rt_layout_fingerprint(&L, Stamp.data(), Stamp.size() + 1);
  return Stamp;
}

MDString *stampModule(Module &M, StringRef Flag, StringRef Stamp) {
  Metadata *Old = M.getModuleFlag(Flag);
  if (!Old) {
    M.addModuleFlag(Module::Error, Flag, MDString::get(M.getContext(), Stamp));
    return nullptr;
  }
  // A second flag of the same name would make the module invalid.
  auto *OldStamp = dyn_cast<MDString>(Old);
  if (!OldStamp)
    reportError(M.getContext(), "module flag " + Flag +
                                    " must be a string: the stamp of an "
                                    "earlier lowering");
  return OldStamp;
}

/// The module constructor that has lowered code check, before anything of
/// the module runs, that the runtime it meets has the layout it was lowered
/// for: an embedder's own JIT or a clang -fpass-plugin build have no loader
/// that compares the stamp. A module gets one, however many lowerings ran.
static void emitLayoutCheck(Module &M, StringRef Stamp) {
  if (M.getFunction(LayoutCheckName))
    return;
  LLVMContext &Ctx = M.getContext();
  auto *Text = ConstantDataArray::getString(Ctx, Stamp);
  auto *Fingerprint =
      new GlobalVariable(M, Text->getType(), /*isConstant=*/true,
                         GlobalValue::PrivateLinkage, Text, "jitlock_layout");
  Fingerprint->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  Fingerprint->setAlignment(Align(1));
  FunctionCallee Check = M.getOrInsertFunction(
      "jitlock_rt_check_layout",
      FunctionType::get(Type::getInt32Ty(Ctx), {PointerType::get(Ctx, 0)},
                        /*isVarArg=*/false));
  Function *Ctor =
      Function::Create(FunctionType::get(Type::getVoidTy(Ctx), false),
                       GlobalValue::InternalLinkage, LayoutCheckName, M);
  Ctor->addFnAttr(Attribute::NoUnwind);
  IRBuilder<> B(BasicBlock::Create(Ctx, "", Ctor));
  B.CreateCall(Check, {Fingerprint});
  B.CreateRetVoid();
  // Ahead of the module's own constructors, which may lock.
  appendToGlobalCtors(M, Ctor, /*Priority=*/101);
}

void stampLoweredLayout(Module &M, const jitlock_rt_layout &L) {
  std::string Stamp = layoutFingerprint(L);
  MDString *Old = stampModule(M, LoweredLayoutFlag, Stamp);
  if (Old && Old->getString() != Stamp) {
    reportError(M.getContext(),
                "conflicting configuration: module already lowered for "
                "layout '" +
                    Old->getString() + "', now lowering for '" + Stamp + "'");
    return;
  }
  emitLayoutCheck(M, Stamp);
}

} // namespace jitlock
