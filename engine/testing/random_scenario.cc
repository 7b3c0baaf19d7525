#include "engine/testing/random_scenario.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace qs::testing {
namespace {

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed * 0x9E3779B97F4A7C15ULL + 0x1234567ULL) {}
  // Uniform in [lo, hi] (small ranges; modulo bias is irrelevant here).
  int64_t In(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(g_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(int percent) { return In(0, 99) < percent; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(In(0, static_cast<int64_t>(v.size()) - 1))];
  }

 private:
  std::mt19937_64 g_;
};

std::vector<CapacityLimit> RandomLimits(Rng& rng, const std::vector<std::string>& units, int64_t max) {
  std::vector<CapacityLimit> out;
  for (const std::string& u : units) {
    if (out.empty() || rng.Chance(60)) out.push_back({u, rng.In(1, max)});
  }
  return out;
}

}  // namespace

Scenario RandomScenario(uint64_t seed, const RandomScenarioOptions& opt) {
  Rng rng(seed);
  Scenario sc;
  sc.source = "random-" + std::to_string(seed);
  sc.scheduling_policy.name = "sp";
  sc.scheduling_policy.has_quota_share_policy = true;
  sc.service_environment.name = "se";
  sc.job_queue.name = "q";

  const int nunits = static_cast<int>(rng.In(1, opt.max_units));
  std::vector<std::string> units;
  for (int i = 0; i < nunits; ++i) units.push_back("ml.unit" + std::to_string(i) + ".xlarge");
  for (const std::string& u : units) sc.service_environment.capacity_limits.push_back({u, rng.In(1, 12)});

  if (rng.Chance(30)) {
    const std::vector<std::string> reasons = {"MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE",
                                              "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"};
    for (const std::string& r : reasons) {
      if (rng.Chance(70)) sc.job_queue.time_limit_actions.push_back({r, "RUNNABLE", rng.In(600, 1200), "TERMINATE"});
    }
  }

  Knobs& k = sc.knobs;
  if (opt.random_knobs) {
    if (rng.Chance(30)) k.submit_latency = rng.In(0, 5) * 1000;
    if (rng.Chance(30)) k.provision = rng.In(0, 10) * 1000;
    if (rng.Chance(30)) k.download = rng.In(0, 10) * 1000;
    if (rng.Chance(20)) k.scheduling_interval = rng.Pick(std::vector<int64_t>{10, 30, 60}) * 1000;
    if (rng.Chance(40)) k.preemption_drain = rng.In(0, 60) * 1000;
    k.share_order = rng.Pick(std::vector<ShareOrder>{ShareOrder::kUnderLimitFirst, ShareOrder::kUnderLimitFirst,
                                                     ShareOrder::kRoundRobin, ShareOrder::kDeclaration});
    if (rng.Chance(30)) k.victim_order = VictimOrder::kMostBorrowedFirst;
    k.backfill = rng.Chance(20);
    if (rng.Chance(25)) k.unassigned_capacity = UnassignedCapacity::kLendable;
    if (rng.Chance(25)) k.entitled_capacity = EntitledCapacity::kLendable;
    if (rng.Chance(25)) k.victim_return = VictimReturn::kInPlace;
    if (rng.Chance(20)) k.checkpoint_interval = rng.In(5, 120) * 1000;
    if (rng.Chance(15)) k.horizon = rng.In(100, 3000) * 1000;
  }

  std::vector<ScenarioEvent> timed;
  const int nshares = static_cast<int>(rng.In(1, opt.max_shares));
  std::vector<std::string> share_names;
  for (int s = 0; s < nshares; ++s) {
    CreateQuotaShareRequest r;
    r.quota_share_name = "S" + std::to_string(s);
    share_names.push_back(*r.quota_share_name);
    r.capacity_limits = RandomLimits(rng, units, 6);
    r.has_resource_sharing = true;
    r.strategy = rng.Pick(std::vector<Strategy>{Strategy::kReserve, Strategy::kLend, Strategy::kLendAndBorrow,
                                                Strategy::kLendAndBorrow});
    if (*r.strategy == Strategy::kLendAndBorrow && rng.Chance(70)) {
      r.borrow_limit = rng.Pick(std::vector<int64_t>{-1, 0, 50, 100, 200, 300});
    }
    r.in_share_preemption = rng.Chance(50) ? Toggle::kEnabled : Toggle::kDisabled;
    if (rng.Chance(5)) r.state = Toggle::kDisabled;
    if (opt.invalid_requests && rng.Chance(5)) r.borrow_limit = -5;  // rejected
    ScenarioEvent ev;
    ev.time = 0;
    ev.path = "quotaShares[" + std::to_string(s) + "]";
    ev.request = std::move(r);
    sc.events.push_back(std::move(ev));
  }
  if (opt.invalid_requests && rng.Chance(10)) {
    CreateQuotaShareRequest dup;  // duplicate name: rejected
    dup.quota_share_name = share_names[0];
    dup.capacity_limits = RandomLimits(rng, units, 3);
    dup.has_resource_sharing = true;
    dup.strategy = Strategy::kLend;
    dup.in_share_preemption = Toggle::kDisabled;
    ScenarioEvent ev;
    ev.path = "quotaShares[" + std::to_string(nshares) + "]";
    ev.request = std::move(dup);
    sc.events.push_back(std::move(ev));
  }

  const int njobs = static_cast<int>(rng.In(5, opt.max_jobs));
  std::vector<std::string> job_names;
  auto add = [&](SimTime t, Request r) {
    ScenarioEvent ev;
    ev.time = t;
    ev.request = std::move(r);
    timed.push_back(std::move(ev));
  };
  const SimTime span = rng.In(60, 1200) * 1000;
  for (int i = 0; i < njobs; ++i) {
    SubmitServiceJobRequest r;
    r.job_name = "j" + std::to_string(i);
    job_names.push_back(*r.job_name);
    r.quota_share_name = rng.Chance(97) || !opt.invalid_requests ? rng.Pick(share_names) : std::string("nope");
    if (rng.Chance(80)) r.scheduling_priority = rng.In(0, 5);
    if (opt.invalid_requests && rng.Chance(2)) r.scheduling_priority = 10000;
    r.instance_type = rng.Chance(97) ? rng.Pick(units) : std::string("ml.unknown.xlarge");
    r.instance_count = rng.Pick(std::vector<int64_t>{1, 1, 1, 2, 2, 3, 4, 8});
    r.run_time = rng.In(0, 600) * 1000 + (rng.Chance(20) ? rng.In(0, 999) : 0);
    if (rng.Chance(10)) r.outcome = JobOutcome::kFailed;
    if (rng.Chance(15)) r.retry_attempts = rng.In(1, 3);
    if (rng.Chance(10)) r.attempt_duration_seconds = rng.In(30, 400);
    if (rng.Chance(10)) r.max_runtime_seconds = rng.In(30, 400);
    if (rng.Chance(10)) r.checkpoint_interval = rng.In(5, 120) * 1000;
    if (rng.Chance(25)) r.preemption_retries = rng.In(0, 2);
    add(rng.In(0, span / 1000) * 1000, std::move(r));
  }
  const int nupdates = static_cast<int>(rng.In(0, njobs / 3 + 1));
  for (int i = 0; i < nupdates; ++i) {
    const SimTime t = rng.In(0, span / 1000 + 300) * 1000;
    const int64_t kind = rng.In(0, 9);
    if (kind <= 3) {
      UpdateServiceJobRequest r;
      r.job_id = rng.Pick(job_names);
      r.scheduling_priority = rng.In(0, 8);
      add(t, std::move(r));
    } else if (kind <= 5) {
      TerminateServiceJobRequest r;
      r.job_id = rng.Pick(job_names);
      r.reason = "terminated by test";
      add(t, std::move(r));
    } else if (kind <= 7) {
      UpdateQuotaShareRequest r;
      r.quota_share_arn = rng.Chance(50) ? rng.Pick(share_names)
                                         : "arn:aws:batch:us-east-1:123456789012:job-queue/q/quota-share/" +
                                               rng.Pick(share_names);
      if (rng.Chance(70)) r.capacity_limits = RandomLimits(rng, units, 6);
      if (rng.Chance(40)) {
        r.has_resource_sharing = true;
        r.strategy = rng.Pick(std::vector<Strategy>{Strategy::kReserve, Strategy::kLend, Strategy::kLendAndBorrow});
        if (*r.strategy == Strategy::kLendAndBorrow && rng.Chance(50)) r.borrow_limit = rng.In(0, 200);
      }
      if (rng.Chance(30)) r.in_share_preemption = rng.Chance(50) ? Toggle::kEnabled : Toggle::kDisabled;
      if (rng.Chance(10)) r.state = rng.Chance(50) ? Toggle::kEnabled : Toggle::kDisabled;
      add(t, std::move(r));
    } else if (kind == 8) {
      UpdateServiceEnvironmentRequest r;
      r.service_environment = "se";
      r.capacity_limits = RandomLimits(rng, units, 12);
      add(t, std::move(r));
    } else {
      GetJobQueueSnapshotRequest r;
      r.job_queue = "q";
      add(t, std::move(r));
    }
  }
  std::stable_sort(timed.begin(), timed.end(),
                   [](const ScenarioEvent& a, const ScenarioEvent& b) { return a.time < b.time; });
  for (size_t i = 0; i < timed.size(); ++i) {
    timed[i].path = "events[" + std::to_string(i) + "]";
    sc.events.push_back(std::move(timed[i]));
  }
  sc.submit_count = njobs;
  // simulation.capacity (docs/semantics.md §2), drawn last so that the rest
  // of a seed's scenario is what it was before capacity models existed.
  if (opt.random_knobs && rng.Chance(25)) {
    CapacityModel& c = k.capacity;
    c.seed = static_cast<uint64_t>(rng.In(0, 1000));
    c.error_delay = rng.Pick(std::vector<int64_t>{20, 30, 60, 300}) * 1000;
    bool may_stick = false;
    for (const std::string& u : units) {  // names in increasing order
      if (!rng.Chance(60)) continue;
      TypeCapacity t;
      t.instance_type = u;
      t.failure_probability = rng.Pick(std::vector<double>{0, 0.1, 0.5, 1});
      if (rng.Chance(60)) {
        SimTime at = rng.In(0, 60) * 1000;
        for (int64_t i = rng.In(1, 4); i > 0; --i) {
          t.availability.push_back({at, rng.In(0, 12)});
          at += rng.In(1, 600) * 1000;
        }
      }
      may_stick = may_stick || t.failure_probability >= 1 || !t.availability.empty();
      c.types.push_back(std::move(t));
    }
    std::sort(c.types.begin(), c.types.end(),
              [](const TypeCapacity& a, const TypeCapacity& b) { return a.instance_type < b.instance_type; });
    if (may_stick && !k.horizon) {
      sc.job_queue.time_limit_actions.push_back(
          {"CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY", "RUNNABLE", rng.In(600, 1200), "TERMINATE"});
    }
  }
  // simulation.latencies (docs/semantics.md §2), also drawn last.
  if (opt.random_knobs && rng.Chance(25)) {
    LatencyModel& m = k.latencies;
    m.seed = static_cast<uint64_t>(rng.In(0, 1000));
    auto draw = [&rng](SimTime cap) {
      LatencyDistribution d;
      d.kind = rng.Pick(std::vector<Distribution>{Distribution::kConstant, Distribution::kUniform,
                                                  Distribution::kLognormal});
      d.a = rng.In(0, 10) * 1000;
      d.median = rng.In(0, 20) * 1000;
      d.sigma = rng.Pick(std::vector<double>{0.25, 0.5, 1});
      d.max = std::min<SimTime>(cap, std::max(d.a, d.median) + rng.In(0, 60) * 1000);
      if (d.kind == Distribution::kConstant) d.a = std::min(d.a, cap), d.max = 0, d.median = 0, d.sigma = 0;
      if (d.kind == Distribution::kUniform) d.median = 0, d.sigma = 0;
      if (d.kind == Distribution::kLognormal) d.a = 0;
      return d;
    };
    for (const std::string& u : units) {
      if (!rng.Chance(60)) continue;
      TypeLatencies t;
      t.instance_type = u;
      if (rng.Chance(50)) t.provision = draw(300'000);
      if (rng.Chance(50)) t.download = draw(300'000);
      if (rng.Chance(60)) t.drain = draw(kStopGracePeriod);
      m.types.push_back(std::move(t));
    }
    std::sort(m.types.begin(), m.types.end(),
              [](const TypeLatencies& a, const TypeLatencies& b) { return a.instance_type < b.instance_type; });
  }
  // Drawn last, so that the scenarios of every seed before the knob existed
  // are unchanged.
  if (opt.random_knobs && rng.Chance(30)) k.time_limit_clock = TimeLimitClock::kAtHead;
  return sc;
}

}  // namespace qs::testing
