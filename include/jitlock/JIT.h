//===- jitlock/JIT.h - An in-process LLJIT for jitlock IR -------*- C++ -*-===//
//
// What a JIT that links jitlock does, in one small library (jitlock_jit):
//
//   1. parse a .ll or .bc module and run the IR verifier;
//   2. refuse code pre-lowered (by opt) for another layout: the module flag
//      jitlock.lowered-layout must equal layoutFingerprint() of this runtime,
//      and thread-pointer-relative code must use this process's TLS offset;
//   3. run the O2 pipeline of a PassBuilder on which jitlock::registerPasses
//      was called, so that the lowering joins it through its extension point,
//      with LoweringConfig::forThisProcess() (TLS mode, this process's offset);
//   4. refuse the module when any LLVM diagnostic of error severity was
//      reported (jitlock-verify's among them), returning the messages;
//   5. compile it with ORC's LLJIT for the host, resolving the runtime's
//      jitlock_rt_* functions from an explicit table of addresses.
//
// It also carries the runner for the example convention that examples/*.ll,
// tools/jitlock-run and unittests/JIT share:
//
//   void @jitlock_example_setup()                   optional, run first
//   i64  @jitlock_example_run(i64 %tid, i64 %n)     on N attached threads
//   i64  @jitlock_example_check(i64 %n)             0 iff the invariant holds
//   i64  @jitlock_example_result()                  optional, printed
//   i64  @jitlock_example_iterations                optional global, set by
//                                                   the runner before setup
//
// Objects are module globals, or elements of global arrays, whose
// initializer is a struct with the 64-bit header (1, unlocked) first.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_JIT_H
#define JITLOCK_JIT_H

#include "jitlock/jitlock_rt.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Module;
class raw_ostream;
} // namespace llvm

namespace jitlock {

struct JitOptions {
  /// false lowers every monitor operation to a call of the runtime's C
  /// functions (LoweringConfig::Inline = false): the reference build for
  /// differential testing.
  bool Inline = true;
  /// Prints the jitlock optimization remarks (what was inlined, what was sent
  /// to the runtime) to stderr while lowering.
  bool Remarks = false;
};

/// One lock object of the module: a global, or one element of a global
/// array, whose initializer starts with the header word 1.
struct ModuleObject {
  std::string Name; ///< "counter", "accounts[3]"
  std::string Global;
  uint64_t Offset = 0;  ///< bytes from the global's start
  void *Addr = nullptr; ///< filled in by JitSession::objects()
};

/// The runtime functions JIT code may call, with their addresses in this
/// process; the JIT defines exactly these as absolute symbols.
struct RuntimeSymbol {
  const char *Name;
  void *Addr;
};
llvm::ArrayRef<RuntimeSymbol> runtimeSymbols();

/// One module, lowered for this process and compiled on first lookup.
class JitSession {
public:
  /// Parses `Path` (.ll or .bc), verifies, checks the layout stamp and
  /// lowers. Every refusal is an Error whose text carries the diagnostics.
  static llvm::Expected<std::unique_ptr<JitSession>>
  loadFile(llvm::StringRef Path, JitOptions Opts = {});
  /// The same for IR text (or bitcode) held in memory.
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

//===----------------------------------------------------------------------===//
// The example convention
//===----------------------------------------------------------------------===//

inline constexpr const char *ExampleSetup = "jitlock_example_setup";
inline constexpr const char *ExampleRun = "jitlock_example_run";
inline constexpr const char *ExampleCheck = "jitlock_example_check";
inline constexpr const char *ExampleResultFn = "jitlock_example_result";
inline constexpr const char *ExampleIterations = "jitlock_example_iterations";

struct ExampleOptions {
  unsigned Threads = 4;
  /// Stored into @jitlock_example_iterations before setup; an error when the
  /// module has no such global.
  std::optional<int64_t> Iterations;
};

struct ExampleResult {
  int64_t Check = -1;              ///< 0 iff the invariant held
  std::optional<int64_t> Result;   ///< jitlock_example_result(), if defined
  std::vector<int64_t> RunReturns; ///< run()'s return, per thread
  double Seconds = 0;              ///< the concurrent run phase only
  /// Counters over setup, run and check (monitors_alive: at the end).
  jitlock_rt_stats Stats{};
  /// Runtime calls that failed in the driver itself, e.g. a thread that
  /// could not detach because run() returned holding a lock.
  std::vector<std::string> Problems;
  bool ok() const { return Check == 0 && Problems.empty(); }
};

/// Runs setup, then run on `Threads` threads (each attached, all released
/// together, each detached after), then check and result. The calling
/// thread is attached for setup and check, and detached again at the end if
/// it was not attached before. Does not call jitlock_rt_shutdown: the caller
/// does, after inspecting the objects and before destroying the session.
llvm::Expected<ExampleResult> runExample(JitSession &S,
                                         const ExampleOptions &Opts);

} // namespace jitlock

#endif
