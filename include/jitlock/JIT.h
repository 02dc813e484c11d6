//===- jitlock/JIT.h - An in-process LLJIT for jitlock IR -------*- C++ -*-===//
//
// What a JIT that links jitlock does, in one small library (jitlock_jit):
//
//   1. parse a .ll or .bc module, from a file or from memory, and run the IR
//      verifier;
//   2. refuse code pre-lowered (by opt) for another layout: the module flag
//      jitlock.lowered-layout must equal layoutFingerprint() of this runtime,
//      and thread-pointer-relative code must use this process's TLS offset;
//   3. run the O2 pipeline of a PassBuilder on which jitlock::registerPasses
//      was called, so that the lowering joins it through its extension point,
//      with LoweringConfig::forThisProcess() (TLS mode, this process's offset);
//   4. refuse the module when any LLVM diagnostic of error severity was
//      reported (jitlock-verify's among them), returning the messages;
//   5. compile it with ORC's LLJIT for the host, resolving the runtime's
//      jitlock_rt_* functions from an explicit table of addresses
//      (jitlock::runtimeSymbols(), jitlock/RuntimeSymbols.h).
//
// An embedder with a JIT of its own does the same steps itself:
// docs/embedding.md walks through them.
//
// A tool that generates its IR compiles it straight from a string:
//
//   jitlock::JitOptions Opts;
//   Opts.Bang = jitlock::BangMode::Always;
//   auto S = jitlock::JitSession::loadBuffer(IRText, "fib", Opts);
//   if (!S) ... toString(S.takeError()) ...
//   auto Fib = (*S)->lookupFunction<int64_t(int64_t)>("fib");
//
// JIT code must run on an attached thread (jitlock_rt_attach). Code with
// "jitlock-stack-bang" functions can overflow its stack recoverably: call it
// through jitlock_rt_call_guarded.
//
// The runner of the example convention (examples/*.ll) that jitlock-run,
// jitlock-fuzz and unittests/JIT share is the tools' own code, in
// tools/common/ExampleRunner.h.
//
// Objects are module globals, or elements of global arrays, whose
// initializer is a struct with the 64-bit header (1, unlocked) first.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_JIT_H
#define JITLOCK_JIT_H

#include "jitlock/Passes.h"
#include "jitlock/RuntimeSymbols.h"
#include "jitlock/jitlock_rt.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Module;
class raw_ostream;
namespace orc {
class LLJIT;
} // namespace orc
} // namespace llvm

namespace jitlock {

struct JitOptions {
  /// false lowers every monitor operation to a call of the runtime's C
  /// functions (LoweringConfig::Inline = false): the reference build for
  /// differential testing.
  bool Inline = true;
  /// Prints the jitlock optimization remarks (what was inlined, what was sent
  /// to the runtime) to stderr while lowering. LLVM's -pass-remarks options,
  /// when a tool parsed them, select remarks as well.
  bool Remarks = false;
  /// Prints each pass of the lowering pipeline as it runs, as opt
  /// -debug-pass-manager does. (LLVM's -time-passes, -print-after-all and
  /// the like apply whenever a tool parsed them.)
  bool DebugPassManager = false;
  /// The method-entry check of "jitlock-stack-bang" functions
  /// (LoweringConfig::Bang). Unset: the module's jitlock.stack-bang flag,
  /// else watermark. Set and different from the module's flag: the module is
  /// refused (a conflicting configuration).
  std::optional<BangMode> Bang;
  /// The enter fast path (LoweringConfig::Locking). Unset: the module's
  /// jitlock.locking flag, else the runtime's configured locking_mode (so
  /// configure the runtime before loading). Either mode runs correctly on a
  /// runtime in either mode; matching them is only faster.
  std::optional<LockingMode> Locking;
  /// Which safepoint polls the lowering emits (LoweringConfig::Polls). Set
  /// and different from the module's jitlock.polls flag: the module is
  /// refused. Unset: the module's flag, else PollsDefault.
  std::optional<PollMode> Polls;
  /// The polls when neither Polls nor the module's flag chooses. jitlock-run
  /// --safepoint-every makes it Auto, so that every loop reaches a poll.
  /// Code that came pre-lowered keeps the polls it was lowered with: neither
  /// field applies to it (a Polls set anyway is reported as a warning).
  PollMode PollsDefault = PollMode::Explicit;
  /// false keeps jitlock-elide out of the O2 pipeline (LoweringConfig::
  /// Elide): every monitor operation stays in the code, and the runtime's
  /// queries (jitlock_rt_inspect, _holds_lock) count every hold the source
  /// takes. With elision they count only the holds left in the code; the
  /// exact count is jitlock::deopt::holdsWithElided (docs/deopt.md).
  bool Elide = true;
  /// Every defined function keeps a frame pointer ("frame-pointer"="all"):
  /// the frame walk of jitlock::deopt::holdsWithElided follows the frame
  /// pointer chain, and a compiled frame without one is not found.
  bool FramePointers = false;
  /// Called with the LLJIT before the module is added to it, e.g.
  /// jitlock::deopt::enableDeopt (jitlock/Deopt.h); an error refuses the
  /// compilation.
  std::function<llvm::Error(llvm::orc::LLJIT &)> ConfigureJit;
};

/// One lock object of the module: a global, or one element of a global
/// array, whose initializer starts with the header word 1.
struct ModuleObject {
  std::string Name; ///< "counter", "accounts[3]"
  std::string Global;
  uint64_t Offset = 0;  ///< bytes from the global's start
  void *Addr = nullptr; ///< filled in by JitSession::objects()
};

/// One module, lowered for this process and compiled on first lookup.
class JitSession {
public:
  /// Parses `Path` (.ll or .bc), verifies, checks the layout stamp and
  /// lowers. Every refusal is an Error whose text carries the diagnostics.
  static llvm::Expected<std::unique_ptr<JitSession>>
  loadFile(llvm::StringRef Path, JitOptions Opts = {});
  /// The same for IR text (or bitcode) held in memory, e.g. generated by the
  /// caller. `Name` only names the module in messages. `Contents` is copied
  /// as needed: it need not outlive the call.
  static llvm::Expected<std::unique_ptr<JitSession>>
  loadBuffer(llvm::StringRef Contents, llvm::StringRef Name,
             JitOptions Opts = {});

  ~JitSession();
  JitSession(const JitSession &) = delete;
  JitSession &operator=(const JitSession &) = delete;

  /// The lowered, optimized module. It stays valid after compilation: the
  /// JIT compiles a copy.
  const llvm::Module &module() const;
  /// Prints the lowered module as textual IR.
  void printIR(llvm::raw_ostream &OS) const;
  /// Prints the host machine code the JIT would produce, as assembly.
  llvm::Error printAssembly(llvm::raw_ostream &OS) const;
  /// Whether the module came already lowered (stamped with this runtime's
  /// layout, e.g. by opt with the plugin); the lowering then had no work.
  bool wasPreLowered() const;
  /// Warnings reported while lowering (errors refuse the module instead).
  llvm::ArrayRef<std::string> warnings() const;
  /// The stack-bang and locking modes the lowering used, after options,
  /// module flags and runtime defaults were combined. (Code that came
  /// pre-lowered keeps the modes it was lowered with.)
  BangMode bangMode() const;
  LockingMode lockingMode() const;
  /// The polls mode the lowering used; meaningless for pre-lowered code,
  /// which keeps the polls it came with.
  PollMode pollMode() const;

  /// The safepoint polls in the lowered code: its calls to
  /// jitlock_rt_safepoint_poll, which every lowered poll makes on its slow
  /// path, inline or not (so pre-lowered code counts the same way). A
  /// thread running code with none stops at a safepoint only once it blocks
  /// in the runtime or leaves the code.
  unsigned safepointPollCount() const;
  /// The defined functions with a loop that can run without ever polling:
  /// the function holds no poll and no call that may poll (a call to
  /// anything but an intrinsic or the runtime), and polls=auto did not place
  /// its polls (no "jitlock-polls-placed"). A thread looping there delays a
  /// safepoint for as long as the loop runs.
  std::vector<std::string> functionsWithUnpolledLoops() const;

  /// Whether the module defines function `Name` (after optimization).
  bool definesFunction(llvm::StringRef Name) const;
  /// An error unless `Name` is a defined function of exactly type `Type`,
  /// written as IR, e.g. "i64 (i64, i64)".
  llvm::Error checkFunction(llvm::StringRef Name, llvm::StringRef Type) const;

  /// Compiles the module (once) and returns the address of `Name`.
  llvm::Expected<void *> lookup(llvm::StringRef Name);
  template <typename Fn>
  llvm::Expected<Fn *> lookupFunction(llvm::StringRef Name) {
    auto Addr = lookup(Name);
    if (!Addr)
      return Addr.takeError();
    return reinterpret_cast<Fn *>(*Addr);
  }

  /// The module's lock objects with their addresses in the JIT'd module.
  llvm::Expected<std::vector<ModuleObject>> objects();

private:
  struct Impl;
  explicit JitSession(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> P;
};

} // namespace jitlock

#endif
