//===- Model.cpp - The rules and the meaning of jitlock-fuzz programs -----===//
//
// validate() checks the lock-order rules of Program.h, simulate() runs one
// thread of a program on the AST (the model the JIT-compiled code must
// agree with), and measure() counts what is left of a program.
//
//===----------------------------------------------------------------------===//
#include "Program.h"

#include <algorithm>
#include <set>

namespace jitlock::fuzz {

namespace {

constexpr unsigned NoWait = ~0u;

/// What a function may do to its callers' locks, transitively.
struct Summary {
  std::set<unsigned> Acquires; ///< objects it may enter (or re-acquire)
  unsigned MinWait = NoWait;   ///< the lowest object it may wait on
  bool MayThrow = false;
};

void summarize(const std::vector<Stmt> &Body, const std::vector<Summary> &Done,
               Summary &S) {
  for (const Stmt &St : Body) {
    switch (St.Kind) {
    case StmtKind::Region:
      S.Acquires.insert(St.Obj);
      break;
    case StmtKind::Wait:
      S.Acquires.insert(St.Obj);
      S.MinWait = std::min(S.MinWait, St.Obj);
      break;
    case StmtKind::Call:
      if (St.Callee < Done.size()) {
        const Summary &C = Done[St.Callee];
        S.Acquires.insert(C.Acquires.begin(), C.Acquires.end());
        S.MinWait = std::min(S.MinWait, C.MinWait);
        S.MayThrow |= C.MayThrow;
      }
      break;
    case StmtKind::Throw:
      S.MayThrow = true;
      break;
    default:
      break;
    }
    summarize(St.Body, Done, S);
  }
}

/// The summaries of P's functions, in index order (calls go to lower ones).
std::vector<Summary> summaries(const Program &P) {
  std::vector<Summary> Out;
  for (const Function &F : P.Functions) {
    Summary S;
    if (!F.Removed)
      summarize(F.Body, Out, S);
    Out.push_back(std::move(S));
  }
  return Out;
}

class Validator {
public:
  Validator(const Program &P) : P(P), Sums(summaries(P)) {}

  std::string run() {
    if (P.Objects == 0 || P.Fields == 0)
      return "no objects or no fields";
    if (P.Entry >= P.Functions.size() || P.Functions[P.Entry].Removed)
      return "no entry function";
    if (!P.Functions[P.Entry].Assumed.empty())
      return "the entry function assumes held objects";
    if (P.Repeat == 0)
      return "repeat is 0";
    for (unsigned I = 0; I != P.Functions.size(); ++I) {
      const Function &F = P.Functions[I];
      if (F.Removed)
        continue;
      Fn = I;
      Held = F.Assumed;
      Loops = 0;
      for (unsigned O : F.Assumed)
        if (O >= P.Objects)
          return "assumed object out of range";
      if (std::string E = body(F.Body); !E.empty())
        return "function " + std::to_string(I) + ": " + E;
    }
    return "";
  }

  /// Whether calling `Callee` is valid where `Held` (a multiset) is held.
  static bool callable(const Function &G, const Summary &S,
                       const std::vector<unsigned> &Held) {
    std::set<unsigned> H(Held.begin(), Held.end());
    for (unsigned O : G.Assumed)
      if (!H.count(O))
        return false;
    int Max = H.empty() ? -1 : int(*H.rbegin());
    for (unsigned O : S.Acquires)
      if (!H.count(O) && int(O) <= Max)
        return false;
    return S.MinWait == NoWait || Max <= int(S.MinWait);
  }

private:
  int maxHeld() const {
    int M = -1;
    for (unsigned O : Held)
      M = std::max(M, int(O));
    return M;
  }
  bool holds(unsigned O) const {
    return std::find(Held.begin(), Held.end(), O) != Held.end();
  }
  bool operandOk(const Operand &V) const {
    return V.Var != Operand::Loop || V.LoopLevel < Loops;
  }

  std::string body(const std::vector<Stmt> &Body) {
    for (const Stmt &S : Body)
      if (std::string E = stmt(S); !E.empty())
        return E;
    return "";
  }

  std::string stmt(const Stmt &S) {
    auto ObjOk = [&] { return S.Obj < P.Objects; };
    switch (S.Kind) {
    case StmtKind::Update:
      if (!ObjOk() || S.Field >= P.Fields)
        return "update out of range";
      if (!holds(S.Obj))
        return "update of an object not held";
      if (!operandOk(S.Var))
        return "bad operand";
      return "";
    case StmtKind::Region: {
      if (!ObjOk())
        return "region object out of range";
      if (!holds(S.Obj) && int(S.Obj) <= maxHeld())
        return "region breaks the lock order";
      Held.push_back(S.Obj);
      std::string E = body(S.Body);
      Held.pop_back();
      return E;
    }
    case StmtKind::Loop: {
      if (S.Count == 0 || S.Count > 16)
        return "bad loop count";
      ++Loops;
      std::string E = body(S.Body);
      --Loops;
      return E;
    }
    case StmtKind::If:
    case StmtKind::Return:
    case StmtKind::Throw:
      if (!operandOk(S.Cond.Var) || S.Cond.Mod == 0)
        return "bad condition";
      return S.Kind == StmtKind::If ? body(S.Body) : "";
    case StmtKind::Try:
      return body(S.Body);
    case StmtKind::Call:
      if (S.Callee >= Fn || P.Functions[S.Callee].Removed)
        return "bad callee";
      if (!callable(P.Functions[S.Callee], Sums[S.Callee], Held))
        return "call breaks the lock order";
      return "";
    case StmtKind::Recurse:
      if (!callable(P.Functions[Fn], Sums[Fn], Held))
        return "recursion breaks the lock order";
      return "";
    case StmtKind::Wait:
      if (!ObjOk() || !holds(S.Obj) || int(S.Obj) != maxHeld())
        return "wait on an object that is not the highest held";
      return "";
    case StmtKind::Notify:
      if (!ObjOk() || !holds(S.Obj))
        return "notify of an object not held";
      return "";
    case StmtKind::Poll:
      return "";
    }
    return "unknown statement";
  }

  const Program &P;
  std::vector<Summary> Sums;
  unsigned Fn = 0;
  std::vector<unsigned> Held;
  unsigned Loops = 0;
};

/// One thread's run of the AST.
class Simulator {
public:
  Simulator(const Program &P, unsigned Tid) : P(P), Tid(Tid) {
    E.Counters.assign(size_t(P.Objects) * P.Fields, 0);
  }

  ThreadEffect run() {
    const Function &Entry = P.Functions[P.Entry];
    for (unsigned R = 0; R != P.Repeat && !OverBudget; ++R)
      if (call(P.Entry, Entry.Depth, 0) == Outcome::Thrown)
        E.Uncaught = true;
    if (OverBudget)
      E.Steps = MaxStepsPerThread + 1;
    return E;
  }

private:
  enum class Outcome { Normal, Returned, Thrown };

  struct Frame {
    unsigned Fn;
    uint64_t Depth;
    std::vector<uint64_t> LoopIndex;
  };

  uint64_t value(const Operand &V, const Frame &F) const {
    switch (V.Var) {
    case Operand::Tid:
      return Tid;
    case Operand::Depth:
      return F.Depth;
    case Operand::Loop:
      return F.LoopIndex[V.LoopLevel];
    }
    return 0;
  }
  bool holds(const Condition &C, const Frame &F) const {
    return (value(C.Var, F) + C.Add) % C.Mod == 0;
  }

  Outcome call(unsigned Fn, uint64_t Depth, unsigned Recursion) {
    E.MaxRecursion = std::max(E.MaxRecursion, Recursion);
    Frame F{Fn, Depth, {}};
    size_t HeldBefore = Held.size();
    Outcome O = body(P.Functions[Fn].Body, F, Recursion);
    Held.resize(HeldBefore); // every exit releases what the frame holds
    return O == Outcome::Thrown ? O : Outcome::Normal;
  }

  Outcome body(const std::vector<Stmt> &Body, Frame &F, unsigned Recursion) {
    for (const Stmt &S : Body) {
      if (OverBudget)
        return Outcome::Returned;
      if (++E.Steps > MaxStepsPerThread) {
        OverBudget = true;
        return Outcome::Returned;
      }
      Outcome O = stmt(S, F, Recursion);
      if (O != Outcome::Normal)
        return O;
    }
    return Outcome::Normal;
  }

  Outcome stmt(const Stmt &S, Frame &F, unsigned Recursion) {
    switch (S.Kind) {
    case StmtKind::Update: {
      uint64_t V = S.Const + S.Mul * value(S.Var, F);
      E.Counters[size_t(S.Obj) * P.Fields + S.Field] += V;
      E.Checksum += V * (2 * uint64_t(S.Id) + 1);
      ++E.Updates;
      return Outcome::Normal;
    }
    case StmtKind::Region: {
      ++E.Enters;
      if (!Held.empty() && Held.back() != S.Obj &&
          std::find(Held.begin(), Held.end(), S.Obj) != Held.end())
        E.NonAdjacentReentry = true;
      Held.push_back(S.Obj);
      E.MaxHeld = std::max<unsigned>(E.MaxHeld, unsigned(Held.size()));
      Outcome O = body(S.Body, F, Recursion);
      Held.pop_back();
      return O;
    }
    case StmtKind::Loop:
      F.LoopIndex.push_back(0);
      for (unsigned I = 0; I != S.Count; ++I) {
        F.LoopIndex.back() = I;
        Outcome O = body(S.Body, F, Recursion);
        if (O != Outcome::Normal) {
          F.LoopIndex.pop_back();
          return O;
        }
      }
      F.LoopIndex.pop_back();
      return Outcome::Normal;
    case StmtKind::If:
      return holds(S.Cond, F) ? body(S.Body, F, Recursion) : Outcome::Normal;
    case StmtKind::Try: {
      Outcome O = body(S.Body, F, Recursion);
      if (O != Outcome::Thrown)
        return O;
      E.Checksum += 7 * uint64_t(S.Id) + 3;
      return Outcome::Normal;
    }
    case StmtKind::Call: {
      ++E.Calls;
      E.Checksum += S.Id;
      size_t HeldBefore = Held.size();
      Outcome O = call(S.Callee, P.Functions[S.Callee].Depth, 0);
      Held.resize(HeldBefore);
      return O;
    }
    case StmtKind::Recurse: {
      if (F.Depth == 0)
        return Outcome::Normal;
      ++E.Calls;
      E.Checksum += S.Id;
      size_t HeldBefore = Held.size();
      Outcome O = call(F.Fn, F.Depth - 1, Recursion + 1);
      Held.resize(HeldBefore);
      return O;
    }
    case StmtKind::Wait:
      ++E.Waits;
      return Outcome::Normal;
    case StmtKind::Notify:
      ++E.Notifies;
      return Outcome::Normal;
    case StmtKind::Poll:
      ++E.Polls;
      return Outcome::Normal;
    case StmtKind::Return:
      if (!holds(S.Cond, F))
        return Outcome::Normal;
      ++E.Returns;
      return Outcome::Returned;
    case StmtKind::Throw:
      if (!holds(S.Cond, F))
        return Outcome::Normal;
      ++E.Throws;
      return Outcome::Thrown;
    }
    return Outcome::Normal;
  }

  const Program &P;
  unsigned Tid;
  ThreadEffect E;
  std::vector<unsigned> Held;
  bool OverBudget = false;
};

void count(const std::vector<Stmt> &Body, ProgramSize &S) {
  for (const Stmt &St : Body) {
    ++S.Stmts;
    S.Regions += St.Kind == StmtKind::Region;
    count(St.Body, S);
  }
}

} // namespace

bool isCallable(const Program &P, unsigned Callee,
                const std::vector<unsigned> &Held) {
  std::vector<Summary> Sums = summaries(P);
  return Validator::callable(P.Functions[Callee], Sums[Callee], Held);
}

bool mayThrow(const Program &P, unsigned Fn) {
  return summaries(P)[Fn].MayThrow;
}

std::string validate(const Program &P) {
  if (std::string E = Validator(P).run(); !E.empty())
    return E;
  for (unsigned T = 0; T != MaxThreads; ++T) {
    ThreadEffect E = simulate(P, T);
    if (E.Uncaught)
      return "an exception leaves the entry function";
    if (E.Steps > MaxStepsPerThread)
      return "too many steps per thread";
    if (E.Waits > MaxWaitsPerThread)
      return "too many waits per thread";
  }
  return "";
}

ThreadEffect simulate(const Program &P, unsigned Tid) {
  return Simulator(P, Tid).run();
}

ProgramSize measure(const Program &P) {
  ProgramSize S;
  for (const Function &F : P.Functions)
    if (!F.Removed) {
      ++S.Functions;
      count(F.Body, S);
    }
  return S;
}

} // namespace jitlock::fuzz
