//===- Shrink.cpp - Reducing a failing program ----------------------------===//
//
// Candidates are listed coarse first (threads, repeats, functions, then
// statements in pre-order, so that a whole subtree goes before its parts).
// After a kept candidate the list is rebuilt from the smaller program and
// the search goes on from the same position; passes repeat until one keeps
// nothing or the trials run out.
//
//===----------------------------------------------------------------------===//
#include "Shrink.h"

#include <algorithm>

namespace jitlock::fuzz {

namespace {

struct Candidate {
  /// Changes `P` (and the thread count); false when it does not apply.
  std::function<bool(Program &P, unsigned &Threads)> Apply;
};

using Path = std::vector<size_t>;

std::vector<Stmt> *bodyAt(Program &P, unsigned Fn, const Path &Parent) {
  std::vector<Stmt> *Body = &P.Functions[Fn].Body;
  for (size_t I : Parent)
    Body = &(*Body)[I].Body;
  return Body;
}

void collectPaths(const std::vector<Stmt> &Body, Path &At,
                  std::vector<Path> &Out) {
  for (size_t I = 0; I != Body.size(); ++I) {
    At.push_back(I);
    Out.push_back(At);
    collectPaths(Body[I].Body, At, Out);
    At.pop_back();
  }
}

void eraseCalls(std::vector<Stmt> &Body, unsigned Callee) {
  Body.erase(std::remove_if(Body.begin(), Body.end(),
                            [&](const Stmt &S) {
                              return S.Kind == StmtKind::Call &&
                                     S.Callee == Callee;
                            }),
             Body.end());
  for (Stmt &S : Body)
    eraseCalls(S.Body, Callee);
}

bool usesObject(const std::vector<Stmt> &Body, unsigned Obj) {
  for (const Stmt &S : Body) {
    bool Refers = S.Kind == StmtKind::Update || S.Kind == StmtKind::Region ||
                  S.Kind == StmtKind::Wait || S.Kind == StmtKind::Notify;
    if ((Refers && S.Obj == Obj) || usesObject(S.Body, Obj))
      return true;
  }
  return false;
}

/// Objects above `Obj` move down by one.
void renumberAbove(std::vector<Stmt> &Body, unsigned Obj) {
  for (Stmt &S : Body) {
    S.Obj -= S.Obj > Obj;
    renumberAbove(S.Body, Obj);
  }
}

bool usesField(const std::vector<Stmt> &Body, unsigned Field) {
  for (const Stmt &S : Body)
    if ((S.Kind == StmtKind::Update && S.Field == Field) ||
        usesField(S.Body, Field))
      return true;
  return false;
}

std::vector<Candidate> candidates(const Program &P, unsigned Threads) {
  std::vector<Candidate> Out;
  for (unsigned T : {1u, Threads / 2, Threads - 1})
    if (T >= 1 && T < Threads)
      Out.push_back({[T](Program &, unsigned &N) {
        N = T;
        return true;
      }});
  for (unsigned R : {1u, P.Repeat / 2})
    if (R >= 1 && R < P.Repeat)
      Out.push_back({[R](Program &Q, unsigned &) {
        Q.Repeat = R;
        return true;
      }});
  for (unsigned F = 0; F != P.Functions.size(); ++F) {
    if (P.Functions[F].Removed || F == P.Entry)
      continue;
    Out.push_back({[F](Program &Q, unsigned &) {
      Q.Functions[F].Removed = true;
      Q.Functions[F].Body.clear();
      for (Function &G : Q.Functions)
        eraseCalls(G.Body, F);
      return true;
    }});
  }
  for (unsigned F = 0; F != P.Functions.size(); ++F) {
    if (P.Functions[F].Removed)
      continue;
    std::vector<Path> Paths;
    Path At;
    collectPaths(P.Functions[F].Body, At, Paths);
    for (const Path &Where : Paths) {
      Path Parent(Where.begin(), Where.end() - 1);
      size_t I = Where.back();
      // Drop the statement.
      Out.push_back({[=](Program &Q, unsigned &) {
        std::vector<Stmt> *Body = bodyAt(Q, F, Parent);
        Body->erase(Body->begin() + long(I));
        return true;
      }});
      // Replace it by its body.
      Out.push_back({[=](Program &Q, unsigned &) {
        std::vector<Stmt> *Body = bodyAt(Q, F, Parent);
        Stmt S = std::move((*Body)[I]);
        // (A loop's body that uses its index becomes invalid: validate()
        // refuses it.)
        if (S.Body.empty())
          return false;
        Body->erase(Body->begin() + long(I));
        Body->insert(Body->begin() + long(I),
                     std::make_move_iterator(S.Body.begin()),
                     std::make_move_iterator(S.Body.end()));
        return true;
      }});
      // Run a loop once.
      Out.push_back({[=](Program &Q, unsigned &) {
        Stmt &S = (*bodyAt(Q, F, Parent))[I];
        if (S.Kind != StmtKind::Loop || S.Count == 1)
          return false;
        S.Count = 1;
        return true;
      }});
    }
    Out.push_back({[F](Program &Q, unsigned &) {
      if (Q.Functions[F].Depth == 0)
        return false;
      Q.Functions[F].Depth /= 2;
      return true;
    }});
    Out.push_back({[F](Program &Q, unsigned &) {
      if (!Q.Functions[F].StackBang)
        return false;
      Q.Functions[F].StackBang = false;
      return true;
    }});
  }
  for (unsigned Obj = 0; Obj != P.Objects; ++Obj)
    Out.push_back({[Obj](Program &Q, unsigned &) {
      if (Q.Objects == 1)
        return false;
      for (const Function &F : Q.Functions)
        if (F.Removed)
          continue;
        else if (usesObject(F.Body, Obj) ||
                 std::find(F.Assumed.begin(), F.Assumed.end(), Obj) !=
                     F.Assumed.end())
          return false;
      for (Function &F : Q.Functions) {
        renumberAbove(F.Body, Obj);
        for (unsigned &O : F.Assumed)
          O -= O > Obj;
      }
      --Q.Objects;
      return true;
    }});
  Out.push_back({[](Program &Q, unsigned &) {
    unsigned Last = Q.Fields - 1;
    if (Q.Fields == 1)
      return false;
    for (const Function &F : Q.Functions)
      if (usesField(F.Body, Last))
        return false;
    --Q.Fields;
    return true;
  }});
  return Out;
}

} // namespace

Shrunk shrink(const Program &Original, unsigned Threads,
              const StillFails &Fails, unsigned MaxTrials) {
  Shrunk S{Original, Threads, 0, 0};
  for (bool Progress = true; Progress && S.Trials < MaxTrials;) {
    Progress = false;
    std::vector<Candidate> List = candidates(S.P, S.Threads);
    for (size_t I = 0; I < List.size() && S.Trials < MaxTrials; ++I) {
      Program Q = S.P;
      unsigned T = S.Threads;
      if (!List[I].Apply(Q, T) || !validate(Q).empty())
        continue;
      ++S.Trials;
      if (!Fails(Q, T))
        continue;
      S.P = std::move(Q);
      S.Threads = T;
      ++S.Accepted;
      Progress = true;
      // The same position in the list of the smaller program: what came
      // before it failed to shrink just now (the next pass retries it).
      List = candidates(S.P, S.Threads);
      --I;
    }
  }
  return S;
}

} // namespace jitlock::fuzz
