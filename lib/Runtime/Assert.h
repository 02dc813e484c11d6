//===- Assert.h - Checked protocol invariants -------------------*- C++ -*-===//
//
// JITLOCK_ASSERT(Cond, Step, Msg) checks an invariant that the protocol step
// `Step` (a label of the protocol statement at the top of
// lib/Runtime/Synchronizer.cpp, e.g. "E4") relies on. On failure it prints
// the file, line, step and message to stderr and aborts. It is compiled in
// when NDEBUG is not defined or JITLOCK_ASSERTIONS is; otherwise it expands
// to nothing and `Cond` is not evaluated.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_ASSERT_H
#define JITLOCK_RUNTIME_ASSERT_H

#if !defined(NDEBUG) || defined(JITLOCK_ASSERTIONS)
#define JITLOCK_ASSERTIONS_ENABLED 1
#else
#define JITLOCK_ASSERTIONS_ENABLED 0
#endif

namespace jitlock {

/// Whether JITLOCK_ASSERT checks anything in this build.
inline constexpr bool AssertionsEnabled = JITLOCK_ASSERTIONS_ENABLED;

/// Reports a failed JITLOCK_ASSERT and aborts.
[[noreturn, gnu::cold]] void assertionFailed(const char *File, int Line,
                                             const char *Step, const char *Cond,
                                             const char *Msg);

} // namespace jitlock

#if JITLOCK_ASSERTIONS_ENABLED
#define JITLOCK_ASSERT(Cond, Step, Msg)                                        \
  do {                                                                         \
    if (__builtin_expect(!(Cond), 0))                                          \
      ::jitlock::assertionFailed(__FILE__, __LINE__, Step, #Cond, Msg);        \
  } while (false)
#else
#define JITLOCK_ASSERT(Cond, Step, Msg)                                        \
  do {                                                                         \
  } while (false)
#endif

#endif
