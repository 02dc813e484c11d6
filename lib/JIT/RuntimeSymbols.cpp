//===- RuntimeSymbols.cpp - The runtime functions JIT code may call -------===//
//
// JIT code resolves the runtime from this table, as absolute symbols, and
// never through the process's dynamic symbol table: the runtime is linked
// statically with hidden visibility, and the driver is not built -rdynamic.
//
// Start-up and tear-down (jitlock_rt_configure, jitlock_rt_shutdown), the
// overflow handler (jitlock_rt_set_overflow_handler, jitlock_rt_unwind_to_
// entry) and deflation, which needs the other threads stopped, belong to the
// embedder and are deliberately absent.
//
//===----------------------------------------------------------------------===//
#include "jitlock/JIT.h"

namespace jitlock {

#define JITLOCK_RT_SYMBOL(Name) {#Name, reinterpret_cast<void *>(&Name)}

static const RuntimeSymbol Table[] = {
    // Slow paths and complete operations.
    JITLOCK_RT_SYMBOL(jitlock_rt_monitor_enter_slow),
    JITLOCK_RT_SYMBOL(jitlock_rt_monitor_exit_slow),
    JITLOCK_RT_SYMBOL(jitlock_rt_monitor_enter),
    JITLOCK_RT_SYMBOL(jitlock_rt_monitor_exit),
    JITLOCK_RT_SYMBOL(jitlock_rt_wait),
    JITLOCK_RT_SYMBOL(jitlock_rt_wait_timed),
    JITLOCK_RT_SYMBOL(jitlock_rt_notify),
    JITLOCK_RT_SYMBOL(jitlock_rt_notify_all),
    JITLOCK_RT_SYMBOL(jitlock_rt_identity_hash),
    JITLOCK_RT_SYMBOL(jitlock_rt_peek_hash),
    JITLOCK_RT_SYMBOL(jitlock_rt_restore_locks),
    // The stack-bang slow path (called by checked method entries), and the
    // guarded entry into code that may overflow its stack.
    JITLOCK_RT_SYMBOL(jitlock_rt_stack_bang),
    JITLOCK_RT_SYMBOL(jitlock_rt_call_guarded),
    JITLOCK_RT_SYMBOL(jitlock_rt_stack_info),
    // The safepoint poll slow path (P2), called by lowered polls whose poll
    // word is armed.
    JITLOCK_RT_SYMBOL(jitlock_rt_safepoint_poll),
    // Threads (`call` mode materializes the thread with
    // jitlock_rt_code_thread).
    JITLOCK_RT_SYMBOL(jitlock_rt_current),
    JITLOCK_RT_SYMBOL(jitlock_rt_code_thread),
    JITLOCK_RT_SYMBOL(jitlock_rt_attach),
    JITLOCK_RT_SYMBOL(jitlock_rt_detach),
    JITLOCK_RT_SYMBOL(jitlock_rt_thread_id),
    // Queries.
    JITLOCK_RT_SYMBOL(jitlock_rt_inspect),
    JITLOCK_RT_SYMBOL(jitlock_rt_owner_of),
    JITLOCK_RT_SYMBOL(jitlock_rt_holds_lock),
    JITLOCK_RT_SYMBOL(jitlock_rt_lock_stack),
    JITLOCK_RT_SYMBOL(jitlock_rt_find_deadlocks),
    JITLOCK_RT_SYMBOL(jitlock_rt_enumerate_roots),
    JITLOCK_RT_SYMBOL(jitlock_rt_get_stats),
    JITLOCK_RT_SYMBOL(jitlock_rt_get_layout),
    JITLOCK_RT_SYMBOL(jitlock_rt_print_layout),
    JITLOCK_RT_SYMBOL(jitlock_rt_status_name),
};

#undef JITLOCK_RT_SYMBOL

llvm::ArrayRef<RuntimeSymbol> runtimeSymbols() { return Table; }

} // namespace jitlock
