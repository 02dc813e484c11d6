//===- Assert.cpp - Reporting a failed protocol invariant -----------------===//

#include "Assert.h"

#include <cstdio>
#include <cstdlib>

void jitlock::assertionFailed(const char *File, int Line, const char *Step,
                              const char *Cond, const char *Msg) {
  std::fprintf(stderr, "%s:%d: jitlock: assertion failed at step %s: %s (%s)\n",
               File, Line, Step, Msg, Cond);
  std::fflush(stderr);
  std::abort();
}
