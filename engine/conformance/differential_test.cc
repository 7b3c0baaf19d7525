// The fast engine against the reference engine: byte-identical event logs on
// every scenario in the repository and in ../shared/scenarios, and on
// thousands of seeded random scenarios; zero invariant violations throughout;
// and the fast engine's own summary (RunOptions::summary) byte-identical to
// the one SummaryBuilder makes of the reference engine's records.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/gen/generator.h"
#include "engine/io/scenario_json.h"
#include "engine/log/summary.h"
#include "engine/testing/capture.h"
#include "engine/testing/random_scenario.h"
#include "gtest/gtest.h"

namespace qs {
namespace {

std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> files;
  for (const char* dir : {QS_SOURCE_DIR "/scenarios", QS_SHARED_DIR "/scenarios"}) {
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".json") files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// A sink that counts job records (RunOptions::job_records false sends none).
class JobCounter : public LogSink {
 public:
  void OnJob(const JobRecord&) override { ++jobs; }
  void OnRejected(const RejectedRecord&) override {}
  void OnSnapshot(const SnapshotRecord&) override {}
  int64_t jobs = 0;
};

std::string SummaryText(const Summary& s) {
  return SummaryToJson(s) + "neverRan " + std::to_string(s.never_ran) + " (" + s.never_ran_example + ")\n";
}

// Both engines' logs byte for byte, and four summaries of the run: the fast
// engine's own (RunOptions::summary), with its records on and off, and
// SummaryBuilder's over each engine's records. Wait causes on for `causes`.
void ExpectEnginesAgree(const Scenario& sc, const std::string& what, bool causes = false) {
  Summary in_engine;
  SummaryBuilder from_fast, from_ref;
  from_fast.set_wait_causes(causes);
  from_ref.set_wait_causes(causes);
  RunOptions checked;
  checked.full_invariant_check = true;
  checked.wait_causes = causes;
  checked.summary = &in_engine;
  const testing::Captured fast = testing::CaptureFast(sc, checked, &from_fast);
  const testing::Captured ref = testing::CaptureReference(sc, kDefaultCyclePreemptions, causes, &from_ref);
  ASSERT_EQ(testing::FirstDifference(fast.log, ref.log), "") << what;
  EXPECT_EQ(fast.stats.invariant_violations, 0)
      << what << ": " << (fast.stats.violation_messages.empty() ? "" : fast.stats.violation_messages[0]);
  EXPECT_EQ(ref.stats.invariant_violations, 0)
      << what << ": " << (ref.stats.violation_messages.empty() ? "" : ref.stats.violation_messages[0]);
  EXPECT_EQ(fast.stats.end_time, ref.stats.end_time) << what;
  EXPECT_EQ(fast.stats.jobs_submitted, ref.stats.jobs_submitted) << what;

  const Summary want = from_ref.Build(ref.stats.invariant_violations);
  const std::string expected = SummaryText(want);
  EXPECT_EQ(SummaryText(from_fast.Build(fast.stats.invariant_violations)), expected) << what;
  EXPECT_EQ(SummaryText(in_engine), expected) << what << ": the fast engine's own summary";
  EXPECT_TRUE(SameFigures(in_engine, want)) << what << ": the fast engine's own summary, exactly";
  // Records off: no job record reaches the sink, the same summary and run.
  Summary alone;
  JobCounter counter;
  RunOptions o;
  o.wait_causes = causes;
  o.summary = &alone;
  o.job_records = false;
  const RunStats stats = RunFastEngine(sc, counter, o);
  EXPECT_EQ(counter.jobs, 0) << what;
  EXPECT_EQ(SummaryText(alone), expected) << what << ": the fast engine's own summary, without records";
  EXPECT_TRUE(SameFigures(alone, want)) << what << ": the fast engine's own summary without records, exactly";
  EXPECT_EQ(stats.end_time, fast.stats.end_time) << what;
  EXPECT_EQ(stats.events_processed, fast.stats.events_processed) << what;
}

TEST(DifferentialTest, EveryBundledScenarioGivesIdenticalLogs) {
  std::vector<std::string> files = ScenarioFiles();
  ASSERT_FALSE(files.empty());
  for (const std::string& f : files) {
    absl::StatusOr<Scenario> sc = LoadScenarioFile(f);
    ASSERT_TRUE(sc.ok()) << sc.status().message();
    ExpectEnginesAgree(*sc, f);
  }
}

int SeedCount() {
  const char* env = std::getenv("QS_DIFF_SEEDS");
  return env ? std::atoi(env) : 3000;
}

TEST(DifferentialTest, RandomScenariosGiveIdenticalLogsAndNoViolations) {
  const int n = SeedCount();
  for (int seed = 1; seed <= n; ++seed) {
    Scenario sc = testing::RandomScenario(static_cast<uint64_t>(seed));
    ExpectEnginesAgree(sc, "seed " + std::to_string(seed), /*causes=*/seed % 2 == 0);
    if (::testing::Test::HasFailure()) {
      // The scenario as a document, for `quotasim run --engine fast|reference`.
      const std::filesystem::path dump =
          std::filesystem::temp_directory_path() / ("qs-diff-seed-" + std::to_string(seed) + ".json");
      std::ofstream(dump) << ScenarioToJson(sc);
      ADD_FAILURE() << "first failing seed: " << seed << "; scenario written to " << dump.string()
                    << " (quotasim run it with --engine fast and --engine reference)";
      return;
    }
  }
}

// Seeds beyond the default range that once disagreed, kept for ever.
TEST(DifferentialTest, SeedsThatOnceDisagreed) {
  // 9157: a head found never-fitting in phase 2 blocked its share without
  // backfill, and the next pass (which backfills) was skipped as a no-op.
  for (uint64_t seed : {9157}) {
    ExpectEnginesAgree(testing::RandomScenario(seed), "seed " + std::to_string(seed));
  }
}

TEST(DifferentialTest, LargerRandomScenariosAgree) {
  testing::RandomScenarioOptions big;
  big.max_shares = 20;
  big.max_units = 5;
  big.max_jobs = 400;
  for (int seed = 1; seed <= 60; ++seed) {
    Scenario sc = testing::RandomScenario(static_cast<uint64_t>(1000000 + seed), big);
    ExpectEnginesAgree(sc, "big seed " + std::to_string(seed), /*causes=*/seed % 2 == 0);
    if (::testing::Test::HasFailure()) return;
  }
}

// A scenario that preempts for ever (docs/semantics.md, "Preemption
// cycles"): both engines stop it after the same pass, with the same log.
TEST(DifferentialTest, APreemptionCycleStopsBothEnginesAtTheSamePoint) {
  absl::StatusOr<Scenario> sc = LoadScenarioFile(QS_SOURCE_DIR "/engine/testdata/preemption-cycle.json");
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  for (int64_t k : {1, 2, 300}) {
    RunOptions o;
    o.full_invariant_check = true;
    o.cycle_preemptions = k;
    const testing::Captured fast = testing::CaptureFast(*sc, o);
    const testing::Captured ref = testing::CaptureReference(*sc, k);
    ASSERT_EQ(testing::FirstDifference(fast.log, ref.log), "") << k;
    EXPECT_NE(fast.stats.stopped, "") << k;
    EXPECT_EQ(fast.stats.stopped, ref.stats.stopped) << k;
    EXPECT_EQ(fast.stats.end_time, ref.stats.end_time) << k;
    EXPECT_EQ(fast.stats.invariant_violations + ref.stats.invariant_violations, 0) << k;
  }
}

// Skipping settled shares (engine/engine.h) only saves work: with it off,
// every share with a head is looked at in every round, and the bytes must be
// the same. Small random scenarios cover every request and knob; generated
// workloads of thousands of jobs keep shares settled over many passes, under
// each share order, victim order, a scheduling interval and lendable
// unassigned capacity.
void ExpectSkippingChangesNothing(const Scenario& sc, const std::string& what, bool full_check,
                                  const std::optional<Knobs>& knobs = std::nullopt) {
  RunOptions on;
  on.full_invariant_check = full_check;
  on.knobs = knobs;
  RunOptions off = on;
  off.skip_settled_shares = false;
  const testing::Captured a = testing::CaptureFast(sc, on);
  const testing::Captured b = testing::CaptureFast(sc, off);
  ASSERT_EQ(testing::FirstDifference(a.log, b.log), "") << what << " (fast: skipping; reference: not)";
  EXPECT_EQ(a.stats.invariant_violations, 0) << what;
  EXPECT_EQ(a.stats.passes, b.stats.passes) << what;
}

TEST(DifferentialTest, SkippingSettledSharesChangesNoByte) {
  for (int seed = 1; seed <= 500; ++seed) {
    ExpectSkippingChangesNothing(testing::RandomScenario(static_cast<uint64_t>(seed)),
                                 "seed " + std::to_string(seed), true);
    if (::testing::Test::HasFailure()) return;
  }
  for (uint64_t seed : {1, 2}) {
    gen::GenOptions g;
    g.jobs = 6000;
    g.shares = 20;
    g.units = 5;
    g.seed = seed;
    g.load = seed == 1 ? 0.9 : 2.0;  // backlogged shares stay settled longest
    absl::StatusOr<Scenario> sc = gen::Generate(g);
    ASSERT_TRUE(sc.ok()) << sc.status().message();
    std::vector<Knobs> variants(8, sc->knobs);
    variants[1].share_order = ShareOrder::kRoundRobin;
    variants[2].share_order = ShareOrder::kDeclaration;
    variants[3].victim_order = VictimOrder::kMostBorrowedFirst;
    variants[4].scheduling_interval = 60 * kMillisPerSecond;
    variants[5].unassigned_capacity = UnassignedCapacity::kLendable;
    variants[6].backfill = true;  // skipping is off: the same path twice
    variants[7].entitled_capacity = EntitledCapacity::kLendable;
    for (size_t v = 0; v < variants.size(); ++v) {
      ExpectSkippingChangesNothing(*sc, absl::StrCat("generated seed ", seed, " knobs variant ", v), false,
                                   variants[v]);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// A share's head can change without the job that changed it being the old
// or the new head: with victimReturn BEHIND_RESERVATION a reservation
// holder stays the head while only returned victims rank before it, so a
// job queued between them makes the first returned victim the head. The
// share must be looked at again (its head is new) whatever entitledCapacity
// says; under LENDABLE nothing else unsettled it, and the fast engine left
// j7644 of team-2 waiting at t=22635.501 in this workload (found by
// comparing logs with the reference engine, which has no settling).
TEST(DifferentialTest, AHeadChangedByAJobBehindItUnsettlesItsShare) {
  gen::GenOptions g = gen::GenOptions::For(gen::Profile::kStress);  // quotasim gen --profile stress
  g.jobs = 20000;
  g.shares = 20;
  g.units = 5;
  g.seed = 7;
  absl::StatusOr<Scenario> sc = gen::Generate(g);
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  Knobs k = sc->knobs;
  k.entitled_capacity = EntitledCapacity::kLendable;
  ExpectSkippingChangesNothing(*sc, "stress 20k seed 7, entitledCapacity LENDABLE", false, k);
}

// A self-bound share (engine/engine.h: over its own limit, no lower-priority
// job to preempt in-share) stays settled through other shares' changes, but
// not through a priority drop of its own running job, which gives its head
// a victim: "waiter" preempts "runner" at t=30, not when runner ends.
TEST(DifferentialTest, AnOwnRunningJobsPriorityDropUnsettlesASelfBoundShare) {
  absl::StatusOr<Scenario> sc = LoadScenarioFile(QS_SOURCE_DIR "/engine/testdata/self-bound-priority-drop.json");
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  ExpectEnginesAgree(*sc, "self-bound-priority-drop.json");
  ExpectSkippingChangesNothing(*sc, "self-bound-priority-drop.json", true);
  const testing::Captured fast = testing::CaptureFast(*sc);
  EXPECT_NE(fast.log.find(R"({"time": 30.0, "jobName": "runner", "quotaShareName": "A", "status": "RUNNING", )"
                          R"("statusReason": "PREEMPTION_IN_PROGRESS: In-share preemption)"),
            std::string::npos)
      << fast.log;
}

}  // namespace
}  // namespace qs
