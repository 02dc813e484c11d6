//===- StackGuard.cpp - Stack guard zones and the watermark ---------------===//
//
// Each attached thread's stack, from its end (lowest address) upwards:
//
//   [end, red_top)               red: protected; a fault here is fatal
//   [red_top, yellow_top)        yellow: protected; a fault here recovers
//   [yellow_top, reserved_top)   reserved: as yellow, and hit first
//   [reserved_top, safe_limit)   shadow: never protected
//   [safe_limit, base)           frames
//
// THE WATERMARK INVARIANT. safe_limit <= watermark <= base, the watermark
// never rises while the thread is attached, and every page in
// [watermark - shadow, base) has been touched. A checked method entry whose
// sp_needed is above the watermark therefore has a whole shadow zone of
// committed stack below it, above every guard zone, and skips the bang.
//
// Two ways to catch an overflow, both ending in the overflow handler here:
//   * the bang check (jitlock_rt_stack_bang, below) finds
//     sp_needed <= safe_limit: zone SHADOW, on what is left of the thread's
//     own stack;
//   * the SIGSEGV backstop (StackBackstop.cpp) finds a fault in a protected
//     zone (native code, or JIT code that was not checked): on the
//     alternate signal stack.
// The default handler longjmps to the innermost jitlock_rt_call_guarded
// (StackRecovery.cpp), which releases the holds taken inside and returns
// JITLOCK_ESTACK_OVERFLOW. See docs/stack-banging.md.
//
//===----------------------------------------------------------------------===//
#include "StackGuard.h"

#include "Config.h"

#include <algorithm>
#include <atomic>

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace jitlock;

static_assert(offsetof(jitlock_thread, Stack) % CacheLine == 0 &&
                  offsetof(jitlock_thread, Stack) >=
                      offsetof(jitlock_thread, Stats) + sizeof(ThreadStats),
              "the stack state starts a cache line of its own");

/// [Lo, Hi) of a guard zone.
void jitlock::zoneRange(const StackState &S, uint32_t Zone, uintptr_t &Lo,
                        uintptr_t &Hi) {
  switch (Zone) {
  case JITLOCK_ZONE_RED:
    Lo = alignUp(S.End, S.PageSize);
    Hi = S.RedTop;
    return;
  case JITLOCK_ZONE_YELLOW:
    Lo = S.RedTop;
    Hi = S.YellowTop;
    return;
  default:
    Lo = S.YellowTop;
    Hi = S.ReservedTop;
    return;
  }
}

bool jitlock::protectZone(StackState &S, uint32_t Zone, bool Protect) {
  uintptr_t Lo, Hi;
  zoneRange(S, Zone, Lo, Hi);
  if (Lo >= Hi || mprotect(reinterpret_cast<void *>(Lo), Hi - Lo,
                           Protect ? PROT_NONE : PROT_READ | PROT_WRITE) != 0)
    return false;
  if (Protect)
    S.ProtectedZones.fetch_or(zoneBit(Zone), std::memory_order_relaxed);
  else
    S.ProtectedZones.fetch_and(~zoneBit(Zone), std::memory_order_relaxed);
  return true;
}

/// Protects again the zones the backstop unprotected, unless this frame is
/// itself below safe_limit (a custom handler resumed deep code).
void jitlock::reprotect(StackState &S) {
  uint32_t Missing =
      S.WantedZones & ~S.ProtectedZones.load(std::memory_order_relaxed);
  if (!Missing || currentSp() <= S.SafeLimit)
    return;
  for (uint32_t Zone :
       {JITLOCK_ZONE_RED, JITLOCK_ZONE_YELLOW, JITLOCK_ZONE_RESERVED})
    if (Missing & zoneBit(Zone))
      protectZone(S, Zone, /*Protect=*/true);
}

void jitlock::fillStackInfo(jitlock_thread &T, jitlock_stack_info &I) {
  const StackState &S = T.Stack;
  I.base = S.Base;
  I.end = S.End;
  I.red_top = S.RedTop;
  I.yellow_top = S.YellowTop;
  I.reserved_top = S.ReservedTop;
  I.safe_limit = S.SafeLimit;
  I.watermark = stackWatermark(T).load(std::memory_order_relaxed);
  I.page_size = S.PageSize;
  I.protected_zones = S.ProtectedZones.load(std::memory_order_relaxed);
  I.bangs = S.Bangs.load(std::memory_order_relaxed);
  I.overflows = S.Overflows.load(std::memory_order_relaxed);
}

//===----------------------------------------------------------------------===//
// The overflow handler
//===----------------------------------------------------------------------===//

static std::atomic<jitlock_overflow_fn> HandlerFn{nullptr};
static std::atomic<void *> HandlerCtx{nullptr};

/// Tells the overflow handler; does not return.
[[noreturn]] void jitlock::reportOverflow(jitlock_thread &T, uint32_t Zone,
                                          uintptr_t Sp, uintptr_t Fault,
                                          uint32_t FromSignal) {
  bump(T.Stack.Overflows);
  jitlock_stack_overflow Info{};
  Info.thread = &T;
  Info.sp = Sp;
  Info.fault_addr = Fault;
  Info.zone = Zone;
  Info.from_signal = FromSignal;
  fillStackInfo(T, Info.stack);
  jitlock_overflow_fn Fn = HandlerFn.load(std::memory_order_acquire);
  if (!Fn)
    jitlock_rt_unwind_to_entry(nullptr, &Info);
  Fn(HandlerCtx.load(std::memory_order_relaxed), &Info);
  fatalOverflow(Info, ": the overflow handler returned");
}

/// Writes one word of every page in [Lo, Hi), keeping its value: pages just
/// below sp_needed may hold the caller's live frame. Not instrumented: the
/// words lie below the stack pointer, in no object a sanitizer knows of.
__attribute__((no_sanitize("address", "thread"))) static void
touchPages(uintptr_t Lo, uintptr_t Hi, uintptr_t Page) {
  for (uintptr_t P = alignDown(Lo, Page); P < Hi; P += Page) {
    auto *Word = reinterpret_cast<uintptr_t *>(P);
    uintptr_t V = __atomic_load_n(Word, __ATOMIC_RELAXED);
    // A CAS of the value onto itself is a real store (an idempotent
    // fetch_or may compile to a plain load).
    __atomic_compare_exchange_n(Word, &V, V, false, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
  }
}

/// pthread_getattr_np's bounds of the calling thread's stack.
static bool threadStackBounds(uintptr_t &End, uintptr_t &Base) {
  pthread_attr_t Attr;
  if (pthread_getattr_np(pthread_self(), &Attr) != 0)
    return false;
  void *Addr = nullptr;
  size_t Size = 0;
  int Err = pthread_attr_getstack(&Attr, &Addr, &Size);
  pthread_attr_destroy(&Attr);
  if (Err != 0 || !Addr || !Size)
    return false;
  End = reinterpret_cast<uintptr_t>(Addr);
  Base = End + Size;
  return true;
}

//===----------------------------------------------------------------------===//
// Thread hooks
//===----------------------------------------------------------------------===//

void jitlock::attachStack(jitlock_thread &T) {
  StackState &S = T.Stack;
  uintptr_t Page = uintptr_t(sysconf(_SC_PAGESIZE));
  S.PageSize = uint32_t(Page);
  S.Innermost.store(nullptr, std::memory_order_relaxed);
  S.Bangs.store(0, std::memory_order_relaxed);
  S.Overflows.store(0, std::memory_order_relaxed);
  S.ProtectedZones.store(0, std::memory_order_relaxed);
  S.WantedZones = 0;
  S.AltMapping = nullptr;
  uintptr_t End, Base;
  if (!threadStackBounds(End, Base)) {
    // Unknown stack: a zero watermark makes every check pass.
    S.Base = S.End = S.RedTop = S.YellowTop = S.ReservedTop = S.SafeLimit = 0;
    stackWatermark(T).store(0, std::memory_order_relaxed);
    return;
  }
  // Clamped to the base: a stack too small for its zones overflows at the
  // first check instead of having zones above it.
  auto Above = [&](uintptr_t From, uint32_t Pages) {
    return std::min<uintptr_t>(Base, From + uintptr_t(Pages) * Page);
  };
  S.Base = Base;
  S.End = End;
  S.RedTop = Above(alignUp(End, Page), Config.stack_red_pages);
  S.YellowTop = Above(S.RedTop, Config.stack_yellow_pages);
  S.ReservedTop = Above(S.YellowTop, Config.stack_reserved_pages);
  S.SafeLimit = Above(S.ReservedTop, Config.stack_shadow_pages);
  // The first checked entry takes the slow path once and bangs.
  stackWatermark(T).store(Base, std::memory_order_relaxed);

  // Protect only zones that lie wholly below this frame, with room.
  if (!Config.stack_guards || S.SafeLimit + Page > alignDown(currentSp(), Page))
    return;
  // Fails on the primordial thread, whose stack below the pages it used so
  // far is not mapped yet: the zones stay logical there.
  uintptr_t Lo = alignUp(End, Page);
  if (mprotect(reinterpret_cast<void *>(Lo), S.ReservedTop - Lo, PROT_NONE) !=
      0)
    return;
  if (!installBackstop() || !installAltStack(S)) {
    mprotect(reinterpret_cast<void *>(Lo), S.ReservedTop - Lo,
             PROT_READ | PROT_WRITE);
    return;
  }
  S.WantedZones = GuardZones;
  S.ProtectedZones.store(GuardZones, std::memory_order_relaxed);
}

void jitlock::detachStack(jitlock_thread &T) {
  StackState &S = T.Stack;
  stackWatermark(T).store(0, std::memory_order_relaxed);
  if (S.WantedZones) {
    // glibc hands this stack to the next thread it creates: give the pages
    // back whatever the backstop did to them.
    uintptr_t Lo = alignUp(S.End, S.PageSize);
    mprotect(reinterpret_cast<void *>(Lo), S.ReservedTop - Lo,
             PROT_READ | PROT_WRITE);
  }
  S.WantedZones = 0;
  S.ProtectedZones.store(0, std::memory_order_relaxed);
  removeAltStack(S);
  S.Innermost.store(nullptr, std::memory_order_relaxed);
}
//===----------------------------------------------------------------------===//
// The C ABI
//===----------------------------------------------------------------------===//

int jitlock_rt_stack_info(const jitlock_thread *Thread,
                          jitlock_stack_info *Info) {
  if (!Info)
    return JITLOCK_EINVAL;
  *Info = jitlock_stack_info{};
  bool Found = withAttachedThread(
      Thread, [&](jitlock_thread &T) { fillStackInfo(T, *Info); });
  return Found ? JITLOCK_OK : JITLOCK_ENOT_ATTACHED;
}

void jitlock_rt_stack_bang(jitlock_thread *Self, uintptr_t SpNeeded) {
  if (!Self || Self != &currentThreadStorage() || !Self->Attached)
    return;
  std::atomic_ref<uintptr_t> Mark = stackWatermark(*Self);
  StackState &S = Self->Stack;
  // A stack the runtime could not find has no zones (and a zero mark).
  if (SpNeeded > Mark.load(std::memory_order_relaxed) || !S.Base)
    return;
  if (SpNeeded <= S.SafeLimit)
    reportOverflow(*Self, JITLOCK_ZONE_SHADOW, SpNeeded, 0,
                   /*FromSignal=*/0);
  uintptr_t Page = S.PageSize;
  // Strictly below sp_needed, so that an entry at the same sp skips next
  // time; safe_limit >= reserved_top + shadow keeps the touched pages out
  // of the guard zones.
  uintptr_t NewMark = std::max(S.SafeLimit, alignDown(SpNeeded - 1, Page));
  touchPages(NewMark - (S.SafeLimit - S.ReservedTop), SpNeeded, Page);
  Mark.store(NewMark, std::memory_order_relaxed);
  bump(S.Bangs);
}

void jitlock_rt_set_overflow_handler(jitlock_overflow_fn Fn, void *Ctx) {
  HandlerCtx.store(Ctx, std::memory_order_relaxed);
  HandlerFn.store(Fn, std::memory_order_release);
}
