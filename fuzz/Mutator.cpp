//===- Mutator.cpp - libFuzzer's mutations at the IR level ----------------===//
//
// Byte flips on IR text mostly make text that does not parse. This mutator
// parses the input, changes the module (jitlock shapes from Shapes.cpp, or
// LLVM's FuzzMutate strategies: new instructions, deleted ones, new blocks
// and branches, PHIs, shuffled blocks) and prints it back, so that what
// libFuzzer keeps stays valid IR. The option bytes, generator inputs and
// text that does not parse get libFuzzer's own byte mutations.
//
//===----------------------------------------------------------------------===//
#include "PassFuzzer.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/FuzzMutate/IRMutator.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <string>

using namespace llvm;
using namespace jitlock::fuzz;

extern "C" size_t LLVMFuzzerMutate(uint8_t *Data, size_t Size, size_t MaxSize);

namespace {

IRMutator &llvmMutator() {
  static IRMutator Mutator = [] {
    std::vector<TypeGetter> Types = {
        Type::getInt1Ty,
        Type::getInt8Ty,
        Type::getInt32Ty,
        Type::getInt64Ty,
        Type::getDoubleTy,
        [](LLVMContext &C) -> Type * { return PointerType::getUnqual(C); }};
    std::vector<std::unique_ptr<IRMutationStrategy>> Strategies;
    Strategies.push_back(std::make_unique<InjectorIRStrategy>());
    Strategies.push_back(std::make_unique<InstDeleterIRStrategy>());
    Strategies.push_back(std::make_unique<InstModificationIRStrategy>());
    Strategies.push_back(std::make_unique<InsertCFGStrategy>());
    Strategies.push_back(std::make_unique<InsertPHIStrategy>());
    Strategies.push_back(std::make_unique<ShuffleBlockStrategy>());
    return IRMutator(std::move(Types), std::move(Strategies));
  }();
  return Mutator;
}

/// Mutates the module of an IR input; returns the new size, or 0 when the
/// text does not parse or the result does not verify or fit.
size_t mutateModule(uint8_t *Data, size_t Size, size_t MaxSize,
                    std::mt19937_64 &Engine) {
  LLVMContext Ctx;
  SMDiagnostic Err;
  // The parser reads up to a NUL: the text gets one.
  std::string Text(reinterpret_cast<const char *>(Data) + OptionBytes,
                   Size - OptionBytes);
  std::unique_ptr<Module> M = parseAssemblyString(Text, Err, Ctx);
  if (!M)
    return 0;
  if (Engine() % 2) {
    EngineChoices C(Engine);
    insertShapes(*M, C, 1 + Engine() % 3);
  } else {
    size_t Objects = IRMutator::getModuleSize(*M);
    llvmMutator().mutateModule(*M, int(Engine()), Objects + 64);
  }
  if (verifyModule(*M))
    return 0;
  std::string Out;
  raw_string_ostream OS(Out);
  M->print(OS, nullptr);
  if (OptionBytes + Out.size() > MaxSize)
    return 0;
  std::memcpy(Data + OptionBytes, Out.data(), Out.size());
  return OptionBytes + Out.size();
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *Data, size_t Size,
                                          size_t MaxSize, unsigned Seed) {
  std::mt19937_64 Engine(Seed);
  if (Size < OptionBytes || (Data[0] & GeneratedBit) || Engine() % 4 == 0)
    return LLVMFuzzerMutate(Data, Size, MaxSize);
  if (Engine() % 6 == 0) {
    // Another pass configuration for the same module.
    Data[Engine() % OptionBytes] ^= uint8_t(1u << Engine() % 8);
    return Size;
  }
  if (size_t NewSize = mutateModule(Data, Size, MaxSize, Engine))
    return NewSize;
  return LLVMFuzzerMutate(Data, Size, MaxSize);
}
