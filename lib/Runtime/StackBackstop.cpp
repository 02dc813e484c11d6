//===- StackBackstop.cpp - The SIGSEGV backstop of the guard zones --------===//
//
// A fault in a protected guard zone (StackGuard.cpp) lands here, on the
// thread's alternate signal stack: in the red zone it is fatal; in the
// yellow or reserved zone the zone is unprotected, to give the frames that
// reached it room, and the overflow handler runs as for a failed bang check
// (recovery protects the zone again). A fault anywhere else is not ours and
// goes to whoever had SIGSEGV before. Everything here runs in a signal
// handler: async-signal-safe calls only, and the fatal messages are written
// without stdio.
//
//===----------------------------------------------------------------------===//
#include "Arch/Arch.h"
#include "StackGuard.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <mutex>

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

using namespace jitlock;

/// Room for the handler's frames, the sanitizers' signal wrappers and, in
/// the fatal case, the message. Ours, since a thread may have none.
static constexpr size_t AltStackSize = 128 * 1024;

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
[[noreturn]] void jitlock::fatalOverflow(const jitlock_stack_overflow &I,
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
  return arch::interruptedStackPointer(*static_cast<ucontext_t *>(Context));
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
    fillStackInfo(T, Info.stack);
    fatalOverflow(Info, "");
  }
  // Give the frames that reached the zone its pages, so that a handler that
  // resumes them has room; recovery protects it again.
  protectZone(T.Stack, Zone, /*Protect=*/false);
  reportOverflow(T, Zone, Sp, Fault, /*FromSignal=*/1);
}

bool jitlock::installBackstop() {
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
bool jitlock::installAltStack(StackState &S) {
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

void jitlock::removeAltStack(StackState &S) {
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
