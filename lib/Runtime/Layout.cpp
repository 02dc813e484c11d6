//===- Layout.cpp - The layout query and the layout printer ---------------===//
//
// The single source of truth for every offset and constant that JIT code
// compiles in. Everything here is derived from the structures themselves.
//
//===----------------------------------------------------------------------===//
#include "jitlock/MonitorStorage.h"
#include "jitlock/jitlock_rt.h"

#include "Config.h"
#include "ExitBarrier.h"
#include "Monitor.h"
#include "ObjectHeader.h"
#include "Reservation.h"
#include "Safepoint.h"
#include "Thread.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

using namespace jitlock;

/// The required fields, those the layout had before it had a size: no
/// caller's struct is smaller. Fields appended later will be optional.
static constexpr size_t MinLayoutSize =
    offsetof(jitlock_rt_layout, poll_armed_bit) + sizeof(uint64_t);

/// The whole layout, as this library knows it, for configuration `C` whose
/// inflated exit resolves to `Exit`.
static void fillWholeLayout(jitlock_rt_layout *L, const jitlock_rt_config &C,
                            uint32_t Exit) {
  *L = jitlock_rt_layout{};
  L->struct_size = sizeof(jitlock_rt_layout);
  L->abi_version = JITLOCK_RT_ABI_VERSION;
  L->header_offset = C.header_offset;
  L->lock_mask = header::LockMask;
  L->unlocked_value = header::UnlockedValue;
  L->locked_value = header::LockedValue;
  L->monitor_value = header::MonitorValue;
  L->hash_shift = C.hash_shift;
  L->hash_bits = C.hash_bits;
  L->thread_size = sizeof(jitlock_thread);
  L->thread_align = alignof(jitlock_thread);
  L->thread_tls_offset = threadTlsOffset();
  L->lock_stack_top_offset = offsetof(jitlock_thread, LockStackTop);
  L->lock_stack_base_offset = LockStack::baseOffset();
  L->lock_stack_end_offset = LockStack::endOffset();
  L->lock_stack_capacity = LockStackCapacity;
  L->lock_stack_sentinel_offset = offsetof(jitlock_thread, LockStackSentinel);
  L->lock_stack_sentinel = reinterpret_cast<uint64_t>(LockStackSentinel);
  L->monitor_size = sizeof(Monitor);
  L->monitor_owner_offset = Monitor::ownerOffset();
  L->monitor_recursions_offset = Monitor::recursionsOffset();
  L->monitor_anonymous_owner = owner::AnonymousOwner;
  L->monitor_queued_bit = 0;
  L->cache_line_size = CacheLine;
  L->stack_watermark_offset = offsetof(jitlock_thread, StackWatermark);
  L->stack_page_size = uint32_t(sysconf(_SC_PAGESIZE));
  L->stack_shadow_pages = C.stack_shadow_pages;
  L->locking_mode = C.locking_mode;
  L->poll_word_offset = offsetof(jitlock_thread, PollWord);
  L->poll_armed_bit = poll::ArmedBit;
  // Every strategy's fields, whichever runs: code generators lower for any.
  L->monitor_storage = C.monitor_storage;
  L->monitor_index_shift = header::MonitorIndexShift;
  L->monitor_stride = sizeof(Monitor);
  L->monitor_base_offset = offsetof(jitlock_thread, MonitorBase);
  L->monitor_cache_offset = offsetof(jitlock_thread, MonitorCache);
  L->monitor_cache_entries = MonitorCacheEntries;
  L->monitor_cache_probes = MonitorCacheProbes;
  L->monitor_entry_count_offset = Monitor::entryCountOffset();
  L->monitor_exit = Exit;
  if (C.locking_mode == JITLOCK_LOCKING_RESERVED) {
    uint64_t Field = reservation::fieldMaskFor(C);
    L->reserve_shift = C.reserve_shift;
    L->reserve_bits = C.reserve_bits;
    L->reserve_mask = header::LockMask | Field;
    L->reservable_value = Field;
  }
  L->reserve_tag_offset = offsetof(jitlock_thread, ReserveTag);
}

namespace jitlock {

static std::atomic<bool> LayoutHandedOut{false};
/// Layout checks that ran before the layout was handed out (the
/// constructors of lowered code linked into the program run before main,
/// which may still configure): compared at the first attach, which comes
/// before the code's first monitor operation. Not earlier: an embedder
/// that takes the layout to compare stamps itself gets to refuse first.
static std::mutex PendingMutex;
static std::vector<std::string> PendingChecks;
static std::atomic<bool> HasPendingChecks{false};
static std::string currentFingerprint() {
  jitlock_rt_config Current = Config;
  Current.inflated_exit = inflatedExit();
  return fingerprintFor(Current);
}

/// The failed check: misuse from compiled code, which aborts by default.
static int layoutMismatch(const char *Fingerprint, const std::string &Mine) {
  // Both fingerprints in full: they are what tells which setting differs.
  std::string What =
      std::string("lowered code's layout check failed: the code was "
                  "generated for layout '") +
      (Fingerprint ? Fingerprint : "(null)") +
      "', but this runtime's layout is '" + Mine +
      "'; lower it again against this runtime's configuration (or configure "
      "the runtime as the code expects, before its layout is handed out)";
  return misuse(JITLOCK_EINVAL, nullptr, nullptr, What.c_str(),
                Caller::CompiledCode);
}

void markLayoutHandedOut() {
  if (LayoutHandedOut.load(std::memory_order_acquire))
    return;
  std::lock_guard<std::mutex> Guard(PendingMutex);
  LayoutHandedOut.store(true, std::memory_order_release);
}

void checkPendingLayouts() {
  if (!HasPendingChecks.load(std::memory_order_acquire))
    return;
  std::vector<std::string> Pending;
  {
    std::lock_guard<std::mutex> Guard(PendingMutex);
    Pending.swap(PendingChecks);
    HasPendingChecks.store(false, std::memory_order_release);
  }
  std::string Mine = currentFingerprint();
  for (const std::string &Expected : Pending)
    if (Expected != Mine)
      layoutMismatch(Expected.c_str(), Mine);
}

bool layoutHandedOut() {
  return LayoutHandedOut.load(std::memory_order_acquire);
}
void releaseLayout() {
  LayoutHandedOut.store(false, std::memory_order_release);
}

std::string fingerprintFor(const jitlock_rt_config &Cfg) {
  jitlock_rt_layout L;
  fillWholeLayout(&L, Cfg, Cfg.inflated_exit);
  std::string Text(jitlock_rt_layout_fingerprint(&L, nullptr, 0), '\0');
  jitlock_rt_layout_fingerprint(&L, Text.data(), Text.size() + 1);
  return Text;
}

} // namespace jitlock

int jitlock_rt_fill_layout(jitlock_rt_layout *Out) {
  jitlock_rt_layout L;
  fillWholeLayout(&L, Config, inflatedExit());
  if (int Err = fillCallerStruct("jitlock_rt_layout", Out, MinLayoutSize, &L,
                                 sizeof(L)))
    return Err;
  // What the caller may read: a newer caller's fields beyond are unknown.
  Out->struct_size = std::min(Out->struct_size, L.struct_size);
  markLayoutHandedOut();
  return JITLOCK_OK;
}

int jitlock_rt_check_layout(const char *Fingerprint) {
  if (Fingerprint && !layoutHandedOut()) {
    // Before main, or before the embedder configured: the comparison waits
    // for the first attach (PendingChecks).
    std::lock_guard<std::mutex> Guard(PendingMutex);
    if (!LayoutHandedOut.load(std::memory_order_acquire)) {
      PendingChecks.emplace_back(Fingerprint);
      HasPendingChecks.store(true, std::memory_order_release);
      return JITLOCK_OK;
    }
  }
  std::string Mine = currentFingerprint();
  if (!Fingerprint || Mine != Fingerprint)
    return layoutMismatch(Fingerprint, Mine);
  return JITLOCK_OK;
}

size_t jitlock_rt_layout_fingerprint(const jitlock_rt_layout *L, char *Buf,
                                     size_t Size) {
  // Only what the layout's monitor storage uses: code lowered for another
  // storage, or for other storage parameters, then reads differently.
  // An unknown storage gets a name no runtime stamps.
  char Storage[96];
  std::optional<MonitorStorage> Known = monitorStorageOf(L->monitor_storage);
  int Used =
      Known ? snprintf(Storage, sizeof(Storage), "%s", describe(*Known).Name)
            : snprintf(Storage, sizeof(Storage), "unknown-%u",
                       L->monitor_storage);
  unsigned Fields = Known ? describe(*Known).LayoutFields : NoLayoutFields;
  if (Fields & IndexRegionFields)
    Used += snprintf(Storage + Used, sizeof(Storage) - Used,
                     ",shift=%u,stride=%u,base=%u", L->monitor_index_shift,
                     L->monitor_stride, L->monitor_base_offset);
  if (Fields & MonitorCacheFields)
    snprintf(Storage + Used, sizeof(Storage) - Used,
             ",cache=%u,entries=%u,probes=%u", L->monitor_cache_offset,
             L->monitor_cache_entries, L->monitor_cache_probes);
  int N = snprintf(
      Buf, Size,
      "abi=%u;header=%d;mask=%llu;top=%u;base=%u;end=%u;owner=%u;"
      "recursions=%u;anonymous=%llu;entries=%u;exit=%s;watermark=%u;"
      "page=%u;shadow=%u;poll=%u;armed=%llu;monitors=%s",
      L->abi_version, L->header_offset, (unsigned long long)L->lock_mask,
      L->lock_stack_top_offset, L->lock_stack_base_offset,
      L->lock_stack_end_offset, L->monitor_owner_offset,
      L->monitor_recursions_offset,
      (unsigned long long)L->monitor_anonymous_owner,
      L->monitor_entry_count_offset,
      L->monitor_exit == JITLOCK_EXIT_STORE ? "store" : "fence",
      L->stack_watermark_offset, L->stack_page_size, L->stack_shadow_pages,
      L->poll_word_offset, (unsigned long long)L->poll_armed_bit, Storage);
  // Only when reserving, so that every other layout's stamp is unchanged;
  // code lowered without the reserved check must not run against it.
  if (N >= 0 && L->reserve_bits != 0) {
    size_t At = std::min(size_t(N), Size ? Size - 1 : 0);
    int More = snprintf(Size ? Buf + At : nullptr, Size ? Size - At : 0,
                        ";reserve=%u,%u,tag=%u", L->reserve_shift,
                        L->reserve_bits, L->reserve_tag_offset);
    N = More < 0 ? More : N + More;
  }
  return N < 0 ? 0 : size_t(N);
}

namespace {
struct FieldRow {
  const char *Name;
  size_t Offset;
  size_t Size;
  const char *Writers;
};

/// Prints one structure, a line per field, with a rule at each cache line
/// boundary and the writers of the line, like a field-layout dump.
void printStruct(FILE *Out, const char *Name, size_t Size, size_t Align,
                 const FieldRow *Rows, size_t NumRows) {
  fprintf(Out, "%s: size %zu, align %zu, %zu cache lines of %zu bytes\n", Name,
          Size, Align, (Size + CacheLine - 1) / CacheLine, CacheLine);
  fprintf(Out, "  %6s %5s  %-28s %s\n", "offset", "size", "field",
          "written by");
  size_t Line = SIZE_MAX;
  for (size_t I = 0; I != NumRows; ++I) {
    const FieldRow &R = Rows[I];
    if (R.Offset / CacheLine != Line) {
      Line = R.Offset / CacheLine;
      fprintf(Out, "  ---- cache line %zu (bytes %zu-%zu) ----\n", Line,
              Line * CacheLine, Line * CacheLine + CacheLine - 1);
    }
    fprintf(Out, "  %6zu %5zu  %-28s %s\n", R.Offset, R.Size, R.Name,
            R.Writers);
  }
}
} // namespace

#define FIELD(Type, Member, Writers)                                           \
  FieldRow {                                                                   \
    #Member, offsetof(Type, Member),                                           \
        sizeof(static_cast<Type *>(nullptr)->Member), Writers                  \
  }

void jitlock_rt_print_layout(FILE *Out) {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  fprintf(Out, "jitlock runtime layout (ABI %u)\n\n", L.abi_version);
  fprintf(Out,
          "object header: 64-bit word at object%+d\n"
          "  bits [1:0]  01 unlocked, 00 fast-locked, 10 monitor, 11 "
          "embedder\n"
          "  hash        %u bits at bit %u%s\n",
          L.header_offset, L.hash_bits, L.hash_shift,
          L.hash_bits ? "" : " (runtime hashes disabled)");
  if (L.reserve_bits)
    fprintf(Out,
            "  reservation %u bits at bit %u (mask %#llx; 0 not reservable, "
            "%#llx reservable, else the reserving thread's index); thread's "
            "tag at %u\n",
            L.reserve_bits, L.reserve_shift,
            static_cast<unsigned long long>(L.reserve_mask),
            static_cast<unsigned long long>(L.reservable_value),
            L.reserve_tag_offset);
  else
    fprintf(Out, "  reservation off (locking mode is not reserved)\n");
  fprintf(Out,
          "  other bits  the embedder's; kept across every transition\n\n");

  static const FieldRow ThreadRows[] = {
      FIELD(jitlock_thread, LockStackTop, "owner (JIT code)"),
      FIELD(jitlock_thread, Attached, "owner"),
      FIELD(jitlock_thread, Id, "owner"),
      FIELD(jitlock_thread, HashState, "owner"),
      FIELD(jitlock_thread, StackWatermark, "owner (stack-bang slow path)"),
      FIELD(jitlock_thread, MonitorBase, "owner (attach; index storage)"),
      FIELD(jitlock_thread, ReserveTag, "owner (attach, reservation policy)"),
      FIELD(jitlock_thread, LockStackSentinel, "nobody (constant)"),
      FIELD(jitlock_thread, LockStackSlots, "owner (JIT code)"),
      FIELD(jitlock_thread, Node.Wakeup, "other threads (exit)"),
      FIELD(jitlock_thread, Node.Queue, "other threads (queue lock)"),
      FIELD(jitlock_thread, Node.Losses, "owner (queue lock)"),
      FIELD(jitlock_thread, Node.HandoffWanted, "owner (queue lock)"),
      FIELD(jitlock_thread, Node.Next, "other threads (queue lock)"),
      FIELD(jitlock_thread, Node.Prev, "other threads (queue lock)"),
      FIELD(jitlock_thread, Node.Thread, "owner"),
      FIELD(jitlock_thread, WaitingOn, "owner, notifiers (queue lock)"),
      FIELD(jitlock_thread, Interrupted, "interrupters, owner"),
      FIELD(jitlock_thread, State, "owner (transitions)"),
      FIELD(jitlock_thread, SafepointId, "owner (stopping)"),
      FIELD(jitlock_thread, BlockedOn, "owner"),
      FIELD(jitlock_thread, BlockEpoch, "owner"),
      FIELD(jitlock_thread, Stats, "owner"),
      FIELD(jitlock_thread, Stack.Base, "owner (attach)"),
      FIELD(jitlock_thread, Stack.End, "owner (attach)"),
      FIELD(jitlock_thread, Stack.RedTop, "owner (attach)"),
      FIELD(jitlock_thread, Stack.YellowTop, "owner (attach)"),
      FIELD(jitlock_thread, Stack.ReservedTop, "owner (attach)"),
      FIELD(jitlock_thread, Stack.SafeLimit, "owner (attach)"),
      FIELD(jitlock_thread, Stack.PageSize, "owner (attach)"),
      FIELD(jitlock_thread, Stack.ProtectedZones, "owner, its SIGSEGV handler"),
      FIELD(jitlock_thread, Stack.Innermost, "owner (guarded calls)"),
      FIELD(jitlock_thread, Stack.Bangs, "owner (stack-bang slow path)"),
      FIELD(jitlock_thread, Stack.Overflows, "owner (overflow reports)"),
      FIELD(jitlock_thread, Stack.WantedZones, "owner (attach)"),
      FIELD(jitlock_thread, Stack.AltMapping, "owner (attach)"),
      FIELD(jitlock_thread, Stack.AltMappingSize, "owner (attach)"),
      FIELD(jitlock_thread, Stack.PrevAltSp, "owner (attach)"),
      FIELD(jitlock_thread, Stack.PrevAltSize, "owner (attach)"),
      FIELD(jitlock_thread, Stack.PrevAltFlags, "owner (attach)"),
      FIELD(jitlock_thread, PollWord, "safepoint and handshake requesters"),
      FIELD(jitlock_thread, Handshake.Lock, "handshake runners"),
      FIELD(jitlock_thread, Handshake.Pending, "handshake runners"),
      FIELD(jitlock_thread, MonitorCache,
            "owner, handshakes for it (table storage)"),
  };
  printStruct(Out, "jitlock_thread", sizeof(jitlock_thread),
              alignof(jitlock_thread), ThreadRows,
              sizeof(ThreadRows) / sizeof(ThreadRows[0]));
  fprintf(Out,
          "  lock stack: capacity %u, slots at %u..%u, top is a byte offset "
          "(empty %u, full %u), sentinel %#llx at %u\n"
          "  tls: thread = thread pointer %+lld\n"
          "  poll word at %u: armed while bit %#llx is set\n\n",
          L.lock_stack_capacity, L.lock_stack_base_offset,
          L.lock_stack_end_offset - 1, L.lock_stack_base_offset,
          L.lock_stack_end_offset,
          static_cast<unsigned long long>(L.lock_stack_sentinel),
          L.lock_stack_sentinel_offset,
          static_cast<long long>(L.thread_tls_offset), L.poll_word_offset,
          static_cast<unsigned long long>(L.poll_armed_bit));
  std::optional<MonitorStorage> Storage = monitorStorageOf(L.monitor_storage);
  const char *StorageName = Storage ? describe(*Storage).Name : "?";
  fprintf(Out,
          "inflated headers: %s storage (a header with tag 10 names its "
          "monitor)\n"
          "  pointer: monitor = header - %#llx\n"
          "  index:   monitor = thread[%u] + (header >> %u) * %u; index 0 "
          "names none\n"
          "  table:   header keeps its bits; cache of %u {object, monitor} "
          "pairs of 16 bytes at thread+%u (cache line %u), inline code "
          "probes %u\n\n",
          StorageName, static_cast<unsigned long long>(L.monitor_value),
          L.monitor_base_offset, L.monitor_index_shift, L.monitor_stride,
          L.monitor_cache_entries, L.monitor_cache_offset,
          L.monitor_cache_offset / L.cache_line_size, L.monitor_cache_probes);

  // Monitor has private fields (offsetof: Monitor.h says why it holds).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
  static const FieldRow MonitorRows[] = {
      FIELD(Monitor, Object, "inflater"),
      FIELD(Monitor, DisplacedHeader, "inflater, hash installers"),
      FIELD(Monitor, Generation, "inflater (reuse)"),
      FIELD(Monitor, RegistryNext, "inflaters, registry lock holders"),
      FIELD(Monitor, NextFreeBatch, "registry lock holders"),
      FIELD(Monitor, Owner, "owner, enterers (CAS)"),
      FIELD(Monitor, Recursions, "owner"),
      FIELD(Monitor, EntryCount, "queue lock holders"),
      FIELD(Monitor, QueueLock, "queue lock holders"),
      FIELD(Monitor, EntryHead, "queue lock holders"),
      FIELD(Monitor, EntryTail, "queue lock holders"),
      FIELD(Monitor, WaitHead, "queue lock holders"),
      FIELD(Monitor, WaitTail, "queue lock holders"),
      FIELD(Monitor, WaitCount, "queue lock holders"),
      FIELD(Monitor, Contentions, "contending enterers, deflaters"),
  };
#pragma GCC diagnostic pop
  printStruct(Out, "Monitor", sizeof(Monitor), alignof(Monitor), MonitorRows,
              sizeof(MonitorRows) / sizeof(MonitorRows[0]));
  fprintf(Out,
          "  owner word: thread address, 0, or anonymous %#llx; inflated "
          "exit: %s (store 0, %s load the entry count)\n",
          static_cast<unsigned long long>(L.monitor_anonymous_owner),
          L.monitor_exit == JITLOCK_EXIT_STORE ? "store" : "fence",
          L.monitor_exit == JITLOCK_EXIT_STORE ? "then" : "full fence, then");
}
