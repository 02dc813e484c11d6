//===- RuntimeTestUtil.h - Shared helpers for the runtime unit tests -----===//
//
// Test objects, a per-test fixture that leaves the runtime clean (main thread
// detached, jitlock_rt_shutdown() called, no monitor alive), an actor-style
// worker thread whose idle state is "stopped" (blocked on a condition variable
// of ours), a misuse-handler recorder, deadline-based polling helpers, and
// the scenarios every front door's inline code must pass on a thread that is
// not attached (expectDetachedEnterRefused, runDetachedPairUnderContention).
//
// Nothing here relies on sleeps for correctness: whenever a test needs "thread
// T is now blocked", it polls jitlock_rt_inspect with a generous deadline.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_RUNTIME_RUNTIMETESTUTIL_H
#define JITLOCK_UNITTESTS_RUNTIME_RUNTIMETESTUTIL_H

#include "jitlock/jitlock_rt.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace jitlock_test {

// Bits [2,8) and [39,64) belong to the embedder and must survive every
// transition. 0x14 sets bits 2 and 4; 0x5A5 << 48 sets scattered high bits.
constexpr uint64_t kEmbedderBits = (0x5A5ull << 48) | 0x14ull;
constexpr uint64_t kLockMask = 0x3;
constexpr uint64_t kUnlocked = 0x1;
constexpr uint64_t kFastLocked = 0x0;
constexpr uint64_t kMonitor = 0x2;
constexpr uint64_t kUnlockedHeader = kEmbedderBits | kUnlocked;
constexpr unsigned kHashShift = 8;
constexpr unsigned kHashBits = 31;
constexpr uint64_t kHashMask = ((1ull << kHashBits) - 1) << kHashShift;
constexpr size_t kCapacity = 8;

// A test object: the 64-bit header at byte offset 0 (the default layout).
struct alignas(16) Obj {
  std::atomic<uint64_t> header;
  uint64_t payload = 0;
  explicit Obj(uint64_t h = kUnlockedHeader) : header(h) {}
  uint64_t hdr() const { return header.load(std::memory_order_acquire); }
  uint64_t lowBits() const { return hdr() & kLockMask; }
};

inline jitlock_lock_info inspect(const void *obj) {
  jitlock_lock_info info{};
  int rc = jitlock_rt_inspect(obj, &info);
  EXPECT_EQ(rc, JITLOCK_OK)
      << "jitlock_rt_inspect failed: " << jitlock_rt_status_name(rc);
  return info;
}

/// Runs `body` in a forked child bounded by alarm(`seconds`). The child never
/// returns into gtest: it _exit()s with body's result, skipping destructors
/// and the leak check (on a broken runtime its threads may stay parked).
/// Returns the exit status, 1000 + n for signal n, or < 0 if fork failed.
inline int runInChild(const std::function<int()> &body, unsigned seconds) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    alarm(seconds);
    int rc = body();
    fflush(stdout);
    fflush(stderr);
    _exit(rc);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid)
    return -2;
  if (WIFSIGNALED(status))
    return 1000 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

/// Tests that fork start from a quiet process: nothing attached, the runtime
/// shut down.
class QuietProcessTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(jitlock_rt_current(), nullptr);
    ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  }
  void TearDown() override { EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK); }
};

/// The cycles jitlock_rt_find_deadlocks reports (its callback is fn).
struct Cycle {
  std::vector<jitlock_thread *> threads;
  std::vector<void *> objs;
};
struct CycleLog {
  std::vector<Cycle> cycles;
  static void fn(void *ctx, size_t n, jitlock_thread *const *threads,
                 void *const *objs) {
    Cycle c;
    c.threads.assign(threads, threads + n);
    c.objs.assign(objs, objs + n);
    static_cast<CycleLog *>(ctx)->cycles.push_back(c);
  }
};

inline std::string stateName(uint32_t s) {
  switch (s) {
  case JITLOCK_STATE_UNLOCKED:
    return "UNLOCKED";
  case JITLOCK_STATE_FAST:
    return "FAST";
  case JITLOCK_STATE_INFLATED:
    return "INFLATED";
  case JITLOCK_STATE_EMBEDDER:
    return "EMBEDDER";
  }
  return "state#" + std::to_string(s);
}

inline std::string describe(const void *obj) {
  jitlock_lock_info i = inspect(obj);
  char buf[256];
  snprintf(buf, sizeof buf,
           "{state=%s anon=%u owner=%p holds=%llu queued=%llu waiting=%llu}",
           stateName(i.state).c_str(), i.anonymous_owner, (void *)i.owner,
           (unsigned long long)i.holds, (unsigned long long)i.entry_queued,
           (unsigned long long)i.waiting);
  return buf;
}

inline std::vector<void *> lockStack(const jitlock_thread *t) {
  void *buf[64] = {};
  size_t n = jitlock_rt_lock_stack(t, buf, 64);
  EXPECT_LE(n, 64u);
  return std::vector<void *>(buf, buf + (n > 64 ? 64 : n));
}

inline jitlock_rt_stats stats() {
  jitlock_rt_stats s{};
  jitlock_rt_get_stats(&s);
  return s;
}

inline const char *st(int rc) { return jitlock_rt_status_name(rc); }

inline jitlock_deflation_stats deflationStats() {
  jitlock_deflation_stats s{};
  jitlock_rt_get_deflation_stats(&s);
  return s;
}

// A deflation policy with this period and idle threshold.
inline jitlock_deflation_policy deflationPolicy(uint32_t periodMs,
                                                uint64_t threshold) {
  jitlock_deflation_policy p;
  jitlock_rt_default_deflation_policy(&p);
  p.period_ms = periodMs;
  p.idle_threshold = threshold;
  return p;
}

// Whether this build runs under ASan or TSan: stress tests scale down.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// The environment variable `name` as a number, or `fallback`.
inline uint64_t envU64(const char *name, uint64_t fallback) {
  const char *v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 0) : fallback;
}

// A stress test's seed: `envName` when set (to replay a run), else the
// clock; printed, with the variable that replays it.
inline uint64_t seedFromEnv(const char *test, const char *envName) {
  uint64_t seed = envU64(
      envName,
      uint64_t(std::chrono::system_clock::now().time_since_epoch().count()));
  std::printf("%s seed=%llu (%s)\n", test, (unsigned long long)seed, envName);
  std::fflush(stdout);
  return seed;
}

// What compiled code does at a poll: test the armed bit, then call.
inline void pollAsCompiledCode(jitlock_thread *t, const jitlock_rt_layout &l) {
  auto *word = reinterpret_cast<std::atomic<uint64_t> *>(
      reinterpret_cast<char *>(t) + l.poll_word_offset);
  if (word->load(std::memory_order_relaxed) & l.poll_armed_bit)
    jitlock_rt_safepoint_poll(t);
}

// Deadline generous enough for TSan/ASan on a loaded two-core box.
constexpr std::chrono::seconds kDeadline{30};

// Polls `pred` until it holds or `limit` passes. The short sleeps only pace
// the polling; correctness never depends on them.
template <typename Pred>
bool waitFor(std::chrono::milliseconds limit, Pred pred) {
  auto end = std::chrono::steady_clock::now() + limit;
  unsigned spins = 0;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end)
      return false;
    if (++spins < 100)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// waitFor with the default deadline.
template <typename Pred> bool waitUntil(Pred pred) {
  return waitFor(kDeadline, pred);
}

inline bool waitEntryQueued(const void *obj, uint64_t atLeast = 1) {
  return waitUntil([&] { return inspect(obj).entry_queued >= atLeast; });
}
inline bool waitWaiting(const void *obj, uint64_t atLeast = 1) {
  return waitUntil([&] { return inspect(obj).waiting >= atLeast; });
}

//===-- Misuse handler recorder ------------------------------------------===//

struct MisuseRecord {
  jitlock_status status;
  jitlock_thread *thread;
  void *obj;
  std::string what;
};

struct MisuseLog {
  std::mutex mu;
  std::vector<MisuseRecord> records;
  size_t count() {
    std::lock_guard<std::mutex> g(mu);
    return records.size();
  }
  MisuseRecord last() {
    std::lock_guard<std::mutex> g(mu);
    return records.empty() ? MisuseRecord{JITLOCK_OK, nullptr, nullptr, ""}
                           : records.back();
  }
  void clear() {
    std::lock_guard<std::mutex> g(mu);
    records.clear();
  }
  static void handler(void *ctx, jitlock_status status, jitlock_thread *thread,
                      void *obj, const char *what) {
    auto *log = static_cast<MisuseLog *>(ctx);
    std::lock_guard<std::mutex> g(log->mu);
    log->records.push_back({status, thread, obj, what ? what : ""});
  }
};

//===-- Worker: an attached thread driven by the test ---------------------===//

// Puts an attached thread in `native` for a scope in which it waits outside
// the runtime (a gate, a join), so that safepoints do not wait for it.
class NativeScope {
public:
  explicit NativeScope(jitlock_thread *t) : t_(t) {
    EXPECT_EQ(jitlock_rt_enter_native(t_), JITLOCK_OK);
  }
  ~NativeScope() { EXPECT_EQ(jitlock_rt_leave_native(t_), JITLOCK_OK); }
  NativeScope(const NativeScope &) = delete;
  NativeScope &operator=(const NativeScope &) = delete;

private:
  jitlock_thread *t_;
};

// Runs closures on its own attached OS thread. Between closures it is blocked
// on a condition variable of ours in the `native` state, so that safepoints
// (jitlock_rt_deflate_idle, jitlock_rt_enumerate_roots) do not wait for it.
// call() runs a closure and waits for it; post() starts one and returns at once
// (e.g. an enter that will block); join() waits for the posted closure to
// finish. Worker(false) never attaches: thread() is then its detached structure
// (jitlock_rt_code_thread).
class Worker {
public:
  explicit Worker(bool attach = true)
      : attach_(attach), thr_([this] { loop(); }) {
    std::unique_lock<std::mutex> g(mu_);
    cv_.wait(g, [&] { return started_; });
  }
  ~Worker() { stop(); }

  jitlock_thread *thread() const { return self_; }
  uint64_t id() const { return jitlock_rt_thread_id(self_); }

  void post(std::function<void()> f) {
    std::unique_lock<std::mutex> g(mu_);
    cv_.wait(g, [&] { return done_; });
    task_ = std::move(f);
    done_ = false;
    cv_.notify_all();
  }
  // Waits until the last posted closure finished. Returns false on deadline.
  bool join() {
    std::unique_lock<std::mutex> g(mu_);
    return cv_.wait_for(g, kDeadline, [&] { return done_; });
  }
  bool finished() {
    std::lock_guard<std::mutex> g(mu_);
    return done_;
  }
  void call(std::function<void()> f) {
    post(std::move(f));
    ASSERT_TRUE(join()) << "worker closure did not finish before the deadline";
  }
  // Detaches (expecting success) and ends the thread.
  void stop() {
    if (!thr_.joinable())
      return;
    {
      std::unique_lock<std::mutex> g(mu_);
      if (!cv_.wait_for(g, kDeadline, [&] { return done_; })) {
        ADD_FAILURE() << "worker still busy at stop(): it is blocked in the "
                         "runtime; abandoning it";
        thr_.detach();
        return;
      }
      quit_ = true;
      cv_.notify_all();
    }
    thr_.join();
  }

private:
  void loop() {
    self_ = attach_ ? jitlock_rt_attach() : jitlock_rt_code_thread();
    EXPECT_NE(self_, nullptr);
    {
      std::lock_guard<std::mutex> g(mu_);
      started_ = true;
      cv_.notify_all();
    }
    for (;;) {
      std::function<void()> f;
      {
        // A thread that never attached has no state to change.
        if (attach_) {
          EXPECT_EQ(jitlock_rt_enter_native(self_), JITLOCK_OK);
        }
        std::unique_lock<std::mutex> g(mu_);
        cv_.wait(g, [&] { return task_ || quit_; });
        g.unlock();
        if (attach_) {
          EXPECT_EQ(jitlock_rt_leave_native(self_), JITLOCK_OK);
        }
        g.lock();
        if (!task_ && quit_)
          break;
        f = std::move(task_);
        task_ = nullptr;
      }
      f();
      {
        std::lock_guard<std::mutex> g(mu_);
        done_ = true;
        cv_.notify_all();
      }
    }
    if (!attach_)
      return;
    // Release anything a failed test left behind so the process stays sane.
    void *buf[64];
    size_t n;
    while ((n = jitlock_rt_lock_stack(self_, buf, 64)) > 0 && n <= 64) {
      ADD_FAILURE() << "worker exits holding " << n << " lock-stack entries";
      if (jitlock_rt_monitor_exit(self_, buf[n - 1]) != JITLOCK_OK)
        break;
    }
    int rc = jitlock_rt_detach();
    EXPECT_EQ(rc, JITLOCK_OK) << "worker detach: " << st(rc);
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> task_;
  bool started_ = false;
  bool done_ = true;
  bool quit_ = false;
  jitlock_thread *self_ = nullptr;
  bool attach_;
  std::thread thr_;
};

// Has `w` enter and exit `obj` through the runtime (the enter's result in
// `*enterRc`, else expected to be OK), and waits until it has queued on
// `obj`, which the caller holds: a fast-locked `obj` is then inflated with
// an anonymous owner. False if it never queued.
inline bool contendAndQueue(Worker &w, void *obj,
                            std::atomic<int> *enterRc = nullptr) {
  w.post([&w, obj, enterRc] {
    int rc = jitlock_rt_monitor_enter(w.thread(), obj);
    if (enterRc)
      *enterRc = rc;
    else
      EXPECT_EQ(rc, JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), obj), JITLOCK_OK);
  });
  return waitEntryQueued(obj);
}

//===-- Inline code on a thread that is not attached ---------------------===//

// One front door's inline monitor enter or exit, run on the calling thread,
// whose structure is `t` (attached or not).
using InlineMonitorOp = std::function<void(jitlock_thread *t, void *obj)>;

// The front doors' regression test for a thread that is not attached. Its
// lock stack reads as full, so the inline enter must go to the runtime, which
// refuses it, even when `obj`'s header names a free monitor that the inline
// monitor path could take. The caller installs `log`'s handler. `obj` is
// inflated here; an attached thread then contends through the same inline
// code, and must get the monitor. If it does not (the detached thread took
// the monitor, and its exit, refused, left it taken), the test fails and
// the detached thread attaches again to release it, so nothing hangs.
inline void expectDetachedEnterRefused(void *obj, MisuseLog &log,
                                       const InlineMonitorOp &enter,
                                       const InlineMonitorOp &exit) {
  Worker contender;
  jitlock_thread *c = contender.thread();
  // A timed wait inflates; the monitor is left free.
  contender.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(c, obj), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_wait_timed(c, obj, 0), JITLOCK_ETIMEDOUT);
    EXPECT_EQ(jitlock_rt_monitor_exit(c, obj), JITLOCK_OK);
  });
  jitlock_lock_info i = inspect(obj);
  ASSERT_EQ(i.state, JITLOCK_STATE_INFLATED) << describe(obj);
  ASSERT_EQ(i.owner, nullptr) << describe(obj);

  Worker detached(/*attach=*/false);
  jitlock_thread *t = detached.thread();
  size_t n0 = log.count();
  detached.call([&] { enter(t, obj); });
  i = inspect(obj);
  EXPECT_EQ(i.owner, nullptr)
      << "the detached thread took the monitor inline: " << describe(obj);
  EXPECT_EQ(i.holds, 0u) << describe(obj);
  EXPECT_EQ(log.count(), n0 + 1) << "the enter never reached the runtime";
  MisuseRecord r = log.last();
  EXPECT_EQ(r.status, JITLOCK_ENOT_ATTACHED) << st(r.status);
  EXPECT_EQ(r.thread, t);
  EXPECT_EQ(r.obj, obj);

  contender.post([&] {
    enter(c, obj);
    exit(c, obj);
  });
  // Through, or queued behind the detached thread.
  EXPECT_TRUE(waitUntil(
      [&] { return contender.finished() || inspect(obj).entry_queued; }));
  // Refused as well: the detached thread holds nothing.
  detached.call([&] { exit(t, obj); });
  // Through, or stuck: queued on a monitor the detached thread still owns.
  waitUntil([&] { return contender.finished() || inspect(obj).owner == t; });
  bool through = contender.finished();
  EXPECT_TRUE(through) << "the contender never got the monitor: "
                       << describe(obj);
  if (!through) {
    // Attached again, the same structure owns the monitor and can hand it
    // over.
    detached.call([&] {
      ASSERT_EQ(jitlock_rt_attach(), t);
      EXPECT_EQ(jitlock_rt_monitor_exit(t, obj), JITLOCK_OK);
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
    EXPECT_TRUE(contender.join()) << describe(obj);
  }
  EXPECT_EQ(log.count(), n0 + 2) << "the exit never reached the runtime";
  r = log.last();
  EXPECT_EQ(r.status, JITLOCK_ENOT_ATTACHED) << st(r.status);
  EXPECT_EQ(r.thread, t);
  i = inspect(obj);
  EXPECT_EQ(i.owner, nullptr) << describe(obj);
  EXPECT_EQ(i.entry_queued, 0u) << describe(obj);
}

// The reproducer for misuse from compiled code by a thread that detached:
// a thread attaches, inflates `obj` (a timed wait leaves its monitor free),
// detaches, and then runs one front door's inline `enter` and `exit` on it
// while `contenders` attached threads run the same pair on it `iterations`
// times each, counting inside. By default (JITLOCK_MISUSE_ABORT) its enter
// aborts the process: callers run this inside EXPECT_DEATH. With
// JITLOCK_MISUSE_REPORT both are refused and reported to `log` (whose handler
// the caller installs), the contenders all finish, so nothing deadlocks, and
// their count is exact. If they do not finish (the detached thread took the
// monitor), the test fails and the thread attaches again to release it.
inline void runDetachedPairUnderContention(void *obj, MisuseLog &log,
                                           const InlineMonitorOp &enter,
                                           const InlineMonitorOp &exit,
                                           unsigned contenders,
                                           unsigned iterations) {
  std::atomic<bool> go{false};
  std::atomic<unsigned> started{0}, finished{0};
  // Guarded by obj: a relaxed load and store, which would lose increments
  // without mutual exclusion, and which a race detector that cannot see
  // inside emitted or JIT code does not flag.
  std::atomic<uint64_t> counter{0};
  size_t n0 = log.count();
  jitlock_thread *leaver = nullptr;
  std::thread detached([&] {
    jitlock_thread *t = jitlock_rt_attach();
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(jitlock_rt_monitor_enter(t, obj), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_wait_timed(t, obj, 0), JITLOCK_ETIMEDOUT);
    ASSERT_EQ(jitlock_rt_monitor_exit(t, obj), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    leaver = jitlock_rt_code_thread();
    EXPECT_EQ(leaver, t) << "a thread keeps its structure across detach";
    go = true;
    // While they run: at least one is past its first critical section.
    waitUntil([&] { return started.load() > 0; });
    enter(leaver, obj);
    bool through = waitUntil([&] { return finished.load() == contenders; });
    EXPECT_TRUE(through) << "the contenders never got the monitor: "
                         << describe(obj);
    if (!through) {
      // Attached again, the same structure owns the monitor and can hand
      // it over.
      ASSERT_EQ(jitlock_rt_attach(), leaver);
      EXPECT_EQ(jitlock_rt_monitor_exit(leaver, obj), JITLOCK_OK);
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
      waitUntil([&] { return finished.load() == contenders; });
    }
    exit(leaver, obj);
  });
  std::vector<std::thread> others;
  for (unsigned i = 0; i < contenders; ++i)
    others.emplace_back([&] {
      jitlock_thread *t = jitlock_rt_attach();
      while (!go)
        std::this_thread::yield();
      for (unsigned k = 0; k < iterations; ++k) {
        enter(t, obj);
        counter.store(counter.load(std::memory_order_relaxed) + 1,
                      std::memory_order_relaxed);
        exit(t, obj);
        if (k == 0)
          ++started;
      }
      ++finished;
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
  for (std::thread &o : others)
    o.join();
  detached.join();
  EXPECT_EQ(counter.load(), uint64_t(contenders) * iterations);
  jitlock_lock_info i = inspect(obj);
  EXPECT_EQ(i.owner, nullptr) << describe(obj);
  EXPECT_EQ(i.entry_queued, 0u) << describe(obj);
  std::lock_guard<std::mutex> g(log.mu);
  ASSERT_EQ(log.records.size(), n0 + 2)
      << "exactly the detached enter and exit must be reported";
  for (size_t k = n0; k < log.records.size(); ++k) {
    EXPECT_EQ(log.records[k].status, JITLOCK_ENOT_ATTACHED)
        << st(log.records[k].status);
    EXPECT_EQ(log.records[k].thread, leaver);
    EXPECT_EQ(log.records[k].obj, obj);
  }
}

//===-- Monitor storage --------------------------------------------------===//

// The monitor storage the suites run under, from JITLOCK_TEST_MONITORS
// (pointer, the default, index or table): CTest runs the monitor suites
// once per storage.
inline uint32_t testMonitorStorage() {
  const char *s = std::getenv("JITLOCK_TEST_MONITORS");
  if (!s || !*s || std::string(s) == "pointer")
    return JITLOCK_MONITORS_POINTER;
  if (std::string(s) == "index")
    return JITLOCK_MONITORS_INDEX;
  if (std::string(s) == "table")
    return JITLOCK_MONITORS_TABLE;
  ADD_FAILURE() << "JITLOCK_TEST_MONITORS=" << s
                << " is not pointer, index or table";
  return JITLOCK_MONITORS_POINTER;
}

// The defaults, with the monitor storage under test.
inline void testDefaultConfig(jitlock_rt_config *cfg) {
  jitlock_rt_default_config(cfg);
  cfg->monitor_storage = testMonitorStorage();
}

// `expected`, a header `o` should have, as the storage under test makes it:
// table storage installs an identity hash in every object it inflates, and
// the header keeps it (peek_hash reads 0 for an object never hashed).
inline uint64_t withTableHash(const void *o, uint64_t expected) {
  if (testMonitorStorage() != JITLOCK_MONITORS_TABLE || (expected & kHashMask))
    return expected;
  return expected | (jitlock_rt_peek_hash(o) << kHashShift);
}

// The hash an object that was inflated and never hashed shows: none, but
// under table storage, which hashes every object before it inflates it.
inline void expectHashOfInflated(const void *o) {
  if (testMonitorStorage() == JITLOCK_MONITORS_TABLE)
    EXPECT_NE(jitlock_rt_peek_hash(o), 0u) << "table storage hashes first";
  else
    EXPECT_EQ(jitlock_rt_peek_hash(o), 0u);
}

// The monitor that inline code finds from `obj`'s header `h` (tag 10) on
// thread `t`, by the layout's rules for its monitor storage: null on a
// table cache miss, where inline code calls the runtime.
inline char *inlineMonitor(const jitlock_rt_layout &l, const jitlock_thread *t,
                           const void *obj, uint64_t h) {
  const char *thread = reinterpret_cast<const char *>(t);
  switch (l.monitor_storage) {
  case JITLOCK_MONITORS_INDEX: {
    uintptr_t base = __atomic_load_n(
        reinterpret_cast<const uintptr_t *>(thread + l.monitor_base_offset),
        __ATOMIC_RELAXED);
    return reinterpret_cast<char *>(base + (h >> l.monitor_index_shift) *
                                               l.monitor_stride);
  }
  case JITLOCK_MONITORS_TABLE:
    for (uint32_t i = 0; i < l.monitor_cache_probes; ++i) {
      auto *entry = reinterpret_cast<void *const *>(
          thread + l.monitor_cache_offset + 16 * i);
      if (__atomic_load_n(&entry[0], __ATOMIC_RELAXED) == obj)
        return static_cast<char *>(
            __atomic_load_n(&entry[1], __ATOMIC_RELAXED));
    }
    return nullptr;
  default:
    return reinterpret_cast<char *>(h - l.monitor_value);
  }
}

// For tests without the fixture: configures the storage under test (no
// thread attached), with `indexCapacity` monitors when it is index storage
// (0: the default), and the defaults again at the end of the scope.
class StorageScope {
public:
  explicit StorageScope(uint32_t indexCapacity = 0) {
    jitlock_rt_config cfg;
    testDefaultConfig(&cfg);
    if (cfg.monitor_storage == JITLOCK_MONITORS_INDEX)
      cfg.monitor_capacity = indexCapacity;
    ok_ = jitlock_rt_configure(&cfg) == JITLOCK_OK;
  }
  ~StorageScope() {
    EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    jitlock_rt_config cfg;
    jitlock_rt_default_config(&cfg);
    EXPECT_EQ(jitlock_rt_configure(&cfg), JITLOCK_OK);
  }
  StorageScope(const StorageScope &) = delete;
  StorageScope &operator=(const StorageScope &) = delete;
  bool configured() const { return ok_; }
  uint32_t storage() const { return testMonitorStorage(); }

private:
  bool ok_;
};

//===-- Fixture ----------------------------------------------------------===//

/// Installs a runtime test hook for the scope; the closure runs where the
/// runtime calls the hook.
template <typename Stage, typename Arg> class HookScope {
public:
  using Fn = std::function<void(Stage, Arg)>;
  HookScope(std::atomic<void (*)(Stage, Arg)> &Slot, Fn F) : Slot(Slot) {
    Current() = std::move(F);
    Slot.store(&trampoline);
  }
  ~HookScope() {
    Slot.store(nullptr);
    Current() = nullptr;
  }

private:
  static Fn &Current() {
    static Fn F;
    return F;
  }
  static void trampoline(Stage S, Arg A) { Current()(S, A); }
  std::atomic<void (*)(Stage, Arg)> &Slot;
};
// Each test starts with the default configuration and the main thread
// attached (self), and ends with the main thread detached, the runtime shut
// down and no monitor alive, so that LeakSanitizer sees nothing.
class RuntimeTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(jitlock_rt_current(), nullptr)
        << "a previous test left the main thread attached";
    // A fixture member may have taken the layout already (which freezes
    // it): shutdown releases it for the storage under test.
    ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    jitlock_rt_config cfg;
    testDefaultConfig(&cfg);
    ASSERT_EQ(jitlock_rt_configure(&cfg), JITLOCK_OK);
    self = jitlock_rt_attach();
    ASSERT_NE(self, nullptr);
  }

  void TearDown() override {
    if (jitlock_rt_current()) {
      releaseEverything();
      int rc = jitlock_rt_detach();
      EXPECT_EQ(rc, JITLOCK_OK) << "detach in TearDown: " << st(rc);
    }
    int rc = jitlock_rt_shutdown();
    EXPECT_EQ(rc, JITLOCK_OK) << "shutdown in TearDown: " << st(rc);
    EXPECT_EQ(stats().monitors_alive, 0u) << "monitors alive after shutdown";
    jitlock_rt_config cfg;
    jitlock_rt_default_config(&cfg);
    EXPECT_EQ(jitlock_rt_configure(&cfg), JITLOCK_OK);
  }

  // Objects live until TearDown so that a failing test never leaves a
  // monitor pointing at a dead stack object.
  Obj *newObj(uint64_t header = kUnlockedHeader) {
    return &arena_.emplace_back(header);
  }

  // Detaches, applies `cfg`, attaches again. A config that asks for the
  // default (pointer) monitor storage gets the storage under test. The
  // layout was handed out at attach: a config that changes it needs a
  // shutdown first (which gives inflated objects their headers back).
  void reconfigure(const jitlock_rt_config &given) {
    jitlock_rt_config cfg = given;
    if (cfg.monitor_storage == JITLOCK_MONITORS_POINTER)
      cfg.monitor_storage = testMonitorStorage();
    jitlock_rt_layout now;
    jitlock_rt_get_layout(&now);
    bool layoutChanges = cfg.header_offset != now.header_offset ||
                         cfg.monitor_storage != now.monitor_storage ||
                         cfg.stack_shadow_pages != now.stack_shadow_pages ||
                         (cfg.inflated_exit != JITLOCK_EXIT_AUTO &&
                          cfg.inflated_exit != now.monitor_exit);
    ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    if (layoutChanges)
      ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_configure(&cfg), JITLOCK_OK);
    self = jitlock_rt_attach();
    ASSERT_NE(self, nullptr);
  }

  // reconfigure() with the defaults but `log`'s handler, and `compiled` for
  // misuse from compiled code.
  void
  reconfigureWithLog(MisuseLog &log,
                     jitlock_misuse_action compiled = JITLOCK_MISUSE_ABORT) {
    jitlock_rt_config cfg;
    jitlock_rt_default_config(&cfg);
    cfg.misuse_handler = &MisuseLog::handler;
    cfg.misuse_ctx = &log;
    cfg.compiled_code_misuse = compiled;
    reconfigure(cfg);
  }

  int enter(void *o) { return jitlock_rt_monitor_enter(self, o); }
  int exit(void *o) { return jitlock_rt_monitor_exit(self, o); }

  // Only used when a test failed half-way: releases what the main thread
  // still holds so that detach and shutdown can run.
  void releaseEverything() {
    for (int guard = 0; guard < 1000; ++guard) {
      std::vector<void *> ls = lockStack(self);
      if (ls.empty())
        break;
      ADD_FAILURE() << "test left " << ls.size() << " lock-stack entries";
      if (exit(ls.back()) != JITLOCK_OK)
        break;
    }
    for (Obj &o : arena_) {
      for (int guard = 0; guard < 1000 && jitlock_rt_holds_lock(self, &o);
           ++guard) {
        ADD_FAILURE() << "test left object " << (void *)&o << " locked";
        if (exit(&o) != JITLOCK_OK)
          break;
      }
    }
  }

  jitlock_thread *self = nullptr;

private:
  std::deque<Obj> arena_;
};

} // namespace jitlock_test

#endif // JITLOCK_UNITTESTS_RUNTIME_RUNTIMETESTUTIL_H
