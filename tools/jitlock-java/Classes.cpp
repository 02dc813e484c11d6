//===- Classes.cpp - Loading, linking, resolution and initialization ------===//
//
// loadClass loads the named class and, before returning, every class its
// constant pool names (transitively), links them (field layout, vtable,
// itable) and verifies every method of each (Interpreter.cpp's
// verifyClass): a program outside the subset is refused before any of it
// runs. Classes the VM makes later (array classes, lambda classes) are
// linked under the same lock.
//
// Static initialization follows JVMS 5.5 with the class's mirror (its
// java.lang.Class object) as the initialization lock: a jitlock monitor,
// waited on by threads that find another thread initializing the class.
//
//===----------------------------------------------------------------------===//
#include "VM.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <sstream>

namespace jitlock::java {

namespace {

std::recursive_mutex ClassLock;
std::unordered_map<std::string, std::unique_ptr<Class>> &classes() {
  static std::unordered_map<std::string, std::unique_ptr<Class>> Map;
  return Map;
}

bool readFile(const std::string &Path, std::vector<uint8_t> &Out) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return false;
  Out.assign(std::istreambuf_iterator<char>(In),
             std::istreambuf_iterator<char>());
  return true;
}

/// Every interface `C` implements, transitively, in a stable order.
void allInterfaces(Class *C, std::vector<Class *> &Out) {
  for (Class *I : C->Interfaces) {
    if (std::find(Out.begin(), Out.end(), I) == Out.end())
      Out.push_back(I);
    allInterfaces(I, Out);
  }
  if (C->Super)
    allInterfaces(C->Super, Out);
}

Method *findInVtable(Class *C, const std::string &Name, const std::string &Desc,
                     int &Index) {
  for (size_t I = 0; I != C->Vtable.size(); ++I)
    if (C->Vtable[I]->Name == Name && C->Vtable[I]->Descriptor == Desc) {
      Index = int(I);
      return C->Vtable[I];
    }
  Index = -1;
  return nullptr;
}

bool isVirtual(const Method &M) {
  return !M.isStatic() && !(M.Flags & AccPrivate) && M.Name[0] != '<';
}

std::vector<Class *> PendingVerification;

Class *loadLocked(const std::string &Name, std::string &Error);

/// The classes a class file names, loaded so that verification can check
/// every reference.
bool loadReferenced(Class *C, std::string &Error) {
  const ClassFile &F = *C->File;
  for (unsigned I = 1; I < F.Cp.size(); ++I) {
    if (F.Cp[I].Tag != CpClass)
      continue;
    std::string N = *F.utf8(F.Cp[I].A);
    size_t Dims = N.find_first_not_of('[');
    if (Dims == std::string::npos) {
      Error = "malformed class name '" + N + "' in " + C->javaName();
      return false;
    }
    if (Dims > 0) {
      if (N[Dims] != 'L')
        continue;
      N = N.substr(Dims + 1, N.size() - Dims - 2);
    }
    if (!loadLocked(N, Error)) {
      Error += " (referenced by " + C->javaName() + ")";
      return false;
    }
  }
  return true;
}

Class *defineFromFile(const std::string &Name, std::string &Error) {
  std::vector<uint8_t> Bytes;
  std::string Path;
  bool Found = false;
  std::stringstream Dirs(Options.ClassPath);
  std::string Dir;
  while (!Found && std::getline(Dirs, Dir, ':'))
    if (!Dir.empty()) {
      Path = Dir + "/" + Name + ".class";
      Found = readFile(Path, Bytes);
    }
  if (!Found) {
    std::string Dotted = Name;
    std::replace(Dotted.begin(), Dotted.end(), '/', '.');
    if (Name.rfind("java/", 0) == 0 || Name.rfind("javax/", 0) == 0 ||
        Name.rfind("jdk/", 0) == 0 || Name.rfind("sun/", 0) == 0)
      Error =
          "class " + Dotted + " is not part of jitlock-java's built-in library";
    else
      Error = "class " + Dotted + " not found on the class path '" +
              Options.ClassPath + "'";
    return nullptr;
  }
  auto F = std::make_unique<ClassFile>();
  if (!parseClassFile(Bytes, *F, Error)) {
    Error = Path + ": " + Error;
    return nullptr;
  }
  if (F->Name != Name) {
    Error = Path + ": contains class " + F->Name + ", not " + Name;
    return nullptr;
  }
  auto Owned = std::make_unique<Class>();
  Class *C = Owned.get();
  C->Name = Name;
  C->Flags = F->Flags;
  classes()[Name] = std::move(Owned);
  if (!F->SuperName.empty()) {
    C->Super = loadLocked(F->SuperName, Error);
    if (!C->Super)
      return nullptr;
    if (C->Super->isInterface() || (C->Super->Flags & AccFinal)) {
      Error =
          "class " + C->javaName() + " cannot extend " + C->Super->javaName();
      return nullptr;
    }
  }
  for (const std::string &I : F->Interfaces) {
    Class *IC = loadLocked(I, Error);
    if (!IC)
      return nullptr;
    if (!IC->isInterface()) {
      Error = "class " + C->javaName() + " implements " + IC->javaName() +
              ", which is not an interface";
      return nullptr;
    }
    C->Interfaces.push_back(IC);
  }
  // A Field and a Method start as their class file entry does.
  auto StartMember = [C](auto &Member, const auto &Info) {
    Member.Owner = C;
    Member.Name = Info.Name;
    Member.Descriptor = Info.Descriptor;
    Member.Flags = Info.Flags;
  };
  for (const FieldInfo &FI : F->Fields) {
    auto Fld = std::make_unique<Field>();
    StartMember(*Fld, FI);
    if (FI.Descriptor.empty() || FI.Descriptor.find_first_of("FD") ==
                                     FI.Descriptor.find_first_not_of('[')) {
      Error = "field " + C->javaName() + "." + FI.Name + " has type " +
              FI.Descriptor +
              ": float and double are not in jitlock-java's subset";
      return nullptr;
    }
    C->Fields.push_back(std::move(Fld));
  }
  for (const MethodInfo &MI : F->Methods) {
    auto M = std::make_unique<Method>();
    StartMember(*M, MI);
    M->MaxStack = MI.MaxStack;
    M->MaxLocals = MI.MaxLocals;
    M->Code = MI.Code;
    M->Handlers = MI.Handlers;
    std::string Why;
    if (!parseMethodDescriptor(*M, Why)) {
      Error = "method " + C->javaName() + "." + MI.Name + ": " + Why;
      return nullptr;
    }
    if (M->Flags & AccNative) {
      Error = "method " + M->qualifiedName() +
              " is native: jitlock-java has no native interface";
      return nullptr;
    }
    if (!M->isAbstract() && !MI.HasCode) {
      Error = "method " + M->qualifiedName() + " has no Code attribute";
      return nullptr;
    }
    C->Methods.push_back(std::move(M));
  }
  C->File = std::move(F);
  C->CpCache.reset(new CpCacheEntry[C->File->Cp.size()]);
  linkClass(C);
  PendingVerification.push_back(C);
  if (!loadReferenced(C, Error))
    return nullptr;
  return C;
}

Class *loadLocked(const std::string &Name, std::string &Error) {
  auto It = classes().find(Name);
  if (It != classes().end())
    return It->second.get();
  if (!Name.empty() && Name[0] == '[') {
    Class *A = arrayClassOf(Name.substr(1));
    if (!A)
      Error = "malformed array class name " + Name;
    return A;
  }
  return defineFromFile(Name, Error);
}

} // namespace

bool parseMethodDescriptor(Method &M, std::string &Error) {
  const std::string &D = M.Descriptor;
  M.ArgKinds.clear();
  M.ArgSlots = M.isStatic() ? 0 : 1;
  size_t I = 0;
  auto Bad = [&](const char *Why) {
    Error = std::string(Why) + " in descriptor " + D;
    return false;
  };
  if (D.empty() || D[I++] != '(')
    return Bad("no '('");
  auto One = [&](bool AllowVoid) -> char {
    if (I >= D.size())
      return 0;
    char C = D[I];
    if (C == 'V' && AllowVoid) {
      ++I;
      return 'V';
    }
    size_t Dims = 0;
    while (I < D.size() && D[I] == '[')
      ++I, ++Dims;
    if (I >= D.size())
      return 0;
    C = D[I++];
    if (C == 'L') {
      size_t End = D.find(';', I);
      if (End == std::string::npos)
        return 0;
      I = End + 1;
      return 'L';
    }
    if (C == 'F' || C == 'D')
      return 'f';
    if (!strchr("ZBCSIJ", C))
      return 0;
    return Dims ? 'L' : kindOf(C);
  };
  while (I < D.size() && D[I] != ')') {
    char K = One(false);
    if (!K)
      return Bad("malformed parameter");
    if (K == 'f')
      return Bad("float or double (not in jitlock-java's subset)");
    M.ArgKinds.push_back(K);
    M.ArgSlots += K == 'J' ? 2 : 1;
  }
  if (I >= D.size())
    return Bad("no ')'");
  ++I;
  char R = One(true);
  if (!R || I != D.size())
    return Bad("malformed return type");
  if (R == 'f')
    return Bad("float or double (not in jitlock-java's subset)");
  M.ReturnKind = R;
  return true;
}

char kindOf(char C) {
  switch (C) {
  case 'Z':
  case 'B':
  case 'C':
  case 'S':
  case 'I':
    return 'I';
  case 'J':
    return 'J';
  case 'L':
  case '[':
    return 'L';
  case 'V':
    return 'V';
  default:
    return 0;
  }
}

std::string Class::javaName() const {
  std::string N = Name;
  std::replace(N.begin(), N.end(), '/', '.');
  return N;
}

std::string Method::qualifiedName() const {
  return Owner->javaName() + "." + Name + Descriptor;
}

Method *Class::findMethod(const std::string &N, const std::string &D) const {
  for (const auto &M : Methods)
    if (M->Name == N && M->Descriptor == D)
      return M.get();
  return nullptr;
}

Field *Class::findField(const std::string &N) const {
  for (const auto &F : Fields)
    if (F->Name == N)
      return F.get();
  return nullptr;
}

bool Class::isSubclassOf(const Class *Other) const {
  for (const Class *C = this; C; C = C->Super)
    if (C == Other)
      return true;
  return false;
}

void linkClass(Class *C) {
  std::lock_guard<std::recursive_mutex> G(ClassLock);
  // A class read from a file is registered (and owned) before its
  // superclass loads; the VM's own classes are registered here.
  std::unique_ptr<Class> &Owned = classes()[C->Name];
  if (Owned.get() != C)
    Owned.reset(C);
  // Fields: one 8-byte slot each, after the superclass's.
  uint32_t Size = C->Super ? C->Super->InstanceSize : sizeof(Object);
  uint32_t NStatics = 0;
  for (auto &F : C->Fields) {
    F->Owner = C;
    if (F->isStatic()) {
      F->Offset = NStatics++;
    } else {
      F->Offset = Size;
      Size += 8;
    }
  }
  C->InstanceSize = Size;
  C->Statics.reset(new Slot[NStatics ? NStatics : 1]());
  // The vtable: the superclass's, overridden and extended by our methods,
  // then the interface methods nothing in the class chain implements.
  if (C->Super)
    C->Vtable = C->Super->Vtable;
  for (auto &M : C->Methods) {
    M->Owner = C;
    if (!isVirtual(*M) || C->isInterface())
      continue;
    int Index;
    if (findInVtable(C, M->Name, M->Descriptor, Index)) {
      C->Vtable[Index] = M.get();
    } else {
      Index = int(C->Vtable.size());
      C->Vtable.push_back(M.get());
    }
    M->VtableIndex = Index;
  }
  std::vector<Class *> Ifaces;
  allInterfaces(C, Ifaces);
  if (!C->isInterface()) {
    for (Class *I : Ifaces)
      for (auto &IM : I->Methods) {
        if (!isVirtual(*IM))
          continue;
        int Index;
        Method *Impl = findInVtable(C, IM->Name, IM->Descriptor, Index);
        if (!Impl || (Impl->isAbstract() && Impl->Owner->isInterface() &&
                      !IM->isAbstract())) {
          // The most specific default: the first non-abstract one found.
          Method *Default = IM.get();
          for (Class *J : Ifaces)
            if (Method *D = J->findMethod(IM->Name, IM->Descriptor))
              if (!D->isAbstract()) {
                Default = D;
                break;
              }
          if (Impl)
            C->Vtable[Index] = Default;
          else
            C->Vtable.push_back(Default);
        }
      }
    for (Class *I : Ifaces)
      for (auto &IM : I->Methods) {
        if (!isVirtual(*IM))
          continue;
        int Index;
        if (Method *Impl = findInVtable(C, IM->Name, IM->Descriptor, Index))
          C->Itable[IM.get()] = Impl;
      }
  }
  if (ClassClass)
    createMirror(C);
}

Class *findLoadedClass(const std::string &Name) {
  std::lock_guard<std::recursive_mutex> G(ClassLock);
  auto It = classes().find(Name);
  return It == classes().end() ? nullptr : It->second.get();
}

Class *loadClass(const std::string &Name, std::string &Error) {
  std::lock_guard<std::recursive_mutex> G(ClassLock);
  PendingVerification.clear();
  Class *C = loadLocked(Name, Error);
  if (!C)
    return nullptr;
  std::vector<Class *> ToVerify;
  ToVerify.swap(PendingVerification);
  for (Class *V : ToVerify)
    if (!verifyClass(V, Error))
      return nullptr;
  return C;
}

Class *arrayClassOf(const std::string &ElemDesc) {
  std::lock_guard<std::recursive_mutex> G(ClassLock);
  std::string Name = "[" + ElemDesc;
  auto It = classes().find(Name);
  if (It != classes().end())
    return It->second.get();
  if (ElemDesc.empty())
    return nullptr;
  auto C = std::make_unique<Class>();
  C->Name = Name;
  C->IsArray = true;
  C->Flags = AccPublic | AccFinal | AccAbstract;
  C->Super = ObjectClass;
  char E = ElemDesc[0];
  if (E == 'L' || E == '[') {
    std::string ElemName =
        E == 'L' ? ElemDesc.substr(1, ElemDesc.size() - 2) : ElemDesc;
    if (E == 'L' && (ElemDesc.size() < 3 || ElemDesc.back() != ';'))
      return nullptr;
    std::string Error;
    C->Elem = loadLocked(ElemName, Error);
    if (!C->Elem)
      return nullptr;
    C->ElemKind = 'L';
    C->ElemSize = 8;
  } else {
    if (ElemDesc.size() != 1 || !strchr("ZBCSIJ", E))
      return nullptr;
    C->ElemKind = E;
    C->ElemSize = E == 'J' ? 8 : E == 'I' ? 4 : (E == 'C' || E == 'S') ? 2 : 1;
  }
  C->Init.store(InitState::Initialized);
  Class *Raw = C.release();
  linkClass(Raw);
  if (Raw->Elem)
    Raw->Elem->ArrayOf.store(Raw, std::memory_order_release);
  return Raw;
}

Class *arrayClassFor(Class *Elem) {
  if (Class *A = Elem->ArrayOf.load(std::memory_order_acquire))
    return A;
  return arrayClassOf(Elem->IsArray ? Elem->Name : "L" + Elem->Name + ";");
}

Method *resolveMethod(Class *C, const std::string &Name,
                      const std::string &Desc) {
  for (Class *K = C; K; K = K->Super)
    if (Method *M = K->findMethod(Name, Desc))
      return M;
  std::vector<Class *> Ifaces;
  allInterfaces(C, Ifaces);
  Method *Abstract = nullptr;
  for (Class *I : Ifaces)
    if (Method *M = I->findMethod(Name, Desc)) {
      if (!M->isAbstract())
        return M;
      if (!Abstract)
        Abstract = M;
    }
  if (Abstract)
    return Abstract;
  if (C->isInterface())
    return ObjectClass->findMethod(Name, Desc);
  return nullptr;
}

Field *resolveField(Class *C, const std::string &Name) {
  for (Class *K = C; K; K = K->Super) {
    if (Field *F = K->findField(Name))
      return F;
    std::vector<Class *> Ifaces;
    allInterfaces(K, Ifaces);
    for (Class *I : Ifaces)
      if (Field *F = I->findField(Name))
        return F;
  }
  return nullptr;
}

Method *selectVirtual(Object *Receiver, Method *M) {
  return selectVirtualIn(Receiver->Cls, M);
}

Method *selectVirtualIn(Class *C, Method *M) {
  if (M->Flags & AccPrivate)
    return M;
  if (M->VtableIndex >= 0 && !M->Owner->isInterface())
    return C->Vtable[M->VtableIndex];
  auto It = C->Itable.find(M);
  if (It != C->Itable.end())
    return It->second;
  return M;
}

bool isAssignable(Class *From, Class *To) {
  if (From == To || To == ObjectClass)
    return true;
  if (From->IsArray) {
    if (!To->IsArray)
      return To->Name == "java/lang/Cloneable" ||
             To->Name == "java/io/Serializable";
    if (From->ElemKind != 'L' || To->ElemKind != 'L')
      return From->ElemKind == To->ElemKind;
    return isAssignable(From->Elem, To->Elem);
  }
  if (To->isInterface()) {
    std::vector<Class *> Ifaces;
    allInterfaces(From, Ifaces);
    return std::find(Ifaces.begin(), Ifaces.end(), To) != Ifaces.end();
  }
  return From->isSubclassOf(To);
}

bool isInstanceOf(Object *O, Class *C) { return isAssignable(O->Cls, C); }

bool initializeClass(VMThread *T, Class *C) {
  if (C->Init.load(std::memory_order_acquire) == InitState::Initialized)
    return true;
  Object *Lock = C->Mirror;
  // Exits and waits on the lock cannot fail: this thread holds it.
  jitlock_rt_monitor_enter(T->Rt, Lock);
  for (;;) {
    InitState S = C->Init.load(std::memory_order_acquire);
    if (S == InitState::BeingInitialized && C->InitThread != T) {
      jitlock_rt_wait(T->Rt, Lock);
      continue;
    }
    if (S == InitState::BeingInitialized || S == InitState::Initialized) {
      jitlock_rt_monitor_exit(T->Rt, Lock);
      return true;
    }
    if (S == InitState::Erroneous) {
      jitlock_rt_monitor_exit(T->Rt, Lock);
      throwNew(T, "java/lang/NoClassDefFoundError",
               "Could not initialize class " + C->javaName());
      return false;
    }
    break;
  }
  C->Init.store(InitState::BeingInitialized, std::memory_order_relaxed);
  C->InitThread = T;
  jitlock_rt_monitor_exit(T->Rt, Lock);

  bool Ok = true;
  if (!C->isInterface() && C->Super && !initializeClass(T, C->Super))
    Ok = false;
  if (Ok && C->File) {
    // Constant fields first, as JVMS 5.5 step 6 says.
    for (auto &F : C->Fields) {
      if (!F->isStatic())
        continue;
      const FieldInfo *FI = nullptr;
      for (const FieldInfo &X : C->File->Fields)
        if (X.Name == F->Name)
          FI = &X;
      if (!FI || !FI->ConstantValue || FI->ConstantValue >= C->File->Cp.size())
        continue;
      const CpEntry &E = C->File->Cp[FI->ConstantValue];
      if (E.Tag == CpInteger)
        C->Statics[F->Offset] = Slot(uint32_t(E.Int));
      else if (E.Tag == CpLong)
        C->Statics[F->Offset] = Slot(E.Long);
      else if (E.Tag == CpString) {
        std::u16string Chars;
        decodeModifiedUtf8(*C->File->utf8(E.A), Chars);
        Object *S = internString(T, Chars);
        if (!S) {
          Ok = false;
          break;
        }
        C->Statics[F->Offset] = Slot(uintptr_t(S));
      }
    }
    if (Ok)
      if (Method *Clinit = C->findMethod("<clinit>", "()V")) {
        callMethod(T, Clinit, nullptr);
        Ok = !T->Pending;
      }
  }
  Object *Failure = nullptr;
  if (!Ok) {
    Failure = T->Pending;
    T->Pending = nullptr;
    static Class *Error = findLoadedClass("java/lang/Error");
    if (Failure && !isInstanceOf(Failure, Error)) {
      Object *Cause = Failure;
      throwNew(T, "java/lang/ExceptionInInitializerError");
      Failure = T->Pending;
      T->Pending = nullptr;
      if (Failure) {
        Field *CauseField = resolveField(Failure->Cls, "cause");
        reinterpret_cast<Slot *>(reinterpret_cast<char *>(Failure) +
                                 CauseField->Offset)[0] =
            Slot(uintptr_t(Cause));
      }
    }
  }
  jitlock_rt_monitor_enter(T->Rt, Lock);
  C->InitThread = nullptr;
  C->Init.store(Ok ? InitState::Initialized : InitState::Erroneous,
                std::memory_order_release);
  jitlock_rt_notify_all(T->Rt, Lock);
  jitlock_rt_monitor_exit(T->Rt, Lock);
  if (!Ok)
    T->Pending = Failure;
  return Ok;
}

} // namespace jitlock::java
