//===- A64ReservedTest.cpp - AArch64 reserved enter and exit ------------===//
//
// The AArch64 emitter's sequences for a layout in JITLOCK_LOCKING_RESERVED,
// run under qemu-aarch64 as part of jitlock-a64-emitter-tests: the
// scenarios of ReservedScenarios.h for every assignment of A64TestUtil.h,
// with LSE and LL/SC atomics, each sequence in a probe that checks every
// register it must keep; and the listing of the R1 and R4 paths, which has
// no atomic instruction.
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

namespace {

using namespace a64_test;
using namespace rsv_test;

/// Each sequence in its own probe (A64TestUtil.h): the registers loaded
/// from a pattern, obj and thread in the assignment's, every register but
/// the scratch ones checked afterwards.
class A64Driver : public Driver {
public:
  A64Driver(const Assignment &As, Atomics At) : As(As), At(At) {
    for (bool Enter : {true, false}) {
      ProbeSpec Spec;
      Spec.As = As;
      Spec.At = At;
      Spec.Layout = &reservedLayout();
      Spec.Entries = countingEntries();
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
      runReservedScenarios(D, std::string("AArch64 ") +
                                  (At == Atomics::LSE ? "LSE " : "LL/SC ") +
                                  As.str());
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

} // namespace
