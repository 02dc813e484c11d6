//===- jitlock-demo/main.cpp - The jitlock runtime under load -------------===//
//
// Drives the runtime's C ABI the way a managed-language VM would, from
// several threads at once:
//
//  * a bounded producer/consumer queue guarded by one object's monitor, with
//    guarded waits and notify_all (wait always inflates the monitor);
//  * bank accounts with transfers locked in address order, released in both
//    nested and unstructured order, and an audit that holds every account at
//    once (more objects than the lock stack has slots);
//  * a recursion-heavy counter: adjacent re-entry nested deeper than the lock
//    stack, and non-adjacent re-entry (A B A).
//
// Every shared field is a plain, non-atomic field guarded only by a jitlock
// monitor, so a ThreadSanitizer build of this program checks that enter and
// exit really order memory. The program verifies its invariants, prints the
// runtime's statistics, and exits non-zero when anything is off.
//
//===----------------------------------------------------------------------===//

#include "ToolSupport.h"

#include "jitlock/jitlock_rt.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

namespace cl = llvm::cl;
using llvm::Twine;

namespace {

//===----------------------------------------------------------------------===//
// Objects, as an embedder lays them out
//===----------------------------------------------------------------------===//

/// Header of an unlocked object with no hash installed: low bits 01, every
/// embedder bit clear.
constexpr uint64_t UnlockedHeader = 1;

/// Deeper than the lock stack's default capacity of 8, so each deep
/// recursion overflows it and the runtime has to inflate the oldest entry.
constexpr unsigned RecursionDepth = 12;
/// More accounts than lock stack slots, for the same reason: an audit holds
/// all of them at once.
constexpr unsigned NumAccounts = 12;
constexpr int64_t InitialBalance = 1000;
constexpr unsigned AuditInterval = 128;
constexpr unsigned MaxQueueCapacity = 64;

// Every object starts with the 64-bit header word the runtime owns the low
// two bits of. The objects are cache-line aligned, as separate heap objects
// usually are, so that the demo measures lock traffic, not false sharing.

/// A bank account. Balance is guarded by the account's own monitor.
struct alignas(64) Account {
  std::atomic<uint64_t> Header{UnlockedHeader};
  int64_t Balance = InitialBalance;
};

/// A ring buffer whose every field is guarded by the queue's monitor.
struct alignas(64) Queue {
  std::atomic<uint64_t> Header{UnlockedHeader};
  unsigned Capacity = 1;
  unsigned Head = 0;
  unsigned Count = 0;
  uint64_t Slots[MaxQueueCapacity] = {};
};

/// A counter guarded by its own monitor.
struct alignas(64) Counter {
  std::atomic<uint64_t> Header{UnlockedHeader};
  uint64_t Value = 0;
};

static_assert(offsetof(Account, Header) == 0, "header word must come first");
static_assert(offsetof(Queue, Header) == 0, "header word must come first");
static_assert(offsetof(Counter, Header) == 0, "header word must come first");

//===----------------------------------------------------------------------===//
// Failing loudly
//===----------------------------------------------------------------------===//

/// Reports a broken invariant and ends the process. Worker threads may be
/// parked on a monitor the failing thread holds, so there is no orderly way
/// to join them: leave at once.
[[noreturn]] void fail(const char *What) {
  std::fflush(stdout);
  std::fprintf(stderr, "jitlock-demo: FAILED: %s\n", What);
  std::_Exit(EXIT_FAILURE);
}

/// Fails unless a runtime call returned `Expected`, naming both codes.
void expectStatus(int Status, int Expected, const char *Call) {
  if (Status == Expected)
    return;
  char Message[256];
  std::snprintf(Message, sizeof(Message), "%s returned %s, expected %s", Call,
                jitlock_rt_status_name(Status),
                jitlock_rt_status_name(Expected));
  fail(Message);
}

void check(int Status, const char *Call) {
  expectStatus(Status, JITLOCK_OK, Call);
}

//===----------------------------------------------------------------------===//
// Thin wrappers over the C ABI
//===----------------------------------------------------------------------===//

void monitorEnter(jitlock_thread *Self, void *Obj) {
  check(jitlock_rt_monitor_enter(Self, Obj), "jitlock_rt_monitor_enter");
  // The owner query is exact for the calling thread, so it must agree with
  // the enter that just returned, whichever form the lock took.
  if (!jitlock_rt_holds_lock(Self, Obj))
    fail("jitlock_rt_holds_lock is false right after a successful enter");
}

void monitorExit(jitlock_thread *Self, void *Obj) {
  check(jitlock_rt_monitor_exit(Self, Obj), "jitlock_rt_monitor_exit");
}

/// Fails if the calling thread still has lock stack entries: every workload
/// step releases everything it took.
void expectEmptyLockStack(jitlock_thread *Self) {
  void *Entries[16];
  if (jitlock_rt_lock_stack(Self, Entries, std::size(Entries)) != 0)
    fail("lock stack not empty after every lock was released");
}

/// Counts misuse reports per status. The handler must not call back into
/// the runtime, so it only counts.
std::array<std::atomic<unsigned>, 16> MisuseReports;

void countMisuse(void *, jitlock_status Status, jitlock_thread *, void *,
                 const char *) {
  if (static_cast<size_t>(Status) < MisuseReports.size())
    MisuseReports[Status].fetch_add(1, std::memory_order_relaxed);
}

//===----------------------------------------------------------------------===//
// The shared world
//===----------------------------------------------------------------------===//

struct Options {
  unsigned Threads = 4;
  unsigned Iterations = 10000;
  bool Layout = false;
};

struct World {
  explicit World(const Options &Opts)
      : Opts(Opts), Delivered(uint64_t(Opts.Threads) * Opts.Iterations),
        Start(Opts.Threads) {
    // Smaller than the number of threads, so that producers find the queue
    // full and consumers find it empty, and both have to wait.
    Q.Capacity = std::clamp(Opts.Threads / 2, 1u, MaxQueueCapacity);
    for (unsigned I = 0; I < NumAccounts; ++I)
      ByAddress[I] = &Accounts[I];
    std::sort(ByAddress.begin(), ByAddress.end(), std::less<>());
  }

  Options Opts;
  Queue Q;
  std::array<Account, NumAccounts> Accounts;
  /// The global lock order for accounts.
  std::array<Account *, NumAccounts> ByAddress;
  /// Entered RecursionDepth times over, and as A in the A B A pattern.
  Counter Deep;
  /// B in the A B A pattern.
  Counter Tally;
  /// Only used by the single-threaded misuse checks.
  Counter Stray;
  /// How often each queue item was taken.
  std::vector<std::atomic<uint32_t>> Delivered;
  std::atomic<uint64_t> Transfers{0};
  std::atomic<uint64_t> Audits{0};
  std::latch Start;
};

/// A per-thread xorshift generator: deterministic per seed and lock-free,
/// so the demo adds no synchronization of its own.
class Rng {
public:
  explicit Rng(uint64_t Seed) : State(Seed * 0x9E3779B97F4A7C15ull | 1) {}
  uint64_t next() {
    State ^= State << 13;
    State ^= State >> 7;
    State ^= State << 17;
    return State;
  }

private:
  uint64_t State;
};

//===----------------------------------------------------------------------===//
// Workload: bounded queue with wait and notify_all
//===----------------------------------------------------------------------===//

// Each thread alternates put and take. A taker waits only on an empty queue,
// which means every thread is about to put; a putter waits only on a full
// queue, which means some thread is about to take. So the workload cannot
// deadlock, yet with capacity below the thread count both waits happen.

void put(jitlock_thread *Self, Queue &Q, uint64_t Item) {
  monitorEnter(Self, &Q);
  // Re-test after every wake-up: notify_all wakes every waiter, and another
  // thread may have taken the free slot first.
  while (Q.Count == Q.Capacity)
    check(jitlock_rt_wait(Self, &Q), "jitlock_rt_wait");
  Q.Slots[(Q.Head + Q.Count) % Q.Capacity] = Item;
  ++Q.Count;
  // Producers and consumers wait on the same monitor, so a single notify
  // could wake another producer and strand the consumers.
  check(jitlock_rt_notify_all(Self, &Q), "jitlock_rt_notify_all");
  monitorExit(Self, &Q);
}

uint64_t take(jitlock_thread *Self, Queue &Q) {
  monitorEnter(Self, &Q);
  while (Q.Count == 0)
    check(jitlock_rt_wait(Self, &Q), "jitlock_rt_wait");
  uint64_t Item = Q.Slots[Q.Head];
  Q.Head = (Q.Head + 1) % Q.Capacity;
  --Q.Count;
  check(jitlock_rt_notify_all(Self, &Q), "jitlock_rt_notify_all");
  monitorExit(Self, &Q);
  return Item;
}

void recordDelivery(World &W, uint64_t Item) {
  if (Item >= W.Delivered.size())
    fail("queue returned an item that was never put");
  W.Delivered[Item].fetch_add(1, std::memory_order_relaxed);
}

//===----------------------------------------------------------------------===//
// Workload: account transfers and audits
//===----------------------------------------------------------------------===//

void transfer(jitlock_thread *Self, World &W, Rng &R, bool Unstructured) {
  unsigned FromIdx = R.next() % NumAccounts;
  unsigned ToIdx = R.next() % (NumAccounts - 1);
  ToIdx += ToIdx >= FromIdx;
  Account *From = &W.Accounts[FromIdx];
  Account *To = &W.Accounts[ToIdx];

  // Every thread locks the lower address first, so two opposite transfers
  // cannot each hold the lock the other needs.
  Account *First = std::min(From, To, std::less<>());
  Account *Second = std::max(From, To, std::less<>());
  monitorEnter(Self, First);
  monitorEnter(Self, Second);

  int64_t Amount = static_cast<int64_t>(R.next() % 100);
  if (From->Balance >= Amount) {
    From->Balance -= Amount;
    To->Balance += Amount;
  }

  // Releasing the outer lock first is legal through runtime calls even
  // though JIT code never does it; exercise both orders.
  if (Unstructured) {
    monitorExit(Self, First);
    monitorExit(Self, Second);
  } else {
    monitorExit(Self, Second);
    monitorExit(Self, First);
  }
  W.Transfers.fetch_add(1, std::memory_order_relaxed);
}

int64_t expectedTotal() { return InitialBalance * NumAccounts; }

/// Holds every account at once, in the global order, and checks that no
/// money was created or lost. Twelve locks do not fit the lock stack.
void audit(jitlock_thread *Self, World &W) {
  for (Account *A : W.ByAddress)
    monitorEnter(Self, A);
  int64_t Total = 0;
  for (Account *A : W.ByAddress)
    Total += A->Balance;
  if (Total != expectedTotal())
    fail("an audit holding every account saw money created or lost");
  for (auto It = W.ByAddress.rbegin(); It != W.ByAddress.rend(); ++It)
    monitorExit(Self, *It);
  W.Audits.fetch_add(1, std::memory_order_relaxed);
}

//===----------------------------------------------------------------------===//
// Workload: recursion
//===----------------------------------------------------------------------===//

/// Adjacent re-entry, Depth deep: the first eight fit on the lock stack as
/// adjacent duplicates; the rest overflow it.
void enterDeep(jitlock_thread *Self, Counter &C, unsigned Depth) {
  monitorEnter(Self, &C);
  if (Depth > 1)
    enterDeep(Self, C, Depth - 1);
  else
    ++C.Value;
  monitorExit(Self, &C);
}

/// Non-adjacent re-entry, [A B A]: recursion by adjacency cannot express it.
void reenterAcross(jitlock_thread *Self, Counter &A, Counter &B) {
  monitorEnter(Self, &A);
  monitorEnter(Self, &B);
  monitorEnter(Self, &A);
  ++A.Value;
  ++B.Value;
  monitorExit(Self, &A);
  monitorExit(Self, &B);
  monitorExit(Self, &A);
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

uint64_t itemFor(const World &W, unsigned Thread, unsigned Iteration) {
  return uint64_t(Thread) * W.Opts.Iterations + Iteration;
}

void runWorker(World &W, unsigned Index) {
  jitlock_thread *Self = jitlock_rt_attach();
  if (!Self)
    fail("jitlock_rt_attach returned null");
  Rng R(Index + 1);
  // Start together, so the first iterations already contend.
  W.Start.arrive_and_wait();

  for (unsigned I = 0; I < W.Opts.Iterations; ++I) {
    // Work between put and take keeps items in the queue for a while.
    put(Self, W.Q, itemFor(W, Index, I));
    transfer(Self, W, R, /*Unstructured=*/I % 2 == 1);
    enterDeep(Self, W.Deep, RecursionDepth);
    reenterAcross(Self, W.Deep, W.Tally);
    recordDelivery(W, take(Self, W.Q));
    if (I % AuditInterval == 0)
      audit(Self, W);
    expectEmptyLockStack(Self);
  }

  check(jitlock_rt_detach(), "jitlock_rt_detach");
}

//===----------------------------------------------------------------------===//
// Single-threaded checks around the run
//===----------------------------------------------------------------------===//

/// Misuse returns an error code, reports it to the handler, and leaves the
/// object's lock as it was.
void checkMisuse(jitlock_thread *Self, Counter &Stray) {
  expectStatus(jitlock_rt_monitor_exit(Self, &Stray), JITLOCK_ENOT_OWNER,
               "exit of an object nobody holds");
  expectStatus(jitlock_rt_notify(Self, &Stray), JITLOCK_ENOT_OWNER,
               "notify without owning the object");
  expectStatus(jitlock_rt_monitor_enter(Self, nullptr), JITLOCK_ENULL,
               "enter of a null object");

  monitorEnter(Self, &Stray);
  // Nobody can wait on a fast-locked object, so this notify has nothing to
  // do and must not inflate it.
  check(jitlock_rt_notify(Self, &Stray), "notify on a fast-locked object");
  expectStatus(jitlock_rt_detach(), JITLOCK_EHOLDING_LOCKS,
               "detach while holding a lock");
  monitorExit(Self, &Stray);

  if (Stray.Header.load() != UnlockedHeader)
    fail("misuse changed an object's header");
  if (MisuseReports[JITLOCK_ENOT_OWNER].load() != 2 ||
      MisuseReports[JITLOCK_EHOLDING_LOCKS].load() != 1)
    fail("the misuse handler was not called once per misuse");
  std::printf("misuse: exit/notify by a non-owner -> %s, detach holding a "
              "lock -> %s; handler called, lock state unchanged\n",
              jitlock_rt_status_name(JITLOCK_ENOT_OWNER),
              jitlock_rt_status_name(JITLOCK_EHOLDING_LOCKS));
}

/// The demo's objects put their header at offset 0 and assume the default
/// lock bit encoding; refuse to run against a runtime configured otherwise.
void checkLayout() {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  if (L.abi_version != JITLOCK_RT_ABI_VERSION)
    fail("runtime ABI version differs from the header's");
  if (L.header_offset != 0 || L.lock_mask != 3 || L.unlocked_value != 1)
    fail("runtime layout differs from the demo objects' layout");
}

void installMisuseHandler() {
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.misuse_handler = countMisuse;
  Cfg.misuse_ctx = nullptr;
  check(jitlock_rt_configure(&Cfg), "jitlock_rt_configure");
}

/// Checks everything that must hold once all workers have finished.
bool verifyResults(const World &W) {
  bool Ok = true;
  auto Report = [&Ok](bool Good, const char *What, uint64_t Got,
                      uint64_t Want) {
    std::printf("  %-44s %12" PRIu64 " %s\n", What, Got,
                Good ? "ok" : "MISMATCH");
    if (!Good)
      std::fprintf(stderr,
                   "jitlock-demo: FAILED: %s: got %" PRIu64
                   ", expected %" PRIu64 "\n",
                   What, Got, Want);
    Ok &= Good;
  };

  uint64_t Pairs = uint64_t(W.Opts.Threads) * W.Opts.Iterations;
  uint64_t Once = 0;
  for (const auto &D : W.Delivered)
    Once += D.load() == 1;
  Report(Once == Pairs, "queue items delivered exactly once", Once, Pairs);
  Report(W.Q.Count == 0, "queue items left over", W.Q.Count, 0);

  int64_t Total = 0;
  for (const Account &A : W.Accounts)
    Total += A.Balance;
  Report(Total == expectedTotal(), "account total (conserved)",
         static_cast<uint64_t>(Total), expectedTotal());

  // Each iteration increments Deep at the bottom of the deep recursion and
  // again inside [A B A]; Tally only inside [A B A].
  Report(W.Deep.Value == 2 * Pairs, "recursive counter", W.Deep.Value,
         2 * Pairs);
  Report(W.Tally.Value == Pairs, "A B A inner counter", W.Tally.Value, Pairs);
  std::printf("  %-44s %12" PRIu64 "\n  %-44s %12" PRIu64 "\n", "transfers",
              W.Transfers.load(), "audits holding all accounts",
              W.Audits.load());
  return Ok;
}

void printStats() {
  jitlock_rt_stats S;
  jitlock_rt_get_stats(&S);
  std::printf("\nlock statistics\n");
  std::printf("  %-44s %12s\n", "counter", "value");
  std::printf("  %-44s %12s\n", "-------", "-----");
  for (const auto &[Name, Value] : jitlock::tools::lockStatRows(S))
    std::printf("  %-44s %12" PRIu64 "\n", Name, Value);
}

/// Shutdown frees every monitor and gives inflated objects back their
/// unlocked header, hash included; nothing else may remain in the header.
bool verifyAfterShutdown(const World &W, uint64_t Hash) {
  bool Ok = jitlock_rt_peek_hash(&W.Accounts[0]) == Hash;
  for (const Account &A : W.Accounts)
    Ok &= (A.Header.load() & 3) == UnlockedHeader;
  for (unsigned I = 1; I < NumAccounts; ++I)
    Ok &= W.Accounts[I].Header.load() == UnlockedHeader;
  for (const std::atomic<uint64_t> *H :
       {&W.Q.Header, &W.Deep.Header, &W.Tally.Header, &W.Stray.Header})
    Ok &= H->load() == UnlockedHeader;
  if (!Ok)
    std::fprintf(stderr, "jitlock-demo: FAILED: a header was not restored "
                         "to unlocked (with its hash) by shutdown\n");
  return Ok;
}

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

jitlock::tools::ToolCommandLine CommandLine(
    {.Tool = "jitlock-demo",
     .Overview = "Threads contending, recursing and waiting on shared "
                 "objects through the jitlock runtime's C ABI\n",
     .HasThreadsOption = true});
cl::OptionCategory &DemoCategory = CommandLine.Category;

jitlock::tools::NumberOpt Threads("threads",
                                  cl::desc("Worker threads, 1 to 256 "
                                           "(default 4)"),
                                  cl::value_desc("N"), cl::init(4),
                                  cl::cat(DemoCategory));
jitlock::tools::NumberOpt
    Iterations("iterations",
               cl::desc("Iterations per thread, 1 to 10000000 (default "
                        "10000)"),
               cl::value_desc("N"), cl::init(10000), cl::cat(DemoCategory));
cl::opt<bool> Layout("layout",
                     cl::desc("Print the runtime's thread and monitor layout "
                              "first"),
                     cl::cat(DemoCategory));

/// Parses the command line into `Opts`; bad input exits with status 2.
Options parseOptions(int Argc, char **Argv) {
  CommandLine.parse(Argc, Argv);
  Options Opts;
  Opts.Threads = unsigned(jitlock::tools::numberInRange(Threads, 1, 256));
  Opts.Iterations =
      unsigned(jitlock::tools::numberInRange(Iterations, 1, 10'000'000));
  Opts.Layout = Layout;
  // One delivery counter per queue item: keep that array a sane size.
  if (uint64_t(Opts.Threads) * Opts.Iterations > (uint64_t(1) << 26))
    jitlock::tools::usageError("threads x iterations must not exceed " +
                               Twine(uint64_t(1) << 26));
  return Opts;
}

} // namespace

int main(int Argc, char **Argv) {
  Options Opts = parseOptions(Argc, Argv);

  if (Opts.Layout) {
    jitlock_rt_print_layout(stdout);
    std::printf("\n");
  }
  checkLayout();
  // Configuration is only allowed before any thread attaches.
  installMisuseHandler();

  // Heap-allocated: the queue's item counters scale with the run.
  auto W = std::make_unique<World>(Opts);
  jitlock_thread *Main = jitlock_rt_attach();
  if (!Main)
    fail("jitlock_rt_attach returned null");
  checkMisuse(Main, W->Stray);
  // A hash installed before the run must survive the inflations (account 0
  // is the first lock every audit takes) and shutdown.
  uint64_t Hash = jitlock_rt_identity_hash(Main, &W->Accounts[0]);
  if (Hash == 0)
    fail("jitlock_rt_identity_hash returned 0 with hashes enabled");

  std::printf("running %u threads x %u iterations (queue capacity %u, "
              "recursion depth %u, %u accounts)\n",
              Opts.Threads, Opts.Iterations, W->Q.Capacity, RecursionDepth,
              NumAccounts);
  auto Begin = std::chrono::steady_clock::now();
  std::vector<std::thread> Workers;
  for (unsigned I = 0; I < Opts.Threads; ++I)
    Workers.emplace_back(runWorker, std::ref(*W), I);
  for (std::thread &T : Workers)
    T.join();
  auto Elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - Begin);
  std::printf("done in %lld ms\n\ninvariants\n",
              static_cast<long long>(Elapsed.count()));

  bool Ok = verifyResults(*W);
  if (jitlock_rt_peek_hash(&W->Accounts[0]) != Hash) {
    std::fprintf(stderr, "jitlock-demo: FAILED: identity hash changed\n");
    Ok = false;
  }
  check(jitlock_rt_detach(), "jitlock_rt_detach");
  printStats();

  int Status = jitlock_rt_shutdown();
  std::printf("\njitlock_rt_shutdown: %s\n", jitlock_rt_status_name(Status));
  Ok &= Status == JITLOCK_OK && verifyAfterShutdown(*W, Hash);

  std::printf("%s\n", Ok ? "jitlock-demo: all invariants held"
                         : "jitlock-demo: FAILED");
  return Ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
