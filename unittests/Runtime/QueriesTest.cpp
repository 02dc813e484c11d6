//===- QueriesTest.cpp - owner_of, holds_lock, lock_stack, deadlocks, roots ==//
//
// Real deadlocks cannot be undone (a thread blocked in enter only wakes when
// the owner exits), so cycles are built in a forked child process that
// reports through its exit status; the parent only waits for it.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include <algorithm>
#include <csignal>
#include <map>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

using namespace jitlock_test;

namespace {

class QueriesTest : public RuntimeTest {};

TEST_F(QueriesTest, OwnerOfAndHoldsLock) {
  Obj *f = newObj(), *m = newObj(), *x = newObj(), *wf = newObj(),
      *wm = newObj(), *free_ = newObj();
  ASSERT_EQ(enter(f), JITLOCK_OK);
  ASSERT_EQ(enter(m), JITLOCK_OK);
  ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(enter(m), JITLOCK_OK); // M inflated, owned by self
  Worker w;
  w.call([&] {
    jitlock_thread *t = w.thread();
    ASSERT_EQ(jitlock_rt_monitor_enter(t, wf), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(t, wm), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(t, wf), JITLOCK_OK); // WF inflated
    EXPECT_TRUE(jitlock_rt_holds_lock(t, wf));
    EXPECT_TRUE(jitlock_rt_holds_lock(t, wm));
    EXPECT_FALSE(jitlock_rt_holds_lock(t, f));
  });

  EXPECT_EQ(jitlock_rt_owner_of(f), self);
  EXPECT_EQ(jitlock_rt_owner_of(m), self);
  EXPECT_EQ(jitlock_rt_owner_of(x), self);
  EXPECT_EQ(jitlock_rt_owner_of(wf), w.thread());
  EXPECT_EQ(jitlock_rt_owner_of(wm), w.thread());
  EXPECT_EQ(jitlock_rt_owner_of(free_), nullptr);

  EXPECT_TRUE(jitlock_rt_holds_lock(self, f));
  EXPECT_TRUE(jitlock_rt_holds_lock(self, m));
  EXPECT_FALSE(jitlock_rt_holds_lock(self, wf));
  EXPECT_FALSE(jitlock_rt_holds_lock(self, wm));
  EXPECT_FALSE(jitlock_rt_holds_lock(self, free_));
  // The worker is stopped: queries about it are exact.
  EXPECT_TRUE(jitlock_rt_holds_lock(w.thread(), wf));
  EXPECT_TRUE(jitlock_rt_holds_lock(w.thread(), wm));
  EXPECT_FALSE(jitlock_rt_holds_lock(w.thread(), f));
  EXPECT_FALSE(jitlock_rt_holds_lock(w.thread(), m));
  EXPECT_EQ(lockStack(w.thread()), std::vector<void *>{wm});
  EXPECT_EQ(lockStack(self), (std::vector<void *>{f, x}));

  // An unattached thread may ask too.
  jitlock_thread *seen[3] = {};
  std::thread t([&] {
    seen[0] = jitlock_rt_owner_of(f);
    seen[1] = jitlock_rt_owner_of(wm);
    seen[2] = jitlock_rt_owner_of(free_);
  });
  t.join();
  EXPECT_EQ(seen[0], self);
  EXPECT_EQ(seen[1], w.thread());
  EXPECT_EQ(seen[2], nullptr);

  w.call([&] {
    jitlock_thread *t = w.thread();
    EXPECT_EQ(jitlock_rt_monitor_exit(t, wf), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, wm), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, wf), JITLOCK_OK);
  });
  EXPECT_EQ(jitlock_rt_owner_of(wf), nullptr);
  EXPECT_EQ(jitlock_rt_owner_of(wm), nullptr);
  ASSERT_EQ(exit(m), JITLOCK_OK);
  ASSERT_EQ(exit(x), JITLOCK_OK);
  ASSERT_EQ(exit(m), JITLOCK_OK);
  ASSERT_EQ(exit(f), JITLOCK_OK);
  for (Obj *o : {f, m, x})
    EXPECT_EQ(jitlock_rt_owner_of(o), nullptr);
}

TEST_F(QueriesTest, LockStackCopiesOldestFirstAndReportsDepth) {
  std::vector<Obj *> o;
  for (int k = 0; k < 5; ++k)
    o.push_back(newObj());
  EXPECT_EQ(jitlock_rt_lock_stack(self, nullptr, 0), 0u);
  ASSERT_EQ(enter(o[0]), JITLOCK_OK);
  ASSERT_EQ(enter(o[1]), JITLOCK_OK);
  ASSERT_EQ(enter(o[1]), JITLOCK_OK);
  ASSERT_EQ(enter(o[2]), JITLOCK_OK);
  ASSERT_EQ(enter(o[3]), JITLOCK_OK);
  // cap smaller than the depth: the depth is returned, `cap` are copied.
  void *buf[8];
  std::fill(std::begin(buf), std::end(buf), (void *)0x1);
  EXPECT_EQ(jitlock_rt_lock_stack(self, buf, 2), 5u);
  EXPECT_EQ(buf[0], o[0]);
  EXPECT_EQ(buf[1], o[1]);
  EXPECT_EQ(buf[2], (void *)0x1) << "wrote past cap";
  EXPECT_EQ(jitlock_rt_lock_stack(self, nullptr, 0), 5u);
  EXPECT_EQ(jitlock_rt_lock_stack(self, buf, 8), 5u);
  EXPECT_EQ(std::vector<void *>(buf, buf + 5),
            (std::vector<void *>{o[0], o[1], o[1], o[2], o[3]}));
  for (Obj *x : {o[3], o[2], o[1], o[1], o[0]})
    ASSERT_EQ(exit(x), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_lock_stack(self, buf, 8), 0u);
}

TEST_F(QueriesTest, LockStackReadThroughLayoutAgrees) {
  jitlock_rt_layout l;
  jitlock_rt_get_layout(&l);
  const char *t = reinterpret_cast<const char *>(self);
  auto top = [&] {
    return __atomic_load_n(
        reinterpret_cast<const uint32_t *>(t + l.lock_stack_top_offset),
        __ATOMIC_RELAXED);
  };
  auto slot = [&](size_t k) {
    return *reinterpret_cast<void *const *>(t + l.lock_stack_base_offset +
                                            8 * k);
  };
  EXPECT_EQ(top(), l.lock_stack_base_offset);
  EXPECT_EQ(
      *reinterpret_cast<const uint64_t *>(t + l.lock_stack_sentinel_offset),
      l.lock_stack_sentinel);
  std::vector<Obj *> o;
  for (size_t k = 0; k < kCapacity; ++k)
    o.push_back(newObj());
  for (size_t k = 0; k < kCapacity; ++k) {
    ASSERT_EQ(enter(o[k]), JITLOCK_OK);
    ASSERT_EQ(top(), l.lock_stack_base_offset + 8 * (k + 1));
    std::vector<void *> ls = lockStack(self);
    ASSERT_EQ(ls.size(), k + 1);
    for (size_t j = 0; j <= k; ++j)
      EXPECT_EQ(slot(j), ls[j]) << j;
  }
  EXPECT_EQ(top(), l.lock_stack_end_offset) << "a full stack has top == end";
  // The sentinel below the first slot is never overwritten.
  EXPECT_EQ(
      *reinterpret_cast<const uint64_t *>(t + l.lock_stack_sentinel_offset),
      l.lock_stack_sentinel);
  for (size_t k = kCapacity; k-- > 0;)
    ASSERT_EQ(exit(o[k]), JITLOCK_OK);
  EXPECT_EQ(top(), l.lock_stack_base_offset);
}

//===-- Deadlock detection -----------------------------------------------===//

TEST_F(QueriesTest, BlockedChainIsNotADeadlock) {
  // T1 holds A and blocks on B; T2 holds B and blocks on C; main holds C and
  // is running: a chain, not a cycle.
  Obj *a = newObj(), *b = newObj(), *c = newObj();
  ASSERT_EQ(enter(c), JITLOCK_OK);
  Worker t1, t2;
  t2.call(
      [&] { ASSERT_EQ(jitlock_rt_monitor_enter(t2.thread(), b), JITLOCK_OK); });
  t1.call(
      [&] { ASSERT_EQ(jitlock_rt_monitor_enter(t1.thread(), a), JITLOCK_OK); });
  t2.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(t2.thread(), c), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t2.thread(), c), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t2.thread(), b), JITLOCK_OK);
  });
  ASSERT_TRUE(waitEntryQueued(c)) << describe(c);
  t1.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(t1.thread(), b), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t1.thread(), b), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t1.thread(), a), JITLOCK_OK);
  });
  ASSERT_TRUE(waitEntryQueued(b)) << describe(b);

  CycleLog log;
  EXPECT_EQ(jitlock_rt_find_deadlocks(&CycleLog::fn, &log), 0u);
  EXPECT_TRUE(log.cycles.empty());
  EXPECT_EQ(jitlock_rt_find_deadlocks(nullptr, nullptr), 0u);
  EXPECT_EQ(jitlock_rt_owner_of(b), t2.thread());
  EXPECT_EQ(jitlock_rt_owner_of(c), self);

  ASSERT_EQ(exit(c), JITLOCK_OK); // unblocks the chain
  ASSERT_TRUE(t2.join());
  ASSERT_TRUE(t1.join());
  for (Obj *o : {a, b, c})
    EXPECT_EQ(jitlock_rt_owner_of(o), nullptr);
  EXPECT_EQ(jitlock_rt_find_deadlocks(&CycleLog::fn, &log), 0u);
}

// Exit codes of the forked child.
enum : int {
  kChildOk = 0,
  kChildNoBlock = 10,
  kChildWrongCount = 11,
  kChildWrongCycle = 12,
  kChildAttach = 13,
  kChildSetup = 14,
  kChildSecondCall = 15,
};

// Builds a deadlock of `n` threads: thread k fast-locks obj[k], then enters
// obj[(k+1) % n]. Optionally one more thread blocks on obj[0] (a tail that is
// not part of the cycle). Checks find_deadlocks reports exactly one cycle
// with the right shape.
int deadlockChild(size_t n, bool tail) {
  if (!jitlock_rt_attach())
    return kChildAttach;
  // Everything the child's threads touch is static or leaked on purpose:
  // the child _exit()s with its threads still deadlocked.
  static Obj objs[8];
  static std::atomic<size_t> locked{0};
  static std::atomic<bool> go{false};
  static std::vector<jitlock_thread *> threads(8, nullptr);
  auto &ts = *new std::vector<std::thread>();
  for (size_t k = 0; k < n; ++k) {
    ts.emplace_back([n, k] {
      jitlock_thread *t = jitlock_rt_attach();
      threads[k] = t;
      if (jitlock_rt_monitor_enter(t, &objs[k]) != JITLOCK_OK)
        _exit(kChildSetup);
      locked.fetch_add(1);
      while (!go.load())
        std::this_thread::yield();
      jitlock_rt_monitor_enter(t, &objs[(k + 1) % n]); // never returns
    });
  }
  if (!waitUntil([&] { return locked.load() == n; }))
    return kChildSetup;
  go = true;
  for (size_t k = 0; k < n; ++k)
    if (!waitEntryQueued(&objs[k]))
      return kChildNoBlock;
  if (tail) {
    ts.emplace_back([] {
      jitlock_thread *t = jitlock_rt_attach();
      jitlock_rt_monitor_enter(t, &objs[0]); // never returns
    });
    if (!waitEntryQueued(&objs[0], 2))
      return kChildNoBlock;
  }
  // A queued thread counts in entry_queued before it publishes that it
  // sleeps (markBlocked): wait until the finder can see the whole cycle.
  waitUntil([] { return jitlock_rt_find_deadlocks(nullptr, nullptr) != 0; });
  // No reads of `threads` before every worker has published itself.
  CycleLog log;
  size_t found = jitlock_rt_find_deadlocks(&CycleLog::fn, &log);
  if (found != 1 || log.cycles.size() != 1) {
    fprintf(stderr, "child: find_deadlocks returned %zu, %zu reported\n", found,
            log.cycles.size());
    return kChildWrongCount;
  }
  const Cycle &c = log.cycles[0];
  if (c.threads.size() != n || c.objs.size() != n) {
    fprintf(stderr, "child: cycle of %zu, expected %zu\n", c.threads.size(), n);
    return kChildWrongCycle;
  }
  // thread[i] waits to enter obj[i], which thread[i+1 mod n] owns: with our
  // construction thread k waits for obj k+1, owned by thread k+1.
  std::map<jitlock_thread *, size_t> index;
  for (size_t k = 0; k < n; ++k)
    index[threads[k]] = k;
  for (size_t i = 0; i < n; ++i) {
    auto it = index.find(c.threads[i]);
    if (it == index.end()) {
      fprintf(stderr, "child: unknown thread in cycle\n");
      return kChildWrongCycle;
    }
    size_t k = it->second;
    if (c.objs[i] != &objs[(k + 1) % n] ||
        c.threads[(i + 1) % n] != threads[(k + 1) % n]) {
      fprintf(stderr, "child: cycle entry %zu has the wrong shape\n", i);
      return kChildWrongCycle;
    }
  }
  // A second call finds it again; a null callback only counts.
  if (jitlock_rt_find_deadlocks(nullptr, nullptr) != 1)
    return kChildSecondCall;
  return kChildOk;
}

using DeadlockTest = QuietProcessTest;

TEST_F(DeadlockTest, TwoThreadCycleIsReported) {
  int rc = runInChild([] { return deadlockChild(2, false); }, 60);
  EXPECT_EQ(rc, kChildOk) << "child exit code (1000+n = signal n)";
}

TEST_F(DeadlockTest, ThreeThreadCycleWithTailIsReportedOnce) {
  int rc = runInChild([] { return deadlockChild(3, true); }, 60);
  EXPECT_EQ(rc, kChildOk) << "child exit code (1000+n = signal n)";
}

TEST_F(DeadlockTest, CycleThroughInflatedMonitors) {
  // Both objects are inflated and owned (not anonymously) before the cycle.
  int rc = runInChild(
      [] {
        if (!jitlock_rt_attach())
          return (int)kChildAttach;
        static Obj a, b;
        static std::atomic<int> ready{0};
        static std::atomic<bool> go{false};
        static jitlock_thread *ta = nullptr, *tb = nullptr;
        auto body = [](Obj *mine, Obj *other, jitlock_thread **out) {
          jitlock_thread *t = jitlock_rt_attach();
          *out = t;
          jitlock_rt_monitor_enter(t, mine);
          if (jitlock_rt_wait_timed(t, mine, 0) != JITLOCK_ETIMEDOUT) // inflate
            _exit(kChildSetup);
          ready.fetch_add(1);
          while (!go.load())
            std::this_thread::yield();
          jitlock_rt_monitor_enter(t, other); // never returns
        };
        // Leaked on purpose: they stay deadlocked until the child _exit()s.
        new std::thread(body, &a, &b, &ta);
        new std::thread(body, &b, &a, &tb);
        if (!waitUntil([&] { return ready.load() == 2; }))
          return (int)kChildSetup;
        if (inspect(&a).state != JITLOCK_STATE_INFLATED ||
            inspect(&b).state != JITLOCK_STATE_INFLATED)
          return (int)kChildSetup;
        go = true;
        if (!waitEntryQueued(&a) || !waitEntryQueued(&b))
          return (int)kChildNoBlock;
        CycleLog log;
        if (jitlock_rt_find_deadlocks(&CycleLog::fn, &log) != 1 ||
            log.cycles.size() != 1)
          return (int)kChildWrongCount;
        std::set<jitlock_thread *> th(log.cycles[0].threads.begin(),
                                      log.cycles[0].threads.end());
        std::set<void *> ob(log.cycles[0].objs.begin(),
                            log.cycles[0].objs.end());
        if (th != std::set<jitlock_thread *>{ta, tb} ||
            ob != std::set<void *>{&a, &b})
          return (int)kChildWrongCycle;
        return (int)kChildOk;
      },
      60);
  EXPECT_EQ(rc, kChildOk) << "child exit code (1000+n = signal n)";
}

//===-- GC roots ---------------------------------------------------------===//

struct Root {
  void **slot;
  uint32_t kind;
  jitlock_thread *thread;
};
struct RootLog {
  std::vector<Root> roots;
  static void fn(void *ctx, void **slot, uint32_t kind, jitlock_thread *t) {
    static_cast<RootLog *>(ctx)->roots.push_back({slot, kind, t});
  }
  size_t count(uint32_t kind, const void *obj, jitlock_thread *t = nullptr) {
    size_t n = 0;
    for (const Root &r : roots)
      n += r.kind == kind && *r.slot == obj && (!t || r.thread == t);
    return n;
  }
  size_t count(uint32_t kind) {
    size_t n = 0;
    for (const Root &r : roots)
      n += r.kind == kind;
    return n;
  }
};

TEST_F(QueriesTest, EnumerateRoots) {
  Obj *a = newObj(), *b = newObj(), *c = newObj(), *d = newObj();
  // main: C inflated (monitor root), lock stack [A A B]
  ASSERT_EQ(enter(c), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(c), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(lockStack(self), (std::vector<void *>{a, a, b}));
  ASSERT_EQ(inspect(c).state, JITLOCK_STATE_INFLATED);
  // worker (stopped on our condition variable): lock stack [D]
  Worker w;
  w.call(
      [&] { ASSERT_EQ(jitlock_rt_monitor_enter(w.thread(), d), JITLOCK_OK); });

  RootLog log;
  jitlock_rt_enumerate_roots(&RootLog::fn, &log);
  EXPECT_EQ(log.count(JITLOCK_ROOT_LOCK_STACK), 4u);
  EXPECT_EQ(log.count(JITLOCK_ROOT_LOCK_STACK, a, self), 2u);
  EXPECT_EQ(log.count(JITLOCK_ROOT_LOCK_STACK, b, self), 1u);
  EXPECT_EQ(log.count(JITLOCK_ROOT_LOCK_STACK, d, w.thread()), 1u);
  EXPECT_EQ(log.count(JITLOCK_ROOT_MONITOR, c), 1u);
  EXPECT_EQ(log.count(JITLOCK_ROOT_MONITOR, a), 0u);
  EXPECT_LE(log.count(JITLOCK_ROOT_MONITOR), stats().monitors_alive);
  // Lock-stack roots are the thread's own slots.
  jitlock_rt_layout l;
  jitlock_rt_get_layout(&l);
  for (const Root &r : log.roots) {
    if (r.kind != JITLOCK_ROOT_LOCK_STACK)
      continue;
    char *base = (char *)r.thread + l.lock_stack_base_offset;
    char *end = (char *)r.thread + l.lock_stack_end_offset;
    EXPECT_TRUE((char *)r.slot >= base && (char *)r.slot < end)
        << "lock-stack root outside the thread's slots";
  }

  w.call(
      [&] { EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), d), JITLOCK_OK); });
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(c), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(c), JITLOCK_OK);

  RootLog after;
  jitlock_rt_enumerate_roots(&RootLog::fn, &after);
  EXPECT_EQ(after.count(JITLOCK_ROOT_LOCK_STACK), 0u);
  EXPECT_LE(after.count(JITLOCK_ROOT_MONITOR, c), 1u);
}

TEST_F(QueriesTest, EnumerateRootsLetsACollectorMoveObjects) {
  // A moving collector copies the objects, stores the new addresses into the
  // slots and (for monitor roots) moves the header; locking continues on the
  // new copies.
  Obj *a = newObj(), *c = newObj(), *x = newObj();
  ASSERT_EQ(enter(c), JITLOCK_OK);
  ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(enter(c), JITLOCK_OK); // C inflated, holds 2
  ASSERT_EQ(exit(x), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK); // stack [A]
  Obj *a2 = newObj(0), *c2 = newObj(0);
  struct Mover {
    std::map<void *, Obj *> to;
    static void fn(void *ctx, void **slot, uint32_t kind, jitlock_thread *) {
      auto *m = static_cast<Mover *>(ctx);
      auto it = m->to.find(*slot);
      if (it == m->to.end())
        return;
      Obj *from = static_cast<Obj *>(*slot);
      it->second->header.store(from->hdr());
      it->second->payload = from->payload;
      *slot = it->second;
    }
  } mover;
  mover.to[a] = a2;
  mover.to[c] = c2;
  jitlock_rt_enumerate_roots(&Mover::fn, &mover);
  // The old copies are dead now: make them look unlocked garbage.
  a->header.store(kUnlocked);
  c->header.store(kUnlocked);

  EXPECT_EQ(lockStack(self), std::vector<void *>{a2});
  EXPECT_EQ(inspect(c2).state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(inspect(c2).owner, self);
  EXPECT_EQ(inspect(c2).holds, 2u);
  EXPECT_TRUE(jitlock_rt_holds_lock(self, a2));
  EXPECT_TRUE(jitlock_rt_holds_lock(self, c2));
  ASSERT_EQ(exit(a2), JITLOCK_OK);
  EXPECT_EQ(a2->hdr(), withTableHash(a2, kUnlockedHeader));
  ASSERT_EQ(exit(c2), JITLOCK_OK);
  ASSERT_EQ(exit(c2), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_owner_of(c2), nullptr);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(c2->hdr(), withTableHash(c2, kUnlockedHeader))
      << "shutdown restored the moved copy";
  EXPECT_EQ(c->hdr(), withTableHash(c, kUnlocked))
      << "shutdown wrote to the dead copy";
}

} // namespace
