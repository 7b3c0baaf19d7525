// The synthetic generator and the .qsb format: determinism at any thread
// count, the shape of the workload, and an exact write/read round trip with
// corruption detected.
#include <string>

#include "engine/gen/generator.h"
#include "engine/gen/qsb.h"
#include "engine/scenario_json.h"
#include "gtest/gtest.h"
#include "oneapi/tbb/task_arena.h"

namespace qs::gen {
namespace {

GenOptions Small() {
  GenOptions o;
  o.jobs = 50'000;  // several blocks
  o.shares = 20;
  o.units = 5;
  o.seed = 42;
  return o;
}

TEST(GeneratorTest, SameBytesAtOneAndTwoThreads) {
  std::string one, two;
  tbb::task_arena a1(1), a2(2);
  a1.execute([&] { one = EncodeQsb(*Generate(Small())); });
  a2.execute([&] { two = EncodeQsb(*Generate(Small())); });
  EXPECT_EQ(one, two);
  GenOptions other = Small();
  other.seed = 43;
  EXPECT_NE(EncodeQsb(*Generate(other)), one);
}

TEST(GeneratorTest, WorkloadHasTheDocumentedShape) {
  absl::StatusOr<Scenario> sc = Generate(Small());
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(sc->submit_count, 50'000);
  int64_t shares = 0, submits = 0, updates = 0, terminates = 0, limit_changes = 0, big = 0;
  SimTime last = 0;
  std::vector<SimTime> runs;
  for (const ScenarioEvent& ev : sc->events) {
    EXPECT_GE(ev.time, last);
    last = ev.time;
    if (std::holds_alternative<CreateQuotaShareRequest>(ev.request)) ++shares;
    if (const auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request)) {
      ++submits;
      runs.push_back(r->run_time);
      if (r->instance_count >= 8) ++big;
      EXPECT_GE(r->instance_count, 1);
      EXPECT_LE(r->instance_count, 16);
    }
    if (std::holds_alternative<UpdateServiceJobRequest>(ev.request)) ++updates;
    if (std::holds_alternative<TerminateServiceJobRequest>(ev.request)) ++terminates;
    if (std::holds_alternative<UpdateQuotaShareRequest>(ev.request)) ++limit_changes;
  }
  EXPECT_EQ(shares, 20);
  EXPECT_EQ(submits, 50'000);
  EXPECT_EQ(limit_changes, 4);
  EXPECT_NEAR(static_cast<double>(updates) / 50'000, 0.02, 0.005);
  EXPECT_NEAR(static_cast<double>(terminates) / 50'000, 0.01, 0.003);
  EXPECT_NEAR(static_cast<double>(big) / 50'000, 0.13, 0.02);  // 8 and 16: 9% + 4%
  std::sort(runs.begin(), runs.end());
  const double median_s = static_cast<double>(runs[runs.size() / 2]) / 1000.0;
  EXPECT_NEAR(median_s, 900, 60);  // Philly-like 15 minutes
  EXPECT_GT(runs.back(), 86'400'000);  // a tail to days
}

TEST(GeneratorTest, RejectsAbsurdOptions) {
  GenOptions o = Small();
  o.jobs = 0;
  EXPECT_FALSE(Generate(o).ok());
  o = Small();
  o.shares = 21;
  EXPECT_FALSE(Generate(o).ok());
  o = Small();
  o.units = 6;
  EXPECT_FALSE(Generate(o).ok());
  o = Small();
  o.load = -1;
  EXPECT_FALSE(Generate(o).ok());
}

TEST(QsbTest, RoundTripIsExactForGeneratedAndParsedScenarios) {
  GenOptions o = Small();
  o.jobs = 3000;
  Scenario sc = *Generate(o);
  absl::StatusOr<Scenario> back = DecodeQsb(EncodeQsb(sc), sc.source);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(EncodeQsb(*back), EncodeQsb(sc));
  EXPECT_EQ(ScenarioToJson(*back), ScenarioToJson(sc));
  absl::StatusOr<Scenario> nb = LoadScenarioFile(QS_SHARED_DIR "/scenarios/notebook-example.json");
  ASSERT_TRUE(nb.ok());
  absl::StatusOr<Scenario> nb2 = DecodeQsb(EncodeQsb(*nb), nb->source);
  ASSERT_TRUE(nb2.ok()) << nb2.status().message();
  EXPECT_EQ(ScenarioToJson(*nb2), ScenarioToJson(*nb));
}

TEST(QsbTest, CorruptFilesGiveErrorsNotCrashes) {
  GenOptions o = Small();
  o.jobs = 200;
  const std::string good = EncodeQsb(*Generate(o));
  EXPECT_NE(DecodeQsb("", "x.qsb").status().message().find("bad magic"), std::string::npos);
  EXPECT_NE(DecodeQsb(good.substr(0, good.size() - 3), "x.qsb").status().message().find("truncated"),
            std::string::npos);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x5a;
  EXPECT_NE(DecodeQsb(flipped, "x.qsb").status().message().find("checksum"), std::string::npos);
  std::string version = good;
  version[4] = 9;
  EXPECT_NE(DecodeQsb(version, "x.qsb").status().message().find("version"), std::string::npos);
  // Every truncation point is handled.
  for (size_t cut = 0; cut < good.size(); cut += 97) EXPECT_FALSE(DecodeQsb(good.substr(0, cut), "x.qsb").ok());
}

}  // namespace
}  // namespace qs::gen
