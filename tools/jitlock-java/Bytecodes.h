//===- Bytecodes.h - The JVM's opcodes as an enum ---------------*- C++ -*-===//
//
// Tier 0 and tier 1 name opcodes alike, from the one table in Bytecodes.def.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_JAVA_BYTECODES_H
#define JITLOCK_JAVA_BYTECODES_H

#include <cstdint>

namespace jitlock::java::bytecode {

enum Op : uint8_t {
#define JAVA_BYTECODE(Enumerator, Value, Mnemonic) Enumerator = Value,
#include "Bytecodes.def"
};

} // namespace jitlock::java::bytecode

#endif
