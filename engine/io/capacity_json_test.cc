// simulation.capacity and simulation.latencies in the scenario JSON, the
// availability CSV and the latency draws (docs/semantics.md §2, "Capacity"
// and "Latency distributions"): accepted shapes round-trip, bad values are
// refused naming the JSON path, CSV errors name file and line.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "engine/io/capacity_csv.h"
#include "engine/model/capacity.h"
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
  // An entry naming the whole reason text matches it as its code does.
  Json whole_reason = WithCapacity(sticky, true);
  whole_reason["jobQueue"]["jobStateTimeLimitActions"][0]["reason"] =
      "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - Unable to provision requested compute resources";
  EXPECT_EQ(ErrorOf(whole_reason), "");
  // A probability below 1 without a schedule ends by itself.
  EXPECT_EQ(ErrorOf(WithCapacity(Json::parse(R"({"instanceTypes": {"x": {"failureProbability": 0.9}}})"), false)),
            "");
}

Json WithLatencies(const Json& latencies) {
  Json doc = BaseDoc();
  doc["simulation"]["latencies"] = latencies;
  return doc;
}

TEST(LatencyJsonTest, AcceptedModelParsesAndRoundTrips) {
  const Json latencies = Json::parse(R"({"seed": 4, "instanceTypes": {"ml.p5.48xlarge": {
      "provisionSeconds": {"distribution": "LOGNORMAL", "medianSeconds": 180, "sigma": 0.6, "maxSeconds": 1800},
      "downloadSeconds": {"distribution": "UNIFORM", "minSeconds": 20, "maxSeconds": 90.5},
      "preemptionDrainSeconds": {"distribution": "CONSTANT", "seconds": 120}}}})");
  absl::StatusOr<Scenario> s = ParseScenario(WithLatencies(latencies).dump(), kSource);
  ASSERT_TRUE(s.ok()) << s.status();
  const TypeLatencies& t = s->knobs.latencies.types.at(0);
  ASSERT_TRUE(t.provision && t.download && t.drain);
  EXPECT_EQ(t.provision->kind, Distribution::kLognormal);
  EXPECT_EQ(t.provision->median, 180000);
  EXPECT_EQ(t.download->max, 90500);
  EXPECT_EQ(t.drain->a, 120000);
  absl::StatusOr<Scenario> again = ParseScenario(ScenarioToJson(*s), kSource);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *s);
}

TEST(LatencyJsonTest, BadDistributionsNameTheirPath) {
  auto error = [](const char* type_json) {
    return ErrorOf(WithLatencies(Json::parse(std::string(R"({"instanceTypes": {"x": )") + type_json + "}}")));
  };
  const std::string p = "simulation.latencies.instanceTypes.x.";
  EXPECT_NE(error(R"({"preemptionDrainSeconds": {"distribution": "UNIFORM", "minSeconds": 0, "maxSeconds": 121}})")
                .find(p + "preemptionDrainSeconds.maxSeconds: must be at most 120 seconds (SageMaker's stop grace"),
            std::string::npos);
  EXPECT_NE(error(R"({"preemptionDrainSeconds": {"distribution": "CONSTANT", "seconds": 300}})")
                .find(p + "preemptionDrainSeconds.seconds: must be at most 120"),
            std::string::npos);
  EXPECT_NE(error(R"({"provisionSeconds": {"distribution": "UNIFORM", "minSeconds": 10, "maxSeconds": 5}})")
                .find(p + "provisionSeconds.maxSeconds: must be >= minSeconds"),
            std::string::npos);
  EXPECT_NE(error(R"({"downloadSeconds": {"distribution": "LOGNORMAL", "medianSeconds": 10, "sigma": -1,
                      "maxSeconds": 50}})")
                .find(p + "downloadSeconds.sigma: must be a number from 0 to 10"),
            std::string::npos);
  EXPECT_NE(error(R"({"downloadSeconds": {"distribution": "LOGNORMAL", "medianSeconds": 10, "sigma": 1}})")
                .find(p + "downloadSeconds.maxSeconds: missing required key"),
            std::string::npos);
  EXPECT_NE(error(R"({"downloadSeconds": {"distribution": "GAMMA"}})").find(p + "downloadSeconds.distribution"),
            std::string::npos);
  EXPECT_NE(error(R"({"runSeconds": {"distribution": "CONSTANT", "seconds": 1}})").find(p + "runSeconds: unknown key"),
            std::string::npos);
}

TEST(LatencyDrawTest, DrawsStayInTheirBoundsAndFollowTheMedian) {
  LatencyDistribution uniform{Distribution::kUniform, 5000, 9000, 0, 0};
  LatencyDistribution lognormal{Distribution::kLognormal, 0, 600000, 60000, 0.5};
  std::vector<SimTime> draws;
  SimTime lo = uniform.max, hi = uniform.a;
  for (int64_t seq = 0; seq < 4000; ++seq) {
    const SimTime u = DrawLatency(uniform, 1, LatencyKind::kProvision, seq, seq * 7);
    ASSERT_GE(u, 5000);
    ASSERT_LE(u, 9000);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    const SimTime l = DrawLatency(lognormal, 1, LatencyKind::kDownload, seq, 0);
    ASSERT_GE(l, 0);
    ASSERT_LE(l, 600000);
    draws.push_back(l);
    // A pure function: the same arguments give the same value.
    ASSERT_EQ(l, DrawLatency(lognormal, 1, LatencyKind::kDownload, seq, 0));
  }
  EXPECT_LT(lo, 5100);
  EXPECT_GT(hi, 8900);
  std::sort(draws.begin(), draws.end());
  EXPECT_NEAR(static_cast<double>(draws[draws.size() / 2]), 60000.0, 4000.0);  // the median
  // exp(0.5 * 1.645) = 2.28: the 95th percentile of the lognormal.
  EXPECT_NEAR(static_cast<double>(draws[draws.size() * 95 / 100]), 60000.0 * 2.28, 12000.0);
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
