//===- ReservedScenarios.h - Lock reservation's emitted paths --*- C++ -*-===//
//
// The scenarios of the reserved enter and exit (R1, R2, R4 and E5's test of
// the reservation field; lib/Runtime/Synchronizer.cpp), for the emitter tests
// of every target: ReservedEmitterTest.cpp (x86_64, native) and
// A64ReservedTest.cpp (AArch64, under qemu). A target supplies a Driver
// that runs its emitted sequences for one register assignment; the slow
// paths are the counting stand-ins below, which change nothing, so that
// each scenario sees exactly the state the inline code left and whether it
// gave up. Headers are put in the reserved state by writing them, as R2
// would, or by the emitted R2 itself. Needs only the runtime's C ABI, the
// emitters' common header and GoogleTest.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_EMITTERS_RESERVEDSCENARIOS_H
#define JITLOCK_UNITTESTS_EMITTERS_RESERVEDSCENARIOS_H

#include "jitlock/Emitters/Common.h"
#include "jitlock/jitlock_rt.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace rsv_test {

/// The reservation field the tests configure: 16 bits at bit 40.
constexpr uint32_t ReserveShift = 40, ReserveBits = 16;

/// Configures the runtime for JITLOCK_LOCKING_RESERVED, once, before any
/// layout is handed out; returns whether it took. JITLOCK_TEST_HEADER_OFFSET
/// (0 to 24, a multiple of 8: within TestObject) moves the header, so that
/// the sequences that need the header's address in a register run too.
inline bool configureReserved() {
  static const bool Ok = [] {
    jitlock_rt_config C;
    jitlock_rt_default_config(&C);
    if (const char *Offset = getenv("JITLOCK_TEST_HEADER_OFFSET")) {
      const int Value = atoi(Offset);
      if (Value < 0 || Value > 24 || Value % 8)
        return false;
      C.header_offset = Value;
    }
    C.locking_mode = JITLOCK_LOCKING_RESERVED;
    C.reserve_shift = ReserveShift;
    C.reserve_bits = ReserveBits;
    // No revocation limit: runFirstLockers revokes many times per thread,
    // and a thread past the limit would stop reserving.
    C.reserve_revoke_limit = 0;
    return jitlock_rt_configure(&C) == JITLOCK_OK;
  }();
  return Ok;
}

/// The reserved layout (configureReserved first).
inline const jitlock_rt_layout &reservedLayout() {
  static const jitlock_rt_layout L = [] {
    jitlock_rt_layout Out;
    jitlock_rt_get_layout(&Out);
    return Out;
  }();
  return L;
}

/// What the stand-in slow paths saw.
struct SlowLog {
  int Enters = 0, Exits = 0;
  uint64_t HeaderAtCall = 0;
  const uint64_t *Header = nullptr;
};
inline SlowLog &slowLog() {
  static SlowLog Log;
  return Log;
}
inline int countEnter(jitlock_thread *, void *) {
  ++slowLog().Enters;
  if (slowLog().Header)
    slowLog().HeaderAtCall = *slowLog().Header;
  return JITLOCK_OK;
}
inline int countExit(jitlock_thread *, void *) {
  ++slowLog().Exits;
  if (slowLog().Header)
    slowLog().HeaderAtCall = *slowLog().Header;
  return JITLOCK_OK;
}

/// The emitters' slow paths: countEnter, and countExit for both exits.
inline jitlock::emit::RuntimeEntries countingEntries() {
  jitlock::emit::RuntimeEntries RT;
  RT.Enter = reinterpret_cast<const void *>(&countEnter);
  RT.Exit = reinterpret_cast<const void *>(&countExit);
  RT.ExitQueued = reinterpret_cast<const void *>(&countExit);
  return RT;
}

/// Runs one target's emitted sequences, for one register assignment, with
/// countEnter and countExit as the slow paths (and the exit's queued call).
class Driver {
public:
  virtual ~Driver() = default;
  virtual void run(bool Enter, void *Obj, jitlock_thread *Thread) = 0;
};

/// The thread's lock stack and tag, as the emitted code sees them.
class ThreadView {
public:
  ThreadView(jitlock_thread *T, const jitlock_rt_layout &L) : T(T), L(L) {}
  uint32_t top() const {
    uint32_t Top;
    std::memcpy(&Top, bytes() + L.lock_stack_top_offset, 4);
    return Top;
  }
  unsigned depth() const { return (top() - L.lock_stack_base_offset) / 8; }
  void *entry(unsigned I) const {
    void *E;
    std::memcpy(&E, bytes() + L.lock_stack_base_offset + 8 * I, 8);
    return E;
  }
  uint64_t tag() const {
    uint64_t Tag;
    std::memcpy(&Tag, bytes() + L.reserve_tag_offset, 8);
    return Tag;
  }
  /// Writes the tag; only between this thread's lock operations, which
  /// read it.
  void setTag(uint64_t Tag) {
    std::memcpy(reinterpret_cast<char *>(T) + L.reserve_tag_offset, &Tag, 8);
  }
  unsigned capacity() const {
    return (L.lock_stack_end_offset - L.lock_stack_base_offset) / 8;
  }

private:
  const char *bytes() const { return reinterpret_cast<const char *>(T); }
  jitlock_thread *T;
  const jitlock_rt_layout &L;
};

/// An object whose header the scenarios write; embedder bits outside the
/// lock bits, the hash field and the reservation field, which every path
/// must keep.
struct alignas(16) TestObject {
  uint64_t Words[4] = {};
  uint64_t &header(const jitlock_rt_layout &L) {
    return *reinterpret_cast<uint64_t *>(reinterpret_cast<char *>(this) +
                                         L.header_offset);
  }
};
constexpr uint64_t EmbedderBits = (uint64_t(1) << 60) | 0x30;

/// A test object's header, reservable and unlocked.
inline uint64_t reservableHeader(const jitlock_rt_layout &L) {
  return EmbedderBits | L.unlocked_value | L.reservable_value;
}

/// A test object's header reserved to a thread other than the one whose tag
/// is `Tag` (the next index, or the one before).
inline uint64_t reservedToAnother(const jitlock_rt_layout &L, uint64_t Tag) {
  const uint64_t Ones = ~uint64_t(0) >> (64 - L.reserve_bits);
  const uint64_t Index = (Tag >> L.reserve_shift) & Ones;
  const uint64_t Other = Index + 1 < Ones ? Index + 1 : Index - 1;
  return EmbedderBits | L.unlocked_value | Other << L.reserve_shift;
}

/// Every scenario, on the calling thread (attached, with a reserve tag).
/// `What` names the target and register assignment in failures.
inline void runReservedScenarios(Driver &D, const std::string &What) {
  const jitlock_rt_layout &L = reservedLayout();
  ASSERT_EQ(L.locking_mode, uint32_t(JITLOCK_LOCKING_RESERVED)) << What;
  jitlock_thread *Self = jitlock_rt_current();
  ASSERT_NE(Self, nullptr) << What;
  ThreadView TV(Self, L);
  const uint64_t Tag = TV.tag();
  ASSERT_NE(Tag, ~uint64_t(0)) << What << ": the thread may not reserve";
  const uint64_t Unlocked = EmbedderBits | L.unlocked_value;
  const uint64_t Fast = EmbedderBits; // fast-locked: bits 00, field 0
  const uint64_t Mine = EmbedderBits | Tag;
  const uint64_t Others = reservedToAnother(L, Tag);
  const uint64_t Reservable = reservableHeader(L);
  ASSERT_EQ(TV.depth(), 0u) << What;

  TestObject O;
  uint64_t &H = O.header(L);
  SlowLog &Log = slowLog();
  auto Reset = [&](uint64_t Header) {
    H = Header;
    Log = SlowLog();
    Log.Header = &H;
  };
  auto Enter = [&] { D.run(true, &O, Self); };
  auto Exit = [&] { D.run(false, &O, Self); };

  // An enter from `Start` that leaves the header reserved to this thread
  // and pushes obj, then R4's exit, which writes nothing; no runtime call.
  auto EnterReservedAndExit = [&](uint64_t Start, const std::string &Step) {
    Reset(Start);
    Enter();
    EXPECT_EQ(H, Mine) << What << ": " << Step << ": not reserved to self";
    ASSERT_EQ(TV.depth(), 1u) << What << ": " << Step << " did not push";
    EXPECT_EQ(TV.entry(0), &O) << What;
    Exit();
    EXPECT_EQ(H, Mine) << What << ": " << Step << ", then R4 wrote the header";
    EXPECT_EQ(TV.depth(), 0u) << What << ": R4 did not pop";
    EXPECT_EQ(Log.Enters + Log.Exits, 0)
        << What << ": " << Step << " or R4 called the runtime";
  };

  // R1 and R4: reserved to this thread. The header is bit-identical after
  // the enter and the exit; the lock stack holds obj in between.
  EnterReservedAndExit(Mine, "R1");
  if (::testing::Test::HasFatalFailure())
    return;

  // Recursion: R1 three times, R4 three times.
  Reset(Mine);
  for (unsigned I = 1; I <= 3; ++I) {
    Enter();
    EXPECT_EQ(TV.depth(), I) << What;
    EXPECT_EQ(TV.entry(I - 1), &O) << What;
  }
  for (unsigned I = 3; I >= 1; --I) {
    Exit();
    EXPECT_EQ(TV.depth(), I - 1) << What;
    EXPECT_EQ(H, Mine) << What;
  }
  EXPECT_EQ(Log.Enters + Log.Exits, 0) << What;

  // R2: reservable, unlocked: reserved to this thread inline (the field
  // becomes its index, every other bit kept) and pushed; the exit is R4's.
  EnterReservedAndExit(Reservable, "R2");
  if (::testing::Test::HasFatalFailure())
    return;

  // Reserved to another thread (R3), or reservable but fast-locked (by a
  // thread that may not reserve, E5 in the runtime): never a CAS, the
  // runtime with the header and the lock stack untouched.
  const uint64_t ReservableLocked = Reservable & ~L.lock_mask;
  for (uint64_t Header : {Others, ReservableLocked}) {
    Reset(Header);
    Enter();
    EXPECT_EQ(Log.Enters, 1) << What << ": header " << std::hex << Header
                             << " did not go to the runtime";
    EXPECT_EQ(Log.HeaderAtCall, Header) << What << ": the header changed";
    EXPECT_EQ(H, Header) << What;
    EXPECT_EQ(TV.depth(), 0u) << What;
  }

  // A thread that may not reserve (tag ~0, past reserve_revoke_limit):
  // R2 leaves a reservable header to the runtime.
  TV.setTag(~uint64_t(0));
  Reset(Reservable);
  Enter();
  TV.setTag(Tag);
  EXPECT_EQ(Log.Enters, 1) << What << ": R2 reserved for a tag of ~0";
  EXPECT_EQ(H, Reservable) << What;
  EXPECT_EQ(TV.depth(), 0u) << What;

  // Field 0: the lightweight fast lock and unlock, inline.
  Reset(Unlocked);
  Enter();
  EXPECT_EQ(H, Fast) << What << ": E5 did not fast-lock";
  EXPECT_EQ(TV.depth(), 1u) << What;
  Enter();
  EXPECT_EQ(TV.depth(), 2u) << What << ": E4";
  Exit();
  EXPECT_EQ(H, Fast) << What << ": X3";
  Exit();
  EXPECT_EQ(H, Unlocked) << What << ": X4 did not unlock";
  EXPECT_EQ(TV.depth(), 0u) << What;
  EXPECT_EQ(Log.Enters + Log.Exits, 0) << What;

  // Revoked while held: R1's hold, then the revocation fast-locks the
  // header for this thread (field 0). The exit is X4's, which unlocks.
  Reset(Mine);
  Enter();
  H = Fast;
  Exit();
  EXPECT_EQ(H, Unlocked) << What << ": the revoked exit did not take X4";
  EXPECT_EQ(TV.depth(), 0u) << What;
  EXPECT_EQ(Log.Enters + Log.Exits, 0) << What;

  // Revoked while held twice: the first exit is recursive (X3, after the
  // pop) and leaves the header fast-locked; only the second unlocks.
  Reset(Mine);
  Enter();
  Enter();
  H = Fast;
  Exit();
  EXPECT_EQ(H, Fast) << What << ": a recursive exit of a revoked "
                     << "reservation unlocked the object";
  EXPECT_EQ(TV.depth(), 1u) << What;
  Exit();
  EXPECT_EQ(H, Unlocked) << What;
  EXPECT_EQ(TV.depth(), 0u) << What;
  EXPECT_EQ(Log.Enters + Log.Exits, 0) << What;

  // An exit of a reserved object this thread does not hold: not on the
  // lock stack, not a monitor: the runtime, which refuses it.
  Reset(Mine);
  Exit();
  EXPECT_EQ(Log.Exits, 1) << What;
  EXPECT_EQ(H, Mine) << What;

  // A full lock stack: R1 too leaves it to the runtime (E2).
  std::vector<TestObject> Held(TV.capacity());
  for (TestObject &Other : Held) {
    Other.header(L) = Mine;
    D.run(true, &Other, Self);
  }
  ASSERT_EQ(TV.depth(), TV.capacity()) << What;
  Reset(Mine);
  Enter();
  EXPECT_EQ(Log.Enters, 1) << What << ": R1 pushed onto a full lock stack";
  EXPECT_EQ(TV.depth(), TV.capacity()) << What;
  for (size_t I = Held.size(); I-- > 0;)
    D.run(false, &Held[I], Self);
  EXPECT_EQ(TV.depth(), 0u) << What;
  EXPECT_EQ(Log.Exits, 0) << What;
}

/// What the write fault of runLostRace does: the header the other thread
/// wrote meanwhile, stored once the page is writable again.
struct LostRace {
  void *Page = nullptr;
  size_t PageSize = 0;
  uint64_t *Header = nullptr;
  uint64_t Winner = 0;
  volatile sig_atomic_t Faults = 0;
};
inline LostRace &lostRace() {
  static LostRace R;
  return R;
}
inline void onWriteFault(int, siginfo_t *Info, void *) {
  LostRace &R = lostRace();
  char *Page = static_cast<char *>(R.Page);
  char *At = static_cast<char *>(Info->si_addr);
  if (At < Page || At >= Page + R.PageSize || R.Faults) {
    signal(SIGSEGV, SIG_DFL); // not this test's fault: crash as it would
    return;
  }
  R.Faults = 1;
  mprotect(R.Page, R.PageSize, PROT_READ | PROT_WRITE);
  *R.Header = R.Winner;
}

/// R2 losing its race, deterministically: the object's page is read-only,
/// so E1's load succeeds and R2's first write faults; the fault handler
/// makes the header reserved to another thread (as that thread's R2 would
/// have between E1 and this CAS) and returns to the write. The CAS must
/// fail and leave the object to the runtime with the other thread's
/// header; a plain store would take it.
inline void runLostRace(Driver &D, const std::string &What) {
  const jitlock_rt_layout &L = reservedLayout();
  jitlock_thread *Self = jitlock_rt_current();
  ASSERT_NE(Self, nullptr) << What;
  ThreadView TV(Self, L);
  const uint64_t Reservable = reservableHeader(L);
  const uint64_t Others = reservedToAnother(L, TV.tag());
  LostRace &R = lostRace();
  R.PageSize = size_t(sysconf(_SC_PAGESIZE));
  R.Page = mmap(nullptr, R.PageSize, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(R.Page, MAP_FAILED) << What;
  // In the middle of the page, whatever the header offset.
  auto *O = new (static_cast<char *>(R.Page) + R.PageSize / 2) TestObject;
  R.Header = &O->header(L);
  R.Winner = Others;
  R.Faults = 0;
  *R.Header = Reservable;
  SlowLog &Log = slowLog();
  Log = SlowLog();
  Log.Header = R.Header;
  struct sigaction Handler = {}, Previous = {};
  Handler.sa_sigaction = onWriteFault;
  Handler.sa_flags = SA_SIGINFO;
  sigemptyset(&Handler.sa_mask);
  ASSERT_EQ(sigaction(SIGSEGV, &Handler, &Previous), 0) << What;
  mprotect(R.Page, R.PageSize, PROT_READ);
  D.run(true, O, Self);
  sigaction(SIGSEGV, &Previous, nullptr);
  mprotect(R.Page, R.PageSize, PROT_READ | PROT_WRITE);
  EXPECT_EQ(R.Faults, 1) << What << ": R2 did not write the header";
  EXPECT_EQ(*R.Header, Others)
      << What << ": R2 overwrote another thread's reservation";
  EXPECT_EQ(Log.Enters, 1) << What << ": a lost R2 did not call the runtime";
  EXPECT_EQ(Log.HeaderAtCall, Others) << What;
  EXPECT_EQ(TV.depth(), 0u) << What << ": a lost R2 pushed";
  if (TV.depth() != 0) // leave the thread as it was for the next scenario
    D.run(false, O, Self);
  munmap(R.Page, R.PageSize);
}

/// The runtime's reservation counters.
inline jitlock_reservation_stats reservationStats() {
  jitlock_reservation_stats S{};
  S.struct_size = sizeof(S);
  EXPECT_EQ(jitlock_rt_fill_reservation_stats(&S), JITLOCK_OK);
  return S;
}

/// Makes a Driver whose slow paths are the runtime's own, for the calling
/// thread; `Pick` chooses its register assignment.
using DriverMaker = std::function<std::unique_ptr<Driver>(uint64_t Pick)>;

/// The sizes of runFirstLockers: a native run affords more than qemu.
struct FirstLockerSizes {
  unsigned Threads = 4, Rounds = 16, Objects = 64, Shuffles = 1000;
};

/// R2 on many threads. Each round brings fresh reservable objects, which
/// every thread then locks in the same order, all meeting before each, so
/// that R2's CAS decides the first locker of each while the others contend
/// and revoke it (R3, in the
/// runtime, by a handshake that reaches the reserving thread at its poll
/// after each exit); then `Shuffles` locks of objects picked at random,
/// sometimes twice (held twice when revoked). Each thread runs its own
/// register assignment. Checked under every lock: no other thread is
/// inside (mutual exclusion, and no update of the payload is lost); the
/// header is not reserved to another thread; the first locker of an object
/// finds it reserved to itself. (A race R2 loses is made certain by
/// runLostRace.) And no reservation was counted by the
/// runtime's R2 (a header stays reservable only until one CAS wins, so
/// every reservation is inline), while the revocations are.
inline void runFirstLockers(const DriverMaker &Make, uint64_t Seed,
                            const FirstLockerSizes &N,
                            const std::string &What) {
  const jitlock_rt_layout &L = reservedLayout();
  std::printf("%s: seed %llu\n", What.c_str(), (unsigned long long)Seed);
  struct Counted {
    TestObject O;
    uint64_t Payload = 0;
    std::atomic<int> Inside{0};
    std::atomic<uint64_t> Entries{0};
  };
  const unsigned Total = N.Rounds * N.Objects;
  std::unique_ptr<Counted[]> Objs(new Counted[Total]);
  for (unsigned I = 0; I != Total; ++I)
    Objs[I].O.header(L) = reservableHeader(L);
  const jitlock_reservation_stats Before = reservationStats();
  std::atomic<unsigned> Ready{0}, Overlaps{0}, Foreign{0}, NotReservedFirst{0},
      Failures{0};
  std::atomic<uint64_t> ReservedFirst{0};
  std::vector<std::thread> Workers;
  for (unsigned T = 0; T != N.Threads; ++T)
    Workers.emplace_back([&, T] {
      jitlock_thread *Self = jitlock_rt_attach();
      if (!Self) {
        ++Failures;
        return;
      }
      std::mt19937_64 Rng(Seed + T);
      std::unique_ptr<Driver> D = Make(Rng());
      ThreadView TV(Self, L);
      auto Section = [&](Counted &C, bool Twice) {
        D->run(true, &C.O, Self);
        if (Twice)
          D->run(true, &C.O, Self);
        if (C.Inside.fetch_add(1) != 0)
          ++Overlaps;
        const uint64_t H = std::atomic_ref<uint64_t>(C.O.header(L))
                               .load(std::memory_order_relaxed);
        const uint64_t Tag = TV.tag(), Field = H & L.reservable_value;
        const bool Reserved = (H & L.lock_mask) == L.unlocked_value &&
                              Field != 0 && Field != L.reservable_value;
        if (Reserved && (H & L.reserve_mask) != Tag)
          ++Foreign;
        if (C.Entries.fetch_add(1) == 0 && Tag != ~uint64_t(0)) {
          if ((H & L.reserve_mask) == Tag)
            ++ReservedFirst;
          else
            ++NotReservedFirst;
        }
        // A load and a store apart, not an increment: two threads inside
        // lose updates. Relaxed atomics: the lock is JIT code, which the
        // race detector cannot see into.
        std::atomic_ref<uint64_t> Payload(C.Payload);
        const uint64_t V = Payload.load(std::memory_order_relaxed);
        for (int Spin = 0; Spin != 8; ++Spin)
          asm volatile("" ::: "memory");
        Payload.store(V + 1, std::memory_order_relaxed);
        C.Inside.fetch_sub(1);
        if (Twice)
          D->run(false, &C.O, Self);
        D->run(false, &C.O, Self);
        jitlock_rt_safepoint_poll(Self); // where revocations reach it
      };
      unsigned Meetings = 0;
      for (unsigned R = 0; R != N.Rounds; ++R) {
        Counted *Round = &Objs[R * N.Objects];
        for (unsigned I = 0; I != N.Objects; ++I) {
          // All threads meet before each fresh object, so that they reach
          // its R2 together; they poll while they wait.
          Ready.fetch_add(1);
          ++Meetings;
          for (unsigned Spin = 0;
               Ready.load(std::memory_order_acquire) < N.Threads * Meetings;
               ++Spin) {
            if (Spin % 256 == 255) {
              jitlock_rt_safepoint_poll(Self);
              std::this_thread::yield();
            }
          }
          Section(Round[I], false);
        }
        for (unsigned I = 0; I != N.Shuffles; ++I)
          Section(Round[Rng() % N.Objects], Rng() % 4 == 0);
      }
      if (TV.depth() != 0)
        ++Failures;
      if (jitlock_rt_detach() != JITLOCK_OK)
        ++Failures;
    });
  // Safe while it waits for them.
  jitlock_thread *Main = jitlock_rt_current();
  const bool Native = Main && jitlock_rt_enter_native(Main) == JITLOCK_OK;
  for (std::thread &W : Workers)
    W.join();
  if (Native)
    jitlock_rt_leave_native(Main);
  const std::string Why = What + ", seed " + std::to_string(Seed);
  EXPECT_EQ(Failures.load(), 0u) << Why;
  EXPECT_EQ(Overlaps.load(), 0u) << Why << ": two threads held an object";
  EXPECT_EQ(Foreign.load(), 0u)
      << Why << ": a held object's header was reserved to another thread";
  EXPECT_EQ(NotReservedFirst.load(), 0u)
      << Why << ": a first locker did not find the object reserved to it";
  for (unsigned I = 0; I != Total; ++I)
    ASSERT_EQ(Objs[I].Payload, Objs[I].Entries.load())
        << Why << ": object " << I << " lost updates";
  const jitlock_reservation_stats After = reservationStats();
  const uint64_t ByRuntime = After.reservations - Before.reservations;
  const uint64_t Revoked =
      (After.revocations_held - Before.revocations_held) +
      (After.revocations_unheld - Before.revocations_unheld);
  std::printf("%s: reserved by their first locker %llu (by the runtime's R2 "
              "%llu), revoked %llu\n",
              What.c_str(), (unsigned long long)ReservedFirst.load(),
              (unsigned long long)ByRuntime, (unsigned long long)Revoked);
  EXPECT_GT(ReservedFirst.load(), 0u) << Why;
  EXPECT_EQ(ByRuntime, 0u) << Why << ": R2 went through the runtime";
  EXPECT_GT(Revoked, 0u) << Why << ": no reservation was revoked";
}

/// The lines of asmjit's listing (its logger's text: one instruction or
/// "label:" per line), without indentation.
inline std::vector<std::string> listingLines(const std::string &Text) {
  std::vector<std::string> Lines;
  std::istringstream In(Text);
  for (std::string Line; std::getline(In, Line);) {
    size_t Start = Line.find_first_not_of(' ');
    if (Start != std::string::npos)
      Lines.push_back(Line.substr(Start));
  }
  return Lines;
}

/// How a target's branches read in the listing.
enum class BranchKind { None, Conditional, Always, Return };
using ClassifyFn = std::function<BranchKind(const std::string &Mnemonic)>;

/// The instructions one path runs: from the first line, falling through
/// every conditional branch but those `Taken` says (in the order they are
/// met) are taken, following unconditional ones, to the end of the listing
/// or a return. A branch's label is its last operand. Empty when a label
/// is not in the listing.
inline std::vector<std::string> walkPath(const std::vector<std::string> &Lines,
                                         const std::vector<bool> &Taken,
                                         const ClassifyFn &Classify) {
  std::vector<std::string> Path;
  size_t Decision = 0;
  for (size_t I = 0; I < Lines.size() && Path.size() < 200;) {
    const std::string &Line = Lines[I];
    if (Line.back() == ':') {
      ++I;
      continue;
    }
    Path.push_back(Line);
    BranchKind Kind = Classify(Line.substr(0, Line.find(' ')));
    if (Kind == BranchKind::Return)
      break;
    bool Follow = Kind == BranchKind::Always ||
                  (Kind == BranchKind::Conditional && Decision < Taken.size() &&
                   Taken[Decision]);
    if (Kind == BranchKind::Conditional)
      ++Decision;
    if (!Follow) {
      ++I;
      continue;
    }
    std::string Label = Line.substr(Line.find_last_of(" ,") + 1) + ":";
    size_t To = 0;
    while (To != Lines.size() && Lines[To] != Label)
      ++To;
    if (To == Lines.size())
      return {};
    I = To;
  }
  return Path;
}

/// Whether a path has an instruction whose mnemonic `IsAtomic` names.
inline bool
hasAtomic(const std::vector<std::string> &Path,
          const std::function<bool(const std::string &Mnemonic)> &IsAtomic) {
  for (const std::string &Line : Path)
    if (IsAtomic(Line.substr(0, Line.find(' '))))
      return true;
  return false;
}

inline std::string joinPath(const std::vector<std::string> &Path) {
  std::string Out;
  for (const std::string &Line : Path)
    Out += "  " + Line + "\n";
  return Out;
}

} // namespace rsv_test

#endif // JITLOCK_UNITTESTS_EMITTERS_RESERVEDSCENARIOS_H
