//===- X86Emitter.cpp - x86_64 monitor fast paths into asmjit -------------===//
//
// The x86_64 target of the asmjit front door (include/jitlock/Emitters/
// X86.h; what both targets share is in lib/Emitters/Common). It
// writes the inline steps of the protocol stated at the top of
// lib/Runtime/Synchronizer.cpp, labelled as there (E1-E5, M1-M2, X1-X4,
// N1-N3), with the same checks and memory orderings as the LLVM lowering in
// lib/Passes/LowerMonitors.cpp; docs/fast-paths.md shows what llc makes of
// that, docs/emitters.md what this file emits.
//
// Memory ordering: every CAS is a `lock cmpxchg`, a full barrier on x86, so
// the acquire (E5, M1) and release (X4) orderings cost nothing extra; the
// relaxed loads and stores of headers, lock stacks and monitor fields (M1's
// owner test, M2's and N2's recursion updates) are plain `mov`s, `inc`s and
// `dec`s. The inflated exit (N3) has no CAS: its release is a plain `mov` of
// 0 to the owner word (x86 stores are release stores), and the entry-count
// test after it is a plain `cmp`. With exit=store nothing separates them
// (the parking thread's membarrier pays for the StoreLoad order); with
// exit=fence a `lock or dword ptr [rsp], 0` does. That locked no-op on the
// thread's own, already-exclusive stack line is a full barrier for ordinary
// memory and costs less than `mfence` on current cores (mfence also orders
// non-temporal stores and WC memory, which the protocol does not need).
//
// Register use: Scratch0 (rax, cmpxchg's implicit comparand), Scratch1, and
// the optional Scratch2 (used by the enter only). Without Scratch2, the
// enter keeps the lock-stack top in eax until E5 needs rax for the CAS, and
// reloads it for the push. With Scratch2, the top lives in it from E2 to the
// push (no load after the locked instruction, on which the push's address
// and the next exit's top load would wait).
//
// The slow-path glue preserves every register:
//   - rbx (saved first) holds the entry rsp, so the stack can be realigned
//     whatever the caller's alignment;
//   - the SysV caller-saved GPRs rax rcx rdx rsi rdi r8-r11 are pushed (the
//     callee-saved ones the C function preserves itself);
//   - the vector state is saved with xsave to a 64-byte aligned area when the
//     CPU and OS support it (x87, SSE, AVX and AVX-512 state: the runtime's
//     libc calls may use ymm/zmm registers, including zmm16-31 and the mask
//     registers), otherwise with fxsave (x87 and xmm0-15);
//   - the arguments (thread, obj) are loaded into rdi/rsi from the saved
//     copies, so Obj and Thread may be any registers, rdi and rsi included,
//     in either order;
//   - the call is through rax to the absolute address of the entry point.
// An exit has two calls: RT.Exit from the state before the exit, and
// RT.ExitQueued after N3 released the monitor and found threads queued.
// The flags are not preserved (the contract allows it).
//
// Which vector-save form to use is decided when the code is emitted, from
// the CPU running the emitter: an emitter for a baseline JIT emits for the
// machine it runs on.
//
// The method-entry stack check (emitStackBang, near the end of the file)
// calls jitlock_rt_stack_bang through the same glue; its second argument is
// recomputed from the saved rsp instead of taken from a register. The
// safepoint poll (emitSafepointPoll, at the end) calls
// jitlock_rt_safepoint_poll through it with the thread alone.
//
//===----------------------------------------------------------------------===//
#include "jitlock/Emitters/X86.h"

#include "Common/Emitter.h"
#include "Common/Safepoint.h"
#include "Common/SlowPath.h"
#include "Common/StackBang.h"

#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

using namespace asmjit;

namespace jitlock::emit::x64 {

namespace detail {
/// Test hook, not part of the contract: 0 picks the vector-save form from
/// the CPU, 1 forces fxsave, 2 forces xsave (if the CPU has it). Declared by
/// the tests that use it.
void setVectorSaveForTesting(int Mode);
} // namespace detail

namespace {

std::atomic<int> VectorSaveOverride{0};

/// How the slow-path glue saves the vector state.
struct VectorSave {
  bool UseXsave = false;
  uint64_t Mask = 0;  ///< xsave's requested-feature bitmap (edx:eax)
  uint32_t Size = 0;  ///< bytes of save area
  uint32_t Align = 0; ///< its alignment
};

VectorSave detectVectorSave() {
  VectorSave FX;
  FX.Size = 512;
  FX.Align = 16;
#if !defined(__x86_64__)
  // Emitting x86_64 code on another host (cross-assembling): nothing to
  // detect; fxsave is available on every x86_64 CPU.
  return FX;
#else
  unsigned A, B, C, D;
  if (!__get_cpuid(1, &A, &B, &C, &D))
    return FX;
  constexpr unsigned XsaveBit = 1u << 26, OsxsaveBit = 1u << 27;
  if (!(C & XsaveBit) || !(C & OsxsaveBit))
    return FX;
  // x87, SSE, AVX, and the three AVX-512 components (opmask, ZMM_Hi256,
  // Hi16_ZMM). Not MPX (obsolete), PKRU (not caller state), nor AMX (its
  // tile data may be armed for first-use faults).
  constexpr uint64_t Wanted = 0x1 | 0x2 | 0x4 | 0x20 | 0x40 | 0x80;
  VectorSave XS;
  XS.UseXsave = true;
  uint32_t Lo, Hi;
  __asm__ volatile("xgetbv" : "=a"(Lo), "=d"(Hi) : "c"(0));
  XS.Mask = ((uint64_t(Hi) << 32) | Lo) & Wanted;
  XS.Align = 64;
  // Standard (non-compacted) format: the legacy area and the header take
  // 576 bytes; component I sits at CPUID(0xD, I).EBX, EAX bytes long.
  uint32_t Size = 576;
  for (unsigned I = 2; I < 8; ++I) {
    if (!(XS.Mask & (uint64_t(1) << I)))
      continue;
    if (!__get_cpuid_count(0xD, I, &A, &B, &C, &D))
      return FX;
    if (B + A > Size)
      Size = B + A;
  }
  XS.Size = (Size + 63) & ~63u;
  return XS;
#endif
}

VectorSave vectorSave() {
  static const VectorSave Host = detectVectorSave();
  int Override = VectorSaveOverride.load(std::memory_order_relaxed);
  if (Override == 1 || (Override == 0 && !Host.UseXsave)) {
    VectorSave FX;
    FX.Size = 512;
    FX.Align = 16;
    return FX;
  }
  return Host;
}

bool fitsInt32(int64_t V) {
  return V >= std::numeric_limits<int32_t>::min() &&
         V <= std::numeric_limits<int32_t>::max();
}

/// A 64-bit general-purpose register that exists (gpq(id) builds one of any
/// id: only rax..r15 do) and is not rsp.
bool isUsableGpq(const x86::Gp &R) {
  return R.isGpq() && R.id() < 16 && R.id() != x86::Gp::kIdSp;
}

/// Whether the optional third scratch register was given: anything but a
/// default-constructed x86::Gp counts (and must then pass validOperands).
bool hasScratch2(const MonitorOperands &Ops) {
  return !Ops.Scratch2.equals(x86::Gp());
}

/// The contract on the operands (Emitters.h): four distinct 64-bit GPRs
/// (five with Scratch2), none of them rsp, the first scratch register rax;
/// and an assembler attached to a CodeHolder for x86_64.
bool validOperands(const BaseEmitter &A, const MonitorOperands &Ops) {
  if (!attachedFor(A, Arch::kX64))
    return false;
  const x86::Gp *Regs[] = {&Ops.Obj, &Ops.Thread, &Ops.Scratch0, &Ops.Scratch1,
                           &Ops.Scratch2};
  const unsigned N = hasScratch2(Ops) ? 5 : 4;
  for (unsigned I = 0; I < N; ++I) {
    if (!isUsableGpq(*Regs[I]))
      return false;
    for (unsigned J = 0; J < I; ++J)
      if (Regs[I]->id() == Regs[J]->id())
        return false;
  }
  return Ops.Scratch0.id() == x86::Gp::kIdAx;
}

/// The monitor storage's values, checked to fit the encodings: the index's
/// stride is an imul immediate, the base slot and every probed cache word a
/// displacement from Thread.
bool validStorage(const jitlock_rt_layout &L) {
  std::optional<MonitorStorage> S = monitorStorageOf(L.monitor_storage);
  if (!S || monitorStorageProblem(L, *S))
    return false;
  switch (*S) {
  case MonitorStorage::Pointer:
    return true;
  case MonitorStorage::Index:
    return L.monitor_stride <= INT32_MAX && L.monitor_base_offset <= INT32_MAX;
  case MonitorStorage::Table:
    return fitsInt32(int64_t(L.monitor_cache_offset) +
                     16 * int64_t(L.monitor_cache_probes));
  }
  return false;
}

/// The layout values this file compiles in: the common check
/// (validMonitorLayout) and the immediates x86 encodes (imm32, sign-extended).
bool validLayout(const jitlock_rt_layout &L) {
  auto FitsImm = [](uint64_t V) { return fitsInt32(int64_t(V)); };
  return validMonitorLayout(L) && validStorage(L) && FitsImm(L.lock_mask) &&
         FitsImm(~L.lock_mask) && FitsImm(L.unlocked_value) &&
         FitsImm(L.monitor_value);
}

/// test R, Bits: the byte form when the bits are in the low byte.
Error testBits(x86::Assembler &A, const x86::Gp &R, uint64_t Bits) {
  if (Bits <= 0xFF)
    return A.test(R.r8(), int32_t(Bits));
  return A.test(R, int32_t(Bits));
}

/// The caller-saved GPRs of the SysV ABI, in the order the glue pushes them
/// (after rbx).
constexpr uint32_t CallerSaved[] = {
    x86::Gp::kIdAx, x86::Gp::kIdCx,  x86::Gp::kIdDx,
    x86::Gp::kIdSi, x86::Gp::kIdDi,  x86::Gp::kIdR8,
    x86::Gp::kIdR9, x86::Gp::kIdR10, x86::Gp::kIdR11};
constexpr int32_t NumCallerSaved = sizeof(CallerSaved) / sizeof(CallerSaved[0]);

/// Where the glue finds the value register `R` had on entry, once rbx holds
/// the stack pointer after `push rbx` and the caller-saved registers are
/// pushed below it.
Operand savedValue(const x86::Gp &R) {
  if (R.id() == x86::Gp::kIdBx)
    return x86::qword_ptr(x86::rbx);
  for (int32_t I = 0; I < NumCallerSaved; ++I)
    if (CallerSaved[I] == R.id())
      return x86::qword_ptr(x86::rbx, -8 * (I + 1));
  return x86::gpq(R.id()); // callee-saved: untouched so far
}

/// The arguments the glue passes: (thread, obj) for the monitor slow paths,
/// (thread, entry rsp - Extra) for the stack bang, or (thread) alone, with
/// Obj left invalid, for the safepoint poll.
struct GlueArgs {
  x86::Gp Thread;
  x86::Gp Obj;
  bool StackBang = false;
  int32_t Extra = 0;
};

GlueArgs monitorArgs(const MonitorOperands &Ops) {
  return {Ops.Thread, Ops.Obj, false, 0};
}

/// Writes x86_64 code into one assembler (the sequences' error is the first
/// error of the asmjit calls).
class Emitter : public EmitterBase<x86::Assembler> {
public:
  using EmitterBase::EmitterBase;

  /// The slow-path call: every register preserved, the stack aligned to 64
  /// at the call whatever its alignment on entry, the arguments in rdi/rsi,
  /// then a jump to Done (or, when Done is invalid, a fall-through).
  void glue(const void *Entry, const GlueArgs &Args, const Label &Done);
  /// The monitor sequences, for operands and a layout already checked.
  void enter(const jitlock_rt_layout &L, const MonitorOperands &Ops,
             SlowPathMode Mode, const Label &Slow, const Label &Done,
             const RuntimeEntries &RT);
  void exit(const jitlock_rt_layout &L, const MonitorOperands &Ops,
            SlowPathMode Mode, const Label &Slow, const Label &Done,
            const Label &Queued, const RuntimeEntries &RT);

private:
  void findMonitor(const jitlock_rt_layout &L, const MonitorOperands &Ops,
                   const x86::Gp &H, const Label &Slow, bool ForExit);
};

void Emitter::glue(const void *Entry, const GlueArgs &Args, const Label &Done) {
  const VectorSave VS = vectorSave();
  ok(A.push(x86::rbx));
  ok(A.mov(x86::rbx, x86::rsp));
  for (uint32_t Id : CallerSaved)
    ok(A.push(x86::gpq(Id)));
  ok(A.sub(x86::rsp, int32_t(VS.Size)));
  ok(A.and_(x86::rsp, -int32_t(VS.Align)));
  if (VS.UseXsave) {
    // The xsave header (bytes 512-575) must start zeroed: xsave writes only
    // the XSTATE_BV bits of the components it saves, and xrstor faults on
    // reserved header bits; the stack holds garbage there.
    ok(A.xor_(x86::eax, x86::eax));
    for (int32_t Off = 512; Off < 512 + 64; Off += 8)
      ok(A.mov(x86::qword_ptr(x86::rsp, Off), x86::rax));
    ok(A.mov(x86::eax, uint32_t(VS.Mask)));
    ok(A.mov(x86::edx, uint32_t(VS.Mask >> 32)));
    ok(A.xsave64(x86::ptr(x86::rsp)));
  } else {
    ok(A.fxsave64(x86::ptr(x86::rsp)));
  }
  // The arguments come from the saved copies: no ordering hazard when Obj
  // and Thread are rdi/rsi (in either order) or rbx, rax, rdx.
  Operand ThreadSrc = savedValue(Args.Thread);
  ok(ThreadSrc.isReg() ? A.mov(x86::rdi, ThreadSrc.as<x86::Gp>())
                       : A.mov(x86::rdi, ThreadSrc.as<x86::Mem>()));
  if (Args.StackBang) {
    // need = the rsp of the check (rbx + 8, before `push rbx`) - Extra:
    // recomputed, so no register has to carry it here.
    ok(A.lea(x86::rsi, x86::ptr(x86::rbx, 8 - Args.Extra)));
  } else if (Args.Obj.isValid()) {
    Operand ObjSrc = savedValue(Args.Obj);
    ok(ObjSrc.isReg() ? A.mov(x86::rsi, ObjSrc.as<x86::Gp>())
                      : A.mov(x86::rsi, ObjSrc.as<x86::Mem>()));
  }
  ok(A.mov(x86::rax, uint64_t(reinterpret_cast<uintptr_t>(Entry))));
  ok(A.call(x86::rax));
  if (VS.UseXsave) {
    ok(A.mov(x86::eax, uint32_t(VS.Mask)));
    ok(A.mov(x86::edx, uint32_t(VS.Mask >> 32)));
    ok(A.xrstor64(x86::ptr(x86::rsp)));
  } else {
    ok(A.fxrstor64(x86::ptr(x86::rsp)));
  }
  ok(A.lea(x86::rsp, x86::ptr(x86::rbx, -8 * NumCallerSaved)));
  for (int32_t I = NumCallerSaved - 1; I >= 0; --I)
    ok(A.pop(x86::gpq(CallerSaved[I])));
  ok(A.pop(x86::rbx));
  if (Done.isValid())
    ok(A.jmp(Done));
}

/// The operands, the layout and the entry points, checked before anything
/// is emitted (sequenceLabels checks the mode and labels). OutOfLine needs
/// the entry points it calls; Labels mode calls nothing (emitSlowCall does).
Error checkArguments(x86::Assembler &A, const jitlock_rt_layout &L,
                     const MonitorOperands &Ops, SlowPathMode Mode,
                     const void *Entry, const void *SecondEntry = nullptr,
                     bool NeedsSecond = false) {
  if (!validOperands(A, Ops) || !validLayout(L))
    return kErrorInvalidArgument;
  if (Mode == SlowPathMode::OutOfLine &&
      (!Entry || (NeedsSecond && !SecondEntry)))
    return kErrorInvalidArgument;
  return kErrorOk;
}

} // namespace

void detail::setVectorSaveForTesting(int Mode) {
  VectorSaveOverride.store(Mode, std::memory_order_relaxed);
}

/// A monitor field's displacement from the register that names the monitor
/// once findMonitor has run: with pointer storage the header itself
/// (the monitor's address plus the monitor bits), otherwise the monitor's
/// address.
static int32_t monitorFieldOffset(const jitlock_rt_layout &L,
                                  uint32_t FieldOffset) {
  int64_t Bias = L.monitor_storage == JITLOCK_MONITORS_POINTER
                     ? int64_t(L.monitor_value)
                     : 0;
  return int32_t(int64_t(FieldOffset) - Bias);
}

/// The first step of M1 and N2: H holds a header whose tag is exactly 10;
/// afterwards it names the object's monitor (see monitorFieldOffset). Pointer
/// storage: nothing to do. Index: m = base + (h >> shift) * stride, the base
/// from the thread. Table: unrolled probes of the thread's monitor cache, the
/// first entry whose object is Obj giving m; a miss jumps to Slow. Only H,
/// rax (for the exit) and the flags are written.
///
/// `ForExit`: a thread that is not attached has no index base (0); E2 keeps
/// it out of M1, but its exit reaches N2, so the exit tests the base and
/// leaves a 0 to the runtime, which refuses the exit.
void Emitter::findMonitor(const jitlock_rt_layout &L,
                          const MonitorOperands &Ops, const x86::Gp &H,
                          const Label &Slow, bool ForExit) {
  // Validated when the emitter was made (a storage of MonitorStorage.def).
  switch (*monitorStorageOf(L.monitor_storage)) {
  case MonitorStorage::Pointer:
    return;
  case MonitorStorage::Index: {
    const x86::Mem Base =
        x86::qword_ptr(Ops.Thread, int32_t(L.monitor_base_offset));
    if (ForExit) {
      ok(A.mov(x86::rax, Base));
      ok(A.test(x86::rax, x86::rax));
      ok(A.jz(Slow));
    }
    ok(A.shr(H, int32_t(L.monitor_index_shift)));
    ok(A.imul(H, H, int32_t(L.monitor_stride)));
    ok(ForExit ? A.add(H, x86::rax) : A.add(H, Base));
    return;
  }
  case MonitorStorage::Table: {
    // Each probe: the entry's object is obj? Then m is the word after it.
    Label Found = A.newLabel();
    for (uint32_t I = 0; I != L.monitor_cache_probes; ++I) {
      const bool Last = I + 1 == L.monitor_cache_probes;
      const int32_t Entry = int32_t(L.monitor_cache_offset + 16 * I);
      Label Next = Last ? Slow : A.newLabel();
      ok(A.cmp(x86::qword_ptr(Ops.Thread, Entry), Ops.Obj));
      ok(A.jne(Next));
      ok(A.mov(H, x86::qword_ptr(Ops.Thread, Entry + 8)));
      if (!Last) {
        ok(A.jmp(Found));
        ok(A.bind(Next));
      }
    }
    ok(A.bind(Found));
    return;
  }
  }
}

Error emitMonitorEnter(x86::Assembler &A, const jitlock_rt_layout &L,
                       const MonitorOperands &Ops, SlowPathMode Mode,
                       SlowPathLabels *Labels, const RuntimeEntries &RT) {
  if (Error Err = checkArguments(A, L, Ops, Mode, RT.Enter))
    return Err;
  Label Slow, Done;
  if (Error Err = sequenceLabels(A, Mode, Labels, Slow, Done))
    return Err;
  Emitter E(A);
  E.enter(L, Ops, Mode, Slow, Done, RT);
  return E.error();
}

void Emitter::enter(const jitlock_rt_layout &L, const MonitorOperands &Ops,
                    SlowPathMode Mode, const Label &Slow, const Label &Done,
                    const RuntimeEntries &RT) {
  Label Push = A.newLabel(), Inflated = A.newLabel();

  const x86::Gp Obj = Ops.Obj, Thread = Ops.Thread, H = Ops.Scratch1;
  // The lock-stack top (a u32 byte offset, zero-extended): in Scratch2 when
  // given, which keeps it across E5's CAS; else in rax, which the CAS needs.
  const bool KeepTop = hasScratch2(Ops);
  const x86::Gp T = KeepTop ? Ops.Scratch2 : x86::rax;
  const x86::Mem Header = x86::qword_ptr(Obj, L.header_offset);
  const x86::Mem Top = x86::dword_ptr(Thread, int32_t(L.lock_stack_top_offset));
  // [thread + top - 8]: the top entry, the sentinel when the stack is empty.
  const x86::Mem TopEntry = x86::qword_ptr(Thread, T, 0, -8);
  const int32_t MonOwner = monitorFieldOffset(L, L.monitor_owner_offset);
  const int32_t MonRecursions =
      monitorFieldOffset(L, L.monitor_recursions_offset);

  // E1: h = header (relaxed; the CAS in E5 or M1 orders the acquire).
  ok(A.mov(H, Header));
  const bool Reserved = reservedLocking(L);
  const x86::Mem Tag = x86::qword_ptr(Thread, int32_t(L.reserve_tag_offset));
  if (Reserved) {
    // R1: reserved to this thread (h & reserve_mask == the thread's tag):
    // E2's test, then the push; no atomic, the header untouched.
    Label Unreserved = A.newLabel();
    ok(A.mov(x86::rax, L.reserve_mask));
    ok(A.and_(x86::rax, H));
    ok(A.cmp(x86::rax, Tag));
    ok(A.jne(Unreserved));
    ok(A.mov(T.r32(), Top));
    ok(A.cmp(T.r32(), int32_t(L.lock_stack_end_offset)));
    ok(A.jae(Slow));
    ok(A.jmp(Push));
    ok(A.bind(Unreserved));
  }
  // E2: a full lock stack goes to the runtime, which inflates the oldest.
  // Before the header's bits: a thread that is not attached has a full
  // stack, and must not take a monitor in M1.
  ok(A.mov(T.r32(), Top));
  ok(A.cmp(T.r32(), int32_t(L.lock_stack_end_offset)));
  ok(A.jae(Slow));
  // E3: bit 1 set: a monitor (10) or the embedder's state (11).
  ok(testBits(A, H, L.monitor_value));
  ok(A.jnz(Inflated));
  // E4: the top entry is obj: recursion, a push with no atomic.
  ok(A.cmp(TopEntry, Obj));
  ok(A.je(Push));
  // R2, out of line, and where it joins the push: labels of a reserved
  // layout only, so that the other layouts' code has no stray label.
  Label Reserve, Pushable;
  if (Reserved) {
    Reserve = A.newLabel();
    Pushable = A.newLabel();
    // E5 takes only a header whose reservation field is 0; any other goes
    // to R2's test, out of line. rax is free (E5 reloads the top without
    // Scratch2).
    ok(A.mov(x86::rax, L.reserve_mask));
    ok(A.and_(x86::rax, H));
    ok(A.cmp(x86::rax, int32_t(L.unlocked_value)));
    ok(A.jne(Reserve));
  }
  // E5: CAS header (h | 01) -> (h & ~11); acquire (lock cmpxchg is a full
  // barrier). On failure the runtime retries from the state before E1.
  ok(A.mov(x86::rax, H));
  ok(A.or_(x86::rax, int32_t(L.unlocked_value)));
  ok(A.and_(H, int32_t(~L.lock_mask)));
  ok(A.lock().cmpxchg(Header, H));
  ok(A.jne(Slow));
  // Without Scratch2, cmpxchg left rax = h | 01: reload the top (only this
  // thread writes it). With it, the top is still in T.
  if (Reserved)
    ok(A.bind(Pushable));
  if (!KeepTop)
    ok(A.mov(x86::eax, Top));
  // Push: slot[top] = obj; top += 8. Plain stores: only this thread writes
  // its lock stack.
  ok(A.bind(Push));
  ok(A.mov(x86::qword_ptr(Thread, T), Obj));
  ok(A.add(T.r32(), 8));
  ok(A.mov(Top, T.r32()));
  ok(A.jmp(Done));

  if (Reserved) {
    // R2: reservable (the field all ones; E3 saw bit 1 clear, so this tests
    // 01 too) and a thread that may reserve (tag not ~0): CAS h -> h with
    // the field the thread's index, acquire, every other bit kept; then
    // the push. Reserved to another thread (R3), fast-locked, a lost CAS:
    // the runtime. With K = reservable | unlocked, which are h's bits under
    // the mask, the desired header is h ^ K ^ tag and h is desired ^ K ^
    // tag again: rax ends as the expected h, H as the desired header.
    const uint64_t K = L.reservable_value | L.unlocked_value;
    ok(A.bind(Reserve));
    ok(A.mov(x86::rax, ~K));
    ok(A.or_(x86::rax, H));
    ok(A.cmp(x86::rax, -1));
    ok(A.jne(Slow));
    ok(A.cmp(Tag, -1));
    ok(A.je(Slow));
    ok(A.mov(x86::rax, K));
    ok(A.xor_(x86::rax, Tag));
    ok(A.xor_(H, x86::rax));
    ok(A.xor_(x86::rax, H));
    ok(A.lock().cmpxchg(Header, H));
    ok(A.jne(Slow));
    ok(A.jmp(Pushable));
  }

  if (Mode == SlowPathMode::OutOfLine) {
    ok(A.bind(Slow));
    glue(RT.Enter, monitorArgs(Ops), Done);
  }

  // M1: exactly 10 (11 is the embedder's: the runtime waits it out). The
  // monitor is h - 10, or found by index or in the cache (findMonitor;
  // H names it from then on). Test, then CAS: load its owner (a plain mov);
  // only when it is 0, CAS it 0 -> thread, acquire (rax is already the 0). A
  // nonzero owner skips the CAS, which would take the owner's cache line.
  Label Owned = A.newLabel();
  ok(A.bind(Inflated));
  ok(A.mov(x86::eax, H.r32()));
  ok(A.and_(x86::eax, int32_t(L.lock_mask)));
  ok(A.cmp(x86::eax, int32_t(L.monitor_value)));
  ok(A.jne(Slow));
  findMonitor(L, Ops, H, Slow, /*ForExit=*/false);
  ok(A.mov(x86::rax, x86::qword_ptr(H, MonOwner)));
  ok(A.test(x86::rax, x86::rax));
  ok(A.jnz(Owned));
  ok(A.lock().cmpxchg(x86::qword_ptr(H, MonOwner), Thread));
  ok(A.je(Done));
  // The CAS failed: rax holds the new owner, never this thread, so the
  // check below sends it to the runtime.
  // M2: the owner (in rax) is this thread: recursions += 1 (only the owner
  // writes it). Anonymous, a deflater or another owner: the runtime.
  ok(A.bind(Owned));
  ok(A.cmp(x86::rax, Thread));
  ok(A.jne(Slow));
  ok(A.inc(x86::qword_ptr(H, MonRecursions)));
  ok(A.bind(Done));
}

Error emitMonitorExit(x86::Assembler &A, const jitlock_rt_layout &L,
                      const MonitorOperands &Ops, SlowPathMode Mode,
                      SlowPathLabels *Labels, const RuntimeEntries &RT) {
  if (Error Err = checkArguments(A, L, Ops, Mode, RT.Exit, RT.ExitQueued,
                                 /*NeedsSecond=*/true))
    return Err;
  Label Slow, Done, Queued;
  if (Error Err = sequenceLabels(A, Mode, Labels, Slow, Done, &Queued))
    return Err;
  Emitter E(A);
  E.exit(L, Ops, Mode, Slow, Done, Queued, RT);
  return E.error();
}

void Emitter::exit(const jitlock_rt_layout &L, const MonitorOperands &Ops,
                   SlowPathMode Mode, const Label &Slow, const Label &Done,
                   const Label &Queued, const RuntimeEntries &RT) {
  Label Inflated = A.newLabel(), Restore = A.newLabel(),
        Recursive = A.newLabel();

  const x86::Gp Obj = Ops.Obj, Thread = Ops.Thread, H = Ops.Scratch1;
  const x86::Mem Header = x86::qword_ptr(Obj, L.header_offset);
  const x86::Mem Top = x86::dword_ptr(Thread, int32_t(L.lock_stack_top_offset));
  const x86::Mem BelowTop = x86::qword_ptr(Thread, x86::rax, 0, -8);
  const int32_t MonOwner = monitorFieldOffset(L, L.monitor_owner_offset);
  const int32_t MonRecursions =
      monitorFieldOffset(L, L.monitor_recursions_offset);
  const int32_t MonEntryCount =
      monitorFieldOffset(L, L.monitor_entry_count_offset);

  // X1: the top entry [thread + top - 8] is not obj: the inflated exit (N1).
  ok(A.mov(x86::eax, Top));
  ok(A.cmp(BelowTop, Obj));
  ok(A.jne(Inflated));
  // X2: pop.
  ok(A.sub(x86::eax, 8));
  ok(A.mov(Top, x86::eax));
  // X3: the new top entry (the sentinel when none) is obj too: a recursive
  // exit, done.
  ok(A.cmp(BelowTop, Obj));
  ok(A.je(Done));
  // X4: h = header; bits 00: CAS h -> h | 01, release (lock cmpxchg is a
  // full barrier).
  ok(A.mov(x86::rax, Header));
  if (reservedLocking(L)) {
    // R4: after the pop and X3, still reserved to this thread: done, no
    // atomic. Revoked while held (fast-locked now): X4.
    ok(A.mov(H, L.reserve_mask));
    ok(A.and_(H, x86::rax));
    ok(A.cmp(H, x86::qword_ptr(Thread, int32_t(L.reserve_tag_offset))));
    ok(A.je(Done));
  }
  // Locked is 00 (validMonitorLayout), so the bits are tested for zero.
  ok(testBits(A, x86::rax, L.lock_mask));
  ok(A.jnz(Restore));
  ok(A.mov(H, x86::rax));
  ok(A.or_(H, int32_t(L.unlocked_value)));
  ok(A.lock().cmpxchg(Header, H));
  ok(A.je(Done));
  // X4 failed (a contender inflated it, or a hash was installed): push obj
  // back (the slot still holds it) so that the runtime sees the state from
  // before the exit.
  ok(A.bind(Restore));
  ok(A.add(Top, 8));
  ok(A.jmp(Slow));

  // N2, recursive (out of line, reached from below; the owner is this
  // thread): recursions -= 1, no atomic (only the owner writes it).
  ok(A.bind(Recursive));
  ok(A.dec(x86::qword_ptr(H, MonRecursions)));
  ok(A.jmp(Done));

  // N1: h = header; not exactly 10: the runtime.
  ok(A.bind(Inflated));
  ok(A.mov(H, Header));
  ok(A.mov(x86::eax, H.r32()));
  ok(A.and_(x86::eax, int32_t(L.lock_mask)));
  ok(A.cmp(x86::eax, int32_t(L.monitor_value)));
  ok(A.jne(Slow));
  // N2: the monitor (h - 10, or found by index or in the cache). Its owner
  // first, a plain load (only this thread stores itself there): anything
  // but this thread (another owner, anonymous, a deflater) goes to the
  // runtime with the state untouched. Then recursions: one less, above.
  findMonitor(L, Ops, H, Slow, /*ForExit=*/true);
  ok(A.cmp(x86::qword_ptr(H, MonOwner), Thread));
  ok(A.jne(Slow));
  ok(A.cmp(x86::qword_ptr(H, MonRecursions), 0));
  ok(A.jne(Recursive));
  // N3: owner = 0, a plain store (release on x86); with exit=fence a full
  // fence; then the entry count. Nonzero: threads are queued, and
  // RT.ExitQueued wakes one (the monitor is released already, so not
  // RT.Exit).
  ok(A.mov(x86::qword_ptr(H, MonOwner), 0));
  if (L.monitor_exit == JITLOCK_EXIT_FENCE)
    ok(A.lock().or_(x86::dword_ptr(x86::rsp), 0));
  ok(A.cmp(x86::dword_ptr(H, MonEntryCount), 0));
  if (Mode == SlowPathMode::OutOfLine) {
    // Nobody queued, the steady state: one taken branch over both calls.
    ok(A.je(Done));
    ok(A.bind(Queued));
    glue(RT.ExitQueued, monitorArgs(Ops), Done);
    ok(A.bind(Slow));
    glue(RT.Exit, monitorArgs(Ops), Label());
  } else {
    ok(A.jne(Queued));
  }
  ok(A.bind(Done));
}

Error emitSlowCall(x86::Assembler &A, SlowCall Call, const MonitorOperands &Ops,
                   const SlowPathLabels &Labels, const RuntimeEntries &RT) {
  if (!validOperands(A, Ops) || !stubUsable(*A.code(), Labels, Call, RT))
    return kErrorInvalidArgument;
  Emitter E(A);
  E.ok(A.bind(*stubLabel(Labels, Call)));
  E.glue(stubEntry(RT, Call), monitorArgs(Ops), Labels.Done);
  return E.error();
}

Error emitSlowCall(x86::Assembler &A, bool Enter, const MonitorOperands &Ops,
                   const SlowPathLabels &Labels, const RuntimeEntries &RT) {
  SlowCall Calls[2];
  const unsigned N = sequenceStubs(Labels, Enter, Calls);
  if (!validOperands(A, Ops))
    return kErrorInvalidArgument;
  for (unsigned I = 0; I != N; ++I)
    if (!stubUsable(*A.code(), Labels, Calls[I], RT))
      return kErrorInvalidArgument;
  Emitter E(A);
  for (unsigned I = 0; I != N; ++I)
    E.ok(emitSlowCall(A, Calls[I], Ops, Labels, RT));
  return E.error();
}

//===----------------------------------------------------------------------===//
// Stack banging
//===----------------------------------------------------------------------===//

namespace {

bool validBangOperands(const BaseEmitter &A, const StackBangOperands &Ops) {
  if (!attachedFor(A, Arch::kX64))
    return false;
  for (const x86::Gp *R : {&Ops.Thread, &Ops.Scratch})
    if (!R->isGpq() || R->id() == x86::Gp::kIdSp)
      return false;
  return Ops.Thread.id() != Ops.Scratch.id();
}

/// x86_64's instructions for the shared stack bang (Common/StackBang.h).
class BangEmitter : public Emitter {
public:
  BangEmitter(x86::Assembler &A, const StackBangOperands &Ops)
      : Emitter(A), Ops(Ops) {}

  bool valid() const { return validBangOperands(A, Ops); }
  // Stores, not loads: a read of a never-touched page may be served from
  // the zero page without committing it. The value stored is irrelevant.
  void touch(uint32_t Off) {
    ok(A.mov(x86::dword_ptr(x86::rsp, -int32_t(Off)), Ops.Scratch.r32()));
  }
  void compareNeed(const jitlock_rt_layout &L, uint32_t Extra) {
    const x86::Mem Watermark =
        x86::qword_ptr(Ops.Thread, int32_t(L.stack_watermark_offset));
    if (Extra == 0) {
      ok(A.cmp(x86::rsp, Watermark));
      return;
    }
    ok(A.lea(Ops.Scratch, x86::ptr(x86::rsp, -int32_t(Extra))));
    ok(A.cmp(Ops.Scratch, Watermark));
  }
  void branchIfRoom(const Label &To) { ok(A.ja(To)); }
  void branchIfShort(const Label &To) { ok(A.jbe(To)); }
  void slowCall(uint32_t Extra, const RuntimeEntries &RT, const Label *Back) {
    glue(RT.StackBang, {Ops.Thread, x86::Gp(), true, int32_t(Extra)},
         Back ? *Back : Label());
  }

private:
  const StackBangOperands &Ops;
};

} // namespace

JITLOCK_DEFINE_STACK_BANG_ENTRY_POINTS(x86::Assembler)

//===----------------------------------------------------------------------===//
// Safepoint polls
//===----------------------------------------------------------------------===//

namespace {

/// x86_64's instructions for the shared poll (Common/Safepoint.h). P1 is
/// `test byte ptr [Thread + off], bit`: one plain (relaxed) byte load that
/// writes no register. P2 re-reads the word itself; its one argument is the
/// thread (rsi is left alone).
class PollEmitter : public Emitter {
public:
  PollEmitter(x86::Assembler &A, const SafepointPollOperands &Ops)
      : Emitter(A), Ops(Ops) {}

  bool valid() const {
    return attachedFor(A, Arch::kX64) && isUsableGpq(Ops.Thread);
  }
  void branchIfArmed(const safepoint::ArmedByte &Armed, const Label &To) {
    testArmed(Armed);
    ok(A.jnz(To));
  }
  void branchIfDisarmed(const safepoint::ArmedByte &Armed, const Label &To) {
    testArmed(Armed);
    ok(A.jz(To));
  }
  void slowCall(const RuntimeEntries &RT, const Label *Back) {
    glue(RT.SafepointPoll, {Ops.Thread, x86::Gp(), false, 0},
         Back ? *Back : Label());
  }

private:
  void testArmed(const safepoint::ArmedByte &Armed) {
    ok(A.test(x86::byte_ptr(Ops.Thread, int32_t(Armed.Offset)),
              int32_t(1u << Armed.Bit)));
  }
  const SafepointPollOperands &Ops;
};

} // namespace

JITLOCK_DEFINE_SAFEPOINT_POLL_ENTRY_POINTS(x86::Assembler)

//===----------------------------------------------------------------------===//
// The current thread
//===----------------------------------------------------------------------===//

Error emitLoadThread(x86::Assembler &A, const jitlock_rt_layout &L,
                     const x86::Gp &Dst) {
  if (!attachedFor(A, Arch::kX64) || !isUsableGpq(Dst) ||
      L.abi_version != JITLOCK_RT_ABI_VERSION ||
      !fitsInt32(L.thread_tls_offset))
    return kErrorInvalidArgument;
  Emitter E(A);
  // fs:[0] holds the thread pointer itself (the TCB's self pointer), which
  // is what llvm.thread.pointer reads too; the thread sits at a fixed
  // offset from it in static TLS. lea leaves the flags alone.
  x86::Mem ThreadPointer = x86::qword_ptr_abs(0);
  ThreadPointer.setSegment(x86::fs);
  E.ok(A.mov(Dst, ThreadPointer));
  if (L.thread_tls_offset != 0)
    E.ok(A.lea(Dst, x86::ptr(Dst, int32_t(L.thread_tls_offset))));
  return E.error();
}

} // namespace jitlock::emit::x64
