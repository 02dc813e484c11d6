//===- LoweredPair.h - A lowered enter and exit for the JIT tests -*- C++
//-*-===//
//
// JitTest and JitMisuseDeathTest run the lowered monitor enter and exit on
// their own, outside the example convention.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_JIT_LOWEREDPAIR_H
#define JITLOCK_UNITTESTS_JIT_LOWEREDPAIR_H

#include "../Runtime/RuntimeTestUtil.h"
#include "jitlock/JIT.h"

#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

#include <memory>

namespace jitlock_test {

/// A lowered enter and exit, each in its own function.
struct LoweredPair {
  std::unique_ptr<jitlock::JitSession> Session;
  void (*Lock)(void *) = nullptr;
  void (*Unlock)(void *) = nullptr;

  explicit LoweredPair(jitlock::LockingMode Locking) {
    jitlock::JitOptions JO;
    JO.Locking = Locking;
    auto S = jitlock::JitSession::loadBuffer(R"(
      declare void @jitlock.monitor.enter(ptr)
      declare void @jitlock.monitor.exit(ptr)
      define void @lock(ptr %o) {
        call void @jitlock.monitor.enter(ptr %o)
        ret void
      }
      define void @unlock(ptr %o) {
        call void @jitlock.monitor.exit(ptr %o)
        ret void
      }
    )",
                                             "pair.ll", JO);
    if (!S) {
      ADD_FAILURE() << llvm::toString(S.takeError());
      return;
    }
    Session = std::move(*S);
    auto L = Session->lookupFunction<void(void *)>("lock");
    auto U = Session->lookupFunction<void(void *)>("unlock");
    if (!L || !U) {
      ADD_FAILURE() << (L ? llvm::toString(U.takeError())
                          : llvm::toString(L.takeError()));
      return;
    }
    Lock = *L;
    Unlock = *U;
  }
  // The code finds its thread through TLS, whatever the caller passes.
  jitlock_test::InlineMonitorOp enter() const {
    return [F = Lock](jitlock_thread *, void *O) { F(O); };
  }
  jitlock_test::InlineMonitorOp exit() const {
    return [F = Unlock](jitlock_thread *, void *O) { F(O); };
  }
};

} // namespace jitlock_test

#endif
