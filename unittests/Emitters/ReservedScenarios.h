//===- ReservedScenarios.h - Lock reservation's emitted paths --*- C++ -*-===//
//
// The scenarios of the reserved enter and exit (R1, R4 and E5's test of the
// reservation field; lib/Runtime/Synchronizer.cpp), for the emitter tests of
// every target: ReservedEmitterTest.cpp (x86_64, native) and
// A64ReservedTest.cpp (AArch64, under qemu). A target supplies a Driver
// that runs its emitted sequences for one register assignment; the slow
// paths are the counting stand-ins below, which change nothing, so that
// each scenario sees exactly the state the inline code left and whether it
// gave up. Headers are put in the reserved state by writing them, as the
// runtime's R2 would. Needs only the runtime's C ABI, the emitters' common
// header and GoogleTest.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_EMITTERS_RESERVEDSCENARIOS_H
#define JITLOCK_UNITTESTS_EMITTERS_RESERVEDSCENARIOS_H

#include "jitlock/Emitters/Common.h"
#include "jitlock/jitlock_rt.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace rsv_test {

/// The reservation field the tests configure: 16 bits at bit 40.
constexpr uint32_t ReserveShift = 40, ReserveBits = 16;

/// Configures the runtime for JITLOCK_LOCKING_RESERVED, once, before any
/// layout is handed out; returns whether it took.
inline bool configureReserved() {
  static const bool Ok = [] {
    jitlock_rt_config C;
    jitlock_rt_default_config(&C);
    C.locking_mode = JITLOCK_LOCKING_RESERVED;
    C.reserve_shift = ReserveShift;
    C.reserve_bits = ReserveBits;
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
  const uint64_t Ones = ~uint64_t(0) >> (64 - L.reserve_bits);
  const uint64_t Index = (Tag >> L.reserve_shift) & Ones;
  const uint64_t OtherIndex = Index + 1 < Ones ? Index + 1 : Index - 1;
  const uint64_t Unlocked = EmbedderBits | L.unlocked_value;
  const uint64_t Fast = EmbedderBits; // fast-locked: bits 00, field 0
  const uint64_t Mine = EmbedderBits | Tag;
  const uint64_t Others =
      EmbedderBits | L.unlocked_value | OtherIndex << L.reserve_shift;
  const uint64_t Reservable =
      EmbedderBits | L.unlocked_value | L.reservable_value;
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

  // R1 and R4: reserved to this thread. The header is bit-identical after
  // the enter and the exit; the lock stack holds obj in between; no call.
  Reset(Mine);
  Enter();
  EXPECT_EQ(H, Mine) << What << ": R1 wrote the header";
  ASSERT_EQ(TV.depth(), 1u) << What << ": R1 did not push";
  EXPECT_EQ(TV.entry(0), &O) << What;
  Exit();
  EXPECT_EQ(H, Mine) << What << ": R4 wrote the header";
  EXPECT_EQ(TV.depth(), 0u) << What << ": R4 did not pop";
  EXPECT_EQ(Log.Enters + Log.Exits, 0) << What << ": reserved path called";

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

  // Reserved to another thread, or reservable: never E5's CAS, the runtime
  // (R3, R2) with the header and the lock stack untouched.
  for (uint64_t Header : {Others, Reservable}) {
    Reset(Header);
    Enter();
    EXPECT_EQ(Log.Enters, 1) << What << ": header " << std::hex << Header
                             << " did not go to the runtime";
    EXPECT_EQ(Log.HeaderAtCall, Header) << What << ": the header changed";
    EXPECT_EQ(H, Header) << What;
    EXPECT_EQ(TV.depth(), 0u) << What;
  }

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
