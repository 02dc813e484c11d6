//===- DeoptTestUtil.h - Inputs/shapes.ll under the deopt runtime -*- C++
//-*-===//
//
// One JIT session of Inputs/shapes.ll per test program, with the deopt
// runtime enabled, and the handlers the tests install: Resume records the
// decoded frame and the restored lock state, then calls the shape's
// continuation (<shape>.cont) with the frame's first four frontend operands;
// Failed records the failure and returns FailedResult.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_DEOPT_DEOPTTESTUTIL_H
#define JITLOCK_UNITTESTS_DEOPT_DEOPTTESTUTIL_H

#include "RuntimeTestUtil.h"

#include "jitlock/Deopt.h"
#include "jitlock/JIT.h"

#include "llvm/IR/Module.h"

#include <algorithm>
#include <map>
#include <memory>

namespace jitlock_test {

using OptFn = uint64_t (*)(void *, void *, void *, uint64_t);

/// What the Failed handler heard.
struct RecordedFailure {
  jitlock::deopt::FailureKind Kind;
  int Status;
  std::string Message;
  std::vector<void *> Released;
};

inline constexpr uint64_t FailedResult = 0xdead;

class DeoptFixture : public RuntimeTest {
public:
  static void SetUpTestSuite() {
    jitlock::JitOptions Opts;
    Opts.ConfigureJit = jitlock::deopt::enableDeopt;
    auto S = jitlock::JitSession::loadFile(
        JITLOCK_DEOPT_INPUTS_DIR "/shapes.ll", Opts);
    if (!S) {
      SessionError = llvm::toString(S.takeError());
      return;
    }
    Session = std::move(*S);
    Continuations.clear();
    for (const llvm::Function &F : Session->module()) {
      llvm::StringRef Name = F.getName();
      if (!Name.consume_back(".opt") || F.isDeclaration())
        continue;
      std::string Cont = (Name + ".cont").str();
      void *Opt = lookup(F.getName().str());
      Continuations[uint64_t(uintptr_t(Opt))] =
          Session->definesFunction(Cont) ? fn<OptFn>(Cont) : nullptr;
    }
  }
  static void TearDownTestSuite() { Session.reset(); }

  template <typename Fn> static Fn fn(const std::string &Name) {
    return reinterpret_cast<Fn>(lookup(Name));
  }

protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    ASSERT_TRUE(Session) << SessionError;
    Handlers.Resume = resume;
    Handlers.Failed = failed;
    jitlock::deopt::setDeoptHandlers(&Handlers);
    std::lock_guard<std::mutex> G(FailureLock);
    Failures.clear();
  }
  void TearDown() override {
    jitlock::deopt::setDeoptHandlers(nullptr);
    RuntimeTest::TearDown();
  }

  /// `N` objects in one array (shapes index them from the first).
  std::vector<Obj *> newObjArray(size_t N) {
    Arrays.push_back(std::make_unique<Obj[]>(N));
    std::vector<Obj *> Out;
    for (size_t I = 0; I != N; ++I)
      Out.push_back(&Arrays.back()[I]);
    return Out;
  }

  static std::vector<RecordedFailure> failures() {
    std::lock_guard<std::mutex> G(FailureLock);
    return Failures;
  }
  /// The last frame this thread's Resume saw, and the lock stack then.
  static const jitlock::deopt::DeoptFrame &lastFrame() { return LastFrame; }
  static const std::vector<void *> &restoredStack() { return RestoredStack; }

  /// Called by Resume after it recorded the restored state (tests may
  /// replace it, e.g. to snapshot more).
  static inline thread_local void (*OnResume)() = nullptr;

  static inline std::unique_ptr<jitlock::JitSession> Session;

private:
  static void *lookup(const std::string &Name) {
    auto Addr = Session->lookup(Name);
    if (!Addr) {
      ADD_FAILURE() << llvm::toString(Addr.takeError());
      return nullptr;
    }
    return *Addr;
  }

  static uint64_t resume(const jitlock::deopt::DeoptFrame &F, void *) {
    LastFrame = F;
    RestoredStack = lockStack(jitlock_rt_current());
    if (OnResume)
      OnResume();
    auto It = Continuations.find(F.FunctionAddress);
    if (It == Continuations.end() || !It->second || F.Values.size() < 4) {
      ADD_FAILURE() << "no continuation for the deoptimized function";
      return FailedResult;
    }
    auto V = [&](size_t I) { return reinterpret_cast<void *>(F.Values[I]); };
    return It->second(V(0), V(1), V(2), F.Values[3]);
  }

  static uint64_t failed(const jitlock::deopt::DeoptFailure &F, void *) {
    std::lock_guard<std::mutex> G(FailureLock);
    Failures.push_back({F.Kind, F.Status, F.Message, F.Released});
    return FailedResult;
  }

  static inline std::string SessionError;
  static inline std::map<uint64_t, OptFn> Continuations;
  static inline thread_local jitlock::deopt::DeoptFrame LastFrame;
  static inline thread_local std::vector<void *> RestoredStack;
  static inline std::mutex FailureLock;
  static inline std::vector<RecordedFailure> Failures;

  jitlock::deopt::DeoptHandlers Handlers;
  std::vector<std::unique_ptr<Obj[]>> Arrays;
};

} // namespace jitlock_test

#endif
