//===- Config.h - Runtime-wide configuration --------------------*- C++ -*-===//
//
// The configuration every operation reads. It is written only while no thread
// is attached (jitlock_rt_configure), so readers need no synchronization
// beyond the registry lock that attach takes.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_CONFIG_H
#define JITLOCK_RUNTIME_CONFIG_H

#include "jitlock/jitlock_rt.h"

#include <string>

namespace jitlock {

extern jitlock_rt_config Config;

/// Who called the entry point that found a misuse: the C API, whose caller
/// gets the status back, or a slow path of compiled code, which cannot look
/// at it (jitlock_rt_monitor_enter_slow/exit_slow).
enum class Caller { Api, CompiledCode };

/// Reports a misuse through the embedder's handler, if any, and returns the
/// status so that call sites read `return misuse(...)`. From compiled code,
/// and unless Config.compiled_code_misuse says JITLOCK_MISUSE_REPORT, it then
/// prints a fatal message and aborts instead of returning.
int misuse(jitlock_status Status, jitlock_thread *Thread, void *Obj,
           const char *What, Caller From = Caller::Api);

/// The struct_size check of the structs that carry one (jitlock_rt.h,
/// "Versions and struct sizes"): JITLOCK_OK for a size from `MinSize` (the
/// end of the struct's required fields) to JITLOCK_RT_MAX_STRUCT_SIZE; else
/// the misuse, naming `Struct`, both sizes and `LibrarySize`, is reported
/// and JITLOCK_EINVAL returned.
int checkStructSize(const char *Struct, uint32_t Size, size_t MinSize,
                    size_t LibrarySize);

/// Fills a caller's struct that starts with struct_size from the library's
/// `From` (`LibrarySize` bytes): the common prefix, then zeroes for the
/// fields the library does not know; struct_size keeps the caller's value.
/// Refuses, with nothing written, as checkStructSize does.
int fillCallerStruct(const char *Struct, void *Out, size_t MinSize,
                     const void *From, size_t LibrarySize);

/// The layout lease (jitlock_rt_configure): once the layout was handed out,
/// to a code generator, to lowered code's check or to an attached thread, a
/// configuration that changes its fingerprint is refused until shutdown.
void markLayoutHandedOut();
bool layoutHandedOut();
void releaseLayout();
/// Compares the layout checks that lowered code made before the layout was
/// handed out (jitlock_rt_check_layout) with the layout now; at attach.
void checkPendingLayouts();

/// The layout fingerprint (jitlock_rt_layout_fingerprint) that `Cfg` would
/// give, its inflated_exit resolved (Layout.cpp).
std::string fingerprintFor(const jitlock_rt_config &Cfg);

} // namespace jitlock

#endif
