//===- AbiTest.cpp - The C ABI's version and struct sizes -----------------===//
//
// jitlock_rt_version, and struct_size at the head of jitlock_rt_config and
// jitlock_rt_layout: a caller's struct is read and written only up to its
// struct_size (checked by putting it against a page that faults), a smaller
// config gets the defaults for the fields it lacks, a larger one is accepted
// only if the fields the library does not know are zero, and sizes the
// library cannot serve are refused with JITLOCK_EINVAL and a report naming
// them.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include <cstddef>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

using namespace jitlock_test;

namespace {

/// `Size` bytes that end where an inaccessible page begins: reading or
/// writing past them faults.
class BytesBeforeAGuardPage {
public:
  explicit BytesBeforeAGuardPage(size_t Size) {
    Page = size_t(sysconf(_SC_PAGESIZE));
    void *P = mmap(nullptr, 2 * Page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(P, MAP_FAILED);
    Mapping = static_cast<char *>(P);
    EXPECT_EQ(mprotect(Mapping + Page, Page, PROT_NONE), 0);
    Data = Mapping + Page - Size;
    memset(Data, 0, Size);
  }
  ~BytesBeforeAGuardPage() { munmap(Mapping, 2 * Page); }
  template <typename T> T *as() { return reinterpret_cast<T *>(Data); }

private:
  size_t Page;
  char *Mapping;
  char *Data;
};

/// The config's fields that every caller must give: those before the first
/// optional one.
constexpr size_t RequiredConfig =
    offsetof(jitlock_rt_config, compiled_code_misuse);
/// The layout's fields that every caller's struct has room for: those before
/// the first optional one.
constexpr size_t RequiredLayout = offsetof(jitlock_rt_layout, monitor_storage);

class AbiTest : public RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    if (!HasFatalFailure())
      reconfigureWithLog(Log);
  }

  /// Expects one new report, of JITLOCK_EINVAL, mentioning every `Parts`.
  void expectRefusalReport(size_t Before,
                           std::initializer_list<std::string> Parts) {
    ASSERT_EQ(Log.count(), Before + 1);
    MisuseRecord R = Log.last();
    EXPECT_EQ(R.status, JITLOCK_EINVAL) << st(R.status);
    for (const std::string &Part : Parts)
      EXPECT_NE(R.what.find(Part), std::string::npos)
          << "'" << Part << "' not in: " << R.what;
  }

  /// Each of `Sizes` as the struct_size of a struct that is only 8 bytes
  /// before a faulting page: `Call` refuses it, reports the size, the range
  /// from `Required` and the library's size, and writes nothing.
  template <typename Struct>
  void expectSizesRefused(const char *Name, int (*Call)(Struct *),
                          size_t Required,
                          std::initializer_list<uint32_t> Sizes) {
    for (uint32_t Size : Sizes) {
      SCOPED_TRACE(Size);
      BytesBeforeAGuardPage Mem(8);
      auto *S = Mem.as<Struct>();
      S->struct_size = Size;
      size_t N0 = Log.count();
      EXPECT_EQ(Call(S), JITLOCK_EINVAL);
      expectRefusalReport(N0, {std::string(Name) + ".struct_size is " +
                                   std::to_string(Size) + " bytes",
                               "takes " + std::to_string(Required) + " to " +
                                   std::to_string(JITLOCK_RT_MAX_STRUCT_SIZE),
                               "knows " + std::to_string(sizeof(Struct))});
      EXPECT_EQ(S->struct_size, Size);
      EXPECT_EQ(reinterpret_cast<uint32_t *>(S)[1], 0u)
          << "written beyond the size field";
    }
  }

  MisuseLog Log;
};

TEST_F(AbiTest, VersionIsThisHeaders) {
  uint32_t V = jitlock_rt_version();
  EXPECT_EQ(V, JITLOCK_RT_VERSION);
  EXPECT_EQ(JITLOCK_RT_VERSION_ABI(V), JITLOCK_RT_ABI_VERSION);
  EXPECT_EQ(JITLOCK_RT_VERSION_MINOR(V), JITLOCK_RT_ABI_MINOR);
  EXPECT_EQ(JITLOCK_RT_VERSION_PACK(4, 2), 0x40002u);
  EXPECT_TRUE(jitlock_rt_version_compatible());
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  EXPECT_EQ(L.abi_version, JITLOCK_RT_ABI_VERSION);
  EXPECT_EQ(L.struct_size, sizeof(L));
  // The ABI version leads every layout fingerprint.
  char Buf[256];
  jitlock_rt_layout_fingerprint(&L, Buf, sizeof(Buf));
  EXPECT_EQ(std::string(Buf).rfind(
                "abi=" + std::to_string(JITLOCK_RT_ABI_VERSION) + ";", 0),
            0u)
      << Buf;
}

TEST_F(AbiTest, DefaultConfigCarriesItsSize) {
  jitlock_rt_config Cfg;
  memset(&Cfg, 0xA5, sizeof(Cfg));
  jitlock_rt_default_config(&Cfg);
  EXPECT_EQ(Cfg.struct_size, sizeof(Cfg));
  EXPECT_EQ(Cfg.header_offset, 0);
  EXPECT_EQ(Cfg.locking_mode, uint32_t(JITLOCK_LOCKING_LIGHTWEIGHT));
  EXPECT_EQ(Cfg.compiled_code_misuse, uint32_t(JITLOCK_MISUSE_ABORT));
  EXPECT_EQ(Cfg.misuse_handler, nullptr);
}

TEST_F(AbiTest, OlderConfigIsReadOnlyToItsEndAndGetsDefaultsBeyond) {
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  // First a full config that reports instead of aborting.
  jitlock_rt_config Full;
  jitlock_rt_default_config(&Full);
  Full.misuse_handler = &MisuseLog::handler;
  Full.misuse_ctx = &Log;
  Full.compiled_code_misuse = JITLOCK_MISUSE_REPORT;
  ASSERT_EQ(jitlock_rt_configure(&Full), JITLOCK_OK);

  // A caller whose struct ends before compiled_code_misuse, at a page that
  // faults: filled and applied without a byte beyond it touched.
  BytesBeforeAGuardPage Mem(RequiredConfig);
  auto *Old = Mem.as<jitlock_rt_config>();
  Old->struct_size = RequiredConfig;
  ASSERT_EQ(jitlock_rt_fill_default_config(Old), JITLOCK_OK);
  EXPECT_EQ(Old->struct_size, RequiredConfig);
  EXPECT_EQ(Old->hash_bits, 31u);
  EXPECT_EQ(Old->stack_shadow_pages, 20u);
  Old->spin_limit = 7;
  Old->misuse_handler = &MisuseLog::handler;
  Old->misuse_ctx = &Log;
  ASSERT_EQ(jitlock_rt_configure(Old), JITLOCK_OK);

  // compiled_code_misuse is back at its default: misuse aborts.
  self = jitlock_rt_attach();
  ASSERT_NE(self, nullptr);
  Obj *A = newObj();
  EXPECT_DEATH(jitlock_rt_monitor_exit_slow(self, A),
               "misuse from compiled code: monitor exit by a non-owner");
}

TEST_F(AbiTest, NewerConfigIsAcceptedWhenItsUnknownFieldsAreZero) {
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  constexpr size_t Newer = sizeof(jitlock_rt_config) + 16;
  BytesBeforeAGuardPage Mem(Newer);
  auto *Cfg = Mem.as<jitlock_rt_config>();
  memset(Cfg, 0xA5, Newer);
  Cfg->struct_size = Newer;
  ASSERT_EQ(jitlock_rt_fill_default_config(Cfg), JITLOCK_OK);
  EXPECT_EQ(Cfg->struct_size, Newer);
  const unsigned char *Bytes = reinterpret_cast<unsigned char *>(Cfg);
  for (size_t I = sizeof(jitlock_rt_config); I < Newer; ++I)
    ASSERT_EQ(Bytes[I], 0u) << "byte " << I << " not zeroed";
  Cfg->misuse_handler = &MisuseLog::handler;
  Cfg->misuse_ctx = &Log;
  EXPECT_EQ(jitlock_rt_configure(Cfg), JITLOCK_OK);

  // A field this library does not know, set: it cannot honour it.
  size_t N0 = Log.count();
  reinterpret_cast<unsigned char *>(Cfg)[Newer - 3] = 1;
  EXPECT_EQ(jitlock_rt_configure(Cfg), JITLOCK_EINVAL);
  expectRefusalReport(
      N0, {"byte " + std::to_string(Newer - 3),
           std::to_string(Newer) + "-byte jitlock_rt_config",
           std::to_string(sizeof(jitlock_rt_config)) + " bytes this library"});
  self = jitlock_rt_attach();
}

TEST_F(AbiTest, ConfigSizesOutOfRangeAreRefused) {
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  const std::initializer_list<uint32_t> Sizes = {
      0u, 4u, uint32_t(RequiredConfig - 4), JITLOCK_RT_MAX_STRUCT_SIZE + 8,
      0xA5A5A5A5u};
  expectSizesRefused("jitlock_rt_config", jitlock_rt_fill_default_config,
                     RequiredConfig, Sizes);
  expectSizesRefused(
      "jitlock_rt_config",
      +[](jitlock_rt_config *C) { return jitlock_rt_configure(C); },
      RequiredConfig, Sizes);
  // Refused configurations changed nothing: the handler is still installed.
  size_t N0 = Log.count();
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(Log.count(), N0 + 1);
  self = jitlock_rt_attach();
}

TEST_F(AbiTest, LayoutIsWrittenOnlyToItsEnd) {
  jitlock_rt_layout Whole;
  jitlock_rt_get_layout(&Whole);

  BytesBeforeAGuardPage Exact(sizeof(jitlock_rt_layout));
  auto *L = Exact.as<jitlock_rt_layout>();
  L->struct_size = sizeof(jitlock_rt_layout);
  ASSERT_EQ(jitlock_rt_fill_layout(L), JITLOCK_OK);
  EXPECT_EQ(memcmp(L, &Whole, sizeof(Whole)), 0);

  // A newer caller's larger struct: the known part, then zeroes, and
  // struct_size tells how much the library filled.
  constexpr size_t Newer = sizeof(jitlock_rt_layout) + 24;
  BytesBeforeAGuardPage Larger(Newer);
  L = Larger.as<jitlock_rt_layout>();
  memset(L, 0xA5, Newer);
  L->struct_size = Newer;
  ASSERT_EQ(jitlock_rt_fill_layout(L), JITLOCK_OK);
  EXPECT_EQ(L->struct_size, sizeof(jitlock_rt_layout));
  EXPECT_EQ(memcmp(L, &Whole, sizeof(Whole)), 0);
  const unsigned char *Bytes = reinterpret_cast<unsigned char *>(L);
  for (size_t I = sizeof(jitlock_rt_layout); I < Newer; ++I)
    ASSERT_EQ(Bytes[I], 0u) << "byte " << I << " not zeroed";
}

TEST_F(AbiTest, LayoutSizesOutOfRangeAreRefused) {
  expectSizesRefused(
      "jitlock_rt_layout", jitlock_rt_fill_layout, RequiredLayout,
      {0u, uint32_t(RequiredLayout - 8), JITLOCK_RT_MAX_STRUCT_SIZE + 1});
  EXPECT_EQ(jitlock_rt_fill_layout(nullptr), JITLOCK_EINVAL);
  EXPECT_EQ(jitlock_rt_fill_default_config(nullptr), JITLOCK_EINVAL);
}

} // namespace
