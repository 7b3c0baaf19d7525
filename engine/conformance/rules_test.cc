// The rule table of the conformance suite (engine/testing/conformance.h):
// one focused scenario per rule and knob value of docs/semantics.md, each
// with the expected Key() trace derived by hand (derivation above each).
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "engine/io/scenario_json.h"
#include "engine/testing/conformance.h"
#include "engine/testing/scenario_builder.h"

namespace qs::testing {
namespace {

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

class RuleTest : public OnBothEngines<RuleCase> {};

TEST_P(RuleTest, KeyTrace) {
  const RuleCase& c = Case();
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

  // StoppingCondition.MaxRuntimeInSeconds (§5): env 4, A RESERVE L=4, all
  // RUNNING at 0. m (run 100, limit 50, 2 attempts) is stopped at 50 with
  // SageMaker's reason, re-queued and dispatched again at once (nothing
  // waits ahead of it), stopped again at 100 (FAILED). tie (attempt
  // duration 50 = MaxRuntime 50): Batch's own timeout reason. exact (run 100
  // = MaxRuntime 100) is no stop: SUCCEEDED at 100.
  const std::string kMaxRuntime = S(reasons::kMaxRuntimeExceeded);
  cases.push_back(
      {"MaxRuntimeInSecondsStopsTheAttempt",
       ScenarioBuilder()
           .Environment({{kG, 4}})
           .Share(ShareBuilder("A").Limit(kG, 4).Reserve())
           .Submit(0, JobBuilder("m", "A").Priority(1).MaxRuntime(50).RetryAttempts(2).Run(100))
           .Submit(0, JobBuilder("tie", "A").AttemptDuration(50).MaxRuntime(50).Run(100))
           .Submit(0, JobBuilder("exact", "A").MaxRuntime(100).Run(100))
           .Build(),
       {"0.0 m SCHEDULED n=1", "0.0 tie SCHEDULED n=1", "0.0 exact SCHEDULED n=1",
        "50.0 m RUNNABLE " + kMaxRuntime, "50.0 tie FAILED " + kTimeout, "50.0 m SCHEDULED n=1",
        "100.0 exact SUCCEEDED", "100.0 m FAILED " + kMaxRuntime},
       100000});

  // Checkpoints (§6): env 2; A and B RESERVE L=1, in-share ENABLED; the
  // scenario checkpoints every 45 s, low every 30 s (its own value wins).
  // low and b_low (run 100) RUN from 0; high and b_high (priority 5, run
  // 10) arrive at 70 and preempt them in-share (A first: r tie, high
  // submitted first). low keeps floor(70/30)*30 = 60 s, b_low 45 s. Drains
  // end at 90; high and b_high run 90-100; low then runs its last 40 s
  // (ends 140), b_low its last 55 s (ends 155).
  cases.push_back({"CheckpointsKeepWholeIntervals",
                   ScenarioBuilder()
                       .Environment({{kG, 2}})
                       .CheckpointEvery(45)
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve().InShare(true))
                       .Share(ShareBuilder("B").Limit(kG, 1).Reserve().InShare(true))
                       .Submit(0, JobBuilder("low", "A").CheckpointEvery(30).Run(100))
                       .Submit(0, JobBuilder("b_low", "B").Run(100))
                       .Submit(70, JobBuilder("high", "A").Priority(5).Run(10))
                       .Submit(70, JobBuilder("b_high", "B").Priority(5).Run(10))
                       .Build(),
                   {"0.0 low SCHEDULED n=1", "0.0 b_low SCHEDULED n=1",
                    "70.0 low RUNNING " + kIIn + " for=high kept=60.0",
                    "70.0 b_low RUNNING " + kIIn + " for=b_high kept=45.0", "90.0 low RUNNABLE " + kI + " #1",
                    "90.0 b_low RUNNABLE " + kI + " #1", "90.0 high SCHEDULED n=1", "90.0 b_high SCHEDULED n=1",
                    "100.0 high SUCCEEDED", "100.0 b_high SUCCEEDED", "100.0 low SCHEDULED n=1",
                    "100.0 b_low SCHEDULED n=1", "140.0 low SUCCEEDED", "155.0 b_low SUCCEEDED"},
                   155000});

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

  // Short environment: a reservation that cannot cover its head is given up
  // (§4 phase 1). env 4; A LEND L=2, B LEND L=2, C LAB L=1 (unlimited).
  //  0: c1 (n=2) takes 1 own and borrows A:1; c2 (n=2) borrows B:2 (B has
  //     the most idle).
  // 10: a1 (A, 2) reclaims c1, b1 (B, 2) reclaims c2 (visited A, B: r=0,
  //     older head first; C has r=4); holds 0 (victims cover n).
  // 20: the environment drops to 2 (preempts nobody).
  // 30: both drains end: hold[a1] = 2, hold[b1] = 2, Free = 2-0-4 = -2. A
  //     (visited after C, whose head is over its own limit): Free_j = 0 < 2
  //     and no victim -> a1 gives its hold up (Free 0); b1: Free_j = 2 ->
  //     SCHEDULED. Without the rule both wait for ever.
  // 130: b1 ends; a1 dispatches. 230: a1 ends; c1 takes 1 own, borrows A:1
  //     (A and B idle 2, by name); it ends at 1230 and c2 does the same.
  cases.push_back({"ShortEnvironmentGivesUpReservation",
                   ScenarioBuilder()
                       .Environment({{kG, 4}})
                       .Share(ShareBuilder("A").Limit(kG, 2).Lend())
                       .Share(ShareBuilder("B").Limit(kG, 2).Lend())
                       .Share(ShareBuilder("C").Limit(kG, 1).LendAndBorrow())
                       .Submit(0, JobBuilder("c1", "C").Instances(kG, 2).Run(1000))
                       .Submit(0, JobBuilder("c2", "C").Instances(kG, 2).Run(1000))
                       .Submit(10, JobBuilder("a1", "A").Instances(kG, 2).Run(100))
                       .Submit(10, JobBuilder("b1", "B").Instances(kG, 2).Run(100))
                       .UpdateEnvironment(20, {{kG, 2}})
                       .Build(),
                   {"0.0 c1 SCHEDULED n=2 A:1", "0.0 c2 SCHEDULED n=2 B:2", "10.0 c1 RUNNING " + kXIn + " for=a1",
                    "10.0 c2 RUNNING " + kXIn + " for=b1", "30.0 c1 RUNNABLE " + kX + " #1",
                    "30.0 c2 RUNNABLE " + kX + " #1", "30.0 b1 SCHEDULED n=2", "130.0 b1 SUCCEEDED",
                    "130.0 a1 SCHEDULED n=2", "230.0 a1 SUCCEEDED", "230.0 c1 SCHEDULED n=2 A:1",
                    "1230.0 c1 SUCCEEDED", "1230.0 c2 SCHEDULED n=2 A:1", "2230.0 c2 SUCCEEDED"},
                   2230000});

  // victimReturn (§6, "Preemption cycles"): two reclaims across two types.
  // env G 3, P 3; A and B LAB (unlimited), limits G 2 and P 2 each.
  //  0: a1 (A, G 3) takes 2 own + B:1; b1 (B, P 3) takes 2 own + A:1.
  // 10: a2 (A, P 1) reclaims b1 and b2 (B, G 1) reclaims a1 (A visited
  //     first: r tie 1.5, heads of the same createdAt, a2 submitted first).
  // 30: both drains end (b1's line first: preempted first); a1 and b1 rank
  //     before a2 and b2 (created at 0).
  // BEHIND_RESERVATION: a2 and b2 stay the heads and start on the capacity
  //   held for them; a1 and b1 cannot (Free 2 < 3) until 130, when both
  //   borrow again (B's G and A's P are idle: neither head needs them).
  // IN_PLACE: a2 and b2 lose their holds; a1 borrows B:1 again; b1 cannot
  //   (A's head a2 is entitled to P, A lends none); round 2 dispatches a2
  //   (Free P 3). 130: a2 ends, b1 borrows A:1, b2 (now B's head) reclaims
  //   a1 again; 150: b2 starts on its hold; 250: b2 ends, a1 borrows B:1.
  {
    auto crossed = [](VictimReturn v) {
      return ScenarioBuilder()
          .Environment({{kG, 3}, {"ml.p4d.24xlarge", 3}})
          .Returning(v)
          .Share(ShareBuilder("A").Limit(kG, 2).Limit("ml.p4d.24xlarge", 2).LendAndBorrow())
          .Share(ShareBuilder("B").Limit(kG, 2).Limit("ml.p4d.24xlarge", 2).LendAndBorrow())
          .Submit(0, JobBuilder("a1", "A").Instances(kG, 3).Run(1000))
          .Submit(0, JobBuilder("b1", "B").Instances("ml.p4d.24xlarge", 3).Run(1000))
          .Submit(10, JobBuilder("a2", "A").Instances("ml.p4d.24xlarge", 1).Run(100))
          .Submit(10, JobBuilder("b2", "B").Instances(kG, 1).Run(100))
          .Build();
    };
    cases.push_back({"VictimReturnBehindReservation", crossed(VictimReturn::kBehindReservation),
                     {"0.0 a1 SCHEDULED n=3 B:1", "0.0 b1 SCHEDULED n=3 A:1", "10.0 b1 RUNNING " + kXIn + " for=a2",
                      "10.0 a1 RUNNING " + kXIn + " for=b2", "30.0 b1 RUNNABLE " + kX + " #1",
                      "30.0 a1 RUNNABLE " + kX + " #1", "30.0 a2 SCHEDULED n=1", "30.0 b2 SCHEDULED n=1",
                      "130.0 a2 SUCCEEDED", "130.0 b2 SUCCEEDED", "130.0 a1 SCHEDULED n=3 B:1",
                      "130.0 b1 SCHEDULED n=3 A:1", "1130.0 a1 SUCCEEDED", "1130.0 b1 SUCCEEDED"},
                     1130000});
    cases.push_back({"VictimReturnInPlace", crossed(VictimReturn::kInPlace),
                     {"0.0 a1 SCHEDULED n=3 B:1", "0.0 b1 SCHEDULED n=3 A:1", "10.0 b1 RUNNING " + kXIn + " for=a2",
                      "10.0 a1 RUNNING " + kXIn + " for=b2", "30.0 b1 RUNNABLE " + kX + " #1",
                      "30.0 a1 RUNNABLE " + kX + " #1", "30.0 a1 SCHEDULED n=3 B:1", "30.0 a2 SCHEDULED n=1",
                      "130.0 a2 SUCCEEDED", "130.0 b1 SCHEDULED n=3 A:1", "130.0 a1 RUNNING " + kXIn + " for=b2",
                      "150.0 a1 RUNNABLE " + kX + " #2", "150.0 b2 SCHEDULED n=1", "250.0 b2 SUCCEEDED",
                      "250.0 a1 SCHEDULED n=3 B:1", "1130.0 b1 SUCCEEDED", "1250.0 a1 SUCCEEDED"},
                     1250000});
  }

  // Backfill never undoes an in-share preemption (§4 phase 1). env 2; A LAB
  // L=1 (unlimited), in-share on; B LEND L=1; backfill on.
  //  0: v (A, 1) runs from its own limit.
  // 10: h (A, priority 5, 2) cannot borrow 2 (Free 1); phase 3 preempts v,
  //     counting on B's idle 1; the free instance is held for h.
  // 15: b1 (B, 1) finds Free 0 and waits: B now withholds (entitled head).
  // 30: v drains (hold 2); h's borrow fails (B withholds) and, borrowing
  //     only, loses its reservation; backfill skips v (preempted for h, the
  //     head); b1 starts. 130: b1 ends; h borrows B:1. 230: h ends; v runs.
  cases.push_back({"BackfillSkipsTheHeadsInShareVictims",
                   ScenarioBuilder()
                       .Environment({{kG, 2}})
                       .Backfill(true)
                       .Share(ShareBuilder("A").Limit(kG, 1).LendAndBorrow().InShare(true))
                       .Share(ShareBuilder("B").Limit(kG, 1).Lend())
                       .Submit(0, JobBuilder("v", "A").Run(1000))
                       .Submit(10, JobBuilder("h", "A").Priority(5).Instances(kG, 2).Run(100))
                       .Submit(15, JobBuilder("b1", "B").Run(100))
                       .Build(),
                   {"0.0 v SCHEDULED n=1", "10.0 v RUNNING " + kIIn + " for=h", "30.0 v RUNNABLE " + kI + " #1",
                    "30.0 b1 SCHEDULED n=1", "130.0 b1 SUCCEEDED", "130.0 h SCHEDULED n=2 B:1", "230.0 h SUCCEEDED",
                    "230.0 v SCHEDULED n=1", "1230.0 v SUCCEEDED"},
                   1230000});

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

  // Entitled capacity (entitledCapacity, §3) -- issue #16's example. env 4;
  // A LEND L=5; B LEND_AND_BORROW L=3 borrowLimit 50 (B = 1) in-share
  // ENABLED. low (B, 3) runs from 0. At 10 high (B, priority 7, 4) cannot
  // borrow 4 (Free 1); phase 3: once low drains, a = 3 own + 1 borrowed
  // from A (Idle 5) -> preempt low, hold 1. At 15 x (A, 4: Own+4 <= 5) finds
  // Free_x = 4 - 3 - 1 = 0 and nobody borrowing from A: it waits.
  //  * WITHHELD (default): at 30 low drains (hold 4). Round 1, phase 1: x
  //    still has Free_x = 0. Phase 2: A's head x waits within A's own limit,
  //    so Idle[A] = 0 and high cannot borrow; it can start only by
  //    borrowing, so its reservation is dropped. Round 2: x dispatches on
  //    the freed 4. high borrows 1 from A when x ends (130); low runs last.
  //  * LENDABLE: at 30 high borrows 1 of A's idle 5 and dispatches; in the
  //    next round x reclaims it (group A) and starts at 50 when it drains.
  //    Both low's preemption and high's dispatch were wasted.
  {
    auto entitled = [](EntitledCapacity e) {
      return ScenarioBuilder()
          .Environment({{kG, 4}})
          .Share(ShareBuilder("A").Limit(kG, 5).Lend())
          .Share(ShareBuilder("B").Limit(kG, 3).LendAndBorrow(50).InShare(true))
          .Entitled(e)
          .Submit(0, JobBuilder("low", "B").Instances(kG, 3).Run(100))
          .Submit(10, JobBuilder("high", "B").Priority(7).Instances(kG, 4).Run(100))
          .Submit(15, JobBuilder("x", "A").Instances(kG, 4).Run(100))
          .Build();
    };
    cases.push_back({"EntitledCapacityWithheld", entitled(EntitledCapacity::kWithheld),
                     {"0.0 low SCHEDULED n=3", "10.0 low RUNNING " + kIIn + " for=high",
                      "30.0 low RUNNABLE " + kI + " #1", "30.0 x SCHEDULED n=4", "130.0 x SUCCEEDED",
                      "130.0 high SCHEDULED n=4 A:1", "230.0 high SUCCEEDED", "230.0 low SCHEDULED n=3",
                      "330.0 low SUCCEEDED"},
                     330000});
    cases.push_back({"EntitledCapacityLendable", entitled(EntitledCapacity::kLendable),
                     {"0.0 low SCHEDULED n=3", "10.0 low RUNNING " + kIIn + " for=high",
                      "30.0 low RUNNABLE " + kI + " #1", "30.0 high SCHEDULED n=4 A:1",
                      "30.0 high SCHEDULED " + kXIn + " for=x", "50.0 high RUNNABLE " + kX + " #1",
                      "50.0 x SCHEDULED n=4", "150.0 x SUCCEEDED", "150.0 high SCHEDULED n=4 A:1",
                      "250.0 high SUCCEEDED", "250.0 low SCHEDULED n=3", "350.0 low SUCCEEDED"},
                     350000});
  }

  // Entitled capacity is withheld per instance type. env g 2, p 1; A LEND
  // L g=1 p=1; B LEND_AND_BORROW L g=1; C RESERVE L p=1. At 0 (visiting
  // C, A, B: equal ratios, older heads first): c0 takes the only p; A's
  // head a0 (p, within A's limit) finds nothing free and nobody to reclaim
  // from, so it waits, entitled on p; b1 runs on B's own g; b2 borrows A's
  // idle g, which A still lends (its head waits for p, not g). a0 starts
  // when c0 ends.
  cases.push_back({"EntitledCapacityIsPerType",
                   ScenarioBuilder()
                       .Environment({{kG, 2}, {"ml.p4d.24xlarge", 1}})
                       .Share(ShareBuilder("A").Limit(kG, 1).Limit("ml.p4d.24xlarge", 1).Lend())
                       .Share(ShareBuilder("B").Limit(kG, 1).LendAndBorrow())
                       .Share(ShareBuilder("C").Limit("ml.p4d.24xlarge", 1).Reserve())
                       .Submit(0, JobBuilder("c0", "C").Instances("ml.p4d.24xlarge", 1).Run(100))
                       .Submit(0, JobBuilder("a0", "A").Instances("ml.p4d.24xlarge", 1).Run(100))
                       .Submit(0, JobBuilder("b1", "B").Run(100))
                       .Submit(0, JobBuilder("b2", "B").Run(100))
                       .Build(),
                   {"0.0 c0 SCHEDULED n=1", "0.0 b1 SCHEDULED n=1", "0.0 b2 SCHEDULED n=1 A:1",
                    "100.0 c0 SUCCEEDED", "100.0 b1 SUCCEEDED", "100.0 b2 SUCCEEDED", "100.0 a0 SCHEDULED n=1",
                    "200.0 a0 SUCCEEDED"},
                   200000});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Rules, RuleTest, ::testing::Combine(BothEngines(), ::testing::ValuesIn(RuleCases())),
                         BothEnginesNames<RuleCase>(PrintRuleCase));

}  // namespace
}  // namespace qs::testing
