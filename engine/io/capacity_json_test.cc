// simulation.capacity in the scenario JSON and its availability CSV
// (docs/semantics.md §2, "Capacity"): accepted shapes round-trip, bad
// values are refused naming the JSON path, CSV errors name file and line.
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "engine/io/capacity_csv.h"
#include "engine/io/scenario_json.h"
#include "engine/io/scenario_json_test_docs.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace qs {
namespace {

using namespace ::qs::json_test_docs;  // NOLINT: the shared test documents

Json WithCapacity(const Json& capacity, bool time_limit) {
  Json doc = BaseDoc();
  doc["simulation"]["capacity"] = capacity;
  if (time_limit) {
    doc["jobQueue"]["jobStateTimeLimitActions"] = Json::array(
        {{{"reason", "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY"}, {"state", "RUNNABLE"}, {"maxTimeSeconds", 600},
          {"action", "TERMINATE"}}});
  }
  return doc;
}

std::string ErrorOf(const Json& doc) {
  absl::StatusOr<Scenario> s = ParseScenario(doc.dump(), kSource);
  return s.ok() ? "" : std::string(s.status().message());
}

TEST(CapacityJsonTest, AcceptedModelParsesAndRoundTrips) {
  const Json capacity = Json::parse(R"({"seed": 9, "errorSeconds": 120, "instanceTypes": {
      "ml.p5.48xlarge": {"failureProbability": 0.25,
                         "availability": [{"atSeconds": 0, "instances": 4}, {"atSeconds": 3600.5, "instances": 2}]},
      "ml.g5.xlarge": {"failureProbability": 0.1}}})");
  absl::StatusOr<Scenario> s = ParseScenario(WithCapacity(capacity, true).dump(), kSource);
  ASSERT_TRUE(s.ok()) << s.status();
  const CapacityModel& c = s->knobs.capacity;
  EXPECT_EQ(c.seed, 9u);
  EXPECT_EQ(c.error_delay, 120000);
  ASSERT_EQ(c.types.size(), 2u);
  EXPECT_EQ(c.types[0].instance_type, "ml.g5.xlarge");  // by name
  EXPECT_EQ(c.types[1].availability.size(), 2u);
  EXPECT_EQ(c.types[1].availability[1].at, 3600500);
  EXPECT_DOUBLE_EQ(c.types[1].failure_probability, 0.25);
  absl::StatusOr<Scenario> again = ParseScenario(ScenarioToJson(*s), kSource);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *s);
}

TEST(CapacityJsonTest, BadValuesNameTheirPath) {
  const std::string p = "simulation.capacity";
  EXPECT_NE(ErrorOf(WithCapacity(Json::parse(R"({"instanceTypes": {"x": {"failureProbability": 1.5}}})"), true))
                .find(p + ".instanceTypes.x.failureProbability: must be between 0 and 1"),
            std::string::npos);
  EXPECT_NE(ErrorOf(WithCapacity(Json::parse(R"({"errorSeconds": 0, "instanceTypes": {}})"), true))
                .find(p + ".errorSeconds: must be at least 1 second"),
            std::string::npos);
  EXPECT_NE(ErrorOf(WithCapacity(Json::parse(R"({"instanceTypes": {"x": {"availability":
                [{"atSeconds": 10, "instances": 1}, {"atSeconds": 10, "instances": 2}]}}})"),
                                 true))
                .find(p + ".instanceTypes.x.availability[1].atSeconds: steps must be in strictly increasing"),
            std::string::npos);
  EXPECT_NE(ErrorOf(WithCapacity(Json::parse(R"({"instanceTypes": {"x": {"availability":
                [{"atSeconds": 0, "instances": -1}]}}})"),
                                 true))
                .find(p + ".instanceTypes.x.availability[0].instances: must be >= 0"),
            std::string::npos);
  EXPECT_NE(ErrorOf(WithCapacity(Json::parse(R"({"instanceTypes": {"x": {"availabilityCsv": "a.csv",
                "availability": [{"atSeconds": 0, "instances": 1}]}}})"),
                                 true))
                .find("give either availability or availabilityCsv"),
            std::string::npos);
  EXPECT_NE(ErrorOf(WithCapacity(Json::parse(R"({"instanceTypes": {"x": {"bogus": 1}}})"), true))
                .find(p + ".instanceTypes.x.bogus: unknown key"),
            std::string::npos);
  EXPECT_NE(ErrorOf(WithCapacity(Json::parse(R"({"seed": -1, "instanceTypes": {}})"), true)).find(p + ".seed"),
            std::string::npos);
}

TEST(CapacityJsonTest, AModelThatCanStickForEverNeedsAWayToEnd) {
  const Json sticky = Json::parse(R"({"instanceTypes": {"x": {"failureProbability": 1}}})");
  EXPECT_NE(ErrorOf(WithCapacity(sticky, false)).find("simulation.capacity: an availability schedule or"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(WithCapacity(sticky, true)), "");
  Json with_horizon = WithCapacity(sticky, false);
  with_horizon["simulation"]["horizonSeconds"] = 1000;
  EXPECT_EQ(ErrorOf(with_horizon), "");
  // A probability below 1 without a schedule ends by itself.
  EXPECT_EQ(ErrorOf(WithCapacity(Json::parse(R"({"instanceTypes": {"x": {"failureProbability": 0.9}}})"), false)),
            "");
}

TEST(CapacityCsvTest, ParsesRowsWithHeaderAndComments) {
  absl::StatusOr<std::vector<AvailabilityStep>> steps =
      ParseAvailabilityCsv("# p5 in us-east-1\natSeconds,instances\n0,8\r\n86400.5, 4\n\n", "p5.csv");
  ASSERT_TRUE(steps.ok()) << steps.status();
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ((*steps)[1].at, 86400500);
  EXPECT_EQ((*steps)[1].instances, 4);
}

TEST(CapacityCsvTest, BrokenRowsNameFileAndLine) {
  auto error = [](std::string_view text) {
    absl::StatusOr<std::vector<AvailabilityStep>> s = ParseAvailabilityCsv(text, "p5.csv");
    return s.ok() ? std::string() : std::string(s.status().message());
  };
  EXPECT_EQ(error("0,8\n10\n"), "p5.csv:2: expected 2 columns: atSeconds,instances");
  EXPECT_EQ(error("0,8\n10,1,2\n"), "p5.csv:2: expected 2 columns: atSeconds,instances");
  EXPECT_EQ(error("0,8\nten,1\n"), "p5.csv:2: atSeconds must be a number of seconds from 0 to 1e12, got \"ten\"");
  EXPECT_EQ(error("0,-3\n"), "p5.csv:1: instances must be an integer from 0 to 2147483647, got \"-3\"");
  EXPECT_EQ(error("0,8\n0,4\n"), "p5.csv:2: atSeconds must be strictly increasing");
  EXPECT_EQ(error("# nothing\n"), "p5.csv: no availability rows");
}

TEST(CapacityCsvTest, LoadScenarioFileReadsTheCsvBesideTheScenario) {
  const std::string dir = ::testing::TempDir();
  {
    std::ofstream csv(dir + "/qs-avail.csv");
    csv << "atSeconds,instances\n0,3\n100,1\n";
  }
  Json doc = WithCapacity(Json::parse(R"({"instanceTypes": {"ml.g5.xlarge": {"availabilityCsv": "qs-avail.csv"}}})"),
                          true);
  {
    std::ofstream f(dir + "/qs-capacity.json");
    f << doc.dump();
  }
  absl::StatusOr<Scenario> s = LoadScenarioFile(dir + "/qs-capacity.json");
  ASSERT_TRUE(s.ok()) << s.status();
  const TypeCapacity& t = s->knobs.capacity.types.at(0);
  EXPECT_EQ(t.availability_csv, "");
  ASSERT_EQ(t.availability.size(), 2u);
  EXPECT_EQ(t.availability[1].instances, 1);

  doc["simulation"]["capacity"]["instanceTypes"]["ml.g5.xlarge"]["availabilityCsv"] = "missing.csv";
  {
    std::ofstream f(dir + "/qs-capacity.json");
    f << doc.dump();
  }
  absl::StatusOr<Scenario> bad = LoadScenarioFile(dir + "/qs-capacity.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message())
                .find("simulation.capacity.instanceTypes.ml.g5.xlarge.availabilityCsv: cannot open"),
            std::string::npos);
  std::remove((dir + "/qs-avail.csv").c_str());
  std::remove((dir + "/qs-capacity.json").c_str());
}

}  // namespace
}  // namespace qs
