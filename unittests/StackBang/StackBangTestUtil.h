//===- StackBangTestUtil.h - Helpers for the stack banging tests ---------===//
//
// Threads with a known stack size, /proc/self/maps queries, the recursion
// that JIT code with checked method entries would do, child processes that
// are expected to die, and a fixture that leaves the runtime clean.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_STACKBANG_STACKBANGTESTUTIL_H
#define JITLOCK_UNITTESTS_STACKBANG_STACKBANGTESTUTIL_H

#include "jitlock/jitlock_rt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace stackbang_test {

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STACKBANG_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define STACKBANG_TSAN 1
#endif
#endif

constexpr uint64_t kUnlocked = 0x1;

/// A test object: the 64-bit header at offset 0 (the default layout).
struct alignas(16) Obj {
  std::atomic<uint64_t> header{kUnlocked};
  uint64_t payload = 0;
};

/// What this test binary runs as a child process (see runChild).
constexpr const char *kChildEnv = "JITLOCK_STACKBANG_CHILD";

/// Room for the sanitizers' bigger frames, but small enough that the deep
/// recursions stay in the low thousands of frames.
#if defined(STACKBANG_ASAN)
constexpr size_t kStackSize = 1024 * 1024;
#else
constexpr size_t kStackSize = 512 * 1024;
#endif

inline const jitlock_rt_layout &layout() {
  static jitlock_rt_layout L = [] {
    jitlock_rt_layout L{};
    jitlock_rt_get_layout(&L);
    return L;
  }();
  return L;
}

/// What a checked method entry reads.
inline uintptr_t watermarkOf(const jitlock_thread *T) {
  return __atomic_load_n(
      reinterpret_cast<const uintptr_t *>(reinterpret_cast<const char *>(T) +
                                          layout().stack_watermark_offset),
      __ATOMIC_RELAXED);
}

inline jitlock_stack_info stackInfo(const jitlock_thread *T) {
  jitlock_stack_info I{};
  EXPECT_EQ(jitlock_rt_stack_info(T, &I), JITLOCK_OK);
  return I;
}

constexpr uint32_t zoneBit(uint32_t Zone) { return 1u << Zone; }
constexpr uint32_t kGuardBits = zoneBit(JITLOCK_ZONE_RED) |
                                zoneBit(JITLOCK_ZONE_YELLOW) |
                                zoneBit(JITLOCK_ZONE_RESERVED);

/// Runs `F` on a fresh pthread with a stack of `StackSize` bytes (0: the
/// default) and waits for it.
inline void runOnThread(size_t StackSize, std::function<void()> F) {
  pthread_attr_t Attr;
  pthread_attr_init(&Attr);
  if (StackSize)
    EXPECT_EQ(pthread_attr_setstacksize(&Attr, StackSize), 0);
  pthread_t Thread;
  auto *Heap = new std::function<void()>(std::move(F));
  int Err = pthread_create(
      &Thread, &Attr,
      [](void *P) -> void * {
        auto *Fn = static_cast<std::function<void()> *>(P);
        (*Fn)();
        delete Fn;
        return nullptr;
      },
      Heap);
  pthread_attr_destroy(&Attr);
  ASSERT_EQ(Err, 0) << "pthread_create: " << strerror(Err);
  pthread_join(Thread, nullptr);
}

/// The calling thread's stack as pthread_getattr_np reports it.
inline void pthreadStack(uintptr_t &End, uintptr_t &Base) {
  pthread_attr_t Attr;
  ASSERT_EQ(pthread_getattr_np(pthread_self(), &Attr), 0);
  void *Addr;
  size_t Size;
  ASSERT_EQ(pthread_attr_getstack(&Attr, &Addr, &Size), 0);
  pthread_attr_destroy(&Attr);
  End = uintptr_t(Addr);
  Base = End + Size;
}

//===-- /proc/self/maps ---------------------------------------------------===//

struct Mapping {
  uintptr_t Lo, Hi;
  std::string Perms;
};

inline std::vector<Mapping> readMaps() {
  std::vector<Mapping> Out;
  FILE *F = fopen("/proc/self/maps", "r");
  if (!F)
    return Out;
  char Line[512];
  while (fgets(Line, sizeof Line, F)) {
    unsigned long Lo, Hi;
    char Perms[8];
    if (sscanf(Line, "%lx-%lx %7s", &Lo, &Hi, Perms) == 3)
      Out.push_back({Lo, Hi, Perms});
  }
  fclose(F);
  return Out;
}

/// Whether every byte of [Lo, Hi) is mapped with permissions starting with
/// `Perms` (e.g. "---" or "rw-"). Empty ranges qualify.
inline bool rangeHasPerms(uintptr_t Lo, uintptr_t Hi, const char *Perms) {
  uintptr_t At = Lo;
  for (const Mapping &M : readMaps()) {
    if (M.Hi <= At || M.Lo > At)
      continue;
    if (M.Perms.compare(0, strlen(Perms), Perms) != 0)
      return false;
    At = M.Hi;
    if (At >= Hi)
      return true;
  }
  return At >= Hi;
}

/// Whether every mapping that overlaps [Lo, Hi) has permissions starting
/// with `Perms`; unmapped parts qualify.
inline bool mappingsInRangeHavePerms(uintptr_t Lo, uintptr_t Hi,
                                     const char *Perms) {
  for (const Mapping &M : readMaps())
    if (M.Hi > Lo && M.Lo < Hi && M.Perms.compare(0, strlen(Perms), Perms) != 0)
      return false;
  return true;
}

inline std::string describeRange(uintptr_t Lo, uintptr_t Hi) {
  std::string S;
  char Buf[128];
  for (const Mapping &M : readMaps())
    if (M.Hi > Lo && M.Lo < Hi) {
      snprintf(Buf, sizeof Buf, "  %lx-%lx %s\n", (unsigned long)M.Lo,
               (unsigned long)M.Hi, M.Perms.c_str());
      S += Buf;
    }
  return S;
}

/// The guard zones are PROT_NONE and the pages above them writable.
inline void expectZonesProtected(const jitlock_stack_info &I) {
  EXPECT_EQ(I.protected_zones & kGuardBits, kGuardBits);
  EXPECT_TRUE(rangeHasPerms(I.end, I.reserved_top, "---"))
      << "zones not PROT_NONE:\n"
      << describeRange(I.end - I.page_size, I.safe_limit);
  EXPECT_TRUE(rangeHasPerms(I.reserved_top, I.safe_limit, "rw"))
      << describeRange(I.end, I.safe_limit);
}

inline void expectZonesWritable(uintptr_t Lo, uintptr_t Hi) {
  EXPECT_TRUE(rangeHasPerms(Lo, Hi, "rw")) << "pages not writable:\n"
                                           << describeRange(Lo, Hi);
}

//===-- Child processes
//----------------------------------------------------===//

struct ChildResult {
  int Status = -1;
  std::string Output; // stdout and stderr
  bool signaled(int Sig) const {
    return WIFSIGNALED(Status) && WTERMSIG(Status) == Sig;
  }
  std::string describe() const {
    std::string S;
    if (WIFSIGNALED(Status))
      S = "killed by signal " + std::to_string(WTERMSIG(Status));
    else if (WIFEXITED(Status))
      S = "exited with " + std::to_string(WEXITSTATUS(Status));
    return S + "; output:\n" + Output;
  }
};

/// Runs this test binary again with kChildEnv=`Scenario`; its main() runs
/// the scenario instead of the tests. A re-exec rather than a fork keeps the
/// sanitizers' runtimes out of a forked multi-threaded process.
inline ChildResult runChild(const std::string &Scenario) {
  ChildResult R;
  int Fds[2];
  if (pipe(Fds) != 0) {
    ADD_FAILURE() << "pipe: " << strerror(errno);
    return R;
  }
  posix_spawn_file_actions_t Actions;
  posix_spawn_file_actions_init(&Actions);
  posix_spawn_file_actions_adddup2(&Actions, Fds[1], 1);
  posix_spawn_file_actions_adddup2(&Actions, Fds[1], 2);
  posix_spawn_file_actions_addclose(&Actions, Fds[0]);
  posix_spawn_file_actions_addclose(&Actions, Fds[1]);
  std::vector<std::string> Env;
  for (char **E = environ; *E; ++E)
    if (strncmp(*E, kChildEnv, strlen(kChildEnv)) != 0)
      Env.push_back(*E);
  Env.push_back(std::string(kChildEnv) + "=" + Scenario);
  std::vector<char *> EnvP;
  for (std::string &S : Env)
    EnvP.push_back(S.data());
  EnvP.push_back(nullptr);
  char Exe[] = "/proc/self/exe";
  char *Argv[] = {Exe, nullptr};
  pid_t Pid;
  int Err = posix_spawn(&Pid, Exe, &Actions, nullptr, Argv, EnvP.data());
  posix_spawn_file_actions_destroy(&Actions);
  close(Fds[1]);
  if (Err != 0) {
    close(Fds[0]);
    ADD_FAILURE() << "posix_spawn: " << strerror(Err);
    return R;
  }
  char Buf[4096];
  ssize_t N;
  while ((N = read(Fds[0], Buf, sizeof Buf)) != 0) {
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      break;
    R.Output.append(Buf, size_t(N));
  }
  close(Fds[0]);
  while (waitpid(Pid, &R.Status, 0) < 0 && errno == EINTR) {
  }
  return R;
}

//===-- Fixture
//-------------------------------------------------------------===//

/// Starts from the default configuration with the default overflow handler
/// and no thread attached; ends with every thread detached and the runtime
/// shut down. Tests run their attached code on threads of their own, whose
/// stack size they choose.
class StackBangTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(jitlock_rt_current(), nullptr);
    jitlock_rt_config Cfg;
    jitlock_rt_default_config(&Cfg);
    ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
    jitlock_rt_set_overflow_handler(nullptr, nullptr);
  }
  void TearDown() override {
    jitlock_rt_set_overflow_handler(nullptr, nullptr);
    if (jitlock_rt_current())
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    jitlock_rt_config Cfg;
    jitlock_rt_default_config(&Cfg);
    EXPECT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  }
  /// Objects live until after shutdown, which writes their headers.
  Obj *newObj() { return &Arena.emplace_back(); }
  std::vector<Obj *> newObjs(size_t N) {
    std::vector<Obj *> V;
    for (size_t I = 0; I < N; ++I)
      V.push_back(newObj());
    return V;
  }

private:
  std::deque<Obj> Arena;
};

/// Inflates `O` (a timed wait needs a monitor) and leaves it unlocked.
inline void inflate(jitlock_thread *Self, Obj *O) {
  ASSERT_EQ(jitlock_rt_monitor_enter(Self, O), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_wait_timed(Self, O, 0), JITLOCK_ETIMEDOUT);
  ASSERT_EQ(jitlock_rt_monitor_exit(Self, O), JITLOCK_OK);
  jitlock_lock_info I{};
  jitlock_rt_inspect(O, &I);
  EXPECT_EQ(I.state, uint32_t(JITLOCK_STATE_INFLATED));
}

inline uint64_t holdsOf(const void *O) {
  jitlock_lock_info I{};
  jitlock_rt_inspect(O, &I);
  return I.owner ? I.holds : 0;
}

inline jitlock_thread *ownerOf(const void *O) {
  jitlock_lock_info I{};
  jitlock_rt_inspect(O, &I);
  return I.owner;
}

inline std::vector<void *> sorted(std::vector<void *> V) {
  std::sort(V.begin(), V.end());
  return V;
}

} // namespace stackbang_test

#endif
