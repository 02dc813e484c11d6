//===- DeoptTest.cpp - Deopt with lock restoration, end to end ------------===//
//
// Inputs/shapes.ll is JIT-compiled with the deopt runtime enabled; each
// shape's optimized version deoptimizes, the dispatcher decodes its stack map
// record and restores the frame's locks, and the Resume handler records the
// lock state and continues in the shape's baseline continuation. That state
// must be the one the baseline version (nothing elided) has at the same
// point, and the continuation's ordinary exits must leave every object
// unlocked. The caller holds a lock of its own around each call, which must
// never move.
//
//===----------------------------------------------------------------------===//
#include "DeoptTestUtil.h"

#include "llvm/Support/raw_ostream.h"

#include <random>

using namespace jitlock_test;
using namespace jitlock::deopt;

namespace {

class DeoptTest : public DeoptFixture {};

/// The lock state of the watched objects, named by their index: the
/// caller's lock stack and each object's holds and state.
struct LockState {
  std::vector<int> Stack;
  std::vector<uint64_t> Holds;
  std::vector<uint32_t> States;
  bool operator==(const LockState &) const = default;
};

thread_local std::vector<void *> ObservedObjs;
thread_local LockState Observed;

void probe() {
  LockState S;
  for (void *P : lockStack(jitlock_rt_current())) {
    auto It = std::find(ObservedObjs.begin(), ObservedObjs.end(), P);
    S.Stack.push_back(
        It == ObservedObjs.end() ? -1 : int(It - ObservedObjs.begin()));
  }
  for (void *O : ObservedObjs) {
    jitlock_lock_info I = inspect(O);
    S.Holds.push_back(I.owner == jitlock_rt_current() ? I.holds : 0);
    S.States.push_back(I.state);
  }
  Observed = S;
}

std::string show(const LockState &S) {
  std::string Out = "stack [";
  for (int I : S.Stack)
    Out += (I < 0 ? std::string("?") : std::string(1, char('a' + I))) + " ";
  Out += "] holds";
  for (size_t I = 0; I != S.Holds.size(); ++I)
    Out += " " + std::to_string(S.Holds[I]) + "/" + stateName(S.States[I]);
  return Out;
}

using Base = uint64_t (*)(void *, void *, void *, uint64_t, void (*)());

struct ShapeRun {
  LockState Restored, Unelided;
};

class DeoptShapes : public DeoptTest {
protected:
  /// Runs `Shape` optimized (deopting) and baseline, each on fresh objects
  /// (an array of `N`, the shape's a, b, c being the first three), inside a
  /// caller lock (the last watched object), and records what each holds at
  /// the deopt point.
  ShapeRun run(const std::string &Shape, size_t N = 3) {
    ShapeRun R;
    auto Opt = fn<OptFn>(Shape + ".opt");
    auto BaseVersion = fn<Base>(Shape + ".base");
    OnResume = probe;
    for (bool Optimized : {true, false}) {
      std::vector<Obj *> Objs = newObjArray(N + 1);
      Obj *Outer = Objs[N];
      ObservedObjs.assign(Objs.begin(), Objs.end());
      void *A = Objs[0], *B = N > 1 ? Objs[1] : nullptr,
           *C = N > 2 ? Objs[2] : nullptr;
      EXPECT_EQ(jitlock_rt_monitor_enter(self, Outer), JITLOCK_OK);
      uint64_t Before = deoptStats().Deopts;
      uint64_t Result = Optimized
                            ? callDeoptimizable(Opt, A, B, C, uint64_t(41))
                            : BaseVersion(A, B, C, 41, probe);
      EXPECT_EQ(Result, 42u);
      EXPECT_EQ(deoptStats().Deopts, Before + Optimized);
      (Optimized ? R.Restored : R.Unelided) = Observed;
      EXPECT_EQ(inspect(Outer).holds, 1u) << "the caller's lock";
      EXPECT_EQ(jitlock_rt_monitor_exit(self, Outer), JITLOCK_OK);
      for (Obj *O : Objs)
        EXPECT_EQ(inspect(O).owner, nullptr) << describe(O);
      EXPECT_EQ(Objs[0]->payload, 1u);
    }
    return R;
  }
};

TEST_F(DeoptShapes, ReorderedLockStack) {
  uint64_t Inflations = stats().inflations;
  ShapeRun R = run("reorder");
  EXPECT_EQ(R.Restored, R.Unelided) << show(R.Restored) << "\n"
                                    << show(R.Unelided);
  EXPECT_EQ(R.Restored.Stack, (std::vector<int>{3, 0, 1, 2}));
  EXPECT_EQ(stats().inflations, Inflations) << "nothing had to inflate";
}

TEST_F(DeoptShapes, ElidedInsideKept) {
  ShapeRun R = run("nested");
  EXPECT_EQ(R.Restored, R.Unelided) << show(R.Restored) << "\n"
                                    << show(R.Unelided);
  EXPECT_EQ(R.Restored.Stack, (std::vector<int>{3, 0, 1}));
}

TEST_F(DeoptShapes, KeptInsideElided) {
  // Relocking the outer b must not push it above the kept a: the fast exit
  // of a that follows would then find b on top.
  uint64_t Inflations = stats().inflations;
  ShapeRun R = run("outer");
  EXPECT_EQ(R.Restored, R.Unelided) << show(R.Restored) << "\n"
                                    << show(R.Unelided);
  EXPECT_EQ(R.Restored.Stack, (std::vector<int>{3, 1, 0}));
  EXPECT_EQ(stats().inflations, Inflations);
}

TEST_F(DeoptShapes, Recursion) {
  uint64_t Inflations = stats().inflations;
  ShapeRun R = run("recursive");
  EXPECT_EQ(R.Restored, R.Unelided) << show(R.Restored) << "\n"
                                    << show(R.Unelided);
  EXPECT_EQ(R.Restored.Stack, (std::vector<int>{3, 0, 0, 0}));
  EXPECT_EQ(R.Restored.Holds[0], 3u);
  EXPECT_EQ(R.Restored.States[0], uint32_t(JITLOCK_STATE_FAST));
  EXPECT_EQ(stats().inflations, Inflations);
}

TEST_F(DeoptShapes, AtAnEnter) {
  ShapeRun R = run("atenter");
  EXPECT_EQ(R.Restored, R.Unelided) << show(R.Restored) << "\n"
                                    << show(R.Unelided);
  // At the enter the frame holds a once and b once, both fast; c is free.
  EXPECT_EQ(R.Restored.Holds, (std::vector<uint64_t>{1, 1, 0, 1}));
  EXPECT_EQ(R.Restored.Stack, (std::vector<int>{3, 0, 1}));
}

TEST_F(DeoptShapes, FullLockStack) {
  // Ten objects and the caller's: the stack is full either way. Every
  // object is held once; which ones went to a monitor may differ
  // (docs/deopt.md), but the stack keeps the frame's order.
  ShapeRun R = run("full", 10);
  EXPECT_EQ(R.Restored.Holds, R.Unelided.Holds) << show(R.Restored) << "\n"
                                                << show(R.Unelided);
  EXPECT_EQ(R.Restored.Holds, std::vector<uint64_t>(11, 1));
  EXPECT_EQ(R.Restored.Stack.size(), kCapacity);
  std::vector<int> Frame;
  for (int I : R.Restored.Stack)
    if (I != 10)
      Frame.push_back(I);
  EXPECT_TRUE(std::is_sorted(Frame.begin(), Frame.end())) << show(R.Restored);
  std::cout << "restored:  " << show(R.Restored)
            << "\nunelided:  " << show(R.Unelided) << "\n";
}

TEST_F(DeoptTest, DirectLocationOnTheOptimizedFrame) {
  Obj *A = newObj();
  auto Opt = fn<OptFn>("local.opt");
  ObservedObjs = {A};
  uint64_t Result = callDeoptimizable(Opt, (void *)A, (void *)nullptr,
                                      (void *)nullptr, uint64_t(41));
  EXPECT_EQ(Result, 42u);
  const DeoptFrame &F = lastFrame();
  ASSERT_EQ(F.Values.size(), 4u);
  EXPECT_EQ(F.Values[0], uint64_t(uintptr_t(A)));
  EXPECT_EQ(F.Values[2], 123456789012u) << "the ConstantIndex operand";
  EXPECT_EQ(F.Values[3], 41u);
  ASSERT_EQ(F.Monitors.size(), 2u);
  EXPECT_EQ(uint64_t(uintptr_t(F.Monitors[1].obj)), F.Values[1]);
  EXPECT_EQ(F.Monitors[1].kind, uint32_t(JITLOCK_RELOCK_ELIDED));
  // The local object lived in the optimized frame, below the stub's.
  EXPECT_EQ(restoredStack(), (std::vector<void *>{A, F.Monitors[1].obj}));
  EXPECT_TRUE(lockStack(self).empty());
}

TEST_F(DeoptTest, RestoreFailureReleasesTheFrameInnermostFirst) {
  Obj *A = newObj(), *B = newObj(), *C = newObj(), *Outer = newObj();
  MisuseLog Log;
  reconfigureWithLog(Log);
  ASSERT_EQ(jitlock_rt_monitor_enter(self, Outer), JITLOCK_OK);
  uint64_t Result = callDeoptimizable(fn<OptFn>("lying.opt"), (void *)A,
                                      (void *)B, (void *)C, uint64_t(41));
  EXPECT_EQ(Result, FailedResult);
  ASSERT_EQ(failures().size(), 1u);
  RecordedFailure F = failures()[0];
  EXPECT_EQ(F.Kind, FailureKind::RestoreFailed);
  EXPECT_EQ(F.Status, JITLOCK_EINVAL) << F.Message;
  // c was never held: its exit is refused; b then a are released.
  EXPECT_EQ(F.Released, (std::vector<void *>{B, A}));
  EXPECT_EQ(lockStack(self), std::vector<void *>{Outer});
  for (Obj *O : {A, B, C})
    EXPECT_EQ(inspect(O).state, uint32_t(JITLOCK_STATE_UNLOCKED))
        << describe(O);
  EXPECT_EQ(jitlock_rt_monitor_exit(self, Outer), JITLOCK_OK);
  EXPECT_GE(Log.count(), 1u) << "the refused restore is reported as misuse";
}

TEST_F(DeoptTest, NotEnteredThroughItsOwnEntry) {
  // The entry called another function than the one that deoptimizes.
  Obj *A = newObj(), *B = newObj();
  auto Opt = fn<OptFn>("nested.opt");
  uint64_t Result = callDeoptimizable(
      +[](void *A, void *B, void *C, uint64_t X) -> uint64_t {
        return DeoptFixture::fn<OptFn>("nested.opt")(A, B, C, X);
      },
      (void *)A, (void *)B, (void *)nullptr, uint64_t(1));
  (void)Opt;
  EXPECT_EQ(Result, FailedResult);
  ASSERT_EQ(failures().size(), 1u);
  EXPECT_EQ(failures()[0].Kind, FailureKind::NotEntered);
  // The failure leaves the frame's lock to the embedder.
  EXPECT_EQ(jitlock_rt_monitor_exit(self, A), JITLOCK_OK);
}

TEST_F(DeoptTest, NoDeoptReturnsNormally) {
  Obj *A = newObj(), *B = newObj(), *C = newObj();
  uint64_t Before = deoptStats().Deopts;
  EXPECT_EQ(callDeoptimizable(fn<OptFn>("reorder.opt"), (void *)A, (void *)B,
                              (void *)C, uint64_t(0)),
            0u);
  EXPECT_EQ(deoptStats().Deopts, Before);
  EXPECT_EQ(A->payload, 1u);
  EXPECT_TRUE(lockStack(self).empty());
}

} // namespace

namespace {

TEST(StackMapTableTest, MalformedSectionsAreRefused) {
  StackMapTable Table;
  std::string Error;
  // Too short, another version, and counts the bytes cannot hold.
  EXPECT_FALSE(Table.addSection({}, 1, Error));
  std::vector<uint8_t> V2(16, 0);
  V2[0] = 2;
  EXPECT_FALSE(Table.addSection(V2, 1, Error));
  std::vector<uint8_t> Header(16, 0);
  Header[0] = 3;
  Header[12] = 1; // one record, no bytes for it
  EXPECT_FALSE(Table.addSection(Header, 1, Error));
  EXPECT_NE(Error.find("truncated"), std::string::npos) << Error;
  Header[12] = 0;
  Header[4] = 1; // one function, no bytes for it
  EXPECT_FALSE(Table.addSection(Header, 1, Error));
  // Random bytes: refused or indexed, never a crash.
  uint64_t Seed = std::random_device()();
  std::printf("seed %llu\n", (unsigned long long)Seed);
  std::mt19937_64 Rng(Seed);
  for (int I = 0; I != 2000; ++I) {
    std::vector<uint8_t> Bytes(Rng() % 200);
    for (uint8_t &B : Bytes)
      B = uint8_t(Rng() % 4 ? Rng() % 3 : Rng());
    if (!Bytes.empty())
      Bytes[0] = 3;
    Table.addSection(Bytes, 2, Error);
    Table.removeSections(2);
  }
  EXPECT_EQ(Table.numRecords(), 0u);
}

/// A version 3 section with one function at `Function` and one record at
/// offset 16 whose locations are the statepoint header and `Deopt`, each
/// {kind, dwarf register, value}.
std::vector<uint8_t>
sectionWith(uint64_t Function,
            std::vector<std::tuple<uint8_t, uint16_t, int32_t>> Deopt) {
  std::vector<uint8_t> B;
  auto Put = [&](uint64_t V, unsigned Size) {
    for (unsigned I = 0; I != Size; ++I)
      B.push_back(uint8_t(V >> (8 * I)));
  };
  Put(3, 4), Put(1, 4), Put(0, 4), Put(1, 4); // header: 1 function, 1 record
  Put(Function, 8), Put(16, 8), Put(1, 8);    // address, stack size, records
  std::vector<std::tuple<uint8_t, uint16_t, int32_t>> Locs = {
      {4, 0, 0}, {4, 0, 0}, {4, 0, int32_t(Deopt.size())}};
  Locs.insert(Locs.end(), Deopt.begin(), Deopt.end());
  Put(0x1234, 8), Put(16, 4), Put(0, 2), Put(Locs.size(), 2);
  for (auto [Kind, Reg, Value] : Locs)
    Put(Kind, 1), Put(0, 1), Put(8, 2), Put(Reg, 2), Put(0, 2),
        Put(uint32_t(Value), 4);
  while (B.size() % 8)
    B.push_back(0);
  Put(0, 2), Put(0, 2); // padding, no live-outs
  while (B.size() % 8)
    B.push_back(0);
  return B;
}

TEST(StackMapTableTest, Decoding) {
  constexpr uint8_t Register = 1, Direct = 2, Indirect = 3, Constant = 4;
  constexpr int32_t Marker = int32_t(MonitorsMarker);
  uint64_t Slot = 0x5151;
  SavedRegisters Regs{};
  Regs.Regs[3] = 0xabc;                            // rbx / x3
  Regs.Regs[7] = uint64_t(uintptr_t(&Slot)) - 8;   // rsp
  Regs.Regs[31] = uint64_t(uintptr_t(&Slot)) - 16; // sp
  Regs.Regs[20] = 0x20;                            // x20
  StackMapTable Table;
  std::string Error;
  // x86_64: rbx, [rsp + 8], rsp + 8, then the group [rbx held].
  ASSERT_TRUE(Table.addSection(sectionWith(0x1000, {{Register, 3, 0},
                                                    {Indirect, 7, 8},
                                                    {Direct, 7, 8},
                                                    {Constant, 0, -5},
                                                    {Constant, 0, Marker},
                                                    {Constant, 0, 1},
                                                    {Register, 3, 0},
                                                    {Constant, 0, 0}}),
                               1, Error))
      << Error;
  DeoptFrame F;
  ASSERT_TRUE(Table.decodeFrame(0x1010, Regs, F, Error, Arch::X86_64)) << Error;
  EXPECT_EQ(F.FunctionAddress, 0x1000u);
  EXPECT_EQ(F.RecordID, 0x1234u);
  EXPECT_EQ(F.Values,
            (std::vector<uint64_t>{0xabc, 0x5151, uint64_t(uintptr_t(&Slot)),
                                   uint64_t(-5)}));
  ASSERT_EQ(F.Monitors.size(), 1u);
  EXPECT_EQ(F.Monitors[0].obj, (void *)0xabc);
  // rbx is DWARF 3 on x86_64, but x3 is not preserved on AArch64.
  EXPECT_FALSE(Table.decodeFrame(0x1010, Regs, F, Error, Arch::AArch64));
  EXPECT_NE(Error.find("does not preserve"), std::string::npos) << Error;
  // AArch64: x20 and [sp + 16].
  ASSERT_TRUE(Table.addSection(sectionWith(0x2000, {{Register, 20, 0},
                                                    {Indirect, 31, 16},
                                                    {Constant, 0, Marker},
                                                    {Constant, 0, 0}}),
                               2, Error))
      << Error;
  ASSERT_TRUE(Table.decodeFrame(0x2010, Regs, F, Error, Arch::AArch64))
      << Error;
  EXPECT_EQ(F.Values, (std::vector<uint64_t>{0x20, 0x5151}));
  EXPECT_TRUE(F.Monitors.empty());
  // No group, a group whose count misses the end, a kind that is neither.
  for (auto Deopt :
       std::vector<std::vector<std::tuple<uint8_t, uint16_t, int32_t>>>{
           {{Constant, 0, 7}},
           {{Constant, 0, Marker},
            {Constant, 0, 2},
            {Register, 3, 0},
            {Constant, 0, 1}},
           {{Constant, 0, Marker},
            {Constant, 0, 1},
            {Register, 3, 0},
            {Constant, 0, 2}}}) {
    ASSERT_TRUE(Table.addSection(sectionWith(0x3000, Deopt), 3, Error));
    EXPECT_FALSE(Table.decodeFrame(0x3010, Regs, F, Error, Arch::X86_64));
    EXPECT_FALSE(Error.empty());
    Table.removeSections(3);
  }
  // The same return address twice is refused; an unknown one has no record.
  EXPECT_FALSE(Table.addSection(sectionWith(0x2000, {}), 4, Error));
  EXPECT_FALSE(Table.decodeFrame(0x4242, Regs, F, Error, Arch::X86_64));
  EXPECT_NE(Error.find("no stack map record"), std::string::npos) << Error;
}

TEST(StackMapTableTest, RecordsGoWithTheirCode) {
  size_t Before = StackMapTable::global().numRecords();
  {
    jitlock::JitOptions Opts;
    Opts.ConfigureJit = enableDeopt;
    auto S = jitlock::JitSession::loadFile(
        JITLOCK_DEOPT_INPUTS_DIR "/shapes.ll", Opts);
    ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
    auto Addr = (*S)->lookup("reorder.opt");
    ASSERT_TRUE(bool(Addr)) << llvm::toString(Addr.takeError());
    // Every .opt function has one deopt record.
    EXPECT_GE(StackMapTable::global().numRecords(), Before + 8);
  }
  EXPECT_EQ(StackMapTable::global().numRecords(), Before);
}

} // namespace

//===----------------------------------------------------------------------===//
// The real pipeline: the frontend's IR, elided and described by the passes
//===----------------------------------------------------------------------===//

namespace {

/// Frontend IR: no group in the bundle, nothing elided by hand. At O2
/// jitlock-elide removes the nested re-entry of a and the lock of the
/// temporary t (it never escapes), and jitlock-deopt-state appends the group
/// [a held, a elided, t elided] to the bundle.
constexpr const char *FrontendIR = R"(
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare noalias ptr @deopt_test_new_object(i64)
declare i64 @llvm.experimental.deoptimize.i64(...)

define i64 @work.opt(ptr %a, i64 %x) {
entry:
  %t = call ptr @deopt_test_new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %t)
  %d = icmp ne i64 %x, 0
  br i1 %d, label %deopt, label %done
deopt:
  %r = call i64 (...) @llvm.experimental.deoptimize.i64() [ "deopt"(ptr %a, ptr %t, i64 %x) ]
  ret i64 %r
done:
  call void @jitlock.monitor.exit(ptr %t)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret i64 %x
}

define i64 @work.cont(ptr %a, ptr %t, i64 %x) {
  call void @jitlock.monitor.exit(ptr %t)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  %r = add i64 %x, 1
  ret i64 %r
}
)";

Obj Temporaries[4];
std::atomic<unsigned> NumTemporaries{0};

using ContFn = uint64_t (*)(void *, void *, uint64_t);
ContFn PipelineCont;

class DeoptPipeline : public RuntimeTest {};

TEST_F(DeoptPipeline, FrontendIRThroughThePasses) {
  jitlock::JitOptions Opts;
  Opts.ConfigureJit = enableDeopt;
  auto S = jitlock::JitSession::loadBuffer(FrontendIR, "frontend.ll", Opts);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  // The passes elided two enters and described the frame.
  std::string IR;
  llvm::raw_string_ostream OS(IR);
  (*S)->printIR(OS);
  EXPECT_NE(IR.find("i32 1246514481, i32 3"), std::string::npos) << IR;
  auto Opt = (*S)->lookupFunction<uint64_t(void *, uint64_t)>("work.opt");
  auto Cont =
      (*S)->lookupFunction<uint64_t(void *, void *, uint64_t)>("work.cont");
  ASSERT_TRUE(Opt && Cont);
  PipelineCont = *Cont;

  static DeoptFrame Frame;
  static std::vector<void *> Restored;
  DeoptHandlers H;
  H.Resume = [](const DeoptFrame &F, void *) -> uint64_t {
    Frame = F;
    Restored = lockStack(jitlock_rt_current());
    return PipelineCont(reinterpret_cast<void *>(F.Values[0]),
                        reinterpret_cast<void *>(F.Values[1]), F.Values[2]);
  };
  setDeoptHandlers(&H);
  Obj *A = newObj();
  uint64_t Inflations = stats().inflations;
  EXPECT_EQ(callDeoptimizable(*Opt, (void *)A, uint64_t(41)), 42u);
  setDeoptHandlers(nullptr);

  Obj *T = &Temporaries[0];
  ASSERT_EQ(NumTemporaries.load(), 1u);
  ASSERT_EQ(Frame.Monitors.size(), 3u);
  EXPECT_EQ(Frame.Monitors[0].obj, (void *)A);
  EXPECT_EQ(Frame.Monitors[0].kind, uint32_t(JITLOCK_RELOCK_HELD));
  EXPECT_EQ(Frame.Monitors[1].obj, (void *)A);
  EXPECT_EQ(Frame.Monitors[1].kind, uint32_t(JITLOCK_RELOCK_ELIDED));
  EXPECT_EQ(Frame.Monitors[2].obj, (void *)T);
  EXPECT_EQ(Frame.Monitors[2].kind, uint32_t(JITLOCK_RELOCK_ELIDED));
  // Exactly the unelided frame's lock stack, with nothing inflated.
  EXPECT_EQ(Restored, (std::vector<void *>{A, A, T}));
  EXPECT_EQ(stats().inflations, Inflations);
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_EQ(inspect(A).state, uint32_t(JITLOCK_STATE_UNLOCKED));
  EXPECT_EQ(inspect(T).state, uint32_t(JITLOCK_STATE_UNLOCKED));
}

} // namespace

/// The frontend's allocation function, found by the JIT in this process.
extern "C" void *deopt_test_new_object(uint64_t) {
  unsigned I = NumTemporaries.fetch_add(1);
  return I < 4 ? &Temporaries[I] : nullptr;
}
