//===- Invokedynamic.cpp - The two bootstrap methods javac uses -----------===//
//
// LambdaMetafactory.metafactory and StringConcatFactory.
// makeConcatWithConstants, implemented by the VM instead of by method
// handles. Each call site is linked when its class is verified: a lambda
// call site gets a class of its own (Outer$$Lambda$N) implementing the
// functional interface, with one field per captured value and one native
// method that calls the implementation method with the captured values and
// its own arguments (boxing or unboxing where the erased interface type and
// the implementation's differ). A concatenation call site keeps its recipe.
// Any other bootstrap method is refused.
//
//===----------------------------------------------------------------------===//
#include "VM.h"

#include <algorithm>

namespace jitlock::java {

namespace {

/// The parameter descriptors and return descriptor of a method descriptor
/// already checked by parseMethodDescriptor.
void splitDescriptor(const std::string &D, std::vector<std::string> &Params,
                     std::string &Ret) {
  Params.clear();
  size_t I = 1;
  auto One = [&] {
    size_t Begin = I;
    while (D[I] == '[')
      ++I;
    if (D[I] == 'L')
      I = D.find(';', I);
    ++I;
    return D.substr(Begin, I - Begin);
  };
  while (D[I] != ')')
    Params.push_back(One());
  ++I;
  Ret = One();
}

char kindOfDesc(const std::string &D) { return kindOf(D[0]); }

struct CallSite {
  bool IsLambda = false;
  unsigned ArgSlots = 0;
  std::vector<std::string> ArgDescs; // the call site's own arguments
  // A lambda.
  Class *LambdaClass = nullptr;
  std::vector<Field *> Captures;
  Method *Impl = nullptr;
  unsigned ImplKind = 0;
  std::vector<std::string> SamParams; // the instantiated interface method
  std::string SamRet;
  // A concatenation.
  std::u16string Recipe;
  std::vector<std::u16string> Constants;
};

std::atomic<unsigned> LambdaCount{0};

/// Converts `V` of descriptor `From` to descriptor `To` (boxing,
/// unboxing, widening), appending it to `Out` in slot form. False with an
/// exception pending.
bool adapt(VMThread *T, const std::string &From, const std::string &To, Slot V,
           std::vector<Slot> &Out) {
  char FK = kindOfDesc(From), TK = kindOfDesc(To);
  if (FK == 'L' && TK != 'L') {
    auto *O = reinterpret_cast<Object *>(V);
    if (!O) {
      throwNew(T, "java/lang/NullPointerException",
               "a null value where a " + To + " was expected");
      return false;
    }
    Slot Raw =
        *reinterpret_cast<Slot *>(reinterpret_cast<char *>(O) + sizeof(Object));
    bool IsLong = O->Cls->Name == "java/lang/Long";
    int64_t Wide = IsLong ? int64_t(Raw) : int64_t(int32_t(Raw));
    V = TK == 'J' ? Slot(Wide) : Slot(uint32_t(Wide));
  } else if (FK != 'L' && TK == 'L') {
    Object *Box = boxInt(T, From[0], V);
    if (!Box)
      return false;
    V = Slot(uintptr_t(Box));
  } else if (FK == 'I' && TK == 'J') {
    V = Slot(int64_t(int32_t(V)));
  }
  Out.push_back(V);
  if (TK == 'J')
    Out.push_back(0);
  return true;
}

Slot lambdaEntry(VMThread *T, Method *M, Slot *Args) {
  auto *S = static_cast<CallSite *>(M->NativeData);
  Object *Self = reinterpret_cast<Object *>(Args[0]);
  Method *Impl = S->Impl;
  // What the implementation takes: its receiver (for instance methods),
  // then its declared parameters.
  std::vector<std::string> Want, ImplParams;
  std::string ImplRet;
  splitDescriptor(Impl->Descriptor, ImplParams, ImplRet);
  if (S->ImplKind != 6 && S->ImplKind != 8)
    Want.push_back("L" + Impl->Owner->Name + ";");
  Want.insert(Want.end(), ImplParams.begin(), ImplParams.end());
  // What there is: the captured values, then the interface's arguments.
  std::vector<std::pair<std::string, Slot>> Have;
  for (Field *F : S->Captures)
    Have.push_back({F->Descriptor,
                    *reinterpret_cast<Slot *>(reinterpret_cast<char *>(Self) +
                                              F->Offset)});
  unsigned Slot_ = 1;
  for (const std::string &P : S->SamParams) {
    Have.push_back({P, Args[Slot_]});
    Slot_ += kindOfDesc(P) == 'J' ? 2 : 1;
  }
  if (Have.size() != Want.size()) {
    throwNew(T, "java/lang/InternalError", "lambda arity mismatch");
    return 0;
  }
  std::vector<Slot> Call;
  Object *New = nullptr;
  if (S->ImplKind == 8) {
    if (!initializeClass(T, Impl->Owner))
      return 0;
    New = allocObject(T, Impl->Owner);
    if (!New)
      return 0;
    Call.push_back(Slot(uintptr_t(New)));
  }
  for (size_t I = 0; I != Have.size(); ++I)
    if (!adapt(T, Have[I].first, Want[I], Have[I].second, Call))
      return 0;
  Call.push_back(0);
  Method *Target = Impl;
  if (S->ImplKind == 6) {
    if (!initializeClass(T, Impl->Owner))
      return 0;
  } else if (S->ImplKind != 8) {
    auto *Recv = reinterpret_cast<Object *>(Call[0]);
    if (!Recv) {
      throwNew(T, "java/lang/NullPointerException");
      return 0;
    }
    if (S->ImplKind == 5 || S->ImplKind == 9)
      Target = selectVirtual(Recv, Impl);
  }
  Slot R = callMethod(T, Target, Call.data());
  if (T->Pending)
    return 0;
  if (New)
    return Slot(uintptr_t(New));
  if (S->SamRet == "V")
    return 0;
  std::vector<Slot> Out;
  if (!adapt(T, ImplRet, S->SamRet, R, Out))
    return 0;
  return Out[0];
}

bool linkLambda(Class *C, const CpEntry &Indy, const BootstrapMethod &BM,
                CallSite &S, std::string &Error) {
  const ClassFile &F = *C->File;
  if (BM.Args.size() != 3 || F.Cp[BM.Args[0]].Tag != CpMethodType ||
      F.Cp[BM.Args[1]].Tag != CpMethodHandle ||
      F.Cp[BM.Args[2]].Tag != CpMethodType) {
    Error = "LambdaMetafactory.metafactory with unexpected arguments";
    return false;
  }
  const std::string &Name = *F.utf8(F.Cp[Indy.B].A);
  const std::string &SamErased = *F.utf8(F.Cp[BM.Args[0]].A);
  const std::string &SamInstantiated = *F.utf8(F.Cp[BM.Args[2]].A);
  const CpEntry &MH = F.Cp[BM.Args[1]];
  S.ImplKind = MH.Kind;
  if (MH.Kind < 5) {
    Error = "a lambda implemented by a field access";
    return false;
  }
  const CpEntry &Ref = F.Cp[MH.A];
  const std::string &Owner = *F.className(Ref.A);
  Class *K = findLoadedClass(Owner);
  if (!K) {
    Error = "lambda implementation class " + Owner + " is not loaded";
    return false;
  }
  const std::string &ImplName = *F.utf8(F.Cp[Ref.B].A);
  const std::string &ImplDesc = *F.utf8(F.Cp[Ref.B].B);
  S.Impl = resolveMethod(K, ImplName, ImplDesc);
  if (!S.Impl) {
    Error = "lambda implementation " + Owner + "." + ImplName + ImplDesc +
            " not found";
    return false;
  }
  Method Probe;
  Probe.Descriptor = SamInstantiated;
  Probe.Flags = AccStatic;
  if (!parseMethodDescriptor(Probe, Error))
    return false;
  splitDescriptor(SamInstantiated, S.SamParams, S.SamRet);
  std::string IfaceDesc;
  std::vector<std::string> Dummy;
  splitDescriptor(*F.utf8(F.Cp[Indy.B].B), Dummy, IfaceDesc);
  Class *Iface = findLoadedClass(IfaceDesc.substr(1, IfaceDesc.size() - 2));
  if (!Iface || !Iface->isInterface()) {
    Error = "lambda of " + IfaceDesc + ", which is not a loaded interface";
    return false;
  }
  if (!resolveMethod(Iface, Name, SamErased)) {
    Error =
        "interface " + Iface->javaName() + " has no method " + Name + SamErased;
    return false;
  }
  // The lambda's class: one field per captured value, one method.
  auto *L = new Class;
  L->Name = C->Name + "$$Lambda$" + std::to_string(++LambdaCount);
  L->Super = ObjectClass;
  L->Interfaces.push_back(Iface);
  L->Flags = AccPublic | AccFinal | AccSynthetic;
  L->Builtin = true;
  L->Init.store(InitState::Initialized);
  for (size_t I = 0; I != S.ArgDescs.size(); ++I) {
    auto Fld = std::make_unique<Field>();
    Fld->Name = "arg$" + std::to_string(I + 1);
    Fld->Descriptor = S.ArgDescs[I];
    Fld->Flags = AccPrivate | AccFinal;
    L->Fields.push_back(std::move(Fld));
  }
  auto M = std::make_unique<Method>();
  M->Owner = L;
  M->Name = Name;
  M->Descriptor = SamErased;
  M->Flags = AccPublic;
  if (!parseMethodDescriptor(*M, Error))
    return false;
  M->NativeData = &S;
  M->Entry.store(lambdaEntry);
  L->Methods.push_back(std::move(M));
  linkClass(L);
  for (auto &Fld : L->Fields)
    S.Captures.push_back(Fld.get());
  S.LambdaClass = L;
  return true;
}

bool linkConcat(Class *C, const BootstrapMethod &BM, CallSite &S,
                std::string &Error) {
  const ClassFile &F = *C->File;
  if (BM.Args.empty() || F.Cp[BM.Args[0]].Tag != CpString) {
    Error = "makeConcatWithConstants without a recipe";
    return false;
  }
  decodeModifiedUtf8(*F.utf8(F.Cp[BM.Args[0]].A), S.Recipe);
  for (size_t I = 1; I < BM.Args.size(); ++I) {
    const CpEntry &E = F.Cp[BM.Args[I]];
    std::u16string Text;
    if (E.Tag == CpString)
      decodeModifiedUtf8(*F.utf8(E.A), Text);
    else if (E.Tag == CpInteger)
      for (char Ch : std::to_string(E.Int))
        Text.push_back(char16_t(Ch));
    else if (E.Tag == CpLong)
      for (char Ch : std::to_string(E.Long))
        Text.push_back(char16_t(Ch));
    else {
      Error = "makeConcatWithConstants with a constant of tag " +
              std::to_string(E.Tag);
      return false;
    }
    S.Constants.push_back(Text);
  }
  size_t Args = 0, Consts = 0;
  for (char16_t Ch : S.Recipe)
    Args += Ch == 1, Consts += Ch == 2;
  if (Args != S.ArgDescs.size() || Consts != S.Constants.size()) {
    Error = "string concatenation recipe does not match its arguments";
    return false;
  }
  return true;
}

CallSite *siteOf(Class *C, unsigned CpIndex) {
  return static_cast<CallSite *>(
      C->CpCache[CpIndex].Resolved.load(std::memory_order_acquire));
}

} // namespace

bool checkCallSite(Class *C, unsigned CpIndex, std::string &Error) {
  if (siteOf(C, CpIndex))
    return true;
  const ClassFile &F = *C->File;
  const CpEntry &Indy = F.Cp[CpIndex];
  if (Indy.A >= F.Bootstraps.size()) {
    Error =
        "bootstrap method index " + std::to_string(Indy.A) + " out of range";
    return false;
  }
  const BootstrapMethod &BM = F.Bootstraps[Indy.A];
  const CpEntry &MH = F.Cp[BM.MethodHandle];
  const CpEntry &Ref = F.Cp[MH.A];
  const std::string &Owner = *F.className(Ref.A);
  const std::string &Name = *F.utf8(F.Cp[Ref.B].A);
  auto S = std::make_unique<CallSite>();
  const std::string &Desc = *F.utf8(F.Cp[Indy.B].B);
  Method Probe;
  Probe.Descriptor = Desc;
  Probe.Flags = AccStatic;
  if (!parseMethodDescriptor(Probe, Error))
    return false;
  std::string Ret;
  splitDescriptor(Desc, S->ArgDescs, Ret);
  S->ArgSlots = Probe.ArgSlots;
  bool Ok;
  if (MH.Kind == 6 && Owner == "java/lang/invoke/LambdaMetafactory" &&
      Name == "metafactory") {
    S->IsLambda = true;
    Ok = linkLambda(C, Indy, BM, *S, Error);
  } else if (MH.Kind == 6 && Owner == "java/lang/invoke/StringConcatFactory" &&
             Name == "makeConcatWithConstants") {
    Ok = Ret == "Ljava/lang/String;" && linkConcat(C, BM, *S, Error);
  } else {
    std::string Dotted = Owner;
    std::replace(Dotted.begin(), Dotted.end(), '/', '.');
    Error = "invokedynamic with bootstrap method " + Dotted + "." + Name +
            ", which jitlock-java does not implement";
    return false;
  }
  if (!Ok)
    return false;
  C->CpCache[CpIndex].Resolved.store(S.release(), std::memory_order_release);
  return true;
}

unsigned callSiteArgSlots(Class *C, unsigned CpIndex) {
  return siteOf(C, CpIndex)->ArgSlots;
}

Slot invokeDynamic(VMThread *T, Class *C, unsigned CpIndex, Slot *Args) {
  CallSite *S = siteOf(C, CpIndex);
  if (S->IsLambda) {
    Object *L = allocObject(T, S->LambdaClass);
    if (!L)
      return 0;
    unsigned Slot_ = 0;
    for (Field *F : S->Captures) {
      *reinterpret_cast<Slot *>(reinterpret_cast<char *>(L) + F->Offset) =
          Args[Slot_];
      Slot_ += kindOfDesc(F->Descriptor) == 'J' ? 2 : 1;
    }
    return Slot(uintptr_t(L));
  }
  std::u16string Out;
  size_t Arg = 0, Const = 0;
  unsigned Slot_ = 0;
  for (char16_t Ch : S->Recipe) {
    if (Ch == 1) {
      const std::string &D = S->ArgDescs[Arg++];
      bool Failed;
      Out += textOf(T, D[0] == '[' ? 'L' : D[0], Args[Slot_], Failed);
      if (Failed)
        return 0;
      Slot_ += D[0] == 'J' ? 2 : 1;
    } else if (Ch == 2) {
      Out += S->Constants[Const++];
    } else {
      Out.push_back(Ch);
    }
  }
  return Slot(uintptr_t(newString(T, Out)));
}

} // namespace jitlock::java
