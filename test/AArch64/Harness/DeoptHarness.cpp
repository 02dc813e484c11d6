//===- DeoptHarness.cpp - Deopts of LLVM-lowered code on AArch64 ----------===//
//
// Runs the shapes of unittests/Deopt/Inputs/shapes.ll, lowered by opt and
// compiled by llc, with the deopt runtime (lib/Deopt, cross-built without
// libLLVM). The link places `.llvm_stackmaps` between two symbols
// (stackmaps.ld beside this file), which the harness registers. For each
// shape it deoptimizes <shape>.opt and compares the restored lock state with
// the one <shape>.base has at the same point; the continuation unlocks. Exit
// status 0 when every shape matched, 1 otherwise, 3 when the code was
// lowered for another layout.
//
//===----------------------------------------------------------------------===//
#include "Lowered.h"

#include "jitlock/Deopt.h"

#include <algorithm>
#include <vector>

using namespace jitlock::deopt;

extern "C" {
extern const uint8_t jitlock_stackmaps_start[];
extern const uint8_t jitlock_stackmaps_end[];
}

namespace {

using OptFn = uint64_t (*)(void *, void *, void *, uint64_t);
using BaseFn = uint64_t (*)(void *, void *, void *, uint64_t, void (*)());

#define SHAPE(Name)                                                            \
  extern "C" uint64_t Name##Opt(void *, void *, void *,                        \
                                uint64_t) asm(#Name ".opt");                   \
  extern "C" uint64_t Name##Base(void *, void *, void *, uint64_t,             \
                                 void (*)()) asm(#Name ".base");               \
  extern "C" uint64_t Name##Cont(void *, void *, void *,                       \
                                 uint64_t) asm(#Name ".cont");
SHAPE(reorder)
SHAPE(nested)
SHAPE(outer)
SHAPE(recursive)
SHAPE(atenter)
SHAPE(full)
#undef SHAPE
extern "C" uint64_t lyingOpt(void *, void *, void *, uint64_t) asm("lying.opt");

struct Shape {
  const char *Name;
  OptFn Opt;
  BaseFn Base;
  OptFn Cont;
  size_t Objects;
};

const Shape Shapes[] = {
    {"reorder", reorderOpt, reorderBase, reorderCont, 3},
    {"nested", nestedOpt, nestedBase, nestedCont, 3},
    {"outer", outerOpt, outerBase, outerCont, 3},
    {"recursive", recursiveOpt, recursiveBase, recursiveCont, 3},
    {"atenter", atenterOpt, atenterBase, atenterCont, 3},
    {"full", fullOpt, fullBase, fullCont, 10},
};

struct Object {
  uint64_t Header = 1;
  uint64_t Count = 0;
};

std::vector<Object *> Watched;
std::string Observed;

/// The lock stack as indices into Watched, then each object's holds.
void probe() {
  jitlock_thread *Self = jitlock_rt_current();
  void *Stack[64];
  size_t N = jitlock_rt_lock_stack(Self, Stack, 64);
  std::string S = "[";
  for (size_t I = 0; I != N && I != 64; ++I) {
    auto It = std::find(Watched.begin(), Watched.end(), Stack[I]);
    S += (I ? " " : "") + (It == Watched.end()
                               ? std::string("?")
                               : std::to_string(It - Watched.begin()));
  }
  S += "] holds";
  for (Object *O : Watched) {
    jitlock_lock_info Info{};
    jitlock_rt_inspect(O, &Info);
    S += " " + std::to_string(Info.owner == Self ? Info.holds : 0);
  }
  Observed = S;
}

uint64_t resume(const DeoptFrame &F, void *) {
  probe();
  for (const Shape &S : Shapes)
    if (F.FunctionAddress == reinterpret_cast<uint64_t>(S.Opt))
      return S.Cont(reinterpret_cast<void *>(F.Values[0]),
                    reinterpret_cast<void *>(F.Values[1]),
                    reinterpret_cast<void *>(F.Values[2]), F.Values[3]);
  std::printf("harness: FAIL: no continuation for the deopt\n");
  std::exit(1);
}

std::vector<void *> Released;
int FailedStatus = 0;

uint64_t failed(const DeoptFailure &F, void *) {
  Released = F.Released;
  FailedStatus = F.Status;
  return 0xdead;
}

/// Runs one version of `S` on fresh objects inside a caller lock; returns
/// the state at the deopt point, or "" after a failure it printed.
std::string runVersion(jitlock_thread *Self, const Shape &S, bool Optimized) {
  std::vector<Object> Objs(S.Objects + 1);
  Watched.clear();
  for (Object &O : Objs)
    Watched.push_back(&O);
  Object *Outer = &Objs.back();
  void *A = &Objs[0], *B = S.Objects > 1 ? &Objs[1] : nullptr,
       *C = S.Objects > 2 ? &Objs[2] : nullptr;
  jitlock_rt_monitor_enter(Self, Outer);
  Observed.clear();
  uint64_t R = Optimized ? callDeoptimizable(S.Opt, A, B, C, uint64_t(41))
                         : S.Base(A, B, C, 41, probe);
  std::string State = Observed;
  jitlock_rt_monitor_exit(Self, Outer);
  bool Free = true;
  for (Object &O : Objs)
    Free &= (O.Header & 3) == 1 || jitlock_rt_owner_of(&O) == nullptr;
  if (R != 42 || !Free || Objs[0].Count != 1) {
    std::printf("harness: FAIL: %s.%s returned %llu, objects %s\n", S.Name,
                Optimized ? "opt" : "base", (unsigned long long)R,
                Free ? "free" : "still held");
    return "";
  }
  return State;
}

} // namespace

int main() {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  bool Tls = jitlock_aarch64::checkLowering(L);
  std::string Error;
  size_t Size = size_t(jitlock_stackmaps_end - jitlock_stackmaps_start);
  if (!StackMapTable::global().addSection({jitlock_stackmaps_start, Size}, 1,
                                          Error)) {
    std::printf("harness: FAIL: the stack maps: %s\n", Error.c_str());
    return 1;
  }
  jitlock_thread *Self = jitlock_rt_attach();
  if (!jitlock_aarch64::threadIsWhereLowered(Tls, Self)) {
    std::printf("harness: FAIL: the thread is not where the code looks\n");
    return 1;
  }
  std::printf("harness: thread=%s, %zu stack map records\n",
              Tls ? "tls" : "call", StackMapTable::global().numRecords());
  DeoptHandlers H;
  H.Resume = resume;
  H.Failed = failed;
  setDeoptHandlers(&H);

  bool Ok = true;
  for (const Shape &S : Shapes) {
    std::string Restored = runVersion(Self, S, true);
    std::string Unelided = runVersion(Self, S, false);
    bool Match = !Restored.empty() && Restored == Unelided;
    std::printf("harness: %s: restored %s %s unelided %s\n", S.Name,
                Restored.c_str(), Match ? "==" : "!=", Unelided.c_str());
    Ok &= Match;
  }

  // A frame whose group claims a lock it does not hold: refused, and the
  // frame's held monitors are released innermost first.
  Object A, B, C;
  uint64_t R = callDeoptimizable(lyingOpt, (void *)&A, (void *)&B, (void *)&C,
                                 uint64_t(41));
  bool Unwound = R == 0xdead && FailedStatus == JITLOCK_EINVAL &&
                 Released == std::vector<void *>{&B, &A} &&
                 jitlock_rt_owner_of(&A) == nullptr &&
                 jitlock_rt_owner_of(&B) == nullptr;
  std::printf("harness: lying: restore refused (%s), released %s\n",
              jitlock_rt_status_name(FailedStatus),
              Unwound ? "b then a" : "WRONG");
  Ok &= Unwound;

  setDeoptHandlers(nullptr);
  if (jitlock_rt_detach() != JITLOCK_OK) {
    std::printf("harness: FAIL: detach\n");
    return 1;
  }
  std::printf("harness: %s\n", Ok ? "PASS" : "FAIL");
  return Ok ? 0 : 1;
}
