//===- VM.h - The object model, classes, methods and threads ----*- C++ -*-===//
//
// jitlock-java's core types. docs/java.md describes the object layout and
// the calling convention that tier 0 (Interpreter.cpp) and a tier-1 compiler
// share:
//
//  * An object is [header u64][class word: Class *][fields...]; an array is
//    [header][class][length i32, pad][elements]. The header belongs to the
//    jitlock runtime and starts as 1 (unlocked), reservable as well with
//    --locking=reserved (Heap.cpp). There is no GC.
//  * Every field is one 8-byte slot holding a value as an operand-stack slot
//    does (an int-like value in the low 32 bits). Static fields live in the
//    class's Statics array.
//  * A method is called through its Entry pointer:
//      Slot Entry(VMThread *T, Method *M, Slot *Args)
//    with the arguments in JVM slot order (a long takes two slots, the
//    value in the first). An exception leaves the return value undefined
//    and T->Pending set. The interpreter, the natives and (later) compiled
//    code all have this signature, so each method's entry can be replaced
//    on its own and frames of all kinds mix.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_JAVA_VM_H
#define JITLOCK_JAVA_VM_H

#include "ClassFile.h"

#include "jitlock/jitlock_rt.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace jitlock::java {

using Slot = uint64_t;
struct Class;
struct Method;
struct MethodProfile;
struct VMThread;

struct Object {
  uint64_t Header; // the jitlock runtime's
  Class *Cls;
};

struct Array : Object {
  int32_t Length;
  int32_t Pad;
  char *data() { return reinterpret_cast<char *>(this) + sizeof(Array); }
};
static_assert(sizeof(Object) == 16 && sizeof(Array) == 24);

/// The value kinds of descriptors: 'I' (also Z, B, C, S as stored), 'J',
/// 'L' (references and arrays), 'V'.
char kindOf(char DescriptorChar);

using MethodEntry = Slot (*)(VMThread *T, Method *M, Slot *Args);

struct Field {
  Class *Owner = nullptr;
  std::string Name, Descriptor;
  uint16_t Flags = 0;
  uint32_t Offset = 0; // instance: byte offset in the object; static: index
  bool isStatic() const { return Flags & AccStatic; }
  bool isVolatile() const { return Flags & AccVolatile; }
};

struct Method {
  Class *Owner = nullptr;
  std::string Name, Descriptor;
  uint16_t Flags = 0;
  // Bytecode (empty for natives and abstract methods).
  uint16_t MaxStack = 0, MaxLocals = 0;
  std::vector<uint8_t> Code;
  std::vector<ExceptionHandler> Handlers;
  // From the descriptor.
  unsigned ArgSlots = 0;      // including the receiver
  char ReturnKind = 'V';      // kindOf the return type
  std::vector<char> ArgKinds; // kindOf each declared parameter
  /// How to call it; swapped by a higher tier. Never null once linked.
  std::atomic<MethodEntry> Entry{nullptr};
  /// A native's context (a lambda's target, ...).
  void *NativeData = nullptr;
  int VtableIndex = -1;
  std::atomic<uint32_t> Invocations{0}; // counted by tier 0, for tier 1
  std::atomic<uint32_t> BackEdges{0};   // backward branches, likewise
  /// Tier 0's branch and receiver profile (Profile.h), made on first use.
  std::atomic<MethodProfile *> Profile{nullptr};
  /// Its latest tier-1 code when that may trap (Entry is then
  /// deoptimizableEntry, Deoptimize.h); older code stays mapped.
  std::atomic<MethodEntry> Tier1Code{nullptr};
  /// Uncommon traps taken in its tier-1 code (Deoptimize.cpp).
  std::atomic<uint32_t> Traps{0};

  bool isStatic() const { return Flags & AccStatic; }
  bool isAbstract() const { return Flags & AccAbstract; }
  bool isSynchronized() const { return Flags & AccSynchronized; }
  std::string qualifiedName() const; // "pkg.Cls.name(desc)"
};

enum class InitState : uint8_t {
  Uninitialized,
  BeingInitialized,
  Initialized,
  Erroneous
};

/// A resolved constant-pool entry, filled once, lazily, by any thread.
struct CpCacheEntry {
  std::atomic<void *> Resolved{nullptr}; // Class *, Field *, Method *, ...
};

struct Class {
  std::string Name; // internal form: java/lang/Object, [I, [Ljava/lang/X;
  Class *Super = nullptr;
  std::vector<Class *> Interfaces; // direct
  uint16_t Flags = 0;
  bool IsArray = false;
  char ElemKind = 0;     // arrays: 'Z','B','C','S','I','J','L'
  Class *Elem = nullptr; // arrays of references: the element class
  unsigned ElemSize = 0; // arrays: bytes per element
  std::vector<std::unique_ptr<Field>> Fields;
  std::vector<std::unique_ptr<Method>> Methods;
  std::vector<Method *> Vtable;
  /// Interface method -> the implementation this class dispatches to.
  std::unordered_map<const Method *, Method *> Itable;
  uint32_t InstanceSize = sizeof(Object);
  std::unique_ptr<Slot[]> Statics;
  Object *Mirror = nullptr;        // the java.lang.Class object
  std::unique_ptr<ClassFile> File; // null for built-in classes
  std::unique_ptr<CpCacheEntry[]> CpCache;
  std::atomic<InitState> Init{InitState::Uninitialized};
  VMThread *InitThread = nullptr; // under the mirror's monitor
  std::atomic<Class *> ArrayOf{nullptr};
  /// Whether every constructor may run without a bytecode body (built-in).
  bool Builtin = false;
  /// Whether it has had an instance (Dependencies.h).
  std::atomic<bool> Instantiated{false};

  bool isInterface() const { return Flags & AccInterface; }
  /// "java.lang.Object", as Class.getName says.
  std::string javaName() const;
  Method *findMethod(const std::string &Name, const std::string &Desc) const;
  Field *findField(const std::string &Name) const;
  bool isSubclassOf(const Class *Other) const;
};

/// The thread's place in the VM. Lives as long as the process (no GC): a
/// Thread object keeps a pointer to it from construction on.
struct VMThread {
  jitlock_thread *Rt = nullptr;
  Object *JavaThread = nullptr;
  Object *Pending = nullptr; // the exception being thrown, or null
  // From the runtime's layout and the thread's stack info, at attach.
  const uintptr_t *Watermark = nullptr;
  const uint64_t *PollWord = nullptr;
  uintptr_t SafeLimit = 0;
  // Bump-pointer allocation.
  char *TlabTop = nullptr, *TlabEnd = nullptr;
  // State other threads read, under ThreadsLock (Threads.cpp).
  bool Started = false, Alive = false, Daemon = false;
  // An interrupt that came between start() and the attach; the runtime's
  // flag is the thread's one interrupt flag once Rt is set (Threads.cpp).
  bool PendingInterrupt = false;
  int StackDepth = 0;
};

//===-- The VM's global state and services ----------------------------===//

struct VMOptions {
  std::string ClassPath;
  uint64_t HeapLimit = 512ull << 20;
  uint64_t StackSize = 4ull << 20;
  bool LogJit = false;
};

extern VMOptions Options;
extern jitlock_rt_layout Layout;

// Heap.cpp
void initHeap(uint64_t Limit);
/// Zeroed memory for an object of `Size` bytes with its header and class
/// word set, or null with OutOfMemoryError pending.
Object *allocObject(VMThread *T, Class *C);
Array *allocArray(VMThread *T, Class *ArrayClass, int32_t Length);
uint64_t heapUsed();

// Classes.cpp
/// The class of that internal name, loaded and linked (with every class it
/// references, verified), or null with an error set in `Error` (loading is
/// refused before anything runs).
Class *loadClass(const std::string &Name, std::string &Error);
/// An already loaded class, or null.
Class *findLoadedClass(const std::string &Name);
/// The array class whose elements have descriptor `ElemDesc`.
Class *arrayClassOf(const std::string &ElemDesc);
Class *arrayClassFor(Class *Elem); // of references
/// Runs the class's static initializer if it has not run (JVMS 5.5). False
/// with an exception pending when it failed.
bool initializeClass(VMThread *T, Class *C);
/// Registers a class built by the VM (built-ins, lambdas): links it.
void linkClass(Class *C);
/// Resolves a method the way invokevirtual/invokestatic do: in C and its
/// superclasses, then its superinterfaces.
Method *resolveMethod(Class *C, const std::string &Name,
                      const std::string &Desc);
Field *resolveField(Class *C, const std::string &Name);
/// Fills a method's argument kinds, slots and return kind from its
/// descriptor (and its static flag); false when the descriptor is malformed
/// or uses float or double.
bool parseMethodDescriptor(Method &M, std::string &Error);
/// The method of `Receiver`'s class that overrides `M`.
Method *selectVirtual(Object *Receiver, Method *M);
/// The method a receiver of class C runs for M.
Method *selectVirtualIn(Class *C, Method *M);
bool isInstanceOf(Object *O, Class *C);
bool isAssignable(Class *From, Class *To);

// Builtins.cpp
void defineBuiltins();
/// Creates the Class objects of every class defined so far (they need
/// java/lang/Class) and of those defined later.
void createMirror(Class *C);
Class *classOfMirror(Object *Mirror);
extern Class *ObjectClass, *StringClass, *ClassClass, *ThreadClass,
    *ThrowableClass;
Object *newString(VMThread *T, const std::u16string &Chars);
Object *newStringUtf8(VMThread *T, const std::string &Utf8);
Object *internString(VMThread *T, const std::u16string &Chars);
std::u16string stringChars(Object *S);
std::string toUtf8(const std::u16string &S);
std::string stringUtf8(Object *S);
/// String.valueOf(Object): "null" or the object's toString(); null with an
/// exception pending.
Object *stringValueOf(VMThread *T, Object *O);
/// Integer.valueOf and the other boxes, by descriptor char (I, J, Z, C;
/// B and S box as Integer).
Object *boxInt(VMThread *T, char Kind, Slot V);
/// The text of a value of descriptor char `D` as String.valueOf makes it;
/// Failed with an exception pending when a toString() threw.
std::u16string textOf(VMThread *T, char D, Slot V, bool &Failed);
/// Sets T->Pending to a new exception of the built-in class `ClassName`
/// (java/lang/...) with the message (none when null).
void throwNew(VMThread *T, const char *ClassName, const std::string &Msg);
void throwNew(VMThread *T, const char *ClassName);
/// Sets T->Pending to the OutOfMemoryError made at start-up (allocating
/// one could fail too).
void throwOutOfMemory(VMThread *T);
/// Calls the method `Name` `Desc` that `Recv`'s class selects, with the
/// receiver in Args[0].
Slot callVirtual(VMThread *T, Object *Recv, const char *Name, const char *Desc,
                 Slot *Args);
/// System.exit and the end of main: prints -Xstats, flushes, exits.
[[noreturn]] void exitVM(int Status);
/// The string an uncaught exception prints after "Exception in thread ..".
std::string describeThrowable(VMThread *T, Object *Ex);
/// System.out's text, written atomically per call.
void writeOut(VMThread *T, bool Err, const std::string &Text);
void flushOut();

// Threads.cpp
VMThread *newVMThread();
/// Attaches the calling OS thread to the runtime and the VM.
bool attachThread(VMThread *T);
void detachThread(VMThread *T);
VMThread *threadOf(Object *JavaThread);
/// The calling OS thread's VMThread, or null.
VMThread *currentVMThread();
/// Runs `M` (static, no arguments... or with `Args`) on `T` inside
/// jitlock_rt_call_guarded, then reports an uncaught exception as
/// HotSpot does. Returns whether it ended normally.
bool runGuarded(VMThread *T, Method *M, Slot *Args);
void startJavaThread(VMThread *T, Object *ThreadObj);
/// Waits until every non-daemon thread ended: in the native state when `T`
/// is attached (the main thread at exit).
void waitForNonDaemonThreads(VMThread *T);
void waitForNonDaemonThreads();
bool isAlive(VMThread *Target);
void setDaemon(VMThread *T, VMThread *Target, bool On);
/// Blocking built-ins run in native state (safepoints go on meanwhile).
struct NativeScope {
  explicit NativeScope(VMThread *T);
  ~NativeScope();
  VMThread *T;
};
/// Object.wait with interruption; the one place that knows how the runtime
/// is asked to end a wait early (see Threads.cpp).
void interruptibleWait(VMThread *T, Object *O, int64_t Millis);
void interruptThread(VMThread *Target);
bool isInterrupted(VMThread *Target);
/// Thread.interrupted(): clears the calling thread's flag, returns its value.
bool clearInterrupt(VMThread *T);
bool sleepInterruptibly(VMThread *T, int64_t Millis);
bool joinThread(VMThread *T, VMThread *Target, int64_t Millis);
/// Safepoint poll: only a load and a branch while unarmed.
inline void pollSafepoint(VMThread *T) {
  if (__atomic_load_n(T->PollWord, __ATOMIC_RELAXED) & Layout.poll_armed_bit)
    jitlock_rt_safepoint_poll(T->Rt);
}

// Interpreter.cpp
Slot interpret(VMThread *T, Method *M, Slot *Args);
/// Calls `M` through its entry (the tier it has).
inline Slot callMethod(VMThread *T, Method *M, Slot *Args) {
  return M->Entry.load(std::memory_order_acquire)(T, M, Args);
}
/// Verifies every method of `C` (its bytecode is tier 0's subset);
/// false with a message naming class, method, offset and instruction.
bool verifyClass(Class *C, std::string &Error);
const char *opcodeName(uint8_t Op);
/// Tier 0's constant-pool resolution, cached per entry (tier 1 resolves
/// with them at compile time): null with the linkage error pending.
Class *resolveClassRef(VMThread *T, Class *C, unsigned CpIndex);
Method *resolveMethodRef(VMThread *T, Class *C, unsigned CpIndex);
Field *resolveFieldRef(VMThread *T, Class *C, unsigned CpIndex, bool Static);
Object *resolveString(VMThread *T, Class *C, unsigned CpIndex);
/// multianewarray with nonnegative counts; null with an exception pending.
Object *multiNewArray(VMThread *T, Class *ArrayClass, const int32_t *Dims,
                      unsigned N);
void throwIndexOutOfBounds(VMThread *T, int32_t Index, int32_t Length);

// Invokedynamic.cpp
/// Links the call site of constant `CpIndex` of `C` at link time: checks
/// the bootstrap method is one this VM implements. False with `Error`.
bool checkCallSite(Class *C, unsigned CpIndex, std::string &Error);
/// Runs invokedynamic: pops the descriptor's arguments from Args and
/// returns the call site's result (a lambda or a string).
Slot invokeDynamic(VMThread *T, Class *C, unsigned CpIndex, Slot *Args);
/// The argument slots of the call site's descriptor.
unsigned callSiteArgSlots(Class *C, unsigned CpIndex);

} // namespace jitlock::java

#endif
