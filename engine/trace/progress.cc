#include "engine/trace/progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace qs::trace {

ProgressLine::ProgressLine(const ReplayProgress* counters, int64_t total_jobs, int64_t total_runs, bool force)
    : counters_(counters),
      total_jobs_(total_jobs),
      total_runs_(total_runs),
      enabled_(force || isatty(STDERR_FILENO) == 1) {
  if (enabled_) thread_ = std::thread([this] { Loop(); });
}

ProgressLine::~ProgressLine() { Stop(); }

void ProgressLine::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (drawn_) {
    std::fprintf(stderr, "\r%*s\r", 100, "");
    std::fflush(stderr);
  }
}

void ProgressLine::Loop() {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (elapsed < 1.0) continue;
    const auto done = counters_->jobs_done.load(std::memory_order_relaxed);
    const auto runs = counters_->runs_done.load(std::memory_order_relaxed);
    const double sim_days = static_cast<double>(counters_->sim_ms_max.load(std::memory_order_relaxed)) / 8.64e7;
    const double rate = static_cast<double>(done) / elapsed;
    const double eta = rate > 0 ? static_cast<double>(total_jobs_ - done) / rate : 0;
    std::fprintf(stderr, "\rreplay: %lld/%lld jobs, %lld/%lld runs, sim %.1f d, %.0f jobs/s, ETA %.0f s   ",
                 static_cast<long long>(done), static_cast<long long>(total_jobs_), static_cast<long long>(runs),
                 static_cast<long long>(total_runs_), sim_days, rate, eta > 0 ? eta : 0.0);
    std::fflush(stderr);
    drawn_ = true;
  }
}

}  // namespace qs::trace
