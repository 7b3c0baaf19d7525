#include "engine/trace/policy.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "engine/io/capacity_csv.h"
#include "engine/io/scenario_json.h"
#include "engine/util/strings.h"
#include "nlohmann/json.hpp"

namespace qs::trace {
namespace {

using Json = nlohmann::ordered_json;

absl::Status Error(std::string_view source, std::string_view path, std::string_view msg) {
  return absl::InvalidArgumentError(absl::StrCat(Sv(source), ": ", Sv(path), ": ", Sv(msg)));
}

// The shared parts of every standard policy: FIFO idle assignment, and jobs
// that can never fit their share are terminated after 10 minutes instead of
// blocking their share for ever (what an administrator would configure).
std::string Doc(std::string_view description, std::string_view shares, std::string_view replay = "") {
  std::string out = absl::StrCat(
      "{\n  \"description\": \"", Sv(description), "\",\n");
  if (!replay.empty()) absl::StrAppend(&out, "  \"replay\": ", Sv(replay), ",\n");
  absl::StrAppend(
      &out,
      "  \"schedulingPolicy\": {\"name\": \"replay\", \"quotaSharePolicy\": {\"idleResourceAssignmentStrategy\": \"FIFO\"}},\n"
      "  \"jobQueue\": {\"jobQueueName\": \"replay\", \"jobQueueType\": \"SAGEMAKER_TRAINING\", \"priority\": 1,\n"
      "               \"jobStateTimeLimitActions\": [\n"
      "                 {\"reason\": \"MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE\", \"state\": \"RUNNABLE\", \"maxTimeSeconds\": 600, \"action\": \"TERMINATE\"},\n"
      "                 {\"reason\": \"MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED\", \"state\": \"RUNNABLE\", \"maxTimeSeconds\": 600, \"action\": \"TERMINATE\"}]},\n"
      "  \"quotaShares\": [\n    ", Sv(shares), "\n  ],\n"
      "  \"simulation\": {\"preemptionDrainSeconds\": 20}\n}\n");
  return out;
}

std::string Template(std::string_view strategy, std::string_view borrow, std::string_view in_share) {
  return absl::StrCat("{\"quotaShareName\": \"*\", \"resourceSharingConfiguration\": {\"strategy\": \"",
                      Sv(strategy), "\"", borrow.empty() ? "" : absl::StrCat(", \"borrowLimit\": ", Sv(borrow)),
                      "}, \"preemptionConfiguration\": {\"inSharePreemption\": \"", Sv(in_share), "\"}}");
}

}  // namespace

absl::StatusOr<Policy> ParsePolicy(std::string_view json_text, std::string_view source, std::string name) {
  Json root = Json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return Error(source, "(document)", "not valid JSON");
  if (!root.is_object()) return Error(source, "(document)", "expected an object");
  Policy p;
  p.name = std::move(name);
  if (root.contains("events")) {
    return Error(source, "events", "a policy has no events (the trace gives them)");
  }
  if (auto it = root.find("description"); it != root.end()) {
    if (!it->is_string()) return Error(source, "description", "expected a string");
    p.description = it->get<std::string>();
    root.erase(it);
  }
  if (auto it = root.find("replay"); it != root.end()) {
    if (!it->is_object()) return Error(source, "replay", "expected an object");
    for (auto kv = it->begin(); kv != it->end(); ++kv) {
      if (kv.key() == "singleShare") {
        if (!kv->is_string() || kv->get<std::string>().empty()) {
          return Error(source, "replay.singleShare", "expected a share name");
        }
        p.single_share = kv->get<std::string>();
      } else if (kv.key() == "ignorePriority") {
        if (!kv->is_boolean()) return Error(source, "replay.ignorePriority", "expected true or false");
        p.ignore_priority = kv->get<bool>();
      } else {
        return Error(source, absl::StrCat("replay.", kv.key()),
                     "unknown key; expected one of: singleShare, ignorePriority");
      }
    }
    root.erase(it);
  }
  if (!root.contains("schedulingPolicy")) {
    root["schedulingPolicy"] = {{"name", "replay"},
                                {"quotaSharePolicy", {{"idleResourceAssignmentStrategy", "FIFO"}}}};
  }
  if (!root.contains("jobQueue")) {
    root["jobQueue"] = {{"jobQueueName", "replay"}, {"jobQueueType", "SAGEMAKER_TRAINING"}, {"priority", 1}};
  }
  bool env_limits = false;
  if (!root.contains("serviceEnvironment")) {
    root["serviceEnvironment"] = {{"serviceEnvironmentName", "replay"},
                                  {"serviceEnvironmentType", "SAGEMAKER_TRAINING"}};
  }
  if (root["serviceEnvironment"].is_object()) {
    env_limits = root["serviceEnvironment"].contains("capacityLimits");
    if (!env_limits) {
      root["serviceEnvironment"]["capacityLimits"] = {{{"capacityUnit", "placeholder"}, {"maxCapacity", 1}}};
    }
  }
  root["events"] = Json::array();
  absl::StatusOr<Scenario> sc = ParseScenario(root.dump(), source);
  if (!sc.ok()) return sc.status();
  if (absl::Status st = LoadAvailabilityCsvs(*sc, std::string(source)); !st.ok()) return st;
  p.config = std::move(*sc);
  if (!env_limits) p.config.service_environment.capacity_limits.clear();
  for (const ScenarioEvent& e : p.config.events) {
    const auto* share = std::get_if<CreateQuotaShareRequest>(&e.request);
    if (share == nullptr) continue;
    if (share->quota_share_name && *share->quota_share_name == kTemplateShareName) {
      if (p.has_template) return Error(source, e.path, "a second \"*\" template share");
      if (share->capacity_limits) {
        return Error(source, e.path, "the \"*\" template takes its limits from the mapping: no capacityLimits");
      }
      p.has_template = true;
      p.share_template = *share;
    } else {
      if (!share->quota_share_name) return Error(source, e.path, "quotaShareName is required in a policy");
      p.named_shares.push_back(*share);
    }
  }
  p.config.events.clear();
  return p;
}

absl::StatusOr<Policy> LoadPolicyFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open policy ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string name = std::filesystem::path(path).filename().string();
  if (name.size() > 5 && name.substr(name.size() - 5) == ".json") name.resize(name.size() - 5);
  return ParsePolicy(ss.str(), path, name);
}

const std::vector<std::pair<std::string, std::string>>& StandardPolicyDocuments() {
  static const auto* kDocs = new std::vector<std::pair<std::string, std::string>>{
      {"fifo-no-quota",
       Doc("Baseline without quotas: one share owning the whole environment, strict FIFO (priorities ignored).",
           "{\"quotaShareName\": \"all\", \"resourceSharingConfiguration\": {\"strategy\": \"RESERVE\"}, "
           "\"preemptionConfiguration\": {\"inSharePreemption\": \"DISABLED\"}}",
           "{\"singleShare\": \"all\", \"ignorePriority\": true}")},
      {"static-reserve",
       Doc("Static partition: every share RESERVE at its derived limit; nothing is lent.",
           Template("RESERVE", "", "DISABLED"))},
      {"lend", Doc("Every share LEND: idle capacity is lent but nobody can borrow (so nothing is lent out).",
                   Template("LEND", "", "DISABLED"))},
      {"borrow-0", Doc("Every share LEND_AND_BORROW with borrowLimit 0%.", Template("LEND_AND_BORROW", "0", "DISABLED"))},
      {"borrow-50", Doc("Every share LEND_AND_BORROW with borrowLimit 50%.", Template("LEND_AND_BORROW", "50", "DISABLED"))},
      {"borrow-100", Doc("Every share LEND_AND_BORROW with borrowLimit 100%.", Template("LEND_AND_BORROW", "100", "DISABLED"))},
      {"borrow-200", Doc("Every share LEND_AND_BORROW with borrowLimit 200%.", Template("LEND_AND_BORROW", "200", "DISABLED"))},
      {"borrow-unlimited",
       Doc("Every share LEND_AND_BORROW with unlimited borrowing (borrowLimit -1).",
           Template("LEND_AND_BORROW", "-1", "DISABLED"))},
      {"borrow-100-inshare",
       Doc("Every share LEND_AND_BORROW with borrowLimit 100% and in-share preemption ENABLED.",
           Template("LEND_AND_BORROW", "100", "ENABLED"))},
  };
  return *kDocs;
}

absl::StatusOr<std::vector<Policy>> StandardPolicies() {
  std::vector<Policy> out;
  for (const auto& [name, doc] : StandardPolicyDocuments()) {
    absl::StatusOr<Policy> p = ParsePolicy(doc, absl::StrCat("standard:", name), name);
    if (!p.ok()) return p.status();
    out.push_back(std::move(*p));
  }
  return out;
}

}  // namespace qs::trace
