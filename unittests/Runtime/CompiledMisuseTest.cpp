//===- CompiledMisuseTest.cpp - Misuse from compiled code fails loudly ----===//
//
// The monitor slow paths that compiled code calls
// (jitlock_rt_monitor_enter_slow/exit_slow) cannot hand their caller a
// status: by default a misuse there is reported to the handler and then
// aborts the process with a message naming the thread, the object and what
// happened. compiled_code_misuse = JITLOCK_MISUSE_REPORT keeps
// report-and-continue. The C API (jitlock_rt_monitor_enter/exit) returns its
// codes whatever the setting.
//
// Two front doors: the slow paths called directly, and code emitted by the
// x86_64 emitters with the default RuntimeEntries. Death tests fork while
// the parent has no thread but the main one; the threads they need start in
// the child.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include "jitlock/Emitters.h"

#include <cstdio>

using namespace jitlock_test;

namespace {

/// "0x..." as the runtime prints a pointer, for a death-test regex.
std::string hexAddress(const void *P) {
  char Buf[32];
  snprintf(Buf, sizeof(Buf), "%p", P);
  return Buf;
}

/// The fatal message's regex: `What` (with its status) on `Who`, object
/// `Obj`.
std::string fatalRegex(const std::string &What, const std::string &Who,
                       const void *Obj) {
  return "jitlock: fatal: misuse from compiled code: " + What + " on " + Who +
         ", object " + hexAddress(Obj) + "; aborting";
}

const char *const NotAttached = "a thread that is not attached";

void slowEnter(jitlock_thread *T, void *Obj) {
  jitlock_rt_monitor_enter_slow(T, Obj);
}
void slowExit(jitlock_thread *T, void *Obj) {
  jitlock_rt_monitor_exit_slow(T, Obj);
}

/// Calls emitted code. UBSan's -fsanitize=function (in the asan preset)
/// checks a signature word before the callee, which emitted code lacks.
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void callEmitted(void (*F)(jitlock_thread *, void *), jitlock_thread *T,
                 void *Obj) {
  F(T, Obj);
}

/// An x86_64 monitor enter or exit emitted with the default RuntimeEntries
/// (the _slow entry points), as void fn(jitlock_thread *, void *).
class EmittedPair {
public:
  using Fn = void (*)(jitlock_thread *, void *);

  EmittedPair() : Enter(build(true)), Exit(build(false)) {}
  ~EmittedPair() {
    if (Enter)
      Runtime.release(Enter);
    if (Exit)
      Runtime.release(Exit);
  }
  bool built() const { return Enter && Exit; }
  InlineMonitorOp enter() const {
    return
        [F = Enter](jitlock_thread *T, void *Obj) { callEmitted(F, T, Obj); };
  }
  InlineMonitorOp exit() const {
    return [F = Exit](jitlock_thread *T, void *Obj) { callEmitted(F, T, Obj); };
  }

private:
  Fn build(bool IsEnter) {
    namespace x86 = asmjit::x86;
    namespace emit = jitlock::emit;
    jitlock_rt_layout L;
    jitlock_rt_get_layout(&L);
    asmjit::CodeHolder Code;
    Code.init(Runtime.environment());
    x86::Assembler A(&Code);
    // SysV: the thread in rdi, the object in rsi.
    const emit::x64::MonitorOperands Ops{x86::rsi, x86::rdi, x86::rax,
                                         x86::rcx};
    asmjit::Error E = IsEnter ? emit::x64::emitMonitorEnter(
                                    A, L, Ops, emit::SlowPathMode::OutOfLine)
                              : emit::x64::emitMonitorExit(
                                    A, L, Ops, emit::SlowPathMode::OutOfLine);
    EXPECT_EQ(E, asmjit::kErrorOk) << asmjit::DebugUtils::errorAsString(E);
    A.ret();
    Fn F = nullptr;
    E = Runtime.add(&F, &Code);
    EXPECT_EQ(E, asmjit::kErrorOk) << asmjit::DebugUtils::errorAsString(E);
    return E == asmjit::kErrorOk ? F : nullptr;
  }

  asmjit::JitRuntime Runtime;
  Fn Enter = nullptr, Exit = nullptr;
};

/// Runs `Op(code thread, Obj)` on a new thread that never attaches.
void onNeverAttachedThread(const InlineMonitorOp &Op, void *Obj) {
  std::thread T([&] { Op(jitlock_rt_code_thread(), Obj); });
  T.join();
}

/// Runs `Op(code thread, Obj)` on a new thread that attached and detached.
void onDetachedThread(const InlineMonitorOp &Op, void *Obj) {
  std::thread T([&] {
    ASSERT_NE(jitlock_rt_attach(), nullptr);
    ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    Op(jitlock_rt_code_thread(), Obj);
  });
  T.join();
}

//===----------------------------------------------------------------------===//
// By default: report, then abort with a message
//===----------------------------------------------------------------------===//

using CompiledMisuseDeathTest = RuntimeTest;

TEST_F(CompiledMisuseDeathTest, SlowEnterOnAThreadThatNeverAttached) {
  Obj *A = newObj();
  EXPECT_DEATH(
      onNeverAttachedThread(slowEnter, A),
      fatalRegex("monitor enter \\(JITLOCK_ENOT_ATTACHED\\)", NotAttached, A));
}

TEST_F(CompiledMisuseDeathTest, SlowExitOnAThreadThatDetached) {
  Obj *A = newObj();
  EXPECT_DEATH(
      onDetachedThread(slowExit, A),
      fatalRegex("monitor exit \\(JITLOCK_ENOT_ATTACHED\\)", NotAttached, A));
}

TEST_F(CompiledMisuseDeathTest, UnbalancedSlowExit) {
  Obj *A = newObj();
  std::string Who = "thread " + std::to_string(jitlock_rt_thread_id(self));
  EXPECT_DEATH(
      {
        jitlock_rt_monitor_enter_slow(self, A);
        jitlock_rt_monitor_exit_slow(self, A);
        jitlock_rt_monitor_exit_slow(self, A);
      },
      fatalRegex("monitor exit by a non-owner \\(JITLOCK_ENOT_OWNER\\)", Who,
                 A));
  // In this process nothing happened.
  EXPECT_EQ(A->hdr(), kUnlockedHeader);
}

TEST_F(CompiledMisuseDeathTest, SlowExitOfAMonitorAnotherThreadOwns) {
  Obj *A = newObj();
  auto ExitWhileOwned = [A] {
    std::atomic<bool> Held{false}, Done{false};
    std::thread Owner([&] {
      jitlock_thread *T = jitlock_rt_attach();
      jitlock_rt_monitor_enter(T, A);
      jitlock_rt_wait_timed(T, A, 0); // inflates; still owned
      Held = true;
      while (!Done)
        std::this_thread::yield();
    });
    while (!Held)
      std::this_thread::yield();
    std::thread Other([&] {
      jitlock_thread *T = jitlock_rt_attach();
      jitlock_rt_monitor_exit_slow(T, A);
    });
    Other.join();
    Done = true;
    Owner.join();
  };
  EXPECT_DEATH(
      ExitWhileOwned(),
      fatalRegex("monitor exit by a non-owner \\(JITLOCK_ENOT_OWNER\\)",
                 "thread [0-9]+", A));
}

TEST_F(CompiledMisuseDeathTest, SlowPathGivenAnotherThreadsStructure) {
  Obj *A = newObj();
  alignas(64) static char NotAThread[64];
  auto *Foreign = reinterpret_cast<jitlock_thread *>(NotAThread);
  std::string Who = "thread " + std::to_string(jitlock_rt_thread_id(self)) +
                    ", which passed thread " + hexAddress(Foreign);
  EXPECT_DEATH(jitlock_rt_monitor_enter_slow(Foreign, A),
               fatalRegex("monitor enter \\(JITLOCK_ENOT_ATTACHED\\)", Who, A));
}

TEST_F(CompiledMisuseDeathTest, SlowPathGivenANullObject) {
  std::string Who = "thread " + std::to_string(jitlock_rt_thread_id(self));
  EXPECT_DEATH(jitlock_rt_monitor_enter_slow(self, nullptr),
               "misuse from compiled code: monitor enter \\(JITLOCK_ENULL\\) "
               "on " +
                   Who + ", object ");
}

TEST_F(CompiledMisuseDeathTest, TheHandlerHearsOfItFirst) {
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.misuse_handler = [](void *, jitlock_status Status, jitlock_thread *,
                          void *Obj, const char *What) {
    fprintf(stderr, "handler: %s: %s (%p)\n", jitlock_rt_status_name(Status),
            What, Obj);
  };
  reconfigure(Cfg);
  Obj *A = newObj();
  EXPECT_DEATH(jitlock_rt_monitor_exit_slow(self, A),
               "handler: JITLOCK_ENOT_OWNER: monitor exit by a non-owner \\(" +
                   hexAddress(A) + "\\)\n.*jitlock: fatal: misuse");
}

TEST_F(CompiledMisuseDeathTest, EmittedEnterOnAThreadThatDetached) {
  EmittedPair Code;
  ASSERT_TRUE(Code.built());
  Obj *A = newObj();
  EXPECT_DEATH(
      onDetachedThread(Code.enter(), A),
      fatalRegex("monitor enter \\(JITLOCK_ENOT_ATTACHED\\)", NotAttached, A));
}

TEST_F(CompiledMisuseDeathTest, EmittedUnbalancedExit) {
  EmittedPair Code;
  ASSERT_TRUE(Code.built());
  Obj *A = newObj(), *B = newObj();
  std::string Who = "thread " + std::to_string(jitlock_rt_thread_id(self));
  // An unlocked object; then one below another object on the lock stack.
  EXPECT_DEATH(
      Code.exit()(self, A),
      fatalRegex("monitor exit by a non-owner \\(JITLOCK_ENOT_OWNER\\)", Who,
                 A));
  EXPECT_DEATH(
      {
        Code.enter()(self, B);
        Code.exit()(self, A);
      },
      fatalRegex("monitor exit by a non-owner \\(JITLOCK_ENOT_OWNER\\)", Who,
                 A));
}

// The reproducer: an object inflated by a thread that then detaches and runs
// the pair while others contend. The detached thread's enter must abort.
TEST_F(CompiledMisuseDeathTest, DetachedPairUnderContentionAborts) {
  EmittedPair Code;
  ASSERT_TRUE(Code.built());
  MisuseLog Log;
  struct FrontDoor {
    const char *Name;
    InlineMonitorOp Enter, Exit;
  } Doors[] = {{"slow paths", slowEnter, slowExit},
               {"emitted x86_64", Code.enter(), Code.exit()}};
  for (const FrontDoor &D : Doors) {
    SCOPED_TRACE(D.Name);
    Obj *A = newObj();
    EXPECT_DEATH(runDetachedPairUnderContention(A, Log, D.Enter, D.Exit,
                                                /*contenders=*/4,
                                                /*iterations=*/2000),
                 fatalRegex("monitor enter \\(JITLOCK_ENOT_ATTACHED\\)",
                            NotAttached, A));
  }
}

//===----------------------------------------------------------------------===//
// JITLOCK_MISUSE_REPORT: report and continue
//===----------------------------------------------------------------------===//

class CompiledMisuseReportTest : public RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    if (!HasFatalFailure())
      reconfigureWithLog(Log, JITLOCK_MISUSE_REPORT);
  }

  MisuseLog Log;
};

TEST_F(CompiledMisuseReportTest, SlowPathsReturnTheCodesAndChangeNothing) {
  Obj *A = newObj(), *B = newObj();
  size_t N0 = Log.count();
  EXPECT_EQ(jitlock_rt_monitor_exit_slow(self, A), JITLOCK_ENOT_OWNER);
  EXPECT_EQ(jitlock_rt_monitor_enter_slow(self, nullptr), JITLOCK_ENULL);
  EXPECT_EQ(jitlock_rt_monitor_exit_slow(self, nullptr), JITLOCK_ENULL);
  EXPECT_EQ(jitlock_rt_monitor_enter_slow(nullptr, A), JITLOCK_ENOT_ATTACHED);
  int Detached[2] = {-1, -1};
  std::thread T([&] {
    Detached[0] = jitlock_rt_monitor_enter_slow(jitlock_rt_code_thread(), A);
    Detached[1] = jitlock_rt_monitor_exit_slow(jitlock_rt_code_thread(), A);
  });
  T.join();
  EXPECT_EQ(Detached[0], JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(Detached[1], JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(Log.count(), N0 + 6);
  EXPECT_EQ(A->hdr(), kUnlockedHeader);
  // The operations themselves, balanced, report nothing.
  ASSERT_EQ(jitlock_rt_monitor_enter_slow(self, A), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_monitor_enter_slow(self, B), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_monitor_enter_slow(self, A), JITLOCK_OK); // inflates A
  EXPECT_EQ(jitlock_rt_monitor_exit_slow(self, B), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_monitor_exit_slow(self, A), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_monitor_exit_slow(self, A), JITLOCK_OK);
  EXPECT_EQ(inspect(A).owner, nullptr) << describe(A);
  EXPECT_EQ(B->hdr(), kUnlockedHeader);
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_EQ(Log.count(), N0 + 6);
}

TEST_F(CompiledMisuseReportTest, EmittedUnbalancedExitIsReported) {
  EmittedPair Code;
  ASSERT_TRUE(Code.built());
  Obj *A = newObj(), *B = newObj();
  size_t N0 = Log.count();
  Code.enter()(self, B);
  Code.exit()(self, A);
  ASSERT_EQ(Log.count(), N0 + 1);
  MisuseRecord R = Log.last();
  EXPECT_EQ(R.status, JITLOCK_ENOT_OWNER) << st(R.status);
  EXPECT_EQ(R.thread, self);
  EXPECT_EQ(R.obj, A);
  EXPECT_EQ(A->hdr(), kUnlockedHeader);
  EXPECT_EQ(lockStack(self), std::vector<void *>{B});
  Code.exit()(self, B);
  EXPECT_EQ(B->hdr(), kUnlockedHeader);
  EXPECT_EQ(Log.count(), N0 + 1);
}

// The reproducer, reported instead: refused, and nobody deadlocks.
TEST_F(CompiledMisuseReportTest, DetachedPairUnderContentionIsRefused) {
  EmittedPair Code;
  ASSERT_TRUE(Code.built());
  runDetachedPairUnderContention(newObj(), Log, slowEnter, slowExit,
                                 /*contenders=*/4, /*iterations=*/2000);
  runDetachedPairUnderContention(newObj(), Log, Code.enter(), Code.exit(),
                                 /*contenders=*/4, /*iterations=*/2000);
}

// The C API is the interpreter's: its codes come back whatever the setting.
TEST_F(RuntimeTest, CApiReturnsCodesWhenCompiledCodeMisuseAborts) {
  Obj *A = newObj();
  EXPECT_EQ(jitlock_rt_monitor_exit(self, A), JITLOCK_ENOT_OWNER);
  EXPECT_EQ(jitlock_rt_monitor_enter(self, nullptr), JITLOCK_ENULL);
  int Rc[2] = {-1, -1};
  onDetachedThread(
      [&](jitlock_thread *T, void *O) {
        Rc[0] = jitlock_rt_monitor_enter(T, O);
        Rc[1] = jitlock_rt_monitor_exit(T, O);
      },
      A);
  EXPECT_EQ(Rc[0], JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(Rc[1], JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(A->hdr(), kUnlockedHeader);
}

TEST_F(RuntimeTest, UnknownCompiledCodeMisuseActionIsRefused) {
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  EXPECT_EQ(Cfg.compiled_code_misuse, uint32_t(JITLOCK_MISUSE_ABORT));
  Cfg.compiled_code_misuse = JITLOCK_MISUSE_REPORT + 1;
  EXPECT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_EINVAL);
  self = jitlock_rt_attach();
}

} // namespace
