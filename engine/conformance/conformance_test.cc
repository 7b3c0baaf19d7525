// The rule conformance suite on both engines (engine/testing/conformance.h):
// the AWS notebook example, never-fit reasons, latencies, preemption
// retries and summaries, terminations, capacity records, share and victim
// order, rejected requests, determinism. The rule table is rules_test.cc.
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "engine/io/scenario_json.h"
#include "engine/testing/conformance.h"
#include "engine/testing/scenario_builder.h"

namespace qs::testing {
namespace {

// ---------------------------------------------------------------- notebook
Scenario NotebookScenario() {
  return ScenarioBuilder()
      .Environment({{kG, 3}})
      .QueueName("ml-g5-xl-queue")
      .Share(ShareBuilder("QS1").Limit(kG, 1).LendAndBorrow(200).InShare(true))
      .Share(ShareBuilder("QS2").Limit(kG, 1).Lend().InShare(false))
      .Share(ShareBuilder("QS3").Limit(kG, 1).Reserve().InShare(false))
      .Drain(20)
      .Submit(0, JobBuilder("qs1_job_high", "QS1").Priority(3).Instances(kG, 1).Run(300))
      .Submit(0, JobBuilder("qs1_job_med", "QS1").Priority(2).Instances(kG, 1).Run(300))
      .Submit(0, JobBuilder("qs1_job_low", "QS1").Priority(1).Instances(kG, 1).Run(300))
      .Submit(60, JobBuilder("qs2_job_1", "QS2").Priority(1).Instances(kG, 1).Run(300))
      .UpdatePriority(120, "qs1_job_low", 4)
      .Snapshot(130)
      .Build();
}

// The README table of shared/scenarios (quota-semantics.md §7).
const std::vector<std::string> kNotebookKey = {
    "0.0 qs1_job_high SCHEDULED n=1",
    "0.0 qs1_job_med SCHEDULED n=1 QS2:1",
    "60.0 qs1_job_med RUNNING " + kXIn + " for=qs2_job_1",
    "80.0 qs1_job_med RUNNABLE " + kX + " #1",
    "80.0 qs2_job_1 SCHEDULED n=1",
    "120.0 qs1_job_high RUNNING " + kIIn + " for=qs1_job_low",
    "140.0 qs1_job_high RUNNABLE " + kI + " #1",
    "140.0 qs1_job_low SCHEDULED n=1",
    "380.0 qs2_job_1 SUCCEEDED",
    "380.0 qs1_job_high SCHEDULED n=1 QS2:1",
    "440.0 qs1_job_low SUCCEEDED",
    "440.0 qs1_job_med SCHEDULED n=1",
    "680.0 qs1_job_high SUCCEEDED",
    "740.0 qs1_job_med SUCCEEDED",
};

TEST_P(ConformanceTest, NotebookTimeline) {
  RecordingSink sink;
  RunStats stats = RunChecked(NotebookScenario(), sink);
  EXPECT_EQ(sink.Key(), kNotebookKey);
  // Every line at time 0, in order: the three submits, their RUNNABLE
  // events, the pass (high own, med borrows QS2's idle instance, low cannot:
  // QS3 is RESERVE), then STARTING / RUNNING in creation order.
  std::vector<std::string> full = sink.Full();
  std::vector<std::string> first(full.begin(), full.begin() + 12);
  EXPECT_EQ(first, (std::vector<std::string>{
                       "0.0 qs1_job_high SUBMITTED", "0.0 qs1_job_med SUBMITTED",
                       "0.0 qs1_job_low SUBMITTED", "0.0 qs1_job_high RUNNABLE",
                       "0.0 qs1_job_med RUNNABLE", "0.0 qs1_job_low RUNNABLE",
                       "0.0 qs1_job_high SCHEDULED n=1", "0.0 qs1_job_med SCHEDULED n=1 QS2:1",
                       "0.0 qs1_job_high STARTING", "0.0 qs1_job_med STARTING",
                       "0.0 qs1_job_high RUNNING", "0.0 qs1_job_med RUNNING"}));
  EXPECT_EQ(full[12], "60.0 qs2_job_1 SUBMITTED");
  EXPECT_EQ(full[13], "60.0 qs2_job_1 RUNNABLE");
  EXPECT_EQ(stats.end_time, 740 * kMillisPerSecond);
  EXPECT_EQ(stats.jobs_submitted, 4);
  EXPECT_TRUE(sink.rejected.empty());
  EXPECT_EQ(sink.capacity, (std::vector<std::string>{"0.0 ml.g5.xlarge 3"}));

  // The drain-end line of med carries its preempted attempt: SCHEDULED at 0,
  // stopped at 80.
  for (const Line& l : sink.lines) {
    if (l.job == "qs1_job_med" && l.has_summary) {
      ASSERT_EQ(l.recent.size(), 1u);
      EXPECT_EQ(l.recent[0].started_at, 0);
      EXPECT_EQ(l.recent[0].stopped_at, 80 * kMillisPerSecond);
      EXPECT_EQ(l.recent[0].status_reason, reasons::kCrossSharePreempted);
      EXPECT_EQ(l.share, "QS1");
    }
  }

  // Snapshot at 130: low (priority 4, RUNNABLE since 0) waits for high's
  // drain; med (2) RUNNABLE since 80. Use: QS1 has high (draining, still
  // holding), QS2 has qs2_job_1.
  ASSERT_EQ(sink.snapshots.size(), 1u);
  const Snap& snap = sink.snapshots[0];
  EXPECT_EQ(snap.time, 130 * kMillisPerSecond);
  EXPECT_EQ(snap.front, (std::vector<std::pair<std::string, SimTime>>{
                            {"qs1_job_low", 0}, {"qs1_job_med", 80 * kMillisPerSecond}}));
  EXPECT_EQ(snap.shares,
            (std::vector<std::string>{"QS1 front=qs1_job_low usage=ml.g5.xlarge:1,",
                                      "QS2 front=- usage=ml.g5.xlarge:1,", "QS3 front=- usage="}));
  EXPECT_EQ(snap.total, (std::vector<std::pair<std::string, int64_t>>{{kG, 2}}));
}

// frontOfQueue is ordered by priority, then share usage (the share's
// use/limit ratio), then queue order (docs/semantics.md §8). env 4; A and B
// RESERVE L=2. a1 (A, 2) and b1 (B, 1) run from 0: A uses 2/2, B 1/2.
// Waiting at 10: a2 (A, 1, since 1), b2 (B, 2, since 2; 1 + 2 > 2), a3 (A,
// priority 5, since 3). a3 comes first by priority; of the priority-0
// jobs b2 comes before the older a2, its share using less of its limit.
// topCapacityUtilization lists A (2 instances) before B (1).
TEST_P(ConformanceTest, SnapshotOrdersByPriorityThenShareUsage) {
  const Scenario sc = ScenarioBuilder()
                          .Environment({{kG, 4}})
                          .Share(ShareBuilder("B").Limit(kG, 2).Reserve().InShare(false))
                          .Share(ShareBuilder("A").Limit(kG, 2).Reserve().InShare(false))
                          .Submit(0, JobBuilder("a1", "A").Instances(kG, 2).Run(100))
                          .Submit(0, JobBuilder("b1", "B").Run(100))
                          .Submit(1, JobBuilder("a2", "A").Run(100))
                          .Submit(2, JobBuilder("b2", "B").Instances(kG, 2).Run(100))
                          .Submit(3, JobBuilder("a3", "A").Priority(5).Run(100))
                          .Snapshot(10)
                          .Build();
  RecordingSink sink;
  RunChecked(sc, sink);
  ASSERT_EQ(sink.snapshots.size(), 1u);
  EXPECT_EQ(sink.snapshots[0].front,
            (std::vector<std::pair<std::string, SimTime>>{
                {"a3", 3 * kMillisPerSecond}, {"b2", 2 * kMillisPerSecond}, {"a2", 1 * kMillisPerSecond}}));
  // Declaration order in the record; the log line orders the top
  // utilisation by instances in use.
  EXPECT_EQ(sink.snapshots[0].shares,
            (std::vector<std::string>{"B front=b2 usage=ml.g5.xlarge:1,", "A front=a3 usage=ml.g5.xlarge:2,"}));
  SnapshotRecord rec;
  rec.time = 10 * kMillisPerSecond;
  std::vector<SnapshotUsage> b_use{{kG, 1}}, a_use{{kG, 2}};
  rec.shares.push_back(SnapshotShare{"B", {}, b_use});
  rec.shares.push_back(SnapshotShare{"A", {}, a_use});
  std::string line;
  JsonlWriter::AppendSnapshot(line, rec);
  EXPECT_NE(line.find("\"topCapacityUtilization\": [{\"capacityUsage\": [{\"capacityUnit\": \"ml.g5.xlarge\", "
                      "\"quantity\": 2}], \"quotaShareName\": \"A\"}, {"),
            std::string::npos)
      << line;
}

// The JSON file of shared/scenarios gives the same log as the builder.
TEST_P(ConformanceTest, NotebookJsonFileMatchesBuilder) {
  const std::string path = std::string(QS_SHARED_DIR) + "/scenarios/notebook-example.json";
  absl::StatusOr<Scenario> sc = LoadScenarioFile(path);
  ASSERT_TRUE(sc.ok()) << sc.status();
  RecordingSink from_file;
  RunChecked(*sc, from_file);
  EXPECT_EQ(from_file.Key(), kNotebookKey);
  RecordingSink from_builder;
  RunChecked(NotebookScenario(), from_builder);
  EXPECT_EQ(from_file.Full(), from_builder.Full());

  // Byte-level: the formatted JSON Lines are identical too, run after run.
  auto jsonl = [](const Scenario& s) {
    std::ostringstream out;
    {
      JsonlWriter w(&out);
      RunEngineUnderTest(s, w);
    }
    return out.str();
  };
  EXPECT_EQ(jsonl(*sc), jsonl(*sc));
  EXPECT_NE(jsonl(*sc).find("\"borrowed\""), std::string::npos);
}


// ------------------------------------------------------ never-fit reasons
struct MisconfigCase {
  std::string name;
  Scenario scenario;
  std::string reason;
};

void PrintTo(const MisconfigCase& c, std::ostream* os) { *os << c.name; }

class MisconfigurationTest : public OnBothEngines<MisconfigCase> {};

TEST_P(MisconfigurationTest, ReasonVerbatim) {
  const MisconfigCase& c = Case();
  RecordingSink sink;
  RunStats stats = RunChecked(c.scenario, sink);
  EXPECT_EQ(sink.Key(), (std::vector<std::string>{"0.0 j RUNNABLE " + c.reason}));
  EXPECT_EQ(stats.end_time, 0);
}

std::vector<MisconfigCase> MisconfigCases() {
  std::vector<MisconfigCase> cases;
  auto one = [](const ShareBuilder& share, const qs::testing::UnitLimits& env,
                const JobBuilder& job) {
    return ScenarioBuilder()
        .Environment(env)
        .Share(share)
        .Share(ShareBuilder("Lender").Limit(kG, 1).Lend())
        .Share(ShareBuilder("Reserved").Limit(kG, 5).Reserve())
        .Submit(0, job)
        .Build();
  };
  const std::string kSe = S(reasons::kSeMaxResource);
  // 1. n > SE[u].
  cases.push_back({"ServiceEnvironmentMaxResource",
                   one(ShareBuilder("A").Limit(kG, 4).LendAndBorrow(), {{kG, 2}},
                       JobBuilder("j", "A").Instances(kG, 3).Run(1)),
                   kSe});
  // 1. u not in the environment at all.
  cases.push_back({"UnitNotInEnvironment",
                   one(ShareBuilder("A").Limit("ml.p4d.24xlarge", 4).Reserve(), {{kG, 2}},
                       JobBuilder("j", "A").Instances("ml.p4d.24xlarge", 1).Run(1)),
                   kSe});
  // 2. RESERVE, n > L.
  cases.push_back({"ReserveExceedsLimit",
                   one(ShareBuilder("A").Limit(kG, 1).Reserve(), {{kG, 10}},
                       JobBuilder("j", "A").Instances(kG, 2).Run(1)),
                   S(reasons::kQuotaLimitExceeded)});
  // 2. LEND, n > L.
  cases.push_back({"LendExceedsLimit",
                   one(ShareBuilder("A").Limit(kG, 1).Lend(), {{kG, 10}},
                       JobBuilder("j", "A").Instances(kG, 2).Run(1)),
                   S(reasons::kQuotaLimitExceeded)});
  // 3. LEND_AND_BORROW, L=2, borrowLimit 50 -> B=1; n=4 > 3.
  cases.push_back({"LendAndBorrowExceedsLimitAndBorrowLimit",
                   one(ShareBuilder("A").Limit(kG, 2).LendAndBorrow(50), {{kG, 10}},
                       JobBuilder("j", "A").Instances(kG, 4).Run(1)),
                   S(reasons::kQuotaAndBorrowLimitExceeded)});
  // 4. unlimited borrow, n - L = 2 > 1 (Lender only; Reserved is RESERVE).
  cases.push_back({"BorrowExceedsConfiguredBorrowable",
                   one(ShareBuilder("A").Limit(kG, 1).LendAndBorrow(), {{kG, 10}},
                       JobBuilder("j", "A").Instances(kG, 3).Run(1)),
                   S(reasons::kBorrowExceedsConfigured)});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(NeverFits, MisconfigurationTest,
                         ::testing::Combine(BothEngines(), ::testing::ValuesIn(MisconfigCases())),
                         BothEnginesNames<MisconfigCase>([](const ::testing::TestParamInfo<MisconfigCase>& p) {
                           return p.param.name;
                         }));

// A MISCONFIGURATION reason is cleared (line RUNNABLE "") when the job fits
// again, before it dispatches.
TEST_P(ConformanceTest, MisconfigurationClearedLine) {
  Scenario sc = ScenarioBuilder()
                    .Environment({{kG, 2}})
                    .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                    .Submit(0, JobBuilder("big", "A").Instances(kG, 2).Run(100))
                    .UpdateShare(300, ShareUpdateBuilder("A").Limit(kG, 2))
                    .Build();
  RecordingSink sink;
  RunChecked(sc, sink);
  EXPECT_EQ(sink.Full(), (std::vector<std::string>{
                             "0.0 big SUBMITTED", "0.0 big RUNNABLE",
                             "0.0 big RUNNABLE " + S(reasons::kQuotaLimitExceeded),
                             "300.0 big RUNNABLE", "300.0 big SCHEDULED n=2", "300.0 big STARTING",
                             "300.0 big RUNNING", "400.0 big SUCCEEDED"}));
}

TEST_P(ConformanceTest, LatenciesFullTrace) {
  Scenario sc = ScenarioBuilder()
                    .Environment({{kG, 1}})
                    .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                    .SubmitLatency(5)
                    .Provision(7)
                    .Download(11)
                    .Submit(0, JobBuilder("j", "A").Run(100))
                    .Build();
  RecordingSink sink;
  RunChecked(sc, sink);
  EXPECT_EQ(sink.Full(),
            (std::vector<std::string>{"0.0 j SUBMITTED", "5.0 j RUNNABLE", "5.0 j SCHEDULED n=1",
                                      "12.0 j STARTING", "23.0 j RUNNING", "123.0 j SUCCEEDED"}));
}

// Preemption while SCHEDULED (provision 30 s): the victim's line keeps its
// status SCHEDULED; its pending STARTING is cancelled.
TEST_P(ConformanceTest, PreemptionFreezesScheduledVictim) {
  Scenario sc = ScenarioBuilder()
                    .Environment({{kG, 1}})
                    .Share(ShareBuilder("A").Limit(kG, 1).Reserve().InShare(true))
                    .Provision(30)
                    .Submit(0, JobBuilder("low", "A").Priority(1).Run(100))
                    .Submit(10, JobBuilder("high", "A").Priority(2).Run(100))
                    .Build();
  RecordingSink sink;
  RunChecked(sc, sink);
  // 0 low SCHEDULED; 10 preempted (still SCHEDULED; its STARTING at 30 is
  // cancelled); 30 drain end; high SCHEDULED 30, STARTING 60, ends 160; low
  // SCHEDULED 160, STARTING 190, RUNNING 190, ends 290.
  EXPECT_EQ(sink.Key(),
            (std::vector<std::string>{
                "0.0 low SCHEDULED n=1", "10.0 low SCHEDULED " + kIIn + " for=high",
                "30.0 low RUNNABLE " + kI + " #1", "30.0 high SCHEDULED n=1",
                "160.0 high SUCCEEDED", "160.0 low SCHEDULED n=1", "290.0 low SUCCEEDED"}));
}

// preemptionRetriesBeforeTermination unset = unlimited; set to 2 = FAILED at
// the third preemption. v (priority 0, run 1000) is preempted by h1 at 100,
// h2 at 200, h3 at 300 (each priority 5, run 10): drains 100-120, 200-220,
// 300-320; v re-dispatches at 130 and 230 after each h ends.
class PreemptionRetriesTest : public OnBothEngines<std::optional<int64_t>> {};

TEST_P(PreemptionRetriesTest, ThirdPreemption) {
  JobBuilder v = JobBuilder("v", "A").Run(1000);
  if (Case()) v.PreemptionRetries(*Case());
  Scenario sc = ScenarioBuilder()
                    .Environment({{kG, 1}})
                    .Share(ShareBuilder("A").Limit(kG, 1).Reserve().InShare(true))
                    .Submit(0, v)
                    .Submit(100, JobBuilder("h1", "A").Priority(5).Run(10))
                    .Submit(200, JobBuilder("h2", "A").Priority(5).Run(10))
                    .Submit(300, JobBuilder("h3", "A").Priority(5).Run(10))
                    .Build();
  RecordingSink sink;
  RunStats stats = RunChecked(sc, sink);
  const Line* last_v_drain = nullptr;
  for (const Line& l : sink.lines) {
    if (l.job == "v" && l.has_summary) last_v_drain = &l;
  }
  ASSERT_NE(last_v_drain, nullptr);
  EXPECT_EQ(last_v_drain->time, 320 * kMillisPerSecond);
  EXPECT_EQ(last_v_drain->count, 3);
  ASSERT_EQ(last_v_drain->recent.size(), 3u);
  EXPECT_EQ(last_v_drain->recent[0].started_at, 230 * kMillisPerSecond);  // newest first
  EXPECT_EQ(last_v_drain->recent[0].stopped_at, 320 * kMillisPerSecond);
  EXPECT_EQ(last_v_drain->recent[1].started_at, 130 * kMillisPerSecond);
  EXPECT_EQ(last_v_drain->recent[1].stopped_at, 220 * kMillisPerSecond);
  EXPECT_EQ(last_v_drain->recent[2].started_at, 0);
  EXPECT_EQ(last_v_drain->recent[2].stopped_at, 120 * kMillisPerSecond);
  if (Case()) {
    EXPECT_EQ(last_v_drain->status, "FAILED");
    EXPECT_EQ(last_v_drain->reason, reasons::kPreemptionRetriesExhausted);
    EXPECT_EQ(sink.Last("v")->status, "FAILED");
    // h3 runs 320-330; v's cancelled attempt end (dispatched 230, run 1000)
    // is still popped at 1230.
    EXPECT_EQ(stats.end_time, 1230 * kMillisPerSecond);
  } else {
    EXPECT_EQ(last_v_drain->status, "RUNNABLE");
    EXPECT_EQ(last_v_drain->reason, reasons::kInSharePreempted);
    EXPECT_EQ(sink.Last("v")->status, "SUCCEEDED");
    EXPECT_EQ(stats.end_time, 1330 * kMillisPerSecond);  // v runs 330-1330
  }
}

INSTANTIATE_TEST_SUITE_P(Retries, PreemptionRetriesTest,
                         ::testing::Combine(BothEngines(), ::testing::Values(std::optional<int64_t>(),
                                                                             std::optional<int64_t>(2))),
                         BothEnginesNames<std::optional<int64_t>>(
                             [](const ::testing::TestParamInfo<std::optional<int64_t>>& p) {
                               return p.param ? std::string("Two") : std::string("Unset");
                             }));

// Window of 10 recent attempts, newest first.
TEST_P(ConformanceTest, PreemptionSummaryWindowOfTen) {
  ScenarioBuilder b;
  b.Environment({{kG, 1}})
      .Share(ShareBuilder("A").Limit(kG, 1).Reserve().InShare(true))
      .Submit(0, JobBuilder("v", "A").Run(1000));
  // h_i at 100*i preempts v (drain 20), runs 10: v back at 100*i + 30.
  for (int i = 1; i <= 12; ++i) {
    b.Submit(100 * i, JobBuilder("h" + std::to_string(i), "A").Priority(5).Run(10));
  }
  RecordingSink sink;
  RunChecked(b.Build(), sink);
  const Line* last = nullptr;
  for (const Line& l : sink.lines) {
    if (l.job == "v" && l.has_summary) last = &l;
  }
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->count, 12);
  ASSERT_EQ(last->recent.size(), 10u);
  EXPECT_EQ(last->recent[0].stopped_at, 1220 * kMillisPerSecond);
  EXPECT_EQ(last->recent[9].stopped_at, 320 * kMillisPerSecond);
}

// TerminateServiceJob of a RUNNABLE job, of a draining victim (its
// instance goes to the hold of the job it drained for, which dispatches at
// once) and of a RUNNING job; terminating a FAILED job is rejected.
TEST_P(ConformanceTest, TerminateRunnableDrainingAndRunning) {
  Scenario sc = ScenarioBuilder()
                    .Environment({{kG, 1}})
                    .Share(ShareBuilder("A").Limit(kG, 1).Reserve().InShare(true))
                    .Submit(0, JobBuilder("r1", "A").Priority(1).Run(1000))
                    .Submit(0, JobBuilder("r2", "A").Priority(0).Run(1000))
                    .Terminate(50, "r2", "stop r2")
                    .Submit(100, JobBuilder("h", "A").Priority(5).Run(100))
                    .Terminate(110, "r1", "stop r1")
                    .Terminate(150, "h", "stop h")
                    .Terminate(160, "h", "again")
                    .Build();
  RecordingSink sink;
  RunStats stats = RunChecked(sc, sink);
  // 100: h preempts r1 (in-share), hold[h] = 0. 110: r1 terminated while
  // draining: FAILED at once, hold[h] = 1; the pass dispatches h. r1's drain
  // end (120), its attempt end (1000) and h's attempt end (210) are
  // cancelled: they are popped at their time and skipped silently, but
  // still make instants, so the run ends at 1000.
  EXPECT_EQ(sink.Key(), (std::vector<std::string>{
                            "0.0 r1 SCHEDULED n=1", "50.0 r2 FAILED stop r2",
                            "100.0 r1 RUNNING " + kIIn + " for=h", "110.0 r1 FAILED stop r1",
                            "110.0 h SCHEDULED n=1", "150.0 h FAILED stop h"}));
  ASSERT_EQ(sink.rejected.size(), 1u);
  EXPECT_EQ(sink.rejected[0].time, 160 * kMillisPerSecond);
  EXPECT_EQ(sink.rejected[0].action, "TerminateServiceJob");
  EXPECT_EQ(sink.rejected[0].message, "ClientException: job 'h' is already FAILED");
  EXPECT_EQ(sink.rejected[0].path, "events[6]");
  EXPECT_EQ(stats.end_time, 1000 * kMillisPerSecond);
}

// Capacity records: every unit at 0 (name order), then the changed units of
// an accepted UpdateServiceEnvironment (a removed unit gets 0).
TEST_P(ConformanceTest, CapacityRecords) {
  Scenario sc = ScenarioBuilder()
                    .Environment({{"gpu", 3}, {"cpu", 2}, {"same", 1}})
                    .Share(ShareBuilder("A").Limit("gpu", 1).Reserve())
                    .UpdateEnvironment(50, {{"tpu", 4}, {"gpu", 1}, {"same", 1}})
                    .Build();
  RecordingSink sink;
  RunChecked(sc, sink);
  EXPECT_EQ(sink.capacity, (std::vector<std::string>{"0.0 cpu 2", "0.0 gpu 3", "0.0 same 1",
                                                     "50.0 cpu 0", "50.0 gpu 1", "50.0 tpu 4"}));
}

// Share visiting orders. y0 (Y) runs from 0; at 10 x2 (X) then y1 (Y)
// compete for the one free instance (X and Y RESERVE L=2, env 2).
//  UNDER_LIMIT_FIRST: r(X) = 0 < r(Y) = 1/2 -> X first -> x2.
//  DECLARATION: X first -> x2.
//  ROUND_ROBIN: rounds so far at t=10: 3 (at 0: the pass dispatching y0 has
//  2 rounds, the pass after STARTING/RUNNING 1) -> rotate by 3 mod 2 = 1 ->
//  Y first -> y1.
struct OrderCase {
  ShareOrder order;
  std::string winner;
};
class ShareOrderTest : public OnBothEngines<OrderCase> {};

TEST_P(ShareOrderTest, WhoGetsTheLastInstance) {
  Scenario sc = ScenarioBuilder()
                    .Environment({{kG, 2}})
                    .Order(Case().order)
                    .Share(ShareBuilder("X").Limit(kG, 2).Reserve())
                    .Share(ShareBuilder("Y").Limit(kG, 2).Reserve())
                    .Submit(0, JobBuilder("y0", "Y").Run(1000))
                    .Submit(10, JobBuilder("x2", "X").Run(100))
                    .Submit(10, JobBuilder("y1", "Y").Run(100))
                    .Build();
  RecordingSink sink;
  RunChecked(sc, sink);
  std::vector<std::string> key = sink.Key();
  ASSERT_GE(key.size(), 2u);
  EXPECT_EQ(key[1], "10.0 " + Case().winner + " SCHEDULED n=1");
}

INSTANTIATE_TEST_SUITE_P(Orders, ShareOrderTest,
                         ::testing::Combine(BothEngines(),
                                            ::testing::Values(OrderCase{ShareOrder::kUnderLimitFirst, "x2"},
                                                              OrderCase{ShareOrder::kDeclaration, "x2"},
                                                              OrderCase{ShareOrder::kRoundRobin, "y1"})),
                         BothEnginesNames<OrderCase>([](const ::testing::TestParamInfo<OrderCase>& p) {
                           return std::string(
                               ShareOrderName(p.param.order) == std::string("UNDER_LIMIT_FIRST")
                                   ? "UnderLimitFirst"
                               : ShareOrderName(p.param.order) == std::string("DECLARATION")
                                   ? "Declaration"
                                   : "RoundRobin");
                         }));

// UNDER_LIMIT_FIRST compares exact fractions: X uses 2 of 3 (2/3), Y 3 of
// 5 (3/5 < 2/3) -> Y is visited first and y wins the last instance although
// x was submitted first. env 6 = 2 + 3 + 1 free.
TEST_P(ConformanceTest, UnderLimitFirstExactFractions) {
  Scenario sc = ScenarioBuilder()
                    .Environment({{kG, 6}})
                    .Share(ShareBuilder("X").Limit(kG, 3).Reserve())
                    .Share(ShareBuilder("Y").Limit(kG, 5).Reserve())
                    .Submit(0, JobBuilder("x0", "X").Instances(kG, 2).Run(1000))
                    .Submit(0, JobBuilder("y0", "Y").Instances(kG, 3).Run(1000))
                    .Submit(10, JobBuilder("x", "X").Run(100))
                    .Submit(10, JobBuilder("y", "Y").Run(100))
                    .Build();
  RecordingSink sink;
  RunChecked(sc, sink);
  std::vector<std::string> key = sink.Key();
  ASSERT_GE(key.size(), 3u);
  EXPECT_EQ(key[2], "10.0 y SCHEDULED n=1");
}

// UNDER_LIMIT_FIRST ties (all r = 0): shares with a head first, older head
// first (createdAt, then submission order), then name. Declared B, A; b1 is
// submitted before a1 at the same instant -> B first -> b1 gets the one
// instance.
TEST_P(ConformanceTest, UnderLimitFirstTieOlderHead) {
  Scenario sc = ScenarioBuilder()
                    .Environment({{kG, 1}})
                    .Share(ShareBuilder("B").Limit(kG, 1).Reserve())
                    .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                    .Submit(0, JobBuilder("b1", "B").Run(100))
                    .Submit(0, JobBuilder("a1", "A").Run(100))
                    .Build();
  RecordingSink sink;
  RunChecked(sc, sink);
  EXPECT_EQ(sink.Key(), (std::vector<std::string>{"0.0 b1 SCHEDULED n=1", "100.0 b1 SUCCEEDED",
                                                  "100.0 a1 SCHEDULED n=1", "200.0 a1 SUCCEEDED"}));
}

// Victim orders. env 4; A LAB L=1, B LEND L=3. a0 (priority 9) A's own; p
// (priority 1, n=2) borrows B:2 at 0; q (priority 0) borrows B:1 at 5. At 10
// b1 (n=1) reclaims from B with group A = {p, q}.
//  PRIORITY_THEN_NEWEST: q (priority 0) first; q alone fits -> q.
//  MOST_BORROWED_FIRST: p (2 borrowed) first; p alone fits -> p.
struct VictimCase {
  VictimOrder order;
  std::string victim;
};
class VictimOrderTest : public OnBothEngines<VictimCase> {};

TEST_P(VictimOrderTest, WhoIsPreempted) {
  Scenario sc = ScenarioBuilder()
                    .Environment({{kG, 4}})
                    .Victims(Case().order)
                    .Share(ShareBuilder("A").Limit(kG, 1).LendAndBorrow())
                    .Share(ShareBuilder("B").Limit(kG, 3).Lend())
                    .Submit(0, JobBuilder("a0", "A").Priority(9).Run(1000))
                    .Submit(0, JobBuilder("p", "A").Priority(1).Instances(kG, 2).Run(1000))
                    .Submit(5, JobBuilder("q", "A").Priority(0).Run(1000))
                    .Submit(10, JobBuilder("b1", "B").Run(100))
                    .Build();
  RecordingSink sink;
  RunChecked(sc, sink);
  std::vector<std::string> key = sink.Key();
  ASSERT_GE(key.size(), 6u);
  EXPECT_EQ(key[0], "0.0 a0 SCHEDULED n=1");
  EXPECT_EQ(key[1], "0.0 p SCHEDULED n=2 B:2");
  EXPECT_EQ(key[2], "5.0 q SCHEDULED n=1 B:1");
  EXPECT_EQ(key[3], "10.0 " + Case().victim + " RUNNING " + kXIn + " for=b1");
  EXPECT_EQ(key[4], "30.0 " + Case().victim + " RUNNABLE " + kX + " #1");
  EXPECT_EQ(key[5], "30.0 b1 SCHEDULED n=1");
}

INSTANTIATE_TEST_SUITE_P(Orders, VictimOrderTest,
                         ::testing::Combine(BothEngines(),
                                            ::testing::Values(VictimCase{VictimOrder::kPriorityThenNewest, "q"},
                                                              VictimCase{VictimOrder::kMostBorrowedFirst, "p"})),
                         BothEnginesNames<VictimCase>([](const ::testing::TestParamInfo<VictimCase>& p) {
                           return p.param.order == VictimOrder::kPriorityThenNewest
                                      ? std::string("PriorityThenNewest")
                                      : std::string("MostBorrowedFirst");
                         }));

// Victim tie-breaks (docs/semantics.md §6), under both victim orders. env
// and B (LEND) full with A's jobs; a0 (A, priority 9) runs on A's own limit
// L=1; two jobs of A borrowing from B tie on what the order compares first;
// at 10 b1 (B, n=1) reclaims one instance, and one of them alone fits.
//  newest: p (0) and q (5), priority 0, borrowed 1 each -> q, dispatched
//          later (MOST_BORROWED_FIRST: borrowed tie, priority tie -> q);
//  borrowed: p (B:2) and q (B:1), priority 0, both dispatched at 0 -> p;
//  name: y then x submitted at 0, priority 0, B:1 each, env 3 -> x.
struct TieCase {
  std::string name;
  VictimOrder order;
  Scenario scenario;
  std::string victim;
};
void PrintTo(const TieCase& c, std::ostream* os) { *os << c.name; }

class VictimTieBreakTest : public OnBothEngines<TieCase> {};

TEST_P(VictimTieBreakTest, WhoIsPreempted) {
  RecordingSink sink;
  RunChecked(Case().scenario, sink);
  std::vector<std::string> victims;
  for (const std::string& line : sink.Key()) {
    if (line.find(" for=b1") != std::string::npos) victims.push_back(line);
  }
  ASSERT_EQ(victims.size(), 1u) << ::testing::PrintToString(sink.Key());
  EXPECT_EQ(victims[0], "10.0 " + Case().victim + " RUNNING " + kXIn + " for=b1");
  EXPECT_EQ(sink.Last("b1")->status, "SUCCEEDED");
}

std::vector<TieCase> TieCases() {
  std::vector<TieCase> out;
  for (VictimOrder order : {VictimOrder::kPriorityThenNewest, VictimOrder::kMostBorrowedFirst}) {
    const std::string o = order == VictimOrder::kPriorityThenNewest ? "PriorityThenNewest" : "MostBorrowedFirst";
    auto base = [&](int64_t env) {
      ScenarioBuilder b;
      b.Environment({{kG, env}})
          .Victims(order)
          .Share(ShareBuilder("A").Limit(kG, 1).LendAndBorrow())
          .Share(ShareBuilder("B").Limit(kG, 3).Lend())
          .Submit(0, JobBuilder("a0", "A").Priority(9).Run(1000));
      return b;
    };
    out.push_back({o + "NewestFirst", order,
                   base(4)
                       .Submit(0, JobBuilder("p", "A").Run(1000))
                       .Submit(0, JobBuilder("r", "A").Priority(5).Run(1000))
                       .Submit(5, JobBuilder("q", "A").Run(1000))
                       .Submit(10, JobBuilder("b1", "B").Run(100))
                       .Build(),
                   "q"});
    out.push_back({o + "MoreBorrowedFirst", order,
                   base(4)
                       .Submit(0, JobBuilder("q", "A").Run(1000))
                       .Submit(0, JobBuilder("p", "A").Instances(kG, 2).Run(1000))
                       .Submit(10, JobBuilder("b1", "B").Run(100))
                       .Build(),
                   "p"});
    out.push_back({o + "NameLast", order,
                   base(3)
                       .Submit(0, JobBuilder("y", "A").Run(1000))
                       .Submit(0, JobBuilder("x", "A").Run(1000))
                       .Submit(10, JobBuilder("b1", "B").Run(100))
                       .Build(),
                   "x"});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ties, VictimTieBreakTest, ::testing::Combine(BothEngines(), ::testing::ValuesIn(TieCases())),
                         BothEnginesNames<TieCase>([](const ::testing::TestParamInfo<TieCase>& p) {
                           return p.param.name;
                         }));

// Rejected requests write a `rejected` record with the ClientException
// message and change nothing; the run continues (the valid job still runs).
struct RejectCase {
  std::string name;
  Scenario scenario;
  std::string action, message, path;
};
void PrintTo(const RejectCase& c, std::ostream* os) { *os << c.name; }

class RejectedRequestTest : public OnBothEngines<RejectCase> {};

TEST_P(RejectedRequestTest, LoggedAndRunContinues) {
  const RejectCase& c = Case();
  RecordingSink sink;
  RunChecked(c.scenario, sink);
  ASSERT_EQ(sink.rejected.size(), 1u);
  EXPECT_EQ(sink.rejected[0].action, c.action);
  EXPECT_EQ(sink.rejected[0].message, c.message);
  EXPECT_EQ(sink.rejected[0].path, c.path);
  const Line* ok = sink.Last("ok");
  ASSERT_NE(ok, nullptr);
  EXPECT_EQ(ok->status, "SUCCEEDED");
}

std::vector<RejectCase> RejectCases() {
  std::vector<RejectCase> cases;
  auto base = [] {
    ScenarioBuilder b;
    b.Environment({{kG, 2}}).Share(ShareBuilder("A").Limit(kG, 1).Reserve());
    return b;
  };
  cases.push_back({"UnknownShare",
                   base()
                       .Submit(0, JobBuilder("bad", "nope").Run(10))
                       .Submit(0, JobBuilder("ok", "A").Run(10))
                       .Build(),
                   "SubmitServiceJob",
                   "ClientException: quotaShareName 'nope' does not exist in job queue 'q'",
                   "events[0]"});
  cases.push_back({"Priority10000",
                   base()
                       .Submit(0, JobBuilder("ok", "A").Run(10))
                       .Submit(0, JobBuilder("bad", "A").Priority(10000).Run(10))
                       .Build(),
                   "SubmitServiceJob",
                   "ClientException: schedulingPriority must be between 0 and 9999, got 10000",
                   "events[1]"});
  cases.push_back(
      {"UpdatePriority10000",
       base().Submit(0, JobBuilder("ok", "A").Run(10)).UpdatePriority(5, "ok", 10000).Build(),
       "UpdateServiceJob",
       "ClientException: schedulingPriority must be between 0 and 9999, got 10000", "events[1]"});
  {
    ScenarioBuilder b = base();
    for (int i = 1; i <= 20; ++i) {
      b.Share(ShareBuilder("S" + std::to_string(i)).Limit(kG, 1).Reserve());
    }
    cases.push_back({"TwentyFirstShare", b.Submit(0, JobBuilder("ok", "A").Run(10)).Build(),
                     "CreateQuotaShare",
                     "ClientException: job queue 'q' already has the maximum of 20 quota shares",
                     "quotaShares[20]"});
  }
  cases.push_back({"DuplicateShareName",
                   base()
                       .Share(ShareBuilder("A").Limit(kG, 2).Lend())
                       .Submit(0, JobBuilder("ok", "A").Run(10))
                       .Build(),
                   "CreateQuotaShare",
                   "ClientException: quota share 'A' already exists in job queue 'q'",
                   "quotaShares[1]"});
  cases.push_back({"BorrowLimitOnLend",
                   base()
                       .Share(ShareBuilder("L").Limit(kG, 1).Sharing(Strategy::kLend, 50))
                       .Submit(0, JobBuilder("ok", "A").Run(10))
                       .Build(),
                   "CreateQuotaShare",
                   "ClientException: resourceSharingConfiguration.borrowLimit is only valid with "
                   "strategy LEND_AND_BORROW, not LEND",
                   "quotaShares[1]"});
  cases.push_back({"SubmitToDisabledShare",
                   base()
                       .Share(ShareBuilder("D").Limit(kG, 1).Reserve().Disabled())
                       .Submit(0, JobBuilder("bad", "D").Run(10))
                       .Submit(0, JobBuilder("ok", "A").Run(10))
                       .Build(),
                   "SubmitServiceJob",
                   "ClientException: quota share 'D' is DISABLED and does not accept new jobs",
                   "events[0]"});
  cases.push_back(
      {"UpdateUnknownShare",
       base()
           .UpdateShare(0, ShareUpdateBuilder("arn:aws:batch:r:1:quota-share/nope").Limit(kG, 2))
           .Submit(0, JobBuilder("ok", "A").Run(10))
           .Build(),
       "UpdateQuotaShare",
       "ClientException: quota share 'arn:aws:batch:r:1:quota-share/nope' does not exist",
       "events[0]"});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Requests, RejectedRequestTest,
                         ::testing::Combine(BothEngines(), ::testing::ValuesIn(RejectCases())),
                         BothEnginesNames<RejectCase>([](const ::testing::TestParamInfo<RejectCase>& p) {
                           return p.param.name;
                         }));

// A rejected submission creates no job: a later request naming it is
// rejected too, and jobs_submitted counts accepted submissions only.
TEST_P(ConformanceTest, RejectedSubmitCreatesNoJob) {
  Scenario sc = ScenarioBuilder()
                    .Environment({{kG, 1}})
                    .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                    .Submit(0, JobBuilder("bad", "A").Priority(-1).Run(10))
                    .UpdatePriority(1, "bad", 3)
                    .Build();
  RecordingSink sink;
  RunStats stats = RunChecked(sc, sink);
  EXPECT_EQ(stats.jobs_submitted, 0);
  ASSERT_EQ(sink.rejected.size(), 2u);
  EXPECT_EQ(sink.rejected[1].message, "ClientException: job 'bad' does not exist");
  EXPECT_TRUE(sink.lines.empty());
}

// Deterministic: two runs give identical records.
TEST_P(ConformanceTest, Deterministic) {
  RecordingSink a, b;
  RunChecked(NotebookScenario(), a);
  RunChecked(NotebookScenario(), b);
  EXPECT_EQ(a.Full(), b.Full());
}

INSTANTIATE_TEST_SUITE_P(Engines, ConformanceTest, BothEngines(),
                         [](const ::testing::TestParamInfo<EngineKind>& p) { return EngineName(p.param); });

}  // namespace
}  // namespace qs::testing
