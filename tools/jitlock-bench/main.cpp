//===- jitlock-bench/main.cpp - Locking schemes, measured side by side ----===//
//
// The benchmark every performance decision in jitlock is judged by: the
// monitor shapes (docs/benchmarks.md, "What is measured") through every path,
// each reported as the counter ns_per_pair with 100 lock+unlock pairs per
// benchmark iteration. docs/benchmarks.md has the method and the results.
//
// Paths (benchmark names are <shape>/<path>; the floor is just `floor`):
//   llvm     shapes.ll lowered by the jitlock passes and JIT-compiled here
//            (jitlock::JitSession, TLS mode, this process's layout)
//   asmjit   the same loops emitted with the asmjit emitters
//   runtime  C++ loops calling jitlock_rt_monitor_enter/exit, as an
//            interpreter would
//   heavy    shapes.ll lowered for heavy monitors, on the runtime configured
//            JITLOCK_LOCKING_HEAVY: every enter of an object without a
//            monitor inflates it (the scheme lightweight locking replaces)
//   pthread  a pthread_mutex_t per object (simple, contended2, churn)
//   alloc    churn only: the allocator and the "GC" without any lock, so that
//            the locking cost of churn can be read off
//
// floor/lockstack is the floor plus a fast lock's lock-stack stores (no
// loads, no checks): what the lock stack itself costs next to the CAS.
//
// Every path runs the same loop: a call per benchmark iteration that does 100
// pairs, each pair with one plain load+add+store of the object's payload
// inside the lock. All kernels share one call type, (thread, a, b, n).
//
// Besides ns_per_pair every single-threaded run reports inflations_per_pair
// (from the runtime's statistics) and monitors_alive after the final
// deflation; contended2 reports monitors_alive after both threads detached.
// Each run checks its payload counts and the runtime's return codes and fails
// (SkipWithError) when they are wrong.
//
// Safepoints (docs/benchmarks.md, "Safepoints"), from shapes.ll only:
//   poll/none, poll/llvm, poll/unrolled
//            a loop of payload increments without a poll, with one per
//            iteration, and without one as LLVM unrolls it; ns_per_iter
//   ttsp/N   N attached threads loop with a poll per iteration while this
//            (unattached) thread takes safepoints: median, p99 and max of
//            the time-to-safepoint and of stop+release, in µs
//   handshake/one/N, handshake/all/N
//            the same threads; one handshake per iteration with one of them
//            in turn, or with all of them: median, p99 and max latency
//
// Extra options, besides Google Benchmark's:
//   --jitlock-print-code     print the JIT-compiled llvm and heavy kernels
//                            as assembly and the asmjit kernels as listings,
//                            then exit (what docs/benchmarks.md discusses)
//   --jitlock-spin-limit=N   the runtime's spin_limit (default 64): how long
//                            a contended enter spins before it parks
//   --jitlock-poll-loop=P:N  run poll/P's loop once for N iterations, then
//                            exit (instruction counts under callgrind,
//                            scripts/poll-instructions.py)
//
//===----------------------------------------------------------------------===//
#include "jitlock/Emitters.h"
#include "jitlock/JIT.h"
#include "jitlock/Passes.h"
#include "jitlock/jitlock_rt.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/raw_ostream.h"

#include <asmjit/x86.h>
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sys/single_threaded.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#ifndef JITLOCK_BUILD_TYPE
#define JITLOCK_BUILD_TYPE "unknown"
#endif

namespace {

/// The IR of shapes.ll, embedded by CMake.
const char ShapesIR[] =
#include "ShapesIR.inc"
    ;

constexpr uint64_t PairsPerIteration = 100;
/// The churn arena: 40 iterations' worth of objects (256000 bytes, within
/// L2), then the "GC" deflates idle monitors and the bump pointer restarts.
constexpr uint64_t ArenaIterations = 40;
constexpr uint64_t ArenaObjects = ArenaIterations * PairsPerIteration;

/// An object as the benchmark lays it out: the header where the runtime's
/// default layout expects it, one payload field, and room for the pthread
/// path's mutex, so that every path allocates and touches the same 64 bytes.
struct alignas(64) Object {
  uint64_t Header;
  uint64_t Payload;
  pthread_mutex_t Mutex;
};
static_assert(sizeof(Object) == 64, "shapes.ll's %Object is 64 bytes");
static_assert(offsetof(Object, Payload) == 8, "shapes.ll's payload is at 8");

void resetObject(Object &O) {
  memset(&O, 0, sizeof(O));
  O.Header = 1;
}

/// Every kernel does N pairs. The llvm kernels ignore Thread (lowered code
/// finds its thread through the thread pointer); the asmjit kernels keep it
/// in a register as a baseline JIT does; the runtime kernels pass it on.
using KernelFn = void (*)(jitlock_thread *Thread, Object *A, Object *B,
                          uint64_t N);

enum Kernel {
  KSimple,
  KRecursive,
  KSerial,
  KChurn,
  KFloor,
  KFloorLockStack,
  // The safepoint kernels (llvm only).
  KPollNone,
  KPollLlvm,
  KPollUnrolled,
  KSpin,
  NumKernels
};
const char *const KernelSymbols[NumKernels] = {
    "bench_simple",    "bench_recursive", "bench_serial",
    "bench_churn",     "bench_floor",     "bench_floor_lockstack",
    "bench_poll_none", "bench_poll_llvm", "bench_poll_unrolled",
    "bench_spin"};

/// Calls JIT-compiled code. UBSan's -fsanitize=function (in the asan preset)
/// checks a signature word just before the callee, which JIT code does not
/// have, so the call opts out.
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
inline void
callKernel(KernelFn Fn, jitlock_thread *T, Object *A, Object *B, uint64_t N) {
  Fn(T, A, B, N);
}

/// Set by the C++ kernels when a runtime or pthread call fails; each run
/// checks it after its loop (an OR per call keeps the loop honest).
std::atomic<bool> KernelFailed{false};

//===----------------------------------------------------------------------===//
// The runtime, pthread and allocation-only kernels
//===----------------------------------------------------------------------===//

/// The churn allocator, shared by every path: the next 64 bytes of the arena,
/// zeroed (which is also PTHREAD_MUTEX_INITIALIZER, checked in main), with
/// the unlocked header. shapes.ll and the asmjit churn kernel do the same.
inline Object *allocObject(Object *Slot) {
  memset(Slot, 0, sizeof(Object));
  Slot->Header = 1;
  return Slot;
}

__attribute__((noinline)) void rtSimple(jitlock_thread *T, Object *A, Object *,
                                        uint64_t N) {
  int Bad = 0;
  for (uint64_t I = 0; I < N; ++I) {
    Bad |= jitlock_rt_monitor_enter(T, A);
    A->Payload = A->Payload + 1;
    Bad |= jitlock_rt_monitor_exit(T, A);
  }
  if (Bad)
    KernelFailed = true;
}

__attribute__((noinline)) void rtRecursive(jitlock_thread *T, Object *A,
                                           Object *, uint64_t N) {
  int Bad = 0;
  for (uint64_t I = 0; I < N; ++I) {
    Bad |= jitlock_rt_monitor_enter(T, A);
    Bad |= jitlock_rt_monitor_enter(T, A);
    A->Payload = A->Payload + 1;
    Bad |= jitlock_rt_monitor_exit(T, A);
    Bad |= jitlock_rt_monitor_exit(T, A);
  }
  if (Bad)
    KernelFailed = true;
}

__attribute__((noinline)) void rtSerial(jitlock_thread *T, Object *A, Object *B,
                                        uint64_t N) {
  int Bad = 0;
  for (uint64_t I = 0; I < N; ++I) {
    Bad |= jitlock_rt_monitor_enter(T, A);
    Bad |= jitlock_rt_monitor_enter(T, B);
    B->Payload = B->Payload + 1;
    Bad |= jitlock_rt_monitor_exit(T, B);
    Bad |= jitlock_rt_monitor_exit(T, A);
  }
  if (Bad)
    KernelFailed = true;
}

__attribute__((noinline)) void rtChurn(jitlock_thread *T, Object *Arena,
                                       Object *, uint64_t N) {
  int Bad = 0;
  for (uint64_t I = 0; I < N; ++I) {
    Object *O = allocObject(Arena + I);
    Bad |= jitlock_rt_monitor_enter(T, O);
    O->Payload = O->Payload + 1;
    Bad |= jitlock_rt_monitor_exit(T, O);
  }
  if (Bad)
    KernelFailed = true;
}

__attribute__((noinline)) void pthSimple(jitlock_thread *, Object *A, Object *,
                                         uint64_t N) {
  int Bad = 0;
  for (uint64_t I = 0; I < N; ++I) {
    Bad |= pthread_mutex_lock(&A->Mutex);
    A->Payload = A->Payload + 1;
    Bad |= pthread_mutex_unlock(&A->Mutex);
  }
  if (Bad)
    KernelFailed = true;
}

__attribute__((noinline)) void pthChurn(jitlock_thread *, Object *Arena,
                                        Object *, uint64_t N) {
  int Bad = 0;
  for (uint64_t I = 0; I < N; ++I) {
    Object *O = allocObject(Arena + I);
    Bad |= pthread_mutex_lock(&O->Mutex);
    O->Payload = O->Payload + 1;
    Bad |= pthread_mutex_unlock(&O->Mutex);
  }
  if (Bad)
    KernelFailed = true;
}

/// churn/alloc: the allocation and the increment, with compiler barriers
/// where the lock operations would be, so that the compiler neither merges
/// the objects' stores nor vectorizes across objects.
__attribute__((noinline)) void allocChurn(jitlock_thread *, Object *Arena,
                                          Object *, uint64_t N) {
  for (uint64_t I = 0; I < N; ++I) {
    Object *O = allocObject(Arena + I);
    benchmark::ClobberMemory();
    O->Payload = O->Payload + 1;
    benchmark::ClobberMemory();
  }
}

//===----------------------------------------------------------------------===//
// The asmjit kernels
//===----------------------------------------------------------------------===//

namespace jx = jitlock::emit::x64;
using jitlock::emit::SlowPathLabels;
using jitlock::emit::SlowPathMode;

/// Emits one kernel as a baseline JIT would compile the loop: the thread in
/// a register for the whole function, every slow-path call after the `ret`
/// (SlowPathMode::Labels), and no frame: every register used is
/// caller-saved, and the slow-path glue saves and realigns by itself.
///
/// SysV arguments: rdi = thread, rsi = a, rdx = b, rcx = n. The count moves
/// to r8 (rcx becomes the second scratch register); churn's cursor is r10.
/// r9, otherwise free, is the third scratch register: the enter keeps the
/// lock-stack top in it across its CAS instead of reloading it.
asmjit::Error emitKernel(asmjit::x86::Assembler &A, const jitlock_rt_layout &L,
                         Kernel K) {
  using namespace asmjit;
  using namespace asmjit::x86;
  const Gp Thread = rdi, ObjA = rsi, ObjB = rdx, Count = r8, Cursor = r10;
  auto Ops = [&](Gp Obj) {
    return jx::MonitorOperands{Obj, Thread, rax, rcx, r9};
  };
  const int32_t PayloadOff = int32_t(offsetof(Object, Payload));

  struct Cold {
    SlowPathLabels Labels;
    bool Enter;
    jx::MonitorOperands Ops;
  };
  std::vector<std::unique_ptr<Cold>> ColdCalls;
  auto Monitor = [&](bool Enter, Gp Obj) -> Error {
    ColdCalls.push_back(std::make_unique<Cold>(Cold{{}, Enter, Ops(Obj)}));
    Cold &C = *ColdCalls.back();
    return Enter ? jx::emitMonitorEnter(A, L, C.Ops, SlowPathMode::Labels,
                                        &C.Labels)
                 : jx::emitMonitorExit(A, L, C.Ops, SlowPathMode::Labels,
                                       &C.Labels);
  };

  Label Loop = A.newLabel(), Ret = A.newLabel();
  A.mov(Count, rcx);
  A.test(Count, Count);
  A.jz(Ret);
  if (K == KChurn) {
    A.mov(Cursor, ObjA);
    A.xorps(xmm0, xmm0);
  }
  A.align(AlignMode::kCode, 16);
  A.bind(Loop);
  Error E = kErrorOk;
  switch (K) {
  case KSimple:
    if ((E = Monitor(true, ObjA)))
      return E;
    A.add(qword_ptr(ObjA, PayloadOff), 1);
    if ((E = Monitor(false, ObjA)))
      return E;
    break;
  case KRecursive:
    if ((E = Monitor(true, ObjA)) || (E = Monitor(true, ObjA)))
      return E;
    A.add(qword_ptr(ObjA, PayloadOff), 1);
    if ((E = Monitor(false, ObjA)) || (E = Monitor(false, ObjA)))
      return E;
    break;
  case KSerial:
    if ((E = Monitor(true, ObjA)) || (E = Monitor(true, ObjB)))
      return E;
    A.add(qword_ptr(ObjB, PayloadOff), 1);
    if ((E = Monitor(false, ObjB)) || (E = Monitor(false, ObjA)))
      return E;
    break;
  case KChurn:
    // The shared allocator: zero the 64 bytes, then the unlocked header.
    for (int32_t Off = 0; Off < 64; Off += 16)
      A.movaps(xmmword_ptr(Cursor, Off), xmm0);
    A.mov(qword_ptr(Cursor, 0), 1);
    if ((E = Monitor(true, Cursor)))
      return E;
    A.add(qword_ptr(Cursor, PayloadOff), 1);
    if ((E = Monitor(false, Cursor)))
      return E;
    A.add(Cursor, int32_t(sizeof(Object)));
    break;
  default:
    return kErrorInvalidArgument;
  }
  A.sub(Count, 1);
  A.jnz(Loop);
  A.bind(Ret);
  A.ret();
  for (const auto &C : ColdCalls)
    if ((E = jx::emitSlowCall(A, C->Enter, C->Ops, C->Labels)))
      return E;
  return kErrorOk;
}

struct AsmjitKernels {
  asmjit::JitRuntime RT;
  KernelFn Fns[NumKernels] = {};
  std::string Listings[NumKernels];
  std::string Error;

  bool build(const jitlock_rt_layout &L) {
    for (Kernel K : {KSimple, KRecursive, KSerial, KChurn}) {
      asmjit::CodeHolder Code;
      Code.init(RT.environment());
      asmjit::StringLogger Logger;
      Code.setLogger(&Logger);
      asmjit::x86::Assembler A(&Code);
      void *Fn = nullptr;
      asmjit::Error E = emitKernel(A, L, K);
      if (!E)
        E = RT.add(&Fn, &Code);
      if (E) {
        Error = std::string("asmjit kernel ") + KernelSymbols[K] + ": " +
                asmjit::DebugUtils::errorAsString(E);
        return false;
      }
      Fns[K] = reinterpret_cast<KernelFn>(Fn);
      Listings[K].assign(Logger.data(), Logger.dataSize());
    }
    return true;
  }
};

//===----------------------------------------------------------------------===//
// The llvm and heavy kernels
//===----------------------------------------------------------------------===//

struct LlvmKernels {
  std::unique_ptr<jitlock::JitSession> Session;
  KernelFn Fns[NumKernels] = {};
  std::string Error;

  bool build(jitlock::LockingMode Mode, const char *Name,
             const jitlock_rt_layout &L) {
    std::string IR = ShapesIR;
    const std::string Token = "JITLOCK_TOP_OFFSET";
    for (size_t At; (At = IR.find(Token)) != std::string::npos;)
      IR.replace(At, Token.size(), std::to_string(L.lock_stack_top_offset));
    jitlock::JitOptions Opts;
    Opts.Locking = Mode;
    auto S = jitlock::JitSession::loadBuffer(IR, Name, Opts);
    if (!S) {
      Error = llvm::toString(S.takeError());
      return false;
    }
    Session = std::move(*S);
    if (Session->lockingMode() != Mode) {
      Error = std::string(Name) + ": lowered for " +
              jitlock::lockingModeName(Session->lockingMode()).str() +
              " locking, not " + jitlock::lockingModeName(Mode).str();
      return false;
    }
    for (int K = 0; K < NumKernels; ++K) {
      if (llvm::Error E = Session->checkFunction(KernelSymbols[K],
                                                 "void (ptr, ptr, ptr, i64)")) {
        Error = llvm::toString(std::move(E));
        return false;
      }
      auto Fn = Session->lookupFunction<void(
          jitlock_thread *, Object *, Object *, uint64_t)>(KernelSymbols[K]);
      if (!Fn) {
        Error = llvm::toString(Fn.takeError());
        return false;
      }
      Fns[K] = *Fn;
    }
    return true;
  }
};

AsmjitKernels *Asmjit;
LlvmKernels *Llvm, *Heavy;

//===----------------------------------------------------------------------===//
// The runtime's locking mode
//===----------------------------------------------------------------------===//

/// Applies `Mode`. The runtime accepts a configuration only while no thread
/// is attached; every benchmark function detaches before it returns, so this
/// holds between runs.
/// The configuration every run uses, apart from the locking mode: the
/// defaults, with --jitlock-spin-limit applied.
jitlock_rt_config BaseConfig;

int setLockingMode(uint32_t Mode) {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  if (L.locking_mode == Mode)
    return JITLOCK_OK;
  jitlock_rt_detach();
  jitlock_rt_config Cfg = BaseConfig;
  Cfg.locking_mode = Mode;
  return jitlock_rt_configure(&Cfg);
}

uint32_t currentLockingMode() {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  return L.locking_mode;
}

/// Where a Setup callback's failure waits for the run to report it.
std::string SetupError;

//===----------------------------------------------------------------------===//
// The runs
//===----------------------------------------------------------------------===//

enum class Shape { Simple, Recursive, Serial, Inflated, Churn, Contended2 };
enum class Path {
  Llvm,
  Asmjit,
  Runtime,
  Heavy,
  Pthread,
  Alloc,
  Floor,
  FloorLockStack
};

const char *shapeName(Shape S) {
  switch (S) {
  case Shape::Simple:
    return "simple";
  case Shape::Recursive:
    return "recursive";
  case Shape::Serial:
    return "serial";
  case Shape::Inflated:
    return "inflated";
  case Shape::Churn:
    return "churn";
  case Shape::Contended2:
    return "contended2";
  }
  return "?";
}

const char *pathName(Path P) {
  switch (P) {
  case Path::Llvm:
    return "llvm";
  case Path::Asmjit:
    return "asmjit";
  case Path::Runtime:
    return "runtime";
  case Path::Heavy:
    return "heavy";
  case Path::Pthread:
    return "pthread";
  case Path::Alloc:
    return "alloc";
  case Path::Floor:
    return "floor";
  case Path::FloorLockStack:
    return "floor/lockstack";
  }
  return "?";
}

struct Case {
  Shape S;
  Path P;
  KernelFn Fn = nullptr;
  std::string Unavailable; ///< why Fn is null
  uint32_t Mode() const {
    return P == Path::Heavy ? JITLOCK_LOCKING_HEAVY
                            : JITLOCK_LOCKING_LIGHTWEIGHT;
  }
};

/// ns_per_pair: the benchmark's time (CPU time, or real time for
/// contended2) divided by the pairs done. As a counter: Pairs * 1e-9, a rate
/// (divided by the time in seconds), inverted. With threads, kAvgThreads
/// divides the summed pairs by the thread count: the time per pair that
/// each thread sees, as JMH reports @Threads runs.
benchmark::Counter nsPerPair(uint64_t Pairs, bool Threaded) {
  auto Flags = Threaded ? benchmark::Counter::kAvgThreadsRate
                        : benchmark::Counter::kIsRate;
  return benchmark::Counter(double(Pairs) * 1e-9,
                            Flags | benchmark::Counter::kInvert);
}

/// Inflates `O` by waiting on it with a zero timeout (a wait needs a
/// monitor); it stays inflated until a deflation.
bool inflate(jitlock_thread *T, Object *O) {
  if (jitlock_rt_monitor_enter(T, O) != JITLOCK_OK)
    return false;
  int RC = jitlock_rt_wait_timed(T, O, 0);
  if (jitlock_rt_monitor_exit(T, O) != JITLOCK_OK ||
      (RC != JITLOCK_OK && RC != JITLOCK_ETIMEDOUT))
    return false;
  jitlock_lock_info Info{};
  jitlock_rt_inspect(O, &Info);
  return Info.state == JITLOCK_STATE_INFLATED;
}

/// The churn arena, reused by every churn run (each run deflates before it
/// ends, so no monitor refers to it between runs).
Object *arena() {
  static Object *A = [] {
    void *P = aligned_alloc(alignof(Object), ArenaObjects * sizeof(Object));
    auto *Objs = static_cast<Object *>(P);
    for (uint64_t I = 0; I < ArenaObjects; ++I)
      resetObject(Objs[I]);
    return Objs;
  }();
  return A;
}

alignas(64) Object Objs[2];

void runSingle(benchmark::State &St, const Case &C) {
  if (!SetupError.empty())
    return St.SkipWithError(SetupError.c_str());
  if (!C.Fn)
    return St.SkipWithError(C.Unavailable.c_str());
  if (currentLockingMode() != C.Mode())
    return St.SkipWithError("the runtime is in the wrong locking mode");
  jitlock_thread *T = jitlock_rt_attach();
  if (!T)
    return St.SkipWithError("jitlock_rt_attach failed");
  KernelFailed = false;
  Object *A = &Objs[0], *B = &Objs[1];
  resetObject(*A);
  resetObject(*B);
  if (C.S == Shape::Inflated && !inflate(T, A)) {
    jitlock_rt_detach();
    return St.SkipWithError("could not inflate the object");
  }

  jitlock_rt_stats Before{}, After{};
  jitlock_rt_get_stats(&Before);
  const KernelFn Fn = C.Fn;
  if (C.S == Shape::Churn) {
    Object *Base = arena(), *End = Base + ArenaObjects, *Next = Base;
    for (auto _ : St) {
      // The "GC": recycle the arena; monitors of dead objects go first.
      if (Next == End) {
        jitlock_rt_deflate_idle();
        Next = Base;
      }
      callKernel(Fn, T, Next, nullptr, PairsPerIteration);
      Next += PairsPerIteration;
    }
  } else {
    for (auto _ : St)
      callKernel(Fn, T, A, B, PairsPerIteration);
  }
  jitlock_rt_get_stats(&After);
  const uint64_t Pairs = uint64_t(St.iterations()) * PairsPerIteration;

  // What must hold after the loop.
  std::string Error;
  if (KernelFailed)
    Error = "a runtime or pthread call failed";
  const uint64_t Counted = C.S == Shape::Serial  ? B->Payload
                           : C.S == Shape::Churn ? Pairs // checked below
                                                 : A->Payload;
  if (Error.empty() && Counted != Pairs)
    Error = "lost updates: the payload is " + std::to_string(Counted) +
            ", expected " + std::to_string(Pairs);
  if (Error.empty() && jitlock_rt_lock_stack(T, nullptr, 0) != 0)
    Error = "the lock stack is not empty after the run";

  // The final "GC", then what is left.
  jitlock_rt_deflate_idle();
  jitlock_rt_stats End{};
  jitlock_rt_get_stats(&End);
  if (Error.empty() && C.S == Shape::Churn && Pairs) {
    // The last object allocated was incremented exactly once, and is
    // unlocked (deflated, for the heavy path) with its header intact.
    const Object &Last = arena()[(Pairs - 1) % ArenaObjects];
    if (Last.Payload != 1 || Last.Header != 1)
      Error = "the last churn object was not incremented once and unlocked";
  }
  if (Error.empty() && jitlock_rt_detach() != JITLOCK_OK)
    Error = "jitlock_rt_detach failed: a lock is still held";
  if (!Error.empty())
    return St.SkipWithError(Error.c_str());

  St.counters["ns_per_pair"] = nsPerPair(Pairs, false);
  St.counters["inflations_per_pair"] =
      Pairs ? double(After.inflations - Before.inflations) / double(Pairs) : 0;
  St.counters["monitors_alive"] = double(End.monitors_alive);
}

/// contended2: one shared object, reset by the Setup callback before the
/// threads start.
alignas(64) Object Shared;
std::atomic<int> Finished{0};

/// The runtime's counters when the run started (for contended2's deltas).
jitlock_rt_stats StartStats;

/// What every run starts from, besides the locking mode.
void resetShared() {
  resetObject(Shared);
  Finished = 0;
  KernelFailed = false;
  jitlock_rt_get_stats(&StartStats);
}

void setupLightweight(const benchmark::State &) {
  int RC = setLockingMode(JITLOCK_LOCKING_LIGHTWEIGHT);
  SetupError = RC == JITLOCK_OK
                   ? ""
                   : std::string("cannot configure lightweight locking: ") +
                         jitlock_rt_status_name(RC);
  resetShared();
}

void setupHeavy(const benchmark::State &) {
  int RC = setLockingMode(JITLOCK_LOCKING_HEAVY);
  SetupError = RC == JITLOCK_OK ? ""
                                : std::string("cannot configure heavy "
                                              "locking: ") +
                                      jitlock_rt_status_name(RC);
  if (RC == JITLOCK_OK && currentLockingMode() != JITLOCK_LOCKING_HEAVY)
    SetupError = "the runtime did not switch to heavy locking";
  resetShared();
}

/// Back to the default, so that a filtered run order cannot leave the
/// runtime heavy for a lightweight benchmark.
void teardownHeavy(const benchmark::State &) {
  if (int RC = setLockingMode(JITLOCK_LOCKING_LIGHTWEIGHT))
    SetupError = std::string("cannot restore lightweight locking: ") +
                 jitlock_rt_status_name(RC);
}

void runContended(benchmark::State &St, const Case &C) {
  // Every thread must leave through the Finished count below, even on an
  // error, or thread 0 would wait forever.
  std::string Error = SetupError;
  if (Error.empty() && !C.Fn)
    Error = C.Unavailable;
  if (Error.empty() && currentLockingMode() != C.Mode())
    Error = "the runtime is in the wrong locking mode";
  jitlock_thread *T = Error.empty() ? jitlock_rt_attach() : nullptr;
  if (Error.empty() && !T)
    Error = "jitlock_rt_attach failed";
  if (!Error.empty()) {
    // The empty loop still passes the start and stop barriers, which the
    // other thread waits at.
    St.SkipWithError(Error.c_str());
    for (auto _ : St) {
    }
    Finished.fetch_add(1);
    return;
  }
  const KernelFn Fn = C.Fn;
  for (auto _ : St)
    callKernel(Fn, T, &Shared, nullptr, PairsPerIteration);
  const uint64_t Pairs = uint64_t(St.iterations()) * PairsPerIteration;
  if (jitlock_rt_detach() != JITLOCK_OK)
    Error = "jitlock_rt_detach failed: a lock is still held";
  Finished.fetch_add(1);

  if (St.thread_index() == 0) {
    // Deflation needs every other thread out of monitor code: wait until
    // all have detached.
    while (Finished.load() < St.threads())
      std::this_thread::yield();
    if (Error.empty() && KernelFailed)
      Error = "a runtime or pthread call failed";
    // Every thread ran the same number of iterations.
    const uint64_t Expected = Pairs * uint64_t(St.threads());
    if (Error.empty() && Shared.Payload != Expected)
      Error = "lost updates: the payload is " + std::to_string(Shared.Payload) +
              ", expected " + std::to_string(Expected);
    jitlock_rt_stats End{};
    jitlock_rt_get_stats(&End);
    // How the contention was resolved, per pair of either thread: the
    // enters that found another owner, and those that parked. (The pthread
    // path does not go through the runtime: nothing to count.)
    if (const double All = double(Expected); All && C.P != Path::Pthread) {
      St.counters["contended_per_pair"] =
          double(End.contended_enters - StartStats.contended_enters) / All;
      St.counters["parks_per_pair"] =
          double(End.parks - StartStats.parks) / All;
    }
    jitlock_rt_deflate_idle();
    jitlock_rt_get_stats(&End);
    St.counters["monitors_alive"] = double(End.monitors_alive);
  }
  if (!Error.empty())
    return St.SkipWithError(Error.c_str());
  St.counters["ns_per_pair"] = nsPerPair(Pairs, true);
}

//===----------------------------------------------------------------------===//
// Safepoints: what a poll costs, time-to-safepoint, handshakes
//===----------------------------------------------------------------------===//

/// Loop iterations per call of a poll kernel. More than the 100 pairs of the
/// locking shapes: an iteration costs a few cycles, and the harness loop
/// around each call should not matter.
constexpr uint64_t PollIterationsPerCall = 1000;
/// The looping threads of ttsp/N and handshake/*/N.
constexpr unsigned LooperCounts[] = {1, 2, 4, 8};

/// Waits politely: a spin-wait hint, or a yield once the wait is long.
inline void backOff(unsigned Round) {
  if (Round < 1000) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  } else {
    std::this_thread::yield();
  }
}

/// poll/<path>: PollIterationsPerCall increments of a payload per benchmark
/// iteration, reported as ns_per_iter (CPU time per loop iteration). Nothing
/// arms the poll word meanwhile, so a poll never takes its slow path.
void runPoll(benchmark::State &St, KernelFn Fn, const std::string &Why) {
  if (!SetupError.empty())
    return St.SkipWithError(SetupError.c_str());
  if (!Fn)
    return St.SkipWithError(Why.c_str());
  jitlock_thread *T = jitlock_rt_attach();
  if (!T)
    return St.SkipWithError("jitlock_rt_attach failed");
  Object *A = &Objs[0];
  resetObject(*A);
  for (auto _ : St)
    callKernel(Fn, T, A, nullptr, PollIterationsPerCall);
  const uint64_t Iterations = uint64_t(St.iterations()) * PollIterationsPerCall;
  std::string Error;
  if (A->Payload != Iterations)
    Error = "the payload is " + std::to_string(A->Payload) + ", expected " +
            std::to_string(Iterations);
  if (jitlock_rt_detach() != JITLOCK_OK && Error.empty())
    Error = "jitlock_rt_detach failed";
  if (!Error.empty())
    return St.SkipWithError(Error.c_str());
  St.counters["ns_per_iter"] = benchmark::Counter(
      double(Iterations) * 1e-9,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

/// --jitlock-poll-loop=<path>:<n>: one call of a poll kernel with n
/// iterations, for counting instructions under callgrind
/// (scripts/poll-instructions.py). Returns the exit status.
int runPollLoop(KernelFn Fn, const char *Path, uint64_t N) {
  jitlock_thread *T = jitlock_rt_attach();
  if (!T) {
    fprintf(stderr, "jitlock-bench: jitlock_rt_attach failed\n");
    return 1;
  }
  Object *A = &Objs[0];
  resetObject(*A);
  callKernel(Fn, T, A, nullptr, N);
  if (A->Payload != N || jitlock_rt_detach() != JITLOCK_OK) {
    fprintf(stderr,
            "jitlock-bench: poll/%s: payload %" PRIu64 ", expected %" PRIu64
            "\n",
            Path, A->Payload, N);
    return 1;
  }
  printf("poll/%s: %" PRIu64 " iterations\n", Path, N);
  return 0;
}

/// One thread of ttsp/N and handshake/*/N, on a cache line of its own:
/// attached, in bench_spin (a poll per iteration) until told to stop, and
/// publishing its iteration count in Count.
struct alignas(64) Looper {
  std::atomic<uint64_t> Count{0};
  jitlock_thread *Thread = nullptr; ///< set before Count first moves
  std::thread OS;
};

/// N looping threads. No attached thread ever waits outside bench_spin:
/// each attaches, starts looping at once, and detaches as soon as the loop
/// ends; the synchronizer, which does wait for them, is not attached. So
/// none has to be native at any time.
class LoopingThreads {
public:
  explicit LoopingThreads(KernelFn Spin) : Spin(Spin) {}
  ~LoopingThreads() { stop(); }

  /// Starts N threads and waits until each is looping. False on failure,
  /// with the threads stopped again.
  bool start(unsigned N, std::string &Error) {
    Loopers = std::vector<Looper>(N);
    for (Looper &L : Loopers)
      L.OS = std::thread([this, &L] { loop(L); });
    for (Looper &L : Loopers)
      for (unsigned Round = 0; L.Count.load(std::memory_order_acquire) == 0;
           ++Round) {
        if (Failed.load()) {
          stop();
          Error = "a looping thread could not attach";
          return false;
        }
        backOff(Round);
      }
    return true;
  }

  /// Stops every thread and joins it. Returns false when one could not
  /// detach.
  bool stop() {
    Stop.store(1, std::memory_order_relaxed);
    for (Looper &L : Loopers)
      if (L.OS.joinable())
        L.OS.join();
    Loopers.clear();
    Stop.store(0, std::memory_order_relaxed);
    return !Failed.exchange(false);
  }

  unsigned size() const { return unsigned(Loopers.size()); }
  jitlock_thread *thread(unsigned I) const { return Loopers[I].Thread; }
  uint64_t count(unsigned I) const {
    return Loopers[I].Count.load(std::memory_order_relaxed);
  }

  /// Waits until every count differs from Stopped (every thread is running
  /// again); false after 10 s without.
  bool waitUntilMoved(const std::vector<uint64_t> &Stopped) const {
    const auto Deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (unsigned I = 0; I < size(); ++I)
      for (unsigned Round = 0; count(I) == Stopped[I]; ++Round) {
        if (Round % 1024 == 1023 && std::chrono::steady_clock::now() > Deadline)
          return false;
        backOff(Round);
      }
    return true;
  }

private:
  void loop(Looper &L) {
    jitlock_thread *T = jitlock_rt_attach();
    if (!T) {
      Failed.store(true);
      return;
    }
    // Published by bench_spin's first store to Count (the synchronizer
    // reads Thread after it saw Count move, with acquire).
    L.Thread = T;
    std::atomic_thread_fence(std::memory_order_release);
    // bench_spin's two pointers are the count and the stop flag, not
    // objects; the kernel type is shared.
    callKernel(Spin, T, reinterpret_cast<Object *>(&L.Count),
               reinterpret_cast<Object *>(&Stop), 0);
    if (jitlock_rt_detach() != JITLOCK_OK)
      Failed.store(true);
  }

  KernelFn Spin;
  std::vector<Looper> Loopers;
  alignas(64) std::atomic<uint64_t> Stop{0};
  std::atomic<bool> Failed{false};
};

/// Median, p99 and max of latency samples, in µs, as counters named
/// <Prefix>_median_us and so on. The p99 is the nearest-rank one.
void reportLatencies(benchmark::State &St, const char *Prefix,
                     std::vector<double> &SamplesUs) {
  if (SamplesUs.empty())
    return;
  std::sort(SamplesUs.begin(), SamplesUs.end());
  auto Rank = [&](double Q) {
    size_t K = size_t(std::ceil(Q * double(SamplesUs.size())));
    return SamplesUs[std::min(SamplesUs.size(), std::max<size_t>(K, 1)) - 1];
  };
  const std::string P = Prefix;
  St.counters[P + "_median_us"] = Rank(0.5);
  St.counters[P + "_p99_us"] = Rank(0.99);
  St.counters[P + "_max_us"] = SamplesUs.back();
}

/// What the ttsp and handshake runs check before they start their threads:
/// the synchronizer is the benchmark's own thread and must not be attached
/// (safepoint_begin would wait for itself).
bool readyToSynchronize(benchmark::State &St, KernelFn Spin,
                        const std::string &Why) {
  if (!SetupError.empty()) {
    St.SkipWithError(SetupError.c_str());
    return false;
  }
  if (!Spin) {
    St.SkipWithError(Why.c_str());
    return false;
  }
  if (jitlock_rt_current()) {
    St.SkipWithError("the synchronizing thread is attached");
    return false;
  }
  return true;
}

double microseconds(std::chrono::steady_clock::duration D) {
  return std::chrono::duration<double, std::micro>(D).count();
}

using Clock = std::chrono::steady_clock;

/// When one safepoint of ttsp/N began, had stopped every thread, and saw
/// every thread running again.
struct SafepointTimes {
  Clock::time_point Begin, AllStopped, Running;
};

/// One safepoint over the looping threads: begin, the operation, end, then
/// wait until every thread runs again. The operation reads every count, and
/// again after `Hold`: a thread that was not really stopped moves its count
/// in between (an iteration takes a few ns, but a count's cache line takes
/// up to a few hundred ns to come back, so only a Hold of microseconds makes
/// the check sure).
bool takeSafepoint(const LoopingThreads &Threads, Clock::duration Hold,
                   std::vector<uint64_t> &Stopped, SafepointTimes &Times,
                   std::string &Error) {
  Times.Begin = Clock::now();
  const int RC = jitlock_rt_safepoint_begin();
  Times.AllStopped = Clock::now();
  if (RC != JITLOCK_OK) {
    Error = std::string("jitlock_rt_safepoint_begin: ") +
            jitlock_rt_status_name(RC);
    return false;
  }
  const unsigned N = Threads.size();
  for (unsigned I = 0; I < N; ++I)
    Stopped[I] = Threads.count(I);
  if (Hold != Clock::duration::zero())
    for (unsigned Round = 0; Clock::now() - Times.AllStopped < Hold; ++Round)
      backOff(Round);
  bool Moved = false;
  for (unsigned I = 0; I < N; ++I)
    Moved |= Threads.count(I) != Stopped[I];
  if (int EndRC = jitlock_rt_safepoint_end()) {
    Error = std::string("jitlock_rt_safepoint_end: ") +
            jitlock_rt_status_name(EndRC);
    return false;
  }
  if (Moved) {
    Error = "a looping thread ran during the safepoint";
    return false;
  }
  if (!Threads.waitUntilMoved(Stopped)) {
    Error = "a looping thread did not resume after the safepoint";
    return false;
  }
  Times.Running = Clock::now();
  return true;
}

/// ttsp/N: N threads loop with a poll per iteration; this (unattached)
/// thread takes a safepoint per benchmark iteration. TTSP is the time
/// jitlock_rt_safepoint_begin takes; stop+release runs from its call until
/// every thread is seen running again after jitlock_rt_safepoint_end (its
/// count moved). The manual time of an iteration is its stop+release.
///
/// The timed safepoints hold the world only while the counts are read. So
/// that the run still proves every thread stopped, every 32nd iteration
/// first takes an untimed safepoint that holds it for 20 µs.
void runTtsp(benchmark::State &St, unsigned N, KernelFn Spin,
             const std::string &Why) {
  if (!readyToSynchronize(St, Spin, Why))
    return;
  LoopingThreads Threads(Spin);
  std::string Error;
  if (!Threads.start(N, Error))
    return St.SkipWithError(Error.c_str());
  std::vector<double> Ttsp, StopRelease;
  std::vector<uint64_t> Stopped(N);
  SafepointTimes Times;
  for (auto _ : St) {
    if (Ttsp.size() % 32 == 0 &&
        !takeSafepoint(Threads, std::chrono::microseconds(20), Stopped, Times,
                       Error))
      break;
    if (!takeSafepoint(Threads, Clock::duration::zero(), Stopped, Times, Error))
      break;
    St.SetIterationTime(
        std::chrono::duration<double>(Times.Running - Times.Begin).count());
    Ttsp.push_back(microseconds(Times.AllStopped - Times.Begin));
    StopRelease.push_back(microseconds(Times.Running - Times.Begin));
  }
  if (!Threads.stop() && Error.empty())
    Error = "a looping thread could not detach";
  if (!Error.empty())
    return St.SkipWithError(Error.c_str());
  reportLatencies(St, "ttsp", Ttsp);
  reportLatencies(St, "stop_release", StopRelease);
}

/// What a handshake operation of handshake/*/N does: count, and check that
/// it ran for the thread it was meant for.
struct HandshakeTally {
  std::atomic<uint64_t> Runs{0};
  std::atomic<uint64_t> WrongTarget{0};
  jitlock_thread *Expected = nullptr; ///< null: any looping thread
};

void countHandshake(void *Arg, jitlock_thread *Target) {
  auto *H = static_cast<HandshakeTally *>(Arg);
  H->Runs.fetch_add(1, std::memory_order_relaxed);
  if (H->Expected && Target != H->Expected)
    H->WrongTarget.fetch_add(1, std::memory_order_relaxed);
}

/// handshake/one/N and handshake/all/N: the looping threads of ttsp/N; this
/// (unattached) thread runs one handshake per benchmark iteration, with the
/// looping threads in turn (one) or with all of them (all), and times the
/// call until it returns (every operation has run).
void runHandshake(benchmark::State &St, unsigned N, bool All, KernelFn Spin,
                  const std::string &Why) {
  if (!readyToSynchronize(St, Spin, Why))
    return;
  LoopingThreads Threads(Spin);
  std::string Error;
  if (!Threads.start(N, Error))
    return St.SkipWithError(Error.c_str());
  std::vector<double> Latency;
  HandshakeTally Tally;
  unsigned Next = 0;
  for (auto _ : St) {
    int RC;
    const auto Begin = Clock::now();
    if (All) {
      RC = jitlock_rt_handshake_all(countHandshake, &Tally);
    } else {
      Tally.Expected = Threads.thread(Next);
      RC = jitlock_rt_handshake(Tally.Expected, countHandshake, &Tally);
      Next = (Next + 1) % N;
    }
    const auto End = Clock::now();
    if (RC != JITLOCK_OK) {
      Error = std::string(All ? "jitlock_rt_handshake_all: "
                              : "jitlock_rt_handshake: ") +
              jitlock_rt_status_name(RC);
      break;
    }
    St.SetIterationTime(std::chrono::duration<double>(End - Begin).count());
    Latency.push_back(microseconds(End - Begin));
  }
  if (!Threads.stop() && Error.empty())
    Error = "a looping thread could not detach";
  // Exactly one run per target and call: each looping thread is a target of
  // handshake_all (this thread is not attached).
  const uint64_t Expected = uint64_t(Latency.size()) * (All ? N : 1);
  if (Error.empty() && Tally.Runs.load() != Expected)
    Error = "the handshake operation ran " + std::to_string(Tally.Runs) +
            " times, expected " + std::to_string(Expected);
  if (Error.empty() && Tally.WrongTarget.load())
    Error = "a handshake operation ran for the wrong thread";
  if (!Error.empty())
    return St.SkipWithError(Error.c_str());
  reportLatencies(St, "handshake", Latency);
}

//===----------------------------------------------------------------------===//
// Registration and the machine context
//===----------------------------------------------------------------------===//

std::string cpuModel() {
  std::ifstream In("/proc/cpuinfo");
  std::string Line;
  while (std::getline(In, Line))
    if (Line.rfind("model name", 0) == 0) {
      size_t Colon = Line.find(':');
      if (Colon != std::string::npos) {
        size_t B = Line.find_first_not_of(" \t", Colon + 1);
        return B == std::string::npos ? "" : Line.substr(B);
      }
    }
  return "unknown";
}

KernelFn kernelFor(Path P, Kernel K, std::string &Why) {
  auto From = [&](auto *Set) -> KernelFn {
    if (!Set->Fns[K])
      Why = Set->Error;
    return Set->Fns[K];
  };
  switch (P) {
  case Path::Llvm:
  case Path::Floor:
  case Path::FloorLockStack:
    return From(Llvm);
  case Path::Heavy:
    return From(Heavy);
  case Path::Asmjit:
    return From(Asmjit);
  case Path::Runtime: {
    const KernelFn Rt[NumKernels] = {rtSimple, rtRecursive, rtSerial, rtChurn};
    return Rt[K];
  }
  case Path::Pthread:
    return K == KChurn ? pthChurn : pthSimple;
  case Path::Alloc:
    return allocChurn;
  }
  return nullptr;
}

void registerAll() {
  auto Add = [](Shape S, Path P, const std::string &Name) {
    Case C{S, P, nullptr, {}};
    Kernel K = P == Path::Floor            ? KFloor
               : P == Path::FloorLockStack ? KFloorLockStack
               : S == Shape::Recursive     ? KRecursive
               : S == Shape::Serial        ? KSerial
               : S == Shape::Churn         ? KChurn
                                           : KSimple;
    C.Fn = kernelFor(P, K, C.Unavailable);
    if (!C.Fn && C.Unavailable.empty())
      C.Unavailable = "no kernel";
    benchmark::internal::Benchmark *B;
    if (S == Shape::Contended2) {
      B = benchmark::RegisterBenchmark(
          Name.c_str(), [C](benchmark::State &St) { runContended(St, C); });
      B->Threads(2)->UseRealTime();
    } else {
      B = benchmark::RegisterBenchmark(
          Name.c_str(), [C](benchmark::State &St) { runSingle(St, C); });
    }
    if (P == Path::Heavy)
      B->Setup(setupHeavy)->Teardown(teardownHeavy);
    else
      B->Setup(setupLightweight);
  };

  Add(Shape::Simple, Path::Floor, "floor");
  // Not a shape: the floor plus the lock stack's stores, to show what the
  // lock stack costs next to the CAS instructions (docs/benchmarks.md).
  Add(Shape::Simple, Path::FloorLockStack, "floor/lockstack");
  const Path Locking[] = {Path::Llvm, Path::Asmjit, Path::Runtime, Path::Heavy};
  for (Shape S : {Shape::Simple, Shape::Recursive, Shape::Serial,
                  Shape::Inflated, Shape::Churn, Shape::Contended2}) {
    for (Path P : Locking) {
      // An inflated object is what heavy locking makes of every object: the
      // heavy path of `inflated` would be inflated/llvm again.
      if (S == Shape::Inflated && P == Path::Heavy)
        continue;
      Add(S, P, std::string(shapeName(S)) + "/" + pathName(P));
    }
    if (S == Shape::Simple || S == Shape::Churn || S == Shape::Contended2)
      Add(S, Path::Pthread, std::string(shapeName(S)) + "/pthread");
    if (S == Shape::Churn)
      Add(S, Path::Alloc, "churn/alloc");
  }

  // Safepoints (docs/benchmarks.md, "Safepoints"): the llvm kernels only.
  for (auto [K, Name] :
       {std::pair{KPollNone, "poll/none"}, std::pair{KPollLlvm, "poll/llvm"},
        std::pair{KPollUnrolled, "poll/unrolled"}}) {
    std::string Why;
    KernelFn Fn = kernelFor(Path::Llvm, K, Why);
    benchmark::RegisterBenchmark(Name, [Fn, Why](benchmark::State &St) {
      runPoll(St, Fn, Why);
    })->Setup(setupLightweight);
  }
  std::string Why;
  KernelFn Spin = kernelFor(Path::Llvm, KSpin, Why);
  auto AddThreaded = [&](const std::string &Name, auto Run) {
    benchmark::RegisterBenchmark(Name.c_str(), Run)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Setup(setupLightweight);
  };
  for (unsigned N : LooperCounts) {
    const std::string Threads = std::to_string(N);
    AddThreaded("ttsp/" + Threads,
                [=](benchmark::State &St) { runTtsp(St, N, Spin, Why); });
    AddThreaded("handshake/one/" + Threads, [=](benchmark::State &St) {
      runHandshake(St, N, /*All=*/false, Spin, Why);
    });
    AddThreaded("handshake/all/" + Threads, [=](benchmark::State &St) {
      runHandshake(St, N, /*All=*/true, Spin, Why);
    });
  }
}

void addContext(const jitlock_rt_layout &L) {
  benchmark::AddCustomContext("jitlock_cpu_model", cpuModel());
  benchmark::AddCustomContext(
      "jitlock_cores", std::to_string(std::thread::hardware_concurrency()));
  benchmark::AddCustomContext("jitlock_build_type", JITLOCK_BUILD_TYPE);
  benchmark::AddCustomContext("jitlock_compiler", __VERSION__);
  benchmark::AddCustomContext("jitlock_llvm", LLVM_VERSION_STRING);
  benchmark::AddCustomContext("jitlock_pairs_per_iteration",
                              std::to_string(PairsPerIteration));
  benchmark::AddCustomContext("jitlock_poll_iterations_per_call",
                              std::to_string(PollIterationsPerCall));
  benchmark::AddCustomContext("jitlock_churn_arena_objects",
                              std::to_string(ArenaObjects));
  benchmark::AddCustomContext("jitlock_tls_offset",
                              std::to_string(L.thread_tls_offset));
  benchmark::AddCustomContext("jitlock_lock_stack_capacity",
                              std::to_string(L.lock_stack_capacity));
  benchmark::AddCustomContext("jitlock_spin_limit",
                              std::to_string(BaseConfig.spin_limit));
  benchmark::AddCustomContext(
      "jitlock_paths",
      "llvm=shapes.ll lowered inline (TLS) and JIT-compiled at O2; "
      "asmjit=jitlock emitters, slow calls out of line; runtime=C ABI calls; "
      "heavy=shapes.ll lowered locking=heavy on a heavy runtime; "
      "pthread=pthread_mutex_t per object; floor=two bare cmpxchg");
}

int printCode() {
  auto Print = [](const char *Title, LlvmKernels *K) {
    llvm::outs() << "=== " << Title << " (JIT-compiled) ===\n";
    if (!K->Session) {
      llvm::outs() << "unavailable: " << K->Error << "\n";
      return;
    }
    if (llvm::Error E = K->Session->printAssembly(llvm::outs()))
      llvm::outs() << "cannot print: " << llvm::toString(std::move(E)) << "\n";
  };
  Print("llvm", Llvm);
  Print("heavy", Heavy);
  llvm::outs().flush();
  for (int K = 0; K < NumKernels; ++K)
    if (Asmjit->Fns[K])
      printf("=== asmjit %s ===\n%s\n", KernelSymbols[K],
             Asmjit->Listings[K].c_str());
  return 0;
}

/// The poll kernel that --jitlock-poll-loop=<path>:<n> names.
Kernel pollKernel(const std::string &Path) {
  return Path == "none"       ? KPollNone
         : Path == "llvm"     ? KPollLlvm
         : Path == "unrolled" ? KPollUnrolled
                              : NumKernels;
}

} // namespace

int main(int argc, char **argv) {
  bool PrintCode = false;
  std::string PollLoopPath;
  uint64_t PollLoopIterations = 0;
  jitlock_rt_default_config(&BaseConfig);
  std::vector<char *> Args;
  for (int I = 0; I < argc; ++I) {
    const char *SpinFlag = "--jitlock-spin-limit=";
    const char *PollLoopFlag = "--jitlock-poll-loop=";
    if (I > 0 && strcmp(argv[I], "--jitlock-print-code") == 0) {
      PrintCode = true;
    } else if (I > 0 &&
               strncmp(argv[I], PollLoopFlag, strlen(PollLoopFlag)) == 0) {
      const char *Spec = argv[I] + strlen(PollLoopFlag);
      const char *Colon = strchr(Spec, ':');
      char *End = nullptr;
      if (Colon) {
        PollLoopPath.assign(Spec, Colon);
        PollLoopIterations = strtoull(Colon + 1, &End, 10);
      }
      if (!Colon || !End || *End || End == Colon + 1 ||
          pollKernel(PollLoopPath) == NumKernels) {
        fprintf(stderr,
                "jitlock-bench: bad %s (want <none|llvm|unrolled>:<n>)\n",
                argv[I]);
        return 2;
      }
    } else if (I > 0 && strncmp(argv[I], SpinFlag, strlen(SpinFlag)) == 0) {
      char *End = nullptr;
      unsigned long V = strtoul(argv[I] + strlen(SpinFlag), &End, 10);
      if (!End || *End || V > UINT32_MAX) {
        fprintf(stderr, "jitlock-bench: bad %s\n", argv[I]);
        return 2;
      }
      BaseConfig.spin_limit = uint32_t(V);
    } else {
      Args.push_back(argv[I]);
    }
  }
  if (int RC = jitlock_rt_configure(&BaseConfig)) {
    fprintf(stderr, "jitlock-bench: jitlock_rt_configure: %s\n",
            jitlock_rt_status_name(RC));
    return 2;
  }
  int Argc = int(Args.size());
  Args.push_back(nullptr);
  benchmark::Initialize(&Argc, Args.data());
  if (benchmark::ReportUnrecognizedArguments(Argc, Args.data()))
    return 2;

  // A zeroed mutex must be a valid unlocked one: churn's allocator relies on
  // it for the pthread path.
  {
    pthread_mutex_t Init = PTHREAD_MUTEX_INITIALIZER, Zero;
    memset(&Zero, 0, sizeof(Zero));
    if (memcmp(&Init, &Zero, sizeof(Zero)) != 0) {
      fprintf(stderr, "jitlock-bench: PTHREAD_MUTEX_INITIALIZER is not all "
                      "zero bytes here\n");
      return 1;
    }
  }

  // glibc skips the lock prefix of pthread_mutex_lock/unlock while the
  // process has never had a second thread; a managed runtime always has
  // several, and contended2 starts one anyway. Start one now, so that every
  // pthread run measures the atomic path.
  std::thread([] {}).join();
  if (__libc_single_threaded) {
    fprintf(stderr, "jitlock-bench: the process still counts as "
                    "single-threaded\n");
    return 1;
  }

  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  if (L.header_offset != 0) {
    fprintf(stderr, "jitlock-bench: the objects put the header at offset 0; "
                    "the runtime is configured otherwise\n");
    return 1;
  }

  Llvm = new LlvmKernels;
  Llvm->build(jitlock::LockingMode::Lightweight, "shapes.ll", L);
  if (!PollLoopPath.empty()) {
    // Nothing else is compiled: under callgrind, every instruction beyond
    // the loop is the same for every iteration count.
    KernelFn Fn = Llvm->Fns[pollKernel(PollLoopPath)];
    if (!Fn) {
      fprintf(stderr, "jitlock-bench: %s\n", Llvm->Error.c_str());
      return 1;
    }
    return runPollLoop(Fn, PollLoopPath.c_str(), PollLoopIterations);
  }
  Asmjit = new AsmjitKernels;
  Asmjit->build(L);
  Heavy = new LlvmKernels;
  Heavy->build(jitlock::LockingMode::Heavy, "shapes.ll (heavy)", L);
  for (const std::string *E : {&Asmjit->Error, &Llvm->Error, &Heavy->Error})
    if (!E->empty())
      fprintf(stderr, "jitlock-bench: %s\n", E->c_str());

  if (PrintCode)
    return printCode();

  addContext(L);
  registerAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
