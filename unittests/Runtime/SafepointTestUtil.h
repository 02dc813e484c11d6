//===- SafepointTestUtil.h - Helpers for the safepoint tests ----*- C++ -*-===//
//
// A VM thread that takes safepoints on command, the inline poll that compiled
// code performs (P1 of the protocol in lib/Runtime/Safepoint.cpp), read
// through the runtime's layout, and a mutator loop that polls.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_RUNTIME_SAFEPOINTTESTUTIL_H
#define JITLOCK_UNITTESTS_RUNTIME_SAFEPOINTTESTUTIL_H

#include "RuntimeTestUtil.h"

#include <mutex>
#include <set>

namespace jitlock_test {

/// P1, as inline code does it: a load of the poll word through the layout's
/// offset, a test of the armed bit, and the slow path when armed.
inline void pollAsCompiledCode(jitlock_thread *t) {
  static const jitlock_rt_layout l = [] {
    jitlock_rt_layout x;
    jitlock_rt_get_layout(&x);
    return x;
  }();
  auto *word = reinterpret_cast<std::atomic<uint64_t> *>(
      reinterpret_cast<char *>(t) + l.poll_word_offset);
  if (word->load(std::memory_order_relaxed) & l.poll_armed_bit)
    jitlock_rt_safepoint_poll(t);
}

/// An unattached thread that begins and ends safepoints when told to, since
/// the thread that begins one must be the one that ends it. Each command
/// returns false when the VM thread did not finish it before the deadline.
class VmThread {
public:
  VmThread() : thr_([this] { loop(); }) {}
  ~VmThread() {
    {
      std::lock_guard<std::mutex> g(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thr_.join();
  }

  /// Takes a safepoint: returns once every attached thread is stopped.
  bool stop() {
    return run([] { return jitlock_rt_safepoint_begin(); });
  }
  /// Releases the safepoint taken by stop().
  bool release() {
    return run([] { return jitlock_rt_safepoint_end(); });
  }
  /// Runs `f` on the VM thread (inside the safepoint, if one is held).
  bool run(std::function<int()> f) {
    std::unique_lock<std::mutex> g(mu_);
    task_ = std::move(f);
    done_ = false;
    cv_.notify_all();
    if (!cv_.wait_for(g, kDeadline, [&] { return done_; }))
      return false;
    EXPECT_EQ(rc_, JITLOCK_OK) << jitlock_rt_status_name(rc_);
    return true;
  }
  /// Starts `f` and returns at once; finished() tells when it is done.
  void post(std::function<int()> f) {
    std::lock_guard<std::mutex> g(mu_);
    task_ = std::move(f);
    done_ = false;
    cv_.notify_all();
  }
  bool finished() {
    std::lock_guard<std::mutex> g(mu_);
    return done_;
  }

private:
  void loop() {
    std::unique_lock<std::mutex> g(mu_);
    for (;;) {
      cv_.wait(g, [&] { return task_ || quit_; });
      if (!task_)
        return;
      auto f = std::move(task_);
      task_ = nullptr;
      g.unlock();
      int rc = f();
      g.lock();
      rc_ = rc;
      done_ = true;
      cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<int()> task_;
  bool done_ = true;
  bool quit_ = false;
  int rc_ = JITLOCK_OK;
  std::thread thr_;
};

/// Threads that say when they run compiled code: from the moment attach or
/// leave_native returns until they call enter_native or detach. A handshake
/// operation must never run for such a thread on another thread. (Its state
/// alone cannot tell: a thread leaving native publishes `managed` before it
/// sees the handshake and waits for it, which is safe.)
class CompiledCodeMarks {
  std::mutex mu;
  std::set<jitlock_thread *> running;

public:
  void enter(jitlock_thread *t) {
    std::lock_guard<std::mutex> g(mu);
    running.insert(t);
  }
  void leave(jitlock_thread *t) {
    std::lock_guard<std::mutex> g(mu);
    running.erase(t);
  }
  bool isRunning(jitlock_thread *t) {
    std::lock_guard<std::mutex> g(mu);
    return running.count(t) != 0;
  }
};

/// Attached threads that count and poll in a loop, as compiled code with a
/// poll on its back-edge would, until stopped. With `marks`, they say they
/// run compiled code the whole time.
class PollingThreads {
public:
  explicit PollingThreads(unsigned n, CompiledCodeMarks *marks = nullptr)
      : counters_(n) {
    for (unsigned i = 0; i < n; ++i)
      threads_.emplace_back([this, i, marks] {
        jitlock_thread *t = jitlock_rt_attach();
        if (marks)
          marks->enter(t);
        attached_.fetch_add(1);
        while (!quit_.load(std::memory_order_relaxed)) {
          counters_[i].fetch_add(1, std::memory_order_relaxed);
          pollAsCompiledCode(t);
        }
        if (marks)
          marks->leave(t);
        EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
      });
    EXPECT_TRUE(waitUntil([&] { return attached_.load() == n; }));
  }
  ~PollingThreads() {
    quit_ = true;
    for (auto &t : threads_)
      t.join();
  }
  std::vector<uint64_t> counts() const {
    std::vector<uint64_t> v;
    for (auto &c : counters_)
      v.push_back(c.load(std::memory_order_relaxed));
    return v;
  }

private:
  std::deque<std::atomic<uint64_t>> counters_;
  std::atomic<unsigned> attached_{0};
  std::atomic<bool> quit_{false};
  std::vector<std::thread> threads_;
};

} // namespace jitlock_test

#endif
