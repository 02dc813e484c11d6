/*===- jitlock/jitlock_rt.h - The jitlock runtime C ABI ---------*- C -*-===//
 *
 * The one C interface of the jitlock runtime. Inline fast paths emitted by the
 * LLVM passes and the asmjit emitters call the slow-path entry points below;
 * interpreters and embedders call the rest, the C API. The locking protocol
 * itself is stated once, in lib/Runtime/Synchronizer.cpp.
 *
 * Misuse. Every C API function that can be misused returns a jitlock_status.
 * Misuse never changes lock state; when an embedder installed a misuse handler
 * it is called before the function returns the error code. The monitor slow
 * paths that compiled code calls (jitlock_rt_monitor_enter_slow and
 * jitlock_rt_monitor_exit_slow) have no caller that could look at a status:
 * they report the misuse too and then, by default, abort the process with a
 * message naming the thread, the object and what happened. The
 * configuration's compiled_code_misuse keeps report-and-continue instead.
 *
 * Versions. See "Versions and struct sizes" below for what a compatible
 * change is and what bumps JITLOCK_RT_ABI_VERSION (the shared library's
 * SOVERSION).
 *
 *===----------------------------------------------------------------------===*/
#ifndef JITLOCK_JITLOCK_RT_H
#define JITLOCK_JITLOCK_RT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime is built with hidden visibility; these are its exports. */
#pragma GCC visibility push(default)

/* A runtime thread: one per attached OS thread. Opaque to embedders; JIT code
 * addresses its fields through the offsets in jitlock_rt_layout. */
typedef struct jitlock_thread jitlock_thread;

typedef enum jitlock_status {
  JITLOCK_OK = 0,
  JITLOCK_ENULL = 1,           /* a null object */
  JITLOCK_ENOT_OWNER = 2,      /* exit, wait or notify by a non-owner */
  JITLOCK_EHOLDING_LOCKS = 3,  /* detach while the thread holds locks */
  JITLOCK_ETIMEDOUT = 4,       /* a timed wait ended without a notify */
  JITLOCK_EINVAL = 5,          /* an argument is out of range */
  JITLOCK_ENOT_ATTACHED = 6,   /* the calling thread is not attached */
  JITLOCK_EBUSY = 7,           /* restore-locks found an object owned by
                                  another thread and could not wait for it */
  JITLOCK_ESTATE = 8,          /* the call is not allowed in this state,
                                  e.g. shutdown with threads attached */
  JITLOCK_ESTACK_OVERFLOW = 9, /* a guarded call overflowed its stack and
                                  was abandoned (jitlock_rt_call_guarded) */
  JITLOCK_ENOMEM = 10,         /* index monitor storage: every monitor of
                                  monitor_capacity is in use, even after a
                                  deflation; the inflating operation
                                  changed nothing */
  JITLOCK_EINTERRUPTED = 11    /* a wait ended by jitlock_rt_interrupt; the
                                  monitor is held again and the thread's
                                  interrupt flag is cleared */
} jitlock_status;

/* Returns a static, human-readable name such as "JITLOCK_ENOT_OWNER". */
const char *jitlock_rt_status_name(int status);

/*===-- Versions and struct sizes ----------------------------------------===*/
/* JITLOCK_RT_ABI_VERSION counts incompatible changes and is the shared
 * library's SOVERSION; JITLOCK_RT_ABI_MINOR counts compatible additions since
 * the last incompatible change. There is no patch level: a fix that keeps
 * every contract changes neither.
 *
 * Compatible (JITLOCK_RT_ABI_MINOR + 1, same SOVERSION): a new function; a new
 * enum value or flag that a caller only meets when it asks for it; a field
 * appended at the end of a struct that has a struct_size field
 * (jitlock_rt_config, jitlock_rt_layout, jitlock_deflation_policy,
 * jitlock_monitor_stats). Such
 * structs only grow, at their
 * end, and their size grows with them. An appended config field's zero value
 * must mean the behaviour the library had before the field existed, so that
 * a caller that does not know the field gets that behaviour.
 *
 * Incompatible (JITLOCK_RT_ABI_VERSION + 1, JITLOCK_RT_ABI_MINOR back to 0,
 * so a new SOVERSION): removing or renaming a function; changing a signature
 * or a documented contract; removing, reordering or retyping a field of any
 * struct; adding a field to a struct without struct_size (jitlock_rt_stats,
 * jitlock_lock_info, jitlock_stack_info, jitlock_stack_overflow,
 * jitlock_guarded_result, jitlock_relock_entry); changing what a layout value
 * means to compiled code. Layout fingerprints start with
 * "abi=<JITLOCK_RT_ABI_VERSION>", so code lowered against another ABI version
 * is refused when it is loaded.
 *
 * struct_size, at the head of jitlock_rt_config and jitlock_rt_layout, is the
 * size of the caller's struct in bytes. jitlock_rt_default_config and
 * jitlock_rt_get_layout below are inline wrappers that set it to this
 * header's sizeof; a caller of the exported jitlock_rt_fill_default_config /
 * jitlock_rt_fill_layout (e.g. through a foreign-function interface) sets it
 * itself. The library reads and writes only the caller's struct_size bytes:
 *   - smaller than the library's struct (a caller built against an older
 *     header): only that prefix is read or written, and jitlock_rt_configure
 *     takes the defaults for the fields beyond it. The fields a struct had
 *     before it had a size are required (jitlock_rt_config up to
 *     locking_mode, jitlock_rt_layout up to poll_armed_bit); those appended
 *     since are optional, compiled_code_misuse the first;
 *   - larger (a newer header than the library): the fields the library knows
 *     are read or written; the rest of a filled struct is zeroed, and
 *     jitlock_rt_configure refuses a config whose unknown fields are not all
 *     zero, since it cannot honour them;
 *   - smaller than the required fields, or above JITLOCK_RT_MAX_STRUCT_SIZE
 *     (as from a struct nobody initialized): refused with JITLOCK_EINVAL, the
 *     misuse handler told the sizes, and nothing else of the struct read or
 *     written. */
#define JITLOCK_RT_ABI_VERSION 6u
#define JITLOCK_RT_ABI_MINOR 0u
#define JITLOCK_RT_MAX_STRUCT_SIZE 4096u

/* A version as jitlock_rt_version returns it: ABI version << 16 | minor. */
#define JITLOCK_RT_VERSION_PACK(abi, minor)                                    \
  (((uint32_t)(abi) << 16) | (uint32_t)(minor))
#define JITLOCK_RT_VERSION_ABI(version) ((uint32_t)(version) >> 16)
#define JITLOCK_RT_VERSION_MINOR(version) ((uint32_t)(version) & 0xffffu)
/* The version of this header. */
#define JITLOCK_RT_VERSION                                                     \
  JITLOCK_RT_VERSION_PACK(JITLOCK_RT_ABI_VERSION, JITLOCK_RT_ABI_MINOR)

/* The version of the library that is running (which may be newer or older
 * than the header its caller was compiled with). */
uint32_t jitlock_rt_version(void);

/* Non-zero when the running library serves a caller compiled with this
 * header: the same ABI version, and at least this header's minor. */
static inline int jitlock_rt_version_compatible(void) {
  uint32_t version = jitlock_rt_version();
  return JITLOCK_RT_VERSION_ABI(version) == JITLOCK_RT_ABI_VERSION &&
         version >= JITLOCK_RT_VERSION;
}

/*===-- Configuration and lifetime ---------------------------------------===*/

/* Called on every misuse before the error code is returned (or, for misuse
 * from compiled code under JITLOCK_MISUSE_ABORT, before the abort). `obj`
 * may be null. Must not call back into the runtime. No runtime lock is held
 * while it runs, so a stack overflow inside it, within a guarded call,
 * recovers like one in the code that misused the runtime. */
typedef void (*jitlock_misuse_fn)(void *ctx, jitlock_status status,
                                  jitlock_thread *thread, void *obj,
                                  const char *what);

typedef struct jitlock_rt_config {
  /* The size of the caller's struct (see "Versions and struct sizes");
   * jitlock_rt_default_config sets it. */
  uint32_t struct_size;
  /* Byte offset of the 64-bit header word from the object pointer. May be
   * negative. Default 0. */
  int32_t header_offset;
  /* Where the identity hash lives in the header: `hash_bits` bits starting
   * at bit `hash_shift`. Must not overlap bits [1:0]. Default 8 and 31.
   * hash_bits == 0 disables runtime-installed hashes. */
  uint32_t hash_shift;
  uint32_t hash_bits;
  /* Bounded spin before an enterer parks. Default 64. */
  uint32_t spin_limit;
  jitlock_misuse_fn misuse_handler;
  void *misuse_ctx;
  /* Stack guard zones of every attached thread, in pages, from the stack's
   * end upwards: red, yellow, reserved, then the shadow zone that a method
   * entry must find free below its stack pointer. Defaults 1, 2, 1, 20. The
   * red, yellow and reserved counts must be at least 1. */
  uint32_t stack_red_pages;
  uint32_t stack_yellow_pages;
  uint32_t stack_reserved_pages;
  uint32_t stack_shadow_pages;
  /* Non-zero (the default): protect the guard zones with mprotect at attach
   * and install the SIGSEGV backstop. Zero: the watermark check still runs
   * and reports overflow, but no page is protected. */
  uint32_t stack_guards;
  /* jitlock_locking_mode. Default JITLOCK_LOCKING_LIGHTWEIGHT. */
  uint32_t locking_mode;
  /* jitlock_misuse_action: what misuse found by a slow path that compiled
   * code called does after the misuse handler returns. Default
   * JITLOCK_MISUSE_ABORT. The C API always returns its status. */
  uint32_t compiled_code_misuse;
  /* jitlock_monitor_storage: how an inflated header names its monitor.
   * Default JITLOCK_MONITORS_POINTER. JITLOCK_MONITORS_TABLE needs
   * hash_bits > 0 (the table is keyed by the identity hash). */
  uint32_t monitor_storage;
  /* JITLOCK_MONITORS_INDEX: the most monitors that may exist at once (the
   * address range reserved for them; memory is committed on demand). 0: the
   * default, 1 << 20. */
  uint32_t monitor_capacity;
  /* jitlock_inflated_exit: how an inflated monitor's exit orders its release
   * against the entry count it reads next. Default JITLOCK_EXIT_AUTO. */
  uint32_t inflated_exit;
  /* The time-to-safepoint watchdog: when jitlock_rt_safepoint_begin (or a
   * safepoint the runtime takes itself) has waited this many milliseconds
   * for the threads to become safe, it prints to stderr every thread not
   * yet safe with its state, then acts on safepoint_timeout_action. 0 (the
   * default): the environment variable JITLOCK_SAFEPOINT_TIMEOUT_MS, if it
   * is set to a positive number, else no watchdog. */
  uint32_t safepoint_timeout_ms;
  /* jitlock_safepoint_timeout_action. Default JITLOCK_SAFEPOINT_TIMEOUT_REPORT
   * (or JITLOCK_SAFEPOINT_TIMEOUT_ACTION=abort in the environment). */
  uint32_t safepoint_timeout_action;
  /* Lock reservation (JITLOCK_LOCKING_RESERVED only, which needs
   * reserve_bits > 0; 0 in every other mode): the header bits the embedder
   * gives the runtime for the reservation field, `reserve_bits` bits (2 to
   * 32) at bit `reserve_shift`, clear of bits [1:0] and of the hash field.
   * The field's values are explained at jitlock_rt_layout's reserve_shift.
   * Defaults 0 and 0. */
  uint32_t reserve_shift;
  uint32_t reserve_bits;
  /* Reserved locking's policy: after this many revocations of its
   * reservations (each one a handshake that stopped it), a thread stops
   * reserving: its own reserved objects are revoked with the last one, and
   * it takes reservable objects by fast locking from then on. 0: no limit
   * (the behaviour before the field existed). Default 64. */
  uint32_t reserve_revoke_limit;
} jitlock_rt_config;

typedef enum jitlock_safepoint_timeout_action {
  /* Print the report once, then keep waiting. */
  JITLOCK_SAFEPOINT_TIMEOUT_REPORT = 0,
  /* Print the report, then abort() the process. */
  JITLOCK_SAFEPOINT_TIMEOUT_ABORT = 1
} jitlock_safepoint_timeout_action;

typedef enum jitlock_inflated_exit {
  /* JITLOCK_EXIT_STORE where membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)
   * can be registered, else JITLOCK_EXIT_FENCE. */
  JITLOCK_EXIT_AUTO = 0,
  /* A release store of the owner word, then a plain load of the entry count,
   * with no fence: a thread about to park issues the process-wide barrier
   * instead. jitlock_rt_configure refuses it (JITLOCK_EINVAL) where
   * membarrier is missing. */
  JITLOCK_EXIT_STORE = 1,
  /* A release store, a full fence, then the load (the fallback). */
  JITLOCK_EXIT_FENCE = 2
} jitlock_inflated_exit;

/* How an inflated header names its monitor; each encoding is stated at
 * jitlock_rt_layout's monitor_storage. */
typedef enum jitlock_monitor_storage {
  JITLOCK_MONITORS_POINTER = 0, /* the monitor's address */
  JITLOCK_MONITORS_INDEX = 1,   /* a monitor index into one region */
  JITLOCK_MONITORS_TABLE = 2    /* a side table keyed by the hash */
} jitlock_monitor_storage;

typedef enum jitlock_locking_mode {
  /* Fast locking on the lock stack; monitors only where needed. */
  JITLOCK_LOCKING_LIGHTWEIGHT = 0,
  /* Every enter of an object without a monitor inflates it: the
   * heavy-monitor scheme that lightweight locking replaces, kept as a
   * measurable baseline. Fast-locked objects (from code lowered for the
   * lightweight mode) are still handled correctly. */
  JITLOCK_LOCKING_HEAVY = 1,
  /* Lightweight locking, plus reservation: an object the embedder marks
   * reservable is reserved to the first thread that locks it, which then
   * enters and exits it with no atomic instruction until another thread
   * wants it and a handshake with the reserving thread revokes the
   * reservation. Needs reserve_bits > 0. Every code generator must lower
   * for this mode (the layout's fingerprint says so): the lightweight fast
   * path alone would take a reserved object's header. */
  JITLOCK_LOCKING_RESERVED = 2
} jitlock_locking_mode;

typedef enum jitlock_misuse_action {
  /* Print a fatal message naming the thread (its id, or that it is not
   * attached), the object and the misuse, then abort(). */
  JITLOCK_MISUSE_ABORT = 0,
  /* Return the status to the compiled code, which ignores it: nothing
   * changed, and the code carries on (a refused enter runs its critical
   * section without the lock). For embedders that log and continue. */
  JITLOCK_MISUSE_REPORT = 1
} jitlock_misuse_action;

/* Fills the first cfg->struct_size bytes of `cfg` with the defaults (zeroing
 * any bytes beyond the library's struct), keeping struct_size. JITLOCK_EINVAL
 * for a size it refuses (see "Versions and struct sizes"). */
int jitlock_rt_fill_default_config(jitlock_rt_config *cfg);

/* Fills `cfg` with the defaults, struct_size included. */
static inline void jitlock_rt_default_config(jitlock_rt_config *cfg) {
  cfg->struct_size = (uint32_t)sizeof(*cfg);
  (void)jitlock_rt_fill_default_config(cfg);
}

/* Applies a configuration. Allowed only while no thread is attached; returns
 * JITLOCK_ESTATE otherwise and JITLOCK_EINVAL for an invalid config,
 * including a struct_size it refuses. Fields beyond a smaller caller's
 * struct_size take their defaults. The runtime is usable without calling
 * this: it starts with the defaults.
 *
 * Once the layout has been handed out (jitlock_rt_fill_layout or
 * jitlock_rt_get_layout called, jitlock_rt_check_layout passed, or a thread
 * attached), code may have been generated for it and objects locked by it:
 * a configuration whose layout fingerprint differs (header offset, monitor
 * storage, inflated exit, shadow pages) is then refused with JITLOCK_ESTATE
 * and a misuse report naming both fingerprints. A configuration with the
 * same fingerprint (other spin limits, misuse handler, locking mode, ...)
 * stays allowed. jitlock_rt_shutdown and jitlock_rt_shutdown_forget end
 * that: code generated before them must not run afterwards unless the
 * layout stays the same. */
int jitlock_rt_configure(const jitlock_rt_config *cfg);

/* Frees every monitor and restores every inflated object's header to its
 * unlocked form (hash kept). Requires every thread to be detached; returns
 * JITLOCK_ESTATE otherwise. The runtime may be used again afterwards, and
 * configured with another layout. */
int jitlock_rt_shutdown(void);

/* As jitlock_rt_shutdown, but writes to no object: every monitor is
 * forgotten and freed, and no displaced header is written back. For a VM
 * that has already freed (or will never look at again) the memory of its
 * objects. Objects that still exist keep whatever their headers hold (a
 * monitor tag that names freed memory): they must not be locked again. */
int jitlock_rt_shutdown_forget(void);

/* The layout check of lowered code: `fingerprint` is the layout fingerprint
 * (jitlock_rt_layout_fingerprint) that the code was generated for. Returns
 * JITLOCK_OK and freezes the layout (see jitlock_rt_configure) when it is
 * this runtime's; otherwise reports JITLOCK_EINVAL to the misuse handler
 * with both fingerprints and, as misuse from compiled code does (unless
 * compiled_code_misuse is JITLOCK_MISUSE_REPORT), aborts with that message.
 * Called before the layout was handed out (from the constructor of code
 * linked into the program, before main configures the runtime), it keeps
 * the fingerprint and returns JITLOCK_OK: the comparison happens at the
 * next jitlock_rt_attach, before any monitor operation.
 * The LLVM lowering emits a module constructor that calls it, so code
 * lowered for another layout stops before its first monitor operation
 * instead of miscounting or faulting; a JIT must run module constructors
 * (ORC: LLJIT::initialize). A null fingerprint is refused the same way. */
int jitlock_rt_check_layout(const char *fingerprint);

/*===-- Threads ----------------------------------------------------------===*/

/* Attaches the calling OS thread; idempotent. The thread structure lives in
 * the OS thread's static TLS, so JIT code in `tls` mode finds it at
 * thread-pointer + layout.thread_tls_offset. Returns null (and reports
 * JITLOCK_ESTATE to the misuse handler) when called from a thread-local
 * destructor that runs after the runtime's own exit hook for the thread. */
jitlock_thread *jitlock_rt_attach(void);

/* Detaches the calling thread. Fails with JITLOCK_EHOLDING_LOCKS, leaving the
 * thread attached and every lock held, if it holds any lock. An OS thread that
 * exits while attached has its locks released (and the misuse handler called
 * with JITLOCK_EHOLDING_LOCKS) so that nothing stays locked by a dead thread.
 */
int jitlock_rt_detach(void);

/* The calling thread's runtime thread, or null when it is not attached. */
jitlock_thread *jitlock_rt_current(void);

/* The calling OS thread's structure, attached or not: what JIT code in `call`
 * mode materializes. A detached thread's lock stack reads as full and empty,
 * so inline fast paths always take their slow path, which returns
 * JITLOCK_ENOT_ATTACHED (and calls the misuse handler) instead of touching
 * memory. */
jitlock_thread *jitlock_rt_code_thread(void);

/* A small, unique, never-reused number for diagnostics (1, 2, ...). */
uint64_t jitlock_rt_thread_id(const jitlock_thread *thread);

/* A pointer of the embedder's own per thread (its VM thread object, say),
 * kept by the runtime and never dereferenced. Set by the thread itself or
 * by another thread while `thread` is attached; JITLOCK_ENOT_ATTACHED
 * otherwise. Attach and detach reset it to null. */
int jitlock_rt_set_thread_data(jitlock_thread *thread, void *data);
/* The pointer last set for `thread`, or null (never set, or `thread` not
 * attached). */
void *jitlock_rt_thread_data(const jitlock_thread *thread);

/*===-- Monitor enter and exit -------------------------------------------===*/
/* The complete operations, for interpreters and embedders: misuse (`self`
 * not the calling, attached thread: JITLOCK_ENOT_ATTACHED; a null object:
 * JITLOCK_ENULL; an exit of an object `self` does not hold:
 * JITLOCK_ENOT_OWNER) returns its status and changes nothing. An enter (or
 * a wait) that sleeps is safe meanwhile, and a moving collector may move
 * `obj` then (jitlock_rt_enumerate_roots): it returns holding the object at
 * its new address, which is what the caller's references hold after the
 * collection, and the matching exit names that address. */

int jitlock_rt_monitor_enter(jitlock_thread *self, void *obj);
int jitlock_rt_monitor_exit(jitlock_thread *self, void *obj);

/* The same operations as the slow paths of inline code: what the LLVM
 * lowering calls and what the asmjit emitters' RuntimeEntries name by
 * default. Inline code calls them with the thread's state exactly as it was
 * before the inline attempt: an inline exit that popped its entry and then
 * failed its CAS pushes the entry back before calling.
 *
 * Compiled code cannot look at a status, and code that carries on after a
 * refused enter runs its critical section unlocked. So the misuse above (a
 * thread that is not attached, detached or never attached, whose structure
 * the code found in TLS or through jitlock_rt_code_thread; a null object; an
 * unbalanced exit or one by a non-owner) is reported to the misuse handler
 * and then, with compiled_code_misuse at its default JITLOCK_MISUSE_ABORT,
 * aborts the process with a message on stderr such as
 *   jitlock: fatal: misuse from compiled code: monitor exit by a non-owner
 *   (JITLOCK_ENOT_OWNER) on thread 3, object 0x7f0c2a4010a0
 * With JITLOCK_MISUSE_REPORT they return the status as the C API does.
 *
 * The other entry points that inline code calls lose nothing by staying
 * silent: jitlock_rt_stack_bang and jitlock_rt_safepoint_poll do nothing for
 * a thread that is not attached, which has no zones to bang (its watermark
 * is 0, so inline code does not call the bang) and no safepoint to stop at. */

int jitlock_rt_monitor_enter_slow(jitlock_thread *self, void *obj);
int jitlock_rt_monitor_exit_slow(jitlock_thread *self, void *obj);

/* What inline code calls after its inflated exit released `obj`'s monitor
 * and then found threads queued to enter it: wakes one to take the monitor,
 * or leaves that to whoever holds it now. `self` no longer owns the
 * monitor; the call must follow the release with no safepoint poll in
 * between. Returns JITLOCK_OK; misuse (a thread that is not attached, a
 * null object) as for the _slow pair. */
int jitlock_rt_monitor_exit_queued_slow(jitlock_thread *self, void *obj);

/*===-- Wait and notify --------------------------------------------------===*/

/* Waits until notified. Returns JITLOCK_OK only after a notify chose this
 * waiter: there are no spurious returns. The monitor is re-acquired with the
 * same recursion depth before returning, whatever the status. Returns
 * JITLOCK_EINTERRUPTED, with the thread's interrupt flag cleared, when the
 * flag was set before the call (then the monitor is never released) or is
 * set by jitlock_rt_interrupt while the thread is still in the wait set. A
 * waiter that a notify chose before the interrupt reached it returns
 * JITLOCK_OK with the flag still set (so no notification is ever lost to an
 * interrupt), and its next wait returns JITLOCK_EINTERRUPTED at once. */
int jitlock_rt_wait(jitlock_thread *self, void *obj);
/* As jitlock_rt_wait, but returns JITLOCK_ETIMEDOUT when `timeout_ns` passes
 * first. A timeout of 0 times out at once (after releasing and reacquiring).
 * An interrupt found in the wait set when the timeout passes wins:
 * JITLOCK_EINTERRUPTED. */
int jitlock_rt_wait_timed(jitlock_thread *self, void *obj, uint64_t timeout_ns);
/* Wakes the longest waiter / every waiter. On an object that `self` holds
 * fast-locked these are no-ops: a fast-locked object has no waiters. */
int jitlock_rt_notify(jitlock_thread *self, void *obj);
int jitlock_rt_notify_all(jitlock_thread *self, void *obj);

/* Interrupts, as Java's Thread.interrupt and .NET's Thread.Interrupt need
 * them. Each attached thread has an interrupt flag, clear at attach.
 *
 * Sets `thread`'s interrupt flag and, if it waits in jitlock_rt_wait or
 * _wait_timed and no notify chose it yet, ends that wait with
 * JITLOCK_EINTERRUPTED. Interrupts do not count: a second one before the
 * flag is consumed changes nothing. Any thread may call it, attached or not,
 * in any state; it never blocks for long (it takes the thread registry and
 * the monitor's queue lock briefly). JITLOCK_ENOT_ATTACHED (and the misuse
 * handler) for a null or detached `thread`: the pointer is only compared
 * with the attached threads, never read, so a thread that detached or exited
 * is safe to name. But a jitlock_thread lives in its OS thread's TLS, which
 * a thread created later may get: the embedder must not interrupt a thread
 * it knows to have detached (a VM forgets the pointer at detach, under its
 * own lock), as for jitlock_rt_thread_state. */
int jitlock_rt_interrupt(jitlock_thread *thread);
/* 1 when `thread`'s interrupt flag is set, 0 when not, -1 when `thread` is
 * not attached. A snapshot for another thread. Leaves the flag alone. */
int jitlock_rt_is_interrupted(const jitlock_thread *thread);
/* Clears the calling thread's interrupt flag and returns 1 if it was set,
 * 0 if not (Java's Thread.interrupted()). -1, with JITLOCK_ENOT_ATTACHED
 * to the misuse handler, when `self` is not the calling, attached thread. */
int jitlock_rt_clear_interrupt(jitlock_thread *self);

/*===-- Identity hash ----------------------------------------------------===*/

/* Returns the object's identity hash, installing a fresh non-zero one first
 * if it has none. Never inflates; the hash survives inflation. `self` may be
 * null (a global generator is used). Returns 0 for a null object or when
 * hashes are disabled. */
uint64_t jitlock_rt_identity_hash(jitlock_thread *self, void *obj);
/* The installed hash, or 0 when none is installed. */
uint64_t jitlock_rt_peek_hash(const void *obj);

/*===-- Deopt-time lock restoration --------------------------------------===*/

typedef enum jitlock_relock_kind {
  JITLOCK_RELOCK_HELD = 0,  /* already held: has its lock stack entry or
                               its count in a monitor */
  JITLOCK_RELOCK_ELIDED = 1 /* the compiler elided this lock */
} jitlock_relock_kind;

typedef struct jitlock_relock_entry {
  void *obj;
  uint32_t kind; /* jitlock_relock_kind */
} jitlock_relock_entry;

/* The frame holds no lock-stack entry of its own and younger frames of the
 * same thread may hold entries above it (e.g. relocking a suspended thread's
 * non-top frame): the frame's position on the lock stack is unknown. */
#define JITLOCK_RELOCK_NOT_YOUNGEST 1u

/* Re-acquires a deoptimized frame's elided locks on behalf of `owner`.
 * `entries` is the frame's complete monitor list, outermost first. Frames are
 * restored outermost frame first. Afterwards every object is held exactly as
 * many times as without elision, and the lock stack holds the frame's
 * fast-locked objects in the same order, recursion by adjacency. A lock is
 * inflated instead only where that order cannot be expressed (non-adjacent
 * re-entry, a full stack, or an unknown position); which object a full stack
 * pushes into a monitor may differ from the unelided run. Existing entries
 * are never reordered.
 *
 * `owner` is the caller, or a thread that is stopped for the duration of the
 * call. When `owner` is not the caller and an elided object is owned by
 * another thread, nothing is changed and JITLOCK_EBUSY is returned (anything
 * acquired by the call is released again, innermost first). JITLOCK_EINVAL
 * means the HELD entries do not match the owner's state; nothing changed. */
int jitlock_rt_restore_locks(jitlock_thread *owner,
                             const jitlock_relock_entry *entries, size_t count,
                             uint32_t flags);

/*===-- Queries ----------------------------------------------------------===*/
/* Guarantees while other threads run are stated per function, and at length
 * in docs/runtime.md. */

typedef enum jitlock_lock_state {
  JITLOCK_STATE_UNLOCKED = 0,
  JITLOCK_STATE_FAST = 1,     /* fast-locked: on some thread's lock stack */
  JITLOCK_STATE_INFLATED = 2, /* has a monitor (owned or not) */
  JITLOCK_STATE_EMBEDDER = 3, /* low bits 11: owned by the embedder */
  /* Reserved to a thread (JITLOCK_LOCKING_RESERVED only): owner is that
   * thread while the object is on its lock stack (holds: its entries),
   * else null. */
  JITLOCK_STATE_RESERVED = 4
} jitlock_lock_state;

typedef struct jitlock_lock_info {
  uint32_t state;           /* jitlock_lock_state */
  uint32_t anonymous_owner; /* inflated by a contender; owner not fixed yet */
  jitlock_thread *owner;    /* null when unowned or not found */
  uint64_t holds;           /* owner's hold count (recursion + 1), or 0 */
  uint64_t entry_queued;    /* threads parked to enter */
  uint64_t waiting;         /* threads in the wait set */
} jitlock_lock_info;

/* A snapshot of one object's lock. Exact when the object's lock does not
 * change during the call; otherwise a state the object had during the call,
 * possibly with the owner not found. */
int jitlock_rt_inspect(const void *obj, jitlock_lock_info *info);

/* Which thread owns `obj`, from monitor owners and, for fast-locked or
 * anonymously owned objects, a scan of every lock stack. If the lock is free
 * for the whole call, null. If one thread holds it for the whole call, that
 * thread is returned, unless that thread shifts the entry within its lock
 * stack meanwhile (an unstructured exit or an inflation below it) on every
 * one of the scan's retries, in which case null. */
jitlock_thread *jitlock_rt_owner_of(const void *obj);

/* Whether `thread` holds `obj`. Exact when `thread` is the caller; 0 when
 * `thread` is not attached (another thread is read under the registry lock,
 * so it cannot detach meanwhile). */
int jitlock_rt_holds_lock(const jitlock_thread *thread, const void *obj);

/* Copies up to `cap` lock stack entries of `thread`, oldest first, and returns
 * the depth; 0 when `thread` is not attached. Exact for the caller's own
 * thread or a stopped thread. */
size_t jitlock_rt_lock_stack(const jitlock_thread *thread, void **out,
                             size_t cap);

/* One deadlock cycle: thread[i] waits to enter obj[i], which thread[i+1 mod n]
 * owns. */
typedef void (*jitlock_deadlock_fn)(void *ctx, size_t n,
                                    jitlock_thread *const *threads,
                                    void *const *objs);
/* Reports every cycle among threads blocked in monitor enter and returns how
 * many it found. A reported cycle is confirmed: every thread in it stayed
 * blocked, on the same monitor, from the first read to the last, so the cycle
 * existed at that moment. A deadlock that exists when the call starts is
 * reported. */
size_t jitlock_rt_find_deadlocks(jitlock_deadlock_fn fn, void *ctx);

typedef enum jitlock_root_kind {
  JITLOCK_ROOT_LOCK_STACK = 0, /* a lock stack slot */
  JITLOCK_ROOT_MONITOR = 1     /* a monitor's object field */
} jitlock_root_kind;
/* `slot` holds an object pointer; a moving collector may store the object's
 * new address into it. For monitor roots it must also move the header. The
 * dead copy's header may then hold anything: a thread that slept in the
 * runtime for the object (to enter it, or in a wait) follows the monitor
 * root, not the address it was called with, and returns holding the object
 * at its new address. */
typedef void (*jitlock_root_fn)(void *ctx, void **slot, uint32_t kind,
                                jitlock_thread *thread);
/* Enumerates lock stack entries of every attached thread and the object of
 * every monitor, exactly: it runs inside a safepoint, the caller's own if it
 * holds one, else one it takes for the call (an attached caller counts as
 * stopped meanwhile). `fn` must not call back into the runtime. It runs with
 * no runtime lock held but that safepoint: a stack overflow inside it,
 * within a guarded call, abandons the enumeration (the roots visited keep
 * what `fn` stored, and the runtime follows the objects moved so far) and
 * releases a safepoint the call took. */
void jitlock_rt_enumerate_roots(jitlock_root_fn fn, void *ctx);

/*===-- Monitor deflation ------------------------------------------------===*/

/* Deflates every idle monitor: one with no owner, no recursion, no thread
 * queued to enter and none waiting. Its object's header gets back its
 * unlocked form (hash and embedder bits kept) and the monitor is freed for
 * reuse. Returns how many were deflated.
 *
 * It runs while mutators lock, wait and notify, from any thread, without
 * stopping them: a thread entering a monitor being deflated either cancels
 * the deflation or retries from the header, and deflated monitors are reused
 * only after a handshake with every thread (jitlock_rt_handshake_all), so no
 * thread can hold a deflated monitor's address when it is reused. It waits
 * for a safepoint in progress; inside the caller's own it needs no handshake.
 * An embedder calls it before it frees or reuses the memory of objects that
 * may have monitors, as a collector would; the deflation thread below calls
 * it on a policy. */
size_t jitlock_rt_deflate_idle(void);

/*===-- Thread states, safepoints and handshakes --------------------------===*/
/* Monitor operations (enter, exit, wait, notify) belong to managed code: call
 * them in `managed` or `runtime`, never in `native`, where a safepoint counts
 * the thread as stopped.
 *
 * Every attached thread is in one of four states. A VM thread stops the
 * others at a safepoint, or runs an operation for one of them (a handshake),
 * only once each is *safe*: in `native` or `blocked`, where it touches no
 * object and no lock state without first making a transition that checks for
 * a stop in progress. See docs/safepoints.md.
 *
 * A thread attaches in `managed`. Managed code (compiled or interpreted) must
 * reach a safepoint poll within bounded time: inline code checks the thread's
 * poll word (layout.poll_word_offset, armed when `poll_word & poll_armed_bit`)
 * and calls jitlock_rt_safepoint_poll when it is armed. A thread that parks
 * in the runtime (a contended enter, wait, a timed wait) or waits for the
 * runtime's thread registry is `blocked` meanwhile and, before it returns,
 * stops at a safepoint in progress and runs pending handshakes. */

typedef enum jitlock_thread_state {
  JITLOCK_THREAD_MANAGED = 0, /* running managed code; must reach a poll */
  JITLOCK_THREAD_NATIVE = 1,  /* in foreign code: safe, touches no object */
  JITLOCK_THREAD_RUNTIME = 2, /* inside the runtime or the VM: not yet safe */
  JITLOCK_THREAD_BLOCKED = 3  /* parked or waiting in the runtime: safe */
} jitlock_thread_state;

/* managed -> native, for a call into foreign code or a long wait outside the
 * runtime. Never blocks. JITLOCK_ENOT_ATTACHED unless `self` is the calling,
 * attached thread; JITLOCK_ESTATE unless it is in `managed`. */
int jitlock_rt_enter_native(jitlock_thread *self);
/* native -> managed. While a safepoint is in progress, or a handshake for
 * `self` is being run, it blocks until that ends; then it runs any handshake
 * still pending for `self`. Errors as jitlock_rt_enter_native, with
 * JITLOCK_ESTATE unless `self` is in `native`, and while `self` holds a
 * safepoint (end it first). */
int jitlock_rt_leave_native(jitlock_thread *self);
/* managed -> runtime and back, for VM work that is not yet safe but is not
 * managed code either (it need not poll). jitlock_rt_leave_runtime stops at a
 * safepoint in progress, as a poll would. Errors as above. */
int jitlock_rt_enter_runtime(jitlock_thread *self);
int jitlock_rt_leave_runtime(jitlock_thread *self);
/* The thread's state (jitlock_thread_state) as last published, or -1 when
 * `thread` is not attached. A snapshot for another thread. */
int jitlock_rt_thread_state(const jitlock_thread *thread);

/* The poll slow path, called by inline code whose poll found the poll word
 * armed (and usable by interpreters at their own polls). Stops at a
 * safepoint in progress until it ends, and runs the handshakes pending for
 * `self`, then returns. Does nothing for a thread that is not the calling,
 * attached thread. Inline callers need not save registers beyond the C ABI. */
void jitlock_rt_safepoint_poll(jitlock_thread *self);

/* Stops every attached thread: arms every poll word, then waits until each
 * thread is seen safe (a stable read of its state and safepoint id). Returns
 * with all of them stopped; they stay stopped until jitlock_rt_safepoint_end.
 * Only one safepoint or handshake runs at a time: a second caller waits. The
 * caller must not be an attached thread outside `native` (JITLOCK_ESTATE),
 * and must not already hold a safepoint (JITLOCK_ESTATE). While it holds
 * one, the caller may call the runtime's queries, jitlock_rt_deflate_idle,
 * jitlock_rt_enumerate_roots, jitlock_rt_find_deadlocks and the handshake
 * calls (which then run each operation directly). */
int jitlock_rt_safepoint_begin(void);
/* Releases every thread stopped by the caller's safepoint at once.
 * JITLOCK_ESTATE when the caller holds no safepoint, or calls it from inside
 * the runtime (a root enumeration or deflation callback). A guarded call
 * whose fn took a safepoint and overflowed releases it; a thread that exits
 * holding one, attached or not, releases it (and reports JITLOCK_ESTATE). */
int jitlock_rt_safepoint_end(void);
/* Whether the calling thread holds a safepoint. */
int jitlock_rt_in_safepoint(void);

/* A handshake operation, run exactly once for `target`: either by the target
 * itself at its next poll or transition, or by the requester while the target
 * is safe (the target cannot leave its safe state meanwhile, except into the
 * registry-protected part of a query it was waiting for). It may use the
 * runtime's queries on `target` and read or update `target`'s stacks. It may
 * not start another VM operation: a safepoint, a handshake, deflation, root
 * enumeration or detach return JITLOCK_ESTATE (0 roots, 0 deflated) there.
 * A stack overflow inside it cannot be recovered: it is fatal. */
typedef void (*jitlock_handshake_fn)(void *arg, jitlock_thread *target);

/* Runs fn(arg, target) once for `target` and returns when it has run. The
 * operation runs on the caller's own thread when `target` is the caller.
 * JITLOCK_ENOT_ATTACHED when `target` is not attached; JITLOCK_EINVAL for a
 * null fn. Waits, like jitlock_rt_safepoint_begin, for a safepoint or another
 * handshake in progress; inside the caller's own safepoint it runs fn at once.
 */
int jitlock_rt_handshake(jitlock_thread *target, jitlock_handshake_fn fn,
                         void *arg);
/* Runs fn(arg, t) once for every thread t attached when the call starts (the
 * caller included, on its own thread) and returns when all have run. */
int jitlock_rt_handshake_all(jitlock_handshake_fn fn, void *arg);

/*===-- Stack guard zones and method-entry stack banging -----------------===*/
/* Each attached thread's stack, from its end (lowest address) upwards:
 *
 *   [end, +red)          red zone: protected; a fault here is fatal
 *   [.., +yellow)        yellow zone: protected; a fault unprotects it and
 *                        recovers (the signal backstop)
 *   [.., +reserved)      reserved zone: as yellow
 *   [.., +shadow)        shadow zone: never protected; what a method entry
 *                        must find free below its stack pointer
 *   safe_limit ... base  usable by frames
 *
 * Checked method entries compare their stack pointer with the thread's
 * watermark (layout.stack_watermark_offset) and call jitlock_rt_stack_bang
 * only at or below it. The watermark starts at the stack base, only goes
 * down, and never goes below safe_limit. See docs/stack-banging.md. */

typedef enum jitlock_stack_zone {
  JITLOCK_ZONE_NONE = 0,     /* not in the guard zones */
  JITLOCK_ZONE_SHADOW = 1,   /* caught by the bang check: no room for the
                                shadow zone below the stack pointer */
  JITLOCK_ZONE_RESERVED = 2, /* a fault in the reserved zone */
  JITLOCK_ZONE_YELLOW = 3,   /* a fault in the yellow zone */
  JITLOCK_ZONE_RED = 4       /* a fault in the red zone: fatal */
} jitlock_stack_zone;

typedef struct jitlock_stack_info {
  uintptr_t base;         /* the highest stack address (exclusive) */
  uintptr_t end;          /* the lowest stack address */
  uintptr_t red_top;      /* the red zone is [end, red_top) */
  uintptr_t yellow_top;   /* the yellow zone is [red_top, yellow_top) */
  uintptr_t reserved_top; /* the reserved zone is [yellow_top, reserved_top) */
  uintptr_t safe_limit;   /* reserved_top + the shadow zone */
  uintptr_t watermark;    /* safe_limit <= watermark <= base */
  uint32_t page_size;
  /* Bit i set (i = jitlock_stack_zone) while that zone is protected. 0 when
   * the zones could not be protected (stack_guards == 0, a stack too small
   * for them, the primordial thread): they are then logical, and the
   * watermark check works the same. */
  uint32_t protected_zones;
  uint64_t bangs;     /* slow-path calls that banged and lowered the mark */
  uint64_t overflows; /* overflows caught on this thread so far */
} jitlock_stack_info;

/* The zones of an attached thread. JITLOCK_ENOT_ATTACHED otherwise. Exact
 * for the calling thread. */
int jitlock_rt_stack_info(const jitlock_thread *thread,
                          jitlock_stack_info *info);

/* The stack-bang slow path, called by checked method entries when
 * `sp_needed` (the entry's stack pointer minus its extra frame bytes) is at
 * or below the watermark. With room for the shadow zone below `sp_needed`
 * (sp_needed > safe_limit) it touches the shadow pages below it, lowers the
 * watermark to the highest page boundary strictly below `sp_needed` (or to
 * safe_limit) and returns. Otherwise it reports a stack overflow to the
 * overflow handler, which does not return. A call with `sp_needed` above
 * the watermark, or for a thread that is not the caller's attached thread,
 * does nothing. Inline callers need not save registers beyond the C ABI. */
void jitlock_rt_stack_bang(jitlock_thread *self, uintptr_t sp_needed);

/* What the overflow handler is told. */
typedef struct jitlock_stack_overflow {
  jitlock_thread *thread;
  uintptr_t sp;         /* the stack pointer that did not fit */
  uintptr_t fault_addr; /* the faulting address (backstop), else 0 */
  uint32_t zone;        /* jitlock_stack_zone: where it was caught */
  uint32_t from_signal; /* 1 when caught by the SIGSEGV backstop */
  jitlock_stack_info stack;
} jitlock_stack_overflow;

/* Called on the overflowing thread: on what is left of its stack (the bang
 * check) or on the alternate signal stack (the backstop, where it must be
 * async-signal-safe). It must not return: it unwinds, as the default
 * jitlock_rt_unwind_to_entry does, or terminates. If it returns, the runtime
 * prints a fatal message and aborts. A handler that unwinds itself must stay
 * within the innermost jitlock_rt_call_guarded's fn (or leave every guarded
 * call of the thread); a zone the backstop unprotected is protected again by
 * the thread's next guarded call. */
typedef void (*jitlock_overflow_fn)(void *ctx,
                                    const jitlock_stack_overflow *info);

/* Installs the overflow handler for every thread; null restores the
 * default, jitlock_rt_unwind_to_entry. */
void jitlock_rt_set_overflow_handler(jitlock_overflow_fn fn, void *ctx);

typedef struct jitlock_guarded_result {
  /* Valid when the call returned JITLOCK_ESTACK_OVERFLOW. */
  jitlock_stack_overflow overflow;
  /* The caller's buffer for the objects whose holds were released, innermost
   * first, one entry per hold; may be null. */
  void **released;
  size_t released_cap;
  size_t released_count; /* holds released; may exceed released_cap */
} jitlock_guarded_result;

/* Runs fn(arg) on the calling attached thread as an entry point into JIT
 * code. When a stack overflow is caught inside (by the bang check or by the
 * backstop) and the handler is the default, fn's frames are abandoned, every
 * lock hold acquired inside fn and still held is released (innermost first:
 * lock stack entries top-down, then monitors) and listed in `result`, a zone
 * unprotected by the backstop is protected again, and
 * JITLOCK_ESTACK_OVERFLOW is returned. Holds taken before the call are kept.
 * Guarded calls nest; an overflow returns to the innermost one. fn's frames
 * are left with longjmp: they must hold nothing but jitlock locks when they
 * can overflow (see docs/stack-banging.md). `result` may be null.
 * JITLOCK_ENOT_ATTACHED when `self` is not the calling, attached thread;
 * JITLOCK_EINVAL for a null fn. */
int jitlock_rt_call_guarded(jitlock_thread *self, void (*fn)(void *), void *arg,
                            jitlock_guarded_result *result);

/* The default overflow handler: abandons the frames down to the calling
 * thread's innermost jitlock_rt_call_guarded, which returns
 * JITLOCK_ESTACK_OVERFLOW. With no guarded call on the thread it prints a
 * fatal message naming the thread and its stack bounds and aborts. */
void jitlock_rt_unwind_to_entry(void *ctx, const jitlock_stack_overflow *info)
    __attribute__((noreturn));

/*===-- Statistics -------------------------------------------------------===*/

typedef struct jitlock_rt_stats {
  uint64_t fast_locks;       /* CAS 01->00 by the runtime */
  uint64_t recursive_locks;  /* adjacent re-entry pushes by the runtime */
  uint64_t monitor_enters;   /* acquisitions of an inflated monitor */
  uint64_t inflations;       /* monitors created */
  uint64_t contended_enters; /* enters that found another owner */
  uint64_t parks;            /* times a thread parked */
  uint64_t slow_path_calls;  /* enter/exit calls into the runtime */
  uint64_t waits;
  uint64_t notifies;
  uint64_t monitors_alive; /* monitors currently allocated */
} jitlock_rt_stats;

/* Sums the counters of every attached thread and of detached ones. The sum
 * is a snapshot; counters of running threads may advance during it. */
void jitlock_rt_get_stats(jitlock_rt_stats *stats);

/* Reserved locking's counters (JITLOCK_LOCKING_RESERVED), summed over
 * threads as jitlock_rt_get_stats sums; all 0 in the other modes. In a struct
 * of its own, with a size, so that jitlock_rt_stats keeps its layout. */
typedef struct jitlock_reservation_stats {
  /* The size of the caller's struct (see "Versions and struct sizes"). */
  uint32_t struct_size;
  uint32_t reserved0;
  uint64_t reservations; /* objects reserved by the runtime (R2) */
  uint64_t
      reserved_enters;     /* enters of a reserved object by the runtime (R1) */
  uint64_t reserved_exits; /* exits of a reserved object by the runtime (R4) */
  /* Revocations (R3), by what the reserving thread did with the object: */
  uint64_t revocations_held;     /* held: fast-locked or inflated for it */
  uint64_t revocations_unheld;   /* not held: unlocked, not reservable */
  uint64_t revocations_detached; /* its thread had detached: no handshake */
  /* Threads that reached reserve_revoke_limit and stopped reserving. */
  uint64_t threads_stopped;
} jitlock_reservation_stats;

/* Fills the first stats->struct_size bytes of `stats` (set it first, to
 * sizeof(jitlock_reservation_stats) for this header), as
 * jitlock_rt_fill_layout does: JITLOCK_EINVAL for a null pointer or a size
 * it refuses. */
int jitlock_rt_fill_reservation_stats(jitlock_reservation_stats *stats);

/* The monitor storage's figures (see jitlock_monitor_storage); a snapshot. */
typedef struct jitlock_monitor_stats {
  /* The size of the caller's struct (see "Versions and struct sizes"). */
  uint32_t struct_size;
  uint32_t monitor_storage;    /* jitlock_monitor_storage in use */
  uint64_t monitors_alive;     /* as jitlock_rt_stats */
  uint64_t monitors_allocated; /* as jitlock_deflation_stats */
  uint64_t monitor_capacity;   /* index: the region's monitors; else 0 */
  /* Table storage; 0 otherwise. */
  uint64_t table_slots;         /* the current array's size */
  uint64_t table_entries;       /* live entries */
  uint64_t table_tombstones;    /* deleted slots not yet rehashed away */
  uint64_t table_rehashes;      /* since the process started */
  uint64_t table_longest_probe; /* slots probed by the longest lookup */
  uint64_t table_lookups;       /* lookups the runtime made */
  /* The runtime's own lookups (slow paths) that the calling thread's
   * monitor cache answered or missed, summed over threads; inline code's
   * hits are not counted. */
  uint64_t cache_hits;
  uint64_t cache_misses;
} jitlock_monitor_stats;

/* Fills the first stats->struct_size bytes of `stats`, as
 * jitlock_rt_fill_layout does. JITLOCK_EINVAL for a null pointer or a size
 * it refuses. */
int jitlock_rt_fill_monitor_stats(jitlock_monitor_stats *stats);

/* Fills `stats`, struct_size included. */
static inline void jitlock_rt_get_monitor_stats(jitlock_monitor_stats *stats) {
  stats->struct_size = (uint32_t)sizeof(*stats);
  (void)jitlock_rt_fill_monitor_stats(stats);
}

/*===-- Layout -----------------------------------------------------------===*/

/* Every offset and constant the JIT paths need. This is the single source of
 * truth: the LLVM passes and the asmjit emitters read it. */
typedef struct jitlock_rt_layout {
  /* The size of the caller's struct (see "Versions and struct sizes"). On
   * return, how many bytes the library filled: fields that end beyond it are
   * zero, unknown to the library. */
  uint32_t struct_size;
  uint32_t abi_version; /* JITLOCK_RT_ABI_VERSION of the library */
  /* Object header. */
  int32_t header_offset;
  uint64_t lock_mask;      /* 0b11 */
  uint64_t unlocked_value; /* 0b01 */
  uint64_t locked_value;   /* 0b00: fast-locked */
  uint64_t monitor_value;  /* 0b10: header = monitor address | monitor_value */
  uint32_t hash_shift;
  uint32_t hash_bits;
  /* Thread. */
  uint32_t thread_size;
  uint32_t thread_align;
  int64_t thread_tls_offset;       /* thread = thread pointer + this */
  uint32_t lock_stack_top_offset;  /* u32: byte offset of the next free slot,
                                      from the thread */
  uint32_t lock_stack_base_offset; /* first slot */
  uint32_t lock_stack_end_offset;  /* top == end means full */
  uint32_t lock_stack_capacity;
  uint32_t lock_stack_sentinel_offset; /* == base - 8 */
  uint64_t lock_stack_sentinel;        /* never equals an object */
  /* Monitor. The owner word holds the owner thread's address, 0, or one of
   * the markers (monitor_anonymous_owner, or others that are never a
   * thread). Threads queued to enter are counted in a word of their own
   * (monitor_entry_count_offset, below). */
  uint32_t monitor_size;
  uint32_t monitor_owner_offset;
  uint32_t monitor_recursions_offset; /* u64: holds - 1 */
  uint64_t monitor_anonymous_owner;
  uint64_t monitor_queued_bit; /* 0: the owner word has no queued bit */
  uint32_t cache_line_size;
  /* Stack banging. The watermark is a uintptr_t at thread + this offset: a
   * method entry whose stack pointer (minus its extra frame bytes) is above
   * it skips the bang; otherwise it calls jitlock_rt_stack_bang. */
  uint32_t stack_watermark_offset;
  uint32_t stack_page_size;
  uint32_t stack_shadow_pages; /* what the `always` bang mode touches */
  uint32_t locking_mode;       /* jitlock_locking_mode */
  /* Safepoint polls. The poll word is a uint64_t at thread + this offset, on
   * a cache line of its own; a poll is armed while `word & poll_armed_bit`
   * (bit 0, so a one-byte load and test is enough). */
  uint32_t poll_word_offset;
  uint64_t poll_armed_bit;
  /* Monitor storage (jitlock_monitor_storage): how a header h whose tag is
   * monitor_value names its monitor, and how inline code finds it. This is
   * the one statement of the encodings; the runtime's storage code and the
   * front ends refer to it.
   *   pointer: h = monitor address | monitor_value, so
   *            monitor = h - monitor_value. The unlocked header (hash and
   *            embedder bits included) is kept in the monitor ("displaced")
   *            until deflation writes it back.
   *   index:   h = index << monitor_index_shift | monitor_value, and
   *            monitor = base + (h >> monitor_index_shift) * monitor_stride,
   *            where base is the uintptr_t at thread + monitor_base_offset
   *            (on the lock stack top's cache line; the same for every
   *            thread, written at attach, 0 under the other strategies).
   *            The monitors live in one address range reserved at configure
   *            and committed on demand, so they never move. Index 0 names
   *            no monitor. The header is displaced as for pointer.
   *   table:   h keeps every bit but its tag (hash and embedder bits stay;
   *            nothing is displaced); a side table keyed by the identity
   *            hash, which every object gets before it is inflated, maps
   *            the object to its monitor. The thread's monitor cache is
   *            monitor_cache_entries entries of 16 bytes at thread +
   *            monitor_cache_offset (a cache line of its own), each
   *            {void *object; monitor *}, object 0 when empty, most
   *            recently used first. Inline code compares obj with the first
   *            monitor_cache_probes entries' objects and takes that entry's
   *            monitor; on a miss it calls the runtime, which fills the
   *            cache. Only the thread itself (and handshakes run for it)
   *            writes its cache. An entry may name a monitor deflated
   *            since; its owner word is then neither 0 nor any thread, so
   *            M1, N2 and N3 go to the runtime as for any deflation.
   * Every strategy's fields are filled whichever one the runtime uses, so
   * that code can be generated for any (the fingerprint names only the one
   * compiled in). */
  uint32_t monitor_storage;
  uint32_t monitor_index_shift;
  uint32_t monitor_stride;
  uint32_t monitor_base_offset;
  uint32_t monitor_cache_offset;
  uint32_t monitor_cache_entries;
  uint32_t monitor_cache_probes;
  /* The inflated exit (N3 of the protocol, docs/runtime.md): a release store
   * of 0 to the owner word; then, for JITLOCK_EXIT_FENCE only, a full fence;
   * then a load of the u32 at monitor + monitor_entry_count_offset (on the
   * owner word's cache line). Nonzero: threads are queued, and the code
   * calls jitlock_rt_monitor_exit_queued_slow (the monitor is already
   * released). monitor_exit is JITLOCK_EXIT_STORE or JITLOCK_EXIT_FENCE,
   * never AUTO; code emitted for the fence is correct under either. */
  uint32_t monitor_entry_count_offset;
  uint32_t monitor_exit;
  /* Lock reservation (locking_mode JITLOCK_LOCKING_RESERVED; reserve_bits
   * is 0 otherwise). The reservation field is the header's reserve_bits
   * bits at reserve_shift, read only while the lock bits are
   * unlocked_value:
   *   0          not reservable: every header the embedder writes without
   *              the field, and every object whose reservation was revoked
   *              (never reserved again);
   *   all ones   reservable, not yet reserved: the embedder marks an object
   *              so at allocation, header |= reservable_value;
   *   otherwise  reserved to the thread with that reserve index.
   * reserve_mask is lock_mask | the field. The u64 at thread +
   * reserve_tag_offset (on the lock stack top's cache line) is
   * unlocked_value | index << reserve_shift for a thread that may reserve,
   * and ~0, which no masked header equals, for one that may not. The owner's
   * enter is "(header & reserve_mask) == tag: push the lock stack, done";
   * its exit pops, then "(header & reserve_mask) == tag: done". The
   * lightweight CAS of this mode expects (header & reserve_mask) ==
   * unlocked_value; any other header goes to the runtime. */
  uint32_t reserve_shift;
  uint32_t reserve_bits;
  uint32_t reserve_tag_offset;
  uint64_t reserve_mask;
  uint64_t reservable_value;
} jitlock_rt_layout;

/* Fills the first layout->struct_size bytes of `layout` (zeroing any beyond
 * the library's struct) and sets struct_size to how many it filled.
 * JITLOCK_EINVAL for a size it refuses (see "Versions and struct sizes"). */
int jitlock_rt_fill_layout(jitlock_rt_layout *layout);

/* Fills `layout`, struct_size included. */
static inline void jitlock_rt_get_layout(jitlock_rt_layout *layout) {
  layout->struct_size = (uint32_t)sizeof(*layout);
  (void)jitlock_rt_fill_layout(layout);
}

/* Writes a one-line summary of every layout value that lowered or emitted
 * code compiles in ("abi=6;header=0;...", the number being
 * JITLOCK_RT_ABI_VERSION) into `buf` (at most `size` bytes,
 * NUL-terminated when size > 0) and returns its length, as snprintf does.
 * Code generators stamp their output with it and loaders compare stamps, so
 * that code built for another layout is refused rather than run. */
size_t jitlock_rt_layout_fingerprint(const jitlock_rt_layout *layout, char *buf,
                                     size_t size);

/* Prints the thread and monitor layout: field offsets, sizes, cache lines
 * and who writes each line, like a field-layout dump. */
void jitlock_rt_print_layout(FILE *out);

/*===-- The deflation thread ---------------------------------------------===*/
/* A thread of the runtime's own (not attached) that runs what
 * jitlock_rt_deflate_idle does, on a policy. See docs/monitors.md. */

typedef struct jitlock_deflation_policy {
  /* sizeof(jitlock_deflation_policy) in the caller's header, as
   * jitlock_rt_default_deflation_policy sets it; read as struct_size is for
   * jitlock_rt_config (only that prefix is read or written; one that lacks
   * a field this library requires is refused). */
  uint32_t struct_size;
  /* Deflate at least this often, in milliseconds; 0: only on the threshold.
   * At most 3600000. Default 1000. */
  uint32_t period_ms;
  /* Deflate as soon as this many monitors may be idle: monitors alive beyond
   * those the previous deflation found busy. 0: only on the period. Default
   * 1024. */
  uint64_t idle_threshold;
} jitlock_deflation_policy;

/* What jitlock_rt_default_deflation_policy calls, with policy->struct_size
 * set by the caller. JITLOCK_EINVAL for a null policy or a size refused. */
int jitlock_rt_fill_default_deflation_policy(jitlock_deflation_policy *policy);

/* Fills `policy` with the defaults, struct_size included. */
static inline void
jitlock_rt_default_deflation_policy(jitlock_deflation_policy *policy) {
  policy->struct_size = (uint32_t)sizeof(*policy);
  (void)jitlock_rt_fill_default_deflation_policy(policy);
}

/* Starts the deflation thread; a null policy means the defaults.
 * JITLOCK_EINVAL for a policy with a wrong size, a period above an hour, or
 * both triggers 0; JITLOCK_ESTATE when it runs already or from inside a
 * handshake operation. jitlock_rt_configure is refused while it runs. */
int jitlock_rt_start_deflation(const jitlock_deflation_policy *policy);

/* Stops the deflation thread and waits until it has ended (an attached caller
 * is blocked meanwhile). JITLOCK_ESTATE when it is not running, or when the
 * caller holds a safepoint or runs a handshake operation, which the thread
 * may be waiting for. jitlock_rt_shutdown stops it too, and so does the
 * process's exit (giving up after a second on a thread that waits for a
 * handshake with a thread that never polls). */
int jitlock_rt_stop_deflation(void);

typedef struct jitlock_deflation_stats {
  uint64_t monitors_deflated; /* by every deflation, of every caller */
  uint64_t cycles;            /* deflations: sweeps of every monitor */
  uint64_t thread_cycles;     /* the deflation thread's share of them */
  uint64_t handshakes;        /* handshakes with every thread before reuse */
  uint64_t cancelled;         /* deflations an enterer won by cancelling */
  uint64_t thread_running;    /* 1 while the deflation thread runs */
  /* Monitors in memory: alive, deflated and waiting for the handshake, or
   * free for reuse. Returned to the system only by jitlock_rt_shutdown. */
  uint64_t monitors_allocated;
} jitlock_deflation_stats;

/* Totals since the process started; a snapshot. */
void jitlock_rt_get_deflation_stats(jitlock_deflation_stats *stats);

#pragma GCC visibility pop

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* JITLOCK_JITLOCK_RT_H */
