//===- Config.cpp - Resolving the lowering configuration ------------------===//
//
// Three sources, checked against each other: the explicit configuration
// (pipeline parameters or the C++ struct), the module's jitlock.* flags, and
// the runtime's layout, which supplies every default.
//
//===----------------------------------------------------------------------===//
#include "jitlock/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace jitlock {

static Error configError(const Twine &Msg) {
  return make_error<StringError>(Msg, inconvertibleErrorCode());
}

static std::optional<ThreadMode> parseThreadMode(StringRef S) {
  if (S == "tls")
    return ThreadMode::TLS;
  if (S == "arg")
    return ThreadMode::Arg;
  if (S == "call")
    return ThreadMode::Call;
  return std::nullopt;
}

static StringRef threadModeName(ThreadMode M) {
  switch (M) {
  case ThreadMode::TLS:
    return "tls";
  case ThreadMode::Arg:
    return "arg";
  case ThreadMode::Call:
    return "call";
  }
  llvm_unreachable("unknown thread mode");
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
    auto NeedInt = [&](auto &Field) -> Error {
      int64_t N;
      if (Value.getAsInteger(0, N))
        return configError("parameter '" + Key + "' needs an integer, got '" +
                           Value + "'");
      Field = N;
      return Error::success();
    };
    if (Key == "thread") {
      C.Thread = parseThreadMode(Value);
      if (!C.Thread)
        return configError("thread must be tls, arg or call, got '" + Value +
                           "'");
    } else if (Key == "tls-offset") {
      if (Error E = NeedInt(C.TlsOffset))
        return std::move(E);
    } else if (Key == "header-offset") {
      if (Error E = NeedInt(C.HeaderOffset))
        return std::move(E);
    } else if (Key == "capacity") {
      if (Error E = NeedInt(C.Capacity))
        return std::move(E);
    } else if (Key == "inline" || Key == "no-inline") {
      if (!Value.empty())
        return configError("'" + Key + "' takes no value");
      C.Inline = Key == "inline";
    } else {
      return configError("unknown jitlock-lower parameter '" + Key +
                         "' (expected thread, tls-offset, header-offset, "
                         "capacity, inline or no-inline)");
    }
  }
  return C;
}

/// Reads module flag `jitlock.<Name>`: an integer, or (for thread) a string.
static std::optional<int64_t> intFlag(const Module &M, StringRef Name) {
  if (auto *CI = mdconst::extract_or_null<ConstantInt>(
          M.getModuleFlag(("jitlock." + Name).str())))
    return CI->getSExtValue();
  return std::nullopt;
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

Expected<ResolvedConfig> resolveConfig(const Module &M,
                                       const LoweringConfig &Explicit) {
  ResolvedConfig R;
  jitlock_rt_get_layout(&R.Layout);
  auto Num = [](int64_t V) { return std::to_string(V); };

  // The thread mode, from a string flag.
  std::optional<ThreadMode> FlagMode;
  if (Metadata *MD = M.getModuleFlag("jitlock.thread")) {
    auto *S = dyn_cast<MDString>(MD);
    FlagMode = S ? parseThreadMode(S->getString()) : std::nullopt;
    if (!FlagMode)
      return configError("module flag jitlock.thread must be \"tls\", \"arg\" "
                         "or \"call\"");
  }
  auto Mode = pickOne<ThreadMode>(
      "thread", Explicit.Thread, FlagMode,
      [](ThreadMode T) { return threadModeName(T).str(); });
  if (!Mode)
    return Mode.takeError();
  R.Thread = Mode->value_or(ThreadMode::Call);

  auto TlsOffset = pickOne<int64_t>("tls-offset", Explicit.TlsOffset,
                                    intFlag(M, "tls-offset"), Num);
  if (!TlsOffset)
    return TlsOffset.takeError();
  if (R.Thread == ThreadMode::TLS && !*TlsOffset)
    return configError(
        "thread=tls needs the runtime's thread_tls_offset, which is per "
        "process: pass tls-offset=N (from jitlock_rt_get_layout in the target "
        "process), or use LoweringConfig::forThisProcess() in a JIT");
  R.TlsOffset = TlsOffset->value_or(0);

  auto HeaderOffset = pickOne<int64_t>(
      "header-offset",
      Explicit.HeaderOffset ? std::optional<int64_t>(*Explicit.HeaderOffset)
                            : std::nullopt,
      intFlag(M, "header-offset"), Num);
  if (!HeaderOffset)
    return HeaderOffset.takeError();
  if (*HeaderOffset) {
    if (**HeaderOffset % 8 != 0)
      return configError("header-offset must be a multiple of 8");
    R.Layout.header_offset = int32_t(**HeaderOffset);
  }

  auto Capacity = pickOne<int64_t>(
      "capacity",
      Explicit.Capacity ? std::optional<int64_t>(*Explicit.Capacity)
                        : std::nullopt,
      intFlag(M, "capacity"), Num);
  if (!Capacity)
    return Capacity.takeError();
  if (*Capacity && uint64_t(**Capacity) != R.Layout.lock_stack_capacity)
    return configError(formatv(
        "conflicting configuration: capacity={0}, but the runtime's lock "
        "stack holds {1} entries",
        **Capacity, R.Layout.lock_stack_capacity));

  R.Inline = Explicit.Inline.value_or(true);
  return R;
}

std::string layoutFingerprint(const jitlock_rt_layout &L) {
  return formatv("abi={0};header={1};mask={2};top={3};base={4};end={5};"
                 "owner={6};recursions={7};anonymous={8};queued={9}",
                 L.abi_version, L.header_offset, L.lock_mask,
                 L.lock_stack_top_offset, L.lock_stack_base_offset,
                 L.lock_stack_end_offset, L.monitor_owner_offset,
                 L.monitor_recursions_offset, L.monitor_anonymous_owner,
                 L.monitor_queued_bit)
      .str();
}

} // namespace jitlock
