//===- MonitorDataflow.h - Dataflow over a function's monitors -*- C++ -*-===//
//
// The structured-locking analysis the passes share. MonitorOps lists what
// each block does to the frame's monitors (enters and exits, their elided
// markers, coroutine suspend points, deopt points, returns) in reverse
// post-order; MonitorDataflow solves a forward dataflow over them for a
// domain that says what a state is, how two paths meet and what an
// operation does:
//
//   jitlock-verify       least and greatest hold count per object
//                        (Verify.cpp): exits without an enter, holds
//                        across a suspend point;
//   jitlock-elide        the acquisition-ordered list of held and elided
//                        monitors (MonitorList below): whether an elision
//                        keeps every path's monitors known;
//   jitlock-deopt-state  the same list at each deopt point.
//
// An invoke of a jitlock function never unwinds (the lowering turns it into
// a call, the elided markers are deleted), so its unwind edge carries
// nothing: javac's shape, whose handler exits the monitor in an invoke that
// unwinds to the handler itself, is structured.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_PASSES_MONITORDATAFLOW_H
#define JITLOCK_PASSES_MONITORDATAFLOW_H

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"

#include <functional>
#include <optional>
#include <queue>
#include <vector>

namespace jitlock {

/// What an operation does to the frame's monitors.
enum class MonitorOpKind {
  Enter,
  Exit,
  ElidedEnter,
  ElidedExit,
  /// A coroutine suspend point.
  Suspend,
  /// A call with a "deopt" operand bundle.
  DeoptPoint,
  /// A return or a resume: the frame ends.
  FrameExit,
};

/// One monitor of the frame: an object (with pointer casts stripped) and
/// whether its enters are real or elided.
struct MonitorKey {
  const llvm::Value *Obj;
  bool Elided;
};

struct MonitorOp {
  llvm::Instruction *I;
  MonitorOpKind Kind;
  /// The index of the operation's key in MonitorOps::Keys (enters and
  /// exits only).
  unsigned Key = 0;

  bool isEnter() const {
    return Kind == MonitorOpKind::Enter || Kind == MonitorOpKind::ElidedEnter;
  }
  bool isExit() const {
    return Kind == MonitorOpKind::Exit || Kind == MonitorOpKind::ElidedExit;
  }
};

/// The object a monitor call (or elided marker) locks, casts looked through.
const llvm::Value *lockedObject(const llvm::CallBase &CB);

/// A function's monitor operations, block by block in reverse post-order.
/// Only the keys the function enters are tracked: an exit-only function
/// releases what its caller took, which is not part of its own frame.
class MonitorOps {
public:
  explicit MonitorOps(llvm::Function &F);

  struct Block {
    llvm::SmallVector<MonitorOp, 2> Ops;
    /// Whether a predecessor comes later in reverse post-order.
    bool BackEdgeTarget = false;
  };

  llvm::Function &F;
  llvm::SmallVector<llvm::BasicBlock *, 32> Order;
  llvm::DenseMap<const llvm::BasicBlock *, unsigned> Index;
  llvm::SmallVector<Block, 32> Blocks;
  llvm::SmallVector<MonitorKey, 16> Keys;
  /// Whether the function has any operation on a tracked key.
  bool hasMonitors() const { return !Keys.empty(); }

  /// Whether the edge from `Pred` to `BB` can be taken after lowering.
  static bool isRealEdge(const llvm::BasicBlock *Pred,
                         const llvm::BasicBlock *BB);
};

/// A forward dataflow over MonitorOps. `Domain` provides
///   using State;                         // empty: no monitor
///   static void meet(State &Into, const State &Other);
///   void widen(State &In, const State &Forward, const State &Old);
///   void apply(State &S, const MonitorOp &O);
/// `widen` is called at back-edge targets with the new state `In`, the meet
/// of the forward predecessors only, and the previous state `Old`; a domain
/// of finite height may do nothing there.
template <typename Domain> class MonitorDataflow {
public:
  using State = typename Domain::State;

  MonitorDataflow(const MonitorOps &Ops, Domain &D)
      : Ops(Ops), D(D), Solved(Ops.Order.size()) {}

  void run() {
    // Lowest RPO index first, so that a block is first computed after all
    // of its forward predecessors.
    std::priority_queue<unsigned, std::vector<unsigned>, std::greater<unsigned>>
        Work;
    llvm::BitVector Queued(Ops.Order.size(), true);
    for (unsigned N = 0; N != Ops.Order.size(); ++N)
      Work.push(N);
    while (!Work.empty()) {
      unsigned N = Work.top();
      Work.pop();
      Queued.reset(N);
      Solution &Sol = Solved[N];
      std::optional<State> In = meetPredecessors(N, /*ForwardOnly=*/false);
      if (!In)
        continue;
      if (Ops.Blocks[N].BackEdgeTarget) {
        if (Sol.In)
          D.widen(*In,
                  meetPredecessors(N, /*ForwardOnly=*/true).value_or(State()),
                  *Sol.In);
        Sol.In = In;
      }
      State Out = std::move(*In);
      for (const MonitorOp &O : Ops.Blocks[N].Ops)
        D.apply(Out, O);
      if (Sol.Out && Out == *Sol.Out)
        continue;
      Sol.Out = std::move(Out);
      for (const llvm::BasicBlock *Succ : successors(Ops.Order[N])) {
        unsigned S = Ops.Index.lookup(Succ);
        if (!Queued.test(S)) {
          Queued.set(S);
          Work.push(S);
        }
      }
    }
  }

  /// Calls `Visit(Op, Before)` for each operation of each block reached
  /// from the entry, in order, with the solved state just before it.
  void
  forEachOp(llvm::function_ref<void(const MonitorOp &, const State &)> Visit) {
    for (unsigned N = 0; N != Ops.Order.size(); ++N) {
      if (!Solved[N].Out)
        continue; // Unreachable once lowered.
      State S = Ops.Blocks[N].BackEdgeTarget
                    ? *Solved[N].In
                    : *meetPredecessors(N, /*ForwardOnly=*/false);
      for (const MonitorOp &O : Ops.Blocks[N].Ops) {
        Visit(O, S);
        D.apply(S, O);
      }
    }
  }

private:
  /// The meet of the states the predecessors of block `N` pass to it (only
  /// those before it in reverse post-order with `ForwardOnly`); none when
  /// no predecessor has been reached.
  std::optional<State> meetPredecessors(unsigned N, bool ForwardOnly) const {
    const llvm::BasicBlock *BB = Ops.Order[N];
    if (BB->isEntryBlock())
      return State();
    std::optional<State> Met;
    for (const llvm::BasicBlock *Pred : predecessors(BB)) {
      // A predecessor unreachable from the entry contributes nothing.
      auto It = Ops.Index.find(Pred);
      if (It == Ops.Index.end() || !Solved[It->second].Out ||
          (ForwardOnly && It->second >= N) || !MonitorOps::isRealEdge(Pred, BB))
        continue;
      const State &Out = *Solved[It->second].Out;
      if (Met)
        Domain::meet(*Met, Out);
      else
        Met = Out;
    }
    return Met;
  }

  struct Solution {
    /// The state at the end; none while the block has not been reached.
    std::optional<State> Out;
    /// The state at the start, kept for back-edge targets only (widening
    /// compares with it); the others recompute it from their predecessors.
    std::optional<State> In;
  };

  const MonitorOps &Ops;
  Domain &D;
  llvm::SmallVector<Solution, 32> Solved;
};

/// The frame's monitors in acquisition order, outermost first, as keys of
/// MonitorOps::Keys; or Unknown where paths disagree or an exit finds no
/// enter of its key. An exit releases the latest acquisition of its key. The
/// lattice has finite height (a list, then Unknown), so loops need no
/// widening: a loop that leaves a monitor more on each iteration reaches
/// Unknown at its header.
struct MonitorList {
  struct State {
    llvm::SmallVector<unsigned, 4> Held;
    bool Unknown = false;
    bool operator==(const State &) const = default;
  };
  static void meet(State &Into, const State &Other) {
    if (!(Into == Other)) {
      Into.Held.clear();
      Into.Unknown = true;
    }
  }
  void widen(State &, const State &, const State &) {}
  void apply(State &S, const MonitorOp &O) const;
};

} // namespace jitlock

#endif
