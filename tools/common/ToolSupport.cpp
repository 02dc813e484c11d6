//===- ToolSupport.cpp - The command line of the jitlock tools ------------===//
#include "ToolSupport.h"
#include "jitlock/jitlock_rt.h"

#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

#include <cstdlib>
#include <vector>

using namespace llvm;

namespace jitlock::tools {

namespace {

std::string ToolName = "jitlock";
int ToolUsageStatus = 2;
std::vector<std::string> BadValues;

cl::OptionCategory &llvmCategory() {
  static cl::OptionCategory Category(
      "LLVM options for the lowering pipeline (LLVM's others work too, "
      "unlisted)");
  return Category;
}

cl::opt<bool> DebugPassManager(
    "debug-pass-manager",
    cl::desc("Print each pass of the lowering pipeline as it runs"),
    cl::cat(llvmCategory()));

/// LLVM's options that --help shows beside -debug-pass-manager.
constexpr const char *ShownLLVMOptions[] = {"stats",
                                            "pass-remarks",
                                            "pass-remarks-missed",
                                            "pass-remarks-analysis",
                                            "time-passes",
                                            "print-after-all"};

/// cl prefixes its own messages with the program name; ours say what they
/// are.
void reportParseErrors(StringRef Messages, StringRef Program) {
  SmallVector<StringRef, 8> Lines;
  Messages.split(Lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef Line : Lines) {
    Line.consume_front(Program);
    Line.consume_front(": ");
    // Our own note says where the help is.
    Line = Line.split("  Try: ").first;
    if (Line.starts_with("Did you mean"))
      note() << Line << "\n";
    else
      error() << Line << "\n";
  }
}

void parseCommandLine(int Argc, const char *const *Argv, StringRef Tool,
                      StringRef Overview, StringRef MoreHelp,
                      cl::OptionCategory &ToolCategory, int UsageStatus,
                      bool ShowLLVMOptions);

} // namespace

void detail::recordBadValue(const cl::Option &O, const Twine &Problem) {
  BadValues.push_back(("--" + O.ArgStr + " " + Problem).str());
}

void detail::recordBadOption(const Twine &Message) {
  BadValues.push_back(Message.str());
}

raw_ostream &error() { return WithColor::error(errs(), ToolName); }
raw_ostream &warning() { return WithColor::warning(errs(), ToolName); }
raw_ostream &note() { return WithColor::note(errs(), ToolName); }

void exitWithUsageError(const Twine &Msg, int Status) {
  error() << Msg << "\n";
  note() << "try '" << ToolName << " --help'\n";
  std::exit(Status);
}

void usageError(const Twine &Msg) { exitWithUsageError(Msg, ToolUsageStatus); }

long long numberInRange(const NumberOpt &O, long long Min, long long Max) {
  if (O < Min || O > Max)
    usageError("--" + O.ArgStr + " must be between " + Twine(Min) + " and " +
               Twine(Max) + ", got " + Twine(O.getValue()));
  return O;
}

bool debugPassManager() { return DebugPassManager; }

std::string jitlockVersion(StringRef Tool) {
  uint32_t Version = jitlock_rt_version();
  return (Tool + " (jitlock " JITLOCK_VERSION "), runtime C ABI " +
          Twine(JITLOCK_RT_VERSION_ABI(Version)) + "." +
          Twine(JITLOCK_RT_VERSION_MINOR(Version)))
      .str();
}

std::vector<std::pair<const char *, uint64_t>>
lockStatRows(const jitlock_rt_stats &S) {
  return {{"slow-path calls (enter/exit)", S.slow_path_calls},
          {"fast locks (CAS 01->00 by runtime)", S.fast_locks},
          {"recursive locks (by runtime)", S.recursive_locks},
          {"monitor enters", S.monitor_enters},
          {"inflations", S.inflations},
          {"contended enters", S.contended_enters},
          {"parks", S.parks},
          {"waits", S.waits},
          {"notifies", S.notifies},
          {"monitors alive", S.monitors_alive}};
}

/// Whether this build counts STATISTICs (what --version says too).
static bool statisticsCompiledIn() { return LLVM_ENABLE_STATS; }

namespace {
void parseCommandLine(int Argc, const char *const *Argv, StringRef Tool,
                      StringRef Overview, StringRef MoreHelp,
                      cl::OptionCategory &ToolCategory, int UsageStatus,
                      bool ShowLLVMOptions) {
  ToolName = Tool.str();
  ToolUsageStatus = UsageStatus;
  // LLVM registers some options (-stats among them) only as it parses a
  // command line: an empty one first, so that they are there to be shown.
  const char *ProgramOnly[] = {Argv[0]};
  cl::ParseCommandLineOptions(1, ProgramOnly, "", &nulls());
  cl::ResetAllOptionOccurrences();
  // (A parse forgets the cl::extrahelp registered before it.)
  static cl::extrahelp Help(MoreHelp);
  if (ShowLLVMOptions) {
    StringMap<cl::Option *> &Options = cl::getRegisteredOptions();
    for (const char *Name : ShownLLVMOptions)
      if (cl::Option *O = Options.lookup(Name)) {
        O->addCategory(llvmCategory());
        O->setHiddenFlag(cl::NotHidden);
      }
    cl::HideUnrelatedOptions({&ToolCategory, &llvmCategory()});
  } else {
    cl::HideUnrelatedOptions(ToolCategory);
  }
  // jitlock's version first, then LLVM's (the extra printers follow it).
  cl::SetVersionPrinter([](raw_ostream &OS) {
    OS << jitlockVersion(ToolName) << "\n";
    cl::PrintVersionMessage();
  });
  cl::AddExtraVersionPrinter([](raw_ostream &OS) {
    OS << ToolName << ": "
       << (statisticsCompiledIn()
               ? "-stats counts the jitlock passes' statistics\n"
               : "-stats has nothing to count: this build compiles "
                 "STATISTIC counters out (NDEBUG)\n");
  });

  std::string Errors;
  raw_string_ostream ErrorStream(Errors);
  bool Parsed = cl::ParseCommandLineOptions(Argc, Argv, Overview, &ErrorStream);
  reportParseErrors(Errors, sys::path::filename(Argv[0]));
  for (const std::string &Bad : BadValues)
    error() << Bad << "\n";
  if (!Parsed || !BadValues.empty()) {
    note() << "try '" << ToolName << " --help'\n";
    std::exit(UsageStatus);
  }
}

} // namespace

bool renameLLVMThreadsOption() {
  if (cl::Option *O = cl::getRegisteredOptions().lookup("threads"))
    if (O->ArgStr == "threads")
      O->setArgStr("thinlto-codegen-threads");
  return true;
}

void parseCommandLine(int Argc, const char *const *Argv, StringRef Tool,
                      StringRef Overview, cl::OptionCategory &ToolCategory,
                      int UsageStatus) {
  static cl::opt<bool> ShortHelp("h", cl::desc("Alias for --help"),
                                 cl::cat(ToolCategory));
  parseCommandLine(Argc, Argv, Tool, Overview, "", ToolCategory, UsageStatus,
                   /*ShowLLVMOptions=*/false);
  if (ShortHelp) {
    cl::PrintHelpMessage();
    std::exit(0);
  }
}

void parseCommandLine(int Argc, const char *const *Argv, StringRef Tool,
                      StringRef Overview, StringRef MoreHelp,
                      cl::OptionCategory &ToolCategory, int UsageStatus) {
  parseCommandLine(Argc, Argv, Tool, Overview, MoreHelp, ToolCategory,
                   UsageStatus, /*ShowLLVMOptions=*/true);
}

ToolCommandLine::ToolCommandLine(const Description &D)
    : Desc(D), CategoryName((D.Tool + " options").str()),
      Category(CategoryName) {
  if (D.HasThreadsOption)
    renameLLVMThreadsOption();
}

void ToolCommandLine::parse(int Argc, const char *const *Argv) {
  if (Desc.LowersIR)
    parseCommandLine(Argc, Argv, Desc.Tool, Desc.Overview, Desc.MoreHelp,
                     Category, Desc.UsageStatus);
  else
    parseCommandLine(Argc, Argv, Desc.Tool, Desc.Overview, Category,
                     Desc.UsageStatus);
}

void printStatistics() {
  if (!AreStatisticsEnabled())
    return;
  if (statisticsCompiledIn())
    PrintStatistics(errs());
  else
    warning() << "-stats: this build counts no statistics: LLVM's STATISTIC "
                 "counters are compiled out where NDEBUG is defined (as in "
                 "the RelWithDebInfo build); a build with assertions "
                 "(CMAKE_BUILD_TYPE=Debug) counts them\n";
}

} // namespace jitlock::tools
