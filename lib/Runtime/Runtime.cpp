//===- Runtime.cpp - The C ABI: lifetime, threads, operations, stats ------===//
//
// The C entry points check their arguments and then call the protocol in
// Synchronizer.cpp. Misuse is reported here, before any state changes.
//
//===----------------------------------------------------------------------===//
#include "jitlock/jitlock_rt.h"

#include "Config.h"
#include "ExitBarrier.h"
#include "Monitor.h"
#include "MonitorStorage.h"
#include "Reservation.h"
#include "Safepoint.h"
#include "StackGuard.h"
#include "Synchronizer.h"
#include "Thread.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

using namespace jitlock;

namespace jitlock {

/// The defaults, which Config starts as.
static constexpr jitlock_rt_config DefaultConfig = {
    /*struct_size=*/sizeof(jitlock_rt_config),
    /*header_offset=*/0,
    /*hash_shift=*/8,
    /*hash_bits=*/31,
    /*spin_limit=*/64,
    /*misuse_handler=*/nullptr,
    /*misuse_ctx=*/nullptr,
    /*stack_red_pages=*/1,
    /*stack_yellow_pages=*/2,
    /*stack_reserved_pages=*/1,
    /*stack_shadow_pages=*/20,
    /*stack_guards=*/1,
    /*locking_mode=*/JITLOCK_LOCKING_LIGHTWEIGHT,
    /*compiled_code_misuse=*/JITLOCK_MISUSE_ABORT,
    /*monitor_storage=*/JITLOCK_MONITORS_POINTER,
    /*monitor_capacity=*/0,
    /*inflated_exit=*/JITLOCK_EXIT_AUTO,
    /*safepoint_timeout_ms=*/0,
    /*safepoint_timeout_action=*/JITLOCK_SAFEPOINT_TIMEOUT_REPORT,
    /*reserve_shift=*/0,
    /*reserve_bits=*/0,
    /*reserve_revoke_limit=*/64};
jitlock_rt_config Config = DefaultConfig;

/// The required fields, those the config had before it had a size: no
/// caller's struct is smaller. Those after them are optional (a smaller
/// struct gets their defaults), compiled_code_misuse first.
static constexpr size_t MinConfigSize =
    offsetof(jitlock_rt_config, compiled_code_misuse);

/// Why the reservation field of `C` cannot be used, or null when it can.
static const char *reserveFieldProblem(const jitlock_rt_config &C) {
  if (C.locking_mode != JITLOCK_LOCKING_RESERVED)
    return C.reserve_bits == 0 ? nullptr
                               : "reserve_bits is set, but the locking mode "
                                 "is not JITLOCK_LOCKING_RESERVED";
  if (C.reserve_bits < 2 || C.reserve_bits > 32)
    return "JITLOCK_LOCKING_RESERVED needs reserve_bits from 2 to 32";
  if (C.reserve_shift < 2 || C.reserve_shift + C.reserve_bits > 64)
    return "the reservation field must lie within bits [2,64)";
  bool OverlapsHash = C.hash_bits != 0 &&
                      C.reserve_shift < C.hash_shift + C.hash_bits &&
                      C.hash_shift < C.reserve_shift + C.reserve_bits;
  if (OverlapsHash)
    return "the reservation field overlaps the hash field";
  return nullptr;
}

/// E.g. "jitlock: fatal: misuse from compiled code: monitor exit by a
/// non-owner (JITLOCK_ENOT_OWNER) on thread 3, object 0x...", then abort.
/// The thread is named from the calling OS thread's own state: `Thread` is
/// whatever the code passed, possibly not a thread at all.
[[noreturn]] static void abortOnCompiledCodeMisuse(jitlock_status Status,
                                                   jitlock_thread *Thread,
                                                   void *Obj,
                                                   const char *What) {
  char Who[128];
  jitlock_thread *Self = currentThread();
  if (!Self)
    snprintf(Who, sizeof(Who), "a thread that is not attached");
  else if (Thread == Self)
    snprintf(Who, sizeof(Who), "thread %llu", (unsigned long long)Self->Id);
  else
    snprintf(Who, sizeof(Who), "thread %llu, which passed thread %p",
             (unsigned long long)Self->Id, static_cast<void *>(Thread));
  char Msg[2048];
  int N = snprintf(Msg, sizeof(Msg),
                   "jitlock: fatal: misuse from compiled code: %s (%s) on %s, "
                   "object %p; aborting (compiled_code_misuse = "
                   "JITLOCK_MISUSE_REPORT reports and continues instead)\n",
                   What, jitlock_rt_status_name(Status), Who, Obj);
  // One write, so that threads dying together do not interleave lines.
  if (N > 0) {
    ssize_t Written =
        ::write(STDERR_FILENO, Msg, std::min(size_t(N), sizeof(Msg) - 1));
    (void)Written;
  }
  abort();
}

int misuse(jitlock_status Status, jitlock_thread *Thread, void *Obj,
           const char *What, Caller From) {
  if (Config.misuse_handler)
    Config.misuse_handler(Config.misuse_ctx, Status, Thread, Obj, What);
  if (From == Caller::CompiledCode &&
      Config.compiled_code_misuse == JITLOCK_MISUSE_ABORT)
    abortOnCompiledCodeMisuse(Status, Thread, Obj, What);
  return Status;
}

int checkStructSize(const char *Struct, uint32_t Size, size_t MinSize,
                    size_t LibrarySize) {
  if (Size >= MinSize && Size <= JITLOCK_RT_MAX_STRUCT_SIZE)
    return JITLOCK_OK;
  char What[384];
  snprintf(What, sizeof(What),
           "%s.struct_size is %u bytes: this library (ABI %u.%u) takes %zu to "
           "%u and knows %zu; start from the header's function that fills "
           "it (jitlock_rt_default_config, jitlock_rt_get_layout, "
           "jitlock_rt_default_deflation_policy), which sets it",
           Struct, Size, JITLOCK_RT_ABI_VERSION, JITLOCK_RT_ABI_MINOR, MinSize,
           JITLOCK_RT_MAX_STRUCT_SIZE, LibrarySize);
  return misuse(JITLOCK_EINVAL, nullptr, nullptr, What);
}

int fillCallerStruct(const char *Struct, void *Out, size_t MinSize,
                     const void *From, size_t LibrarySize) {
  if (!Out) {
    char What[64];
    snprintf(What, sizeof(What), "null %s", Struct);
    return misuse(JITLOCK_EINVAL, nullptr, nullptr, What);
  }
  uint32_t Size;
  memcpy(&Size, Out, sizeof(Size));
  if (int Err = checkStructSize(Struct, Size, MinSize, LibrarySize))
    return Err;
  size_t Common = std::min(size_t(Size), LibrarySize);
  memcpy(Out, From, Common);
  memset(static_cast<char *>(Out) + Common, 0, Size - Common);
  memcpy(Out, &Size, sizeof(Size));
  return JITLOCK_OK;
}

//===----------------------------------------------------------------------===//
// The thread registry
//===----------------------------------------------------------------------===//

static std::mutex ThreadsMutex;
static std::vector<jitlock_thread *> Threads;
static uint64_t NextThreadId = 1;
/// Counters of threads that have detached.
static ThreadStats RetiredStats;

// A safepoint holds the registry from begin to end (Safepoint.cpp, S1), and
// the queries its holder calls must not take it again. Everyone else waits
// for it safe, so that a safepoint holding it is not waiting for them.
void detail::lockThreadRegistry() {
  if (!holdsSafepoint())
    lockRegistryWhileSafe(ThreadsMutex);
}
void detail::unlockThreadRegistry() {
  if (holdsSafepoint())
    return;
  ThreadsMutex.unlock();
  pollAfterRegistry();
}

namespace {
/// The registry lock for the scope, taken as detail::lockThreadRegistry does.
struct RegistryGuard {
  RegistryGuard() { detail::lockThreadRegistry(); }
  ~RegistryGuard() {
    if (Held)
      detail::unlockThreadRegistry();
  }
  /// Before a misuse report: a stack overflow in the handler abandons this
  /// frame, and nothing would unlock the registry then.
  void unlock() {
    Held = false;
    detail::unlockThreadRegistry();
  }
  bool Held = true;
  RegistryGuard(const RegistryGuard &) = delete;
  RegistryGuard &operator=(const RegistryGuard &) = delete;
};

/// The operation lock for the scope, waited for safe.
struct OperationGuard {
  OperationGuard() { lockWhileSafe(operationLock()); }
  ~OperationGuard() { operationLock().unlock(); }
  OperationGuard(const OperationGuard &) = delete;
  OperationGuard &operator=(const OperationGuard &) = delete;
};

/// Detach's locks: the operation lock first, so that no safepoint or
/// handshake addresses the thread while it leaves, then the registry (the
/// order a safepoint takes them in; members are constructed in order).
struct LeaveGuard {
  OperationGuard Operation;
  RegistryGuard Registry;
};
} // namespace
size_t detail::attachedThreadCount() { return Threads.size(); }
jitlock_thread *detail::attachedThread(size_t I) { return Threads[I]; }

static void addCounters(ThreadStats &To, const ThreadStats &From) {
  auto Add = [](std::atomic<uint64_t> &A, const std::atomic<uint64_t> &B) {
    A.store(A.load(std::memory_order_relaxed) +
                B.load(std::memory_order_relaxed),
            std::memory_order_relaxed);
  };
  Add(To.FastLocks, From.FastLocks);
  Add(To.RecursiveLocks, From.RecursiveLocks);
  Add(To.MonitorEnters, From.MonitorEnters);
  Add(To.Inflations, From.Inflations);
  Add(To.ContendedEnters, From.ContendedEnters);
  Add(To.Parks, From.Parks);
  Add(To.SlowPathCalls, From.SlowPathCalls);
  Add(To.Waits, From.Waits);
  Add(To.Notifies, From.Notifies);
  Add(To.CacheHits, From.CacheHits);
  Add(To.CacheMisses, From.CacheMisses);
  Add(To.Reservations, From.Reservations);
  Add(To.ReservedEnters, From.ReservedEnters);
  Add(To.ReservedExits, From.ReservedExits);
}

/// Empties the lock stack. A detached thread's stack reads as full (with no
/// entries), which sends inline fast paths to the runtime, which refuses.
static void resetLockStack(jitlock_thread &T, bool Attached) {
  std::atomic_ref<uint32_t>(T.LockStackTop)
      .store(Attached ? LockStack::baseOffset() : LockStack::endOffset(),
             std::memory_order_relaxed);
  T.LockStackSentinel = LockStackSentinel;
  for (void *&Slot : T.LockStackSlots)
    std::atomic_ref<void *>(Slot).store(nullptr, std::memory_order_relaxed);
}

static void resetThread(jitlock_thread &T) {
  resetLockStack(T, /*Attached=*/true);
  resetSafepointState(T);
  T.BlockedOn.store(nullptr, std::memory_order_relaxed);
  T.BlockEpoch.store(0, std::memory_order_relaxed);
  T.WaitingOn.store(nullptr, std::memory_order_relaxed);
  T.Interrupted.store(0, std::memory_order_relaxed);
  for (std::atomic<uint64_t> *C :
       {&T.Stats.FastLocks, &T.Stats.RecursiveLocks, &T.Stats.MonitorEnters,
        &T.Stats.Inflations, &T.Stats.ContendedEnters, &T.Stats.Parks,
        &T.Stats.SlowPathCalls, &T.Stats.Waits, &T.Stats.Notifies,
        &T.Stats.CacheHits, &T.Stats.CacheMisses, &T.Stats.Reservations,
        &T.Stats.ReservedEnters, &T.Stats.ReservedExits})
    C->store(0, std::memory_order_relaxed);
}

static void detachLocked(jitlock_thread &T) {
  Threads.erase(std::find(Threads.begin(), Threads.end(), &T));
  addCounters(RetiredStats, T.Stats);
  resetLockStack(T, /*Attached=*/false);
  storage::dropCache(T);
  releaseFreeMonitors(T);
  T.MonitorBase = 0;
  // Its index is never handed out again: headers still reserved to it are
  // reserved to a thread that is gone, which any contender may revoke.
  reservation::threadDetached(T);
  T.ReserveTag = ~uint64_t(0);
  std::atomic_ref<void *>(T.UserData).store(nullptr, std::memory_order_relaxed);
  T.Attached = 0;
  waitForOwnerPeeks();
}

/// Detaches an OS thread that exits while attached, releasing what it holds
/// so that nothing stays locked by a thread that no longer exists.
/// Set when the exit hook has run. Trivially destructible, so that attach can
/// read it from a later TLS destructor: attaching then would leave a dead
/// thread registered and its stack's guard zones protected for the next
/// thread glibc gives that stack to.
static thread_local bool ExitHookRan = false;

struct ExitGuard {
  /// Written once by attach, which is what registers the destructor.
  bool Armed = false;
  ~ExitGuard() {
    ExitHookRan = true;
    jitlock_thread *T = currentThread();
    if (!T)
      return;
    if (holdsSafepoint()) {
      misuse(JITLOCK_ESTATE, T, nullptr,
             "thread exited while holding a safepoint; released it");
      releaseSafepointAtExit();
    }
    if (holdsAnyLock(*T)) {
      misuse(JITLOCK_EHOLDING_LOCKS, T, nullptr,
             "thread exited while attached and holding locks; released them");
      releaseAllLocks(*T);
    }
    {
      LeaveGuard Guard;
      detachLocked(*T);
    }
    detachStack(*T);
  }
};
static thread_local ExitGuard TheExitGuard;

} // namespace jitlock

//===----------------------------------------------------------------------===//
// Configuration and lifetime
//===----------------------------------------------------------------------===//

const char *jitlock_rt_status_name(int Status) {
  switch (Status) {
  case JITLOCK_OK:
    return "JITLOCK_OK";
  case JITLOCK_ENULL:
    return "JITLOCK_ENULL";
  case JITLOCK_ENOT_OWNER:
    return "JITLOCK_ENOT_OWNER";
  case JITLOCK_EHOLDING_LOCKS:
    return "JITLOCK_EHOLDING_LOCKS";
  case JITLOCK_ETIMEDOUT:
    return "JITLOCK_ETIMEDOUT";
  case JITLOCK_EINVAL:
    return "JITLOCK_EINVAL";
  case JITLOCK_ENOT_ATTACHED:
    return "JITLOCK_ENOT_ATTACHED";
  case JITLOCK_EBUSY:
    return "JITLOCK_EBUSY";
  case JITLOCK_ESTATE:
    return "JITLOCK_ESTATE";
  case JITLOCK_ESTACK_OVERFLOW:
    return "JITLOCK_ESTACK_OVERFLOW";
  case JITLOCK_ENOMEM:
    return "JITLOCK_ENOMEM";
  case JITLOCK_EINTERRUPTED:
    return "JITLOCK_EINTERRUPTED";
  }
  return "JITLOCK_<unknown status>";
}

uint32_t jitlock_rt_version(void) { return JITLOCK_RT_VERSION; }

int jitlock_rt_fill_default_config(jitlock_rt_config *Out) {
  return fillCallerStruct("jitlock_rt_config", Out, MinConfigSize,
                          &DefaultConfig, sizeof(DefaultConfig));
}

/// The reserve index of the next thread that attaches. Indices are not
/// reused while threads may be attached, so a header reserved to a detached
/// thread names no live thread, and a contender may revoke it without a
/// handshake (a reused index would make that revocation race with the new
/// thread's R1). Configure, which runs with no thread attached, starts them
/// again: a header still reserved to an old index is then reserved to a
/// thread that never held it, which is the same as being reserved to it.
static uint64_t NextReserveIndex = 1;

/// The reserve tag of a thread attaching now (registry lock held): the next
/// index, or ~0 (may not reserve) when reservation is off or the field's
/// indices, all but 0 and all ones, are used up.
static uint64_t takeReserveTag() {
  if (!reservation::enabled())
    return ~uint64_t(0);
  uint64_t AllOnes = reservation::fieldMask() >> Config.reserve_shift;
  if (NextReserveIndex >= AllOnes)
    return ~uint64_t(0);
  return header::UnlockedValue | NextReserveIndex++ << Config.reserve_shift;
}

/// jitlock_rt_configure's refusal of a configuration, for reason `Why`.
static int invalidConfig(const std::string &Why) {
  std::string What = "invalid configuration: " + Why;
  return misuse(JITLOCK_EINVAL, nullptr, nullptr, What.c_str());
}

int jitlock_rt_configure(const jitlock_rt_config *In) {
  if (!In)
    return misuse(JITLOCK_EINVAL, nullptr, nullptr, "null configuration");
  uint32_t Size = In->struct_size;
  if (int Err = checkStructSize("jitlock_rt_config", Size, MinConfigSize,
                                sizeof(jitlock_rt_config)))
    return Err;
  // Fields this library does not know must be left at zero, which means
  // "as before the field existed": anything else it could not honour.
  const auto *Bytes = reinterpret_cast<const unsigned char *>(In);
  for (size_t I = sizeof(jitlock_rt_config); I < Size; ++I) {
    if (Bytes[I]) {
      char What[160];
      snprintf(What, sizeof(What),
               "byte %zu of a %u-byte jitlock_rt_config is set, beyond the %zu "
               "bytes this library (ABI %u.%u) knows",
               I, Size, sizeof(jitlock_rt_config), JITLOCK_RT_ABI_VERSION,
               JITLOCK_RT_ABI_MINOR);
      return invalidConfig(What);
    }
  }
  // An older caller's struct ends early: the defaults for the rest.
  jitlock_rt_config Given = DefaultConfig;
  memcpy(&Given, In, std::min(size_t(Size), sizeof(Given)));
  Given.struct_size = sizeof(Given);
  const jitlock_rt_config *Cfg = &Given;
  // The hash must fit in the word above the lock bits.
  if (Cfg->hash_bits > 62 ||
      (Cfg->hash_bits != 0 &&
       (Cfg->hash_shift < 2 || Cfg->hash_shift + Cfg->hash_bits > 64)) ||
      Cfg->header_offset % 8 != 0)
    return invalidConfig("the hash field must lie within bits [2,64) and the "
                         "header offset must be 8-aligned");
  if (Cfg->stack_red_pages == 0 || Cfg->stack_yellow_pages == 0 ||
      Cfg->stack_reserved_pages == 0 || Cfg->stack_red_pages > 1024 ||
      Cfg->stack_yellow_pages > 1024 || Cfg->stack_reserved_pages > 1024 ||
      Cfg->stack_shadow_pages > 1024)
    return invalidConfig("the red, yellow and reserved zones need 1 to 1024 "
                         "pages each, the shadow zone at most 1024");
  if (Cfg->locking_mode > JITLOCK_LOCKING_RESERVED)
    return invalidConfig("unknown locking mode");
  if (const char *Why = reserveFieldProblem(*Cfg))
    return invalidConfig(Why);
  if (Cfg->compiled_code_misuse > JITLOCK_MISUSE_REPORT)
    return invalidConfig("unknown compiled_code_misuse");
  // Before any other use: the storage's code never sees an unknown value.
  if (!monitorStorageOf(Cfg->monitor_storage))
    return invalidConfig("unknown monitor storage");
  if (Cfg->monitor_storage == JITLOCK_MONITORS_TABLE && Cfg->hash_bits == 0)
    return invalidConfig("table monitor storage is keyed by the identity hash "
                         "and needs hash_bits > 0");
  if (Cfg->safepoint_timeout_action > JITLOCK_SAFEPOINT_TIMEOUT_ABORT)
    return invalidConfig("unknown safepoint_timeout_action");
  if (Cfg->monitor_capacity > storage::MaxCapacity) {
    char What[160];
    snprintf(What, sizeof(What),
             "monitor_capacity %u is above %u (0 means the default, %u)",
             Cfg->monitor_capacity, storage::MaxCapacity,
             storage::DefaultCapacity);
    return invalidConfig(What);
  }
  int ExitStatus;
  uint32_t RequestedExit = Given.inflated_exit;
  Given.inflated_exit = resolveInflatedExit(RequestedExit, ExitStatus);
  if (ExitStatus != JITLOCK_OK)
    return invalidConfig(RequestedExit == JITLOCK_EXIT_STORE
                             ? "inflated_exit JITLOCK_EXIT_STORE needs "
                               "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), "
                               "which this kernel does not offer"
                             : "unknown inflated_exit");
  if (deflationThreadRunning())
    return misuse(JITLOCK_ESTATE, nullptr, nullptr,
                  "configure while the deflation thread runs");
  RegistryGuard Guard;
  if (!Threads.empty()) {
    Guard.unlock();
    return misuse(JITLOCK_ESTATE, nullptr, nullptr,
                  "configure while threads are attached");
  }
  // Code generated for the handed-out layout may still run, and objects may
  // carry its headers: only a configuration with the same layout is taken.
  if (layoutHandedOut()) {
    jitlock_rt_config Current = Config;
    Current.inflated_exit = inflatedExit();
    std::string Now = fingerprintFor(Current);
    std::string Asked = fingerprintFor(Given);
    if (Now != Asked) {
      Guard.unlock();
      std::string What =
          "configure that changes the layout after it was handed out (to a "
          "code generator, lowered code or an attached thread): the layout "
          "is '" +
          Now + "', the configuration asks for '" + Asked +
          "'; configure before jitlock_rt_get_layout and the first attach, "
          "or call jitlock_rt_shutdown first";
      return misuse(JITLOCK_ESTATE, nullptr, nullptr, What.c_str());
    }
  }
  // Headers that name monitors are read as the storage says: it changes
  // only while no monitor is in memory.
  bool StorageChanges = Cfg->monitor_storage != Config.monitor_storage ||
                        (Cfg->monitor_storage == JITLOCK_MONITORS_INDEX &&
                         Cfg->monitor_capacity != Config.monitor_capacity) ||
                        (Cfg->monitor_storage == JITLOCK_MONITORS_TABLE &&
                         (Cfg->hash_shift != Config.hash_shift ||
                          Cfg->hash_bits != Config.hash_bits ||
                          Cfg->header_offset != Config.header_offset));
  if (StorageChanges && monitorsAllocated() != 0)
    return misuse(JITLOCK_ESTATE, nullptr, nullptr,
                  "configure that changes the monitor storage while monitors "
                  "exist: call jitlock_rt_shutdown first");
  if (storage::configure(*Cfg) != JITLOCK_OK)
    return misuse(JITLOCK_ENOMEM, nullptr, nullptr,
                  "configure: the index storage's monitor region could not "
                  "be reserved (monitor_capacity too large for the address "
                  "space?)");
  Config = *Cfg;
  NextReserveIndex = 1;
  return JITLOCK_OK;
}

/// jitlock_rt_shutdown, writing displaced headers back or not.
static int shutdownRuntime(bool WriteBack) {
  // The deflation thread would sweep monitors being freed: stopped first,
  // unless shutdown is refused anyway.
  if (deflationThreadRunning()) {
    bool Attached;
    {
      RegistryGuard Guard;
      Attached = !Threads.empty();
    }
    if (Attached)
      return misuse(JITLOCK_ESTATE, nullptr, nullptr,
                    "shutdown while threads are attached");
    if (int Err = stopDeflationThread())
      return Err;
  }
  // Held throughout, so that no thread attaches and inflates meanwhile.
  RegistryGuard Guard;
  if (!Threads.empty()) {
    Guard.unlock();
    return misuse(JITLOCK_ESTATE, nullptr, nullptr,
                  "shutdown while threads are attached");
  }
  freeAllMonitors(WriteBack);
  releaseLayout();
  return JITLOCK_OK;
}

int jitlock_rt_shutdown(void) { return shutdownRuntime(/*WriteBack=*/true); }

int jitlock_rt_shutdown_forget(void) {
  return shutdownRuntime(/*WriteBack=*/false);
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

jitlock_thread *jitlock_rt_attach(void) {
  jitlock_thread &T = currentThreadStorage();
  if (T.Attached)
    return &T;
  if (ExitHookRan) {
    misuse(JITLOCK_ESTATE, nullptr, nullptr,
           "attach from a thread that is exiting (its jitlock exit hook has "
           "run)");
    return nullptr;
  }
  // Touching the guard registers its destructor for this OS thread.
  TheExitGuard.Armed = true;
  // Before registering: readers of the registry see the zones complete.
  attachStack(T);
  RegistryGuard Guard;
  resetThread(T);
  T.Id = NextThreadId++;
  T.ReserveTag = takeReserveTag();
  reservation::threadAttached(T);
  T.HashState = 0;
  T.MonitorBase = storage::regionBase();
  T.UserData = nullptr;
  storage::dropCache(T);
  T.Attached = 1;
  Threads.push_back(&T);
  markLayoutHandedOut();
  // The misuse handler hears a mismatch without the registry lock held.
  Guard.unlock();
  checkPendingLayouts();
  return &T;
}

int jitlock_rt_detach(void) {
  jitlock_thread *T = currentThread();
  if (!T)
    return misuse(JITLOCK_ENOT_ATTACHED, nullptr, nullptr,
                  "detach of a thread that is not attached");
  if (holdsAnyLock(*T))
    return misuse(JITLOCK_EHOLDING_LOCKS, T, nullptr,
                  "detach while holding locks");
  if (holdsSafepoint() || inHandshake())
    return misuse(JITLOCK_ESTATE, T, nullptr,
                  "detach while holding a safepoint or inside a handshake");
  {
    LeaveGuard Guard;
    detachLocked(*T);
  }
  detachStack(*T);
  return JITLOCK_OK;
}

jitlock_thread *jitlock_rt_current(void) { return currentThread(); }

jitlock_thread *jitlock_rt_code_thread(void) { return &currentThreadStorage(); }

uint64_t jitlock_rt_thread_id(const jitlock_thread *T) { return T ? T->Id : 0; }

int jitlock_rt_set_thread_data(jitlock_thread *Thread, void *Data) {
  // Under the registry lock for another thread, so that it cannot detach
  // (which clears the pointer) in between.
  if (!withAttachedThread(Thread, [&](jitlock_thread &T) {
        std::atomic_ref<void *>(T.UserData)
            .store(Data, std::memory_order_release);
      }))
    return misuse(JITLOCK_ENOT_ATTACHED, Thread, nullptr,
                  "set thread data of a thread that is not attached");
  return JITLOCK_OK;
}

void *jitlock_rt_thread_data(const jitlock_thread *Thread) {
  void *Data = nullptr;
  withAttachedThread(Thread, [&](jitlock_thread &T) {
    Data = std::atomic_ref<void *>(T.UserData).load(std::memory_order_acquire);
  });
  return Data;
}

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

// jitlock_rt_monitor_enter/exit are in Synchronizer.cpp, next to enter()
// and exit(), so that the compiler folds the three into one function.

int jitlock_rt_wait(jitlock_thread *Self, void *Obj) {
  if (int Err = checkCaller(Self, Obj, "wait"))
    return Err;
  return wait(*Self, Obj, /*Timed=*/false, 0);
}

int jitlock_rt_wait_timed(jitlock_thread *Self, void *Obj, uint64_t TimeoutNs) {
  if (int Err = checkCaller(Self, Obj, "timed wait"))
    return Err;
  return wait(*Self, Obj, /*Timed=*/true, TimeoutNs);
}

int jitlock_rt_notify(jitlock_thread *Self, void *Obj) {
  if (int Err = checkCaller(Self, Obj, "notify"))
    return Err;
  return notify(*Self, Obj, /*All=*/false);
}

int jitlock_rt_notify_all(jitlock_thread *Self, void *Obj) {
  if (int Err = checkCaller(Self, Obj, "notifyAll"))
    return Err;
  return notify(*Self, Obj, /*All=*/true);
}

int jitlock_rt_interrupt(jitlock_thread *Thread) {
  if (!withAttachedThread(Thread, [](jitlock_thread &T) { interrupt(T); }))
    return misuse(JITLOCK_ENOT_ATTACHED, Thread, nullptr,
                  "interrupt of a thread that is not attached");
  return JITLOCK_OK;
}

int jitlock_rt_is_interrupted(const jitlock_thread *Thread) {
  int Set = -1;
  withAttachedThread(Thread, [&](jitlock_thread &T) {
    Set = T.Interrupted.load(std::memory_order_seq_cst) != 0;
  });
  return Set;
}

int jitlock_rt_clear_interrupt(jitlock_thread *Self) {
  if (!Self || Self != currentThread()) {
    misuse(JITLOCK_ENOT_ATTACHED, Self, nullptr, "clear interrupt");
    return -1;
  }
  // Only a set flag is written: the flag's line is the node's, which
  // exits and notifies write.
  return Self->Interrupted.load(std::memory_order_relaxed) &&
         Self->Interrupted.exchange(0, std::memory_order_acq_rel);
}

uint64_t jitlock_rt_identity_hash(jitlock_thread *Self, void *Obj) {
  if (!Obj)
    return 0;
  return identityHash(Self == currentThread() ? Self : nullptr, Obj);
}

//===----------------------------------------------------------------------===//
// Statistics
//===----------------------------------------------------------------------===//

/// Every thread's counters, attached and detached, added into `Sum`.
static void sumStats(ThreadStats &Sum) {
  RegistryGuard Guard;
  addCounters(Sum, RetiredStats);
  for (jitlock_thread *T : Threads)
    addCounters(Sum, T->Stats);
}

void jitlock_rt_get_stats(jitlock_rt_stats *Out) {
  ThreadStats Sum;
  sumStats(Sum);
  auto Get = [](const std::atomic<uint64_t> &C) {
    return C.load(std::memory_order_relaxed);
  };
  *Out = jitlock_rt_stats{Get(Sum.FastLocks),       Get(Sum.RecursiveLocks),
                          Get(Sum.MonitorEnters),   Get(Sum.Inflations),
                          Get(Sum.ContendedEnters), Get(Sum.Parks),
                          Get(Sum.SlowPathCalls),   Get(Sum.Waits),
                          Get(Sum.Notifies),        monitorsAlive()};
}

int jitlock_rt_fill_reservation_stats(jitlock_reservation_stats *Out) {
  jitlock_reservation_stats S = reservation::revocationStats();
  S.struct_size = sizeof(S);
  {
    ThreadStats Sum;
    sumStats(Sum);
    S.reservations = Sum.Reservations.load(std::memory_order_relaxed);
    S.reserved_enters = Sum.ReservedEnters.load(std::memory_order_relaxed);
    S.reserved_exits = Sum.ReservedExits.load(std::memory_order_relaxed);
  }
  return fillCallerStruct("jitlock_reservation_stats", Out, sizeof(S), &S,
                          sizeof(S));
}

int jitlock_rt_fill_monitor_stats(jitlock_monitor_stats *Out) {
  jitlock_monitor_stats S{};
  S.struct_size = sizeof(S);
  S.monitor_storage = Config.monitor_storage;
  S.monitors_alive = monitorsAlive();
  S.monitors_allocated = monitorsAllocated();
  if (storage::isIndex())
    S.monitor_capacity = Config.monitor_capacity ? Config.monitor_capacity
                                                 : storage::DefaultCapacity;
  if (storage::isTable()) {
    storage::TableFigures F = storage::tableFigures();
    S.table_slots = F.Capacity;
    S.table_entries = F.Live;
    S.table_tombstones = F.Tombstones;
    S.table_rehashes = F.Rehashes;
    S.table_longest_probe = F.LongestProbe;
    S.table_lookups = F.Lookups;
  }
  {
    ThreadStats Sum;
    sumStats(Sum);
    S.cache_hits = Sum.CacheHits.load(std::memory_order_relaxed);
    S.cache_misses = Sum.CacheMisses.load(std::memory_order_relaxed);
  }
  return fillCallerStruct("jitlock_monitor_stats", Out, sizeof(S), &S,
                          sizeof(S));
}

//===----------------------------------------------------------------------===//
// The IR interface, unlowered
//===----------------------------------------------------------------------===//

// A module that calls jitlock.monitor.enter and friends but was never lowered
// (compiled without -fpass-plugin=JitlockPlugin.so, or JIT-compiled without
// the jitlock passes) would otherwise fail to link with an undefined symbol
// that names nothing jitlock documents, or, worse, call something else.
// These weak definitions stop it at its first call with a message that says
// how to fix it. Lowered code never calls them (the lowering replaces every
// call), and a JIT resolving from jitlock::runtimeSymbols() never sees them.

[[noreturn]] static void unlowered(const char *Name) {
  char Msg[512];
  int N = snprintf(Msg, sizeof(Msg),
                   "jitlock: fatal: %s was called, but this code was never "
                   "lowered by the jitlock passes: compile it with "
                   "-fpass-plugin=<libdir>/JitlockPlugin.so (clang), run "
                   "opt -load-pass-plugin=JitlockPlugin.so "
                   "-passes=jitlock-lower, or register the passes in your "
                   "JIT (jitlock::registerPasses); aborting\n",
                   Name);
  if (N > 0) {
    ssize_t Written =
        ::write(STDERR_FILENO, Msg, std::min(size_t(N), sizeof(Msg) - 1));
    (void)Written;
  }
  abort();
}

extern "C" {
#define JITLOCK_UNLOWERED                                                      \
  __attribute__((weak, visibility("default"), used, noinline))
JITLOCK_UNLOWERED void
jitlockUnloweredEnter(void *) __asm__("jitlock.monitor.enter");
JITLOCK_UNLOWERED void
jitlockUnloweredExit(void *) __asm__("jitlock.monitor.exit");
JITLOCK_UNLOWERED void
jitlockUnloweredPoll(void) __asm__("jitlock.safepoint.poll");
JITLOCK_UNLOWERED void *jitlockUnloweredThread(void) __asm__("jitlock.thread");
#undef JITLOCK_UNLOWERED

void jitlockUnloweredEnter(void *) { unlowered("jitlock.monitor.enter"); }
void jitlockUnloweredExit(void *) { unlowered("jitlock.monitor.exit"); }
void jitlockUnloweredPoll(void) { unlowered("jitlock.safepoint.poll"); }
void *jitlockUnloweredThread(void) { unlowered("jitlock.thread"); }
}
