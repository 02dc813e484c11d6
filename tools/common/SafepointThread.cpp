//===- SafepointThread.cpp - A VM thread of safepoints and handshakes -----===//
#include "SafepointThread.h"

#include <algorithm>

namespace jitlock {

void HandshakeTally::count(void *Arg, jitlock_thread *Target) {
  auto &Tally = *static_cast<HandshakeTally *>(Arg);
  std::lock_guard<std::mutex> Hold(Tally.Lock);
  for (auto &[Thread, N] : Tally.Runs)
    if (Thread == Target) {
      ++N;
      return;
    }
  Tally.Runs.push_back({Target, 1});
}

unsigned HandshakeTally::runsFor(const jitlock_thread *Target) const {
  for (const auto &[Thread, N] : Runs)
    if (Thread == Target)
      return N;
  return 0;
}

static double microsSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - Start)
      .count();
}

SafepointThread::SafepointThread(uint64_t EveryMicros, unsigned DeflateEvery,
                                 HandshakeCheck Check)
    : Every(EveryMicros), DeflateEvery(DeflateEvery), Check(std::move(Check)) {
  Report.EveryMicros = EveryMicros;
}

void SafepointThread::start() {
  Thread = std::thread([this] { loop(); });
}

void SafepointThread::stop() {
  if (!Thread.joinable())
    return;
  {
    std::lock_guard<std::mutex> Hold(Lock);
    Stopping = true;
  }
  Wake.notify_one();
  Thread.join();
}

void SafepointThread::problem(std::string Text) {
  constexpr size_t MaxProblems = 10;
  if (Problems.size() < MaxProblems)
    Problems.push_back("safepoint thread: " + std::move(Text));
}

bool SafepointThread::failed(const char *Call, int Rc) {
  if (Rc == JITLOCK_OK)
    return false;
  problem(std::string(Call) + " failed with " + jitlock_rt_status_name(Rc));
  return true;
}

void SafepointThread::loop() {
  Clock::time_point Next = Clock::now();
  for (uint64_t Period = 0;; ++Period) {
    bool Ok;
    if (Period % 2 == 0) {
      uint64_t Safepoint = Period / 2;
      Ok = safepoint(DeflateEvery &&
                     Safepoint % DeflateEvery == DeflateEvery - 1);
    } else {
      Ok = handshake();
    }
    if (!Ok)
      return;
    // A period overrun by its operation starts the next one at once, with
    // no burst to catch up.
    Next = std::max(Next + Every, Clock::now());
    std::unique_lock<std::mutex> Hold(Lock);
    if (Wake.wait_until(Hold, Next, [this] { return Stopping; }))
      return;
  }
}

bool SafepointThread::safepoint(bool Deflate) {
  Clock::time_point Start = Clock::now();
  if (failed("jitlock_rt_safepoint_begin", jitlock_rt_safepoint_begin()))
    return false;
  Report.TimeToSafepointUs.push_back(microsSince(Start));
  if (Deflate) {
    Report.Deflated += jitlock_rt_deflate_idle();
    ++Report.Deflations;
  }
  return !failed("jitlock_rt_safepoint_end", jitlock_rt_safepoint_end());
}

bool SafepointThread::handshake() {
  HandshakeTally Tally;
  Clock::time_point Start = Clock::now();
  if (failed("jitlock_rt_handshake_all",
             jitlock_rt_handshake_all(HandshakeTally::count, &Tally)))
    return false;
  Report.HandshakeUs.push_back(microsSince(Start));
  for (const auto &Run : Tally.Runs)
    Report.HandshakeOps += Run.second;
  if (Check)
    Check(Report.HandshakeUs.size(), Tally,
          [this](std::string Text) { problem(std::move(Text)); });
  return true;
}

} // namespace jitlock
