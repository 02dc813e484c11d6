//===- PassFuzzer.h - The pass fuzzer's parts -------------------*- C++ -*-===//
//
// An input is a few option bytes, which pick the pass configuration, then
// either LLVM IR text or, when the options say so, the bytes that drive the
// module generator (Shapes.cpp). RunInput.cpp runs the passes on it and
// aborts when they break their contract; Mutator.cpp mutates inputs at the
// IR level for libFuzzer; Replay.cpp runs saved inputs without libFuzzer.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_FUZZ_PASSFUZZER_H
#define JITLOCK_FUZZ_PASSFUZZER_H

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace jitlock::fuzz {

/// How many bytes at the start of an input are options.
inline constexpr size_t OptionBytes = 5;
/// The bit of the first option byte that makes the rest of the input the
/// generator's bytes instead of IR text.
inline constexpr uint8_t GeneratedBit = 0x80;

/// Where the shape builders take their decisions from.
class Choices {
public:
  virtual ~Choices() = default;
  virtual uint64_t next() = 0;
  /// A number in [0, N), or 0 when N is 0.
  uint64_t below(uint64_t N) { return N ? next() % N : 0; }
  bool oneIn(uint64_t N) { return below(N) == 0; }
};

/// Choices read from the input, a byte each; zeros once it is used up, so
/// that a short input makes a small module.
class ByteChoices : public Choices {
public:
  explicit ByteChoices(llvm::ArrayRef<uint8_t> Bytes) : Bytes(Bytes) {}
  uint64_t next() override;
  bool exhausted() const { return Bytes.empty(); }

private:
  llvm::ArrayRef<uint8_t> Bytes;
};

/// Choices from a seeded engine: the custom mutator's.
class EngineChoices : public Choices {
public:
  explicit EngineChoices(std::mt19937_64 &Engine) : Engine(Engine) {}
  uint64_t next() override { return Engine(); }

private:
  std::mt19937_64 &Engine;
};

/// Inserts `Count` jitlock shapes (monitor operations on odd objects, polls,
/// thread requests, stack-bang and thread attributes, invokes, funclets,
/// coroutines, module flags, misused jitlock.* names) into `M`. The result
/// may fail the LLVM verifier; the fuzz target skips such modules.
void insertShapes(llvm::Module &M, Choices &C, unsigned Count);

/// A module built from nothing but `C`: a few functions with loops and
/// branches, then the shapes of insertShapes.
std::unique_ptr<llvm::Module> generateModule(llvm::LLVMContext &Ctx,
                                             Choices &C);

/// What the passes made of an input.
enum class Outcome {
  /// Too short, not IR that parses and verifies, or a shape the chosen
  /// pipeline is not for: the passes did not run.
  Skipped,
  /// An error diagnostic was reported (the first is in `Why`).
  Refused,
  /// Lowered, and the result verified.
  Lowered,
};

/// The module of an input, before the passes: parsed, or generated. Null
/// when the text does not parse.
std::unique_ptr<llvm::Module> inputModule(const uint8_t *Data, size_t Size,
                                          llvm::LLVMContext &Ctx);

/// Runs one input through the passes it picks and checks the result;
/// aborts with a message on a broken contract.
Outcome runInput(const uint8_t *Data, size_t Size, std::string *Why);

} // namespace jitlock::fuzz

#endif
