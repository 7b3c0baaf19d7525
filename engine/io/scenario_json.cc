// File: engine/io/scenario_json.cc
//
// Scenario JSON <-> Scenario. Three layers:
//  1. Text -> JSON values (engine/io/json_text.h): a depth pre-scan (so nothing downstream ever meets
//     a deeply nested document), then nlohmann's iterative SAX parser feeding
//     DomBuilder, which builds nlohmann::json values, rejects duplicate keys,
//     and hands each element of the top-level `events` array to a sink as
//     soon as it is complete (then drops it), so memory stays proportional
//     to the Scenario, not to a DOM of the whole file.
//  2. JSON values -> model: small typed readers (engine/io/json_read.h:
//     AsString, AsInt32, AsSeconds, enums) that know their JSON path (Path,
//     a chain of stack nodes rendered only when an error is reported) and
//     produce the one-line messages of scenario_json.h; the API objects and
//     events here, the `simulation` object in scenario_json_simulation.cc.
//  3. Model -> canonical text (ScenarioToJson, scenario_json_write.cc),
//     built with ordered_json so key order is fixed.
// Nothing here throws to the caller: nlohmann is used through its SAX entry
// point (errors come back as callbacks), and values are type-checked before
// any get<>().
#include "engine/io/scenario_json.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/util/status_macros.h"
#include "engine/io/json_read.h"
#include "engine/io/json_text.h"
#include "engine/io/capacity_csv.h"
#include "engine/model/capacity.h"
#include "engine/util/strings.h"
#include "nlohmann/json.hpp"

namespace qs::json_read {
namespace {


// resourceSharingConfiguration / preemptionConfiguration of a quota share.
template <typename Request>
absl::Status ReadShareConfig(const Reader& r, const Json& request, const Path& path, Request* out) {
  if (auto it = request.find("resourceSharingConfiguration"); it != request.end()) {
    const Path p = path.Key("resourceSharingConfiguration");
    QS_RETURN_IF_ERROR(r.CheckObject(*it, p, {"strategy", "borrowLimit"}));
    out->has_resource_sharing = true;
    QS_RETURN_IF_ERROR(Get(r, *it, p, "strategy", AsStrategy, &out->strategy));
    QS_RETURN_IF_ERROR(Get(r, *it, p, "borrowLimit", AsInt32, &out->borrow_limit));
  }
  if (auto it = request.find("preemptionConfiguration"); it != request.end()) {
    const Path p = path.Key("preemptionConfiguration");
    QS_RETURN_IF_ERROR(r.CheckObject(*it, p, {"inSharePreemption"}));
    QS_RETURN_IF_ERROR(Get(r, *it, p, "inSharePreemption", AsToggle, &out->in_share_preemption));
  }
  QS_RETURN_IF_ERROR(Get(r, request, path, "capacityLimits", AsCapacityLimits, &out->capacity_limits));
  return Get(r, request, path, "state", AsToggle, &out->state);
}

absl::StatusOr<CreateQuotaShareRequest> AsCreateQuotaShare(const Reader& r, const Json& v,
                                                           const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(v, path,
                                   {"quotaShareName", "jobQueue", "capacityLimits",
                                    "resourceSharingConfiguration", "preemptionConfiguration",
                                    "state", "tags"}));
  CreateQuotaShareRequest out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "quotaShareName", AsString, &out.quota_share_name));
  QS_RETURN_IF_ERROR(Get(r, v, path, "jobQueue", AsString, &out.job_queue));
  QS_RETURN_IF_ERROR(ReadShareConfig(r, v, path, &out));
  QS_RETURN_IF_ERROR(CheckTags(r, v, path));
  return out;
}

absl::StatusOr<UpdateQuotaShareRequest> AsUpdateQuotaShare(const Reader& r, const Json& v,
                                                           const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(v, path,
                                   {"quotaShareArn", "capacityLimits", "resourceSharingConfiguration",
                                    "preemptionConfiguration", "state"}));
  UpdateQuotaShareRequest out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "quotaShareArn", AsString, &out.quota_share_arn));
  QS_RETURN_IF_ERROR(ReadShareConfig(r, v, path, &out));
  return out;
}

absl::StatusOr<UpdateServiceEnvironmentRequest> AsUpdateServiceEnvironment(const Reader& r,
                                                                           const Json& v,
                                                                           const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(v, path, {"serviceEnvironment", "state", "capacityLimits"}));
  UpdateServiceEnvironmentRequest out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "serviceEnvironment", AsString, &out.service_environment));
  QS_RETURN_IF_ERROR(Get(r, v, path, "state", AsToggle, &out.state));
  QS_RETURN_IF_ERROR(Get(r, v, path, "capacityLimits", AsCapacityLimits, &out.capacity_limits));
  return out;
}

absl::StatusOr<UpdateServiceJobRequest> AsUpdateServiceJob(const Reader& r, const Json& v,
                                                           const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(v, path, {"jobId", "schedulingPriority"}));
  UpdateServiceJobRequest out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "jobId", AsString, &out.job_id));
  QS_RETURN_IF_ERROR(Get(r, v, path, "schedulingPriority", AsInt32, &out.scheduling_priority));
  return out;
}

absl::StatusOr<TerminateServiceJobRequest> AsTerminateServiceJob(const Reader& r, const Json& v,
                                                                 const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(v, path, {"jobId", "reason"}));
  TerminateServiceJobRequest out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "jobId", AsString, &out.job_id));
  QS_RETURN_IF_ERROR(Get(r, v, path, "reason", AsString, &out.reason));
  return out;
}

absl::StatusOr<GetJobQueueSnapshotRequest> AsGetJobQueueSnapshot(const Reader& r, const Json& v,
                                                                 const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(v, path, {"jobQueue"}));
  GetJobQueueSnapshotRequest out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "jobQueue", AsString, &out.job_queue));
  return out;
}

absl::StatusOr<DeleteQuotaShareRequest> AsDeleteQuotaShare(const Reader& r, const Json& v, const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(v, path, {"quotaShareArn"}));
  DeleteQuotaShareRequest out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "quotaShareArn", AsString, &out.quota_share_arn));
  return out;
}

absl::StatusOr<JobStateTimeLimitAction> AsTimeLimitAction(const Reader& r, const Json& v, const Path& path);

// UpdateJobQueue on a SAGEMAKER_TRAINING queue: computeEnvironmentOrder
// belongs to other queue types; serviceEnvironmentOrder is accepted and not
// checked (the scenario has one environment).
absl::StatusOr<UpdateJobQueueRequest> AsUpdateJobQueue(const Reader& r, const Json& v, const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(v, path,
                                   {"jobQueue", "state", "priority", "schedulingPolicyArn",
                                    "serviceEnvironmentOrder", "jobStateTimeLimitActions"}));
  UpdateJobQueueRequest out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "jobQueue", AsString, &out.job_queue));
  QS_RETURN_IF_ERROR(Get(r, v, path, "state", AsToggle, &out.state));
  QS_RETURN_IF_ERROR(Get(r, v, path, "priority", AsInt32, &out.priority));
  QS_RETURN_IF_ERROR(Get(r, v, path, "schedulingPolicyArn", AsString, &out.scheduling_policy_arn));
  QS_RETURN_IF_ERROR(CheckType(r, v, path, "serviceEnvironmentOrder", Json::value_t::array, "an array"));
  if (auto it = v.find("jobStateTimeLimitActions"); it != v.end()) {
    const Path p = path.Key("jobStateTimeLimitActions");
    if (!it->is_array()) return r.TypeError(p, "an array", *it);
    out.time_limit_actions.emplace();
    for (size_t i = 0; i < it->size(); ++i) {
      QS_ASSIGN_OR_RETURN(JobStateTimeLimitAction a, AsTimeLimitAction(r, (*it)[i], p.Index(i)));
      out.time_limit_actions->push_back(std::move(a));
    }
  }
  return out;
}

absl::StatusOr<UpdateSchedulingPolicyRequest> AsUpdateSchedulingPolicy(const Reader& r, const Json& v,
                                                                       const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(v, path, {"arn", "quotaSharePolicy", "fairsharePolicy"}));
  UpdateSchedulingPolicyRequest out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "arn", AsString, &out.arn));
  if (auto it = v.find("quotaSharePolicy"); it != v.end()) {
    const Path p = path.Key("quotaSharePolicy");
    QS_RETURN_IF_ERROR(r.CheckObject(*it, p, {"idleResourceAssignmentStrategy"}));
    QS_RETURN_IF_ERROR(CheckOneOf(r, *it, p, "idleResourceAssignmentStrategy", {"FIFO"}));
    out.has_quota_share_policy = true;
  }
  QS_RETURN_IF_ERROR(CheckType(r, v, path, "fairsharePolicy", Json::value_t::object, "an object"));
  out.has_fairshare_policy = v.contains("fairsharePolicy");
  return out;
}

// serviceRequestPayload -> instance_type / instance_count, or payload_error
// (+ payload_raw). Only an InstanceCount outside int32 is a document error;
// everything else wrong inside the payload is SageMaker's to reject.
absl::Status ReadPayload(const Reader& r, const Json& request, const Path& request_path,
                         SubmitServiceJobRequest* out) {
  auto it = request.find("serviceRequestPayload");
  if (it == request.end()) {
    out->payload_error = kPayloadRequired;
    return absl::OkStatus();
  }
  const Json& payload = *it;
  const Path path = request_path.Key("serviceRequestPayload");
  if (!payload.is_string() && !payload.is_object()) {
    return r.TypeError(path, "a string or an object", payload);
  }
  auto fail = [&](std::string message) {
    out->payload_error = std::move(message);
    out->payload_raw = payload.is_string()
                           ? payload.get_ref<const std::string&>()
                           : payload.dump(-1, ' ', false, Json::error_handler_t::replace);
    return absl::OkStatus();
  };
  Json parsed;
  const Json* object = &payload;
  if (payload.is_string()) {
    DomBuilder builder;
    TextResult text = ReadJsonText(payload.get_ref<const std::string&>(), builder);
    if (!text.ok) {
      return fail(absl::StrCat("serviceRequestPayload is not valid JSON: ", text.location, ": ",
                               text.reason));
    }
    parsed = std::move(builder.root());
    object = &parsed;
    if (!object->is_object()) return fail("serviceRequestPayload must be a JSON object");
  }
  auto config = object->find("ResourceConfig");
  if (config == object->end()) return fail("serviceRequestPayload.ResourceConfig is required");
  if (!config->is_object()) return fail("serviceRequestPayload.ResourceConfig must be an object");
  if (config->contains("InstanceGroups")) {
    return fail(
        "serviceRequestPayload.ResourceConfig.InstanceGroups (heterogeneous clusters) is not "
        "supported by quotasim");
  }
  auto type = config->find("InstanceType");
  if (type == config->end()) {
    return fail("serviceRequestPayload.ResourceConfig.InstanceType is required");
  }
  if (!type->is_string()) {
    return fail("serviceRequestPayload.ResourceConfig.InstanceType must be a string");
  }
  auto count = config->find("InstanceCount");
  if (count == config->end()) {
    return fail("serviceRequestPayload.ResourceConfig.InstanceCount is required");
  }
  if (!count->is_number() ||
      (count->is_number_float() && std::trunc(count->get<double>()) != count->get<double>())) {
    return fail("serviceRequestPayload.ResourceConfig.InstanceCount must be an integer");
  }
  // StoppingCondition.MaxRuntimeInSeconds (SageMaker API: an integer >= 1).
  int64_t max_runtime = -1;
  if (auto stop = object->find("StoppingCondition"); stop != object->end()) {
    if (!stop->is_object()) return fail("serviceRequestPayload.StoppingCondition must be an object");
    if (auto m = stop->find("MaxRuntimeInSeconds"); m != stop->end()) {
      const bool in_range = m->is_number_unsigned()  ? m->get<uint64_t>() >= 1 && m->get<uint64_t>() <= 2147483647
                            : m->is_number_integer() ? m->get<int64_t>() >= 1 && m->get<int64_t>() <= 2147483647
                                                     : false;
      if (!in_range) {
        return fail(
            "serviceRequestPayload.StoppingCondition.MaxRuntimeInSeconds must be an integer from 1 to 2147483647");
      }
      max_runtime = m->get<int64_t>();
    }
  }
  const Path config_path = path.Key("ResourceConfig");
  QS_ASSIGN_OR_RETURN(out->instance_count, AsInt32(r, *count, config_path.Key("InstanceCount")));
  out->instance_type = type->get_ref<const std::string&>();
  if (max_runtime >= 1) out->max_runtime_seconds = max_runtime;
  return absl::OkStatus();
}

absl::StatusOr<SubmitServiceJobRequest> AsSubmitServiceJob(const Reader& r, const Json& v,
                                                           const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(
      v, path,
      {"jobName", "jobQueue", "serviceJobType", "quotaShareName", "shareIdentifier",
       "schedulingPriority", "retryStrategy", "timeoutConfig", "preemptionConfiguration",
       "serviceRequestPayload", "tags", "clientToken"}));
  SubmitServiceJobRequest out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "jobName", AsString, &out.job_name));
  QS_RETURN_IF_ERROR(Get(r, v, path, "jobQueue", AsString, &out.job_queue));
  QS_RETURN_IF_ERROR(Get(r, v, path, "serviceJobType", AsString, &out.service_job_type));
  QS_RETURN_IF_ERROR(Get(r, v, path, "quotaShareName", AsString, &out.quota_share_name));
  QS_RETURN_IF_ERROR(Get(r, v, path, "shareIdentifier", AsString, &out.share_identifier));
  QS_RETURN_IF_ERROR(Get(r, v, path, "schedulingPriority", AsInt32, &out.scheduling_priority));
  if (auto it = v.find("retryStrategy"); it != v.end()) {
    const Path p = path.Key("retryStrategy");
    QS_RETURN_IF_ERROR(r.CheckObject(*it, p, {"attempts", "evaluateOnExit"}));
    QS_RETURN_IF_ERROR(Get(r, *it, p, "attempts", AsInt32, &out.retry_attempts));
    if (auto e = it->find("evaluateOnExit"); e != it->end()) {
      if (!e->is_array()) return r.TypeError(p.Key("evaluateOnExit"), "an array", *e);
      if (!e->empty()) {
        return r.Error(p.Key("evaluateOnExit"), "evaluateOnExit is not simulated by quotasim");
      }
    }
  }
  if (auto it = v.find("timeoutConfig"); it != v.end()) {
    const Path p = path.Key("timeoutConfig");
    QS_RETURN_IF_ERROR(r.CheckObject(*it, p, {"attemptDurationSeconds"}));
    QS_RETURN_IF_ERROR(
        Get(r, *it, p, "attemptDurationSeconds", AsInt32, &out.attempt_duration_seconds));
  }
  if (auto it = v.find("preemptionConfiguration"); it != v.end()) {
    const Path p = path.Key("preemptionConfiguration");
    QS_RETURN_IF_ERROR(r.CheckObject(*it, p, {"preemptionRetriesBeforeTermination"}));
    QS_RETURN_IF_ERROR(
        Get(r, *it, p, "preemptionRetriesBeforeTermination", AsInt32, &out.preemption_retries));
  }
  QS_RETURN_IF_ERROR(CheckTags(r, v, path));
  QS_RETURN_IF_ERROR(CheckType(r, v, path, "clientToken", Json::value_t::string, "a string"));
  QS_RETURN_IF_ERROR(ReadPayload(r, v, path, &out));
  return out;
}

// The actions, in the order of Request's alternatives.
constexpr std::string_view kActions[] = {
    "SubmitServiceJob", "UpdateServiceJob",         "TerminateServiceJob", "CreateQuotaShare",
    "UpdateQuotaShare", "UpdateServiceEnvironment", "GetJobQueueSnapshot", "DeleteQuotaShare",
    "UpdateJobQueue",   "UpdateSchedulingPolicy"};
static_assert(std::variant_size_v<Request> == std::size(kActions));

// Converts `events` entries as DomBuilder streams them.
class EventReader {
 public:
  explicit EventReader(const Reader& r) : r_(r) {}

  absl::Status Add(size_t index, const Json& v) {
    const Path root;
    const Path events = root.Key("events");
    const Path path = events.Index(index);
    QS_RETURN_IF_ERROR(r_.CheckObject(v, path, {"time", "action", "request", "simulation"}));
    for (const char* key : {"time", "action", "request"}) {
      QS_RETURN_IF_ERROR(r_.Require(v, path, key));
    }
    ScenarioEvent event;
    QS_RETURN_IF_ERROR(Get(r_, v, path, "time", AsSeconds, &event.time));
    const Path action_path = path.Key("action");
    const Json& action = v["action"];
    size_t kind = std::size(kActions);
    if (action.is_string()) {
      const std::string& name = action.get_ref<const std::string&>();
      kind = static_cast<size_t>(std::find(std::begin(kActions), std::end(kActions), name) -
                                 std::begin(kActions));
    }
    if (kind == std::size(kActions)) {
      std::string expected = "one of ";
      for (size_t i = 0; i < std::size(kActions); ++i) {
        absl::StrAppend(&expected, i == 0 ? "" : ", ", Sv(kActions[i]));
      }
      return r_.Error(action_path, absl::StrCat("unknown action: expected ", expected, ", got ",
                                                Describe(action)));
    }
    const Path request_path = path.Key("request");
    const Json& request = v["request"];
    const Path simulation_path = path.Key("simulation");
    if (kind != 0 && v.contains("simulation")) {
      return r_.Error(simulation_path, "simulation is only allowed on SubmitServiceJob events");
    }
    switch (kind) {
      case 0: {
        QS_ASSIGN_OR_RETURN(SubmitServiceJobRequest submit,
                            AsSubmitServiceJob(r_, request, request_path));
        QS_RETURN_IF_ERROR(r_.Require(v, path, "simulation"));
        const Json& simulation = v["simulation"];
        QS_RETURN_IF_ERROR(
            r_.CheckObject(simulation, simulation_path, {"runSeconds", "outcome", "checkpointIntervalSeconds"}));
        QS_RETURN_IF_ERROR(r_.Require(simulation, simulation_path, "runSeconds"));
        QS_RETURN_IF_ERROR(Get(r_, simulation, simulation_path, "runSeconds", AsSeconds,
                               &submit.run_time));
        QS_RETURN_IF_ERROR(
            Get(r_, simulation, simulation_path, "outcome", AsOutcome, &submit.outcome));
        QS_RETURN_IF_ERROR(Get(r_, simulation, simulation_path, "checkpointIntervalSeconds", AsInterval,
                               &submit.checkpoint_interval));
        if (submit.job_name) {
          auto [it, inserted] = job_names_.try_emplace(*submit.job_name, index);
          if (!inserted) {
            return r_.Error(request_path.Key("jobName"),
                            absl::StrCat("duplicate jobName ", SingleQuote(*submit.job_name),
                                         " (first at events[", it->second, "])"));
          }
        }
        ++submit_count_;
        event.request = std::move(submit);
        break;
      }
      case 1: {
        QS_ASSIGN_OR_RETURN(event.request, AsUpdateServiceJob(r_, request, request_path));
        break;
      }
      case 2: {
        QS_ASSIGN_OR_RETURN(event.request, AsTerminateServiceJob(r_, request, request_path));
        break;
      }
      case 3: {
        QS_ASSIGN_OR_RETURN(event.request, AsCreateQuotaShare(r_, request, request_path));
        break;
      }
      case 4: {
        QS_ASSIGN_OR_RETURN(event.request, AsUpdateQuotaShare(r_, request, request_path));
        break;
      }
      case 5: {
        QS_ASSIGN_OR_RETURN(event.request, AsUpdateServiceEnvironment(r_, request, request_path));
        break;
      }
      case 6: {
        QS_ASSIGN_OR_RETURN(event.request, AsGetJobQueueSnapshot(r_, request, request_path));
        break;
      }
      case 7: {
        QS_ASSIGN_OR_RETURN(event.request, AsDeleteQuotaShare(r_, request, request_path));
        break;
      }
      case 8: {
        QS_ASSIGN_OR_RETURN(event.request, AsUpdateJobQueue(r_, request, request_path));
        break;
      }
      default: {
        QS_ASSIGN_OR_RETURN(event.request, AsUpdateSchedulingPolicy(r_, request, request_path));
        break;
      }
    }
    event.path = absl::StrCat("events[", index, "]");
    events_.push_back(std::move(event));
    return absl::OkStatus();
  }

  std::vector<ScenarioEvent>& events() { return events_; }
  int64_t submit_count() const { return submit_count_; }

 private:
  const Reader& r_;
  std::vector<ScenarioEvent> events_;
  std::unordered_map<std::string, size_t> job_names_;  // jobName -> events index
  int64_t submit_count_ = 0;
};

absl::StatusOr<SchedulingPolicy> AsSchedulingPolicy(const Reader& r, const Json& v,
                                                    const Path& path) {
  QS_RETURN_IF_ERROR(
      r.CheckObject(v, path, {"name", "quotaSharePolicy", "fairsharePolicy", "tags"}));
  SchedulingPolicy out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "name", AsString, &out.name));
  QS_RETURN_IF_ERROR(CheckTags(r, v, path));
  if (auto it = v.find("quotaSharePolicy"); it != v.end()) {
    const Path p = path.Key("quotaSharePolicy");
    QS_RETURN_IF_ERROR(r.CheckObject(*it, p, {"idleResourceAssignmentStrategy"}));
    QS_RETURN_IF_ERROR(CheckOneOf(r, *it, p, "idleResourceAssignmentStrategy", {"FIFO"}));
    out.has_quota_share_policy = true;
  }
  QS_RETURN_IF_ERROR(
      CheckType(r, v, path, "fairsharePolicy", Json::value_t::object, "an object"));
  if (v.contains("fairsharePolicy") && out.has_quota_share_policy) {
    return r.Error(path,
                   "ClientException: a scheduling policy cannot have both quotaSharePolicy and "
                   "fairsharePolicy");
  }
  if (!out.has_quota_share_policy) {
    return r.Error(path.Key("quotaSharePolicy"),
                   "missing required key (quotasim simulates quota-share job queues only)");
  }
  return out;
}

absl::StatusOr<ServiceEnvironment> AsServiceEnvironment(const Reader& r, const Json& v,
                                                        const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(v, path,
                                   {"serviceEnvironmentName", "serviceEnvironmentType", "state",
                                    "capacityLimits", "tags"}));
  ServiceEnvironment out;
  QS_RETURN_IF_ERROR(r.Require(v, path, "serviceEnvironmentName"));
  QS_RETURN_IF_ERROR(Get(r, v, path, "serviceEnvironmentName", AsString, &out.name));
  QS_RETURN_IF_ERROR(CheckOneOf(r, v, path, "serviceEnvironmentType", {"SAGEMAKER_TRAINING"}));
  QS_RETURN_IF_ERROR(Get(r, v, path, "state", AsToggle, &out.state));
  QS_RETURN_IF_ERROR(CheckTags(r, v, path));
  // The run cannot start without sane environment limits: checked here.
  QS_RETURN_IF_ERROR(r.Require(v, path, "capacityLimits"));
  const Path limits_path = path.Key("capacityLimits");
  QS_RETURN_IF_ERROR(Get(r, v, path, "capacityLimits", AsCapacityLimits, &out.capacity_limits));
  const Json& limits = v["capacityLimits"];
  if (out.capacity_limits.empty()) return r.Error(limits_path, "must have at least one entry");
  std::unordered_map<std::string_view, size_t> seen;
  for (size_t i = 0; i < out.capacity_limits.size(); ++i) {
    const Path entry = limits_path.Index(i);
    const CapacityLimit& l = out.capacity_limits[i];
    QS_RETURN_IF_ERROR(r.Require(limits[i], entry, "capacityUnit"));
    QS_RETURN_IF_ERROR(r.Require(limits[i], entry, "maxCapacity"));
    if (l.capacity_unit.empty()) return r.Error(entry.Key("capacityUnit"), "must not be empty");
    if (l.max_capacity < 1) {
      return r.Error(entry.Key("maxCapacity"),
                     absl::StrCat("must be at least 1, got ", l.max_capacity));
    }
    auto [it, inserted] = seen.try_emplace(l.capacity_unit, i);
    if (!inserted) {
      return r.Error(entry.Key("capacityUnit"),
                     absl::StrCat("duplicate capacityUnit ", SingleQuote(l.capacity_unit),
                                  " (first at ", limits_path.ToString(), "[", it->second, "])"));
    }
  }
  return out;
}

absl::StatusOr<JobStateTimeLimitAction> AsTimeLimitAction(const Reader& r, const Json& v,
                                                          const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(v, path, {"reason", "state", "maxTimeSeconds", "action"}));
  for (const char* key : {"reason", "state", "maxTimeSeconds", "action"}) {
    QS_RETURN_IF_ERROR(r.Require(v, path, key));
  }
  JobStateTimeLimitAction out;
  QS_RETURN_IF_ERROR(Get(r, v, path, "reason", AsString, &out.reason));
  if (out.reason.empty()) return r.Error(path.Key("reason"), "must not be empty");
  QS_RETURN_IF_ERROR(CheckOneOf(r, v, path, "state", {"RUNNABLE"}));
  out.state = v["state"].get<std::string>();
  QS_RETURN_IF_ERROR(Get(r, v, path, "maxTimeSeconds", AsInt32, &out.max_time_seconds));
  if (out.max_time_seconds < 600 || out.max_time_seconds > 86400) {
    return r.Error(path.Key("maxTimeSeconds"),
                   absl::StrCat("must be between 600 and 86400, got ", out.max_time_seconds));
  }
  // CANCEL is a valid value of the API's enum, but not on these queues: "For
  // job queues connected to a SAGEMAKER_TRAINING service environment, the
  // only supported value is TERMINATE" (API reference, JobStateTimeLimitAction).
  if (const auto it = v.find("action"); it != v.end() && it->is_string() && it->get<std::string>() == "CANCEL") {
    return r.Error(path.Key("action"),
                   "CANCEL is not supported on a SAGEMAKER_TRAINING job queue (the only supported value is "
                   "TERMINATE)");
  }
  QS_RETURN_IF_ERROR(CheckOneOf(r, v, path, "action", {"TERMINATE"}));
  out.action = v["action"].get<std::string>();
  return out;
}

absl::StatusOr<JobQueue> AsJobQueue(const Reader& r, const Json& v, const Path& path) {
  QS_RETURN_IF_ERROR(r.CheckObject(
      v, path,
      {"jobQueueName", "jobQueueType", "priority", "state", "schedulingPolicyArn",
       "serviceEnvironmentOrder", "computeEnvironmentOrder", "jobStateTimeLimitActions", "tags"}));
  JobQueue out;
  QS_RETURN_IF_ERROR(r.Require(v, path, "jobQueueName"));
  QS_RETURN_IF_ERROR(Get(r, v, path, "jobQueueName", AsString, &out.name));
  QS_RETURN_IF_ERROR(CheckOneOf(r, v, path, "jobQueueType", {"SAGEMAKER_TRAINING"}));
  QS_RETURN_IF_ERROR(Get(r, v, path, "priority", AsInt32, &out.priority));
  // Accepted and ignored (the simulated queue is always ENABLED and bound to
  // the scenario's one environment and policy).
  std::optional<Toggle> ignored_state;
  QS_RETURN_IF_ERROR(Get(r, v, path, "state", AsToggle, &ignored_state));
  QS_RETURN_IF_ERROR(
      CheckType(r, v, path, "schedulingPolicyArn", Json::value_t::string, "a string"));
  QS_RETURN_IF_ERROR(
      CheckType(r, v, path, "serviceEnvironmentOrder", Json::value_t::array, "an array"));
  QS_RETURN_IF_ERROR(
      CheckType(r, v, path, "computeEnvironmentOrder", Json::value_t::array, "an array"));
  QS_RETURN_IF_ERROR(CheckTags(r, v, path));
  if (auto it = v.find("jobStateTimeLimitActions"); it != v.end()) {
    const Path p = path.Key("jobStateTimeLimitActions");
    if (!it->is_array()) return r.TypeError(p, "an array", *it);
    for (size_t i = 0; i < it->size(); ++i) {
      QS_ASSIGN_OR_RETURN(JobStateTimeLimitAction a, AsTimeLimitAction(r, (*it)[i], p.Index(i)));
      out.time_limit_actions.push_back(std::move(a));
    }
  }
  return out;
}

absl::StatusOr<Scenario> ParseScenarioImpl(std::string_view text, std::string_view source) {
  const Reader r(source);
  EventReader event_reader(r);
  DomBuilder builder("events", [&event_reader](size_t index, const Json& v) {
    return event_reader.Add(index, v);
  });
  TextResult parsed = ReadJsonText(text, builder);
  if (!parsed.ok) {
    if (!parsed.sink_status.ok()) return parsed.sink_status;
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(source), ": ", parsed.location, ": ", parsed.reason));
  }
  const Json& root = builder.root();
  const Path top;
  QS_RETURN_IF_ERROR(r.CheckObject(root, top,
                                   {"schedulingPolicy", "serviceEnvironment", "jobQueue",
                                    "quotaShares", "simulation", "events"}));
  for (const char* key : {"schedulingPolicy", "serviceEnvironment", "jobQueue"}) {
    QS_RETURN_IF_ERROR(r.Require(root, top, key));
  }
  Scenario s;
  s.source = std::string(source);
  QS_RETURN_IF_ERROR(Get(r, root, top, "schedulingPolicy", AsSchedulingPolicy, &s.scheduling_policy));
  QS_RETURN_IF_ERROR(
      Get(r, root, top, "serviceEnvironment", AsServiceEnvironment, &s.service_environment));
  QS_RETURN_IF_ERROR(Get(r, root, top, "jobQueue", AsJobQueue, &s.job_queue));
  QS_RETURN_IF_ERROR(Get(r, root, top, "simulation", AsKnobs, &s.knobs));
  if (std::string problem = CapacityModelEndsProblem(s); !problem.empty()) {
    return r.Error(top.Key("simulation").Key("capacity"), problem);
  }
  if (auto it = root.find("quotaShares"); it != root.end()) {
    const Path p = top.Key("quotaShares");
    if (!it->is_array()) return r.TypeError(p, "an array", *it);
    s.events.reserve(it->size() + event_reader.events().size());
    for (size_t i = 0; i < it->size(); ++i) {
      ScenarioEvent e;
      QS_ASSIGN_OR_RETURN(e.request, AsCreateQuotaShare(r, (*it)[i], p.Index(i)));
      e.path = absl::StrCat("quotaShares[", i, "]");
      s.events.push_back(std::move(e));
    }
  }
  if (auto it = root.find("events"); it != root.end() && !builder.streamed()) {
    return r.TypeError(top.Key("events"), "an array", *it);
  }
  std::vector<ScenarioEvent>& events = event_reader.events();
  auto by_time = [](const ScenarioEvent& a, const ScenarioEvent& b) { return a.time < b.time; };
  if (!std::is_sorted(events.begin(), events.end(), by_time)) {
    std::stable_sort(events.begin(), events.end(), by_time);
  }
  s.events.reserve(s.events.size() + events.size());
  std::move(events.begin(), events.end(), std::back_inserter(s.events));
  s.submit_count = event_reader.submit_count();
  return s;
}

}  // namespace
}  // namespace qs::json_read

namespace qs {

using json_read::ParseScenarioImpl;
using json_text::Sanitize;

absl::StatusOr<Scenario> ParseScenario(std::string_view json_text, std::string_view source_name) {
  try {
    return ParseScenarioImpl(json_text, source_name);
  } catch (const std::exception& e) {  // a bug, or out of memory: never crash the caller
    return absl::InternalError(
        absl::StrCat(Sv(source_name), ": internal error while parsing: ", Sanitize(e.what())));
  }
}

absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        path, ": cannot open scenario file: ", std::generic_category().message(errno)));
  }
  std::string text;
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) text.append(buffer, n);
  bool failed = std::ferror(f) != 0;
  int error = errno;
  std::fclose(f);
  if (failed) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot read scenario file: ",
                                            std::generic_category().message(error)));
  }
  absl::StatusOr<Scenario> s = ParseScenario(text, path);
  if (!s.ok()) return s;
  QS_RETURN_IF_ERROR(LoadAvailabilityCsvs(*s, path));
  return s;
}

}  // namespace qs

