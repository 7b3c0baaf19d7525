// File: engine/trace/progress.h
//
// A progress line on stderr for long replays: jobs replayed, simulated time,
// rate and ETA, redrawn in place ('\r') a few times a second. It is drawn
// only when stderr is a terminal and the run has lasted more than a second;
// otherwise (pipes, CI logs, files) it prints nothing. It reads the relaxed
// counters of a ReplayProgress; it never affects results.
//
// Example:
//   ReplayProgress counters;
//   ProgressLine line(&counters, /*total_jobs=*/n * policies, /*total_runs=*/policies);
//   ... runs update counters ...
//   line.Stop();   // also in the destructor; clears the line
//
// Thread-safety: owns one reporter thread; Stop() joins it.
#ifndef QS_ENGINE_TRACE_PROGRESS_H_
#define QS_ENGINE_TRACE_PROGRESS_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "engine/trace/replay.h"

namespace qs::trace {

class ProgressLine {
 public:
  // `force` draws even when stderr is not a terminal (tests).
  ProgressLine(const ReplayProgress* counters, int64_t total_jobs, int64_t total_runs, bool force = false);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  void Stop();

 private:
  void Loop();
  const ReplayProgress* counters_;
  int64_t total_jobs_, total_runs_;
  bool enabled_;
  bool drawn_ = false;
  bool stop_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace qs::trace

#endif  // QS_ENGINE_TRACE_PROGRESS_H_
