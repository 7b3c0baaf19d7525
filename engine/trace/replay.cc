// File: engine/trace/replay.cc
//
// RunPolicy: one policy's replay of a Workload (workload.cc builds the
// scenario), with the observer that gathers the compare files (metrics,
// time series, wait CDF) as the run goes.
#include "engine/trace/replay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/log/async_log.h"
#include "engine/log/event_log.h"
#include "engine/trace/workload_stream.h"
#include "engine/util/atomic_file.h"
#include "engine/util/strings.h"
#include "nlohmann/json.hpp"

namespace qs::trace {

namespace {

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

// Time series, waits and fairness from the log records of one run.
class ReplayObserver : public LogSink {
 public:
  ReplayObserver(const Workload& w, std::vector<int32_t> job_share, int num_shares, SimTime bucket,
                 ReplayProgress* progress)
      : w_(w),
        job_share_(std::move(job_share)),
        shares_(static_cast<size_t>(num_shares)),
        bucket_(bucket),
        progress_(progress),
        held_(w.jobs.size(), 0),
        held_borrowed_(w.jobs.size(), 0),
        first_runnable_(w.jobs.size(), -1),
        scheduled_(w.jobs.size(), false) {}

  void OnJob(const JobRecord& r) override {
    const int64_t j = JobIndex(r.job_name);
    if (j < 0) return;
    const auto ju = static_cast<size_t>(j);
    const auto s = static_cast<size_t>(job_share_[ju]);
    if (r.preemption != PreemptionType::kNone) {
      Bucket(r.time);
      if (r.preemption == PreemptionType::kCrossShare) {
        ++cross_[Idx(r.time)];
      } else {
        ++in_[Idx(r.time)];
      }
      return;
    }
    switch (r.status) {
      case JobStatus::kRunnable:
        Release(ju, s, r.time);
        if (first_runnable_[ju] < 0) first_runnable_[ju] = r.time;
        break;
      case JobStatus::kScheduled: {
        Change(s, r.time, r.quantity);
        held_[ju] = r.quantity;
        for (const BorrowedPart& b : r.borrowed) held_borrowed_[ju] += b.quantity;
        if (held_borrowed_[ju] != 0) {
          Integrate(shares_[s].borrowed, r.time);
          shares_[s].borrowed.current += held_borrowed_[ju];
        }
        if (!scheduled_[ju]) {
          scheduled_[ju] = true;
          const SimTime wait = r.time - first_runnable_[ju];
          waits_.push_back(wait);
          const double run = std::max<double>(static_cast<double>(w_.jobs[ju].run) / 1000.0, 10.0);
          shares_[s].bsld_sum += (static_cast<double>(wait) / 1000.0 + run) / run;
          ++shares_[s].started;
        }
        break;
      }
      case JobStatus::kSucceeded:
      case JobStatus::kFailed:
        Release(ju, s, r.time);
        if (r.status == JobStatus::kFailed &&
            r.status_reason.substr(0, reasons::kTimeLimitPrefix.size()) == reasons::kTimeLimitPrefix) {
          ++terminated_;
        } else {
          ++finished_;
        }
        if (progress_ != nullptr && ++pending_progress_ >= 1024) FlushProgress(r.time);
        break;
      default:
        break;
    }
  }
  void OnRejected(const RejectedRecord&) override {}
  void OnSnapshot(const SnapshotRecord&) override {}
  void OnCapacity(const CapacityRecord& r) override {
    Integrate(capacity_, r.time);
    capacity_.current = r.max_capacity;
  }
  void OnEnd(SimTime end) override {
    end_ = end;
    for (Series& s : shares_) {
      Integrate(s.usage, end);
      Integrate(s.borrowed, end);
      Integrate(s.limit, end);
    }
    Integrate(capacity_, end);
    Bucket(end);
    if (progress_ != nullptr) FlushProgress(end);
  }

  // The limit of share `s` on the trace's instance type from time `t` (call
  // in time order, before the run: the share requests of the scenario).
  void SetLimit(size_t s, SimTime t, int64_t limit) {
    Integrate(shares_[s].limit, t);
    shares_[s].limit.current = limit;
  }

  int64_t finished() const { return finished_; }
  int64_t terminated() const { return terminated_; }

  std::string TimeseriesCsv(const std::vector<std::string>& names) const {
    std::string out = "hour";
    for (const std::string& n : names) absl::StrAppend(&out, ",", n);
    absl::StrAppend(&out, ",total,capacity,preempt_cross,preempt_in");
    for (const std::string& n : names) absl::StrAppend(&out, ",borrowed:", n);
    for (const std::string& n : names) absl::StrAppend(&out, ",limit:", n);
    out += "\n";
    const size_t nb = NumBuckets();
    const double bucket = static_cast<double>(bucket_);
    for (size_t b = 0; b < nb; ++b) {
      absl::StrAppend(&out, Fixed(static_cast<double>(b) * bucket / 3.6e6, 2));
      int64_t total = 0;
      for (const Series& s : shares_) {
        const int64_t v = b < s.usage.ms.size() ? s.usage.ms[b] : 0;
        total += v;
        absl::StrAppend(&out, ",", Fixed(static_cast<double>(v) / bucket, 1));
      }
      const int64_t cap = b < capacity_.ms.size() ? capacity_.ms[b] : 0;
      absl::StrAppend(&out, ",", Fixed(static_cast<double>(total) / bucket, 1), ",",
                      Fixed(static_cast<double>(cap) / bucket, 1), ",", b < cross_.size() ? cross_[b] : 0, ",",
                      b < in_.size() ? in_[b] : 0);
      for (const Series& s : shares_) {
        absl::StrAppend(&out, ",", Fixed(static_cast<double>(b < s.borrowed.ms.size() ? s.borrowed.ms[b] : 0) / bucket, 1));
      }
      for (const Series& s : shares_) {
        absl::StrAppend(&out, ",", Fixed(static_cast<double>(b < s.limit.ms.size() ? s.limit.ms[b] : 0) / bucket, 1));
      }
      out += "\n";
    }
    return out;
  }

  // Nearest-rank percentiles 0, 0.5, ..., 100 of the waits of all started jobs.
  std::string WaitsCsv() const {
    std::vector<SimTime> v = waits_;
    std::sort(v.begin(), v.end());
    std::string out = "percentile,wait_seconds\n";
    if (v.empty()) return out;
    for (int k = 0; k <= 200; ++k) {
      const size_t rank = std::max<size_t>(1, (static_cast<size_t>(k) * v.size() + 199) / 200);
      absl::StrAppend(&out, Fixed(k / 2.0, 1), ",", FormatSeconds(v[rank - 1]), "\n");
    }
    return out;
  }

  // Jain's index over shares of their mean bounded slowdown (tau 10 s).
  double Fairness() const {
    double sum = 0, sq = 0;
    int n = 0;
    for (const Series& s : shares_) {
      if (s.started == 0) continue;
      const double x = s.bsld_sum / static_cast<double>(s.started);
      sum += x;
      sq += x * x;
      ++n;
    }
    return n == 0 || sq == 0 ? 1.0 : sum * sum / (n * sq);
  }
  double MeanBsld(size_t s) const {
    return shares_[s].started ? shares_[s].bsld_sum / static_cast<double>(shares_[s].started) : 0.0;
  }

 private:
  struct Integral {
    int64_t current = 0;
    SimTime since = 0;
    std::vector<int64_t> ms;  // value x ms per bucket
  };
  struct Series {
    Integral usage;
    Integral borrowed;  // the part of usage borrowed from other shares
    Integral limit;     // the share's capacity limit on the trace's type
    double bsld_sum = 0;
    int64_t started = 0;
  };

  static int64_t JobIndex(std::string_view name) {
    if (name.size() < 2 || name[0] != 'j') return -1;
    int64_t v = 0;
    for (size_t i = 1; i < name.size(); ++i) {
      if (name[i] < '0' || name[i] > '9') return -1;
      v = v * 10 + (name[i] - '0');
    }
    return v;
  }
  size_t Idx(SimTime t) const { return static_cast<size_t>(t / bucket_); }
  size_t NumBuckets() const { return static_cast<size_t>((end_ + bucket_ - 1) / bucket_) + (end_ == 0 ? 1 : 0); }
  void Bucket(SimTime t) {
    const size_t need = Idx(t) + 1;
    if (cross_.size() < need) {
      cross_.resize(need, 0);
      in_.resize(need, 0);
    }
  }
  void Integrate(Integral& in, SimTime now) {
    if (now <= in.since) return;
    if (in.current != 0) {
      const size_t last = Idx(now - 1);
      if (in.ms.size() <= last) in.ms.resize(last + 1, 0);
      SimTime t = in.since;
      while (t < now) {
        const size_t b = Idx(t);
        const SimTime stop = std::min<SimTime>(now, static_cast<SimTime>(b + 1) * bucket_);
        in.ms[b] += in.current * (stop - t);
        t = stop;
      }
    }
    in.since = now;
  }
  void Change(size_t s, SimTime t, int64_t delta) {
    Integrate(shares_[s].usage, t);
    shares_[s].usage.current += delta;
  }
  void Release(size_t j, size_t s, SimTime t) {
    if (held_[j] == 0) return;
    Change(s, t, -held_[j]);
    held_[j] = 0;
    if (held_borrowed_[j] != 0) {
      Integrate(shares_[s].borrowed, t);
      shares_[s].borrowed.current -= held_borrowed_[j];
      held_borrowed_[j] = 0;
    }
  }
  void FlushProgress(SimTime t) {
    progress_->jobs_done.fetch_add(pending_progress_, std::memory_order_relaxed);
    pending_progress_ = 0;
    int64_t cur = progress_->sim_ms_max.load(std::memory_order_relaxed);
    while (t > cur && !progress_->sim_ms_max.compare_exchange_weak(cur, t, std::memory_order_relaxed)) {
    }
  }

  const Workload& w_;
  std::vector<int32_t> job_share_;
  std::vector<Series> shares_;
  SimTime bucket_;
  ReplayProgress* progress_;
  std::vector<int64_t> held_;
  std::vector<int64_t> held_borrowed_;
  std::vector<SimTime> first_runnable_;
  std::vector<bool> scheduled_;
  std::vector<SimTime> waits_;
  std::vector<int64_t> cross_, in_;
  Integral capacity_;
  SimTime end_ = 0;
  int64_t finished_ = 0, terminated_ = 0;
  int64_t pending_progress_ = 0;
};

double Sec(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

}  // namespace

absl::StatusOr<PolicyRun> RunPolicy(const Workload& w, const Policy& p, const RunPolicyOptions& options) {
  if (options.bucket <= 0) return absl::InvalidArgumentError("time-series bucket must be positive");
  // The scenario as a stream: its submissions are made block by block as
  // the engine reaches them (workload_stream.h).
  const WorkloadStream stream(w, p);
  const Scenario& head = stream.head();
  const std::vector<std::string>& names = stream.share_names();
  ReplayObserver observer(w, stream.JobShares(), static_cast<int>(names.size()), options.bucket,
                          options.progress);
  // The shares as the policy declares them (the per-share table), and each
  // share's limit on the trace's type over time (the time series), from the
  // same requests, applied as the engines apply them.
  ShareDeclarations declared;
  for (const ScenarioEvent& ev : stream.requests()) {
    const DeclaredShare* d = declared.Note(ev, head);
    if (d == nullptr) continue;
    const auto it = std::find(names.begin(), names.end(), d->name);
    if (it == names.end()) continue;
    int64_t limit = 0;
    for (const CapacityLimit& l : d->limits) limit += l.capacity_unit == w.instance_type ? l.max_capacity : 0;
    observer.SetLimit(static_cast<size_t>(it - names.begin()), ev.time, limit);
  }
  // The engine keeps the summary itself (RunOptions::summary). The
  // observer feeds the compare files and the progress counters; a replay
  // that asks for neither leaves it out, and with no log either the engine
  // makes no job records.
  std::vector<LogSink*> sinks;
  if (options.report || options.progress != nullptr) sinks.push_back(&observer);
  // The log appears under its name only when complete (AtomicFile).
  std::unique_ptr<AtomicFile> events_file;
  std::unique_ptr<AsyncLog> writer;  // formats and writes on its own thread
  if (!options.events_path.empty()) {
    events_file = std::make_unique<AtomicFile>(options.events_path);
    if (!events_file->ok()) return absl::NotFoundError(absl::StrCat("cannot write ", options.events_path));
    writer = std::make_unique<AsyncLog>(&events_file->stream());
    sinks.push_back(writer.get());
  }
  TeeSink tee(sinks);
  PolicyRun out;
  RunOptions ro;
  ro.check_invariants = options.check_invariants;
  ro.summary = &out.summary;
  ro.job_records = !sinks.empty();
  out.policy = p.name;
  out.description = p.description;
  absl::StatusOr<RunStats> stats = RunFastEngine(stream, stream.Index(), tee, ro);
  if (!stats.ok()) return stats.status();
  out.stats = *std::move(stats);
  if (writer) {
    writer->Flush();
    if (absl::Status st = events_file->Commit(); !st.ok()) return st;
  }
  if (options.progress != nullptr) options.progress->runs_done.fetch_add(1, std::memory_order_relaxed);
  out.summary.run = RunProvenance{absl::StrCat(w.trace_name, " under ", p.name), "fast", options.tool_version, head.knobs,
                                  ro.cycle_preemptions, ro.check_invariants, out.stats.stopped, {}};
  out.summary_json = SummaryToJson(out.summary);
  out.shares = declared.shares();
  if (!options.report) return out;
  out.timeseries_csv = observer.TimeseriesCsv(names);
  out.waits_csv = observer.WaitsCsv();

  const Summary& s = out.summary;
  nlohmann::ordered_json m;
  m["policy"] = p.name;
  m["description"] = p.description;
  double util = 0;
  for (const auto& [unit, u] : s.utilisation) util = std::max(util, u);
  m["utilisation"] = util;
  m["jobsSubmitted"] = s.total.submitted;
  m["jobsFinished"] = observer.finished();
  m["jobsTerminated"] = observer.terminated();
  m["jobsUnfinished"] = s.total.unfinished;
  m["rejectedRequests"] = s.rejected_requests;
  m["invariantViolations"] = s.invariant_violations;
  m["endTimeSeconds"] = Sec(s.end_time);
  // "stopped": caught in a preemption cycle and written up to the stop
  // (docs/semantics.md); its figures are not a complete run's.
  m["status"] = out.stats.stopped.empty() ? "complete" : "stopped";
  m["stopped"] = out.stats.stopped;
  m["waitSeconds"] = {{"mean", s.total.wait.count ? Sec(s.total.wait.sum) / static_cast<double>(s.total.wait.count) : 0.0},
                      {"p50", Sec(s.total.wait.p50)},
                      {"p95", Sec(s.total.wait.p95)},
                      {"p99", Sec(s.total.wait.p99)},
                      {"max", Sec(s.total.wait.max)}};
  m["preemptionsCrossShare"] = s.total.preempted_cross;
  m["preemptionsInShare"] = s.total.preempted_in;
  m["instanceHoursLost"] = static_cast<double>(s.total.work_lost_instance_ms) / 3.6e6;
  m["reclaimLatencySeconds"] = {{"count", s.total.reclaim.count},
                                {"p99", Sec(s.total.reclaim.p99)},
                                {"max", Sec(s.total.reclaim.max)}};
  m["fairnessJain"] = observer.Fairness();
  nlohmann::ordered_json shares = nlohmann::ordered_json::array();
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = s.shares.find(names[i]);
    if (it == s.shares.end()) continue;
    const ShareSummary& sh = it->second;
    int64_t own = 0, borrowed = 0;
    for (const auto& [unit, v] : sh.instance_ms) {
      own += v.first;
      borrowed += v.second;
    }
    shares.push_back({{"name", names[i]},
                      {"jobs", sh.submitted},
                      {"waitP50", Sec(sh.wait.p50)},
                      {"waitP95", Sec(sh.wait.p95)},
                      {"waitP99", Sec(sh.wait.p99)},
                      {"meanBoundedSlowdown", observer.MeanBsld(i)},
                      {"instanceHours", static_cast<double>(own + borrowed) / 3.6e6},
                      {"borrowedInstanceHours", static_cast<double>(borrowed) / 3.6e6}});
  }
  m["shares"] = shares;
  out.metrics_json = m.dump(2) + "\n";
  return out;
}

}  // namespace qs::trace
