//===- LayoutTest.cpp - The layout JIT code relies on ---------------------===//
//
// jitlock_rt_get_layout is the single source of truth for inline fast paths:
// these tests read thread and monitor fields through its offsets and check
// they agree with the runtime's own answers.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

using namespace jitlock_test;

namespace {

class LayoutTest : public RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    jitlock_rt_get_layout(&l);
  }
  jitlock_rt_layout l{};
};

bool isPow2(uint64_t v) { return v && !(v & (v - 1)); }

TEST_F(LayoutTest, DefaultHeaderConstants) {
  EXPECT_EQ(l.abi_version, JITLOCK_RT_ABI_VERSION);
  EXPECT_EQ(l.header_offset, 0);
  EXPECT_EQ(l.lock_mask, 0x3u);
  EXPECT_EQ(l.unlocked_value, 0x1u);
  EXPECT_EQ(l.locked_value, 0x0u);
  EXPECT_EQ(l.monitor_value, 0x2u);
  EXPECT_EQ(l.hash_shift, 8u);
  EXPECT_EQ(l.hash_bits, 31u);
}

TEST_F(LayoutTest, LockStackGeometry) {
  EXPECT_EQ(l.lock_stack_capacity, 8u);
  EXPECT_EQ(l.lock_stack_sentinel_offset + 8, l.lock_stack_base_offset);
  EXPECT_EQ(l.lock_stack_end_offset,
            l.lock_stack_base_offset + 8 * l.lock_stack_capacity);
  EXPECT_EQ(l.lock_stack_base_offset % 8, 0u);
  EXPECT_EQ(l.lock_stack_top_offset % 4, 0u);
  // The top word is neither a slot nor the sentinel.
  EXPECT_TRUE(l.lock_stack_top_offset + 4 <= l.lock_stack_sentinel_offset ||
              l.lock_stack_top_offset >= l.lock_stack_end_offset)
      << "top at " << l.lock_stack_top_offset;
  EXPECT_LE(l.lock_stack_end_offset, l.thread_size);
  EXPECT_LE(l.lock_stack_top_offset + 4, l.thread_size);
  EXPECT_TRUE(isPow2(l.thread_align));
  EXPECT_GE(l.thread_align, 8u);
  EXPECT_TRUE(isPow2(l.cache_line_size));
  EXPECT_GE(l.cache_line_size, 64u);
  EXPECT_EQ((uintptr_t)self % l.thread_align, 0u);
}

TEST_F(LayoutTest, MonitorGeometry) {
  EXPECT_LE(l.monitor_owner_offset + 8, l.monitor_size);
  EXPECT_LE(l.monitor_recursions_offset + 8, l.monitor_size);
  EXPECT_EQ(l.monitor_owner_offset % 8, 0u);
  EXPECT_EQ(l.monitor_recursions_offset % 8, 0u);
  // The owner word (and the owner-written recursion count) sit on a cache
  // line apart from the monitor's first line, which holds its identity.
  EXPECT_GE(l.monitor_owner_offset / l.cache_line_size, 1u);
  EXPECT_GE(l.monitor_size, (l.monitor_owner_offset / l.cache_line_size + 1) *
                                l.cache_line_size)
      << "the owner's cache line must lie wholly inside the monitor";
  // No queued bit: queued threads are counted in a word of their own, on
  // the owner word's line, which the inflated exit reads after its store.
  EXPECT_EQ(l.monitor_queued_bit, 0u);
  EXPECT_EQ(l.monitor_entry_count_offset % 4, 0u);
  EXPECT_EQ(l.monitor_entry_count_offset / l.cache_line_size,
            l.monitor_owner_offset / l.cache_line_size);
  EXPECT_TRUE(l.monitor_exit == JITLOCK_EXIT_STORE ||
              l.monitor_exit == JITLOCK_EXIT_FENCE)
      << l.monitor_exit;
  EXPECT_NE(l.monitor_anonymous_owner, 0u);
  EXPECT_NE(l.monitor_anonymous_owner, (uint64_t)(uintptr_t)self);
}

#if defined(__x86_64__) || defined(__aarch64__)
uintptr_t threadPointer() {
  uintptr_t tp;
#if defined(__x86_64__)
  asm volatile("mov %%fs:0, %0" : "=r"(tp));
#else
  asm volatile("mrs %0, tpidr_el0" : "=r"(tp));
#endif
  return tp;
}

TEST_F(LayoutTest, ThreadLivesAtThreadPointerPlusTlsOffset) {
  EXPECT_EQ((char *)threadPointer() + l.thread_tls_offset, (char *)self);
  EXPECT_EQ((char *)threadPointer() + l.thread_tls_offset,
            (char *)jitlock_rt_attach());
  for (int k = 0; k < 2; ++k) {
    Worker w;
    w.call([&] {
      EXPECT_EQ((char *)threadPointer() + l.thread_tls_offset,
                (char *)w.thread());
      EXPECT_EQ((char *)threadPointer() + l.thread_tls_offset,
                (char *)jitlock_rt_current());
    });
  }
}
#endif

uint32_t readTop(const jitlock_thread *t, const jitlock_rt_layout &l) {
  return __atomic_load_n(reinterpret_cast<const uint32_t *>(
                             (const char *)t + l.lock_stack_top_offset),
                         __ATOMIC_RELAXED);
}
std::vector<void *> readStack(const jitlock_thread *t,
                              const jitlock_rt_layout &l) {
  uint32_t top = readTop(t, l);
  std::vector<void *> v;
  for (uint32_t off = l.lock_stack_base_offset; off < top; off += 8)
    v.push_back(*reinterpret_cast<void *const *>((const char *)t + off));
  return v;
}

TEST_F(LayoutTest, LockStackOfStoppedThreadReadThroughLayout) {
  Obj *a = newObj(), *b = newObj();
  Worker w;
  EXPECT_EQ(readTop(w.thread(), l), l.lock_stack_base_offset);
  w.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(w.thread(), a), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(w.thread(), a), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(w.thread(), b), JITLOCK_OK);
  });
  EXPECT_EQ(readStack(w.thread(), l), (std::vector<void *>{a, a, b}));
  EXPECT_EQ(readStack(w.thread(), l), lockStack(w.thread()));
  EXPECT_EQ(*reinterpret_cast<const uint64_t *>((const char *)w.thread() +
                                                l.lock_stack_sentinel_offset),
            l.lock_stack_sentinel);
  w.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), b), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), a), JITLOCK_OK);
  });
  EXPECT_EQ(readTop(w.thread(), l), l.lock_stack_base_offset);
}

TEST_F(LayoutTest, MonitorFieldsReadThroughLayout) {
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK); // inflated, holds 3
  uint64_t h = a->hdr();
  ASSERT_EQ(h & l.lock_mask, l.monitor_value);
  char *mon = (char *)(uintptr_t)(h & ~l.lock_mask);
  EXPECT_EQ((uintptr_t)mon % l.cache_line_size, 0u)
      << "monitors must be cache-line aligned for the owner line to be "
         "private";
  auto owner = [&] {
    return __atomic_load_n(
        reinterpret_cast<uint64_t *>(mon + l.monitor_owner_offset),
        __ATOMIC_ACQUIRE);
  };
  auto recursions = [&] {
    return __atomic_load_n(
        reinterpret_cast<uint64_t *>(mon + l.monitor_recursions_offset),
        __ATOMIC_RELAXED);
  };
  EXPECT_EQ(owner(), (uint64_t)(uintptr_t)self);
  EXPECT_EQ(recursions(), 2u);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(recursions(), 1u);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(recursions(), 0u);
  EXPECT_EQ(owner(), (uint64_t)(uintptr_t)self);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  // Released: the owner word no longer names this thread.
  if ((a->hdr() & l.lock_mask) == l.monitor_value &&
      (char *)(uintptr_t)(a->hdr() & ~l.lock_mask) == mon)
    EXPECT_NE(owner() & ~l.monitor_queued_bit, (uint64_t)(uintptr_t)self);
}

TEST_F(LayoutTest, PrintLayoutDescribesOwnerAndCacheLines) {
  FILE *f = tmpfile();
  ASSERT_NE(f, nullptr);
  jitlock_rt_print_layout(f);
  fflush(f);
  long n = ftell(f);
  ASSERT_GT(n, 0) << "print_layout wrote nothing";
  rewind(f);
  std::string text(n, '\0');
  ASSERT_EQ(fread(text.data(), 1, n, f), (size_t)n);
  fclose(f);
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  EXPECT_NE(lower.find("owner"), std::string::npos) << text;
  EXPECT_NE(lower.find("cache"), std::string::npos) << text;
  EXPECT_NE(lower.find("line"), std::string::npos) << text;
  EXPECT_NE(lower.find("lock"), std::string::npos) << text;
  EXPECT_NE(lower.find("monitor"), std::string::npos) << text;
  EXPECT_NE(lower.find("thread"), std::string::npos) << text;
}

// One row of jitlock_rt_print_layout's field table.
struct PrintedField {
  uint64_t offset, size;
  std::string name, writers;
};
struct PrintedLayout {
  std::vector<PrintedField> thread, monitor;
};

std::string printLayout() {
  FILE *f = tmpfile();
  if (!f)
    return "";
  jitlock_rt_print_layout(f);
  fflush(f);
  long n = ftell(f);
  rewind(f);
  std::string text(n > 0 ? n : 0, '\0');
  if (n > 0 && fread(text.data(), 1, n, f) != (size_t)n)
    text.clear();
  fclose(f);
  return text;
}

std::string lowered(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Parses rows "<offset> <size> <field> <written by...>" under the
// "jitlock_thread" and "monitor" headings.
PrintedLayout parseLayout(const std::string &text) {
  PrintedLayout out;
  std::vector<PrintedField> *cur = nullptr;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos)
      eol = text.size();
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    std::string low = lowered(line);
    if (low.rfind("jitlock_thread", 0) == 0)
      cur = &out.thread;
    else if (low.rfind("monitor", 0) == 0)
      cur = &out.monitor;
    else if (!line.empty() && !isspace((unsigned char)line[0]))
      cur = nullptr;
    if (!cur)
      continue;
    unsigned long long off, size;
    char name[128];
    int used = 0;
    if (sscanf(line.c_str(), " %llu %llu %127s %n", &off, &size, name, &used) >=
            3 &&
        used > 0) {
      cur->push_back({off, size, name, line.substr(used)});
    }
  }
  return out;
}

const PrintedField *fieldAt(const std::vector<PrintedField> &v, uint64_t off) {
  for (const PrintedField &f : v)
    if (f.offset == off)
      return &f;
  return nullptr;
}

std::vector<const PrintedField *>
fieldsOnLines(const std::vector<PrintedField> &v, uint64_t first, uint64_t last,
              uint64_t cls) {
  std::vector<const PrintedField *> r;
  for (const PrintedField &f : v) {
    uint64_t a = f.offset / cls,
             b = (f.offset + std::max<uint64_t>(f.size, 1) - 1) / cls;
    if (a <= last && b >= first)
      r.push_back(&f);
  }
  return r;
}

TEST_F(LayoutTest, PrintedLayoutAgreesAndSeparatesWriters) {
  std::string text = printLayout();
  PrintedLayout p = parseLayout(text);
  ASSERT_FALSE(p.thread.empty()) << "no thread field rows found in:\n" << text;
  ASSERT_FALSE(p.monitor.empty()) << "no monitor field rows found in:\n"
                                  << text;
  const uint64_t cls = l.cache_line_size;

  // The printed offsets are the published ones.
  const PrintedField *top = fieldAt(p.thread, l.lock_stack_top_offset);
  const PrintedField *slots = fieldAt(p.thread, l.lock_stack_base_offset);
  const PrintedField *sentinel =
      fieldAt(p.thread, l.lock_stack_sentinel_offset);
  const PrintedField *owner = fieldAt(p.monitor, l.monitor_owner_offset);
  const PrintedField *rec = fieldAt(p.monitor, l.monitor_recursions_offset);
  ASSERT_TRUE(top && slots && sentinel && owner && rec) << text;
  EXPECT_NE(lowered(top->name).find("top"), std::string::npos) << text;
  EXPECT_NE(lowered(slots->name).find("slot"), std::string::npos) << text;
  EXPECT_NE(lowered(sentinel->name).find("sentinel"), std::string::npos)
      << text;
  EXPECT_EQ(slots->size, 8u * l.lock_stack_capacity) << text;
  EXPECT_NE(lowered(owner->name).find("owner"), std::string::npos) << text;
  EXPECT_NE(lowered(rec->name).find("recursion"), std::string::npos) << text;

  // No field that other threads write shares a cache line with the lock
  // stack's top, sentinel or slots.
  for (const PrintedField *ls : {top, sentinel, slots}) {
    uint64_t a = ls->offset / cls, b = (ls->offset + ls->size - 1) / cls;
    for (const PrintedField *f : fieldsOnLines(p.thread, a, b, cls))
      EXPECT_EQ(lowered(f->writers).find("other"), std::string::npos)
          << f->name << " (written by " << f->writers
          << ") shares a cache line with " << ls->name << "\n"
          << text;
  }

  // The owner word's cache line holds only the owner word, fields that only
  // the owner writes (the recursion count) and the entry count, which the
  // exit reads with them: no identity, registry or queue fields.
  uint64_t ol = owner->offset / cls;
  const PrintedField *entries =
      fieldAt(p.monitor, l.monitor_entry_count_offset);
  ASSERT_TRUE(entries) << text;
  EXPECT_NE(lowered(entries->name).find("entry"), std::string::npos) << text;
  for (const PrintedField *f : fieldsOnLines(p.monitor, ol, ol, cls)) {
    if (f == owner || f == entries)
      continue;
    EXPECT_EQ(lowered(f->writers), "owner")
        << f->name << " (written by " << f->writers
        << ") shares the owner word's cache line\n"
        << text;
  }
}

// Every strategy's fields are filled whichever one runs, so that code can
// be generated for any of them from one layout.
TEST_F(LayoutTest, EveryMonitorStorageIsDescribed) {
  EXPECT_EQ(l.monitor_storage, (uint32_t)JITLOCK_MONITORS_POINTER);
  // Index: the header's index times the stride from the thread's base.
  EXPECT_EQ(l.monitor_index_shift, 2u);
  EXPECT_EQ(l.monitor_stride, l.monitor_size);
  EXPECT_EQ(l.monitor_stride % l.cache_line_size, 0u);
  EXPECT_EQ(l.monitor_base_offset / l.cache_line_size,
            l.lock_stack_top_offset / l.cache_line_size)
      << "the base is loaded next to the lock stack top";
  EXPECT_EQ(l.monitor_base_offset % 8, 0u);
  EXPECT_LE(l.monitor_base_offset + 8, l.lock_stack_sentinel_offset);
  // Table: the cache is a line of its own, written only by its thread.
  EXPECT_EQ(l.monitor_cache_offset % l.cache_line_size, 0u);
  EXPECT_GE(l.monitor_cache_entries, 1u);
  EXPECT_LE(l.monitor_cache_entries * 16, l.cache_line_size);
  EXPECT_GE(l.monitor_cache_probes, 1u);
  EXPECT_LE(l.monitor_cache_probes, l.monitor_cache_entries);
  EXPECT_LE(l.monitor_cache_offset + 16 * l.monitor_cache_entries,
            l.thread_size);
  for (uint32_t off : {l.lock_stack_top_offset, l.lock_stack_base_offset,
                       l.poll_word_offset, l.stack_watermark_offset})
    EXPECT_NE(off / l.cache_line_size,
              l.monitor_cache_offset / l.cache_line_size)
        << "offset " << off << " shares the monitor cache's line";
  // The printer names the cache and its line.
  std::string text = printLayout();
  EXPECT_NE(text.find("MonitorCache"), std::string::npos) << text;
  EXPECT_NE(text.find("MonitorBase"), std::string::npos) << text;
  EXPECT_NE(text.find("index"), std::string::npos) << text;
}

TEST_F(LayoutTest, LayoutIsCallableWithoutAttaching) {
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  jitlock_rt_layout l2{};
  jitlock_rt_get_layout(&l2);
  EXPECT_EQ(l2.abi_version, JITLOCK_RT_ABI_VERSION);
  EXPECT_EQ(l2.lock_stack_capacity, l.lock_stack_capacity);
  EXPECT_EQ(l2.lock_stack_top_offset, l.lock_stack_top_offset);
  EXPECT_EQ(l2.thread_tls_offset, l.thread_tls_offset);
  self = jitlock_rt_attach();
}

} // namespace
