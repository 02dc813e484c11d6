//===- jitlock-run/main.cpp - JIT and run a jitlock example ---------------===//
//
//   jitlock-run [options] file.ll|file.bc
//
// Lowers the module in this process (O2 with the jitlock passes, TLS thread
// mode, this runtime's layout), JIT-compiles it with LLJIT and runs the
// example convention of include/jitlock/JIT.h: setup, run on N threads,
// check. Or prints the lowered IR or the host assembly instead.
//
// Every entry point runs inside jitlock_rt_call_guarded, so a stack overflow
// in JIT code ("jitlock-stack-bang" functions, or the runtime's guard zones)
// is reported, with the locks it released, instead of killing the process.
//
// With --safepoint-every=US a VM thread stops the run() threads every US
// microseconds while they run, alternately with a safepoint and with a
// handshake (ExampleOptions::SafepointEvery), and the module is lowered with
// polls=auto unless --polls or the module's jitlock.polls flag says
// otherwise. Code with no poll at all (a pre-lowered module lowered without
// polls, or --polls=none) is refused with status 2: a safepoint would wait
// for each thread until its run() returned, or forever. A function whose
// loops cannot poll gets a warning.
//
// Exit status: 0 when check() returned 0; 1 when the invariant failed (or
// the runtime reported misuse); 2 on usage, load or compile errors; 3 when
// an entry point overflowed its stack (this wins over 1).
//
//===----------------------------------------------------------------------===//
#include "jitlock/JIT.h"
#include "jitlock/jitlock_rt.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

using namespace llvm;

namespace {

constexpr int ExitOk = 0, ExitInvariant = 1, ExitUsage = 2,
              ExitStackOverflow = 3;

void usage(FILE *Out) {
  std::fprintf(
      Out,
      "usage: jitlock-run [options] file.ll|file.bc\n"
      "\n"
      "JIT-compiles a module with the jitlock passes and runs its example\n"
      "entry points: jitlock_example_setup(), jitlock_example_run(tid, n) on\n"
      "N threads at once, then jitlock_example_check(n), which returns 0 iff\n"
      "the invariant holds.\n"
      "\n"
      "options:\n"
      "  --threads N      threads running jitlock_example_run (default 4)\n"
      "  --iterations N   store N into @jitlock_example_iterations first\n"
      "  --no-inline      lower every monitor operation to a runtime call\n"
      "  --stack-bang=MODE\n"
      "                   the entry check of \"jitlock-stack-bang\" "
      "functions:\n"
      "                   watermark (default), always or none\n"
      "  --locking=MODE   lightweight (default) or heavy: heavy lowers enters\n"
      "                   without the fast lock and runs the runtime in its\n"
      "                   heavy mode, which inflates every locked object\n"
      "  --polls=MODE     safepoint polls: none, explicit (the module's own;\n"
      "                   the default) or auto (also on loop back-edges and\n"
      "                   at returns; the default with --safepoint-every)\n"
      "  --safepoint-every=US\n"
      "                   while run() runs, a VM thread takes a safepoint or\n"
      "                   (in turn) a handshake with every thread each US\n"
      "                   microseconds, deflating idle monitors in every\n"
      "                   4th safepoint, and prints how many and how long:\n"
      "                   'safepoints: N  ttsp median X us  p99 Y us',\n"
      "                   'handshakes: N  median X us  p99 Y us'. Code\n"
      "                   without polls is refused (status 2)\n"
      "  --emit=ll        print the lowered IR instead of running\n"
      "  --emit=asm       print the host assembly instead of running\n"
      "  --layout         print the runtime's thread and monitor layout\n"
      "  --remarks        print the jitlock optimization remarks\n"
      "  -h, --help       this text\n"
      "\n"
      "exit status:\n"
      "  0  the invariant held\n"
      "  1  the invariant failed, or the runtime reported misuse (or, with\n"
      "     --safepoint-every, a handshake ran other than once per thread)\n"
      "  2  usage, load or compile error (also: --safepoint-every on code\n"
      "     without safepoint polls)\n"
      "  3  stack overflow: an entry point overflowed its thread's stack and\n"
      "     was abandoned, its locks released (reported on stderr; wins\n"
      "     over 1)\n");
}

[[noreturn]] void usageError(const std::string &Msg) {
  std::fprintf(stderr, "jitlock-run: %s\n", Msg.c_str());
  std::fprintf(stderr, "try 'jitlock-run --help'\n");
  std::exit(ExitUsage);
}

std::optional<int64_t> parseInt(const char *S) {
  if (!S || !*S)
    return std::nullopt;
  char *End = nullptr;
  errno = 0;
  long long V = std::strtoll(S, &End, 10);
  if (errno || *End)
    return std::nullopt;
  return V;
}

struct Options {
  unsigned Threads = 4;
  std::optional<int64_t> Iterations;
  bool NoInline = false;
  std::optional<jitlock::BangMode> Bang;
  std::optional<jitlock::LockingMode> Locking;
  std::optional<jitlock::PollMode> Polls;
  std::optional<uint64_t> SafepointEvery;
  std::string Emit;
  bool Layout = false;
  bool Remarks = false;
  std::string File;
};

Options parseArgs(int Argc, char **Argv) {
  Options O;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    // Accepts both "--opt value" and "--opt=value".
    auto Value = [&](const char *Name) -> const char * {
      std::string Prefix = std::string(Name) + "=";
      if (A.rfind(Prefix, 0) == 0)
        return Argv[I] + Prefix.size();
      if (I + 1 >= Argc)
        usageError(std::string(Name) + " needs a value");
      return Argv[++I];
    };
    auto Is = [&](const char *Name) {
      return A == Name || A.rfind(std::string(Name) + "=", 0) == 0;
    };
    if (A == "-h" || A == "--help") {
      usage(stdout);
      std::exit(ExitOk);
    } else if (Is("--threads")) {
      auto N = parseInt(Value("--threads"));
      if (!N || *N < 1 || *N > 1024)
        usageError("--threads needs a number from 1 to 1024");
      O.Threads = unsigned(*N);
    } else if (Is("--iterations")) {
      auto N = parseInt(Value("--iterations"));
      if (!N || *N < 0)
        usageError("--iterations needs a non-negative number");
      O.Iterations = *N;
    } else if (Is("--emit")) {
      O.Emit = Value("--emit");
      if (O.Emit != "ll" && O.Emit != "asm")
        usageError("--emit must be ll or asm, got '" + O.Emit + "'");
    } else if (Is("--stack-bang")) {
      std::string M = Value("--stack-bang");
      if (M == "watermark")
        O.Bang = jitlock::BangMode::Watermark;
      else if (M == "always")
        O.Bang = jitlock::BangMode::Always;
      else if (M == "none")
        O.Bang = jitlock::BangMode::None;
      else
        usageError("--stack-bang must be watermark, always or none, got '" + M +
                   "'");
    } else if (Is("--locking")) {
      std::string M = Value("--locking");
      if (M == "lightweight")
        O.Locking = jitlock::LockingMode::Lightweight;
      else if (M == "heavy")
        O.Locking = jitlock::LockingMode::Heavy;
      else
        usageError("--locking must be lightweight or heavy, got '" + M + "'");
    } else if (Is("--polls")) {
      std::string M = Value("--polls");
      if (M == "none")
        O.Polls = jitlock::PollMode::None;
      else if (M == "explicit")
        O.Polls = jitlock::PollMode::Explicit;
      else if (M == "auto")
        O.Polls = jitlock::PollMode::Auto;
      else
        usageError("--polls must be none, explicit or auto, got '" + M + "'");
    } else if (Is("--safepoint-every")) {
      auto N = parseInt(Value("--safepoint-every"));
      if (!N || *N < 1 || *N > 10000000)
        usageError("--safepoint-every needs a number of microseconds from 1 "
                   "to 10000000");
      O.SafepointEvery = uint64_t(*N);
    } else if (A == "--no-inline") {
      O.NoInline = true;
    } else if (A == "--layout") {
      O.Layout = true;
    } else if (A == "--remarks") {
      O.Remarks = true;
    } else if (A.size() > 1 && A[0] == '-') {
      usageError("unknown option '" + A + "'");
    } else if (!O.File.empty()) {
      usageError("only one input file, got '" + O.File + "' and '" + A + "'");
    } else {
      O.File = A;
    }
  }
  if (O.File.empty() && !O.Layout)
    usageError("no input file");
  return O;
}

/// Misuse the runtime reports while the example runs: always a bug in the
/// example (or the runtime), so it fails the run.
std::atomic<unsigned> MisuseCount{0};

void onMisuse(void *, jitlock_status Status, jitlock_thread *Thread, void *Obj,
              const char *What) {
  if (MisuseCount.fetch_add(1) < 10)
    std::fprintf(stderr, "jitlock-run: runtime misuse: %s: %s (object %p)\n",
                 jitlock_rt_status_name(Status), What, Obj);
}

/// "by the stack-bang check (...)" or "by the SIGSEGV backstop in ...".
std::string describeCatch(const jitlock_stack_overflow &O) {
  const char *Zone = "outside the guard zones";
  switch (O.zone) {
  case JITLOCK_ZONE_SHADOW:
    Zone = "the shadow zone";
    break;
  case JITLOCK_ZONE_RESERVED:
    Zone = "the reserved zone";
    break;
  case JITLOCK_ZONE_YELLOW:
    Zone = "the yellow zone";
    break;
  case JITLOCK_ZONE_RED:
    Zone = "the red zone";
    break;
  }
  char Buf[160];
  if (O.from_signal)
    std::snprintf(Buf, sizeof Buf,
                  "by the SIGSEGV backstop: a fault at %#" PRIxPTR " in %s",
                  O.fault_addr, Zone);
  else
    std::snprintf(Buf, sizeof Buf,
                  "by the stack-bang check: no room for %s below sp", Zone);
  return Buf;
}

/// One stderr line per overflow: where, on which thread, and which lock
/// holds were released, by object name when the module names the object.
void reportOverflow(const jitlock::StackOverflowReport &R,
                    const std::vector<jitlock::ModuleObject> &Objects) {
  std::string Where = R.Phase + "()";
  if (R.Tid >= 0)
    Where += " on thread " + std::to_string(R.Tid);
  std::fprintf(stderr,
               "jitlock-run: stack overflow in %s (runtime thread %" PRIu64
               "), caught %s; sp=%#" PRIxPTR ", stack [%#" PRIxPTR
               ", %#" PRIxPTR "); released %zu lock hold%s",
               Where.c_str(), R.ThreadId, describeCatch(R.Overflow).c_str(),
               R.Overflow.sp, R.Overflow.stack.end, R.Overflow.stack.base,
               R.ReleasedCount, R.ReleasedCount == 1 ? "" : "s");
  // The first holds released (the innermost ones, as far as the runtime
  // knows), by name where the module names the object.
  constexpr size_t MaxNamed = 16;
  size_t Named = std::min(R.Released.size(), MaxNamed);
  for (size_t I = 0; I != Named; ++I) {
    std::string Name;
    for (const jitlock::ModuleObject &O : Objects)
      if (O.Addr == R.Released[I])
        Name = O.Name;
    if (Name.empty()) {
      char Buf[32];
      std::snprintf(Buf, sizeof Buf, "%p", R.Released[I]);
      Name = Buf;
    }
    std::fprintf(stderr, "%s%s", I == 0 ? " (in release order): " : ", ",
                 Name.c_str());
  }
  if (R.ReleasedCount > Named)
    std::fprintf(stderr, ", ... (%zu more)", R.ReleasedCount - Named);
  std::fprintf(stderr, "\n");
}

void printStats(const jitlock_rt_stats &S) {
  std::printf("lock statistics (runtime calls only: the inline fast paths do "
              "not count themselves):\n");
  auto Row = [](const char *Name, uint64_t V) {
    std::printf("  %-34s %12" PRIu64 "\n", Name, V);
  };
  Row("slow-path calls (enter/exit)", S.slow_path_calls);
  Row("fast locks (CAS 01->00 by runtime)", S.fast_locks);
  Row("recursive locks (by runtime)", S.recursive_locks);
  Row("monitor enters", S.monitor_enters);
  Row("inflations", S.inflations);
  Row("contended enters", S.contended_enters);
  Row("parks", S.parks);
  Row("waits", S.waits);
  Row("notifies", S.notifies);
  Row("monitors alive", S.monitors_alive);
}

/// Two lines that stay greppable: "safepoints: N  ttsp median X us  p99 Y
/// us" and "handshakes: N  median X us  p99 Y us".
void printSafepoints(const jitlock::SafepointReport &R) {
  using jitlock::percentile;
  std::printf("safepoints: %zu  ttsp median %.1f us  p99 %.1f us  (one "
              "safepoint or handshake every %" PRIu64 " us; %" PRIu64
              " monitor%s deflated in %" PRIu64 " of them)\n",
              R.safepoints(), percentile(R.TimeToSafepointUs, 0.5),
              percentile(R.TimeToSafepointUs, 0.99), R.EveryMicros, R.Deflated,
              R.Deflated == 1 ? "" : "s", R.Deflations);
  std::printf("handshakes: %zu  median %.1f us  p99 %.1f us  (%" PRIu64
              " operations run)\n",
              R.handshakes(), percentile(R.HandshakeUs, 0.5),
              percentile(R.HandshakeUs, 0.99), R.HandshakeOps);
}

} // namespace

int main(int Argc, char **Argv) {
  Options O = parseArgs(Argc, Argv);

  // Before any thread attaches: the defaults plus a misuse handler.
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.misuse_handler = onMisuse;
  Cfg.compiled_code_misuse = JITLOCK_MISUSE_REPORT; // reported: status 1
  if (O.Locking)
    Cfg.locking_mode = *O.Locking == jitlock::LockingMode::Heavy
                           ? JITLOCK_LOCKING_HEAVY
                           : JITLOCK_LOCKING_LIGHTWEIGHT;
  if (int Rc = jitlock_rt_configure(&Cfg)) {
    std::fprintf(stderr, "jitlock-run: jitlock_rt_configure failed: %s\n",
                 jitlock_rt_status_name(Rc));
    return ExitUsage;
  }

  if (O.Layout) {
    jitlock_rt_print_layout(stdout);
    std::fflush(stdout);
    if (O.File.empty())
      return ExitOk;
  }

  jitlock::JitOptions JO;
  JO.Inline = !O.NoInline;
  JO.Remarks = O.Remarks;
  JO.Bang = O.Bang;
  JO.Locking = O.Locking;
  JO.Polls = O.Polls;
  // A safepoint completes only once every thread has reached a poll.
  if (O.SafepointEvery)
    JO.PollsDefault = jitlock::PollMode::Auto;
  auto Loaded = jitlock::JitSession::loadFile(O.File, JO);
  if (!Loaded) {
    errs() << "jitlock-run: " << toString(Loaded.takeError()) << "\n";
    return ExitUsage;
  }
  jitlock::JitSession &S = **Loaded;
  for (const std::string &W : S.warnings())
    errs() << "jitlock-run: warning: " << W << "\n";

  if (O.Emit == "ll") {
    S.printIR(outs());
    return ExitOk;
  }
  if (O.Emit == "asm") {
    if (Error E = S.printAssembly(outs())) {
      errs() << "jitlock-run: " << toString(std::move(E)) << "\n";
      return ExitUsage;
    }
    return ExitOk;
  }

  // (Code with no poll at all is refused by runExample.)
  if (O.SafepointEvery && S.safepointPollCount() != 0)
    for (const std::string &F : S.functionsWithUnpolledLoops())
      errs() << "jitlock-run: warning: function '" << F
             << "' has a loop that never polls: a thread looping there "
                "delays every safepoint until it leaves the loop\n";

  jitlock::ExampleOptions EO;
  EO.Threads = O.Threads;
  EO.Iterations = O.Iterations;
  EO.SafepointEvery = O.SafepointEvery;
  auto Ran = jitlock::runExample(S, EO);
  if (!Ran) {
    errs() << "jitlock-run: " << toString(Ran.takeError()) << "\n";
    return ExitUsage;
  }
  const jitlock::ExampleResult &R = *Ran;

  std::printf("jitlock-run: %s: %u thread%s, %s, stack-bang=%s, "
              "locking=%s, polls=%s (%u in the code)\n",
              O.File.c_str(), O.Threads, O.Threads == 1 ? "" : "s",
              S.wasPreLowered()
                  ? "pre-lowered module (layout stamp matches this runtime)"
              : O.NoInline ? "runtime-only lowering (--no-inline)"
                           : "inline fast paths",
              jitlock::bangModeName(S.bangMode()).data(),
              jitlock::lockingModeName(S.lockingMode()).data(),
              S.wasPreLowered() ? "as pre-lowered"
                                : jitlock::pollModeName(S.pollMode()).data(),
              S.safepointPollCount());
  if (R.Result)
    std::printf("result:  %" PRId64 "\n", *R.Result);
  int64_t RunSum = 0;
  for (int64_t V : R.RunReturns)
    RunSum += V;
  std::printf("run:     %" PRId64 " (sum of the threads' returns)\n", RunSum);
  std::printf("check:   %" PRId64 " (%s)\n", R.Check,
              R.Check == 0 ? "invariant holds" : "INVARIANT FAILED");
  std::printf("elapsed: %.3f ms (the concurrent run phase)\n", R.Seconds * 1e3);
  if (R.Safepoints)
    printSafepoints(*R.Safepoints);
  printStats(R.Stats);
  std::fflush(stdout);

  int Status = R.Check == 0 ? ExitOk : ExitInvariant;
  for (const std::string &P : R.Problems) {
    std::fprintf(stderr, "jitlock-run: %s\n", P.c_str());
    Status = ExitInvariant;
  }
  if (unsigned N = MisuseCount.load()) {
    std::fprintf(stderr, "jitlock-run: the runtime reported %u misuse%s\n", N,
                 N == 1 ? "" : "s");
    Status = ExitInvariant;
  }
  if (!R.Overflows.empty()) {
    std::vector<jitlock::ModuleObject> Objects;
    if (auto Found = S.objects())
      Objects = std::move(*Found);
    else
      consumeError(Found.takeError());
    for (const jitlock::StackOverflowReport &Report : R.Overflows)
      reportOverflow(Report, Objects);
    Status = ExitStackOverflow;
  }
  // Shutdown restores inflated headers, which live in the JIT's memory: it
  // runs before the session (and that memory) goes away.
  if (int Rc = jitlock_rt_shutdown()) {
    std::fprintf(stderr, "jitlock-run: jitlock_rt_shutdown failed: %s\n",
                 jitlock_rt_status_name(Rc));
    Status = ExitInvariant;
  }
  return Status;
}
