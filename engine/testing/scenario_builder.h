// File: engine/testing/scenario_builder.h
//
// Fluent builders that construct Scenario structs in C++ tests without JSON.
// Times are given in seconds (decimals allowed) and rounded to milliseconds,
// like the scenario format.
//
// Example (the documented AWS example, shortened):
//   Scenario sc =
//       ScenarioBuilder()
//           .Environment({{"ml.g5.xlarge", 3}})
//           .Share(ShareBuilder("QS1").Limit("ml.g5.xlarge", 1).LendAndBorrow(200).InShare(true))
//           .Share(ShareBuilder("QS2").Limit("ml.g5.xlarge", 1).Lend())
//           .Submit(0, JobBuilder("a", "QS1").Priority(3).Instances("ml.g5.xlarge", 1).Run(300))
//           .UpdatePriority(120, "a", 4)
//           .Drain(20)
//           .Build();
//
// Every request type has a builder method; knobs have one setter each.
// Scenario::events is produced as the engines expect it: the Share() entries
// first (CreateQuotaShare at time 0, paths "quotaShares[i]"), then the timed
// events stably sorted by time (paths "events[i]" by insertion order).
//
// Thread-safety: plain values.
#ifndef QS_ENGINE_TESTING_SCENARIO_BUILDER_H_
#define QS_ENGINE_TESTING_SCENARIO_BUILDER_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/scenario.h"
#include "engine/model/time.h"

namespace qs::testing {

// Seconds (decimal) to SimTime milliseconds, rounded to nearest.
inline SimTime Seconds(double seconds) {
  return static_cast<SimTime>(std::llround(seconds * static_cast<double>(kMillisPerSecond)));
}

using UnitLimits = std::vector<std::pair<std::string, int64_t>>;

inline std::vector<CapacityLimit> ToLimits(const UnitLimits& limits) {
  std::vector<CapacityLimit> out;
  for (const auto& [unit, max] : limits) out.push_back(CapacityLimit{unit, max});
  return out;
}

// A SubmitServiceJob request with its simulation block. Defaults: priority
// unset (0), 1 instance of "ml.g5.xlarge", runSeconds 0, outcome SUCCEEDED.
class JobBuilder {
 public:
  JobBuilder(std::string name, std::string share) {
    r_.job_name = std::move(name);
    r_.quota_share_name = std::move(share);
    r_.service_job_type = "SAGEMAKER_TRAINING";
    r_.instance_type = "ml.g5.xlarge";
    r_.instance_count = 1;
  }
  JobBuilder& Priority(int64_t p) {
    r_.scheduling_priority = p;
    return *this;
  }
  JobBuilder& Instances(std::string type, int64_t count) {
    r_.instance_type = std::move(type);
    r_.instance_count = count;
    return *this;
  }
  JobBuilder& Run(double seconds) {
    r_.run_time = Seconds(seconds);
    return *this;
  }
  JobBuilder& Outcome(JobOutcome o) {
    r_.outcome = o;
    return *this;
  }
  JobBuilder& Fails() {
    r_.outcome = JobOutcome::kFailed;
    return *this;
  }
  JobBuilder& RetryAttempts(int64_t attempts) {
    r_.retry_attempts = attempts;
    return *this;
  }
  JobBuilder& AttemptDuration(int64_t seconds) {
    r_.attempt_duration_seconds = seconds;
    return *this;
  }
  JobBuilder& CheckpointEvery(double seconds) {
    r_.checkpoint_interval = static_cast<SimTime>(seconds * 1000);
    return *this;
  }
  JobBuilder& MaxRuntime(int64_t seconds) {
    r_.max_runtime_seconds = seconds;
    return *this;
  }
  JobBuilder& PreemptionRetries(int64_t retries) {
    r_.preemption_retries = retries;
    return *this;
  }
  // Less common request fields (mostly for rejection tests).
  JobBuilder& Queue(std::string q) {
    r_.job_queue = std::move(q);
    return *this;
  }
  JobBuilder& NoShare() {
    r_.quota_share_name.reset();
    return *this;
  }
  JobBuilder& NoName() {
    r_.job_name.reset();
    return *this;
  }
  JobBuilder& ShareIdentifier(std::string id) {
    r_.share_identifier = std::move(id);
    return *this;
  }
  JobBuilder& ServiceJobType(std::string t) {
    r_.service_job_type = std::move(t);
    return *this;
  }
  JobBuilder& PayloadError(std::string e) {
    r_.payload_error = std::move(e);
    return *this;
  }
  SubmitServiceJobRequest Build() const { return r_; }

 private:
  SubmitServiceJobRequest r_;
};

// A CreateQuotaShare request. Defaults: strategy RESERVE, inSharePreemption
// DISABLED, state absent (ENABLED), no limits (add with Limit()).
class ShareBuilder {
 public:
  explicit ShareBuilder(std::string name) {
    r_.quota_share_name = std::move(name);
    r_.capacity_limits.emplace();
    r_.has_resource_sharing = true;
    r_.strategy = Strategy::kReserve;
    r_.in_share_preemption = Toggle::kDisabled;
  }
  ShareBuilder& Limit(std::string unit, int64_t max) {
    if (!r_.capacity_limits) r_.capacity_limits.emplace();
    r_.capacity_limits->push_back(CapacityLimit{std::move(unit), max});
    return *this;
  }
  ShareBuilder& NoLimits() {
    r_.capacity_limits.reset();
    return *this;
  }
  ShareBuilder& Reserve() { return Strategy_(Strategy::kReserve, std::nullopt); }
  ShareBuilder& Lend() { return Strategy_(Strategy::kLend, std::nullopt); }
  // borrowLimit absent (= -1, unlimited) unless given.
  ShareBuilder& LendAndBorrow() { return Strategy_(Strategy::kLendAndBorrow, std::nullopt); }
  ShareBuilder& LendAndBorrow(int64_t borrow_limit) {
    return Strategy_(Strategy::kLendAndBorrow, borrow_limit);
  }
  // Any strategy with an explicit borrowLimit (e.g. LEND with one, to be rejected).
  ShareBuilder& Sharing(Strategy s, std::optional<int64_t> borrow_limit) {
    return Strategy_(s, borrow_limit);
  }
  ShareBuilder& NoSharing() {
    r_.has_resource_sharing = false;
    r_.strategy.reset();
    r_.borrow_limit.reset();
    return *this;
  }
  ShareBuilder& InShare(bool enabled) {
    r_.in_share_preemption = enabled ? Toggle::kEnabled : Toggle::kDisabled;
    return *this;
  }
  ShareBuilder& NoInShare() {
    r_.in_share_preemption.reset();
    return *this;
  }
  ShareBuilder& Enabled(bool enabled) {
    r_.state = enabled ? Toggle::kEnabled : Toggle::kDisabled;
    return *this;
  }
  ShareBuilder& Disabled() { return Enabled(false); }
  ShareBuilder& Queue(std::string q) {
    r_.job_queue = std::move(q);
    return *this;
  }
  CreateQuotaShareRequest Build() const { return r_; }

 private:
  ShareBuilder& Strategy_(Strategy s, std::optional<int64_t> borrow_limit) {
    r_.has_resource_sharing = true;
    r_.strategy = s;
    r_.borrow_limit = borrow_limit;
    return *this;
  }
  CreateQuotaShareRequest r_;
};

// An UpdateQuotaShare request; only the fields set are changed.
class ShareUpdateBuilder {
 public:
  explicit ShareUpdateBuilder(std::string name_or_arn) {
    r_.quota_share_arn = std::move(name_or_arn);
  }
  // The first Limit() call replaces the whole capacityLimits list.
  ShareUpdateBuilder& Limit(std::string unit, int64_t max) {
    if (!r_.capacity_limits) r_.capacity_limits.emplace();
    r_.capacity_limits->push_back(CapacityLimit{std::move(unit), max});
    return *this;
  }
  ShareUpdateBuilder& Reserve() { return Sharing(Strategy::kReserve, std::nullopt); }
  ShareUpdateBuilder& Lend() { return Sharing(Strategy::kLend, std::nullopt); }
  ShareUpdateBuilder& LendAndBorrow() { return Sharing(Strategy::kLendAndBorrow, std::nullopt); }
  ShareUpdateBuilder& LendAndBorrow(int64_t borrow_limit) {
    return Sharing(Strategy::kLendAndBorrow, borrow_limit);
  }
  ShareUpdateBuilder& Sharing(Strategy s, std::optional<int64_t> borrow_limit) {
    r_.has_resource_sharing = true;
    r_.strategy = s;
    r_.borrow_limit = borrow_limit;
    return *this;
  }
  ShareUpdateBuilder& InShare(bool enabled) {
    r_.in_share_preemption = enabled ? Toggle::kEnabled : Toggle::kDisabled;
    return *this;
  }
  ShareUpdateBuilder& Enabled(bool enabled) {
    r_.state = enabled ? Toggle::kEnabled : Toggle::kDisabled;
    return *this;
  }
  ShareUpdateBuilder& Disabled() { return Enabled(false); }
  UpdateQuotaShareRequest Build() const { return r_; }

 private:
  UpdateQuotaShareRequest r_;
};

class ScenarioBuilder {
 public:
  ScenarioBuilder() {
    sc_.source = "builder";
    sc_.scheduling_policy.name = "sp";
    sc_.scheduling_policy.has_quota_share_policy = true;
    sc_.service_environment.name = "se";
    sc_.job_queue.name = "q";
    sc_.job_queue.priority = 1;
  }

  // ---- configuration
  ScenarioBuilder& Environment(const UnitLimits& limits) {
    sc_.service_environment.capacity_limits = ToLimits(limits);
    return *this;
  }
  ScenarioBuilder& EnvironmentName(std::string name) {
    sc_.service_environment.name = std::move(name);
    return *this;
  }
  ScenarioBuilder& EnvironmentState(bool enabled) {
    sc_.service_environment.state = enabled ? Toggle::kEnabled : Toggle::kDisabled;
    return *this;
  }
  ScenarioBuilder& QueueName(std::string name) {
    sc_.job_queue.name = std::move(name);
    return *this;
  }
  ScenarioBuilder& TimeLimitAction(std::string reason, int64_t max_time_seconds,
                                   std::string action = "TERMINATE",
                                   std::string state = "RUNNABLE") {
    sc_.job_queue.time_limit_actions.push_back(JobStateTimeLimitAction{
        std::move(reason), std::move(state), max_time_seconds, std::move(action)});
    return *this;
  }
  // An entry of `quotaShares` (CreateQuotaShare at time 0, before any event).
  ScenarioBuilder& Share(const ShareBuilder& share) {
    shares_.push_back(share.Build());
    return *this;
  }

  // ---- timed events (seconds)
  ScenarioBuilder& Event(double t, Request request) {
    events_.push_back(ScenarioEvent{Seconds(t), "", std::move(request)});
    return *this;
  }
  ScenarioBuilder& Submit(double t, const JobBuilder& job) { return Event(t, job.Build()); }
  ScenarioBuilder& UpdatePriority(double t, std::string job, int64_t priority) {
    UpdateServiceJobRequest r;
    r.job_id = std::move(job);
    r.scheduling_priority = priority;
    return Event(t, std::move(r));
  }
  ScenarioBuilder& Terminate(double t, std::string job, std::string reason = "terminated by test") {
    TerminateServiceJobRequest r;
    r.job_id = std::move(job);
    r.reason = std::move(reason);
    return Event(t, std::move(r));
  }
  ScenarioBuilder& CreateShare(double t, const ShareBuilder& share) {
    return Event(t, share.Build());
  }
  ScenarioBuilder& UpdateShare(double t, const ShareUpdateBuilder& update) {
    return Event(t, update.Build());
  }
  // UpdateServiceEnvironment naming the scenario's environment. Empty
  // `limits` leaves capacityLimits absent.
  ScenarioBuilder& UpdateEnvironment(double t, const UnitLimits& limits,
                                     std::optional<bool> enabled = std::nullopt) {
    UpdateServiceEnvironmentRequest r;
    r.service_environment = sc_.service_environment.name;
    if (!limits.empty()) r.capacity_limits = ToLimits(limits);
    if (enabled) r.state = *enabled ? Toggle::kEnabled : Toggle::kDisabled;
    return Event(t, std::move(r));
  }
  ScenarioBuilder& Snapshot(double t) {
    GetJobQueueSnapshotRequest r;
    r.job_queue = sc_.job_queue.name;
    return Event(t, std::move(r));
  }

  // ---- knobs (seconds)
  ScenarioBuilder& SubmitLatency(double s) {
    sc_.knobs.submit_latency = Seconds(s);
    return *this;
  }
  ScenarioBuilder& Provision(double s) {
    sc_.knobs.provision = Seconds(s);
    return *this;
  }
  ScenarioBuilder& Download(double s) {
    sc_.knobs.download = Seconds(s);
    return *this;
  }
  ScenarioBuilder& SchedulingInterval(double s) {
    sc_.knobs.scheduling_interval = Seconds(s);
    return *this;
  }
  ScenarioBuilder& Drain(double s) {
    sc_.knobs.preemption_drain = Seconds(s);
    return *this;
  }
  ScenarioBuilder& Order(ShareOrder o) {
    sc_.knobs.share_order = o;
    return *this;
  }
  ScenarioBuilder& Victims(VictimOrder o) {
    sc_.knobs.victim_order = o;
    return *this;
  }
  ScenarioBuilder& Backfill(bool on) {
    sc_.knobs.backfill = on;
    return *this;
  }
  ScenarioBuilder& Unassigned(UnassignedCapacity u) {
    sc_.knobs.unassigned_capacity = u;
    return *this;
  }
  ScenarioBuilder& CheckpointEvery(double seconds) {
    sc_.knobs.checkpoint_interval = static_cast<SimTime>(seconds * 1000);
    return *this;
  }
  ScenarioBuilder& Returning(VictimReturn v) {
    sc_.knobs.victim_return = v;
    return *this;
  }
  ScenarioBuilder& Clock(TimeLimitClock c) {
    sc_.knobs.time_limit_clock = c;
    return *this;
  }
  ScenarioBuilder& Entitled(EntitledCapacity e) {
    sc_.knobs.entitled_capacity = e;
    return *this;
  }
  ScenarioBuilder& Horizon(double s) {
    sc_.knobs.horizon = Seconds(s);
    return *this;
  }
  ScenarioBuilder& Capacity(const CapacityModel& c) {
    sc_.knobs.capacity = c;
    return *this;
  }
  ScenarioBuilder& Knobs(const qs::Knobs& k) {
    sc_.knobs = k;
    return *this;
  }

  Scenario Build() const {
    Scenario sc = sc_;
    sc.events.clear();
    sc.submit_count = 0;
    for (size_t i = 0; i < shares_.size(); ++i) {
      sc.events.push_back(ScenarioEvent{0, "quotaShares[" + std::to_string(i) + "]", shares_[i]});
    }
    std::vector<ScenarioEvent> timed = events_;
    for (size_t i = 0; i < timed.size(); ++i) timed[i].path = "events[" + std::to_string(i) + "]";
    std::stable_sort(
        timed.begin(), timed.end(),
        [](const ScenarioEvent& a, const ScenarioEvent& b) { return a.time < b.time; });
    for (ScenarioEvent& e : timed) {
      if (std::holds_alternative<SubmitServiceJobRequest>(e.request)) ++sc.submit_count;
      sc.events.push_back(std::move(e));
    }
    return sc;
  }

 private:
  Scenario sc_;
  std::vector<CreateQuotaShareRequest> shares_;
  std::vector<ScenarioEvent> events_;
};

}  // namespace qs::testing

#endif  // QS_ENGINE_TESTING_SCENARIO_BUILDER_H_
