//===- Threads.cpp - Java threads on jitlock's runtime threads ------------===//
//
// Every Java thread is an OS thread attached to the runtime for as long as
// its run() runs, inside jitlock_rt_call_guarded: an overflow that the
// interpreter's own stack check did not turn into a StackOverflowError (one
// in a built-in, caught by the guard zones) abandons the thread's frames,
// releases every lock they held, and ends the thread as an uncaught
// StackOverflowError would.
//
// Blocking built-ins (sleep, join, waiting for the other threads at exit,
// writing to stdout) run in the native state, so a safepoint never waits
// for them, nor a handshake (a contender's revocation of the thread's
// reservations, --locking=reserved). Object.wait goes through
// jitlock_rt_wait_timed, which blocks in the runtime's own (safe) state.
//
//===----------------------------------------------------------------------===//
#include "VM.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <pthread.h>

namespace jitlock::java {

namespace {
/// Guards the Started/Alive/Daemon fields of every VMThread and the count
/// of running non-daemon threads; ThreadsCv hears of every thread's end and
/// every interrupt.
std::mutex ThreadsLock;
std::condition_variable ThreadsCv;
unsigned NonDaemonRunning = 0;

using Clock = std::chrono::steady_clock;

/// A deadline `Millis` from now. Java allows up to Long.MAX_VALUE, which
/// would overflow the clock's nanoseconds: anything past ~30 years is ~30
/// years.
Clock::time_point deadlineIn(int64_t Millis) {
  constexpr int64_t MaxMillis = int64_t(1'000'000'000'000);
  return Clock::now() + std::chrono::milliseconds(std::min(Millis, MaxMillis));
}
thread_local VMThread *Current = nullptr;

struct GuardedCall {
  VMThread *T;
  Method *M;
  Slot *Args;
};

void runCall(void *P) {
  auto *G = static_cast<GuardedCall *>(P);
  callMethod(G->T, G->M, G->Args);
}

std::string threadName(VMThread *T) {
  if (!T->JavaThread)
    return "main";
  Field *F = resolveField(T->JavaThread->Cls, "name");
  auto *Name = reinterpret_cast<Object *>(*reinterpret_cast<Slot *>(
      reinterpret_cast<char *>(T->JavaThread) + F->Offset));
  return Name ? stringUtf8(Name) : "null";
}

void *threadMain(void *P) {
  auto *T = static_cast<VMThread *>(P);
  if (attachThread(T)) {
    Method *Run = resolveMethod(T->JavaThread->Cls, "run", "()V");
    Slot Args[1] = {Slot(uintptr_t(T->JavaThread))};
    runGuarded(T, Run, Args);
    detachThread(T);
  }
  {
    std::lock_guard<std::mutex> G(ThreadsLock);
    T->Alive = false;
    if (!T->Daemon)
      --NonDaemonRunning;
  }
  ThreadsCv.notify_all();
  return nullptr;
}

} // namespace

NativeScope::NativeScope(VMThread *T) : T(T) { jitlock_rt_enter_native(T->Rt); }
NativeScope::~NativeScope() { jitlock_rt_leave_native(T->Rt); }

VMThread *newVMThread() { return new VMThread; }

VMThread *currentVMThread() { return Current; }

bool attachThread(VMThread *T) {
  jitlock_thread *Rt = jitlock_rt_attach();
  if (!Rt)
    return false;
  {
    // Published under ThreadsLock so that interruptThread either sees Rt or
    // leaves a PendingInterrupt that is moved to the runtime's flag here.
    std::lock_guard<std::mutex> G(ThreadsLock);
    T->Rt = Rt;
    if (T->PendingInterrupt)
      jitlock_rt_interrupt(Rt);
    T->PendingInterrupt = false;
  }
  Current = T;
  T->Watermark = reinterpret_cast<const uintptr_t *>(
      reinterpret_cast<char *>(T->Rt) + Layout.stack_watermark_offset);
  T->PollWord = reinterpret_cast<const uint64_t *>(
      reinterpret_cast<char *>(T->Rt) + Layout.poll_word_offset);
  jitlock_stack_info Info;
  jitlock_rt_stack_info(T->Rt, &Info);
  T->SafeLimit = Info.safe_limit;
  return true;
}

void detachThread(VMThread *T) {
  {
    // After this no interrupter names the runtime thread, which the next
    // attach on this OS thread's TLS could reuse.
    std::lock_guard<std::mutex> G(ThreadsLock);
    T->Rt = nullptr;
  }
  if (int Rc = jitlock_rt_detach())
    writeOut(T, true,
             "jitlock-java: error: thread \"" + threadName(T) +
                 "\" ended holding locks: " + jitlock_rt_status_name(Rc) +
                 "\n");
}

bool runGuarded(VMThread *T, Method *M, Slot *Args) {
  GuardedCall G{T, M, Args};
  void *Released[16];
  jitlock_guarded_result R;
  std::memset(&R, 0, sizeof R);
  R.released = Released;
  R.released_cap = 16;
  int Rc = jitlock_rt_call_guarded(T->Rt, runCall, &G, &R);
  if (Rc == JITLOCK_ESTACK_OVERFLOW) {
    T->Pending = nullptr;
    writeOut(T, true,
             "Exception in thread \"" + threadName(T) +
                 "\" java.lang.StackOverflowError (caught by the stack guard "
                 "zones; " +
                 std::to_string(R.released_count) + " lock hold" +
                 (R.released_count == 1 ? "" : "s") + " released)\n");
    return false;
  }
  if (!T->Pending)
    return true;
  Object *Ex = T->Pending;
  T->Pending = nullptr;
  std::string Text = describeThrowable(T, Ex);
  writeOut(T, true,
           "Exception in thread \"" + threadName(T) + "\" " + Text + "\n");
  return false;
}

VMThread *threadOf(Object *JavaThread) {
  Field *F = resolveField(JavaThread->Cls, "eetop");
  return reinterpret_cast<VMThread *>(*reinterpret_cast<Slot *>(
      reinterpret_cast<char *>(JavaThread) + F->Offset));
}

void startJavaThread(VMThread *T, Object *ThreadObj) {
  VMThread *New = threadOf(ThreadObj);
  {
    std::lock_guard<std::mutex> G(ThreadsLock);
    if (New->Started) {
      throwNew(T, "java/lang/IllegalThreadStateException");
      return;
    }
    New->Started = New->Alive = true;
    if (!New->Daemon)
      ++NonDaemonRunning;
  }
  pthread_attr_t Attr;
  pthread_attr_init(&Attr);
  pthread_attr_setstacksize(&Attr, Options.StackSize);
  pthread_attr_setdetachstate(&Attr, PTHREAD_CREATE_DETACHED);
  pthread_t Id;
  int Rc = pthread_create(&Id, &Attr, threadMain, New);
  pthread_attr_destroy(&Attr);
  if (Rc != 0) {
    {
      std::lock_guard<std::mutex> G(ThreadsLock);
      New->Alive = false;
      if (!New->Daemon)
        --NonDaemonRunning;
    }
    throwNew(T, "java/lang/OutOfMemoryError",
             "unable to create native thread: " +
                 std::string(std::strerror(Rc)));
  }
}

void waitForNonDaemonThreads(VMThread *T) {
  NativeScope N(T);
  std::unique_lock<std::mutex> L(ThreadsLock);
  ThreadsCv.wait(L, [] { return NonDaemonRunning == 0; });
}

void waitForNonDaemonThreads() {
  std::unique_lock<std::mutex> L(ThreadsLock);
  ThreadsCv.wait(L, [] { return NonDaemonRunning == 0; });
}

bool isAlive(VMThread *Target) {
  std::lock_guard<std::mutex> G(ThreadsLock);
  return Target->Alive;
}

void setDaemon(VMThread *T, VMThread *Target, bool On) {
  std::lock_guard<std::mutex> G(ThreadsLock);
  if (Target->Started) {
    throwNew(T, "java/lang/IllegalThreadStateException");
    return;
  }
  Target->Daemon = On;
}

// Interruption. The thread's one interrupt flag is the runtime's
// (jitlock_rt_interrupt); Object.wait is a plain jitlock_rt_wait, which the
// runtime ends with JITLOCK_EINTERRUPTED and never loses a notify to. Sleep
// and join block natively on ThreadsCv, which interruptThread signals under
// ThreadsLock after setting the flag: a sleeper checks the flag under that
// lock, so the wake-up cannot fall between its check and its wait.

void interruptibleWait(VMThread *T, Object *O, int64_t Millis) {
  if (Millis < 0) {
    throwNew(T, "java/lang/IllegalArgumentException",
             "timeout value is negative");
    return;
  }
  if (!jitlock_rt_holds_lock(T->Rt, O)) {
    throwNew(T, "java/lang/IllegalMonitorStateException",
             "current thread is not owner");
    return;
  }
  // Past ~30 years is ~30 years, as in deadlineIn.
  constexpr int64_t MaxMillis = int64_t(1'000'000'000'000);
  int Rc =
      Millis ? jitlock_rt_wait_timed(
                   T->Rt, O, uint64_t(std::min(Millis, MaxMillis)) * 1'000'000u)
             : jitlock_rt_wait(T->Rt, O);
  if (Rc == JITLOCK_OK || Rc == JITLOCK_ETIMEDOUT)
    return;
  if (Rc == JITLOCK_EINTERRUPTED)
    throwNew(T, "java/lang/InterruptedException");
  else
    throwNew(T, "java/lang/IllegalMonitorStateException",
             "current thread is not owner");
}

void interruptThread(VMThread *Target) {
  {
    std::lock_guard<std::mutex> G(ThreadsLock);
    if (Target->Rt)
      jitlock_rt_interrupt(Target->Rt);
    else if (Target->Alive)
      Target->PendingInterrupt = true; // started, not attached yet
    // Interrupting a thread that is not alive has no effect (as HotSpot).
  }
  ThreadsCv.notify_all();
}

bool isInterrupted(VMThread *Target) {
  std::lock_guard<std::mutex> G(ThreadsLock);
  if (Target->Rt)
    return jitlock_rt_is_interrupted(Target->Rt) == 1;
  return Target->PendingInterrupt;
}

bool clearInterrupt(VMThread *T) {
  return jitlock_rt_clear_interrupt(T->Rt) == 1;
}

namespace {
bool interruptedLocked(VMThread *T) {
  return jitlock_rt_is_interrupted(T->Rt) == 1;
}
} // namespace

bool sleepInterruptibly(VMThread *T, int64_t Millis) {
  auto Deadline = deadlineIn(Millis);
  {
    NativeScope N(T);
    std::unique_lock<std::mutex> L(ThreadsLock);
    while (!interruptedLocked(T)) {
      if (ThreadsCv.wait_until(L, Deadline) == std::cv_status::timeout)
        break;
    }
  }
  return !clearInterrupt(T);
}

bool joinThread(VMThread *T, VMThread *Target, int64_t Millis) {
  auto Deadline = deadlineIn(Millis);
  NativeScope N(T);
  std::unique_lock<std::mutex> L(ThreadsLock);
  while (Target->Alive && !interruptedLocked(T)) {
    if (!Millis)
      ThreadsCv.wait(L);
    else if (ThreadsCv.wait_until(L, Deadline) == std::cv_status::timeout)
      break;
  }
  L.unlock();
  return !clearInterrupt(T);
}

} // namespace jitlock::java
