//===- jitlock/Deopt.h - Deoptimization with lock restoration ---*- C++ -*-===//
//
// The deopt runtime (libjitlock_deopt; docs/deopt.md): from the stack maps of
// compiled code to a baseline continuation that holds exactly the locks the
// unoptimized code would hold.
//
//   1. Stack maps: StackMapTable indexes `.llvm_stackmaps` sections, read
//      with llvm::StackMapParser, by return address. A JIT registers each
//      linked object's section (enableDeopt, declared below, does it for an
//      ORC LLJIT); statically linked code registers its own.
//   2. The deopt point: `llvm.experimental.deoptimize` lowers to a call of
//      `__llvm_deoptimize`, which must be deoptEntryAddress(): a stub that
//      saves the registers the stack map may name and enters the dispatcher.
//      LLVM emits nothing after that call, so the dispatcher returns for the
//      optimized function, to the callDeoptimizable that entered it.
//   3. Decoding: the record's deopt operands, the frontend's and then the
//      monitor group (the marker, the count, then each object and its kind),
//      each read from its location.
//   4. Restoring: jitlock_rt_restore_locks with the frame's monitors,
//      outermost first; then DeoptHandlers::Resume continues in the baseline.
//
// Everything but enableDeopt uses LLVM's headers only, no LLVM library, so it
// also builds for a target that has no LLVM of its own (the AArch64 tests).
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_DEOPT_H
#define JITLOCK_DEOPT_H

#include "jitlock/DeoptState.h"
#include "jitlock/jitlock_rt.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace llvm {
class Error;
namespace orc {
class LLJIT;
} // namespace orc
} // namespace llvm

namespace jitlock::deopt {

/// The monitor group that closes a "deopt" operand bundle
/// (jitlock/DeoptState.h): i32 MonitorsMarker, i32 N, then N pairs
/// (ptr obj, i32 kind), outermost first, kind 0 held and 1 elided.
inline constexpr uint32_t MonitorsMarker = JITLOCK_DEOPT_MONITORS_MARKER;

/// The machines whose DWARF register numbers the decoder knows.
enum class Arch { X86_64, AArch64 };

/// The machine this library was built for.
constexpr Arch hostArch() {
#if defined(__x86_64__)
  return Arch::X86_64;
#elif defined(__aarch64__)
  return Arch::AArch64;
#else
#error "jitlock's deopt support knows x86_64 and AArch64 only"
#endif
}

/// What the deopt entry stub saved at a `__llvm_deoptimize` call. Regs is
/// indexed by DWARF register number; only the registers a call preserves,
/// the stack pointer and the frame pointer are filled (isPreserved), the
/// others hold garbage. The stack pointer is the caller's at the call (before
/// x86_64's call pushed the return address).
struct SavedRegisters {
  uint64_t ReturnAddress;
  /// The call's integer arguments: rdi, rsi, rdx, rcx, r8, r9 / x0-x7.
  uint64_t Args[8];
  uint64_t Regs[32];
};

/// Whether DWARF register `Reg` of `A` is saved by the entry stub: x86_64
/// rbx, rbp, rsp, r12-r15; AArch64 x19-x29 and sp.
bool isPreserved(Arch A, unsigned Reg);

/// One deoptimized frame, decoded.
struct DeoptFrame {
  uint64_t ReturnAddress = 0;
  uint64_t FunctionAddress = 0;
  uint64_t RecordID = 0;
  /// The optimized function's frame size (the stack map's stack size).
  uint64_t StackSize = 0;
  /// The frontend's deopt operands (those before the monitor group), each
  /// zero-extended to 64 bits (a pointer is its address).
  std::vector<uint64_t> Values;
  /// The frame's monitors, outermost first.
  std::vector<jitlock_relock_entry> Monitors;
  /// The explicit arguments of the deoptimize call, as SavedRegisters::Args.
  uint64_t CallArgs[8] = {};
};

/// Every stack map record of the registered sections, by return address.
/// Safe to use from any thread; registering and decoding may run at once.
class StackMapTable {
public:
  StackMapTable();
  ~StackMapTable();
  StackMapTable(const StackMapTable &) = delete;
  StackMapTable &operator=(const StackMapTable &) = delete;

  /// The table the deopt dispatcher reads.
  static StackMapTable &global();

  /// Copies and indexes one `.llvm_stackmaps` section as linked (function
  /// addresses relocated), under `Owner` (any key, e.g. a JIT's resource
  /// key). A section that is malformed, or whose return address is already
  /// registered, is refused with a message in `Error`; nothing is added.
  bool addSection(llvm::ArrayRef<uint8_t> Bytes, uint64_t Owner,
                  std::string &Error);
  /// Forgets every section added under `Owner` (its code is gone).
  void removeSections(uint64_t Owner);
  /// Moves `From`'s sections to `To`.
  void transferSections(uint64_t From, uint64_t To);
  size_t numRecords() const;

  /// Decodes the record whose return address is `ReturnAddress`: its
  /// statepoint header, the frontend's operands and the monitor group, each
  /// read from the registers the stub saved and the memory they point to.
  /// False with a message in `Error` when there is no such record or it
  /// cannot be decoded.
  bool decodeFrame(uint64_t ReturnAddress, const SavedRegisters &Regs,
                   DeoptFrame &Out, std::string &Error,
                   Arch A = hostArch()) const;
  /// The same, with only the registers in `Known` (bit N: DWARF register
  /// N) holding values, e.g. those a frame walk recovers; a location in any
  /// other register is a decoding error.
  bool decodeFrameWith(uint64_t ReturnAddress, const SavedRegisters &Regs,
                       uint32_t Known, DeoptFrame &Out,
                       std::string &Error) const;
  /// Whether a record for `ReturnAddress` is registered.
  bool hasRecord(uint64_t ReturnAddress) const;

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

//===----------------------------------------------------------------------===//
// The dispatcher
//===----------------------------------------------------------------------===//

/// Why a deopt could not continue in the baseline.
enum class FailureKind {
  NoRecord,      ///< no stack map record (or a malformed one) for the call
  NotEntered,    ///< the function was not entered through callDeoptimizable
  RestoreFailed, ///< jitlock_rt_restore_locks refused; Status says why
};

struct DeoptFailure {
  FailureKind Kind;
  int Status = JITLOCK_OK; ///< restore_locks' status for RestoreFailed
  std::string Message;
  /// What was decoded (null for NoRecord).
  const DeoptFrame *Frame = nullptr;
  /// For RestoreFailed: the frame's HELD objects the dispatcher released,
  /// in release order (innermost first); one it could not exit is left out.
  std::vector<void *> Released;
};

struct DeoptHandlers {
  /// Continues a deoptimized frame in the baseline, after its locks were
  /// restored. It runs on top of the optimized frame, whose stack slots stay
  /// readable meanwhile. Returns what the optimized function returns.
  uint64_t (*Resume)(const DeoptFrame &Frame, void *Ctx) = nullptr;
  /// A deopt that cannot continue. The frame's HELD monitors were released,
  /// innermost first, when the restore failed (a frame that is abandoned
  /// leaves no lock behind). Returns what the optimized function returns.
  /// Null: print the failure and abort.
  uint64_t (*Failed)(const DeoptFailure &Failure, void *Ctx) = nullptr;
  void *Ctx = nullptr;
};

/// Installs the handlers every thread's deopts go to; `H` must outlive every
/// deopt. Null uninstalls them (a deopt then aborts).
void setDeoptHandlers(const DeoptHandlers *H);

/// The address `__llvm_deoptimize` must resolve to.
void *deoptEntryAddress();

namespace detail {
uint64_t enterDeoptimizable(const void *Fn, uint64_t (*Thunk)(void *),
                            void *Closure);
} // namespace detail

/// Calls compiled code that may deoptimize and returns what it returns: its
/// own return value, or the value the deopt handler produced. A deopt returns
/// here directly from the dispatcher, discarding the optimized frame, so
/// `Fn` must be the function whose code calls `__llvm_deoptimize` (checked:
/// NotEntered otherwise). Returns an integer or a pointer.
template <typename... ArgTs, typename... CallTs>
uint64_t callDeoptimizable(uint64_t (*Fn)(ArgTs...), CallTs... Args) {
  struct Closure {
    uint64_t (*Fn)(ArgTs...);
    std::tuple<ArgTs...> Args;
  } C{Fn, std::tuple<ArgTs...>(Args...)};
  return detail::enterDeoptimizable(
      reinterpret_cast<const void *>(Fn),
      [](void *P) -> uint64_t {
        auto *C = static_cast<Closure *>(P);
        return std::apply(C->Fn, C->Args);
      },
      &C);
}

/// Restores `F`'s monitors for `Owner` (jitlock_rt_restore_locks with
/// `Flags`); returns its status.
int restoreFrameLocks(jitlock_thread *Owner, const DeoptFrame &F,
                      uint32_t Flags = 0);

/// Counters of the dispatcher, process-wide.
struct DeoptStats {
  uint64_t Deopts;   ///< deopts that reached Resume
  uint64_t Failures; ///< deopts that went to Failed
};
DeoptStats deoptStats();

//===----------------------------------------------------------------------===//
// The elided holds of a thread's compiled frames
//===----------------------------------------------------------------------===//
//
// jitlock_rt_inspect and jitlock_rt_holds_lock count the holds the code
// still takes. With elision that is fewer than the source took: a nested
// re-entry the compiler removed is no hold in the runtime, and an object
// that never escapes is not locked at all. The stack map record of every
// call with a "deopt" bundle lists its frame's monitors, held and elided, so
// the holds a debugger interface must report are the runtime's plus the
// ELIDED entries of every compiled frame of the thread (docs/deopt.md).

/// Walks a thread's stack by its frame pointer chain, from `FramePointer`
/// (the frame pointer of a frame on that stack, which compiled code called
/// and which has not returned) towards older frames, and decodes, for each
/// return address with a stack map record, the record at that call: the
/// compiled frames of the thread, youngest first, each with the monitors it
/// has at its call. `Thread` names the stack (its bounds end the walk) and
/// must be the caller or stay stopped for the whole walk (e.g. inside a
/// safepoint).
///
/// The chain reaches every frame only when every frame on it keeps a frame
/// pointer: compiled code (JitOptions::FramePointers) and any native frame
/// between it and `FramePointer`; a call out of compiled code that may
/// reach the walk must carry a "deopt" bundle, or its frame has no record
/// and is not seen. x86_64 only: an AArch64 frame record does not say
/// where its caller's stack pointer was, which the records' locations are
/// relative to. False with a message in `Error` when the walk cannot be
/// made or a record cannot be decoded.
bool walkCompiledFrames(const jitlock_thread *Thread, uint64_t FramePointer,
                        std::vector<DeoptFrame> &Frames, std::string &Error);

/// One object's holds by one thread, counted as the source took them.
struct SourceHolds {
  /// What the runtime counts (jitlock_rt_inspect's holds when the thread
  /// owns the object): the holds the code still takes.
  uint64_t Runtime = 0;
  /// The ELIDED entries for the object in the thread's compiled frames.
  uint64_t Elided = 0;
  /// The number a debugger interface reports.
  uint64_t total() const { return Runtime + Elided; }
};

/// `Obj`'s holds by `Thread`, stopped with `FramePointer` on its stack (see
/// walkCompiledFrames): the runtime's count plus the elided holds its
/// compiled frames list. False with a message in `Error` when the walk
/// fails; `Out` is then the runtime's count alone.
bool holdsWithElided(const jitlock_thread *Thread, uint64_t FramePointer,
                     const void *Obj, SourceHolds &Out, std::string &Error);

/// The same for the calling thread, from the caller's own frame: called
/// from compiled code, or from a native function with a frame pointer that
/// compiled code called.
bool currentHoldsWithElided(const void *Obj, SourceHolds &Out,
                            std::string &Error);

/// Makes `J` deoptimizable: `__llvm_deoptimize` resolves to the entry stub,
/// and every object it links registers its `.llvm_stackmaps` section in
/// StackMapTable::global() (forgotten again when its code is removed). An
/// error when `J` does not link with JITLink (ObjectLinkingLayer). Call it
/// before adding code; in libjitlock_deopt, not in the header-only part.
llvm::Error enableDeopt(llvm::orc::LLJIT &J);

} // namespace jitlock::deopt

#endif
