#include "fuzz/fuzz_scenario.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "engine/io/scenario_json.h"
#include "engine/testing/random_scenario.h"

namespace qs::fuzz {
namespace {

constexpr SimTime kSec = kMillisPerSecond;

template <typename T, size_t N>
T Pick(FuzzedDataProvider& p, const T (&values)[N]) {
  return values[p.ConsumeIntegralInRange<size_t>(0, N - 1)];
}

// 1 in `n` chance (0 when the input is exhausted: exhausted means "default").
bool OneIn(FuzzedDataProvider& p, int n) { return p.ConsumeIntegralInRange<int>(0, n - 1) == n - 1; }

std::vector<CapacityLimit> Limits(FuzzedDataProvider& p, const std::vector<std::string>& units, int64_t max,
                                  bool allow_invalid) {
  std::vector<CapacityLimit> out;
  for (const std::string& u : units) {
    if (out.empty() || p.ConsumeBool()) out.push_back({u, p.ConsumeIntegralInRange<int64_t>(1, max)});
  }
  if (allow_invalid && OneIn(p, 32)) {
    // Rejected by validation: maxCapacity 0, or a duplicate unit.
    if (p.ConsumeBool()) {
      out.back().max_capacity = 0;
    } else {
      out.push_back(out.front());
    }
  }
  return out;
}

Strategy PickStrategy(FuzzedDataProvider& p) {
  static constexpr Strategy kStrategies[] = {Strategy::kLendAndBorrow, Strategy::kLend, Strategy::kReserve};
  return Pick(p, kStrategies);
}

void SharingConfig(FuzzedDataProvider& p, bool* has, std::optional<Strategy>* strategy,
                   std::optional<int64_t>* borrow_limit) {
  *has = true;
  *strategy = PickStrategy(p);
  static constexpr int64_t kBorrow[] = {-2, -1, 0, 50, 100, 200, 300, 1000};
  const size_t b = p.ConsumeIntegralInRange<size_t>(0, 8);  // 8 = absent
  if (b < 8 && (**strategy == Strategy::kLendAndBorrow || OneIn(p, 8))) {
    *borrow_limit = kBorrow[b];  // -2 and borrowLimit on RESERVE/LEND are rejected
  }
}

// The names every decoded scenario uses: policy sp, environment se, queue q.
Scenario EmptyScenario() {
  Scenario sc;
  sc.source = "fuzz";
  sc.scheduling_policy.name = "sp";
  sc.scheduling_policy.has_quota_share_policy = true;
  sc.service_environment.name = "se";
  sc.job_queue.name = "q";
  return sc;
}

// The `quotaShares[s]` entry: CreateQuotaShare at time 0.
void AddShare(Scenario& sc, int s, CreateQuotaShareRequest r) {
  ScenarioEvent ev;
  ev.time = 0;
  ev.path = "quotaShares[" + std::to_string(s) + "]";
  ev.request = std::move(r);
  sc.events.push_back(std::move(ev));
}

// The timed requests as the `events` array: stably sorted by time, paths
// in that order.
void AppendTimed(Scenario& sc, std::vector<ScenarioEvent>& timed) {
  std::stable_sort(timed.begin(), timed.end(),
                   [](const ScenarioEvent& a, const ScenarioEvent& b) { return a.time < b.time; });
  for (size_t i = 0; i < timed.size(); ++i) {
    timed[i].path = "events[" + std::to_string(i) + "]";
    sc.events.push_back(std::move(timed[i]));
  }
}

// simulation.capacity on some inputs (docs/semantics.md §2, "Capacity"):
// per unit a failure probability and perhaps an availability schedule;
// when a job could fail to provision for ever, the queue gets the time-limit
// action for the reason unless a horizon ends the run.
void DecodeCapacity(FuzzedDataProvider& p, Scenario& sc, const std::vector<std::string>& units) {
  if (!OneIn(p, 3)) return;
  CapacityModel& c = sc.knobs.capacity;
  c.seed = p.ConsumeIntegral<uint8_t>();
  static constexpr int64_t kErrors[] = {60, 20, 30, 300};
  c.error_delay = Pick(p, kErrors) * kSec;
  static constexpr double kProbabilities[] = {0.25, 0, 0.5, 0.9, 1};
  bool may_stick = false;
  for (const std::string& u : units) {  // names in increasing order
    if (OneIn(p, 3)) continue;
    TypeCapacity t;
    t.instance_type = u;
    t.failure_probability = Pick(p, kProbabilities);
    if (!OneIn(p, 3)) {
      const int steps = p.ConsumeIntegralInRange<int>(1, 4);
      SimTime at = p.ConsumeIntegralInRange<int64_t>(0, 60) * kSec;
      for (int i = 0; i < steps; ++i) {
        t.availability.push_back({at, p.ConsumeIntegralInRange<int64_t>(0, 12)});
        at += p.ConsumeIntegralInRange<int64_t>(1, 600) * kSec;
      }
    }
    may_stick = may_stick || t.failure_probability >= 1 || !t.availability.empty();
    c.types.push_back(std::move(t));
  }
  if (may_stick && !sc.knobs.horizon) {
    sc.job_queue.time_limit_actions.push_back(
        {"CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY", "RUNNABLE", p.ConsumeIntegralInRange<int64_t>(600, 1200),
         "TERMINATE"});
  }
}

// simulation.latencies on some inputs (docs/semantics.md §2, "Latency
// distributions"): per unit, distributions for some of the three latencies.
LatencyDistribution DecodeDistribution(FuzzedDataProvider& p, SimTime cap) {
  LatencyDistribution d;
  switch (p.ConsumeIntegralInRange<int>(0, 2)) {
    case 0:
      d.kind = Distribution::kUniform;
      d.a = p.ConsumeIntegralInRange<int64_t>(0, 10'000);
      d.max = std::min<SimTime>(cap, d.a + p.ConsumeIntegralInRange<int64_t>(0, 30'000));
      break;
    case 1:
      d.kind = Distribution::kConstant;
      d.a = p.ConsumeIntegralInRange<int64_t>(0, 10) * kSec;
      break;
    default: {
      d.kind = Distribution::kLognormal;
      d.median = p.ConsumeIntegralInRange<int64_t>(0, 20) * kSec;
      static constexpr double kSigmas[] = {0.5, 0.25, 1, 2};
      d.sigma = Pick(p, kSigmas);
      d.max = std::min<SimTime>(cap, d.median + p.ConsumeIntegralInRange<int64_t>(0, 100) * kSec);
      break;
    }
  }
  return d;
}

void DecodeLatencies(FuzzedDataProvider& p, Scenario& sc, const std::vector<std::string>& units) {
  if (!OneIn(p, 3)) return;
  LatencyModel& m = sc.knobs.latencies;
  m.seed = p.ConsumeIntegral<uint8_t>();
  for (const std::string& u : units) {  // names in increasing order
    if (OneIn(p, 3)) continue;
    TypeLatencies t;
    t.instance_type = u;
    if (p.ConsumeBool()) t.provision = DecodeDistribution(p, 300 * kSec);
    if (p.ConsumeBool()) t.download = DecodeDistribution(p, 300 * kSec);
    if (!OneIn(p, 3)) t.drain = DecodeDistribution(p, kStopGracePeriod);
    m.types.push_back(std::move(t));
  }
}

Scenario Decode(FuzzedDataProvider& p) {
  Scenario sc = EmptyScenario();

  // Small environments are where shares contend: half the inputs have one
  // unit, and capacities are mostly small.
  const int nunits = p.ConsumeBool() ? p.ConsumeIntegralInRange<int>(1, 5) : 1;
  std::vector<std::string> units;
  for (int i = 0; i < nunits; ++i) units.push_back("ml.u" + std::to_string(i) + ".xlarge");
  for (const std::string& u : units) {
    sc.service_environment.capacity_limits.push_back(
        {u, OneIn(p, 4) ? p.ConsumeIntegralInRange<int64_t>(1, 16) : p.ConsumeIntegralInRange<int64_t>(1, 6)});
  }
  if (OneIn(p, 16)) sc.service_environment.state = Toggle::kDisabled;

  if (OneIn(p, 4)) {
    static constexpr const char* kReasons[] = {"MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE",
                                               "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"};
    for (const char* r : kReasons) {
      if (p.ConsumeBool()) {
        sc.job_queue.time_limit_actions.push_back(
            {r, "RUNNABLE", p.ConsumeIntegralInRange<int64_t>(600, 1200), "TERMINATE"});
      }
    }
  }

  // Knobs: the first byte of each is 0 -> default.
  Knobs& k = sc.knobs;
  k.submit_latency = p.ConsumeIntegralInRange<int64_t>(0, 5) * kSec;
  k.provision = p.ConsumeIntegralInRange<int64_t>(0, 10) * kSec;
  k.download = p.ConsumeIntegralInRange<int64_t>(0, 10) * kSec;
  static constexpr int64_t kIntervals[] = {0, 0, 0, 0, 15, 60, 120};
  k.scheduling_interval = Pick(p, kIntervals) * kSec;
  if (p.ConsumeBool()) k.preemption_drain = p.ConsumeIntegralInRange<int64_t>(0, 60) * kSec;
  static constexpr ShareOrder kOrders[] = {ShareOrder::kUnderLimitFirst, ShareOrder::kRoundRobin,
                                           ShareOrder::kDeclaration};
  k.share_order = Pick(p, kOrders);
  if (p.ConsumeBool()) k.victim_order = VictimOrder::kMostBorrowedFirst;
  k.backfill = p.ConsumeBool();
  if (p.ConsumeBool()) k.unassigned_capacity = UnassignedCapacity::kLendable;
  if (OneIn(p, 4)) k.entitled_capacity = EntitledCapacity::kLendable;
  if (OneIn(p, 4)) k.victim_return = VictimReturn::kInPlace;
  if (OneIn(p, 5)) k.checkpoint_interval = p.ConsumeIntegralInRange<int64_t>(1, 120) * kSec;
  if (OneIn(p, 6)) k.horizon = p.ConsumeIntegralInRange<int64_t>(1, 3000) * kSec;
  DecodeCapacity(p, sc, units);
  DecodeLatencies(p, sc, units);

  // Quota shares (the `quotaShares` entries: CreateQuotaShare at time 0).
  // 1-20 shares; mostly up to 6 so that each run stays cheap (the engine's
  // full invariant check is O(shares x units) per event).
  const int nshares = OneIn(p, 16) ? p.ConsumeIntegralInRange<int>(1, 20) : p.ConsumeIntegralInRange<int>(1, 6);
  std::vector<std::string> share_names;
  for (int s = 0; s < nshares; ++s) {
    CreateQuotaShareRequest r;
    r.quota_share_name = "S" + std::to_string(s);
    share_names.push_back(*r.quota_share_name);
    r.capacity_limits = Limits(p, units, 8, /*allow_invalid=*/true);
    SharingConfig(p, &r.has_resource_sharing, &r.strategy, &r.borrow_limit);
    r.in_share_preemption = p.ConsumeBool() ? Toggle::kEnabled : Toggle::kDisabled;
    if (OneIn(p, 16)) r.state = Toggle::kDisabled;
    if (OneIn(p, 64)) r.quota_share_name = share_names.front();  // duplicate: rejected
    AddShare(sc, s, std::move(r));
  }

  // Timed requests.
  std::vector<ScenarioEvent> timed;
  timed.reserve(kMaxEvents);
  sc.events.reserve(sc.events.size() + kMaxEvents);
  std::vector<std::string> job_names;
  auto add = [&](SimTime t, Request r) {
    ScenarioEvent ev;
    ev.time = t;
    ev.request = std::move(r);
    timed.push_back(std::move(ev));
  };
  auto any_job = [&]() -> std::string {
    if (job_names.empty() || OneIn(p, 32)) return "nope";  // unknown job: rejected
    return job_names[p.ConsumeIntegralInRange<size_t>(0, job_names.size() - 1)];
  };
  auto any_share = [&]() -> std::string {
    if (OneIn(p, 32)) return "nope";  // unknown share: rejected
    return share_names[p.ConsumeIntegralInRange<size_t>(0, share_names.size() - 1)];
  };
  while (p.remaining_bytes() > 0 && static_cast<int>(timed.size()) < kMaxEvents) {
    const int kind = p.ConsumeIntegralInRange<int>(0, 15);
    SimTime t = p.ConsumeIntegralInRange<int64_t>(0, 1200) * kSec;
    if (OneIn(p, 8)) t += p.ConsumeIntegralInRange<int64_t>(0, 999);
    if (kind <= 7) {
      if (static_cast<int>(job_names.size()) >= kMaxJobs) continue;
      SubmitServiceJobRequest r;
      r.job_name = "j" + std::to_string(job_names.size());
      job_names.push_back(*r.job_name);
      r.job_queue = "q";
      r.service_job_type = "SAGEMAKER_TRAINING";
      r.quota_share_name = any_share();
      if (p.ConsumeBool()) r.scheduling_priority = p.ConsumeIntegralInRange<int64_t>(0, 9);
      if (OneIn(p, 64)) r.scheduling_priority = 10000;  // rejected
      r.instance_type = OneIn(p, 32) ? std::string("ml.unknown.xlarge") : units[p.ConsumeIntegralInRange<size_t>(0, units.size() - 1)];
      static constexpr int64_t kCounts[] = {1, 1, 1, 2, 2, 3, 4, 6, 8, 12};
      r.instance_count = Pick(p, kCounts);
      if (OneIn(p, 64)) r.instance_count = 0;  // rejected
      r.run_time = p.ConsumeIntegralInRange<int64_t>(0, 300) * kSec;
      if (OneIn(p, 4)) r.run_time += p.ConsumeIntegralInRange<int64_t>(0, 999);
      if (OneIn(p, 8)) r.outcome = JobOutcome::kFailed;
      if (OneIn(p, 6)) r.retry_attempts = p.ConsumeIntegralInRange<int64_t>(1, 3);
      if (OneIn(p, 8)) r.attempt_duration_seconds = p.ConsumeIntegralInRange<int64_t>(1, 400);
      if (OneIn(p, 8)) r.max_runtime_seconds = p.ConsumeIntegralInRange<int64_t>(1, 400);
      if (OneIn(p, 8)) r.checkpoint_interval = p.ConsumeIntegralInRange<int64_t>(1, 120) * kSec;
      if (OneIn(p, 3)) r.preemption_retries = p.ConsumeIntegralInRange<int64_t>(0, 2);
      add(t, std::move(r));
    } else if (kind <= 9) {
      UpdateServiceJobRequest r;
      r.job_id = any_job();
      r.scheduling_priority = OneIn(p, 64) ? -1 : p.ConsumeIntegralInRange<int64_t>(0, 9);
      add(t, std::move(r));
    } else if (kind <= 11) {
      TerminateServiceJobRequest r;
      r.job_id = any_job();
      r.reason = "terminated by fuzzer";
      add(t, std::move(r));
    } else if (kind <= 13) {
      UpdateQuotaShareRequest r;
      const std::string name = any_share();
      r.quota_share_arn = p.ConsumeBool() ? name : "arn:aws:batch:us-east-1:123456789012:job-queue/q/quota-share/" + name;
      if (p.ConsumeBool()) r.capacity_limits = Limits(p, units, 8, /*allow_invalid=*/true);
      if (p.ConsumeBool()) SharingConfig(p, &r.has_resource_sharing, &r.strategy, &r.borrow_limit);
      if (p.ConsumeBool()) r.in_share_preemption = p.ConsumeBool() ? Toggle::kEnabled : Toggle::kDisabled;
      if (OneIn(p, 4)) r.state = p.ConsumeBool() ? Toggle::kEnabled : Toggle::kDisabled;
      add(t, std::move(r));
    } else if (kind == 14) {
      UpdateServiceEnvironmentRequest r;
      r.service_environment = "se";
      if (p.ConsumeBool() || OneIn(p, 2)) r.capacity_limits = Limits(p, units, 16, /*allow_invalid=*/false);
      if (OneIn(p, 4)) r.state = p.ConsumeBool() ? Toggle::kEnabled : Toggle::kDisabled;
      add(t, std::move(r));
    } else {
      // Kind 15: mostly a snapshot; sometimes one of the rarer requests
      // (docs/semantics.md §7).
      const int sub = p.ConsumeIntegralInRange<int>(0, 7);
      if (sub == 1) {
        // DeleteQuotaShare, usually after the UpdateQuotaShare that disables
        // the share (the same instant, in that order).
        const std::string name = any_share();
        if (!OneIn(p, 4)) {
          UpdateQuotaShareRequest u;
          u.quota_share_arn = name;
          u.state = Toggle::kDisabled;
          add(t, std::move(u));
        }
        DeleteQuotaShareRequest r;
        r.quota_share_arn = name;
        add(t, std::move(r));
      } else if (sub == 2) {
        UpdateJobQueueRequest r;
        r.job_queue = OneIn(p, 16) ? std::string("other") : std::string("q");
        if (p.ConsumeBool()) r.state = p.ConsumeBool() ? Toggle::kEnabled : Toggle::kDisabled;
        if (OneIn(p, 4)) r.priority = p.ConsumeIntegralInRange<int64_t>(0, 1000);
        if (OneIn(p, 8)) r.scheduling_policy_arn = OneIn(p, 2) ? "sp" : "other";
        if (p.ConsumeBool()) {
          r.time_limit_actions.emplace();
          static constexpr const char* kReasons[] = {"MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED",
                                                     "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE",
                                                     "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY"};
          for (const char* reason : kReasons) {
            if (p.ConsumeBool()) {
              r.time_limit_actions->push_back(
                  {reason, "RUNNABLE", p.ConsumeIntegralInRange<int64_t>(600, 1200), "TERMINATE"});
            }
          }
        }
        add(t, std::move(r));
      } else if (sub == 3) {
        UpdateSchedulingPolicyRequest r;
        r.arn = OneIn(p, 8) ? "other" : "sp";
        r.has_quota_share_policy = p.ConsumeBool();
        r.has_fairshare_policy = OneIn(p, 8);
        add(t, std::move(r));
      } else {
        GetJobQueueSnapshotRequest r;
        r.job_queue = "q";
        add(t, std::move(r));
      }
    }
  }
  AppendTimed(sc, timed);
  sc.submit_count = static_cast<int64_t>(job_names.size());
  // Drawn last, so that the corpus entries written before the knob existed
  // still decode to the scenarios they found.
  if (OneIn(p, 3)) sc.knobs.time_limit_clock = TimeLimitClock::kAtHead;
  return sc;
}

// The contended form (kContendedMagic): every input, the empty one included,
// is a dense scenario where shares borrow, lend and reclaim on one or two
// instance types: 2-4 shares that mostly lend and borrow, limits that add up
// to about the environment, always kMaxJobs submissions over a short window
// with sizes up to half the environment, and some priority updates and
// terminations. Bytes only vary it; exhausted bytes read as 0, and the
// defaults are chosen so that even then jobs of several shares overlap.
Scenario DecodeContended(FuzzedDataProvider& p) {
  Scenario sc = EmptyScenario();
  const int nunits = 1 + (p.ConsumeIntegralInRange<int>(0, 3) == 3 ? 1 : 0);
  std::vector<std::string> units;
  for (int i = 0; i < nunits; ++i) units.push_back("ml.u" + std::to_string(i) + ".xlarge");
  const int nshares = 2 + p.ConsumeIntegralInRange<int>(0, 2);
  std::vector<int64_t> env(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    env[u] = 4 + p.ConsumeIntegralInRange<int64_t>(0, 8);
    sc.service_environment.capacity_limits.push_back({units[u], env[u]});
  }
  if (p.ConsumeBool()) {
    sc.job_queue.time_limit_actions.push_back(
        {"MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED", "RUNNABLE", 600, "TERMINATE"});
  }
  Knobs& k = sc.knobs;
  static constexpr int64_t kDrains[] = {20, 0, 5, 60};
  k.preemption_drain = Pick(p, kDrains) * kSec;
  static constexpr ShareOrder kOrders[] = {ShareOrder::kUnderLimitFirst, ShareOrder::kRoundRobin,
                                           ShareOrder::kDeclaration};
  k.share_order = Pick(p, kOrders);
  if (p.ConsumeBool()) k.victim_order = VictimOrder::kMostBorrowedFirst;
  if (p.ConsumeBool()) k.unassigned_capacity = UnassignedCapacity::kLendable;
  if (p.ConsumeBool()) k.entitled_capacity = EntitledCapacity::kLendable;
  if (OneIn(p, 4)) k.victim_return = VictimReturn::kInPlace;
  if (OneIn(p, 3)) k.checkpoint_interval = p.ConsumeIntegralInRange<int64_t>(1, 60) * kSec;
  if (p.ConsumeBool()) k.scheduling_interval = 15 * kSec;
  if (OneIn(p, 8)) k.backfill = true;
  DecodeCapacity(p, sc, units);
  DecodeLatencies(p, sc, units);

  std::vector<std::string> share_names;
  static constexpr Strategy kStrategies[] = {Strategy::kLendAndBorrow, Strategy::kLend, Strategy::kLendAndBorrow,
                                             Strategy::kReserve};
  // Small caps too (0 and 25% of limits of 1-4 instances are 0 or 1), so
  // that a borrower often reaches its cap exactly: off-by-one errors in the
  // cap show only there. 25% comes first: exhausted bytes pick it, so the
  // default scenario has a borrower at a cap of 0 or 1 (the borrow-cap
  // mutant then escaped an empty corpus in one of two 60 s runs; with 25%
  // first it is caught within a second).
  static constexpr int64_t kBorrow[] = {25, -1, 100, 50, 200, 0};
  for (int s = 0; s < nshares; ++s) {
    CreateQuotaShareRequest r;
    r.quota_share_name = "S" + std::to_string(s);
    share_names.push_back(*r.quota_share_name);
    std::vector<CapacityLimit> limits;
    for (size_t u = 0; u < units.size(); ++u) {
      // About env / shares each, at least 1, so the limits add up to about
      // the environment and any share past its own limit must borrow.
      const int64_t base = std::max<int64_t>(1, env[u] / nshares);
      limits.push_back({units[u], base + p.ConsumeIntegralInRange<int64_t>(0, 2)});
    }
    r.capacity_limits = std::move(limits);
    r.has_resource_sharing = true;
    // Share 0 lends (and borrows), share 1 borrows: the defaults contend.
    r.strategy = kStrategies[(static_cast<size_t>(s) + p.ConsumeIntegralInRange<size_t>(0, 3)) % 4];
    if (*r.strategy == Strategy::kLendAndBorrow) r.borrow_limit = Pick(p, kBorrow);
    r.in_share_preemption = (s + p.ConsumeIntegralInRange<int>(0, 1)) % 2 == 0 ? Toggle::kEnabled : Toggle::kDisabled;
    AddShare(sc, s, std::move(r));
  }

  std::vector<ScenarioEvent> timed;
  auto add = [&](SimTime t, Request r) {
    ScenarioEvent ev;
    ev.time = t;
    ev.request = std::move(r);
    timed.push_back(std::move(ev));
  };
  static constexpr int64_t kCounts[] = {1, 2, 3, 1, 4, 2};
  for (int j = 0; j < kMaxJobs; ++j) {
    SubmitServiceJobRequest r;
    r.job_name = "j" + std::to_string(j);
    r.job_queue = "q";
    r.service_job_type = "SAGEMAKER_TRAINING";
    const size_t s = (static_cast<size_t>(j) + p.ConsumeIntegralInRange<size_t>(0, 3)) % share_names.size();
    r.quota_share_name = share_names[s];
    r.scheduling_priority = (j * 3 + p.ConsumeIntegralInRange<int64_t>(0, 3)) % 4;
    const size_t u = p.ConsumeIntegralInRange<size_t>(0, units.size() - 1);
    r.instance_type = units[u];
    r.instance_count = std::min<int64_t>(
        kCounts[(static_cast<size_t>(j) + p.ConsumeIntegralInRange<size_t>(0, 5)) % 6], std::max<int64_t>(1, env[u] / 2));
    r.run_time = (60 + 20 * j + p.ConsumeIntegralInRange<int64_t>(0, 240)) * kSec;
    if (OneIn(p, 8)) r.outcome = JobOutcome::kFailed;
    // Every third job has a preemption retry limit (0 or 1 by default).
    if ((j + p.ConsumeIntegralInRange<int>(0, 2)) % 3 == 0) {
      r.preemption_retries = (j / 3 + p.ConsumeIntegralInRange<int64_t>(0, 2)) % 2;
    }
    // Every fourth a MaxRuntimeInSeconds just below its run (by default).
    if ((j + p.ConsumeIntegralInRange<int>(0, 3)) % 4 == 1) {
      r.max_runtime_seconds = std::max<int64_t>(1, r.run_time / kSec - 1 - p.ConsumeIntegralInRange<int64_t>(0, 30));
    }
    add((10 * j + p.ConsumeIntegralInRange<int64_t>(0, 30)) * kSec, std::move(r));
  }
  // Follow-ups on the same window: at least two; by default a termination
  // and a priority update of the last jobs, which are queued by then.
  const int follow = 2 + p.ConsumeIntegralInRange<int>(0, kMaxEvents - kMaxJobs - 2);
  for (int i = 0; i < follow; ++i) {
    const SimTime t = (125 + p.ConsumeIntegralInRange<int64_t>(0, 200) - 5 * i) * kSec;
    const std::string job = "j" + std::to_string((kMaxJobs - 1 - i + p.ConsumeIntegralInRange<int>(0, kMaxJobs - 1)) %
                                                 kMaxJobs);
    switch ((i + p.ConsumeIntegralInRange<int>(0, 3)) % 4) {
      case 0: {
        TerminateServiceJobRequest r;
        r.job_id = job;
        r.reason = "terminated by fuzzer";
        add(t, std::move(r));
        break;
      }
      case 1: {
        UpdateServiceJobRequest r;
        r.job_id = job;
        r.scheduling_priority = p.ConsumeIntegralInRange<int64_t>(0, 9);
        add(t, std::move(r));
        break;
      }
      case 2: {
        UpdateQuotaShareRequest r;
        r.quota_share_arn = share_names[p.ConsumeIntegralInRange<size_t>(0, share_names.size() - 1)];
        std::vector<CapacityLimit> limits;
        for (size_t u = 0; u < units.size(); ++u) limits.push_back({units[u], 1 + p.ConsumeIntegralInRange<int64_t>(0, env[u])});
        r.capacity_limits = std::move(limits);
        add(t, std::move(r));
        break;
      }
      default: {
        GetJobQueueSnapshotRequest r;
        r.job_queue = "q";
        add(t, std::move(r));
        break;
      }
    }
  }
  AppendTimed(sc, timed);
  sc.submit_count = kMaxJobs;
  if (OneIn(p, 3)) sc.knobs.time_limit_clock = TimeLimitClock::kAtHead;  // drawn last: see Decode()
  return sc;
}

}  // namespace

bool WithinFuzzBounds(const Scenario& sc) { return WithinBounds(sc, kMaxJobs, kMaxEvents + 25); }

bool WithinBounds(const Scenario& sc, int max_jobs, int max_events) {
  if (sc.submit_count > max_jobs) return false;
  if (sc.events.size() > static_cast<size_t>(max_events)) return false;
  if (sc.service_environment.capacity_limits.size() > 8) return false;
  // Simulated time bounds the number of scheduling ticks: keep the latest
  // event plus all run time (times attempts) small, and the drain short.
  SimTime last = 0, work = 0;
  for (const ScenarioEvent& ev : sc.events) {
    last = std::max(last, ev.time);
    if (const auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request)) {
      const int64_t attempts = std::clamp<int64_t>(r->retry_attempts.value_or(1), 1, 10);
      work += std::min<SimTime>(r->run_time, 3600 * kSec) * attempts;
    }
  }
  if (last > 4 * 3600 * kSec || work > 48 * 3600 * kSec) return false;
  const Knobs& k = sc.knobs;
  if (k.preemption_drain > 600 * kSec || k.submit_latency > 600 * kSec || k.provision > 600 * kSec ||
      k.download > 600 * kSec) {
    return false;
  }
  if (k.scheduling_interval > 0 && (last + work) / k.scheduling_interval > 20000) return false;
  return true;
}

std::optional<Scenario> ScenarioFromFuzzInput(const uint8_t* data, size_t size) {
  if (size > kMaxInputBytes) return std::nullopt;
  if (size > 0 && data[0] == '{') {
    absl::StatusOr<Scenario> sc =
        ParseScenario(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
    if (!sc.ok() || !WithinFuzzBounds(*sc)) return std::nullopt;
    return *std::move(sc);
  }
  if (size > 0 && data[0] == kRandomMagic) {
    uint64_t seed = 0;
    for (size_t i = 1; i < size && i <= 8; ++i) seed |= static_cast<uint64_t>(data[i]) << (8 * (i - 1));
    testing::RandomScenarioOptions opt;
    opt.max_jobs = kMaxRandomJobs;
    Scenario sc = testing::RandomScenario(seed, opt);
    if (!WithinBounds(sc, kMaxRandomJobs, 4 * kMaxRandomJobs)) return std::nullopt;
    return sc;
  }
  if (size > 0 && data[0] == kContendedMagic) {
    FuzzedDataProvider p(data + 1, size - 1);
    return DecodeContended(p);
  }
  FuzzedDataProvider p(data, size);
  return Decode(p);
}

void MaybeDumpScenario(const Scenario& sc) {
  static const bool dump = std::getenv("QS_FUZZ_DUMP_SCENARIO") != nullptr;
  if (!dump) return;
  const std::string json = ScenarioToJson(sc);
  std::fprintf(stderr, "%s\n", json.c_str());
}

}  // namespace qs::fuzz
