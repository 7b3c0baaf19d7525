// The run summary of the documented AWS example, every figure derived by hand
// from the timeline in ../shared/scenarios/README.md.
#include "engine/log/summary.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "engine/gen/generator.h"
#include "engine/run.h"
#include "engine/io/scenario_json.h"
#include "engine/testing/scenario_builder.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace qs {
namespace {

Summary NotebookSummary() {
  absl::StatusOr<Scenario> sc = LoadScenarioFile(QS_SHARED_DIR "/scenarios/notebook-example.json");
  EXPECT_TRUE(sc.ok()) << sc.status().message();
  SummaryBuilder b;
  RunStats stats = RunFastEngine(*sc, b, RunOptions{});
  return b.Build(stats.invariant_violations);
}

TEST(SummaryTest, NotebookExampleFigures) {
  Summary s = NotebookSummary();
  EXPECT_EQ(s.end_time, 740000);
  EXPECT_EQ(s.invariant_violations, 0);
  const ShareSummary& qs1 = s.shares.at("QS1");
  const ShareSummary& qs2 = s.shares.at("QS2");
  EXPECT_EQ(s.shares.count("QS3"), 0u);  // no jobs, no records
  EXPECT_EQ(qs1.submitted, 3);
  EXPECT_EQ(qs1.succeeded, 3);
  EXPECT_EQ(qs1.failed, 0);
  EXPECT_EQ(qs2.submitted, 1);
  // Own: high 0-140 (drained at 140), low 140-440, med 440-740 = 740 s.
  // Borrowed from QS2: med 0-80, high 380-680 = 380 s.
  EXPECT_EQ(qs1.instance_ms.at("ml.g5.xlarge").first, 740000);
  EXPECT_EQ(qs1.instance_ms.at("ml.g5.xlarge").second, 380000);
  EXPECT_EQ(qs2.instance_ms.at("ml.g5.xlarge").first, 300000);
  // Waits RUNNABLE -> first SCHEDULED: high 0, med 0, low 140; qs2_job_1 20.
  EXPECT_EQ(qs1.wait.count, 3);
  EXPECT_EQ(qs1.wait.p50, 0);
  EXPECT_EQ(qs1.wait.max, 140000);
  EXPECT_EQ(qs1.wait.sum, 140000);
  EXPECT_EQ(qs2.wait.max, 20000);
  // med preempted cross-share, high in-share.
  EXPECT_EQ(qs1.preempted_cross, 1);
  EXPECT_EQ(qs1.preempted_in, 1);
  // Work lost: med ran 0-80, high ran 0-140.
  EXPECT_EQ(qs1.work_lost_instance_ms, 220000);
  // QS2 reclaimed at 60, its job started at 80.
  EXPECT_EQ(qs2.reclaim.count, 1);
  EXPECT_EQ(qs2.reclaim.max, 20000);
  EXPECT_EQ(qs1.reclaim.count, 0);
  // Utilisation: (740 + 380 + 300) / (3 x 740).
  EXPECT_DOUBLE_EQ(s.utilisation.at("ml.g5.xlarge"), 1420.0 / 2220.0);
  EXPECT_EQ(s.total.submitted, 4);
}

// Forwards records with the engine's job slots removed, as records read back
// from a JSON Lines log arrive.
class StripSlots : public LogSink {
 public:
  explicit StripSlots(LogSink& to) : to_(to) {}
  void OnJob(const JobRecord& r) override {
    JobRecord c = r;
    c.job_slot = -1;
    c.preempted_for_slot = -1;
    to_.OnJob(c);
  }
  void OnRejected(const RejectedRecord& r) override { to_.OnRejected(r); }
  void OnSnapshot(const SnapshotRecord& r) override { to_.OnSnapshot(r); }
  void OnCapacity(const CapacityRecord& r) override { to_.OnCapacity(r); }
  void OnEnd(SimTime t) override { to_.OnEnd(t); }

 private:
  LogSink& to_;
};

// Checkpoints (docs/semantics.md §6): the checkpointed part of a preempted
// run is not lost. A RESERVE L=1, in-share on, env 1: low (run 100,
// checkpoints every 30 s) RUNS from 0; high (priority 5) preempts it at 70;
// it drains until 90. Lost: 90 - 0 - 60 kept = 30 instance-seconds (90
// without checkpoints).
TEST(SummaryTest, CheckpointedWorkIsNotLost) {
  for (const bool checkpoints : {false, true}) {
    testing::JobBuilder low("low", "A");
    low.Run(100);
    if (checkpoints) low.CheckpointEvery(30);
    const Scenario sc = testing::ScenarioBuilder()
                            .Environment({{"ml.g5.xlarge", 1}})
                            .Share(testing::ShareBuilder("A").Limit("ml.g5.xlarge", 1).Reserve().InShare(true))
                            .Submit(0, low)
                            .Submit(70, testing::JobBuilder("high", "A").Priority(5).Run(10))
                            .Build();
    SummaryBuilder b;
    RunStats stats = RunFastEngine(sc, b, RunOptions{});
    const Summary s = b.Build(stats.invariant_violations);
    EXPECT_EQ(s.shares.at("A").work_lost_instance_ms, checkpoints ? 30000 : 90000);
    EXPECT_EQ(s.end_time, checkpoints ? 140000 : 200000);
  }
}

TEST(SummaryTest, SlotKeyedAndNameKeyedTracksAgree) {
  // Live runs key jobs by the engine's slot, logs read back by name: the two
  // must give the same summary, reclaims and unfinished jobs included.
  gen::GenOptions o = gen::GenOptions::For(gen::Profile::kStress);  // preemption-rich
  o.jobs = 3000;
  o.shares = 6;
  o.units = 2;
  o.seed = 7;
  absl::StatusOr<Scenario> sc = gen::Generate(o);
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  sc->knobs.horizon = sc->events.back().time / 2;  // leave jobs in flight
  SummaryBuilder by_slot, by_name;
  StripSlots strip(by_name);
  TeeSink tee({&by_slot, &strip});
  RunStats stats = RunFastEngine(*sc, tee, RunOptions{});
  const Summary a = by_slot.Build(stats.invariant_violations);
  const Summary b = by_name.Build(stats.invariant_violations);
  EXPECT_GT(a.total.preempted_cross, 0);
  EXPECT_GT(a.total.reclaim.count, 0);
  EXPECT_GT(a.total.unfinished, 0);
  EXPECT_EQ(SummaryToJson(a), SummaryToJson(b));
}

TEST(SummaryTest, PercentilesAreNearestRank) {
  // Ten jobs in one share with waits 0..9 s: p50 = 5th value, p95 = p99 = 10th.
  SummaryBuilder b;
  for (int i = 0; i < 10; ++i) {
    std::string name = "j" + std::to_string(i);
    JobRecord r;
    r.job_name = name;
    r.share_name = "S";
    r.status = JobStatus::kSubmitted;
    b.OnJob(r);
    r.status = JobStatus::kRunnable;
    b.OnJob(r);
    r.time = i * 1000;
    r.status = JobStatus::kScheduled;
    r.has_usage = true;
    r.capacity_unit = "u";
    r.quantity = 1;
    b.OnJob(r);
    r.has_usage = false;
    r.status = JobStatus::kSucceeded;
    r.time = 20000;
    b.OnJob(r);
  }
  b.OnEnd(20000);
  Summary s = b.Build(0);
  const DurationStats& w = s.shares.at("S").wait;
  EXPECT_EQ(w.count, 10);
  EXPECT_EQ(w.p50, 4000);
  EXPECT_EQ(w.p95, 9000);
  EXPECT_EQ(w.p99, 9000);
  EXPECT_EQ(w.max, 9000);
  EXPECT_EQ(s.shares.at("S").succeeded, 10);
}

// DurationStatsOf selects the order statistics (nth_element); here they are
// read off a sorted copy, on sizes around the percentile boundaries and with
// many equal values.
TEST(SummaryTest, SelectedPercentilesEqualSortedOnes) {
  std::mt19937_64 rng(42);
  for (size_t n : {1, 2, 3, 19, 20, 21, 99, 100, 101, 199, 1000, 4097}) {
    for (SimTime range : {SimTime{3}, SimTime{1'000'000}}) {
      std::vector<SimTime> v(n);
      for (SimTime& x : v) x = static_cast<SimTime>(rng() % static_cast<uint64_t>(range));
      std::vector<SimTime> sorted = v;
      std::sort(sorted.begin(), sorted.end());
      auto rank = [&](size_t p) { return sorted[std::max<size_t>((p * n + 99) / 100, 1) - 1]; };
      const DurationStats d = DurationStatsOf(v);
      SCOPED_TRACE(::testing::Message() << "n=" << n << " range=" << range);
      EXPECT_EQ(d.count, static_cast<int64_t>(n));
      EXPECT_EQ(d.sum, std::accumulate(v.begin(), v.end(), SimTime{0}));
      EXPECT_EQ(d.p50, rank(50));
      EXPECT_EQ(d.p95, rank(95));
      EXPECT_EQ(d.p99, rank(99));
      EXPECT_EQ(d.max, sorted.back());
    }
  }
  EXPECT_EQ(DurationStatsOf({}).count, 0);
}

TEST(SummaryTest, BacklogCountsWaitingJobsOverTheArrivals) {
  // a: submitted at 0, scheduled at 10 s, preempted back to RUNNABLE at 20 s,
  // scheduled again at 30 s. b: submitted at 5 s, terminated waiting at 15 s.
  // Waiting: [0,5) 1, [5,10) 2, [10,15) 1, [15,20) 0, [20,30) 1.
  SummaryBuilder b;
  auto rec = [&](const char* name, double t, JobStatus st) {
    JobRecord r;
    r.job_name = name;
    r.share_name = "S";
    r.time = static_cast<SimTime>(t * 1000);
    r.status = st;
    if (st == JobStatus::kScheduled) {
      r.has_usage = true;
      r.capacity_unit = "u";
      r.quantity = 1;
    }
    b.OnJob(r);
  };
  rec("a", 0, JobStatus::kSubmitted);
  rec("a", 0, JobStatus::kRunnable);
  rec("b", 5, JobStatus::kSubmitted);
  rec("b", 5, JobStatus::kRunnable);
  rec("a", 10, JobStatus::kScheduled);
  rec("b", 15, JobStatus::kFailed);
  rec("a", 20, JobStatus::kRunnable);
  rec("a", 30, JobStatus::kScheduled);
  rec("a", 40, JobStatus::kSucceeded);
  b.OnEnd(40000);
  const Summary s = b.Build(0);
  EXPECT_EQ(s.backlog.peak, 2);
  EXPECT_EQ(s.backlog.peak_time, 5000);
  EXPECT_EQ(s.backlog.last_submission, 5000);
  EXPECT_EQ(s.backlog.at_last_submission, 2);
  EXPECT_DOUBLE_EQ(s.backlog.mean_over_arrivals, 1.0);  // 1 job for the 5 s before b
  EXPECT_NE(SummaryToJson(s).find("\"atLastSubmission\": 2"), std::string::npos);
}

// gen's default profile is a cluster in a stable regime (issue "Engine v2",
// item 7): no rejected request, most jobs start within minutes, the backlog
// at the last arrival near its mean over the arrivals; the stress profile
// ends its arrivals with a backlog many times its mean.
TEST(SummaryTest, SteadyProfileIsStableAndStressIsNot) {
  auto run = [](gen::Profile p) {
    gen::GenOptions o = gen::GenOptions::For(p);
    o.jobs = 100'000;
    o.shares = 20;
    o.units = 5;
    o.seed = 7;
    absl::StatusOr<Scenario> sc = gen::Generate(o);
    EXPECT_TRUE(sc.ok());
    SummaryBuilder b;
    RunStats stats = RunFastEngine(*sc, b, RunOptions{});
    return b.Build(stats.invariant_violations);
  };
  const Summary steady = run(gen::Profile::kSteady);
  EXPECT_EQ(steady.invariant_violations, 0);
  EXPECT_EQ(steady.rejected_requests, 0);
  EXPECT_LT(steady.total.wait.p50, 10 * 60 * 1000);
  EXPECT_LT(steady.total.wait.p95, 12 * 3600 * 1000);
  EXPECT_LT(static_cast<double>(steady.backlog.at_last_submission), 3 * steady.backlog.mean_over_arrivals + 100);
  const Summary stress = run(gen::Profile::kStress);
  EXPECT_GT(stress.rejected_requests, 0);
  EXPECT_GT(static_cast<double>(stress.backlog.at_last_submission), 1.5 * stress.backlog.mean_over_arrivals);
}

TEST(SummaryTest, JsonHasTheContractFields) {
  std::string j = SummaryToJson(NotebookSummary());
  for (const char* key : {"\"endTime\"", "\"invariantViolations\"", "\"jobsSubmitted\"", "\"jobsSucceeded\"",
                          "\"jobsFailed\"", "\"instanceSeconds\"", "\"own\"", "\"borrowed\"", "\"utilisation\"",
                          "\"waitSeconds\"", "\"p50\"", "\"p95\"", "\"p99\"", "\"mean\"", "\"max\"",
                          "\"preemptions\"", "\"crossShare\"", "\"inShare\"", "\"workLostInstanceSeconds\"",
                          "\"reclaimLatencySeconds\""}) {
    EXPECT_NE(j.find(key), std::string::npos) << key;
  }
}

}  // namespace
}  // namespace qs
