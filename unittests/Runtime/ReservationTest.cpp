//===- ReservationTest.cpp - Reserved locking in the runtime
//---------------===//
//
// R1-R4 and revokeOwn (the protocol comment in Synchronizer.cpp) through the
// runtime's own enter and exit: the owner's enters and exits write nothing;
// a contender's revocation leaves a held object locked by its holder (fast,
// or inflated when its entries are apart) and an unheld one never
// reservable again, whatever the owner does meanwhile (native, parked in a
// wait, blocked entering another monitor, detached); hashing, restore-locks,
// the queries, deflation and the revoke limit. Run under each monitor
// storage (JITLOCK_TEST_MONITORS).
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"
#include "Watchdog.h"

#include <cstring>
#include <random>

using namespace jitlock_test;

namespace {

// The reservation field: bits [40,48), clear of the hash ([8,39)) and of the
// test objects' embedder bits.
constexpr unsigned kReserveShift = 40;
constexpr unsigned kReserveBits = 8;
constexpr uint64_t kField = uint64_t(0xff) << kReserveShift;
constexpr uint64_t kReservable = kUnlockedHeader | kField;

uint64_t fieldOf(uint64_t h) { return h & kField; }

class ReservationTest : public RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    configureReserved(/*revokeLimit=*/0);
  }

  // The reserved mode needs a layout no code took yet: detach, shut down,
  // configure, attach again.
  void configureReserved(uint32_t revokeLimit) {
    ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    jitlock_rt_config cfg;
    testDefaultConfig(&cfg);
    cfg.locking_mode = JITLOCK_LOCKING_RESERVED;
    cfg.reserve_shift = kReserveShift;
    cfg.reserve_bits = kReserveBits;
    cfg.reserve_revoke_limit = revokeLimit;
    cfg.misuse_handler = &MisuseLog::handler;
    cfg.misuse_ctx = &log;
    ASSERT_EQ(jitlock_rt_configure(&cfg), JITLOCK_OK);
    self = jitlock_rt_attach();
    ASSERT_NE(self, nullptr);
    base = rawStats();
  }

  static uint64_t tagOf(const jitlock_thread *t) {
    jitlock_rt_layout l;
    jitlock_rt_get_layout(&l);
    uint64_t tag;
    memcpy(&tag, reinterpret_cast<const char *>(t) + l.reserve_tag_offset, 8);
    return tag;
  }
  // The header `o` shows while reserved to `t`.
  static uint64_t reservedHeader(const jitlock_thread *t, uint64_t base) {
    return (base & ~kField) | (tagOf(t) & kField);
  }

  static jitlock_reservation_stats rawStats() {
    jitlock_reservation_stats s;
    s.struct_size = sizeof(s);
    EXPECT_EQ(jitlock_rt_fill_reservation_stats(&s), JITLOCK_OK);
    return s;
  }
  // The counters since the test configured the runtime.
  jitlock_reservation_stats rstats() const {
    jitlock_reservation_stats s = rawStats();
    s.reservations -= base.reservations;
    s.reserved_enters -= base.reserved_enters;
    s.reserved_exits -= base.reserved_exits;
    s.revocations_held -= base.revocations_held;
    s.revocations_unheld -= base.revocations_unheld;
    s.revocations_detached -= base.revocations_detached;
    s.threads_stopped -= base.threads_stopped;
    return s;
  }

  // Waits (bounded) until `pred` holds.
  template <typename Pred> static bool eventually(Pred pred) {
    auto end = std::chrono::steady_clock::now() + kDeadline;
    while (std::chrono::steady_clock::now() < end) {
      if (pred())
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }

  // Waits until `o` has a monitor with a thread queued to enter it.
  static bool contended(const void *o) {
    return eventually([&] {
      jitlock_lock_info i = inspect(o);
      return i.state == JITLOCK_STATE_INFLATED && i.entry_queued > 0;
    });
  }

  void stressRounds(uint64_t seed);

  MisuseLog log;
  jitlock_reservation_stats base{};
};

TEST_F(ReservationTest, OwnerEntersAndExitsWithoutWriting) {
  Obj *o = newObj(kReservable);
  uint64_t inflations = stats().inflations;
  ASSERT_EQ(enter(o), JITLOCK_OK); // R2
  const uint64_t reserved = o->hdr();
  EXPECT_EQ(reserved, reservedHeader(self, kReservable));
  EXPECT_NE(fieldOf(reserved), 0u);
  EXPECT_NE(fieldOf(reserved), kField);
  for (int round = 0; round != 3; ++round) {
    ASSERT_EQ(enter(o), JITLOCK_OK); // R1
    ASSERT_EQ(enter(o), JITLOCK_OK);
    EXPECT_EQ(o->hdr(), reserved);
    EXPECT_EQ(lockStack(self).size(), 3u);
    ASSERT_EQ(exit(o), JITLOCK_OK);
    ASSERT_EQ(exit(o), JITLOCK_OK);
    EXPECT_EQ(o->hdr(), reserved);
  }
  ASSERT_EQ(exit(o), JITLOCK_OK); // R4: still reserved, nothing written
  EXPECT_EQ(o->hdr(), reserved);
  EXPECT_TRUE(lockStack(self).empty());
  ASSERT_EQ(enter(o), JITLOCK_OK);
  ASSERT_EQ(exit(o), JITLOCK_OK);
  EXPECT_EQ(o->hdr(), reserved);
  jitlock_reservation_stats after = rstats();
  EXPECT_EQ(after.reservations, 1u);
  EXPECT_EQ(after.reserved_enters, 7u);
  EXPECT_EQ(after.reserved_exits, 2u); // the others were X3's
  EXPECT_EQ(stats().inflations, inflations);

  // An object the embedder did not mark reservable is fast-locked as ever.
  Obj *plain = newObj();
  ASSERT_EQ(enter(plain), JITLOCK_OK);
  EXPECT_EQ(plain->lowBits(), kFastLocked);
  ASSERT_EQ(exit(plain), JITLOCK_OK);
  EXPECT_EQ(plain->hdr(), kUnlockedHeader);
  EXPECT_EQ(rstats().reservations, after.reservations);
}

TEST_F(ReservationTest, StatsRefuseABadStruct) {
  EXPECT_EQ(jitlock_rt_fill_reservation_stats(nullptr), JITLOCK_EINVAL);
  jitlock_reservation_stats s{};
  s.struct_size = 4;
  EXPECT_EQ(jitlock_rt_fill_reservation_stats(&s), JITLOCK_EINVAL);
  EXPECT_EQ(s.reservations, 0u);
}

TEST_F(ReservationTest, AnExitWithoutAHoldIsRefused) {
  Obj *o = newObj(kReservable);
  ASSERT_EQ(enter(o), JITLOCK_OK);
  ASSERT_EQ(exit(o), JITLOCK_OK);
  const uint64_t reserved = o->hdr();
  EXPECT_EQ(exit(o), JITLOCK_ENOT_OWNER) << "reserved to us, not held";
  EXPECT_EQ(o->hdr(), reserved);
  ASSERT_EQ(enter(o), JITLOCK_OK);
  Worker other;
  other.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(other.thread(), o), JITLOCK_ENOT_OWNER);
  });
  EXPECT_EQ(o->hdr(), reserved);
  ASSERT_EQ(exit(o), JITLOCK_OK);
}

TEST_F(ReservationTest, RevokingAHeldObjectLeavesItLockedByItsHolder) {
  // The holder idles in native (Worker), where the contender's handshake
  // runs the revocation for it.
  Obj *o = newObj(kReservable);
  Worker holder, contender;
  holder.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(holder.thread(), o), JITLOCK_OK);
  });
  ASSERT_EQ(o->hdr(), reservedHeader(holder.thread(), kReservable));
  contender.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(contender.thread(), o), JITLOCK_OK);
  });
  // Revoked to fast-locked for the holder, then inflated by the contender,
  // which waits: the holder still holds it.
  ASSERT_TRUE(contended(o)) << describe(o);
  EXPECT_EQ(jitlock_rt_owner_of(o), holder.thread());
  EXPECT_FALSE(contender.finished());
  EXPECT_EQ(rstats().revocations_held, 1u);
  holder.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(holder.thread(), o), JITLOCK_OK);
  });
  ASSERT_TRUE(contender.join());
  EXPECT_EQ(jitlock_rt_owner_of(o), contender.thread());
  contender.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(contender.thread(), o), JITLOCK_OK);
  });
  // Never reserved again: the next lock is a fast lock or the monitor.
  ASSERT_EQ(enter(o), JITLOCK_OK);
  EXPECT_NE(inspect(o).state, uint32_t(JITLOCK_STATE_RESERVED));
  ASSERT_EQ(exit(o), JITLOCK_OK);
}

TEST_F(ReservationTest, RevocationWaitsForTheHoldersPoll) {
  // A holder running managed code without polling: its R1 and R4 write
  // nothing a contender could see, so the revocation must wait until the
  // holder is stopped at its poll (R3's handshake).
  Obj *o = newObj(kReservable);
  std::atomic<int> phase{0};
  jitlock_thread *holderThread = nullptr;
  std::thread holder([&] {
    holderThread = jitlock_rt_attach();
    EXPECT_EQ(jitlock_rt_monitor_enter(holderThread, o), JITLOCK_OK);
    phase.store(1);
    while (phase.load() == 1) // managed, no poll
      std::this_thread::yield();
    jitlock_rt_safepoint_poll(holderThread); // the revocation runs here
    while (phase.load() == 2)
      std::this_thread::yield();
    EXPECT_EQ(jitlock_rt_monitor_exit(holderThread, o), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
  while (phase.load() != 1)
    std::this_thread::yield();
  const uint64_t reserved = o->hdr();
  ASSERT_EQ(reserved, reservedHeader(holderThread, kReservable));
  Worker contender;
  contender.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(contender.thread(), o), JITLOCK_OK);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(o->hdr(), reserved) << "revoked while its holder ran";
  phase.store(2);
  ASSERT_TRUE(eventually([&] { return o->hdr() != reserved; }));
  EXPECT_EQ(rstats().revocations_held, 1u);
  EXPECT_FALSE(contender.finished());
  phase.store(3);
  holder.join();
  ASSERT_TRUE(contender.join());
  contender.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(contender.thread(), o), JITLOCK_OK);
  });
}

TEST_F(ReservationTest, RevokingAnUnheldObjectMakesItUnreservable) {
  Obj *o = newObj(kReservable);
  Worker holder;
  holder.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(holder.thread(), o), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_exit(holder.thread(), o), JITLOCK_OK);
  });
  ASSERT_EQ(o->hdr(), reservedHeader(holder.thread(), kReservable));
  EXPECT_EQ(inspect(o).state, uint32_t(JITLOCK_STATE_RESERVED));
  EXPECT_EQ(jitlock_rt_owner_of(o), nullptr);
  ASSERT_EQ(enter(o), JITLOCK_OK); // R3, then E5
  EXPECT_EQ(o->lowBits(), kFastLocked);
  EXPECT_EQ(fieldOf(o->hdr()), 0u);
  ASSERT_EQ(exit(o), JITLOCK_OK);
  EXPECT_EQ(o->hdr(), kUnlockedHeader);
  EXPECT_EQ(rstats().revocations_unheld, 1u);
  holder.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(holder.thread(), o), JITLOCK_OK);
    EXPECT_EQ(o->lowBits(), kFastLocked);
    ASSERT_EQ(jitlock_rt_monitor_exit(holder.thread(), o), JITLOCK_OK);
  });
  EXPECT_EQ(o->hdr(), kUnlockedHeader);
}

TEST_F(ReservationTest, HeldApartIsInflatedAnonymousAndExitsCorrectly) {
  // A B A: R1 pushes the second A apart from the first; the revocation must
  // not fast-lock it (the inner exit would then unlock it).
  Obj *a = newObj(kReservable), *b = newObj();
  Worker holder, contender;
  jitlock_thread *h = holder.thread();
  holder.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(h, a), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(h, b), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(h, a), JITLOCK_OK);
  });
  EXPECT_EQ(lockStack(h), (std::vector<void *>{a, b, a}));
  contender.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(contender.thread(), a), JITLOCK_OK);
  });
  ASSERT_TRUE(contended(a)) << describe(a);
  EXPECT_EQ(rstats().revocations_held, 1u);
  // The inner exit keeps it held.
  holder.call([&] { EXPECT_EQ(jitlock_rt_monitor_exit(h, a), JITLOCK_OK); });
  EXPECT_EQ(jitlock_rt_holds_lock(h, a), 1);
  EXPECT_EQ(jitlock_rt_owner_of(a), h) << describe(a);
  EXPECT_FALSE(contender.finished());
  holder.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(h, b), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(h, a), JITLOCK_OK);
  });
  ASSERT_TRUE(contender.join());
  EXPECT_EQ(jitlock_rt_owner_of(a), contender.thread());
  EXPECT_EQ(jitlock_rt_holds_lock(h, a), 0);
  contender.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(contender.thread(), a), JITLOCK_OK);
  });
  EXPECT_TRUE(lockStack(h).empty());
}

TEST_F(ReservationTest, RevokedWhileTheOwnerIsParkedInAWait) {
  Obj *o = newObj(kReservable), *p = newObj();
  Worker owner;
  jitlock_thread *w = owner.thread();
  owner.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(w, o), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_exit(w, o), JITLOCK_OK);
  });
  owner.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(w, p), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_wait(w, p), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(w, p), JITLOCK_OK);
  });
  ASSERT_TRUE(eventually([&] { return inspect(p).waiting == 1; }));
  ASSERT_EQ(enter(o), JITLOCK_OK); // the handshake runs for the waiter
  EXPECT_EQ(fieldOf(o->hdr()), 0u);
  ASSERT_EQ(exit(o), JITLOCK_OK);
  ASSERT_EQ(enter(p), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_notify(self, p), JITLOCK_OK);
  ASSERT_EQ(exit(p), JITLOCK_OK);
  ASSERT_TRUE(owner.join());
}

TEST_F(ReservationTest, RevokedWhileTheOwnerIsBlockedEntering) {
  Obj *o = newObj(kReservable), *p = newObj();
  Worker owner, contender;
  jitlock_thread *w = owner.thread();
  owner.call([&] { ASSERT_EQ(jitlock_rt_monitor_enter(w, o), JITLOCK_OK); });
  ASSERT_EQ(enter(p), JITLOCK_OK);
  owner.post([&] { EXPECT_EQ(jitlock_rt_monitor_enter(w, p), JITLOCK_OK); });
  ASSERT_TRUE(contended(p));
  contender.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(contender.thread(), o), JITLOCK_OK);
  });
  ASSERT_TRUE(contended(o)) << describe(o);
  EXPECT_EQ(jitlock_rt_owner_of(o), w);
  ASSERT_EQ(exit(p), JITLOCK_OK);
  ASSERT_TRUE(owner.join());
  owner.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(w, p), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(w, o), JITLOCK_OK);
  });
  ASSERT_TRUE(contender.join());
  contender.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(contender.thread(), o), JITLOCK_OK);
  });
}

TEST_F(ReservationTest, ADetachedThreadsReservationNeedsNoHandshake) {
  Obj *o = newObj(kReservable);
  uint64_t reserved;
  {
    Worker owner;
    owner.call([&] {
      ASSERT_EQ(jitlock_rt_monitor_enter(owner.thread(), o), JITLOCK_OK);
      ASSERT_EQ(jitlock_rt_monitor_exit(owner.thread(), o), JITLOCK_OK);
    });
    reserved = o->hdr();
  } // detached
  EXPECT_EQ(o->hdr(), reserved);
  ASSERT_EQ(enter(o), JITLOCK_OK);
  EXPECT_EQ(o->lowBits(), kFastLocked);
  ASSERT_EQ(exit(o), JITLOCK_OK);
  EXPECT_EQ(o->hdr(), kUnlockedHeader);
  EXPECT_EQ(rstats().revocations_detached, 1u);
}

TEST_F(ReservationTest, AHashKeepsTheReservation) {
  Obj *o = newObj(kReservable);
  Worker owner;
  jitlock_thread *w = owner.thread();
  owner.call([&] { ASSERT_EQ(jitlock_rt_monitor_enter(w, o), JITLOCK_OK); });
  uint64_t hash = jitlock_rt_identity_hash(self, o);
  ASSERT_NE(hash, 0u);
  EXPECT_EQ(o->hdr(), reservedHeader(w, kReservable) | hash << kHashShift);
  EXPECT_EQ(inspect(o).state, uint32_t(JITLOCK_STATE_RESERVED));
  owner.call([&] {
    EXPECT_EQ(jitlock_rt_identity_hash(w, o), hash);
    EXPECT_EQ(jitlock_rt_monitor_exit(w, o), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_enter(w, o), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(w, o), JITLOCK_OK);
  });
  EXPECT_EQ(o->hdr(), reservedHeader(w, kReservable) | hash << kHashShift);
  EXPECT_EQ(rstats().revocations_unheld + rstats().revocations_held, 0u);
  EXPECT_EQ(jitlock_rt_peek_hash(o), hash);
}

TEST_F(ReservationTest, RestoreLocksOfReservedObjects) {
  Obj *mine = newObj(kReservable), *theirs = newObj(kReservable);
  Worker other;
  other.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(other.thread(), theirs), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_exit(other.thread(), theirs), JITLOCK_OK);
  });
  // Held reserved by the frame, elided twice: the holds stay entries.
  ASSERT_EQ(enter(mine), JITLOCK_OK);
  jitlock_relock_entry held[] = {{mine, JITLOCK_RELOCK_HELD},
                                 {mine, JITLOCK_RELOCK_ELIDED},
                                 {theirs, JITLOCK_RELOCK_ELIDED}};
  ASSERT_EQ(jitlock_rt_restore_locks(self, held, 3, 0), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_holds_lock(self, theirs), 1);
  EXPECT_EQ(fieldOf(theirs->hdr()), 0u) << "revoked from the other thread";
  EXPECT_EQ(jitlock_rt_holds_lock(self, mine), 1);
  ASSERT_EQ(exit(theirs), JITLOCK_OK);
  ASSERT_EQ(exit(mine), JITLOCK_OK);
  ASSERT_EQ(exit(mine), JITLOCK_OK);
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_EQ(jitlock_rt_holds_lock(self, mine), 0);
  EXPECT_EQ(theirs->hdr() & kLockMask, kUnlocked);

  // Reserved to the owner and not held: revoked, then acquired.
  Obj *idle = newObj(kReservable);
  ASSERT_EQ(enter(idle), JITLOCK_OK);
  ASSERT_EQ(exit(idle), JITLOCK_OK);
  jitlock_relock_entry elided[] = {{idle, JITLOCK_RELOCK_ELIDED}};
  ASSERT_EQ(jitlock_rt_restore_locks(self, elided, 1, 0), JITLOCK_OK);
  EXPECT_EQ(idle->lowBits(), kFastLocked);
  ASSERT_EQ(exit(idle), JITLOCK_OK);
  EXPECT_EQ(idle->hdr(), kUnlockedHeader);
}

void recordRoot(void *ctx, void **slot, uint32_t kind, jitlock_thread *) {
  if (kind == JITLOCK_ROOT_LOCK_STACK)
    static_cast<std::vector<void *> *>(ctx)->push_back(*slot);
}

TEST_F(ReservationTest, OwnerQueriesAndRoots) {
  Obj *o = newObj(kReservable);
  Worker owner;
  jitlock_thread *w = owner.thread();
  owner.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(w, o), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(w, o), JITLOCK_OK);
  });
  jitlock_lock_info i = inspect(o);
  EXPECT_EQ(i.state, uint32_t(JITLOCK_STATE_RESERVED));
  EXPECT_EQ(i.owner, w);
  EXPECT_EQ(i.holds, 2u);
  EXPECT_EQ(jitlock_rt_owner_of(o), w);
  EXPECT_EQ(jitlock_rt_holds_lock(w, o), 1);
  EXPECT_EQ(jitlock_rt_holds_lock(self, o), 0);
  EXPECT_EQ(lockStack(w), (std::vector<void *>{o, o}));
  std::vector<void *> roots;
  jitlock_rt_enumerate_roots(&recordRoot, &roots);
  EXPECT_EQ(roots, (std::vector<void *>{o, o}));
  owner.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_exit(w, o), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_exit(w, o), JITLOCK_OK);
  });
  i = inspect(o);
  EXPECT_EQ(i.state, uint32_t(JITLOCK_STATE_RESERVED));
  EXPECT_EQ(i.owner, nullptr);
  EXPECT_EQ(jitlock_rt_holds_lock(w, o), 0);
}

TEST_F(ReservationTest, WaitFullStackAndDeflation) {
  // A wait inflates the owner's own reserved object (revokeOwn first).
  Obj *o = newObj(kReservable);
  ASSERT_EQ(enter(o), JITLOCK_OK);
  ASSERT_EQ(enter(o), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_notify(self, o), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_wait_timed(self, o, 1000), JITLOCK_ETIMEDOUT);
  EXPECT_EQ(inspect(o).state, uint32_t(JITLOCK_STATE_INFLATED));
  EXPECT_EQ(inspect(o).holds, 2u);
  ASSERT_EQ(exit(o), JITLOCK_OK);
  ASSERT_EQ(exit(o), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_owner_of(o), nullptr);
  EXPECT_GE(jitlock_rt_deflate_idle(), 1u);
  EXPECT_EQ(o->hdr(), withTableHash(o, kUnlockedHeader))
      << "deflated, with the field 0: never reserved again";

  // A full lock stack of reserved objects: E2 inflates the oldest one.
  std::vector<Obj *> objs;
  for (size_t n = 0; n != kCapacity + 1; ++n) {
    objs.push_back(newObj(kReservable));
    ASSERT_EQ(enter(objs.back()), JITLOCK_OK);
  }
  EXPECT_EQ(inspect(objs[0]).state, uint32_t(JITLOCK_STATE_INFLATED));
  EXPECT_EQ(inspect(objs[0]).owner, self);
  EXPECT_EQ(inspect(objs[1]).state, uint32_t(JITLOCK_STATE_RESERVED));
  for (size_t n = objs.size(); n-- != 0;)
    ASSERT_EQ(exit(objs[n]), JITLOCK_OK);
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_EQ(jitlock_rt_owner_of(objs[0]), nullptr);
}

TEST_F(ReservationTest, DeflationAfterARevocationApart) {
  Obj *a = newObj(kReservable), *b = newObj();
  Worker holder;
  jitlock_thread *h = holder.thread();
  holder.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(h, a), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(h, b), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(h, a), JITLOCK_OK);
  });
  // R3b inflates it; once both threads are done the monitor is idle.
  Worker contender;
  contender.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(contender.thread(), a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(contender.thread(), a), JITLOCK_OK);
  });
  ASSERT_TRUE(contended(a));
  holder.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(h, a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(h, b), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(h, a), JITLOCK_OK);
  });
  ASSERT_TRUE(contender.join());
  EXPECT_GE(jitlock_rt_deflate_idle(), 1u);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  EXPECT_EQ(b->hdr(), kUnlockedHeader);
}

TEST_F(ReservationTest, TheRevokeLimitStopsAThreadReserving) {
  configureReserved(/*revokeLimit=*/2);
  Obj *o1 = newObj(kReservable), *o2 = newObj(kReservable),
      *o3 = newObj(kReservable), *o4 = newObj(kReservable);
  Worker owner;
  jitlock_thread *w = owner.thread();
  owner.call([&] {
    for (Obj *o : {o1, o2, o3}) {
      ASSERT_EQ(jitlock_rt_monitor_enter(w, o), JITLOCK_OK);
      ASSERT_EQ(jitlock_rt_monitor_exit(w, o), JITLOCK_OK);
    }
    // Held reserved when the limit comes: revoked with it.
    ASSERT_EQ(jitlock_rt_monitor_enter(w, o3), JITLOCK_OK);
  });
  ASSERT_NE(tagOf(w), ~uint64_t(0));
  for (Obj *o : {o1, o2}) {
    ASSERT_EQ(enter(o), JITLOCK_OK);
    ASSERT_EQ(exit(o), JITLOCK_OK);
  }
  EXPECT_EQ(tagOf(w), ~uint64_t(0));
  EXPECT_EQ(rstats().threads_stopped, 1u);
  EXPECT_EQ(o3->lowBits(), kFastLocked) << "held: revoked with the limit";
  owner.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(w, o3), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_enter(w, o4), JITLOCK_OK);
    EXPECT_EQ(o4->lowBits(), kFastLocked) << "not reserved any more";
    EXPECT_EQ(jitlock_rt_monitor_exit(w, o4), JITLOCK_OK);
  });
  EXPECT_EQ(o3->hdr(), kUnlockedHeader);
  EXPECT_EQ(o4->hdr(), kReservable) << "still reservable for others";
  ASSERT_EQ(enter(o4), JITLOCK_OK);
  EXPECT_EQ(o4->hdr(), reservedHeader(self, kReservable));
  ASSERT_EQ(exit(o4), JITLOCK_OK);
}

TEST_F(ReservationTest, AnOwnIndexWithoutTagIsRevokedByItsThread) {
  configureReserved(/*revokeLimit=*/1);
  Obj *o1 = newObj(kReservable), *o2 = newObj(kReservable);
  Worker owner;
  jitlock_thread *w = owner.thread();
  owner.call([&] {
    for (Obj *o : {o1, o2}) {
      ASSERT_EQ(jitlock_rt_monitor_enter(w, o), JITLOCK_OK);
      ASSERT_EQ(jitlock_rt_monitor_exit(w, o), JITLOCK_OK);
    }
  });
  ASSERT_EQ(enter(o1), JITLOCK_OK);
  ASSERT_EQ(exit(o1), JITLOCK_OK);
  ASSERT_EQ(tagOf(w), ~uint64_t(0));
  // o2 is still reserved to w's index, which w no longer matches.
  owner.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(w, o2), JITLOCK_OK);
    EXPECT_EQ(o2->lowBits(), kFastLocked);
    EXPECT_EQ(jitlock_rt_monitor_exit(w, o2), JITLOCK_OK);
  });
  EXPECT_EQ(o2->hdr(), kUnlockedHeader);
}

TEST_F(ReservationTest, NoRevocationFromInsideAHandshake) {
  Obj *o = newObj(kReservable);
  Worker owner, target;
  owner.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(owner.thread(), o), JITLOCK_OK);
  });
  struct Ctx {
    jitlock_thread *self;
    void *obj;
    int rc;
  } ctx{self, o, -1};
  ASSERT_EQ(jitlock_rt_handshake(
                target.thread(),
                [](void *arg, jitlock_thread *) {
                  auto *c = static_cast<Ctx *>(arg);
                  if (jitlock_rt_current() == c->self)
                    c->rc = jitlock_rt_monitor_enter(c->self, c->obj);
                },
                &ctx),
            JITLOCK_OK);
  // The target idles in native, so the requester ran the operation.
  EXPECT_EQ(ctx.rc, JITLOCK_ESTATE);
  EXPECT_NE(log.last().what.find("inside a handshake"), std::string::npos);
  EXPECT_EQ(o->hdr(), reservedHeader(owner.thread(), kReservable));
  owner.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_exit(owner.thread(), o), JITLOCK_OK);
  });
}

//===-- Stress (CTest: RuntimeReservationTest.stress) ---------------------===//

// A critical section that a second thread inside would break: the
// increment's read and write are apart.
void bumpPayload(Obj *o) {
  uint64_t v = o->payload;
  for (int spin = 0; spin != 16; ++spin)
    asm volatile("" ::: "memory");
  o->payload = v + 1;
}

// kThreads threads lock objects of a window that moves through fresh
// reservable ones, so that objects keep being reserved, handed to other
// threads and revoked (held, apart or unheld); the shapes: a plain lock, a
// recursive one, A B A (B after A in the window, so no deadlock) and a hash
// under the lock. Each thread polls after every lock, where the handshakes
// reach it. Every object's payload must equal the increments made.
void handObjectsAround(jitlock_thread *mainThread,
                       const std::vector<Obj *> &objs, uint64_t seed) {
  constexpr unsigned kThreads = 8, kIters = 4000, kWindow = 4, kStep = 40;
  std::vector<std::vector<uint64_t>> counts(
      kThreads, std::vector<uint64_t>(objs.size(), 0));
  std::atomic<unsigned> failures{0}, ready{0}, progress{0};
  std::vector<std::thread> threads;
  for (unsigned ti = 0; ti != kThreads; ++ti)
    threads.emplace_back([&, ti] {
      jitlock_thread *t = jitlock_rt_attach();
      std::mt19937_64 rng(seed + ti);
      // All at once, so that their windows overlap.
      ready.fetch_add(1);
      while (ready.load() != kThreads)
        std::this_thread::yield();
      auto lock = [&](Obj *o) {
        if (jitlock_rt_monitor_enter(t, o) != JITLOCK_OK)
          failures.fetch_add(1);
      };
      auto unlock = [&](Obj *o) {
        if (jitlock_rt_monitor_exit(t, o) != JITLOCK_OK)
          failures.fetch_add(1);
      };
      for (unsigned i = 0; i != kIters; ++i) {
        // The window moves with every thread's progress, and each thread
        // yields now and then: a loop shorter than a time slice would
        // otherwise run alone.
        unsigned at = progress.fetch_add(1, std::memory_order_relaxed);
        size_t first =
            (at / (kStep * kThreads)) * kWindow % (objs.size() - kWindow + 1);
        size_t ai = first + rng() % (kWindow - 1);
        size_t bi = ai + 1 + rng() % (first + kWindow - ai - 1);
        Obj *a = objs[ai], *b = objs[bi];
        lock(a);
        switch (rng() % 4) {
        case 0:
          break;
        case 1:
          // A poll inside, as a loop in compiled code has: a revocation
          // there finds [a a].
          lock(a);
          jitlock_rt_safepoint_poll(t);
          bumpPayload(a);
          ++counts[ti][ai];
          unlock(a);
          break;
        case 2:
          lock(b);
          lock(a);
          jitlock_rt_safepoint_poll(t);
          bumpPayload(b);
          ++counts[ti][bi];
          unlock(a);
          unlock(b);
          break;
        case 3:
          jitlock_rt_identity_hash(t, a);
          break;
        }
        bumpPayload(a);
        ++counts[ti][ai];
        unlock(a);
        jitlock_rt_safepoint_poll(t);
        if (i % 4 == 0)
          std::this_thread::yield();
      }
      if (jitlock_rt_detach() != JITLOCK_OK)
        failures.fetch_add(1);
    });
  // Safe while it waits: a deflation's handshake with every thread must not
  // wait for the main thread.
  ASSERT_EQ(jitlock_rt_enter_native(mainThread), JITLOCK_OK);
  for (std::thread &th : threads)
    th.join();
  ASSERT_EQ(jitlock_rt_leave_native(mainThread), JITLOCK_OK);
  EXPECT_EQ(failures.load(), 0u) << "seed " << seed;
  for (size_t oi = 0; oi != objs.size(); ++oi) {
    uint64_t made = 0;
    for (unsigned ti = 0; ti != kThreads; ++ti)
      made += counts[ti][oi];
    ASSERT_EQ(objs[oi]->payload, made)
        << "object " << oi << " lost increments: two threads held it at "
        << "once; seed " << seed;
  }
}

// Rounds of fresh objects: a revoked object is never reserved again.
void ReservationTest::stressRounds(uint64_t seed) {
  // A broken lock may also hang (an exit that unlocked an object its thread
  // still holds leaves a later exit of it nothing to release).
  Watchdog dog(std::chrono::seconds(30), "round 0",
               [&](const std::string &phase) {
                 std::fprintf(stderr,
                              "ReservationTest: %s did not end in 30 s "
                              "(seed %llu)\n",
                              phase.c_str(), (unsigned long long)seed);
               });
  for (unsigned round = 0; round != 8 && !HasFatalFailure(); ++round) {
    dog.phase("round " + std::to_string(round));
    std::vector<Obj *> objs;
    for (int i = 0; i != 400; ++i)
      objs.push_back(newObj(kReservable));
    handObjectsAround(self, objs, seed + round * 1000);
  }
  jitlock_reservation_stats s = rstats();
  std::printf("reservations %llu; revoked held %llu, unheld %llu, detached "
              "%llu; threads stopped %llu\n",
              (unsigned long long)s.reservations,
              (unsigned long long)s.revocations_held,
              (unsigned long long)s.revocations_unheld,
              (unsigned long long)s.revocations_detached,
              (unsigned long long)s.threads_stopped);
  EXPECT_GT(s.reservations, 0u);
  EXPECT_GT(s.revocations_held + s.revocations_unheld, 0u);
}

TEST_F(ReservationTest, StressHandoffsWithoutALimit) {
  stressRounds(seedFromEnv("ReservationTest.StressHandoffsWithoutALimit",
                           "JITLOCK_RESERVE_SEED"));
}

TEST_F(ReservationTest, StressHandoffsWithALimit) {
  configureReserved(/*revokeLimit=*/4);
  stressRounds(seedFromEnv("ReservationTest.StressHandoffsWithALimit",
                           "JITLOCK_RESERVE_SEED"));
  EXPECT_GT(rstats().threads_stopped, 0u);
}

} // namespace
