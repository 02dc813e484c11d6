//===- Emission.h - A CodeHolder with its assembler -------------*- C++ -*-===//
//
// What every emitter test emits into, for either target (EmitterTestUtil.h
// and A64TestUtil.h name theirs Emission).
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_EMITTERS_EMISSION_H
#define JITLOCK_UNITTESTS_EMITTERS_EMISSION_H

#include <asmjit/core.h>

namespace emit_test_common {

/// Code for the machine `Jit()` runs: a CodeHolder with an `Assembler`
/// attached. Tests take it apart: `Emission Em; auto &[Code, A] = Em;`.
template <typename Assembler, asmjit::JitRuntime &(*Jit)()> struct Emission {
  Emission() {
    Code.init(Jit().environment());
    Code.attach(&A);
  }
  Emission(const Emission &) = delete;
  Emission &operator=(const Emission &) = delete;

  asmjit::CodeHolder Code;
  Assembler A;
};

} // namespace emit_test_common

#endif // JITLOCK_UNITTESTS_EMITTERS_EMISSION_H
