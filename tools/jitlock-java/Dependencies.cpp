//===- Dependencies.cpp - Class-hierarchy dependencies of tier 1 ----------===//
#include "Dependencies.h"
#include "Deoptimize.h"
#include "VM.h"

#include "llvm/Support/raw_ostream.h"

#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace jitlock::java {

namespace {

std::mutex DepLock;
/// Per inlined method, the compiled code that inlined it.
std::unordered_map<const Method *, std::vector<CompiledCode *>> &dependents() {
  static std::unordered_map<const Method *, std::vector<CompiledCode *>> Map;
  return Map;
}
std::unordered_set<const Method *> &invalidated() {
  static std::unordered_set<const Method *> Set;
  return Set;
}
/// The instantiated classes, for the hierarchy queries.
std::vector<Class *> &instantiated() {
  static std::vector<Class *> List;
  return List;
}
/// Every CompiledCode ever made (under DepLock).
std::deque<CompiledCode> &codes() {
  static std::deque<CompiledCode> Codes;
  return Codes;
}

bool overrides(const Class *K, const Method *M) {
  return K != M->Owner && K->isSubclassOf(M->Owner) &&
         (size_t(M->VtableIndex) >= K->Vtable.size() ||
          K->Vtable[M->VtableIndex] != M);
}

/// A dependency that a new class broke.
struct Broken {
  CompiledCode *Code;
  const Method *Impl;
};

/// The handshake operation, run once per thread, by the thread itself at its
/// next poll or by the requester while the thread is safe: marks the broken
/// code (the first run sets the words, the others find them set). Either way
/// the thread's next check comes after the operation (its poll returns, or
/// its leaving the safe state synchronizes with the requester), so it loads
/// the mark as set.
void markInvalidated(void *Arg, jitlock_thread *) {
  for (const Broken &B : *static_cast<const std::vector<Broken> *>(Arg))
    B.Code->Invalidated.store(1, std::memory_order_relaxed);
}

} // namespace

CompiledCode *newCompiledCode(Method *M) {
  std::lock_guard<std::mutex> G(DepLock);
  return &codes().emplace_back(M);
}

bool dependOnOneImplementation(const Method *Impl, CompiledCode *Code) {
  if (Impl->isStatic() || Impl->isAbstract() || Impl->VtableIndex < 0 ||
      Impl->Owner->isInterface())
    return false;
  std::lock_guard<std::mutex> G(DepLock);
  for (const Class *K : instantiated())
    if (overrides(K, Impl))
      return false;
  std::vector<CompiledCode *> &List = dependents()[Impl];
  if (List.empty() || List.back() != Code)
    List.push_back(Code);
  return true;
}

bool installUnlessInvalidated(CompiledCode *Code,
                              const std::function<void()> &Install) {
  std::lock_guard<std::mutex> G(DepLock);
  if (Code->Broken)
    return false;
  Install();
  return true;
}

void noteInstantiated(Class *C) {
  std::vector<Broken> BrokenNow;
  {
    std::lock_guard<std::mutex> G(DepLock);
    if (C->Instantiated.exchange(true))
      return;
    instantiated().push_back(C);
    for (auto &[Impl, Dependent] : dependents()) {
      if (!overrides(C, Impl))
        continue;
      for (CompiledCode *Code : Dependent) {
        // Set once: code that inlined two methods C overrides is broken
        // once; older code of the method was invalidated before.
        if (Code->Broken)
          continue;
        Code->Broken = true;
        Method *M = Code->M;
        invalidated().insert(M);
        M->Invocations.store(0, std::memory_order_relaxed);
        M->BackEdges.store(0, std::memory_order_relaxed);
        M->Entry.store(interpret, std::memory_order_release);
        BrokenNow.push_back({Code, Impl});
      }
      Dependent.clear();
    }
  }
  if (BrokenNow.empty())
    return;
  int Rc = jitlock_rt_handshake_all(markInvalidated, &BrokenNow);
  if (Rc != JITLOCK_OK) // (a misuse: not from a handshake or safepoint)
    markInvalidated(&BrokenNow, nullptr);
  if (DeoptOpts.Log) {
    std::string S;
    for (const Broken &B : BrokenNow)
      S += "jitlock-java: deopt: " + C->javaName() + " overrides " +
           B.Impl->qualifiedName() + ": " + B.Code->M->qualifiedName() +
           " invalidated, its running frames deoptimize lazily\n";
    if (Rc != JITLOCK_OK)
      S += std::string("jitlock-java: deopt: the handshake failed: ") +
           jitlock_rt_status_name(Rc) + "\n";
    llvm::errs() << S;
  }
}

bool takeInvalidated(const Method *M) {
  std::lock_guard<std::mutex> G(DepLock);
  return invalidated().erase(M) != 0;
}

} // namespace jitlock::java
