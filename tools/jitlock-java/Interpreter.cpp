//===- Interpreter.cpp - Tier 0: the bytecode verifier and interpreter ----===//
//
// verifyClass runs at link time over every method: each instruction must be
// one tier 0 implements (no float or double, no jsr/ret), with its operands
// in range, its branch targets on instruction boundaries, its constants of
// the right kind, and the built-in library members it names present. What it
// refuses is reported with class, method, bytecode offset and instruction,
// before anything runs. It does not type-check the operand stack: the
// subset is what javac emits, and javac's code is type-correct.
//
// interpret() runs one method activation on the C stack: its locals and
// operand stack are an alloca'd array of slots (a long takes two, as in the
// JVM), and calls go through each callee's Entry (VM.h), so a method that a
// higher tier compiled is called the same way. Around the monitors (see
// docs/java.md):
//  * monitorenter/monitorexit call jitlock_rt_monitor_enter/_exit; a null
//    object throws NullPointerException, an exit the thread does not own
//    IllegalMonitorStateException.
//  * A synchronized method enters its receiver (or its class's mirror) after
//    the stack check and exits it on every return, normal or exceptional.
//  * Method entry compares the stack pointer (less the frame's size) with
//    the thread's watermark and calls jitlock_rt_stack_bang at or below it;
//    below the safe limit it throws StackOverflowError instead, which
//    unwinds frame by frame like any exception, each frame releasing its
//    monitors through its handlers or its synchronized exit.
//  * Backward branches and returns poll for a safepoint.
//
//===----------------------------------------------------------------------===//
#include "Bytecodes.h"
#include "Deoptimize.h"
#include "Profile.h"
#include "Tier1.h"
#include "VM.h"

#include <algorithm>
#include <alloca.h>
#include <cstring>

namespace jitlock::java {

using namespace bytecode;

namespace {

/// Whether tier 0 implements the opcode (everything javac emits for the
/// subset: no float, double, jsr or ret).
bool isSupported(uint8_t Op) {
  if (Op > GOTO_W)
    return false;
  if ((Op >= 11 && Op <= 15) || Op == 23 || Op == 24 ||
      (Op >= 34 && Op <= 41) || Op == 48 || Op == 49 || Op == 56 || Op == 57 ||
      (Op >= 67 && Op <= 74) || Op == 81 || Op == 82)
    return false;
  if (Op >= 96 && Op <= 119 && (Op & 3) >= 2) // f and d arithmetic
    return false;
  if ((Op >= 134 && Op <= 135) || (Op >= 137 && Op <= 144) ||
      (Op >= 149 && Op <= 152) || Op == 168 || Op == 169 || Op == 174 ||
      Op == 175)
    return false;
  return true;
}

/// The fixed length of an instruction (0 for the switches and wide).
unsigned fixedLength(uint8_t Op) {
  switch (Op) {
  case BIPUSH:
  case LDC:
  case NEWARRAY:
    return 2;
  case SIPUSH:
  case LDC_W:
  case LDC2_W:
  case IINC:
  case GETSTATIC:
  case PUTSTATIC:
  case GETFIELD:
  case PUTFIELD:
  case INVOKEVIRTUAL:
  case INVOKESPECIAL:
  case INVOKESTATIC:
  case NEW:
  case ANEWARRAY:
  case CHECKCAST:
  case INSTANCEOF:
  case IFNULL:
  case IFNONNULL:
  case GOTO:
    return 3;
  case MULTIANEWARRAY:
    return 4;
  case INVOKEINTERFACE:
  case INVOKEDYNAMIC:
  case GOTO_W:
    return 5;
  case TABLESWITCH:
  case LOOKUPSWITCH:
  case WIDE:
    return 0;
  default:
    if (Op >= IFEQ && Op <= IF_ACMPNE)
      return 3;
    if (Op == ILOAD || Op == LLOAD || Op == ALOAD || Op == ISTORE ||
        Op == LSTORE || Op == ASTORE)
      return 2;
    return 1;
  }
}

inline uint16_t u2(const uint8_t *P) { return uint16_t(P[0] << 8 | P[1]); }
inline int16_t s2(const uint8_t *P) { return int16_t(u2(P)); }
inline int32_t s4(const uint8_t *P) {
  return int32_t(uint32_t(P[0]) << 24 | uint32_t(P[1]) << 16 |
                 uint32_t(P[2]) << 8 | uint32_t(P[3]));
}

//===-- Constant-pool resolution (cached per entry) --------------------===//

const CpEntry &cp(Class *C, unsigned I) { return C->File->Cp[I]; }

std::string memberText(Class *C, unsigned RefIndex) {
  const CpEntry &Ref = cp(C, RefIndex);
  const CpEntry &NT = cp(C, Ref.B);
  std::string Owner = *C->File->className(Ref.A);
  std::replace(Owner.begin(), Owner.end(), '/', '.');
  return Owner + "." + *C->File->utf8(NT.A) + *C->File->utf8(NT.B);
}

} // namespace

Class *resolveClassRef(VMThread *T, Class *C, unsigned I) {
  CpCacheEntry &E = C->CpCache[I];
  if (void *R = E.Resolved.load(std::memory_order_acquire))
    return static_cast<Class *>(R);
  const std::string &Name = *C->File->className(I);
  Class *K =
      Name[0] == '[' ? arrayClassOf(Name.substr(1)) : findLoadedClass(Name);
  if (!K) {
    std::string Dotted = Name;
    std::replace(Dotted.begin(), Dotted.end(), '/', '.');
    throwNew(T, "java/lang/NoClassDefFoundError", Dotted);
    return nullptr;
  }
  E.Resolved.store(K, std::memory_order_release);
  return K;
}

Method *resolveMethodRef(VMThread *T, Class *C, unsigned I) {
  CpCacheEntry &E = C->CpCache[I];
  if (void *R = E.Resolved.load(std::memory_order_acquire))
    return static_cast<Method *>(R);
  const CpEntry &Ref = cp(C, I);
  Class *K = resolveClassRef(T, C, Ref.A);
  if (!K)
    return nullptr;
  const CpEntry &NT = cp(C, Ref.B);
  Method *M = resolveMethod(K, *C->File->utf8(NT.A), *C->File->utf8(NT.B));
  if (!M) {
    throwNew(T, "java/lang/NoSuchMethodError", memberText(C, I));
    return nullptr;
  }
  E.Resolved.store(M, std::memory_order_release);
  return M;
}

Field *resolveFieldRef(VMThread *T, Class *C, unsigned I, bool Static) {
  CpCacheEntry &E = C->CpCache[I];
  Field *F = static_cast<Field *>(E.Resolved.load(std::memory_order_acquire));
  if (!F) {
    const CpEntry &Ref = cp(C, I);
    Class *K = resolveClassRef(T, C, Ref.A);
    if (!K)
      return nullptr;
    const CpEntry &NT = cp(C, Ref.B);
    F = resolveField(K, *C->File->utf8(NT.A));
    if (!F || F->Descriptor != *C->File->utf8(NT.B)) {
      throwNew(T, "java/lang/NoSuchFieldError", memberText(C, I));
      return nullptr;
    }
    E.Resolved.store(F, std::memory_order_release);
  }
  if (F->isStatic() != Static) {
    throwNew(T, "java/lang/IncompatibleClassChangeError",
             "Expected " + std::string(Static ? "static" : "non-static") +
                 " field " + F->Owner->javaName() + "." + F->Name);
    return nullptr;
  }
  return F;
}

Object *resolveString(VMThread *T, Class *C, unsigned I) {
  CpCacheEntry &E = C->CpCache[I];
  if (void *R = E.Resolved.load(std::memory_order_acquire))
    return static_cast<Object *>(R);
  std::u16string Chars;
  decodeModifiedUtf8(*C->File->utf8(cp(C, I).A), Chars);
  Object *S = internString(T, Chars);
  if (S)
    E.Resolved.store(S, std::memory_order_release);
  return S;
}

namespace {

Slot *fieldAddr(Object *O, Field *F) {
  return reinterpret_cast<Slot *>(reinterpret_cast<char *>(O) + F->Offset);
}

Slot loadField(Slot *P, Field *F) {
  return F->isVolatile() ? __atomic_load_n(P, __ATOMIC_SEQ_CST)
                         : __atomic_load_n(P, __ATOMIC_RELAXED);
}

void storeField(Slot *P, Field *F, Slot V) {
  switch (F->Descriptor[0]) {
  case 'Z':
    V = V & 1;
    break;
  case 'B':
    V = uint32_t(int32_t(int8_t(V)));
    break;
  case 'C':
    V = uint16_t(V);
    break;
  case 'S':
    V = uint32_t(int32_t(int16_t(V)));
    break;
  case 'I':
    V = uint32_t(V);
    break;
  default:
    break;
  }
  if (F->isVolatile())
    __atomic_store_n(P, V, __ATOMIC_SEQ_CST);
  else
    __atomic_store_n(P, V, __ATOMIC_RELAXED);
}

} // namespace

Object *multiNewArray(VMThread *T, Class *AC, const int32_t *Dims, unsigned N) {
  Array *A = allocArray(T, AC, Dims[0]);
  if (!A || N == 1)
    return A;
  for (int32_t I = 0; I < Dims[0]; ++I) {
    Object *Sub = multiNewArray(T, AC->Elem, Dims + 1, N - 1);
    if (!Sub)
      return nullptr;
    reinterpret_cast<Object **>(A->data())[I] = Sub;
  }
  return A;
}

void throwIndexOutOfBounds(VMThread *T, int32_t Index, int32_t Length) {
  throwNew(T, "java/lang/ArrayIndexOutOfBoundsException",
           "Index " + std::to_string(Index) + " out of bounds for length " +
               std::to_string(Length));
}

namespace {

Slot abstractEntry(VMThread *T, Method *M, Slot *) {
  throwNew(T, "java/lang/AbstractMethodError", M->qualifiedName());
  return 0;
}

/// Bytes an activation needs below the entry's stack pointer: its slots
/// and interpret()'s own frame with what it calls directly.
uintptr_t frameReserve(const Method *M) {
  return (uintptr_t(M->MaxLocals) + M->MaxStack + 1) * sizeof(Slot) + 1024;
}

} // namespace

const char *opcodeName(uint8_t Op) {
  switch (Op) {
#define JAVA_BYTECODE(Enumerator, Value, Mnemonic)                             \
  case Value:                                                                  \
    return Mnemonic;
#include "Bytecodes.def"
  }
  return "(unknown)";
}

//===-- The verifier ------------------------------------------------------===//

namespace {

/// The kinds the stack check tracks per local and stack slot: 'I' (int,
/// and boolean, byte, char, short), 'J' and 'j' (the two halves of a
/// long), 'A' (a reference or null) and 'T' (unusable).
struct Frame {
  std::vector<char> Locals, Stack;
};

/// The second pass of verifyClass: a dataflow over the kinds of every
/// local and stack slot, so that no instruction can read an int as a
/// reference, split a long, underflow or overflow the operand stack, or
/// reach an instruction with two different stack shapes. (Which class a
/// reference has is javac's to get right.)
class KindChecker {
public:
  KindChecker(Method &M, const ClassFile &F) : M(M), F(F) {}

  bool run(size_t &FailPc, std::string &Why);

private:
  Method &M;
  const ClassFile &F;
  std::vector<std::unique_ptr<Frame>> In;
  std::vector<size_t> Work;
  std::string Problem;

  bool merge(size_t Pc, const Frame &Fr) {
    if (!In[Pc]) {
      In[Pc] = std::make_unique<Frame>(Fr);
      Work.push_back(Pc);
      return true;
    }
    Frame &Old = *In[Pc];
    if (Old.Stack != Fr.Stack) {
      Problem = "the operand stack differs on two paths to bytecode " +
                std::to_string(Pc);
      return false;
    }
    bool Changed = false;
    for (size_t I = 0; I < Old.Locals.size(); ++I)
      if (Old.Locals[I] != Fr.Locals[I] && Old.Locals[I] != 'T') {
        Old.Locals[I] = 'T';
        Changed = true;
      }
    if (Changed)
      Work.push_back(Pc);
    return true;
  }

  static char kindOfDescriptor(const std::string &D) {
    char K = kindOf(D[0]);
    return K == 'L' ? 'A' : K;
  }
};

bool KindChecker::run(size_t &FailPc, std::string &Why) {
  const std::vector<uint8_t> &Code = M.Code;
  In.resize(Code.size());
  Frame Entry;
  Entry.Locals.assign(M.MaxLocals, 'T');
  size_t L = 0;
  if (!M.isStatic())
    Entry.Locals[L++] = 'A';
  for (char K : M.ArgKinds) {
    if (K == 'J') {
      Entry.Locals[L++] = 'J';
      Entry.Locals[L++] = 'j';
    } else {
      Entry.Locals[L++] = K == 'L' ? 'A' : 'I';
    }
  }
  merge(0, Entry);
  while (!Work.empty()) {
    size_t Pc = Work.back();
    Work.pop_back();
    Frame Fr = *In[Pc];
    const Frame Before = Fr;
    const uint8_t *I = &Code[Pc];
    uint8_t Op = *I;
    auto Fail = [&](const std::string &What) {
      FailPc = Pc;
      Why = What;
      return false;
    };
    auto Pop = [&](char K) {
      std::vector<char> &S = Fr.Stack;
      if (K == 'J') {
        if (S.size() < 2 || S.back() != 'j' || S[S.size() - 2] != 'J')
          return false;
        S.resize(S.size() - 2);
        return true;
      }
      if (S.empty() || S.back() != K)
        return false;
      S.pop_back();
      return true;
    };
    auto Push = [&](char K) {
      if (K == 'J') {
        Fr.Stack.push_back('J');
        Fr.Stack.push_back('j');
      } else if (K != 'V') {
        Fr.Stack.push_back(K);
      }
    };
    auto Need = [&](std::initializer_list<char> Kinds) {
      for (char K : Kinds)
        if (!Pop(K)) {
          Problem = std::string("expects ") +
                    (K == 'I'   ? "an int"
                     : K == 'J' ? "a long"
                                : "a reference") +
                    " on the operand stack";
          return false;
        }
      return true;
    };
    auto SetLocal = [&](unsigned N, char K) {
      if (N > 0 && Fr.Locals[N - 1] == 'J')
        Fr.Locals[N - 1] = 'T';
      if (Fr.Locals[N] == 'J' && N + 1 < Fr.Locals.size())
        Fr.Locals[N + 1] = 'T';
      Fr.Locals[N] = K;
      if (K == 'J') {
        if (N + 2 < Fr.Locals.size() && Fr.Locals[N + 1] == 'J')
          Fr.Locals[N + 2] = 'T';
        Fr.Locals[N + 1] = 'j';
      }
    };
    auto GetLocal = [&](unsigned N, char K) {
      if (Fr.Locals[N] != K || (K == 'J' && Fr.Locals[N + 1] != 'j')) {
        Problem = "local " + std::to_string(N) + " does not hold " +
                  (K == 'I'   ? "an int"
                   : K == 'J' ? "a long"
                              : "a reference");
        return false;
      }
      Push(K);
      return true;
    };
    /// A raw window of N slots below the top must not cut a long in two.
    auto Whole = [&](size_t N) {
      const std::vector<char> &S = Fr.Stack;
      if (S.size() < N || S[S.size() - N] == 'j') {
        Problem = "stack manipulation on a split or missing value";
        return false;
      }
      return true;
    };
    auto Category1 = [&](size_t FromTop) {
      char K = Fr.Stack[Fr.Stack.size() - 1 - FromTop];
      return K == 'I' || K == 'A';
    };
    auto Invoke = [&](const std::string &Desc, bool HasReceiver) {
      Method Probe;
      Probe.Descriptor = Desc;
      Probe.Flags = AccStatic;
      std::string E;
      parseMethodDescriptor(Probe, E);
      for (size_t K = Probe.ArgKinds.size(); K-- > 0;)
        if (!Need({Probe.ArgKinds[K] == 'L' ? 'A' : Probe.ArgKinds[K]}))
          return false;
      if (HasReceiver && !Need({'A'}))
        return false;
      Push(Probe.ReturnKind == 'L' ? 'A' : Probe.ReturnKind);
      return true;
    };
    auto RefDesc = [&](unsigned Index) -> const std::string & {
      return *F.utf8(F.Cp[F.Cp[Index].B].B);
    };

    Problem.clear();
    bool Ok = true, FallsThrough = true;
    size_t Next = Pc + fixedLength(Op);
    std::vector<size_t> Targets;
    switch (Op) {
    case NOP:
      break;
    case ACONST_NULL:
      Push('A');
      break;
    case BIPUSH:
    case SIPUSH:
      Push('I');
      break;
    case LCONST_0:
    case LCONST_1:
    case LDC2_W:
      Push('J');
      break;
    case LDC:
    case LDC_W: {
      unsigned Index = Op == LDC ? I[1] : u2(I + 1);
      Push(F.Cp[Index].Tag == CpInteger ? 'I' : 'A');
      break;
    }
    case ILOAD:
      Ok = GetLocal(I[1], 'I');
      break;
    case LLOAD:
      Ok = GetLocal(I[1], 'J');
      break;
    case ALOAD:
      Ok = GetLocal(I[1], 'A');
      break;
    case ISTORE:
    case LSTORE:
    case ASTORE: {
      char K = Op == ISTORE ? 'I' : Op == LSTORE ? 'J' : 'A';
      Ok = Need({K});
      if (Ok)
        SetLocal(I[1], K);
      break;
    }
    case IINC:
      Ok = Fr.Locals[I[1]] == 'I';
      if (!Ok)
        Problem = "local " + std::to_string(I[1]) + " does not hold an int";
      break;
    case IALOAD:
    case BALOAD:
    case CALOAD:
    case SALOAD:
      Ok = Need({'I', 'A'});
      Push('I');
      break;
    case LALOAD:
      Ok = Need({'I', 'A'});
      Push('J');
      break;
    case AALOAD:
      Ok = Need({'I', 'A'});
      Push('A');
      break;
    case IASTORE:
    case BASTORE:
    case CASTORE:
    case SASTORE:
      Ok = Need({'I', 'I', 'A'});
      break;
    case LASTORE:
      Ok = Need({'J', 'I', 'A'});
      break;
    case AASTORE:
      Ok = Need({'A', 'I', 'A'});
      break;
    case POP:
      Ok = Whole(1) && Category1(0);
      if (Ok)
        Fr.Stack.pop_back();
      break;
    case POP2:
      Ok = Whole(2);
      if (Ok)
        Fr.Stack.resize(Fr.Stack.size() - 2);
      break;
    case DUP:
      Ok = Whole(1) && Category1(0);
      if (Ok)
        Fr.Stack.push_back(Fr.Stack.back());
      break;
    case DUP_X1:
    case DUP_X2:
    case DUP2:
    case DUP2_X1:
    case DUP2_X2:
    case SWAP: {
      // The values moved (N from the top) and the depth they go below.
      size_t N = (Op == DUP2 || Op == DUP2_X1 || Op == DUP2_X2) ? 2 : 1;
      size_t Under = Op == DUP_X1 || Op == DUP2_X1   ? 1
                     : Op == DUP_X2 || Op == DUP2_X2 ? 2
                     : Op == SWAP                    ? 1
                                                     : 0;
      Ok = Whole(N) && Whole(N + Under) && (N == 2 || Category1(0));
      if (Ok && Op == SWAP)
        Ok = Category1(0) && Category1(1);
      if (!Ok) {
        if (Problem.empty())
          Problem = "stack manipulation on a long";
        break;
      }
      std::vector<char> &S = Fr.Stack;
      std::vector<char> Top(S.end() - long(N), S.end());
      if (Op == SWAP)
        std::swap(S[S.size() - 1], S[S.size() - 2]);
      else
        S.insert(S.end() - long(N + Under), Top.begin(), Top.end());
      break;
    }
    case IADD:
    case ISUB:
    case IMUL:
    case IDIV:
    case IREM:
    case ISHL:
    case ISHR:
    case IUSHR:
    case IAND:
    case IOR:
    case IXOR:
      Ok = Need({'I', 'I'});
      Push('I');
      break;
    case LADD:
    case LSUB:
    case LMUL:
    case LDIV:
    case LREM:
    case LAND:
    case LOR:
    case LXOR:
      Ok = Need({'J', 'J'});
      Push('J');
      break;
    case LSHL:
    case LSHR:
    case LUSHR:
      Ok = Need({'I', 'J'});
      Push('J');
      break;
    case INEG:
    case I2B:
    case I2C:
    case I2S:
      Ok = Need({'I'});
      Push('I');
      break;
    case LNEG:
      Ok = Need({'J'});
      Push('J');
      break;
    case I2L:
      Ok = Need({'I'});
      Push('J');
      break;
    case L2I:
      Ok = Need({'J'});
      Push('I');
      break;
    case LCMP:
      Ok = Need({'J', 'J'});
      Push('I');
      break;
    case IF_ACMPEQ:
    case IF_ACMPNE:
      Ok = Need({'A', 'A'});
      Targets.push_back(Pc + s2(I + 1));
      break;
    case IFNULL:
    case IFNONNULL:
      Ok = Need({'A'});
      Targets.push_back(Pc + s2(I + 1));
      break;
    case GOTO:
      Targets.push_back(Pc + s2(I + 1));
      FallsThrough = false;
      break;
    case GOTO_W:
      Targets.push_back(Pc + s4(I + 1));
      FallsThrough = false;
      break;
    case TABLESWITCH:
    case LOOKUPSWITCH: {
      Ok = Need({'I'});
      const uint8_t *P = &Code[(Pc + 4) & ~size_t(3)];
      Targets.push_back(Pc + s4(P));
      if (Op == TABLESWITCH) {
        int64_t Count = int64_t(s4(P + 8)) - s4(P + 4) + 1;
        for (int64_t K = 0; K < Count; ++K)
          Targets.push_back(Pc + s4(P + 12 + 4 * K));
      } else {
        for (int32_t K = 0; K < s4(P + 4); ++K)
          Targets.push_back(Pc + s4(P + 12 + 8 * K));
      }
      FallsThrough = false;
      break;
    }
    case IRETURN:
    case LRETURN:
    case ARETURN:
    case RETURN: {
      char Want = M.ReturnKind == 'L' ? 'A' : M.ReturnKind;
      char Has = Op == IRETURN   ? 'I'
                 : Op == LRETURN ? 'J'
                 : Op == ARETURN ? 'A'
                                 : 'V';
      if (Want != Has) {
        Ok = false;
        Problem = "returns the wrong kind of value for " + M.Descriptor;
      } else if (Has != 'V') {
        Ok = Need({Has});
      }
      FallsThrough = false;
      break;
    }
    case GETSTATIC:
      Push(kindOfDescriptor(RefDesc(u2(I + 1))));
      break;
    case PUTSTATIC:
      Ok = Need({kindOfDescriptor(RefDesc(u2(I + 1)))});
      break;
    case GETFIELD:
      Ok = Need({'A'});
      Push(kindOfDescriptor(RefDesc(u2(I + 1))));
      break;
    case PUTFIELD:
      Ok = Need({kindOfDescriptor(RefDesc(u2(I + 1))), 'A'});
      break;
    case INVOKEVIRTUAL:
    case INVOKESPECIAL:
    case INVOKEINTERFACE:
      Ok = Invoke(RefDesc(u2(I + 1)), true);
      break;
    case INVOKESTATIC:
    case INVOKEDYNAMIC:
      Ok = Invoke(RefDesc(u2(I + 1)), false);
      break;
    case NEW:
      Push('A');
      break;
    case NEWARRAY:
    case ANEWARRAY:
      Ok = Need({'I'});
      Push('A');
      break;
    case MULTIANEWARRAY:
      for (unsigned D = 0; D < I[3] && Ok; ++D)
        Ok = Need({'I'});
      Push('A');
      break;
    case ARRAYLENGTH:
      Ok = Need({'A'});
      Push('I');
      break;
    case ATHROW:
      Ok = Need({'A'});
      FallsThrough = false;
      break;
    case CHECKCAST:
      Ok = Need({'A'});
      Push('A');
      break;
    case INSTANCEOF:
      Ok = Need({'A'});
      Push('I');
      break;
    case MONITORENTER:
    case MONITOREXIT:
      Ok = Need({'A'});
      break;
    case WIDE: {
      uint8_t W = I[1];
      unsigned N = u2(I + 2);
      Next = Pc + (W == IINC ? 6 : 4);
      if (W == IINC) {
        Ok = Fr.Locals[N] == 'I';
        if (!Ok)
          Problem = "local " + std::to_string(N) + " does not hold an int";
      } else if (W == ILOAD || W == LLOAD || W == ALOAD) {
        Ok = GetLocal(N, W == ILOAD ? 'I' : W == LLOAD ? 'J' : 'A');
      } else {
        char K = W == ISTORE ? 'I' : W == LSTORE ? 'J' : 'A';
        Ok = Need({K});
        if (Ok)
          SetLocal(N, K);
      }
      break;
    }
    default:
      if (Op >= ICONST_M1 && Op <= ICONST_5) {
        Push('I');
      } else if (Op >= IFEQ && Op <= IFLE) {
        Ok = Need({'I'});
        Targets.push_back(Pc + s2(I + 1));
      } else if (Op >= IF_ICMPEQ && Op <= IF_ICMPLE) {
        Ok = Need({'I', 'I'});
        Targets.push_back(Pc + s2(I + 1));
      } else if (Op >= ILOAD_0 && Op < ILOAD_0 + 4) {
        Ok = GetLocal(Op - ILOAD_0, 'I');
      } else if (Op >= LLOAD_0 && Op < LLOAD_0 + 4) {
        Ok = GetLocal(Op - LLOAD_0, 'J');
      } else if (Op >= ALOAD_0 && Op < ALOAD_0 + 4) {
        Ok = GetLocal(Op - ALOAD_0, 'A');
      } else if (Op >= ISTORE_0 && Op < ISTORE_0 + 4) {
        Ok = Need({'I'});
        if (Ok)
          SetLocal(Op - ISTORE_0, 'I');
      } else if (Op >= LSTORE_0 && Op < LSTORE_0 + 4) {
        Ok = Need({'J'});
        if (Ok)
          SetLocal(Op - LSTORE_0, 'J');
      } else if (Op >= ASTORE_0 && Op < ASTORE_0 + 4) {
        Ok = Need({'A'});
        if (Ok)
          SetLocal(Op - ASTORE_0, 'A');
      } else {
        return Fail("no stack rule for this instruction");
      }
      break;
    }
    if (!Ok)
      return Fail(Problem.empty() ? "operand stack underflow" : Problem);
    if (Fr.Stack.size() > M.MaxStack)
      return Fail("the operand stack exceeds max_stack " +
                  std::to_string(M.MaxStack));
    // Any instruction may throw: its handlers see the locals from before
    // and after it, and a stack of just the exception.
    for (const ExceptionHandler &H : M.Handlers) {
      if (Pc < H.StartPc || Pc >= H.EndPc)
        continue;
      if (M.MaxStack < 1)
        return Fail("a handler needs a stack slot; max_stack is 0");
      for (const Frame *Src : {&Before, static_cast<const Frame *>(&Fr)}) {
        Frame Caught;
        Caught.Locals = Src->Locals;
        Caught.Stack.assign(1, 'A');
        if (!merge(H.HandlerPc, Caught))
          return Fail(Problem);
      }
    }
    for (size_t Target : Targets)
      if (!merge(Target, Fr))
        return Fail(Problem);
    if (FallsThrough && !merge(Next, Fr))
      return Fail(Problem);
  }
  return true;
}

} // namespace

bool verifyClass(Class *C, std::string &Error) {
  const ClassFile &F = *C->File;
  for (auto &MP : C->Methods) {
    Method *M = MP.get();
    if (M->Code.empty()) {
      M->Entry.store(abstractEntry);
      continue;
    }
    const std::vector<uint8_t> &Code = M->Code;
    const size_t Len = Code.size();
    std::vector<uint8_t> Start(Len + 1, 0);
    std::vector<std::pair<size_t, int64_t>> Targets; // (at, target)
    auto Fail = [&](size_t Pc, const std::string &Why) {
      Error = "cannot run " + M->qualifiedName() + ": bytecode " +
              std::to_string(Pc) + " (" +
              (Pc < Len ? opcodeName(Code[Pc]) : "end") + "): " + Why;
      return false;
    };
    if (M->MaxLocals < M->ArgSlots)
      return Fail(0, "max_locals " + std::to_string(M->MaxLocals) +
                         " is less than the arguments' " +
                         std::to_string(M->ArgSlots) + " slots");
    auto CpOf = [&](size_t Pc, unsigned Index,
                    std::initializer_list<CpTag> Tags) -> bool {
      if (Index == 0 || Index >= F.Cp.size())
        return Fail(Pc, "bad constant-pool index " + std::to_string(Index));
      for (CpTag Tg : Tags)
        if (F.Cp[Index].Tag == Tg)
          return true;
      if (F.Cp[Index].Tag == CpFloat || F.Cp[Index].Tag == CpDouble)
        return Fail(Pc, "float and double constants are not in "
                        "jitlock-java's subset");
      return Fail(Pc, "constant " + std::to_string(Index) +
                          " has the wrong kind (tag " +
                          std::to_string(F.Cp[Index].Tag) + ")");
    };
    auto Local = [&](size_t Pc, unsigned Index, bool Wide) {
      if (Index + (Wide ? 1 : 0) >= M->MaxLocals)
        return Fail(Pc, "local " + std::to_string(Index) +
                            " is beyond max_locals " +
                            std::to_string(M->MaxLocals));
      return true;
    };
    /// A member of a built-in class must exist now: the built-in library
    /// is fixed, and a program that uses more of it is outside the subset.
    auto Member = [&](size_t Pc, unsigned Index, bool IsField) {
      const CpEntry &Ref = F.Cp[Index];
      const std::string &Owner = *F.className(Ref.A);
      const CpEntry &NT = F.Cp[Ref.B];
      const std::string &Name = *F.utf8(NT.A), &Desc = *F.utf8(NT.B);
      if (IsField) {
        if (Desc.find_first_of("FD") == Desc.find_first_not_of('['))
          return Fail(Pc, "field " + Name + " has type " + Desc +
                              ": float and double are not in "
                              "jitlock-java's subset");
      } else {
        Method Probe;
        Probe.Descriptor = Desc;
        Probe.Flags = AccStatic;
        std::string Why;
        if (!parseMethodDescriptor(Probe, Why))
          return Fail(Pc, Why);
      }
      Class *K = Owner[0] == '[' ? ObjectClass : findLoadedClass(Owner);
      if (!K)
        return Fail(Pc, "class " + Owner + " is not loaded");
      if (K->File && Owner[0] != '[')
        return true; // user classes: resolved when first run
      bool Found = IsField ? resolveField(K, Name) != nullptr
                           : resolveMethod(K, Name, Desc) != nullptr;
      if (!Found && !(Owner[0] == '[' && Name == "clone"))
        return Fail(Pc, std::string(IsField ? "field " : "method ") +
                            memberText(C, Index) +
                            " is not in jitlock-java's built-in library");
      return true;
    };

    size_t Pc = 0;
    while (Pc < Len) {
      Start[Pc] = 1;
      uint8_t Op = Code[Pc];
      if (!isSupported(Op))
        return Fail(Pc, Op > GOTO_W + 1 ? "unknown instruction"
                                        : "instruction not in jitlock-java's "
                                          "subset");
      size_t N = fixedLength(Op);
      if (Op == WIDE) {
        if (Pc + 1 >= Len)
          return Fail(Pc, "truncated instruction");
        uint8_t W = Code[Pc + 1];
        N = W == IINC ? 6 : 4;
        if (W != IINC && W != ILOAD && W != LLOAD && W != ALOAD &&
            W != ISTORE && W != LSTORE && W != ASTORE)
          return Fail(Pc, std::string("wide ") + opcodeName(W) +
                              " is not in jitlock-java's subset");
        if (Pc + N > Len)
          return Fail(Pc, "truncated instruction");
        if (!Local(Pc, u2(&Code[Pc + 2]), W == LLOAD || W == LSTORE))
          return false;
      } else if (Op == TABLESWITCH || Op == LOOKUPSWITCH) {
        size_t P = (Pc + 4) & ~size_t(3);
        if (P + 12 > Len)
          return Fail(Pc, "truncated instruction");
        Targets.push_back({Pc, int64_t(Pc) + s4(&Code[P])});
        if (Op == TABLESWITCH) {
          int32_t Low = s4(&Code[P + 4]), High = s4(&Code[P + 8]);
          if (Low > High)
            return Fail(Pc, "low is above high");
          uint64_t Count = uint64_t(int64_t(High) - Low + 1);
          if (P + 12 + Count * 4 > Len)
            return Fail(Pc, "truncated instruction");
          for (uint64_t K = 0; K < Count; ++K)
            Targets.push_back({Pc, int64_t(Pc) + s4(&Code[P + 12 + K * 4])});
          N = P + 12 + Count * 4 - Pc;
        } else {
          int32_t Pairs = s4(&Code[P + 4]);
          if (Pairs < 0 || P + 8 + uint64_t(Pairs) * 8 > Len)
            return Fail(Pc, "truncated instruction");
          for (int32_t K = 0; K < Pairs; ++K)
            Targets.push_back({Pc, int64_t(Pc) + s4(&Code[P + 12 + K * 8])});
          N = P + 8 + size_t(Pairs) * 8 - Pc;
        }
      }
      if (Pc + N > Len)
        return Fail(Pc, "truncated instruction");
      const uint8_t *I = &Code[Pc];
      switch (Op) {
      case LDC:
        if (!CpOf(Pc, I[1], {CpInteger, CpString, CpClass}))
          return false;
        break;
      case LDC_W:
        if (!CpOf(Pc, u2(I + 1), {CpInteger, CpString, CpClass}))
          return false;
        break;
      case LDC2_W:
        if (!CpOf(Pc, u2(I + 1), {CpLong}))
          return false;
        break;
      case ILOAD:
      case ALOAD:
      case ISTORE:
      case ASTORE:
        if (!Local(Pc, I[1], false))
          return false;
        break;
      case LLOAD:
      case LSTORE:
        if (!Local(Pc, I[1], true))
          return false;
        break;
      case IINC:
        if (!Local(Pc, I[1], false))
          return false;
        break;
      case GETSTATIC:
      case PUTSTATIC:
      case GETFIELD:
      case PUTFIELD:
        if (!CpOf(Pc, u2(I + 1), {CpFieldref}) || !Member(Pc, u2(I + 1), true))
          return false;
        break;
      case INVOKEVIRTUAL:
        if (!CpOf(Pc, u2(I + 1), {CpMethodref}) ||
            !Member(Pc, u2(I + 1), false))
          return false;
        break;
      case INVOKESPECIAL:
      case INVOKESTATIC:
        if (!CpOf(Pc, u2(I + 1), {CpMethodref, CpInterfaceMethodref}) ||
            !Member(Pc, u2(I + 1), false))
          return false;
        break;
      case INVOKEINTERFACE:
        if (!CpOf(Pc, u2(I + 1), {CpInterfaceMethodref}) ||
            !Member(Pc, u2(I + 1), false))
          return false;
        if (I[3] == 0 || I[4] != 0)
          return Fail(Pc, "bad count bytes");
        break;
      case INVOKEDYNAMIC: {
        if (!CpOf(Pc, u2(I + 1), {CpInvokeDynamic}))
          return false;
        if (I[3] != 0 || I[4] != 0)
          return Fail(Pc, "bad trailing bytes");
        std::string Why;
        if (!checkCallSite(C, u2(I + 1), Why))
          return Fail(Pc, Why);
        break;
      }
      case NEW:
      case ANEWARRAY:
      case CHECKCAST:
      case INSTANCEOF:
        if (!CpOf(Pc, u2(I + 1), {CpClass}))
          return false;
        break;
      case MULTIANEWARRAY: {
        if (!CpOf(Pc, u2(I + 1), {CpClass}))
          return false;
        const std::string &Name = *F.className(u2(I + 1));
        if (I[3] == 0 || Name.find_first_not_of('[') < I[3])
          return Fail(Pc, "bad dimensions");
        if (Name.find_first_of("FD") == Name.find_first_not_of('['))
          return Fail(Pc, "float and double arrays are not in "
                          "jitlock-java's subset");
        break;
      }
      case NEWARRAY:
        if (I[1] < 4 || I[1] > 11 || I[1] == 6 || I[1] == 7)
          return Fail(Pc, I[1] == 6 || I[1] == 7
                              ? "float and double arrays are not in "
                                "jitlock-java's subset"
                              : "bad array type " + std::to_string(I[1]));
        break;
      case GOTO:
      case IFNULL:
      case IFNONNULL:
        Targets.push_back({Pc, int64_t(Pc) + s2(I + 1)});
        break;
      case GOTO_W:
        Targets.push_back({Pc, int64_t(Pc) + s4(I + 1)});
        break;
      default:
        if (Op >= IFEQ && Op <= IF_ACMPNE)
          Targets.push_back({Pc, int64_t(Pc) + s2(I + 1)});
        if (Op >= ILOAD_0 && Op < ILOAD_0 + 4 &&
            !Local(Pc, Op - ILOAD_0, false))
          return false;
        if (Op >= LLOAD_0 && Op < LLOAD_0 + 4 && !Local(Pc, Op - LLOAD_0, true))
          return false;
        if (Op >= ALOAD_0 && Op < ALOAD_0 + 4 &&
            !Local(Pc, Op - ALOAD_0, false))
          return false;
        if (Op >= ISTORE_0 && Op < ISTORE_0 + 4 &&
            !Local(Pc, Op - ISTORE_0, false))
          return false;
        if (Op >= LSTORE_0 && Op < LSTORE_0 + 4 &&
            !Local(Pc, Op - LSTORE_0, true))
          return false;
        if (Op >= ASTORE_0 && Op < ASTORE_0 + 4 &&
            !Local(Pc, Op - ASTORE_0, false))
          return false;
        break;
      }
      Pc += N;
    }
    for (auto [At, Target] : Targets)
      if (Target < 0 || size_t(Target) >= Len || !Start[Target])
        return Fail(At, "branch target " + std::to_string(Target) +
                            " is not an instruction");
    // The last instruction must not fall off the end of the code.
    size_t Last = 0;
    for (size_t K = 0; K < Len; ++K)
      if (Start[K])
        Last = K;
    uint8_t LastOp = Code[Last];
    if (!(LastOp == GOTO || LastOp == GOTO_W || LastOp == ATHROW ||
          LastOp == TABLESWITCH || LastOp == LOOKUPSWITCH ||
          (LastOp >= IRETURN && LastOp <= RETURN)))
      return Fail(Last, "execution can fall off the end of the code");
    for (const ExceptionHandler &H : M->Handlers) {
      if (H.StartPc >= H.EndPc || H.EndPc > Len || !Start[H.StartPc] ||
          (H.EndPc < Len && !Start[H.EndPc]) || H.HandlerPc >= Len ||
          !Start[H.HandlerPc])
        return Fail(H.HandlerPc < Len ? H.HandlerPc : 0,
                    "bad exception-table entry");
      if (H.CatchType && !F.className(H.CatchType))
        return Fail(H.HandlerPc,
                    "bad catch type " + std::to_string(H.CatchType));
    }
    KindChecker Kinds(*M, F);
    size_t BadPc = 0;
    std::string Why;
    if (!Kinds.run(BadPc, Why))
      return Fail(BadPc, Why);
    M->Entry.store(interpret);
  }
  return true;
}

//===-- The interpreter ---------------------------------------------------===//

/// Runs M's frame from Pc, with Sp slots on its stack (above the locals),
/// holding SyncObj when M is synchronized, to its return.
Slot execute(VMThread *T, Method *M, Slot *Locals, int Sp, size_t Pc,
             Object *SyncObj);
int64_t findHandler(VMThread *T, Method *M, size_t Pc);

Slot interpret(VMThread *T, Method *M, Slot *Args) {
  // The stack check of every method entry (docs/stack-banging.md).
  uintptr_t Need = uintptr_t(__builtin_frame_address(0)) - frameReserve(M);
  if (Need <= *T->Watermark) {
    if (Need <= T->SafeLimit) {
      throwNew(T, "java/lang/StackOverflowError");
      return 0;
    }
    jitlock_rt_stack_bang(T->Rt, Need);
  }
  uint32_t Calls = M->Invocations.load(std::memory_order_relaxed) + 1;
  M->Invocations.store(Calls, std::memory_order_relaxed);
  if (Calls == Tier1InvocationThreshold) {
    compileHotMethod(T, M);
    MethodEntry Now = M->Entry.load(std::memory_order_acquire);
    if (Now != interpret)
      return Now(T, M, Args);
  }

  Slot *Locals = static_cast<Slot *>(
      alloca((size_t(M->MaxLocals) + M->MaxStack + 1) * sizeof(Slot)));
  if (M->ArgSlots) // Args may be null for a method without arguments
    std::memcpy(Locals, Args, M->ArgSlots * sizeof(Slot));

  Object *SyncObj = nullptr;
  if (M->isSynchronized()) {
    SyncObj = M->isStatic() ? M->Owner->Mirror
                            : reinterpret_cast<Object *>(Locals[0]);
    jitlock_rt_monitor_enter(T->Rt, SyncObj);
  }
  return execute(T, M, Locals, 0, 0, SyncObj);
}

/// The offset of the handler of `M` that catches T->Pending thrown at `Pc`,
/// or -1 (JVMS 2.10: the first entry that covers Pc and matches). A catch
/// type that does not resolve replaces the exception with its error.
int64_t findHandler(VMThread *T, Method *M, size_t Pc) {
  for (const ExceptionHandler &H : M->Handlers) {
    if (Pc < H.StartPc || Pc >= H.EndPc)
      continue;
    if (H.CatchType) {
      Class *K = resolveClassRef(T, M->Owner, H.CatchType);
      if (!K)
        continue; // NoClassDefFoundError is pending instead
      if (!isInstanceOf(T->Pending, K))
        continue;
    }
    return H.HandlerPc;
  }
  return -1;
}

Slot resumeInterpreted(VMThread *T, const ResumeState &R) {
  Method *M = R.M;
  Slot *Locals = static_cast<Slot *>(
      alloca((size_t(M->MaxLocals) + M->MaxStack + 1) * sizeof(Slot)));
  Slot *Stack = Locals + M->MaxLocals;
  std::memcpy(Locals, R.Locals, R.NumLocals * sizeof(Slot));
  std::memcpy(Stack, R.Stack, R.NumStack * sizeof(Slot));
  int Sp = int(R.NumStack);
  size_t Pc = R.Bci;
  if (R.Callee) {
    // An outer frame: its invoke at Pc completes with the callee's result
    // or exception.
    if (T->Pending) {
      int64_t H = findHandler(T, M, Pc);
      if (H < 0) {
        if (R.SyncObj)
          jitlock_rt_monitor_exit(T->Rt, R.SyncObj);
        return 0;
      }
      Object *Ex = T->Pending;
      T->Pending = nullptr;
      Stack[0] = Slot(uintptr_t(Ex));
      return execute(T, M, Locals, 1, size_t(H), R.SyncObj);
    }
    if (R.Callee->ReturnKind == 'J') {
      Stack[Sp] = R.Result;
      Sp += 2;
    } else if (R.Callee->ReturnKind != 'V') {
      Stack[Sp++] = R.Result;
    }
    Pc += M->Code[Pc] == INVOKEINTERFACE ? 5 : 3;
  }
  return execute(T, M, Locals, Sp, Pc, R.SyncObj);
}

Slot execute(VMThread *T, Method *M, Slot *Locals, int Sp, size_t Pc,
             Object *SyncObj) {
  Class *C = M->Owner;
  Slot *Stack = Locals + M->MaxLocals;
  const uint8_t *Code = M->Code.data();

#define PUSH(V) (Stack[Sp++] = Slot(V))
#define PUSHI(V) (Stack[Sp++] = Slot(uint32_t(V)))
#define PUSHL(V) (Stack[Sp] = Slot(V), Sp += 2)
#define PUSHA(V) (Stack[Sp++] = Slot(uintptr_t(V)))
#define POPI() (int32_t(Stack[--Sp]))
#define POPL() (Sp -= 2, int64_t(Stack[Sp]))
#define POPA() (reinterpret_cast<Object *>(Stack[--Sp]))
#define THROW(Cls, Msg)                                                        \
  do {                                                                         \
    throwNew(T, Cls, Msg);                                                     \
    goto Exception;                                                            \
  } while (0)
#define CHECK()                                                                \
  do {                                                                         \
    if (T->Pending)                                                            \
      goto Exception;                                                          \
  } while (0)

  for (;;) {
    const uint8_t *I = Code + Pc;
    uint8_t Op = *I;
    size_t Next = Pc + fixedLength(Op);
    switch (Op) {
    case NOP:
      break;
    case ACONST_NULL:
      PUSH(0);
      break;
    case ICONST_M1 ... ICONST_5:
      PUSHI(int32_t(Op) - ICONST_0);
      break;
    case LCONST_0:
    case LCONST_1:
      PUSHL(int64_t(Op - LCONST_0));
      break;
    case BIPUSH:
      PUSHI(int8_t(I[1]));
      break;
    case SIPUSH:
      PUSHI(s2(I + 1));
      break;
    case LDC:
    case LDC_W: {
      unsigned Index = Op == LDC ? I[1] : u2(I + 1);
      const CpEntry &E = cp(C, Index);
      if (E.Tag == CpInteger) {
        PUSHI(E.Int);
      } else if (E.Tag == CpString) {
        Object *S = resolveString(T, C, Index);
        CHECK();
        PUSHA(S);
      } else {
        Class *K = resolveClassRef(T, C, Index);
        CHECK();
        PUSHA(K->Mirror);
      }
      break;
    }
    case LDC2_W:
      PUSHL(cp(C, u2(I + 1)).Long);
      break;
    case ILOAD:
    case ALOAD:
      PUSH(Locals[I[1]]);
      break;
    case LLOAD:
      PUSHL(Locals[I[1]]);
      break;
    case 26:
    case 27:
    case 28:
    case 29:
      PUSH(Locals[Op - ILOAD_0]);
      break;
    case 30:
    case 31:
    case 32:
    case 33:
      PUSHL(Locals[Op - LLOAD_0]);
      break;
    case 42:
    case 43:
    case 44:
    case 45:
      PUSH(Locals[Op - ALOAD_0]);
      break;
    case IALOAD:
    case LALOAD:
    case AALOAD:
    case BALOAD:
    case CALOAD:
    case SALOAD: {
      int32_t Index = POPI();
      auto *A = static_cast<Array *>(POPA());
      if (!A)
        THROW("java/lang/NullPointerException",
              "Cannot load from array because it is null");
      if (uint32_t(Index) >= uint32_t(A->Length)) {
        throwIndexOutOfBounds(T, Index, A->Length);
        goto Exception;
      }
      char *D = A->data();
      switch (Op) {
      case IALOAD:
        PUSHI(__atomic_load_n(reinterpret_cast<int32_t *>(D) + Index,
                              __ATOMIC_RELAXED));
        break;
      case LALOAD:
        PUSHL(__atomic_load_n(reinterpret_cast<int64_t *>(D) + Index,
                              __ATOMIC_RELAXED));
        break;
      case AALOAD:
        PUSH(__atomic_load_n(reinterpret_cast<Slot *>(D) + Index,
                             __ATOMIC_RELAXED));
        break;
      case BALOAD:
        PUSHI(int32_t(reinterpret_cast<int8_t *>(D)[Index]));
        break;
      case CALOAD:
        PUSHI(int32_t(reinterpret_cast<uint16_t *>(D)[Index]));
        break;
      default:
        PUSHI(int32_t(reinterpret_cast<int16_t *>(D)[Index]));
        break;
      }
      break;
    }
    case ISTORE:
    case ASTORE:
      Locals[I[1]] = Stack[--Sp];
      break;
    case LSTORE:
      Locals[I[1]] = Slot(POPL());
      break;
    case 59:
    case 60:
    case 61:
    case 62:
      Locals[Op - ISTORE_0] = Stack[--Sp];
      break;
    case 63:
    case 64:
    case 65:
    case 66:
      Locals[Op - LSTORE_0] = Slot(POPL());
      break;
    case 75:
    case 76:
    case 77:
    case 78:
      Locals[Op - ASTORE_0] = Stack[--Sp];
      break;
    case IASTORE:
    case LASTORE:
    case AASTORE:
    case BASTORE:
    case CASTORE:
    case SASTORE: {
      Slot V = Op == LASTORE ? Slot(POPL()) : Stack[--Sp];
      int32_t Index = POPI();
      auto *A = static_cast<Array *>(POPA());
      if (!A)
        THROW("java/lang/NullPointerException",
              "Cannot store to array because it is null");
      if (uint32_t(Index) >= uint32_t(A->Length)) {
        throwIndexOutOfBounds(T, Index, A->Length);
        goto Exception;
      }
      char *D = A->data();
      switch (Op) {
      case IASTORE:
        __atomic_store_n(reinterpret_cast<int32_t *>(D) + Index, int32_t(V),
                         __ATOMIC_RELAXED);
        break;
      case LASTORE:
        __atomic_store_n(reinterpret_cast<int64_t *>(D) + Index, int64_t(V),
                         __ATOMIC_RELAXED);
        break;
      case AASTORE: {
        auto *O = reinterpret_cast<Object *>(V);
        if (O && !isAssignable(O->Cls, A->Cls->Elem))
          THROW("java/lang/ArrayStoreException", O->Cls->javaName());
        __atomic_store_n(reinterpret_cast<Slot *>(D) + Index, V,
                         __ATOMIC_RELAXED);
        break;
      }
      case BASTORE:
        reinterpret_cast<int8_t *>(D)[Index] =
            int8_t(A->Cls->ElemKind == 'Z' ? V & 1 : V);
        break;
      default:
        reinterpret_cast<uint16_t *>(D)[Index] = uint16_t(V);
        break;
      }
      break;
    }
    case POP:
      --Sp;
      break;
    case POP2:
      Sp -= 2;
      break;
    case DUP:
      Stack[Sp] = Stack[Sp - 1];
      ++Sp;
      break;
    case DUP_X1: {
      Slot V1 = Stack[Sp - 1], V2 = Stack[Sp - 2];
      Stack[Sp - 2] = V1;
      Stack[Sp - 1] = V2;
      Stack[Sp++] = V1;
      break;
    }
    case DUP_X2: {
      Slot V1 = Stack[Sp - 1], V2 = Stack[Sp - 2], V3 = Stack[Sp - 3];
      Stack[Sp - 3] = V1;
      Stack[Sp - 2] = V3;
      Stack[Sp - 1] = V2;
      Stack[Sp++] = V1;
      break;
    }
    case DUP2:
      Stack[Sp] = Stack[Sp - 2];
      Stack[Sp + 1] = Stack[Sp - 1];
      Sp += 2;
      break;
    case DUP2_X1: {
      Slot V1 = Stack[Sp - 1], V2 = Stack[Sp - 2], V3 = Stack[Sp - 3];
      Stack[Sp - 3] = V2;
      Stack[Sp - 2] = V1;
      Stack[Sp - 1] = V3;
      Stack[Sp] = V2;
      Stack[Sp + 1] = V1;
      Sp += 2;
      break;
    }
    case DUP2_X2: {
      Slot V1 = Stack[Sp - 1], V2 = Stack[Sp - 2], V3 = Stack[Sp - 3],
           V4 = Stack[Sp - 4];
      Stack[Sp - 4] = V2;
      Stack[Sp - 3] = V1;
      Stack[Sp - 2] = V4;
      Stack[Sp - 1] = V3;
      Stack[Sp] = V2;
      Stack[Sp + 1] = V1;
      Sp += 2;
      break;
    }
    case SWAP:
      std::swap(Stack[Sp - 1], Stack[Sp - 2]);
      break;
    case IADD: {
      uint32_t B = uint32_t(POPI()), A = uint32_t(POPI());
      PUSHI(A + B);
      break;
    }
    case LADD: {
      uint64_t B = uint64_t(POPL()), A = uint64_t(POPL());
      PUSHL(A + B);
      break;
    }
    case ISUB: {
      uint32_t B = uint32_t(POPI()), A = uint32_t(POPI());
      PUSHI(A - B);
      break;
    }
    case LSUB: {
      uint64_t B = uint64_t(POPL()), A = uint64_t(POPL());
      PUSHL(A - B);
      break;
    }
    case IMUL: {
      uint32_t B = uint32_t(POPI()), A = uint32_t(POPI());
      PUSHI(A * B);
      break;
    }
    case LMUL: {
      uint64_t B = uint64_t(POPL()), A = uint64_t(POPL());
      PUSHL(A * B);
      break;
    }
    case IDIV:
    case IREM: {
      int32_t B = POPI(), A = POPI();
      if (B == 0)
        THROW("java/lang/ArithmeticException", "/ by zero");
      if (B == -1) // INT_MIN / -1 overflows in C++; Java wraps
        PUSHI(Op == IDIV ? int32_t(0u - uint32_t(A)) : 0);
      else
        PUSHI(Op == IDIV ? A / B : A % B);
      break;
    }
    case LDIV:
    case LREM: {
      int64_t B = POPL(), A = POPL();
      if (B == 0)
        THROW("java/lang/ArithmeticException", "/ by zero");
      if (B == -1)
        PUSHL(Op == LDIV ? int64_t(0ull - uint64_t(A)) : 0);
      else
        PUSHL(Op == LDIV ? A / B : A % B);
      break;
    }
    case INEG:
      PUSHI(0u - uint32_t(POPI()));
      break;
    case LNEG:
      PUSHL(0ull - uint64_t(POPL()));
      break;
    case ISHL: {
      int32_t S = POPI() & 31;
      PUSHI(uint32_t(POPI()) << S);
      break;
    }
    case LSHL: {
      int32_t S = POPI() & 63;
      PUSHL(uint64_t(POPL()) << S);
      break;
    }
    case ISHR: {
      int32_t S = POPI() & 31;
      PUSHI(POPI() >> S);
      break;
    }
    case LSHR: {
      int32_t S = POPI() & 63;
      PUSHL(POPL() >> S);
      break;
    }
    case IUSHR: {
      int32_t S = POPI() & 31;
      PUSHI(uint32_t(POPI()) >> S);
      break;
    }
    case LUSHR: {
      int32_t S = POPI() & 63;
      PUSHL(uint64_t(POPL()) >> S);
      break;
    }
    case IAND: {
      int32_t B = POPI();
      PUSHI(POPI() & B);
      break;
    }
    case LAND: {
      int64_t B = POPL();
      PUSHL(POPL() & B);
      break;
    }
    case IOR: {
      int32_t B = POPI();
      PUSHI(POPI() | B);
      break;
    }
    case LOR: {
      int64_t B = POPL();
      PUSHL(POPL() | B);
      break;
    }
    case IXOR: {
      int32_t B = POPI();
      PUSHI(POPI() ^ B);
      break;
    }
    case LXOR: {
      int64_t B = POPL();
      PUSHL(POPL() ^ B);
      break;
    }
    case IINC:
      Locals[I[1]] =
          Slot(uint32_t(int32_t(Locals[I[1]])) + uint32_t(int8_t(I[2])));
      break;
    case I2L:
      PUSHL(int64_t(POPI()));
      break;
    case L2I:
      PUSHI(int32_t(POPL()));
      break;
    case I2B:
      PUSHI(int32_t(int8_t(POPI())));
      break;
    case I2C:
      PUSHI(int32_t(uint16_t(POPI())));
      break;
    case I2S:
      PUSHI(int32_t(int16_t(POPI())));
      break;
    case LCMP: {
      int64_t B = POPL(), A = POPL();
      PUSHI(A < B ? -1 : A > B ? 1 : 0);
      break;
    }
    case IFEQ:
    case IFNE:
    case IFLT:
    case IFGE:
    case IFGT:
    case IFLE:
    case IF_ICMPEQ:
    case IF_ICMPNE:
    case IF_ICMPLT:
    case IF_ICMPGE:
    case IF_ICMPGT:
    case IF_ICMPLE: {
      int32_t B = Op >= IF_ICMPEQ ? POPI() : 0;
      int32_t A = POPI();
      bool Taken;
      switch (Op >= IF_ICMPEQ ? Op - IF_ICMPEQ : Op - IFEQ) {
      case 0:
        Taken = A == B;
        break;
      case 1:
        Taken = A != B;
        break;
      case 2:
        Taken = A < B;
        break;
      case 3:
        Taken = A >= B;
        break;
      case 4:
        Taken = A > B;
        break;
      default:
        Taken = A <= B;
        break;
      }
      profileBranch(M, Pc, Taken);
      if (Taken)
        Next = Pc + s2(I + 1);
      break;
    }
    case IF_ACMPEQ:
    case IF_ACMPNE: {
      Slot B = Stack[--Sp], A = Stack[--Sp];
      bool Taken = (A == B) == (Op == IF_ACMPEQ);
      profileBranch(M, Pc, Taken);
      if (Taken)
        Next = Pc + s2(I + 1);
      break;
    }
    case IFNULL:
    case IFNONNULL: {
      Slot A = Stack[--Sp];
      bool Taken = (A == 0) == (Op == IFNULL);
      profileBranch(M, Pc, Taken);
      if (Taken)
        Next = Pc + s2(I + 1);
      break;
    }
    case GOTO:
      Next = Pc + s2(I + 1);
      break;
    case GOTO_W:
      Next = Pc + s4(I + 1);
      break;
    case TABLESWITCH: {
      const uint8_t *P = Code + ((Pc + 4) & ~size_t(3));
      int32_t Key = POPI(), Low = s4(P + 4), High = s4(P + 8);
      if (Key < Low || Key > High)
        Next = Pc + s4(P);
      else
        Next = Pc + s4(P + 12 + 4 * (int64_t(Key) - Low));
      break;
    }
    case LOOKUPSWITCH: {
      const uint8_t *P = Code + ((Pc + 4) & ~size_t(3));
      int32_t Key = POPI(), Pairs = s4(P + 4);
      Next = Pc + s4(P);
      for (int32_t K = 0; K < Pairs; ++K)
        if (s4(P + 8 + 8 * K) == Key) {
          Next = Pc + s4(P + 12 + 8 * K);
          break;
        }
      break;
    }
    case IRETURN:
    case LRETURN:
    case ARETURN:
    case RETURN: {
      Slot Result = Op == RETURN    ? 0
                    : Op == LRETURN ? Stack[Sp - 2]
                                    : Stack[Sp - 1];
      if (SyncObj &&
          jitlock_rt_monitor_exit(T->Rt, SyncObj) == JITLOCK_ENOT_OWNER) {
        SyncObj = nullptr;
        THROW("java/lang/IllegalMonitorStateException",
              "current thread is not owner");
      }
      pollSafepoint(T);
      return Result;
    }
    case GETSTATIC:
    case PUTSTATIC: {
      Field *F = resolveFieldRef(T, C, u2(I + 1), true);
      CHECK();
      if (!initializeClass(T, F->Owner))
        goto Exception;
      Slot *P = &F->Owner->Statics[F->Offset];
      char K = kindOf(F->Descriptor[0]);
      if (Op == GETSTATIC) {
        Slot V = loadField(P, F);
        if (K == 'J')
          PUSHL(V);
        else
          PUSH(V);
      } else {
        storeField(P, F, K == 'J' ? Slot(POPL()) : Stack[--Sp]);
      }
      break;
    }
    case GETFIELD: {
      Field *F = resolveFieldRef(T, C, u2(I + 1), false);
      CHECK();
      Object *O = POPA();
      if (!O)
        THROW("java/lang/NullPointerException",
              "Cannot read field \"" + F->Name + "\" because value is null");
      Slot V = loadField(fieldAddr(O, F), F);
      if (F->Descriptor[0] == 'J')
        PUSHL(V);
      else
        PUSH(V);
      break;
    }
    case PUTFIELD: {
      Field *F = resolveFieldRef(T, C, u2(I + 1), false);
      CHECK();
      Slot V = F->Descriptor[0] == 'J' ? Slot(POPL()) : Stack[--Sp];
      Object *O = POPA();
      if (!O)
        THROW("java/lang/NullPointerException",
              "Cannot assign field \"" + F->Name + "\" because value is null");
      storeField(fieldAddr(O, F), F, V);
      break;
    }
    case INVOKEVIRTUAL:
    case INVOKESPECIAL:
    case INVOKESTATIC:
    case INVOKEINTERFACE: {
      Method *RM = resolveMethodRef(T, C, u2(I + 1));
      CHECK();
      Method *Target = RM;
      unsigned N;
      if (Op == INVOKESTATIC) {
        if (!RM->isStatic())
          THROW("java/lang/IncompatibleClassChangeError",
                "Expected static method " + RM->qualifiedName());
        N = RM->ArgSlots;
        if (!initializeClass(T, RM->Owner))
          goto Exception;
      } else {
        if (RM->isStatic())
          THROW("java/lang/IncompatibleClassChangeError",
                "Expected non-static method " + RM->qualifiedName());
        N = RM->ArgSlots;
        auto *Recv = reinterpret_cast<Object *>(Stack[Sp - N]);
        if (!Recv)
          THROW("java/lang/NullPointerException",
                "Cannot invoke \"" + RM->qualifiedName() +
                    "\" because value is null");
        // javac's code passes a receiver of the method's class; checked
        // anyway where a wrong one could index past a vtable.
        if (RM->VtableIndex >= 0 && !RM->Owner->isInterface() &&
            size_t(RM->VtableIndex) >= Recv->Cls->Vtable.size())
          THROW("java/lang/IncompatibleClassChangeError",
                Recv->Cls->javaName() + " has no method " +
                    RM->qualifiedName());
        if (Op != INVOKESPECIAL) {
          profileReceiver(M, Pc, Recv->Cls);
          Target = selectVirtual(Recv, RM);
        }
      }
      Sp -= N;
      Slot R = callMethod(T, Target, Stack + Sp);
      CHECK();
      if (Target->ReturnKind == 'J')
        PUSHL(R);
      else if (Target->ReturnKind != 'V')
        PUSH(R);
      break;
    }
    case INVOKEDYNAMIC: {
      Sp -= int(callSiteArgSlots(C, u2(I + 1)));
      Slot R = invokeDynamic(T, C, u2(I + 1), Stack + Sp);
      CHECK();
      PUSH(R);
      break;
    }
    case NEW: {
      Class *K = resolveClassRef(T, C, u2(I + 1));
      CHECK();
      if (K->isInterface() || (K->Flags & AccAbstract))
        THROW("java/lang/InstantiationError", K->javaName());
      if (!initializeClass(T, K))
        goto Exception;
      Object *O = allocObject(T, K);
      CHECK();
      PUSHA(O);
      break;
    }
    case NEWARRAY: {
      static const char *const Descs[] = {"Z", "C", "F", "D",
                                          "B", "S", "I", "J"};
      static Class *Classes[8];
      Class *&AC = Classes[I[1] - 4];
      Class *K = __atomic_load_n(&AC, __ATOMIC_ACQUIRE);
      if (!K) {
        K = arrayClassOf(Descs[I[1] - 4]);
        __atomic_store_n(&AC, K, __ATOMIC_RELEASE);
      }
      Array *A = allocArray(T, K, POPI());
      CHECK();
      PUSHA(A);
      break;
    }
    case ANEWARRAY: {
      Class *K = resolveClassRef(T, C, u2(I + 1));
      CHECK();
      Array *A = allocArray(T, arrayClassFor(K), POPI());
      CHECK();
      PUSHA(A);
      break;
    }
    case MULTIANEWARRAY: {
      Class *K = resolveClassRef(T, C, u2(I + 1));
      CHECK();
      unsigned Dims = I[3];
      int32_t Counts[256];
      for (unsigned D = 0; D < Dims; ++D)
        Counts[D] = int32_t(Stack[Sp - Dims + D]);
      Sp -= Dims;
      for (unsigned D = 0; D < Dims; ++D)
        if (Counts[D] < 0)
          THROW("java/lang/NegativeArraySizeException",
                std::to_string(Counts[D]));
      Object *A = multiNewArray(T, K, Counts, Dims);
      CHECK();
      PUSHA(A);
      break;
    }
    case ARRAYLENGTH: {
      auto *A = static_cast<Array *>(POPA());
      if (!A)
        THROW("java/lang/NullPointerException",
              "Cannot read the array length because value is null");
      PUSHI(A->Length);
      break;
    }
    case ATHROW: {
      Object *Ex = POPA();
      if (!Ex)
        THROW("java/lang/NullPointerException",
              "Cannot throw exception because value is null");
      T->Pending = Ex;
      goto Exception;
    }
    case CHECKCAST:
    case INSTANCEOF: {
      Class *K = resolveClassRef(T, C, u2(I + 1));
      CHECK();
      Object *O = reinterpret_cast<Object *>(Stack[Sp - 1]);
      if (Op == INSTANCEOF) {
        Stack[Sp - 1] = Slot(O && isInstanceOf(O, K) ? 1 : 0);
      } else if (O && !isInstanceOf(O, K)) {
        THROW("java/lang/ClassCastException", "class " + O->Cls->javaName() +
                                                  " cannot be cast to class " +
                                                  K->javaName());
      }
      break;
    }
    case MONITORENTER: {
      Object *O = POPA();
      if (!O)
        THROW("java/lang/NullPointerException",
              "Cannot enter synchronized block because value is null");
      int Rc = jitlock_rt_monitor_enter(T->Rt, O);
      if (Rc == JITLOCK_ENOMEM)
        THROW("java/lang/OutOfMemoryError", "no monitor left");
      break;
    }
    case MONITOREXIT: {
      Object *O = POPA();
      if (!O)
        THROW("java/lang/NullPointerException",
              "Cannot exit synchronized block because value is null");
      if (jitlock_rt_monitor_exit(T->Rt, O) != JITLOCK_OK)
        THROW("java/lang/IllegalMonitorStateException",
              "current thread is not owner");
      break;
    }
    case WIDE: {
      uint8_t W = I[1];
      unsigned Index = u2(I + 2);
      Next = Pc + 4;
      switch (W) {
      case ILOAD:
      case ALOAD:
        PUSH(Locals[Index]);
        break;
      case LLOAD:
        PUSHL(Locals[Index]);
        break;
      case ISTORE:
      case ASTORE:
        Locals[Index] = Stack[--Sp];
        break;
      case LSTORE:
        Locals[Index] = Slot(POPL());
        break;
      default: // IINC
        Locals[Index] =
            Slot(uint32_t(int32_t(Locals[Index])) + uint32_t(s2(I + 4)));
        Next = Pc + 6;
        break;
      }
      break;
    }
    default:
      // The verifier let nothing else through.
      THROW("java/lang/InternalError",
            std::string("unverified instruction ") + opcodeName(Op));
    }
    if (Next <= Pc && Op != WIDE) { // a backward branch
      pollSafepoint(T);
      uint32_t Loops = M->BackEdges.load(std::memory_order_relaxed) + 1;
      M->BackEdges.store(Loops, std::memory_order_relaxed);
      if (Loops == Tier1BackEdgeThreshold)
        compileHotMethod(T, M); // for its next call: no on-stack replacement
    }
    Pc = Next;
    continue;

  Exception: {
    int64_t Handler = findHandler(T, M, Pc);
    if (Handler >= 0) {
      Object *Ex = T->Pending;
      T->Pending = nullptr;
      Sp = 0;
      PUSHA(Ex);
      Pc = size_t(Handler);
      goto Continue;
    }
    if (SyncObj)
      jitlock_rt_monitor_exit(T->Rt, SyncObj);
    return 0;
  }
  Continue:;
  }
#undef PUSH
#undef PUSHI
#undef PUSHL
#undef PUSHA
#undef POPI
#undef POPL
#undef POPA
#undef THROW
#undef CHECK
}

} // namespace jitlock::java
