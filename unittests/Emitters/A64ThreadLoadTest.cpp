//===- A64ThreadLoadTest.cpp - AArch64 emitLoadThread, executed -----------===//
//
// jitlock::emit::a64::emitLoadThread, run on AArch64 (under qemu-aarch64
// -cpu max; labels aarch64, asmjit). The x86_64 counterpart is
// unittests/Emitters/ThreadLoadTest.cpp.
//
//   A64ThreadLoad.EveryRegister     into each of x0-x30, the value is the
//                                   calling thread's jitlock_rt_current()
//   A64ThreadLoad.Threads           many threads, attached or not, each
//                                   finds its own structure (the scenario of
//                                   unittests/Emitters/ThreadLoadScenarios.h)
//   A64ThreadLoad.Offsets           offsets that need two immediates, both
//                                   signs: thread pointer + offset exactly
//   A64ThreadLoad.Contract          invalid registers and layouts refused,
//                                   nothing emitted
//
//===----------------------------------------------------------------------===//
#include "A64TestUtil.h"
#include "ThreadLoadScenarios.h"

#include <gtest/gtest.h>

using namespace a64_test;

namespace {

using LoadFn = uint64_t (*)();

/// uint64_t fn(): emitLoadThread into x(Reg), returned in x0. Reg is saved
/// and restored around it (x30 included: it holds the return address).
LoadFn buildLoad(uint32_t Reg, const jitlock_rt_layout &L = layout()) {
  Emission Em;
  auto &[Code, A] = Em;
  Checked Ok;
  const bool Save = Reg != 0;
  if (Save) {
    Ok(A.sub(A64::sp, A64::sp, 16));
    Ok(A.str(A64::x(Reg), A64::ptr(A64::sp)));
  }
  asmjit::Error E = J::a64::emitLoadThread(A, L, A64::x(Reg));
  EXPECT_EQ(E, asmjit::kErrorOk) << asmjit::DebugUtils::errorAsString(E);
  if (Save) {
    Ok(A.mov(A64::x0, A64::x(Reg)));
    Ok(A.ldr(A64::x(Reg), A64::ptr(A64::sp)));
    Ok(A.add(A64::sp, A64::sp, 16));
  }
  Ok(A.ret(A64::x30));
  EXPECT_EQ(Ok.Err, asmjit::kErrorOk);
  if (E || Ok.Err)
    return nullptr;
  LoadFn Fn = nullptr;
  EXPECT_EQ(jit().add(&Fn, &Code), asmjit::kErrorOk);
  return Fn;
}

using thread_load_scenarios::addressOf;

uint64_t threadPointer() {
  uint64_t TP;
  __asm__ volatile("mrs %0, tpidr_el0" : "=r"(TP));
  return TP;
}

TEST(A64ThreadLoad, EveryRegister) {
  jitlock_thread *Self = jitlock_rt_attach();
  ASSERT_NE(Self, nullptr);
  for (uint32_t Reg = 0; Reg <= 30; ++Reg) {
    LoadFn Fn = buildLoad(Reg);
    ASSERT_NE(Fn, nullptr) << "x" << Reg;
    EXPECT_EQ(Fn(), addressOf(Self)) << "into x" << Reg;
    jit().release(Fn);
  }
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
}

TEST(A64ThreadLoad, Threads) {
  LoadFn Load = buildLoad(9);
  ASSERT_NE(Load, nullptr);
  thread_load_scenarios::eachThreadFindsItsOwn(Load, 8, 1000);
  jit().release(Load);
}

TEST(A64ThreadLoad, Offsets) {
  // Synthetic layouts: the code only adds, so any offset can be checked
  // against the thread pointer without dereferencing the result.
  for (int64_t Off : {int64_t(0), int64_t(16), int64_t(4095), int64_t(4096),
                      int64_t(0x123456), int64_t(0xfff000),
                      int64_t((1 << 24) - 1), int64_t(-8), int64_t(-4096),
                      int64_t(-0x123456), int64_t(-((1 << 24) - 1))}) {
    jitlock_rt_layout L = layout();
    L.thread_tls_offset = Off;
    LoadFn Fn = buildLoad(3, L);
    ASSERT_NE(Fn, nullptr) << Off;
    EXPECT_EQ(Fn(), threadPointer() + uint64_t(Off)) << "offset " << Off;
    jit().release(Fn);
  }
}

TEST(A64ThreadLoad, Contract) {
  const jitlock_rt_layout Good = layout();
  jitlock_rt_layout OtherAbi = Good, Far = Good, FarBelow = Good;
  OtherAbi.abi_version += 1;
  Far.thread_tls_offset = int64_t(1) << 24;
  FarBelow.thread_tls_offset = -(int64_t(1) << 24);
  struct Case {
    const char *What;
    A64::Gp Dst;
    const jitlock_rt_layout *L;
  } Cases[] = {
      {"sp", A64::sp, &Good},
      {"xzr", A64::xzr, &Good},
      {"a w register", A64::w3, &Good},
      {"another ABI version", A64::x3, &OtherAbi},
      {"an offset of 2^24", A64::x3, &Far},
      {"an offset of -2^24", A64::x3, &FarBelow},
  };
  for (const Case &C : Cases) {
    Emission Em;
    auto &[Code, A] = Em;
    EXPECT_EQ(J::a64::emitLoadThread(A, *C.L, C.Dst),
              asmjit::kErrorInvalidArgument)
        << C.What;
    EXPECT_EQ(Code.codeSize(), 0u) << C.What << ": something was emitted";
  }
}

} // namespace
