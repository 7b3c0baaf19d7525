// File: engine/model/scenario.h
//
// The parsed scenario: what `quotasim run` simulates. It mirrors the scenario
// JSON of ../shared/spec/scenario-format.md: AWS Batch request shapes for the
// configuration and the timed events, plus the simulator-only `simulation`
// knobs.
//
// Two kinds of bad input are kept apart:
//  * A *malformed document* (bad JSON, wrong type, unknown key, enum value not
//    in the API, absurd number, missing simulator field) never becomes a
//    Scenario: ParseScenario() (scenario_json.h) returns an error naming the
//    JSON path, and `quotasim run` exits 2.
//  * A request AWS would *reject* with a ClientException (missing or unknown
//    share, priority out of range, 0 or >5 limits, ...) is a well-formed
//    request: it is stored here with its optional fields as written, and the
//    engines validate it when they apply it (validation.h), logging a
//    `rejected` line and going on.
// That is why most request fields are std::optional: "absent" is information
// the validators need.
//
// Both engines (fast and reference) read the same Scenario; it is immutable
// during a run and outlives it, so engines may keep string_views into it.
//
// Thread-safety: a Scenario is a plain value; safe for concurrent reads.
#ifndef QS_ENGINE_MODEL_SCENARIO_H_
#define QS_ENGINE_MODEL_SCENARIO_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/model/time.h"

namespace qs {

enum class Strategy : uint8_t { kReserve, kLend, kLendAndBorrow };
enum class Toggle : uint8_t { kEnabled, kDisabled };  // ENABLED | DISABLED
enum class ShareOrder : uint8_t { kUnderLimitFirst, kRoundRobin, kDeclaration };
enum class VictimOrder : uint8_t { kPriorityThenNewest, kMostBorrowedFirst };
enum class UnassignedCapacity : uint8_t { kUnused, kLendable };
// Whether a share lends capacity its own head is waiting for
// (docs/semantics.md §3, "Entitled capacity"): WITHHELD (default) or LENDABLE.
enum class EntitledCapacity : uint8_t { kWithheld, kLendable };
// Where a job coming back from a preemption drain re-enters its share's queue
// relative to a job of that share holding capacity reclaimed for it
// (docs/semantics.md §6, "Preemption cycles"): BEHIND_RESERVATION (default;
// the holder stays the head) or IN_PLACE (at its old place, ahead of it).
enum class VictimReturn : uint8_t { kBehindReservation, kInPlace };
// When a MISCONFIGURATION reason's jobStateTimeLimitActions clock runs
// (docs/semantics.md §5): FROM_REASON (default; from the moment the job got
// the reason) or AT_HEAD (while the job is its share's head with it).
enum class TimeLimitClock : uint8_t { kFromReason, kAtHead };
enum class JobOutcome : uint8_t { kSucceeded, kFailed };

// API spellings ("LEND_AND_BORROW", "ENABLED", ...).
const char* StrategyName(Strategy s);
const char* ToggleName(Toggle t);
const char* ShareOrderName(ShareOrder o);
const char* VictimOrderName(VictimOrder o);
const char* UnassignedCapacityName(UnassignedCapacity u);
const char* EntitledCapacityName(EntitledCapacity e);
const char* VictimReturnName(VictimReturn v);
const char* TimeLimitClockName(TimeLimitClock c);

// {capacityUnit, maxCapacity}. maxCapacity is an int32 in the API; the parser
// rejects non-integers and values outside int32 as malformed, and leaves range
// checks (>= 1) to validation.
struct CapacityLimit {
  std::string capacity_unit;
  int64_t max_capacity = 0;

  bool operator==(const CapacityLimit&) const = default;
};

// simulation.capacity (docs/semantics.md §2, "Capacity"): whether SageMaker
// can provision an attempt's instances. Absent (no types): it always can.
struct AvailabilityStep {
  SimTime at = 0;         // atSeconds: from this time on ...
  int64_t instances = 0;  // ... this many instances of the type can be obtained
  bool operator==(const AvailabilityStep&) const = default;
};
struct TypeCapacity {
  std::string instance_type;
  // failureProbability: a provisioning try fails with it (seeded draw).
  double failure_probability = 0;
  // availability: steps by strictly increasing `at`; before the first step,
  // and with no steps, the type is not limited.
  std::vector<AvailabilityStep> availability;
  // availabilityCsv as written, until LoadScenarioFile reads it into
  // `availability` (relative to the scenario's folder); then "".
  std::string availability_csv;
  bool operator==(const TypeCapacity&) const = default;
};
struct CapacityModel {
  uint64_t seed = 0;                                 // seed of the failure draws
  SimTime error_delay = 300 * kMillisPerSecond;      // errorSeconds: SCHEDULED -> capacity error (>= 1 s)
  std::vector<TypeCapacity> types;                   // by instance type name, unique
  bool operator==(const CapacityModel&) const = default;
};

// simulation.latencies (docs/semantics.md §2, "Latency distributions"):
// per instance type, seeded distributions that replace the constant
// provisionSeconds, downloadSeconds and preemptionDrainSeconds.
enum class Distribution : uint8_t { kConstant, kUniform, kLognormal };
const char* DistributionName(Distribution d);  // CONSTANT, UNIFORM, LOGNORMAL
struct LatencyDistribution {
  Distribution kind = Distribution::kConstant;
  // CONSTANT: seconds; UNIFORM: minSeconds (ms, like every time here).
  SimTime a = 0;
  // UNIFORM and LOGNORMAL: maxSeconds (LOGNORMAL draws are capped at it).
  SimTime max = 0;
  SimTime median = 0;  // LOGNORMAL: medianSeconds
  double sigma = 0;    // LOGNORMAL: sigma of the underlying normal
  bool operator==(const LatencyDistribution&) const = default;
};
struct TypeLatencies {
  std::string instance_type;
  std::optional<LatencyDistribution> provision, download, drain;
  bool operator==(const TypeLatencies&) const = default;
};
struct LatencyModel {
  uint64_t seed = 0;
  std::vector<TypeLatencies> types;  // by instance type name, unique
  bool operator==(const LatencyModel&) const = default;
};
// SageMaker's stop grace period: StopTrainingJob sends SIGTERM and stops the
// job 120 seconds later; a drawn drain never exceeds it.
inline constexpr SimTime kStopGracePeriod = 120 * kMillisPerSecond;

// The simulator knobs (`simulation` object at top level). Defaults are the
// defaults of ../shared/spec/quota-semantics.md.
struct Knobs {
  SimTime submit_latency = 0;       // submitLatencySeconds: SUBMITTED -> RUNNABLE
  SimTime provision = 0;            // provisionSeconds: SCHEDULED -> STARTING
  SimTime download = 0;             // downloadSeconds: STARTING -> RUNNING
  SimTime scheduling_interval = 0;  // schedulingIntervalSeconds: 0 = pass after every batch
  SimTime preemption_drain = 20 * kMillisPerSecond;  // preemptionDrainSeconds
  ShareOrder share_order = ShareOrder::kUnderLimitFirst;
  VictimOrder victim_order = VictimOrder::kPriorityThenNewest;
  bool backfill = false;
  UnassignedCapacity unassigned_capacity = UnassignedCapacity::kUnused;
  EntitledCapacity entitled_capacity = EntitledCapacity::kWithheld;  // entitledCapacity
  VictimReturn victim_return = VictimReturn::kBehindReservation;      // victimReturn
  TimeLimitClock time_limit_clock = TimeLimitClock::kFromReason;     // timeLimitClock
  // checkpointIntervalSeconds: a preempted attempt keeps its run up to its
  // last checkpoint (docs/semantics.md §6, "Checkpoints"); none: restarts.
  std::optional<SimTime> checkpoint_interval;
  std::optional<SimTime> horizon;  // horizonSeconds: no event after it is processed
  CapacityModel capacity;          // capacity: provisioning failures and availability
  LatencyModel latencies;          // latencies: per-type distributions of the three latencies

  bool operator==(const Knobs&) const = default;
};

// CreateSchedulingPolicy.
struct SchedulingPolicy {
  std::string name;
  bool has_quota_share_policy = false;  // quotaSharePolicy present
  bool has_fairshare_policy = false;    // fairsharePolicy present (rejected with quota)

  bool operator==(const SchedulingPolicy&) const = default;
};

// CreateServiceEnvironment.
struct ServiceEnvironment {
  std::string name;
  Toggle state = Toggle::kEnabled;
  std::vector<CapacityLimit> capacity_limits;

  bool operator==(const ServiceEnvironment&) const = default;
};

// One jobStateTimeLimitActions entry of CreateJobQueue.
struct JobStateTimeLimitAction {
  std::string reason;  // e.g. "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE"
  std::string state;   // "RUNNABLE"
  int64_t max_time_seconds = 0;  // 600..86400
  std::string action;  // "TERMINATE" (CANCEL is refused on SAGEMAKER_TRAINING queues)

  bool operator==(const JobStateTimeLimitAction&) const = default;
};

// CreateJobQueue.
struct JobQueue {
  std::string name;
  int64_t priority = 0;
  std::vector<JobStateTimeLimitAction> time_limit_actions;

  bool operator==(const JobQueue&) const = default;
};

// CreateQuotaShare request (also the entries of `quotaShares`).
struct CreateQuotaShareRequest {
  std::optional<std::string> quota_share_name;
  std::optional<std::string> job_queue;
  std::optional<std::vector<CapacityLimit>> capacity_limits;
  bool has_resource_sharing = false;  // resourceSharingConfiguration present
  std::optional<Strategy> strategy;   // resourceSharingConfiguration.strategy
  std::optional<int64_t> borrow_limit;
  std::optional<Toggle> in_share_preemption;  // preemptionConfiguration.inSharePreemption
  std::optional<Toggle> state;

  bool operator==(const CreateQuotaShareRequest&) const = default;
};

// UpdateQuotaShare request. Absent fields keep their current value.
struct UpdateQuotaShareRequest {
  std::optional<std::string> quota_share_arn;  // name or ARN ending /quota-share/<name>
  std::optional<std::vector<CapacityLimit>> capacity_limits;
  bool has_resource_sharing = false;
  std::optional<Strategy> strategy;
  std::optional<int64_t> borrow_limit;
  std::optional<Toggle> in_share_preemption;
  std::optional<Toggle> state;

  bool operator==(const UpdateQuotaShareRequest&) const = default;
};

// UpdateServiceEnvironment request.
struct UpdateServiceEnvironmentRequest {
  std::optional<std::string> service_environment;  // name or ARN
  std::optional<Toggle> state;
  std::optional<std::vector<CapacityLimit>> capacity_limits;

  bool operator==(const UpdateServiceEnvironmentRequest&) const = default;
};

// SubmitServiceJob request plus its per-job `simulation` block.
struct SubmitServiceJobRequest {
  std::optional<std::string> job_name;
  std::optional<std::string> job_queue;
  std::optional<std::string> service_job_type;
  std::optional<std::string> quota_share_name;
  std::optional<std::string> share_identifier;  // fair-share field: rejected on quota queues
  std::optional<int64_t> scheduling_priority;   // default 0
  std::optional<int64_t> retry_attempts;        // retryStrategy.attempts, default 1
  std::optional<int64_t> attempt_duration_seconds;  // timeoutConfig.attemptDurationSeconds
  std::optional<int64_t> preemption_retries;  // preemptionConfiguration.preemptionRetriesBeforeTermination
  // From serviceRequestPayload (string or object). payload_error is non-empty
  // when the payload cannot give a demand (not JSON, no ResourceConfig, ...):
  // the request is then rejected with that message.
  std::string payload_error;
  // The payload as written (the string, or the compact dump of the object)
  // when payload_error is non-empty, so that ScenarioToJson() reproduces the
  // same payload_error; empty otherwise (the demand below is all that is kept).
  std::string payload_raw;
  std::string instance_type;   // ResourceConfig.InstanceType
  int64_t instance_count = 0;  // ResourceConfig.InstanceCount
  // StoppingCondition.MaxRuntimeInSeconds: SageMaker stops an attempt that
  // has run this long (docs/semantics.md §5); absent: no limit.
  std::optional<int64_t> max_runtime_seconds;
  // simulation block
  SimTime run_time = 0;  // simulation.runSeconds (required, >= 0)
  JobOutcome outcome = JobOutcome::kSucceeded;
  std::optional<SimTime> checkpoint_interval;  // simulation.checkpointIntervalSeconds (> 0), over the knob

  bool operator==(const SubmitServiceJobRequest&) const = default;
};

// UpdateServiceJob request.
struct UpdateServiceJobRequest {
  std::optional<std::string> job_id;  // the job's jobName
  std::optional<int64_t> scheduling_priority;

  bool operator==(const UpdateServiceJobRequest&) const = default;
};

// TerminateServiceJob request.
struct TerminateServiceJobRequest {
  std::optional<std::string> job_id;
  std::optional<std::string> reason;

  bool operator==(const TerminateServiceJobRequest&) const = default;
};

// GetJobQueueSnapshot request.
struct GetJobQueueSnapshotRequest {
  std::optional<std::string> job_queue;

  bool operator==(const GetJobQueueSnapshotRequest&) const = default;
};

// DeleteQuotaShare request (docs/semantics.md §7): the share must be
// DISABLED; its jobs are terminated and the share is gone.
struct DeleteQuotaShareRequest {
  std::optional<std::string> quota_share_arn;  // name or ARN ending /quota-share/<name>

  bool operator==(const DeleteQuotaShareRequest&) const = default;
};

// UpdateJobQueue request (docs/semantics.md §7). Absent fields keep their
// value; the queue's priority is accepted and has no effect (one queue).
struct UpdateJobQueueRequest {
  std::optional<std::string> job_queue;  // name or ARN
  std::optional<Toggle> state;
  std::optional<int64_t> priority;
  std::optional<std::string> scheduling_policy_arn;  // must name the scenario's policy
  std::optional<std::vector<JobStateTimeLimitAction>> time_limit_actions;

  bool operator==(const UpdateJobQueueRequest&) const = default;
};

// UpdateSchedulingPolicy request (docs/semantics.md §7): a quota share
// policy's only setting is FIFO, so an accepted update changes nothing.
struct UpdateSchedulingPolicyRequest {
  std::optional<std::string> arn;  // name or ARN ending /scheduling-policy/<name>
  bool has_quota_share_policy = false;  // quotaSharePolicy present
  bool has_fairshare_policy = false;    // fairsharePolicy present (rejected on a quota policy)

  bool operator==(const UpdateSchedulingPolicyRequest&) const = default;
};

using Request = std::variant<SubmitServiceJobRequest, UpdateServiceJobRequest,
                             TerminateServiceJobRequest, CreateQuotaShareRequest,
                             UpdateQuotaShareRequest, UpdateServiceEnvironmentRequest,
                             GetJobQueueSnapshotRequest, DeleteQuotaShareRequest, UpdateJobQueueRequest,
                             UpdateSchedulingPolicyRequest>;

// Action names as written in the scenario ("SubmitServiceJob", ...), indexed
// like Request's alternatives.
const char* ActionName(const Request& r);

struct ScenarioEvent {
  SimTime time = 0;
  std::string path;  // JSON path of the event, e.g. "events[3]" or "quotaShares[1]"
  Request request;

  bool operator==(const ScenarioEvent&) const = default;
};

struct Scenario {
  std::string source;  // file name, for messages
  SchedulingPolicy scheduling_policy;
  ServiceEnvironment service_environment;
  JobQueue job_queue;
  Knobs knobs;
  // `quotaShares` entries come first, as CreateQuotaShare events at time 0
  // with paths "quotaShares[i]"; then the `events` entries, stably sorted by
  // time (equal times keep file order). Engines apply them in this order.
  std::vector<ScenarioEvent> events;
  // Number of SubmitServiceJob events; jobName is unique across them (checked
  // by the parser, since later requests name jobs by it).
  int64_t submit_count = 0;

  bool operator==(const Scenario&) const = default;
};

// k when `name` is "j<k>" with canonical decimal digits (no leading zero,
// at most 18 digits): the name `quotasim gen` gives its k-th job. Else
// nullopt.
inline std::optional<int64_t> GeneratedJobNumber(std::string_view name) {
  if (name.size() < 2 || name.size() > 19 || name[0] != 'j' || (name[1] == '0' && name.size() > 2)) {
    return std::nullopt;
  }
  int64_t v = 0;
  for (size_t i = 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    v = v * 10 + (name[i] - '0');
  }
  return v;
}
// The capacity unit a submission names: its instance type, or none when
// its payload did not parse (payload_error), since the type was never read.
// R is a SubmitServiceJobRequest or a view with the same two members
// (gen::QsbSubmitView).
template <typename R>
std::optional<std::string_view> SubmitUnit(const R& r) {
  if (!r.payload_error.empty()) return std::nullopt;
  return std::string_view(r.instance_type);
}
// A job event: a request that submits, updates or terminates a job (no
// other request carries a job's name or a submission's instance type).
inline bool IsJobRequest(const Request& r) {
  return std::holds_alternative<SubmitServiceJobRequest>(r) || std::holds_alternative<UpdateServiceJobRequest>(r) ||
         std::holds_alternative<TerminateServiceJobRequest>(r);
}

}  // namespace qs

#endif  // QS_ENGINE_MODEL_SCENARIO_H_
