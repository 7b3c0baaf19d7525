// The per-share table of `quotasim run` (engine/log/share_table.h): rows in
// declaration order with every declared share, the configuration beside the
// figures, aligned for any width, and csv / json for programs.
#include "engine/log/share_table.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "engine/io/scenario_json.h"
#include "engine/run.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace qs {
namespace {

std::vector<std::string> Lines(const std::string& text) { return absl::StrSplit(text, '\n', absl::SkipEmpty()); }

Scenario Parse(const std::string& json) {
  absl::StatusOr<Scenario> sc = ParseScenario(json, "t.json");
  EXPECT_TRUE(sc.ok()) << sc.status().message();
  return sc.ok() ? *sc : Scenario{};
}

std::vector<DeclaredShare> Declared(const Scenario& sc) {
  ShareDeclarations d;
  for (const ScenarioEvent& ev : sc.events) d.Note(ev, sc);
  return d.shares();
}

Summary Simulate(const Scenario& sc) {
  SummaryBuilder b;
  RunStats stats = RunFastEngine(sc, b, RunOptions{});
  return b.Build(stats.invariant_violations);
}

// Shares declared team-10, team-2 (against natural order), one rejected at
// creation (borrowLimit on a LEND share), one changed at t=5, one with no job.
constexpr const char* kScenario = R"({
  "schedulingPolicy": {"name": "sp", "quotaSharePolicy": {"idleResourceAssignmentStrategy": "FIFO"}},
  "serviceEnvironment": {"serviceEnvironmentName": "se", "serviceEnvironmentType": "SAGEMAKER_TRAINING",
                         "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 4},
                                            {"capacityUnit": "ml.p4d.24xlarge", "maxCapacity": 2}]},
  "jobQueue": {"jobQueueName": "q", "jobQueueType": "SAGEMAKER_TRAINING", "priority": 1},
  "quotaShares": [
    {"quotaShareName": "team-10", "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}],
     "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": 50},
     "preemptionConfiguration": {"inSharePreemption": "ENABLED"}},
    {"quotaShareName": "team-2", "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2},
                                                    {"capacityUnit": "ml.p4d.24xlarge", "maxCapacity": 2}],
     "resourceSharingConfiguration": {"strategy": "LEND"},
     "preemptionConfiguration": {"inSharePreemption": "DISABLED"}},
    {"quotaShareName": "bad", "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
     "resourceSharingConfiguration": {"strategy": "LEND", "borrowLimit": 10},
     "preemptionConfiguration": {"inSharePreemption": "DISABLED"}}
  ],
  "events": [
    {"time": 0, "action": "SubmitServiceJob",
     "request": {"jobName": "a", "jobQueue": "q", "serviceJobType": "SAGEMAKER_TRAINING", "quotaShareName": "team-10",
                 "serviceRequestPayload": {"ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 3}}},
     "simulation": {"runSeconds": 3600}},
    {"time": 5, "action": "UpdateQuotaShare",
     "request": {"quotaShareArn": "team-10", "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 3}],
                 "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": -1}}}
  ]
})";

TEST(ShareTableTest, DeclarationsFollowTheRequestsTheEnginesAccept) {
  const std::vector<DeclaredShare> d = Declared(Parse(kScenario));
  ASSERT_EQ(d.size(), 2u);  // "bad" is rejected at creation, as by the engines
  EXPECT_EQ(d[0].name, "team-10");
  ASSERT_EQ(d[0].limits.size(), 1u);
  EXPECT_EQ(d[0].limits[0].max_capacity, 3);  // the update at t=5
  EXPECT_EQ(d[0].borrow_limit, -1);
  EXPECT_EQ(d[0].strategy, Strategy::kLendAndBorrow);
  EXPECT_EQ(d[0].in_share_preemption, Toggle::kEnabled);
  EXPECT_EQ(d[1].name, "team-2");
  EXPECT_EQ(d[1].strategy, Strategy::kLend);
  EXPECT_EQ(d[1].limits.size(), 2u);
}

TEST(ShareTableTest, TableIsInDeclarationOrderWithEveryShareAndItsLimits) {
  const Scenario sc = Parse(kScenario);
  const std::string table = ShareTable(Simulate(sc), Declared(sc), TableFormat::kTable);
  const std::vector<std::string> lines = Lines(table);
  ASSERT_GE(lines.size(), 4u) << table;
  EXPECT_EQ(lines[0].rfind("quota share", 0), 0u) << table;
  EXPECT_EQ(lines[1].rfind("team-10 ", 0), 0u) << table;  // declared first
  EXPECT_EQ(lines[2].rfind("team-2 ", 0), 0u) << table;   // no job, still listed
  EXPECT_EQ(lines[3].rfind("TOTAL ", 0), 0u) << table;
  EXPECT_NE(lines[1].find("3 ml.g5.xlarge"), std::string::npos) << table;
  EXPECT_NE(lines[1].find("LEND_AND_BORROW"), std::string::npos) << table;
  EXPECT_NE(lines[1].find("unlimited"), std::string::npos) << table;
  EXPECT_NE(lines[2].find("4 in 2 types"), std::string::npos) << table;
  EXPECT_NE(lines[2].find("  -  "), std::string::npos) << table;  // no job started: no wait, not 0.0s
  for (size_t i = 1; i <= 3; ++i) EXPECT_EQ(lines[i].size(), lines[0].size()) << table;
  // team-10's job ran an hour on 3 instances: 2 own, 1 borrowed from team-2.
  EXPECT_NE(lines[1].find("  2.0  "), std::string::npos) << table;
  EXPECT_NE(lines[1].find("  1.0  "), std::string::npos) << table;
}

// Shares seen only in the records (a summary with no declarations): natural
// order after the declared ones, human units, aligned for long names and counts.
TEST(ShareTableTest, UndeclaredSharesInNaturalOrderWithHumanUnitsAndAligned) {
  Summary s;
  s.end_time = 3 * 86400 * kMillisPerSecond;
  for (const char* name : {"team-10", "team-2", "a-share-name-longer-than-twenty-characters"}) {
    ShareSummary& sh = s.shares[name];
    sh.submitted = 12345678;
    sh.wait.count = 1000;
    sh.wait.p50 = 42 * kMillisPerSecond;
    sh.wait.p95 = 90 * 60 * kMillisPerSecond;
    sh.wait.p99 = 49 * 86400 * kMillisPerSecond;
    sh.instance_ms["ml.p5.48xlarge"] = {7200 * kMillisPerSecond, 3600 * kMillisPerSecond};
  }
  const std::string table = ShareTable(s, {}, TableFormat::kTable);
  const std::vector<std::string> lines = Lines(table);
  ASSERT_GE(lines.size(), 5u) << table;
  EXPECT_EQ(lines[1].rfind("a-share-name-longer-than-twenty-characters", 0), 0u) << table;
  EXPECT_EQ(lines[2].rfind("team-2 ", 0), 0u) << table;
  EXPECT_EQ(lines[3].rfind("team-10 ", 0), 0u) << table;
  EXPECT_EQ(lines[4].rfind("TOTAL ", 0), 0u) << table;
  for (size_t i = 1; i <= 4; ++i) EXPECT_EQ(lines[i].size(), lines[0].size()) << table;
  EXPECT_NE(lines[2].find("42.0s"), std::string::npos) << table;
  EXPECT_NE(lines[2].find("1.5h"), std::string::npos) << table;
  EXPECT_NE(lines[2].find("49.0d"), std::string::npos) << table;
  EXPECT_NE(lines[2].find("  2.0  "), std::string::npos) << table;  // own instance-hours
  EXPECT_NE(table.find("simulated time: 3.0d"), std::string::npos) << table;
}

TEST(ShareTableTest, CsvAndJsonCarryTheSameRowsInPlainUnits) {
  const Scenario sc = Parse(kScenario);
  const Summary s = Simulate(sc);
  const std::vector<std::string> csv = Lines(ShareTable(s, Declared(sc), TableFormat::kCsv));
  ASSERT_EQ(csv.size(), 4u);  // header, two shares, total
  EXPECT_EQ(csv[0].rfind("row,quotaShare,capacityLimits,strategy,borrowLimit,", 0), 0u) << csv[0];
  const size_t columns = std::vector<std::string>(absl::StrSplit(csv[0], ',')).size();
  for (const std::string& line : csv) EXPECT_EQ(std::vector<std::string>(absl::StrSplit(line, ',')).size(), columns) << line;
  EXPECT_EQ(csv[1].rfind("share,team-10,ml.g5.xlarge=3,LEND_AND_BORROW,-1,ENABLED,1,1,0,0,", 0), 0u) << csv[1];
  EXPECT_EQ(csv[2].rfind("share,team-2,ml.g5.xlarge=2;ml.p4d.24xlarge=2,LEND,", 0), 0u) << csv[2];
  EXPECT_EQ(csv[3].rfind("total,,,,,,1,1,0,0,", 0), 0u) << csv[3];

  const nlohmann::json j = nlohmann::json::parse(ShareTable(s, Declared(sc), TableFormat::kJson));
  ASSERT_EQ(j["quotaShares"].size(), 2u);
  EXPECT_EQ(j["quotaShares"][0]["quotaShare"], "team-10");
  EXPECT_EQ(j["quotaShares"][0]["capacityLimits"][0]["maxCapacity"], 3);
  EXPECT_EQ(j["quotaShares"][0]["borrowedInstanceHours"], 1.0);
  EXPECT_EQ(j["quotaShares"][1]["jobs"], 0);
  EXPECT_TRUE(j["quotaShares"][1]["waitSeconds"].is_null());
  EXPECT_EQ(j["total"]["jobs"], 1);
  EXPECT_FALSE(j["total"].contains("quotaShare"));
}

TEST(ShareTableTest, FormatNames) {
  EXPECT_EQ(ParseTableFormat("table"), TableFormat::kTable);
  EXPECT_EQ(ParseTableFormat("csv"), TableFormat::kCsv);
  EXPECT_EQ(ParseTableFormat("json"), TableFormat::kJson);
  EXPECT_EQ(ParseTableFormat("yaml"), std::nullopt);
}

// The summary's `run` object: where it came from, every knob, and whether
// it ran to its end.
TEST(ShareTableTest, SummaryCarriesItsProvenance) {
  Summary s = Simulate(Parse(kScenario));
  EXPECT_EQ(SummaryToJson(s).find("\"run\""), std::string::npos);  // only commands set it
  s.run = RunProvenance{"t.json", "reference", "9.9.9 (abc)", Knobs{}, 10000, true, "", {}};
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(SummaryToJson(s));
  EXPECT_EQ(j.begin().key(), "run");
  EXPECT_EQ(j["run"]["scenario"], "t.json");
  EXPECT_EQ(j["run"]["engine"], "reference");
  EXPECT_EQ(j["run"]["quotasim"], "9.9.9 (abc)");
  EXPECT_EQ(j["run"]["simulation"]["preemptionDrainSeconds"], 20.0);
  EXPECT_EQ(j["run"]["simulation"]["shareOrder"], "UNDER_LIMIT_FIRST");
  EXPECT_TRUE(j["run"]["simulation"]["horizonSeconds"].is_null());
  EXPECT_EQ(j["run"]["simulation"]["entitledCapacity"], "WITHHELD");
  EXPECT_EQ(j["run"]["simulation"]["victimReturn"], "BEHIND_RESERVATION");
  EXPECT_EQ(j["run"]["simulation"].size(), 12u);  // every knob of the scenario format
  EXPECT_EQ(j["run"]["completed"], true);
  EXPECT_TRUE(j["run"]["stopped"].is_null());
  s.run->stopped = "stopped in a preemption cycle";
  const nlohmann::json k = nlohmann::json::parse(SummaryToJson(s));
  EXPECT_EQ(k["run"]["completed"], false);
  EXPECT_EQ(k["run"]["stopped"], "stopped in a preemption cycle");
}

}  // namespace
}  // namespace qs
