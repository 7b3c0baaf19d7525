// File: engine/log/event_log.h
//
// The event log of `quotasim run` (../shared/spec/scenario-format.md, "Event
// log"): what the engines report, and its one JSON Lines formatting.
//
// Engines do not format text. They call a LogSink with structured records;
// JsonlWriter turns records into bytes, SummaryBuilder (summary.h) into the
// run summary, TeeSink feeds both. Because both engines share this one
// formatter, "byte-identical logs" between the fast and the reference engine
// means identical decisions, never formatting luck.
//
// Line shapes (keys in this order; extra keys are allowed by the contract):
//   job:      {"time","jobName","quotaShareName","status","statusReason"
//              [,"capacityUsage","borrowed"]          SCHEDULED lines
//              [,"preemptedFor","preemptionType"]     preemption-start lines
//              [,"preemptionSummary"]                 lines ending a preempted attempt
//              [,"waitCause"]}                        cause lines (--wait-causes)
//   rejected: {"time","rejected":true,"action","message","path"}
//   snapshot: {"time","snapshot":{GetJobQueueSnapshot response}}
//
// Records hold string_views into the Scenario or the engine's own storage;
// they are only valid during the call.
//
// Thread-safety: a sink is thread-compatible (one engine thread calls it).
#ifndef QS_ENGINE_LOG_EVENT_LOG_H_
#define QS_ENGINE_LOG_EVENT_LOG_H_

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/capacity.h"
#include "engine/model/time.h"

namespace qs {

// ServiceJobStatus.
enum class JobStatus : uint8_t {
  kSubmitted,
  kPending,  // in the API enum; service jobs never use it
  kRunnable,
  kScheduled,
  kStarting,
  kRunning,
  kSucceeded,
  kFailed,
};
const char* JobStatusName(JobStatus s);
inline bool IsTerminal(JobStatus s) { return s == JobStatus::kSucceeded || s == JobStatus::kFailed; }
inline bool IsDispatched(JobStatus s) {
  return s == JobStatus::kScheduled || s == JobStatus::kStarting || s == JobStatus::kRunning;
}

enum class PreemptionType : uint8_t { kNone, kCrossShare, kInShare };

// Why a RUNNABLE job has not started (`quotasim run --wait-causes`;
// docs/semantics.md §9). Written as the `waitCause` key of the RUNNABLE line
// an engine adds at the end of an instant for each RUNNABLE job whose cause
// changed (AWS's statusReason is left as it is). kCapacityError never
// appears on a line: the summary counts under it the SCHEDULED time of
// attempts that ended in a capacity error.
enum class WaitCause : uint8_t {
  kNone,                 // not a cause line
  kBehindHead,           // BEHIND_HEAD: another job of the share is ahead of it
  kEnvironmentDisabled,  // ENVIRONMENT_DISABLED: the service environment is DISABLED
  kMisconfiguration,     // MISCONFIGURATION: it can never start as configured
  kDrainingVictims,      // DRAINING_VICTIMS: victims preempted for it are draining
  kLentOut,              // LENT_OUT: within its limit, but the share's capacity is lent out
  kShareLimit,           // SHARE_LIMIT: beyond its share's limit, and the share cannot borrow
  kBorrowLimit,          // BORROW_LIMIT: borrowing it needs would pass the share's borrowLimit
  kNoIdleLender,         // NO_IDLE_LENDER: the other shares lend less than it needs
  kEnvironmentFull,      // ENVIRONMENT_FULL: quota allows it, the environment has no free instances
  kNextPass,             // NEXT_PASS: it fits; no pass has run since (schedulingIntervalSeconds)
  kCapacityError,        // CAPACITY_ERROR: summary only (see above)
};
inline constexpr int kNumWaitCauses = static_cast<int>(WaitCause::kCapacityError) + 1;
const char* WaitCauseName(WaitCause c);

// Status reasons fixed by the spec (verbatim).
namespace reasons {
inline constexpr std::string_view kSeMaxResource =
    "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE - Service environment(s) associated with "
    "the job queue cannot meet the capacity requirement of the job.";
inline constexpr std::string_view kQuotaLimitExceeded =
    "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Job requirements exceed quota share "
    "capacity limits.";
inline constexpr std::string_view kQuotaAndBorrowLimitExceeded =
    "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Job requirements exceed quota share "
    "capacity limits and borrow limits.";
inline constexpr std::string_view kBorrowExceedsConfigured =
    "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Job requires borrowing that exceeds all "
    "configured borrowable capacity.";
inline constexpr std::string_view kCrossShareInProgress =
    "PREEMPTION_IN_PROGRESS: Cross-share preemption triggered to reclaim borrowed capacity";
inline constexpr std::string_view kInShareInProgress =
    "PREEMPTION_IN_PROGRESS: In-share preemption triggered by higher priority job";
inline constexpr std::string_view kCrossSharePreempted =
    "Cross-share preemption triggered to reclaim borrowed capacity";
inline constexpr std::string_view kInSharePreempted =
    "In-share preemption triggered by higher priority job";
// SageMaker could not provision the attempt's instances (engine/model/capacity.h).
inline constexpr std::string_view kInsufficientCapacity = kInsufficientCapacityText;
// quotasim's own wording (the spec leaves these open):
inline constexpr std::string_view kPreemptionRetriesExhausted =
    "Preemption retries exhausted (preemptionRetriesBeforeTermination)";
inline constexpr std::string_view kAttemptTimeout = "Job attempt duration exceeded timeout";
// SageMaker ends the training job at StoppingCondition.MaxRuntimeInSeconds
// (secondary status MaxRuntimeExceeded, "The job stopped because it
// exceeded the maximum allowed runtime"; docs/semantics.md §5).
inline constexpr std::string_view kMaxRuntimeExceeded =
    "MaxRuntimeExceeded: The job stopped because it exceeded the maximum allowed runtime";
inline constexpr std::string_view kSimulatedFailure = "AlgorithmError: simulated attempt outcome FAILED";
inline constexpr std::string_view kTimeLimitPrefix =
    "Terminated by JobStateTimeLimit action due to reason: ";
// The part of a MISCONFIGURATION reason before " - ".
std::string_view ReasonCode(std::string_view reason);
// A MISCONFIGURATION reason: the job cannot start as its share or the
// environment is configured (docs/semantics.md §5).
inline bool IsMisconfiguration(std::string_view reason) { return reason.rfind("MISCONFIGURATION:", 0) == 0; }
}  // namespace reasons

// Name used for capacity lent by the environment's unassigned part
// (`unassignedCapacity: LENDABLE`). Cannot collide with a share name.
inline constexpr std::string_view kUnassignedLenderName = "(unassigned)";

struct BorrowedPart {
  std::string_view from;  // lender share name, or kUnassignedLenderName
  std::string_view capacity_unit;
  int64_t quantity = 0;
};

struct PreemptedAttempt {
  SimTime started_at = 0;  // SCHEDULED time of the attempt
  SimTime stopped_at = 0;  // drain end
  std::string_view status_reason;
};

struct JobRecord {
  SimTime time = 0;
  std::string_view job_name;
  // The engine's index of the job, unique within the run, or -1 when unknown
  // (records read back from a log). Not printed: it lets consumers such as
  // SummaryBuilder key jobs by an integer instead of hashing names.
  int32_t job_slot = -1;
  std::string_view share_name;
  // The engine's index of the share, or -1 when unknown. Within a run an
  // index always names the same share (the fast engine never reuses a share
  // slot). Not printed: SummaryBuilder finds the share without comparing names.
  int32_t share_index = -1;
  JobStatus status = JobStatus::kSubmitted;
  std::string_view status_reason;
  // SCHEDULED lines: the demand and where it came from.
  bool has_usage = false;
  std::string_view capacity_unit;
  int32_t unit_index = -1;  // the engine's index of capacity_unit (fixed within a run), or -1; not printed
  int64_t quantity = 0;
  std::span<const BorrowedPart> borrowed;
  // Preemption-start lines: the job the preemption makes room for.
  PreemptionType preemption = PreemptionType::kNone;
  std::string_view preempted_for;
  int32_t preempted_for_slot = -1;  // its job_slot (-1 when unknown)
  // Preemption-start lines of a RUNNING job with checkpoints: the part of
  // this attempt's run its last checkpoint keeps (printed as
  // checkpointedSeconds when > 0; docs/semantics.md §6, "Checkpoints").
  SimTime checkpointed_ms = 0;
  // Lines that end a preempted attempt (RUNNABLE or FAILED at drain end).
  bool has_preemption_summary = false;
  int64_t preempted_attempt_count = 0;
  std::span<const PreemptedAttempt> recent_preempted_attempts;  // newest first, <= 10
  // Cause lines (RUNNABLE, written with RunOptions::wait_causes): the cause.
  WaitCause wait_cause = WaitCause::kNone;
};

struct RejectedRecord {
  SimTime time = 0;
  std::string_view action;
  std::string_view message;  // "ClientException: ..."
  std::string_view path;     // JSON path of the request in the scenario
};

struct SnapshotJob {
  std::string_view job_name;
  SimTime earliest_time_at_position = 0;  // when it last became RUNNABLE
};
struct SnapshotUsage {
  std::string_view capacity_unit;
  int64_t quantity = 0;
};
struct SnapshotShare {
  std::string_view share_name;
  std::vector<SnapshotJob> front;     // its first RUNNABLE job (0 or 1 entries)
  std::vector<SnapshotUsage> usage;   // units in name order, non-zero only
};
// GetJobQueueSnapshot response.
struct SnapshotRecord {
  SimTime time = 0;
  std::vector<SnapshotJob> front_of_queue;  // first 100 RUNNABLE jobs (docs/semantics.md §8)
  std::vector<SnapshotShare> shares;        // declaration order
  std::vector<SnapshotUsage> total_usage;   // units in name order
};

// Capacity of the environment changed (time 0 and UpdateServiceEnvironment).
// Not written to the JSON Lines log; the summary uses it for utilisation.
struct CapacityRecord {
  SimTime time = 0;
  std::string_view capacity_unit;
  int64_t max_capacity = 0;
};

class LogSink {
 public:
  virtual ~LogSink() = default;
  virtual void OnJob(const JobRecord& r) = 0;
  virtual void OnRejected(const RejectedRecord& r) = 0;
  virtual void OnSnapshot(const SnapshotRecord& r) = 0;
  virtual void OnCapacity(const CapacityRecord&) {}
  // The run ended at `end_time` (last processed instant, or the horizon).
  virtual void OnEnd(SimTime /*end_time*/) {}
  // How far the run has come, every 64Ki events or so (for a progress
  // line): the simulated time and the submissions accepted so far.
  virtual void OnProgress(SimTime /*now*/, int64_t /*jobs_submitted*/) {}
};

// Formats records as JSON Lines into an internal buffer, flushed to `out`
// when it grows past a threshold and at Flush()/destruction.
class JsonlWriter : public LogSink {
 public:
  explicit JsonlWriter(std::ostream* out) : out_(out) {}
  ~JsonlWriter() override { Flush(); }
  void OnJob(const JobRecord& r) override;
  void OnRejected(const RejectedRecord& r) override;
  void OnSnapshot(const SnapshotRecord& r) override;
  void Flush();

  // Formatting helpers, exposed for tests.
  static void AppendJob(std::string& out, const JobRecord& r);
  static void AppendRejected(std::string& out, const RejectedRecord& r);
  static void AppendSnapshot(std::string& out, const SnapshotRecord& r);

 private:
  void MaybeFlush();
  std::ostream* out_;
  std::string buf_;
};

// Discards every record: for runs whose only output is the summary the
// fast engine keeps itself (RunOptions::summary).
class NullSink : public LogSink {
 public:
  void OnJob(const JobRecord&) override {}
  void OnRejected(const RejectedRecord&) override {}
  void OnSnapshot(const SnapshotRecord&) override {}
};

// Sends every record to each sink in order.
class TeeSink : public LogSink {
 public:
  explicit TeeSink(std::vector<LogSink*> sinks) : sinks_(std::move(sinks)) {}
  void OnJob(const JobRecord& r) override;
  void OnRejected(const RejectedRecord& r) override;
  void OnSnapshot(const SnapshotRecord& r) override;
  void OnCapacity(const CapacityRecord& r) override;
  void OnEnd(SimTime t) override;
  void OnProgress(SimTime now, int64_t jobs_submitted) override;

 private:
  std::vector<LogSink*> sinks_;
};

}  // namespace qs

#endif  // QS_ENGINE_LOG_EVENT_LOG_H_
