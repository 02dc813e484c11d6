//===- ElidedHoldsTest.cpp - The holds a debugger reports under elision ---===//
//
// A program re-enters `a` inside its own `synchronized (a)` in each of 20
// nested frames and, at the bottom, asks how often it holds `a`. Compiled at
// O2 through the JIT library, jitlock-elide removes each frame's nested
// re-entry, so the runtime's own queries count 20 holds where the source
// took 40. holdsWithElided adds the ELIDED entries that the stack map
// records of the 20 compiled frames list at their calls, and reports 40:
// from the thread itself, and for another thread stopped inside a safepoint.
// With elision off the runtime counts 40 by itself, and nothing is elided.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include "jitlock/Deopt.h"
#include "jitlock/JIT.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

using namespace jitlock_test;
using namespace jitlock::deopt;

namespace {

/// nest(a, n): synchronized (a) { synchronized (a) { n == 1 ? bottom(a) :
/// nest(a, n - 1) + 1 } }. Every call carries a "deopt" bundle, so that the
/// record at each return address lists its frame's monitors.
constexpr const char *NestIR = R"(
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare i64 @elided_holds_test_bottom(ptr)

define i64 @nest(ptr %a, i64 %n) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  %last = icmp eq i64 %n, 1
  br i1 %last, label %bottom, label %deeper
bottom:
  %q = call i64 @elided_holds_test_bottom(ptr %a) [ "deopt"(i64 %n) ]
  br label %out
deeper:
  %m = sub i64 %n, 1
  %r = call i64 @nest(ptr %a, i64 %m) [ "deopt"(i64 %n) ]
  %r1 = add i64 %r, 1
  br label %out
out:
  %v = phi i64 [ %q, %bottom ], [ %r1, %deeper ]
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret i64 %v
}
)";

constexpr uint64_t Depth = 20;

/// What the bottom of the nest saw, on the thread that ran it.
struct BottomView {
  uint64_t Plain = 0; ///< jitlock_rt_inspect's holds
  SourceHolds Exact;
  bool WalkOk = false;
  std::string Error;
  size_t CompiledFrames = 0;
};
thread_local BottomView Bottom;

/// When set, the bottom also stops its thread (native, so that a safepoint
/// need not wait for it) until released, after publishing where its stack
/// is.
struct StopAtBottom {
  std::mutex Lock;
  std::condition_variable Changed;
  bool Stopped = false, Released = false;
  jitlock_thread *Thread = nullptr;
  uint64_t FramePointer = 0;
};
StopAtBottom *Stop = nullptr;

std::unique_ptr<jitlock::JitSession> compile(bool Elide) {
  jitlock::JitOptions Opts;
  Opts.Elide = Elide;
  Opts.FramePointers = true;
  Opts.ConfigureJit = enableDeopt;
  auto S = jitlock::JitSession::loadBuffer(NestIR, "nest.ll", Opts);
  EXPECT_TRUE(bool(S)) << llvm::toString(S.takeError());
  return S ? std::move(*S) : nullptr;
}

using NestFn = uint64_t (*)(void *, uint64_t);

class ElidedHoldsTest : public RuntimeTest {
protected:
  /// Runs nest(a, Depth) on this thread; returns what its bottom saw.
  BottomView runNest(bool Elide) {
    auto S = compile(Elide);
    if (!S)
      return {};
    auto Nest = S->lookupFunction<uint64_t(void *, uint64_t)>("nest");
    EXPECT_TRUE(bool(Nest)) << llvm::toString(Nest.takeError());
    if (!Nest)
      return {};
    Obj *A = newObj();
    Bottom = {};
    EXPECT_EQ((*Nest)(A, Depth), Depth - 1);
    // Released (20 holds outgrow the lock stack, so it stays a free
    // monitor until deflated).
    EXPECT_EQ(inspect(A).owner, nullptr) << describe(A);
    return Bottom;
  }
};

TEST_F(ElidedHoldsTest, TheThreadItselfCountsTheElidedHolds) {
  BottomView V = runNest(/*Elide=*/true);
  ASSERT_TRUE(V.WalkOk) << V.Error;
  // The plain query sees the holds left in the code: one per frame.
  EXPECT_EQ(V.Plain, Depth);
  EXPECT_EQ(V.Exact.Runtime, Depth);
  EXPECT_EQ(V.Exact.Elided, Depth);
  EXPECT_EQ(V.Exact.total(), 2 * Depth);
  EXPECT_EQ(V.CompiledFrames, Depth);
}

TEST_F(ElidedHoldsTest, WithoutElisionThePlainQueryIsExact) {
  BottomView V = runNest(/*Elide=*/false);
  ASSERT_TRUE(V.WalkOk) << V.Error;
  EXPECT_EQ(V.Plain, 2 * Depth);
  EXPECT_EQ(V.Exact.Runtime, 2 * Depth);
  EXPECT_EQ(V.Exact.Elided, 0u);
  EXPECT_EQ(V.CompiledFrames, Depth);
}

TEST_F(ElidedHoldsTest, AnotherThreadStoppedInASafepoint) {
  auto S = compile(/*Elide=*/true);
  ASSERT_TRUE(S);
  auto Nest = S->lookupFunction<uint64_t(void *, uint64_t)>("nest");
  ASSERT_TRUE(bool(Nest)) << llvm::toString(Nest.takeError());
  Obj *A = newObj();
  StopAtBottom Stopper;
  Stop = &Stopper;
  uint64_t Result = 0;
  std::thread Worker([&] {
    ASSERT_NE(jitlock_rt_attach(), nullptr);
    Result = (*Nest)(A, Depth);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
  std::unique_lock<std::mutex> G(Stopper.Lock);
  Stopper.Changed.wait(G, [&] { return Stopper.Stopped; });
  G.unlock();

  // The worker is joined below whatever happens: no ASSERT until then.
  EXPECT_EQ(jitlock_rt_enter_native(self), JITLOCK_OK);
  int Began = jitlock_rt_safepoint_begin();
  EXPECT_EQ(Began, JITLOCK_OK);
  SourceHolds Holds;
  std::string Error;
  bool Ok =
      holdsWithElided(Stopper.Thread, Stopper.FramePointer, A, Holds, Error);
  jitlock_lock_info Info{};
  int Inspected = jitlock_rt_inspect(A, &Info);
  // And for this thread, which holds nothing: no compiled frame, no hold.
  SourceHolds Mine;
  std::string MyError;
  bool MineOk = currentHoldsWithElided(A, Mine, MyError);
  if (Began == JITLOCK_OK)
    EXPECT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_leave_native(self), JITLOCK_OK);

  G.lock();
  Stopper.Released = true;
  G.unlock();
  Stopper.Changed.notify_all();
  Worker.join();
  Stop = nullptr;

  EXPECT_EQ(Result, Depth - 1);
  ASSERT_TRUE(Ok) << Error;
  EXPECT_EQ(Inspected, JITLOCK_OK);
  EXPECT_EQ(Info.owner, Stopper.Thread);
  EXPECT_EQ(Info.holds, Depth);
  EXPECT_EQ(Holds.Runtime, Depth);
  EXPECT_EQ(Holds.Elided, Depth);
  EXPECT_EQ(Holds.total(), 2 * Depth);
  ASSERT_TRUE(MineOk) << MyError;
  EXPECT_EQ(Mine.total(), 0u);
  EXPECT_EQ(inspect(A).owner, nullptr) << describe(A);
}

TEST_F(ElidedHoldsTest, BadInputIsRefused) {
  Obj *A = newObj();
  SourceHolds H;
  std::string Error;
  // A frame pointer that is not on the thread's stack.
  uint64_t Local = 0;
  EXPECT_FALSE(
      holdsWithElided(self, uint64_t(uintptr_t(&Local)) + 1, A, H, Error));
  EXPECT_NE(Error.find("not on the thread's stack"), std::string::npos)
      << Error;
  EXPECT_FALSE(holdsWithElided(self, 0x1000, A, H, Error));
  // A frame pointer in a thread's protected guard zones, which a read
  // would fault on.
  std::thread([&] {
    jitlock_thread *T = jitlock_rt_attach();
    ASSERT_NE(T, nullptr);
    jitlock_stack_info Info{};
    ASSERT_EQ(jitlock_rt_stack_info(T, &Info), JITLOCK_OK);
    // (Only where they are protected: a read elsewhere would not fault.)
    if (Info.protected_zones) {
      std::string E;
      SourceHolds Ignored;
      EXPECT_FALSE(holdsWithElided(T, Info.end + 64, A, Ignored, E));
      EXPECT_NE(E.find("outside its guard zones"), std::string::npos) << E;
    }
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  }).join();
  // No thread, no object.
  EXPECT_FALSE(holdsWithElided(nullptr, 0, A, H, Error));
  EXPECT_FALSE(currentHoldsWithElided(nullptr, H, Error));
  EXPECT_NE(Error.find("JITLOCK_ENULL"), std::string::npos) << Error;
  // Outside compiled code the walk finds no frame, and the runtime's count
  // stands.
  ASSERT_EQ(enter(A), JITLOCK_OK);
  EXPECT_TRUE(currentHoldsWithElided(A, H, Error)) << Error;
  EXPECT_EQ(H.Runtime, 1u);
  EXPECT_EQ(H.Elided, 0u);
  ASSERT_EQ(exit(A), JITLOCK_OK);
}

} // namespace

/// The bottom of the nest, found by the JIT in this process. It keeps a
/// frame pointer (the suite is built with them), so that the walk from
/// currentHoldsWithElided's frame reaches the compiled frames through it.
extern "C" uint64_t elided_holds_test_bottom(void *A) {
  jitlock_lock_info Info{};
  jitlock_rt_inspect(A, &Info);
  Bottom.Plain = Info.owner == jitlock_rt_current() ? Info.holds : 0;
  Bottom.WalkOk = currentHoldsWithElided(A, Bottom.Exact, Bottom.Error);
  std::vector<DeoptFrame> Frames;
  std::string Error;
  if (walkCompiledFrames(jitlock_rt_current(),
                         reinterpret_cast<uint64_t>(__builtin_frame_address(0)),
                         Frames, Error))
    Bottom.CompiledFrames = Frames.size();
  if (StopAtBottom *S = Stop) {
    jitlock_thread *Self = jitlock_rt_current();
    std::unique_lock<std::mutex> G(S->Lock);
    S->Thread = Self;
    S->FramePointer = reinterpret_cast<uint64_t>(__builtin_frame_address(0));
    S->Stopped = true;
    S->Changed.notify_all();
    EXPECT_EQ(jitlock_rt_enter_native(Self), JITLOCK_OK);
    S->Changed.wait(G, [&] { return S->Released; });
    G.unlock();
    EXPECT_EQ(jitlock_rt_leave_native(Self), JITLOCK_OK);
  }
  return 0;
}
