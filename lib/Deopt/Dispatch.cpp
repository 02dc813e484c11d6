//===- Dispatch.cpp - The deopt entry and its dispatcher ------------------===//
//
// `__llvm_deoptimize` is jitlock_deopt_entry, a stub per target (also defined
// weakly under that name, for statically linked code) that stores
// the return address, the argument registers and the registers a call
// preserves (with the caller's stack pointer) into a SavedRegisters on its
// stack and calls jitlock_deopt_dispatch. The dispatcher decodes the frame,
// restores its locks, runs the baseline continuation on top of the optimized
// frame (so that the frame's stack slots stay readable), then returns for the
// optimized function: LLVM emits no code after the deoptimize call, so the
// dispatcher long-jumps back to the callDeoptimizable that entered the
// function, whose saved registers are the ones its caller expects.
//
//===----------------------------------------------------------------------===//
#include "jitlock/Deopt.h"

#include <atomic>
#include <csetjmp>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

using namespace jitlock::deopt;

// The stubs' offsets: ReturnAddress 0, Args 8, Regs 72 (Regs[N] at 72 + 8N);
// 328 bytes, which the stubs round up to keep the stack aligned.
static_assert(offsetof(SavedRegisters, ReturnAddress) == 0);
static_assert(offsetof(SavedRegisters, Args) == 8);
static_assert(offsetof(SavedRegisters, Regs) == 72);
static_assert(sizeof(SavedRegisters) == 328);

extern "C" void jitlock_deopt_entry();
extern "C" [[noreturn]] void jitlock_deopt_dispatch(SavedRegisters *Regs);

#if defined(__x86_64__)
// At entry the stack holds the return address (rsp = 8 mod 16): 344 more
// bytes realign it for the call. The arguments go to Args in their ABI
// order; rbx is DWARF 3, rbp 6, rsp 7, r12-r15 12-15 (Regs at 168-192).
asm(R"(
  .text
  .globl jitlock_deopt_entry
  .type jitlock_deopt_entry,@function
  .weak __llvm_deoptimize
  .type __llvm_deoptimize,@function
  .p2align 4
jitlock_deopt_entry:
__llvm_deoptimize:
  subq $344, %rsp
  movq 344(%rsp), %rax
  movq %rax, 0(%rsp)
  .set .Lslot, 8
  .irp reg, rdi, rsi, rdx, rcx, r8, r9
  movq %\reg, .Lslot(%rsp)
  .set .Lslot, .Lslot + 8
  .endr
  movq %rbx, 96(%rsp)
  movq %rbp, 120(%rsp)
  leaq 352(%rsp), %rax
  movq %rax, 128(%rsp)
  .set .Lslot, 168
  .irp reg, r12, r13, r14, r15
  movq %\reg, .Lslot(%rsp)
  .set .Lslot, .Lslot + 8
  .endr
  movq %rsp, %rdi
  call jitlock_deopt_dispatch@PLT
  ud2
  .size jitlock_deopt_entry, .-jitlock_deopt_entry
)");
#elif defined(__aarch64__)
// The return address is in x30; sp at entry is the caller's. x19-x29 are
// DWARF 19-29 (Regs at 224-304), sp 31 (320).
asm(R"(
  .text
  .globl jitlock_deopt_entry
  .type jitlock_deopt_entry,%function
  .weak __llvm_deoptimize
  .type __llvm_deoptimize,%function
  .p2align 4
jitlock_deopt_entry:
__llvm_deoptimize:
  sub sp, sp, #336
  str x30, [sp, #0]
  stp x0, x1, [sp, #8]
  stp x2, x3, [sp, #24]
  stp x4, x5, [sp, #40]
  stp x6, x7, [sp, #56]
  stp x19, x20, [sp, #224]
  stp x21, x22, [sp, #240]
  stp x23, x24, [sp, #256]
  stp x25, x26, [sp, #272]
  stp x27, x28, [sp, #288]
  str x29, [sp, #304]
  add x9, sp, #336
  str x9, [sp, #320]
  mov x0, sp
  bl jitlock_deopt_dispatch
  brk #0
  .size jitlock_deopt_entry, .-jitlock_deopt_entry
)");
#else
#error "the deopt entry is written for x86_64 and AArch64"
#endif

namespace {

/// One callDeoptimizable on this thread's stack.
struct EntryContext {
  std::jmp_buf Buf;
  EntryContext *Prev;
  const void *Fn;
  uint64_t Result;
};

thread_local EntryContext *Innermost = nullptr;
std::atomic<const DeoptHandlers *> Installed{nullptr};
std::atomic<uint64_t> NumDeopts{0}, NumFailures{0};

[[noreturn]] void fatal(const char *What, const std::string &Message) {
  std::fprintf(stderr, "jitlock: deopt: %s%s%s\n", What,
               Message.empty() ? "" : ": ", Message.c_str());
  std::abort();
}

uint64_t fail(const DeoptHandlers *H, const DeoptFailure &F) {
  NumFailures.fetch_add(1, std::memory_order_relaxed);
  if (!H || !H->Failed)
    fatal("cannot continue in the baseline", F.Message);
  return H->Failed(F, H->Ctx);
}

/// Everything but the jump, so that no object with a destructor is alive
/// when the dispatcher jumps.
uint64_t handle(const SavedRegisters &Regs, const EntryContext &C) {
  const DeoptHandlers *H = Installed.load(std::memory_order_acquire);
  DeoptFrame F;
  std::string Error;
  if (!StackMapTable::global().decodeFrame(Regs.ReturnAddress, Regs, F, Error))
    return fail(H, {FailureKind::NoRecord, JITLOCK_OK, Error, nullptr, {}});
  if (F.FunctionAddress != reinterpret_cast<uint64_t>(C.Fn))
    return fail(H, {FailureKind::NotEntered,
                    JITLOCK_OK,
                    "the deoptimizing function is not the one "
                    "callDeoptimizable entered",
                    &F,
                    {}});
  jitlock_thread *Self = jitlock_rt_current();
  if (int Status = restoreFrameLocks(Self, F)) {
    // The frame is abandoned: what it held goes, innermost first.
    DeoptFailure Failure{FailureKind::RestoreFailed,
                         Status,
                         std::string("restoring the frame's locks failed: ") +
                             jitlock_rt_status_name(Status),
                         &F,
                         {}};
    for (auto It = F.Monitors.rbegin(); It != F.Monitors.rend(); ++It)
      if (It->kind == JITLOCK_RELOCK_HELD &&
          jitlock_rt_monitor_exit(Self, It->obj) == JITLOCK_OK)
        Failure.Released.push_back(It->obj);
    return fail(H, Failure);
  }
  if (!H || !H->Resume)
    fatal("no Resume handler installed", "");
  NumDeopts.fetch_add(1, std::memory_order_relaxed);
  return H->Resume(F, H->Ctx);
}

} // namespace

extern "C" void jitlock_deopt_dispatch(SavedRegisters *Regs) {
  EntryContext *C = Innermost;
  if (!C)
    fatal("__llvm_deoptimize called outside callDeoptimizable", "");
  uint64_t Result = handle(*Regs, *C);
  Innermost = C->Prev;
  C->Result = Result;
  std::longjmp(C->Buf, 1);
}

uint64_t jitlock::deopt::detail::enterDeoptimizable(const void *Fn,
                                                    uint64_t (*Thunk)(void *),
                                                    void *Closure) {
  EntryContext C;
  C.Prev = Innermost;
  C.Fn = Fn;
  C.Result = 0;
  Innermost = &C;
  if (setjmp(C.Buf) == 0) {
    uint64_t Result = Thunk(Closure);
    Innermost = C.Prev;
    return Result;
  }
  // Back from a deopt: the dispatcher unlinked C and stored the result.
  return *static_cast<volatile uint64_t *>(&C.Result);
}

void jitlock::deopt::setDeoptHandlers(const DeoptHandlers *H) {
  Installed.store(H, std::memory_order_release);
}

void *jitlock::deopt::deoptEntryAddress() {
  return reinterpret_cast<void *>(&jitlock_deopt_entry);
}

int jitlock::deopt::restoreFrameLocks(jitlock_thread *Owner,
                                      const DeoptFrame &F, uint32_t Flags) {
  return jitlock_rt_restore_locks(Owner, F.Monitors.data(), F.Monitors.size(),
                                  Flags);
}

DeoptStats jitlock::deopt::deoptStats() {
  return {NumDeopts.load(std::memory_order_relaxed),
          NumFailures.load(std::memory_order_relaxed)};
}
