//===- AArch64Emitter.cpp - AArch64 monitor fast paths for asmjit ---------===//
//
// The AArch64 target of the asmjit front door (include/jitlock/Emitters/
// AArch64.h; what both targets share is in lib/Emitters/Common): monitor
// enter and exit for AArch64. The protocol is the one stated at the top of
// lib/Runtime/Synchronizer.cpp, and the comments below cite its step labels
// (E1-E5, M1-M2, X1-X4, N1-N3). The checks and memory orderings are those of
// the LLVM lowering (lib/Passes/LowerMonitors.cpp), whose AArch64 machine
// code docs/fast-paths.md shows:
//
//   * The header, lock-stack and recursion-count accesses, and the owner
//     tests of M1 and N2, are plain ldr/str (relaxed atomics: aligned 32-
//     and 64-bit accesses are single-copy atomic).
//   * E5 and M1, the acquisitions, are acquire CASes: casa (LSE), or an
//     ldaxr/stxr loop (LL/SC).
//   * X4, the fast unlock, is a release CAS: casl, or an ldxr/stlxr loop.
//   * N3, the inflated exit, has no CAS: `stlr xzr` to the owner word (the
//     release), then, only for a layout whose monitor_exit is
//     JITLOCK_EXIT_FENCE, `dmb ish`, then a plain `ldr w` of the entry
//     count and `cbnz` to the RT.ExitQueued call. That dmb is the only
//     barrier anywhere. A failed LL/SC compare leaves through clrex.
//
// Registers. Obj and Thread are only read. The three scratch registers are
// written (H: the header; T: the lock-stack top or an address; V: values
// and CAS results); no other register changes, except through the slow-path
// glue, which preserves everything but the scratch registers. Every offset
// comes from the jitlock_rt_layout passed in; an offset that no instruction
// can encode is materialized into a scratch register that is free at that
// point (see load(), store() and addImm()).
//
// The layout is checked by validMonitorLayout (lib/Emitters/Common/
// Emitter.h), the same check as on x86_64; no other field constrains the
// encodings here. A layout it refuses gets kErrorInvalidArgument, as do
// operands that break the contract in jitlock/Emitters/Common.h. Nothing is
// emitted then.
//
// The method-entry stack check (emitStackBang, near the end of the file)
// calls jitlock_rt_stack_bang through the same glue, with `need` recomputed
// from the saved sp. The safepoint poll (emitSafepointPoll, at the end)
// calls jitlock_rt_safepoint_poll through it with the thread alone, and
// gives it one scratch register instead of two.
//
//===----------------------------------------------------------------------===//
#include "jitlock/Emitters/AArch64.h"

#include "Common/Emitter.h"
#include "Common/Safepoint.h"
#include "Common/SlowPath.h"
#include "Common/StackBang.h"

#include <cstdint>

namespace jitlock::emit::a64 {
namespace {

using asmjit::Error;
using asmjit::kErrorInvalidArgument;
using asmjit::kErrorOk;
using asmjit::Label;
using asmjit::a64::Gp;

namespace A64 = asmjit::a64;

/// x0-x30: an x register that is neither sp (id 31) nor xzr (id 63).
bool isX(const Gp &R) { return R.isGpX() && R.id() <= 30; }

bool validOperands(const MonitorOperands &Ops) {
  const Gp Regs[] = {Ops.Obj, Ops.Thread, Ops.Scratch0, Ops.Scratch1,
                     Ops.Scratch2};
  for (unsigned I = 0; I != 5; ++I) {
    if (!isX(Regs[I]))
      return false;
    // x16/x17 (the intra-procedure-call registers) and x18 (the platform
    // register) are never scratch.
    if (I >= 2 && Regs[I].id() >= 16 && Regs[I].id() <= 18)
      return false;
    for (unsigned J = 0; J != I; ++J)
      if (Regs[I].id() == Regs[J].id())
        return false;
  }
  return true;
}

uint32_t bitIndex(uint64_t V) { return uint32_t(__builtin_ctzll(V)); }

bool usableAssembler(A64::Assembler &A) {
  return attachedFor(A, asmjit::Arch::kAArch64);
}

struct GlueArgs;

/// Writes AArch64 code into one assembler, the first error any instruction
/// returns kept: instruction helpers for offsets and immediates of any
/// size, and the slow-path glue.
class Emitter : public EmitterBase<A64::Assembler> {
public:
  using EmitterBase::EmitterBase;

  void movImm(const Gp &Dst, uint64_t Value);
  /// R = [Base + Off], and [Base + Off] = R, for any offset (see access).
  void load(const Gp &R, const Gp &Base, int64_t Off, const Gp &Tmp) {
    access(A64::Inst::kIdLdr, A64::Inst::kIdLdur, R, Base, Off, Tmp);
  }
  void store(const Gp &R, const Gp &Base, int64_t Off, const Gp &Tmp) {
    access(A64::Inst::kIdStr, A64::Inst::kIdStur, R, Base, Off, Tmp);
  }
  void access(asmjit::InstId Scaled, asmjit::InstId Unscaled, const Gp &R,
              const Gp &Base, int64_t Off, const Gp &Tmp);
  void addImm(const Gp &Dst, const Gp &Src, int64_t Off, const Gp &Tmp);
  void subImm(const Gp &Dst, const Gp &Src, uint64_t Value, const Gp &Tmp);
  void cmpImm(const Gp &R, uint64_t Value, const Gp &Tmp);
  /// Calls the runtime with every register preserved but Args.S0 and S1.
  void glue(const GlueArgs &Args);
};

/// Emits one monitor sequence.
class MonitorEmitter : public Emitter {
public:
  MonitorEmitter(A64::Assembler &A, const jitlock_rt_layout &L,
                 const MonitorOperands &Ops, Atomics At)
      : Emitter(A), L(L), Obj(Ops.Obj), Thread(Ops.Thread), H(Ops.Scratch0),
        T(Ops.Scratch1), V(Ops.Scratch2), At(At),
        UnlockedBit(bitIndex(L.unlocked_value)),
        MonitorBit(bitIndex(L.monitor_value)), HeaderOff(L.header_offset),
        TopOff(L.lock_stack_top_offset),
        // A monitor's fields, from the register findMonitor leaves naming
        // it: the tagged header (monitor | 0b10) with pointer storage, the
        // monitor's address otherwise.
        OwnerOff(int64_t(L.monitor_owner_offset) - monitorBias(L)),
        RecursionsOff(int64_t(L.monitor_recursions_offset) - monitorBias(L)),
        EntryCountOff(int64_t(L.monitor_entry_count_offset) - monitorBias(L)) {}

  /// `SlowFollows`: the code after the sequence's last block is Slow (the
  /// out-of-line glue), so that block may fall through to it.
  void enter(Label Slow, Label Done, bool SlowFollows);
  /// `QueuedFollows`: the code after the sequence's last block is the
  /// RT.ExitQueued glue (out of line); otherwise it is Done.
  void exit(Label Slow, Label Done, Label Queued, bool QueuedFollows);

private:
  static int64_t monitorBias(const jitlock_rt_layout &L) {
    return L.monitor_storage == JITLOCK_MONITORS_POINTER
               ? int64_t(L.monitor_value)
               : 0;
  }
  void stlxr(const Gp &Status, const Gp &Value, const Gp &Addr);
  void findMonitor(Label Slow, bool ForExit);
  void reserve(Label Reserve, Label Pushable, Label Slow, Label CasFail);
  /// Compares h & reserve_mask (into `Masked`) with the thread's tag (into
  /// `Other`), or with unlocked_value when `Tag` is false (`Other` unused);
  /// the flags say eq when they match.
  void reservedTo(const Gp &Masked, const Gp &Other, bool Tag) {
    movImm(Masked, L.reserve_mask);
    ok(A.and_(Masked, Masked, H));
    if (Tag) {
      load(Other, Thread, L.reserve_tag_offset, Other);
      ok(A.cmp(Masked, Other));
    } else {
      ok(A.cmp(Masked, L.unlocked_value));
    }
  }

  const jitlock_rt_layout &L;
  Gp Obj, Thread, H, T, V;
  Atomics At;
  uint32_t UnlockedBit, MonitorBit;
  int64_t HeaderOff, TopOff, OwnerOff, RecursionsOff, EntryCountOff;
};

/// Dst = Value (64 bits), in one movz or movn and up to three movk.
void Emitter::movImm(const Gp &Dst, uint64_t Value) {
  unsigned Zeros = 0, Ones = 0;
  for (unsigned I = 0; I != 4; ++I) {
    uint64_t Chunk = (Value >> (16 * I)) & 0xffff;
    Zeros += Chunk == 0;
    Ones += Chunk == 0xffff;
  }
  bool Inverted = Ones > Zeros;
  uint64_t Fill = Inverted ? 0xffff : 0;
  bool First = true;
  for (unsigned I = 0; I != 4; ++I) {
    uint64_t Chunk = (Value >> (16 * I)) & 0xffff;
    if (Chunk == Fill)
      continue;
    if (!First)
      ok(A.movk(Dst, Chunk, 16 * I));
    else if (Inverted)
      ok(A.movn(Dst, ~Chunk & 0xffff, 16 * I));
    else
      ok(A.movz(Dst, Chunk, 16 * I));
    First = false;
  }
  if (First)
    ok(Inverted ? A.movn(Dst, 0, 0) : A.movz(Dst, 0, 0));
}

/// R (w: 32 bits, x: 64 bits) to or from [Base + Off] by `Scaled` (ldr or
/// str) or, for an offset only it encodes, `Unscaled` (ldur or stur). Tmp
/// (an x register other than Base) holds the offset when no immediate form
/// encodes it; a load may give R itself, a store one other than R.
void Emitter::access(asmjit::InstId Scaled, asmjit::InstId Unscaled,
                     const Gp &R, const Gp &Base, int64_t Off, const Gp &Tmp) {
  int64_t Size = R.isGpW() ? 4 : 8;
  if (Off >= 0 && Off % Size == 0 && Off / Size <= 4095) {
    ok(A.emit(Scaled, R, A64::ptr(Base, int32_t(Off))));
  } else if (Off >= -256 && Off <= 255) {
    ok(A.emit(Unscaled, R, A64::ptr(Base, int32_t(Off))));
  } else {
    movImm(Tmp.x(), uint64_t(Off));
    ok(A.emit(Scaled, R, A64::ptr(Base, Tmp.x())));
  }
}

/// Dst = Src + Off. Tmp (not Src; it may be Dst) holds a large offset.
void Emitter::addImm(const Gp &Dst, const Gp &Src, int64_t Off, const Gp &Tmp) {
  if (Off == 0) {
    if (Dst.id() != Src.id())
      ok(A.mov(Dst, Src));
  } else if (Off > 0 && Off <= 4095) {
    ok(A.add(Dst, Src, Off));
  } else if (Off < 0 && Off >= -4095) {
    ok(A.sub(Dst, Src, -Off));
  } else {
    movImm(Tmp, uint64_t(Off));
    ok(A.add(Dst, Src, Tmp));
  }
}

/// Dst = Src - Value; Src may be sp. Tmp (not Src; it may be Dst) holds a
/// Value that no immediate form encodes.
void Emitter::subImm(const Gp &Dst, const Gp &Src, uint64_t Value,
                     const Gp &Tmp) {
  const uint64_t Lo = Value & 0xfff, Hi = Value >> 12;
  if (Value == 0) {
    if (Dst.id() != Src.id())
      ok(A.mov(Dst, Src));
  } else if (Hi == 0 || (Lo == 0 && Hi <= 0xfff)) {
    ok(A.sub(Dst, Src, Value)); // asmjit picks `lsl #12` for the second
  } else if (Hi <= 0xfff) {
    ok(A.sub(Dst, Src, Hi << 12));
    ok(A.sub(Dst, Dst, Lo));
  } else {
    movImm(Tmp, Value);
    ok(A.sub(Dst, Src, Tmp)); // the extended-register form takes sp
  }
}

/// Compares R (a w or x register) with Value; Tmp holds a large Value.
void Emitter::cmpImm(const Gp &R, uint64_t Value, const Gp &Tmp) {
  if (Value <= 4095) {
    ok(A.cmp(R, Value));
  } else {
    movImm(Tmp.x(), Value);
    ok(A.cmp(R, R.isGpW() ? Gp(Tmp.w()) : Gp(Tmp.x())));
  }
}

/// Whether this asmjit accepts `stlxr w, x, [x]`. Debian's asmjit (git
/// 2022-12-10) refuses that, the only valid form, but encodes it when the
/// status register is given as an x register. Asked once, on a private
/// assembler, so that an embedder's error handler never sees the probe.
bool stlxrTakesWStatus() {
  static const bool Result = [] {
    asmjit::CodeHolder Code;
    if (Code.init(asmjit::Environment(asmjit::Arch::kAArch64)) != kErrorOk)
      return true;
    A64::Assembler Probe(&Code);
    return Probe.stlxr(A64::w0, A64::x1, A64::ptr(A64::x2)) == kErrorOk;
  }();
  return Result;
}

/// stlxr wStatus, xValue, [Addr].
void MonitorEmitter::stlxr(const Gp &Status, const Gp &Value, const Gp &Addr) {
  ok(A.stlxr(stlxrTakesWStatus() ? Gp(Status.w()) : Gp(Status.x()), Value,
             A64::ptr(Addr)));
}

/// The first step of M1 and N2: H holds a header whose tag is exactly 10;
/// afterwards it names the object's monitor (see OwnerOff). Pointer storage:
/// nothing to do. Index: m = base + (h >> shift) * stride, the base loaded
/// from the thread. Table: unrolled probes of the thread's monitor cache, the
/// first entry whose object is Obj giving m; a miss branches to Slow. T and
/// V are free at both call sites and are clobbered.
///
/// `ForExit`: a thread that is not attached has no index base (0); E2 keeps
/// it out of M1, but its exit reaches N2, so the exit leaves a 0 base to the
/// runtime, which refuses the exit.
void MonitorEmitter::findMonitor(Label Slow, bool ForExit) {
  // Validated when the emitter was made (a storage of MonitorStorage.def).
  switch (*monitorStorageOf(L.monitor_storage)) {
  case MonitorStorage::Pointer:
    return;
  case MonitorStorage::Index:
    ok(A.lsr(H, H, L.monitor_index_shift));
    load(T, Thread, L.monitor_base_offset, T);
    if (ForExit)
      ok(A.cbz(T, Slow));
    movImm(V, L.monitor_stride);
    ok(A.madd(H, H, V, T));
    return;
  case MonitorStorage::Table: {
    // Each probe: the entry's object is obj? Then m is the word after it.
    Label Found = A.newLabel();
    for (uint32_t I = 0; I != L.monitor_cache_probes; ++I) {
      const bool Last = I + 1 == L.monitor_cache_probes;
      const int64_t Entry = int64_t(L.monitor_cache_offset) + 16 * int64_t(I);
      Label Next = Last ? Slow : A.newLabel();
      load(T, Thread, Entry, T);
      ok(A.cmp(T, Obj));
      ok(A.b_ne(Next));
      load(H, Thread, Entry + 8, H);
      if (!Last) {
        ok(A.b(Found));
        ok(A.bind(Next));
      }
    }
    ok(A.bind(Found));
    return;
  }
  }
}

/// R2, out of line, bound at `Reserve` with V = h & reserve_mask (not 01)
/// and T the top: reservable (the field all ones; E3 saw bit 1 clear, so
/// the lock bits are 01) and a thread that may reserve (tag not ~0): CAS
/// h -> h with the field the thread's index, acquire, every other bit kept;
/// then on to the push at `Pushable`, which reloads T if it held the
/// address. Reserved to another thread (R3), fast-locked, or a lost CAS:
/// `Slow` (an LL/SC compare that fails leaves through `CasFail`'s clrex).
/// The desired header is h ^ F ^ 01 ^ tag (F: the field's bits, h's bits
/// under the mask are F | 01), and h is desired | F, which is how the CAS's
/// result is compared without a fourth register.
void MonitorEmitter::reserve(Label Reserve, Label Pushable, Label Slow,
                             Label CasFail) {
  const uint64_t F = L.reservable_value;
  ok(A.bind(Reserve));
  ok(A.eor(V, V, F));
  ok(A.cmp(V, L.unlocked_value));
  ok(A.b_ne(Slow));
  load(V, Thread, L.reserve_tag_offset, V);
  ok(A.cmn(V, 1)); //                          tag ~0: may not reserve
  ok(A.b_eq(Slow));
  ok(A.eor(V, V, H));
  ok(A.eor(V, V, F));
  ok(A.eor(V, V, L.unlocked_value)); //        V = desired
  Gp Addr = Obj;
  if (HeaderOff != 0) {
    Addr = T;
    addImm(T, Obj, HeaderOff, T);
  }
  if (At == Atomics::LSE) {
    ok(A.casa(H, V, A64::ptr(Addr))); //       H = old
    ok(A.orr(V, V, F));               //       V = h
    ok(A.cmp(H, V));
    ok(A.b_ne(Slow));
  } else {
    // The current header equals h = desired | F: its bits outside the field
    // are desired's, and its field is all ones.
    Label Retry = A.newLabel();
    ok(A.bind(Retry));
    ok(A.ldaxr(H, A64::ptr(Addr))); //         load-acquire exclusive
    ok(A.eor(H, H, V));
    ok(A.tst(H, ~F));
    ok(A.b_ne(CasFail));
    ok(A.eor(H, H, V));
    ok(A.orr(H, H, ~F));
    ok(A.cmn(H, 1));
    ok(A.b_ne(CasFail));
    ok(A.stxr(H.w(), V, A64::ptr(Addr))); //   store exclusive
    ok(A.cbnz(H.w(), Retry));             //   lost the reservation
  }
  ok(A.b(Pushable));
}

void MonitorEmitter::enter(Label Slow, Label Done, bool SlowFollows) {
  Label Inflated = A.newLabel(), Push = A.newLabel();
  Label CasFail = A.newLabel(), MonitorFail = A.newLabel();
  bool LSE = At == Atomics::LSE;

  // E1  h = header (relaxed).
  load(H, Obj, HeaderOff, H);
  const bool Reserved = reservedLocking(L);
  if (Reserved) {
    // R1  Reserved to this thread (h & reserve_mask == the thread's tag):
    //     E2's test, then the push; no atomic, the header untouched.
    Label Unreserved = A.newLabel();
    reservedTo(V, T, /*Tag=*/true);
    ok(A.b_ne(Unreserved));
    load(T.w(), Thread, TopOff, T);
    cmpImm(T.w(), L.lock_stack_end_offset, V);
    ok(A.b_hs(Slow));
    ok(A.b(Push));
    ok(A.bind(Unreserved));
  }
  // E2  A full lock stack (top >= end) goes to the runtime, which inflates
  //     the oldest entry. Before the header's bits: a thread that is not
  //     attached has a full stack, and must not take a monitor in M1.
  load(T.w(), Thread, TopOff, T);
  cmpImm(T.w(), L.lock_stack_end_offset, V);
  ok(A.b_hs(Slow));
  // E3  Bit 1 set: a monitor (10) or the embedder's state (11).
  ok(A.tbnz(H, MonitorBit, Inflated));
  // E4  The entry below top (the sentinel when empty) is obj: recursion,
  //     push without an atomic. (T was zero-extended by the 32-bit load.)
  ok(A.add(V, Thread, T));
  ok(A.ldur(V, A64::ptr(V, -8)));
  ok(A.cmp(V, Obj));
  ok(A.b_eq(Push));
  // R2, out of line, and where it joins the push: labels of a reserved
  // layout only, so that the other layouts' code has no stray label.
  Label Reserve, Pushable;
  if (Reserved) {
    Reserve = A.newLabel();
    Pushable = A.newLabel();
    // E5 takes only a header whose reservation field is 0; any other goes
    // to R2's test, out of line.
    reservedTo(V, V, /*Tag=*/false);
    ok(A.b_ne(Reserve));
  }
  // E5  CAS header (h | 01) -> (h & ~11), acquire. E3 saw bit 1 clear, so
  //     the expected value is desired ^ 01: compare that way, which keeps
  //     T (the top) alive when the header is at offset 0.
  Gp Addr = Obj;
  if (HeaderOff != 0) {
    Addr = T;
    addImm(T, Obj, HeaderOff, T);
  }
  if (LSE) {
    ok(A.orr(V, H, L.unlocked_value)); //     expected
    ok(A.and_(H, H, ~L.lock_mask));    //     desired
    ok(A.casa(V, H, A64::ptr(Addr)));  //     V = old
    ok(A.eor(V, V, L.unlocked_value));
    ok(A.cmp(V, H)); //                        old == expected?
    ok(A.b_ne(Slow));
  } else {
    Label Retry = A.newLabel();
    ok(A.and_(H, H, ~L.lock_mask)); //         desired
    ok(A.bind(Retry));
    ok(A.ldaxr(V, A64::ptr(Addr))); //         load-acquire exclusive
    ok(A.eor(V, V, L.unlocked_value));
    ok(A.cmp(V, H)); //                        old == expected?
    ok(A.b_ne(CasFail));
    ok(A.stxr(V.w(), H, A64::ptr(Addr))); //   store exclusive
    ok(A.cbnz(V.w(), Retry));             //   lost the reservation
  }
  if (Reserved)
    ok(A.bind(Pushable));
  if (HeaderOff != 0)
    load(T.w(), Thread, TopOff, T); //         T held the header address
  // Push: slot[top] = obj; top += 8. Only this thread writes its lock stack.
  ok(A.bind(Push));
  ok(A.str(Obj, A64::ptr(Thread, T)));
  ok(A.add(T.w(), T.w(), 8));
  store(T.w(), Thread, TopOff, V);
  ok(A.b(Done));

  if (Reserved)
    reserve(Reserve, Pushable, Slow, CasFail);

  // Out of line.
  ok(A.bind(Inflated));
  // M1  Exactly 10 (11 is the embedder's: the runtime). m = h - 10.
  //     Test, then CAS: load m.owner (plain ldr); nonzero goes to M2's
  //     check without a CAS, which would take the owner's cache line. 0:
  //     CAS m.owner 0 -> thread, acquire. The relaxed header load orders
  //     the monitor's fields by address dependency.
  //     With index or table storage m is found first (findMonitor), and H
  //     names it from then on.
  Label Owned = A.newLabel();
  ok(A.tbnz(H, UnlockedBit, Slow));
  findMonitor(Slow, /*ForExit=*/false);
  addImm(T, H, OwnerOff, T); //                T = &m.owner
  ok(A.ldr(V, A64::ptr(T)));
  ok(A.cbnz(V, Owned)); //                     owned: M2's check
  if (LSE) {
    ok(A.casa(V, Thread, A64::ptr(T))); //     V is 0: the expected value
    ok(A.cbz(V, Done));                 //     acquired
  } else {
    Label Retry = A.newLabel();
    ok(A.bind(Retry));
    ok(A.ldaxr(V, A64::ptr(T)));
    ok(A.cbnz(V, MonitorFail));
    ok(A.stxr(V.w(), Thread, A64::ptr(T)));
    ok(A.cbnz(V.w(), Retry));
    ok(A.b(Done)); //                          acquired
    ok(A.bind(MonitorFail));
    ok(A.clrex(15));
  }
  // A failed CAS leaves the new owner in V, never this thread: the check
  // below sends it to the runtime.
  // M2  owner == thread: recursions += 1 (only the owner writes it).
  //     Anything else (anonymous, a deflater, another owner): the runtime.
  ok(A.bind(Owned));
  ok(A.cmp(V, Thread));
  ok(A.b_ne(Slow));
  load(V, H, RecursionsOff, T);
  ok(A.add(V, V, 1));
  store(V, H, RecursionsOff, T);
  ok(A.b(Done));
  if (!LSE) {
    ok(A.bind(CasFail)); //                    E5 or R2 compare failed
    ok(A.clrex(15));
    if (!SlowFollows)
      ok(A.b(Slow));
  }
}

void MonitorEmitter::exit(Label Slow, Label Done, Label Queued,
                          bool QueuedFollows) {
  Label Inflated = A.newLabel(), Restore = A.newLabel();
  Label CasFail = A.newLabel(), Recursive = A.newLabel();
  bool LSE = At == Atomics::LSE;

  // X1  Is obj the top entry? T = top - 8, V = &slot[top - 8].
  load(T.w(), Thread, TopOff, T);
  ok(A.sub(T.w(), T.w(), 8));
  ok(A.add(V, Thread, T));
  ok(A.ldr(H, A64::ptr(V)));
  ok(A.cmp(H, Obj));
  ok(A.b_ne(Inflated)); //                     no: N1
  // X2  Pop.
  store(T.w(), Thread, TopOff, H);
  // X3  The entry below is obj too (never the sentinel): recursive exit.
  ok(A.ldur(H, A64::ptr(V, -8)));
  ok(A.cmp(H, Obj));
  ok(A.b_eq(Done));
  // X4  h = header; bits 00? CAS h -> (h | 01), release.
  load(H, Obj, HeaderOff, H);
  if (reservedLocking(L)) {
    // R4  After the pop and X3, still reserved to this thread: done, no
    //     atomic. Revoked while held (fast-locked now): X4. T is free
    //     until X4.
    reservedTo(V, T, /*Tag=*/true);
    ok(A.b_eq(Done));
  }
  ok(A.tst(H, L.lock_mask));
  ok(A.b_ne(Restore)); //                      inflated or hashed meanwhile
  Gp Addr = Obj;
  if (HeaderOff != 0) {
    Addr = T; //                               Restore reloads the top
    addImm(T, Obj, HeaderOff, T);
  }
  if (LSE) {
    ok(A.orr(V, H, L.unlocked_value)); //      desired
    ok(A.casl(H, V, A64::ptr(Addr)));  //      H = old
    ok(A.eor(H, H, L.unlocked_value));
    ok(A.cmp(H, V));  //                        old == h?
    ok(A.b_eq(Done)); //                       else fall into Restore
  } else {
    Label Retry = A.newLabel();
    // With the header at offset 0, T is free to hold the desired value and
    // the loop compares with h directly; otherwise as for LSE.
    Gp Desired = HeaderOff == 0 ? T : H;
    ok(A.orr(Desired, H, L.unlocked_value));
    ok(A.bind(Retry));
    ok(A.ldxr(V, A64::ptr(Addr))); //          load exclusive
    if (HeaderOff != 0)
      ok(A.eor(V, V, L.unlocked_value));
    ok(A.cmp(V, H)); //                        old == h?
    ok(A.b_ne(CasFail));
    stlxr(V, Desired, Addr); //                store-release exclusive
    ok(A.cbnz(V.w(), Retry));
    ok(A.b(Done));
    // Out of line.
    ok(A.bind(CasFail)); //                    X4 compare failed
    ok(A.clrex(15));
  }
  // X4 failed: push obj back (top += 8), so that the runtime sees the state
  // from before the exit.
  ok(A.bind(Restore));
  load(T.w(), Thread, TopOff, T);
  ok(A.add(T.w(), T.w(), 8));
  store(T.w(), Thread, TopOff, H);
  ok(A.b(Slow));

  // N2, recursive (out of line, reached from below; the owner is this
  //     thread, V = m.recursions): recursions -= 1, plain str (only the
  //     owner writes it).
  ok(A.bind(Recursive));
  ok(A.sub(V, V, 1));
  store(V, H, RecursionsOff, T);
  ok(A.b(Done));

  // N1  h = header; exactly 10?
  ok(A.bind(Inflated));
  load(H, Obj, HeaderOff, H);
  ok(A.tbz(H, MonitorBit, Slow));
  ok(A.tbnz(H, UnlockedBit, Slow));
  // N2  m = h - 10 (or by index, or from the cache: findMonitor). The
  //     owner first, a plain ldr (only this thread stores itself there):
  //     anything but this thread (another owner, anonymous, a deflater)
  //     goes to the runtime with the state untouched. Then m.recursions
  //     != 0: one less, above.
  findMonitor(Slow, /*ForExit=*/true);
  load(V, H, OwnerOff, V);
  ok(A.cmp(V, Thread));
  ok(A.b_ne(Slow));
  load(V, H, RecursionsOff, V);
  ok(A.cbnz(V, Recursive));
  // N3  m.owner = 0 with stlr (release: the critical section's writes go
  //     first); with exit=fence a full barrier, dmb ish; then the entry
  //     count, a plain 32-bit ldr. Nonzero: threads are queued, and
  //     RT.ExitQueued wakes one (the monitor is released already, so not
  //     RT.Exit).
  Gp OwnerAddr = H;
  if (OwnerOff != 0) {
    OwnerAddr = T;
    addImm(T, H, OwnerOff, T);
  }
  // By instruction id: this asmjit's stlr() emits stllr (LORelease).
  ok(A.emit(A64::Inst::kIdStlr, A64::xzr, A64::ptr(OwnerAddr)));
  if (L.monitor_exit == JITLOCK_EXIT_FENCE)
    ok(A.dmb(asmjit::Imm(A64::Predicate::DB::kISH)));
  load(V.w(), H, EntryCountOff, V);
  if (QueuedFollows)
    ok(A.cbz(V.w(), Done));
  else
    ok(A.cbnz(V.w(), Queued));
}

//===----------------------------------------------------------------------===//
// Slow-path glue
//===----------------------------------------------------------------------===//

// The frame: x0-x18 and x30 (the registers a C call may clobber: bl/blr
// writes x30, the caller's link register, which may be live), the caller's
// sp, and all of q0-q31. AAPCS64 keeps only the low 64 bits of v8-v15, so
// those are saved whole too.
constexpr int32_t GpArea = 0;        // x0-x18, x30: 20 x 8
constexpr int32_t SavedSpSlot = 160; // the caller's sp
constexpr int32_t VecArea = 176;     // q0-q31: 32 x 16
constexpr int32_t FrameSize = 176 + 512;
static_assert(FrameSize % 16 == 0, "sp stays 16-byte aligned");

/// What the glue calls, with which arguments and which two registers it may
/// clobber: (thread, obj) for the monitor slow paths, (thread, the caller's
/// sp - Extra) for the stack bang. The safepoint poll passes (thread) alone,
/// Obj left invalid, and only one register, S1 left invalid.
struct GlueArgs {
  const void *Target;
  Gp Thread, Obj;
  Gp S0, S1;
  bool StackBang = false;
  uint32_t Extra = 0;
};

GlueArgs monitorArgs(const void *Entry, const MonitorOperands &Ops) {
  return {Entry, Ops.Thread, Ops.Obj, Ops.Scratch0, Ops.Scratch1};
}

void Emitter::glue(const GlueArgs &Args) {
  const Gp S0 = Args.S0, S1 = Args.S1;
  // With one register, the frame keeps the caller's sp - FrameSize instead
  // of the caller's sp, and the epilogue adds FrameSize back.
  const bool OneScratch = !S1.isValid();
  // Align sp down to 16 whatever the caller's alignment: sp may only be a
  // base register when aligned. The caller's sp is kept in the frame.
  if (OneScratch) {
    ok(A.sub(S0, A64::sp, FrameSize));
    ok(A.and_(A64::sp, S0, ~uint64_t(15)));
  } else {
    ok(A.mov(S0, A64::sp));
    ok(A.sub(S1, S0, FrameSize));
    ok(A.and_(A64::sp, S1, ~uint64_t(15)));
  }
  ok(A.str(S0, A64::ptr(A64::sp, SavedSpSlot)));
  for (unsigned I = 0; I != 18; I += 2)
    ok(A.stp(A64::x(I), A64::x(I + 1), A64::ptr(A64::sp, GpArea + 8 * I)));
  ok(A.stp(A64::x18, A64::x30, A64::ptr(A64::sp, GpArea + 8 * 18)));
  for (unsigned I = 0; I != 32; I += 2)
    ok(A.stp(A64::v(I), A64::v(I + 1), A64::ptr(A64::sp, VecArea + 16 * I)));

  const Gp Obj = Args.Obj, Thread = Args.Thread;
  if (Args.StackBang) {
    // (thread, need): need is recomputed from the saved sp, so no register
    // had to carry it through the saves above. x16 is free until the call.
    if (Thread.id() != 0)
      ok(A.mov(A64::x0, Thread));
    ok(A.ldr(A64::x1, A64::ptr(A64::sp, SavedSpSlot)));
    subImm(A64::x1, A64::x1, Args.Extra, A64::x16);
  } else if (!Obj.isValid()) {
    // (thread) alone.
    if (Thread.id() != 0)
      ok(A.mov(A64::x0, Thread));
  } else if (Thread.id() == 1 && Obj.id() == 0) {
    // (thread, obj) -> (x0, x1), whichever registers hold them.
    ok(A.mov(A64::x16, A64::x0));
    ok(A.mov(A64::x0, A64::x1));
    ok(A.mov(A64::x1, A64::x16));
  } else if (Obj.id() == 0) {
    ok(A.mov(A64::x1, A64::x0));
    ok(A.mov(A64::x0, Thread));
  } else {
    if (Thread.id() != 0)
      ok(A.mov(A64::x0, Thread));
    if (Obj.id() != 1)
      ok(A.mov(A64::x1, Obj));
  }
  // An absolute call: the runtime may be anywhere relative to the code.
  uint64_t Target = reinterpret_cast<uint64_t>(Args.Target);
  for (unsigned I = 0; I != 4; ++I) {
    uint64_t Chunk = (Target >> (16 * I)) & 0xffff;
    if (I == 0)
      ok(A.movz(A64::x16, Chunk, 0));
    else if (Chunk)
      ok(A.movk(A64::x16, Chunk, 16 * I));
  }
  ok(A.blr(A64::x16));

  for (unsigned I = 0; I != 32; I += 2)
    ok(A.ldp(A64::v(I), A64::v(I + 1), A64::ptr(A64::sp, VecArea + 16 * I)));
  for (unsigned I = 0; I != 18; I += 2)
    ok(A.ldp(A64::x(I), A64::x(I + 1), A64::ptr(A64::sp, GpArea + 8 * I)));
  ok(A.ldp(A64::x18, A64::x30, A64::ptr(A64::sp, GpArea + 8 * 18)));
  ok(A.ldr(S0, A64::ptr(A64::sp, SavedSpSlot)));
  if (OneScratch)
    ok(A.add(A64::sp, S0, FrameSize));
  else
    ok(A.mov(A64::sp, S0));
}

Error emitSequence(A64::Assembler &A, const jitlock_rt_layout &L,
                   const MonitorOperands &Ops, Atomics At, SlowPathMode Mode,
                   SlowPathLabels *Labels, const RuntimeEntries &RT,
                   bool Enter) {
  if (!usableAssembler(A) || !validOperands(Ops) || !validMonitorLayout(L) ||
      (At != Atomics::LSE && At != Atomics::LLSC))
    return kErrorInvalidArgument;
  const bool OutOfLine = Mode == SlowPathMode::OutOfLine;
  const bool HasEntries = Enter
                              ? RT.Enter != nullptr
                              : RT.Exit != nullptr && RT.ExitQueued != nullptr;
  if (OutOfLine && !HasEntries)
    return kErrorInvalidArgument;
  Label Slow, Done, Queued;
  if (Error Err = sequenceLabels(A, Mode, Labels, Slow, Done,
                                 Enter ? nullptr : &Queued))
    return Err;

  MonitorEmitter E(A, L, Ops, At);
  if (Enter)
    E.enter(Slow, Done, OutOfLine);
  else
    E.exit(Slow, Done, Queued, OutOfLine);
  if (OutOfLine) {
    // The slow calls, out of line. The exit's last block falls into its
    // RT.ExitQueued call, which branches to Done; RT.Exit (or the enter's
    // RT.Enter) falls through to Done.
    if (!Enter) {
      E.ok(A.bind(Queued));
      E.glue(monitorArgs(RT.ExitQueued, Ops));
      E.ok(A.b(Done));
    }
    E.ok(A.bind(Slow));
    E.glue(monitorArgs(Enter ? RT.Enter : RT.Exit, Ops));
  }
  E.ok(A.bind(Done));
  return E.error();
}

} // namespace

Error emitMonitorEnter(A64::Assembler &A, const jitlock_rt_layout &L,
                       const MonitorOperands &Ops, Atomics At,
                       SlowPathMode Mode, SlowPathLabels *Labels,
                       const RuntimeEntries &RT) {
  return emitSequence(A, L, Ops, At, Mode, Labels, RT, /*Enter=*/true);
}

Error emitMonitorExit(A64::Assembler &A, const jitlock_rt_layout &L,
                      const MonitorOperands &Ops, Atomics At, SlowPathMode Mode,
                      SlowPathLabels *Labels, const RuntimeEntries &RT) {
  return emitSequence(A, L, Ops, At, Mode, Labels, RT, /*Enter=*/false);
}

Error emitSlowCall(A64::Assembler &A, SlowCall Call, const MonitorOperands &Ops,
                   const SlowPathLabels &Labels, const RuntimeEntries &RT) {
  if (!usableAssembler(A) || !validOperands(Ops) ||
      !stubUsable(*A.code(), Labels, Call, RT))
    return kErrorInvalidArgument;
  Emitter E(A);
  E.ok(A.bind(*stubLabel(Labels, Call)));
  E.glue(monitorArgs(stubEntry(RT, Call), Ops));
  E.ok(A.b(Labels.Done));
  return E.error();
}

Error emitSlowCall(A64::Assembler &A, bool Enter, const MonitorOperands &Ops,
                   const SlowPathLabels &Labels, const RuntimeEntries &RT) {
  SlowCall Calls[2];
  const unsigned N = sequenceStubs(Labels, Enter, Calls);
  if (!usableAssembler(A) || !validOperands(Ops))
    return kErrorInvalidArgument;
  for (unsigned I = 0; I != N; ++I)
    if (!stubUsable(*A.code(), Labels, Calls[I], RT))
      return kErrorInvalidArgument;
  ErrorSink E;
  for (unsigned I = 0; I != N; ++I)
    E.ok(emitSlowCall(A, Calls[I], Ops, Labels, RT));
  return E.error();
}

//===----------------------------------------------------------------------===//
// Stack banging
//===----------------------------------------------------------------------===//

namespace {

/// Thread and two scratch registers: distinct x registers. x16/x17 are
/// fine as scratch here (free at a method entry, and the glue saves them
/// before it uses x16); x18, the platform register, is not.
bool validBangOperands(const StackBangOperands &Ops) {
  const Gp Regs[] = {Ops.Thread, Ops.Scratch0, Ops.Scratch1};
  for (unsigned I = 0; I != 3; ++I) {
    if (!isX(Regs[I]) || (I >= 1 && Regs[I].id() == 18))
      return false;
    for (unsigned J = 0; J != I; ++J)
      if (Regs[I].id() == Regs[J].id())
        return false;
  }
  return true;
}

/// AArch64's instructions for the shared stack bang (Common/StackBang.h).
class BangEmitter : public Emitter {
public:
  BangEmitter(A64::Assembler &A, const StackBangOperands &Ops)
      : Emitter(A), Ops(Ops) {}

  bool valid() const { return usableAssembler(A) && validBangOperands(Ops); }
  // Step Scratch0 down from sp through the offsets (nearest first); each
  // store commits (or faults on) its page. Stores, not loads, as on x86_64.
  void touch(uint32_t Off) {
    subImm(Ops.Scratch0, Below ? Ops.Scratch0 : Gp(A64::sp), Off - Below,
           Ops.Scratch1);
    ok(A.str(A64::wzr, A64::ptr(Ops.Scratch0)));
    Below = Off;
  }
  // With no extra bytes sp itself is compared (cmp's extended form takes
  // sp).
  void compareNeed(const jitlock_rt_layout &L, uint32_t Extra) {
    const Gp Need = Extra ? Ops.Scratch0 : Gp(A64::sp);
    if (Extra)
      subImm(Ops.Scratch0, A64::sp, Extra, Ops.Scratch1);
    load(Ops.Scratch1, Ops.Thread, L.stack_watermark_offset, Ops.Scratch1);
    ok(A.cmp(Need, Ops.Scratch1));
  }
  void branchIfRoom(const Label &To) { ok(A.b_hi(To)); }
  void branchIfShort(const Label &To) { ok(A.b_ls(To)); }
  void slowCall(uint32_t Extra, const RuntimeEntries &RT, const Label *Back) {
    GlueArgs Args{RT.StackBang, Ops.Thread, Gp(), Ops.Scratch0, Ops.Scratch1};
    Args.StackBang = true;
    Args.Extra = Extra;
    glue(Args);
    if (Back)
      ok(A.b(*Back));
  }

private:
  const StackBangOperands &Ops;
  uint32_t Below = 0; // the offset Scratch0 is at, below sp (0: not set)
};

} // namespace

JITLOCK_DEFINE_STACK_BANG_ENTRY_POINTS(A64::Assembler)

//===----------------------------------------------------------------------===//
// Safepoint polls
//===----------------------------------------------------------------------===//

namespace {

/// AArch64's instructions for the shared poll (Common/Safepoint.h). P1 is
/// a plain ldrb of the armed byte (relaxed; P2 re-reads the word itself)
/// into wScratch, then tbz or tbnz on its bit. Thread and Scratch are
/// distinct x registers, Scratch not x18 (x16/x17 are fine: the glue saves
/// them before it uses x16); P2's one argument is the thread.
class PollEmitter : public Emitter {
public:
  PollEmitter(A64::Assembler &A, const SafepointPollOperands &Ops)
      : Emitter(A), Ops(Ops) {}

  bool valid() const {
    return usableAssembler(A) && isX(Ops.Thread) && isX(Ops.Scratch) &&
           Ops.Scratch.id() != 18 && Ops.Thread.id() != Ops.Scratch.id();
  }
  void branchIfArmed(const safepoint::ArmedByte &Armed, const Label &To) {
    loadArmedByte(Armed);
    ok(A.tbnz(Ops.Scratch.w(), Armed.Bit, To));
  }
  void branchIfDisarmed(const safepoint::ArmedByte &Armed, const Label &To) {
    loadArmedByte(Armed);
    ok(A.tbz(Ops.Scratch.w(), Armed.Bit, To));
  }
  void slowCall(const RuntimeEntries &RT, const Label *Back) {
    glue({RT.SafepointPoll, Ops.Thread, Gp(), Ops.Scratch, Gp()});
    if (Back)
      ok(A.b(*Back));
  }

private:
  /// The scaled form takes any offset below 4096, a larger one goes
  /// through Scratch.
  void loadArmedByte(const safepoint::ArmedByte &Armed) {
    const Gp S = Ops.Scratch;
    if (Armed.Offset <= 4095) {
      ok(A.ldrb(S.w(), A64::ptr(Ops.Thread, int32_t(Armed.Offset))));
      return;
    }
    movImm(S.x(), Armed.Offset);
    ok(A.ldrb(S.w(), A64::ptr(Ops.Thread, S.x())));
  }
  const SafepointPollOperands &Ops;
};

} // namespace

JITLOCK_DEFINE_SAFEPOINT_POLL_ENTRY_POINTS(A64::Assembler)

//===----------------------------------------------------------------------===//
// The current thread
//===----------------------------------------------------------------------===//

Error emitLoadThread(A64::Assembler &A, const jitlock_rt_layout &L,
                     const Gp &Dst) {
  // Two 12-bit immediates, the second shifted by 12, reach 2^24 - 1 either
  // way without a scratch register; static TLS offsets are far smaller.
  constexpr int64_t MaxOffset = (int64_t(1) << 24) - 1;
  const int64_t Off = L.thread_tls_offset;
  if (!usableAssembler(A) || !isX(Dst) ||
      L.abi_version != JITLOCK_RT_ABI_VERSION || Off > MaxOffset ||
      Off < -MaxOffset)
    return kErrorInvalidArgument;
  Emitter W(A);
  // tpidr_el0 is the thread pointer (what llvm.thread.pointer reads); the
  // thread sits at a fixed offset from it in static TLS.
  W.ok(A.mrs(Dst, asmjit::Imm(A64::Predicate::SysReg::kTPIDR_EL0)));
  const uint64_t Magnitude = uint64_t(Off < 0 ? -Off : Off);
  const uint64_t Hi = Magnitude & ~uint64_t(0xfff), Lo = Magnitude & 0xfff;
  for (uint64_t Part : {Hi, Lo}) {
    if (!Part)
      continue;
    // asmjit encodes a multiple of 4096 below 2^24 as `#imm, lsl #12`.
    W.ok(Off < 0 ? A.sub(Dst, Dst, Part) : A.add(Dst, Dst, Part));
  }
  return W.error();
}

} // namespace jitlock::emit::a64
