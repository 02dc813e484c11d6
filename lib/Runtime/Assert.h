//===- Assert.h - Checked protocol invariants -------------------*- C++ -*-===//
//
// JITLOCK_ASSERT(Cond, Step, Msg) checks an invariant of the protocol step
// labelled Step (Synchronizer.cpp's protocol comment). It is compiled in when
// NDEBUG is not defined, or when JITLOCK_ASSERTIONS is; otherwise it expands
// to nothing and Cond is not evaluated, so a condition may be as costly as a
// whole validate().
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

/// Whether JITLOCK_ASSERT checks anything in this translation unit.
inline constexpr bool AssertionsEnabled = JITLOCK_ASSERTIONS_ENABLED;

/// Prints "File:Line: jitlock: assertion failed at step Step: Msg (Cond)"
/// to stderr and aborts.
[[noreturn]] void assertionFailed(const char *File, int Line, const char *Step,
                                  const char *Cond, const char *Msg);

} // namespace jitlock

#if JITLOCK_ASSERTIONS_ENABLED
#define JITLOCK_ASSERT(Cond, Step, Msg)                                        \
  do {                                                                         \
    if (__builtin_expect(!(Cond), 0))                                          \
      ::jitlock::assertionFailed(__FILE__, __LINE__, Step, #Cond, Msg);        \
  } while (false)
#else
// sizeof does not evaluate Cond; it only keeps what Cond names used.
#define JITLOCK_ASSERT(Cond, Step, Msg)                                        \
  do {                                                                         \
    (void)sizeof(!(Cond));                                                     \
  } while (false)
#endif

#endif
