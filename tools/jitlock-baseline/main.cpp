//===- jitlock-baseline/main.cpp - A tiny baseline JIT using the emitters -===//
//
// How an embedder's baseline tier uses the asmjit front door
// (include/jitlock/Emitters.h): a stack-machine bytecode with monitor ops is
// compiled, one instruction at a time, into x86_64 machine code with asmjit,
// and run natively on several threads that share the objects.
//
// The bytecode (one instruction per `;` or line; the operand stack holds
// object references):
//
//   obj K    push object K
//   dup      duplicate the top of the operand stack
//   enter    pop an object; monitorenter (the emitted fast path)
//   exit     pop an object; monitorexit (the emitted fast path)
//   inc      pop an object; add 1 to its counter field (a plain, unguarded
//            load, add and store: only the monitor makes it safe)
//   loop L   poll for a safepoint; decrement the iteration count; while it
//            is not zero, jump back to instruction L (the verifier accepts
//            one loop, the last instruction, with L = 0: the body runs once
//            per iteration)
//
// What the compiler does, as a baseline JIT would:
//   - it reads the layout once with jitlock_rt_get_layout() and passes it to
//     every emitter call: no offset is restated here;
//   - it gives the emitters fixed registers: the object in r13, the current
//     thread in r12 (loaded once on entry), scratch rax and rcx; the operand
//     stack lives in the machine frame, so nothing else is live across a
//     monitor operation, but the emitters would preserve it if it were;
//   - it asks for SlowPathMode::Labels and emits every slow-path call after
//     the function's `ret`, out of the way of the straight-line code (the
//     glue preserves every register and realigns the stack itself);
//   - every loop back-edge polls (emitSafepointPoll, P1 of the safepoint
//     protocol), so that a safepoint or a handshake stops a running program
//     within one iteration; nothing is held across the back-edge, but the
//     poll would preserve it if it were;
//   - its threads wait for the start in the `native` state, so that a
//     safepoint never waits for a thread that is not running code;
//   - it verifies the bytecode first: stack depths agree at every
//     instruction, and monitors are balanced and properly nested (enter and
//     exit of the same object, innermost first) on every path.
//
// Usage:
//   jitlock-baseline [--threads N] [--iterations K] [--program NAME]...
//                    [--source TEXT] [--list] [--asm]
//                    [--safepoints N] [--handshakes N] [--min-midway N]
//                    [--dump-sequences DIR]
//
// Each thread runs one of the programs (thread i runs program i mod count),
// all on the same objects; at the end every object's counter must equal the
// increments the programs made, and every lock must be free. The exit status
// is 0 when that holds, 1 when it does not, 2 for bad usage.
//
// --safepoints N makes the main thread, which is not attached, a VM thread
// that takes up to N safepoints while the programs run (stopping early when
// they are all done): while it holds one, no counter may move.
// --handshakes N runs up to N rounds of jitlock_rt_handshake_all, between
// the safepoints: within a round, the operation must run at most once for
// each thread. --min-midway N fails the run (status 1) unless at least N
// safepoints stopped the programs midway and, with --handshakes, at least
// one round ran: a run whose VM thread never met the programs checks
// nothing.
//
// --dump-sequences DIR writes the emitted enter, exit and safepoint-poll
// sequences (with the registers above) as raw bytes (DIR/enter.bin,
// DIR/exit.bin, DIR/poll.bin; DIR/exit.store.bin and DIR/exit.fence.bin are
// the exit with that inflated exit, whatever the runtime chose;
// DIR/poll.labels.bin is the poll in Labels mode followed by a `ret` and its
// slow call) and as hex text for `llvm-mc-19
// --disassemble` (DIR/*.hex); see docs/emitters.md.
//
//===----------------------------------------------------------------------===//
#include "ToolSupport.h"

#include "jitlock/Emitters.h"
#include "jitlock/jitlock_rt.h"

#include <asmjit/x86.h>

#include "llvm/Support/CommandLine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace asmjit;
namespace jx = jitlock::emit::x64;
namespace cl = llvm::cl;
using jitlock::emit::SlowPathLabels;
using jitlock::emit::SlowPathMode;
using jitlock::tools::usageError;

namespace {

//===----------------------------------------------------------------------===//
// Objects and the bytecode
//===----------------------------------------------------------------------===//

constexpr unsigned NumObjects = 12;

/// An object as this embedder lays it out: the header the runtime owns the
/// low two bits of (at the layout's header offset, 0 by default), then one
/// counter field.
struct alignas(64) Object {
  uint64_t Header = 1; // unlocked, no hash
  uint64_t Counter = 0;
};

enum class Opcode { Obj, Dup, Enter, Exit, Inc, Loop };

struct Insn {
  Opcode Op;
  uint32_t Arg = 0;
};

const std::map<std::string, std::string> &builtinPrograms() {
  static const std::map<std::string, std::string> Programs = {
      // synchronized (o0) { o0.counter++; }
      {"simple", "obj 0; dup; enter; inc; obj 0; exit; loop 0"},
      // synchronized (o0) { synchronized (o0) { o0.counter++; } }
      {"recursive", "obj 0; enter; obj 0; dup; enter; inc; obj 0; exit; "
                    "obj 0; exit; loop 0"},
      // synchronized (o0) { synchronized (o1) { o0.counter++; o1.counter++; }}
      {"nested", "obj 0; enter; obj 1; enter; obj 0; inc; obj 1; inc; "
                 "obj 1; exit; obj 0; exit; loop 0"},
      // Ten nested monitors, deeper than the lock stack: the runtime
      // inflates the oldest entries, and later iterations take the inline
      // inflated paths (M1, N3) for them.
      {"deep", "obj 0; enter; obj 2; enter; obj 3; enter; obj 4; enter; "
               "obj 5; enter; obj 6; enter; obj 7; enter; obj 8; enter; "
               "obj 9; enter; obj 10; enter; obj 10; inc; obj 0; inc; "
               "obj 10; exit; obj 9; exit; obj 8; exit; obj 7; exit; "
               "obj 6; exit; obj 5; exit; obj 4; exit; obj 3; exit; "
               "obj 2; exit; obj 0; exit; loop 0"},
  };
  return Programs;
}

std::string trim(const std::string &S) {
  size_t B = S.find_first_not_of(" \t\r\n"), E = S.find_last_not_of(" \t\r\n");
  return B == std::string::npos ? "" : S.substr(B, E - B + 1);
}

/// Parses the text form; an error message on failure.
std::optional<std::string> parse(const std::string &Text,
                                 std::vector<Insn> &Out) {
  std::string Norm = Text;
  for (char &C : Norm)
    if (C == '\n')
      C = ';';
  std::stringstream SS(Norm);
  std::string Item;
  while (std::getline(SS, Item, ';')) {
    Item = trim(Item);
    if (Item.empty())
      continue;
    std::stringstream IS(Item);
    std::string Name;
    IS >> Name;
    static const std::map<std::string, std::pair<Opcode, bool>> Ops = {
        {"obj", {Opcode::Obj, true}},      {"dup", {Opcode::Dup, false}},
        {"enter", {Opcode::Enter, false}}, {"exit", {Opcode::Exit, false}},
        {"inc", {Opcode::Inc, false}},     {"loop", {Opcode::Loop, true}}};
    auto It = Ops.find(Name);
    if (It == Ops.end())
      return "unknown instruction '" + Name + "'";
    Insn I{It->second.first};
    if (It->second.second) {
      long long V;
      if (!(IS >> V) || V < 0)
        return "'" + Name + "' needs a non-negative operand";
      I.Arg = uint32_t(V);
    }
    std::string Rest;
    if (IS >> Rest)
      return "unexpected '" + Rest + "' after '" + Name + "'";
    Out.push_back(I);
  }
  if (Out.empty())
    return std::string("empty program");
  return std::nullopt;
}

/// The abstract state at an instruction: the operand stack (which object
/// each slot holds; the verifier tracks them because monitors must pair)
/// and the monitors held, outermost first.
struct AbstractState {
  std::vector<uint32_t> Stack;
  std::vector<uint32_t> Held;
  bool operator==(const AbstractState &O) const {
    return Stack == O.Stack && Held == O.Held;
  }
};

/// Checks that the program is well formed, that every instruction is
/// reached with one abstract state, and that monitors are balanced and
/// nested on every path. Also computes the counter increments per
/// iteration and the maximum stack depth.
std::optional<std::string> verify(const std::vector<Insn> &P,
                                  std::vector<uint64_t> &IncsPerIteration,
                                  size_t &MaxDepth) {
  std::vector<std::optional<AbstractState>> At(P.size() + 1);
  At[0] = AbstractState{};
  IncsPerIteration.assign(NumObjects, 0);
  MaxDepth = 0;
  auto Where = [](size_t I) { return "instruction " + std::to_string(I); };
  for (size_t I = 0; I < P.size(); ++I) {
    if (!At[I])
      return Where(I) + " is unreachable";
    AbstractState S = *At[I];
    const Insn &X = P[I];
    auto Pop = [&](uint32_t &O) {
      if (S.Stack.empty())
        return false;
      O = S.Stack.back();
      S.Stack.pop_back();
      return true;
    };
    uint32_t O = 0;
    switch (X.Op) {
    case Opcode::Obj:
      if (X.Arg >= NumObjects)
        return Where(I) + ": object " + std::to_string(X.Arg) +
               " does not exist (there are " + std::to_string(NumObjects) + ")";
      S.Stack.push_back(X.Arg);
      break;
    case Opcode::Dup:
      if (S.Stack.empty())
        return Where(I) + ": dup on an empty stack";
      S.Stack.push_back(S.Stack.back());
      break;
    case Opcode::Enter:
      if (!Pop(O))
        return Where(I) + ": enter on an empty stack";
      S.Held.push_back(O);
      break;
    case Opcode::Exit:
      if (!Pop(O))
        return Where(I) + ": exit on an empty stack";
      if (S.Held.empty() || S.Held.back() != O)
        return Where(I) + ": exit of object " + std::to_string(O) +
               " is not the innermost monitor held";
      S.Held.pop_back();
      break;
    case Opcode::Inc:
      if (!Pop(O))
        return Where(I) + ": inc on an empty stack";
      if (std::find(S.Held.begin(), S.Held.end(), O) == S.Held.end())
        return Where(I) + ": inc of object " + std::to_string(O) +
               " outside its monitor";
      ++IncsPerIteration[O];
      break;
    case Opcode::Loop:
      // One loop around the whole body: every other instruction runs once
      // per iteration.
      if (I + 1 != P.size() || X.Arg != 0)
        return Where(I) + ": the only loop must be the last instruction, "
                          "jumping to instruction 0";
      if (!(S == *At[X.Arg]))
        return Where(I) + ": the stack or the monitors held differ at the "
                          "loop target";
      break;
    }
    MaxDepth = std::max(MaxDepth, S.Stack.size());
    if (At[I + 1] && !(*At[I + 1] == S))
      return Where(I + 1) + " is reached with two different states";
    At[I + 1] = S;
  }
  const AbstractState &End = *At[P.size()];
  if (!End.Held.empty() || !End.Stack.empty())
    return std::string("the program ends holding monitors or with a non-empty "
                       "stack");
  if (P.back().Op != Opcode::Loop)
    return std::string("the program must end with 'loop 0'");
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The compiler
//===----------------------------------------------------------------------===//

/// What compiled code gets: its thread, the iterations left, the objects.
struct Context {
  jitlock_thread *Thread = nullptr;
  uint64_t Remaining = 0;
  Object *Objects[NumObjects] = {};
};

using CompiledFn = void (*)(Context *);

/// Calls compiled code. UBSan's -fsanitize=function (in the asan preset)
/// checks a signature word just before the callee, which JIT code does not
/// have (and which may lie on an unmapped page), so the call opts out.
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void run(CompiledFn Fn, Context *Ctx) {
  Fn(Ctx);
}

/// The registers the baseline tier gives the emitters. rbx holds the
/// Context, r12 the thread, r13 the object of the monitor operation.
const jx::MonitorOperands Regs{x86::r13, x86::r12, x86::rax, x86::rcx};
/// The poll reads the thread and needs no scratch register.
const jx::SafepointPollOperands PollRegs{Regs.Thread};

Error compile(JitRuntime &RT, const std::vector<Insn> &P, size_t MaxDepth,
              const jitlock_rt_layout &L, CompiledFn &Out, String *Listing) {
  CodeHolder Code;
  Code.init(RT.environment());
  StringLogger Logger;
  if (Listing)
    Code.setLogger(&Logger);
  x86::Assembler A(&Code);

  // The operand stack lives in the frame: slot D at [rsp + 8 * D].
  const int32_t Frame = int32_t((MaxDepth * 8 + 15) & ~size_t(15));
  auto Slot = [](size_t D) { return x86::qword_ptr(x86::rsp, int32_t(8 * D)); };

  // Prologue: entry rsp = 8 mod 16; three pushes make it 16-aligned.
  A.push(x86::rbx);
  A.push(x86::r12);
  A.push(x86::r13);
  if (Frame)
    A.sub(x86::rsp, Frame);
  A.mov(x86::rbx, x86::rdi);
  A.mov(Regs.Thread, x86::qword_ptr(x86::rbx, offsetof(Context, Thread)));

  std::vector<Label> InsnLabels;
  for (size_t I = 0; I < P.size(); ++I)
    InsnLabels.push_back(A.newLabel());
  enum class StubKind { Enter, Exit, Poll };
  struct ColdStub {
    SlowPathLabels Labels;
    StubKind Kind;
  };
  std::vector<ColdStub> Cold;
  size_t Depth = 0;
  for (size_t I = 0; I < P.size(); ++I) {
    A.bind(InsnLabels[I]);
    const Insn &X = P[I];
    switch (X.Op) {
    case Opcode::Obj:
      A.mov(x86::rax,
            x86::qword_ptr(x86::rbx,
                           int32_t(offsetof(Context, Objects) + 8 * X.Arg)));
      A.mov(Slot(Depth++), x86::rax);
      break;
    case Opcode::Dup:
      A.mov(x86::rax, Slot(Depth - 1));
      A.mov(Slot(Depth++), x86::rax);
      break;
    case Opcode::Enter:
    case Opcode::Exit: {
      A.mov(Regs.Obj, Slot(--Depth));
      Cold.push_back({SlowPathLabels{}, X.Op == Opcode::Enter
                                            ? StubKind::Enter
                                            : StubKind::Exit});
      SlowPathLabels *Labels = &Cold.back().Labels;
      Error E =
          X.Op == Opcode::Enter
              ? jx::emitMonitorEnter(A, L, Regs, SlowPathMode::Labels, Labels)
              : jx::emitMonitorExit(A, L, Regs, SlowPathMode::Labels, Labels);
      if (E)
        return E;
      break;
    }
    case Opcode::Inc:
      A.mov(x86::rcx, Slot(--Depth));
      A.mov(x86::rax, x86::qword_ptr(x86::rcx, offsetof(Object, Counter)));
      A.add(x86::rax, 1);
      A.mov(x86::qword_ptr(x86::rcx, offsetof(Object, Counter)), x86::rax);
      break;
    case Opcode::Loop: {
      // The back-edge polls: a safepoint stops the program here, between
      // iterations, within one iteration of being requested.
      Cold.push_back({SlowPathLabels{}, StubKind::Poll});
      if (Error E = jx::emitSafepointPoll(A, L, PollRegs, SlowPathMode::Labels,
                                          &Cold.back().Labels))
        return E;
      A.sub(x86::qword_ptr(x86::rbx, offsetof(Context, Remaining)), 1);
      A.jnz(InsnLabels[X.Arg]);
      break;
    }
    }
  }
  if (Frame)
    A.add(x86::rsp, Frame);
  A.pop(x86::r13);
  A.pop(x86::r12);
  A.pop(x86::rbx);
  A.ret();

  // The cold part: every slow path, after the function's code.
  for (const ColdStub &S : Cold)
    if (Error E = S.Kind == StubKind::Poll
                      ? jx::emitSafepointPollSlowCall(A, PollRegs, S.Labels)
                      : jx::emitSlowCall(A, S.Kind == StubKind::Enter, Regs,
                                         S.Labels))
      return E;

  if (Listing)
    Listing->append(Logger.data(), Logger.dataSize());
  void *Fn = nullptr;
  if (Error E = RT.add(&Fn, &Code))
    return E;
  Out = reinterpret_cast<CompiledFn>(Fn);
  return kErrorOk;
}

/// What --dump-sequences writes.
enum class Sequence { Enter, Exit, Poll, PollLabels };

/// Writes one emitted sequence (this tool's registers; OutOfLine, except
/// PollLabels: the poll in Labels mode, a `ret` standing for the rest of the
/// method, then the poll's slow call) as raw bytes and as llvm-mc hex text.
bool dumpSequence(const std::string &Dir, const char *Name, Sequence Seq,
                  const jitlock_rt_layout &L) {
  CodeHolder Code;
  Environment Env;
  Env.init(Arch::kX64);
  Code.init(Env);
  x86::Assembler A(&Code);
  Error E = kErrorOk;
  switch (Seq) {
  case Sequence::Enter:
    E = jx::emitMonitorEnter(A, L, Regs, SlowPathMode::OutOfLine);
    break;
  case Sequence::Exit:
    E = jx::emitMonitorExit(A, L, Regs, SlowPathMode::OutOfLine);
    break;
  case Sequence::Poll:
    E = jx::emitSafepointPoll(A, L, PollRegs, SlowPathMode::OutOfLine);
    break;
  case Sequence::PollLabels: {
    SlowPathLabels Labels;
    E = jx::emitSafepointPoll(A, L, PollRegs, SlowPathMode::Labels, &Labels);
    if (!E)
      E = A.ret();
    if (!E)
      E = jx::emitSafepointPollSlowCall(A, PollRegs, Labels);
    break;
  }
  }
  if (E) {
    fprintf(stderr, "jitlock-baseline: emitting %s: %s\n", Name,
            DebugUtils::errorAsString(E));
    return false;
  }
  Code.flatten();
  Code.resolveUnresolvedLinks();
  const CodeBuffer &Buf = Code.textSection()->buffer();
  std::string Base = Dir + "/" + Name;
  FILE *Bin = fopen((Base + ".bin").c_str(), "wb");
  FILE *Hex = fopen((Base + ".hex").c_str(), "w");
  if (!Bin || !Hex) {
    fprintf(stderr, "jitlock-baseline: cannot write %s.{bin,hex}\n",
            Base.c_str());
    if (Bin)
      fclose(Bin);
    if (Hex)
      fclose(Hex);
    return false;
  }
  fwrite(Buf.data(), 1, Buf.size(), Bin);
  for (size_t I = 0; I < Buf.size(); ++I)
    fprintf(Hex, "0x%02x%c", Buf.data()[I], (I % 16 == 15) ? '\n' : ' ');
  fputc('\n', Hex);
  fclose(Bin);
  fclose(Hex);
  printf("wrote %s.bin and %s.hex (%zu bytes)\n", Base.c_str(), Base.c_str(),
         Buf.size());
  return true;
}

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

jitlock::tools::ToolCommandLine CommandLine(
    {.Tool = "jitlock-baseline",
     .Overview = "A stack-machine bytecode compiled with asmjit and the "
                 "jitlock emitters, run on several threads on shared "
                 "objects\n",
     .HasThreadsOption = true});
cl::OptionCategory &BaselineCategory = CommandLine.Category;

jitlock::tools::NumberOpt Threads("threads",
                                  cl::desc("Threads, 1 to 256 (default 4)"),
                                  cl::value_desc("N"), cl::init(4),
                                  cl::cat(BaselineCategory));
jitlock::tools::NumberOpt Iterations(
    "iterations", cl::desc("Loop iterations of each thread (default 100000)"),
    cl::value_desc("K"), cl::init(100000), cl::cat(BaselineCategory));
cl::list<std::string>
    ProgramNames("program",
                 cl::desc("Run built-in program NAME (see --list); "
                          "repeatable"),
                 cl::value_desc("NAME"), cl::cat(BaselineCategory));
cl::list<std::string> SourceTexts("source",
                                  cl::desc("Run this bytecode; repeatable"),
                                  cl::value_desc("TEXT"),
                                  cl::cat(BaselineCategory));
cl::opt<bool> List("list", cl::desc("List the built-in programs"),
                   cl::cat(BaselineCategory));
cl::opt<bool> PrintAsm("asm", cl::desc("Print the compiled code"),
                       cl::cat(BaselineCategory));
jitlock::tools::NumberOpt
    SafepointCount("safepoints",
                   cl::desc("Take up to N safepoints while the programs run"),
                   cl::value_desc("N"), cl::init(0), cl::cat(BaselineCategory));
jitlock::tools::NumberOpt
    HandshakeCount("handshakes",
                   cl::desc("Run up to N handshake rounds between them"),
                   cl::value_desc("N"), cl::init(0), cl::cat(BaselineCategory));
jitlock::tools::NumberOpt
    MinMidway("min-midway",
              cl::desc("Fail unless N safepoints stopped the programs "
                       "midway"),
              cl::value_desc("N"), cl::init(0), cl::cat(BaselineCategory));
cl::opt<std::string>
    DumpDir("dump-sequences",
            cl::desc("Write the emitted sequences to DIR and exit"),
            cl::value_desc("DIR"), cl::cat(BaselineCategory));

struct NamedProgram {
  std::string Name;
  std::vector<Insn> Code;
  std::vector<uint64_t> Incs;
  size_t MaxDepth = 0;
  CompiledFn Fn = nullptr;
};

//===----------------------------------------------------------------------===//
// The VM thread
//===----------------------------------------------------------------------===//

struct VmReport {
  unsigned Safepoints = 0, Midway = 0, MovedWhileHeld = 0;
  unsigned Rounds = 0, Twice = 0, Errors = 0;
  uint64_t Operations = 0;
  /// Time to safepoint: how long jitlock_rt_safepoint_begin took.
  uint64_t BeginNsTotal = 0, BeginNsMax = 0;
};

/// Counters of every object: the compiled code writes them with plain
/// stores, so they are read here with relaxed atomic loads.
std::vector<uint64_t> counters(std::vector<Object> &Objects) {
  std::vector<uint64_t> Out;
  for (Object &O : Objects)
    Out.push_back(__atomic_load_n(&O.Counter, __ATOMIC_RELAXED));
  return Out;
}

void spinFor(std::chrono::microseconds D) {
  auto End = std::chrono::steady_clock::now() + D;
  while (std::chrono::steady_clock::now() < End)
    std::this_thread::yield();
}

/// One round of handshakes: the targets it ran for.
struct HandshakeRound {
  std::mutex Mu;
  std::multiset<jitlock_thread *> Targets;
};

void countHandshake(void *Arg, jitlock_thread *Target) {
  auto &R = *static_cast<HandshakeRound *>(Arg);
  std::lock_guard<std::mutex> G(R.Mu);
  R.Targets.insert(Target);
}

/// The main thread (not attached) as a VM thread: safepoints, during which
/// no counter may move (every program thread is stopped at its back-edge
/// poll, parked on a monitor, or not running code), and handshakes. A
/// safepoint held while the counters are short of `Total` stopped a program
/// midway (a thread that has finished its loop no longer needs a poll).
VmReport runVmThread(std::vector<Object> &Objects, uint64_t Total,
                     unsigned Threads, const std::atomic<unsigned> &Ready,
                     const std::atomic<unsigned> &Finished, unsigned Safepoints,
                     unsigned Handshakes) {
  VmReport R;
  while (Ready.load() < Threads)
    std::this_thread::yield();
  // Safepoints and handshake rounds alternate, while the programs run.
  for (unsigned I = 0;
       I < std::max(Safepoints, Handshakes) && Finished.load() < Threads; ++I) {
    if (I < Safepoints) {
      const auto Start = std::chrono::steady_clock::now();
      if (jitlock_rt_safepoint_begin() != JITLOCK_OK) {
        ++R.Errors;
        break;
      }
      const uint64_t Ns =
          uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::steady_clock::now() - Start)
                       .count());
      R.BeginNsTotal += Ns;
      R.BeginNsMax = std::max(R.BeginNsMax, Ns);
      ++R.Safepoints;
      std::vector<uint64_t> Held = counters(Objects);
      uint64_t Sum = 0;
      for (uint64_t C : Held)
        Sum += C;
      R.Midway += Sum < Total;
      spinFor(std::chrono::microseconds(100));
      R.MovedWhileHeld += counters(Objects) != Held;
      if (jitlock_rt_safepoint_end() != JITLOCK_OK)
        ++R.Errors;
      spinFor(std::chrono::microseconds(100));
    }
    if (I < Handshakes) {
      HandshakeRound Round;
      if (jitlock_rt_handshake_all(countHandshake, &Round) != JITLOCK_OK) {
        ++R.Errors;
        break;
      }
      ++R.Rounds;
      R.Operations += Round.Targets.size();
      for (jitlock_thread *T : Round.Targets)
        R.Twice += Round.Targets.count(T) > 1;
      spinFor(std::chrono::microseconds(100));
    }
  }
  return R;
}

} // namespace

int main(int argc, char **argv) {
  CommandLine.parse(argc, argv);
  if (List) {
    for (const auto &[Name, Text] : builtinPrograms())
      printf("%-10s %s\n", Name.c_str(), Text.c_str());
    return 0;
  }
  const unsigned Threads =
      unsigned(jitlock::tools::numberInRange(::Threads, 1, 256));
  if (::Iterations < 1)
    usageError("--iterations must be positive");
  const uint64_t Iterations = uint64_t(::Iterations);
  const unsigned Safepoints =
      unsigned(jitlock::tools::numberInRange(SafepointCount, 0, 1000000));
  const unsigned Handshakes =
      unsigned(jitlock::tools::numberInRange(HandshakeCount, 0, 1000000));
  const unsigned MinMidway =
      unsigned(jitlock::tools::numberInRange(::MinMidway, 0, 1000000));
  // The programs in command-line order, --program and --source mixed.
  std::vector<std::pair<unsigned, std::pair<std::string, std::string>>> Ordered;
  for (size_t I = 0; I != ProgramNames.size(); ++I) {
    auto It = builtinPrograms().find(ProgramNames[I]);
    if (It == builtinPrograms().end())
      usageError("no built-in program '" + ProgramNames[I] + "' (see --list)");
    Ordered.push_back({ProgramNames.getPosition(I), *It});
  }
  for (size_t I = 0; I != SourceTexts.size(); ++I)
    Ordered.push_back({SourceTexts.getPosition(I), {"source", SourceTexts[I]}});
  std::sort(Ordered.begin(), Ordered.end(),
            [](const auto &A, const auto &B) { return A.first < B.first; });
  std::vector<std::pair<std::string, std::string>> Sources;
  for (auto &P : Ordered)
    Sources.push_back(std::move(P.second));

  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  if (L.header_offset != int32_t(offsetof(Object, Header))) {
    fprintf(stderr, "jitlock-baseline: this example lays the header out at "
                    "offset 0; the runtime is configured otherwise\n");
    return 2;
  }

  // The exit also with each inflated exit, whatever the runtime chose.
  auto WithExit = [&](uint32_t Exit) {
    jitlock_rt_layout Copy = L;
    Copy.monitor_exit = Exit;
    return Copy;
  };
  if (!DumpDir.empty())
    return dumpSequence(DumpDir, "enter", Sequence::Enter, L) &&
                   dumpSequence(DumpDir, "exit", Sequence::Exit, L) &&
                   dumpSequence(DumpDir, "exit.store", Sequence::Exit,
                                WithExit(JITLOCK_EXIT_STORE)) &&
                   dumpSequence(DumpDir, "exit.fence", Sequence::Exit,
                                WithExit(JITLOCK_EXIT_FENCE)) &&
                   dumpSequence(DumpDir, "poll", Sequence::Poll, L) &&
                   dumpSequence(DumpDir, "poll.labels", Sequence::PollLabels, L)
               ? 0
               : 1;

  if (Sources.empty())
    for (const auto &P : builtinPrograms())
      Sources.push_back(P);

  JitRuntime RT;
  std::vector<NamedProgram> Programs;
  for (const auto &[Name, Text] : Sources) {
    NamedProgram P;
    P.Name = Name;
    if (auto Err = parse(Text, P.Code)) {
      fprintf(stderr, "jitlock-baseline: %s: %s\n", Name.c_str(), Err->c_str());
      return 2;
    }
    if (auto Err = verify(P.Code, P.Incs, P.MaxDepth)) {
      fprintf(stderr, "jitlock-baseline: %s: rejected: %s\n", Name.c_str(),
              Err->c_str());
      return 2;
    }
    String Listing;
    if (Error E = compile(RT, P.Code, P.MaxDepth, L, P.Fn,
                          PrintAsm ? &Listing : nullptr)) {
      fprintf(stderr, "jitlock-baseline: %s: compiling: %s\n", Name.c_str(),
              DebugUtils::errorAsString(E));
      return 1;
    }
    if (PrintAsm)
      printf("; program %s: %s\n%s\n", Name.c_str(), Text.c_str(),
             Listing.data());
    Programs.push_back(std::move(P));
  }

  std::vector<Object> Objects(NumObjects);
  std::atomic<unsigned> Ready{0}, Finished{0};
  std::atomic<bool> Failed{false};
  std::vector<std::thread> Pool;
  for (unsigned T = 0; T < Threads; ++T)
    Pool.emplace_back([&, T] {
      Context Ctx;
      Ctx.Thread = jitlock_rt_attach();
      Ctx.Remaining = Iterations;
      for (unsigned K = 0; K < NumObjects; ++K)
        Ctx.Objects[K] = &Objects[K];
      // Waiting for the others, the thread runs no code of ours: native,
      // so that a safepoint does not wait for it.
      jitlock_rt_enter_native(Ctx.Thread);
      Ready.fetch_add(1);
      while (Ready.load() < Threads)
        std::this_thread::yield();
      jitlock_rt_leave_native(Ctx.Thread);
      run(Programs[T % Programs.size()].Fn, &Ctx);
      int RC = jitlock_rt_detach();
      if (RC != JITLOCK_OK) {
        fprintf(stderr, "thread %u: detach: %s\n", T,
                jitlock_rt_status_name(RC));
        Failed = true;
      }
      Finished.fetch_add(1);
    });
  // Every counter must come to exactly the increments made under its
  // monitor.
  std::vector<uint64_t> Expected(NumObjects, 0);
  uint64_t Total = 0;
  for (unsigned T = 0; T < Threads; ++T)
    for (unsigned K = 0; K < NumObjects; ++K) {
      Expected[K] += Programs[T % Programs.size()].Incs[K] * Iterations;
      Total += Programs[T % Programs.size()].Incs[K] * Iterations;
    }
  VmReport Vm;
  if (Safepoints || Handshakes)
    Vm = runVmThread(Objects, Total, Threads, Ready, Finished, Safepoints,
                     Handshakes);
  for (std::thread &T : Pool)
    T.join();
  bool Ok = !Failed;
  printf("%u threads x %" PRIu64 " iterations; programs:", Threads, Iterations);
  for (const NamedProgram &P : Programs)
    printf(" %s", P.Name.c_str());
  printf("\n");
  for (unsigned K = 0; K < NumObjects; ++K) {
    jitlock_lock_info Info{};
    jitlock_rt_inspect(&Objects[K], &Info);
    bool Free = Info.owner == nullptr && Info.holds == 0 &&
                Info.entry_queued == 0 &&
                (Info.state == JITLOCK_STATE_UNLOCKED ||
                 Info.state == JITLOCK_STATE_INFLATED);
    if (Expected[K] == 0 && Objects[K].Counter == 0 && Free &&
        Info.state == JITLOCK_STATE_UNLOCKED)
      continue;
    bool Good = Objects[K].Counter == Expected[K] && Free;
    Ok &= Good;
    printf("  object %2u: counter %" PRIu64 " (expected %" PRIu64
           "), lock %s%s\n",
           K, Objects[K].Counter, Expected[K],
           Info.state == JITLOCK_STATE_INFLATED ? "inflated" : "unlocked",
           Good ? "" : "  <-- WRONG");
  }
  jitlock_rt_stats St;
  jitlock_rt_get_stats(&St);
  printf("runtime: %" PRIu64 " slow-path calls, %" PRIu64
         " inflations, %" PRIu64 " contended enters, %" PRIu64 " parks\n",
         St.slow_path_calls, St.inflations, St.contended_enters, St.parks);
  if (Safepoints || Handshakes) {
    printf("vm thread: %u safepoints (%u with programs midway), %u moved "
           "while held; %u handshake rounds, %" PRIu64
           " operations, %u run twice for a thread in one round\n",
           Vm.Safepoints, Vm.Midway, Vm.MovedWhileHeld, Vm.Rounds,
           Vm.Operations, Vm.Twice);
    if (Vm.Safepoints)
      printf("time to safepoint: mean %.1f us, max %.1f us\n",
             double(Vm.BeginNsTotal) / Vm.Safepoints / 1000.0,
             double(Vm.BeginNsMax) / 1000.0);
    Ok &= Vm.MovedWhileHeld == 0 && Vm.Twice == 0 && Vm.Errors == 0;
    bool Met = Vm.Midway >= MinMidway && (!Handshakes || Vm.Rounds > 0);
    if (!Met)
      printf("the vm thread met the programs too rarely: %u safepoints "
             "midway (at least %u wanted), %u handshake rounds\n",
             Vm.Midway, MinMidway, Vm.Rounds);
    Ok &= Met;
  }
  printf("%s\n", Ok ? "OK" : "FAILED");
  for (NamedProgram &P : Programs)
    RT.release(P.Fn);
  return Ok ? 0 : 1;
}
