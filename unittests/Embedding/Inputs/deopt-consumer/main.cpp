// Makes an ORC LLJIT deoptimizable with the installed libjitlock_deopt and
// restores a frame's elided lock through it, as a deopt handler would.
#include <jitlock/Deopt.h>
#include <jitlock/jitlock_rt.h>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/TargetSelect.h>

#include <cstdint>
#include <cstdio>

int main() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto J = llvm::orc::LLJITBuilder().create();
  if (!J) {
    std::fprintf(stderr, "deopt-consumer: %s\n",
                 llvm::toString(J.takeError()).c_str());
    return 1;
  }
  if (llvm::Error E = jitlock::deopt::enableDeopt(**J)) {
    std::fprintf(stderr, "deopt-consumer: enableDeopt: %s\n",
                 llvm::toString(std::move(E)).c_str());
    return 1;
  }
  if (!jitlock::deopt::deoptEntryAddress()) {
    std::fprintf(stderr, "deopt-consumer: no deopt entry\n");
    return 1;
  }
  // A frame whose one lock was elided: restored, it is held.
  jitlock_thread *Self = jitlock_rt_attach();
  alignas(8) uint64_t Obj[2] = {1, 0};
  jitlock_relock_entry Entry = {Obj, JITLOCK_RELOCK_ELIDED};
  if (jitlock_rt_restore_locks(Self, &Entry, 1, 0) != JITLOCK_OK ||
      !jitlock_rt_holds_lock(Self, Obj) ||
      jitlock_rt_monitor_exit(Self, Obj) != JITLOCK_OK ||
      jitlock_rt_detach() != JITLOCK_OK) {
    std::fprintf(stderr, "deopt-consumer: restoring the lock failed\n");
    return 1;
  }
  std::printf("stack map records: %zu\nOK\n",
              jitlock::deopt::StackMapTable::global().numRecords());
  return 0;
}
