//===- EmbedderContractTest.cpp - What a VM on the runtime relies on ------===//
//
// The runtime's promises to a VM that embeds it, beyond the monitor
// protocol (labels runtime, safepoint):
//
//   ThreadData.*             jitlock_rt_set_thread_data / _thread_data: per
//                            thread, settable by another thread, cleared at
//                            detach and attach, refused for a thread that is
//                            not attached
//   ShutdownForget.*         jitlock_rt_shutdown_forget frees every monitor
//                            and writes no object; jitlock_rt_shutdown
//                            writes the displaced header back
//   NativeContract.*         a thread may hold a lock while `native` (a
//                            contender parks, a safepoint completes), may
//                            detach from `native`; jitlock_rt_thread_state of
//                            a thread that detached or exited is -1
//   SafepointWatchdog.*      a safepoint that waits past
//                            safepoint_timeout_ms names the threads not yet
//                            safe with their states and keeps waiting, or
//                            aborts; the environment variables do the same
//
// Every test leaves the runtime shut down with the default configuration.
//
//===----------------------------------------------------------------------===//
#include "jitlock/jitlock_rt.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <unistd.h>

namespace {

struct alignas(8) Obj {
  uint64_t Header = 1;
  uint64_t Field = 0;
};

void restoreDefaults() {
  ASSERT_EQ(jitlock_rt_current(), nullptr);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
}

class Defaults : public ::testing::Test {
protected:
  void SetUp() override { restoreDefaults(); }
  void TearDown() override { restoreDefaults(); }
};

//===-- Per-thread data
//----------------------------------------------------===//

using ThreadData = Defaults;

TEST_F(ThreadData, SetByItselfAndByAnother) {
  int Mine = 0, Theirs = 0, Replaced = 0;
  jitlock_thread *Self = jitlock_rt_attach();
  ASSERT_NE(Self, nullptr);
  EXPECT_EQ(jitlock_rt_thread_data(Self), nullptr);
  EXPECT_EQ(jitlock_rt_set_thread_data(Self, &Mine), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_thread_data(Self), &Mine);

  std::atomic<jitlock_thread *> Other{nullptr};
  std::atomic<int> Step{0};
  std::thread Worker([&] {
    jitlock_thread *T = jitlock_rt_attach();
    EXPECT_EQ(jitlock_rt_set_thread_data(T, &Theirs), JITLOCK_OK);
    Other = T;
    Step = 1;
    while (Step.load() != 2)
      std::this_thread::yield();
    // The main thread replaced it meanwhile.
    EXPECT_EQ(jitlock_rt_thread_data(T), &Replaced);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    Step = 3;
  });
  while (Step.load() != 1)
    std::this_thread::yield();
  jitlock_thread *T = Other.load();
  EXPECT_EQ(jitlock_rt_thread_data(T), &Theirs);
  EXPECT_EQ(jitlock_rt_set_thread_data(T, &Replaced), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_thread_data(Self), &Mine); // each thread its own
  Step = 2;
  while (Step.load() != 3)
    std::this_thread::yield();
  // Detached: nothing to read, nothing to set.
  EXPECT_EQ(jitlock_rt_thread_data(T), nullptr);
  EXPECT_EQ(jitlock_rt_set_thread_data(T, &Theirs), JITLOCK_ENOT_ATTACHED);
  Worker.join();

  EXPECT_EQ(jitlock_rt_set_thread_data(nullptr, &Mine), JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_thread_data(Self), nullptr);
  // A new attach starts without it.
  ASSERT_EQ(jitlock_rt_attach(), Self);
  EXPECT_EQ(jitlock_rt_thread_data(Self), nullptr);
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
}

//===-- Tear-down without touching objects
//---------------------------------===//

using ShutdownForget = Defaults;

/// Inflates `A` (a non-adjacent re-entry does) and leaves it unlocked with
/// its monitor.
void inflateIdle(Obj &A, Obj &B) {
  jitlock_thread *Self = jitlock_rt_attach();
  ASSERT_EQ(jitlock_rt_monitor_enter(Self, &A), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_monitor_enter(Self, &B), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_monitor_enter(Self, &A), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_monitor_exit(Self, &A), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_monitor_exit(Self, &B), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_monitor_exit(Self, &A), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(A.Header & 3, 2u) << "A did not inflate";
}

TEST_F(ShutdownForget, WritesNoObject) {
  Obj A, B;
  inflateIdle(A, B);
  const uint64_t Inflated = A.Header;
  jitlock_rt_stats Before;
  jitlock_rt_get_stats(&Before);
  EXPECT_GE(Before.monitors_alive, 1u);

  // Refused, like shutdown, while a thread is attached.
  ASSERT_NE(jitlock_rt_attach(), nullptr);
  EXPECT_EQ(jitlock_rt_shutdown_forget(), JITLOCK_ESTATE);
  EXPECT_EQ(A.Header, Inflated);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);

  EXPECT_EQ(jitlock_rt_shutdown_forget(), JITLOCK_OK);
  EXPECT_EQ(A.Header, Inflated) << "the forgetting shutdown wrote the header";
  EXPECT_EQ(B.Header, 1u);
  jitlock_rt_stats After;
  jitlock_rt_get_stats(&After);
  EXPECT_EQ(After.monitors_alive, 0u);
  jitlock_deflation_stats Deflation;
  jitlock_rt_get_deflation_stats(&Deflation);
  EXPECT_EQ(Deflation.monitors_allocated, 0u);

  // The runtime works on: a fresh object locks as usual.
  Obj C;
  jitlock_thread *Self = jitlock_rt_attach();
  EXPECT_EQ(jitlock_rt_monitor_enter(Self, &C), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_monitor_exit(Self, &C), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
}

TEST_F(ShutdownForget, ShutdownWritesTheHeaderBack) {
  Obj A, B;
  inflateIdle(A, B);
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(A.Header, 1u);
}

//===-- native
//--------------------------------------------------------------===//

using NativeContract = Defaults;

TEST_F(NativeContract, HoldsALockWhileNative) {
  const unsigned Seed = unsigned(time(nullptr));
  std::printf("seed %u\n", Seed);
  // Static: it is inflated, and the fixture's shutdown writes its header
  // back after this body has returned.
  static Obj A;
  A = Obj();
  jitlock_thread *Self = jitlock_rt_attach();
  ASSERT_EQ(jitlock_rt_monitor_enter(Self, &A), JITLOCK_OK);
  // `sleep` inside `synchronized`.
  ASSERT_EQ(jitlock_rt_enter_native(Self), JITLOCK_OK);

  std::atomic<bool> Entered{false};
  std::atomic<jitlock_thread *> ContenderThread{nullptr};
  std::thread Contender([&] {
    jitlock_thread *T = jitlock_rt_attach();
    ContenderThread = T;
    EXPECT_EQ(jitlock_rt_monitor_enter(T, &A), JITLOCK_OK);
    Entered = true;
    A.Field += 1;
    EXPECT_EQ(jitlock_rt_monitor_exit(T, &A), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
  // The contender parks (blocked), and a VM thread's safepoint completes
  // with the holder native and the contender parked.
  while (!ContenderThread.load() ||
         jitlock_rt_thread_state(ContenderThread.load()) !=
             JITLOCK_THREAD_BLOCKED)
    std::this_thread::yield();
  std::thread Vm([] {
    ASSERT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);
  });
  Vm.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(Seed % 5));
  EXPECT_FALSE(Entered.load()) << "the contender entered a held monitor";
  EXPECT_EQ(jitlock_rt_holds_lock(Self, &A), 1);
  ASSERT_EQ(jitlock_rt_leave_native(Self), JITLOCK_OK);
  A.Field += 1;
  ASSERT_EQ(jitlock_rt_monitor_exit(Self, &A), JITLOCK_OK);
  Contender.join();
  EXPECT_TRUE(Entered.load());
  EXPECT_EQ(A.Field, 2u);
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
}

TEST_F(NativeContract, DetachFromNativeAndStateAfterwards) {
  jitlock_thread *Self = jitlock_rt_attach();
  ASSERT_EQ(jitlock_rt_enter_native(Self), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_thread_state(Self), JITLOCK_THREAD_NATIVE);
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_thread_state(Self), -1);
  // Attached again, it starts managed.
  ASSERT_EQ(jitlock_rt_attach(), Self);
  EXPECT_EQ(jitlock_rt_thread_state(Self), JITLOCK_THREAD_MANAGED);
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);

  // A thread that exited attached: -1 too (its memory is not read).
  jitlock_thread *Gone = nullptr;
  std::thread Exits([&] { Gone = jitlock_rt_attach(); });
  Exits.join();
  EXPECT_EQ(jitlock_rt_thread_state(Gone), -1);
}

//===-- The time-to-safepoint watchdog
//--------------------------------------===//

/// Captures what the runtime writes to stderr (file descriptor 2) in a file.
class StderrCapture {
public:
  StderrCapture() {
    std::fflush(stderr);
    File = std::tmpfile();
    Saved = dup(STDERR_FILENO);
    dup2(fileno(File), STDERR_FILENO);
  }
  std::string finish() {
    std::fflush(stderr);
    dup2(Saved, STDERR_FILENO);
    close(Saved);
    std::string Text;
    std::rewind(File);
    char Buf[512];
    while (size_t N = std::fread(Buf, 1, sizeof(Buf), File))
      Text.append(Buf, N);
    std::fclose(File);
    return Text;
  }

private:
  FILE *File;
  int Saved;
};

/// An attached thread in `managed` that does not poll until released: the
/// embedder's bug (a pthread_join without enter_native) the watchdog names.
struct Straggler {
  std::atomic<bool> Release{false};
  std::atomic<jitlock_thread *> Thread{nullptr};
  std::thread Worker;
  Straggler() {
    Worker = std::thread([this] {
      jitlock_thread *T = jitlock_rt_attach();
      Thread = T;
      while (!Release.load())
        std::this_thread::yield();
      jitlock_rt_safepoint_poll(T); // now it stops
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
    while (!Thread.load())
      std::this_thread::yield();
  }
  ~Straggler() {
    Release = true;
    Worker.join();
  }
};

using SafepointWatchdog = Defaults;

TEST_F(SafepointWatchdog, ReportsAndKeepsWaiting) {
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.safepoint_timeout_ms = 50;
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  std::string Report;
  {
    Straggler S;
    uint64_t Id = jitlock_rt_thread_id(S.Thread.load());
    std::thread Releaser([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      S.Release = true;
    });
    StderrCapture Capture;
    int Begin = jitlock_rt_safepoint_begin();
    int End = jitlock_rt_safepoint_end();
    Report = Capture.finish();
    EXPECT_EQ(Begin, JITLOCK_OK);
    EXPECT_EQ(End, JITLOCK_OK);
    Releaser.join();
    EXPECT_NE(Report.find("(time-to-safepoint limit 50 ms) for 1 thread(s) "
                          "not yet safe"),
              std::string::npos)
        << Report;
    EXPECT_NE(Report.find("jitlock:   thread " + std::to_string(Id) +
                          ": managed (has not reached a poll"),
              std::string::npos)
        << Report;
    EXPECT_NE(Report.find("jitlock: still waiting"), std::string::npos)
        << Report;
  }
  // Once per safepoint: a prompt one says nothing.
  StderrCapture Capture;
  ASSERT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);
  EXPECT_EQ(Capture.finish(), "");
}

TEST_F(SafepointWatchdog, AbortsWhenConfigured) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        jitlock_rt_config Cfg;
        jitlock_rt_default_config(&Cfg);
        Cfg.safepoint_timeout_ms = 20;
        Cfg.safepoint_timeout_action = JITLOCK_SAFEPOINT_TIMEOUT_ABORT;
        if (jitlock_rt_configure(&Cfg) != JITLOCK_OK)
          std::exit(0);
        Straggler S;
        jitlock_rt_safepoint_begin();
        std::exit(0); // not reached
      },
      "for 1 thread\\(s\\) not yet safe:.*thread [0-9]+: managed.*"
      "jitlock: fatal: aborting");
}

TEST_F(SafepointWatchdog, FromTheEnvironment) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        setenv("JITLOCK_SAFEPOINT_TIMEOUT_MS", "20", 1);
        setenv("JITLOCK_SAFEPOINT_TIMEOUT_ACTION", "abort", 1);
        Straggler S;
        jitlock_rt_safepoint_begin();
        std::exit(0); // not reached
      },
      "limit 20 ms.*jitlock: fatal: aborting");
}

TEST_F(SafepointWatchdog, UnknownActionRefused) {
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.safepoint_timeout_action = 2;
  EXPECT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_EINVAL);
}

} // namespace
