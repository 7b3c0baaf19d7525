#include "engine/gen/generator.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/gen/qsb.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/partitioner.h"

namespace qs::gen {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kDay = 86400.0;
const char* const kUnitNames[] = {"ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g5.48xlarge", "ml.g6.48xlarge",
                                  "ml.g5.12xlarge"};
constexpr int64_t kInstanceCounts[] = {1, 2, 4, 8, 16};
constexpr int kInstanceWeights[] = {60, 15, 12, 9, 4};  // percent

// Our own distributions on top of the raw 64-bit engine, so results do not
// depend on the standard library's implementation.
class Rng {
 public:
  Rng(uint64_t seed, uint64_t stream) : g_(seed * 0x9E3779B97F4A7C15ULL ^ (stream + 1) * 0xBF58476D1CE4E5B9ULL) {}
  double Uniform() { return static_cast<double>(g_() >> 11) * (1.0 / 9007199254740992.0); }  // [0,1)
  double OpenUniform() { return (static_cast<double>(g_() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
  int64_t Below(int64_t n) { return static_cast<int64_t>(g_() % static_cast<uint64_t>(n)); }
  double Exponential() { return -std::log(OpenUniform()); }
  double Normal() {  // Box-Muller, one value per call
    return std::sqrt(-2.0 * std::log(OpenUniform())) * std::cos(2.0 * kPi * Uniform());
  }
  // Index drawn with probability proportional to weights.
  int Weighted(const std::vector<double>& cumulative) {
    const double x = Uniform() * cumulative.back();
    return static_cast<int>(std::upper_bound(cumulative.begin(), cumulative.end(), x) - cumulative.begin());
  }

 private:
  std::mt19937_64 g_;
};

std::vector<double> Cumulative(const std::vector<double>& w) {
  std::vector<double> c(w.size());
  std::partial_sum(w.begin(), w.end(), c.begin());
  return c;
}

// Cumulative intensity of the diurnal process, per unit base rate:
// L(t) = t + a*P/(2 pi) * (1 - cos(2 pi t / P)). Monotone for a < 1.
double Lambda(double t, double a) { return t + a * kDay / (2 * kPi) * (1 - std::cos(2 * kPi * t / kDay)); }

// Inverse of Lambda by Newton's method from `start` (t = x is within
// a P / pi of the answer).
double InverseLambda(double x, double a, double start) {
  double t = start;
  for (int i = 0; i < 40; ++i) {
    const double f = Lambda(t, a) - x;
    const double df = 1 + a * std::sin(2 * kPi * t / kDay);
    const double step = f / std::max(df, 1e-3);
    t -= step;
    if (std::fabs(step) < 1e-6) break;
  }
  return t;
}

// E[min(max(X, lo), hi)] for X lognormal with median `median` and shape
// `sigma`: the mean run time the generator draws (the clamp matters when
// --max-run-seconds is near the median).
double MeanClampedLognormal(double median, double sigma, double lo, double hi) {
  const double mu = std::log(median);
  auto phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  const double a = (std::log(lo) - mu) / sigma, b = (std::log(hi) - mu) / sigma;
  return lo * phi(a) + hi * (1 - phi(b)) + std::exp(mu + sigma * sigma / 2) * (phi(b - sigma) - phi(a - sigma));
}

SimTime Ms(double seconds) { return static_cast<SimTime>(std::llround(seconds * 1000.0)); }

// 40 bytes (1e7 of them are 400 MB of fresh pages for `gen`, whose time is
// largely the kernel's): small fields narrowed to what they hold.
struct GenJob {
  double op_time;  // arrival in "operational" time (homogeneous process)
  SimTime arrival = 0;
  SimTime run = 0;
  // Follow-up requests: -1 = none, else milliseconds after arrival (< 2 h).
  int32_t update_after = -1;
  int32_t terminate_after = -1;
  int8_t share = 0;  // < 20
  int8_t unit = 0;   // < 5
  int8_t count = 1;  // 1..16
  int8_t priority = 0;
  int8_t new_priority = 0;
  bool failed = false;
};
static_assert(sizeof(GenJob) == 40);

// A follow-up request (priority update, termination) or a limit change.
struct Extra {
  SimTime time;
  int64_t key;  // tie-break: job index * 2 + kind, limit changes after
  Request request;
};

// Everything drawn, before it becomes request objects: the head (its events
// are the quotaShares entries), the jobs, the extras, and the order of the
// other events, each an index into jobs (>= 0) or extras (-1 - k).
struct Plan {
  Scenario head;
  std::vector<std::string> share_names;
  std::vector<GenJob> jobs;
  std::vector<Extra> extras;
  std::vector<int64_t> order;
  OfferedLoad offered;
};

// Event `p` of plan.order, with its path "events[p]".
ScenarioEvent MakeEvent(const Plan& plan, size_t p) {
  ScenarioEvent ev;
  ev.path = absl::StrCat("events[", p, "]");
  const int64_t slot = plan.order[p];
  if (slot < 0) {
    const Extra& x = plan.extras[static_cast<size_t>(-1 - slot)];
    ev.time = x.time;
    ev.request = x.request;
    return ev;
  }
  const GenJob& j = plan.jobs[static_cast<size_t>(slot)];
  SubmitServiceJobRequest r;
  r.job_name = absl::StrCat("j", slot);
  r.quota_share_name = plan.share_names[static_cast<size_t>(j.share)];
  r.scheduling_priority = j.priority;
  r.instance_type = kUnitNames[j.unit];
  r.instance_count = j.count;
  r.run_time = j.run;
  r.outcome = j.failed ? JobOutcome::kFailed : JobOutcome::kSucceeded;
  if (j.failed) r.retry_attempts = 2;
  ev.time = j.arrival;
  ev.request = std::move(r);
  return ev;
}

}  // namespace

std::optional<Profile> ParseProfile(std::string_view name) {
  if (name == "steady") return Profile::kSteady;
  if (name == "stress") return Profile::kStress;
  return std::nullopt;
}

std::string_view ProfileName(Profile p) { return p == Profile::kSteady ? "steady" : "stress"; }

GenOptions GenOptions::For(Profile p) {
  GenOptions o;
  o.profile = p;
  o.load = p == Profile::kSteady ? 0.7 : 0.9;
  // Steady: daily peaks at 1.3x the mean rate, so that a share offering 0.7
  // of its limits peaks at 0.91 (at 1.5x it peaked above its limits every
  // day and its in-share victims restarted over and over).
  o.diurnal_amplitude = p == Profile::kSteady ? 0.3 : 0.5;
  return o;
}

absl::Status ValidateGenOptions(const GenOptions& o) {
  if (o.jobs < 1 || o.jobs > kMaxJobs) return absl::InvalidArgumentError("--jobs must be between 1 and 100000000");
  if (o.shares < 1 || o.shares > 20) return absl::InvalidArgumentError("--shares must be between 1 and 20");
  if (o.units < 1 || o.units > 5) return absl::InvalidArgumentError("--units must be between 1 and 5");
  if (!(o.load > 0 && o.load <= 10)) return absl::InvalidArgumentError("--load must be in (0, 10]");
  if (!(o.median_run_seconds >= 1 && o.median_run_seconds <= 1e7)) {
    return absl::InvalidArgumentError("--median-run-seconds must be in [1, 1e7]");
  }
  if (!(o.max_run_seconds >= o.median_run_seconds && o.max_run_seconds <= 1e8)) {
    return absl::InvalidArgumentError("--max-run-seconds must be in [median, 1e8]");
  }
  if (!(o.diurnal_amplitude >= 0 && o.diurnal_amplitude < 1)) {
    return absl::InvalidArgumentError("--diurnal-amplitude must be in [0, 1)");
  }
  if (!(o.burst_fraction >= 0 && o.burst_fraction <= 1) || !(o.priority_update_fraction >= 0 && o.priority_update_fraction <= 1) ||
      !(o.terminate_fraction >= 0 && o.terminate_fraction <= 1)) {
    return absl::InvalidArgumentError("fractions must be in [0, 1]");
  }
  if (o.limit_changes < 0 || o.limit_changes > 1000) return absl::InvalidArgumentError("--limit-changes must be in [0, 1000]");
  return absl::OkStatus();
}

namespace {

// The (share, type) pairs a job is drawn from, with their jobs per second
// and the cap on their instance counts (a quarter of the share's limit).
struct Pair {
  int share, unit;
  int64_t cap;
};

// What a block's jobs are drawn from.
struct Draw {
  const GenOptions& o;
  double rate;  // jobs per second
  double sigma;
  const std::vector<Pair>& pairs;
  const std::vector<double>& pair_cum;
  const std::vector<double>& count_cum;
};

// Jobs [b * kBlockJobs, end) of the steady profile; returns the block's
// span in operational time.
double SteadyBlock(const Draw& d, Rng& rng, int64_t b, int64_t end, std::vector<GenJob>& jobs) {
  const GenOptions& o = d.o;
  const double rate = d.rate, sigma = d.sigma;
  const std::vector<Pair>& pairs = d.pairs;
  const std::vector<double>& pair_cum = d.pair_cum;
  const std::vector<double>& count_cum = d.count_cum;
  // Bursts of 50-349 jobs (a sweep of runs, a deadline) at five times
  // the rate, starting so that about burst_fraction of the jobs are in
  // one. They raise the queues for minutes to an hour, not for days.
  int64_t burst_left = 0;
  double t = 0;
  for (int64_t i = b * kBlockJobs; i < end; ++i) {
    GenJob& j = jobs[static_cast<size_t>(i)];
    if (burst_left > 0) {
      --burst_left;
    } else if (rng.Uniform() < o.burst_fraction / 200.0) {
      burst_left = 50 + rng.Below(300);
    }
    t += rng.Exponential() / rate * (burst_left > 0 ? 0.2 : 1.0);
    j.op_time = t;
    const Pair& pair = pairs[static_cast<size_t>(rng.Weighted(pair_cum))];
    j.share = static_cast<int8_t>(pair.share);
    j.unit = static_cast<int8_t>(pair.unit);
    j.count = static_cast<int8_t>(std::min(kInstanceCounts[rng.Weighted(count_cum)], pair.cap));
    const double run = std::min(o.max_run_seconds, o.median_run_seconds * std::exp(sigma * rng.Normal()));
    j.run = Ms(std::max(1.0, run));
    // Most jobs at the queue's usual priority 5, 2% above it (urgent runs),
    // none below: in-share preemption then moves the few urgent jobs ahead
    // instead of churning every job. (Jobs below the usual priority are the
    // first victims of every arrival in a full share, and with 5% of them
    // at 0-4 and 10% urgent, long low-priority jobs restarted from zero over
    // and over: at 1e7 jobs the backlog grew for the whole 530-day span.)
    const double pr = rng.Uniform();
    j.priority = static_cast<int8_t>(pr < 0.98 ? 5 : 6 + rng.Below(4));
    j.failed = rng.Uniform() < 0.02;
    // Follow-ups come while the job is alive: before its first attempt
    // could end (a wait or a preemption only makes it later), the
    // update before the termination.
    if (rng.Uniform() < o.priority_update_fraction) {
      j.update_after = static_cast<int32_t>(rng.Uniform() * static_cast<double>(std::min<SimTime>(j.run, 7'200'000)));
      j.new_priority = static_cast<int8_t>(5 + rng.Below(5));  // escalated or kept, never lowered
    }
    if (rng.Uniform() < o.terminate_fraction) {
      j.terminate_after = static_cast<int32_t>(rng.Uniform() * static_cast<double>(std::min<SimTime>(j.run, 3'600'000)));
      if (j.update_after >= j.terminate_after) j.update_after = -1;
    }
  }
  return t;
}

// The same for the stress profile (the shape of gen before profiles, byte
// for byte): a block is a burst, at ten times the rate, with probability
// burst_fraction.
double StressBlock(const Draw& d, Rng& rng, int64_t b, int64_t end, std::vector<GenJob>& jobs) {
  const GenOptions& o = d.o;
  const double rate = d.rate, sigma = d.sigma;
  const std::vector<Pair>& pairs = d.pairs;
  const std::vector<double>& pair_cum = d.pair_cum;
  const std::vector<double>& count_cum = d.count_cum;
  const bool burst = rng.Uniform() < o.burst_fraction;
  double t = 0;
  for (int64_t i = b * kBlockJobs; i < end; ++i) {
    GenJob& j = jobs[static_cast<size_t>(i)];
    t += rng.Exponential() / rate * (burst ? 0.1 : 1.0);
    j.op_time = t;
    const Pair& pair = pairs[static_cast<size_t>(rng.Weighted(pair_cum))];
    j.share = static_cast<int8_t>(pair.share);
    j.unit = static_cast<int8_t>(pair.unit);
    j.count = static_cast<int8_t>(std::min(kInstanceCounts[rng.Weighted(count_cum)], pair.cap));
    const double run = std::min(o.max_run_seconds, o.median_run_seconds * std::exp(sigma * rng.Normal()));
    j.run = Ms(std::max(1.0, run));
    j.priority = static_cast<int8_t>(std::min<int64_t>(9, rng.Below(4) + rng.Below(4) + rng.Below(3)));
    j.failed = rng.Uniform() < 0.02;
    if (rng.Uniform() < o.priority_update_fraction) {
      j.update_after = static_cast<int32_t>(Ms(rng.Uniform() * 7200));
      j.new_priority = static_cast<int8_t>(rng.Below(10));
    }
    if (rng.Uniform() < o.terminate_fraction) j.terminate_after = static_cast<int32_t>(Ms(rng.Uniform() * 3600));
  }
  return t;
}

Plan MakePlan(const GenOptions& o) {
  Plan plan;
  Scenario& sc = plan.head;
  sc.source = absl::StrCat("gen(seed=", o.seed, ",jobs=", o.jobs, ")");
  sc.scheduling_policy.name = "quota-policy";
  sc.scheduling_policy.has_quota_share_policy = true;
  sc.service_environment.name = "gen-se";
  sc.job_queue.name = "gen-queue";
  sc.job_queue.priority = 1;

  // --- Configuration: environment and shares (stream 0). ---
  Rng cfg(o.seed, 0);
  // Skewed team sizes (Zipf-like 1/(s+1)), and limits sized to them as a
  // platform team would: a share's limits add up to about 128 instances x
  // its relative size (x 0.8, 1 or 1.2), split over its instance types, at
  // least 16 per type. (Uniform limits against skewed demand left the
  // biggest teams with queues that never drained.)
  std::vector<double> share_w;
  double sum_w = 0;
  for (int s = 0; s < o.shares; ++s) {
    share_w.push_back(1.0 / (s + 1));
    sum_w += share_w.back();
  }
  const double per_share = 128;
  std::vector<std::vector<int64_t>> limit(static_cast<size_t>(o.shares), std::vector<int64_t>(static_cast<size_t>(o.units), 0));
  std::vector<std::vector<int>> share_units(static_cast<size_t>(o.shares));
  for (int s = 0; s < o.shares; ++s) {
    // A share's queue is one FIFO over all its types, so a head waiting for
    // one type holds back the jobs of the others. Stress shares use about
    // half the types; steady ones, as most teams do, one type. (With 30% of
    // steady shares on a second type, those shares' head-of-line blocking
    // left them saturated at 0.7 load: waits of days, a growing backlog.)
    if (o.profile == Profile::kSteady) {
      share_units[s].push_back(s % o.units);
    } else {
      for (int u = 0; u < o.units; ++u) {
        if (u == s % o.units || cfg.Below(100) < 50) share_units[s].push_back(u);
      }
    }
    const double size = share_w[s] * o.shares / sum_w;
    const double total = per_share * size * static_cast<double>(4 + cfg.Below(3)) / 5;
    for (int u : share_units[s]) {
      limit[s][u] = std::max<int64_t>(16, std::llround(total / static_cast<double>(share_units[s].size())));
    }
  }
  std::vector<int64_t> limit_sum(static_cast<size_t>(o.units), 0);  // per type, over the shares
  for (int u = 0; u < o.units; ++u) {
    int64_t& sum = limit_sum[static_cast<size_t>(u)];
    for (int s = 0; s < o.shares; ++s) sum += limit[s][u];
    // The environment covers 90-110% of the limits: sometimes oversubscribed.
    sc.service_environment.capacity_limits.push_back({kUnitNames[u], std::max<int64_t>(16, sum * (90 + cfg.Below(21)) / 100)});
  }
  std::vector<std::string>& share_names = plan.share_names;
  for (int s = 0; s < o.shares; ++s) {
    CreateQuotaShareRequest r;
    r.quota_share_name = absl::StrCat("team-", s);
    share_names.push_back(*r.quota_share_name);
    std::vector<CapacityLimit> cl;
    for (int u : share_units[s]) cl.push_back({kUnitNames[u], limit[s][u]});
    r.capacity_limits = std::move(cl);
    r.has_resource_sharing = true;
    const int64_t kind = cfg.Below(4);
    if (!o.preemption) {
      r.strategy = kind == 0 ? Strategy::kReserve : Strategy::kLend;
    } else {
      r.strategy = kind == 0 ? Strategy::kReserve : kind == 1 ? Strategy::kLend : Strategy::kLendAndBorrow;
      if (*r.strategy == Strategy::kLendAndBorrow) {
        const int64_t limits[] = {-1, 0, 50, 100, 200};
        r.borrow_limit = limits[cfg.Below(5)];
      }
    }
    r.in_share_preemption = o.preemption && cfg.Below(2) == 0 ? Toggle::kEnabled : Toggle::kDisabled;
    ScenarioEvent ev;
    ev.path = absl::StrCat("quotaShares[", s, "]");
    ev.request = std::move(r);
    sc.events.push_back(std::move(ev));
  }
  std::vector<double> count_w(std::begin(kInstanceWeights), std::end(kInstanceWeights));
  const std::vector<double> count_cum = Cumulative(count_w);

  // The arrival process: every share offers `load` times its limits
  // (instance-time over time), scaled down on a type whose environment
  // holds less than the limits on it add up to. So no share is overloaded
  // on average; the diurnal cycle and the bursts overload shares for hours,
  // which is when they borrow and lenders reclaim. (Drawing shares by team
  // size against limits of 0.8-1.2x that size, with the floor of 16 per
  // type and the quarter-of-limit cap on instance counts left out of the
  // rate, overloaded the big teams for ever: at 1e7 jobs a p95 wait of
  // 420 days and millions of jobs queued.)
  const double sigma = 1.6;
  const double mean_run = MeanClampedLognormal(o.median_run_seconds, sigma, 1.0, o.max_run_seconds);
  std::vector<Pair> pairs;
  std::vector<double> pair_rate;
  for (int s = 0; s < o.shares; ++s) {
    for (int u : share_units[static_cast<size_t>(s)]) {
      const double env = static_cast<double>(sc.service_environment.capacity_limits[static_cast<size_t>(u)].max_capacity);
      const double scale = std::min(1.0, env / static_cast<double>(limit_sum[static_cast<size_t>(u)]));
      const int64_t cap = std::max<int64_t>(1, limit[s][u] / 4);
      double mean_count = 0;
      for (size_t i = 0; i < count_w.size(); ++i) {
        mean_count += static_cast<double>(std::min(kInstanceCounts[i], cap)) * count_w[i] / 100.0;
      }
      pairs.push_back({s, u, cap});
      pair_rate.push_back(o.load * static_cast<double>(limit[s][u]) * scale / (mean_count * mean_run));
    }
  }
  const double rate = std::accumulate(pair_rate.begin(), pair_rate.end(), 0.0);  // jobs per second
  const std::vector<double> pair_cum = Cumulative(pair_rate);

  // --- Jobs, in parallel blocks (stream 1 + block). ---
  const int64_t n = o.jobs;
  const int64_t nblocks = (n + kBlockJobs - 1) / kBlockJobs;
  std::vector<GenJob>& jobs = plan.jobs;
  jobs.resize(static_cast<size_t>(n));
  std::vector<double> block_span(static_cast<size_t>(nblocks));
  const Draw draw{o, rate, sigma, pairs, pair_cum, count_cum};
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, nblocks, 1), [&](const tbb::blocked_range<int64_t>& range) {
    for (int64_t b = range.begin(); b != range.end(); ++b) {
      Rng rng(o.seed, 1 + static_cast<uint64_t>(b));
      const int64_t end = std::min(n, (b + 1) * kBlockJobs);
      block_span[static_cast<size_t>(b)] = o.profile == Profile::kSteady ? SteadyBlock(draw, rng, b, end, jobs)
                                                                         : StressBlock(draw, rng, b, end, jobs);
    }
  }, tbb::simple_partitioner());
  std::vector<double> offset(static_cast<size_t>(nblocks), 0);
  for (int64_t b = 1; b < nblocks; ++b) offset[b] = offset[b - 1] + block_span[b - 1];
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, nblocks, 1), [&](const tbb::blocked_range<int64_t>& range) {
    for (int64_t b = range.begin(); b != range.end(); ++b) {
      // Operational time -> wall time through the diurnal intensity, by
      // Newton from the block's previous answer (a step or two), so the
      // result depends only on the block, never on the thread count.
      double x_prev = 0, t_prev = 0;
      for (int64_t i = b * kBlockJobs; i < std::min(n, (b + 1) * kBlockJobs); ++i) {
        GenJob& j = jobs[static_cast<size_t>(i)];
        const double x = j.op_time + offset[static_cast<size_t>(b)];
        const double t = InverseLambda(x, o.diurnal_amplitude, i == b * kBlockJobs ? x : t_prev + (x - x_prev));
        j.arrival = Ms(t);
        x_prev = x;
        t_prev = t;
      }
    }
  }, tbb::simple_partitioner());
  // Rounding to milliseconds keeps the order (InverseLambda is monotone).
  for (int64_t i = 1; i < n; ++i) jobs[i].arrival = std::max(jobs[i].arrival, jobs[i - 1].arrival);
  const SimTime span = jobs.back().arrival;

  // --- Events: submissions, follow-ups and limit changes, merged by time. ---
  std::vector<Extra>& extras = plan.extras;
  for (int64_t i = 0; i < n; ++i) {
    const GenJob& j = jobs[static_cast<size_t>(i)];
    if (j.update_after >= 0) {
      UpdateServiceJobRequest r;
      r.job_id = absl::StrCat("j", i);
      r.scheduling_priority = j.new_priority;
      extras.push_back({j.arrival + j.update_after, i * 2, std::move(r)});
    }
    if (j.terminate_after >= 0) {
      TerminateServiceJobRequest r;
      r.job_id = absl::StrCat("j", i);
      r.reason = "cancelled by user (synthetic)";
      extras.push_back({j.arrival + j.terminate_after, i * 2 + 1, std::move(r)});
    }
  }
  // Limit changes are temporary quota moves (a deadline, a maintenance
  // window): a share's limits go to 50-150% for half the time to the next
  // change, then back; in the steady profile for at most six hours. (Kept
  // for ever, a cut to half left a share that cannot borrow overloaded for
  // the rest of the span; kept for a quarter of the span, it left a backlog
  // of days.)
  for (int c = 0; c < o.limit_changes; ++c) {
    const int s = static_cast<int>(cfg.Below(o.shares));
    const SimTime at = span * (c + 1) / (o.limit_changes + 1);
    SimTime window = span / (2 * (o.limit_changes + 1));
    if (o.profile == Profile::kSteady) window = std::min<SimTime>(window, 6 * 3'600'000);
    const SimTime back = at + window;
    UpdateQuotaShareRequest change, restore;
    change.quota_share_arn = share_names[static_cast<size_t>(s)];
    restore.quota_share_arn = share_names[static_cast<size_t>(s)];
    std::vector<CapacityLimit> cl, original;
    for (int u : share_units[static_cast<size_t>(s)]) {
      cl.push_back({kUnitNames[u], std::max<int64_t>(16, limit[s][u] * (50 + cfg.Below(101)) / 100)});
      original.push_back({kUnitNames[u], limit[s][u]});
    }
    change.capacity_limits = std::move(cl);
    restore.capacity_limits = std::move(original);
    extras.push_back({at, 2 * n + 2 * c, std::move(change)});
    extras.push_back({back, 2 * n + 2 * c + 1, std::move(restore)});
  }
  std::sort(extras.begin(), extras.end(), [](const Extra& a, const Extra& b) {
    return a.time != b.time ? a.time < b.time : a.key < b.key;
  });

  // The merge: an extra goes before the submissions that come later.
  plan.order.reserve(static_cast<size_t>(n) + extras.size());
  size_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (; k < extras.size() && extras[k].time < jobs[static_cast<size_t>(i)].arrival; ++k) {
      plan.order.push_back(-1 - static_cast<int64_t>(k));
    }
    plan.order.push_back(i);
  }
  for (; k < extras.size(); ++k) plan.order.push_back(-1 - static_cast<int64_t>(k));
  sc.submit_count = n;

  // The offered regime: instance-time asked per type over capacity x span.
  OfferedLoad& off = plan.offered;
  off.span = span;
  std::vector<double> asked(static_cast<size_t>(o.units), 0);
  for (const GenJob& j : jobs) asked[static_cast<size_t>(j.unit)] += static_cast<double>(j.run) / 1000.0 * j.count;
  for (int u = 0; u < o.units; ++u) {
    const double cap = static_cast<double>(sc.service_environment.capacity_limits[static_cast<size_t>(u)].max_capacity);
    off.utilisation.push_back(
        {kUnitNames[u], span > 0 ? asked[static_cast<size_t>(u)] / (cap * static_cast<double>(span) / 1000.0) : 0.0});
  }
  off.follow_ups = 0;
  for (const Extra& x : extras) {
    if (!std::holds_alternative<UpdateQuotaShareRequest>(x.request)) ++off.follow_ups;
  }
  return plan;
}

}  // namespace

absl::StatusOr<Scenario> Generate(const GenOptions& o, OfferedLoad* offered) {
  if (absl::Status s = ValidateGenOptions(o); !s.ok()) return s;
  Plan plan = MakePlan(o);
  if (offered != nullptr) *offered = plan.offered;
  Scenario sc = std::move(plan.head);
  sc.events.reserve(sc.events.size() + plan.order.size());
  for (size_t p = 0; p < plan.order.size(); ++p) sc.events.push_back(MakeEvent(plan, p));
  return sc;
}

namespace {

QsbParts GenerateParts(const GenOptions& o, size_t block_events, OfferedLoad* offered) {
  const Plan plan = MakePlan(o);
  if (offered != nullptr) *offered = plan.offered;
  const size_t prefix = plan.head.events.size();  // the quotaShares entries
  return EncodeQsbParts(
      plan.head, prefix + plan.order.size(),
      [&](size_t first, size_t end, QsbEventWriter& w) {
        char name[24] = {'j'};
        for (size_t i = first; i < end; ++i) {
          const int64_t slot = i < prefix ? -1 : plan.order[i - prefix];
          if (slot < 0) {
            w.Put(i < prefix ? plan.head.events[i] : MakeEvent(plan, i - prefix));
            continue;
          }
          // A submission: MakeEvent()'s fields, written without building it
          // (gen_test checks the bytes against EncodeQsb(Generate(o))).
          const GenJob& j = plan.jobs[static_cast<size_t>(slot)];
          QsbSubmitView v;
          v.time = j.arrival;
          v.index = i - prefix;
          v.job_name = std::string_view(name, static_cast<size_t>(std::to_chars(name + 1, name + sizeof(name), slot).ptr - name));
          v.quota_share_name = plan.share_names[static_cast<size_t>(j.share)];
          v.scheduling_priority = j.priority;
          if (j.failed) v.retry_attempts = 2;
          v.instance_type = kUnitNames[j.unit];
          v.instance_count = j.count;
          v.run_time = j.run;
          v.outcome = j.failed ? JobOutcome::kFailed : JobOutcome::kSucceeded;
          w.PutSubmit(v);
        }
      },
      block_events);
}  // the plan is freed here, before the blocks are joined or written

}  // namespace

absl::StatusOr<std::string> GenerateQsb(const GenOptions& o, size_t block_events) {
  if (absl::Status s = ValidateGenOptions(o); !s.ok()) return s;
  QsbParts parts = GenerateParts(o, block_events, nullptr);
  std::string out = std::move(parts.prefix);
  for (std::string& b : parts.blocks) {
    out += b;
    std::string().swap(b);
  }
  return out;
}

absl::Status GenerateQsbFile(const GenOptions& o, const std::string& path, size_t block_events,
                             OfferedLoad* offered) {
  if (absl::Status s = ValidateGenOptions(o); !s.ok()) return s;
  return WriteQsbParts(GenerateParts(o, block_events, offered), path);
}

}  // namespace qs::gen
