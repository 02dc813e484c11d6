//===- AsmjitKernels.cpp - The loops as a baseline JIT emits them ---------===//
#include "Bench.h"

#include "jitlock/Emitters.h"

#include <vector>

namespace jitlock::bench {

namespace {

namespace jx = jitlock::emit::x64;
using jitlock::emit::SlowPathLabels;
using jitlock::emit::SlowPathMode;

/// Emits one kernel as a baseline JIT would compile the loop: the thread in
/// a register for the whole function, every slow-path call after the `ret`
/// (SlowPathMode::Labels), and no frame: every register used is
/// caller-saved, and the slow-path glue saves and realigns by itself.
///
/// SysV arguments: rdi = thread, rsi = a, rdx = b, rcx = n. The count moves
/// to r8 (rcx becomes the second scratch register); churn's cursor is r10.
/// r9, otherwise free, is the third scratch register: the enter keeps the
/// lock-stack top in it across its CAS instead of reloading it.
asmjit::Error emitKernel(asmjit::x86::Assembler &A, const jitlock_rt_layout &L,
                         Kernel K) {
  using namespace asmjit;
  using namespace asmjit::x86;
  const Gp Thread = rdi, ObjA = rsi, ObjB = rdx, Count = r8, Cursor = r10;
  auto Ops = [&](Gp Obj) {
    return jx::MonitorOperands{Obj, Thread, rax, rcx, r9};
  };
  const int32_t PayloadOff = int32_t(offsetof(Object, Payload));

  struct Cold {
    SlowPathLabels Labels;
    bool Enter;
    jx::MonitorOperands Ops;
  };
  std::vector<std::unique_ptr<Cold>> ColdCalls;
  auto Monitor = [&](bool Enter, Gp Obj) -> Error {
    ColdCalls.push_back(std::make_unique<Cold>(Cold{{}, Enter, Ops(Obj)}));
    Cold &C = *ColdCalls.back();
    return Enter ? jx::emitMonitorEnter(A, L, C.Ops, SlowPathMode::Labels,
                                        &C.Labels)
                 : jx::emitMonitorExit(A, L, C.Ops, SlowPathMode::Labels,
                                       &C.Labels);
  };

  Label Loop = A.newLabel(), Ret = A.newLabel();
  A.mov(Count, rcx);
  A.test(Count, Count);
  A.jz(Ret);
  if (K == KChurn) {
    A.mov(Cursor, ObjA);
    A.xorps(xmm0, xmm0);
  }
  A.align(AlignMode::kCode, 16);
  A.bind(Loop);
  Error E = kErrorOk;
  switch (K) {
  case KSimple:
    if ((E = Monitor(true, ObjA)))
      return E;
    A.add(qword_ptr(ObjA, PayloadOff), 1);
    if ((E = Monitor(false, ObjA)))
      return E;
    break;
  case KRecursive:
    if ((E = Monitor(true, ObjA)) || (E = Monitor(true, ObjA)))
      return E;
    A.add(qword_ptr(ObjA, PayloadOff), 1);
    if ((E = Monitor(false, ObjA)) || (E = Monitor(false, ObjA)))
      return E;
    break;
  case KSerial:
    if ((E = Monitor(true, ObjA)) || (E = Monitor(true, ObjB)))
      return E;
    A.add(qword_ptr(ObjB, PayloadOff), 1);
    if ((E = Monitor(false, ObjB)) || (E = Monitor(false, ObjA)))
      return E;
    break;
  case KChurn:
    // The shared allocator: zero the 64 bytes, then the unlocked header.
    for (int32_t Off = 0; Off < 64; Off += 16)
      A.movaps(xmmword_ptr(Cursor, Off), xmm0);
    // Reserved locking: marked reservable, as its embedder would.
    if (L.reservable_value) {
      A.mov(rax, L.reservable_value | L.unlocked_value);
      A.mov(qword_ptr(Cursor, 0), rax);
    } else {
      A.mov(qword_ptr(Cursor, 0), 1);
    }
    if ((E = Monitor(true, Cursor)))
      return E;
    A.add(qword_ptr(Cursor, PayloadOff), 1);
    if ((E = Monitor(false, Cursor)))
      return E;
    A.add(Cursor, int32_t(sizeof(Object)));
    break;
  default:
    return kErrorInvalidArgument;
  }
  A.sub(Count, 1);
  A.jnz(Loop);
  A.bind(Ret);
  A.ret();
  for (const auto &C : ColdCalls)
    if ((E = jx::emitSlowCall(A, C->Enter, C->Ops, C->Labels)))
      return E;
  return kErrorOk;
}

} // namespace

bool AsmjitKernels::build(const jitlock_rt_layout &L) {
  for (Kernel K : {KSimple, KRecursive, KSerial, KChurn}) {
    asmjit::CodeHolder Code;
    Code.init(RT.environment());
    asmjit::StringLogger Logger;
    Code.setLogger(&Logger);
    asmjit::x86::Assembler A(&Code);
    void *Fn = nullptr;
    asmjit::Error E = emitKernel(A, L, K);
    if (!E)
      E = RT.add(&Fn, &Code);
    if (E) {
      Error = std::string("asmjit kernel ") + KernelSymbols[K] + ": " +
              asmjit::DebugUtils::errorAsString(E);
      return false;
    }
    Fns[K] = reinterpret_cast<KernelFn>(Fn);
    Listings[K].assign(Logger.data(), Logger.dataSize());
  }
  return true;
}

} // namespace jitlock::bench
