// File: engine/gen/generator_setup.cc
//
// The generator's options (the profiles, their defaults and the ranges
// ValidateGenOptions checks) and MakeSetup: the environment, the shares and
// their limits, and the arrival rate per (share, type), all drawn before
// the jobs (generator.cc).
#include "engine/gen/generator_setup.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/gen/generator.h"

namespace qs::gen {

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

namespace generator_internal {
namespace {

std::vector<double> Cumulative(const std::vector<double>& w) {
  std::vector<double> c(w.size());
  std::partial_sum(w.begin(), w.end(), c.begin());
  return c;
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

}  // namespace

void MakeSetup(const GenOptions& o, Setup& setup) {
  Scenario& sc = setup.head;
  sc.source = absl::StrCat("gen(seed=", o.seed, ",jobs=", o.jobs, ")");
  sc.scheduling_policy.name = "quota-policy";
  sc.scheduling_policy.has_quota_share_policy = true;
  sc.service_environment.name = "gen-se";
  sc.job_queue.name = "gen-queue";
  sc.job_queue.priority = 1;

  // --- Configuration: environment and shares (stream 0). ---
  Rng& cfg = setup.cfg;
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
  std::vector<std::vector<int64_t>>& limit = setup.limit;
  limit.assign(static_cast<size_t>(o.shares), std::vector<int64_t>(static_cast<size_t>(o.units), 0));
  std::vector<std::vector<int>>& share_units = setup.share_units;
  share_units.assign(static_cast<size_t>(o.shares), {});
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
  std::vector<std::string>& share_names = setup.share_names;
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
  setup.count_cum = Cumulative(count_w);

  // The arrival process: every share offers `load` times its limits
  // (instance-time over time), scaled down on a type whose environment
  // holds less than the limits on it add up to. So no share is overloaded
  // on average; the diurnal cycle and the bursts overload shares for hours,
  // which is when they borrow and lenders reclaim. (Drawing shares by team
  // size against limits of 0.8-1.2x that size, with the floor of 16 per
  // type and the quarter-of-limit cap on instance counts left out of the
  // rate, overloaded the big teams for ever: at 1e7 jobs a p95 wait of
  // 420 days and millions of jobs queued.)
  const double sigma = setup.sigma;
  const double mean_run = MeanClampedLognormal(o.median_run_seconds, sigma, 1.0, o.max_run_seconds);
  std::vector<Pair>& pairs = setup.pairs;
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
  setup.rate = std::accumulate(pair_rate.begin(), pair_rate.end(), 0.0);  // jobs per second
  setup.pair_cum = Cumulative(pair_rate);
  sc.submit_count = o.jobs;
}

}  // namespace generator_internal
}  // namespace qs::gen
