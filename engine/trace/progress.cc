#include "engine/trace/progress.h"

#include "absl/strings/str_format.h"

namespace qs::trace {

ProgressLine::ProgressLine(const ReplayProgress* counters, int64_t total_jobs, int64_t total_runs)
    : counters_(counters),
      total_jobs_(total_jobs),
      total_runs_(total_runs),
      ticker_("replay", [this] { return Status(); }) {}

std::string ProgressLine::Status() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const auto done = counters_->jobs_done.load(std::memory_order_relaxed);
  const auto runs = counters_->runs_done.load(std::memory_order_relaxed);
  const double sim_days = static_cast<double>(counters_->sim_ms_max.load(std::memory_order_relaxed)) / 8.64e7;
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  const double eta = rate > 0 ? static_cast<double>(total_jobs_ - done) / rate : 0;
  return absl::StrFormat("%d/%d jobs, %d/%d runs, sim %.1f d, %.0f jobs/s, ETA %.0f s", done, total_jobs_, runs,
                         total_runs_, sim_days, rate, eta > 0 ? eta : 0.0);
}

}  // namespace qs::trace
