//===- A64TestUtil.cpp - Running AArch64 emitter output under test --------===//
#include "A64TestUtil.h"

#include <gtest/gtest.h>

#include <asm/hwcap.h>
#include <sys/auxv.h>

#include <cstdio>
#include <cstring>
#include <random>

namespace a64_test {

using asmjit::Label;

//===-- Assignments
//--------------------------------------------------------===//

static std::string regName(uint32_t Id) {
  return Id == 29 ? "fp" : Id == 30 ? "lr" : "x" + std::to_string(Id);
}

std::string Assignment::str() const {
  return "obj=" + regName(Obj) + " thread=" + regName(Thread) +
         " scratch=" + regName(S0) + "," + regName(S1) + "," + regName(S2);
}

std::string Assignment::name() const {
  return "o" + std::to_string(Obj) + "_t" + std::to_string(Thread) + "_s" +
         std::to_string(S0) + "_" + std::to_string(S1) + "_" +
         std::to_string(S2);
}

std::vector<Assignment> assignments() {
  std::vector<Assignment> Out = {
      {0, 1, 2, 3, 4},      // the C argument registers, in call order
      {1, 0, 2, 3, 4},      // ... swapped: the glue must swap them
      {0, 2, 1, 3, 4},      // obj already in x0, thread elsewhere
      {2, 0, 1, 3, 5},      // thread already in x0, x1 scratch
      {19, 20, 21, 22, 23}, // callee-saved registers throughout
      {28, 27, 26, 25, 24},
      {9, 10, 11, 12, 13},
      {15, 14, 0, 1, 2}, // scratch in the argument registers
      {16, 17, 5, 6, 7}, // obj and thread in the registers the glue uses
      {17, 16, 8, 9, 10},
      {18, 3, 4, 5, 6},     // the platform register as the object
      {29, 30, 19, 20, 21}, // fp and lr as object and thread
      {30, 29, 27, 28, 0},
      {3, 19, 29, 30, 15}, // fp and lr as scratch
      {7, 8, 0, 1, 28},
      {1, 0, 30, 29, 28},
  };
  // And some random ones, the same on every run.
  std::mt19937 Rng(20240607);
  while (Out.size() < 24) {
    uint32_t R[5];
    for (uint32_t &Id : R)
      Id = Rng() % 31;
    Assignment As{R[0], R[1], R[2], R[3], R[4]};
    bool Ok = true;
    for (int I = 0; I != 5; ++I)
      for (int J = 0; J != I; ++J)
        Ok &= R[I] != R[J];
    for (int I = 2; I != 5; ++I)
      Ok &= R[I] < 16 || R[I] > 18;
    if (Ok)
      Out.push_back(As);
  }
  return Out;
}

std::vector<uint32_t> freeRegisters(const Assignment &As) {
  std::vector<uint32_t> Out;
  // Start in the middle, so that both low and high registers come up.
  for (uint32_t I = 0; I != 31; ++I) {
    uint32_t Id = (I + 11) % 31;
    if (!As.uses(Id))
      Out.push_back(Id);
  }
  return Out;
}

//===-- Probes
//-------------------------------------------------------------===//

asmjit::JitRuntime &jit() {
  static asmjit::JitRuntime R;
  return R;
}

const jitlock_rt_layout &layout() {
  static const jitlock_rt_layout L = [] {
    jitlock_rt_layout R;
    jitlock_rt_get_layout(&R);
    return R;
  }();
  return L;
}

void fillPattern(RegState &S, uint64_t Seed) {
  for (uint64_t I = 0; I != 32; ++I)
    S.X[I] = 0x5EED000000000000ull ^ (Seed << 16) ^ (I << 8) ^ (0xA0 + I);
  for (unsigned I = 0; I != 32; ++I)
    for (unsigned B = 0; B != 16; ++B)
      S.V[I][B] = uint8_t(Seed * 7 + I * 16 + B + 1);
}

void expectPreserved(const ProbeFrame &F, const Assignment &As,
                     const std::string &What) {
  for (uint32_t I = 0; I != 31; ++I) {
    if (!As.isScratch(I)) {
      EXPECT_EQ(F.Out.X[I], F.In.X[I])
          << What << ": x" << I << " changed (" << As.str() << ")";
    }
  }
  for (unsigned I = 0; I != 32; ++I)
    EXPECT_EQ(memcmp(F.Out.V[I], F.In.V[I], 16), 0)
        << What << ": q" << I << " changed (" << As.str() << ")";
  EXPECT_EQ(F.SpAfter, F.SpBefore) << What << ": sp changed";
}

int printDump(asmjit::CodeHolder &Code, asmjit::Error E) {
  if (!E)
    E = Code.flatten();
  if (!E)
    E = Code.resolveUnresolvedLinks();
  if (E) {
    fprintf(stderr, "dump: %s\n", asmjit::DebugUtils::errorAsString(E));
    return 1;
  }
  const asmjit::CodeBuffer &B = Code.textSection()->buffer();
  for (size_t I = 0; I + 4 <= B.size(); I += 4)
    printf("0x%02x 0x%02x 0x%02x 0x%02x\n", B.data()[I], B.data()[I + 1],
           B.data()[I + 2], B.data()[I + 3]);
  return 0;
}

namespace probe {
namespace {
constexpr int32_t VOff = offsetof(RegState, V);
static_assert(VOff == 256);
} // namespace

void saveCallerState(A64::Assembler &A, Checked &Ok) {
  using namespace A64;
  Ok(A.stp(x29, x30, ptr_pre(sp, -FrameSize)));
  Ok(A.mov(x29, sp));
  for (uint32_t I = 19; I != 29; I += 2)
    Ok(A.stp(x(I), x(I + 1), ptr(sp, 16 + 8 * int32_t(I - 19))));
  for (uint32_t I = 8; I != 16; I += 2)
    Ok(A.stp(d(I), d(I + 1), ptr(sp, 96 + 8 * int32_t(I - 8))));
  Ok(A.str(x0, ptr(sp, FrameSlot)));
  Ok(A.str(x18, ptr(sp, SavedX18Slot)));
}

void loadInRegisters(A64::Assembler &A, Checked &Ok, bool MisalignSp) {
  using namespace A64;
  for (uint32_t I = 0; I != 32; I += 2)
    Ok(A.ldp(v(I), v(I + 1), ptr(x0, VOff + 16 * int32_t(I))));
  for (uint32_t I = 1; I != 31; I += 2)
    Ok(A.ldp(x(I), x(I + 1), ptr(x0, 8 * int32_t(I))));
  Ok(A.ldr(x0, ptr(x0)));
  if (MisalignSp)
    Ok(A.sub(sp, sp, 8));
}

void storeOutAndReturn(A64::Assembler &A, Checked &Ok, bool MisalignSp,
                       int32_t OutOff, int32_t SpAfterOff) {
  using namespace A64;
  if (MisalignSp)
    Ok(A.add(sp, sp, 8));
  Ok(A.str(x0, ptr(sp, SavedX0Slot)));
  Ok(A.ldr(x0, ptr(sp, FrameSlot)));
  Ok(A.add(x0, x0, OutOff));
  for (uint32_t I = 1; I != 31; I += 2)
    Ok(A.stp(x(I), x(I + 1), ptr(x0, 8 * int32_t(I))));
  for (uint32_t I = 0; I != 32; I += 2)
    Ok(A.stp(v(I), v(I + 1), ptr(x0, VOff + 16 * int32_t(I))));
  Ok(A.ldr(x1, ptr(sp, SavedX0Slot)));
  Ok(A.str(x1, ptr(x0)));
  Ok(A.mov(x1, sp));
  Ok(A.str(x1, ptr(x0, SpAfterOff - OutOff)));
  Ok(A.ldr(x18, ptr(sp, SavedX18Slot)));
  for (uint32_t I = 8; I != 16; I += 2)
    Ok(A.ldp(d(I), d(I + 1), ptr(sp, 96 + 8 * int32_t(I - 8))));
  for (uint32_t I = 19; I != 29; I += 2)
    Ok(A.ldp(x(I), x(I + 1), ptr(sp, 16 + 8 * int32_t(I - 19))));
  Ok(A.ldp(x29, x30, ptr_post(sp, FrameSize)));
  Ok(A.ret(x30));
}
} // namespace probe

namespace {
static_assert(offsetof(ProbeFrame, In) == 0);

struct PendingSlowCall {
  bool Enter;
  MonitorOperands Ops;
  SlowPathLabels Labels;
};

} // namespace

ProbeFn buildProbe(const ProbeSpec &Spec) {
  Emission Em;
  auto &[Code, A] = Em;
  Checked Ok;
  using namespace A64;

  // Prologue: a frame for the callee-saved registers the body overwrites.
  probe::saveCallerState(A, Ok);
  Ok(A.mov(x1, sp));
  Ok(A.str(x1, ptr(x0, offsetof(ProbeFrame, SpBefore))));
  probe::loadInRegisters(A, Ok, Spec.MisalignSp);

  // The body.
  std::vector<PendingSlowCall> Pending;
  Label Top = A.newLabel();
  if (Spec.Loop) {
    Ok(A.bind(Top));
    if (Spec.EachIteration)
      Spec.EachIteration(A);
  }
  for (size_t K = 0; K != Spec.Ops.size(); ++K) {
    const Op &O = Spec.Ops[K];
    MonitorOperands Ops = Spec.As.operands();
    Ops.Obj = x(O.ObjReg);
    SlowPathLabels Labels;
    SlowPathLabels *LabelsPtr =
        Spec.Mode == SlowPathMode::Labels ? &Labels : nullptr;
    asmjit::Error E =
        O.Enter ? J::a64::emitMonitorEnter(A, *Spec.Layout, Ops, Spec.At,
                                           Spec.Mode, LabelsPtr, Spec.Entries)
                : J::a64::emitMonitorExit(A, *Spec.Layout, Ops, Spec.At,
                                          Spec.Mode, LabelsPtr, Spec.Entries);
    EXPECT_EQ(E, asmjit::kErrorOk)
        << "emitting " << (O.Enter ? "enter" : "exit") << " for "
        << Spec.As.str() << ": " << asmjit::DebugUtils::errorAsString(E);
    if (E)
      return nullptr;
    if (Spec.Mode == SlowPathMode::Labels)
      Pending.push_back({O.Enter, Ops, Labels});
    if (Spec.Loop) {
      // Counter J at [counter + 8 * J], incremented with a scratch register
      // (free between sequences).
      for (size_t J = 0; J != Spec.IncrementAfter.size(); ++J) {
        if (Spec.IncrementAfter[J] != K)
          continue;
        GpX C = x(Spec.CounterReg), S = x(Spec.As.S0);
        Ok(A.ldr(S, ptr(C, 8 * int32_t(J))));
        Ok(A.add(S, S, 1));
        Ok(A.str(S, ptr(C, 8 * int32_t(J))));
      }
    }
  }
  if (Spec.Loop) {
    Ok(A.subs(x(Spec.LoopReg), x(Spec.LoopReg), 1));
    Ok(A.b_ne(Top));
  }

  // Every register into Out, and the epilogue.
  probe::storeOutAndReturn(A, Ok, Spec.MisalignSp, offsetof(ProbeFrame, Out),
                           offsetof(ProbeFrame, SpAfter));

  // Labels mode: the slow calls, after the function's code.
  // Every other exit places its two stubs one at a time, queued first.
  for (size_t K = 0; K != Pending.size(); ++K) {
    const PendingSlowCall &P = Pending[K];
    asmjit::Error E = asmjit::kErrorOk;
    if (!P.Enter && K % 2) {
      E = J::a64::emitSlowCall(A, J::SlowCall::ExitQueued, P.Ops, P.Labels,
                               Spec.Entries);
      if (!E)
        E = J::a64::emitSlowCall(A, J::SlowCall::Exit, P.Ops, P.Labels,
                                 Spec.Entries);
    } else {
      E = J::a64::emitSlowCall(A, P.Enter, P.Ops, P.Labels, Spec.Entries);
    }
    EXPECT_EQ(E, asmjit::kErrorOk) << "emitSlowCall for " << Spec.As.str();
    if (E)
      return nullptr;
  }
  EXPECT_EQ(Ok.Err, asmjit::kErrorOk)
      << "assembling a probe: " << asmjit::DebugUtils::errorAsString(Ok.Err);
  if (Ok.Err)
    return nullptr;
  ProbeFn Fn = nullptr;
  asmjit::Error E = jit().add(&Fn, &Code);
  EXPECT_EQ(E, asmjit::kErrorOk) << asmjit::DebugUtils::errorAsString(E);
  return E ? nullptr : Fn;
}

void releaseProbe(ProbeFn Fn) {
  if (Fn)
    jit().release(Fn);
}

//===-- Shims
//--------------------------------------------------------------===//

namespace {

thread_local ShimLog Log;

/// Overwrites every register a called C function may overwrite: x0-x18 and
/// v0-v31 whole. The compiler saves the low halves of v8-v15 around it (they
/// are callee-saved), so their upper halves stay overwritten, as AAPCS64
/// allows.
[[gnu::noinline]] void clobberCallerSaved() {
  asm volatile(
#define X(N) "mov x" #N ", #(0xba00 + " #N ")\n"
      X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)
          X(14) X(15) X(16) X(17) X(18)
#undef X
#define V(N) "movi v" #N ".16b, #(7 * " #N " + 1)\n"
              V(0) V(1) V(2) V(3) V(4) V(5) V(6) V(7) V(8) V(9) V(10) V(11)
                  V(12) V(13) V(14) V(15) V(16) V(17) V(18) V(19) V(20) V(21)
                      V(22) V(23) V(24) V(25) V(26) V(27) V(28) V(29) V(30)
                          V(31)
#undef V
      :
      :
      : "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10",
        "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "v0", "v1",
        "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12",
        "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22",
        "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31",
        "memory");
}

bool spAligned() {
  uint64_t Sp;
  asm volatile("mov %0, sp" : "=r"(Sp));
  return Sp % 16 == 0;
}

enum class Call { Enter, Exit, ExitQueued };

void log(Call C, jitlock_thread *T, void *Obj) {
  ShimLog &L = Log;
  if (!spAligned())
    ++L.MisalignedSp;
  ++(C == Call::Enter ? L.Enters : C == Call::Exit ? L.Exits : L.QueuedExits);
  if (C == Call::ExitQueued && L.WatchOwner)
    L.OwnerAtQueuedExit = __atomic_load_n(L.WatchOwner, __ATOMIC_RELAXED);
  if (L.WatchTop && *L.WatchTop != L.WantTop)
    ++L.TopMismatches;
  L.LastThread = T;
  L.LastObj = Obj;
}

void result(int R) {
  ShimLog &L = Log;
  L.LastResult = R;
  L.Errors += R != JITLOCK_OK;
}

extern "C" int shimEnter(jitlock_thread *T, void *Obj) {
  clobberCallerSaved();
  log(Call::Enter, T, Obj);
  int R = jitlock_rt_monitor_enter(T, Obj);
  result(R);
  clobberCallerSaved();
  return R;
}
extern "C" int shimExit(jitlock_thread *T, void *Obj) {
  clobberCallerSaved();
  log(Call::Exit, T, Obj);
  int R = jitlock_rt_monitor_exit(T, Obj);
  result(R);
  clobberCallerSaved();
  return R;
}
extern "C" int shimExitQueued(jitlock_thread *T, void *Obj) {
  clobberCallerSaved();
  log(Call::ExitQueued, T, Obj);
  int R = Log.FakeQueuedExit ? JITLOCK_OK
                             : jitlock_rt_monitor_exit_queued_slow(T, Obj);
  result(R);
  clobberCallerSaved();
  return R;
}
extern "C" int recordEnter(jitlock_thread *T, void *Obj) {
  clobberCallerSaved();
  log(Call::Enter, T, Obj);
  clobberCallerSaved();
  return 0;
}
extern "C" int recordExit(jitlock_thread *T, void *Obj) {
  clobberCallerSaved();
  log(Call::Exit, T, Obj);
  clobberCallerSaved();
  return 0;
}
extern "C" int recordExitQueued(jitlock_thread *T, void *Obj) {
  clobberCallerSaved();
  log(Call::ExitQueued, T, Obj);
  clobberCallerSaved();
  return 0;
}

} // namespace

ShimLog &shimLog() { return Log; }

void clobberAllCallerSaved() { clobberCallerSaved(); }
bool stackPointerAligned() { return spAligned(); }

RuntimeEntries runtimeShims() {
  RuntimeEntries E;
  E.Enter = reinterpret_cast<const void *>(&shimEnter);
  E.Exit = reinterpret_cast<const void *>(&shimExit);
  E.ExitQueued = reinterpret_cast<const void *>(&shimExitQueued);
  return E;
}

RuntimeEntries recordingShims() {
  RuntimeEntries E;
  E.Enter = reinterpret_cast<const void *>(&recordEnter);
  E.Exit = reinterpret_cast<const void *>(&recordExit);
  E.ExitQueued = reinterpret_cast<const void *>(&recordExitQueued);
  return E;
}

bool hasLSE() { return getauxval(AT_HWCAP) & HWCAP_ATOMICS; }

} // namespace a64_test
