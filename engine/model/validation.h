// File: engine/model/validation.h
//
// The ClientException rules of ../shared/spec/quota-semantics.md section 1:
// which requests AWS Batch would reject, and with which message. Shared by the
// fast and the reference engine so that both reject the same requests with
// the same words; the engines own the state the checks need and pass the
// facts in.
//
// Every function returns OkStatus() or InvalidArgumentError(message); the
// engines log "ClientException: " + message as a `rejected` line.
//
// Thread-safety: pure functions.
#ifndef QS_ENGINE_MODEL_VALIDATION_H_
#define QS_ENGINE_MODEL_VALIDATION_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "engine/model/scenario.h"

namespace qs {

inline constexpr int kMaxQuotaShares = 20;
inline constexpr int kMaxShareCapacityLimits = 5;
inline constexpr int64_t kMaxSchedulingPriority = 9999;
inline constexpr int kMaxRetryAttempts = 10;

// "ClientException: " + status.message().
std::string ClientExceptionMessage(const absl::Status& status);

// The share name in an UpdateQuotaShare `quotaShareArn`: a bare name, or the
// part after the last "/quota-share/" of an ARN.
std::string_view ShareNameFromArn(std::string_view arn);

// True when `name` (a jobQueue field of a request) names the scenario's queue:
// equal to its name or an ARN ending in "/<name>".
bool NamesQueue(std::string_view name, std::string_view queue_name);

// 1-128 of [A-Za-z0-9_-].
bool IsValidShareName(std::string_view name);
// 1-128 of [A-Za-z0-9_-], starting with a letter or digit.
bool IsValidJobName(std::string_view name);

// Capacity limits of a share: 1..5 entries, maxCapacity >= 1, no duplicate unit.
absl::Status ValidateShareCapacityLimits(const std::vector<CapacityLimit>& limits);
// strategy present; borrowLimit >= -1 and only with LEND_AND_BORROW.
absl::Status ValidateResourceSharing(const std::optional<Strategy>& strategy,
                                     const std::optional<int64_t>& borrow_limit);

// CreateQuotaShare. `share_count` counts existing shares of the queue;
// `name_exists` whether one already has this name.
absl::Status ValidateCreateQuotaShare(const CreateQuotaShareRequest& r, std::string_view queue_name,
                                      int share_count, bool name_exists);

// UpdateQuotaShare (the share's existence is checked by the caller, with
// ShareNameFromArn, and reported through `share_exists`).
absl::Status ValidateUpdateQuotaShare(const UpdateQuotaShareRequest& r, bool share_exists);

// UpdateServiceEnvironment: names the scenario's environment; limits >= 1,
// no duplicate unit.
absl::Status ValidateUpdateServiceEnvironment(const UpdateServiceEnvironmentRequest& r,
                                              std::string_view environment_name);

// What an engine knows about the share a job names (and the queue's state:
// UpdateJobQueue may disable it).
struct ShareFacts {
  bool exists = false;
  bool enabled = false;
  bool queue_enabled = true;
};

// SubmitServiceJob, except jobName uniqueness (the parser guarantees it).
absl::Status ValidateSubmit(const SubmitServiceJobRequest& r, std::string_view queue_name,
                            const ShareFacts& share);
// ValidateSubmit in two parts, for a caller that checks requests ahead (the
// fast engine's decoding thread): whether the checks that read the request
// alone pass, and, for a request where they do, the checks of the queue's
// and the share's state. For such a request ValidateSubmitState() returns
// what ValidateSubmit() does, status and message.
bool SubmitRequestChecksPass(const SubmitServiceJobRequest& r, std::string_view queue_name);
absl::Status ValidateSubmitState(const SubmitServiceJobRequest& r, std::string_view queue_name,
                                 const ShareFacts& share);

// What an engine knows about the job a request names.
struct JobFacts {
  bool exists = false;
  bool terminal = false;
  const char* status = "";  // JobStatusName of its status when it exists
};

absl::Status ValidateUpdateServiceJob(const UpdateServiceJobRequest& r, const JobFacts& job);
absl::Status ValidateTerminateServiceJob(const TerminateServiceJobRequest& r, const JobFacts& job);
absl::Status ValidateGetJobQueueSnapshot(const GetJobQueueSnapshotRequest& r,
                                         std::string_view queue_name);

// quotasim keeps every share it ever created (a deleted one stays as an
// empty slot), at most this many in a run.
inline constexpr int kMaxShareSlots = 64;

// A share about to be created gets a slot of its own: not the name of a
// share deleted earlier in the run (the log names lenders by name, so a
// reused name would make it ambiguous), and at most kMaxShareSlots in all.
// A quotasim limit, not AWS's: rejected like a ClientException.
absl::Status CheckShareSlot(std::string_view name, bool name_was_deleted, int slots_used);

// DeleteQuotaShare: the share exists and is DISABLED ("You must first
// disable submissions for the share", API reference).
absl::Status ValidateDeleteQuotaShare(const DeleteQuotaShareRequest& r, bool share_exists, bool share_enabled);
// UpdateJobQueue: names the scenario's queue; a schedulingPolicyArn names
// its policy (a quota share queue cannot change policy type); priority
// 0..1000. jobStateTimeLimitActions are checked by the parser.
// `needs_capacity_action`: the capacity model may keep a job failing for
// ever and no horizon ends the run, so a new jobStateTimeLimitActions list
// must keep an entry for CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY (a quotasim
// rule: without it the run would never end).
absl::Status ValidateUpdateJobQueue(const UpdateJobQueueRequest& r, std::string_view queue_name,
                                    std::string_view policy_name, bool needs_capacity_action);
// UpdateSchedulingPolicy: names the scenario's policy; a fairsharePolicy
// cannot be given to a quota share policy.
absl::Status ValidateUpdateSchedulingPolicy(const UpdateSchedulingPolicyRequest& r, std::string_view policy_name);
// The reason given to the jobs of a deleted share (a choice: AWS says only
// that they "are eventually terminated").
std::string DeletedShareReason(std::string_view share_name);

}  // namespace qs

#endif  // QS_ENGINE_MODEL_VALIDATION_H_
