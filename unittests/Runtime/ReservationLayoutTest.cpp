//===- ReservationLayoutTest.cpp - The reservation field's configuration --===//
//
// What inline code reads for reserved locking: the configuration that gives
// the runtime its header field, the layout's reserve fields, the thread's
// tag and the fingerprint that keeps code lowered without the reserved check
// away from a reserving runtime.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace jitlock_test;

namespace {

jitlock_rt_config reservedConfig(uint32_t Shift, uint32_t Bits) {
  jitlock_rt_config Cfg;
  testDefaultConfig(&Cfg);
  Cfg.locking_mode = JITLOCK_LOCKING_RESERVED;
  Cfg.reserve_shift = Shift;
  Cfg.reserve_bits = Bits;
  return Cfg;
}

std::string fingerprint() {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  char Buf[512];
  jitlock_rt_layout_fingerprint(&L, Buf, sizeof(Buf));
  return Buf;
}

class ReservationLayoutTest : public RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    self = nullptr;
  }
  // Configures `Cfg` with `Log` hearing misuse, the refusal of `Cfg`
  // itself included; returns the status.
  int configure(jitlock_rt_config Cfg) {
    jitlock_rt_config Hearing;
    testDefaultConfig(&Hearing);
    Hearing.misuse_handler = Cfg.misuse_handler = &MisuseLog::handler;
    Hearing.misuse_ctx = Cfg.misuse_ctx = &Log;
    EXPECT_EQ(jitlock_rt_configure(&Hearing), JITLOCK_OK);
    return jitlock_rt_configure(&Cfg);
  }
  MisuseLog Log;
};

TEST_F(ReservationLayoutTest, OffUnlessConfigured) {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  EXPECT_EQ(L.reserve_bits, 0u);
  EXPECT_EQ(L.reserve_mask, 0u);
  EXPECT_EQ(L.reservable_value, 0u);
  EXPECT_EQ(fingerprint().find("reserve"), std::string::npos);
  self = jitlock_rt_attach();
  ASSERT_NE(self, nullptr);
  // A thread of a runtime that does not reserve has the tag no header
  // matches.
  uint64_t Tag;
  memcpy(&Tag, reinterpret_cast<char *>(self) + L.reserve_tag_offset, 8);
  EXPECT_EQ(Tag, ~uint64_t(0));
}

TEST_F(ReservationLayoutTest, FieldAndTags) {
  ASSERT_EQ(configure(reservedConfig(40, 16)), JITLOCK_OK);
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  EXPECT_EQ(L.locking_mode, uint32_t(JITLOCK_LOCKING_RESERVED));
  EXPECT_EQ(L.reserve_shift, 40u);
  EXPECT_EQ(L.reserve_bits, 16u);
  EXPECT_EQ(L.reservable_value, uint64_t(0xffff) << 40);
  EXPECT_EQ(L.reserve_mask, (uint64_t(0xffff) << 40) | L.lock_mask);
  EXPECT_NE(fingerprint().find(";reserve=40,16,tag="), std::string::npos);

  // Two threads get distinct indices, neither 0 nor all ones, each shown as
  // an unlocked header reserved to it.
  self = jitlock_rt_attach();
  ASSERT_NE(self, nullptr);
  uint64_t Mine;
  memcpy(&Mine, reinterpret_cast<char *>(self) + L.reserve_tag_offset, 8);
  uint64_t Theirs = 0;
  std::thread Other([&] {
    jitlock_thread *T = jitlock_rt_attach();
    memcpy(&Theirs, reinterpret_cast<char *>(T) + L.reserve_tag_offset, 8);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
  Other.join();
  for (uint64_t Tag : {Mine, Theirs}) {
    EXPECT_EQ(Tag & ~L.reserve_mask, 0u);
    EXPECT_EQ(Tag & L.lock_mask, L.unlocked_value);
    uint64_t Index = (Tag & L.reservable_value) >> L.reserve_shift;
    EXPECT_NE(Index, 0u);
    EXPECT_NE(Index, 0xffffu);
  }
  EXPECT_NE(Mine, Theirs);
}

TEST_F(ReservationLayoutTest, IndicesAreNotReusedAndRunOut) {
  // Two bits: indices 1 and 2 only; the third thread may not reserve.
  ASSERT_EQ(configure(reservedConfig(48, 2)), JITLOCK_OK);
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  std::vector<uint64_t> Tags;
  for (int I = 0; I != 3; ++I) {
    std::thread T([&] {
      jitlock_thread *Self = jitlock_rt_attach();
      uint64_t Tag;
      memcpy(&Tag, reinterpret_cast<char *>(Self) + L.reserve_tag_offset, 8);
      Tags.push_back(Tag);
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
    T.join();
  }
  ASSERT_EQ(Tags.size(), 3u);
  EXPECT_NE(Tags[0], Tags[1]);
  EXPECT_NE(Tags[0], ~uint64_t(0));
  EXPECT_NE(Tags[1], ~uint64_t(0));
  EXPECT_EQ(Tags[2], ~uint64_t(0)) << "the field has no third index";
}

TEST_F(ReservationLayoutTest, RefusesAFieldItCannotUse) {
  struct Case {
    uint32_t Mode, Shift, Bits;
    const char *Says;
  } Cases[] = {
      {JITLOCK_LOCKING_RESERVED, 40, 0, "reserve_bits from 2 to 32"},
      {JITLOCK_LOCKING_RESERVED, 40, 1, "reserve_bits from 2 to 32"},
      {JITLOCK_LOCKING_RESERVED, 40, 33, "reserve_bits from 2 to 32"},
      {JITLOCK_LOCKING_RESERVED, 1, 8, "within bits [2,64)"},
      {JITLOCK_LOCKING_RESERVED, 60, 8, "within bits [2,64)"},
      {JITLOCK_LOCKING_RESERVED, 20, 8, "overlaps the hash field"},
      {JITLOCK_LOCKING_LIGHTWEIGHT, 40, 8, "not JITLOCK_LOCKING_RESERVED"},
      {3, 0, 0, "unknown locking mode"},
  };
  for (const Case &C : Cases) {
    jitlock_rt_config Cfg = reservedConfig(C.Shift, C.Bits);
    Cfg.locking_mode = C.Mode;
    Log.clear();
    EXPECT_EQ(configure(Cfg), JITLOCK_EINVAL) << C.Says;
    EXPECT_NE(Log.last().what.find(C.Says), std::string::npos)
        << "expected '" << C.Says << "', got '" << Log.last().what << "'";
  }
  // Nothing was taken: the layout is still the default one.
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  EXPECT_EQ(L.locking_mode, uint32_t(JITLOCK_LOCKING_LIGHTWEIGHT));
  EXPECT_EQ(L.reserve_bits, 0u);
}

} // namespace
