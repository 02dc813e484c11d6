//===- Program.h - The random monitor programs of jitlock-fuzz --*- C++ -*-===//
//
// A program is a small structured AST: functions made of statements that
// update per-object counters inside monitor regions, loop, branch on values
// that never depend on other threads (the thread index, loop indices, a
// recursion depth), call each other (acyclic, plus bounded self-recursion),
// return early from inside nested regions, wait (timed) and notify, poll,
// and throw and catch C++ exceptions.
//
// Lock order is what keeps every program free of deadlock: objects are
// numbered, and a thread only blocks entering an object numbered above
// every object it holds (re-entering a held object never blocks, so [A B A]
// is allowed). A wait releases its object and re-acquires it, so it may
// only wait on the highest object it holds. A function is written for a
// caller that holds a given set of objects (Function::Assumed), and a call
// is valid where the caller holds at least that set and the callee's other
// objects lie above everything held. validate() checks these rules; the
// generator obeys them by construction and the shrinker keeps only
// candidates that pass.
//
// The result is deterministic: every counter update is a non-atomic
// read-modify-write inside a region of the counter's object, and additions
// commute, so the final counters are the sums of what each thread did.
// simulate() runs the AST for one thread and yields those sums (and the
// thread's own checksum), which printIR() embeds in the module's check
// function: the module checks itself, so a saved reproducer runs anywhere
// (jitlock-fuzz --replay, or jitlock-run).
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_TOOLS_FUZZ_PROGRAM_H
#define JITLOCK_TOOLS_FUZZ_PROGRAM_H

#include <cstdint>
#include <string>
#include <vector>

namespace jitlock::fuzz {

/// The most threads a program's check function has expectations for.
inline constexpr unsigned MaxThreads = 8;

/// A value a statement computes from thread-local state only.
struct Operand {
  enum Kind : uint8_t { Tid, Depth, Loop } Var = Tid;
  unsigned LoopLevel = 0; ///< for Loop: the enclosing loop (0 = outermost)
};

/// (Var + Add) % Mod == 0.
struct Condition {
  Operand Var;
  uint64_t Add = 0;
  uint64_t Mod = 2;
};

enum class StmtKind : uint8_t {
  Update,  ///< Objects[Obj].Fields[Field] += Const + Mul * Var
  Region,  ///< synchronized (Objects[Obj]) { Body }
  Loop,    ///< for (i = 0; i < Count; ++i) { Body }
  If,      ///< if (Cond) { Body }
  Call,    ///< Callee(depth = Callee's Depth)
  Recurse, ///< if (depth > 0) self(depth - 1)
  Wait,    ///< jitlock_rt_wait_timed(Objects[Obj], TimeoutUs)
  Notify,  ///< jitlock_rt_notify[_all](Objects[Obj])
  Poll,    ///< jitlock.safepoint.poll()
  Return,  ///< if (Cond) return, releasing the regions held
  Throw,   ///< if (Cond) throw (long)Const
  Try,     ///< try { Body } catch (long) {}
};

struct Stmt {
  StmtKind Kind = StmtKind::Poll;
  unsigned Obj = 0;
  unsigned Field = 0;
  uint64_t Const = 0;
  uint64_t Mul = 0;
  Operand Var;
  Condition Cond;
  unsigned Count = 0;  ///< Loop
  unsigned Callee = 0; ///< Call
  bool All = false;    ///< Notify: notify_all
  unsigned Id = 0;     ///< unique in the program: the thread checksum's salt
  std::vector<Stmt> Body;
};

struct Function {
  std::vector<Stmt> Body;
  /// The objects every caller holds (sorted, unique).
  std::vector<unsigned> Assumed;
  /// The depth its callers pass (its self-recursion's bound).
  unsigned Depth = 0;
  /// Has the "jitlock-stack-bang" attribute.
  bool StackBang = false;
  bool Removed = false; ///< dropped by the shrinker (kept for numbering)
};

struct Program {
  uint64_t Seed = 0;
  unsigned Objects = 2;
  unsigned Fields = 2;
  /// Functions[Entry] runs Repeat times in each thread.
  std::vector<Function> Functions;
  unsigned Entry = 0;
  unsigned Repeat = 1;
};

struct GenOptions {
  unsigned MaxFunctions = 6;
  unsigned MaxObjects = 5;
  unsigned MaxStmts = 6; ///< per body
  unsigned MaxNesting = 4;
  unsigned MaxRepeat = 40;
  bool Exceptions = true;
  bool Waits = true;
};

/// A fresh valid program; the same seed and options give the same program.
Program generate(uint64_t Seed, const GenOptions &Opts);

/// The first rule `P` breaks, or an empty string when it is valid
/// (including: its work per thread stays within the limits below).
std::string validate(const Program &P);

/// Whether calling function `Callee` is valid where the objects `Held` (a
/// multiset) are held.
bool isCallable(const Program &P, unsigned Callee,
                const std::vector<unsigned> &Held);
/// Whether function `Fn` may throw (it throws, or calls one that does).
bool mayThrow(const Program &P, unsigned Fn);

/// What running the program on one thread does.
struct ThreadEffect {
  /// Counter deltas, Objects * Fields, object-major.
  std::vector<uint64_t> Counters;
  /// The thread's own checksum (the run function returns it).
  uint64_t Checksum = 0;
  // Features, counted for the report.
  uint64_t Updates = 0, Enters = 0, Waits = 0, Notifies = 0, Calls = 0,
           Throws = 0, Returns = 0, Polls = 0;
  unsigned MaxHeld = 0;      ///< deepest lock-stack-like nesting (all holds)
  unsigned MaxRecursion = 0; ///< deepest self-recursion
  uint64_t Steps = 0;        ///< statements executed
  bool NonAdjacentReentry = false;
  bool Uncaught = false; ///< an exception left the entry function (invalid)
};
ThreadEffect simulate(const Program &P, unsigned Tid);

/// Limits validate() enforces on simulate()'s counts, so that one run stays
/// short.
inline constexpr uint64_t MaxStepsPerThread = 200000;
inline constexpr uint64_t MaxWaitsPerThread = 40;

/// The module: objects, the functions, and the example convention's run and
/// check (run returns the checksum; check compares the counters and the
/// checksums with the expectations for 1 to MaxThreads threads).
/// Faults printIR() can inject, to test the fuzzer itself. Each concerns
/// the regions that re-enter an object their function holds already.
enum class Fault {
  None,
  ExtraExit,   ///< one monitor exit too many after the region
  MissingExit, ///< no monitor exit at the region's normal end
  WrongUpdate, ///< the region's updates add one more than they should
};
std::string printIR(const Program &P, Fault F = Fault::None);

/// Statements, functions (not removed) and objects, for reports.
struct ProgramSize {
  unsigned Stmts = 0, Functions = 0, Regions = 0;
};
ProgramSize measure(const Program &P);

} // namespace jitlock::fuzz

#endif
