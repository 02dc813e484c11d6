//===- ReservedEmitterTest.cpp - x86_64 reserved enter and exit ---------===//
//
// The x86_64 emitter's sequences for a layout in JITLOCK_LOCKING_RESERVED,
// executed natively: the scenarios of ReservedScenarios.h for every sampled
// register assignment, with and without the third scratch register; the
// listing of the R1 and R4 paths, which has no atomic instruction; threads
// that hold their own reserved objects while they contend for a shared one
// through the lightweight path and the runtime; and threads that race to
// reserve fresh objects (R2) and then revoke each other's (R3).
//
//===----------------------------------------------------------------------===//
#include "EmitterTestUtil.h"
#include "ReservedScenarios.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

namespace {

using namespace emit_test;
using namespace rsv_test;

using SequenceFn = void (*)(void *Obj, jitlock_thread *Thread);

/// void fn(void *obj, jitlock_thread *thread): the callee-saved registers
/// saved, obj and thread moved into the assignment's registers, one
/// sequence (out of line), restored.
SequenceFn buildSequence(const Assignment &As, bool Enter,
                         const jitlock_rt_layout &L, const RuntimeEntries &RT) {
  CodeHolder Code;
  Code.init(jit().environment());
  x86::Assembler A(&Code);
  const x86::Gp Saved[] = {x86::rbx, x86::rbp, x86::r12,
                           x86::r13, x86::r14, x86::r15};
  for (const x86::Gp &R : Saved)
    A.push(R);
  A.push(x86::rdi);
  A.push(x86::rsi);
  A.pop(As.Thread);
  A.pop(As.Obj);
  Error E = Enter ? jx::emitMonitorEnter(A, L, As.operands(),
                                         SlowPathMode::OutOfLine, nullptr, RT)
                  : jx::emitMonitorExit(A, L, As.operands(),
                                        SlowPathMode::OutOfLine, nullptr, RT);
  EXPECT_EQ(E, kErrorOk) << As.str();
  if (E)
    return nullptr;
  for (size_t I = std::size(Saved); I-- > 0;)
    A.pop(Saved[I]);
  A.ret();
  SequenceFn Fn = nullptr;
  EXPECT_EQ(jit().add(&Fn, &Code), kErrorOk);
  return Fn;
}

class X64Driver : public Driver {
public:
  X64Driver(const Assignment &As, const RuntimeEntries &RT) {
    EnterFn = buildSequence(As, true, reservedLayout(), RT);
    ExitFn = buildSequence(As, false, reservedLayout(), RT);
  }
  ~X64Driver() override {
    if (EnterFn)
      jit().release(EnterFn);
    if (ExitFn)
      jit().release(ExitFn);
  }
  bool ok() const { return EnterFn && ExitFn; }
  void run(bool Enter, void *Obj, jitlock_thread *Thread) override {
    callJit(Enter ? EnterFn : ExitFn, Obj, Thread);
  }

private:
  SequenceFn EnterFn = nullptr, ExitFn = nullptr;
};

class ReservedEmitter : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(configureReserved());
    ASSERT_NE(jitlock_rt_attach(), nullptr);
  }
  void TearDown() override { jitlock_rt_detach(); }
};

TEST_F(ReservedEmitter, ScenariosOverRegisters) {
  for (const Assignment &As : sampleAssignmentsOfBothForms()) {
    X64Driver D(As, countingEntries());
    ASSERT_TRUE(D.ok()) << As.str();
    runReservedScenarios(D, "x86_64 " + As.str());
    if (HasFatalFailure())
      return;
    runLostRace(D, "x86_64 " + As.str());
    if (HasFatalFailure())
      return;
  }
}

/// The listing of one sequence, for the rsi/rdi assignment.
std::vector<std::string> listing(bool Enter, const jitlock_rt_layout &L) {
  CodeHolder Code;
  Code.init(jit().environment());
  StringLogger Log;
  Code.setLogger(&Log);
  x86::Assembler A(&Code);
  const Assignment As{x86::rdi, x86::rsi, x86::rcx};
  RuntimeEntries RT = countingEntries();
  Error E = Enter ? jx::emitMonitorEnter(A, L, As.operands(),
                                         SlowPathMode::OutOfLine, nullptr, RT)
                  : jx::emitMonitorExit(A, L, As.operands(),
                                        SlowPathMode::OutOfLine, nullptr, RT);
  EXPECT_EQ(E, kErrorOk);
  return listingLines(Log.data());
}

BranchKind x86Branch(const std::string &Mnemonic) {
  if (Mnemonic == "ret")
    return BranchKind::Return;
  if (Mnemonic == "jmp")
    return BranchKind::Always;
  return Mnemonic[0] == 'j' ? BranchKind::Conditional : BranchKind::None;
}

std::vector<std::string> walk(const std::vector<std::string> &Lines,
                              const std::vector<bool> &Taken) {
  return walkPath(Lines, Taken, x86Branch);
}

/// A lock prefix (asmjit prints it as its own word) or xchg, whose memory
/// form is locked without one.
bool hasAtomic(const std::vector<std::string> &Path) {
  return rsv_test::hasAtomic(Path, [](const std::string &Mnemonic) {
    return Mnemonic == "lock" || Mnemonic.find("xchg") != std::string::npos;
  });
}

std::string join(const std::vector<std::string> &Path) {
  return joinPath(Path);
}

TEST_F(ReservedEmitter, ReservedPathsHaveNoAtomic) {
  const jitlock_rt_layout &L = reservedLayout();
  // Enter: R1 matches (jne not taken), E2 passes (jae not taken), then the
  // push, and Done at the end.
  std::vector<std::string> Enter = listing(true, L);
  std::vector<std::string> R1 = walk(Enter, {false, false});
  ASSERT_GE(R1.size(), 8u) << join(Enter);
  EXPECT_FALSE(hasAtomic(R1)) << "R1's path:\n" << join(R1);
  // Not reserved: past R1 and E2, E3, E4 and E5's test to the CAS.
  std::vector<std::string> E5 = walk(Enter, {true, false, false, false, false});
  EXPECT_TRUE(hasAtomic(E5)) << "the fast lock's path:\n" << join(E5);
  // Exit: X1 on top, X3 not recursive, R4 matches (its je taken).
  std::vector<std::string> Exit = listing(false, L);
  std::vector<std::string> R4 = walk(Exit, {false, false, true});
  ASSERT_GE(R4.size(), 9u) << join(Exit);
  EXPECT_FALSE(hasAtomic(R4)) << "R4's path:\n" << join(R4);
  std::vector<std::string> X4 = walk(Exit, {false, false, false, false});
  EXPECT_TRUE(hasAtomic(X4)) << "X4's path:\n" << join(X4);
}

TEST_F(ReservedEmitter, LayoutsWithoutTheirFieldAreRefused) {
  CodeHolder Code;
  Code.init(jit().environment());
  x86::Assembler A(&Code);
  const Assignment As{x86::rdi, x86::rsi, x86::rcx};
  jitlock_rt_layout NoField = reservedLayout();
  NoField.reserve_bits = 0;
  jitlock_rt_layout LightweightWithField = reservedLayout();
  LightweightWithField.locking_mode = JITLOCK_LOCKING_LIGHTWEIGHT;
  jitlock_rt_layout BadMask = reservedLayout();
  BadMask.reserve_mask &= ~uint64_t(1) << BadMask.reserve_shift;
  for (const jitlock_rt_layout *L : {&NoField, &LightweightWithField, &BadMask})
    EXPECT_EQ(
        jx::emitMonitorEnter(A, *L, As.operands(), SlowPathMode::OutOfLine),
        kErrorInvalidArgument);
  EXPECT_EQ(Code.codeSize(), 0u);
}

// Threads, each with its own reserved objects (R1, R4) and one shared
// object whose field is 0 (E5, X4 and the real runtime under contention):
// every increment under a lock is kept.
TEST_F(ReservedEmitter, ThreadsOwnReservedAndShareUnreserved) {
  const unsigned Seed = std::random_device{}();
  std::printf("seed %u\n", Seed);
  const jitlock_rt_layout &L = reservedLayout();
  constexpr unsigned Threads = 4, Iterations = 20000;
  const std::vector<Assignment> Assignments = sampleAssignmentsOfBothForms();
  RuntimeEntries RT; // the runtime's own slow paths
  TestObject Shared;
  Shared.header(L) = EmbedderBits | L.unlocked_value;
  uint64_t SharedCount = 0;
  std::vector<std::thread> Workers;
  std::atomic<int> Failures{0};
  for (unsigned T = 0; T != Threads; ++T)
    Workers.emplace_back([&, T] {
      if (!jitlock_rt_attach()) {
        ++Failures;
        return;
      }
      std::mt19937 Rng(Seed + T);
      const Assignment &As = Assignments[Rng() % Assignments.size()];
      X64Driver D(As, RT);
      ThreadView TV(jitlock_rt_current(), L);
      TestObject Own;
      const uint64_t Mine = EmbedderBits | TV.tag();
      Own.header(L) = Mine;
      uint64_t OwnCount = 0;
      jitlock_thread *Self = jitlock_rt_current();
      for (unsigned I = 0; I != Iterations; ++I) {
        D.run(true, &Own, Self);
        bool Nested = Rng() % 2;
        if (Nested)
          D.run(true, &Shared, Self);
        ++OwnCount;
        if (Nested) {
          // A load and a store, not an increment: a broken lock loses
          // updates. Relaxed atomics, because the lock is JIT code that the
          // race detector cannot see into.
          std::atomic_ref<uint64_t> Count(SharedCount);
          Count.store(Count.load(std::memory_order_relaxed) + 1,
                      std::memory_order_relaxed);
          D.run(false, &Shared, Self);
        }
        D.run(false, &Own, Self);
        if (Own.header(L) != Mine || TV.depth() != 0)
          ++Failures;
      }
      if (OwnCount != Iterations)
        ++Failures;
      jitlock_rt_detach();
    });
  // The shared object's increments, counted by each thread's coin flips,
  // are checked through a second pass below: run the same seeds.
  for (std::thread &W : Workers)
    W.join();
  EXPECT_EQ(Failures.load(), 0) << "seed " << Seed;
  uint64_t Expected = 0;
  for (unsigned T = 0; T != Threads; ++T) {
    std::mt19937 Rng(Seed + T);
    Rng(); // the assignment
    for (unsigned I = 0; I != Iterations; ++I)
      Expected += Rng() % 2;
  }
  EXPECT_EQ(SharedCount, Expected) << "seed " << Seed;
  expectReleased(&Shared, "the shared object");
}

// R2 on many threads: fresh objects reserved by their first locker (the
// inline CAS decides the races), then revoked by the others' contention.
TEST_F(ReservedEmitter, FirstLockersReserveInlineAndOthersRevoke) {
  const unsigned Seed = std::random_device{}();
  const std::vector<Assignment> Assignments = sampleAssignmentsOfBothForms();
  runFirstLockers(
      [&](uint64_t Pick) -> std::unique_ptr<Driver> {
        // The runtime's own slow paths.
        return std::make_unique<X64Driver>(
            Assignments[Pick % Assignments.size()], RuntimeEntries());
      },
      Seed, FirstLockerSizes(), "x86_64");
}

} // namespace
