//===- Profile.cpp - Tier 0's branch and receiver profiles ----------------===//
#include "Profile.h"
#include "VM.h"

#include <algorithm>

namespace jitlock::java {

MethodProfile::MethodProfile(size_t CodeLength)
    : Taken(new std::atomic<uint32_t>[CodeLength]()),
      NotTaken(new std::atomic<uint32_t>[CodeLength]()),
      Receivers(new std::atomic<Class *>[2 * CodeLength]()),
      ReceiverCounts(new std::atomic<uint32_t>[2 * CodeLength]()),
      Megamorphic(new std::atomic<uint32_t>[CodeLength]()), Length(CodeLength) {
}

MethodProfile &profileOf(Method *M) {
  MethodProfile *P = M->Profile.load(std::memory_order_acquire);
  if (P)
    return *P;
  auto *Fresh = new MethodProfile(M->Code.size());
  if (M->Profile.compare_exchange_strong(P, Fresh, std::memory_order_acq_rel))
    return *Fresh; // lives as long as the method (no class unloading)
  delete Fresh;    // another thread's won
  return *P;
}

const MethodProfile *existingProfile(const Method *M) {
  return M->Profile.load(std::memory_order_acquire);
}

bool Profiling = false;

void profileReceiver(Method *M, size_t Bci, Class *K) {
  if (!Profiling)
    return;
  MethodProfile &P = profileOf(M);
  for (unsigned S = 0; S < 2; ++S) {
    std::atomic<Class *> &Seen = P.Receivers[2 * Bci + S];
    Class *Was = Seen.load(std::memory_order_relaxed);
    // An empty entry takes K; a racing thread that takes it first with
    // another class sends K to the next entry.
    if (!Was && Seen.compare_exchange_strong(Was, K, std::memory_order_relaxed))
      Was = K;
    if (Was == K)
      return bump(P.ReceiverCounts[2 * Bci + S]);
  }
  bump(P.Megamorphic[Bci]);
}

int alwaysTakenSide(const Method *M, size_t Bci, uint32_t MinCount) {
  const MethodProfile *P = existingProfile(M);
  if (!P || Bci >= P->Length)
    return -1;
  uint64_t T = P->Taken[Bci].load(std::memory_order_relaxed);
  uint64_t N = P->NotTaken[Bci].load(std::memory_order_relaxed);
  if (T + N < std::max<uint64_t>(MinCount, 1) || (T && N))
    return -1;
  return T ? 1 : 0;
}

Class *monomorphicReceiver(const Method *M, size_t Bci, uint32_t MinCount) {
  const MethodProfile *P = existingProfile(M);
  if (!P || Bci >= P->Length ||
      P->Receivers[2 * Bci + 1].load(std::memory_order_relaxed) ||
      P->Megamorphic[Bci].load(std::memory_order_relaxed) ||
      P->ReceiverCounts[2 * Bci].load(std::memory_order_relaxed) <
          std::max<uint32_t>(MinCount, 1))
    return nullptr;
  return P->Receivers[2 * Bci].load(std::memory_order_relaxed);
}

bool sawOtherReceiver(const Method *M, size_t Bci, const Class *K) {
  const MethodProfile *P = existingProfile(M);
  if (!P || Bci >= P->Length)
    return false;
  for (unsigned S = 0; S < 2; ++S)
    if (Class *R = P->Receivers[2 * Bci + S].load(std::memory_order_relaxed);
        R && R != K)
      return true;
  return P->Megamorphic[Bci].load(std::memory_order_relaxed) != 0;
}

std::string describeProfile(const Method *M) {
  const MethodProfile *P = existingProfile(M);
  std::string Out = "profile of " + M->qualifiedName() + ":";
  if (!P)
    return Out + " none (never interpreted)\n";
  Out += "\n";
  for (size_t Bci = 0; Bci < P->Length; ++Bci) {
    uint32_t T = P->Taken[Bci].load(std::memory_order_relaxed);
    uint32_t N = P->NotTaken[Bci].load(std::memory_order_relaxed);
    if (T || N)
      Out += "  bci " + std::to_string(Bci) + " branch: taken " +
             std::to_string(T) + ", not taken " + std::to_string(N) + "\n";
    Class *R0 = P->Receivers[2 * Bci].load(std::memory_order_relaxed);
    if (!R0)
      continue;
    Class *R1 = P->Receivers[2 * Bci + 1].load(std::memory_order_relaxed);
    Out += "  bci " + std::to_string(Bci) + " receivers: " + R0->javaName();
    if (R1)
      Out += ", " + R1->javaName();
    Out += "; megamorphic " +
           std::to_string(P->Megamorphic[Bci].load(std::memory_order_relaxed)) +
           "\n";
  }
  return Out;
}

} // namespace jitlock::java
