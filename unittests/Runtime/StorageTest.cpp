//===- StorageTest.cpp - The monitor storage strategies -------------------===//
//
// Pointer, index and table storage (jitlock_monitor_storage): the
// configuration checks, the header and layout each one gives inline code,
// index storage's capacity, table growth under concurrent lookups, a table
// slot deleted and reused under a lookup, the per-thread monitor cache
// against deflation, and one seeded operation sequence that must give the
// same observable results under all three.
//
// Each test that is about one storage configures it itself; the others run
// under JITLOCK_TEST_MONITORS, as the other monitor suites do.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include "MonitorStorage.h"
#include "Synchronizer.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <deque>
#include <random>
#include <sstream>

using namespace jitlock_test;

namespace {

class StorageTest : public RuntimeTest {
protected:
  // Detaches, shuts down (no monitor may remain across a change of
  // storage), configures `storage` (and `capacity`), attaches again.
  void useStorage(uint32_t storage, uint32_t capacity = 0,
                  uint32_t locking = JITLOCK_LOCKING_LIGHTWEIGHT) {
    ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    jitlock_rt_config cfg;
    jitlock_rt_default_config(&cfg);
    cfg.monitor_storage = storage;
    cfg.monitor_capacity = capacity;
    cfg.locking_mode = locking;
    cfg.misuse_handler = &MisuseLog::handler;
    cfg.misuse_ctx = &log;
    cfg.compiled_code_misuse = JITLOCK_MISUSE_REPORT;
    ASSERT_EQ(jitlock_rt_configure(&cfg), JITLOCK_OK);
    self = jitlock_rt_attach();
    ASSERT_NE(self, nullptr);
    jitlock_rt_get_layout(&l);
  }

  // An idle inflated object: a timed wait inflates it and leaves it free.
  void inflateIdle(Obj *o) {
    ASSERT_EQ(enter(o), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_wait_timed(self, o, 0), JITLOCK_ETIMEDOUT);
    ASSERT_EQ(exit(o), JITLOCK_OK);
    ASSERT_EQ(o->lowBits(), kMonitor);
  }

  // The monitor the runtime finds for `o`, which must be inflated.
  // `a` inflated and idle, and its monitor in `w`'s cache (an enter and
  // exit on the worker fill it); returns the monitor. Table storage.
  jitlock::Monitor *cachedOnWorker(Obj *a, Worker &w) {
    inflateIdle(a);
    jitlock_thread *wt = w.thread();
    w.call([&] {
      ASSERT_EQ(jitlock_rt_monitor_enter(wt, a), JITLOCK_OK);
      ASSERT_EQ(jitlock_rt_monitor_exit(wt, a), JITLOCK_OK);
    });
    return monitorOf(a);
  }
  static jitlock::Monitor *monitorOf(const Obj *o) {
    uint64_t h = o->hdr();
    return (h & kLockMask) == kMonitor ? jitlock::storage::monitorFor(o, h)
                                       : nullptr;
  }

  // The unlocked test header, with the hash table storage installed.
  static uint64_t unlockedHeaderOf(const Obj *o, uint32_t storage) {
    uint64_t h = kUnlockedHeader;
    if (storage == JITLOCK_MONITORS_TABLE)
      h |= jitlock_rt_peek_hash(o) << kHashShift;
    return h;
  }

  MisuseLog log;
  jitlock_rt_layout l{};
};

//===-- Configuration ----------------------------------------------------===//

TEST_F(StorageTest, ConfigureRefusesWhatItCannotHonour) {
  useStorage(JITLOCK_MONITORS_POINTER); // installs the log's handler
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  jitlock_rt_config cfg;
  jitlock_rt_default_config(&cfg);
  cfg.misuse_handler = &MisuseLog::handler;
  cfg.misuse_ctx = &log;
  jitlock_rt_config bad = cfg;
  bad.monitor_storage = 3;
  EXPECT_EQ(jitlock_rt_configure(&bad), JITLOCK_EINVAL);
  EXPECT_NE(log.last().what.find("monitor storage"), std::string::npos)
      << log.last().what;
  bad = cfg;
  bad.monitor_storage = JITLOCK_MONITORS_TABLE;
  bad.hash_bits = 0;
  EXPECT_EQ(jitlock_rt_configure(&bad), JITLOCK_EINVAL);
  EXPECT_NE(log.last().what.find("hash_bits"), std::string::npos)
      << log.last().what;
  bad = cfg;
  bad.monitor_storage = JITLOCK_MONITORS_INDEX;
  bad.monitor_capacity = jitlock::storage::MaxCapacity + 1;
  EXPECT_EQ(jitlock_rt_configure(&bad), JITLOCK_EINVAL);
  EXPECT_NE(log.last().what.find("monitor_capacity"), std::string::npos)
      << log.last().what;

  // A storage change while monitors exist would misread their headers
  // (and the attach that made them handed the layout out).
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  cfg.monitor_storage = JITLOCK_MONITORS_INDEX;
  ASSERT_EQ(jitlock_rt_configure(&cfg), JITLOCK_OK);
  self = jitlock_rt_attach();
  Obj *a = newObj();
  inflateIdle(a);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  for (uint32_t other : {JITLOCK_MONITORS_POINTER, JITLOCK_MONITORS_TABLE}) {
    jitlock_rt_config change = cfg;
    change.monitor_storage = other;
    EXPECT_EQ(jitlock_rt_configure(&change), JITLOCK_ESTATE);
  }
  jitlock_rt_config capacity = cfg;
  capacity.monitor_capacity = 64;
  EXPECT_EQ(jitlock_rt_configure(&capacity), JITLOCK_ESTATE);
  // The same storage is fine; after shutdown any is.
  EXPECT_EQ(jitlock_rt_configure(&cfg), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), kUnlockedHeader);
  cfg.monitor_storage = JITLOCK_MONITORS_TABLE;
  EXPECT_EQ(jitlock_rt_configure(&cfg), JITLOCK_OK);
  self = jitlock_rt_attach();
  ASSERT_NE(self, nullptr);
}

//===-- What inline code finds -------------------------------------------===//

// Every storage: the header's tag, the monitor the layout's rules find from
// it, and that monitor's owner word, read through the layout.
// A monitor_storage value that names no storage of MonitorStorage.def is
// refused at configure, whatever storage is in use, and leaves that storage
// and its monitors as they were: nothing decodes a header by it.
TEST_F(StorageTest, ConfigureRefusesAnUnknownStorageValue) {
  for (uint32_t storage : {JITLOCK_MONITORS_POINTER, JITLOCK_MONITORS_INDEX,
                           JITLOCK_MONITORS_TABLE}) {
    SCOPED_TRACE(storage);
    useStorage(storage);
    Obj *a = newObj();
    inflateIdle(a);
    jitlock::Monitor *m = monitorOf(a);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    for (uint32_t unknown : {3u, 4u, 0x80000000u, 0xffffffffu}) {
      SCOPED_TRACE(unknown);
      jitlock_rt_config bad;
      jitlock_rt_default_config(&bad);
      bad.monitor_storage = unknown;
      bad.misuse_handler = &MisuseLog::handler;
      bad.misuse_ctx = &log;
      EXPECT_EQ(jitlock_rt_configure(&bad), JITLOCK_EINVAL);
      EXPECT_NE(log.last().what.find("monitor storage"), std::string::npos)
          << log.last().what;
    }
    self = jitlock_rt_attach();
    ASSERT_NE(self, nullptr);
    jitlock_rt_layout now{};
    jitlock_rt_get_layout(&now);
    EXPECT_EQ(now.monitor_storage, storage);
    EXPECT_EQ(monitorOf(a), m);
    ASSERT_EQ(enter(a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_holds_lock(self, a), 1);
    ASSERT_EQ(exit(a), JITLOCK_OK);
    EXPECT_EQ(a->lowBits(), kMonitor);
  }
}

// The descriptor table and the C ABI agree, and names round-trip.
TEST(MonitorStorageDescriptor, NamesValuesAndFieldsAgree) {
  EXPECT_EQ(std::size(jitlock::MonitorStorages), 3u);
  for (const jitlock::MonitorStorageDescriptor &D : jitlock::MonitorStorages) {
    SCOPED_TRACE(D.Name);
    EXPECT_EQ(uint32_t(D.Storage), D.Value);
    EXPECT_EQ(jitlock::monitorStorageOf(D.Value), D.Storage);
    EXPECT_EQ(jitlock::monitorStorageNamed(D.Name), D.Storage);
    EXPECT_EQ(&jitlock::describe(D.Storage), &D);
  }
  EXPECT_EQ(jitlock::monitorStorageOf(3), std::nullopt);
  EXPECT_EQ(jitlock::monitorStorageNamed("pointers"), std::nullopt);
  EXPECT_EQ(jitlock::describe(jitlock::MonitorStorage::Pointer).LayoutFields,
            unsigned(jitlock::NoLayoutFields));
  EXPECT_EQ(jitlock::describe(jitlock::MonitorStorage::Index).LayoutFields,
            unsigned(jitlock::IndexRegionFields));
  EXPECT_EQ(jitlock::describe(jitlock::MonitorStorage::Table).LayoutFields,
            unsigned(jitlock::MonitorCacheFields));
}

TEST_F(StorageTest, InlineRulesFindTheOwnedMonitor) {
  for (uint32_t storage : {JITLOCK_MONITORS_POINTER, JITLOCK_MONITORS_INDEX,
                           JITLOCK_MONITORS_TABLE}) {
    SCOPED_TRACE("storage " + std::to_string(storage));
    useStorage(storage);
    EXPECT_EQ(l.monitor_storage, storage);
    uintptr_t base = *reinterpret_cast<const uintptr_t *>(
        reinterpret_cast<const char *>(self) + l.monitor_base_offset);
    EXPECT_EQ(base != 0, storage == JITLOCK_MONITORS_INDEX);
    Obj *a = newObj(), *b = newObj();
    ASSERT_EQ(enter(a), JITLOCK_OK);
    ASSERT_EQ(enter(b), JITLOCK_OK);
    ASSERT_EQ(enter(a), JITLOCK_OK); // non-adjacent: a is inflated, owned
    uint64_t h = a->hdr();
    ASSERT_EQ(h & kLockMask, kMonitor);
    switch (storage) {
    case JITLOCK_MONITORS_INDEX:
      EXPECT_EQ(h & ~(uint64_t(-1) << l.monitor_index_shift), kMonitor)
          << "the index alone, above the shift";
      EXPECT_NE(h >> l.monitor_index_shift, 0u) << "index 0 names none";
      break;
    case JITLOCK_MONITORS_TABLE:
      EXPECT_EQ(h & ~kHashMask & ~kLockMask, kEmbedderBits & ~kLockMask)
          << "the header keeps its bits";
      EXPECT_NE(h & kHashMask, 0u) << "hashed before inflation";
      break;
    }
    char *m = inlineMonitor(l, self, a, h);
    ASSERT_NE(m, nullptr) << "the runtime's lookup filled the cache";
    EXPECT_EQ(m, reinterpret_cast<char *>(monitorOf(a)));
    EXPECT_EQ(*reinterpret_cast<uintptr_t *>(m + l.monitor_owner_offset),
              uintptr_t(self));
    EXPECT_EQ(*reinterpret_cast<uint64_t *>(m + l.monitor_recursions_offset),
              1u);
    ASSERT_EQ(exit(a), JITLOCK_OK);
    ASSERT_EQ(exit(b), JITLOCK_OK);
    ASSERT_EQ(exit(a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
    EXPECT_EQ(a->hdr(), unlockedHeaderOf(a, storage));
  }
}

//===-- Index: capacity --------------------------------------------------===//

// A full region fails the inflating operation with JITLOCK_ENOMEM, after one
// deflation cycle, and changes nothing; a monitor freed by that cycle is
// reused instead.
TEST_F(StorageTest, IndexCapacityExhaustionFailsCleanly) {
  constexpr uint32_t kCap = 4;
  useStorage(JITLOCK_MONITORS_INDEX, kCap);
  // Every monitor held: a timed wait inflates, and the waiter owns it again.
  std::vector<Obj *> held;
  for (uint32_t i = 0; i < kCap; ++i) {
    held.push_back(newObj());
    ASSERT_EQ(enter(held.back()), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_wait_timed(self, held.back(), 0), JITLOCK_ETIMEDOUT);
  }
  EXPECT_EQ(stats().monitors_alive, kCap);
  Obj *fast = newObj(), *other = newObj();
  ASSERT_EQ(enter(fast), JITLOCK_OK);
  size_t n0 = log.count();
  // A wait needs a monitor for the fast-locked object.
  EXPECT_EQ(jitlock_rt_wait_timed(self, fast, 0), JITLOCK_ENOMEM);
  ASSERT_EQ(log.count(), n0 + 1);
  EXPECT_EQ(log.last().status, JITLOCK_ENOMEM);
  EXPECT_EQ(log.last().obj, fast);
  EXPECT_EQ(fast->lowBits(), kFastLocked) << "still fast-locked, still ours";
  // So does a non-adjacent re-entry, from the C API and from compiled code.
  ASSERT_EQ(enter(other), JITLOCK_OK);
  EXPECT_EQ(enter(fast), JITLOCK_ENOMEM);
  EXPECT_EQ(jitlock_rt_monitor_enter_slow(self, fast), JITLOCK_ENOMEM);
  EXPECT_EQ(lockStack(self), (std::vector<void *>{fast, other}))
      << "nothing changed";
  EXPECT_EQ(inspect(fast).holds, 1u);
  // Restore-locks reserves its monitors first: refused before any change.
  Obj *elided = newObj();
  jitlock_relock_entry frame[] = {{elided, JITLOCK_RELOCK_ELIDED}};
  EXPECT_EQ(jitlock_rt_restore_locks(self, frame, 1, 0), JITLOCK_ENOMEM);
  EXPECT_EQ(elided->hdr(), kUnlockedHeader);
  // What holds a monitor still works.
  for (Obj *o : held) {
    EXPECT_EQ(jitlock_rt_notify_all(self, o), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_wait_timed(self, o, 0), JITLOCK_ETIMEDOUT);
  }
  ASSERT_EQ(exit(other), JITLOCK_OK);
  // One released: the failing inflation's deflation frees its monitor.
  ASSERT_EQ(exit(held[0]), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_wait_timed(self, fast, 0), JITLOCK_ETIMEDOUT);
  EXPECT_EQ(held[0]->hdr(), kUnlockedHeader) << "deflated to make room";
  ASSERT_EQ(exit(fast), JITLOCK_OK);
  for (Obj *o : held)
    if (jitlock_rt_holds_lock(self, o))
      ASSERT_EQ(exit(o), JITLOCK_OK);

  // Heavy mode inflates at every enter: the enter itself fails.
  useStorage(JITLOCK_MONITORS_INDEX, kCap, JITLOCK_LOCKING_HEAVY);
  for (Obj *o : held)
    ASSERT_EQ(enter(o), JITLOCK_OK);
  EXPECT_EQ(enter(fast), JITLOCK_ENOMEM);
  EXPECT_EQ(fast->hdr(), kUnlockedHeader);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, fast));
  for (Obj *o : held)
    ASSERT_EQ(exit(o), JITLOCK_OK);
  EXPECT_EQ(enter(fast), JITLOCK_OK);
  ASSERT_EQ(exit(fast), JITLOCK_OK);
}

//===-- Table: growth under concurrent lookups ---------------------------===//

// Readers enter and leave inflated objects (more than their caches hold, so
// their lookups reach the table) while the main thread inflates thousands
// more, which rehashes the table several times; the readers count inside
// under the lock, so a lookup that found a wrong monitor shows up in the
// count or in the owner check.
TEST_F(StorageTest, TableGrowsUnderConcurrentLookups) {
  useStorage(JITLOCK_MONITORS_TABLE);
  constexpr int kReaders = 4, kShared = 12;
  const unsigned seed = unsigned(std::random_device{}());
  std::printf("StorageTest.TableGrowsUnderConcurrentLookups seed=%u\n", seed);
  std::vector<Obj *> shared;
  for (int i = 0; i < kShared; ++i) {
    shared.push_back(newObj());
    inflateIdle(shared.back());
  }
  jitlock::storage::TableFigures f0 = jitlock::storage::tableFigures();
  std::vector<uint64_t> counts(kShared, 0);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> wrongOwner{0}, lookupsDone{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r)
    readers.emplace_back([&, r] {
      jitlock_thread *t = jitlock_rt_attach();
      std::mt19937 rng(seed + r);
      uint64_t done = 0;
      while (!stop.load(std::memory_order_relaxed) || done < 2000) {
        int k = int(rng() % kShared);
        ASSERT_EQ(jitlock_rt_monitor_enter(t, shared[k]), JITLOCK_OK);
        if (!jitlock_rt_holds_lock(t, shared[k]))
          wrongOwner.fetch_add(1);
        // A plain count: only the lock orders it.
        counts[k] = counts[k] + 1;
        ASSERT_EQ(jitlock_rt_monitor_exit(t, shared[k]), JITLOCK_OK);
        ++done;
        jitlock_rt_safepoint_poll(t);
      }
      lookupsDone.fetch_add(done);
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
  // Thousands of inflations: the table grows from its first size.
  std::vector<Obj *> many;
  for (int i = 0; i < 3000; ++i) {
    many.push_back(newObj());
    ASSERT_EQ(enter(many.back()), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_wait_timed(self, many.back(), 0), JITLOCK_ETIMEDOUT);
    ASSERT_EQ(exit(many.back()), JITLOCK_OK);
    jitlock_rt_safepoint_poll(self);
  }
  stop = true;
  {
    NativeScope native(self);
    for (std::thread &t : readers)
      t.join();
  }
  jitlock::storage::TableFigures f1 = jitlock::storage::tableFigures();
  EXPECT_GT(f1.Rehashes, f0.Rehashes) << "the table never grew";
  EXPECT_GE(f1.Capacity, 4 * 3000u / 3);
  EXPECT_EQ(f1.Live, 3000u + kShared);
  EXPECT_EQ(wrongOwner.load(), 0u);
  uint64_t total = 0;
  for (uint64_t c : counts)
    total += c;
  EXPECT_EQ(total, lookupsDone.load()) << "mutual exclusion";
  for (Obj *o : many)
    EXPECT_EQ(monitorOf(o) ? monitorOf(o)->object() : nullptr, o);
  jitlock_monitor_stats ms;
  jitlock_rt_get_monitor_stats(&ms);
  EXPECT_EQ(ms.monitor_storage, uint32_t(JITLOCK_MONITORS_TABLE));
  EXPECT_EQ(ms.table_entries, 3000u + kShared);
  EXPECT_EQ(ms.table_slots, f1.Capacity);
  EXPECT_GT(ms.table_rehashes, 0u);
  EXPECT_GE(ms.table_longest_probe, 1u);
  EXPECT_GT(ms.table_lookups, 0u);
  // 12 objects over 4 cache entries: the readers' slow paths hit and miss.
  EXPECT_GT(ms.cache_hits, 0u);
  EXPECT_GT(ms.cache_misses, 0u);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 3000u + kShared);
  jitlock_rt_get_monitor_stats(&ms);
  EXPECT_EQ(ms.table_entries, 0u);
  EXPECT_GT(ms.table_tombstones, 0u);
}

TEST_F(StorageTest, MonitorStatsFollowTheStorage) {
  useStorage(JITLOCK_MONITORS_INDEX, 1000);
  Obj *a = newObj();
  inflateIdle(a);
  jitlock_monitor_stats ms;
  jitlock_rt_get_monitor_stats(&ms);
  EXPECT_EQ(ms.struct_size, sizeof(ms));
  EXPECT_EQ(ms.monitor_storage, uint32_t(JITLOCK_MONITORS_INDEX));
  EXPECT_EQ(ms.monitor_capacity, 1000u);
  EXPECT_EQ(ms.monitors_alive, 1u);
  EXPECT_EQ(ms.table_slots, 0u);
  // A size the library refuses: nothing written.
  jitlock_monitor_stats bad{};
  bad.struct_size = 4;
  EXPECT_EQ(jitlock_rt_fill_monitor_stats(&bad), JITLOCK_EINVAL);
  EXPECT_EQ(bad.monitors_alive, 0u);
  EXPECT_EQ(jitlock_rt_fill_monitor_stats(nullptr), JITLOCK_EINVAL);
}

//===-- Table: a slot deleted and reused under a lookup ------------------===//

// A reader that loaded a slot's key may load its monitor after the slot was
// deleted and reused for the same object with a new monitor: that monitor's
// construction must be visible to it, so the monitor is stored with release
// as well as the key (insertInto). Readers look the object up from the table
// alone (their caches dropped each time) while the main thread replaces its
// entry with freshly constructed monitors. A lookup preempted between its two
// loads reads the new monitor; with a relaxed monitor store, the tsan preset
// reports its read of the object word as a race with the constructor. In
// every build each found monitor must be one of the object's, intact.
TEST_F(StorageTest, TableSlotReusedUnderALookupShowsTheNewMonitor) {
  useStorage(JITLOCK_MONITORS_TABLE);
  constexpr int kReaders = 4;
  constexpr size_t kMaxMonitors = 100000;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(2000);
  Obj *b = newObj();
  // b's inflated header, made by hand: the monitors are this test's own,
  // published and unpublished directly, never known to the runtime.
  const uint64_t displaced = jitlock::header::withHash(kUnlockedHeader, 0x5a5);
  const uint64_t inflated =
      jitlock::header::withLockBits(displaced, jitlock::header::MonitorValue);
  std::deque<jitlock::Monitor> monitors;
  auto fresh = [&] { return &monitors.emplace_back(b, displaced, 0, 0); };
  jitlock::Monitor *current = fresh();
  b->header.store(inflated);
  jitlock::storage::publish(b, current);

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> found{0}, missed{0}, wrong{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r)
    readers.emplace_back([&] {
      jitlock_thread *t = jitlock_rt_attach();
      ASSERT_NE(t, nullptr);
      uint64_t hits = 0, misses = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        jitlock::storage::dropCache(*t);
        jitlock::Monitor *m = jitlock::storage::monitorFor(b, inflated);
        if (!m) {
          ++misses; // between the delete and the insert
          continue;
        }
        ++hits;
        if (m->object() != b || m->displacedHeader() != displaced)
          wrong.fetch_add(1, std::memory_order_relaxed);
      }
      found.fetch_add(hits);
      missed.fetch_add(misses);
      ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
  while (std::chrono::steady_clock::now() < deadline &&
         monitors.size() < kMaxMonitors) {
    // The entry deleted (a tombstone), then the slot reused for b; the
    // monitor constructed first, to keep the entry's absence short.
    jitlock::Monitor *next = fresh();
    jitlock::storage::unpublish(*current, b, 0);
    b->header.store(inflated);
    jitlock::storage::publish(b, next);
    current = next;
  }
  stop = true;
  for (std::thread &r : readers)
    r.join();
  std::printf("StorageTest.TableSlotReusedUnderALookupShowsTheNewMonitor: "
              "%zu monitors, %" PRIu64 " lookups found one, %" PRIu64
              " missed\n",
              monitors.size(), found.load(), missed.load());
  EXPECT_GT(found.load(), 0u);
  EXPECT_EQ(wrong.load(), 0u) << "a lookup found a monitor not b's";
  jitlock::storage::unpublish(*current, b, 0);
  EXPECT_EQ(jitlock::storage::tableFigures().Live, 0u);
  b->header.store(kUnlockedHeader);
}

//===-- Table: the monitor cache against deflation -----------------------===//

// A thread's cache names a monitor that is deflated, reused for another
// object, and the first object inflated again. The A6 handshake must have
// dropped the entry: inline code that trusted it would take the other
// object's monitor.
TEST_F(StorageTest, DeflationDropsCachedMonitorsBeforeReuse) {
  useStorage(JITLOCK_MONITORS_TABLE);
  Obj *a = newObj(), *x = newObj();
  inflateIdle(a);
  jitlock::Monitor *m = monitorOf(a);
  Worker w;
  jitlock_thread *t = w.thread();
  // The worker's own lookup caches {a, m}.
  w.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
    EXPECT_EQ(inlineMonitor(l, t, a, a->hdr()), reinterpret_cast<char *>(m));
  });
  // Deflated (the worker is safe: the handshake runs for it), m reused for
  // x, a inflated again with another monitor.
  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  inflateIdle(x);
  ASSERT_EQ(monitorOf(x), m) << "the free list gave m to x";
  inflateIdle(a);
  ASSERT_NE(monitorOf(a), m);
  // Inline code on the worker: a's header is 10; its cache must miss.
  w.call([&] {
    EXPECT_EQ(inlineMonitor(l, t, a, a->hdr()), nullptr)
        << "a stale cache entry survived the handshake";
    ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
    EXPECT_EQ(inlineMonitor(l, t, a, a->hdr()),
              reinterpret_cast<char *>(monitorOf(a)));
    ASSERT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
  });
  EXPECT_EQ(inspect(x).owner, nullptr);
}

// The other half: between A3 and the handshake a cache may name a deflated
// monitor. An enter through it goes to the runtime (its owner is the
// deflater's marker), which must not trust the entry, helps the restore and
// locks the object afresh. Forced with the deflation hook.
TEST_F(StorageTest, StaleCacheEntryBeforeTheHandshakeIsNotTrusted) {
  useStorage(JITLOCK_MONITORS_TABLE);
  Obj *a = newObj();
  Worker w;
  jitlock_thread *t = w.thread();
  jitlock::Monitor *m = cachedOnWorker(a, w);
  int rc = -1;
  char *cached = nullptr;
  {
    HookScope<jitlock::DeflationStage, jitlock::Monitor &> hook(
        jitlock::DeflationTestHook,
        [&](jitlock::DeflationStage stage, jitlock::Monitor &) {
          if (stage != jitlock::DeflationStage::Decided)
            return;
          // A3 has won, A5 not yet run: the worker's cache still names m.
          w.call([&] {
            cached = inlineMonitor(l, t, a, a->hdr());
            rc = jitlock_rt_monitor_enter(t, a);
          });
        });
    EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  }
  EXPECT_EQ(cached, reinterpret_cast<char *>(m));
  EXPECT_EQ(rc, JITLOCK_OK);
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.owner, t) << describe(a);
  EXPECT_EQ(i.state, JITLOCK_STATE_FAST) << "the enterer restored the header "
                                            "and fast-locked it";
  w.call([&] {
    EXPECT_EQ(inlineMonitor(l, t, a, a->hdr()), nullptr);
    ASSERT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
  });
  EXPECT_EQ(a->hdr(), unlockedHeaderOf(a, JITLOCK_MONITORS_TABLE));
}

// A cached monitor deflated, and the object inflated again with another
// one, all before the deflation's handshake reaches the thread that caches
// it (which runs managed code that does not poll meanwhile). Its enter must
// not take the cached, deflated monitor for the object's: it would find it
// deflated, find the header naming another monitor, and start over forever.
TEST_F(StorageTest, StaleCacheEntryAfterReinflationIsNotTrusted) {
  useStorage(JITLOCK_MONITORS_TABLE);
  Obj *a = newObj();
  Worker w;
  jitlock_thread *t = w.thread();
  jitlock::Monitor *m = cachedOnWorker(a, w);
  std::atomic<bool> started{false}, go{false};
  int rc = -1;
  char *cachedBefore = nullptr, *cachedAfter = nullptr;
  // Managed, and no poll until `go`: the deflation's handshake waits.
  w.post([&] {
    started = true;
    while (!go.load())
      std::this_thread::yield();
    cachedBefore = inlineMonitor(l, t, a, a->hdr());
    rc = jitlock_rt_monitor_enter(t, a);
    cachedAfter = inlineMonitor(l, t, a, a->hdr());
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
  });
  // Not before: a worker still waiting for the job is safe, and the
  // handshake would run for it (and empty its cache) at once.
  ASSERT_TRUE(waitUntil([&] { return started.load(); }));
  std::thread deflater([] { EXPECT_EQ(jitlock_rt_deflate_idle(), 1u); });
  // A5 done: the deflater now waits in its handshake for the worker.
  ASSERT_TRUE(waitUntil([&] { return a->lowBits() != kMonitor; }));
  inflateIdle(a);
  jitlock::Monitor *again = monitorOf(a);
  ASSERT_NE(again, m) << "m is not free before the handshake";
  go = true;
  {
    NativeScope native(self);
    EXPECT_TRUE(w.join()) << "the enter trusted its stale cache entry";
    deflater.join();
  }
  EXPECT_EQ(cachedBefore, reinterpret_cast<char *>(m));
  EXPECT_EQ(rc, JITLOCK_OK);
  EXPECT_EQ(cachedAfter, reinterpret_cast<char *>(again));
  EXPECT_EQ(inspect(a).owner, nullptr);
}

// An inflater publishes the table entry after its header CAS; a query from
// the owner in between must wait for the entry, not report the object
// unowned. The gap is made by hand: the entry removed, the header left
// naming a monitor, the owner's cache emptied. The entry comes back only once
// the query has looked it up many times, i.e. while it waits (a query that
// gives up instead returns first, and the entry comes back then).
TEST_F(StorageTest, QueriesWaitForAnInflatersEntry) {
  useStorage(JITLOCK_MONITORS_TABLE);
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  // Inflated, owned by this thread.
  ASSERT_EQ(jitlock_rt_wait_timed(self, a, 0), JITLOCK_ETIMEDOUT);
  uint64_t inflated = a->hdr();
  ASSERT_EQ(inflated & kLockMask, kMonitor);
  jitlock::Monitor *m = monitorOf(a);
  ASSERT_NE(m, nullptr);

  auto inTheGap = [&](const std::function<void()> &query) {
    jitlock::storage::unpublish(*m, a, 0);
    a->header.store(inflated, std::memory_order_release);
    jitlock::storage::dropCache(*self);
    std::atomic<bool> done{false};
    std::thread inflater([&] {
      uint64_t from = jitlock::storage::tableFigures().Lookups;
      while (!done.load() &&
             jitlock::storage::tableFigures().Lookups - from < 256)
        std::this_thread::yield();
      jitlock::storage::publish(a, m);
    });
    query();
    done = true;
    inflater.join();
  };
  inTheGap([&] { EXPECT_EQ(jitlock_rt_owner_of(a), self); });
  inTheGap([&] { EXPECT_EQ(jitlock_rt_holds_lock(self, a), 1); });
  inTheGap([&] {
    jitlock_lock_info info;
    ASSERT_EQ(jitlock_rt_inspect(a, &info), JITLOCK_OK);
    EXPECT_EQ(info.state, JITLOCK_STATE_INFLATED);
    EXPECT_EQ(info.owner, self);
    EXPECT_EQ(info.holds, 1u);
  });
  EXPECT_EQ(monitorOf(a), m);
  EXPECT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_owner_of(a), nullptr);
}

//===-- All three: the same results --------------------------------------===//

// One seeded sequence of enters, exits (some by a non-owner), waits,
// notifies, hashes, deflations and queries over a few objects, plus a
// deterministic hand-over to a second thread, run under each storage. The
// observable results must agree: return codes, lock states, owners, hold
// counts, queue lengths, whether hashes stay what they were.
std::string runSequence(uint64_t seed, jitlock_thread *self, Worker &w,
                        std::vector<Obj *> &objs) {
  std::ostringstream out;
  std::mt19937_64 rng(seed);
  std::vector<int> held(objs.size(), 0);
  std::vector<uint64_t> hashes(objs.size(), 0);
  auto record = [&](const char *op, size_t k, int rc) {
    jitlock_lock_info i = inspect(objs[k]);
    out << op << ' ' << k << " rc=" << rc << " state=" << i.state << " owner="
        << (i.owner == self ? "self"
            : i.owner       ? "other"
                            : "none")
        << " holds=" << i.holds << " anon=" << i.anonymous_owner
        << " depth=" << lockStack(self).size() << '\n';
  };
  for (int step = 0; step < 400; ++step) {
    size_t k = rng() % objs.size();
    void *o = objs[k];
    switch (rng() % 9) {
    case 0:
    case 1:
    case 2:
      ++held[k];
      record("enter", k, jitlock_rt_monitor_enter(self, o));
      break;
    case 3:
    case 4: {
      int rc = jitlock_rt_monitor_exit(self, o);
      if (rc == JITLOCK_OK)
        --held[k];
      record("exit", k, rc);
      break;
    }
    case 5:
      record("wait", k, jitlock_rt_wait_timed(self, o, 0));
      break;
    case 6:
      record(rng() % 2 ? "notify" : "notifyall", k,
             rng() % 2 ? jitlock_rt_notify(self, o)
                       : jitlock_rt_notify_all(self, o));
      break;
    case 7: {
      uint64_t h = jitlock_rt_identity_hash(self, o);
      if (!hashes[k])
        hashes[k] = h;
      out << "hash " << k << " stable=" << (h == hashes[k] && h != 0)
          << " peek=" << (jitlock_rt_peek_hash(o) == h) << '\n';
      break;
    }
    case 8:
      out << "deflate " << jitlock_rt_deflate_idle() << '\n';
      break;
    }
  }
  // The hand-over: the worker blocks on an object this thread holds.
  size_t k = 0;
  ++held[k];
  record("enter", k, jitlock_rt_monitor_enter(self, objs[k]));
  w.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(w.thread(), objs[k]), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), objs[k]), JITLOCK_OK);
  });
  EXPECT_TRUE(waitEntryQueued(objs[k]));
  out << "queued " << inspect(objs[k]).entry_queued << '\n';
  // Release everything, innermost (lock stack) first, then monitors.
  for (size_t j = 0; j < objs.size(); ++j)
    while (held[j] > 0 && jitlock_rt_monitor_exit(self, objs[j]) == JITLOCK_OK)
      --held[j];
  {
    NativeScope native(self);
    EXPECT_TRUE(w.join());
  }
  for (size_t j = 0; j < objs.size(); ++j)
    record("final", j, jitlock_rt_holds_lock(self, objs[j]));
  out << "deflate " << (jitlock_rt_deflate_idle() > 0) << '\n';
  for (size_t j = 0; j < objs.size(); ++j)
    out << "header " << j << " low=" << objs[j]->lowBits() << " hash="
        << (hashes[j] ? int(jitlock_rt_peek_hash(objs[j]) == hashes[j]) : -1)
        << '\n';
  return out.str();
}

TEST_F(StorageTest, StrategiesAgreeOnASeededSequence) {
  const uint64_t seed = std::random_device{}();
  std::printf("StorageTest.StrategiesAgreeOnASeededSequence seed=%" PRIu64 "\n",
              seed);
  std::string traces[3];
  for (uint32_t storage : {JITLOCK_MONITORS_POINTER, JITLOCK_MONITORS_INDEX,
                           JITLOCK_MONITORS_TABLE}) {
    useStorage(storage);
    std::vector<Obj *> objs;
    for (int i = 0; i < 5; ++i)
      objs.push_back(newObj());
    {
      Worker w;
      traces[storage] = runSequence(seed, self, w, objs);
    }
  }
  EXPECT_EQ(traces[JITLOCK_MONITORS_INDEX], traces[JITLOCK_MONITORS_POINTER]);
  EXPECT_EQ(traces[JITLOCK_MONITORS_TABLE], traces[JITLOCK_MONITORS_POINTER]);
}

} // namespace
