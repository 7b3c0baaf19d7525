// Overrides (engine/io/overrides.h): key forms, values, what each key
// changes in a scenario, and the errors a user sees.
#include "engine/io/overrides.h"

#include <string>
#include <vector>

#include "engine/io/scenario_json.h"
#include "gtest/gtest.h"

namespace qs {
namespace {

const char kDoc[] = R"({
  "schedulingPolicy": {"name": "sp", "quotaSharePolicy": {"idleResourceAssignmentStrategy": "FIFO"}},
  "serviceEnvironment": {"serviceEnvironmentName": "se", "serviceEnvironmentType": "SAGEMAKER_TRAINING",
                         "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 4}]},
  "jobQueue": {"jobQueueName": "q", "jobQueueType": "SAGEMAKER_TRAINING", "priority": 1,
               "jobStateTimeLimitActions": [{"reason": "MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT",
                                             "state": "RUNNABLE", "maxTimeSeconds": 600, "action": "TERMINATE"}]},
  "quotaShares": [
    {"quotaShareName": "A", "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}],
     "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": 100},
     "preemptionConfiguration": {"inSharePreemption": "DISABLED"}, "state": "ENABLED"},
    {"quotaShareName": "B", "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}],
     "resourceSharingConfiguration": {"strategy": "LEND"}, "state": "ENABLED"}
  ],
  "events": [
    {"time": 100, "action": "UpdateQuotaShare", "request": {"quotaShareArn": "A",
      "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 3}],
      "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": 50}}},
    {"time": 200, "action": "UpdateQuotaShare", "request": {"quotaShareArn": "A", "state": "DISABLED"}},
    {"time": 300, "action": "UpdateServiceEnvironment", "request": {"serviceEnvironment": "se",
      "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 6}]}}
  ]
})";

Scenario Doc() {
  absl::StatusOr<Scenario> sc = ParseScenario(kDoc, "doc.json");
  EXPECT_TRUE(sc.ok()) << sc.status();
  return *sc;
}

Scenario Applied(const std::vector<std::string>& sets) {
  Scenario sc = Doc();
  absl::StatusOr<Overrides> o = Overrides::Parse(sets);
  EXPECT_TRUE(o.ok()) << o.status();
  absl::Status st = ApplyOverrides(*o, sc);
  EXPECT_TRUE(st.ok()) << st;
  return sc;
}

std::string Error(const std::vector<std::string>& sets) {
  absl::StatusOr<Overrides> o = Overrides::Parse(sets);
  if (!o.ok()) return std::string(o.status().message());
  Scenario sc = Doc();
  absl::Status st = ApplyOverrides(*o, sc);
  return st.ok() ? "" : std::string(st.message());
}

const CreateQuotaShareRequest& Create(const Scenario& sc, size_t i) {
  return std::get<CreateQuotaShareRequest>(sc.events[i].request);
}
const UpdateQuotaShareRequest& Update(const Scenario& sc, size_t i) {
  return std::get<UpdateQuotaShareRequest>(sc.events[i].request);
}

TEST(OverridesTest, KnobsByNameOrUnderSimulation) {
  Scenario sc = Applied({"preemptionDrainSeconds=60", "simulation.shareOrder=ROUND_ROBIN", "backfill=true",
                         "checkpointIntervalSeconds=600", "capacity.ml.g5.xlarge.failureProbability=0.25",
                         "capacity.seed=7"});
  EXPECT_EQ(sc.knobs.preemption_drain, 60000);
  EXPECT_EQ(sc.knobs.share_order, ShareOrder::kRoundRobin);
  EXPECT_TRUE(sc.knobs.backfill);
  EXPECT_EQ(sc.knobs.checkpoint_interval, 600000);
  ASSERT_EQ(sc.knobs.capacity.types.size(), 1u);
  EXPECT_EQ(sc.knobs.capacity.types[0].instance_type, "ml.g5.xlarge");
  EXPECT_EQ(sc.knobs.capacity.types[0].failure_probability, 0.25);
  EXPECT_EQ(sc.knobs.capacity.seed, 7u);
  // The requests are untouched by knobs.
  EXPECT_EQ(sc.events, Doc().events);
}

TEST(OverridesTest, AShareSettingHoldsForTheWholeRun) {
  Scenario sc = Applied({"A.borrowLimit=0", "A.capacityLimits.ml.g5.xlarge=1", "A.inSharePreemption=ENABLED"});
  EXPECT_EQ(Create(sc, 0).borrow_limit, 0);
  EXPECT_EQ(Create(sc, 0).capacity_limits->at(0).max_capacity, 1);
  EXPECT_EQ(Create(sc, 0).in_share_preemption, Toggle::kEnabled);
  // The update that sets the borrow limit and the capacity limits gets the
  // values too; the one that sets only the state is left alone.
  EXPECT_EQ(Update(sc, 2).borrow_limit, 0);
  EXPECT_EQ(Update(sc, 2).capacity_limits->at(0).max_capacity, 1);
  EXPECT_FALSE(Update(sc, 2).in_share_preemption.has_value());
  EXPECT_EQ(Update(sc, 3), Update(Doc(), 3));
  // B is untouched.
  EXPECT_EQ(Create(sc, 1), Create(Doc(), 1));
}

TEST(OverridesTest, StrategyOtherThanLendAndBorrowDropsTheBorrowLimit) {
  Scenario sc = Applied({"A.strategy=LEND"});
  EXPECT_EQ(Create(sc, 0).strategy, Strategy::kLend);
  EXPECT_FALSE(Create(sc, 0).borrow_limit.has_value());
  EXPECT_FALSE(Update(sc, 2).borrow_limit.has_value());
  Scenario lab = Applied({"B.strategy=LEND_AND_BORROW", "B.borrowLimit=25"});
  EXPECT_EQ(Create(lab, 1).strategy, Strategy::kLendAndBorrow);
  EXPECT_EQ(Create(lab, 1).borrow_limit, 25);
}

TEST(OverridesTest, NewTypesAndRemovedTypes) {
  Scenario sc = Applied({"A.capacityLimits.ml.p4d.24xlarge=2", "environment.capacityLimits.ml.p4d.24xlarge=3",
                         "environment.capacityLimits.ml.g5.xlarge=8"});
  EXPECT_EQ(Create(sc, 0).capacity_limits->size(), 2u);
  EXPECT_EQ(Create(sc, 0).capacity_limits->at(1), (CapacityLimit{"ml.p4d.24xlarge", 2}));
  // An update's list gets only the types it lists.
  EXPECT_EQ(Update(sc, 2).capacity_limits->size(), 1u);
  EXPECT_EQ(sc.service_environment.capacity_limits,
            (std::vector<CapacityLimit>{{"ml.g5.xlarge", 8}, {"ml.p4d.24xlarge", 3}}));
  // The environment update listing the type carries the value.
  const auto& env = std::get<UpdateServiceEnvironmentRequest>(sc.events[4].request);
  EXPECT_EQ(env.capacity_limits->at(0).max_capacity, 8);
  Overrides o = *Overrides::Parse({"A.capacityLimits.ml.p4d.24xlarge=2", "environment.capacityLimits.ml.x=1"});
  EXPECT_EQ(o.Units(), (std::vector<std::string>{"ml.p4d.24xlarge", "ml.x"}));
}

TEST(OverridesTest, TimeLimitsSetAddAndRemove) {
  Scenario set = Applied({"jobQueue.timeLimit.MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT=1200"});
  ASSERT_EQ(set.job_queue.time_limit_actions.size(), 1u);
  EXPECT_EQ(set.job_queue.time_limit_actions[0].max_time_seconds, 1200);
  Scenario add = Applied({"jobQueue.timeLimit.MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE=900"});
  ASSERT_EQ(add.job_queue.time_limit_actions.size(), 2u);
  EXPECT_EQ(add.job_queue.time_limit_actions[1],
            (JobStateTimeLimitAction{"MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE", "RUNNABLE", 900, "TERMINATE"}));
  Scenario none = Applied({"jobQueue.timeLimit.MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT=none"});
  EXPECT_TRUE(none.job_queue.time_limit_actions.empty());
}

TEST(OverridesTest, StarMeansEveryShare) {
  Scenario sc = Applied({"*.borrowLimit=0", "*.inSharePreemption=ENABLED"});
  EXPECT_EQ(Create(sc, 0).borrow_limit, 0);                  // A: LEND_AND_BORROW
  EXPECT_FALSE(Create(sc, 1).borrow_limit.has_value());      // B: LEND takes none
  EXPECT_EQ(Create(sc, 0).in_share_preemption, Toggle::kEnabled);
  EXPECT_EQ(Create(sc, 1).in_share_preemption, Toggle::kEnabled);
  EXPECT_EQ(Update(sc, 2).borrow_limit, 0);
}

TEST(OverridesTest, ALaterOverrideOfTheSameKeyWins) {
  EXPECT_EQ(Create(Applied({"A.borrowLimit=0", "A.borrowLimit=300"}), 0).borrow_limit, 300);
}

TEST(OverridesTest, ErrorsNameTheArgumentAndWhatIsWrong) {
  const std::string keys = "keys: a simulation knob";
  for (const auto& [sets, want] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"A.borowLimit=5"}, "--set A.borowLimit=5: unknown key 'A.borowLimit'; " + keys},
           {{"drain=5"}, "--set drain=5: unknown key 'drain'; " + keys},
           {{"borrowLimit=50"}, "--set borrowLimit=50: a share setting names its share: <share>.borrowLimit, or "
                                "*.borrowLimit for every share"},
           {{"simulation.drain=5"}, "--set simulation.drain=5: unknown simulation knob 'drain'"},
           {{"A.borrowLimit"}, "--set A.borrowLimit: expected KEY=VALUE"},
           {{"A.borrowLimit=-2"}, "--set A.borrowLimit=-2: expected -1 (unlimited) or a percentage (-1 to "},
           {{"A.strategy=SHARE"}, "--set A.strategy=SHARE: expected RESERVE, LEND or LEND_AND_BORROW, got 'SHARE'"},
           {{"A.inSharePreemption=on"}, "--set A.inSharePreemption=on: expected ENABLED or DISABLED, got 'on'"},
           {{"shareOrder=FAIR"}, "--set shareOrder=FAIR: expected UNDER_LIMIT_FIRST, ROUND_ROBIN or DECLARATION"},
           {{"preemptionDrainSeconds=-1"}, "--set preemptionDrainSeconds=-1: expected seconds in [0, 1e12]"},
           {{"jobQueue.timeLimit.X=5"}, "--set jobQueue.timeLimit.X=5: expected maxTimeSeconds or none (600 to 86400)"},
           {{"environment.capacityLimits.ml.g5.xlarge=x"}, "--set environment.capacityLimits.ml.g5.xlarge=x: expected instances"},
           {{"Z.borrowLimit=5"}, "--set Z.borrowLimit=5: the scenario has no quota share 'Z' (its shares: A, B)"},
           {{"B.borrowLimit=50"},
            "--set B.borrowLimit=50: quotaShares[1] (CreateQuotaShare of B) would be rejected: ClientException: "
            "resourceSharingConfiguration.borrowLimit is only valid with strategy LEND_AND_BORROW, not LEND"},
           {{"A.capacityLimits.ml.g5.xlarge=0"},
            "--set A.capacityLimits.ml.g5.xlarge=0: quotaShares[0] (CreateQuotaShare of A) would be rejected: ClientException: "
            "capacityLimits must have between 1 and"},
       }) {
    const std::string got = Error(sets);
    EXPECT_EQ(got.rfind(want, 0), 0u) << "got:  " << got << "\nwant: " << want;
  }
}

}  // namespace
}  // namespace qs
