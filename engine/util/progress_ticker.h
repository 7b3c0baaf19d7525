// File: engine/util/progress_ticker.h
//
// One progress line on stderr for a command that can run for more than a
// few seconds (`sweep`, `gen`): "<label>: <status>, <elapsed>", redrawn in
// place four times a second once the command has run for a second, and
// erased by Stop(). It draws only when stderr is a terminal, so pipes, CI
// logs and files never see it; it only reads what `status` returns, so it
// never affects results.
//
//   std::atomic<int64_t> done{0};
//   ProgressTicker ticker("quotasim sweep", [&] { return absl::StrCat(done.load(), " of 8 variants done"); });
//   ... work that counts `done` ...
//   ticker.Stop();  // also in the destructor
//
// Thread-safety: owns one reporter thread, which calls `status`; `status`
// must read only thread-safe state (atomics). Stop() joins the thread.
#ifndef QS_ENGINE_UTIL_PROGRESS_TICKER_H_
#define QS_ENGINE_UTIL_PROGRESS_TICKER_H_

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace qs {

class ProgressTicker {
 public:
  ProgressTicker(std::string label, std::function<std::string()> status)
      : label_(std::move(label)), status_(std::move(status)) {
    if (isatty(STDERR_FILENO) == 1) thread_ = std::thread([this] { Loop(); });
  }
  ~ProgressTicker() { Stop(); }
  ProgressTicker(const ProgressTicker&) = delete;
  ProgressTicker& operator=(const ProgressTicker&) = delete;

  // Stops drawing and erases the line (before anything else is printed).
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (drawn_) {
      std::fprintf(stderr, "\r\033[K");
      std::fflush(stderr);
    }
  }

 private:
  void Loop() {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      if (elapsed < 1.0) continue;
      const std::string status = status_();
      std::fprintf(stderr, "\r\033[K%s: %s, %.0f s", label_.c_str(), status.c_str(), elapsed);
      std::fflush(stderr);
      drawn_ = true;
    }
  }

  const std::string label_;
  const std::function<std::string()> status_;
  bool drawn_ = false;  // touched by the thread, read after the join
  bool stop_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace qs

#endif  // QS_ENGINE_UTIL_PROGRESS_TICKER_H_
