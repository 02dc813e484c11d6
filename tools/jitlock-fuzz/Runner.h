//===- Runner.h - Running a module in one configuration ---------*- C++ -*-===//
//
// A configuration is one way to lower and run the same module: inline fast
// paths, runtime calls only, or heavy monitors; the thread mode; the
// optimization levels before and after the lowering; the stack-bang mode; a
// VM thread taking safepoints; the thread count; and the host or AArch64
// under qemu. Its name is its parameters, e.g.
//
//   lower=inline,thread=tls,opt=O3-O0,bang=watermark,sp=0,threads=4
//   arch=aarch64,lse=1,lower=runtime,thread=call,opt=jit,threads=4
//
// Each run happens in a child process (fork), so that a crash, an abort or
// a hang (a time limit) of the code under test is a verdict, not the end of
// the fuzzer, and every run starts with a fresh runtime.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_TOOLS_FUZZ_RUNNER_H
#define JITLOCK_TOOLS_FUZZ_RUNNER_H

#include "jitlock/Passes.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace jitlock::fuzz {

enum class Lowering {
  Inline,       ///< the inline fast paths
  Runtime,      ///< every operation a runtime call (no-inline)
  Heavy,        ///< heavy-mode code on a heavy-mode runtime
  HeavyRuntime, ///< lightweight code on a heavy-mode runtime
};

struct RunConfig {
  Lowering Lower = Lowering::Inline;
  ThreadMode Thread = ThreadMode::TLS;
  /// -1: the JIT's own pipeline (the lowering at the start of O2). 0 to 3:
  /// this level before the lowering, then OptAfter after it.
  int OptBefore = -1;
  int OptAfter = 2;
  BangMode Bang = BangMode::Watermark;
  /// A VM thread takes a safepoint or a handshake this often (0: none);
  /// the code is lowered with polls=auto.
  unsigned SafepointUs = 0;
  unsigned Threads = 4;
  bool AArch64 = false;
  bool Lse = false; ///< AArch64: llc -mattr=+lse

  std::string name() const;
  /// Parses name()'s format; omitted keys keep their defaults.
  static std::optional<RunConfig> parse(const std::string &Text,
                                        std::string &Problem);
};

/// The tools an AArch64 run needs.
struct AArch64Tools {
  std::string Llc, Cxx, Qemu, Dir; ///< Dir: the cross build's outputs
  int64_t TlsOffset = 0;           ///< from the probe
  bool Ready = false;
};

/// Runs the probe under qemu for the TLS offset; Problem on failure.
bool probeAArch64(AArch64Tools &Tools, std::string &Problem);

struct Verdict {
  /// "ok", or the failure: refused, wrong-result, misuse, held-lock,
  /// monitor-leak, problem, stack-overflow, crash, timeout, aarch64.
  std::string Kind = "ok";
  std::vector<std::string> Messages;
  // What the runtime counted (host runs).
  uint64_t Contended = 0, Inflations = 0, Parks = 0, Waits = 0, Notifies = 0,
           SlowCalls = 0, Safepoints = 0, Handshakes = 0, Deflated = 0;
  double Seconds = 0;
  bool ok() const { return Kind == "ok"; }
};

/// Runs module `IR` (example convention) in configuration `C` in a child
/// process, with a time limit.
Verdict runModule(const std::string &IR, const RunConfig &C,
                  const AArch64Tools &Tools, unsigned TimeoutSeconds);

} // namespace jitlock::fuzz

#endif
