//===- SafepointThread.h - A VM thread of safepoints and handshakes -*- C++
//-*-===//
//
// The VM thread that jitlock-run's --safepoint-every (through runExample)
// and jitlock-java's run beside the program: one operation each period,
// alternately a safepoint (every DeflateEvery-th deflating idle monitors
// while it holds the threads) and a jitlock_rt_handshake_all whose
// operation counts the targets it ran for. It is not attached, so it may
// begin a safepoint whenever it likes, and its own waits delay no one.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_TOOLS_SAFEPOINTTHREAD_H
#define JITLOCK_TOOLS_SAFEPOINTTHREAD_H

#include "jitlock/jitlock_rt.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace jitlock {

/// What the safepoint thread did.
struct SafepointReport {
  uint64_t EveryMicros = 0;
  /// Time-to-safepoint, one sample per safepoint: how long
  /// jitlock_rt_safepoint_begin took, in microseconds.
  std::vector<double> TimeToSafepointUs;
  /// How long each jitlock_rt_handshake_all took, in microseconds.
  std::vector<double> HandshakeUs;
  /// Operations the handshakes ran (one per target).
  uint64_t HandshakeOps = 0;
  /// Safepoints that called jitlock_rt_deflate_idle, and the monitors it
  /// deflated in them.
  uint64_t Deflations = 0;
  uint64_t Deflated = 0;
  size_t safepoints() const { return TimeToSafepointUs.size(); }
  size_t handshakes() const { return HandshakeUs.size(); }
};

/// Counts how often a handshake operation ran for each target. Targets run
/// their own operation at their polls while the requester runs others', so
/// the tally takes a lock; nothing else is taken while it is held.
struct HandshakeTally {
  std::mutex Lock;
  std::vector<std::pair<jitlock_thread *, unsigned>> Runs;

  static void count(void *Arg, jitlock_thread *Target);
  unsigned runsFor(const jitlock_thread *Target) const;
};

class SafepointThread {
public:
  /// Checks handshake number `Number` (from 0) once it returned, reporting
  /// each problem found through `Problem`.
  using HandshakeCheck =
      std::function<void(uint64_t Number, const HandshakeTally &Tally,
                         const std::function<void(std::string)> &Problem)>;

  SafepointThread(uint64_t EveryMicros, unsigned DeflateEvery,
                  HandshakeCheck Check = {});

  /// The first operation comes at once.
  void start();
  /// Stops after the operation in progress, if any; again, does nothing.
  void stop();

  SafepointReport Report;
  /// A runtime call that failed (which ends the thread), and what Check
  /// found; at most the first ten.
  std::vector<std::string> Problems;

private:
  using Clock = std::chrono::steady_clock;

  void loop();
  bool safepoint(bool Deflate);
  bool handshake();
  void problem(std::string Text);
  bool failed(const char *Call, int Rc);

  std::chrono::microseconds Every;
  unsigned DeflateEvery;
  HandshakeCheck Check;

  std::thread Thread;
  std::mutex Lock;
  std::condition_variable Wake;
  bool Stopping = false;
};

} // namespace jitlock

#endif
