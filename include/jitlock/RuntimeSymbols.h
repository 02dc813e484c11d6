//===- jitlock/RuntimeSymbols.h - What lowered code calls ------*- C++ -*-===//
//
// The runtime functions that code lowered by the jitlock passes may call,
// with their addresses in this process: the one list every JIT resolves
// them from, jitlock's own (lib/JIT) and an embedder's.
//
// A JIT defines exactly these names as absolute symbols, so lowered code
// reaches the runtime whether or not the process exports it: the static
// runtime is built with hidden visibility, and an executable is rarely
// linked -rdynamic. With ORC's LLJIT:
//
//   llvm::orc::SymbolMap Map;
//   for (const jitlock::RuntimeSymbol &S : jitlock::runtimeSymbols())
//     Map[J->mangleAndIntern(S.Name)] = llvm::orc::ExecutorSymbolDef(
//         llvm::orc::ExecutorAddr::fromPtr(S.Addr),
//         llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
//   if (llvm::Error E = J->getMainJITDylib().define(
//           llvm::orc::absoluteSymbols(std::move(Map))))
//     ...
//
// Without them the JIT fails to materialize the code with "Symbols not
// found: [ jitlock_rt_monitor_enter, ... ]".
//
// What is listed: the slow paths the lowering calls (monitor enter and exit,
// the stack bang, the safepoint poll), the layout check that every lowered
// module's constructor calls (jitlock_rt_check_layout: run the
// constructors, with LLJIT::initialize), the thread lookup of thread=call code
// (jitlock_rt_code_thread), and what a frontend's IR may call directly:
// wait/notify, the identity hash, deopt restore, the guarded entry, thread
// attach and detach, and the queries. Start-up and tear-down
// (jitlock_rt_configure, jitlock_rt_shutdown), the overflow handler,
// thread states, safepoints, handshakes and deflation belong to the
// embedder's own code, which calls them directly; they are deliberately
// absent, so that JIT code that names them fails to link.
//
// Header-only: it needs the runtime (jitlock::rt or jitlock::rt_shared) and
// nothing else, neither LLVM nor the passes library.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIMESYMBOLS_H
#define JITLOCK_RUNTIMESYMBOLS_H

#include "jitlock/jitlock_rt.h"

#include <cstddef>
#include <cstring>

namespace jitlock {

/// One runtime function: its C name (unmangled; a JIT applies its own
/// global prefix) and its address in this process.
struct RuntimeSymbol {
  const char *Name;
  void *Addr;
};

/// The list: iterable, sized, and searchable by name.
class RuntimeSymbolTable {
public:
  constexpr RuntimeSymbolTable(const RuntimeSymbol *Begin,
                               const RuntimeSymbol *End)
      : Begin(Begin), End(End) {}
  const RuntimeSymbol *begin() const { return Begin; }
  const RuntimeSymbol *end() const { return End; }
  std::size_t size() const { return std::size_t(End - Begin); }

  /// The address of `Name`, or null when lowered code may not call it.
  void *lookup(const char *Name) const {
    for (const RuntimeSymbol &S : *this)
      if (std::strcmp(S.Name, Name) == 0)
        return S.Addr;
    return nullptr;
  }

private:
  const RuntimeSymbol *Begin;
  const RuntimeSymbol *End;
};

/// The runtime functions lowered code may call (see above).
inline RuntimeSymbolTable runtimeSymbols() {
#define JITLOCK_RT_SYMBOL(Name) {#Name, reinterpret_cast<void *>(&Name)}
  static const RuntimeSymbol Table[] = {
      // Slow paths and complete operations.
      JITLOCK_RT_SYMBOL(jitlock_rt_monitor_enter_slow),
      JITLOCK_RT_SYMBOL(jitlock_rt_monitor_exit_slow),
      JITLOCK_RT_SYMBOL(jitlock_rt_monitor_exit_queued_slow),
      JITLOCK_RT_SYMBOL(jitlock_rt_monitor_enter),
      JITLOCK_RT_SYMBOL(jitlock_rt_monitor_exit),
      JITLOCK_RT_SYMBOL(jitlock_rt_wait),
      JITLOCK_RT_SYMBOL(jitlock_rt_wait_timed),
      JITLOCK_RT_SYMBOL(jitlock_rt_notify),
      JITLOCK_RT_SYMBOL(jitlock_rt_notify_all),
      JITLOCK_RT_SYMBOL(jitlock_rt_interrupt),
      JITLOCK_RT_SYMBOL(jitlock_rt_is_interrupted),
      JITLOCK_RT_SYMBOL(jitlock_rt_clear_interrupt),
      JITLOCK_RT_SYMBOL(jitlock_rt_identity_hash),
      JITLOCK_RT_SYMBOL(jitlock_rt_peek_hash),
      JITLOCK_RT_SYMBOL(jitlock_rt_restore_locks),
      // The stack-bang slow path (called by checked method entries), and
      // the guarded entry into code that may overflow its stack.
      JITLOCK_RT_SYMBOL(jitlock_rt_stack_bang),
      JITLOCK_RT_SYMBOL(jitlock_rt_call_guarded),
      JITLOCK_RT_SYMBOL(jitlock_rt_stack_info),
      // The safepoint poll slow path, called by lowered polls whose poll
      // word is armed.
      JITLOCK_RT_SYMBOL(jitlock_rt_safepoint_poll),
      // The layout check of a lowered module's constructor.
      JITLOCK_RT_SYMBOL(jitlock_rt_check_layout),
      // Threads (thread=call code materializes the thread with
      // jitlock_rt_code_thread).
      JITLOCK_RT_SYMBOL(jitlock_rt_current),
      JITLOCK_RT_SYMBOL(jitlock_rt_code_thread),
      JITLOCK_RT_SYMBOL(jitlock_rt_attach),
      JITLOCK_RT_SYMBOL(jitlock_rt_detach),
      JITLOCK_RT_SYMBOL(jitlock_rt_thread_id),
      JITLOCK_RT_SYMBOL(jitlock_rt_thread_data),
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
  return {Table, Table + sizeof(Table) / sizeof(Table[0])};
}

} // namespace jitlock

#endif // JITLOCK_RUNTIMESYMBOLS_H
