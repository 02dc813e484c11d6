// Emits the thread load with the installed emitters and runs a monitor
// operation through the runtime: both components work without LLVM.
#include <jitlock/Emitters.h>
#include <jitlock/jitlock_rt.h>

#include <asmjit/x86.h>

#include <cstdint>
#include <cstdio>

int main() {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  asmjit::CodeHolder Code;
  Code.init(asmjit::Environment::host());
  asmjit::x86::Assembler A(&Code);
  if (jitlock::emit::x64::emitLoadThread(A, L, asmjit::x86::rax) !=
      asmjit::kErrorOk) {
    std::fprintf(stderr, "components-consumer: emitLoadThread failed\n");
    return 1;
  }
  jitlock_thread *Self = jitlock_rt_attach();
  alignas(8) uint64_t Obj[2] = {1, 0};
  if (jitlock_rt_monitor_enter(Self, Obj) != JITLOCK_OK ||
      jitlock_rt_monitor_exit(Self, Obj) != JITLOCK_OK ||
      jitlock_rt_detach() != JITLOCK_OK || Obj[0] != 1) {
    std::fprintf(stderr, "components-consumer: a monitor operation failed\n");
    return 1;
  }
  std::printf("emitted %zu bytes of thread load\nOK\n", Code.codeSize());
  return 0;
}
