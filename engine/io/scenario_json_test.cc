// File: engine/io/scenario_json_test.cc
//
// Tests of the scenario parser and writer (scenario_json.h): the shared
// notebook example, one case per kind of malformed document (each asserting
// the JSON path of the message), requests AWS would reject that must still
// parse (validation.h rejects them later), and the writer's round trip.
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

TEST(ParseScenarioTest, BaseDocumentParses) {
  absl::StatusOr<Scenario> s = ParseScenario(BaseDoc().dump(), kSource);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->events.size(), 4u);
  EXPECT_EQ(s->submit_count, 2);
}

TEST(ParseScenarioTest, NotebookExampleParsesWithItsValues) {
  absl::StatusOr<Scenario> s = LoadScenarioFile(NotebookPath());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->source, NotebookPath());
  EXPECT_EQ(s->scheduling_policy.name, "quota-policy");
  EXPECT_TRUE(s->scheduling_policy.has_quota_share_policy);
  EXPECT_FALSE(s->scheduling_policy.has_fairshare_policy);
  EXPECT_EQ(s->service_environment.name, "ml-g5-xl-se");
  EXPECT_EQ(s->service_environment.state, Toggle::kEnabled);
  ASSERT_EQ(s->service_environment.capacity_limits.size(), 1u);
  EXPECT_EQ(s->service_environment.capacity_limits[0], (CapacityLimit{"ml.g5.xlarge", 3}));
  EXPECT_EQ(s->job_queue.name, "ml-g5-xl-queue");
  EXPECT_EQ(s->job_queue.priority, 1);
  EXPECT_TRUE(s->job_queue.time_limit_actions.empty());

  // Knobs: preemptionDrainSeconds given, everything else default.
  Knobs want_knobs;
  want_knobs.preemption_drain = 20'000;
  EXPECT_EQ(s->knobs, want_knobs);

  // 3 shares then 6 events.
  ASSERT_EQ(s->events.size(), 9u);
  EXPECT_EQ(s->submit_count, 4);
  const char* const want_paths[] = {"quotaShares[0]", "quotaShares[1]", "quotaShares[2]",
                                    "events[0]",      "events[1]",      "events[2]",
                                    "events[3]",      "events[4]",      "events[5]"};
  const SimTime want_times[] = {0, 0, 0, 0, 0, 0, 60'000, 120'000, 130'000};
  const char* const want_actions[] = {"CreateQuotaShare", "CreateQuotaShare",   "CreateQuotaShare",
                                      "SubmitServiceJob", "SubmitServiceJob",   "SubmitServiceJob",
                                      "SubmitServiceJob", "UpdateServiceJob",   "GetJobQueueSnapshot"};
  for (size_t i = 0; i < 9; ++i) {
    EXPECT_EQ(s->events[i].path, want_paths[i]);
    EXPECT_EQ(s->events[i].time, want_times[i]) << i;
    EXPECT_STREQ(ActionName(s->events[i].request), want_actions[i]) << i;
  }
  const auto& qs1 = std::get<CreateQuotaShareRequest>(s->events[0].request);
  EXPECT_EQ(qs1.quota_share_name, "QS1");
  EXPECT_EQ(qs1.capacity_limits, (std::vector<CapacityLimit>{{"ml.g5.xlarge", 1}}));
  EXPECT_TRUE(qs1.has_resource_sharing);
  EXPECT_EQ(qs1.strategy, Strategy::kLendAndBorrow);
  EXPECT_EQ(qs1.borrow_limit, 200);
  EXPECT_EQ(qs1.in_share_preemption, Toggle::kEnabled);
  EXPECT_EQ(qs1.state, Toggle::kEnabled);
  const auto& qs2 = std::get<CreateQuotaShareRequest>(s->events[1].request);
  EXPECT_EQ(qs2.strategy, Strategy::kLend);
  EXPECT_EQ(qs2.borrow_limit, std::nullopt);
  EXPECT_EQ(std::get<CreateQuotaShareRequest>(s->events[2].request).strategy, Strategy::kReserve);

  const SubmitServiceJobRequest& high = SubmitAt(*s, 3);
  EXPECT_EQ(high.job_name, "qs1_job_high");
  EXPECT_EQ(high.job_queue, "ml-g5-xl-queue");
  EXPECT_EQ(high.service_job_type, "SAGEMAKER_TRAINING");
  EXPECT_EQ(high.quota_share_name, "QS1");
  EXPECT_EQ(high.scheduling_priority, 3);
  EXPECT_EQ(high.payload_error, "");
  EXPECT_EQ(high.instance_type, "ml.g5.xlarge");
  EXPECT_EQ(high.instance_count, 1);
  EXPECT_EQ(high.run_time, 300'000);
  EXPECT_EQ(high.outcome, JobOutcome::kSucceeded);
  EXPECT_EQ(SubmitAt(*s, 6).quota_share_name, "QS2");

  const auto& update = std::get<UpdateServiceJobRequest>(s->events[7].request);
  EXPECT_EQ(update.job_id, "qs1_job_low");
  EXPECT_EQ(update.scheduling_priority, 4);
  EXPECT_EQ(std::get<GetJobQueueSnapshotRequest>(s->events[8].request).job_queue, "ml-g5-xl-queue");
}

TEST(LoadScenarioFileTest, MissingFileIsNotFoundNamingIt) {
  absl::StatusOr<Scenario> s = LoadScenarioFile("/nonexistent/dir/scenario.json");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_PRED2(StartsWithPred, std::string(s.status().message()), ("/nonexistent/dir/scenario.json: "));
}

TEST(LoadScenarioFileTest, DirectoryIsNotFound) {
  absl::StatusOr<Scenario> s = LoadScenarioFile(QS_SHARED_DIR);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
}

// ---------------------------------------------------------------------------
// Malformed documents.

struct MalformedCase {
  std::string name;
  std::string text;
  std::string want;     // the whole message, or its beginning when prefix
  bool prefix = false;
};

std::vector<MalformedCase> MalformedCases() {
  std::vector<MalformedCase> cases = {
      // JSON text.
      {"EmptyInput", "",
       "bad.json: line 1, column 1: syntax error while parsing value - unexpected end of input; "
       "expected '[', '{', or a literal"},
      {"TruncatedJson", "{\"schedulingPolicy\": {\"name\": \"sp\",\n",
       "bad.json: line 2, column 1: syntax error while parsing object key - unexpected end of "
       "input; expected string literal"},
      {"TruncatedBaseDocument", BaseDoc().dump().substr(0, 100), "bad.json: line 1, column 101: ",
       true},
      {"TrailingGarbage", BaseDoc().dump() + " x", "bad.json: line 1, column ", true},
      {"NumberOverflowInText", "{\n  \"x\": 1e400}",
       "bad.json: line 2, column 12: number overflow parsing '1e400'"},
      {"NulByte", std::string("{\"a\0\": 1}", 9), "bad.json: line 1, column ", true},
      {"InvalidUtf8IsReportedInAscii", "{\"\xff\": 1}",
       "bad.json: line 1, column 3: syntax error while parsing object key - invalid string: "
       "ill-formed UTF-8 byte; last read: '\"\\xFF'; expected string literal"},
      {"DeepNesting100000Brackets", std::string(100000, '['),
       "bad.json: line 1, column 65: nesting deeper than 64 levels"},
      {"DeepNestingInsideAValue", "{\"schedulingPolicy\": {\"tags\": " + std::string(70, '[') +
                                       std::string(70, ']') + "}}",
       "bad.json: line 1, column 93: nesting deeper than 64 levels"},
      {"DuplicateKey", R"({"schedulingPolicy": {"name": "a", "name": "b"}})",
       "bad.json: schedulingPolicy.name: duplicate key"},
      {"DuplicateKeyInsideStreamedEvent",
       R"({"events": [)" + BaseDoc()["events"][1].dump() + R"(, {"time": 1, "time": 2}]})",
       "bad.json: events[1].time: duplicate key"},
      {"UnknownKeyInUpdateRequest", Mutated([](Json& j) { j["events"][1]["request"]["x"] = 1; }),
       "bad.json: events[1].request.x: unknown key; expected one of: jobId, schedulingPriority"},
      {"TopLevelArray", "[]", "bad.json: top level: expected an object, got array"},
      {"TopLevelString", "\"x\"", "bad.json: top level: expected an object, got string \"x\""},
      // Missing required parts.
      {"MissingJobQueue", Mutated([](Json& j) { j.erase("jobQueue"); }),
       "bad.json: jobQueue: missing required key"},
      {"MissingJobQueueName", Mutated([](Json& j) { j["jobQueue"].erase("jobQueueName"); }),
       "bad.json: jobQueue.jobQueueName: missing required key"},
      {"MissingServiceEnvironmentName",
       Mutated([](Json& j) { j["serviceEnvironment"].erase("serviceEnvironmentName"); }),
       "bad.json: serviceEnvironment.serviceEnvironmentName: missing required key"},
      {"MissingQuotaSharePolicy",
       Mutated([](Json& j) { j["schedulingPolicy"].erase("quotaSharePolicy"); }),
       "bad.json: schedulingPolicy.quotaSharePolicy: missing required key (quotasim simulates "
       "quota-share job queues only)"},
      {"BothPoliciesIsClientException",
       Mutated([](Json& j) { j["schedulingPolicy"]["fairsharePolicy"] = Json::object(); }),
       "bad.json: schedulingPolicy: ClientException: a scheduling policy cannot have both "
       "quotaSharePolicy and fairsharePolicy"},
      {"MissingEventTime", Mutated([](Json& j) { j["events"][1].erase("time"); }),
       "bad.json: events[1].time: missing required key"},
      {"MissingEventAction", Mutated([](Json& j) { j["events"][1].erase("action"); }),
       "bad.json: events[1].action: missing required key"},
      {"MissingEventRequest", Mutated([](Json& j) { j["events"][1].erase("request"); }),
       "bad.json: events[1].request: missing required key"},
      {"MissingPerJobSimulation", Mutated([](Json& j) { j["events"][2].erase("simulation"); }),
       "bad.json: events[2].simulation: missing required key"},
      {"MissingRunSeconds", Mutated([](Json& j) { j["events"][0]["simulation"].erase("runSeconds"); }),
       "bad.json: events[0].simulation.runSeconds: missing required key"},
      // Unknown keys at several depths.
      {"UnknownTopLevelKey", Mutated([](Json& j) { j["extra"] = 1; }),
       "bad.json: extra: unknown key; expected one of: schedulingPolicy, serviceEnvironment, "
       "jobQueue, quotaShares, simulation, events"},
      {"UnknownKeyInKnobs", Mutated([](Json& j) { j["simulation"]["drainSeconds"] = 1; }),
       "bad.json: simulation.drainSeconds: unknown key; ", true},
      {"UnknownKeyInEnvironmentLimit",
       Mutated([](Json& j) { j["serviceEnvironment"]["capacityLimits"][0]["unit"] = "x"; }),
       "bad.json: serviceEnvironment.capacityLimits[0].unit: unknown key; expected one of: "
       "capacityUnit, maxCapacity"},
      {"UnknownKeyInJobQueue", Mutated([](Json& j) { j["jobQueue"]["jobQueueArn"] = "x"; }),
       "bad.json: jobQueue.jobQueueArn: unknown key; ", true},
      {"UnknownKeyInTimeLimitAction",
       Mutated([](Json& j) { j["jobQueue"]["jobStateTimeLimitActions"][0]["x"] = 1; }),
       "bad.json: jobQueue.jobStateTimeLimitActions[0].x: unknown key; ", true},
      {"UnknownKeyInQuotaSharePolicy",
       Mutated([](Json& j) { j["schedulingPolicy"]["quotaSharePolicy"]["x"] = 1; }),
       "bad.json: schedulingPolicy.quotaSharePolicy.x: unknown key; ", true},
      {"UnknownKeyInShareSharingConfig",
       Mutated([](Json& j) { j["quotaShares"][0]["resourceSharingConfiguration"]["borrowlimit"] = 1; }),
       "bad.json: quotaShares[0].resourceSharingConfiguration.borrowlimit: unknown key; expected "
       "one of: strategy, borrowLimit"},
      {"UnknownKeyInShareLimit",
       Mutated([](Json& j) { j["quotaShares"][0]["capacityLimits"][0]["x"] = 1; }),
       "bad.json: quotaShares[0].capacityLimits[0].x: unknown key; ", true},
      {"UnknownKeyInEvent", Mutated([](Json& j) { j["events"][1]["comment"] = "x"; }),
       "bad.json: events[1].comment: unknown key; expected one of: time, action, request, "
       "simulation"},
      {"UnknownKeyInSubmitRequest", Mutated([](Json& j) { j["events"][0]["request"]["priority"] = 1; }),
       "bad.json: events[0].request.priority: unknown key; ", true},
      {"UnknownKeyInRetryStrategy",
       Mutated([](Json& j) { j["events"][0]["request"]["retryStrategy"]["x"] = 1; }),
       "bad.json: events[0].request.retryStrategy.x: unknown key; expected one of: attempts, "
       "evaluateOnExit"},
      {"UnknownKeyInPerJobSimulation",
       Mutated([](Json& j) { j["events"][0]["simulation"]["runSecs"] = 1; }),
       "bad.json: events[0].simulation.runSecs: unknown key; expected one of: runSeconds, outcome, "
       "checkpointIntervalSeconds"},
      {"UnknownKeyWithOddCharactersIsQuoted", Mutated([](Json& j) { j["a b\n"] = 1; }),
       "bad.json: [\"a b\\n\"]: unknown key; ", true},
      {"TagsOnlyOnCreateShapes",
       Mutated([](Json& j) { j["events"][1]["request"]["tags"] = Json::object(); }),
       "bad.json: events[1].request.tags: unknown key; ", true},
      // Wrong JSON types.
      {"StringForInteger", Mutated([](Json& j) { j["events"][0]["request"]["schedulingPriority"] = "x"; }),
       "bad.json: events[0].request.schedulingPriority: expected an integer, got string \"x\""},
      {"StringForBool", Mutated([](Json& j) { j["simulation"]["backfill"] = "yes"; }),
       "bad.json: simulation.backfill: expected a boolean, got string \"yes\""},
      {"ObjectForArray", Mutated([](Json& j) { j["quotaShares"] = Json::object(); }),
       "bad.json: quotaShares: expected an array, got object"},
      {"EventsNotAnArray", Mutated([](Json& j) { j["events"] = 5; }),
       "bad.json: events: expected an array, got number 5"},
      {"EventNotAnObject", Mutated([](Json& j) { j["events"][1] = 5; }),
       "bad.json: events[1]: expected an object, got number 5"},
      {"NullForString", Mutated([](Json& j) { j["events"][0]["request"]["jobName"] = nullptr; }),
       "bad.json: events[0].request.jobName: expected a string, got null"},
      {"NumberForTimeString", Mutated([](Json& j) { j["events"][1]["time"] = "60"; }),
       "bad.json: events[1].time: expected a number of seconds, got string \"60\""},
      {"PayloadOfWrongType",
       Mutated([](Json& j) { j["events"][0]["request"]["serviceRequestPayload"] = 5; }),
       "bad.json: events[0].request.serviceRequestPayload: expected a string or an object, got "
       "number 5"},
      {"TagValueNotString", Mutated([](Json& j) { j["quotaShares"][0]["tags"] = {{"team", 1}}; }),
       "bad.json: quotaShares[0].tags.team: expected a string, got number 1"},
      // Times.
      {"NegativeTime", Mutated([](Json& j) { j["events"][1]["time"] = -1; }),
       "bad.json: events[1].time: must be >= 0 seconds, got number -1"},
      {"NegativeFractionalKnob", Mutated([](Json& j) { j["simulation"]["provisionSeconds"] = -0.5; }),
       "bad.json: simulation.provisionSeconds: must be >= 0 seconds, got number -0.5"},
      {"HugeTime1e300", Mutated([](Json& j) { j["simulation"]["preemptionDrainSeconds"] = 1e300; }),
       "bad.json: simulation.preemptionDrainSeconds: must be at most 1e12 seconds, got number "
       "1e+300"},
      {"HugeRunSeconds", Mutated([](Json& j) { j["events"][0]["simulation"]["runSeconds"] = 1000000000001; }),
       "bad.json: events[0].simulation.runSeconds: must be at most 1e12 seconds, got number "
       "1000000000001"},
      // Integers.
      {"Int32Field1e300",
       Mutated([](Json& j) { j["quotaShares"][0]["capacityLimits"][0]["maxCapacity"] = 1e300; }),
       "bad.json: quotaShares[0].capacityLimits[0].maxCapacity: out of range: expected an integer "
       "between -2147483648 and 2147483647, got number 1e+300"},
      {"Int32Field2Pow40",
       Mutated([](Json& j) { j["events"][0]["request"]["schedulingPriority"] = int64_t{1} << 40; }),
       "bad.json: events[0].request.schedulingPriority: out of range: expected an integer between "
       "-2147483648 and 2147483647, got number 1099511627776"},
      {"Int32FieldBelowMin",
       Mutated([](Json& j) { j["quotaShares"][0]["resourceSharingConfiguration"]["borrowLimit"] = -2147483649; }),
       "bad.json: quotaShares[0].resourceSharingConfiguration.borrowLimit: out of range: ", true},
      {"Int32FieldUnsigned2Pow64",
       Mutated([](Json& j) { j["jobQueue"]["priority"] = std::numeric_limits<uint64_t>::max(); }),
       "bad.json: jobQueue.priority: out of range: expected an integer between -2147483648 and "
       "2147483647, got number 18446744073709551615"},
      {"InstanceCount2Pow40InPayloadObject",
       Mutated([](Json& j) {
         j["events"][2]["request"]["serviceRequestPayload"]["ResourceConfig"]["InstanceCount"] =
             int64_t{1} << 40;
       }),
       "bad.json: events[2].request.serviceRequestPayload.ResourceConfig.InstanceCount: out of "
       "range: ",
       true},
      {"InstanceCount2Pow40InPayloadString",
       Mutated([](Json& j) {
         j["events"][0]["request"]["serviceRequestPayload"] =
             R"({"ResourceConfig":{"InstanceType":"ml.g5.xlarge","InstanceCount":1099511627776}})";
       }),
       "bad.json: events[0].request.serviceRequestPayload.ResourceConfig.InstanceCount: out of "
       "range: ",
       true},
      {"NonIntegralInteger", Mutated([](Json& j) { j["events"][0]["request"]["retryStrategy"]["attempts"] = 1.5; }),
       "bad.json: events[0].request.retryStrategy.attempts: expected an integer, got number 1.5"},
      // Enums.
      {"BadStrategy",
       Mutated([](Json& j) { j["quotaShares"][0]["resourceSharingConfiguration"]["strategy"] = "SHARE"; }),
       "bad.json: quotaShares[0].resourceSharingConfiguration.strategy: expected one of RESERVE, "
       "LEND, LEND_AND_BORROW, got string \"SHARE\""},
      {"BadToggle",
       Mutated([](Json& j) { j["quotaShares"][0]["preemptionConfiguration"]["inSharePreemption"] = "ON"; }),
       "bad.json: quotaShares[0].preemptionConfiguration.inSharePreemption: expected one of "
       "ENABLED, DISABLED, got string \"ON\""},
      {"LowercaseEnum", Mutated([](Json& j) { j["serviceEnvironment"]["state"] = "enabled"; }),
       "bad.json: serviceEnvironment.state: expected one of ENABLED, DISABLED, got string "
       "\"enabled\""},
      {"BadShareOrder", Mutated([](Json& j) { j["simulation"]["shareOrder"] = "RANDOM"; }),
       "bad.json: simulation.shareOrder: expected one of UNDER_LIMIT_FIRST, ROUND_ROBIN, "
       "DECLARATION, got string \"RANDOM\""},
      {"BadVictimOrder", Mutated([](Json& j) { j["simulation"]["victimOrder"] = 1; }),
       "bad.json: simulation.victimOrder: expected one of PRIORITY_THEN_NEWEST, "
       "MOST_BORROWED_FIRST, got number 1"},
      {"BadUnassignedCapacity", Mutated([](Json& j) { j["simulation"]["unassignedCapacity"] = "SHARED"; }),
       "bad.json: simulation.unassignedCapacity: expected one of UNUSED, LENDABLE, got string "
       "\"SHARED\""},
      {"BadEntitledCapacity", Mutated([](Json& j) { j["simulation"]["entitledCapacity"] = "KEPT"; }),
       "bad.json: simulation.entitledCapacity: expected one of WITHHELD, LENDABLE, got string "
       "\"KEPT\""},
      {"BadVictimReturn", Mutated([](Json& j) { j["simulation"]["victimReturn"] = "AHEAD"; }),
       "bad.json: simulation.victimReturn: expected one of BEHIND_RESERVATION, IN_PLACE, got string "
       "\"AHEAD\""},
      {"BadTimeLimitClock", Mutated([](Json& j) { j["simulation"]["timeLimitClock"] = "AT_FRONT"; }),
       "bad.json: simulation.timeLimitClock: expected one of FROM_REASON, AT_HEAD, got string \"AT_FRONT\""},
      {"ZeroCheckpointInterval", Mutated([](Json& j) { j["simulation"]["checkpointIntervalSeconds"] = 0; }),
       "bad.json: simulation.checkpointIntervalSeconds: must be > 0 seconds, got number 0"},
      {"NegativeJobCheckpointInterval",
       Mutated([](Json& j) { j["events"][0]["simulation"]["checkpointIntervalSeconds"] = -5; }),
       "bad.json: events[0].simulation.checkpointIntervalSeconds: must be >= 0 seconds, got number -5"},
      {"BadOutcome", Mutated([](Json& j) { j["events"][0]["simulation"]["outcome"] = "CRASHED"; }),
       "bad.json: events[0].simulation.outcome: expected one of SUCCEEDED, FAILED, got string "
       "\"CRASHED\""},
      {"BadIdleStrategy",
       Mutated([](Json& j) { j["schedulingPolicy"]["quotaSharePolicy"]["idleResourceAssignmentStrategy"] = "LIFO"; }),
       "bad.json: schedulingPolicy.quotaSharePolicy.idleResourceAssignmentStrategy: expected FIFO, "
       "got string \"LIFO\""},
      {"BadEnvironmentType", Mutated([](Json& j) { j["serviceEnvironment"]["serviceEnvironmentType"] = "ECS"; }),
       "bad.json: serviceEnvironment.serviceEnvironmentType: expected SAGEMAKER_TRAINING, got "
       "string \"ECS\""},
      {"BadJobQueueType", Mutated([](Json& j) { j["jobQueue"]["jobQueueType"] = "EKS"; }),
       "bad.json: jobQueue.jobQueueType: expected SAGEMAKER_TRAINING, got string \"EKS\""},
      {"BadJobQueueState", Mutated([](Json& j) { j["jobQueue"]["state"] = "PAUSED"; }),
       "bad.json: jobQueue.state: expected one of ENABLED, DISABLED, got string \"PAUSED\""},
      // Events.
      {"UnknownAction", Mutated([](Json& j) { j["events"][1]["action"] = "DeleteJobQueue"; }),
       "bad.json: events[1].action: unknown action: expected one of SubmitServiceJob, "
       "UpdateServiceJob, TerminateServiceJob, CreateQuotaShare, UpdateQuotaShare, "
       "UpdateServiceEnvironment, GetJobQueueSnapshot, DeleteQuotaShare, UpdateJobQueue, "
       "UpdateSchedulingPolicy, got string \"DeleteJobQueue\""},
      {"DeleteQuotaShareUnknownKey",
       Mutated([](Json& j) {
         j["events"][1]["action"] = "DeleteQuotaShare";
         j["events"][1]["request"] = {{"quotaShareName", "QS1"}};
       }),
       "bad.json: events[1].request.quotaShareName: unknown key; expected one of: quotaShareArn"},
      {"UpdateJobQueueBadTimeLimit",
       Mutated([](Json& j) {
         j["events"][1]["action"] = "UpdateJobQueue";
         j["events"][1]["request"] = {
             {"jobQueue", "q"},
             {"jobStateTimeLimitActions",
              {{{"reason", "x"}, {"state", "RUNNABLE"}, {"maxTimeSeconds", 30}, {"action", "TERMINATE"}}}}};
       }),
       "bad.json: events[1].request.jobStateTimeLimitActions[0].maxTimeSeconds: must be between 600 and 86400, "
       "got 30"},
      {"UpdateSchedulingPolicyBadStrategy",
       Mutated([](Json& j) {
         j["events"][1]["action"] = "UpdateSchedulingPolicy";
         j["events"][1]["request"] = {{"arn", "sp"}, {"quotaSharePolicy", {{"idleResourceAssignmentStrategy", "LIFO"}}}};
       }),
       "bad.json: events[1].request.quotaSharePolicy.idleResourceAssignmentStrategy: expected FIFO, got string "
       "\"LIFO\""},
      {"SimulationOnlyOnSubmit",
       Mutated([](Json& j) { j["events"][1]["simulation"] = {{"runSeconds", 1}}; }),
       "bad.json: events[1].simulation: simulation is only allowed on SubmitServiceJob events"},
      {"DuplicateJobName", Mutated([](Json& j) { j["events"][2]["request"]["jobName"] = "a"; }),
       "bad.json: events[2].request.jobName: duplicate jobName 'a' (first at events[0])"},
      {"EvaluateOnExitNotSimulated",
       Mutated([](Json& j) {
         j["events"][0]["request"]["retryStrategy"]["evaluateOnExit"] = {{{"action", "RETRY"}}};
       }),
       "bad.json: events[0].request.retryStrategy.evaluateOnExit: evaluateOnExit is not simulated "
       "by quotasim"},
      // Environment and queue checks the run cannot start without.
      {"EnvironmentMaxCapacityZero",
       Mutated([](Json& j) { j["serviceEnvironment"]["capacityLimits"][0]["maxCapacity"] = 0; }),
       "bad.json: serviceEnvironment.capacityLimits[0].maxCapacity: must be at least 1, got 0"},
      {"EnvironmentDuplicateUnit",
       Mutated([](Json& j) {
         j["serviceEnvironment"]["capacityLimits"].push_back(
             {{"capacityUnit", "ml.g5.xlarge"}, {"maxCapacity", 1}});
       }),
       "bad.json: serviceEnvironment.capacityLimits[1].capacityUnit: duplicate capacityUnit "
       "'ml.g5.xlarge' (first at serviceEnvironment.capacityLimits[0])"},
      {"EnvironmentNoLimits", Mutated([](Json& j) { j["serviceEnvironment"]["capacityLimits"] = Json::array(); }),
       "bad.json: serviceEnvironment.capacityLimits: must have at least one entry"},
      {"EnvironmentLimitWithoutUnit",
       Mutated([](Json& j) { j["serviceEnvironment"]["capacityLimits"][0].erase("capacityUnit"); }),
       "bad.json: serviceEnvironment.capacityLimits[0].capacityUnit: missing required key"},
      {"TimeLimitStateNotRunnable",
       Mutated([](Json& j) { j["jobQueue"]["jobStateTimeLimitActions"][0]["state"] = "RUNNING"; }),
       "bad.json: jobQueue.jobStateTimeLimitActions[0].state: expected RUNNABLE, got string "
       "\"RUNNING\""},
      {"TimeLimitTooShort",
       Mutated([](Json& j) { j["jobQueue"]["jobStateTimeLimitActions"][0]["maxTimeSeconds"] = 599; }),
       "bad.json: jobQueue.jobStateTimeLimitActions[0].maxTimeSeconds: must be between 600 and "
       "86400, got 599"},
      {"TimeLimitEmptyReason",
       Mutated([](Json& j) { j["jobQueue"]["jobStateTimeLimitActions"][0]["reason"] = ""; }),
       "bad.json: jobQueue.jobStateTimeLimitActions[0].reason: must not be empty"},
      {"TimeLimitBadAction",
       Mutated([](Json& j) { j["jobQueue"]["jobStateTimeLimitActions"][0]["action"] = "RETRY"; }),
       "bad.json: jobQueue.jobStateTimeLimitActions[0].action: expected TERMINATE, "
       "got string \"RETRY\""},
      {"TimeLimitCancelOnSageMakerQueue",
       Mutated([](Json& j) { j["jobQueue"]["jobStateTimeLimitActions"][0]["action"] = "CANCEL"; }),
       "bad.json: jobQueue.jobStateTimeLimitActions[0].action: CANCEL is not supported on a "
       "SAGEMAKER_TRAINING job queue (the only supported value is TERMINATE)"},
  };
  return cases;
}

class MalformedTest : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedTest, IsInvalidArgumentNamingThePath) {
  const MalformedCase& c = GetParam();
  absl::StatusOr<Scenario> s = ParseScenario(c.text, kSource);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  std::string message(s.status().message());
  if (c.prefix) {
    EXPECT_PRED2(StartsWithPred, message, (c.want));
  } else {
    EXPECT_EQ(message, c.want);
  }
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line";
}

INSTANTIATE_TEST_SUITE_P(ScenarioJson, MalformedTest, ::testing::ValuesIn(MalformedCases()),
                         [](const ::testing::TestParamInfo<MalformedCase>& param_info) {
                           return param_info.param.name;
                         });

// Requests AWS would reject, and other things that are not parse errors:
// scenario_json_accepted_test.cc.

// ---------------------------------------------------------------------------
// Writer round trip.

// A scenario using every field of every request shape.
std::string EveryFieldScenario() {
  return R"json({
    "schedulingPolicy": {"name": "sp", "quotaSharePolicy": {}},
    "serviceEnvironment": {"serviceEnvironmentName": "se", "state": "DISABLED",
                           "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 8},
                                              {"capacityUnit": "ml.p4d.24xlarge", "maxCapacity": 2}]},
    "jobQueue": {"jobQueueName": "q", "priority": 7,
                 "jobStateTimeLimitActions": [
                   {"reason": "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE", "state": "RUNNABLE",
                    "maxTimeSeconds": 600, "action": "TERMINATE"},
                   {"reason": "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED", "state": "RUNNABLE",
                    "maxTimeSeconds": 86400, "action": "TERMINATE"}]},
    "quotaShares": [
      {"quotaShareName": "A", "jobQueue": "q",
       "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 4}],
       "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": -1},
       "preemptionConfiguration": {"inSharePreemption": "ENABLED"}, "state": "DISABLED"},
      {"quotaShareName": "B", "capacityLimits": [],
       "resourceSharingConfiguration": {}, "preemptionConfiguration": {}},
      {}
    ],
    "simulation": {"submitLatencySeconds": 1.25, "provisionSeconds": 2, "downloadSeconds": 0.001,
                   "schedulingIntervalSeconds": 30, "preemptionDrainSeconds": 0,
                   "shareOrder": "ROUND_ROBIN", "victimOrder": "MOST_BORROWED_FIRST",
                   "backfill": true, "unassignedCapacity": "LENDABLE", "entitledCapacity": "LENDABLE",
                   "timeLimitClock": "AT_HEAD", "horizonSeconds": 123456789.123},
    "events": [
      {"time": 3600.5, "action": "GetJobQueueSnapshot", "request": {}},
      {"time": 1, "action": "SubmitServiceJob",
       "request": {"jobName": "j1", "jobQueue": "arn:aws:batch:us-east-1:1:job-queue/q",
                   "serviceJobType": "SAGEMAKER_TRAINING", "quotaShareName": "A",
                   "shareIdentifier": "x", "schedulingPriority": 9999,
                   "retryStrategy": {"attempts": 3}, "timeoutConfig": {"attemptDurationSeconds": 60},
                   "preemptionConfiguration": {"preemptionRetriesBeforeTermination": 0},
                   "serviceRequestPayload": {"ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 2}}},
       "simulation": {"runSeconds": 0.125, "outcome": "FAILED"}},
      {"time": 1, "action": "SubmitServiceJob",
       "request": {"jobName": "j2", "retryStrategy": {}, "timeoutConfig": {}, "preemptionConfiguration": {},
                   "serviceRequestPayload": "{\"ResourceConfig\": {\"InstanceType\": 5}}"},
       "simulation": {"runSeconds": 10}},
      {"time": 1, "action": "SubmitServiceJob",
       "request": {"jobName": "j3", "serviceRequestPayload": {"ResourceConfig": {"InstanceGroups": [], "x": "\u00e9\n"}}},
       "simulation": {"runSeconds": 10}},
      {"time": 1, "action": "SubmitServiceJob", "request": {"serviceRequestPayload": "{"},
       "simulation": {"runSeconds": 10}},
      {"time": 1, "action": "SubmitServiceJob", "request": {}, "simulation": {"runSeconds": 10}},
      {"time": 2, "action": "UpdateServiceJob", "request": {"jobId": "j1", "schedulingPriority": -3}},
      {"time": 2, "action": "UpdateServiceJob", "request": {}},
      {"time": 0.5, "action": "TerminateServiceJob", "request": {"jobId": "j1", "reason": "stop"}},
      {"time": 0.5, "action": "TerminateServiceJob", "request": {}},
      {"time": 4, "action": "CreateQuotaShare",
       "request": {"quotaShareName": "C", "jobQueue": "q", "tags": {"a": "b"},
                   "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
                   "resourceSharingConfiguration": {"strategy": "RESERVE"},
                   "preemptionConfiguration": {"inSharePreemption": "DISABLED"}, "state": "ENABLED"}},
      {"time": 5, "action": "UpdateQuotaShare",
       "request": {"quotaShareArn": "arn:aws:batch:us-east-1:1:quota-share/A",
                   "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}],
                   "resourceSharingConfiguration": {"strategy": "LEND", "borrowLimit": 10},
                   "preemptionConfiguration": {"inSharePreemption": "DISABLED"}, "state": "ENABLED"}},
      {"time": 5, "action": "UpdateQuotaShare", "request": {"quotaShareArn": "B"}},
      {"time": 6, "action": "UpdateServiceEnvironment",
       "request": {"serviceEnvironment": "se", "state": "ENABLED",
                   "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 0}]}},
      {"time": 6, "action": "UpdateServiceEnvironment", "request": {}},
      {"time": 1000000000000, "action": "GetJobQueueSnapshot", "request": {"jobQueue": "q"}}
    ]
  })json";
}

struct RoundTripCase {
  std::string name;
  std::string text;
};

std::vector<RoundTripCase> RoundTripCases() {
  return {
      {"Notebook", ReadFile(NotebookPath())},
      {"BaseDocument", BaseDoc().dump()},
      {"EveryField", EveryFieldScenario()},
      {"MinimalNoSharesNoEvents",
       R"({"schedulingPolicy": {"quotaSharePolicy": {}},
           "serviceEnvironment": {"serviceEnvironmentName": "", "capacityLimits": [{"capacityUnit": "u", "maxCapacity": 2147483647}]},
           "jobQueue": {"jobQueueName": "q"}})"},
      {"UnicodeAndEscapesInNames",
       Mutated([](Json& j) {
         j["jobQueue"]["jobQueueName"] = "q\"\\/\u00e9\t";
         j["events"][0]["request"]["jobName"] = "\xe2\x82\xac";
         j["events"][0]["request"]["serviceRequestPayload"] = "\x01";
       })},
  };
}

class RoundTripTest : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(RoundTripTest, WriterOutputParsesToTheSameScenarioAndIsAFixedPoint) {
  absl::StatusOr<Scenario> s = ParseScenario(GetParam().text, kSource);
  ASSERT_TRUE(s.ok()) << s.status();
  const std::string once = ScenarioToJson(*s);
  absl::StatusOr<Scenario> again = ParseScenario(once, kSource);
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << once;
  EXPECT_TRUE(*again == *s) << once;
  EXPECT_EQ(ScenarioToJson(*again), once);
}

INSTANTIATE_TEST_SUITE_P(ScenarioJson, RoundTripTest, ::testing::ValuesIn(RoundTripCases()),
                         [](const ::testing::TestParamInfo<RoundTripCase>& param_info) {
                           return param_info.param.name;
                         });

TEST(ScenarioToJsonTest, EveryFieldScenarioKeepsPayloadErrorsAndDefaults) {
  absl::StatusOr<Scenario> s = ParseScenario(EveryFieldScenario(), kSource);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->submit_count, 5);
  // Events sorted by time, ties in file order, paths keep the file index.
  std::vector<std::string> paths;
  for (size_t i = 3; i < s->events.size(); ++i) paths.push_back(s->events[i].path);
  EXPECT_EQ(paths, (std::vector<std::string>{"events[8]", "events[9]", "events[1]", "events[2]",
                                             "events[3]", "events[4]", "events[5]", "events[6]",
                                             "events[7]", "events[10]", "events[11]", "events[12]",
                                             "events[13]", "events[14]", "events[0]",
                                             "events[15]"}));
  const SubmitServiceJobRequest& j2 = SubmitAt(*s, 6);
  EXPECT_EQ(j2.job_name, "j2");
  EXPECT_EQ(j2.payload_error, "serviceRequestPayload.ResourceConfig.InstanceType must be a string");
  EXPECT_EQ(j2.retry_attempts, std::nullopt);
  const SubmitServiceJobRequest& j3 = SubmitAt(*s, 7);
  EXPECT_PRED2(ContainsPred, j3.payload_error, ("InstanceGroups"));
  EXPECT_EQ(j3.payload_raw, "{\"ResourceConfig\":{\"InstanceGroups\":[],\"x\":\"\u00e9\\n\"}}");
  EXPECT_EQ(s->knobs.horizon, 123'456'789'123);
  EXPECT_EQ(s->knobs.submit_latency, 1'250);
  EXPECT_EQ(s->knobs.entitled_capacity, EntitledCapacity::kLendable);

  const std::string text = ScenarioToJson(*s);
  EXPECT_PRED2(ContainsPred, text, ("\"entitledCapacity\":\"LENDABLE\""));
  EXPECT_PRED2(ContainsPred, text, ("\"serviceRequestPayload\":{\"ResourceConfig\":{\"InstanceType\":"
                              "\"ml.g5.xlarge\",\"InstanceCount\":2}}"));
  EXPECT_PRED2(ContainsPred, text, ("\"horizonSeconds\":123456789.123"));
  EXPECT_PRED2(ContainsPred, text, ("\"submitLatencySeconds\":1.25"));
  EXPECT_PRED2(StartsWithPred, text, std::string("{\n  \"schedulingPolicy\": {\"name\":\"sp\",\"quotaSharePolicy\":"
                               "{\"idleResourceAssignmentStrategy\":\"FIFO\"}},\n"));
}

TEST(ScenarioToJsonTest, HandBuiltScenarioIsAFixedPointAfterOneRound) {
  Scenario s;
  s.source = kSource;
  s.scheduling_policy.has_quota_share_policy = true;
  s.service_environment.name = "se";
  s.service_environment.capacity_limits = {{"u", 1}};
  s.job_queue.name = "q";
  SubmitServiceJobRequest submit;
  submit.job_name = "j";
  submit.instance_type = "u";
  submit.instance_count = 1;
  submit.run_time = 1;
  // Out of time order and with a made-up path: written in stored order.
  s.events.push_back(ScenarioEvent{5'000, "somewhere", submit});
  s.events.push_back(ScenarioEvent{1'000, "elsewhere", GetJobQueueSnapshotRequest{}});
  s.submit_count = 1;
  const std::string once = ScenarioToJson(s);
  absl::StatusOr<Scenario> again = ParseScenario(once, kSource);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->events[0].path, "events[1]");
  EXPECT_EQ(ScenarioToJson(*again), once);
}

// ---------------------------------------------------------------------------
// Robustness.

TEST(ParseScenarioRobustnessTest, EveryPrefixOfTheNotebookIsAnErrorNotACrash) {
  const std::string text = ReadFile(NotebookPath());
  ASSERT_FALSE(text.empty());
  for (size_t n = 0; n < text.size(); ++n) {
    absl::StatusOr<Scenario> s = ParseScenario(std::string_view(text).substr(0, n), kSource);
    ASSERT_FALSE(s.ok()) << n;
    ASSERT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << n;
  }
}

TEST(ParseScenarioRobustnessTest, RandomByteEditsNeverCrashAndAcceptedOnesRoundTrip) {
  const std::string text = BaseDoc().dump();
  std::mt19937 rng(12345);
  const std::string alphabet = "{}[]\":,0123456789.-eE \\ntfu\x80\xff";
  int accepted = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string t = text;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % t.size();
      char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0: t[pos] = c; break;
        case 1: t.insert(t.begin() + static_cast<std::ptrdiff_t>(pos), c); break;
        default: t.erase(pos, 1); break;
      }
    }
    absl::StatusOr<Scenario> s = ParseScenario(t, kSource);
    if (!s.ok()) {
      ASSERT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << t;
      continue;
    }
    ++accepted;
    const std::string once = ScenarioToJson(*s);
    absl::StatusOr<Scenario> again = ParseScenario(once, kSource);
    ASSERT_TRUE(again.ok()) << again.status() << "\n" << t;
    ASSERT_TRUE(*again == *s) << t;
    ASSERT_EQ(ScenarioToJson(*again), once) << t;
  }
  EXPECT_GT(accepted, 0);
}

TEST(ParseScenarioRobustnessTest, ManyEventsParseAndDuplicateIsFoundLate) {
  Json j = BaseDoc();
  Json events = Json::array();
  const int kJobs = 5000;
  for (int i = 0; i < kJobs; ++i) {
    Json e = j["events"][0];
    e["time"] = kJobs - i;  // reverse order: forces the sort
    e["request"]["jobName"] = "job" + std::to_string(i);
    events.push_back(std::move(e));
  }
  j["events"] = events;
  absl::StatusOr<Scenario> s = ParseScenario(j.dump(), kSource);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->submit_count, kJobs);
  EXPECT_EQ(s->events.back().path, "events[0]");

  j["events"][kJobs - 1]["request"]["jobName"] = "job7";
  s = ParseScenario(j.dump(), kSource);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            absl::StrCat("bad.json: events[", kJobs - 1,
                         "].request.jobName: duplicate jobName 'job7' (first at events[7])"));
}

}  // namespace
}  // namespace qs
