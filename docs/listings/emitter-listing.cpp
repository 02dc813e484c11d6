//===- emitter-listing.cpp - The emitters' sequences as asmjit logs them --===//
//
// Prints one sequence of the asmjit emitters as asmjit's logger formats it,
// for the generated listings of docs/emitters.md (scripts/gen-doc-listings.py,
// CTest doc-listings). The slow paths are left to the caller
// (SlowPathMode::Labels) and the listing stops at their labels: the glue
// depends on the emitting CPU (its vector save) and on where the runtime is
// loaded, the fast paths on neither, so the listings read the same on every
// machine.
//
// usage: emitter-listing TARGET SEQUENCE [OPTION]...
//   TARGET    x86 | a64
//   SEQUENCE  enter | exit | stackbang | poll
//   OPTION    scratch2 (x86: give Scratch2), lse | llsc (a64 atomics),
//             store | fence (the inflated exit; default store)
//
//===----------------------------------------------------------------------===//
#include "jitlock/Emitters.h"
#include "jitlock/jitlock_rt.h"

#include <cstdio>
#include <cstring>
#include <string>

using namespace asmjit;
namespace je = jitlock::emit;

namespace {

struct Request {
  std::string Sequence;
  bool Scratch2 = false;
  bool Lse = true;
  uint32_t Exit = JITLOCK_EXIT_STORE;
};

/// The frame size the stack-bang listings check for.
constexpr uint32_t BangFrameBytes = 1024;

/// Emits the caller's side of a Labels-mode sequence: the labels it jumps
/// to, named, with nothing behind them.
void bindSlowLabels(BaseEmitter &A, const je::SlowPathLabels &Labels) {
  A.comment("; Slow: the caller's slow-call stub (emitSlowCall)");
  A.bind(Labels.Slow);
  if (Labels.Queued.isValid()) {
    A.comment("; Queued: the caller's ExitQueued stub");
    A.bind(Labels.Queued);
  }
}

Error emitX86(x86::Assembler &A, const jitlock_rt_layout &L, const Request &R,
              je::SlowPathLabels &Labels) {
  namespace jx = je::x64;
  jx::MonitorOperands Regs{x86::r13, x86::r12, x86::rax, x86::rcx};
  if (R.Scratch2)
    Regs.Scratch2 = x86::rdx;
  if (R.Sequence == "enter")
    return jx::emitMonitorEnter(A, L, Regs, je::SlowPathMode::Labels, &Labels);
  if (R.Sequence == "exit")
    return jx::emitMonitorExit(A, L, Regs, je::SlowPathMode::Labels, &Labels);
  if (R.Sequence == "stackbang")
    return jx::emitStackBang(A, L, {x86::r12, x86::rax}, BangFrameBytes,
                             je::BangMode::Watermark, je::SlowPathMode::Labels,
                             &Labels);
  if (R.Sequence == "poll")
    return jx::emitSafepointPoll(A, L, {x86::r12}, je::SlowPathMode::Labels,
                                 &Labels);
  return kErrorInvalidArgument;
}

#ifdef JITLOCK_EMITTERS_HAVE_AARCH64
Error emitA64(a64::Assembler &A, const jitlock_rt_layout &L, const Request &R,
              je::SlowPathLabels &Labels) {
  namespace ja = je::a64;
  const ja::MonitorOperands Regs{a64::x0, a64::x28, a64::x9, a64::x10,
                                 a64::x11};
  const ja::Atomics At = R.Lse ? ja::Atomics::LSE : ja::Atomics::LLSC;
  if (R.Sequence == "enter")
    return ja::emitMonitorEnter(A, L, Regs, At, je::SlowPathMode::Labels,
                                &Labels);
  if (R.Sequence == "exit")
    return ja::emitMonitorExit(A, L, Regs, At, je::SlowPathMode::Labels,
                               &Labels);
  if (R.Sequence == "stackbang")
    return ja::emitStackBang(A, L, {a64::x28, a64::x16, a64::x17},
                             BangFrameBytes, je::BangMode::Watermark,
                             je::SlowPathMode::Labels, &Labels);
  if (R.Sequence == "poll")
    return ja::emitSafepointPoll(A, L, {a64::x28, a64::x9},
                                 je::SlowPathMode::Labels, &Labels);
  return kErrorInvalidArgument;
}
#endif

template <typename AssemblerT, typename EmitFn>
int print(Arch Target, const jitlock_rt_layout &L, const Request &R,
          EmitFn Emit) {
  CodeHolder Code;
  Environment Env;
  Env.init(Target);
  Code.init(Env);
  StringLogger Logger;
  Code.setLogger(&Logger);
  AssemblerT A(&Code);
  je::SlowPathLabels Labels;
  if (Error E = Emit(A, L, R, Labels)) {
    fprintf(stderr, "emitter-listing: %s\n", DebugUtils::errorAsString(E));
    return 1;
  }
  bindSlowLabels(A, Labels);
  fwrite(Logger.data(), 1, Logger.dataSize(), stdout);
  return 0;
}

int usage() {
  fprintf(stderr, "usage: emitter-listing x86|a64 enter|exit|stackbang|poll "
                  "[scratch2] [lse|llsc] [store|fence]\n");
  return 2;
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc < 3)
    return usage();
  Request R;
  R.Sequence = Argv[2];
  for (int I = 3; I < Argc; ++I) {
    const std::string Opt = Argv[I];
    if (Opt == "scratch2")
      R.Scratch2 = true;
    else if (Opt == "lse" || Opt == "llsc")
      R.Lse = Opt == "lse";
    else if (Opt == "store" || Opt == "fence")
      R.Exit = Opt == "store" ? JITLOCK_EXIT_STORE : JITLOCK_EXIT_FENCE;
    else
      return usage();
  }
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  // The runtime picks the inflated exit for this machine; the listing
  // names one.
  L.monitor_exit = R.Exit;
  const std::string Target = Argv[1];
  if (Target == "x86")
    return print<x86::Assembler>(Arch::kX64, L, R, emitX86);
#ifdef JITLOCK_EMITTERS_HAVE_AARCH64
  if (Target == "a64")
    return print<a64::Assembler>(Arch::kAArch64, L, R, emitA64);
#endif
  return usage();
}
