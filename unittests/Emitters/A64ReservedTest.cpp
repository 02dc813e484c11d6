//===- A64ReservedTest.cpp - AArch64 reserved enter and exit ------------===//
//
// The AArch64 emitter's sequences for a layout in JITLOCK_LOCKING_RESERVED,
// run under qemu-aarch64 as part of jitlock-a64-emitter-tests: the
// scenarios of ReservedScenarios.h for every assignment of A64TestUtil.h,
// with LSE and LL/SC atomics, each sequence in a probe that checks every
// register it must keep; the listing of the R1 and R4 paths, which has no
// atomic instruction; and threads that race to reserve fresh objects (R2)
// and then revoke each other's (R3).
//
// The runtime is configured for reservation only when
// JITLOCK_TEST_RESERVED is set (CTest's aarch64.emitters.reserved runs
// these tests alone with it), since the configuration must come before any
// other test of the binary reads the layout.
//
//===----------------------------------------------------------------------===//
#include "A64TestUtil.h"
#include "ReservedScenarios.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

namespace {

using namespace a64_test;
using namespace rsv_test;

/// Each sequence in its own probe (A64TestUtil.h): the registers loaded
/// from a pattern, obj and thread in the assignment's, every register but
/// the scratch ones checked afterwards.
class A64Driver : public Driver {
public:
  A64Driver(const Assignment &As, Atomics At,
            const RuntimeEntries &RT = countingEntries())
      : As(As), At(At) {
    for (bool Enter : {true, false}) {
      ProbeSpec Spec;
      Spec.As = As;
      Spec.At = At;
      Spec.Layout = &reservedLayout();
      Spec.Entries = RT;
      Spec.Ops = {{Enter, As.Obj}};
      (Enter ? EnterFn : ExitFn) = buildProbe(Spec);
    }
  }
  ~A64Driver() override {
    if (EnterFn)
      releaseProbe(EnterFn);
    if (ExitFn)
      releaseProbe(ExitFn);
  }
  bool ok() const { return EnterFn && ExitFn; }
  void run(bool Enter, void *Obj, jitlock_thread *Thread) override {
    ProbeFrame F;
    fillPattern(F.In, ++Runs);
    F.In.X[As.Obj] = reinterpret_cast<uint64_t>(Obj);
    F.In.X[As.Thread] = reinterpret_cast<uint64_t>(Thread);
    (Enter ? EnterFn : ExitFn)(&F);
    expectPreserved(F, As, As.str() + (Enter ? " enter" : " exit"));
  }

private:
  Assignment As;
  Atomics At;
  ProbeFn EnterFn = nullptr, ExitFn = nullptr;
  uint64_t Runs = 0;
};

class A64Reserved : public ::testing::Test {
protected:
  void SetUp() override {
    if (!getenv("JITLOCK_TEST_RESERVED"))
      GTEST_SKIP() << "JITLOCK_TEST_RESERVED is not set (CTest's "
                      "aarch64.emitters.reserved sets it)";
    ASSERT_TRUE(configureReserved());
    ASSERT_NE(jitlock_rt_attach(), nullptr);
  }
  void TearDown() override {
    if (jitlock_rt_current())
      jitlock_rt_detach();
  }
};

TEST_F(A64Reserved, ScenariosOverRegisters) {
  for (Atomics At : {Atomics::LSE, Atomics::LLSC}) {
    if (At == Atomics::LSE && !hasLSE())
      continue;
    for (const Assignment &As : assignments()) {
      A64Driver D(As, At);
      ASSERT_TRUE(D.ok()) << As.str();
      const std::string What = std::string("AArch64 ") +
                               (At == Atomics::LSE ? "LSE " : "LL/SC ") +
                               As.str();
      runReservedScenarios(D, What);
      if (HasFatalFailure())
        return;
      runLostRace(D, What);
      if (HasFatalFailure())
        return;
    }
  }
}

std::vector<std::string> listing(bool Enter, Atomics At) {
  asmjit::CodeHolder Code;
  Code.init(jit().environment());
  asmjit::StringLogger Log;
  Code.setLogger(&Log);
  A64::Assembler A(&Code);
  const MonitorOperands Ops = Assignment{0, 1, 2, 3, 4}.operands();
  asmjit::Error E = Enter
                        ? J::a64::emitMonitorEnter(A, reservedLayout(), Ops, At,
                                                   SlowPathMode::OutOfLine,
                                                   nullptr, countingEntries())
                        : J::a64::emitMonitorExit(A, reservedLayout(), Ops, At,
                                                  SlowPathMode::OutOfLine,
                                                  nullptr, countingEntries());
  EXPECT_EQ(E, asmjit::kErrorOk);
  return listingLines(Log.data());
}

BranchKind a64Branch(const std::string &Mnemonic) {
  if (Mnemonic == "ret")
    return BranchKind::Return;
  if (Mnemonic == "b")
    return BranchKind::Always;
  if (Mnemonic.compare(0, 2, "b.") == 0 || Mnemonic == "cbz" ||
      Mnemonic == "cbnz" || Mnemonic == "tbz" || Mnemonic == "tbnz")
    return BranchKind::Conditional;
  return BranchKind::None;
}

/// The exclusives, LSE's CAS, swap and atomic memory operations.
bool a64Atomic(const std::string &M) {
  for (const char *Prefix :
       {"ldxr", "ldaxr", "stxr", "stlxr", "cas", "swp", "ldadd", "ldclr",
        "ldset", "ldeor", "ldsmax", "ldsmin", "ldumax", "ldumin"})
    if (M.compare(0, strlen(Prefix), Prefix) == 0)
      return true;
  return false;
}

TEST_F(A64Reserved, ReservedPathsHaveNoAtomic) {
  for (Atomics At : {Atomics::LSE, Atomics::LLSC}) {
    SCOPED_TRACE(At == Atomics::LSE ? "LSE" : "LL/SC");
    // Enter: R1 matches (b.ne not taken), E2 passes (b.hs not taken), the
    // push, Done.
    std::vector<std::string> Enter = listing(true, At);
    std::vector<std::string> R1 = walkPath(Enter, {false, false}, a64Branch);
    ASSERT_GE(R1.size(), 8u) << joinPath(Enter);
    EXPECT_FALSE(hasAtomic(R1, a64Atomic)) << "R1's path:\n" << joinPath(R1);
    // Not reserved: past R1, E2, E3, E4 and E5's field test to the CAS.
    std::vector<std::string> E5 =
        walkPath(Enter, {true, false, false, false, false}, a64Branch);
    EXPECT_TRUE(hasAtomic(E5, a64Atomic)) << "E5's path:\n" << joinPath(E5);
    // Exit: X1 on top, X3 not recursive, R4 matches (its b.eq taken).
    std::vector<std::string> Exit = listing(false, At);
    std::vector<std::string> R4 =
        walkPath(Exit, {false, false, true}, a64Branch);
    ASSERT_GE(R4.size(), 8u) << joinPath(Exit);
    EXPECT_FALSE(hasAtomic(R4, a64Atomic)) << "R4's path:\n" << joinPath(R4);
    std::vector<std::string> X4 =
        walkPath(Exit, {false, false, false, false}, a64Branch);
    EXPECT_TRUE(hasAtomic(X4, a64Atomic)) << "X4's path:\n" << joinPath(X4);
  }
}

// R2 on many threads (ReservedScenarios.h), with LSE and with LL/SC
// atomics: fresh objects reserved by their first locker, whose inline CAS
// decides the races, then revoked by the others' contention.
TEST_F(A64Reserved, FirstLockersReserveInlineAndOthersRevoke) {
  const uint64_t Seed = std::random_device{}();
  const std::vector<Assignment> All = assignments();
  FirstLockerSizes Sizes;
  Sizes.Rounds = 3; // under qemu
  Sizes.Shuffles = 200;
  for (Atomics At : {Atomics::LSE, Atomics::LLSC}) {
    if (At == Atomics::LSE && !hasLSE())
      continue;
    runFirstLockers(
        [&](uint64_t Pick) -> std::unique_ptr<Driver> {
          // The runtime's own slow paths.
          return std::make_unique<A64Driver>(All[Pick % All.size()], At,
                                             RuntimeEntries());
        },
        Seed, Sizes, At == Atomics::LSE ? "AArch64 LSE" : "AArch64 LL/SC");
  }
}

} // namespace
