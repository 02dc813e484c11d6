//===- main.cpp - A baseline JIT of one's own on asmjit, with jitlock
//------===//
//
// What a baseline tier on asmjit does to use jitlock's monitors:
//
//   1. emit, with jitlock::emitters, a method that loads the current thread
//      from TLS once (emitLoadThread), then loops over
//        monitor enter (inline fast path), obj.count += 1, monitor exit,
//        a safepoint poll
//      with the three slow calls out of the hot path, after the return
//      (SlowPathMode::Labels and the emit*SlowCall functions);
//   2. run it on N attached threads over a pool of shared objects, while a
//      VM thread deflates idle monitors now and then (it stops the threads
//      at their polls to do so; the first run only), and check every count
//      exactly;
//   3. before the pool's memory is reused for new objects, and before it is
//      freed, deflate the idle monitors, so that no monitor still refers to
//      the memory; then reuse it for a second run, and free it;
//   4. emit a recursive method whose entry checks the stack (emitStackBang,
//      before the prologue, with ExtraBytes the prologue's size), and enter
//      it through jitlock_rt_call_guarded: a deliberate runaway recursion,
//      holding its object's lock at every level, overflows, and the guarded
//      call returns JITLOCK_ESTACK_OVERFLOW with every hold released. An
//      overflow outside any guarded call aborts the process.
//
// Usage: asmjit-baseline-example [threads] [rounds]. Exit status 0 when
// every count is exact, 1 otherwise.
//
//===----------------------------------------------------------------------===//
#include "jitlock/Emitters.h"
#include "jitlock/jitlock_rt.h"

#include <asmjit/x86.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#if !defined(__x86_64__)
#error "this example emits x86_64 code"
#endif

namespace x86 = asmjit::x86;
namespace emit = jitlock::emit;

namespace {

/// An object of the embedder's language: the header word at offset 0 (the
/// runtime's default header_offset), then a field.
struct Object {
  uint64_t Header;
  uint64_t Count;
};

/// How often each thread runs the method on each object, and for how many
/// increments per call.
constexpr uint64_t PerCall = 2000;
constexpr unsigned NumObjects = 3;

using BumpFn = void (*)(Object *Obj, uint64_t N);

//===-- Step 1: the method
//--------------------------------------------------===//

/// Keeps the first error of a series of emitter calls.
struct Checked {
  asmjit::Error Err = asmjit::kErrorOk;
  void operator()(asmjit::Error E) {
    if (Err == asmjit::kErrorOk)
      Err = E;
  }
};

/// void bump(Object *obj, uint64_t n): n times
///   synchronized (obj) { obj->Count += 1 }  then a safepoint poll.
asmjit::Error emitBump(asmjit::JitRuntime &Rt, BumpFn &Out) {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  asmjit::CodeHolder Code;
  Code.init(Rt.environment());
  x86::Assembler A(&Code);
  Checked Ok;

  // The SysV arguments stay where they are: obj in rdi, n in rsi. The thread
  // lives in r12, callee-saved, so it is saved first. rax (cmpxchg's
  // operand), rcx and rdx are the sequences' scratch registers.
  const emit::x64::MonitorOperands Ops{x86::rdi, x86::r12, x86::rax, x86::rcx,
                                       x86::rdx};
  const emit::x64::SafepointPollOperands PollOps{x86::r12};
  emit::SlowPathLabels EnterSlow, ExitSlow, PollSlow;
  asmjit::Label Loop = A.newLabel(), Done = A.newLabel();

  Ok(A.push(x86::r12));
  // The current jitlock_thread, from TLS, once per call: its address never
  // changes for the life of the OS thread.
  Ok(emit::x64::emitLoadThread(A, L, Ops.Thread));
  Ok(A.test(x86::rsi, x86::rsi));
  Ok(A.jz(Done));
  Ok(A.bind(Loop));
  Ok(emit::x64::emitMonitorEnter(A, L, Ops, emit::SlowPathMode::Labels,
                                 &EnterSlow));
  // A plain read-modify-write: only the monitor keeps increments apart.
  Ok(A.inc(x86::qword_ptr(x86::rdi, offsetof(Object, Count))));
  Ok(emit::x64::emitMonitorExit(A, L, Ops, emit::SlowPathMode::Labels,
                                &ExitSlow));
  // A loop must reach a poll in bounded time, or a safepoint (the VM
  // thread's deflation below) waits for it.
  Ok(emit::x64::emitSafepointPoll(A, L, PollOps, emit::SlowPathMode::Labels,
                                  &PollSlow));
  Ok(A.dec(x86::rsi));
  Ok(A.jnz(Loop));
  Ok(A.bind(Done));
  Ok(A.pop(x86::r12));
  Ok(A.ret());
  // The slow calls, cold, after the return: each calls the runtime with
  // every register preserved and jumps back behind its sequence.
  Ok(emit::x64::emitSlowCall(A, /*Enter=*/true, Ops, EnterSlow));
  Ok(emit::x64::emitSlowCall(A, /*Enter=*/false, Ops, ExitSlow));
  Ok(emit::x64::emitSafepointPollSlowCall(A, PollOps, PollSlow));
  if (Ok.Err != asmjit::kErrorOk)
    return Ok.Err;
  return Rt.add(&Out, &Code);
}

//===-- Step 4 (emitted here): a method that checks its stack -------------===//

using DeepFn = void (*)(Object *Obj, uint64_t Depth);

/// void deep(Object *obj, uint64_t depth):
///   synchronized (obj) { if (depth) deep(obj, depth - 1); obj->Count += 1 }
/// Its entry checks the stack against the thread's watermark first.
asmjit::Error emitDeep(asmjit::JitRuntime &Rt, DeepFn &Out) {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  asmjit::CodeHolder Code;
  Code.init(Rt.environment());
  x86::Assembler A(&Code);
  Checked Ok;

  // The prologue below pushes r12 and rbx and reserves 8 bytes (which keeps
  // rsp 16-byte aligned at the recursive call): ExtraBytes is those 24
  // bytes, so that the check covers the whole frame before any of it is
  // written.
  constexpr uint32_t FrameBytes = 24;
  // The bang comes before the prologue, so it may use only scratch
  // registers: the thread is loaded into rax first (emitLoadThread writes
  // nothing else), and rcx is the bang's scratch.
  const emit::x64::StackBangOperands BangOps{x86::rax, x86::rcx};
  const emit::x64::MonitorOperands Ops{x86::rdi, x86::r12, x86::rax, x86::rcx,
                                       x86::rdx};
  emit::SlowPathLabels BangSlow, EnterSlow, ExitSlow;
  asmjit::Label Entry = A.newLabel(), Leaf = A.newLabel();

  Ok(A.bind(Entry));
  Ok(emit::x64::emitLoadThread(A, L, BangOps.Thread));
  Ok(emit::x64::emitStackBang(A, L, BangOps, FrameBytes,
                              emit::BangMode::Watermark,
                              emit::SlowPathMode::Labels, &BangSlow));
  Ok(A.push(x86::r12));
  Ok(A.push(x86::rbx));
  Ok(A.sub(x86::rsp, 8));
  Ok(A.mov(Ops.Thread, BangOps.Thread));
  Ok(A.mov(x86::rbx, x86::rdi)); // obj, kept across the call
  Ok(emit::x64::emitMonitorEnter(A, L, Ops, emit::SlowPathMode::Labels,
                                 &EnterSlow));
  Ok(A.test(x86::rsi, x86::rsi));
  Ok(A.jz(Leaf));
  Ok(A.dec(x86::rsi));
  Ok(A.call(Entry));
  Ok(A.mov(x86::rdi, x86::rbx));
  Ok(A.bind(Leaf));
  Ok(A.inc(x86::qword_ptr(x86::rdi, offsetof(Object, Count))));
  Ok(emit::x64::emitMonitorExit(A, L, Ops, emit::SlowPathMode::Labels,
                                &ExitSlow));
  Ok(A.add(x86::rsp, 8));
  Ok(A.pop(x86::rbx));
  Ok(A.pop(x86::r12));
  Ok(A.ret());
  Ok(emit::x64::emitStackBangSlowCall(A, BangOps, FrameBytes, BangSlow));
  Ok(emit::x64::emitSlowCall(A, /*Enter=*/true, Ops, EnterSlow));
  Ok(emit::x64::emitSlowCall(A, /*Enter=*/false, Ops, ExitSlow));
  if (Ok.Err != asmjit::kErrorOk)
    return Ok.Err;
  return Rt.add(&Out, &Code);
}

/// Runs deep(obj, Depth) on a new attached thread, entered the way every
/// entry into JIT code should be: through jitlock_rt_call_guarded, which
/// turns a stack overflow inside into JITLOCK_ESTACK_OVERFLOW.
int runDeepGuarded(DeepFn Deep, Object *Obj, uint64_t Depth, size_t &Released) {
  int Status = JITLOCK_OK;
  std::thread Worker([&] {
    jitlock_thread *Self = jitlock_rt_attach();
    struct Call {
      DeepFn Fn;
      Object *Obj;
      uint64_t Depth;
    } Args{Deep, Obj, Depth};
    jitlock_guarded_result Result = {};
    Status = jitlock_rt_call_guarded(
        Self,
        [](void *P) {
          auto *C = static_cast<Call *>(P);
          C->Fn(C->Obj, C->Depth);
        },
        &Args, &Result);
    Released = Result.released_count;
    if (jitlock_rt_detach() != JITLOCK_OK)
      Status = -1;
  });
  Worker.join();
  return Status;
}

/// A bounded recursion, then a runaway one: the second overflows and is
/// recovered, and the object is free again afterwards.
bool runDeep(DeepFn Deep) {
  Object Obj{1, 0};
  size_t Released = 0;
  int Status = runDeepGuarded(Deep, &Obj, 99, Released);
  bool Ok = Status == JITLOCK_OK && Obj.Count == 100;
  std::printf("deep(100 levels): %s, count = %llu\n",
              jitlock_rt_status_name(Status), (unsigned long long)Obj.Count);
  // Far deeper than any thread stack: it must overflow.
  Status = runDeepGuarded(Deep, &Obj, uint64_t(1) << 40, Released);
  jitlock_lock_info Info;
  bool Free = jitlock_rt_inspect(&Obj, &Info) == JITLOCK_OK &&
              Info.state != JITLOCK_STATE_FAST && Info.holds == 0;
  std::printf("deep(runaway): %s, %zu holds released, object %s\n",
              jitlock_rt_status_name(Status), Released,
              Free ? "free" : "still held");
  Ok &= Status == JITLOCK_ESTACK_OVERFLOW && Released > 0 && Free;
  // The thread that overflowed is gone; the object serves the next one.
  Obj.Count = 0;
  Status = runDeepGuarded(Deep, &Obj, 9, Released);
  Ok &= Status == JITLOCK_OK && Obj.Count == 10;
  // Obj's memory goes away: its monitor (the recursion inflated it) with it.
  jitlock_rt_deflate_idle();
  jitlock_lock_info After;
  Ok &= jitlock_rt_inspect(&Obj, &After) == JITLOCK_OK &&
        After.state == JITLOCK_STATE_UNLOCKED;
  return Ok;
}

//===-- Step 2: the threads
//------------------------------------------------===//

struct RunReport {
  unsigned Failures = 0;
  uint64_t DeflatedWhileRunning = 0;
};

/// Each of `Threads` threads calls bump on every object in turn, `Rounds`
/// times; with `VmDeflates`, a VM thread deflates idle monitors until they
/// are done.
RunReport runThreads(BumpFn Bump, Object *Pool, unsigned Threads,
                     unsigned Rounds, bool VmDeflates) {
  RunReport Report;
  std::atomic<unsigned> Ready{0}, Finished{0}, Failures{0};
  std::atomic<bool> Go{false};
  std::vector<std::thread> Workers;
  for (unsigned T = 0; T < Threads; ++T)
    Workers.emplace_back([&, T] {
      jitlock_thread *Self = jitlock_rt_attach();
      // Waiting outside the runtime: `native`, so that the VM thread's
      // safepoints do not wait for this thread meanwhile.
      jitlock_rt_enter_native(Self);
      Ready.fetch_add(1);
      while (!Go.load())
        std::this_thread::yield();
      jitlock_rt_leave_native(Self);
      for (unsigned R = 0; R < Rounds; ++R)
        for (unsigned O = 0; O < NumObjects; ++O)
          Bump(&Pool[(O + T) % NumObjects], PerCall);
      // A thread detaches holding no lock; detach refuses otherwise.
      if (jitlock_rt_detach() != JITLOCK_OK)
        Failures.fetch_add(1);
      Finished.fetch_add(1);
    });

  // The VM thread, not attached: deflation stops every attached thread at
  // a poll (or where it is parked) and returns the idle monitors' objects
  // their headers.
  std::thread Vm([&] {
    while (VmDeflates && Finished.load() != Threads) {
      Report.DeflatedWhileRunning += jitlock_rt_deflate_idle();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });

  while (Ready.load() != Threads)
    std::this_thread::yield();
  Go.store(true);
  for (std::thread &W : Workers)
    W.join();
  Vm.join();
  Report.Failures = Failures.load();
  return Report;
}

bool checkCounts(const Object *Pool, unsigned Threads, unsigned Rounds,
                 const char *Run) {
  const uint64_t Expected = uint64_t(Threads) * Rounds * PerCall;
  bool Ok = true;
  for (unsigned O = 0; O < NumObjects; ++O) {
    std::printf("%s: object %u count = %llu (expected %llu)\n", Run, O,
                (unsigned long long)Pool[O].Count,
                (unsigned long long)Expected);
    Ok &= Pool[O].Count == Expected;
  }
  return Ok;
}

//===-- Step 3: deflation before the memory is reused
//-----------------------===//

/// Deflates the pool's idle monitors and checks that none is left: every
/// header is back in its unlocked form, and the runtime holds no monitor
/// that names the memory.
bool releasePool(const Object *Pool, const char *Why) {
  size_t Deflated = jitlock_rt_deflate_idle();
  jitlock_rt_stats Stats;
  jitlock_rt_get_stats(&Stats);
  std::printf("%s: deflated %zu idle monitors, %llu left\n", Why, Deflated,
              (unsigned long long)Stats.monitors_alive);
  bool Ok = Stats.monitors_alive == 0;
  for (unsigned O = 0; O < NumObjects; ++O) {
    jitlock_lock_info Info;
    Ok &= jitlock_rt_inspect(&Pool[O], &Info) == JITLOCK_OK &&
          Info.state == JITLOCK_STATE_UNLOCKED;
  }
  return Ok;
}

void initPool(Object *Pool) {
  for (unsigned O = 0; O < NumObjects; ++O)
    Pool[O] = Object{1, 0}; // unlocked, no identity hash
}

} // namespace

int main(int Argc, char **Argv) {
  const unsigned Threads = Argc > 1 ? unsigned(std::atoi(Argv[1])) : 4;
  const unsigned Rounds = Argc > 2 ? unsigned(std::atoi(Argv[2])) : 50;
  if (Threads == 0 || Rounds == 0) {
    std::fprintf(stderr, "usage: asmjit-baseline-example [threads > 0] "
                         "[rounds > 0]\n");
    return 1;
  }

  asmjit::JitRuntime Rt;
  BumpFn Bump = nullptr;
  if (asmjit::Error E = emitBump(Rt, Bump)) {
    std::fprintf(stderr, "asmjit-baseline-example: emitting failed: %s\n",
                 asmjit::DebugUtils::errorAsString(E));
    return 1;
  }

  auto Pool = std::make_unique<Object[]>(NumObjects);
  bool Ok = true;

  // The first run.
  initPool(Pool.get());
  RunReport First = runThreads(Bump, Pool.get(), Threads, Rounds,
                               /*VmDeflates=*/true);
  Ok &=
      First.Failures == 0 && checkCounts(Pool.get(), Threads, Rounds, "run 1");
  std::printf("run 1: %llu monitors deflated while the threads ran\n",
              (unsigned long long)First.DeflatedWhileRunning);

  // The same memory becomes new objects: no monitor may still name it, or
  // deflating that monitor later would write an old header into a new
  // object.
  Ok &= releasePool(Pool.get(), "before reuse");
  initPool(Pool.get());
  // The second run leaves its monitors for the deflation before free.
  RunReport Second = runThreads(Bump, Pool.get(), Threads, Rounds,
                                /*VmDeflates=*/false);
  Ok &=
      Second.Failures == 0 && checkCounts(Pool.get(), Threads, Rounds, "run 2");

  // The memory is freed: the same rule.
  Ok &= releasePool(Pool.get(), "before free");
  Pool.reset();

  // Step 4: a stack overflow in JIT code, recovered.
  DeepFn Deep = nullptr;
  if (asmjit::Error E = emitDeep(Rt, Deep)) {
    std::fprintf(stderr, "asmjit-baseline-example: emitting failed: %s\n",
                 asmjit::DebugUtils::errorAsString(E));
    return 1;
  }
  Ok &= runDeep(Deep);

  jitlock_rt_stats Stats;
  jitlock_rt_get_stats(&Stats);
  std::printf("runtime calls: %llu (contended enters %llu, inflations %llu)\n",
              (unsigned long long)Stats.slow_path_calls,
              (unsigned long long)Stats.contended_enters,
              (unsigned long long)Stats.inflations);
  Ok &= jitlock_rt_shutdown() == JITLOCK_OK;
  Rt.release(Bump);
  Rt.release(Deep);
  std::printf("%s\n", Ok ? "OK" : "FAILED");
  return Ok ? 0 : 1;
}
