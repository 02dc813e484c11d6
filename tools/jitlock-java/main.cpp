//===- jitlock-java/main.cpp - A JVM on the jitlock runtime ---------------===//
//
//   jitlock-java [options] -cp DIR MainClass [args...]
//
// Loads MainClass and every class it references from the class path,
// verifies all of their methods against the subset of docs/java.md (a
// program outside it is refused before anything runs, status 2), and runs
// main(String[]) in tier 0, the interpreter, on a thread of its own with
// guard zones. Every monitor operation, wait and notify goes through the
// jitlock runtime's C ABI.
//
//===----------------------------------------------------------------------===//
#include "Deoptimize.h"
#include "SafepointThread.h"
#include "Tier1.h"
#include "ToolSupport.h"
#include "VM.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <pthread.h>
#include <thread>

using namespace llvm;
using jitlock::tools::error;
using namespace jitlock::java;

namespace jitlock::java {
VMOptions Options;
jitlock_rt_layout Layout;
} // namespace jitlock::java

namespace {

constexpr int ExitOk = 0, ExitUncaught = 1, ExitUsage = 2;

cl::OptionCategory JavaCategory("jitlock-java options");

cl::opt<std::string> MainClassName(cl::Positional, cl::desc("<MainClass>"),
                                   cl::cat(JavaCategory));
cl::list<std::string> ProgramArgs(cl::ConsumeAfter,
                                  cl::desc("<program arguments>..."),
                                  cl::cat(JavaCategory));
cl::opt<std::string> ClassPath("cp",
                               cl::desc("Directories of class files, "
                                        "separated by ':' (default .)"),
                               cl::value_desc("DIR"), cl::init("."),
                               cl::cat(JavaCategory));
cl::alias ClassPathLong("classpath", cl::desc("Alias for -cp"),
                        cl::aliasopt(ClassPath), cl::cat(JavaCategory));
cl::opt<bool> Xint("Xint", cl::desc("Interpret every method (tier 0 only)"),
                   cl::cat(JavaCategory));
cl::opt<bool> Xcomp("Xcomp",
                    cl::desc("Compile every method with tier 1 before its "
                             "first call"),
                    cl::cat(JavaCategory));
cl::opt<bool> LogJit("Xlog:jit",
                     cl::desc("Print each method tier 1 compiled, how long "
                              "it took, and each it refused and why "
                              "(stderr)"),
                     cl::cat(JavaCategory));
cl::opt<unsigned> Tier1Invocations(
    "tier1-invocations",
    cl::desc("Tiered: compile a method at its Nth call (default 1000)"),
    cl::value_desc("N"), cl::init(1000), cl::cat(JavaCategory));
cl::opt<unsigned> Tier1BackEdges(
    "tier1-backedges",
    cl::desc("Tiered: compile a method, for its next call, at its Nth "
             "backward branch (default 10000)"),
    cl::value_desc("N"), cl::init(10000), cl::cat(JavaCategory));
cl::opt<std::string> PrintTier1(
    "print-tier1",
    cl::desc("Print each compiled method's optimized IR or machine code "
             "(stderr)"),
    cl::value_desc("ir|asm|remarks"), cl::cat(JavaCategory));
cl::opt<unsigned> Tier1InlineSize(
    "tier1-inline-size",
    cl::desc("Tier 1 inlines exact calls of methods with at most N bytes "
             "of bytecode (default 35; 0: no inlining)"),
    cl::value_desc("N"), cl::init(35), cl::cat(JavaCategory));
cl::opt<unsigned> Tier1HotInlineSize(
    "tier1-hot-inline-size",
    cl::desc("Tier 1 inlines a callee that tier 0 called at least "
             "--tier1-invocations times (and 100) with at most N bytes of "
             "bytecode (default 325; at most --tier1-inline-size: off)"),
    cl::value_desc("N"), cl::init(325), cl::cat(JavaCategory));
cl::opt<unsigned> Tier1RecursiveInline(
    "tier1-recursive-inline",
    cl::desc("Tier 1 inlines a recursive call N levels deep (default 1; 0: "
             "never)"),
    cl::value_desc("N"), cl::init(1), cl::cat(JavaCategory));
cl::opt<std::string> PrintTier1Filter(
    "print-tier1-filter",
    cl::desc("With --print-tier1: only methods whose qualified name "
             "contains TEXT, e.g. Counter.increment"),
    cl::value_desc("TEXT"), cl::cat(JavaCategory));
cl::opt<std::string> PrintProfile(
    "print-profile",
    cl::desc("When tier 1 compiles a method whose qualified name contains "
             "TEXT, print tier 0's branch and receiver profile of it "
             "(stderr)"),
    cl::value_desc("TEXT"), cl::cat(JavaCategory));
cl::opt<bool> LogDeopt("Xlog:deopt",
                       cl::desc("Print each uncommon trap: method, bytecode, "
                                "reason, and the thread's locks right after "
                                "they were restored (stderr)"),
                       cl::cat(JavaCategory));
cl::opt<bool>
    Speculate("speculate",
              cl::desc("Tier 1 compiles a branch side tier 0 never took as an "
                       "uncommon trap (default: true)"),
              cl::init(true), cl::cat(JavaCategory));
jitlock::tools::NumberOpt TrapMinCount(
    "tier1-trap-min-count",
    cl::desc("Speculate on a branch only after N executions in tier 0 "
             "(default 100)"),
    cl::value_desc("N"), cl::init(100), cl::cat(JavaCategory));
jitlock::tools::NumberOpt MaxTraps(
    "tier1-max-traps",
    cl::desc("After N uncommon traps a method stays in tier 0 (default 4)"),
    cl::value_desc("N"), cl::init(4), cl::cat(JavaCategory));
cl::opt<bool> Elide("elide",
                    cl::desc("Let tier 1's lowering elide locks "
                             "(jitlock-elide; default: true)"),
                    cl::init(true), cl::cat(JavaCategory));
cl::opt<bool> Xstats("Xstats",
                     cl::desc("Print the runtime's lock statistics at exit "
                              "(stderr)"),
                     cl::cat(JavaCategory));
cl::opt<std::string> Monitors("monitors",
                              cl::desc("How an inflated header names its "
                                       "monitor: pointer (default), index "
                                       "or table"),
                              cl::value_desc("pointer|index|table"),
                              cl::cat(JavaCategory));
/// The runtime's locking mode (jitlock_locking_mode): tier 1 lowers for the
/// mode the runtime's layout states.
enum class JavaLocking { Lightweight, Reserved };
cl::opt<JavaLocking, false, jitlock::tools::ValuesParser<JavaLocking>> Locking(
    "locking",
    cl::desc("The runtime's locking mode (default lightweight); reserved "
             "reserves each object to the first thread that locks it"),
    cl::values(clEnumValN(JavaLocking::Lightweight, "lightweight",
                          "Fast locking on the lock stack"),
               clEnumValN(JavaLocking::Reserved, "reserved",
                          "Lightweight locking plus lock reservation")),
    cl::init(JavaLocking::Lightweight), cl::cat(JavaCategory));
cl::opt<std::string> ExitMode("exit",
                              cl::desc("The inflated exit: store or fence "
                                       "(default: the runtime's choice)"),
                              cl::value_desc("store|fence"),
                              cl::cat(JavaCategory));
jitlock::tools::NumberOpt SafepointEvery(
    "safepoint-every",
    cl::desc("A VM thread takes a safepoint or (in turn) a handshake with "
             "every thread each US microseconds, deflating idle monitors in "
             "every 4th safepoint; -Xstats prints how many. 1 to 10000000"),
    cl::value_desc("US"), cl::cat(JavaCategory));
cl::opt<bool> Deflation(
    "deflation",
    cl::desc("Run the runtime's deflation thread on its default policy, "
             "which gives idle monitors' objects their headers back while "
             "the program runs (default: true)"),
    cl::init(true), cl::cat(JavaCategory));
cl::opt<std::string> Heap("heap",
                          cl::desc("The heap's size: bytes, or with a k, m "
                                   "or g suffix (default 512m); "
                                   "OutOfMemoryError past it"),
                          cl::value_desc("SIZE"), cl::cat(JavaCategory));
cl::opt<std::string> Xss("Xss", cl::Prefix,
                         cl::desc("Each Java thread's stack size, e.g. "
                                  "-Xss2m (default 4m; at least 256k)"),
                         cl::value_desc("SIZE"), cl::cat(JavaCategory));

constexpr const char *MoreHelp = R"(
The program must be in the subset of docs/java.md; anything outside it is
refused before it runs, naming the class, method, bytecode offset and
instruction.

EXIT STATUS:
  0  main returned and every non-daemon thread ended
  1  an exception was uncaught in the main thread (printed on stderr as
     'Exception in thread "main" java.lang.X: message')
  2  usage error, or the program was refused: a class file missing or
     malformed, outside the subset, or without main(String[])
  N  the program called System.exit(N)
)";

/// "4m" -> 4 << 20; 0 when malformed.
uint64_t parseSize(StringRef S) {
  uint64_t Shift = 0;
  if (!S.empty()) {
    char Last = char(tolower(S.back()));
    Shift = Last == 'k' ? 10 : Last == 'm' ? 20 : Last == 'g' ? 30 : 0;
    if (Shift)
      S = S.drop_back();
  }
  uint64_t V;
  if (S.getAsInteger(10, V) || V == 0 || V > (uint64_t(1) << 40) >> Shift)
    return 0;
  return V << Shift;
}

void checkOptions() {
  if (MainClassName.empty())
    jitlock::tools::usageError("no main class");
  if (SafepointEvery.getNumOccurrences() &&
      (SafepointEvery < 1 || SafepointEvery > 10000000))
    jitlock::tools::usageError(
        "--safepoint-every needs a number of microseconds from 1 to "
        "10000000");
  if (Monitors.getNumOccurrences() && Monitors != "pointer" &&
      Monitors != "index" && Monitors != "table")
    jitlock::tools::usageError(
        "--monitors must be pointer, index or table, got '" + Monitors + "'");
  if (ExitMode.getNumOccurrences() && ExitMode != "store" &&
      ExitMode != "fence")
    jitlock::tools::usageError("--exit must be store or fence, got '" +
                               ExitMode + "'");
  if (Heap.getNumOccurrences()) {
    Options.HeapLimit = parseSize(Heap);
    if (Options.HeapLimit < (1u << 20))
      jitlock::tools::usageError(
          "--heap needs a size of at least 1m, e.g. 64m, got '" + Heap + "'");
  }
  if (Xss.getNumOccurrences()) {
    Options.StackSize = parseSize(Xss);
    if (Options.StackSize < (256u << 10))
      jitlock::tools::usageError(
          "-Xss needs a size of at least 256k, e.g. 2m, got '" + Xss + "'");
  }
  if (Xint && Xcomp)
    jitlock::tools::usageError("-Xint and -Xcomp exclude each other");
  if (Tier1Invocations == 0 || Tier1BackEdges == 0)
    jitlock::tools::usageError(
        "--tier1-invocations and --tier1-backedges need a count of at "
        "least 1");
  if (PrintTier1.getNumOccurrences() && PrintTier1 != "ir" &&
      PrintTier1 != "asm" && PrintTier1 != "remarks")
    jitlock::tools::usageError(
        "--print-tier1 must be ir, asm or remarks, got '" + PrintTier1 + "'");
  if (TrapMinCount < 1 || TrapMinCount > 1000000000)
    jitlock::tools::usageError(
        "--tier1-trap-min-count needs a count from 1 to 1000000000");
  if (MaxTraps < 1 || MaxTraps > 1000000)
    jitlock::tools::usageError(
        "--tier1-max-traps needs a count from 1 to 1000000");
  Options.ClassPath = ClassPath;
  Options.LogJit = LogJit;
  DeoptOpts.Log = LogDeopt;
  DeoptOpts.Speculate = Speculate;
  DeoptOpts.TrapMinCount = uint32_t(TrapMinCount);
  DeoptOpts.MaxTraps = uint32_t(MaxTraps);
}

//===-- The safepoint thread (--safepoint-every) ----------------------===//

/// Every 4th safepoint deflates idle monitors.
std::optional<jitlock::SafepointThread> Safepoints;

void stopSafepointThread() {
  if (!Safepoints)
    return;
  Safepoints->stop();
  for (const std::string &Problem : Safepoints->Problems)
    std::fprintf(stderr, "jitlock-java: warning: %s\n", Problem.c_str());
}

void printStats() {
  jitlock_rt_stats S;
  jitlock_rt_get_stats(&S);
  std::fprintf(stderr, "jitlock-java: lock statistics:\n");
  auto Row = [](const char *Name, uint64_t V) {
    std::fprintf(stderr, "  %-34s %12" PRIu64 "\n", Name, V);
  };
  for (const auto &[Name, Count] : jitlock::tools::lockStatRows(S))
    Row(Name, Count);
  Row("heap bytes used", heapUsed());
  jitlock_deflation_stats D;
  jitlock_rt_get_deflation_stats(&D);
  Row("monitors deflated", D.monitors_deflated);
  if (Locking == JavaLocking::Reserved) {
    using RS = jitlock_reservation_stats;
    static constexpr std::pair<const char *, uint64_t RS::*> Reservation[] = {
        {"reservations", &RS::reservations},
        {"reserved enters (by runtime)", &RS::reserved_enters},
        {"reserved exits (by runtime)", &RS::reserved_exits},
        {"revocations (held)", &RS::revocations_held},
        {"revocations (not held)", &RS::revocations_unheld},
        {"revocations (thread detached)", &RS::revocations_detached},
        {"threads stopped reserving", &RS::threads_stopped}};
    RS R;
    R.struct_size = sizeof R;
    jitlock_rt_fill_reservation_stats(&R);
    for (const auto &[Name, Count] : Reservation)
      Row(Name, R.*Count);
  }
  if (Safepoints) {
    const jitlock::SafepointReport &R = Safepoints->Report;
    std::fprintf(stderr,
                 "jitlock-java: safepoints: %zu  handshakes: %zu (%" PRIu64
                 " operations run)  deflated: %" PRIu64 "\n",
                 R.safepoints(), R.handshakes(), R.HandshakeOps, R.Deflated);
  }
}

/// main's launcher: initializes the main class, then calls main.
Slot launch(VMThread *T, Method *Self, Slot *Args) {
  auto *Main = static_cast<Method *>(Self->NativeData);
  if (!initializeClass(T, Main->Owner))
    return 0;
  return callMethod(T, Main, Args);
}

int runMain() {
  std::string Error;
  std::string Name = MainClassName;
  std::replace(Name.begin(), Name.end(), '.', '/');
  Class *Main = loadClass(Name, Error);
  if (!Main) {
    error() << Error << "\n";
    return ExitUsage;
  }
  Method *MainMethod = Main->findMethod("main", "([Ljava/lang/String;)V");
  if (!MainMethod || !MainMethod->isStatic()) {
    error() << "class " << Main->javaName()
            << " has no method 'public static void main(String[])'\n";
    return ExitUsage;
  }
  if (LogJit)
    errs() << "jitlock-java: jit: "
           << (Xint    ? "-Xint: every method runs in tier 0 (the "
                         "interpreter)\n"
               : Xcomp ? "-Xcomp: every method is compiled by tier 1 "
                         "before its first call\n"
                       : "tiered: a method is compiled by tier 1 at its " +
                             std::to_string(Tier1Invocations) + "th call or " +
                             std::to_string(Tier1BackEdges) +
                             "th backward branch\n");
  Tier1Options Tier1;
  if (!Xint) {
    Tier1.InvocationThreshold = Xcomp ? 1 : unsigned(Tier1Invocations);
    Tier1.BackEdgeThreshold = Xcomp ? 0 : unsigned(Tier1BackEdges);
  }
  Tier1.Log = LogJit;
  Tier1.Print = PrintTier1;
  Tier1.InlineSize = Tier1InlineSize;
  Tier1.HotInlineSize = Tier1HotInlineSize;
  Tier1.RecursiveInlineLevel = Tier1RecursiveInline;
  Tier1.PrintFilter = PrintTier1Filter;
  Tier1.PrintProfile = PrintProfile;
  Tier1.Elide = Elide;
  if (!initTier1(Tier1, Error)) {
    error() << Error << "\n";
    return ExitUsage;
  }

  VMThread *T = newVMThread();
  if (!attachThread(T)) {
    error() << "cannot attach the main thread to the runtime\n";
    return ExitUsage;
  }
  if (SafepointEvery.getNumOccurrences()) {
    Safepoints.emplace(uint64_t(SafepointEvery), /*DeflateEvery=*/4);
    Safepoints->start();
  }

  // The main thread's Thread object, named "main".
  Object *ThreadObj = allocObject(T, ThreadClass);
  Object *MainName = newStringUtf8(T, "main");
  Class *StringArray = arrayClassFor(StringClass);
  Array *Args = allocArray(T, StringArray, int32_t(ProgramArgs.size()));
  if (!ThreadObj || !MainName || !Args) {
    error() << "the heap is too small to start\n";
    return ExitUsage;
  }
  auto SetField = [&](const char *Field, Slot V) {
    jitlock::java::Field *F = resolveField(ThreadClass, Field);
    *reinterpret_cast<Slot *>(reinterpret_cast<char *>(ThreadObj) + F->Offset) =
        V;
  };
  SetField("name", Slot(uintptr_t(MainName)));
  SetField("eetop", Slot(uintptr_t(T)));
  SetField("tid", 1);
  T->JavaThread = ThreadObj;
  T->Started = T->Alive = true;
  for (size_t I = 0; I != ProgramArgs.size(); ++I) {
    Object *S = newStringUtf8(T, ProgramArgs[I]);
    if (!S) {
      error() << "the heap is too small to start\n";
      return ExitUsage;
    }
    reinterpret_cast<Object **>(Args->data())[I] = S;
  }

  Method Launcher;
  Launcher.Owner = Main;
  Launcher.Name = "<launcher>";
  Launcher.Descriptor = MainMethod->Descriptor;
  Launcher.Flags = AccStatic;
  Launcher.ArgSlots = 1;
  Launcher.NativeData = MainMethod;
  Launcher.Entry.store(launch);
  Slot ArgSlots[1] = {Slot(uintptr_t(Args))};
  bool Ok = runGuarded(T, &Launcher, ArgSlots);
  waitForNonDaemonThreads(T);
  detachThread(T);
  return Ok ? ExitOk : ExitUncaught;
}

int runTool() {
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  if (Monitors.getNumOccurrences())
    Cfg.monitor_storage = Monitors == "pointer" ? JITLOCK_MONITORS_POINTER
                          : Monitors == "index" ? JITLOCK_MONITORS_INDEX
                                                : JITLOCK_MONITORS_TABLE;
  if (ExitMode.getNumOccurrences())
    Cfg.inflated_exit =
        ExitMode == "store" ? JITLOCK_EXIT_STORE : JITLOCK_EXIT_FENCE;
  if (Locking == JavaLocking::Reserved) {
    // The header is the runtime's alone (VM.h): the VM keeps its class word
    // and everything else outside it, so the bits free for the reservation
    // field are those neither the lock bits [1:0] nor the identity hash
    // take. The field sits right above the hash, 24 bits wide at most:
    // reserve indices are not reused, and 24 bits outlast any program's
    // thread count. Allocation marks objects reservable (Heap.cpp) and
    // tier 1 takes the field from the layout, so this is its one source.
    Cfg.locking_mode = JITLOCK_LOCKING_RESERVED;
    Cfg.reserve_shift = Cfg.hash_shift + Cfg.hash_bits;
    Cfg.reserve_bits = std::min(24u, 64 - Cfg.reserve_shift);
  }
  if (int Rc = jitlock_rt_configure(&Cfg)) {
    error() << "jitlock_rt_configure failed: " << jitlock_rt_status_name(Rc)
            << "\n";
    return ExitUsage;
  }
  jitlock_rt_get_layout(&Layout);
  if (Deflation) {
    jitlock_deflation_policy Policy;
    jitlock_rt_default_deflation_policy(&Policy);
    if (int Rc = jitlock_rt_start_deflation(&Policy)) {
      error() << "the deflation thread did not start: "
              << jitlock_rt_status_name(Rc) << "\n";
      return ExitUsage;
    }
  }
  initHeap(Options.HeapLimit);
  defineBuiltins();
  return runMain();
}

} // namespace

namespace jitlock::java {
void exitVM(int Status) {
  if (VMThread *T = currentVMThread())
    if (T->Rt && jitlock_rt_thread_state(T->Rt) == JITLOCK_THREAD_MANAGED)
      jitlock_rt_enter_native(T->Rt); // a safepoint need not wait for us
  stopSafepointThread();
  if (Deflation)
    jitlock_rt_stop_deflation();
  flushOut();
  if (Xstats)
    printStats();
  std::fflush(stderr);
  std::_Exit(Status);
}
} // namespace jitlock::java

int main(int Argc, char **Argv) {
  jitlock::tools::parseCommandLine(
      Argc, Argv, "jitlock-java",
      "Runs Java class files (javac --release 17, the subset of "
      "docs/java.md) on the jitlock runtime\n",
      MoreHelp, JavaCategory, ExitUsage);
  checkOptions();
  // As Java launchers do, main runs on a thread of its own: the main
  // thread's stack has no guard zones the runtime can protect.
  int Status = ExitUsage;
  pthread_attr_t Attr;
  pthread_attr_init(&Attr);
  pthread_attr_setstacksize(&Attr, Options.StackSize);
  pthread_t Id;
  auto Body = [](void *P) -> void * {
    *static_cast<int *>(P) = runTool();
    return nullptr;
  };
  if (pthread_create(&Id, &Attr, Body, &Status) != 0) {
    error() << "cannot create the main thread\n";
    return ExitUsage;
  }
  pthread_join(Id, nullptr);
  exitVM(Status);
}
