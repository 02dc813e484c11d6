//===- Lowered.h - Checking what an example was lowered for -----*- C++ -*-===//
//
// Shared by the AArch64 harnesses (*Harness.cpp): stamp-lowered.py adds three
// constants to each lowered module, and before running anything a harness
// compares them with this process's runtime and refuses (exit status 3) on a
// difference. Inline fast paths compiled for another layout or TLS offset
// would corrupt memory rather than fail.
//
//   jitlock_lowered_layout      the "jitlock.lowered-layout" module flag
//   jitlock_lowered_thread      "tls", "arg" or "call"
//   jitlock_lowered_tls_offset  the tls-offset compiled in (tls mode)
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_TEST_AARCH64_HARNESS_LOWERED_H
#define JITLOCK_TEST_AARCH64_HARNESS_LOWERED_H

#include "jitlock/jitlock_rt.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" {
__attribute__((weak)) extern const char jitlock_lowered_layout[];
__attribute__((weak)) extern const char jitlock_lowered_thread[];
__attribute__((weak)) extern const int64_t jitlock_lowered_tls_offset;
}

namespace jitlock_aarch64 {

constexpr int ExitRefused = 3;

/// The stamp jitlock::layoutFingerprint puts into the
/// "jitlock.lowered-layout" module flag, from this process's runtime.
inline std::string layoutFingerprint(const jitlock_rt_layout &L) {
  std::string Stamp(jitlock_rt_layout_fingerprint(&L, nullptr, 0), '\0');
  jitlock_rt_layout_fingerprint(&L, Stamp.data(), Stamp.size() + 1);
  return Stamp;
}

inline char *threadPointer() {
  char *TP;
#if defined(__aarch64__)
  asm volatile("mrs %0, tpidr_el0" : "=r"(TP));
#elif defined(__x86_64__)
  asm volatile("mov %%fs:0, %0" : "=r"(TP));
#else
#error "the harness supports AArch64 (and x86_64 for a host build)"
#endif
  return TP;
}

[[noreturn, gnu::format(printf, 1, 2)]] inline void refuse(const char *Fmt,
                                                           ...) {
  fprintf(stderr, "harness: refusing to run: ");
  va_list Args;
  va_start(Args, Fmt);
  vfprintf(stderr, Fmt, Args);
  va_end(Args);
  fprintf(stderr, "\n");
  exit(ExitRefused);
}

/// Checks that the example was lowered for this runtime. Returns whether the
/// code addresses the thread as thread pointer + offset.
inline bool checkLowering(const jitlock_rt_layout &L) {
  if (!jitlock_lowered_layout || !jitlock_lowered_thread)
    refuse("the example carries no jitlock_lowered_* constants (was it "
           "stamped by stamp-lowered.py?)");
  std::string Runtime = layoutFingerprint(L);
  if (Runtime != jitlock_lowered_layout)
    refuse("the example was lowered for layout\n  '%s'\nbut the runtime's "
           "layout is\n  '%s'",
           jitlock_lowered_layout, Runtime.c_str());
  bool Tls = strcmp(jitlock_lowered_thread, "tls") == 0;
  if (Tls) {
    if (!&jitlock_lowered_tls_offset)
      refuse("thread=tls, but no jitlock_lowered_tls_offset");
    if (jitlock_lowered_tls_offset != L.thread_tls_offset) {
      refuse("the example was lowered with thread=tls;tls-offset=%" PRId64
             ", but the runtime's thread_tls_offset is %" PRId64,
             jitlock_lowered_tls_offset, L.thread_tls_offset);
    }
  } else if (strcmp(jitlock_lowered_thread, "call") != 0) {
    refuse("the harness runs thread=tls and thread=call examples, not "
           "thread=%s",
           jitlock_lowered_thread);
  }
  return Tls;
}

/// Whether the calling thread, just attached as `Self`, is where code
/// lowered with `Tls` looks for it (thread pointer + the offset compiled
/// in).
inline bool threadIsWhereLowered(bool Tls, jitlock_thread *Self) {
  return Self && (!Tls || threadPointer() + jitlock_lowered_tls_offset ==
                              reinterpret_cast<char *>(Self));
}

} // namespace jitlock_aarch64

#endif // JITLOCK_TEST_AARCH64_HARNESS_LOWERED_H
