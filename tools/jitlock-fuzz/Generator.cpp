//===- Generator.cpp - Random valid monitor programs ----------------------===//
//
// Functions are generated in index order, each calling only earlier ones
// (an acyclic call graph), the entry last. Every statement is chosen among
// those the lock-order rules of Program.h allow where it goes, so the
// program is valid by construction; validate() confirms it, and a program
// over the per-thread budget is generated again from a derived seed with
// less work.
//
// The random numbers are splitmix64's, reduced by modulo rather than by a
// standard distribution, whose results differ between C++ libraries: a seed
// names the same program everywhere.
//
//===----------------------------------------------------------------------===//
#include "Program.h"

#include <algorithm>
#include <optional>
#include <set>

namespace jitlock::fuzz {

namespace {

class Random {
public:
  explicit Random(uint64_t Seed) : State(Seed) {}
  uint64_t next() {
    uint64_t Z = (State += 0x9e3779b97f4a7c15ULL);
    Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebULL;
    return Z ^ (Z >> 31);
  }
  /// A number in [0, N).
  unsigned below(unsigned N) { return N ? unsigned(next() % N) : 0; }
  /// A number in [Lo, Hi].
  unsigned range(unsigned Lo, unsigned Hi) { return Lo + below(Hi - Lo + 1); }
  bool chance(unsigned Percent) { return below(100) < Percent; }

private:
  uint64_t State;
};

class Generator {
public:
  Generator(uint64_t Seed, const GenOptions &Opts, unsigned Scale)
      : R(Seed), Opts(Opts), Scale(Scale) {}

  Program run(uint64_t Seed) {
    P.Seed = Seed;
    P.Objects = R.range(1, std::max(1u, Opts.MaxObjects));
    P.Fields = R.range(1, 3);
    unsigned N = R.range(1, std::max(1u, Opts.MaxFunctions));
    for (unsigned I = 0; I != N; ++I) {
      bool IsEntry = I + 1 == N;
      Function F;
      if (!IsEntry && R.chance(50))
        F.Assumed = pickAssumed();
      F.Depth = R.chance(40) ? R.range(1, 10) : 0;
      F.StackBang = R.chance(35);
      P.Functions.push_back(F);
      Fn = I;
      Held = P.Functions[I].Assumed;
      Loops = 0;
      std::vector<Stmt> Body = block(0);
      P.Functions[I].Body = std::move(Body);
      if (P.Functions[I].Depth)
        addRecursion();
    }
    P.Entry = N - 1;
    // Every exception is caught before it leaves the entry function.
    if (mayThrow(P, P.Entry)) {
      Stmt Catch = make(StmtKind::Try);
      Catch.Body = std::move(P.Functions[P.Entry].Body);
      P.Functions[P.Entry].Body = {std::move(Catch)};
    }
    P.Repeat = R.range(1, std::max(1u, Opts.MaxRepeat / Scale));
    return std::move(P);
  }

private:
  std::vector<unsigned> pickAssumed() {
    std::vector<unsigned> A;
    unsigned Count = R.range(1, std::min(2u, P.Objects));
    for (unsigned I = 0; I != Count; ++I) {
      unsigned O = R.below(P.Objects);
      if (std::find(A.begin(), A.end(), O) == A.end())
        A.push_back(O);
    }
    std::sort(A.begin(), A.end());
    return A;
  }

  Stmt make(StmtKind K) {
    Stmt S;
    S.Kind = K;
    S.Id = NextId++;
    return S;
  }

  Operand operand() {
    Operand V;
    unsigned Pick = R.below(Loops ? 4 : 2);
    if (Pick == 0)
      V.Var = Operand::Tid;
    else if (Pick == 1)
      V.Var = Operand::Depth;
    else {
      V.Var = Operand::Loop;
      V.LoopLevel = R.below(Loops);
    }
    return V;
  }

  Condition condition() {
    Condition C;
    C.Var = operand();
    C.Mod = R.range(2, 4);
    C.Add = R.below(unsigned(C.Mod));
    return C;
  }

  int maxHeld() const {
    int M = -1;
    for (unsigned O : Held)
      M = std::max(M, int(O));
    return M;
  }

  std::vector<Stmt> block(unsigned Nesting) {
    std::vector<Stmt> Out;
    unsigned N = R.range(1, std::max(1u, Opts.MaxStmts / (Nesting ? 2 : 1)));
    for (unsigned I = 0; I != N; ++I)
      if (std::optional<Stmt> S = statement(Nesting))
        Out.push_back(std::move(*S));
    return Out;
  }

  std::optional<Stmt> statement(unsigned Nesting) {
    bool Deeper = Nesting < Opts.MaxNesting;
    for (unsigned Attempt = 0; Attempt != 8; ++Attempt) {
      switch (R.below(16)) {
      case 0:
      case 1:
      case 12:
        if (Held.empty())
          break;
        return update();
      case 2:
      case 3:
      case 13:
      case 14:
      case 15:
        if (Deeper)
          if (std::optional<Stmt> S = region(Nesting))
            return S;
        break;
      case 4:
        if (Deeper) {
          Stmt S = make(StmtKind::Loop);
          S.Count = R.range(1, 4);
          ++Loops;
          S.Body = block(Nesting + 1);
          --Loops;
          return S;
        }
        break;
      case 5:
        if (Deeper) {
          Stmt S = make(StmtKind::If);
          S.Cond = condition();
          S.Body = block(Nesting + 1);
          return S;
        }
        break;
      case 6:
        if (std::optional<Stmt> S = call())
          return S;
        break;
      case 7:
        if (Opts.Waits && !Held.empty() && R.chance(50)) {
          Stmt S = make(StmtKind::Wait);
          S.Obj = unsigned(maxHeld());
          S.Const = R.range(20, 200); // microseconds
          return S;
        }
        if (!Held.empty()) {
          Stmt S = make(StmtKind::Notify);
          S.Obj = Held[R.below(unsigned(Held.size()))];
          S.All = R.chance(50);
          return S;
        }
        break;
      case 8:
        return make(StmtKind::Poll);
      case 9: {
        Stmt S = make(StmtKind::Return);
        S.Cond = condition();
        return S;
      }
      case 10:
        if (Opts.Exceptions) {
          Stmt S = make(StmtKind::Throw);
          S.Cond = condition();
          S.Const = R.below(1000);
          return S;
        }
        break;
      case 11:
        if (Opts.Exceptions && Deeper) {
          Stmt S = make(StmtKind::Try);
          S.Body = block(Nesting + 1);
          return S;
        }
        break;
      }
    }
    return std::nullopt;
  }

  Stmt update() {
    Stmt S = make(StmtKind::Update);
    S.Obj = Held[R.below(unsigned(Held.size()))];
    S.Field = R.below(P.Fields);
    S.Const = R.range(1, 1000);
    S.Mul = R.chance(60) ? R.range(1, 97) : 0;
    S.Var = operand();
    return S;
  }

  std::optional<Stmt> region(unsigned Nesting) {
    // A held object (re-entry, adjacent or not) or one above all held.
    std::vector<unsigned> Choices;
    if (Held.empty() || R.chance(50))
      for (unsigned O = unsigned(maxHeld() + 1); O < P.Objects; ++O)
        Choices.push_back(O);
    if (Choices.empty())
      Choices = Held;
    if (Choices.empty())
      return std::nullopt;
    Stmt S = make(StmtKind::Region);
    S.Obj = Choices[R.below(unsigned(Choices.size()))];
    Held.push_back(S.Obj);
    S.Body = block(Nesting + 1);
    // Mostly an update at once, so that the region does observable work.
    if (R.chance(70))
      S.Body.insert(S.Body.begin(), update());
    Held.pop_back();
    return S;
  }

  std::optional<Stmt> call() {
    std::vector<unsigned> Choices;
    for (unsigned G = 0; G != Fn; ++G)
      if (isCallable(P, G, Held))
        Choices.push_back(G);
    if (Choices.empty())
      return std::nullopt;
    Stmt S = make(StmtKind::Call);
    S.Callee = Choices[R.below(unsigned(Choices.size()))];
    return S;
  }

  /// Inserts `if (depth > 0) self(depth - 1)` where the lock order allows.
  void addRecursion() {
    std::vector<std::pair<std::vector<Stmt> *, size_t>> Slots;
    Held = P.Functions[Fn].Assumed;
    InRegion.clear();
    collectSlots(P.Functions[Fn].Body, Slots);
    if (Slots.empty())
      return;
    // Mostly inside a region: each level then holds one more monitor, and
    // deep recursion overflows the lock stack.
    std::vector<std::pair<std::vector<Stmt> *, size_t>> Inside;
    for (auto &Slot : Slots)
      if (InRegion.count(Slot.first))
        Inside.push_back(Slot);
    auto &From = !Inside.empty() && R.chance(75) ? Inside : Slots;
    auto [Body, Index] = From[R.below(unsigned(From.size()))];
    Body->insert(Body->begin() + long(Index), make(StmtKind::Recurse));
  }

  void collectSlots(std::vector<Stmt> &Body,
                    std::vector<std::pair<std::vector<Stmt> *, size_t>> &Out) {
    if (isCallable(P, Fn, Held))
      for (size_t I = 0; I <= Body.size(); ++I)
        Out.push_back({&Body, I});
    if (Held.size() > P.Functions[Fn].Assumed.size())
      InRegion.insert(&Body);
    for (Stmt &S : Body) {
      if (S.Kind == StmtKind::Region)
        Held.push_back(S.Obj);
      // Loop bodies would multiply the recursion: a call tree of
      // Count^Depth frames.
      if (S.Kind != StmtKind::Loop)
        collectSlots(S.Body, Out);
      if (S.Kind == StmtKind::Region)
        Held.pop_back();
    }
  }

  Random R;
  const GenOptions &Opts;
  unsigned Scale;
  Program P;
  unsigned Fn = 0;
  std::vector<unsigned> Held;
  unsigned Loops = 0;
  unsigned NextId = 1;
  /// Bodies inside a region of the function (addRecursion).
  std::set<const std::vector<Stmt> *> InRegion;
};

} // namespace

Program generate(uint64_t Seed, const GenOptions &Opts) {
  // Over the budget: again from a derived seed, with fewer repeats, then
  // with smaller bodies.
  GenOptions Smaller = Opts;
  for (unsigned Attempt = 0;; ++Attempt) {
    unsigned Scale = 1u << std::min(Attempt, 6u);
    Program P =
        Generator(Seed * 0x2545f4914f6cdd1dULL + Attempt, Smaller, Scale)
            .run(Seed);
    if (validate(P).empty() || Attempt >= 40) {
      if (!validate(P).empty()) {
        // A last resort that is always valid: one empty entry function.
        P = Program();
        P.Seed = Seed;
        P.Functions.push_back(Function());
      }
      return P;
    }
    if (Attempt % 4 == 3) {
      Smaller.MaxStmts = std::max(2u, Smaller.MaxStmts - 1);
      Smaller.MaxNesting = std::max(2u, Smaller.MaxNesting - 1);
    }
  }
}

} // namespace jitlock::fuzz
