// File: engine/trace/policy.h
//
// A replay policy: the configuration part of a scenario document
// (../shared/spec/scenario-format.md: schedulingPolicy, serviceEnvironment,
// jobQueue, quotaShares, simulation — no events) applied to the shares a
// mapping derives from a trace. Two additions make one policy fit any trace:
//
//  * A quotaShares entry named "*" is a template for every mapped share: its
//    resourceSharingConfiguration, preemptionConfiguration and state apply to
//    each share the mapping creates. A named entry overrides the template for
//    that share; without capacityLimits it keeps the mapping's derived limit.
//    Example ("give team X a RESERVE share of 16 instances, the others
//    LEND_AND_BORROW with a 100% borrow limit"):
//      "quotaShares": [
//        {"quotaShareName": "X", "capacityLimits": [{"capacityUnit": "ml.p4d.24xlarge", "maxCapacity": 16}],
//         "resourceSharingConfiguration": {"strategy": "RESERVE"},
//         "preemptionConfiguration": {"inSharePreemption": "DISABLED"}},
//        {"quotaShareName": "*", "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": 100},
//         "preemptionConfiguration": {"inSharePreemption": "DISABLED"}}]
//  * Top-level "description" (text for reports) and "replay":
//    {"singleShare": "NAME", "ignorePriority": true}: put every job in one
//    RESERVE share NAME whose limit is the whole environment (the no-quota
//    FIFO baseline); ignorePriority drops trace priorities (pure FIFO).
//
// Missing schedulingPolicy / jobQueue get defaults; a missing
// serviceEnvironment (or one without capacityLimits) takes the mapping's
// environment. The configuration part is parsed by ParseScenario, so its
// errors name the JSON path exactly as for scenarios.
//
// StandardPolicies() is the set `quotasim compare` runs by default; the same
// documents are shipped in traces/policies/ (a test keeps them equal).
//
// Thread-safety: plain values and pure functions.
#ifndef QS_ENGINE_TRACE_POLICY_H_
#define QS_ENGINE_TRACE_POLICY_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/model/scenario.h"

namespace qs::trace {

inline constexpr std::string_view kTemplateShareName = "*";

struct Policy {
  std::string name;         // from the file name (stem) or the standard set
  std::string description;
  std::string single_share;  // non-empty: every job in this one share
  bool ignore_priority = false;
  // The parsed configuration: scheduling_policy, service_environment,
  // job_queue, knobs. service_environment.capacity_limits is empty when the
  // mapping's environment is to be used.
  Scenario config;
  bool has_template = false;
  CreateQuotaShareRequest share_template;              // the "*" entry
  std::vector<CreateQuotaShareRequest> named_shares;   // other entries, file order
};

absl::StatusOr<Policy> ParsePolicy(std::string_view json_text, std::string_view source, std::string name);
// Reads a policy file; its name is the file name without directory and ".json".
absl::StatusOr<Policy> LoadPolicyFile(const std::string& path);

// The standard set, in report order: (name, JSON document).
const std::vector<std::pair<std::string, std::string>>& StandardPolicyDocuments();
absl::StatusOr<std::vector<Policy>> StandardPolicies();

}  // namespace qs::trace

#endif  // QS_ENGINE_TRACE_POLICY_H_
