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
// All of the work runs on a thread of jitlock-run's own, not on the main
// thread, so that setup and check have guard zones too (see main()).
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
// With --until-contended=N the example runs again, each time on a fresh
// module with twice the iterations (up to 16 times the first run's), until
// the runtime counted a contended enter, at most N runs: a run whose threads
// never met at a lock proves nothing about the lock. (Threads that share
// few free cores can each finish inside one time slice; longer runs get
// them preempted inside the lock.)
//
// Options are llvm::cl options, so LLVM's own (-stats, -pass-remarks=...,
// -time-passes, ...) reach the lowering pipeline (tools/common/ToolSupport.h).
// The exit statuses are in MoreHelp below.
//
//===----------------------------------------------------------------------===//
#include "ToolSupport.h"

#include "ExampleRunner.h"
#include "jitlock/JIT.h"
#include "jitlock/jitlock_rt.h"

#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace llvm;
using jitlock::tools::error;
using jitlock::tools::note;
using jitlock::tools::warning;

namespace {

constexpr int ExitOk = 0, ExitInvariant = 1, ExitUsage = 2,
              ExitStackOverflow = 3;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

cl::OptionCategory RunCategory("jitlock-run options");

cl::opt<std::string> InputFile(cl::Positional, cl::desc("<file.ll|file.bc>"),
                               cl::cat(RunCategory));

[[maybe_unused]] const bool LLVMThreadsRenamed =
    jitlock::tools::renameLLVMThreadsOption();

jitlock::tools::NumberOpt
    Threads("threads",
            cl::desc("Threads running jitlock_example_run, 1 to 1024 "
                     "(default 4)"),
            cl::value_desc("N"), cl::init(4), cl::cat(RunCategory));

jitlock::tools::NumberOpt
    Iterations("iterations",
               cl::desc("Store N into @jitlock_example_iterations first"),
               cl::value_desc("N"), cl::cat(RunCategory));

cl::opt<bool>
    NoInline("no-inline",
             cl::desc("Lower every monitor operation to a runtime call"),
             cl::cat(RunCategory));

cl::opt<bool>
    Elide("elide",
          cl::desc("Elide the locks that cannot matter, as O2 does (default "
                   "true; --elide=false keeps every lock, so that the "
                   "runtime's queries count every hold)"),
          cl::init(true), cl::cat(RunCategory));

/// The parser of a mode option (LoweringModes.def): an unknown value gets
/// the message the pass parameters get, after the option's name.
template <typename T> class ModeParser : public cl::parser<T> {
public:
  using cl::parser<T>::parser;

  bool parse(cl::Option &O, StringRef, StringRef Arg, T &Value) {
    if (std::optional<T> V = jitlock::parseMode<T>(Arg))
      Value = *V;
    else
      jitlock::tools::detail::recordBadOption(
          "--" + O.ArgStr + ": " + jitlock::unknownModeMessage<T>(Arg));
    return false;
  }
};

cl::opt<jitlock::BangMode, false, ModeParser<jitlock::BangMode>>
    Bang("stack-bang",
         cl::desc("The entry check of \"jitlock-stack-bang\" functions"),
         jitlock::modeOptionValues<jitlock::BangMode>(), cl::cat(RunCategory));

cl::opt<jitlock::LockingMode, false, ModeParser<jitlock::LockingMode>>
    Locking("locking", cl::desc("The locking mode"),
            jitlock::modeOptionValues<jitlock::LockingMode>(),
            cl::cat(RunCategory));

cl::opt<unsigned> ReserveShift(
    "reserve-shift",
    cl::desc("With --locking=reserved: the header bit where the reservation "
             "field starts (default 40)"),
    cl::init(40), cl::cat(RunCategory));
cl::opt<unsigned> ReserveBits(
    "reserve-bits",
    cl::desc("With --locking=reserved: the reservation field's width in bits "
             "(default 16); the program marks an object reservable with "
             "those bits all ones"),
    cl::init(16), cl::cat(RunCategory));

/// --monitors' values: one per line of jitlock/MonitorStorage.def.
struct MonitorStorageValues {
  template <typename Opt> void apply(Opt &O) const {
    for (const jitlock::MonitorStorageDescriptor &D : jitlock::MonitorStorages)
      O.getParser().addLiteralOption(D.Name, D.Storage, D.Help);
  }
};

cl::opt<jitlock::MonitorStorage, false,
        jitlock::tools::ValuesParser<jitlock::MonitorStorage>>
    Monitors("monitors",
             cl::desc("How an inflated header names its monitor: the "
                      "runtime is configured for it and the code lowered "
                      "for it"),
             MonitorStorageValues(), cl::cat(RunCategory));

cl::opt<jitlock::InflatedExit, false, ModeParser<jitlock::InflatedExit>>
    Exit("exit",
         cl::desc("How an inflated monitor's exit orders its release before "
                  "it reads the entry count: the runtime is configured for "
                  "it and the code lowered for it"),
         jitlock::modeOptionValues<jitlock::InflatedExit>(),
         cl::cat(RunCategory));

cl::opt<jitlock::PollMode, false, ModeParser<jitlock::PollMode>>
    Polls("polls", cl::desc("Safepoint polls"),
          jitlock::modeOptionValues<jitlock::PollMode>(), cl::cat(RunCategory));

jitlock::tools::NumberOpt SafepointEvery(
    "safepoint-every",
    cl::desc("While run() runs, a VM thread takes a safepoint or (in turn) "
             "a handshake with every thread each US microseconds, deflating "
             "idle monitors in every 4th safepoint, and prints "
             "'safepoints: N  ttsp median X us  p99 Y us' and "
             "'handshakes: N  median X us  p99 Y us'. Code without polls is "
             "refused (status 2). 1 to 10000000"),
    cl::value_desc("US"), cl::cat(RunCategory));

enum class EmitKind { Run, IR, Assembly };
cl::opt<EmitKind, false, jitlock::tools::ValuesParser<EmitKind>>
    Emit("emit", cl::desc("Print instead of running"), cl::init(EmitKind::Run),
         cl::values(clEnumValN(EmitKind::IR, "ll", "The lowered IR"),
                    clEnumValN(EmitKind::Assembly, "asm", "The host assembly")),
         cl::cat(RunCategory));

cl::opt<bool> Layout("layout",
                     cl::desc("Print the runtime's thread and monitor layout "
                              "(the input file is then optional)"),
                     cl::cat(RunCategory));

cl::opt<bool> Remarks("remarks",
                      cl::desc("Print the jitlock optimization remarks (as "
                               "-pass-remarks=jitlock "
                               "-pass-remarks-missed=jitlock "
                               "-pass-remarks-analysis=jitlock)"),
                      cl::cat(RunCategory));

jitlock::tools::NumberOpt UntilContended(
    "until-contended",
    cl::desc("Run up to N times, each on a fresh module with twice the "
             "iterations (up to 16 times the first run's), until the "
             "runtime counted a contended enter; status 1 when no run had "
             "one. 1 to 64"),
    cl::value_desc("N"), cl::cat(RunCategory));

constexpr const char *MoreHelp = R"(
The module's entry points: jitlock_example_setup() (optional), then
jitlock_example_run(tid, n) on N threads at once, then
jitlock_example_check(n), which returns 0 iff the invariant holds.

EXIT STATUS:
  0  the invariant held
  1  the invariant failed, or the runtime reported misuse (or, with
     --safepoint-every, a handshake ran other than once per thread; with
     --until-contended, no run had a contended enter)
  2  usage, load or compile error (also: --safepoint-every on code without
     safepoint polls)
  3  stack overflow: an entry point overflowed its thread's stack and was
     abandoned, its locks released (reported on stderr; wins over 1). After
     one in setup or check, 'check:' says it gave no verdict
)";

/// The options, checked; every problem is a usage error (status 2).
void checkOptions() {
  if (Threads < 1 || Threads > 1024)
    jitlock::tools::usageError("--threads needs a number from 1 to 1024");
  if (Iterations.getNumOccurrences() && Iterations < 0)
    jitlock::tools::usageError("--iterations needs a non-negative number");
  if (SafepointEvery.getNumOccurrences() &&
      (SafepointEvery < 1 || SafepointEvery > 10000000))
    jitlock::tools::usageError(
        "--safepoint-every needs a number of microseconds from 1 to "
        "10000000");
  if (UntilContended.getNumOccurrences() &&
      (UntilContended < 1 || UntilContended > 64))
    jitlock::tools::usageError(
        "--until-contended needs a number of runs from 1 to 64");
  if (InputFile.empty() && !Layout)
    jitlock::tools::usageError("no input file");
}

/// The value of an option with choices when it was given; unset otherwise.
template <typename T, typename Parser>
std::optional<T> given(const cl::opt<T, false, Parser> &O) {
  if (!O.getNumOccurrences())
    return std::nullopt;
  return O.getValue();
}

/// Misuse the runtime reports while the example runs: always a bug in the
/// example (or the runtime), so it fails the run.
std::atomic<unsigned> MisuseCount{0};

void onMisuse(void *, jitlock_status Status, jitlock_thread *Thread, void *Obj,
              const char *What) {
  if (MisuseCount.fetch_add(1) >= 10)
    return;
  // Any thread may report: one write per line.
  std::string Line;
  raw_string_ostream OS(Line);
  WithColor::error(OS, "jitlock-run")
      << "runtime misuse: " << jitlock_rt_status_name(Status) << ": " << What
      << " (object " << Obj << ")\n";
  errs() << Line;
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
  raw_ostream &OS = error();
  OS << "stack overflow in " << Where << " (runtime thread " << R.ThreadId
     << "), caught " << describeCatch(R.Overflow)
     << "; sp=" << format_hex(R.Overflow.sp, 0) << ", stack ["
     << format_hex(R.Overflow.stack.end, 0) << ", "
     << format_hex(R.Overflow.stack.base, 0) << "); released "
     << R.ReleasedCount << " lock hold" << (R.ReleasedCount == 1 ? "" : "s");
  // The first holds released (the innermost ones, as far as the runtime
  // knows), by name where the module names the object.
  constexpr size_t MaxNamed = 16;
  size_t Named = std::min(R.Released.size(), MaxNamed);
  for (size_t I = 0; I != Named; ++I) {
    OS << (I == 0 ? " (in release order): " : ", ");
    auto Found = llvm::find_if(Objects, [&](const jitlock::ModuleObject &O) {
      return O.Addr == R.Released[I];
    });
    if (Found != Objects.end())
      OS << Found->Name;
    else
      OS << R.Released[I];
  }
  if (R.ReleasedCount > Named)
    OS << ", ... (" << R.ReleasedCount - Named << " more)";
  OS << "\n";
}

void printStats(const jitlock_rt_stats &S) {
  std::printf("lock statistics (runtime calls only: the inline fast paths do "
              "not count themselves):\n");
  auto Row = [](const char *Name, uint64_t V) {
    std::printf("  %-34s %12" PRIu64 "\n", Name, V);
  };
  for (const auto &[Name, Count] : jitlock::tools::lockStatRows(S))
    Row(Name, Count);
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

/// The session for InputFile, lowered as the options say; exits with 2 when
/// the module is refused.
std::unique_ptr<jitlock::JitSession> load() {
  jitlock::JitOptions JO;
  JO.Inline = !NoInline;
  JO.Elide = Elide;
  JO.Remarks = Remarks;
  JO.DebugPassManager = jitlock::tools::debugPassManager();
  JO.Bang = given(Bang);
  JO.Locking = given(Locking);
  JO.Polls = given(Polls);
  // A safepoint completes only once every thread has reached a poll.
  if (SafepointEvery.getNumOccurrences())
    JO.PollsDefault = jitlock::PollMode::Auto;
  auto Loaded = jitlock::JitSession::loadFile(InputFile, JO);
  if (!Loaded) {
    error() << toString(Loaded.takeError()) << "\n";
    std::exit(ExitUsage);
  }
  return std::move(*Loaded);
}

/// The iterations of run `Attempt` (from 1) of --until-contended: twice
/// those of the run before, up to 16 times the first's. Unset when the
/// module keeps its own.
Expected<std::optional<int64_t>> iterationsFor(jitlock::JitSession &S,
                                               unsigned Attempt) {
  std::optional<int64_t> Base;
  if (Iterations.getNumOccurrences())
    Base = Iterations;
  else if (Attempt > 1 &&
           S.module().getNamedGlobal(jitlock::ExampleIterations)) {
    auto Addr = S.lookup(jitlock::ExampleIterations);
    if (!Addr)
      return Addr.takeError();
    Base = *static_cast<const int64_t *>(*Addr);
  }
  constexpr unsigned MaxScaleLog2 = 4;
  const unsigned Shift = std::min(Attempt - 1, MaxScaleLog2);
  if (!Base || Shift == 0)
    return Base;
  return std::min<int64_t>(*Base, INT64_MAX >> Shift) << Shift;
}

/// Prints what the run did and returns the exit status it earns.
int report(jitlock::JitSession &S, const jitlock::ExampleResult &R) {
  unsigned N = unsigned(Threads);
  std::printf("jitlock-run: %s: %u thread%s, %s, stack-bang=%s, "
              "locking=%s, polls=%s (%u in the code)\n",
              InputFile.c_str(), N, N == 1 ? "" : "s",
              S.wasPreLowered()
                  ? "pre-lowered module (layout stamp matches this runtime)"
              : NoInline ? "runtime-only lowering (--no-inline)"
                         : "inline fast paths",
              jitlock::bangModeName(S.bangMode()).data(),
              jitlock::lockingModeName(S.lockingMode()).data(),
              S.wasPreLowered() ? "as pre-lowered"
                                : jitlock::pollModeName(S.pollMode()).data(),
              S.safepointPollCount());
  if (R.Result)
    std::printf("result:  %" PRId64 "\n", *R.Result);
  // An overflow in setup skips run and check; one in check abandons it.
  // Either way check gave no verdict, and -1 must not read as one.
  auto OverflowIn = [&](StringRef Phase) {
    return llvm::any_of(R.Overflows,
                        [&](const jitlock::StackOverflowReport &O) {
                          return O.Phase == Phase;
                        });
  };
  if (OverflowIn("setup")) {
    std::printf("run:     not run (stack overflow in setup)\n");
    std::printf("check:   not run (stack overflow in setup)\n");
  } else {
    int64_t RunSum = 0;
    for (int64_t V : R.RunReturns)
      RunSum += V;
    std::printf("run:     %" PRId64 " (sum of the threads' returns)\n", RunSum);
    if (OverflowIn("check"))
      std::printf("check:   abandoned (stack overflow in check)\n");
    else
      std::printf("check:   %" PRId64 " (%s)\n", R.Check,
                  R.Check == 0 ? "invariant holds" : "INVARIANT FAILED");
    std::printf("elapsed: %.3f ms (the concurrent run phase)\n",
                R.Seconds * 1e3);
  }
  if (R.Safepoints)
    printSafepoints(*R.Safepoints);
  printStats(R.Stats);
  std::fflush(stdout);

  int Status = R.Check == 0 ? ExitOk : ExitInvariant;
  for (const std::string &P : R.Problems) {
    error() << P << "\n";
    Status = ExitInvariant;
  }
  if (unsigned Misuses = MisuseCount.load()) {
    error() << "the runtime reported " << Misuses << " misuse"
            << (Misuses == 1 ? "" : "s") << "\n";
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
  return Status;
}

/// Shutdown restores inflated headers, which live in the JIT's memory: it
/// runs before the session (and that memory) goes away.
int shutDown(int Status) {
  if (int Rc = jitlock_rt_shutdown()) {
    error() << "jitlock_rt_shutdown failed: " << jitlock_rt_status_name(Rc)
            << "\n";
    return ExitInvariant;
  }
  return Status;
}

/// Everything after the command line: configures the runtime, then loads,
/// lowers, compiles and runs (or prints) the module. Returns the exit status.
int runTool() {
  // Before any thread attaches: the defaults plus a misuse handler.
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.misuse_handler = onMisuse;
  Cfg.compiled_code_misuse = JITLOCK_MISUSE_REPORT; // reported: status 1
  if (auto Mode = given(Locking))
    Cfg.locking_mode =
        *Mode == jitlock::LockingMode::Heavy      ? JITLOCK_LOCKING_HEAVY
        : *Mode == jitlock::LockingMode::Reserved ? JITLOCK_LOCKING_RESERVED
                                                  : JITLOCK_LOCKING_LIGHTWEIGHT;
  // The lowering takes the reservation field from the runtime's layout.
  if (Cfg.locking_mode == JITLOCK_LOCKING_RESERVED) {
    Cfg.reserve_shift = ReserveShift;
    Cfg.reserve_bits = ReserveBits;
  } else if (ReserveShift.getNumOccurrences() ||
             ReserveBits.getNumOccurrences()) {
    error() << "--reserve-shift and --reserve-bits need --locking=reserved\n";
    return ExitUsage;
  }
  // The lowering takes the storage from the runtime's layout.
  if (auto Storage = given(Monitors))
    Cfg.monitor_storage = uint32_t(*Storage);
  if (auto Kind = given(Exit))
    Cfg.inflated_exit = uint32_t(*Kind);
  if (int Rc = jitlock_rt_configure(&Cfg)) {
    error() << "jitlock_rt_configure failed: " << jitlock_rt_status_name(Rc)
            << "\n";
    return ExitUsage;
  }

  if (Layout) {
    jitlock_rt_print_layout(stdout);
    std::fflush(stdout);
    if (InputFile.empty())
      return ExitOk;
  }

  const unsigned Attempts =
      UntilContended.getNumOccurrences() ? unsigned(UntilContended) : 1;
  for (unsigned Attempt = 1;; ++Attempt) {
    std::unique_ptr<jitlock::JitSession> S = load();
    if (Attempt == 1)
      for (const std::string &W : S->warnings())
        warning() << W << "\n";

    if (Emit == EmitKind::IR) {
      S->printIR(outs());
      jitlock::tools::printStatistics();
      return ExitOk;
    }
    if (Emit == EmitKind::Assembly) {
      if (Error E = S->printAssembly(outs())) {
        error() << toString(std::move(E)) << "\n";
        return ExitUsage;
      }
      jitlock::tools::printStatistics();
      return ExitOk;
    }

    // (Code with no poll at all is refused by runExample.)
    if (Attempt == 1 && SafepointEvery.getNumOccurrences() &&
        S->safepointPollCount() != 0)
      for (const std::string &F : S->functionsWithUnpolledLoops())
        warning() << "function '" << F
                  << "' has a loop that never polls: a thread looping there "
                     "delays every safepoint until it leaves the loop\n";

    jitlock::ExampleOptions EO;
    EO.Threads = unsigned(Threads);
    auto Its = iterationsFor(*S, Attempt);
    if (!Its) {
      error() << toString(Its.takeError()) << "\n";
      return shutDown(ExitUsage);
    }
    EO.Iterations = *Its;
    if (SafepointEvery.getNumOccurrences())
      EO.SafepointEvery = uint64_t(SafepointEvery);
    auto Ran = jitlock::runExample(*S, EO);
    if (!Ran) {
      error() << toString(Ran.takeError()) << "\n";
      return shutDown(ExitUsage);
    }
    const jitlock::ExampleResult &R = *Ran;
    const bool Contended = R.Stats.contended_enters != 0;
    if (Attempt < Attempts && !Contended && R.ok() && !MisuseCount.load()) {
      note() << "run " << Attempt << " of " << Attempts
             << " had no contended enter";
      if (EO.Iterations)
        errs() << " (" << *EO.Iterations << " iterations)";
      errs() << "; running again\n";
      if (int Status = shutDown(ExitOk))
        return Status;
      continue;
    }

    int Status = report(*S, R);
    jitlock::tools::printStatistics();
    if (UntilContended.getNumOccurrences() && !Contended && Status == ExitOk) {
      error() << "no contended enter in " << Attempts
              << " runs: the threads never met at a lock\n";
      Status = ExitInvariant;
    }
    return shutDown(Status);
  }
}

} // namespace

int main(int Argc, char **Argv) {
  jitlock::tools::parseCommandLine(
      Argc, Argv, "jitlock-run",
      "JIT-compiles a module with the jitlock passes and runs its example "
      "entry points\n",
      MoreHelp, RunCategory, ExitUsage);
  checkOptions();

  // setup and check run on the thread that calls runExample. The main
  // thread's stack is the kernel's, grown on demand: the runtime cannot
  // protect guard zones on it (docs/stack-banging.md, "The main-thread
  // caveat"), so an overflow there without the watermark check
  // (--stack-bang=always|none) would die of SIGSEGV. As Java launchers do,
  // the work runs on a thread of its own instead, whose pthread stack has
  // the default size, as the run() threads' do, and gets the same guard
  // zones and SIGSEGV backstop when runExample attaches it.
  int Status = ExitUsage;
  std::thread Entry([&Status] { Status = runTool(); });
  Entry.join();
  return Status;
}
