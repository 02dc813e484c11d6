//===- LlvmKernels.cpp - shapes.ll, lowered and JIT-compiled --------------===//
#include "Bench.h"

namespace jitlock::bench {

namespace {

/// The IR of shapes.ll, embedded by CMake.
const char ShapesIR[] =
#include "ShapesIR.inc"
    ;

} // namespace

bool LlvmKernels::build(jitlock::LockingMode Mode, const char *Name,
                        const jitlock_rt_layout &L,
                        const jitlock::JitOptions &Options) {
  std::string IR = ShapesIR;
  const std::string Token = "JITLOCK_TOP_OFFSET";
  for (size_t At; (At = IR.find(Token)) != std::string::npos;)
    IR.replace(At, Token.size(), std::to_string(L.lock_stack_top_offset));
  // churn's fresh header: 1, and reservable under reserved locking.
  const std::string Fresh = "JITLOCK_FRESH_HEADER";
  for (size_t At; (At = IR.find(Fresh)) != std::string::npos;)
    IR.replace(At, Fresh.size(),
               std::to_string(L.unlocked_value | L.reservable_value));
  jitlock::JitOptions Opts = Options;
  Opts.Locking = Mode;
  auto S = jitlock::JitSession::loadBuffer(IR, Name, Opts);
  if (!S) {
    Error = llvm::toString(S.takeError());
    return false;
  }
  Session = std::move(*S);
  if (Session->lockingMode() != Mode) {
    Error = std::string(Name) + ": lowered for " +
            jitlock::lockingModeName(Session->lockingMode()).str() +
            " locking, not " + jitlock::lockingModeName(Mode).str();
    return false;
  }
  for (int K = 0; K < NumKernels; ++K) {
    if (llvm::Error E = Session->checkFunction(KernelSymbols[K],
                                               "void (ptr, ptr, ptr, i64)")) {
      Error = llvm::toString(std::move(E));
      return false;
    }
    auto Fn = Session->lookupFunction<void(jitlock_thread *, Object *, Object *,
                                           uint64_t)>(KernelSymbols[K]);
    if (!Fn) {
      Error = llvm::toString(Fn.takeError());
      return false;
    }
    Fns[K] = *Fn;
  }
  return true;
}

} // namespace jitlock::bench
