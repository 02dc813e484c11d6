//===- ThreadLoadTest.cpp - x86_64 emitLoadThread, executed ---------------===//
//
// jitlock::emit::x64::emitLoadThread (label asmjit), run natively:
//
//   ThreadLoadProbe     into every register: the value is the calling
//                       thread's jitlock_rt_current(), and no other register
//                       changes (the probe wrapper of EmitterTestUtil.h);
//                       the flags survive.
//   ThreadLoadThreads   many threads, each finds its own thread, attached or
//                       not (then jitlock_rt_code_thread()), and the address
//                       does not change when the thread attaches (the
//                       scenario of ThreadLoadScenarios.h, which AArch64
//                       runs too).
//   ThreadLoadMonitors  the loaded register drives emitted monitor enter and
//                       exit on several threads; no increment is lost.
//   ThreadLoadContract  invalid registers and layouts are refused and
//                       nothing is emitted.
//
// The AArch64 counterpart is unittests/Emitters/A64ThreadLoadTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "EmitterTestUtil.h"
#include "ThreadLoadScenarios.h"

#include <cstring>
#include <thread>
#include <vector>

using namespace emit_test;

namespace {

using LoadFrame = RegisterFrame;

using ProbeFn = void (*)(LoadFrame *);

/// The probe wrapper around one emitLoadThread into `Dst`.
ProbeFn buildProbe(const x86::Gp &Dst) {
  Emission Em;
  auto &[Code, A] = Em;
  emitProbeEntry<LoadFrame>(A, VecLevel::Xmm, false, [](x86::Assembler &) {});
  Error E = jx::emitLoadThread(A, layout(), Dst);
  EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
  emitProbeExit<LoadFrame>(A, VecLevel::Xmm, false);
  void *Fn = nullptr;
  E = jit().add(&Fn, &Code);
  EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
  return reinterpret_cast<ProbeFn>(Fn);
}

/// uint64_t fn(): the thread, loaded into rcx and returned.
using LoadFn = uint64_t (*)();
LoadFn buildLoad() {
  Emission Em;
  auto &[Code, A] = Em;
  Error E = jx::emitLoadThread(A, layout(), x86::rcx);
  EXPECT_EQ(E, kErrorOk) << DebugUtils::errorAsString(E);
  A.mov(x86::rax, x86::rcx);
  A.ret();
  void *Fn = nullptr;
  EXPECT_EQ(jit().add(&Fn, &Code), kErrorOk);
  return reinterpret_cast<LoadFn>(Fn);
}

/// Calls `Fn` without UBSan's function-signature check, as callJit does.
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
uint64_t
runLoad(LoadFn Fn) {
  return Fn();
}

using thread_load_scenarios::addressOf;

TEST(ThreadLoadProbe, EveryRegisterGetsTheThreadAndNothingElseChanges) {
  jitlock_thread *Self = jitlock_rt_attach();
  ASSERT_NE(Self, nullptr);
  for (uint32_t Id = 0; Id < 16; ++Id) {
    if (Id == x86::Gp::kIdSp)
      continue;
    ProbeFn Fn = buildProbe(x86::gpq(Id));
    ASSERT_NE(Fn, nullptr) << regName(Id);
    LoadFrame F;
    std::memset(&F, 0, sizeof F);
    for (uint32_t R = 0; R < 16; ++R)
      F.GprIn[R] = 0x7EAD000000000000ull | (uint64_t(R) << 40) | Id;
    callJit(Fn, &F);
    EXPECT_EQ(F.RspOut, F.RspIn) << regName(Id);
    for (uint32_t R = 0; R < 16; ++R) {
      if (R == x86::Gp::kIdSp)
        continue;
      if (R == Id)
        EXPECT_EQ(F.GprOut[R], addressOf(Self)) << "into " << regName(Id);
      else
        EXPECT_EQ(F.GprOut[R], F.GprIn[R])
            << regName(R) << " changed by a load into " << regName(Id);
    }
    jit().release(reinterpret_cast<void *>(Fn));
  }
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
}

TEST(ThreadLoadProbe, FlagsSurvive) {
  // The flags of `xor eax, eax; stc` (ZF, PF, CF set; SF, OF clear) must
  // come out of the load unchanged.
  Emission Em;
  auto &[Code, A] = Em;
  A.xor_(x86::eax, x86::eax);
  A.stc();
  ASSERT_EQ(jx::emitLoadThread(A, layout(), x86::rcx), kErrorOk);
  A.pushfq();
  A.pop(x86::rax);
  A.ret();
  void *Fn = nullptr;
  ASSERT_EQ(jit().add(&Fn, &Code), kErrorOk);
  const uint64_t Flags = runLoad(reinterpret_cast<LoadFn>(Fn));
  constexpr uint64_t CF = 1, PF = 4, ZF = 64, SF = 128, OF = 2048;
  EXPECT_EQ(Flags & (CF | PF | ZF | SF | OF), CF | PF | ZF);
  jit().release(Fn);
}

TEST(ThreadLoadThreads, EachThreadFindsItsOwnAttachedOrNot) {
  LoadFn Load = buildLoad();
  ASSERT_NE(Load, nullptr);
  thread_load_scenarios::eachThreadFindsItsOwn([Load] { return runLoad(Load); },
                                               16, 2000);
  jit().release(reinterpret_cast<void *>(Load));
}

/// void fn(void *Obj, uint64_t *Counter, uint64_t N): N times, enter Obj,
/// ++*Counter, exit Obj, with the thread loaded once at entry into r12.
using CountFn = void (*)(void *, uint64_t *, uint64_t);
CountFn buildCounter() {
  Emission Em;
  auto &[Code, A] = Em;
  const jx::MonitorOperands Ops{x86::rdi, x86::r12, x86::rax, x86::r8, x86::r9};
  const jitlock_rt_layout L = layout();
  A.push(x86::r12);
  EXPECT_EQ(jx::emitLoadThread(A, L, Ops.Thread), kErrorOk);
  Label Loop = A.newLabel(), Done = A.newLabel();
  A.test(x86::rdx, x86::rdx);
  A.jz(Done);
  A.bind(Loop);
  EXPECT_EQ(jx::emitMonitorEnter(A, L, Ops, SlowPathMode::OutOfLine), kErrorOk);
  A.mov(x86::rcx, x86::qword_ptr(x86::rsi));
  A.add(x86::rcx, 1);
  A.mov(x86::qword_ptr(x86::rsi), x86::rcx);
  EXPECT_EQ(jx::emitMonitorExit(A, L, Ops, SlowPathMode::OutOfLine), kErrorOk);
  A.dec(x86::rdx);
  A.jnz(Loop);
  A.bind(Done);
  A.pop(x86::r12);
  A.ret();
  void *Fn = nullptr;
  EXPECT_EQ(jit().add(&Fn, &Code), kErrorOk);
  return reinterpret_cast<CountFn>(Fn);
}

TEST(ThreadLoadMonitors, LoadedThreadDrivesTheMonitorSequences) {
  CountFn Count = buildCounter();
  ASSERT_NE(Count, nullptr);
  alignas(8) uint64_t Obj[2] = {1, 0}; // the header word, unlocked
  uint64_t Counter = 0;
  constexpr unsigned Threads = 4;
  constexpr uint64_t PerThread = 50000;
  std::vector<std::thread> Ts;
  for (unsigned T = 0; T < Threads; ++T)
    Ts.emplace_back([&] {
      jitlock_rt_attach();
      callJit(Count, static_cast<void *>(Obj), &Counter, PerThread);
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
  for (std::thread &T : Ts)
    T.join();
  EXPECT_EQ(Counter, Threads * PerThread);
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(Obj[0], 1u) << "the header is unlocked again";
  jit().release(reinterpret_cast<void *>(Count));
}

TEST(ThreadLoadContract, BadRegistersAndLayoutsAreRefused) {
  const jitlock_rt_layout Good = layout();
  jitlock_rt_layout OtherAbi = Good;
  OtherAbi.abi_version += 1;
  jitlock_rt_layout FarOffset = Good;
  FarOffset.thread_tls_offset = int64_t(1) << 33;
  struct Case {
    const char *What;
    x86::Gp Dst;
    const jitlock_rt_layout *L;
  } Cases[] = {
      {"rsp", x86::rsp, &Good},
      {"a 32-bit register", x86::eax, &Good},
      {"a default-constructed register", x86::Gp(), &Good},
      {"another ABI version", x86::rcx, &OtherAbi},
      {"an offset beyond 32 bits", x86::rcx, &FarOffset},
  };
  for (const Case &C : Cases) {
    Emission Em;
    auto &[Code, A] = Em;
    EXPECT_EQ(jx::emitLoadThread(A, *C.L, C.Dst), kErrorInvalidArgument)
        << C.What;
    EXPECT_EQ(Code.codeSize(), 0u) << C.What << ": something was emitted";
  }
  // An offset of 0 needs no lea: the thread pointer alone.
  jitlock_rt_layout Zero = Good;
  Zero.thread_tls_offset = 0;
  Emission Em;
  auto &[Code, A] = Em;
  ASSERT_EQ(jx::emitLoadThread(A, Zero, x86::rcx), kErrorOk);
  CodeHolder WithLea;
  WithLea.init(jit().environment());
  x86::Assembler B(&WithLea);
  ASSERT_EQ(jx::emitLoadThread(B, Good, x86::rcx), kErrorOk);
  EXPECT_LT(Code.codeSize(), WithLea.codeSize());
}

} // namespace
