//===- ClassFile.h - The class-file reader of jitlock-java ------*- C++ -*-===//
//
// Parses a class file (JVMS chapter 4) into plain structures, checking every
// length and constant-pool index as it goes: a malformed file gives an error
// string, never a read out of bounds. What the bytes mean (which constants an
// instruction may name, which bytecodes are supported) is the linker's
// business (Linker.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_JAVA_CLASSFILE_H
#define JITLOCK_JAVA_CLASSFILE_H

#include <cstdint>
#include <string>
#include <vector>

namespace jitlock::java {

enum CpTag : uint8_t {
  CpNone = 0,
  CpUtf8 = 1,
  CpInteger = 3,
  CpFloat = 4,
  CpLong = 5,
  CpDouble = 6,
  CpClass = 7,
  CpString = 8,
  CpFieldref = 9,
  CpMethodref = 10,
  CpInterfaceMethodref = 11,
  CpNameAndType = 12,
  CpMethodHandle = 15,
  CpMethodType = 16,
  CpDynamic = 17,
  CpInvokeDynamic = 18,
  CpModule = 19,
  CpPackage = 20,
};

/// One constant-pool entry. Which fields mean something depends on Tag:
/// Utf8: Text; Integer: Int; Long: Long; Class, String, MethodType: A (a
/// Utf8 index); Fieldref, Methodref, InterfaceMethodref: A = class, B =
/// NameAndType; NameAndType: A = name, B = descriptor; MethodHandle: Kind,
/// A = the reference; InvokeDynamic: A = bootstrap method, B = NameAndType.
struct CpEntry {
  CpTag Tag = CpNone;
  uint8_t Kind = 0;
  uint16_t A = 0, B = 0;
  int32_t Int = 0;
  int64_t Long = 0;
  std::string Text; // Utf8, as modified UTF-8
};

struct ExceptionHandler {
  uint16_t StartPc, EndPc, HandlerPc, CatchType;
};

struct MethodInfo {
  uint16_t Flags = 0;
  std::string Name, Descriptor;
  bool HasCode = false;
  uint16_t MaxStack = 0, MaxLocals = 0;
  std::vector<uint8_t> Code;
  std::vector<ExceptionHandler> Handlers;
};

struct FieldInfo {
  uint16_t Flags = 0;
  std::string Name, Descriptor;
  uint16_t ConstantValue = 0; // a constant-pool index, 0 when none
};

struct BootstrapMethod {
  uint16_t MethodHandle;
  std::vector<uint16_t> Args;
};

struct ClassFile {
  uint16_t Major = 0;
  std::vector<CpEntry> Cp; // index 0 unused, as in the file
  uint16_t Flags = 0;
  std::string Name, SuperName; // SuperName empty for java/lang/Object
  std::vector<std::string> Interfaces;
  std::vector<FieldInfo> Fields;
  std::vector<MethodInfo> Methods;
  std::vector<BootstrapMethod> Bootstraps;

  /// The Utf8 text at `Index`, or null when it is not a Utf8 entry.
  const std::string *utf8(unsigned Index) const;
  /// The name of the Class entry at `Index`, or null.
  const std::string *className(unsigned Index) const;
};

/// Parses `Bytes`; on failure returns false with `Error` saying what and
/// where (a byte offset).
bool parseClassFile(const std::vector<uint8_t> &Bytes, ClassFile &Out,
                    std::string &Error);

/// Modified UTF-8 (class files) to UTF-16; false when malformed.
bool decodeModifiedUtf8(const std::string &In, std::u16string &Out);

/// Access flags.
enum : uint16_t {
  AccPublic = 0x0001,
  AccPrivate = 0x0002,
  AccProtected = 0x0004,
  AccStatic = 0x0008,
  AccFinal = 0x0010,
  AccSynchronized = 0x0020,
  AccSuper = 0x0020,
  AccVolatile = 0x0040,
  AccBridge = 0x0040,
  AccVarargs = 0x0080,
  AccNative = 0x0100,
  AccInterface = 0x0200,
  AccAbstract = 0x0400,
  AccSynthetic = 0x1000,
  AccEnum = 0x4000,
};

} // namespace jitlock::java

#endif
