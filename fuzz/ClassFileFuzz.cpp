//===- ClassFileFuzz.cpp - libFuzzer target for jitlock-java's reader -----===//
//
// Feeds each input to jitlock-java's class-file reader, the first thing that
// touches an untrusted file. The contract it checks: the reader either
// refuses the bytes with a message, or returns structures whose every
// constant-pool reference it vouched for can be followed. ASan and UBSan
// (compiled in, as for the pass fuzzer) catch what the contract cannot
// state: a read past the input, an overflow in a length.
//
//===----------------------------------------------------------------------===//
#include "ClassFile.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace jitlock::java;

[[noreturn]] static void broken(const char *What) {
  std::fprintf(stderr, "class-file fuzz: contract broken: %s\n", What);
  std::abort();
}

/// What a parsed class promises its linker (which checks the bytecode and
/// the handlers' ranges itself): every entry can be looked up, every Utf8
/// entry decodes or is refused, and code lengths are the JVM's.
static void checkParsed(const ClassFile &CF) {
  if (CF.Cp.empty())
    broken("a parsed class has no constant pool slot 0");
  for (unsigned I = 1; I < CF.Cp.size(); ++I) {
    const CpEntry &E = CF.Cp[I];
    std::u16string Decoded;
    if (E.Tag == CpUtf8)
      (void)decodeModifiedUtf8(E.Text, Decoded);
    (void)CF.utf8(I);
    (void)CF.className(I);
  }
  // Out-of-range indices are answered with null, never read.
  if (CF.utf8(CF.Cp.size()) || CF.className(CF.Cp.size()) || CF.utf8(0))
    broken("an index outside the constant pool named an entry");
  for (const MethodInfo &M : CF.Methods)
    if (M.HasCode && (M.Code.empty() || M.Code.size() > 65535))
      broken("a method's code has a length the reader should refuse");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::vector<uint8_t> Bytes(Data, Data + Size);
  ClassFile CF;
  std::string Error;
  if (!parseClassFile(Bytes, CF, Error)) {
    if (Error.empty())
      broken("a refused class file came without a message");
    return 0;
  }
  checkParsed(CF);
  return 0;
}
