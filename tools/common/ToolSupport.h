//===- ToolSupport.h - The command line of the jitlock tools ----*- C++ -*-===//
//
// jitlock-run and jitlock-bench parse their options with llvm::cl and lower
// their IR with the jitlock passes in process (jitlock::JitSession), so
// LLVM's own options reach that pipeline: -stats, -pass-remarks=jitlock,
// -pass-remarks-missed, -pass-remarks-analysis, -time-passes,
// -print-after-all and -debug-pass-manager (opt's, which libLLVM does not
// register: defined here, for JitOptions::DebugPassManager). --help lists
// them next to the tool's own options; LLVM's other options stay usable but
// hidden.
//
// Diagnostics read "<tool>: error: ...", "<tool>: warning: ..." and
// "<tool>: note: ...", as LLVM's tools print them.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_TOOLS_TOOLSUPPORT_H
#define JITLOCK_TOOLS_TOOLSUPPORT_H

#include "jitlock/jitlock_rt.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace jitlock::tools {

/// Parses the command line of tool `Tool`, whose own options are in
/// `ToolCategory`. A bad option prints "<Tool>: error: ..." and exits with
/// `UsageStatus`; --help (which ends with `MoreHelp`, a string that lives
/// as long as the program) and --version print and exit with 0.
void parseCommandLine(int Argc, const char *const *Argv, llvm::StringRef Tool,
                      llvm::StringRef Overview, llvm::StringRef MoreHelp,
                      llvm::cl::OptionCategory &ToolCategory, int UsageStatus);

/// The same for a tool that lowers no IR: --help lists only the tool's own
/// options (and -h is --help too).
void parseCommandLine(int Argc, const char *const *Argv, llvm::StringRef Tool,
                      llvm::StringRef Overview,
                      llvm::cl::OptionCategory &ToolCategory, int UsageStatus);

/// A tool's command line, stated once beside the tool's own options: the
/// tool's name, what --help says of it, and the category those options
/// name (`cl::cat(CommandLine.Category)`). Define it at namespace scope
/// before them (static initialization runs in declaration order). main
/// calls parse() before reading any option.
class ToolCommandLine {
public:
  struct Description {
    /// "jitlock-demo": its diagnostics, --version and options category.
    llvm::StringRef Tool;
    /// The first line of --help.
    llvm::StringRef Overview;
    /// Whether --help lists LLVM's options of the lowering pipeline too,
    /// for a tool that lowers IR in process; without them -h is --help.
    bool LowersIR = false;
    /// What --help ends with (LowersIR only); a string that lives as long
    /// as the program.
    llvm::StringRef MoreHelp = "";
    /// The exit status of a bad option.
    int UsageStatus = 2;
    /// Whether the tool has a --threads of its own: LLVM's is renamed
    /// first (renameLLVMThreadsOption).
    bool HasThreadsOption = false;
  };

  explicit ToolCommandLine(const Description &D);
  /// parseCommandLine (below) as the description says.
  void parse(int Argc, const char *const *Argv);

private:
  Description Desc;
  std::string CategoryName;

public:
  /// "<tool> options": the tool's own, which --help lists.
  llvm::cl::OptionCategory Category;
};

/// libLLVM registers an option `threads` of its own, the thread count of
/// ThinLTO's code generator, which no tool runs. Two options of one name
/// abort at start-up, so a tool with a --threads renames LLVM's first, in a
/// static initializer declared before its own option (static initialization
/// runs in declaration order). Returns true.
bool renameLLVMThreadsOption();

/// "<tool> (jitlock <version>), runtime C ABI <abi>.<minor>": the package's
/// version, and the running runtime's ABI (jitlock_rt_version).
std::string jitlockVersion(llvm::StringRef Tool);

/// The runtime's lock statistics as the tools print them: a name and a
/// count a row, in a fixed order.
std::vector<std::pair<const char *, uint64_t>>
lockStatRows(const jitlock_rt_stats &S);

/// "<tool>: error: " on stderr, the stream to write the message to.
llvm::raw_ostream &error();
llvm::raw_ostream &warning();
llvm::raw_ostream &note();

/// Prints "<tool>: error: <Msg>", points to --help and exits with `Status`.
[[noreturn]] void exitWithUsageError(const llvm::Twine &Msg, int Status);
/// The same with the usage status given to parseCommandLine.
[[noreturn]] void usageError(const llvm::Twine &Msg);

/// Whether -debug-pass-manager was given.
bool debugPassManager();

/// With -stats: prints the statistics the passes counted to stderr, or
/// warns that this build compiles them out (an NDEBUG build without
/// LLVM_FORCE_ENABLE_STATS counts nothing).
void printStatistics();

namespace detail {
/// Keeps a bad option value for parseCommandLine to report: cl would print
/// a parser's error itself, without "error:".
void recordBadValue(const llvm::cl::Option &O, const llvm::Twine &Problem);
/// The same, for a message that names the option itself.
void recordBadOption(const llvm::Twine &Message);
} // namespace detail

/// The parser of a cl::values option: an unknown value is reported as
/// "--opt must be a, b or c, got 'x'".
template <typename T> class ValuesParser : public llvm::cl::parser<T> {
public:
  using llvm::cl::parser<T>::parser;

  bool parse(llvm::cl::Option &O, llvm::StringRef, llvm::StringRef Arg,
             T &Value) {
    std::string Names;
    for (size_t I = 0, E = this->Values.size(); I != E; ++I) {
      if (this->Values[I].Name == Arg) {
        Value = this->Values[I].V.getValue();
        return false;
      }
      Names += I == 0 ? "" : I + 1 == E ? " or " : ", ";
      Names += this->Values[I].Name;
    }
    detail::recordBadValue(O, "must be " + Names + ", got '" + Arg + "'");
    return false;
  }
};

/// The parser of a decimal number option: a malformed one is reported as
/// "--opt needs a number, got 'x'". Ranges are the tool's to check.
class NumberParser : public llvm::cl::parser<long long> {
public:
  using llvm::cl::parser<long long>::parser;

  bool parse(llvm::cl::Option &O, llvm::StringRef, llvm::StringRef Arg,
             long long &Value) {
    if (Arg.getAsInteger(10, Value))
      detail::recordBadValue(O, "needs a number, got '" + Arg + "'");
    return false;
  }
};

/// A number option, e.g. NumberOpt Threads("threads", cl::init(4), ...).
using NumberOpt = llvm::cl::opt<long long, false, NumberParser>;

/// `O`'s value, or a usage error ("--opt must be between Min and Max, got
/// V") when it lies outside [Min, Max].
long long numberInRange(const NumberOpt &O, long long Min, long long Max);

} // namespace jitlock::tools

#endif
