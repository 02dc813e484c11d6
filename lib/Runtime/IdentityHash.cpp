//===- IdentityHash.cpp - Identity hashes ---------------------------------===//
//
// The identity hash: installed in the header, or in an inflated monitor's
// displaced header (which a deflater seals, A5), read by threads that no
// handshake covers through MonitorRead (A6's readers); with table storage
// the header keeps it while inflated ("Storage" in the protocol comment at
// the top of Synchronizer.cpp).
//
//===----------------------------------------------------------------------===//
#include "Synchronizer.h"

#include "Parker.h"

#include <sched.h>

namespace jitlock {

using namespace header;

//===----------------------------------------------------------------------===//
// Identity hash
//===----------------------------------------------------------------------===//

static std::atomic<uint64_t> GlobalHashState{0x9e3779b97f4a7c15u};

uint64_t nextHash(jitlock_thread *T) {
  // xorshift64*, per thread when we have one; never 0 within hash_bits.
  uint64_t X;
  if (T) {
    X = T->HashState ? T->HashState : (T->Id * 0x9e3779b97f4a7c15u) | 1;
    X ^= X >> 12;
    X ^= X << 25;
    X ^= X >> 27;
    T->HashState = X;
  } else {
    X = GlobalHashState.fetch_add(0x9e3779b97f4a7c15u,
                                  std::memory_order_relaxed);
  }
  uint64_t Hash = (X * 0x2545f4914f6cdd1du) >> (64 - Config.hash_bits);
  return Hash ? Hash : 1;
}

std::atomic<IdentityHashHook> IdentityHashTestHook{nullptr};

static void runIdentityHashHook(IdentityHashStage Stage, void *Obj) {
  if (IdentityHashHook Hook =
          IdentityHashTestHook.load(std::memory_order_relaxed))
    Hook(Stage, Obj);
}

namespace {
/// Backs off while a deflation restores a header, as a caller that no
/// handshake covers cannot help it.
void waitForHeaderChange(unsigned &Round) {
  if (++Round < 64)
    spinPause();
  else
    sched_yield();
}
} // namespace

uint64_t identityHash(jitlock_thread *T, void *Obj) {
  if (Config.hash_bits == 0)
    return 0;
  auto Header = headerOf(Obj);
  for (unsigned Round = 0;;) {
    uint64_t H = loadStableHeader(Obj);
    // Table storage: the header keeps the hash, installed before inflation.
    if (hasMonitor(H) && storage::isTable())
      return hashOf(H);
    if (hasMonitor(H)) {
      runIdentityHashHook(IdentityHashStage::MonitorLoaded, Obj);
      // The unlocked header lives in the monitor while inflated. The caller
      // may not be covered by handshakes (it may be unattached, or native):
      // M may have been deflated and reused for another object since the
      // header load, so whatever is read of it is checked (A6's readers).
      MonitorRead Read(Obj, H);
      Monitor &M = Read.monitor();
      uint64_t D = M.displacedHeader();
      runIdentityHashHook(IdentityHashStage::DisplacedLoaded, Obj);
      if (!Read.validate())
        continue;
      if (uint64_t Hash = hashOf(D))
        return Hash;
      // Sealed by a deflater (A5): install in the restored header.
      if (!isUnlocked(D)) {
        waitForHeaderChange(Round);
        continue;
      }
      uint64_t New = nextHash(T);
      // If M was reused since the check, this CAS may land on another
      // object's identical unhashed word: the check after it says so, and
      // that object keeps a hash nobody has seen yet, while this one starts
      // over.
      if (M.tryInstallHash(D, withHash(D, New)) && Read.validate())
        return New;
      continue;
    }
    if (uint64_t Hash = hashOf(H))
      return Hash;
    // Unlocked or fast-locked: the hash bits are ours to set in place. A
    // racing fast lock or inflation makes this CAS (or theirs) retry.
    uint64_t New = nextHash(T);
    if (Header.compare_exchange_strong(H, withHash(H, New),
                                       std::memory_order_acq_rel))
      return New;
  }
}

uint64_t peekHash(const void *Obj) {
  if (Config.hash_bits == 0)
    return 0;
  for (unsigned Round = 0;;) {
    // Not waiting out the embedder's 11: a collector may peek meanwhile.
    uint64_t H = headerOf(Obj).load(std::memory_order_acquire);
    if (!hasMonitor(H) || storage::isTable())
      return hashOf(H);
    MonitorRead Read(Obj, H);
    uint64_t D = Read.monitor().displacedHeader();
    if (Read.validate())
      return hashOf(D);
    waitForHeaderChange(Round);
  }
}

} // namespace jitlock
