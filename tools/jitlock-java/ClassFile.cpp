//===- ClassFile.cpp - The class-file reader of jitlock-java --------------===//
//
// Every read goes through Reader, which fails (and stays failed) instead of
// reading past the end, so a truncated file is one clear error.
//
//===----------------------------------------------------------------------===//
#include "ClassFile.h"

#include <cstdio>

namespace jitlock::java {

namespace {

class Reader {
public:
  explicit Reader(const std::vector<uint8_t> &Bytes) : Bytes(Bytes) {}

  bool ok() const { return Error.empty(); }
  size_t offset() const { return Pos; }
  std::string Error;

  uint8_t u1() {
    if (!need(1))
      return 0;
    return Bytes[Pos++];
  }
  uint16_t u2() {
    if (!need(2))
      return 0;
    uint16_t V = uint16_t(Bytes[Pos] << 8 | Bytes[Pos + 1]);
    Pos += 2;
    return V;
  }
  uint32_t u4() {
    if (!need(4))
      return 0;
    uint32_t V = uint32_t(Bytes[Pos]) << 24 | uint32_t(Bytes[Pos + 1]) << 16 |
                 uint32_t(Bytes[Pos + 2]) << 8 | uint32_t(Bytes[Pos + 3]);
    Pos += 4;
    return V;
  }
  bool bytes(size_t N, std::string &Out) {
    if (!need(N))
      return false;
    Out.assign(reinterpret_cast<const char *>(&Bytes[Pos]), N);
    Pos += N;
    return true;
  }
  bool bytes(size_t N, std::vector<uint8_t> &Out) {
    if (!need(N))
      return false;
    Out.assign(Bytes.begin() + Pos, Bytes.begin() + Pos + N);
    Pos += N;
    return true;
  }
  void skip(size_t N) {
    if (need(N))
      Pos += N;
  }
  void fail(const std::string &What) {
    if (Error.empty())
      Error = What + " at byte " + std::to_string(Pos);
  }

private:
  bool need(size_t N) {
    if (!Error.empty())
      return false;
    if (Bytes.size() - Pos < N) {
      Error = "truncated class file: needs " + std::to_string(N) +
              " more byte" + (N == 1 ? "" : "s") + " at byte " +
              std::to_string(Pos) + " of " + std::to_string(Bytes.size());
      return false;
    }
    return true;
  }

  const std::vector<uint8_t> &Bytes;
  size_t Pos = 0;
};

} // namespace

const std::string *ClassFile::utf8(unsigned Index) const {
  if (Index == 0 || Index >= Cp.size() || Cp[Index].Tag != CpUtf8)
    return nullptr;
  return &Cp[Index].Text;
}

const std::string *ClassFile::className(unsigned Index) const {
  if (Index == 0 || Index >= Cp.size() || Cp[Index].Tag != CpClass)
    return nullptr;
  return utf8(Cp[Index].A);
}

bool decodeModifiedUtf8(const std::string &In, std::u16string &Out) {
  Out.clear();
  for (size_t I = 0; I < In.size();) {
    uint8_t C = uint8_t(In[I]);
    if (C < 0x80 && C != 0) {
      Out.push_back(C);
      ++I;
    } else if ((C & 0xe0) == 0xc0 && I + 1 < In.size() &&
               (uint8_t(In[I + 1]) & 0xc0) == 0x80) {
      Out.push_back(char16_t((C & 0x1f) << 6 | (uint8_t(In[I + 1]) & 0x3f)));
      I += 2;
    } else if ((C & 0xf0) == 0xe0 && I + 2 < In.size() &&
               (uint8_t(In[I + 1]) & 0xc0) == 0x80 &&
               (uint8_t(In[I + 2]) & 0xc0) == 0x80) {
      Out.push_back(char16_t((C & 0x0f) << 12 |
                             (uint8_t(In[I + 1]) & 0x3f) << 6 |
                             (uint8_t(In[I + 2]) & 0x3f)));
      I += 3;
    } else {
      return false;
    }
  }
  return true;
}

bool parseClassFile(const std::vector<uint8_t> &Bytes, ClassFile &Out,
                    std::string &Error) {
  Reader R(Bytes);
  auto Fail = [&](const std::string &What) {
    R.fail(What);
    Error = R.Error;
    return false;
  };
  if (R.u4() != 0xCAFEBABE) {
    if (!R.ok()) {
      Error = R.Error;
      return false;
    }
    Error = "bad magic number (not a class file)";
    return false;
  }
  R.u2(); // minor
  Out.Major = R.u2();
  if (R.ok() && (Out.Major < 45 || Out.Major > 61))
    return Fail("unsupported class-file version " + std::to_string(Out.Major) +
                " (jitlock-java reads up to 61, Java 17)");

  uint16_t CpCount = R.u2();
  if (R.ok() && CpCount == 0)
    return Fail("constant pool count 0");
  Out.Cp.assign(CpCount, CpEntry());
  for (unsigned I = 1; I < CpCount && R.ok(); ++I) {
    CpEntry &E = Out.Cp[I];
    E.Tag = CpTag(R.u1());
    switch (E.Tag) {
    case CpUtf8: {
      uint16_t Len = R.u2();
      R.bytes(Len, E.Text);
      break;
    }
    case CpInteger:
    case CpFloat:
      E.Int = int32_t(R.u4());
      break;
    case CpLong:
    case CpDouble: {
      uint64_t Hi = R.u4(), Lo = R.u4();
      E.Long = int64_t(Hi << 32 | Lo);
      ++I; // takes two entries; the second stays CpNone
      if (I >= CpCount && R.ok())
        return Fail("constant " + std::to_string(I - 1) +
                    " (long or double) runs past the constant pool");
      break;
    }
    case CpClass:
    case CpString:
    case CpMethodType:
    case CpModule:
    case CpPackage:
      E.A = R.u2();
      break;
    case CpFieldref:
    case CpMethodref:
    case CpInterfaceMethodref:
    case CpNameAndType:
    case CpDynamic:
    case CpInvokeDynamic:
      E.A = R.u2();
      E.B = R.u2();
      break;
    case CpMethodHandle:
      E.Kind = R.u1();
      E.A = R.u2();
      break;
    default:
      if (R.ok())
        return Fail("unknown constant-pool tag " + std::to_string(E.Tag) +
                    " in constant " + std::to_string(I));
    }
  }
  if (!R.ok()) {
    Error = R.Error;
    return false;
  }
  // Every reference between constants, checked once here so that users of
  // the pool only check the tag they expect.
  auto Ref = [&](unsigned From, unsigned Index, CpTag Want) {
    if (Index == 0 || Index >= CpCount || Out.Cp[Index].Tag != Want) {
      R.fail("bad constant-pool index " + std::to_string(Index) +
             " in constant " + std::to_string(From));
      return false;
    }
    return true;
  };
  for (unsigned I = 1; I < CpCount; ++I) {
    const CpEntry &E = Out.Cp[I];
    bool Good = true;
    switch (E.Tag) {
    case CpClass:
    case CpString:
    case CpMethodType:
      Good = Ref(I, E.A, CpUtf8);
      break;
    case CpFieldref:
    case CpMethodref:
    case CpInterfaceMethodref:
      Good = Ref(I, E.A, CpClass) && Ref(I, E.B, CpNameAndType);
      break;
    case CpNameAndType:
      Good = Ref(I, E.A, CpUtf8) && Ref(I, E.B, CpUtf8);
      break;
    case CpInvokeDynamic:
    case CpDynamic:
      Good = Ref(I, E.B, CpNameAndType);
      break;
    case CpMethodHandle:
      if (E.Kind < 1 || E.Kind > 9) {
        R.fail("bad method-handle kind in constant " + std::to_string(I));
        Good = false;
      } else {
        CpTag T = E.A < CpCount ? Out.Cp[E.A].Tag : CpNone;
        bool Field = T == CpFieldref;
        bool Method = T == CpMethodref || T == CpInterfaceMethodref;
        if (E.Kind <= 4 ? !Field : !Method) {
          R.fail("bad constant-pool index " + std::to_string(E.A) +
                 " in constant " + std::to_string(I));
          Good = false;
        }
      }
      break;
    default:
      break;
    }
    if (!Good) {
      Error = R.Error;
      return false;
    }
  }

  Out.Flags = R.u2();
  uint16_t This = R.u2(), Super = R.u2();
  if (!R.ok()) {
    Error = R.Error;
    return false;
  }
  const std::string *Name = Out.className(This);
  if (!Name)
    return Fail("bad constant-pool index " + std::to_string(This) +
                " for this_class");
  Out.Name = *Name;
  if (Super) {
    const std::string *SuperName = Out.className(Super);
    if (!SuperName)
      return Fail("bad constant-pool index " + std::to_string(Super) +
                  " for super_class");
    Out.SuperName = *SuperName;
  } else if (Out.Name != "java/lang/Object") {
    return Fail("class " + Out.Name + " has no superclass");
  }
  uint16_t NInterfaces = R.u2();
  for (unsigned I = 0; I < NInterfaces && R.ok(); ++I) {
    uint16_t Index = R.u2();
    const std::string *IName = Out.className(Index);
    if (!IName && R.ok())
      return Fail("bad constant-pool index " + std::to_string(Index) +
                  " for an interface");
    if (IName)
      Out.Interfaces.push_back(*IName);
  }

  auto NameAt = [&](uint16_t Index, std::string &To, const char *What) {
    const std::string *S = Out.utf8(Index);
    if (!S) {
      if (R.ok())
        R.fail(std::string("bad constant-pool index ") + std::to_string(Index) +
               " for " + What);
      return false;
    }
    To = *S;
    return true;
  };

  // Each attribute of the table at R in turn: `Read(Name, Len)` reads the
  // attribute if it knows it (true); the others are skipped.
  auto ForEachAttribute = [&](auto Read) {
    uint16_t NAttrs = R.u2();
    for (unsigned A = 0; A < NAttrs && R.ok(); ++A) {
      std::string AttrName;
      NameAt(R.u2(), AttrName, "an attribute name");
      uint32_t Len = R.u4();
      if (!Read(AttrName, Len))
        R.skip(Len);
    }
  };
  // A field_info and a method_info start alike: flags, name, descriptor.
  auto ReadMemberStart = [&](auto &Member, const std::string &Kind) {
    Member.Flags = R.u2();
    NameAt(R.u2(), Member.Name, ("a " + Kind + " name").c_str());
    NameAt(R.u2(), Member.Descriptor, ("a " + Kind + " descriptor").c_str());
  };

  uint16_t NFields = R.u2();
  for (unsigned I = 0; I < NFields && R.ok(); ++I) {
    FieldInfo F;
    ReadMemberStart(F, "field");
    ForEachAttribute([&](const std::string &Name, uint32_t Len) {
      if (Name != "ConstantValue" || Len != 2)
        return false;
      F.ConstantValue = R.u2();
      return true;
    });
    Out.Fields.push_back(std::move(F));
  }

  uint16_t NMethods = R.u2();
  for (unsigned I = 0; I < NMethods && R.ok(); ++I) {
    MethodInfo M;
    ReadMemberStart(M, "method");
    ForEachAttribute([&](const std::string &Name, uint32_t Len) {
      if (Name != "Code")
        return false;
      size_t End = R.offset() + Len;
      M.HasCode = true;
      M.MaxStack = R.u2();
      M.MaxLocals = R.u2();
      uint32_t CodeLen = R.u4();
      if (R.ok() && (CodeLen == 0 || CodeLen > 65535))
        R.fail("method " + M.Name + " has a code length of " +
               std::to_string(CodeLen));
      R.bytes(CodeLen, M.Code);
      uint16_t NHandlers = R.u2();
      for (unsigned H = 0; H < NHandlers && R.ok(); ++H) {
        ExceptionHandler EH;
        EH.StartPc = R.u2();
        EH.EndPc = R.u2();
        EH.HandlerPc = R.u2();
        EH.CatchType = R.u2();
        M.Handlers.push_back(EH);
      }
      uint16_t NCodeAttrs = R.u2();
      for (unsigned C = 0; C < NCodeAttrs && R.ok(); ++C) {
        R.u2();
        R.skip(R.u4());
      }
      if (R.ok() && R.offset() != End)
        R.fail("Code attribute of " + M.Name + " has a wrong length");
      return true;
    });
    Out.Methods.push_back(std::move(M));
  }

  ForEachAttribute([&](const std::string &Name, uint32_t) {
    if (Name != "BootstrapMethods")
      return false;
    uint16_t N = R.u2();
    for (unsigned B = 0; B < N && R.ok(); ++B) {
      BootstrapMethod BM;
      BM.MethodHandle = R.u2();
      uint16_t NArgs = R.u2();
      for (unsigned K = 0; K < NArgs && R.ok(); ++K) {
        uint16_t Arg = R.u2();
        if (R.ok() && (Arg == 0 || Arg >= CpCount))
          R.fail("bad constant-pool index " + std::to_string(Arg) +
                 " in a bootstrap argument");
        BM.Args.push_back(Arg);
      }
      if (R.ok() && (BM.MethodHandle >= CpCount ||
                     Out.Cp[BM.MethodHandle].Tag != CpMethodHandle))
        R.fail("bad constant-pool index " + std::to_string(BM.MethodHandle) +
               " for a bootstrap method");
      Out.Bootstraps.push_back(std::move(BM));
    }
    return true;
  });
  if (R.ok() && R.offset() != Bytes.size())
    R.fail("trailing bytes after the class file");
  if (!R.ok()) {
    Error = R.Error;
    return false;
  }
  return true;
}

} // namespace jitlock::java
