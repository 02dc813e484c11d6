//===- Builtins.cpp - The built-in class library --------------------------===//
//
// java.lang and the few other classes the subset uses, defined by the VM:
// each is a Class with fields (so that user classes can extend Thread or
// the throwables) and native methods, all with the Entry signature of VM.h.
// What is not here is refused when a program names it (verifyClass).
//
//===----------------------------------------------------------------------===//
#include "VM.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

namespace jitlock::java {

Class *ObjectClass, *StringClass, *ClassClass, *ThreadClass, *ThrowableClass;

namespace {

struct MethodDef {
  const char *Name, *Desc;
  MethodEntry Fn; // null: abstract
  uint16_t Flags = AccPublic;
};
struct FieldDef {
  const char *Name, *Desc;
  uint16_t Flags = AccPrivate;
};

/// A VMThread that only allocates (mirrors, interned strings made while
/// loading), always under the class lock or before any thread runs.
VMThread BootThread;
std::mutex BootLock;
std::vector<Class *> MirrorlessClasses;

Class *define(const char *Name, const char *Super,
              std::initializer_list<const char *> Ifaces, uint16_t Flags,
              std::initializer_list<FieldDef> Fields,
              std::initializer_list<MethodDef> Methods) {
  auto *C = new Class;
  C->Name = Name;
  C->Flags = Flags;
  C->Builtin = true;
  C->Init.store(InitState::Initialized);
  if (Super)
    C->Super = findLoadedClass(Super);
  for (const char *I : Ifaces)
    C->Interfaces.push_back(findLoadedClass(I));
  for (const FieldDef &F : Fields) {
    auto Fld = std::make_unique<Field>();
    Fld->Name = F.Name;
    Fld->Descriptor = F.Desc;
    Fld->Flags = F.Flags;
    C->Fields.push_back(std::move(Fld));
  }
  for (const MethodDef &D : Methods) {
    auto M = std::make_unique<Method>();
    M->Owner = C;
    M->Name = D.Name;
    M->Descriptor = D.Desc;
    M->Flags = D.Flags | (D.Fn ? 0 : AccAbstract);
    std::string Error;
    parseMethodDescriptor(*M, Error);
    M->Entry.store(D.Fn ? D.Fn : [](VMThread *T, Method *M, Slot *) -> Slot {
      throwNew(T, "java/lang/AbstractMethodError", M->qualifiedName());
      return 0;
    });
    C->Methods.push_back(std::move(M));
  }
  linkClass(C);
  if (!ClassClass)
    MirrorlessClasses.push_back(C);
  return C;
}

Slot &slotAt(Object *O, uint32_t Offset) {
  return *reinterpret_cast<Slot *>(reinterpret_cast<char *>(O) + Offset);
}
Object *refAt(Object *O, uint32_t Offset) {
  return reinterpret_cast<Object *>(
      __atomic_load_n(&slotAt(O, Offset), __ATOMIC_ACQUIRE));
}
void setRef(Object *O, uint32_t Offset, Object *V) {
  __atomic_store_n(&slotAt(O, Offset), Slot(uintptr_t(V)), __ATOMIC_RELEASE);
}
uint32_t offsetOf(Class *C, const char *Name) {
  return resolveField(C, Name)->Offset;
}

Object *argA(Slot *A, int I) { return reinterpret_cast<Object *>(A[I]); }
int32_t argI(Slot *A, int I) { return int32_t(A[I]); }
int64_t argJ(Slot *A, int I) { return int64_t(A[I]); }
Slot retA(Object *O) { return Slot(uintptr_t(O)); }
Slot retI(int32_t V) { return Slot(uint32_t(V)); }

// Offsets of the built-in fields natives use, set by defineBuiltins.
uint32_t StringValue, ThrowableMessage, ThrowableCause, ThreadName,
    ThreadTarget, ThreadEetop, ThreadTid, BuilderValue, BuilderCount,
    IntegerValue, LongValue, BooleanValue, CharacterValue, ClassVMClass,
    PrintStreamFd, EnumName, EnumOrdinal;
Class *IntegerClass, *LongClass, *BooleanClass, *CharacterClass, *BuilderClass,
    *PrintStreamClass;
Object *OutOfMemory;
std::atomic<int64_t> ThreadNumber{0}, ThreadIds{1};

Array *charsOf(Object *S) {
  return static_cast<Array *>(refAt(S, StringValue));
}
const char16_t *charData(Array *A) {
  return reinterpret_cast<const char16_t *>(A->data());
}

Object *newStringFrom(VMThread *T, const char16_t *P, size_t N) {
  static Class *CharArray = arrayClassOf("C");
  Array *A = allocArray(T, CharArray, int32_t(N));
  if (!A)
    return nullptr;
  std::memcpy(A->data(), P, N * 2);
  Object *S = allocObject(T, StringClass);
  if (!S)
    return nullptr;
  setRef(S, StringValue, A);
  return S;
}

std::u16string asciiU16(const std::string &S) {
  return std::u16string(S.begin(), S.end());
}

Object *str(VMThread *T, const std::string &Ascii) {
  return newString(T, asciiU16(Ascii));
}

void throwNPE(VMThread *T, const char *What) {
  throwNew(T, "java/lang/NullPointerException", What);
}

//===-- java.lang.Object ------------------------------------------------===//

Slot objectInit(VMThread *, Method *, Slot *) { return 0; }
Slot objectHashCode(VMThread *T, Method *, Slot *A) {
  return retI(int32_t(jitlock_rt_identity_hash(T->Rt, argA(A, 0))));
}
Slot objectEquals(VMThread *, Method *, Slot *A) { return A[0] == A[1]; }
std::string hex(uint32_t V) {
  char Buf[16];
  std::snprintf(Buf, sizeof Buf, "%x", V);
  return Buf;
}
Slot objectToString(VMThread *T, Method *, Slot *A) {
  Object *O = argA(A, 0);
  Slot Args[1] = {A[0]};
  Slot H = callVirtual(T, O, "hashCode", "()I", Args);
  if (T->Pending)
    return 0;
  return retA(str(T, O->Cls->javaName() + "@" + hex(uint32_t(H))));
}
Slot objectGetClass(VMThread *, Method *, Slot *A) {
  return retA(argA(A, 0)->Cls->Mirror);
}
Slot objectClone(VMThread *T, Method *, Slot *A) {
  Object *O = argA(A, 0);
  if (!O->Cls->IsArray) {
    throwNew(T, "java/lang/CloneNotSupportedException", O->Cls->javaName());
    return 0;
  }
  auto *Src = static_cast<Array *>(O);
  Array *Copy = allocArray(T, Src->Cls, Src->Length);
  if (Copy)
    std::memcpy(Copy->data(), Src->data(),
                size_t(Src->Length) * Src->Cls->ElemSize);
  return retA(Copy);
}
Slot objectWait0(VMThread *T, Method *, Slot *A) {
  interruptibleWait(T, argA(A, 0), 0);
  return 0;
}
Slot objectWait1(VMThread *T, Method *, Slot *A) {
  interruptibleWait(T, argA(A, 0), argJ(A, 1));
  return 0;
}
Slot objectWait2(VMThread *T, Method *, Slot *A) {
  int64_t Ms = argJ(A, 1);
  int32_t Ns = argI(A, 3);
  if (Ns < 0 || Ns > 999999) {
    throwNew(T, "java/lang/IllegalArgumentException",
             "nanosecond timeout value out of range");
    return 0;
  }
  if (Ns > 0 && Ms < INT64_MAX)
    ++Ms;
  interruptibleWait(T, argA(A, 0), Ms);
  return 0;
}
Slot objectNotify(VMThread *T, Method *M, Slot *A) {
  int Rc = M->Name == "notify" ? jitlock_rt_notify(T->Rt, argA(A, 0))
                               : jitlock_rt_notify_all(T->Rt, argA(A, 0));
  if (Rc != JITLOCK_OK)
    throwNew(T, "java/lang/IllegalMonitorStateException",
             "current thread is not owner");
  return 0;
}

//===-- java.lang.Class -------------------------------------------------===//

Slot classGetName(VMThread *T, Method *, Slot *A) {
  return retA(str(T, classOfMirror(argA(A, 0))->javaName()));
}
Slot classGetSimpleName(VMThread *T, Method *, Slot *A) {
  std::string N = classOfMirror(argA(A, 0))->javaName();
  size_t Cut = N.find_last_of(".$");
  return retA(str(T, Cut == std::string::npos ? N : N.substr(Cut + 1)));
}
Slot classToString(VMThread *T, Method *, Slot *A) {
  Class *C = classOfMirror(argA(A, 0));
  return retA(
      str(T, (C->isInterface() ? "interface " : "class ") + C->javaName()));
}
Slot classDesiredAssertionStatus(VMThread *, Method *, Slot *) { return 0; }

//===-- java.lang.String ------------------------------------------------===//

int32_t stringHash(Object *S) {
  Array *A = charsOf(S);
  uint32_t H = 0;
  for (int32_t I = 0; I < A->Length; ++I)
    H = 31 * H + charData(A)[I];
  return int32_t(H);
}
Slot stringLength(VMThread *, Method *, Slot *A) {
  return retI(charsOf(argA(A, 0))->Length);
}
Slot stringIsEmpty(VMThread *, Method *, Slot *A) {
  return charsOf(argA(A, 0))->Length == 0;
}
Slot stringCharAt(VMThread *T, Method *, Slot *A) {
  Array *C = charsOf(argA(A, 0));
  int32_t I = argI(A, 1);
  if (uint32_t(I) >= uint32_t(C->Length)) {
    throwNew(T, "java/lang/StringIndexOutOfBoundsException",
             "index " + std::to_string(I) + ", length " +
                 std::to_string(C->Length));
    return 0;
  }
  return retI(charData(C)[I]);
}
bool stringEq(Object *X, Object *Y) {
  if (X == Y)
    return true;
  if (!Y || Y->Cls != StringClass)
    return false;
  Array *A = charsOf(X), *B = charsOf(Y);
  return A->Length == B->Length &&
         std::memcmp(A->data(), B->data(), size_t(A->Length) * 2) == 0;
}
Slot stringEquals(VMThread *, Method *, Slot *A) {
  return stringEq(argA(A, 0), argA(A, 1));
}
Slot stringHashCode(VMThread *, Method *, Slot *A) {
  return retI(stringHash(argA(A, 0)));
}
Slot stringToString(VMThread *, Method *, Slot *A) { return A[0]; }
Slot stringCompareTo(VMThread *T, Method *, Slot *A) {
  Object *Other = argA(A, 1);
  if (!Other) {
    throwNPE(T, "compareTo(null)");
    return 0;
  }
  if (Other->Cls != StringClass) {
    throwNew(T, "java/lang/ClassCastException",
             "class " + Other->Cls->javaName() +
                 " cannot be cast to class java.lang.String");
    return 0;
  }
  Array *X = charsOf(argA(A, 0)), *Y = charsOf(Other);
  int32_t N = std::min(X->Length, Y->Length);
  for (int32_t I = 0; I < N; ++I)
    if (charData(X)[I] != charData(Y)[I])
      return retI(int32_t(charData(X)[I]) - int32_t(charData(Y)[I]));
  return retI(X->Length - Y->Length);
}
Slot stringConcat(VMThread *T, Method *, Slot *A) {
  if (!argA(A, 1)) {
    throwNPE(T, "concat(null)");
    return 0;
  }
  return retA(newString(T, stringChars(argA(A, 0)) + stringChars(argA(A, 1))));
}
Slot stringIndexOfChar(VMThread *, Method *, Slot *A) {
  std::u16string S = stringChars(argA(A, 0));
  size_t P = S.find(char16_t(argI(A, 1)));
  return retI(P == std::u16string::npos ? -1 : int32_t(P));
}
Slot stringIndexOfString(VMThread *T, Method *, Slot *A) {
  if (!argA(A, 1)) {
    throwNPE(T, "indexOf(null)");
    return 0;
  }
  size_t P = stringChars(argA(A, 0)).find(stringChars(argA(A, 1)));
  return retI(P == std::u16string::npos ? -1 : int32_t(P));
}
Slot stringSubstring(VMThread *T, Method *M, Slot *A) {
  std::u16string S = stringChars(argA(A, 0));
  int32_t Begin = argI(A, 1);
  int32_t End = M->Descriptor == "(II)Ljava/lang/String;" ? argI(A, 2)
                                                          : int32_t(S.size());
  if (Begin < 0 || End > int32_t(S.size()) || Begin > End) {
    throwNew(T, "java/lang/StringIndexOutOfBoundsException",
             "begin " + std::to_string(Begin) + ", end " + std::to_string(End) +
                 ", length " + std::to_string(S.size()));
    return 0;
  }
  return retA(newString(T, S.substr(size_t(Begin), size_t(End - Begin))));
}
Slot stringStartsWith(VMThread *T, Method *, Slot *A) {
  if (!argA(A, 1)) {
    throwNPE(T, "startsWith(null)");
    return 0;
  }
  return stringChars(argA(A, 0)).rfind(stringChars(argA(A, 1)), 0) == 0;
}
Slot stringEndsWith(VMThread *T, Method *, Slot *A) {
  if (!argA(A, 1)) {
    throwNPE(T, "endsWith(null)");
    return 0;
  }
  std::u16string S = stringChars(argA(A, 0)), X = stringChars(argA(A, 1));
  return S.size() >= X.size() &&
         S.compare(S.size() - X.size(), X.size(), X) == 0;
}
Slot stringIntern(VMThread *T, Method *, Slot *A) {
  return retA(internString(T, stringChars(argA(A, 0))));
}
Slot stringToCharArray(VMThread *T, Method *, Slot *A) {
  Array *C = charsOf(argA(A, 0));
  static Class *CharArray = arrayClassOf("C");
  Array *Copy = allocArray(T, CharArray, C->Length);
  if (Copy)
    std::memcpy(Copy->data(), C->data(), size_t(C->Length) * 2);
  return retA(Copy);
}
Slot stringInitChars(VMThread *T, Method *, Slot *A) {
  auto *Chars = static_cast<Array *>(argA(A, 1));
  if (!Chars) {
    throwNPE(T, "new String(null)");
    return 0;
  }
  Object *S = newStringFrom(T, charData(Chars), size_t(Chars->Length));
  if (S)
    setRef(argA(A, 0), StringValue, charsOf(S));
  return 0;
}
Slot stringInitEmpty(VMThread *T, Method *, Slot *A) {
  Object *S = newString(T, u"");
  if (S)
    setRef(argA(A, 0), StringValue, charsOf(S));
  return 0;
}
Slot stringInitCopy(VMThread *T, Method *, Slot *A) {
  if (!argA(A, 1)) {
    throwNPE(T, "new String(null)");
    return 0;
  }
  setRef(argA(A, 0), StringValue, charsOf(argA(A, 1)));
  return 0;
}

} // namespace

/// The text of a value of descriptor kind `D` as Java prints it.
std::u16string textOf(VMThread *T, char D, Slot V, bool &Failed) {
  Failed = false;
  switch (D) {
  case 'Z':
    return V & 1 ? u"true" : u"false";
  case 'C':
    return std::u16string(1, char16_t(V));
  case 'B':
  case 'S':
  case 'I':
    return asciiU16(std::to_string(int32_t(V)));
  case 'J':
    return asciiU16(std::to_string(int64_t(V)));
  default: {
    Object *S = stringValueOf(T, reinterpret_cast<Object *>(V));
    if (!S) {
      Failed = true;
      return u"";
    }
    return stringChars(S);
  }
  }
}

namespace {

/// String.valueOf(x) and the static toString(x) of the boxes.
Slot stringValueOfNative(VMThread *T, Method *M, Slot *A) {
  char D = M->Descriptor[1];
  if (M->Descriptor == "([C)Ljava/lang/String;") {
    auto *Chars = static_cast<Array *>(argA(A, 0));
    if (!Chars) {
      throwNPE(T, "valueOf(null)");
      return 0;
    }
    return retA(newStringFrom(T, charData(Chars), size_t(Chars->Length)));
  }
  bool Failed;
  std::u16string S = textOf(T, D, A[0], Failed);
  return Failed ? 0 : retA(newString(T, S));
}

//===-- java.lang.StringBuilder -----------------------------------------===//

/// Appends to the builder's array, growing it (a new array; the old one is
/// garbage, which nothing collects).
bool builderAppend(VMThread *T, Object *B, const std::u16string &S) {
  static Class *CharArray = arrayClassOf("C");
  auto *A = static_cast<Array *>(refAt(B, BuilderValue));
  int32_t Count = int32_t(slotAt(B, BuilderCount));
  int64_t Need = int64_t(Count) + int64_t(S.size());
  if (Need > INT32_MAX) {
    throwOutOfMemory(T);
    return false;
  }
  if (!A || Need > A->Length) {
    int64_t Cap = std::max<int64_t>(Need, A ? int64_t(A->Length) * 2 + 2 : 16);
    Array *Grown =
        allocArray(T, CharArray, int32_t(std::min<int64_t>(Cap, INT32_MAX)));
    if (!Grown)
      return false;
    if (A)
      std::memcpy(Grown->data(), A->data(), size_t(Count) * 2);
    setRef(B, BuilderValue, Grown);
    A = Grown;
  }
  std::memcpy(A->data() + size_t(Count) * 2, S.data(), S.size() * 2);
  slotAt(B, BuilderCount) = Slot(uint32_t(Need));
  return true;
}
std::u16string builderChars(Object *B) {
  auto *A = static_cast<Array *>(refAt(B, BuilderValue));
  int32_t Count = int32_t(slotAt(B, BuilderCount));
  return A ? std::u16string(charData(A), size_t(Count)) : std::u16string();
}
Slot builderInit(VMThread *T, Method *M, Slot *A) {
  if (M->Descriptor == "(Ljava/lang/String;)V") {
    if (!argA(A, 1)) {
      throwNPE(T, "new StringBuilder(null)");
      return 0;
    }
    builderAppend(T, argA(A, 0), stringChars(argA(A, 1)));
  } else if (M->Descriptor == "(I)V" && argI(A, 1) < 0) {
    throwNew(T, "java/lang/NegativeArraySizeException",
             std::to_string(argI(A, 1)));
  }
  return 0;
}
Slot builderAppendNative(VMThread *T, Method *M, Slot *A) {
  Object *B = argA(A, 0);
  std::u16string S;
  if (M->Descriptor == "([C)Ljava/lang/StringBuilder;") {
    auto *Chars = static_cast<Array *>(argA(A, 1));
    if (!Chars) {
      throwNPE(T, "append(null)");
      return 0;
    }
    S.assign(charData(Chars), size_t(Chars->Length));
  } else {
    bool Failed;
    S = textOf(T, M->Descriptor[1], A[1], Failed);
    if (Failed)
      return 0;
  }
  return builderAppend(T, B, S) ? A[0] : 0;
}
Slot builderToString(VMThread *T, Method *, Slot *A) {
  return retA(newString(T, builderChars(argA(A, 0))));
}
Slot builderLength(VMThread *, Method *, Slot *A) {
  return retI(int32_t(slotAt(argA(A, 0), BuilderCount)));
}
Slot builderCharAt(VMThread *T, Method *, Slot *A) {
  std::u16string S = builderChars(argA(A, 0));
  int32_t I = argI(A, 1);
  if (uint32_t(I) >= S.size()) {
    throwNew(T, "java/lang/StringIndexOutOfBoundsException",
             "index " + std::to_string(I) + ",length " +
                 std::to_string(S.size()));
    return 0;
  }
  return retI(S[size_t(I)]);
}
Slot builderReverse(VMThread *, Method *, Slot *A) {
  auto *Arr = static_cast<Array *>(refAt(argA(A, 0), BuilderValue));
  int32_t Count = int32_t(slotAt(argA(A, 0), BuilderCount));
  if (Arr)
    std::reverse(reinterpret_cast<char16_t *>(Arr->data()),
                 reinterpret_cast<char16_t *>(Arr->data()) + Count);
  return A[0];
}
Slot builderSetLength(VMThread *T, Method *, Slot *A) {
  Object *B = argA(A, 0);
  int32_t N = argI(A, 1);
  if (N < 0) {
    throwNew(T, "java/lang/StringIndexOutOfBoundsException",
             "String index out of range: " + std::to_string(N));
    return 0;
  }
  std::u16string S = builderChars(B);
  S.resize(size_t(N), u'\0');
  slotAt(B, BuilderCount) = 0;
  builderAppend(T, B, S);
  return 0;
}

//===-- Boxes, Math, Objects --------------------------------------------===//

Object *boxCached(VMThread *T, Class *C, uint32_t Field, Slot V,
                  std::atomic<Object *> *Cache) {
  if (Cache) {
    if (Object *O = Cache->load(std::memory_order_acquire))
      return O;
  }
  Object *O = allocObject(T, C);
  if (!O)
    return nullptr;
  slotAt(O, Field) = V;
  if (Cache) {
    Object *Expected = nullptr;
    if (!Cache->compare_exchange_strong(Expected, O, std::memory_order_acq_rel))
      return Expected;
  }
  return O;
}
std::atomic<Object *> IntegerCache[256], LongCache[256], CharCache[128],
    BooleanCache[2];

Slot integerValueOf(VMThread *T, Method *, Slot *A) {
  return retA(boxInt(T, 'I', A[0]));
}
Slot longValueOf(VMThread *T, Method *, Slot *A) {
  return retA(boxInt(T, 'J', A[0]));
}
Slot booleanValueOf(VMThread *T, Method *, Slot *A) {
  return retA(boxInt(T, 'Z', A[0]));
}
Slot characterValueOf(VMThread *T, Method *, Slot *A) {
  return retA(boxInt(T, 'C', A[0]));
}
Slot boxValue(VMThread *, Method *M, Slot *A) {
  Object *O = argA(A, 0);
  Slot V = slotAt(O, sizeof(Object)); // the box's one field
  return M->ReturnKind == 'J' && O->Cls == IntegerClass
             ? Slot(int64_t(int32_t(V)))
         : M->ReturnKind == 'I' && O->Cls == LongClass
             ? Slot(uint32_t(int32_t(int64_t(V))))
             : V;
}
Slot boxHashCode(VMThread *, Method *, Slot *A) {
  Object *O = argA(A, 0);
  Slot V = slotAt(O, sizeof(Object));
  if (O->Cls == LongClass)
    return retI(int32_t(V ^ (V >> 32)));
  if (O->Cls == BooleanClass)
    return retI(V ? 1231 : 1237);
  return retI(int32_t(V));
}
Slot boxEquals(VMThread *, Method *, Slot *A) {
  Object *X = argA(A, 0), *Y = argA(A, 1);
  return Y && Y->Cls == X->Cls &&
         slotAt(X, sizeof(Object)) == slotAt(Y, sizeof(Object));
}
Slot boxToString(VMThread *T, Method *, Slot *A) {
  Object *O = argA(A, 0);
  char D = O->Cls == LongClass        ? 'J'
           : O->Cls == BooleanClass   ? 'Z'
           : O->Cls == CharacterClass ? 'C'
                                      : 'I';
  bool Failed;
  return retA(newString(T, textOf(T, D, slotAt(O, sizeof(Object)), Failed)));
}
Slot integerToStringRadix(VMThread *T, Method *M, Slot *A) {
  uint64_t V = M->Owner == LongClass ? uint64_t(argJ(A, 0))
                                     : uint64_t(uint32_t(argI(A, 0)));
  unsigned Shift = M->Name == "toHexString"     ? 4
                   : M->Name == "toOctalString" ? 3
                                                : 1;
  std::string S;
  do {
    S.insert(S.begin(), "0123456789abcdef"[V & ((1u << Shift) - 1)]);
    V >>= Shift;
  } while (V);
  return retA(str(T, S));
}
Slot parseNumber(VMThread *T, Method *M, Slot *A) {
  Object *S = argA(A, 0);
  bool Long = M->Owner == LongClass;
  if (!S) {
    throwNew(T, "java/lang/NumberFormatException",
             "Cannot parse null string: null");
    return 0;
  }
  std::u16string C = stringChars(S);
  auto Bad = [&] {
    throwNew(T, "java/lang/NumberFormatException",
             "For input string: \"" + toUtf8(C) + "\"");
    return Slot(0);
  };
  size_t I = 0;
  bool Neg = false;
  if (!C.empty() && (C[0] == '-' || C[0] == '+'))
    Neg = C[I++] == '-';
  if (I == C.size())
    return Bad();
  uint64_t Limit = Long ? (Neg ? uint64_t(INT64_MAX) + 1 : INT64_MAX)
                        : (Neg ? uint64_t(INT32_MAX) + 1 : INT32_MAX);
  uint64_t V = 0;
  for (; I < C.size(); ++I) {
    if (C[I] < '0' || C[I] > '9')
      return Bad();
    V = V * 10 + (C[I] - '0');
    if (V > Limit)
      return Bad();
  }
  uint64_t R = Neg ? 0 - V : V;
  return Long ? Slot(R) : Slot(uint32_t(R));
}
Slot integerCompare(VMThread *, Method *M, Slot *A) {
  if (M->Owner == LongClass) {
    int64_t X = argJ(A, 0), Y = argJ(A, 2);
    return retI(X < Y ? -1 : X > Y ? 1 : 0);
  }
  int32_t X = argI(A, 0), Y = argI(A, 1);
  return retI(X < Y ? -1 : X > Y ? 1 : 0);
}
Slot mathIntOp(VMThread *, Method *M, Slot *A) {
  bool Long = M->Descriptor[1] == 'J';
  if (M->Name == "abs")
    return Long ? Slot(argJ(A, 0) < 0 ? 0 - uint64_t(argJ(A, 0)) : A[0])
                : retI(argI(A, 0) < 0 ? int32_t(0u - uint32_t(argI(A, 0)))
                                      : argI(A, 0));
  bool Min = M->Name == "min";
  if (Long) {
    int64_t X = argJ(A, 0), Y = argJ(A, 2);
    return Slot(Min ? std::min(X, Y) : std::max(X, Y));
  }
  int32_t X = argI(A, 0), Y = argI(A, 1);
  return retI(Min ? std::min(X, Y) : std::max(X, Y));
}
Slot objectsRequireNonNull(VMThread *T, Method *M, Slot *A) {
  if (!A[0]) {
    if (M->Descriptor == "(Ljava/lang/Object;Ljava/lang/String;)"
                         "Ljava/lang/Object;" &&
        argA(A, 1))
      throwNew(T, "java/lang/NullPointerException", stringUtf8(argA(A, 1)));
    else
      throwNew(T, "java/lang/NullPointerException");
  }
  return A[0];
}
Slot objectsEquals(VMThread *T, Method *, Slot *A) {
  if (A[0] == A[1])
    return 1;
  if (!A[0])
    return 0;
  Slot Args[2] = {A[0], A[1]};
  return callVirtual(T, argA(A, 0), "equals", "(Ljava/lang/Object;)Z", Args);
}
Slot objectsHashCode(VMThread *T, Method *, Slot *A) {
  if (!A[0])
    return 0;
  Slot Args[1] = {A[0]};
  return callVirtual(T, argA(A, 0), "hashCode", "()I", Args);
}

//===-- System, PrintStream ---------------------------------------------===//

Slot systemNanoTime(VMThread *, Method *, Slot *) {
  return Slot(std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now().time_since_epoch())
                  .count());
}
Slot systemCurrentTimeMillis(VMThread *, Method *, Slot *) {
  return Slot(std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count());
}
Slot systemExit(VMThread *, Method *, Slot *A) { exitVM(argI(A, 0)); }
Slot systemIdentityHashCode(VMThread *T, Method *, Slot *A) {
  return A[0] ? retI(int32_t(jitlock_rt_identity_hash(T->Rt, argA(A, 0)))) : 0;
}
Slot systemArraycopy(VMThread *T, Method *, Slot *A) {
  auto *Src = static_cast<Array *>(argA(A, 0));
  auto *Dst = static_cast<Array *>(argA(A, 2));
  int32_t SrcPos = argI(A, 1), DstPos = argI(A, 3), Len = argI(A, 4);
  if (!Src || !Dst) {
    throwNPE(T, "arraycopy: null array");
    return 0;
  }
  if (!Src->Cls->IsArray || !Dst->Cls->IsArray ||
      Src->Cls->ElemKind != Dst->Cls->ElemKind) {
    throwNew(T, "java/lang/ArrayStoreException",
             "arraycopy: type mismatch: can not copy " + Src->Cls->javaName() +
                 " into " + Dst->Cls->javaName());
    return 0;
  }
  if (SrcPos < 0 || DstPos < 0 || Len < 0 ||
      int64_t(SrcPos) + Len > Src->Length ||
      int64_t(DstPos) + Len > Dst->Length) {
    throwNew(T, "java/lang/ArrayIndexOutOfBoundsException",
             "arraycopy: last index " + std::to_string(int64_t(SrcPos) + Len) +
                 " out of bounds");
    return 0;
  }
  unsigned Size = Src->Cls->ElemSize;
  if (Src->Cls->ElemKind == 'L' && !isAssignable(Src->Cls, Dst->Cls)) {
    auto *From = reinterpret_cast<Object **>(Src->data()) + SrcPos;
    auto *To = reinterpret_cast<Object **>(Dst->data()) + DstPos;
    for (int32_t I = 0; I < Len; ++I) {
      if (From[I] && !isInstanceOf(From[I], Dst->Cls->Elem)) {
        throwNew(T, "java/lang/ArrayStoreException",
                 "arraycopy: element type mismatch");
        return 0;
      }
      To[I] = From[I];
    }
    return 0;
  }
  std::memmove(Dst->data() + size_t(DstPos) * Size,
               Src->data() + size_t(SrcPos) * Size, size_t(Len) * Size);
  return 0;
}

Slot printNative(VMThread *T, Method *M, Slot *A) {
  bool Err = slotAt(argA(A, 0), PrintStreamFd) == 2;
  bool Line = M->Name == "println";
  std::u16string S;
  if (M->Descriptor == "([C)V") {
    auto *Chars = static_cast<Array *>(argA(A, 1));
    if (!Chars) {
      throwNPE(T, "print(null)");
      return 0;
    }
    S.assign(charData(Chars), size_t(Chars->Length));
  } else if (M->Descriptor != "()V") {
    bool Failed;
    S = textOf(T, M->Descriptor[1], A[1], Failed);
    if (Failed)
      return 0;
  }
  writeOut(T, Err, toUtf8(S) + (Line ? "\n" : ""));
  return 0;
}
Slot printFlush(VMThread *, Method *, Slot *) {
  flushOut();
  return 0;
}

//===-- Thread ----------------------------------------------------------===//

Slot threadInit(VMThread *T, Method *M, Slot *A) {
  Object *Self = argA(A, 0);
  Object *Target = nullptr, *Name = nullptr;
  const std::string &D = M->Descriptor;
  if (D == "(Ljava/lang/Runnable;)V")
    Target = argA(A, 1);
  else if (D == "(Ljava/lang/Runnable;Ljava/lang/String;)V")
    Target = argA(A, 1), Name = argA(A, 2);
  else if (D == "(Ljava/lang/String;)V")
    Name = argA(A, 1);
  if ((D.find("String") != std::string::npos) && !Name) {
    throwNPE(T, "name cannot be null");
    return 0;
  }
  if (!Name) {
    Name = str(T, "Thread-" + std::to_string(ThreadNumber.fetch_add(1)));
    if (!Name)
      return 0;
  }
  VMThread *V = newVMThread();
  V->JavaThread = Self;
  V->Daemon = T->Daemon;
  setRef(Self, ThreadName, Name);
  setRef(Self, ThreadTarget, Target);
  slotAt(Self, ThreadEetop) = Slot(uintptr_t(V));
  slotAt(Self, ThreadTid) = Slot(ThreadIds.fetch_add(1) + 1);
  return 0;
}
Slot threadStart(VMThread *T, Method *, Slot *A) {
  startJavaThread(T, argA(A, 0));
  return 0;
}
Slot threadRun(VMThread *T, Method *, Slot *A) {
  Object *Target = refAt(argA(A, 0), ThreadTarget);
  if (!Target)
    return 0;
  Slot Args[1] = {retA(Target)};
  return callVirtual(T, Target, "run", "()V", Args);
}
Slot threadJoin(VMThread *T, Method *M, Slot *A) {
  int64_t Ms = M->Descriptor == "(J)V" ? argJ(A, 1) : 0;
  if (Ms < 0) {
    throwNew(T, "java/lang/IllegalArgumentException",
             "timeout value is negative");
    return 0;
  }
  if (!joinThread(T, threadOf(argA(A, 0)), Ms))
    throwNew(T, "java/lang/InterruptedException");
  return 0;
}
Slot threadSleep(VMThread *T, Method *, Slot *A) {
  if (argJ(A, 0) < 0) {
    throwNew(T, "java/lang/IllegalArgumentException",
             "timeout value is negative");
    return 0;
  }
  if (!sleepInterruptibly(T, argJ(A, 0)))
    throwNew(T, "java/lang/InterruptedException", "sleep interrupted");
  return 0;
}
Slot threadCurrent(VMThread *T, Method *, Slot *) {
  return retA(T->JavaThread);
}
Slot threadGetName(VMThread *, Method *, Slot *A) {
  return retA(refAt(argA(A, 0), ThreadName));
}
Slot threadSetName(VMThread *T, Method *, Slot *A) {
  if (!argA(A, 1)) {
    throwNPE(T, "name cannot be null");
    return 0;
  }
  setRef(argA(A, 0), ThreadName, argA(A, 1));
  return 0;
}
Slot threadInterrupt(VMThread *, Method *, Slot *A) {
  interruptThread(threadOf(argA(A, 0)));
  return 0;
}
Slot threadIsInterrupted(VMThread *, Method *, Slot *A) {
  return isInterrupted(threadOf(argA(A, 0)));
}
Slot threadInterrupted(VMThread *T, Method *, Slot *) {
  return clearInterrupt(T);
}
Slot threadIsAlive(VMThread *, Method *, Slot *A) {
  return isAlive(threadOf(argA(A, 0)));
}
Slot threadSetDaemon(VMThread *T, Method *, Slot *A) {
  setDaemon(T, threadOf(argA(A, 0)), argI(A, 1) != 0);
  return 0;
}
Slot threadIsDaemon(VMThread *, Method *, Slot *A) {
  return threadOf(argA(A, 0))->Daemon;
}
Slot threadGetId(VMThread *, Method *, Slot *A) {
  return slotAt(argA(A, 0), ThreadTid);
}
Slot threadHoldsLock(VMThread *T, Method *, Slot *A) {
  if (!A[0]) {
    throwNPE(T, "holdsLock(null)");
    return 0;
  }
  return jitlock_rt_holds_lock(T->Rt, argA(A, 0)) != 0;
}
Slot threadYield(VMThread *T, Method *, Slot *) {
  NativeScope N(T);
  std::this_thread::yield();
  return 0;
}
Slot threadOnSpinWait(VMThread *, Method *, Slot *) {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
  return 0;
}

//===-- Throwable, Enum -------------------------------------------------===//

Slot throwableInit(VMThread *, Method *M, Slot *A) {
  Object *Self = argA(A, 0);
  const std::string &D = M->Descriptor;
  if (D == "(Ljava/lang/String;)V") {
    setRef(Self, ThrowableMessage, argA(A, 1));
  } else if (D == "(Ljava/lang/String;Ljava/lang/Throwable;)V") {
    setRef(Self, ThrowableMessage, argA(A, 1));
    setRef(Self, ThrowableCause, argA(A, 2));
  }
  return 0;
}
/// Throwable(Throwable): the cause's toString() is the message.
Slot throwableInitCause(VMThread *T, Method *, Slot *A) {
  Object *Self = argA(A, 0), *Cause = argA(A, 1);
  setRef(Self, ThrowableCause, Cause);
  if (Cause && !refAt(Self, ThrowableMessage)) {
    Object *Text = str(T, describeThrowable(T, Cause));
    setRef(Self, ThrowableMessage, Text);
  }
  return 0;
}
Slot throwableGetMessage(VMThread *, Method *, Slot *A) {
  return retA(refAt(argA(A, 0), ThrowableMessage));
}
Slot throwableGetLocalizedMessage(VMThread *T, Method *, Slot *A) {
  Slot Args[1] = {A[0]};
  return callVirtual(T, argA(A, 0), "getMessage", "()Ljava/lang/String;", Args);
}
Slot throwableGetCause(VMThread *, Method *, Slot *A) {
  return retA(refAt(argA(A, 0), ThrowableCause));
}
Slot throwableToString(VMThread *T, Method *, Slot *A) {
  Object *Self = argA(A, 0);
  Slot Args[1] = {A[0]};
  Slot Msg =
      callVirtual(T, Self, "getLocalizedMessage", "()Ljava/lang/String;", Args);
  if (T->Pending)
    return 0;
  std::string S = Self->Cls->javaName();
  if (Msg)
    S += ": " + stringUtf8(reinterpret_cast<Object *>(Msg));
  return retA(newStringUtf8(T, S));
}
Slot throwablePrintStackTrace(VMThread *T, Method *, Slot *A) {
  writeOut(T, true, describeThrowable(T, argA(A, 0)) + "\n");
  return 0;
}
Slot throwableAddSuppressed(VMThread *, Method *, Slot *) { return 0; }
Slot throwableFillInStackTrace(VMThread *, Method *, Slot *A) { return A[0]; }

Slot enumInit(VMThread *, Method *, Slot *A) {
  setRef(argA(A, 0), EnumName, argA(A, 1));
  slotAt(argA(A, 0), EnumOrdinal) = Slot(uint32_t(argI(A, 2)));
  return 0;
}
Slot enumName(VMThread *, Method *, Slot *A) {
  return retA(refAt(argA(A, 0), EnumName));
}
Slot enumOrdinal(VMThread *, Method *, Slot *A) {
  return slotAt(argA(A, 0), EnumOrdinal);
}
Slot enumCompareTo(VMThread *T, Method *, Slot *A) {
  Object *Other = argA(A, 1);
  if (!Other) {
    throwNPE(T, "compareTo(null)");
    return 0;
  }
  return retI(int32_t(slotAt(argA(A, 0), EnumOrdinal)) -
              int32_t(slotAt(Other, EnumOrdinal)));
}
Slot enumValueOf(VMThread *T, Method *, Slot *A) {
  Object *Mirror = argA(A, 0), *Name = argA(A, 1);
  if (!Mirror || !Name) {
    throwNPE(T, "Name is null");
    return 0;
  }
  Class *C = classOfMirror(Mirror);
  if (!initializeClass(T, C))
    return 0;
  std::string Want = "L" + C->Name + ";";
  for (auto &F : C->Fields)
    if (F->isStatic() && F->Descriptor == Want && (F->Flags & AccEnum)) {
      auto *V = reinterpret_cast<Object *>(C->Statics[F->Offset]);
      if (V && stringEq(refAt(V, EnumName), Name))
        return retA(V);
    }
  std::string Canonical = C->javaName();
  std::replace(Canonical.begin(), Canonical.end(), '$', '.');
  throwNew(T, "java/lang/IllegalArgumentException",
           "No enum constant " + Canonical + "." + stringUtf8(Name));
  return 0;
}

} // namespace

//===-- Services
//------------------------------------------------------------===//

void throwOutOfMemory(VMThread *T) { T->Pending = OutOfMemory; }

Slot callVirtual(VMThread *T, Object *Recv, const char *Name, const char *Desc,
                 Slot *Args) {
  Method *M = resolveMethod(Recv->Cls, Name, Desc);
  if (!M) {
    throwNew(T, "java/lang/NoSuchMethodError",
             Recv->Cls->javaName() + "." + Name + Desc);
    return 0;
  }
  return callMethod(T, selectVirtual(Recv, M), Args);
}

Object *newString(VMThread *T, const std::u16string &Chars) {
  return newStringFrom(T, Chars.data(), Chars.size());
}

Object *newStringUtf8(VMThread *T, const std::string &Utf8) {
  std::u16string Out;
  for (size_t I = 0; I < Utf8.size();) {
    uint8_t C = uint8_t(Utf8[I]);
    uint32_t Cp;
    size_t N;
    if (C < 0x80)
      Cp = C, N = 1;
    else if ((C & 0xe0) == 0xc0)
      Cp = C & 0x1f, N = 2;
    else if ((C & 0xf0) == 0xe0)
      Cp = C & 0x0f, N = 3;
    else
      Cp = C & 0x07, N = 4;
    for (size_t K = 1; K < N && I + K < Utf8.size(); ++K)
      Cp = Cp << 6 | (uint8_t(Utf8[I + K]) & 0x3f);
    I += N;
    if (Cp >= 0x10000) {
      Cp -= 0x10000;
      Out.push_back(char16_t(0xd800 + (Cp >> 10)));
      Out.push_back(char16_t(0xdc00 + (Cp & 0x3ff)));
    } else {
      Out.push_back(char16_t(Cp));
    }
  }
  return newString(T, Out);
}

Object *internString(VMThread *T, const std::u16string &Chars) {
  static std::mutex Lock;
  static std::unordered_map<std::u16string, Object *> Table;
  std::lock_guard<std::mutex> G(Lock);
  auto It = Table.find(Chars);
  if (It != Table.end())
    return It->second;
  Object *S = newString(T, Chars);
  if (S)
    Table.emplace(Chars, S);
  return S;
}

std::u16string stringChars(Object *S) {
  Array *A = charsOf(S);
  return std::u16string(charData(A), size_t(A->Length));
}

std::string toUtf8(const std::u16string &S) {
  std::string Out;
  for (size_t I = 0; I < S.size(); ++I) {
    uint32_t C = S[I];
    if (C >= 0xd800 && C < 0xdc00 && I + 1 < S.size() && S[I + 1] >= 0xdc00 &&
        S[I + 1] < 0xe000) {
      C = 0x10000 + ((C - 0xd800) << 10) + (S[I + 1] - 0xdc00);
      ++I;
    } else if (C >= 0xd800 && C < 0xe000) {
      C = '?';
    }
    if (C < 0x80) {
      Out.push_back(char(C));
    } else if (C < 0x800) {
      Out.push_back(char(0xc0 | C >> 6));
      Out.push_back(char(0x80 | (C & 0x3f)));
    } else if (C < 0x10000) {
      Out.push_back(char(0xe0 | C >> 12));
      Out.push_back(char(0x80 | (C >> 6 & 0x3f)));
      Out.push_back(char(0x80 | (C & 0x3f)));
    } else {
      Out.push_back(char(0xf0 | C >> 18));
      Out.push_back(char(0x80 | (C >> 12 & 0x3f)));
      Out.push_back(char(0x80 | (C >> 6 & 0x3f)));
      Out.push_back(char(0x80 | (C & 0x3f)));
    }
  }
  return Out;
}

std::string stringUtf8(Object *S) { return toUtf8(stringChars(S)); }

Object *stringValueOf(VMThread *T, Object *O) {
  static Object *Null = nullptr;
  if (!O || (O->Cls != StringClass)) {
    Object *S = nullptr;
    if (O) {
      Slot Args[1] = {retA(O)};
      S = reinterpret_cast<Object *>(
          callVirtual(T, O, "toString", "()Ljava/lang/String;", Args));
      if (T->Pending)
        return nullptr;
    }
    if (S)
      return S;
    if (!__atomic_load_n(&Null, __ATOMIC_ACQUIRE)) {
      Object *N = internString(T, u"null");
      if (!N)
        return nullptr;
      __atomic_store_n(&Null, N, __ATOMIC_RELEASE);
    }
    return Null;
  }
  return O;
}

Object *boxInt(VMThread *T, char Kind, Slot V) {
  switch (Kind) {
  case 'J': {
    int64_t X = int64_t(V);
    return boxCached(T, LongClass, LongValue, V,
                     X >= -128 && X <= 127 ? &LongCache[X + 128] : nullptr);
  }
  case 'Z':
    return boxCached(T, BooleanClass, BooleanValue, V & 1,
                     &BooleanCache[V & 1]);
  case 'C': {
    uint16_t X = uint16_t(V);
    return boxCached(T, CharacterClass, CharacterValue, X,
                     X < 128 ? &CharCache[X] : nullptr);
  }
  default: {
    int32_t X = int32_t(V);
    return boxCached(T, IntegerClass, IntegerValue, Slot(uint32_t(X)),
                     X >= -128 && X <= 127 ? &IntegerCache[X + 128] : nullptr);
  }
  }
}

void throwNew(VMThread *T, const char *ClassName, const std::string &Msg) {
  throwNew(T, ClassName);
  if (!T->Pending || T->Pending == OutOfMemory)
    return;
  Object *Ex = T->Pending;
  T->Pending = nullptr;
  Object *Text = newStringUtf8(T, Msg);
  if (!Text)
    return; // OutOfMemoryError pending instead
  setRef(Ex, ThrowableMessage, Text);
  T->Pending = Ex;
}

void throwNew(VMThread *T, const char *ClassName) {
  Class *C = findLoadedClass(ClassName);
  if (!C) {
    std::fprintf(stderr, "jitlock-java: fatal: no built-in class %s\n",
                 ClassName);
    std::abort();
  }
  Object *Ex = allocObject(T, C);
  if (Ex)
    T->Pending = Ex;
}

std::string describeThrowable(VMThread *T, Object *Ex) {
  Object *Saved = T->Pending;
  T->Pending = nullptr;
  Slot Args[1] = {retA(Ex)};
  Slot S = callVirtual(T, Ex, "toString", "()Ljava/lang/String;", Args);
  std::string Text = !T->Pending && S
                         ? stringUtf8(reinterpret_cast<Object *>(S))
                         : Ex->Cls->javaName();
  T->Pending = Saved;
  return Text;
}

namespace {
std::mutex OutLock;
} // namespace

void writeOut(VMThread *T, bool Err, const std::string &Text) {
  auto Write = [&] {
    std::lock_guard<std::mutex> G(OutLock);
    if (Err) {
      std::fflush(stdout);
      std::fwrite(Text.data(), 1, Text.size(), stderr);
    } else {
      std::fwrite(Text.data(), 1, Text.size(), stdout);
    }
  };
  if (T && T->Rt && jitlock_rt_thread_state(T->Rt) == JITLOCK_THREAD_MANAGED) {
    NativeScope N(T);
    Write();
  } else {
    Write();
  }
}

void flushOut() {
  std::lock_guard<std::mutex> G(OutLock);
  std::fflush(stdout);
  std::fflush(stderr);
}

void createMirror(Class *C) {
  std::lock_guard<std::mutex> G(BootLock);
  Object *M = allocObject(&BootThread, ClassClass);
  if (!M) {
    std::fprintf(stderr, "jitlock-java: error: the heap is too small for "
                         "the classes\n");
    std::_Exit(2);
  }
  slotAt(M, ClassVMClass) = Slot(uintptr_t(C));
  C->Mirror = M;
}

Class *classOfMirror(Object *Mirror) {
  return reinterpret_cast<Class *>(slotAt(Mirror, ClassVMClass));
}

void defineBuiltins() {
  constexpr uint16_t Pub = AccPublic, Abs = AccPublic | AccAbstract,
                     Iface = AccPublic | AccInterface | AccAbstract,
                     Static = AccPublic | AccStatic,
                     Final = AccPublic | AccFinal;
  const char *Obj = "java/lang/Object";
  ObjectClass =
      define(Obj, nullptr, {}, Pub, {},
             {{"<init>", "()V", objectInit},
              {"hashCode", "()I", objectHashCode},
              {"equals", "(Ljava/lang/Object;)Z", objectEquals},
              {"toString", "()Ljava/lang/String;", objectToString},
              {"getClass", "()Ljava/lang/Class;", objectGetClass, Final},
              {"clone", "()Ljava/lang/Object;", objectClone, AccProtected},
              {"wait", "()V", objectWait0, Final},
              {"wait", "(J)V", objectWait1, Final},
              {"wait", "(JI)V", objectWait2, Final},
              {"notify", "()V", objectNotify, Final},
              {"notifyAll", "()V", objectNotify, Final}});
  define("java/io/Serializable", nullptr, {}, Iface, {}, {});
  define("java/lang/Cloneable", nullptr, {}, Iface, {}, {});
  define("java/lang/Comparable", Obj, {}, Iface, {},
         {{"compareTo", "(Ljava/lang/Object;)I", nullptr, Abs}});
  define("java/lang/CharSequence", Obj, {}, Iface, {}, {});
  define("java/lang/Runnable", Obj, {}, Iface, {},
         {{"run", "()V", nullptr, Abs}});
  define("java/lang/AutoCloseable", Obj, {}, Iface, {},
         {{"close", "()V", nullptr, Abs}});
  ClassClass =
      define("java/lang/Class", Obj, {}, Final, {{"vmClass", "J"}},
             {{"getName", "()Ljava/lang/String;", classGetName},
              {"getSimpleName", "()Ljava/lang/String;", classGetSimpleName},
              {"toString", "()Ljava/lang/String;", classToString},
              {"desiredAssertionStatus", "()Z", classDesiredAssertionStatus}});
  // Every class so far, java/lang/Class included, gets its mirror now.
  for (Class *C : MirrorlessClasses)
    createMirror(C);
  MirrorlessClasses.clear();
  ClassVMClass = offsetOf(ClassClass, "vmClass");

  StringClass = define(
      "java/lang/String", Obj,
      {"java/io/Serializable", "java/lang/Comparable",
       "java/lang/CharSequence"},
      Final, {{"value", "[C", AccPrivate | AccFinal}},
      {{"<init>", "()V", stringInitEmpty},
       {"<init>", "([C)V", stringInitChars},
       {"<init>", "(Ljava/lang/String;)V", stringInitCopy},
       {"length", "()I", stringLength},
       {"isEmpty", "()Z", stringIsEmpty},
       {"charAt", "(I)C", stringCharAt},
       {"equals", "(Ljava/lang/Object;)Z", stringEquals},
       {"hashCode", "()I", stringHashCode},
       {"toString", "()Ljava/lang/String;", stringToString},
       {"compareTo", "(Ljava/lang/String;)I", stringCompareTo},
       {"compareTo", "(Ljava/lang/Object;)I", stringCompareTo},
       {"concat", "(Ljava/lang/String;)Ljava/lang/String;", stringConcat},
       {"indexOf", "(I)I", stringIndexOfChar},
       {"indexOf", "(Ljava/lang/String;)I", stringIndexOfString},
       {"substring", "(I)Ljava/lang/String;", stringSubstring},
       {"substring", "(II)Ljava/lang/String;", stringSubstring},
       {"startsWith", "(Ljava/lang/String;)Z", stringStartsWith},
       {"endsWith", "(Ljava/lang/String;)Z", stringEndsWith},
       {"intern", "()Ljava/lang/String;", stringIntern},
       {"toCharArray", "()[C", stringToCharArray},
       {"valueOf", "(I)Ljava/lang/String;", stringValueOfNative, Static},
       {"valueOf", "(J)Ljava/lang/String;", stringValueOfNative, Static},
       {"valueOf", "(Z)Ljava/lang/String;", stringValueOfNative, Static},
       {"valueOf", "(C)Ljava/lang/String;", stringValueOfNative, Static},
       {"valueOf", "(Ljava/lang/Object;)Ljava/lang/String;",
        stringValueOfNative, Static},
       {"valueOf", "([C)Ljava/lang/String;", stringValueOfNative, Static}});
  StringValue = offsetOf(StringClass, "value");

  const char *SB = "java/lang/StringBuilder";
  BuilderClass =
      define(SB, Obj, {"java/lang/CharSequence"}, Final,
             {{"value", "[C"}, {"count", "I"}},
             {{"<init>", "()V", builderInit},
              {"<init>", "(I)V", builderInit},
              {"<init>", "(Ljava/lang/String;)V", builderInit},
              {"append", "(Ljava/lang/String;)Ljava/lang/StringBuilder;",
               builderAppendNative},
              {"append", "(Ljava/lang/Object;)Ljava/lang/StringBuilder;",
               builderAppendNative},
              {"append", "(I)Ljava/lang/StringBuilder;", builderAppendNative},
              {"append", "(J)Ljava/lang/StringBuilder;", builderAppendNative},
              {"append", "(Z)Ljava/lang/StringBuilder;", builderAppendNative},
              {"append", "(C)Ljava/lang/StringBuilder;", builderAppendNative},
              {"append", "([C)Ljava/lang/StringBuilder;", builderAppendNative},
              {"toString", "()Ljava/lang/String;", builderToString},
              {"length", "()I", builderLength},
              {"charAt", "(I)C", builderCharAt},
              {"reverse", "()Ljava/lang/StringBuilder;", builderReverse},
              {"setLength", "(I)V", builderSetLength}});
  BuilderValue = offsetOf(BuilderClass, "value");
  BuilderCount = offsetOf(BuilderClass, "count");

  define("java/lang/Number", Obj, {"java/io/Serializable"}, Abs, {},
         {{"<init>", "()V", objectInit}});
  IntegerClass = define(
      "java/lang/Integer", "java/lang/Number", {"java/lang/Comparable"}, Final,
      {{"value", "I", AccPrivate | AccFinal},
       {"MIN_VALUE", "I", Static | AccFinal},
       {"MAX_VALUE", "I", Static | AccFinal}},
      {{"valueOf", "(I)Ljava/lang/Integer;", integerValueOf, Static},
       {"intValue", "()I", boxValue},
       {"longValue", "()J", boxValue},
       {"hashCode", "()I", boxHashCode},
       {"equals", "(Ljava/lang/Object;)Z", boxEquals},
       {"toString", "()Ljava/lang/String;", boxToString},
       {"toString", "(I)Ljava/lang/String;", stringValueOfNative, Static},
       {"toHexString", "(I)Ljava/lang/String;", integerToStringRadix, Static},
       {"toBinaryString", "(I)Ljava/lang/String;", integerToStringRadix,
        Static},
       {"toOctalString", "(I)Ljava/lang/String;", integerToStringRadix, Static},
       {"parseInt", "(Ljava/lang/String;)I", parseNumber, Static},
       {"compare", "(II)I", integerCompare, Static}});
  IntegerValue = offsetOf(IntegerClass, "value");
  IntegerClass->Statics[IntegerClass->findField("MIN_VALUE")->Offset] =
      Slot(uint32_t(INT32_MIN));
  IntegerClass->Statics[IntegerClass->findField("MAX_VALUE")->Offset] =
      Slot(uint32_t(INT32_MAX));
  LongClass = define(
      "java/lang/Long", "java/lang/Number", {"java/lang/Comparable"}, Final,
      {{"value", "J", AccPrivate | AccFinal},
       {"MIN_VALUE", "J", Static | AccFinal},
       {"MAX_VALUE", "J", Static | AccFinal}},
      {{"valueOf", "(J)Ljava/lang/Long;", longValueOf, Static},
       {"longValue", "()J", boxValue},
       {"intValue", "()I", boxValue},
       {"hashCode", "()I", boxHashCode},
       {"equals", "(Ljava/lang/Object;)Z", boxEquals},
       {"toString", "()Ljava/lang/String;", boxToString},
       {"toString", "(J)Ljava/lang/String;", stringValueOfNative, Static},
       {"toHexString", "(J)Ljava/lang/String;", integerToStringRadix, Static},
       {"toBinaryString", "(J)Ljava/lang/String;", integerToStringRadix,
        Static},
       {"parseLong", "(Ljava/lang/String;)J", parseNumber, Static},
       {"compare", "(JJ)I", integerCompare, Static}});
  LongValue = offsetOf(LongClass, "value");
  LongClass->Statics[LongClass->findField("MIN_VALUE")->Offset] =
      Slot(INT64_MIN);
  LongClass->Statics[LongClass->findField("MAX_VALUE")->Offset] =
      Slot(INT64_MAX);
  BooleanClass = define(
      "java/lang/Boolean", Obj, {"java/io/Serializable"}, Final,
      {{"value", "Z", AccPrivate | AccFinal}},
      {{"valueOf", "(Z)Ljava/lang/Boolean;", booleanValueOf, Static},
       {"booleanValue", "()Z", boxValue},
       {"hashCode", "()I", boxHashCode},
       {"equals", "(Ljava/lang/Object;)Z", boxEquals},
       {"toString", "()Ljava/lang/String;", boxToString},
       {"toString", "(Z)Ljava/lang/String;", stringValueOfNative, Static}});
  BooleanValue = offsetOf(BooleanClass, "value");
  CharacterClass = define(
      "java/lang/Character", Obj, {"java/io/Serializable"}, Final,
      {{"value", "C", AccPrivate | AccFinal}},
      {{"valueOf", "(C)Ljava/lang/Character;", characterValueOf, Static},
       {"charValue", "()C", boxValue},
       {"hashCode", "()I", boxHashCode},
       {"equals", "(Ljava/lang/Object;)Z", boxEquals},
       {"toString", "()Ljava/lang/String;", boxToString},
       {"toString", "(C)Ljava/lang/String;", stringValueOfNative, Static}});
  CharacterValue = offsetOf(CharacterClass, "value");

  define("java/lang/Math", Obj, {}, Final, {},
         {{"abs", "(I)I", mathIntOp, Static},
          {"abs", "(J)J", mathIntOp, Static},
          {"min", "(II)I", mathIntOp, Static},
          {"max", "(II)I", mathIntOp, Static},
          {"min", "(JJ)J", mathIntOp, Static},
          {"max", "(JJ)J", mathIntOp, Static}});
  define("java/util/Objects", Obj, {}, Final, {},
         {{"requireNonNull", "(Ljava/lang/Object;)Ljava/lang/Object;",
           objectsRequireNonNull, Static},
          {"requireNonNull",
           "(Ljava/lang/Object;Ljava/lang/String;)Ljava/lang/Object;",
           objectsRequireNonNull, Static},
          {"equals", "(Ljava/lang/Object;Ljava/lang/Object;)Z", objectsEquals,
           Static},
          {"hashCode", "(Ljava/lang/Object;)I", objectsHashCode, Static}});

  std::initializer_list<MethodDef> Prints = {
      {"println", "()V", printNative},
      {"println", "(Ljava/lang/String;)V", printNative},
      {"println", "(Ljava/lang/Object;)V", printNative},
      {"println", "(I)V", printNative},
      {"println", "(J)V", printNative},
      {"println", "(Z)V", printNative},
      {"println", "(C)V", printNative},
      {"println", "([C)V", printNative},
      {"print", "(Ljava/lang/String;)V", printNative},
      {"print", "(Ljava/lang/Object;)V", printNative},
      {"print", "(I)V", printNative},
      {"print", "(J)V", printNative},
      {"print", "(Z)V", printNative},
      {"print", "(C)V", printNative},
      {"print", "([C)V", printNative},
      {"flush", "()V", printFlush}};
  PrintStreamClass =
      define("java/io/PrintStream", Obj, {}, Pub, {{"fd", "I"}}, Prints);
  PrintStreamFd = offsetOf(PrintStreamClass, "fd");
  Class *System =
      define("java/lang/System", Obj, {}, Final,
             {{"out", "Ljava/io/PrintStream;", Static | AccFinal},
              {"err", "Ljava/io/PrintStream;", Static | AccFinal}},
             {{"nanoTime", "()J", systemNanoTime, Static},
              {"currentTimeMillis", "()J", systemCurrentTimeMillis, Static},
              {"exit", "(I)V", systemExit, Static},
              {"identityHashCode", "(Ljava/lang/Object;)I",
               systemIdentityHashCode, Static},
              {"arraycopy", "(Ljava/lang/Object;ILjava/lang/Object;II)V",
               systemArraycopy, Static}});
  for (int Fd = 1; Fd <= 2; ++Fd) {
    Object *PS = allocObject(&BootThread, PrintStreamClass);
    slotAt(PS, PrintStreamFd) = Slot(Fd);
    System->Statics[System->findField(Fd == 1 ? "out" : "err")->Offset] =
        retA(PS);
  }

  ThreadClass = define(
      "java/lang/Thread", Obj, {"java/lang/Runnable"}, Pub,
      {{"name", "Ljava/lang/String;"},
       {"target", "Ljava/lang/Runnable;"},
       {"eetop", "J"},
       {"tid", "J"}},
      {{"<init>", "()V", threadInit},
       {"<init>", "(Ljava/lang/Runnable;)V", threadInit},
       {"<init>", "(Ljava/lang/Runnable;Ljava/lang/String;)V", threadInit},
       {"<init>", "(Ljava/lang/String;)V", threadInit},
       {"start", "()V", threadStart},
       {"run", "()V", threadRun},
       {"join", "()V", threadJoin, Final},
       {"join", "(J)V", threadJoin, Final},
       {"currentThread", "()Ljava/lang/Thread;", threadCurrent, Static},
       {"getName", "()Ljava/lang/String;", threadGetName, Final},
       {"setName", "(Ljava/lang/String;)V", threadSetName, Final},
       {"sleep", "(J)V", threadSleep, Static},
       {"interrupt", "()V", threadInterrupt},
       {"isInterrupted", "()Z", threadIsInterrupted},
       {"interrupted", "()Z", threadInterrupted, Static},
       {"isAlive", "()Z", threadIsAlive, Final},
       {"setDaemon", "(Z)V", threadSetDaemon, Final},
       {"isDaemon", "()Z", threadIsDaemon, Final},
       {"getId", "()J", threadGetId},
       {"yield", "()V", threadYield, Static},
       {"holdsLock", "(Ljava/lang/Object;)Z", threadHoldsLock, Static},
       {"onSpinWait", "()V", threadOnSpinWait, Static}});
  ThreadName = offsetOf(ThreadClass, "name");
  ThreadTarget = offsetOf(ThreadClass, "target");
  ThreadEetop = offsetOf(ThreadClass, "eetop");
  ThreadTid = offsetOf(ThreadClass, "tid");

  ThrowableClass = define(
      "java/lang/Throwable", Obj, {"java/io/Serializable"}, Pub,
      {{"detailMessage", "Ljava/lang/String;"},
       {"cause", "Ljava/lang/Throwable;"}},
      {{"<init>", "()V", throwableInit},
       {"<init>", "(Ljava/lang/String;)V", throwableInit},
       {"<init>", "(Ljava/lang/String;Ljava/lang/Throwable;)V", throwableInit},
       {"<init>", "(Ljava/lang/Throwable;)V", throwableInitCause},
       {"getMessage", "()Ljava/lang/String;", throwableGetMessage},
       {"getLocalizedMessage", "()Ljava/lang/String;",
        throwableGetLocalizedMessage},
       {"getCause", "()Ljava/lang/Throwable;", throwableGetCause},
       {"toString", "()Ljava/lang/String;", throwableToString},
       {"printStackTrace", "()V", throwablePrintStackTrace},
       {"addSuppressed", "(Ljava/lang/Throwable;)V", throwableAddSuppressed,
        Final},
       {"fillInStackTrace", "()Ljava/lang/Throwable;",
        throwableFillInStackTrace}});
  ThrowableMessage = offsetOf(ThrowableClass, "detailMessage");
  ThrowableCause = offsetOf(ThrowableClass, "cause");
  // Every throwable: its superclass, and its constructors (a message and a
  // cause for those that have them in the JDK).
  struct ThrowableDef {
    const char *Name, *Super;
    bool WithCause;
  };
  const ThrowableDef Throwables[] = {
      {"java/lang/Exception", "java/lang/Throwable", true},
      {"java/lang/Error", "java/lang/Throwable", true},
      {"java/lang/RuntimeException", "java/lang/Exception", true},
      {"java/lang/InterruptedException", "java/lang/Exception", false},
      {"java/lang/CloneNotSupportedException", "java/lang/Exception", false},
      {"java/lang/ReflectiveOperationException", "java/lang/Exception", true},
      {"java/lang/IllegalMonitorStateException", "java/lang/RuntimeException",
       false},
      {"java/lang/NullPointerException", "java/lang/RuntimeException", false},
      {"java/lang/ArithmeticException", "java/lang/RuntimeException", false},
      {"java/lang/IndexOutOfBoundsException", "java/lang/RuntimeException",
       false},
      {"java/lang/ArrayIndexOutOfBoundsException",
       "java/lang/IndexOutOfBoundsException", false},
      {"java/lang/StringIndexOutOfBoundsException",
       "java/lang/IndexOutOfBoundsException", false},
      {"java/lang/NegativeArraySizeException", "java/lang/RuntimeException",
       false},
      {"java/lang/ClassCastException", "java/lang/RuntimeException", false},
      {"java/lang/ArrayStoreException", "java/lang/RuntimeException", false},
      {"java/lang/IllegalArgumentException", "java/lang/RuntimeException",
       true},
      {"java/lang/IllegalThreadStateException",
       "java/lang/IllegalArgumentException", false},
      {"java/lang/NumberFormatException", "java/lang/IllegalArgumentException",
       false},
      {"java/lang/IllegalStateException", "java/lang/RuntimeException", true},
      {"java/lang/UnsupportedOperationException", "java/lang/RuntimeException",
       true},
      {"java/lang/VirtualMachineError", "java/lang/Error", true},
      {"java/lang/StackOverflowError", "java/lang/VirtualMachineError", false},
      {"java/lang/OutOfMemoryError", "java/lang/VirtualMachineError", false},
      {"java/lang/InternalError", "java/lang/VirtualMachineError", true},
      {"java/lang/LinkageError", "java/lang/Error", true},
      {"java/lang/NoClassDefFoundError", "java/lang/LinkageError", false},
      {"java/lang/ExceptionInInitializerError", "java/lang/LinkageError",
       false},
      {"java/lang/IncompatibleClassChangeError", "java/lang/LinkageError",
       false},
      {"java/lang/NoSuchMethodError", "java/lang/IncompatibleClassChangeError",
       false},
      {"java/lang/NoSuchFieldError", "java/lang/IncompatibleClassChangeError",
       false},
      {"java/lang/AbstractMethodError",
       "java/lang/IncompatibleClassChangeError", false},
      {"java/lang/InstantiationError", "java/lang/IncompatibleClassChangeError",
       false},
      {"java/lang/AssertionError", "java/lang/Error", false},
  };
  for (const ThrowableDef &D : Throwables) {
    if (D.WithCause)
      define(D.Name, D.Super, {}, Pub, {},
             {{"<init>", "()V", throwableInit},
              {"<init>", "(Ljava/lang/String;)V", throwableInit},
              {"<init>", "(Ljava/lang/String;Ljava/lang/Throwable;)V",
               throwableInit},
              {"<init>", "(Ljava/lang/Throwable;)V", throwableInitCause}});
    else
      define(D.Name, D.Super, {}, Pub, {},
             {{"<init>", "()V", throwableInit},
              {"<init>", "(Ljava/lang/String;)V", throwableInit}});
  }
  // AssertionError(Object), as `assert x : y` calls it.
  Class *AE = findLoadedClass("java/lang/AssertionError");
  {
    auto M = std::make_unique<Method>();
    M->Owner = AE;
    M->Name = "<init>";
    M->Descriptor = "(Ljava/lang/Object;)V";
    M->Flags = Pub;
    std::string E;
    parseMethodDescriptor(*M, E);
    M->Entry.store([](VMThread *T, Method *, Slot *A) -> Slot {
      Object *S = stringValueOf(T, argA(A, 1));
      if (S)
        setRef(argA(A, 0), ThrowableMessage, S);
      return 0;
    });
    AE->Methods.push_back(std::move(M));
  }

  Class *Enum = define(
      "java/lang/Enum", Obj, {"java/lang/Comparable", "java/io/Serializable"},
      Abs, {{"name", "Ljava/lang/String;"}, {"ordinal", "I"}},
      {{"<init>", "(Ljava/lang/String;I)V", enumInit, AccProtected},
       {"name", "()Ljava/lang/String;", enumName, Final},
       {"ordinal", "()I", enumOrdinal, Final},
       {"toString", "()Ljava/lang/String;", enumName},
       {"compareTo", "(Ljava/lang/Enum;)I", enumCompareTo, Final},
       {"compareTo", "(Ljava/lang/Object;)I", enumCompareTo},
       {"valueOf", "(Ljava/lang/Class;Ljava/lang/String;)Ljava/lang/Enum;",
        enumValueOf, Static}});
  EnumName = offsetOf(Enum, "name");
  EnumOrdinal = offsetOf(Enum, "ordinal");

  // What invokedynamic's bootstrap methods and javac's InnerClasses name;
  // Invokedynamic.cpp implements the two bootstraps themselves.
  for (const char *Name :
       {"java/lang/invoke/LambdaMetafactory",
        "java/lang/invoke/StringConcatFactory",
        "java/lang/invoke/MethodHandles", "java/lang/invoke/MethodHandle",
        "java/lang/invoke/MethodType", "java/lang/invoke/CallSite"})
    define(Name, Obj, {}, Abs, {}, {});
  define("java/lang/invoke/MethodHandles$Lookup", Obj, {}, Final, {}, {});

  // A few functional interfaces of java.util.function.
  struct FunctionalDef {
    const char *Name, *Method, *Desc;
  };
  const FunctionalDef Functionals[] = {
      {"java/util/function/Supplier", "get", "()Ljava/lang/Object;"},
      {"java/util/function/Function", "apply",
       "(Ljava/lang/Object;)Ljava/lang/Object;"},
      {"java/util/function/BiFunction", "apply",
       "(Ljava/lang/Object;Ljava/lang/Object;)Ljava/lang/Object;"},
      {"java/util/function/Consumer", "accept", "(Ljava/lang/Object;)V"},
      {"java/util/function/Predicate", "test", "(Ljava/lang/Object;)Z"},
      {"java/util/function/IntSupplier", "getAsInt", "()I"},
      {"java/util/function/LongSupplier", "getAsLong", "()J"},
      {"java/util/function/BooleanSupplier", "getAsBoolean", "()Z"},
      {"java/util/function/IntUnaryOperator", "applyAsInt", "(I)I"},
      {"java/util/function/IntBinaryOperator", "applyAsInt", "(II)I"},
      {"java/util/function/IntPredicate", "test", "(I)Z"},
      {"java/util/function/IntConsumer", "accept", "(I)V"},
      {"java/util/function/LongUnaryOperator", "applyAsLong", "(J)J"},
      {"java/util/function/LongBinaryOperator", "applyAsLong", "(JJ)J"},
  };
  for (const FunctionalDef &F : Functionals)
    define(F.Name, Obj, {}, Iface, {}, {{F.Method, F.Desc, nullptr, Abs}});

  Class *OOM = findLoadedClass("java/lang/OutOfMemoryError");
  OutOfMemory = allocObject(&BootThread, OOM);
  setRef(OutOfMemory, ThrowableMessage,
         newStringUtf8(&BootThread, "Java heap space"));
}

} // namespace jitlock::java
