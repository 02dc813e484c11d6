//===- Monitor.cpp - Monitor queues and the monitor registry --------------===//
#include "Monitor.h"

#include "ObjectHeader.h"
#include "Parker.h"

#include <mutex>
#include <sched.h>

namespace jitlock {

void SpinLock::lock() {
  for (unsigned Spins = 0;; ++Spins) {
    if (Word.load(std::memory_order_relaxed) == 0 &&
        Word.exchange(1, std::memory_order_acquire) == 0)
      return;
    // Holders never block while holding it, so yielding is enough.
    if (Spins < 64)
      spinPause();
    else
      sched_yield();
  }
}

void Monitor::append(QueueNode::Where Q, QueueNode &N) {
  QueueNode *&Head = Q == QueueNode::EntryQueue ? EntryHead : WaitHead;
  QueueNode *&Tail = Q == QueueNode::EntryQueue ? EntryTail : WaitTail;
  N.Queue.store(Q, std::memory_order_relaxed);
  N.Next = nullptr;
  N.Prev = Tail;
  if (Tail)
    Tail->Next = &N;
  else
    Head = &N;
  Tail = &N;
  auto &Count = Q == QueueNode::EntryQueue ? EntryCount : WaitCount;
  Count.store(Count.load(std::memory_order_relaxed) + 1,
              std::memory_order_relaxed);
}

void Monitor::unlink(QueueNode &N) {
  bool Entry = N.Queue.load(std::memory_order_relaxed) == QueueNode::EntryQueue;
  QueueNode *&Head = Entry ? EntryHead : WaitHead;
  QueueNode *&Tail = Entry ? EntryTail : WaitTail;
  (N.Prev ? N.Prev->Next : Head) = N.Next;
  (N.Next ? N.Next->Prev : Tail) = N.Prev;
  N.Next = N.Prev = nullptr;
  N.Queue.store(QueueNode::None, std::memory_order_relaxed);
  auto &Count = Entry ? EntryCount : WaitCount;
  Count.store(Count.load(std::memory_order_relaxed) - 1,
              std::memory_order_relaxed);
}

//===----------------------------------------------------------------------===//
// The registry
//===----------------------------------------------------------------------===//

static std::mutex RegistryMutex;
static Monitor *RegistryHead = nullptr;
static std::atomic<uint64_t> LiveMonitors{0};

void detail::lockMonitorRegistry() { RegistryMutex.lock(); }
void detail::unlockMonitorRegistry() { RegistryMutex.unlock(); }
Monitor *detail::firstMonitor() { return RegistryHead; }

void registerMonitor(Monitor *M) {
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  M->RegistryNext = RegistryHead;
  if (RegistryHead)
    RegistryHead->RegistryPrev = M;
  RegistryHead = M;
  LiveMonitors.fetch_add(1, std::memory_order_relaxed);
}

void discardMonitor(Monitor *M) {
  {
    std::lock_guard<std::mutex> Guard(RegistryMutex);
    (M->RegistryPrev ? M->RegistryPrev->RegistryNext : RegistryHead) =
        M->RegistryNext;
    if (M->RegistryNext)
      M->RegistryNext->RegistryPrev = M->RegistryPrev;
  }
  LiveMonitors.fetch_sub(1, std::memory_order_relaxed);
  delete M;
}

uint64_t monitorsAlive() {
  return LiveMonitors.load(std::memory_order_relaxed);
}

void freeAllMonitors() {
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  while (Monitor *M = RegistryHead) {
    RegistryHead = M->RegistryNext;
    // Give the object back its unlocked header, hash included, once any
    // transient embedder state (11) has passed.
    auto Header = headerOf(M->Object);
    for (;;) {
      uint64_t Expected = header::encodeMonitor(M);
      if (Header.compare_exchange_strong(
              Expected, M->DisplacedHeader.load(std::memory_order_relaxed)) ||
          !header::isEmbedderOwned(Expected))
        break;
      sched_yield();
    }
    delete M;
    LiveMonitors.fetch_sub(1, std::memory_order_relaxed);
  }
}

} // namespace jitlock
