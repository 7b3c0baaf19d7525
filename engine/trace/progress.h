// File: engine/trace/progress.h
//
// The progress line of long replays and comparisons: jobs replayed, runs
// done, simulated time, rate and ETA, drawn by a ProgressTicker
// (engine/util/progress_ticker.h: on a terminal only, after a second, four
// times a second). It reads the relaxed counters of a ReplayProgress; it
// never affects results.
//
// Example:
//   ReplayProgress counters;
//   ProgressLine line(&counters, /*total_jobs=*/n * policies, /*total_runs=*/policies);
//   ... runs update counters ...
//   line.Stop();   // also in the destructor; clears the line
//
// Thread-safety: the ticker's thread reads the counters; Stop() joins it.
#ifndef QS_ENGINE_TRACE_PROGRESS_H_
#define QS_ENGINE_TRACE_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "engine/trace/replay.h"
#include "engine/util/progress_ticker.h"

namespace qs::trace {

class ProgressLine {
 public:
  ProgressLine(const ReplayProgress* counters, int64_t total_jobs, int64_t total_runs);
  void Stop() { ticker_.Stop(); }

 private:
  std::string Status() const;
  const ReplayProgress* counters_;
  const int64_t total_jobs_, total_runs_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  ProgressTicker ticker_;  // last: its thread reads the fields above
};

}  // namespace qs::trace

#endif  // QS_ENGINE_TRACE_PROGRESS_H_
