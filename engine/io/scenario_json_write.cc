// Scenario -> canonical JSON text (ScenarioToJson, engine/io/scenario_json.h):
// built with ordered_json so key order is fixed.
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/io/json_text.h"
#include "engine/io/knobs_json.h"
#include "engine/io/scenario_json.h"
#include "nlohmann/json.hpp"

namespace qs {
namespace {

using OrderedJson = nlohmann::ordered_json;
using json_text::kPayloadRequired;

std::string Dump(const OrderedJson& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/false, OrderedJson::error_handler_t::replace);
}

OrderedJson SecondsJson(SimTime ms) {
  if (ms % kMillisPerSecond == 0) return OrderedJson(ms / kMillisPerSecond);
  return OrderedJson(static_cast<double>(ms) / static_cast<double>(kMillisPerSecond));
}

OrderedJson LimitsJson(const std::vector<CapacityLimit>& limits) {
  OrderedJson out = OrderedJson::array();
  for (const CapacityLimit& l : limits) {
    OrderedJson e = OrderedJson::object();
    e["capacityUnit"] = l.capacity_unit;
    e["maxCapacity"] = l.max_capacity;
    out.push_back(std::move(e));
  }
  return out;
}

template <typename T>
void PutIf(OrderedJson& o, const char* key, const std::optional<T>& v) {
  if (v) o[key] = *v;
}

template <typename Request>
void PutShareConfig(OrderedJson& o, const Request& r) {
  if (r.capacity_limits) o["capacityLimits"] = LimitsJson(*r.capacity_limits);
  if (r.has_resource_sharing || r.strategy || r.borrow_limit) {
    OrderedJson rsc = OrderedJson::object();
    if (r.strategy) rsc["strategy"] = StrategyName(*r.strategy);
    PutIf(rsc, "borrowLimit", r.borrow_limit);
    o["resourceSharingConfiguration"] = std::move(rsc);
  }
  if (r.in_share_preemption) {
    o["preemptionConfiguration"] = {{"inSharePreemption", ToggleName(*r.in_share_preemption)}};
  }
  if (r.state) o["state"] = ToggleName(*r.state);
}

OrderedJson RequestJson(const CreateQuotaShareRequest& r) {
  OrderedJson o = OrderedJson::object();
  PutIf(o, "quotaShareName", r.quota_share_name);
  PutIf(o, "jobQueue", r.job_queue);
  PutShareConfig(o, r);
  return o;
}

OrderedJson RequestJson(const UpdateQuotaShareRequest& r) {
  OrderedJson o = OrderedJson::object();
  PutIf(o, "quotaShareArn", r.quota_share_arn);
  PutShareConfig(o, r);
  return o;
}

OrderedJson RequestJson(const UpdateServiceEnvironmentRequest& r) {
  OrderedJson o = OrderedJson::object();
  PutIf(o, "serviceEnvironment", r.service_environment);
  if (r.state) o["state"] = ToggleName(*r.state);
  if (r.capacity_limits) o["capacityLimits"] = LimitsJson(*r.capacity_limits);
  return o;
}

OrderedJson RequestJson(const SubmitServiceJobRequest& r) {
  OrderedJson o = OrderedJson::object();
  PutIf(o, "jobName", r.job_name);
  PutIf(o, "jobQueue", r.job_queue);
  PutIf(o, "serviceJobType", r.service_job_type);
  PutIf(o, "quotaShareName", r.quota_share_name);
  PutIf(o, "shareIdentifier", r.share_identifier);
  PutIf(o, "schedulingPriority", r.scheduling_priority);
  if (r.retry_attempts) o["retryStrategy"] = {{"attempts", *r.retry_attempts}};
  if (r.attempt_duration_seconds) {
    o["timeoutConfig"] = {{"attemptDurationSeconds", *r.attempt_duration_seconds}};
  }
  if (r.preemption_retries) {
    o["preemptionConfiguration"] = {{"preemptionRetriesBeforeTermination", *r.preemption_retries}};
  }
  if (r.payload_error.empty()) {
    OrderedJson config = OrderedJson::object();
    config["InstanceType"] = r.instance_type;
    config["InstanceCount"] = r.instance_count;
    OrderedJson payload = OrderedJson::object();
    payload["ResourceConfig"] = std::move(config);
    if (r.max_runtime_seconds) payload["StoppingCondition"] = {{"MaxRuntimeInSeconds", *r.max_runtime_seconds}};
    o["serviceRequestPayload"] = std::move(payload);
  } else if (r.payload_error != kPayloadRequired || !r.payload_raw.empty()) {
    o["serviceRequestPayload"] = r.payload_raw;
  }
  return o;
}

OrderedJson RequestJson(const UpdateServiceJobRequest& r) {
  OrderedJson o = OrderedJson::object();
  PutIf(o, "jobId", r.job_id);
  PutIf(o, "schedulingPriority", r.scheduling_priority);
  return o;
}

OrderedJson RequestJson(const TerminateServiceJobRequest& r) {
  OrderedJson o = OrderedJson::object();
  PutIf(o, "jobId", r.job_id);
  PutIf(o, "reason", r.reason);
  return o;
}

OrderedJson RequestJson(const GetJobQueueSnapshotRequest& r) {
  OrderedJson o = OrderedJson::object();
  PutIf(o, "jobQueue", r.job_queue);
  return o;
}

OrderedJson RequestJson(const DeleteQuotaShareRequest& r) {
  OrderedJson o = OrderedJson::object();
  PutIf(o, "quotaShareArn", r.quota_share_arn);
  return o;
}

OrderedJson ActionsJson(const std::vector<JobStateTimeLimitAction>& list) {
  OrderedJson actions = OrderedJson::array();
  for (const JobStateTimeLimitAction& a : list) {
    OrderedJson e = OrderedJson::object();
    e["reason"] = a.reason;
    e["state"] = a.state;
    e["maxTimeSeconds"] = a.max_time_seconds;
    e["action"] = a.action;
    actions.push_back(std::move(e));
  }
  return actions;
}

OrderedJson RequestJson(const UpdateJobQueueRequest& r) {
  OrderedJson o = OrderedJson::object();
  PutIf(o, "jobQueue", r.job_queue);
  if (r.state) o["state"] = ToggleName(*r.state);
  PutIf(o, "priority", r.priority);
  PutIf(o, "schedulingPolicyArn", r.scheduling_policy_arn);
  if (r.time_limit_actions) o["jobStateTimeLimitActions"] = ActionsJson(*r.time_limit_actions);
  return o;
}

OrderedJson RequestJson(const UpdateSchedulingPolicyRequest& r) {
  OrderedJson o = OrderedJson::object();
  PutIf(o, "arn", r.arn);
  if (r.has_quota_share_policy) o["quotaSharePolicy"] = OrderedJson{{"idleResourceAssignmentStrategy", "FIFO"}};
  if (r.has_fairshare_policy) o["fairsharePolicy"] = OrderedJson::object();
  return o;
}

OrderedJson EventJson(const ScenarioEvent& e) {
  OrderedJson o = OrderedJson::object();
  o["time"] = SecondsJson(e.time);
  o["action"] = ActionName(e.request);
  o["request"] = std::visit([](const auto& r) { return RequestJson(r); }, e.request);
  if (const auto* submit = std::get_if<SubmitServiceJobRequest>(&e.request)) {
    OrderedJson sim = OrderedJson::object();
    sim["runSeconds"] = SecondsJson(submit->run_time);
    sim["outcome"] = submit->outcome == JobOutcome::kSucceeded ? "SUCCEEDED" : "FAILED";
    if (submit->checkpoint_interval) sim["checkpointIntervalSeconds"] = SecondsJson(*submit->checkpoint_interval);
    o["simulation"] = std::move(sim);
  }
  return o;
}

// k of a path "events[k]", or nullopt.
std::optional<size_t> EventIndex(std::string_view path) {
  constexpr std::string_view kPrefix = "events[";
  if (path.size() <= kPrefix.size() + 1 || path.substr(0, kPrefix.size()) != kPrefix ||
      path.back() != ']') {
    return std::nullopt;
  }
  std::string_view digits = path.substr(kPrefix.size(), path.size() - kPrefix.size() - 1);
  if (digits.size() > 18 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  size_t k = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    k = k * 10 + static_cast<size_t>(c - '0');
  }
  return k;
}

void AppendArray(std::string& out, const char* key, const std::vector<std::string>& items,
                 bool last) {
  absl::StrAppend(&out, "  \"", key, "\": [");
  for (size_t i = 0; i < items.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "\n    " : ",\n    ", items[i]);
  }
  absl::StrAppend(&out, items.empty() ? "]" : "\n  ]", last ? "\n" : ",\n");
}


}  // namespace

std::string ScenarioToJson(const Scenario& s) {
  OrderedJson policy = OrderedJson::object();
  policy["name"] = s.scheduling_policy.name;
  if (s.scheduling_policy.has_quota_share_policy) {
    policy["quotaSharePolicy"] = {{"idleResourceAssignmentStrategy", "FIFO"}};
  }
  if (s.scheduling_policy.has_fairshare_policy) policy["fairsharePolicy"] = OrderedJson::object();

  OrderedJson environment = OrderedJson::object();
  environment["serviceEnvironmentName"] = s.service_environment.name;
  environment["serviceEnvironmentType"] = "SAGEMAKER_TRAINING";
  environment["state"] = ToggleName(s.service_environment.state);
  environment["capacityLimits"] = LimitsJson(s.service_environment.capacity_limits);

  OrderedJson queue = OrderedJson::object();
  queue["jobQueueName"] = s.job_queue.name;
  queue["jobQueueType"] = "SAGEMAKER_TRAINING";
  queue["priority"] = s.job_queue.priority;
  queue["jobStateTimeLimitActions"] = ActionsJson(s.job_queue.time_limit_actions);

  const OrderedJson knobs = KnobsJson(s.knobs);

  // Leading CreateQuotaShare events at time 0 from `quotaShares` go back there.
  size_t shares = 0;
  while (shares < s.events.size() && s.events[shares].time == 0 &&
         std::holds_alternative<CreateQuotaShareRequest>(s.events[shares].request) &&
         s.events[shares].path.rfind("quotaShares[", 0) == 0) {
    ++shares;
  }
  std::vector<std::string> share_lines;
  share_lines.reserve(shares);
  for (size_t i = 0; i < shares; ++i) {
    share_lines.push_back(Dump(RequestJson(std::get<CreateQuotaShareRequest>(s.events[i].request))));
  }
  // The other events in file order when their paths are a permutation of
  // events[0..m-1] (so that re-parsing gives the same paths and order).
  const size_t m = s.events.size() - shares;
  std::vector<const ScenarioEvent*> order(m, nullptr);
  bool permutation = true;
  for (size_t i = 0; i < m && permutation; ++i) {
    std::optional<size_t> k_index = EventIndex(s.events[shares + i].path);
    if (!k_index || *k_index >= m || order[*k_index] != nullptr) {
      permutation = false;
    } else {
      order[*k_index] = &s.events[shares + i];
    }
  }
  if (!permutation) {
    for (size_t i = 0; i < m; ++i) order[i] = &s.events[shares + i];
  }
  std::vector<std::string> event_lines;
  event_lines.reserve(m);
  for (const ScenarioEvent* e : order) event_lines.push_back(Dump(EventJson(*e)));

  std::string out = "{\n";
  absl::StrAppend(&out, "  \"schedulingPolicy\": ", Dump(policy), ",\n");
  absl::StrAppend(&out, "  \"serviceEnvironment\": ", Dump(environment), ",\n");
  absl::StrAppend(&out, "  \"jobQueue\": ", Dump(queue), ",\n");
  AppendArray(out, "quotaShares", share_lines, /*last=*/false);
  absl::StrAppend(&out, "  \"simulation\": ", Dump(knobs), ",\n");
  AppendArray(out, "events", event_lines, /*last=*/true);
  out += "}\n";
  return out;
}

OrderedJson KnobsJson(const Knobs& k) {
  OrderedJson knobs = OrderedJson::object();
  knobs["submitLatencySeconds"] = SecondsJson(k.submit_latency);
  knobs["provisionSeconds"] = SecondsJson(k.provision);
  knobs["downloadSeconds"] = SecondsJson(k.download);
  knobs["schedulingIntervalSeconds"] = SecondsJson(k.scheduling_interval);
  knobs["preemptionDrainSeconds"] = SecondsJson(k.preemption_drain);
  knobs["shareOrder"] = ShareOrderName(k.share_order);
  knobs["victimOrder"] = VictimOrderName(k.victim_order);
  knobs["backfill"] = k.backfill;
  knobs["unassignedCapacity"] = UnassignedCapacityName(k.unassigned_capacity);
  knobs["entitledCapacity"] = EntitledCapacityName(k.entitled_capacity);
  knobs["victimReturn"] = VictimReturnName(k.victim_return);
  // Written only when set, so that the scenarios and summaries of runs that
  // do not use it keep their bytes.
  if (k.time_limit_clock != TimeLimitClock::kFromReason) knobs["timeLimitClock"] = TimeLimitClockName(k.time_limit_clock);
  if (k.checkpoint_interval) knobs["checkpointIntervalSeconds"] = SecondsJson(*k.checkpoint_interval);
  if (k.horizon) knobs["horizonSeconds"] = SecondsJson(*k.horizon);
  if (k.capacity != CapacityModel{}) {
    OrderedJson capacity = OrderedJson::object();
    capacity["seed"] = k.capacity.seed;
    capacity["errorSeconds"] = SecondsJson(k.capacity.error_delay);
    OrderedJson types = OrderedJson::object();
    for (const TypeCapacity& c : k.capacity.types) {
      OrderedJson t = OrderedJson::object();
      t["failureProbability"] = c.failure_probability;
      if (!c.availability_csv.empty()) {
        t["availabilityCsv"] = c.availability_csv;
      } else if (!c.availability.empty()) {
        OrderedJson steps = OrderedJson::array();
        for (const AvailabilityStep& a : c.availability) {
          steps.push_back(OrderedJson{{"atSeconds", SecondsJson(a.at)}, {"instances", a.instances}});
        }
        t["availability"] = std::move(steps);
      }
      types[c.instance_type] = std::move(t);
    }
    capacity["instanceTypes"] = std::move(types);
    knobs["capacity"] = std::move(capacity);
  }
  if (k.latencies != LatencyModel{}) {
    auto dist = [](const LatencyDistribution& d) {
      OrderedJson o = OrderedJson::object();
      o["distribution"] = DistributionName(d.kind);
      if (d.kind == Distribution::kConstant) {
        o["seconds"] = SecondsJson(d.a);
      } else if (d.kind == Distribution::kUniform) {
        o["minSeconds"] = SecondsJson(d.a);
        o["maxSeconds"] = SecondsJson(d.max);
      } else {
        o["medianSeconds"] = SecondsJson(d.median);
        o["sigma"] = d.sigma;
        o["maxSeconds"] = SecondsJson(d.max);
      }
      return o;
    };
    OrderedJson latencies = OrderedJson::object();
    latencies["seed"] = k.latencies.seed;
    OrderedJson types = OrderedJson::object();
    for (const TypeLatencies& t : k.latencies.types) {
      OrderedJson o = OrderedJson::object();
      if (t.provision) o["provisionSeconds"] = dist(*t.provision);
      if (t.download) o["downloadSeconds"] = dist(*t.download);
      if (t.drain) o["preemptionDrainSeconds"] = dist(*t.drain);
      types[t.instance_type] = std::move(o);
    }
    latencies["instanceTypes"] = std::move(types);
    knobs["latencies"] = std::move(latencies);
  }
  return knobs;
}

}  // namespace qs
