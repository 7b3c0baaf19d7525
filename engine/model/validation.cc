#include "engine/model/validation.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "engine/model/capacity.h"
#include "engine/util/strings.h"

namespace qs {
namespace {

absl::Status Reject(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

bool IsNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

}  // namespace

std::string ClientExceptionMessage(const absl::Status& status) {
  return absl::StrCat("ClientException: ", status.message());
}

std::string_view ShareNameFromArn(std::string_view arn) {
  constexpr std::string_view kMarker = "/quota-share/";
  size_t pos = arn.rfind(kMarker);
  if (pos == std::string_view::npos) return arn;
  return arn.substr(pos + kMarker.size());
}

bool NamesQueue(std::string_view name, std::string_view queue_name) {
  if (name == queue_name) return true;
  if (name.size() > queue_name.size() + 1 && name.substr(name.size() - queue_name.size()) == queue_name &&
      name[name.size() - queue_name.size() - 1] == '/' && name.rfind("arn:", 0) == 0) {
    return true;
  }
  return false;
}

bool IsValidShareName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

bool IsValidJobName(std::string_view name) {
  if (!IsValidShareName(name)) return false;
  return name[0] != '_' && name[0] != '-';
}

absl::Status ValidateShareCapacityLimits(const std::vector<CapacityLimit>& limits) {
  if (limits.empty() || limits.size() > kMaxShareCapacityLimits) {
    return Reject(absl::StrCat("capacityLimits must have between 1 and ", kMaxShareCapacityLimits,
                               " entries, got ", limits.size()));
  }
  std::set<std::string_view> seen;
  for (size_t i = 0; i < limits.size(); ++i) {
    const CapacityLimit& l = limits[i];
    if (l.capacity_unit.empty()) {
      return Reject(absl::StrCat("capacityLimits[", i, "].capacityUnit must not be empty"));
    }
    if (l.max_capacity < 1) {
      return Reject(absl::StrCat("capacityLimits[", i, "].maxCapacity must be at least 1, got ",
                                 l.max_capacity));
    }
    if (!seen.insert(l.capacity_unit).second) {
      return Reject(absl::StrCat("capacityLimits[", i, "].capacityUnit '", l.capacity_unit,
                                 "' is listed more than once"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateResourceSharing(const std::optional<Strategy>& strategy,
                                     const std::optional<int64_t>& borrow_limit) {
  if (!strategy) return Reject("resourceSharingConfiguration.strategy is required");
  if (borrow_limit) {
    if (*borrow_limit < -1) {
      return Reject(absl::StrCat("resourceSharingConfiguration.borrowLimit must be -1 (unlimited) "
                                 "or a percentage >= 0, got ",
                                 *borrow_limit));
    }
    if (*strategy != Strategy::kLendAndBorrow) {
      return Reject(absl::StrCat("resourceSharingConfiguration.borrowLimit is only valid with "
                                 "strategy LEND_AND_BORROW, not ",
                                 StrategyName(*strategy)));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateCreateQuotaShare(const CreateQuotaShareRequest& r, std::string_view queue_name,
                                      int share_count, bool name_exists) {
  if (!r.quota_share_name) return Reject("quotaShareName is required");
  if (!IsValidShareName(*r.quota_share_name)) {
    return Reject(absl::StrCat("quotaShareName '", *r.quota_share_name,
                               "' must be 1-128 letters, numbers, hyphens or underscores"));
  }
  if (r.job_queue && !NamesQueue(*r.job_queue, queue_name)) {
    return Reject(absl::StrCat("jobQueue '", *r.job_queue, "' does not exist"));
  }
  if (!r.capacity_limits) return Reject("capacityLimits is required");
  if (absl::Status s = ValidateShareCapacityLimits(*r.capacity_limits); !s.ok()) return s;
  if (!r.has_resource_sharing) return Reject("resourceSharingConfiguration is required");
  if (absl::Status s = ValidateResourceSharing(r.strategy, r.borrow_limit); !s.ok()) return s;
  if (!r.in_share_preemption) return Reject("preemptionConfiguration.inSharePreemption is required");
  if (name_exists) {
    return Reject(absl::StrCat("quota share '", *r.quota_share_name, "' already exists in job queue '",
                               Sv(queue_name), "'"));
  }
  if (share_count >= kMaxQuotaShares) {
    return Reject(absl::StrCat("job queue '", Sv(queue_name), "' already has the maximum of ",
                               kMaxQuotaShares, " quota shares"));
  }
  return absl::OkStatus();
}

absl::Status ValidateUpdateQuotaShare(const UpdateQuotaShareRequest& r, bool share_exists) {
  if (!r.quota_share_arn) return Reject("quotaShareArn is required");
  if (!share_exists) {
    return Reject(absl::StrCat("quota share '", *r.quota_share_arn, "' does not exist"));
  }
  if (r.capacity_limits) {
    if (absl::Status s = ValidateShareCapacityLimits(*r.capacity_limits); !s.ok()) return s;
  }
  if (r.has_resource_sharing) {
    if (absl::Status s = ValidateResourceSharing(r.strategy, r.borrow_limit); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ValidateUpdateServiceEnvironment(const UpdateServiceEnvironmentRequest& r,
                                              std::string_view environment_name) {
  if (!r.service_environment) return Reject("serviceEnvironment is required");
  if (!NamesQueue(*r.service_environment, environment_name)) {
    return Reject(absl::StrCat("service environment '", *r.service_environment, "' does not exist"));
  }
  if (r.capacity_limits) {
    if (r.capacity_limits->empty()) return Reject("capacityLimits must not be empty");
    std::set<std::string_view> seen;
    for (size_t i = 0; i < r.capacity_limits->size(); ++i) {
      const CapacityLimit& l = (*r.capacity_limits)[i];
      if (l.capacity_unit.empty()) {
        return Reject(absl::StrCat("capacityLimits[", i, "].capacityUnit must not be empty"));
      }
      if (l.max_capacity < 1) {
        return Reject(absl::StrCat("capacityLimits[", i, "].maxCapacity must be at least 1, got ",
                                   l.max_capacity));
      }
      if (!seen.insert(l.capacity_unit).second) {
        return Reject(absl::StrCat("capacityLimits[", i, "].capacityUnit '", l.capacity_unit,
                                   "' is listed more than once"));
      }
    }
  }
  return absl::OkStatus();
}

namespace {

// ValidateSubmit's checks in their order: those of the request before the
// share's state, the state (ValidateSubmitState), those of the request after it.
absl::Status CheckSubmitBeforeState(const SubmitServiceJobRequest& r, std::string_view queue_name) {
  if (!r.job_name) return Reject("jobName is required");
  if (!IsValidJobName(*r.job_name)) {
    return Reject(absl::StrCat("jobName '", *r.job_name,
                               "' must be 1-128 letters, numbers, hyphens or underscores, "
                               "starting with a letter or number"));
  }
  if (r.job_queue && !NamesQueue(*r.job_queue, queue_name)) {
    return Reject(absl::StrCat("jobQueue '", *r.job_queue, "' does not exist"));
  }
  if (r.service_job_type && *r.service_job_type != "SAGEMAKER_TRAINING") {
    return Reject(absl::StrCat("serviceJobType '", *r.service_job_type,
                               "' does not match the job queue type SAGEMAKER_TRAINING"));
  }
  if (r.share_identifier) {
    return Reject("shareIdentifier is not valid for a job queue with a quota share policy; use "
                  "quotaShareName");
  }
  if (!r.quota_share_name) {
    return Reject("quotaShareName is required for a job queue with a quota share policy");
  }
  return absl::OkStatus();
}

absl::Status CheckSubmitAfterState(const SubmitServiceJobRequest& r) {
  if (r.scheduling_priority &&
      (*r.scheduling_priority < 0 || *r.scheduling_priority > kMaxSchedulingPriority)) {
    return Reject(absl::StrCat("schedulingPriority must be between 0 and ", kMaxSchedulingPriority,
                               ", got ", *r.scheduling_priority));
  }
  if (r.retry_attempts && (*r.retry_attempts < 1 || *r.retry_attempts > kMaxRetryAttempts)) {
    return Reject(absl::StrCat("retryStrategy.attempts must be between 1 and ", kMaxRetryAttempts,
                               ", got ", *r.retry_attempts));
  }
  if (r.attempt_duration_seconds && *r.attempt_duration_seconds < 1) {
    return Reject(absl::StrCat("timeoutConfig.attemptDurationSeconds must be at least 1, got ",
                               *r.attempt_duration_seconds));
  }
  if (r.preemption_retries && *r.preemption_retries < 0) {
    return Reject(absl::StrCat(
        "preemptionConfiguration.preemptionRetriesBeforeTermination must be at least 0, got ",
        *r.preemption_retries));
  }
  if (!r.payload_error.empty()) return Reject(r.payload_error);
  if (r.instance_count < 1) {
    return Reject(absl::StrCat(
        "serviceRequestPayload.ResourceConfig.InstanceCount must be at least 1, got ",
        r.instance_count));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateSubmitState(const SubmitServiceJobRequest& r, std::string_view queue_name,
                                 const ShareFacts& share) {
  if (!share.queue_enabled) {
    return Reject(absl::StrCat("job queue '", Sv(queue_name), "' is DISABLED and does not accept new jobs"));
  }
  if (!share.exists) {
    return Reject(absl::StrCat("quotaShareName '", *r.quota_share_name,
                               "' does not exist in job queue '", Sv(queue_name), "'"));
  }
  if (!share.enabled) {
    return Reject(absl::StrCat("quota share '", *r.quota_share_name,
                               "' is DISABLED and does not accept new jobs"));
  }
  return absl::OkStatus();
}

absl::Status ValidateSubmit(const SubmitServiceJobRequest& r, std::string_view queue_name,
                            const ShareFacts& share) {
  if (absl::Status s = CheckSubmitBeforeState(r, queue_name); !s.ok()) return s;
  if (absl::Status s = ValidateSubmitState(r, queue_name, share); !s.ok()) return s;
  return CheckSubmitAfterState(r);
}

bool SubmitRequestChecksPass(const SubmitServiceJobRequest& r, std::string_view queue_name) {
  return CheckSubmitBeforeState(r, queue_name).ok() && CheckSubmitAfterState(r).ok();
}

namespace {
absl::Status CheckJob(const std::optional<std::string>& job_id, const JobFacts& job) {
  if (!job_id) return Reject("jobId is required");
  if (!job.exists) return Reject(absl::StrCat("job '", *job_id, "' does not exist"));
  if (job.terminal) {
    return Reject(absl::StrCat("job '", *job_id, "' is already ", job.status));
  }
  return absl::OkStatus();
}
}  // namespace

absl::Status ValidateUpdateServiceJob(const UpdateServiceJobRequest& r, const JobFacts& job) {
  if (absl::Status s = CheckJob(r.job_id, job); !s.ok()) return s;
  if (!r.scheduling_priority) return Reject("schedulingPriority is required");
  if (*r.scheduling_priority < 0 || *r.scheduling_priority > kMaxSchedulingPriority) {
    return Reject(absl::StrCat("schedulingPriority must be between 0 and ", kMaxSchedulingPriority,
                               ", got ", *r.scheduling_priority));
  }
  return absl::OkStatus();
}

absl::Status ValidateTerminateServiceJob(const TerminateServiceJobRequest& r, const JobFacts& job) {
  if (absl::Status s = CheckJob(r.job_id, job); !s.ok()) return s;
  if (!r.reason) return Reject("reason is required");
  if (r.reason->size() > 1024) return Reject("reason must be at most 1024 characters");
  return absl::OkStatus();
}

absl::Status ValidateGetJobQueueSnapshot(const GetJobQueueSnapshotRequest& r,
                                         std::string_view queue_name) {
  if (r.job_queue && !NamesQueue(*r.job_queue, queue_name)) {
    return Reject(absl::StrCat("jobQueue '", *r.job_queue, "' does not exist"));
  }
  return absl::OkStatus();
}

absl::Status ValidateDeleteQuotaShare(const DeleteQuotaShareRequest& r, bool share_exists, bool share_enabled) {
  if (!r.quota_share_arn) return Reject("quotaShareArn is required");
  if (!share_exists) return Reject(absl::StrCat("quota share '", *r.quota_share_arn, "' does not exist"));
  if (share_enabled) {
    return Reject(absl::StrCat("quota share '", Sv(ShareNameFromArn(*r.quota_share_arn)),
                               "' must be DISABLED (UpdateQuotaShare) before it can be deleted"));
  }
  return absl::OkStatus();
}

absl::Status ValidateUpdateJobQueue(const UpdateJobQueueRequest& r, std::string_view queue_name,
                                    std::string_view policy_name, bool needs_capacity_action) {
  if (!r.job_queue) return Reject("jobQueue is required");
  if (!NamesQueue(*r.job_queue, queue_name)) {
    return Reject(absl::StrCat("jobQueue '", *r.job_queue, "' does not exist"));
  }
  if (r.priority && (*r.priority < 0 || *r.priority > 1000)) {
    return Reject(absl::StrCat("priority must be between 0 and 1000, got ", *r.priority));
  }
  if (r.scheduling_policy_arn && !NamesQueue(*r.scheduling_policy_arn, policy_name)) {
    return Reject(absl::StrCat("schedulingPolicyArn '", *r.scheduling_policy_arn,
                               "' is not the queue's quota share scheduling policy"));
  }
  if (needs_capacity_action && r.time_limit_actions && !HasCapacityAction(*r.time_limit_actions)) {
    return Reject("jobStateTimeLimitActions must keep an entry for CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY: the "
                  "simulation's capacity model can keep a job failing to provision for ever (quotasim rule)");
  }
  return absl::OkStatus();
}

absl::Status ValidateUpdateSchedulingPolicy(const UpdateSchedulingPolicyRequest& r, std::string_view policy_name) {
  if (!r.arn) return Reject("arn is required");
  if (!NamesQueue(*r.arn, policy_name)) {
    return Reject(absl::StrCat("scheduling policy '", *r.arn, "' does not exist"));
  }
  if (r.has_fairshare_policy) {
    return Reject("fairsharePolicy cannot be set on a scheduling policy with a quotaSharePolicy");
  }
  return absl::OkStatus();
}

absl::Status CheckShareSlot(std::string_view name, bool name_was_deleted, int slots_used) {
  if (name_was_deleted) {
    return Reject(absl::StrCat("quota share '", Sv(name),
                               "' was deleted earlier in this run; quotasim does not give a deleted share's name "
                               "to a new share"));
  }
  if (slots_used >= kMaxShareSlots) {
    return Reject(absl::StrCat("quotasim simulates at most ", kMaxShareSlots,
                               " quota shares created in one run, deleted ones included"));
  }
  return absl::OkStatus();
}

std::string DeletedShareReason(std::string_view share_name) {
  return absl::StrCat("Terminated: quota share ", Sv(share_name), " was deleted (DeleteQuotaShare)");
}

}  // namespace qs
