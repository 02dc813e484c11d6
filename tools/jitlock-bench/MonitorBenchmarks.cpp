//===- MonitorBenchmarks.cpp - The monitor shapes through every path ------===//
//
// Each shape (docs/benchmarks.md, "What is measured") through the llvm,
// asmjit, runtime and heavy paths, pthread where it applies, next to the
// floor, as <shape>/<path> with the counter ns_per_pair; the inflated shape
// also under index and table monitor storage, as inflated-index/<path> and
// inflated-table/<path>.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <thread>

namespace jitlock::bench {

jitlock_rt_config BaseConfig;
uint32_t ContendedRepetitions = 10;
std::string SetupError;
alignas(64) Object Objs[2];
LlvmKernels *LlvmFor[3];
AsmjitKernels *AsmjitFor[3];
std::string StorageError[3];
LlvmKernels *LlvmReserved;
AsmjitKernels *AsmjitReserved;
std::string ReservedError;

/// The runtime accepts a configuration only while no thread is attached;
/// every benchmark function detaches before it returns, so this holds
/// between runs.
int setRuntimeConfig(uint32_t Mode, uint32_t Storage) {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  if (L.locking_mode == Mode && L.monitor_storage == Storage)
    return JITLOCK_OK;
  jitlock_rt_detach();
  // The storage changes only while no monitor is in memory: shutdown frees
  // them all (every object a run inflated has its header back). So does the
  // reservation field, which is part of the layout handed out.
  const bool FieldChanges = (L.locking_mode == JITLOCK_LOCKING_RESERVED) !=
                            (Mode == JITLOCK_LOCKING_RESERVED);
  if (L.monitor_storage != Storage || FieldChanges)
    if (int RC = jitlock_rt_shutdown())
      return RC;
  jitlock_rt_config Cfg = BaseConfig;
  Cfg.locking_mode = Mode;
  Cfg.monitor_storage = Storage;
  if (Mode == JITLOCK_LOCKING_RESERVED) {
    Cfg.reserve_shift = BenchReserveShift;
    Cfg.reserve_bits = BenchReserveBits;
  }
  return jitlock_rt_configure(&Cfg);
}

const char *storageName(uint32_t Storage) {
  static const char *const Names[] = {"pointer", "index", "table"};
  return Storage < 3 ? Names[Storage] : "?";
}

namespace {

//===----------------------------------------------------------------------===//
// The runtime's locking mode and monitor storage
//===----------------------------------------------------------------------===//

uint32_t currentLockingMode() {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  return L.locking_mode;
}

uint32_t currentStorage() {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  return L.monitor_storage;
}

//===----------------------------------------------------------------------===//
// The runs
//===----------------------------------------------------------------------===//

enum class Shape {
  Simple,
  Recursive,
  Serial,
  Inflated,
  Churn,
  Contended2,
  Contended4,
  Contended8,
  Elided
};
enum class Path {
  Llvm,
  LlvmNoElide,
  Asmjit,
  Reserved,
  ReservedAsmjit,
  Runtime,
  Heavy,
  Pthread,
  Alloc,
  Floor,
  FloorLockStack,
  FloorCasStore
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
  case Shape::Contended4:
    return "contended4";
  case Shape::Contended8:
    return "contended8";
  case Shape::Elided:
    return "elided";
  }
  return "?";
}

/// The threads that share the object of a contendedN shape; 0 for the
/// single-threaded shapes.
int contendingThreads(Shape S) {
  switch (S) {
  case Shape::Contended2:
    return 2;
  case Shape::Contended4:
    return 4;
  case Shape::Contended8:
    return 8;
  default:
    return 0;
  }
}

const char *pathName(Path P) {
  switch (P) {
  case Path::Llvm:
    return "llvm";
  case Path::LlvmNoElide:
    return "llvm-noelide";
  case Path::Asmjit:
    return "asmjit";
  case Path::Reserved:
    return "reserved";
  case Path::ReservedAsmjit:
    return "reserved-asmjit";
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
  case Path::FloorCasStore:
    return "floor/cas-store";
  }
  return "?";
}

struct Case {
  Shape S;
  Path P;
  KernelFn Fn = nullptr;
  std::string Unavailable; ///< why Fn is null
  uint32_t Storage = JITLOCK_MONITORS_POINTER;
  bool reserved() const {
    return P == Path::Reserved || P == Path::ReservedAsmjit;
  }
  uint32_t Mode() const {
    return P == Path::Heavy ? JITLOCK_LOCKING_HEAVY
           : reserved()     ? JITLOCK_LOCKING_RESERVED
                            : JITLOCK_LOCKING_LIGHTWEIGHT;
  }
};

/// ns_per_pair: the benchmark's time (CPU time, or real time for
/// contendedN) divided by the pairs done. As a counter: Pairs * 1e-9, a rate
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

void runSingle(benchmark::State &St, const Case &C) {
  if (!SetupError.empty())
    return St.SkipWithError(SetupError.c_str());
  if (!C.Fn)
    return St.SkipWithError(C.Unavailable.c_str());
  if (currentLockingMode() != C.Mode())
    return St.SkipWithError("the runtime is in the wrong locking mode");
  if (currentStorage() != C.Storage)
    return St.SkipWithError("the runtime has the wrong monitor storage");
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
  // Reserved locking: both objects reserved to this thread, as the
  // runtime's first lock (R2) leaves them; churn's objects are fresh and
  // reservable instead (the kernel's allocation marks them).
  jitlock_rt_layout Layout;
  jitlock_rt_get_layout(&Layout);
  if (C.reserved() && C.S != Shape::Churn) {
    uint64_t Tag;
    memcpy(&Tag, reinterpret_cast<const char *>(T) + Layout.reserve_tag_offset,
           sizeof(Tag));
    for (Object *O : {A, B})
      O->Header = (O->Header & ~Layout.reserve_mask) | Tag;
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
    // unlocked (deflated, for the heavy path) with its header intact, its
    // reservation field aside.
    const Object &Last = arena()[(Pairs - 1) % ArenaObjects];
    if (Last.Payload != 1 || (Last.Header & ~Layout.reservable_value) != 1)
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

/// contendedN: one shared object, reset by the Setup callback before the
/// threads start.
alignas(64) Object Shared;
std::atomic<int> Finished{0};

/// The runtime's counters when the run started (for contendedN's deltas).
jitlock_rt_stats StartStats;

/// What every run starts from, besides the locking mode.
void resetShared() {
  resetObject(Shared);
  Finished = 0;
  KernelFailed = false;
  jitlock_rt_get_stats(&StartStats);
}

} // namespace

void restoreDefaultConfig(const benchmark::State &) {
  if (int RC = setRuntimeConfig(JITLOCK_LOCKING_LIGHTWEIGHT,
                                JITLOCK_MONITORS_POINTER))
    SetupError = std::string("cannot restore lightweight locking with "
                             "pointer storage: ") +
                 jitlock_rt_status_name(RC);
}

void setupLightweight(const benchmark::State &) {
  int RC =
      setRuntimeConfig(JITLOCK_LOCKING_LIGHTWEIGHT, JITLOCK_MONITORS_POINTER);
  SetupError = RC == JITLOCK_OK
                   ? ""
                   : std::string("cannot configure lightweight locking: ") +
                         jitlock_rt_status_name(RC);
  resetShared();
}

namespace {

/// Lightweight locking with index or table storage.
template <uint32_t Storage> void setupStorage(const benchmark::State &) {
  int RC = setRuntimeConfig(JITLOCK_LOCKING_LIGHTWEIGHT, Storage);
  SetupError = RC == JITLOCK_OK
                   ? ""
                   : std::string("cannot configure ") + storageName(Storage) +
                         " monitor storage: " + jitlock_rt_status_name(RC);
  resetShared();
}

/// Pointer storage in locking mode `Mode` (`Name`), which a run checks.
void setupMode(uint32_t Mode, const char *Name) {
  int RC = setRuntimeConfig(Mode, JITLOCK_MONITORS_POINTER);
  SetupError = RC == JITLOCK_OK ? ""
                                : std::string("cannot configure ") + Name +
                                      " locking: " + jitlock_rt_status_name(RC);
  if (RC == JITLOCK_OK && currentLockingMode() != Mode)
    SetupError =
        std::string("the runtime did not switch to ") + Name + " locking";
  resetShared();
}

void setupHeavy(const benchmark::State &) {
  setupMode(JITLOCK_LOCKING_HEAVY, "heavy");
}

void setupReserved(const benchmark::State &) {
  setupMode(JITLOCK_LOCKING_RESERVED, "reserved");
}

void runContended(benchmark::State &St, const Case &C) {
  // Every thread must leave through the Finished count below, even on an
  // error, or thread 0 would wait forever.
  std::string Error = SetupError;
  if (Error.empty() && !C.Fn)
    Error = C.Unavailable;
  if (Error.empty() && currentLockingMode() != C.Mode())
    Error = "the runtime is in the wrong locking mode";
  jitlock_thread *T = attachOrSkip(St, Error, Finished);
  if (!T)
    return;
  const KernelFn Fn = C.Fn;
  for (auto _ : St)
    callKernel(Fn, T, &Shared, nullptr, PairsPerIteration);
  const uint64_t Pairs = uint64_t(St.iterations()) * PairsPerIteration;
  if (detachAndGather(St, Error, Finished)) {
    if (Error.empty() && KernelFailed)
      Error = "a runtime or pthread call failed";
    // Every thread ran the same number of iterations.
    const uint64_t Expected = Pairs * uint64_t(St.threads());
    if (Error.empty() && Shared.Payload != Expected)
      Error = "lost updates: the payload is " + std::to_string(Shared.Payload) +
              ", expected " + std::to_string(Expected);
    jitlock_rt_stats End{};
    jitlock_rt_get_stats(&End);
    // How the contention was resolved, per pair of any thread: the enters
    // that found another owner, and those that parked. (The pthread
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

KernelFn kernelFor(Path P, Kernel K, uint32_t Storage, std::string &Why) {
  if ((P == Path::Llvm && !LlvmFor[Storage]) ||
      (P == Path::Asmjit && !AsmjitFor[Storage])) {
    Why = StorageError[Storage];
    return nullptr;
  }
  switch (P) {
  case Path::Llvm:
    return kernelOf(*LlvmFor[Storage], K, Why);
  case Path::LlvmNoElide:
  case Path::Floor:
  case Path::FloorLockStack:
  case Path::FloorCasStore:
    return kernelOf(*Llvm, K, Why);
  case Path::Heavy:
    return kernelOf(*Heavy, K, Why);
  case Path::Asmjit:
    return kernelOf(*AsmjitFor[Storage], K, Why);
  case Path::Reserved:
  case Path::ReservedAsmjit:
    if (!LlvmReserved || !AsmjitReserved) {
      Why = ReservedError;
      return nullptr;
    }
    return P == Path::Reserved ? kernelOf(*LlvmReserved, K, Why)
                               : kernelOf(*AsmjitReserved, K, Why);
  case Path::Runtime:
    return runtimeKernel(K);
  case Path::Pthread:
    return pthreadKernel(K);
  case Path::Alloc:
    return allocKernel();
  }
  return nullptr;
}

} // namespace

void registerMonitorBenchmarks() {
  auto Add = [](Shape S, Path P, const std::string &Name,
                uint32_t Storage = JITLOCK_MONITORS_POINTER) {
    Case C{S, P, nullptr, {}, Storage};
    Kernel K = P == Path::Floor            ? KFloor
               : P == Path::FloorLockStack ? KFloorLockStack
               : P == Path::FloorCasStore  ? KFloorCasStore
               : S == Shape::Recursive     ? KRecursive
               : S == Shape::Serial        ? KSerial
               : S == Shape::Churn         ? KChurn
               : S == Shape::Elided
                   ? (P == Path::LlvmNoElide ? KElidedNoElide : KElided)
                   : KSimple;
    C.Fn = kernelFor(P, K, Storage, C.Unavailable);
    if (!C.Fn && C.Unavailable.empty())
      C.Unavailable = "no kernel";
    benchmark::internal::Benchmark *B;
    if (int Threads = contendingThreads(S)) {
      B = benchmark::RegisterBenchmark(
          Name.c_str(), [C](benchmark::State &St) { runContended(St, C); });
      // Contention swings from run to run with the scheduler: always
      // several repetitions, which bench-report.py gives as median and IQR.
      B->Threads(Threads)->UseRealTime()->Repetitions(
          int(ContendedRepetitions));
    } else {
      B = benchmark::RegisterBenchmark(
          Name.c_str(), [C](benchmark::State &St) { runSingle(St, C); });
    }
    if (P == Path::Heavy)
      B->Setup(setupHeavy)->Teardown(restoreDefaultConfig);
    else if (C.reserved())
      B->Setup(setupReserved)->Teardown(restoreDefaultConfig);
    else if (Storage == JITLOCK_MONITORS_INDEX)
      B->Setup(setupStorage<JITLOCK_MONITORS_INDEX>)
          ->Teardown(restoreDefaultConfig);
    else if (Storage == JITLOCK_MONITORS_TABLE)
      B->Setup(setupStorage<JITLOCK_MONITORS_TABLE>)
          ->Teardown(restoreDefaultConfig);
    else
      B->Setup(setupLightweight);
  };

  Add(Shape::Simple, Path::Floor, "floor");
  // Not a shape: the floor plus the lock stack's stores, to show what the
  // lock stack costs next to the CAS instructions (docs/benchmarks.md).
  Add(Shape::Simple, Path::FloorLockStack, "floor/lockstack");
  // Not a shape either: one CAS and a release store, the floor of an unlock
  // without a read-modify-write, which the inflated exit is measured against.
  Add(Shape::Simple, Path::FloorCasStore, "floor/cas-store");
  const Path Locking[] = {Path::Llvm, Path::Asmjit, Path::Runtime, Path::Heavy};
  for (Shape S : {Shape::Simple, Shape::Recursive, Shape::Serial,
                  Shape::Inflated, Shape::Churn, Shape::Contended2,
                  Shape::Contended4, Shape::Contended8}) {
    for (Path P : Locking) {
      // An inflated object is what heavy locking makes of every object: the
      // heavy path of `inflated` would be inflated/llvm again.
      if (S == Shape::Inflated && P == Path::Heavy)
        continue;
      Add(S, P, std::string(shapeName(S)) + "/" + pathName(P));
    }
    // The inflated monitor through each other storage's lookup (M1, N2):
    // inflated-index/<path>, inflated-table/<path>.
    if (S == Shape::Inflated)
      for (uint32_t Storage : {JITLOCK_MONITORS_INDEX, JITLOCK_MONITORS_TABLE})
        for (Path P : {Path::Llvm, Path::Asmjit, Path::Runtime})
          Add(S, P,
              std::string("inflated-") + storageName(Storage) + "/" +
                  pathName(P),
              Storage);
    if (S == Shape::Simple || S == Shape::Churn || contendingThreads(S))
      Add(S, Path::Pthread, std::string(shapeName(S)) + "/pthread");
    if (S == Shape::Churn)
      Add(S, Path::Alloc, "churn/alloc");
    // Reserved locking (R1, R4): the object reserved to the benchmark
    // thread; churn's fresh objects reservable, each reserved by its first
    // (and only) lock.
    if (S == Shape::Simple || S == Shape::Recursive || S == Shape::Serial ||
        S == Shape::Churn)
      for (Path P : {Path::Reserved, Path::ReservedAsmjit})
        Add(S, P, std::string(shapeName(S)) + "/" + pathName(P));
  }
  // What lock elision saves: the same temporary-locking method with its
  // allocator recognized (the lock elided at O2) and not.
  Add(Shape::Elided, Path::Llvm, "elided/llvm");
  Add(Shape::Elided, Path::LlvmNoElide, "elided/llvm-noelide");
}

} // namespace jitlock::bench
