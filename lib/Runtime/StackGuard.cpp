//===- StackGuard.cpp - Stack guard zones, stack banging, recovery --------===//
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
// Two ways to catch an overflow, both ending in the overflow handler:
//   * the bang check (jitlock_rt_stack_bang) finds sp_needed <= safe_limit:
//     zone SHADOW, on what is left of the thread's own stack;
//   * the SIGSEGV backstop finds a fault in a protected zone (native code,
//     or JIT code that was not checked): on the alternate signal stack.
// The default handler longjmps to the innermost jitlock_rt_call_guarded,
// which releases the holds taken inside and returns
// JITLOCK_ESTACK_OVERFLOW. See docs/stack-banging.md.
//
//===----------------------------------------------------------------------===//
#include "StackGuard.h"

#include "Config.h"
#include "Monitor.h"
#include "Safepoint.h"
#include "Synchronizer.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <vector>

#include <pthread.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

using namespace jitlock;

namespace jitlock {

/// How many holds a thread has on one object.
struct HoldCount {
  void *Obj;
  uint64_t Count;
};

/// One active jitlock_rt_call_guarded, in its own frame. The chain runs from
/// the innermost (StackState::Innermost) outwards.
struct GuardedCall {
  sigjmp_buf Env;
  GuardedCall *Outer = nullptr;
  /// Filled by the unwinder before it jumps here.
  jitlock_stack_overflow Overflow{};
  /// Every hold the thread had on entry, one row per object, by object.
  std::vector<HoldCount> Before;
};

static_assert(offsetof(jitlock_thread, Stack) % CacheLine == 0 &&
                  offsetof(jitlock_thread, Stack) >=
                      offsetof(jitlock_thread, Stats) + sizeof(ThreadStats),
              "the stack state starts a cache line of its own");

} // namespace jitlock

static constexpr uint32_t zoneBit(uint32_t Zone) { return 1u << Zone; }
static constexpr uint32_t GuardZones = zoneBit(JITLOCK_ZONE_RED) |
                                       zoneBit(JITLOCK_ZONE_YELLOW) |
                                       zoneBit(JITLOCK_ZONE_RESERVED);

/// Room for the handler's frames, the sanitizers' signal wrappers and, in
/// the fatal case, the message. Ours, since a thread may have none.
static constexpr size_t AltStackSize = 128 * 1024;

static std::atomic_ref<uintptr_t> watermark(jitlock_thread &T) {
  return std::atomic_ref<uintptr_t>(T.StackWatermark);
}

static uintptr_t currentSp() {
  return reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
}

static uintptr_t alignDown(uintptr_t V, uintptr_t Page) {
  return V & ~(Page - 1);
}
static uintptr_t alignUp(uintptr_t V, uintptr_t Page) {
  return alignDown(V + Page - 1, Page);
}

/// [Lo, Hi) of a guard zone.
static void zoneRange(const StackState &S, uint32_t Zone, uintptr_t &Lo,
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

static bool protectZone(StackState &S, uint32_t Zone, bool Protect) {
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
static void reprotect(StackState &S) {
  uint32_t Missing =
      S.WantedZones & ~S.ProtectedZones.load(std::memory_order_relaxed);
  if (!Missing || currentSp() <= S.SafeLimit)
    return;
  for (uint32_t Zone :
       {JITLOCK_ZONE_RED, JITLOCK_ZONE_YELLOW, JITLOCK_ZONE_RESERVED})
    if (Missing & zoneBit(Zone))
      protectZone(S, Zone, /*Protect=*/true);
}

static void fillInfo(jitlock_thread &T, jitlock_stack_info &I) {
  const StackState &S = T.Stack;
  I.base = S.Base;
  I.end = S.End;
  I.red_top = S.RedTop;
  I.yellow_top = S.YellowTop;
  I.reserved_top = S.ReservedTop;
  I.safe_limit = S.SafeLimit;
  I.watermark = watermark(T).load(std::memory_order_relaxed);
  I.page_size = S.PageSize;
  I.protected_zones = S.ProtectedZones.load(std::memory_order_relaxed);
  I.bangs = S.Bangs.load(std::memory_order_relaxed);
  I.overflows = S.Overflows.load(std::memory_order_relaxed);
}

//===----------------------------------------------------------------------===//
// Fatal messages: async-signal-safe, since the backstop prints them
//===----------------------------------------------------------------------===//

namespace {

class Message {
public:
  Message &operator<<(const char *S) {
    while (*S && Len < sizeof(Buf))
      Buf[Len++] = *S++;
    return *this;
  }
  Message &dec(uint64_t V) {
    char Digits[24];
    int N = 0;
    do
      Digits[N++] = char('0' + V % 10);
    while (V /= 10);
    while (N && Len < sizeof(Buf))
      Buf[Len++] = Digits[--N];
    return *this;
  }
  Message &hex(uint64_t V) {
    *this << "0x";
    char Digits[16];
    int N = 0;
    do
      Digits[N++] = "0123456789abcdef"[V & 15];
    while (V >>= 4);
    while (N && Len < sizeof(Buf))
      Buf[Len++] = Digits[--N];
    return *this;
  }
  void write() {
    for (size_t Done = 0; Done < Len;) {
      ssize_t N = ::write(STDERR_FILENO, Buf + Done, Len - Done);
      if (N <= 0 && errno != EINTR)
        return;
      if (N > 0)
        Done += size_t(N);
    }
  }

private:
  char Buf[512];
  size_t Len = 0;
};

} // namespace

static const char *zoneName(uint32_t Zone) {
  switch (Zone) {
  case JITLOCK_ZONE_SHADOW:
    return "shadow";
  case JITLOCK_ZONE_RESERVED:
    return "reserved";
  case JITLOCK_ZONE_YELLOW:
    return "yellow";
  case JITLOCK_ZONE_RED:
    return "red";
  }
  return nullptr;
}

/// E.g. "jitlock: fatal: stack overflow into the red zone of thread 3 (fault
/// at 0x..., stack [0x..., 0x...))", then abort.
[[noreturn]] static void fatalOverflow(const jitlock_stack_overflow &I,
                                       const char *Why) {
  Message M;
  M << "jitlock: fatal: stack overflow";
  if (const char *Name = zoneName(I.zone))
    M << " into the " << Name << " zone";
  M << " of thread ";
  M.dec(I.thread ? I.thread->Id : 0) << Why << " (";
  if (I.from_signal)
    M << "fault at ";
  else
    M << "sp ";
  M.hex(I.from_signal ? I.fault_addr : I.sp) << ", stack [";
  M.hex(I.stack.end) << ", ";
  M.hex(I.stack.base) << "))\n";
  M.write();
  abort();
}

//===----------------------------------------------------------------------===//
// The overflow handler
//===----------------------------------------------------------------------===//

static std::atomic<jitlock_overflow_fn> HandlerFn{nullptr};
static std::atomic<void *> HandlerCtx{nullptr};

/// Tells the overflow handler; does not return.
[[noreturn]] static void reportOverflow(jitlock_thread &T, uint32_t Zone,
                                        uintptr_t Sp, uintptr_t Fault,
                                        uint32_t FromSignal) {
  bump(T.Stack.Overflows);
  jitlock_stack_overflow Info{};
  Info.thread = &T;
  Info.sp = Sp;
  Info.fault_addr = Fault;
  Info.zone = Zone;
  Info.from_signal = FromSignal;
  fillInfo(T, Info.stack);
  jitlock_overflow_fn Fn = HandlerFn.load(std::memory_order_acquire);
  if (!Fn)
    jitlock_rt_unwind_to_entry(nullptr, &Info);
  Fn(HandlerCtx.load(std::memory_order_relaxed), &Info);
  fatalOverflow(Info, ": the overflow handler returned");
}

//===----------------------------------------------------------------------===//
// The SIGSEGV backstop
//===----------------------------------------------------------------------===//

static std::mutex BackstopMutex;
static bool BackstopInstalled = false;
/// What SIGSEGV did before us; written once, before our handler goes in.
static struct sigaction PrevSegv;

/// The protected guard zone that holds `Addr`, or NONE.
static uint32_t guardZoneOf(const StackState &S, uintptr_t Addr) {
  uint32_t Bits = S.ProtectedZones.load(std::memory_order_relaxed);
  for (uint32_t Zone :
       {JITLOCK_ZONE_RED, JITLOCK_ZONE_YELLOW, JITLOCK_ZONE_RESERVED}) {
    uintptr_t Lo, Hi;
    zoneRange(S, Zone, Lo, Hi);
    if ((Bits & zoneBit(Zone)) && Addr >= Lo && Addr < Hi)
      return Zone;
  }
  return JITLOCK_ZONE_NONE;
}

static uintptr_t interruptedSp(void *Context) {
  auto *UC = static_cast<ucontext_t *>(Context);
#if defined(__x86_64__)
  return uintptr_t(UC->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
  return uintptr_t(UC->uc_mcontext.sp);
#else
#error "jitlock supports x86_64 and AArch64"
#endif
}

/// Hands a fault that is not ours to whoever had SIGSEGV before us.
static void chainSegv(int Sig, siginfo_t *SI, void *Context) {
  bool SigInfo = PrevSegv.sa_flags & SA_SIGINFO;
  if (SigInfo && PrevSegv.sa_sigaction) {
    PrevSegv.sa_sigaction(Sig, SI, Context);
    return;
  }
  if (!SigInfo && PrevSegv.sa_handler != SIG_DFL &&
      PrevSegv.sa_handler != SIG_IGN) {
    PrevSegv.sa_handler(Sig);
    return;
  }
  bool Sent = SI->si_code <= 0; // kill(), sigqueue(): nothing re-executes
  if (Sent && !SigInfo && PrevSegv.sa_handler == SIG_IGN)
    return;
  // Default action: put it back; a fault re-executes and kills the process
  // the usual way (core dump included), a sent signal is raised again and
  // stays pending until we return.
  sigaction(SIGSEGV, &PrevSegv, nullptr);
  if (Sent)
    raise(Sig);
}

static void onSegv(int Sig, siginfo_t *SI, void *Context) {
  int SavedErrno = errno;
  jitlock_thread &T = currentThreadStorage();
  uintptr_t Fault = reinterpret_cast<uintptr_t>(SI->si_addr);
  uint32_t Zone = SI->si_code > 0 ? guardZoneOf(T.Stack, Fault)
                                  : uint32_t(JITLOCK_ZONE_NONE);
  if (Zone == JITLOCK_ZONE_NONE) {
    chainSegv(Sig, SI, Context);
    errno = SavedErrno;
    return;
  }
  uintptr_t Sp = interruptedSp(Context);
  if (Zone == JITLOCK_ZONE_RED) {
    jitlock_stack_overflow Info{};
    Info.thread = &T;
    Info.sp = Sp;
    Info.fault_addr = Fault;
    Info.zone = Zone;
    Info.from_signal = 1;
    fillInfo(T, Info.stack);
    fatalOverflow(Info, "");
  }
  // Give the frames that reached the zone its pages, so that a handler that
  // resumes them has room; recovery protects it again.
  protectZone(T.Stack, Zone, /*Protect=*/false);
  reportOverflow(T, Zone, Sp, Fault, /*FromSignal=*/1);
}

static bool installBackstop() {
  std::lock_guard<std::mutex> Guard(BackstopMutex);
  if (BackstopInstalled)
    return true;
  struct sigaction SA = {};
  SA.sa_sigaction = onSegv;
  SA.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&SA.sa_mask);
  if (sigaction(SIGSEGV, nullptr, &PrevSegv) != 0 ||
      sigaction(SIGSEGV, &SA, nullptr) != 0)
    return false;
  BackstopInstalled = true;
  return true;
}

/// Maps and installs the thread's alternate signal stack, with a guard page
/// below it, remembering the one it replaces.
static bool installAltStack(StackState &S) {
  size_t Size = AltStackSize + S.PageSize;
  void *Map = mmap(nullptr, Size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (Map == MAP_FAILED)
    return false;
  if (mprotect(Map, S.PageSize, PROT_NONE) != 0) {
    munmap(Map, Size);
    return false;
  }
  stack_t New = {};
  New.ss_sp = static_cast<char *>(Map) + S.PageSize;
  New.ss_size = AltStackSize;
  stack_t Old = {};
  if (sigaltstack(&New, &Old) != 0) {
    munmap(Map, Size);
    return false;
  }
  S.AltMapping = Map;
  S.AltMappingSize = Size;
  S.PrevAltSp = Old.ss_sp;
  S.PrevAltSize = Old.ss_size;
  S.PrevAltFlags = Old.ss_flags;
  return true;
}

static void removeAltStack(StackState &S) {
  if (!S.AltMapping)
    return;
  void *Ours = static_cast<char *>(S.AltMapping) + S.PageSize;
  stack_t Cur = {};
  // Put back what was there, unless someone replaced ours meanwhile.
  if (sigaltstack(nullptr, &Cur) == 0 && Cur.ss_sp == Ours) {
    stack_t Prev = {};
    Prev.ss_sp = S.PrevAltSp;
    Prev.ss_size = S.PrevAltSize;
    Prev.ss_flags = S.PrevAltFlags & SS_DISABLE;
    if (Prev.ss_flags & SS_DISABLE)
      Prev.ss_sp = nullptr, Prev.ss_size = 0;
    sigaltstack(&Prev, nullptr);
  }
  munmap(S.AltMapping, S.AltMappingSize);
  S.AltMapping = nullptr;
  S.AltMappingSize = 0;
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

//===----------------------------------------------------------------------===//
// Lock holds, for recovery
//===----------------------------------------------------------------------===//

/// Every hold `T` has, one row per object, sorted by object: lock stack
/// entries and monitors it owns (recursions + 1). `MonitorObjs`, if given,
/// gets the monitors' objects in registry order.
static void collectHolds(jitlock_thread &T, std::vector<HoldCount> &Out,
                         std::vector<void *> *MonitorObjs) {
  Out.clear();
  LockStack LS(T);
  for (unsigned I = 0, E = LS.size(); I != E; ++I)
    Out.push_back({LS.at(int(I)), 1});
  // No monitor at all is the common case; skip the registry lock then. A
  // monitor T owns was registered before T acquired it, so it is counted.
  if (monitorsAlive() != 0)
    forEachMonitor([&](Monitor &M) {
      if (!M.isOwnedBy(T))
        return;
      Out.push_back(
          {M.Object, M.Recursions.load(std::memory_order_relaxed) + 1});
      if (MonitorObjs)
        MonitorObjs->push_back(M.Object);
    });
  if (Out.size() < 2)
    return;
  std::sort(Out.begin(), Out.end(), [](const HoldCount &A, const HoldCount &B) {
    return A.Obj < B.Obj;
  });
  size_t Kept = 0;
  for (const HoldCount &H : Out) {
    if (Kept && Out[Kept - 1].Obj == H.Obj)
      Out[Kept - 1].Count += H.Count;
    else
      Out[Kept++] = H;
  }
  Out.resize(Kept);
}

/// Releases every hold `T` has beyond `Before`, innermost first as far as
/// that is known: the lock stack top-down, then monitors. Returns how many.
static size_t releaseHoldsSince(jitlock_thread &T,
                                const std::vector<HoldCount> &Before,
                                jitlock_guarded_result *R) {
  std::vector<HoldCount> Now, Excess;
  std::vector<void *> MonitorObjs;
  collectHolds(T, Now, &MonitorObjs);
  // Both sorted by object: a merge. An object fn released from before the
  // call is not taken again (it cannot be, without blocking).
  auto B = Before.begin();
  for (const HoldCount &H : Now) {
    while (B != Before.end() && B->Obj < H.Obj)
      ++B;
    uint64_t Had = B != Before.end() && B->Obj == H.Obj ? B->Count : 0;
    if (H.Count > Had)
      Excess.push_back({H.Obj, H.Count - Had});
  }
  auto Left = [&](void *Obj) -> uint64_t * {
    auto It =
        std::lower_bound(Excess.begin(), Excess.end(), Obj,
                         [](const HoldCount &H, void *O) { return H.Obj < O; });
    return It != Excess.end() && It->Obj == Obj ? &It->Count : nullptr;
  };
  size_t Released = 0;
  // Through the normal exit, which hands monitors to their waiters.
  auto Release = [&](void *Obj) {
    if (jitlock_rt_monitor_exit(&T, Obj) != JITLOCK_OK)
      return false;
    if (R && R->released && Released < R->released_cap)
      R->released[Released] = Obj;
    ++Released;
    return true;
  };

  // The lock stack, top-down. An exit may reshape it (fixing an anonymous
  // owner moves all of an object's entries into its monitor): scan again.
  for (;;) {
    LockStack LS(T);
    void *Pick = nullptr;
    uint64_t *Count = nullptr;
    for (int I = int(LS.size()) - 1; I >= 0 && !Pick; --I) {
      uint64_t *C = Left(LS.at(I));
      if (C && *C) {
        Pick = LS.at(I);
        Count = C;
      }
    }
    if (!Pick || !Release(Pick))
      break;
    --*Count;
  }
  // Monitors, newest registered first, then anything the lock stack phase
  // moved into a monitor.
  for (void *Obj : MonitorObjs)
    for (uint64_t *C = Left(Obj); C && *C && Release(Obj);)
      --*C;
  for (HoldCount &H : Excess)
    while (H.Count && Release(H.Obj))
      --H.Count;
  return Released;
}

/// The landing of an overflow in jitlock_rt_call_guarded's frame.
static int recover(jitlock_thread &T, GuardedCall &C,
                   jitlock_guarded_result *R) {
  StackState &S = T.Stack;
  S.Innermost.store(C.Outer, std::memory_order_relaxed);
  if (C.Overflow.from_signal) {
    // We left the handler by siglongjmp without restoring the signal mask.
    sigset_t Set;
    sigemptyset(&Set);
    sigaddset(&Set, SIGSEGV);
    pthread_sigmask(SIG_UNBLOCK, &Set, nullptr);
  }
  reprotect(S);
  size_t Released = releaseHoldsSince(T, C.Before, R);
  if (R) {
    R->overflow = C.Overflow;
    R->released_count = Released;
  }
  return JITLOCK_ESTACK_OVERFLOW;
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
    watermark(T).store(0, std::memory_order_relaxed);
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
  watermark(T).store(Base, std::memory_order_relaxed);

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
  watermark(T).store(0, std::memory_order_relaxed);
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
      Thread, [&](jitlock_thread &T) { fillInfo(T, *Info); });
  return Found ? JITLOCK_OK : JITLOCK_ENOT_ATTACHED;
}

void jitlock_rt_stack_bang(jitlock_thread *Self, uintptr_t SpNeeded) {
  if (!Self || Self != &currentThreadStorage() || !Self->Attached)
    return;
  std::atomic_ref<uintptr_t> Mark = watermark(*Self);
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

void jitlock_rt_unwind_to_entry(void *Ctx, const jitlock_stack_overflow *Info) {
  jitlock_thread &T = currentThreadStorage();
  jitlock_stack_overflow Local{};
  if (!Info) {
    Local.thread = T.Attached ? &T : nullptr;
    Local.sp = currentSp();
    if (T.Attached)
      fillInfo(T, Local.stack);
    Info = &Local;
  }
  GuardedCall *C =
      T.Attached ? T.Stack.Innermost.load(std::memory_order_relaxed) : nullptr;
  if (!C)
    fatalOverflow(*Info, ": no guarded call to return to");
  C->Overflow = *Info;
  siglongjmp(C->Env, 1);
}

int jitlock_rt_call_guarded(jitlock_thread *Self, void (*Fn)(void *), void *Arg,
                            jitlock_guarded_result *Result) {
  if (!Self || Self != currentThread())
    return misuse(JITLOCK_ENOT_ATTACHED, Self, nullptr,
                  "guarded call on a thread that is not the caller's "
                  "attached thread");
  if (!Fn)
    return misuse(JITLOCK_EINVAL, Self, nullptr, "guarded call of null");
  if (Result) {
    Result->overflow = jitlock_stack_overflow{};
    Result->released_count = 0;
  }
  StackState &S = Self->Stack;
  GuardedCall C;
  C.Outer = S.Innermost.load(std::memory_order_relaxed);
  // An entry below this frame was abandoned by a handler that unwound past
  // its guarded call; its frame (and its link outwards) may be overwritten.
  if (reinterpret_cast<uintptr_t>(C.Outer) < reinterpret_cast<uintptr_t>(&C))
    C.Outer = nullptr;
  reprotect(S);
  collectHolds(*Self, C.Before, nullptr);
  // Pops the entry however the call ends: return, overflow, or an exception.
  struct PopOnExit {
    StackState &S;
    GuardedCall &C;
    ~PopOnExit() { S.Innermost.store(C.Outer, std::memory_order_relaxed); }
  } Pop{S, C};
  S.Innermost.store(&C, std::memory_order_relaxed);
  // The handler reads Innermost from a signal on this thread.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  // An overflow may abandon frames in any thread state (a runtime call,
  // native code the entry point made); the caller gets its own state back.
  const uint32_t EntryState = Self->State.load(std::memory_order_relaxed);
  const OperationMarks EntryOperations = operationMarks();
  if (sigsetjmp(C.Env, 0) == 0) {
    Fn(Arg);
    return JITLOCK_OK;
  }
  unwindOperations(EntryOperations);
  restoreThreadState(*Self, EntryState);
  return recover(*Self, C, Result);
}
