// File: engine/io/scenario_json_accepted_test.cc
//
// Requests AWS would reject that must still parse (validation.h rejects them
// later, with a logged line), each with the data it must store.
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
#include "engine/io/scenario_json_test_docs.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace qs {
namespace {

using namespace ::qs::json_test_docs;  // NOLINT: the shared test documents

struct AcceptedCase {
  std::string name;
  std::string text;
  std::function<void(const Scenario&)> check;
};

std::vector<AcceptedCase> AcceptedCases() {
  return {
      {"ShareMaxCapacityZeroIsStored",
       Mutated([](Json& j) { j["quotaShares"][0]["capacityLimits"][0]["maxCapacity"] = 0; }),
       [](const Scenario& s) {
         const auto& r = std::get<CreateQuotaShareRequest>(s.events[0].request);
         EXPECT_EQ(r.capacity_limits->at(0).max_capacity, 0);
       }},
      {"ShareLimitEntryWithoutFieldsIsStoredEmpty",
       Mutated([](Json& j) { j["quotaShares"][0]["capacityLimits"] = {Json::object()}; }),
       [](const Scenario& s) {
         const auto& r = std::get<CreateQuotaShareRequest>(s.events[0].request);
         EXPECT_EQ(r.capacity_limits, (std::vector<CapacityLimit>{{"", 0}}));
       }},
      {"Priority10000IsStored",
       Mutated([](Json& j) { j["events"][0]["request"]["schedulingPriority"] = 10000; }),
       [](const Scenario& s) { EXPECT_EQ(SubmitAt(s, kFirstSubmit).scheduling_priority, 10000); }},
      {"NegativePriorityIsStored",
       Mutated([](Json& j) { j["events"][1]["request"]["schedulingPriority"] = -1; }),
       [](const Scenario& s) {
         EXPECT_EQ(std::get<UpdateServiceJobRequest>(s.events[2].request).scheduling_priority, -1);
       }},
      {"IntegralFloatIsAnInteger",
       Mutated([](Json& j) { j["events"][0]["request"]["schedulingPriority"] = 3.0; }),
       [](const Scenario& s) { EXPECT_EQ(SubmitAt(s, kFirstSubmit).scheduling_priority, 3); }},
      {"Int32ExtremesAreStored",
       Mutated([](Json& j) {
         j["events"][0]["request"]["schedulingPriority"] = 2147483647;
         j["events"][0]["request"]["retryStrategy"]["attempts"] = -2147483648;
       }),
       [](const Scenario& s) {
         EXPECT_EQ(SubmitAt(s, kFirstSubmit).scheduling_priority, 2147483647);
         EXPECT_EQ(SubmitAt(s, kFirstSubmit).retry_attempts, -2147483648);
       }},
      {"BorrowLimitBelowMinusOneAndAttemptsZeroAreStored",
       Mutated([](Json& j) {
         j["quotaShares"][0]["resourceSharingConfiguration"]["borrowLimit"] = -5;
         j["events"][0]["request"]["retryStrategy"]["attempts"] = 0;
       }),
       [](const Scenario& s) {
         EXPECT_EQ(std::get<CreateQuotaShareRequest>(s.events[0].request).borrow_limit, -5);
         EXPECT_EQ(SubmitAt(s, kFirstSubmit).retry_attempts, 0);
       }},
      {"TwentyOneSharesAreStored",
       Mutated([](Json& j) {
         Json share = j["quotaShares"][0];
         j["quotaShares"] = Json::array();
         for (int i = 0; i < 21; ++i) {
           share["quotaShareName"] = "S" + std::to_string(i);
           j["quotaShares"].push_back(share);
         }
       }),
       [](const Scenario& s) {
         ASSERT_EQ(s.events.size(), 24u);
         EXPECT_EQ(s.events[20].path, "quotaShares[20]");
         EXPECT_EQ(std::get<CreateQuotaShareRequest>(s.events[20].request).quota_share_name, "S20");
       }},
      {"DuplicateShareNamesAreStored",
       Mutated([](Json& j) { j["quotaShares"].push_back(j["quotaShares"][0]); }),
       [](const Scenario& s) {
         EXPECT_EQ(std::get<CreateQuotaShareRequest>(s.events[0].request).quota_share_name, "QS1");
         EXPECT_EQ(std::get<CreateQuotaShareRequest>(s.events[1].request).quota_share_name, "QS1");
       }},
      {"MissingShareFieldsAreStoredAbsent",
       Mutated([](Json& j) { j["quotaShares"][0] = Json::object(); }),
       [](const Scenario& s) {
         EXPECT_EQ(std::get<CreateQuotaShareRequest>(s.events[0].request), CreateQuotaShareRequest{});
       }},
      {"EmptySharingConfigIsPresentWithoutStrategy",
       Mutated([](Json& j) { j["quotaShares"][0]["resourceSharingConfiguration"] = Json::object(); }),
       [](const Scenario& s) {
         const auto& r = std::get<CreateQuotaShareRequest>(s.events[0].request);
         EXPECT_TRUE(r.has_resource_sharing);
         EXPECT_EQ(r.strategy, std::nullopt);
       }},
      {"MissingSubmitFieldsAreStoredAbsent",
       Mutated([](Json& j) { j["events"][0]["request"] = Json::object(); }),
       [](const Scenario& s) {
         const SubmitServiceJobRequest& r = SubmitAt(s, kFirstSubmit);
         EXPECT_EQ(r.job_name, std::nullopt);
         EXPECT_EQ(r.quota_share_name, std::nullopt);
         EXPECT_EQ(r.payload_error, "serviceRequestPayload is required");
         EXPECT_EQ(r.payload_raw, "");
       }},
      {"ShareIdentifierIsStored",
       Mutated([](Json& j) { j["events"][0]["request"]["shareIdentifier"] = "blue"; }),
       [](const Scenario& s) { EXPECT_EQ(SubmitAt(s, kFirstSubmit).share_identifier, "blue"); }},
      {"BadPayloadStringIsStored",
       Mutated([](Json& j) { j["events"][0]["request"]["serviceRequestPayload"] = "not json"; }),
       [](const Scenario& s) {
         const SubmitServiceJobRequest& r = SubmitAt(s, kFirstSubmit);
         EXPECT_EQ(r.payload_error,
                   "serviceRequestPayload is not valid JSON: line 1, column 2: syntax error while "
                   "parsing value - invalid literal; last read: 'no'");
         EXPECT_EQ(r.payload_raw, "not json");
         EXPECT_EQ(r.instance_count, 0);
       }},
      {"DeeplyNestedPayloadStringIsStored",
       Mutated([](Json& j) {
         j["events"][0]["request"]["serviceRequestPayload"] = std::string(100000, '[');
       }),
       [](const Scenario& s) {
         EXPECT_EQ(SubmitAt(s, kFirstSubmit).payload_error,
                   "serviceRequestPayload is not valid JSON: line 1, column 65: nesting deeper "
                   "than 64 levels");
       }},
      {"PayloadNotAnObject",
       Mutated([](Json& j) { j["events"][0]["request"]["serviceRequestPayload"] = "[1]"; }),
       [](const Scenario& s) {
         EXPECT_EQ(SubmitAt(s, kFirstSubmit).payload_error,
                   "serviceRequestPayload must be a JSON object");
       }},
      {"PayloadWithoutResourceConfig",
       Mutated([](Json& j) {
         j["events"][2]["request"]["serviceRequestPayload"] = {{"TrainingJobName", "x"}};
       }),
       [](const Scenario& s) {
         EXPECT_EQ(SubmitAt(s, 3).payload_error, "serviceRequestPayload.ResourceConfig is required");
         EXPECT_EQ(SubmitAt(s, 3).payload_raw, R"({"TrainingJobName":"x"})");
       }},
      {"PayloadWithInstanceGroups",
       Mutated([](Json& j) {
         j["events"][2]["request"]["serviceRequestPayload"]["ResourceConfig"]["InstanceGroups"] =
             Json::array();
       }),
       [](const Scenario& s) {
         EXPECT_PRED2(StartsWithPred, SubmitAt(s, 3).payload_error,
                     std::string("serviceRequestPayload.ResourceConfig.InstanceGroups"));
       }},
      {"PayloadMaxRuntimeIsStoredAndWritten",
       Mutated([](Json& j) {
         j["events"][2]["request"]["serviceRequestPayload"]["StoppingCondition"] = {{"MaxRuntimeInSeconds", 3600}};
       }),
       [](const Scenario& s) {
         EXPECT_EQ(SubmitAt(s, 3).max_runtime_seconds, 3600);
         EXPECT_EQ(SubmitAt(s, 3).payload_error, "");
         EXPECT_NE(ScenarioToJson(s).find(R"("StoppingCondition":{"MaxRuntimeInSeconds":3600})"), std::string::npos);
       }},
      {"PayloadMaxRuntimeBelowOneIsSageMakersToReject",
       Mutated([](Json& j) {
         j["events"][2]["request"]["serviceRequestPayload"]["StoppingCondition"] = {{"MaxRuntimeInSeconds", 0}};
       }),
       [](const Scenario& s) {
         EXPECT_EQ(SubmitAt(s, 3).payload_error,
                   "serviceRequestPayload.StoppingCondition.MaxRuntimeInSeconds must be an integer from 1 to "
                   "2147483647");
       }},
      {"PayloadStoppingConditionNotAnObject",
       Mutated([](Json& j) { j["events"][2]["request"]["serviceRequestPayload"]["StoppingCondition"] = 5; }),
       [](const Scenario& s) {
         EXPECT_EQ(SubmitAt(s, 3).payload_error, "serviceRequestPayload.StoppingCondition must be an object");
       }},
      {"PayloadWithoutInstanceType",
       Mutated([](Json& j) {
         j["events"][2]["request"]["serviceRequestPayload"]["ResourceConfig"].erase("InstanceType");
       }),
       [](const Scenario& s) {
         EXPECT_EQ(SubmitAt(s, 3).payload_error,
                   "serviceRequestPayload.ResourceConfig.InstanceType is required");
       }},
      {"PayloadInstanceCountAsString",
       Mutated([](Json& j) {
         j["events"][2]["request"]["serviceRequestPayload"]["ResourceConfig"]["InstanceCount"] = "2";
       }),
       [](const Scenario& s) {
         EXPECT_EQ(SubmitAt(s, 3).payload_error,
                   "serviceRequestPayload.ResourceConfig.InstanceCount must be an integer");
       }},
      {"PayloadInstanceCountZeroIsStored",
       Mutated([](Json& j) {
         j["events"][2]["request"]["serviceRequestPayload"]["ResourceConfig"]["InstanceCount"] = 0;
       }),
       [](const Scenario& s) {
         EXPECT_EQ(SubmitAt(s, 3).payload_error, "");
         EXPECT_EQ(SubmitAt(s, 3).instance_count, 0);
       }},
      {"UnknownKeysInsidePayloadAreAllowed",
       Mutated([](Json& j) {
         Json& p = j["events"][2]["request"]["serviceRequestPayload"];
         p["AlgorithmSpecification"] = {{"TrainingImage", "img"}};
         p["ResourceConfig"]["VolumeSizeInGB"] = 30;
         p["ResourceConfig"]["InstanceType"] = "ml.p4d.24xlarge";
         p["ResourceConfig"]["InstanceCount"] = 4;
       }),
       [](const Scenario& s) {
         EXPECT_EQ(SubmitAt(s, 3).payload_error, "");
         EXPECT_EQ(SubmitAt(s, 3).instance_type, "ml.p4d.24xlarge");
         EXPECT_EQ(SubmitAt(s, 3).instance_count, 4);
         EXPECT_EQ(SubmitAt(s, 3).payload_raw, "");
       }},
      {"AcceptedButIgnoredApiKeys",
       Mutated([](Json& j) {
         j["jobQueue"]["state"] = "ENABLED";
         j["jobQueue"]["schedulingPolicyArn"] = "arn:aws:batch:us-east-1:1:scheduling-policy/sp";
         j["jobQueue"]["serviceEnvironmentOrder"] = {{{"order", 1}, {"serviceEnvironment", "se"}}};
         j["jobQueue"]["tags"] = {{"team", "ml"}};
         j["serviceEnvironment"]["tags"] = {{"team", "ml"}};
         j["schedulingPolicy"]["tags"] = Json::object();
         j["events"][0]["request"]["clientToken"] = "tok";
         j["events"][0]["request"]["tags"] = {{"k", "v"}};
         j["events"][0]["request"]["retryStrategy"]["evaluateOnExit"] = Json::array();
         j["quotaShares"][0]["jobQueue"] = "q";
         j["quotaShares"][0]["tags"] = {{"k", "v"}};
       }),
       [](const Scenario& s) {
         EXPECT_EQ(std::get<CreateQuotaShareRequest>(s.events[0].request).job_queue, "q");
       }},
      {"TimesRoundToTheNearestMillisecond",
       Mutated([](Json& j) {
         j["events"][0]["time"] = 0.0004;
         j["events"][1]["time"] = 12.3456;
         j["events"][0]["simulation"]["runSeconds"] = 1.5;
         j["simulation"]["schedulingIntervalSeconds"] = 0;
         j["simulation"]["horizonSeconds"] = 1e12;
         j["simulation"]["submitLatencySeconds"] = 0.001;
       }),
       [](const Scenario& s) {
         EXPECT_EQ(s.events[1].time, 0);
         EXPECT_EQ(s.events[2].time, 12'346);
         EXPECT_EQ(SubmitAt(s, kFirstSubmit).run_time, 1'500);
         EXPECT_EQ(s.knobs.scheduling_interval, 0);
         EXPECT_EQ(s.knobs.horizon, kMaxSimTime);
         EXPECT_EQ(s.knobs.submit_latency, 1);
       }},
      {"EventsAreStablySortedByTimeAfterTheShares",
       Mutated([](Json& j) {
         j["events"][0]["time"] = 70;  // ties with events[2]; keeps file order
         j["events"][1]["time"] = 5;
       }),
       [](const Scenario& s) {
         ASSERT_EQ(s.events.size(), 4u);
         EXPECT_EQ(s.events[0].path, "quotaShares[0]");
         EXPECT_EQ(s.events[1].path, "events[1]");
         EXPECT_EQ(s.events[2].path, "events[0]");
         EXPECT_EQ(s.events[3].path, "events[2]");
       }},
      {"QuotaSharesAndEventsAreOptional",
       Mutated([](Json& j) {
         j.erase("quotaShares");
         j.erase("events");
         j.erase("simulation");
       }),
       [](const Scenario& s) {
         EXPECT_TRUE(s.events.empty());
         EXPECT_EQ(s.submit_count, 0);
         EXPECT_EQ(s.knobs, Knobs{});
       }},
      {"JobsWithoutNamesAreNotDuplicates",
       Mutated([](Json& j) {
         j["events"][0]["request"].erase("jobName");
         j["events"][2]["request"].erase("jobName");
       }),
       [](const Scenario& s) { EXPECT_EQ(s.submit_count, 2); }},
  };
}

class AcceptedTest : public ::testing::TestWithParam<AcceptedCase> {};

TEST_P(AcceptedTest, ParsesWithTheDataStored) {
  const AcceptedCase& c = GetParam();
  absl::StatusOr<Scenario> s = ParseScenario(c.text, kSource);
  ASSERT_TRUE(s.ok()) << s.status();
  c.check(*s);
}

INSTANTIATE_TEST_SUITE_P(ScenarioJson, AcceptedTest, ::testing::ValuesIn(AcceptedCases()),
                         [](const ::testing::TestParamInfo<AcceptedCase>& param_info) {
                           return param_info.param.name;
                         });

}  // namespace
}  // namespace qs
