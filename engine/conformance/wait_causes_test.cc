// Wait causes (docs/semantics.md §9) on both engines: hand-built scenarios
// whose cause lines and per-cause waits are worked out by hand, one or more
// causes each; and the rule that cause lines change nothing else (the log
// without them is the log of the same run without --wait-causes).
#include <sstream>
#include <string>
#include <vector>

#include "engine/log/summary.h"
#include "engine/testing/capture.h"
#include "engine/testing/conformance.h"
#include "engine/testing/random_scenario.h"
#include "engine/testing/scenario_builder.h"
#include "gtest/gtest.h"

namespace qs::testing {
namespace {

struct CauseRun {
  std::vector<std::string> causes;  // "t job CAUSE" per cause line, in log order
  std::string log;                  // JSON Lines
  Summary summary;
};

// Collects the cause lines; everything also goes to the JSONL writer and
// the summary.
class CauseSink : public LogSink {
 public:
  CauseSink(std::vector<std::string>* causes, JsonlWriter* w, SummaryBuilder* s) : causes_(causes), w_(w), s_(s) {}
  void OnJob(const JobRecord& r) override {
    if (r.wait_cause != WaitCause::kNone) {
      EXPECT_EQ(r.status, JobStatus::kRunnable) << r.job_name;
      const std::string t = r.time % 1000 == 0 ? std::to_string(r.time / 1000) : FormatSeconds(r.time);
      causes_->push_back(t + " " + std::string(r.job_name) + " " + WaitCauseName(r.wait_cause));
    }
    w_->OnJob(r);
    s_->OnJob(r);
  }
  void OnRejected(const RejectedRecord& r) override {
    w_->OnRejected(r);
    s_->OnRejected(r);
  }
  void OnSnapshot(const SnapshotRecord& r) override { w_->OnSnapshot(r); }
  void OnCapacity(const CapacityRecord& r) override { s_->OnCapacity(r); }
  void OnEnd(SimTime t) override { s_->OnEnd(t); }

 private:
  std::vector<std::string>* causes_;
  JsonlWriter* w_;
  SummaryBuilder* s_;
};

CauseRun RunWithCauses(const Scenario& sc) {
  CauseRun out;
  std::ostringstream text;
  SummaryBuilder summary;
  RunStats stats;
  {
    JsonlWriter w(&text);
    CauseSink sink(&out.causes, &w, &summary);
    if (EngineUnderTest() == EngineKind::kReference) {
      stats = RunReferenceEngine(sc, sink, /*check_invariants=*/true, kDefaultCyclePreemptions, /*wait_causes=*/true);
    } else {
      RunOptions o;
      o.full_invariant_check = true;
      o.wait_causes = true;
      stats = RunFastEngine(sc, sink, o);
    }
  }
  EXPECT_EQ(stats.invariant_violations, 0);
  out.log = text.str();
  out.summary = summary.Build(stats.invariant_violations);
  return out;
}

double CauseSeconds(const Summary& s, const std::string& share, WaitCause c) {
  return static_cast<double>(s.shares.at(share).wait_by_cause_ms[static_cast<size_t>(c)]) / 1000.0;
}

ScenarioBuilder Instant() { return std::move(ScenarioBuilder().SubmitLatency(0).Provision(0).Download(0)); }

using WaitCauseTest = ConformanceTest;

// SHARE_LIMIT and BEHIND_HEAD: a RESERVE share at its limit; the job behind
// the head waits behind it, then at the limit itself.
TEST_P(WaitCauseTest, ShareLimitAndBehindHead) {
  const Scenario sc = Instant()
                          .Environment({{kG, 4}})
                          .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                          .Submit(0, JobBuilder("a1", "A").Run(100))
                          .Submit(0, JobBuilder("a2", "A").Run(100))
                          .Submit(0, JobBuilder("a3", "A").Run(100))
                          .Build();
  const CauseRun r = RunWithCauses(sc);
  EXPECT_EQ(r.causes, (std::vector<std::string>{"0 a2 SHARE_LIMIT", "0 a3 BEHIND_HEAD", "100 a3 SHARE_LIMIT"}));
  EXPECT_TRUE(r.summary.wait_causes);
  EXPECT_EQ(CauseSeconds(r.summary, "A", WaitCause::kShareLimit), 200);
  EXPECT_EQ(CauseSeconds(r.summary, "A", WaitCause::kBehindHead), 100);
  EXPECT_EQ(r.summary.total.wait_by_cause_ms[static_cast<size_t>(WaitCause::kShareLimit)], 200'000);
}

// BORROW_LIMIT: b1 borrowed the one instance borrowLimit 100 allows on a
// limit of 1; b2 would need one more.
TEST_P(WaitCauseTest, BorrowLimit) {
  const Scenario sc = Instant()
                          .Environment({{kG, 4}})
                          .Share(ShareBuilder("B").Limit(kG, 1).LendAndBorrow(100))
                          .Share(ShareBuilder("C").Limit(kG, 3).Lend())
                          .Submit(0, JobBuilder("b1", "B").Instances(kG, 2).Run(50))
                          .Submit(0, JobBuilder("b2", "B").Run(10))
                          .Build();
  const CauseRun r = RunWithCauses(sc);
  EXPECT_EQ(r.causes, (std::vector<std::string>{"0 b2 BORROW_LIMIT"}));
  EXPECT_EQ(CauseSeconds(r.summary, "B", WaitCause::kBorrowLimit), 50);
}

// ENVIRONMENT_FULL: the shares' limits add up to more than the environment;
// a1 is within A's limit but every instance is in use by B.
TEST_P(WaitCauseTest, EnvironmentFull) {
  const Scenario sc = Instant()
                          .Environment({{kG, 2}})
                          .Share(ShareBuilder("A").Limit(kG, 2).Lend())
                          .Share(ShareBuilder("B").Limit(kG, 2).Lend())
                          .Submit(0, JobBuilder("b1", "B").Instances(kG, 2).Run(30))
                          .Submit(0, JobBuilder("a1", "A").Run(10))
                          .Build();
  const CauseRun r = RunWithCauses(sc);
  EXPECT_EQ(r.causes, (std::vector<std::string>{"0 a1 ENVIRONMENT_FULL"}));
  EXPECT_EQ(CauseSeconds(r.summary, "A", WaitCause::kEnvironmentFull), 30);
}

// With a scheduling interval of 10 s: a1 arrives off the grid while A's
// instance is lent to b1 (LENT_OUT); the pass at 10 reclaims it
// (DRAINING_VICTIMS); b1's drain ends at 35, off the grid: a1 now fits
// (NEXT_PASS) and b1 is back at B's head, where A, which holds the instance
// for a1, lends nothing (NO_IDLE_LENDER) until a1 ends at 140.
TEST_P(WaitCauseTest, LentOutDrainingNextPassNoIdleLender) {
  const Scenario sc = Instant()
                          .SchedulingInterval(10)
                          .Drain(25)
                          .Environment({{kG, 2}})
                          .Share(ShareBuilder("A").Limit(kG, 1).Lend())
                          .Share(ShareBuilder("B").Limit(kG, 1).LendAndBorrow())
                          .Submit(0, JobBuilder("b1", "B").Instances(kG, 2).Run(1000))
                          .Submit(5, JobBuilder("a1", "A").Run(100))
                          .Build();
  const CauseRun r = RunWithCauses(sc);
  EXPECT_EQ(r.causes, (std::vector<std::string>{"5 a1 LENT_OUT", "10 a1 DRAINING_VICTIMS", "35 a1 NEXT_PASS",
                                                 "35 b1 NO_IDLE_LENDER"}));
  EXPECT_EQ(CauseSeconds(r.summary, "A", WaitCause::kLentOut), 5);
  EXPECT_EQ(CauseSeconds(r.summary, "A", WaitCause::kDrainingVictims), 25);
  EXPECT_EQ(CauseSeconds(r.summary, "A", WaitCause::kNextPass), 5);
  EXPECT_EQ(CauseSeconds(r.summary, "B", WaitCause::kNoIdleLender), 140 - 35);
}

// MISCONFIGURATION: a never-fits head blocks its share; the job behind it
// waits behind it until it is terminated, then gets its turn.
TEST_P(WaitCauseTest, MisconfigurationBlocksTheShare) {
  const Scenario sc = Instant()
                          .Environment({{kG, 4}})
                          .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                          .Submit(0, JobBuilder("big", "A").Instances(kG, 2).Run(10))
                          .Submit(0, JobBuilder("small", "A").Run(10))
                          .Terminate(60, "big")
                          .Build();
  const CauseRun r = RunWithCauses(sc);
  EXPECT_EQ(r.causes, (std::vector<std::string>{"0 big MISCONFIGURATION", "0 small BEHIND_HEAD"}));
  EXPECT_EQ(CauseSeconds(r.summary, "A", WaitCause::kMisconfiguration), 60);
  EXPECT_EQ(CauseSeconds(r.summary, "A", WaitCause::kBehindHead), 60);
}

// A terminated holder's reservation goes at once (docs/semantics.md §4):
// with a scheduling interval of 10 s, high preempts low in-share at 10;
// low's drain ends at 15 and high holds both instances (NEXT_PASS: it fits,
// the next pass is at 20). high is terminated at 17, off the grid: low,
// head again, sees the instances free (NEXT_PASS), not held for a job that
// will never run (ENVIRONMENT_FULL). Found by the differential fuzzer.
TEST_P(WaitCauseTest, TerminatedHolderFreesItsHoldAtOnce) {
  const Scenario sc = Instant()
                          .SchedulingInterval(10)
                          .Drain(5)
                          .Environment({{kG, 2}})
                          .Share(ShareBuilder("A").Limit(kG, 2).Reserve().InShare(true))
                          .Submit(0, JobBuilder("low", "A").Instances(kG, 2).Run(1000))
                          .Submit(3, JobBuilder("high", "A").Instances(kG, 2).Priority(5).Run(100))
                          .Terminate(17, "high")
                          .Build();
  const CauseRun r = RunWithCauses(sc);
  EXPECT_EQ(r.causes, (std::vector<std::string>{"3 high SHARE_LIMIT", "10 high DRAINING_VICTIMS", "15 high NEXT_PASS",
                                                 "15 low BEHIND_HEAD", "17 low NEXT_PASS"}));
  EXPECT_EQ(CauseSeconds(r.summary, "A", WaitCause::kNextPass), (17 - 15) + (20 - 17));
  EXPECT_EQ(CauseSeconds(r.summary, "A", WaitCause::kEnvironmentFull), 0);
}

// A holder overtaken between passes: b1 (B) holds the capacity reclaimed
// from a1 (A, borrowing from B), so B lends nothing and a1 waits
// NO_IDLE_LENDER; at 17, with no pass, b2 (higher priority) takes B's head.
// Only a head's reservation withholds (docs/semantics.md §3, "Idle"), so B
// lends again at once and a1's cause is what is still short: the free
// capacity, which b1's hold keeps until the pass at 20 drops it
// (ENVIRONMENT_FULL). Found by the differential fuzzer: the fast engine
// withheld until the next pass.
TEST_P(WaitCauseTest, OvertakenHolderStopsWithholdingAtOnce) {
  const Scenario sc = Instant()
                          .SchedulingInterval(10)
                          .Drain(5)
                          .Entitled(EntitledCapacity::kLendable)
                          .Environment({{kG, 3}})
                          .Share(ShareBuilder("A").Limit(kG, 1).LendAndBorrow())
                          .Share(ShareBuilder("B").Limit(kG, 2).Lend())
                          .Submit(0, JobBuilder("a1", "A").Instances(kG, 2).Run(1000))
                          .Submit(3, JobBuilder("b1", "B").Instances(kG, 2).Run(100))
                          .Submit(17, JobBuilder("b2", "B").Instances(kG, 1).Priority(5).Run(100))
                          .Build();
  const CauseRun r = RunWithCauses(sc);
  EXPECT_EQ(r.causes, (std::vector<std::string>{"3 b1 LENT_OUT", "10 b1 DRAINING_VICTIMS", "15 a1 NO_IDLE_LENDER",
                                                 "15 b1 NEXT_PASS", "17 a1 ENVIRONMENT_FULL", "17 b1 BEHIND_HEAD",
                                                 "17 b2 NEXT_PASS", "20 b1 SHARE_LIMIT", "120 b1 DRAINING_VICTIMS",
                                                 "125 a1 NO_IDLE_LENDER", "125 b1 NEXT_PASS"}));
  EXPECT_EQ(CauseSeconds(r.summary, "A", WaitCause::kEnvironmentFull), 20 - 17);
}

// ENVIRONMENT_DISABLED: nothing is dispatched until the environment is
// enabled at 50.
TEST_P(WaitCauseTest, EnvironmentDisabled) {
  const Scenario sc = Instant()
                          .Environment({{kG, 4}})
                          .EnvironmentState(false)
                          .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                          .Submit(0, JobBuilder("a1", "A").Run(10))
                          .UpdateEnvironment(50, {}, true)
                          .Build();
  const CauseRun r = RunWithCauses(sc);
  EXPECT_EQ(r.causes, (std::vector<std::string>{"0 a1 ENVIRONMENT_DISABLED"}));
  EXPECT_EQ(CauseSeconds(r.summary, "A", WaitCause::kEnvironmentDisabled), 50);
}

// CAPACITY_ERROR (summary only): SageMaker can provision no instance, so
// every attempt ends in a capacity error after 300 s; the job is dispatched
// again at once each time (no cause line), and by the horizon at 700 two
// attempts (600 s of SCHEDULED time) have failed.
TEST_P(WaitCauseTest, CapacityErrorTime) {
  CapacityModel cap;
  TypeCapacity t;
  t.instance_type = kG;
  t.availability = {AvailabilityStep{0, 0}};
  cap.types.push_back(t);
  const Scenario sc = Instant()
                          .Environment({{kG, 4}})
                          .Capacity(cap)
                          .Horizon(700)
                          .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                          .Submit(0, JobBuilder("a1", "A").Run(10))
                          .Build();
  const CauseRun r = RunWithCauses(sc);
  EXPECT_TRUE(r.causes.empty());
  EXPECT_EQ(CauseSeconds(r.summary, "A", WaitCause::kCapacityError), 600);
}

// Cause lines are extra lines and nothing more: on random scenarios, the
// log without them is byte for byte the log of the run without causes, and
// both engines write the same cause lines.
TEST_P(WaitCauseTest, CauseLinesChangeNothingElse) {
  int all_cause_lines = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Scenario sc = RandomScenario(seed, RandomScenarioOptions{6, 3, 30, true, true});
    std::ostringstream plain_text;
    {
      JsonlWriter w(&plain_text);
      if (EngineUnderTest() == EngineKind::kReference) {
        RunReferenceEngine(sc, w, /*check_invariants=*/false, 1000);
      } else {
        RunOptions o;
        o.cycle_preemptions = 1000;
        RunFastEngine(sc, w, o);
      }
    }
    std::ostringstream with_text;
    {
      JsonlWriter w(&with_text);
      if (EngineUnderTest() == EngineKind::kReference) {
        RunReferenceEngine(sc, w, /*check_invariants=*/false, 1000, /*wait_causes=*/true);
      } else {
        RunOptions o;
        o.cycle_preemptions = 1000;
        o.wait_causes = true;
        RunFastEngine(sc, w, o);
      }
    }
    std::istringstream in(with_text.str());
    std::string stripped, line;
    int cause_lines = 0;
    while (std::getline(in, line)) {
      if (line.find("\"waitCause\"") != std::string::npos) {
        ++cause_lines;
        continue;
      }
      stripped += line + "\n";
    }
    EXPECT_EQ(stripped, plain_text.str()) << "seed " << seed;
    all_cause_lines += cause_lines;
  }
  EXPECT_GT(all_cause_lines, 100);  // the scenarios do make jobs wait
}

INSTANTIATE_TEST_SUITE_P(Engines, WaitCauseTest, BothEngines(),
                         [](const ::testing::TestParamInfo<EngineKind>& p) { return EngineName(p.param); });

// The two engines write the same cause lines (the differential fuzzer does
// the same on its inputs).
TEST(WaitCauseDifferentialTest, EnginesAgreeOnRandomScenarios) {
  for (uint64_t seed = 100; seed < 160; ++seed) {
    const Scenario sc = RandomScenario(seed, RandomScenarioOptions{6, 3, 40, true, true});
    std::ostringstream fast, ref;
    {
      JsonlWriter w(&fast);
      RunOptions o;
      o.cycle_preemptions = 1000;
      o.wait_causes = true;
      RunFastEngine(sc, w, o);
    }
    {
      JsonlWriter w(&ref);
      RunReferenceEngine(sc, w, /*check_invariants=*/true, 1000, /*wait_causes=*/true);
    }
    ASSERT_EQ(FirstDifference(fast.str(), ref.str()), "") << "seed " << seed;
  }
}

}  // namespace
}  // namespace qs::testing
