//===- FrameWalk.cpp - The elided holds of a thread's compiled frames -----===//
//
// x86_64 with frame pointers: a prologue pushes the caller's rbp right below
// the return address and points rbp there, so a frame pointer fp gives the
// return address [fp + 8], the caller's frame pointer [fp], and the caller's
// stack pointer at the call, fp + 16 (from before the call pushed the return
// address: what a stack map record's locations are relative to). Those two
// registers are all a walk recovers; LLVM spills deopt values to the stack
// by default, so a record needs no other.
//
// The walk only climbs: each frame pointer must be above the one before and
// inside the thread's stack, so a chain broken by a frame without a frame
// pointer ends the walk instead of reading outside the stack.
//
//===----------------------------------------------------------------------===//
#include "jitlock/Deopt.h"

#include <cstdio>

using namespace jitlock::deopt;

namespace {

std::string hex(uint64_t V) {
  char Buf[24];
  std::snprintf(Buf, sizeof(Buf), "0x%llx", static_cast<unsigned long long>(V));
  return Buf;
}

/// One word of the stack. Past the compiled frames the chain may run
/// through frames without a frame pointer, whose rbp can point anywhere on
/// the stack, e.g. into a sanitizer's redzone between another frame's
/// locals: harmless to read, and not the program's access.
__attribute__((no_sanitize("address", "thread"))) uint64_t
readWord(uint64_t Addr) {
  return *reinterpret_cast<const volatile uint64_t *>(Addr);
}

} // namespace

bool jitlock::deopt::walkCompiledFrames(const jitlock_thread *Thread,
                                        uint64_t FramePointer,
                                        std::vector<DeoptFrame> &Frames,
                                        std::string &Error) {
  Frames.clear();
  if (hostArch() != Arch::X86_64) {
    Error = "the frame walk is implemented for x86_64 only";
    return false;
  }
  jitlock_stack_info Stack;
  if (!Thread || jitlock_rt_stack_info(Thread, &Stack) != JITLOCK_OK) {
    Error = "the thread is not attached";
    return false;
  }
  // Not in the guard zones, which may be unreadable.
  uint64_t Low = Stack.protected_zones ? Stack.reserved_top : Stack.end;
  auto OnStack = [&](uint64_t FP) {
    return FP % 8 == 0 && FP >= Low && FP + 16 <= Stack.base;
  };
  if (!OnStack(FramePointer)) {
    Error = "frame pointer " + hex(FramePointer) +
            " is not on the thread's stack [" + hex(Low) + ", " +
            hex(Stack.base) + ") outside its guard zones";
    return false;
  }
  constexpr unsigned RBP = 6, RSP = 7;
  const StackMapTable &Table = StackMapTable::global();
  for (uint64_t FP = FramePointer;;) {
    uint64_t Caller = readWord(FP), Return = readWord(FP + 8);
    if (Table.hasRecord(Return)) {
      SavedRegisters Regs{};
      Regs.ReturnAddress = Return;
      Regs.Regs[RSP] = FP + 16;
      Regs.Regs[RBP] = Caller;
      DeoptFrame F;
      if (!Table.decodeFrameWith(Return, Regs,
                                 (uint32_t(1) << RSP) | (uint32_t(1) << RBP), F,
                                 Error)) {
        Error = "the compiled frame returning to " + hex(Return) + ": " + Error;
        return false;
      }
      Frames.push_back(std::move(F));
    }
    // The outermost frame saved 0; anything not above this frame is no
    // frame pointer of an older frame.
    if (Caller <= FP || !OnStack(Caller))
      return true;
    FP = Caller;
  }
}

bool jitlock::deopt::holdsWithElided(const jitlock_thread *Thread,
                                     uint64_t FramePointer, const void *Obj,
                                     SourceHolds &Out, std::string &Error) {
  Out = {};
  jitlock_lock_info Info;
  if (int Status = jitlock_rt_inspect(Obj, &Info)) {
    Error =
        std::string("jitlock_rt_inspect: ") + jitlock_rt_status_name(Status);
    return false;
  }
  if (Thread && Info.owner == Thread)
    Out.Runtime = Info.holds;
  std::vector<DeoptFrame> Frames;
  if (!walkCompiledFrames(Thread, FramePointer, Frames, Error))
    return false;
  for (const DeoptFrame &F : Frames)
    for (const jitlock_relock_entry &M : F.Monitors)
      Out.Elided += M.kind == JITLOCK_RELOCK_ELIDED && M.obj == Obj;
  return true;
}

// Not inlined, and no tail call: the walk starts at this function's own
// frame, whose return address is the call site in the caller.
__attribute__((noinline)) bool
jitlock::deopt::currentHoldsWithElided(const void *Obj, SourceHolds &Out,
                                       std::string &Error) {
  jitlock_thread *Self = jitlock_rt_current();
  if (!Self) {
    Out = {};
    Error = "the calling thread is not attached";
    return false;
  }
  bool Ok = holdsWithElided(
      Self, reinterpret_cast<uint64_t>(__builtin_frame_address(0)), Obj, Out,
      Error);
  // Keeps the call above from becoming a tail call, which would pop this
  // frame while the walk reads it.
  asm volatile("" ::: "memory");
  return Ok;
}
