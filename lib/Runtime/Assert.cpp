//===- Assert.cpp - Reporting a failed protocol invariant -----------------===//
#include "Assert.h"

#include <cstdio>
#include <cstdlib>

namespace jitlock {

void assertionFailed(const char *File, int Line, const char *Step,
                     const char *Cond, const char *Msg) {
  std::fprintf(stderr,
               "%s:%d: jitlock invariant of step %s violated: %s (%s)\n", File,
               Line, Step, Msg, Cond);
  std::fflush(stderr);
  std::abort();
}

} // namespace jitlock
