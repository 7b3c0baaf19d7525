// File: engine/io/scenario_json_test_docs.h
//
// Documents shared by the scenario parser's tests (scenario_json_test.cc,
// scenario_json_accepted_test.cc): a small valid base document to mutate.
#ifndef QS_ENGINE_IO_SCENARIO_JSON_TEST_DOCS_H_
#define QS_ENGINE_IO_SCENARIO_JSON_TEST_DOCS_H_

#include "engine/io/scenario_json.h"

#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace qs::json_test_docs {

using Json = nlohmann::json;

inline constexpr char kSource[] = "bad.json";

inline bool StartsWithPred(const std::string& s, const std::string& prefix) {
  return absl::StartsWith(s, prefix);
}
inline bool ContainsPred(const std::string& s, const std::string& part) { return absl::StrContains(s, part); }

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string NotebookPath() { return std::string(QS_SHARED_DIR) + "/scenarios/notebook-example.json"; }

// A small valid scenario every malformed case starts from.
inline Json BaseDoc() {
  return Json::parse(R"json({
    "schedulingPolicy": {"name": "sp", "quotaSharePolicy": {"idleResourceAssignmentStrategy": "FIFO"}},
    "serviceEnvironment": {"serviceEnvironmentName": "se", "serviceEnvironmentType": "SAGEMAKER_TRAINING",
                           "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 3}]},
    "jobQueue": {"jobQueueName": "q", "jobQueueType": "SAGEMAKER_TRAINING", "priority": 1,
                 "jobStateTimeLimitActions": [{"reason": "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE",
                                               "state": "RUNNABLE", "maxTimeSeconds": 600, "action": "TERMINATE"}]},
    "quotaShares": [
      {"quotaShareName": "QS1", "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
       "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": 200},
       "preemptionConfiguration": {"inSharePreemption": "ENABLED"}}
    ],
    "simulation": {"preemptionDrainSeconds": 20},
    "events": [
      {"time": 0, "action": "SubmitServiceJob",
       "request": {"jobName": "a", "quotaShareName": "QS1", "schedulingPriority": 3,
                   "retryStrategy": {"attempts": 2},
                   "serviceRequestPayload": "{\"ResourceConfig\":{\"InstanceType\":\"ml.g5.xlarge\",\"InstanceCount\":1}}"},
       "simulation": {"runSeconds": 300}},
      {"time": 60, "action": "UpdateServiceJob", "request": {"jobId": "a", "schedulingPriority": 4}},
      {"time": 70, "action": "SubmitServiceJob",
       "request": {"jobName": "b", "quotaShareName": "QS1",
                   "serviceRequestPayload": {"ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 1}}},
       "simulation": {"runSeconds": 10}}
    ]
  })json");
}

inline std::string Mutated(const std::function<void(Json&)>& mutate) {
  Json j = BaseDoc();
  mutate(j);
  return j.dump();
}

inline const SubmitServiceJobRequest& SubmitAt(const Scenario& s, size_t i) {
  return std::get<SubmitServiceJobRequest>(s.events.at(i).request);
}

// Scenario.events of BaseDoc(): [quotaShares[0], events[0], events[1], events[2]].
inline constexpr size_t kFirstSubmit = 1;

}  // namespace qs::json_test_docs

#endif  // QS_ENGINE_IO_SCENARIO_JSON_TEST_DOCS_H_
