//===- Dependencies.cpp - Class-hierarchy dependencies of tier 1 ----------===//
#include "Dependencies.h"
#include "VM.h"

#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace jitlock::java {

namespace {

std::mutex DepLock;
/// Per inlined method, the compiled methods that inlined it.
std::unordered_map<const Method *, std::vector<Method *>> &dependents() {
  static std::unordered_map<const Method *, std::vector<Method *>> Map;
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

bool overrides(const Class *K, const Method *M) {
  return K != M->Owner && K->isSubclassOf(M->Owner) &&
         (size_t(M->VtableIndex) >= K->Vtable.size() ||
          K->Vtable[M->VtableIndex] != M);
}

} // namespace

bool dependOnOneImplementation(const Method *Impl, Method *Compiled) {
  if (Impl->isStatic() || Impl->isAbstract() || Impl->VtableIndex < 0 ||
      Impl->Owner->isInterface())
    return false;
  std::lock_guard<std::mutex> G(DepLock);
  for (const Class *K : instantiated())
    if (overrides(K, Impl))
      return false;
  dependents()[Impl].push_back(Compiled);
  return true;
}

void noteInstantiated(Class *C) {
  std::lock_guard<std::mutex> G(DepLock);
  if (C->Instantiated.exchange(true))
    return;
  instantiated().push_back(C);
  for (auto &[Impl, Compiled] : dependents()) {
    if (!overrides(C, Impl))
      continue;
    for (Method *M : Compiled) {
      invalidated().insert(M);
      M->Invocations.store(0, std::memory_order_relaxed);
      M->BackEdges.store(0, std::memory_order_relaxed);
      M->Entry.store(interpret, std::memory_order_release);
    }
    Compiled.clear();
  }
}

bool takeInvalidated(const Method *M) {
  std::lock_guard<std::mutex> G(DepLock);
  return invalidated().erase(M) != 0;
}

} // namespace jitlock::java
