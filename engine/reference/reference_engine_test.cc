// The rule conformance suite: one focused scenario per rule and knob value
// of docs/semantics.md, each with the expected log derived by hand from the
// rules (derivation in the comment above the expectation). It is compiled
// twice: reference_engine_test runs it on the reference engine and
// fast_conformance_test (QS_CONFORMANCE_FAST) on the fast engine with the
// full invariant checks, so both implementations answer to the same table.
//
// Traces are compared as compact strings, one per job line:
//   "<t> <job> <STATUS>[ <statusReason>][ n=<q>[ <lender>:<q>...]][ for=<job>][ #<count>]"
// where n= appears on SCHEDULED lines (with the borrowed parts in draw
// order), for= on preemption-start lines and #count on lines ending a
// preempted attempt. Key() drops the routine lines (SUBMITTED, and
// RUNNABLE / STARTING / RUNNING with an empty reason); Full() keeps all.
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/event_log.h"
#include "engine/run.h"
#include "engine/scenario.h"
#include "engine/scenario_json.h"
#include "engine/testing/scenario_builder.h"
#include "engine/time.h"
#include "gtest/gtest.h"

namespace qs {
namespace {

#ifdef QS_CONFORMANCE_FAST
RunStats RunEngineUnderTest(const Scenario& sc, LogSink& sink) {
  RunOptions o;
  o.full_invariant_check = true;
  return RunFastEngine(sc, sink, o);
}
#else
RunStats RunEngineUnderTest(const Scenario& sc, LogSink& sink) { return RunReferenceEngine(sc, sink); }
#endif

using ::qs::testing::JobBuilder;
using ::qs::testing::ScenarioBuilder;
using ::qs::testing::ShareBuilder;
using ::qs::testing::ShareUpdateBuilder;

constexpr const char* kG = "ml.g5.xlarge";

struct Line {
  SimTime time = 0;
  std::string job, share, status, reason;
  bool has_usage = false;
  std::string unit;
  int64_t quantity = 0;
  std::vector<std::pair<std::string, int64_t>> borrowed;
  PreemptionType preemption = PreemptionType::kNone;
  std::string preempted_for;
  bool has_summary = false;
  int64_t count = 0;
  std::vector<PreemptedAttempt> recent;  // status_reason views static constants
};

struct Rejected {
  SimTime time;
  std::string action, message, path;
};

struct Snap {
  SimTime time;
  std::vector<std::pair<std::string, SimTime>> front;
  std::vector<std::string> shares;  // "name front=<job|-> usage=<u:q,...>"
  std::vector<std::pair<std::string, int64_t>> total;
};

class RecordingSink : public LogSink {
 public:
  void OnJob(const JobRecord& r) override {
    Line l;
    l.time = r.time;
    l.job = std::string(r.job_name);
    l.share = std::string(r.share_name);
    l.status = JobStatusName(r.status);
    l.reason = std::string(r.status_reason);
    l.has_usage = r.has_usage;
    l.unit = std::string(r.capacity_unit);
    l.quantity = r.quantity;
    for (const BorrowedPart& p : r.borrowed) {
      EXPECT_EQ(p.capacity_unit, r.capacity_unit);
      l.borrowed.emplace_back(std::string(p.from), p.quantity);
    }
    l.preemption = r.preemption;
    l.preempted_for = std::string(r.preempted_for);
    l.has_summary = r.has_preemption_summary;
    l.count = r.preempted_attempt_count;
    l.recent.assign(r.recent_preempted_attempts.begin(), r.recent_preempted_attempts.end());
    lines.push_back(std::move(l));
  }
  void OnRejected(const RejectedRecord& r) override {
    rejected.push_back(
        Rejected{r.time, std::string(r.action), std::string(r.message), std::string(r.path)});
  }
  void OnSnapshot(const SnapshotRecord& r) override {
    Snap s;
    s.time = r.time;
    for (const SnapshotJob& j : r.front_of_queue) {
      s.front.emplace_back(std::string(j.job_name), j.earliest_time_at_position);
    }
    for (const SnapshotShare& sh : r.shares) {
      std::string e = std::string(sh.share_name) + " front=";
      e += sh.front.empty() ? "-" : std::string(sh.front[0].job_name);
      e += " usage=";
      for (const SnapshotUsage& u : sh.usage) {
        e += std::string(u.capacity_unit) + ":" + std::to_string(u.quantity) + ",";
      }
      s.shares.push_back(e);
    }
    for (const SnapshotUsage& u : r.total_usage) {
      s.total.emplace_back(std::string(u.capacity_unit), u.quantity);
    }
    snapshots.push_back(std::move(s));
  }
  void OnCapacity(const CapacityRecord& r) override {
    capacity.push_back(FormatSeconds(r.time) + " " + std::string(r.capacity_unit) + " " +
                       std::to_string(r.max_capacity));
  }
  void OnEnd(SimTime t) override {
    EXPECT_FALSE(end.has_value()) << "OnEnd called twice";
    end = t;
  }

  static std::string Render(const Line& l) {
    std::string s = FormatSeconds(l.time) + " " + l.job + " " + l.status;
    if (!l.reason.empty()) s += " " + l.reason;
    if (l.has_usage) {
      s += " n=" + std::to_string(l.quantity);
      for (const auto& [from, q] : l.borrowed) s += " " + from + ":" + std::to_string(q);
    }
    if (l.preemption != PreemptionType::kNone) s += " for=" + l.preempted_for;
    if (l.has_summary) s += " #" + std::to_string(l.count);
    return s;
  }
  std::vector<std::string> Full() const {
    std::vector<std::string> out;
    for (const Line& l : lines) out.push_back(Render(l));
    return out;
  }
  std::vector<std::string> Key() const {
    std::vector<std::string> out;
    for (const Line& l : lines) {
      bool routine = l.reason.empty() && (l.status == "SUBMITTED" || l.status == "RUNNABLE" ||
                                          l.status == "STARTING" || l.status == "RUNNING");
      if (!routine) out.push_back(Render(l));
    }
    return out;
  }
  const Line* Last(std::string_view job) const {
    const Line* found = nullptr;
    for (const Line& l : lines) {
      if (l.job == job) found = &l;
    }
    return found;
  }

  std::vector<Line> lines;
  std::vector<Rejected> rejected;
  std::vector<Snap> snapshots;
  std::vector<std::string> capacity;
  std::optional<SimTime> end;
};

// Runs the engine under test and checks the run-wide guarantees every test
// shares: no invariant violation, OnEnd called once with RunStats.end_time.
RunStats RunChecked(const Scenario& sc, RecordingSink& sink) {
  RunStats stats = RunEngineUnderTest(sc, sink);
  EXPECT_EQ(stats.invariant_violations, 0);
  for (const std::string& m : stats.violation_messages) ADD_FAILURE() << m;
  EXPECT_TRUE(sink.end.has_value());
  if (sink.end) {
    EXPECT_EQ(*sink.end, stats.end_time);
  }
  return stats;
}

std::string S(std::string_view v) { return std::string(v); }

// Reasons, shortened for the expectations.
const std::string kXIn = S(reasons::kCrossShareInProgress);
const std::string kIIn = S(reasons::kInShareInProgress);
const std::string kX = S(reasons::kCrossSharePreempted);
const std::string kI = S(reasons::kInSharePreempted);

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

TEST(ReferenceEngineTest, NotebookTimeline) {
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

// The JSON file of shared/scenarios gives the same log as the builder.
TEST(ReferenceEngineTest, NotebookJsonFileMatchesBuilder) {
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

// ------------------------------------------------------------ rule tests
struct RuleCase {
  std::string name;
  Scenario scenario;
  std::vector<std::string> key;  // expected Key() trace
  std::optional<SimTime> end_time;
};

void PrintTo(const RuleCase& c, std::ostream* os) { *os << c.name; }

std::string PrintRuleCase(const ::testing::TestParamInfo<RuleCase>& info) {
  return info.param.name;
}

class RuleTest : public ::testing::TestWithParam<RuleCase> {};

TEST_P(RuleTest, KeyTrace) {
  const RuleCase& c = GetParam();
  RecordingSink sink;
  RunStats stats = RunChecked(c.scenario, sink);
  EXPECT_EQ(sink.Key(), c.key);
  if (c.end_time) {
    EXPECT_EQ(stats.end_time, *c.end_time);
  }
  EXPECT_TRUE(sink.rejected.empty());
}

std::vector<RuleCase> RuleCases() {
  std::vector<RuleCase> cases;

  // Phase 1: own dispatch. RESERVE L=2, env 4. a1, a2 fit the own limit
  // (Own+1 <= 2, H >= 1, Free >= 1) and dispatch at 0; a3 has Own+1 > L and a
  // RESERVE share never borrows, so it waits until a1 and a2 end at 100.
  cases.push_back({"Phase1OwnDispatch",
                   ScenarioBuilder()
                       .Environment({{kG, 4}})
                       .Share(ShareBuilder("A").Limit(kG, 2).Reserve())
                       .Submit(0, JobBuilder("a1", "A").Run(100))
                       .Submit(0, JobBuilder("a2", "A").Run(100))
                       .Submit(0, JobBuilder("a3", "A").Run(100))
                       .Build(),
                   {"0.0 a1 SCHEDULED n=1", "0.0 a2 SCHEDULED n=1", "100.0 a1 SUCCEEDED",
                    "100.0 a2 SUCCEEDED", "100.0 a3 SCHEDULED n=1", "200.0 a3 SUCCEEDED"},
                   200000});

  // RESERVE never lends: env 2, A RESERVE L=1 idle, B LEND_AND_BORROW L=1.
  // b1 dispatches on B's own instance; b2 would borrow but A is no lender
  // (Idle = 0 for RESERVE), so it waits for b1 although an instance is idle.
  // Not a never-fit: n - L = 0 <= configured borrowable 0.
  cases.push_back({"ReserveNeverLends",
                   ScenarioBuilder()
                       .Environment({{kG, 2}})
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                       .Share(ShareBuilder("B").Limit(kG, 1).LendAndBorrow())
                       .Submit(0, JobBuilder("b1", "B").Run(100))
                       .Submit(0, JobBuilder("b2", "B").Run(100))
                       .Build(),
                   {"0.0 b1 SCHEDULED n=1", "100.0 b1 SUCCEEDED", "100.0 b2 SCHEDULED n=1",
                    "200.0 b2 SUCCEEDED"},
                   200000});

  // LEND lends but never borrows: env 3, A LEND L=1, B LEND_AND_BORROW L=1,
  // C LEND L=1. Round 1 (all r=0; heads a1 and b1 created at 0, a1 submitted
  // first): A: a1 own, a2 has Own+1 > L; B: b1 own, b2 likewise. Phase 2 only
  // serves LEND_AND_BORROW heads: b2 borrows 1 from C (A has no idle left,
  // C has 1). a2 (LEND) is never served by phase 2 and waits for a1.
  cases.push_back({"LendLendsButNeverBorrows",
                   ScenarioBuilder()
                       .Environment({{kG, 3}})
                       .Share(ShareBuilder("A").Limit(kG, 1).Lend())
                       .Share(ShareBuilder("B").Limit(kG, 1).LendAndBorrow())
                       .Share(ShareBuilder("C").Limit(kG, 1).Lend())
                       .Submit(0, JobBuilder("a1", "A").Run(100))
                       .Submit(0, JobBuilder("a2", "A").Run(100))
                       .Submit(0, JobBuilder("b1", "B").Run(100))
                       .Submit(0, JobBuilder("b2", "B").Run(100))
                       .Build(),
                   {"0.0 a1 SCHEDULED n=1", "0.0 b1 SCHEDULED n=1", "0.0 b2 SCHEDULED n=1 C:1",
                    "100.0 a1 SUCCEEDED", "100.0 b1 SUCCEEDED", "100.0 b2 SUCCEEDED",
                    "100.0 a2 SCHEDULED n=1", "200.0 a2 SUCCEEDED"},
                   200000});

  // LEND never borrows even with an idle lender: env 2, A LEND L=1, C LEND
  // L=1 (idle all along). a2 waits for a1.
  cases.push_back({"LendNeverBorrowsFromIdleLender",
                   ScenarioBuilder()
                       .Environment({{kG, 2}})
                       .Share(ShareBuilder("A").Limit(kG, 1).Lend())
                       .Share(ShareBuilder("C").Limit(kG, 1).Lend())
                       .Submit(0, JobBuilder("a1", "A").Run(100))
                       .Submit(0, JobBuilder("a2", "A").Run(100))
                       .Build(),
                   {"0.0 a1 SCHEDULED n=1", "100.0 a1 SUCCEEDED", "100.0 a2 SCHEDULED n=1",
                    "200.0 a2 SUCCEEDED"},
                   200000});

  // Borrow limit floor: L=3, borrowLimit 50 -> B = floor(1.5) = 1. x (n=4,
  // priority 1) fits L+B = 4: phase 1 skips it (Own+4 > 3); phase 2 takes
  // a = min(4, H=3) = 3 own and borrows b = 1 <= B from D. The new head y
  // (n=5) never fits: 5 > L + B = 4 -> "... and borrow limits." (with a
  // ceiling B would be 2 and y would fit).
  cases.push_back(
      {"BorrowLimitFloor",
       ScenarioBuilder()
           .Environment({{kG, 10}})
           .Share(ShareBuilder("A").Limit(kG, 3).LendAndBorrow(50))
           .Share(ShareBuilder("D").Limit(kG, 5).Lend())
           .Submit(0, JobBuilder("x", "A").Priority(1).Instances(kG, 4).Run(100))
           .Submit(0, JobBuilder("y", "A").Instances(kG, 5).Run(100))
           .Build(),
       {"0.0 x SCHEDULED n=4 D:1", "0.0 y RUNNABLE " + S(reasons::kQuotaAndBorrowLimitExceeded),
        "100.0 x SUCCEEDED"},
       100000});

  // Unlimited borrow (-1): A L=1 borrowLimit -1, D LEND L=5. x (n=6): no
  // L+B check; n - L = 5 <= configured borrowable 5; phase 2 takes 1 own and
  // borrows 5 from D.
  cases.push_back({"UnlimitedBorrow",
                   ScenarioBuilder()
                       .Environment({{kG, 10}})
                       .Share(ShareBuilder("A").Limit(kG, 1).LendAndBorrow(-1))
                       .Share(ShareBuilder("D").Limit(kG, 5).Lend())
                       .Submit(0, JobBuilder("x", "A").Instances(kG, 6).Run(100))
                       .Build(),
                   {"0.0 x SCHEDULED n=6 D:5", "100.0 x SUCCEEDED"},
                   100000});

  // Lenders drawn most idle first, then by name: declared L2 (2), L1 (2),
  // L3 (3). x (n=7) takes 1 own and borrows 6: L3 gives 3, then the tie
  // L1/L2 by name: L1 gives 2, L2 the last 1.
  cases.push_back({"LendersMostIdleThenName",
                   ScenarioBuilder()
                       .Environment({{kG, 10}})
                       .Share(ShareBuilder("A").Limit(kG, 1).LendAndBorrow())
                       .Share(ShareBuilder("L2").Limit(kG, 2).Lend())
                       .Share(ShareBuilder("L1").Limit(kG, 2).Lend())
                       .Share(ShareBuilder("L3").Limit(kG, 3).Lend())
                       .Submit(0, JobBuilder("x", "A").Instances(kG, 7).Run(100))
                       .Build(),
                   {"0.0 x SCHEDULED n=7 L3:3 L1:2 L2:1", "100.0 x SUCCEEDED"},
                   100000});

  // Cross-share reclaim with held capacity. env 3; A LAB L=1, B LEND L=2,
  // C RESERVE L=1 (limits oversubscribe the environment).
  //  0: a1 own; a2 borrows B:1 (Free 2, B idle 2).
  // 10: b1 (n=2): Own+2 <= 2 but H = 2-1 = 1 < 2 -> reclaim. Group A = {a2};
  //     fit: H+1 = 2 >= 2 and Free_j + 1 = 1+1 >= 2 -> preempt a2. hold[b1] =
  //     max(0, 2-1) = 1: the one free instance is held for b1.
  // 15: c1 (C, n=1): H=1 but Free = 3 - 2 used - 1 held = 0; no candidate
  //     (a1 holds no borrowed part and A is within its limit) -> waits.
  // 30: a2's drain ends (RUNNABLE, count 1); hold[b1] = min(2, 1+1) = 2; b1
  //     is visited first (r=0, older head than c1) and dispatches from its
  //     own limit. c1 still finds Free = 0.
  // 130: b1 ends; c1 (r=0, has a head) dispatches, then a2 borrows B:1 again.
  cases.push_back(
      {"CrossShareReclaimHoldsCapacity",
       ScenarioBuilder()
           .Environment({{kG, 3}})
           .Share(ShareBuilder("A").Limit(kG, 1).LendAndBorrow())
           .Share(ShareBuilder("B").Limit(kG, 2).Lend())
           .Share(ShareBuilder("C").Limit(kG, 1).Reserve())
           .Submit(0, JobBuilder("a1", "A").Run(1000))
           .Submit(0, JobBuilder("a2", "A").Run(1000))
           .Submit(10, JobBuilder("b1", "B").Instances(kG, 2).Run(100))
           .Submit(15, JobBuilder("c1", "C").Run(100))
           .Build(),
       {"0.0 a1 SCHEDULED n=1", "0.0 a2 SCHEDULED n=1 B:1", "10.0 a2 RUNNING " + kXIn + " for=b1",
        "30.0 a2 RUNNABLE " + kX + " #1", "30.0 b1 SCHEDULED n=2", "130.0 b1 SUCCEEDED",
        "130.0 c1 SCHEDULED n=1", "130.0 a2 SCHEDULED n=1 B:1", "230.0 c1 SUCCEEDED",
        "1000.0 a1 SUCCEEDED", "1130.0 a2 SUCCEEDED"},
       1130000});

  // Group-B victims: a share over a lowered limit. env 3; A RESERVE L=3 runs
  // a1 (priority 5), a2, a3 (priority 1). At 10 A's limit drops to 1:
  // nothing is preempted. At 20 b1 (B RESERVE L=2): H=2 but Free = 0; no
  // borrower of B (group A empty); group B = A's jobs (Own 3 > L 1), in
  // victim order a2, a3 (priority 1, same dispatch time, by name), a1. a2
  // alone gives Free 1 -> preempt a2; it drains until 40, then b1 uses the
  // held instance. a2 (Own_A 2 + 1 > 1) waits until a1 and a3 end at 1000.
  cases.push_back({"GroupBVictimsOverLoweredLimit",
                   ScenarioBuilder()
                       .Environment({{kG, 3}})
                       .Share(ShareBuilder("A").Limit(kG, 3).Reserve())
                       .Share(ShareBuilder("B").Limit(kG, 2).Reserve())
                       .Submit(0, JobBuilder("a1", "A").Priority(5).Run(1000))
                       .Submit(0, JobBuilder("a2", "A").Priority(1).Run(1000))
                       .Submit(0, JobBuilder("a3", "A").Priority(1).Run(1000))
                       .UpdateShare(10, ShareUpdateBuilder("A").Limit(kG, 1))
                       .Submit(20, JobBuilder("b1", "B").Run(100))
                       .Build(),
                   {"0.0 a1 SCHEDULED n=1", "0.0 a2 SCHEDULED n=1", "0.0 a3 SCHEDULED n=1",
                    "20.0 a2 RUNNING " + kXIn + " for=b1", "40.0 a2 RUNNABLE " + kX + " #1",
                    "40.0 b1 SCHEDULED n=1", "140.0 b1 SUCCEEDED", "1000.0 a1 SUCCEEDED",
                    "1000.0 a3 SUCCEEDED", "1000.0 a2 SCHEDULED n=1", "2000.0 a2 SUCCEEDED"},
                   2000000});

  // Choosing the set with fill-back. env 4; A LAB L=1, B LEND L=3. At 0 a0
  // (priority 9) takes A's own instance, y (priority 1, n=2) borrows B:2, at 5
  // x (priority 0) borrows B:1: the environment is full. At 10 b1 (n=2):
  // H_B = 0 -> reclaim; candidates (victim order) x (priority 0), y. Mark x:
  // H+1 < 2; mark y: H+3 >= 2, Free 0+3 >= 2. Walk back: without x, H+2 >= 2
  // and Free 2 >= 2 -> x is unmarked. Only y is preempted; x keeps running.
  // At 30 b1 dispatches (H = 3-1 = 2, hold 2). At 130 b1 ends and y borrows
  // B:2 again.
  cases.push_back({"FillBackRemovesUnneededVictim",
                   ScenarioBuilder()
                       .Environment({{kG, 4}})
                       .Share(ShareBuilder("A").Limit(kG, 1).LendAndBorrow())
                       .Share(ShareBuilder("B").Limit(kG, 3).Lend())
                       .Submit(0, JobBuilder("a0", "A").Priority(9).Run(1000))
                       .Submit(0, JobBuilder("y", "A").Priority(1).Instances(kG, 2).Run(1000))
                       .Submit(5, JobBuilder("x", "A").Priority(0).Run(1000))
                       .Submit(10, JobBuilder("b1", "B").Instances(kG, 2).Run(100))
                       .Build(),
                   {"0.0 a0 SCHEDULED n=1", "0.0 y SCHEDULED n=2 B:2", "5.0 x SCHEDULED n=1 B:1",
                    "10.0 y RUNNING " + kXIn + " for=b1", "30.0 y RUNNABLE " + kX + " #1",
                    "30.0 b1 SCHEDULED n=2", "130.0 b1 SUCCEEDED", "130.0 y SCHEDULED n=2 B:2",
                    "1000.0 a0 SUCCEEDED", "1005.0 x SUCCEEDED", "1130.0 y SUCCEEDED"},
                   1130000});

  // In-share preemption only of strictly lower priority. env 1; A RESERVE
  // L=1 in-share ENABLED. low (1) runs from 0. At 10 same (1) arrives: no
  // candidate (1 is not < 1). At 20 high (2): candidate low; once it drains
  // Own'=0, H'=1, Free'=1 -> preempt low. At 40 high dispatches; low (1,
  // created 0) is now the head before same (1, created 10) and cannot
  // preempt high (2). high ends at 140, low runs 140-240, same 240-340.
  cases.push_back({"InSharePreemptsOnlyStrictlyLowerPriority",
                   ScenarioBuilder()
                       .Environment({{kG, 1}})
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve().InShare(true))
                       .Submit(0, JobBuilder("low", "A").Priority(1).Run(100))
                       .Submit(10, JobBuilder("same", "A").Priority(1).Run(100))
                       .Submit(20, JobBuilder("high", "A").Priority(2).Run(100))
                       .Build(),
                   {"0.0 low SCHEDULED n=1", "20.0 low RUNNING " + kIIn + " for=high",
                    "40.0 low RUNNABLE " + kI + " #1", "40.0 high SCHEDULED n=1",
                    "140.0 high SUCCEEDED", "140.0 low SCHEDULED n=1", "240.0 low SUCCEEDED",
                    "240.0 same SCHEDULED n=1", "340.0 same SUCCEEDED"},
                   340000});

  // In-share preemption DISABLED: the same arrival preempts nobody.
  cases.push_back({"InSharePreemptionDisabled",
                   ScenarioBuilder()
                       .Environment({{kG, 1}})
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve().InShare(false))
                       .Submit(0, JobBuilder("low", "A").Priority(1).Run(100))
                       .Submit(20, JobBuilder("high", "A").Priority(2).Run(100))
                       .Build(),
                   {"0.0 low SCHEDULED n=1", "100.0 low SUCCEEDED", "100.0 high SCHEDULED n=1",
                    "200.0 high SUCCEEDED"},
                   200000});

  // Head-of-line blocking (backfill false): big (n=3 > L=2) never fits and
  // blocks A; small waits forever. The run ends at 0.
  cases.push_back({"HeadOfLineBlockingByNeverFit",
                   ScenarioBuilder()
                       .Environment({{kG, 4}})
                       .Share(ShareBuilder("A").Limit(kG, 2).Reserve())
                       .Submit(0, JobBuilder("big", "A").Priority(2).Instances(kG, 3).Run(100))
                       .Submit(0, JobBuilder("small", "A").Priority(1).Run(100))
                       .Build(),
                   {"0.0 big RUNNABLE " + S(reasons::kQuotaLimitExceeded)},
                   0});

  // backfill: true: the never-fit head gets its reason, later jobs that fit
  // H and Free dispatch.
  cases.push_back({"BackfillPastNeverFit",
                   ScenarioBuilder()
                       .Environment({{kG, 4}})
                       .Share(ShareBuilder("A").Limit(kG, 2).Reserve())
                       .Backfill(true)
                       .Submit(0, JobBuilder("big", "A").Priority(2).Instances(kG, 3).Run(100))
                       .Submit(0, JobBuilder("small", "A").Priority(1).Run(100))
                       .Build(),
                   {"0.0 big RUNNABLE " + S(reasons::kQuotaLimitExceeded),
                    "0.0 small SCHEDULED n=1", "100.0 small SUCCEEDED"},
                   100000});

  // Head-of-line blocking by a head that does not fit now: a1 (priority 3)
  // holds one of A's 2; h (n=2) has Own+2 > 2. Without backfill s waits
  // behind h: h runs 100-200, s 200-300.
  cases.push_back({"HeadOfLineBlockingWithoutBackfill",
                   ScenarioBuilder()
                       .Environment({{kG, 4}})
                       .Share(ShareBuilder("A").Limit(kG, 2).Reserve())
                       .Submit(0, JobBuilder("a1", "A").Priority(3).Run(100))
                       .Submit(0, JobBuilder("h", "A").Priority(2).Instances(kG, 2).Run(100))
                       .Submit(0, JobBuilder("s", "A").Priority(1).Run(100))
                       .Build(),
                   {"0.0 a1 SCHEDULED n=1", "100.0 a1 SUCCEEDED", "100.0 h SCHEDULED n=2",
                    "200.0 h SUCCEEDED", "200.0 s SCHEDULED n=1", "300.0 s SUCCEEDED"},
                   300000});

  // Same with backfill: true: h stops (Own+2 > L), s is dispatched past it
  // (H = 1 >= 1, Free 3). Both end at 100, then h runs 100-200.
  cases.push_back({"BackfillPastStuckHead",
                   ScenarioBuilder()
                       .Environment({{kG, 4}})
                       .Share(ShareBuilder("A").Limit(kG, 2).Reserve())
                       .Backfill(true)
                       .Submit(0, JobBuilder("a1", "A").Priority(3).Run(100))
                       .Submit(0, JobBuilder("h", "A").Priority(2).Instances(kG, 2).Run(100))
                       .Submit(0, JobBuilder("s", "A").Priority(1).Run(100))
                       .Build(),
                   {"0.0 a1 SCHEDULED n=1", "0.0 s SCHEDULED n=1", "100.0 a1 SUCCEEDED",
                    "100.0 s SUCCEEDED", "100.0 h SCHEDULED n=2", "200.0 h SUCCEEDED"},
                   200000});

  // jobStateTimeLimitActions: big gets QUOTA_MANAGEMENT_LIMIT_EXCEEDED at 0;
  // the entry (600 s, TERMINATE) fails it at 600; then small, blocked behind
  // it, dispatches at 600.
  const std::string kQuotaCode = "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED";
  cases.push_back({"JobStateTimeLimitTerminates",
                   ScenarioBuilder()
                       .Environment({{kG, 2}})
                       .TimeLimitAction("MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE", 900)
                       .TimeLimitAction(kQuotaCode, 600)
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                       .Submit(0, JobBuilder("big", "A").Priority(1).Instances(kG, 2).Run(100))
                       .Submit(0, JobBuilder("small", "A").Run(100))
                       .Build(),
                   {"0.0 big RUNNABLE " + S(reasons::kQuotaLimitExceeded),
                    "600.0 big FAILED " + S(reasons::kTimeLimitPrefix) + kQuotaCode,
                    "600.0 small SCHEDULED n=1", "700.0 small SUCCEEDED"},
                   700000});

  // The time-limit check does nothing when the reason was cleared meanwhile:
  // at 300 A's limit becomes 2, big fits (reason cleared: RUNNABLE ""), and
  // dispatches; the check at 600 finds it no longer RUNNABLE and does
  // nothing (the instant still counts: the run ends at 600). The Key trace
  // drops the RUNNABLE "" line; see MisconfigurationClearedLine below.
  cases.push_back({"JobStateTimeLimitNotAfterClear",
                   ScenarioBuilder()
                       .Environment({{kG, 2}})
                       .TimeLimitAction(kQuotaCode, 600)
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                       .Submit(0, JobBuilder("big", "A").Instances(kG, 2).Run(100))
                       .UpdateShare(300, ShareUpdateBuilder("A").Limit(kG, 2))
                       .Build(),
                   {"0.0 big RUNNABLE " + S(reasons::kQuotaLimitExceeded),
                    "300.0 big SCHEDULED n=2", "400.0 big SUCCEEDED"},
                   600000});

  // preemptionRetriesBeforeTermination 0: FAILED at the first preemption's
  // drain end, with the summary.
  cases.push_back({"PreemptionRetriesZeroFailsAtFirstPreemption",
                   ScenarioBuilder()
                       .Environment({{kG, 1}})
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve().InShare(true))
                       .Submit(0, JobBuilder("low", "A").Priority(1).PreemptionRetries(0).Run(100))
                       .Submit(20, JobBuilder("high", "A").Priority(2).Run(100))
                       .Build(),
                   {"0.0 low SCHEDULED n=1", "20.0 low RUNNING " + kIIn + " for=high",
                    "40.0 low FAILED " + S(reasons::kPreemptionRetriesExhausted) + " #1",
                    "40.0 high SCHEDULED n=1", "140.0 high SUCCEEDED"},
                   140000});

  // retryStrategy.attempts 3 with outcome FAILED: each failed attempt
  // returns to RUNNABLE with the reason and is dispatched again at once; the
  // third failure is final.
  const std::string kSim = S(reasons::kSimulatedFailure);
  cases.push_back({"RetryStrategyAttemptsWithFailedOutcome",
                   ScenarioBuilder()
                       .Environment({{kG, 1}})
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                       .Submit(0, JobBuilder("f", "A").Fails().RetryAttempts(3).Run(50))
                       .Build(),
                   {"0.0 f SCHEDULED n=1", "50.0 f RUNNABLE " + kSim, "50.0 f SCHEDULED n=1",
                    "100.0 f RUNNABLE " + kSim, "100.0 f SCHEDULED n=1", "150.0 f FAILED " + kSim},
                   150000});

  // Default attempts = 1: the first failure is final.
  cases.push_back({"FailedOutcomeDefaultAttempts",
                   ScenarioBuilder()
                       .Environment({{kG, 1}})
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                       .Submit(0, JobBuilder("f", "A").Fails().Run(50))
                       .Build(),
                   {"0.0 f SCHEDULED n=1", "50.0 f FAILED " + kSim},
                   50000});

  // Timeout: runSeconds 100 > attemptDurationSeconds 60: the attempt ends at
  // 60 with the timeout reason; the second (last) attempt times out at 120.
  // A run of exactly 60 s is no timeout.
  const std::string kTimeout = S(reasons::kAttemptTimeout);
  cases.push_back(
      {"TimeoutViaAttemptDuration",
       ScenarioBuilder()
           .Environment({{kG, 2}})
           .Share(ShareBuilder("A").Limit(kG, 2).Reserve())
           .Submit(0,
                   JobBuilder("t", "A").Priority(1).AttemptDuration(60).RetryAttempts(2).Run(100))
           .Submit(0, JobBuilder("ok", "A").AttemptDuration(60).Run(60))
           .Build(),
       {"0.0 t SCHEDULED n=1", "0.0 ok SCHEDULED n=1", "60.0 t RUNNABLE " + kTimeout,
        "60.0 ok SUCCEEDED", "60.0 t SCHEDULED n=1", "120.0 t FAILED " + kTimeout},
       120000});

  // schedulingIntervalSeconds 30: j1 becomes RUNNABLE at 10, no pass at 10;
  // a tick at 30 dispatches it. j2 (RUNNABLE at 40) is looked at by the
  // ticks at 60, 90, 120 (env busy); j1 ends at 130 (no pass: 130 % 30 != 0)
  // and the tick at 150 dispatches j2.
  cases.push_back({"SchedulingInterval",
                   ScenarioBuilder()
                       .Environment({{kG, 1}})
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                       .SchedulingInterval(30)
                       .Submit(10, JobBuilder("j1", "A").Run(100))
                       .Submit(40, JobBuilder("j2", "A").Run(100))
                       .Build(),
                   {"30.0 j1 SCHEDULED n=1", "130.0 j1 SUCCEEDED", "150.0 j2 SCHEDULED n=1",
                    "250.0 j2 SUCCEEDED"},
                   250000});

  // Horizon 150: j1 (0-100) completes; the submit at 200 is beyond the
  // horizon and never processed; the run ends at the horizon.
  cases.push_back({"HorizonStopsTheRun",
                   ScenarioBuilder()
                       .Environment({{kG, 1}})
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                       .Horizon(150)
                       .Submit(0, JobBuilder("j1", "A").Run(100))
                       .Submit(200, JobBuilder("j2", "A").Run(100))
                       .Build(),
                   {"0.0 j1 SCHEDULED n=1", "100.0 j1 SUCCEEDED"},
                   150000});

  // Events at exactly the horizon are processed.
  cases.push_back({"HorizonIsInclusive",
                   ScenarioBuilder()
                       .Environment({{kG, 1}})
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                       .Horizon(100)
                       .Submit(0, JobBuilder("j1", "A").Run(100))
                       .Submit(0, JobBuilder("j2", "A").Run(100))
                       .Build(),
                   {"0.0 j1 SCHEDULED n=1", "100.0 j1 SUCCEEDED", "100.0 j2 SCHEDULED n=1"},
                   100000});

  // UpdateServiceEnvironment lowering preempts nobody: env 3 -> 1 at 50
  // while a1..a3 run (A RESERVE L=4). a4 (60) fits A's limit but Free =
  // 1 - 3 < 1 and there is no candidate (no borrower, no share over its
  // limit): it waits until use falls to 0 at 300.
  cases.push_back({"EnvironmentLoweringPreemptsNobody",
                   ScenarioBuilder()
                       .Environment({{kG, 3}})
                       .Share(ShareBuilder("A").Limit(kG, 4).Reserve())
                       .Submit(0, JobBuilder("a1", "A").Run(100))
                       .Submit(0, JobBuilder("a2", "A").Run(200))
                       .Submit(0, JobBuilder("a3", "A").Run(300))
                       .UpdateEnvironment(50, {{kG, 1}})
                       .Submit(60, JobBuilder("a4", "A").Run(100))
                       .Build(),
                   {"0.0 a1 SCHEDULED n=1", "0.0 a2 SCHEDULED n=1", "0.0 a3 SCHEDULED n=1",
                    "100.0 a1 SUCCEEDED", "200.0 a2 SUCCEEDED", "300.0 a3 SUCCEEDED",
                    "300.0 a4 SCHEDULED n=1", "400.0 a4 SUCCEEDED"},
                   400000});

  // unassignedCapacity LENDABLE: env 10, limits 1 (A) + 1 (L) + 5 (R,
  // RESERVE) leave 3 unassigned. x (n=3) borrows 2: "(unassigned)" has idle
  // 3, L has 1 -> all 2 from "(unassigned)".
  cases.push_back({"UnassignedCapacityLendable",
                   ScenarioBuilder()
                       .Environment({{kG, 10}})
                       .Unassigned(UnassignedCapacity::kLendable)
                       .Share(ShareBuilder("A").Limit(kG, 1).LendAndBorrow())
                       .Share(ShareBuilder("L").Limit(kG, 1).Lend())
                       .Share(ShareBuilder("R").Limit(kG, 5).Reserve())
                       .Submit(0, JobBuilder("x", "A").Instances(kG, 3).Run(100))
                       .Build(),
                   {"0.0 x SCHEDULED n=3 (unassigned):2", "100.0 x SUCCEEDED"},
                   100000});

  // Same with UNUSED (default): n - L = 2 > configured borrowable 1 (L only;
  // R is RESERVE) -> never fits.
  cases.push_back({"UnassignedCapacityUnused",
                   ScenarioBuilder()
                       .Environment({{kG, 10}})
                       .Share(ShareBuilder("A").Limit(kG, 1).LendAndBorrow())
                       .Share(ShareBuilder("L").Limit(kG, 1).Lend())
                       .Share(ShareBuilder("R").Limit(kG, 5).Reserve())
                       .Submit(0, JobBuilder("x", "A").Instances(kG, 3).Run(100))
                       .Build(),
                   {"0.0 x RUNNABLE " + S(reasons::kBorrowExceedsConfigured)},
                   0});

  // Latencies: submit 5 s, provision 7 s, download 11 s. Full life cycle:
  // RUNNABLE 5, SCHEDULED 5, STARTING 12, RUNNING 23, SUCCEEDED 123.
  // (Key() hides the routine lines; LatenciesFullTrace checks them.)
  cases.push_back({"Latencies",
                   ScenarioBuilder()
                       .Environment({{kG, 1}})
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                       .SubmitLatency(5)
                       .Provision(7)
                       .Download(11)
                       .Submit(0, JobBuilder("j", "A").Run(100))
                       .Build(),
                   {"5.0 j SCHEDULED n=1", "123.0 j SUCCEEDED"},
                   123000});

  // A DISABLED share refuses submissions (see RejectedRequests) but its
  // queued job still runs: a2 waits behind a1 (n=2), A is disabled at 20,
  // a2 dispatches at 100.
  cases.push_back({"DisabledShareStillRunsItsJobs",
                   ScenarioBuilder()
                       .Environment({{kG, 2}})
                       .Share(ShareBuilder("A").Limit(kG, 2).Reserve())
                       .Submit(0, JobBuilder("a1", "A").Instances(kG, 2).Run(100))
                       .Submit(10, JobBuilder("a2", "A").Run(100))
                       .UpdateShare(20, ShareUpdateBuilder("A").Disabled())
                       .Build(),
                   {"0.0 a1 SCHEDULED n=2", "100.0 a1 SUCCEEDED", "100.0 a2 SCHEDULED n=1",
                    "200.0 a2 SUCCEEDED"},
                   200000});

  // A DISABLED service environment dispatches nothing; re-enabled at 50,
  // the waiting job dispatches.
  cases.push_back({"DisabledEnvironmentDispatchesNothing",
                   ScenarioBuilder()
                       .Environment({{kG, 1}})
                       .EnvironmentState(false)
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                       .Submit(0, JobBuilder("j", "A").Run(100))
                       .UpdateEnvironment(50, {}, true)
                       .Build(),
                   {"50.0 j SCHEDULED n=1", "150.0 j SUCCEEDED"},
                   150000});

  // In-share preemption never starts when the head already fits (spec §4,
  // "never when free or idle lendable capacity already suffices"). env
  // {gpu 10, cpu 2}; A LAB unlimited (gpu 1, cpu 2) in-share ENABLED; D LEND
  // gpu 5. lowp (priority 0, cpu) runs from 0. At 10 big (5, 2 gpu) and mid
  // (1, cpu): phase 1 stops at big (Own+2 > 1); phase 2 dispatches big (1
  // own + D:1); the new head mid has H_cpu = 1 so it is no phase-2 head;
  // phase 3 would find lowp a candidate, but mid fits with no victim, so
  // nobody is preempted and the next round's phase 1 dispatches mid.
  cases.push_back(
      {"InShareNoPreemptionWhenHeadAlreadyFits",
       ScenarioBuilder()
           .Environment({{"gpu", 10}, {"cpu", 2}})
           .Share(ShareBuilder("A").Limit("gpu", 1).Limit("cpu", 2).LendAndBorrow().InShare(true))
           .Share(ShareBuilder("D").Limit("gpu", 5).Lend())
           .Submit(0, JobBuilder("lowp", "A").Instances("cpu", 1).Run(1000))
           .Submit(10, JobBuilder("big", "A").Priority(5).Instances("gpu", 2).Run(100))
           .Submit(10, JobBuilder("mid", "A").Priority(1).Instances("cpu", 1).Run(100))
           .Build(),
       {"0.0 lowp SCHEDULED n=1", "10.0 big SCHEDULED n=2 D:1", "10.0 mid SCHEDULED n=1",
        "110.0 big SUCCEEDED", "110.0 mid SUCCEEDED", "1000.0 lowp SUCCEEDED"},
       1000000});

  // A waiting share (its head has victims draining for it) is skipped by
  // every phase: no backfill and no never-fit check while it waits. env 2; A
  // RESERVE L=1 in-share ENABLED, backfill on. high (5) preempts low at 10;
  // bad (0, n=2 > L) arrives at 15 while A waits and gets its reason only at
  // 30, when high dispatches and the new head low stops (Own+1 > 1) and
  // backfill looks at bad. low's second attempt runs 130-230.
  cases.push_back({"WaitingShareIsSkipped",
                   ScenarioBuilder()
                       .Environment({{kG, 2}})
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve().InShare(true))
                       .Backfill(true)
                       .Submit(0, JobBuilder("low", "A").Run(100))
                       .Submit(10, JobBuilder("high", "A").Priority(5).Run(100))
                       .Submit(15, JobBuilder("bad", "A").Instances(kG, 2).Run(100))
                       .Build(),
                   {"0.0 low SCHEDULED n=1", "10.0 low RUNNING " + kIIn + " for=high",
                    "30.0 low RUNNABLE " + kI + " #1", "30.0 high SCHEDULED n=1",
                    "30.0 bad RUNNABLE " + S(reasons::kQuotaLimitExceeded), "130.0 high SUCCEEDED",
                    "130.0 low SCHEDULED n=1", "230.0 low SUCCEEDED"},
                   230000});

  return cases;
}

INSTANTIATE_TEST_SUITE_P(Rules, RuleTest, ::testing::ValuesIn(RuleCases()), PrintRuleCase);

// ------------------------------------------------------ never-fit reasons
struct MisconfigCase {
  std::string name;
  Scenario scenario;
  std::string reason;
};

void PrintTo(const MisconfigCase& c, std::ostream* os) { *os << c.name; }

class MisconfigurationTest : public ::testing::TestWithParam<MisconfigCase> {};

TEST_P(MisconfigurationTest, ReasonVerbatim) {
  const MisconfigCase& c = GetParam();
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

INSTANTIATE_TEST_SUITE_P(NeverFits, MisconfigurationTest, ::testing::ValuesIn(MisconfigCases()),
                         [](const ::testing::TestParamInfo<MisconfigCase>& p) {
                           return p.param.name;
                         });

// A MISCONFIGURATION reason is cleared (line RUNNABLE "") when the job fits
// again, before it dispatches.
TEST(ReferenceEngineTest, MisconfigurationClearedLine) {
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

TEST(ReferenceEngineTest, LatenciesFullTrace) {
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
TEST(ReferenceEngineTest, PreemptionFreezesScheduledVictim) {
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
class PreemptionRetriesTest : public ::testing::TestWithParam<std::optional<int64_t>> {};

TEST_P(PreemptionRetriesTest, ThirdPreemption) {
  JobBuilder v = JobBuilder("v", "A").Run(1000);
  if (GetParam()) v.PreemptionRetries(*GetParam());
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
  if (GetParam()) {
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
                         ::testing::Values(std::optional<int64_t>(), std::optional<int64_t>(2)),
                         [](const ::testing::TestParamInfo<std::optional<int64_t>>& p) {
                           return p.param ? std::string("Two") : std::string("Unset");
                         });

// Window of 10 recent attempts, newest first.
TEST(ReferenceEngineTest, PreemptionSummaryWindowOfTen) {
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
TEST(ReferenceEngineTest, TerminateRunnableDrainingAndRunning) {
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
TEST(ReferenceEngineTest, CapacityRecords) {
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
class ShareOrderTest : public ::testing::TestWithParam<OrderCase> {};

TEST_P(ShareOrderTest, WhoGetsTheLastInstance) {
  Scenario sc = ScenarioBuilder()
                    .Environment({{kG, 2}})
                    .Order(GetParam().order)
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
  EXPECT_EQ(key[1], "10.0 " + GetParam().winner + " SCHEDULED n=1");
}

INSTANTIATE_TEST_SUITE_P(Orders, ShareOrderTest,
                         ::testing::Values(OrderCase{ShareOrder::kUnderLimitFirst, "x2"},
                                           OrderCase{ShareOrder::kDeclaration, "x2"},
                                           OrderCase{ShareOrder::kRoundRobin, "y1"}),
                         [](const ::testing::TestParamInfo<OrderCase>& p) {
                           return std::string(
                               ShareOrderName(p.param.order) == std::string("UNDER_LIMIT_FIRST")
                                   ? "UnderLimitFirst"
                               : ShareOrderName(p.param.order) == std::string("DECLARATION")
                                   ? "Declaration"
                                   : "RoundRobin");
                         });

// UNDER_LIMIT_FIRST compares exact fractions: X uses 2 of 3 (2/3), Y 3 of
// 5 (3/5 < 2/3) -> Y is visited first and y wins the last instance although
// x was submitted first. env 6 = 2 + 3 + 1 free.
TEST(ReferenceEngineTest, UnderLimitFirstExactFractions) {
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
TEST(ReferenceEngineTest, UnderLimitFirstTieOlderHead) {
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
class VictimOrderTest : public ::testing::TestWithParam<VictimCase> {};

TEST_P(VictimOrderTest, WhoIsPreempted) {
  Scenario sc = ScenarioBuilder()
                    .Environment({{kG, 4}})
                    .Victims(GetParam().order)
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
  EXPECT_EQ(key[3], "10.0 " + GetParam().victim + " RUNNING " + kXIn + " for=b1");
  EXPECT_EQ(key[4], "30.0 " + GetParam().victim + " RUNNABLE " + kX + " #1");
  EXPECT_EQ(key[5], "30.0 b1 SCHEDULED n=1");
}

INSTANTIATE_TEST_SUITE_P(Orders, VictimOrderTest,
                         ::testing::Values(VictimCase{VictimOrder::kPriorityThenNewest, "q"},
                                           VictimCase{VictimOrder::kMostBorrowedFirst, "p"}),
                         [](const ::testing::TestParamInfo<VictimCase>& p) {
                           return p.param.order == VictimOrder::kPriorityThenNewest
                                      ? std::string("PriorityThenNewest")
                                      : std::string("MostBorrowedFirst");
                         });

// Rejected requests write a `rejected` record with the ClientException
// message and change nothing; the run continues (the valid job still runs).
struct RejectCase {
  std::string name;
  Scenario scenario;
  std::string action, message, path;
};
void PrintTo(const RejectCase& c, std::ostream* os) { *os << c.name; }

class RejectedRequestTest : public ::testing::TestWithParam<RejectCase> {};

TEST_P(RejectedRequestTest, LoggedAndRunContinues) {
  const RejectCase& c = GetParam();
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

INSTANTIATE_TEST_SUITE_P(Requests, RejectedRequestTest, ::testing::ValuesIn(RejectCases()),
                         [](const ::testing::TestParamInfo<RejectCase>& p) {
                           return p.param.name;
                         });

// A rejected submission creates no job: a later request naming it is
// rejected too, and jobs_submitted counts accepted submissions only.
TEST(ReferenceEngineTest, RejectedSubmitCreatesNoJob) {
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
TEST(ReferenceEngineTest, Deterministic) {
  RecordingSink a, b;
  RunChecked(NotebookScenario(), a);
  RunChecked(NotebookScenario(), b);
  EXPECT_EQ(a.Full(), b.Full());
}

}  // namespace
}  // namespace qs
