//===- CoroutineTest.cpp - A coroutine that locks, resumed on other threads
//===//
//
// A switch-resume coroutine (LLVM's llvm.coro.* intrinsics), JIT-compiled in
// this process, locks one shared object on every step: through a
// synchronized callee the optimizer inlines, and inline, recursively. It
// records the thread it ran on (jitlock.thread()) and suspends. The main
// thread creates it, which runs step 0; then each further step is resumed by
// one of several attached worker threads, chosen at random (the seed is
// printed), while contender threads lock the same object in a loop, so that
// it is inflated and the steps take every path, monitor paths included.
//
// A coroutine that kept the thread it was created on (materialized once at
// its entry and spilled into the coroutine frame) would lock with another
// thread's lock stack and fail each check below:
//   * every step recorded the thread that resumed it;
//   * the counter the lock protects is exact;
//   * the runtime reported no misuse (a slow path called with another
//     thread's structure is refused with JITLOCK_ENOT_ATTACHED);
//   * every thread detaches, holding nothing, and nobody owns the object.
//
// Three routes to the same code: the JIT's own pipeline in tls and in call
// mode (the lowering waits for CoroSplit), and the module lowered by
// pipeline text first (a thread computed at each request), then given to
// the JIT, whose pipeline splits it.
//
// Environment: JITLOCK_CORO_SEED (default: from the clock).
//
//===----------------------------------------------------------------------===//
#include "jitlock/JIT.h"
#include "jitlock/Passes.h"
#include "jitlock/jitlock_rt.h"

#include "../Runtime/RuntimeTestUtil.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace jitlock;
using namespace llvm;

namespace {

constexpr int64_t NumSteps = 2000;
constexpr int NumResumers = 4;
constexpr int NumContenders = 3;
constexpr int64_t ContenderIterations = 20000;

/// @counter(obj, count, seen, n) is the coroutine: each of its n steps adds
/// 2 to *count under obj's monitor and stores the current thread in
/// seen[step]; it suspends between steps and at the end. @contend adds 1,
/// k times. @resume, @done and @destroy drive the coroutine from C++.
const char *const CoroutineIR = R"IR(
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare ptr @jitlock.thread()
declare ptr @malloc(i64)
declare void @free(ptr)

define internal void @locked_add(ptr %obj, ptr %count) {
entry:
  call void @jitlock.monitor.enter(ptr %obj)
  %c = load i64, ptr %count
  %c1 = add i64 %c, 1
  store i64 %c1, ptr %count
  call void @jitlock.monitor.exit(ptr %obj)
  ret void
}

define ptr @counter(ptr %obj, ptr %count, ptr %seen, i64 %n) presplitcoroutine {
entry:
  %id = call token @llvm.coro.id(i32 0, ptr null, ptr null, ptr null)
  %size = call i64 @llvm.coro.size.i64()
  %mem = call ptr @malloc(i64 %size)
  %hdl = call ptr @llvm.coro.begin(token %id, ptr %mem)
  br label %step
step:
  %i = phi i64 [ 0, %entry ], [ %i.next, %resumed ]
  call void @locked_add(ptr %obj, ptr %count)
  call void @jitlock.monitor.enter(ptr %obj)
  %t = call ptr @jitlock.thread()
  %slot = getelementptr ptr, ptr %seen, i64 %i
  store ptr %t, ptr %slot
  call void @jitlock.monitor.enter(ptr %obj)
  %c = load i64, ptr %count
  %c1 = add i64 %c, 1
  store i64 %c1, ptr %count
  call void @jitlock.monitor.exit(ptr %obj)
  call void @jitlock.monitor.exit(ptr %obj)
  %i.next = add i64 %i, 1
  %last = icmp eq i64 %i.next, %n
  br i1 %last, label %final, label %suspend
suspend:
  %s = call i8 @llvm.coro.suspend(token none, i1 false)
  switch i8 %s, label %end [ i8 0, label %resumed
                             i8 1, label %cleanup ]
resumed:
  br label %step
final:
  %f = call i8 @llvm.coro.suspend(token none, i1 true)
  switch i8 %f, label %end [ i8 0, label %trap
                             i8 1, label %cleanup ]
trap:
  unreachable
cleanup:
  %m = call ptr @llvm.coro.free(token %id, ptr %hdl)
  call void @free(ptr %m)
  br label %end
end:
  call i1 @llvm.coro.end(ptr %hdl, i1 false, token none)
  ret ptr %hdl
}

define void @contend(ptr %obj, ptr %count, i64 %k) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @locked_add(ptr %obj, ptr %count)
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %k
  br i1 %more, label %loop, label %out
out:
  ret void
}

define void @resume(ptr %hdl) {
  call void @llvm.coro.resume(ptr %hdl)
  ret void
}

define i64 @done(ptr %hdl) {
  %d = call i1 @llvm.coro.done(ptr %hdl)
  %r = zext i1 %d to i64
  ret i64 %r
}

define void @destroy(ptr %hdl) {
  call void @llvm.coro.destroy(ptr %hdl)
  ret void
}

declare token @llvm.coro.id(i32, ptr, ptr, ptr)
declare i64 @llvm.coro.size.i64()
declare ptr @llvm.coro.begin(token, ptr)
declare i8 @llvm.coro.suspend(token, i1)
declare ptr @llvm.coro.free(token, ptr)
declare i1 @llvm.coro.end(ptr, i1, token)
declare void @llvm.coro.resume(ptr)
declare i1 @llvm.coro.done(ptr)
declare void @llvm.coro.destroy(ptr)
)IR";

enum class Route { JitTls, JitCall, PipelineTextTls };

std::string routeName(const ::testing::TestParamInfo<Route> &Info) {
  switch (Info.param) {
  case Route::JitTls:
    return "JitTls";
  case Route::JitCall:
    return "JitCall";
  case Route::PipelineTextTls:
    return "PipelineTextTls";
  }
  return "Unknown";
}

/// The module text the JIT gets on `R`.
std::string moduleFor(Route R) {
  switch (R) {
  case Route::JitTls:
    return CoroutineIR;
  case Route::JitCall:
    return std::string(CoroutineIR) +
           "!llvm.module.flags = !{!0}\n"
           "!0 = !{i32 1, !\"jitlock.thread\", !\"call\"}\n";
  case Route::PipelineTextTls:
    break;
  }
  // What `opt -passes='jitlock-lower<thread=tls;tls-offset=N>'` does, with
  // this process's offset, before any coroutine pass has run.
  LLVMContext Ctx;
  SMDiagnostic Err;
  std::unique_ptr<Module> M = parseAssemblyString(CoroutineIR, Err, Ctx);
  if (!M)
    return "";
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  PassBuilder PB;
  registerPasses(PB, LoweringConfig());
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  ModulePassManager MPM;
  std::string Pipeline = "jitlock-lower<thread=tls;tls-offset=" +
                         std::to_string(L.thread_tls_offset) + ">";
  if (Error E = PB.parsePassPipeline(MPM, Pipeline)) {
    ADD_FAILURE() << toString(std::move(E));
    return "";
  }
  MPM.run(*M, MAM);
  std::string Text;
  raw_string_ostream OS(Text);
  M->print(OS, nullptr);
  return Text;
}

uint64_t seedFromEnvironment() {
  if (const char *S = std::getenv("JITLOCK_CORO_SEED"))
    return std::strtoull(S, nullptr, 0);
  return uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
}

class CoroutineResumeTest : public ::testing::TestWithParam<Route> {};

TEST_P(CoroutineResumeTest, LocksWithTheThreadThatResumesIt) {
  const uint64_t Seed = seedFromEnvironment();
  std::fprintf(stderr, "jitlock coroutine seed=%llu\n",
               (unsigned long long)Seed);
  RecordProperty("seed", std::to_string(Seed));

  jitlock_test::MisuseLog Misuses;
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.misuse_handler = jitlock_test::MisuseLog::handler;
  Cfg.misuse_ctx = &Misuses;
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);

  std::string Text = moduleFor(GetParam());
  ASSERT_FALSE(Text.empty());
  auto S = JitSession::loadBuffer(Text, "coroutine.ll");
  ASSERT_TRUE(!!S) << toString(S.takeError());
  // The JIT's pipeline split the coroutine.
  ASSERT_TRUE((*S)->definesFunction("counter.resume"));
  auto Create =
      (*S)->lookupFunction<void *(void *, int64_t *, void **, int64_t)>(
          "counter");
  ASSERT_TRUE(!!Create) << toString(Create.takeError());
  auto Resume = (*S)->lookupFunction<void(void *)>("resume");
  ASSERT_TRUE(!!Resume) << toString(Resume.takeError());
  auto Done = (*S)->lookupFunction<int64_t(void *)>("done");
  ASSERT_TRUE(!!Done) << toString(Done.takeError());
  auto Destroy = (*S)->lookupFunction<void(void *)>("destroy");
  ASSERT_TRUE(!!Destroy) << toString(Destroy.takeError());
  auto Contend =
      (*S)->lookupFunction<void(void *, int64_t *, int64_t)>("contend");
  ASSERT_TRUE(!!Contend) << toString(Contend.takeError());

  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  // The object: its header, unlocked. Static, so that a failed run that
  // leaves a monitor naming it does not leave the monitor dangling.
  alignas(16) static uint64_t Object[2];
  Object[0] = L.unlocked_value;
  Object[1] = 0;
  int64_t Count = 0;
  std::vector<void *> Seen(NumSteps, nullptr);
  // Who runs each step: step 0 the creator, then a random resumer.
  std::mt19937_64 Rng(Seed);
  std::vector<int> Resumer(NumSteps, -1);
  for (int64_t Step = 1; Step < NumSteps; ++Step)
    Resumer[Step] = int(Rng() % NumResumers);

  jitlock_thread *Creator = jitlock_rt_attach();
  ASSERT_NE(Creator, nullptr);
  std::vector<jitlock_thread *> Ran(NumSteps, nullptr);

  std::mutex Mu;
  std::condition_variable Turned;
  int64_t Turn = 0; // The next step to run.
  void *Handle = nullptr;
  std::vector<int> DetachStatus(NumResumers + NumContenders, -1);

  std::vector<std::thread> Threads;
  for (int W = 0; W < NumResumers; ++W)
    Threads.emplace_back([&, W] {
      jitlock_thread *Self = jitlock_rt_attach();
      for (;;) {
        int64_t Step;
        {
          std::unique_lock<std::mutex> Lock(Mu);
          Turned.wait(Lock, [&] {
            return Turn >= NumSteps || (Turn > 0 && Resumer[Turn] == W);
          });
          if (Turn >= NumSteps)
            break;
          Step = Turn;
        }
        (*Resume)(Handle);
        Ran[Step] = Self;
        {
          std::lock_guard<std::mutex> Lock(Mu);
          ++Turn;
        }
        Turned.notify_all();
      }
      DetachStatus[W] = jitlock_rt_detach();
    });
  for (int C = 0; C < NumContenders; ++C)
    Threads.emplace_back([&, C] {
      jitlock_rt_attach();
      (*Contend)(Object, &Count, ContenderIterations);
      DetachStatus[NumResumers + C] = jitlock_rt_detach();
    });

  // Step 0, on the creator; then the resumers take over.
  Handle = (*Create)(Object, &Count, Seen.data(), NumSteps);
  Ran[0] = Creator;
  {
    std::lock_guard<std::mutex> Lock(Mu);
    Turn = 1;
  }
  Turned.notify_all();
  for (std::thread &T : Threads)
    T.join();

  ASSERT_EQ(Turn, NumSteps);
  EXPECT_EQ((*Done)(Handle), 1) << "the coroutine did not reach its end";
  (*Destroy)(Handle);

  int64_t Wrong = 0;
  for (int64_t Step = 0; Step < NumSteps; ++Step)
    if (Seen[Step] != Ran[Step] && Wrong++ < 5)
      ADD_FAILURE() << "step " << Step << " ran on thread "
                    << jitlock_rt_thread_id(Ran[Step])
                    << " but locked as another thread";
  EXPECT_EQ(Wrong, 0) << "steps that used another thread (seed " << Seed << ")";
  EXPECT_EQ(Count, 2 * NumSteps + NumContenders * ContenderIterations)
      << "seed " << Seed;
  EXPECT_EQ(Misuses.count(), 0u)
      << "first misuse: " << jitlock_rt_status_name(Misuses.last().status)
      << " (" << Misuses.last().what << "), seed " << Seed;
  for (int Status : DetachStatus)
    EXPECT_EQ(Status, JITLOCK_OK) << jitlock_rt_status_name(Status);
  EXPECT_EQ(jitlock_rt_owner_of(Object), nullptr);
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
}

INSTANTIATE_TEST_SUITE_P(Routes, CoroutineResumeTest,
                         ::testing::Values(Route::JitTls, Route::JitCall,
                                           Route::PipelineTextTls),
                         routeName);

} // namespace
