//===- jitlock-fuzz/main.cpp - Differential fuzzing of monitor programs ---===//
//
//   jitlock-fuzz [--seed=S] [--programs=N] [--configs=K] [--config=NAME]...
//   jitlock-fuzz --replay=FILE.ll [--config=NAME]...
//
// Generates random structured monitor programs (Program.h), runs each in K
// configurations (Runner.h) sampled from the seed, or in the ones --config
// names, and compares every run with the generator's model: the module's
// own check, misuse reports, the final lock state, monitor leaks, crashes
// and hangs. A failure is shrunk (Shrink.h) and written as a reproducer
// .ll with the command that replays it. --replay runs saved modules.
//
// The exit statuses are in MoreHelp below.
//
//===----------------------------------------------------------------------===//
#include "Program.h"
#include "Runner.h"
#include "Shrink.h"
#include "ToolSupport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>
#include <set>

using namespace llvm;
using namespace jitlock::fuzz;
using jitlock::tools::error;
using jitlock::tools::note;

namespace {

constexpr int ExitOk = 0, ExitFailure = 1, ExitUsage = 2;

constexpr const char *MoreHelp = R"(
A configuration: lower=inline|runtime|heavy|heavy-runtime,
thread=tls|arg|call, opt=jit|O<before>-O<after>, bang=watermark|always|none,
sp=<safepoint period in us, 0 = none>, threads=N; for AArch64 also
arch=aarch64,lse=0|1.

EXIT STATUS:
  0  every run agreed with the model
  1  a run failed (reproducers written to --out-dir)
  2  usage error, or a module that cannot be read
)";

jitlock::tools::ToolCommandLine CommandLine(
    {.Tool = "jitlock-fuzz",
     .Overview = "Generates random monitor programs and runs each in "
                 "several lowering and runtime configurations, comparing "
                 "them with a model\n",
     .LowersIR = true,
     .MoreHelp = MoreHelp,
     .UsageStatus = ExitUsage});
cl::OptionCategory &FuzzCategory = CommandLine.Category;

jitlock::tools::NumberOpt Seed("seed", cl::desc("The first seed (default 1)"),
                               cl::value_desc("S"), cl::init(1),
                               cl::cat(FuzzCategory));
jitlock::tools::NumberOpt
    Programs("programs",
             cl::desc("Programs to generate, seeds S, S+1, ... (default 10)"),
             cl::value_desc("N"), cl::init(10), cl::cat(FuzzCategory));
jitlock::tools::NumberOpt
    ConfigsPerProgram("configs",
                      cl::desc("Host configurations per program, sampled "
                               "from its seed (default 4; the first is "
                               "always the runtime-only reference)"),
                      cl::value_desc("K"), cl::init(4), cl::cat(FuzzCategory));
cl::list<std::string>
    Configs("config",
            cl::desc("Run this configuration instead of sampled ones "
                     "(repeatable), e.g. lower=inline,thread=arg,opt=O3-O0,"
                     "bang=always,sp=200,threads=4"),
            cl::value_desc("NAME"), cl::cat(FuzzCategory));
cl::list<std::string>
    Replay("replay",
           cl::desc("Run a saved module (repeatable) in the --config "
                    "configurations, or in a standard set"),
           cl::value_desc("FILE.ll"), cl::cat(FuzzCategory));
jitlock::tools::NumberOpt
    MaxThreadsOpt("max-threads",
                  cl::desc("The most threads a sampled configuration runs "
                           "(2 to 8, default 4)"),
                  cl::value_desc("N"), cl::init(4), cl::cat(FuzzCategory));
jitlock::tools::NumberOpt
    Timeout("timeout", cl::desc("Seconds one run may take (default 60)"),
            cl::value_desc("S"), cl::init(60), cl::cat(FuzzCategory));
cl::opt<bool> NoShrink("no-shrink", cl::desc("Report failures unshrunk"),
                       cl::cat(FuzzCategory));
jitlock::tools::NumberOpt
    ShrinkTrials("shrink-trials",
                 cl::desc("The most candidates one shrink runs (default "
                          "300)"),
                 cl::value_desc("N"), cl::init(300), cl::cat(FuzzCategory));
jitlock::tools::NumberOpt
    ShrinkRepeats("shrink-repeats",
                  cl::desc("Runs of each candidate; it still fails if one "
                           "of them does (default 2: races do not show "
                           "every time)"),
                  cl::value_desc("N"), cl::init(2), cl::cat(FuzzCategory));
cl::opt<std::string>
    OutDir("out-dir",
           cl::desc("Where reproducers are written (default: the current "
                    "directory)"),
           cl::value_desc("DIR"), cl::init("."), cl::cat(FuzzCategory));
cl::opt<Fault, false, jitlock::tools::ValuesParser<Fault>> InjectFault(
    "inject-fault",
    cl::desc("Test the fuzzer: the modules that lower=inline runs get a "
             "fault in every region that re-enters an object its function "
             "holds"),
    cl::init(Fault::None),
    cl::values(clEnumValN(Fault::ExtraExit, "extra-exit",
                          "One monitor exit too many after it (jitlock-verify "
                          "refuses the module)"),
               clEnumValN(Fault::MissingExit, "missing-exit",
                          "No exit at its normal end (the thread ends "
                          "holding the object)"),
               clEnumValN(Fault::WrongUpdate, "wrong-update",
                          "Its counter updates add one more (the check "
                          "fails)")),
    cl::cat(FuzzCategory));
cl::opt<bool> Print("print",
                    cl::desc("Print the module of --seed's program and exit"),
                    cl::cat(FuzzCategory));
cl::opt<bool> Keep("keep-going",
                   cl::desc("Go on after the first failing program"),
                   cl::cat(FuzzCategory));
cl::opt<bool> Verbose("verbose", cl::desc("One line per run"),
                      cl::cat(FuzzCategory));

// The generator's limits.
jitlock::tools::NumberOpt MaxFunctions("max-functions",
                                       cl::desc("Functions (default 6)"),
                                       cl::value_desc("N"), cl::init(6),
                                       cl::cat(FuzzCategory));
jitlock::tools::NumberOpt MaxObjects("max-objects",
                                     cl::desc("Lock objects (default 5)"),
                                     cl::value_desc("N"), cl::init(5),
                                     cl::cat(FuzzCategory));
jitlock::tools::NumberOpt MaxStmts("max-stmts",
                                   cl::desc("Statements per body (default 6)"),
                                   cl::value_desc("N"), cl::init(6),
                                   cl::cat(FuzzCategory));
jitlock::tools::NumberOpt
    MaxRepeat("max-repeat",
              cl::desc("Runs of the entry function per thread (default 40)"),
              cl::value_desc("N"), cl::init(40), cl::cat(FuzzCategory));
cl::opt<bool> NoExceptions("no-exceptions",
                           cl::desc("Generate no throw and no try"),
                           cl::cat(FuzzCategory));

// AArch64.
cl::opt<bool> AArch64("aarch64",
                      cl::desc("Also run each program in one AArch64 "
                               "configuration (llc, the cross-built harness "
                               "and runtime, qemu), cycling through "
                               "thread=tls|call, +lse or not, and the "
                               "lowerings"),
                      cl::cat(FuzzCategory));
cl::opt<std::string> Llc("llc", cl::desc("llc for AArch64 runs"),
                         cl::init("llc-19"), cl::cat(FuzzCategory));
cl::opt<std::string> Cxx("aarch64-cxx",
                         cl::desc("The cross compiler that links them"),
                         cl::init("aarch64-linux-gnu-g++"),
                         cl::cat(FuzzCategory));
cl::opt<std::string> Qemu("qemu", cl::desc("qemu-aarch64"),
                          cl::init("qemu-aarch64"), cl::cat(FuzzCategory));
cl::opt<std::string>
    AArch64Dir("aarch64-dir",
               cl::desc("The cross build's outputs (the harness, the "
                        "runtime, the probe): build/<preset>/aarch64-cross"),
               cl::cat(FuzzCategory));

/// A simple deterministic mix of a seed, for sampling configurations.
uint64_t mix(uint64_t X) {
  X += 0x9e3779b97f4a7c15ULL;
  X = (X ^ (X >> 30)) * 0xbf58476d1ce4e5b9ULL;
  X = (X ^ (X >> 27)) * 0x94d049bb133111ebULL;
  return X ^ (X >> 31);
}

/// K host configurations for the program of `S`: the runtime-only
/// reference first, then random ones.
std::vector<RunConfig> sampleConfigs(uint64_t S, unsigned K) {
  std::vector<RunConfig> Out;
  uint64_t R = mix(S ^ 0x5151);
  auto Pick = [&](unsigned N) {
    R = mix(R);
    return unsigned(R % N);
  };
  unsigned MaxT = unsigned(MaxThreadsOpt);
  for (unsigned I = 0; I != K; ++I) {
    RunConfig C;
    C.Threads = 2 + Pick(MaxT - 1);
    if (I == 0) {
      C.Lower = Lowering::Runtime;
      C.Thread = jitlock::ThreadMode::Call;
      C.OptBefore = 0;
      C.OptAfter = 0;
      Out.push_back(C);
      continue;
    }
    C.Lower = Lowering(Pick(4) == 0 ? 1 + Pick(3) : 0);
    C.Thread = jitlock::ThreadMode(Pick(3));
    unsigned Opt = Pick(6);
    if (Opt < 2) {
      C.OptBefore = -1;
    } else {
      C.OptBefore = int(Pick(4));
      C.OptAfter = int(Pick(4));
      // Optimizing arg-mode code before the lowering is outside the
      // contract: the thread parameter has no use yet, and dead argument
      // elimination passes poison for it (docs/robustness.md).
      if (C.Thread == jitlock::ThreadMode::Arg)
        C.OptBefore = 0;
    }
    C.Bang = jitlock::BangMode(Pick(3));
    if (C.Thread != jitlock::ThreadMode::Arg && Pick(4) == 0)
      C.SafepointUs = 50 + 50 * Pick(8);
    Out.push_back(C);
  }
  return Out;
}

/// The AArch64 configuration of program number `I`.
RunConfig aarch64Config(unsigned I) {
  RunConfig C;
  C.AArch64 = true;
  C.Thread = I % 2 ? jitlock::ThreadMode::Call : jitlock::ThreadMode::TLS;
  C.Lse = (I / 2) % 2;
  C.Lower = Lowering((I / 4) % 3); // inline, runtime, heavy
  C.OptBefore = I % 3 == 0 ? -1 : int(I % 4);
  C.OptAfter = int((I / 3) % 4);
  C.Bang = jitlock::BangMode((I + I / 4) % 3);
  C.Threads = 2 + I % 3;
  return C;
}

// What the runs covered.
struct Coverage {
  unsigned Programs = 0, Runs = 0, Failures = 0;
  std::set<std::string> ConfigNames;
  std::map<std::string, unsigned> Axes;
  uint64_t Updates = 0, Enters = 0, Waits = 0, Notifies = 0, Calls = 0,
           Throws = 0, Returns = 0, Polls = 0;
  unsigned MaxHeld = 0, MaxRecursion = 0, NonAdjacent = 0, StackBang = 0,
           LockStackFull = 0;
  uint64_t Contended = 0, Inflations = 0, Parks = 0, RtWaits = 0,
           RtNotifies = 0, Safepoints = 0, Handshakes = 0, Deflated = 0;

  void addProgram(const Program &P, unsigned Threads) {
    ++Programs;
    bool NonAdj = false, Full = false;
    for (unsigned T = 0; T != Threads; ++T) {
      ThreadEffect E = simulate(P, T);
      Updates += E.Updates;
      Enters += E.Enters;
      Waits += E.Waits;
      Notifies += E.Notifies;
      Calls += E.Calls;
      Throws += E.Throws;
      Returns += E.Returns;
      Polls += E.Polls;
      MaxHeld = std::max(MaxHeld, E.MaxHeld);
      MaxRecursion = std::max(MaxRecursion, E.MaxRecursion);
      NonAdj |= E.NonAdjacentReentry;
      Full |= E.MaxHeld > 8;
    }
    NonAdjacent += NonAdj;
    LockStackFull += Full;
    for (const jitlock::fuzz::Function &F : P.Functions)
      StackBang += !F.Removed && F.StackBang;
  }
  void addRun(const RunConfig &C, const Verdict &V) {
    ++Runs;
    ConfigNames.insert(C.name());
    std::string Name = C.name();
    SmallVector<StringRef, 8> Items;
    StringRef(Name).split(Items, ',');
    for (StringRef Item : Items)
      if (!Item.starts_with("threads=") && !Item.starts_with("sp="))
        ++Axes[Item.str()];
    ++Axes[C.SafepointUs ? "safepoints" : "no-safepoints"];
    Contended += V.Contended;
    Inflations += V.Inflations;
    Parks += V.Parks;
    RtWaits += V.Waits;
    RtNotifies += V.Notifies;
    Safepoints += V.Safepoints;
    Handshakes += V.Handshakes;
    Deflated += V.Deflated;
  }
  void print(raw_ostream &OS) const {
    OS << "covered: " << Programs << " programs, " << Runs << " runs in "
       << ConfigNames.size() << " distinct configurations\n  axes:";
    for (const auto &[Axis, N] : Axes)
      OS << " " << Axis << ":" << N;
    OS << "\n  model, per thread summed over the programs' runs: " << Updates
       << " counter updates, " << Enters << " monitor enters, " << Waits
       << " waits, " << Notifies << " notifies, " << Calls << " calls, "
       << Throws << " throws, " << Returns << " early returns, " << Polls
       << " polls\n  shapes: deepest nesting " << MaxHeld
       << " holds, deepest recursion " << MaxRecursion << ", " << NonAdjacent
       << " programs with non-adjacent re-entry, " << LockStackFull
       << " that overflow the lock stack, " << StackBang
       << " stack-banged functions\n  runtime: " << Contended
       << " contended enters, " << Inflations << " inflations, " << Parks
       << " parks, " << RtWaits << " waits, " << RtNotifies << " notifies, "
       << Safepoints << " safepoints, " << Handshakes << " handshakes, "
       << Deflated << " monitors deflated\n";
  }
};

std::vector<RunConfig> parseConfigs() {
  std::vector<RunConfig> Out;
  for (const std::string &Name : Configs) {
    std::string Problem;
    std::optional<RunConfig> C = RunConfig::parse(Name, Problem);
    if (!C)
      jitlock::tools::exitWithUsageError("--config " + Name + ": " + Problem,
                                         ExitUsage);
    Out.push_back(*C);
  }
  return Out;
}

AArch64Tools Tools;

bool needAArch64(const std::vector<RunConfig> &Cs) {
  return AArch64 ||
         llvm::any_of(Cs, [](const RunConfig &C) { return C.AArch64; });
}

void prepareAArch64() {
  if (Tools.Ready)
    return;
  if (AArch64Dir.empty())
    jitlock::tools::exitWithUsageError(
        "AArch64 runs need --aarch64-dir (the cross build's outputs)",
        ExitUsage);
  Tools.Llc = Llc;
  Tools.Cxx = Cxx;
  Tools.Qemu = Qemu;
  Tools.Dir = AArch64Dir;
  for (std::string *Tool : {&Tools.Llc, &Tools.Cxx, &Tools.Qemu})
    if (auto Found = sys::findProgramByName(*Tool))
      *Tool = *Found;
  std::string Problem;
  if (!probeAArch64(Tools, Problem)) {
    error() << "AArch64: " << Problem << "\n";
    std::exit(ExitUsage);
  }
}

Verdict runOnce(const std::string &IR, const RunConfig &C) {
  return runModule(IR, C, Tools, unsigned(Timeout));
}

void printVerdict(raw_ostream &OS, const Verdict &V) {
  OS << V.Kind << "\n";
  for (const std::string &M : V.Messages)
    OS << "    " << M << "\n";
}

/// Writes the reproducer; returns its path.
std::string saveReproducer(const std::string &IR, const std::string &Name,
                           const RunConfig &C, const Verdict &V,
                           const std::string &FoundBy) {
  SmallString<128> Path(OutDir);
  sys::path::append(Path, Name + ".ll");
  std::error_code EC;
  raw_fd_ostream OS(Path, EC);
  if (EC) {
    error() << "cannot write " << Path << ": " << EC.message() << "\n";
    return "";
  }
  OS << "; jitlock-fuzz reproducer: " << V.Kind << " under " << C.name()
     << "\n";
  for (const std::string &M : V.Messages)
    OS << ";   " << StringRef(M).take_front(300) << "\n";
  OS << "; Replay: jitlock-fuzz --replay=<this file> --config=" << C.name()
     << "\n; Found by: " << FoundBy << "\n;\n";
  OS << IR;
  return std::string(Path);
}

/// The IR configuration `C` runs (with the injected fault, for tests).
std::string irFor(const Program &P, const RunConfig &C) {
  return printIR(P, C.Lower == Lowering::Inline ? InjectFault.getValue()
                                                : Fault::None);
}

GenOptions generatorOptions() {
  GenOptions GO;
  GO.MaxFunctions = unsigned(MaxFunctions);
  GO.MaxObjects = unsigned(MaxObjects);
  GO.MaxStmts = unsigned(MaxStmts);
  GO.MaxRepeat = unsigned(MaxRepeat);
  GO.Exceptions = !NoExceptions;
  return GO;
}

/// Fuzzes program `S`; false when it failed.
bool fuzzOne(uint64_t S, unsigned Index, const std::vector<RunConfig> &Fixed,
             Coverage &Cov) {
  Program P = generate(S, generatorOptions());
  std::vector<RunConfig> Cs =
      Fixed.empty() ? sampleConfigs(S, unsigned(ConfigsPerProgram)) : Fixed;
  if (AArch64 && Fixed.empty())
    Cs.push_back(aarch64Config(Index));
  unsigned MostThreads = 1;
  for (const RunConfig &C : Cs)
    MostThreads = std::max(MostThreads, C.Threads);
  Cov.addProgram(P, std::min(MostThreads, MaxThreads));
  ProgramSize Size = measure(P);
  outs() << "program " << S << ": " << Size.Functions << " functions, "
         << Size.Stmts << " statements, " << P.Objects << " objects; "
         << Cs.size() << " runs\n";
  outs().flush();

  for (const RunConfig &C : Cs) {
    std::string IR = irFor(P, C);
    Verdict V = runOnce(IR, C);
    Cov.addRun(C, V);
    if (Verbose || !V.ok()) {
      outs() << "  " << C.name() << ": ";
      printVerdict(outs(), V);
    }
    if (V.ok())
      continue;
    ++Cov.Failures;
    std::string FoundBy = "jitlock-fuzz --seed=" + std::to_string(S) +
                          " --programs=1 --config=" + C.name();
    if (InjectFault.getNumOccurrences())
      FoundBy +=
          " --inject-fault=" +
          std::string(InjectFault.getValue() == Fault::ExtraExit ? "extra-exit"
                      : InjectFault.getValue() == Fault::MissingExit
                          ? "missing-exit"
                          : "wrong-update");
    std::string Saved =
        saveReproducer(IR, "fuzz-" + std::to_string(S), C, V, FoundBy);
    outs() << "  reproducer: " << Saved << "\n";
    if (NoShrink)
      return false;
    // Shrink in the failing configuration, on fewer threads if it can.
    const std::string Kind = V.Kind;
    auto Fails = [&](const Program &Q, unsigned Threads) {
      RunConfig D = C;
      D.Threads = Threads;
      std::string Text = irFor(Q, D);
      for (long long R = 0; R < std::max(1LL, (long long)ShrinkRepeats); ++R)
        if (runOnce(Text, D).Kind == Kind)
          return true;
      return false;
    };
    auto Start = std::chrono::steady_clock::now();
    Shrunk Small = shrink(P, C.Threads, Fails, unsigned(ShrinkTrials));
    double Secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
            .count();
    RunConfig D = C;
    D.Threads = Small.Threads;
    std::string SmallIR = irFor(Small.P, D);
    Verdict SmallV = runOnce(SmallIR, D);
    ProgramSize After = measure(Small.P);
    outs() << "  shrunk to " << After.Functions << " function(s), "
           << After.Stmts << " statement(s), " << Small.P.Objects
           << " object(s), " << Small.Threads << " thread(s), repeat "
           << Small.P.Repeat << " (" << Small.Accepted << " of " << Small.Trials
           << " candidates kept, " << format("%.1f", Secs) << " s); it now ";
    printVerdict(outs(), SmallV);
    if (!SmallV.ok()) {
      std::string SmallSaved = saveReproducer(
          SmallIR, "fuzz-" + std::to_string(S) + "-min", D, SmallV, FoundBy);
      outs() << "  minimal reproducer: " << SmallSaved << "\n"
             << "  replay: jitlock-fuzz --replay=" << SmallSaved
             << " --config=" << D.name() << "\n";
    }
    return false;
  }
  return true;
}

/// The configurations a replay runs when --config names none.
std::vector<RunConfig> standardConfigs() {
  std::vector<RunConfig> Out;
  const char *Names[] = {
      "lower=runtime,thread=call,opt=O0-O0,threads=4",
      "lower=inline,thread=tls,opt=jit,threads=4",
      "lower=inline,thread=arg,opt=O0-O3,bang=always,threads=4",
      "lower=heavy,thread=call,opt=O2-O0,threads=3",
      "lower=heavy-runtime,thread=tls,opt=jit,bang=none,threads=2",
      "lower=inline,thread=call,opt=O1-O3,sp=100,threads=4",
  };
  for (const char *Name : Names) {
    std::string Problem;
    Out.push_back(*RunConfig::parse(Name, Problem));
  }
  return Out;
}

int replay(const std::vector<RunConfig> &Fixed) {
  std::vector<RunConfig> Cs = Fixed.empty() ? standardConfigs() : Fixed;
  if (needAArch64(Cs))
    prepareAArch64();
  int Status = ExitOk;
  for (const std::string &File : Replay) {
    auto Buf = MemoryBuffer::getFile(File);
    if (!Buf) {
      error() << File << ": " << Buf.getError().message() << "\n";
      return ExitUsage;
    }
    std::string IR = (*Buf)->getBuffer().str();
    for (const RunConfig &C : Cs) {
      Verdict V = runOnce(IR, C);
      outs() << "replay " << sys::path::filename(File) << " " << C.name()
             << ": ";
      printVerdict(outs(), V);
      if (!V.ok())
        Status = ExitFailure;
    }
  }
  return Status;
}

} // namespace

int main(int Argc, char **Argv) {
  CommandLine.parse(Argc, Argv);
  if (Programs < 0 || ConfigsPerProgram < 0 || Timeout < 1 ||
      ShrinkTrials < 0 || MaxFunctions < 1 || MaxObjects < 1 || MaxStmts < 1 ||
      MaxRepeat < 1)
    jitlock::tools::usageError("a count option is out of range");
  if (MaxThreadsOpt < 2 || MaxThreadsOpt > int(MaxThreads))
    jitlock::tools::usageError("--max-threads needs a number from 2 to 8");
  std::vector<RunConfig> Fixed = parseConfigs();
  for (const RunConfig &C : Fixed)
    if (C.Threads > MaxThreads && Replay.empty())
      jitlock::tools::usageError(
          "a generated program checks at most 8 threads");
  if (!Replay.empty())
    return replay(Fixed);
  if (Print) {
    outs() << printIR(generate(uint64_t(Seed), generatorOptions()));
    return ExitOk;
  }
  if (needAArch64(Fixed))
    prepareAArch64();
  if (std::error_code EC = sys::fs::create_directories(OutDir)) {
    error() << "cannot create --out-dir " << OutDir << ": " << EC.message()
            << "\n";
    return ExitUsage;
  }

  outs() << "jitlock-fuzz: seeds " << Seed << " to "
         << Seed + std::max(0LL, (long long)Programs - 1) << "\n";
  Coverage Cov;
  auto Start = std::chrono::steady_clock::now();
  unsigned Failed = 0;
  for (long long I = 0; I < Programs; ++I) {
    if (!fuzzOne(uint64_t(Seed + I), unsigned(I), Fixed, Cov)) {
      ++Failed;
      if (!Keep)
        break;
    }
  }
  double Secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  Cov.print(outs());
  outs() << "failures: " << Cov.Failures << " run(s) in " << Failed
         << " program(s); " << format("%.1f", Secs) << " s\n";
  return Failed ? ExitFailure : ExitOk;
}
