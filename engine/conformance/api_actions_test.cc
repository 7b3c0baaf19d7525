// Conformance cases for DeleteQuotaShare, UpdateJobQueue and
// UpdateSchedulingPolicy (docs/semantics.md §7), run on both engines: each
// scenario with its expected Key() trace and rejected requests, derived by
// hand (derivation above each).
#include <string>
#include <vector>

#include "engine/model/validation.h"
#include "engine/testing/conformance.h"
#include "engine/testing/scenario_builder.h"

namespace qs::testing {
namespace {

struct ApiCase {
  std::string name;
  Scenario scenario;
  std::vector<std::string> key;
  std::vector<std::string> rejected;  // "path: message" of each rejected request
  SimTime end_time;
};

void PrintTo(const ApiCase& c, std::ostream* os) { *os << c.name; }
std::string PrintApiCase(const ::testing::TestParamInfo<ApiCase>& info) { return info.param.name; }

class ApiActionTest : public OnBothEngines<ApiCase> {};

TEST_P(ApiActionTest, KeyTraceAndRejections) {
  const ApiCase& c = Case();
  RecordingSink sink;
  RunStats stats = RunChecked(c.scenario, sink);
  EXPECT_EQ(sink.Key(), c.key);
  std::vector<std::string> rejected;
  for (const Rejected& r : sink.rejected) rejected.push_back(r.path + ": " + r.message);
  EXPECT_EQ(rejected, c.rejected);
  EXPECT_EQ(stats.end_time, c.end_time);
}

DeleteQuotaShareRequest Delete(std::string share) {
  DeleteQuotaShareRequest r;
  r.quota_share_arn = std::move(share);
  return r;
}

UpdateJobQueueRequest QueueUpdate() {
  UpdateJobQueueRequest r;
  r.job_queue = "q";
  return r;
}

std::vector<ApiCase> Cases() {
  std::vector<ApiCase> cases;
  const std::string kQle = S(reasons::kQuotaLimitExceeded);
  const std::string kQleCode = "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED";

  // env g 3; A RESERVE L=1; B LEND_AND_BORROW L=1; C LEND L=1. At 0 a1
  // runs on A's instance, a2 waits behind it (A full), b1 (n=2) runs on B's
  // own 1 and 1 borrowed from C. At 50 A is disabled and deleted: a1 and a2
  // are FAILED in submission order. At 60 deleting C while ENABLED is
  // rejected; C is then disabled and deleted (it has no jobs), and b1 keeps
  // the instance it borrowed from C until it ends at 300. At 70 a submission
  // to C and at 80 a new share named A are rejected.
  {
    ApiCase c{"DeleteQuotaShareTerminatesItsJobs",
              ScenarioBuilder()
                  .Environment({{kG, 3}})
                  .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                  .Share(ShareBuilder("B").Limit(kG, 1).LendAndBorrow())
                  .Share(ShareBuilder("C").Limit(kG, 1).Lend())
                  .Submit(0, JobBuilder("a1", "A").Run(100))
                  .Submit(0, JobBuilder("a2", "A").Run(100))
                  .Submit(0, JobBuilder("b1", "B").Instances(kG, 2).Run(300))
                  .UpdateShare(50, ShareUpdateBuilder("A").Disabled())
                  .Event(50, Delete("A"))
                  .Event(60, Delete("C"))
                  .UpdateShare(60, ShareUpdateBuilder("C").Disabled())
                  .Event(60, Delete("arn:aws:batch:us-east-1:123456789012:job-queue/q/quota-share/C"))
                  .Submit(70, JobBuilder("c1", "C").Run(10))
                  .CreateShare(80, ShareBuilder("A").Limit(kG, 1).Reserve())
                  .Build(),
              {"0.0 a1 SCHEDULED n=1", "0.0 b1 SCHEDULED n=2 C:1", "50.0 a1 FAILED " + DeletedShareReason("A"),
               "50.0 a2 FAILED " + DeletedShareReason("A"), "300.0 b1 SUCCEEDED"},
              {"events[5]: ClientException: quota share 'C' must be DISABLED (UpdateQuotaShare) before it can be "
               "deleted",
               "events[8]: ClientException: quotaShareName 'C' does not exist in job queue 'q'",
               "events[9]: ClientException: quota share 'A' was deleted earlier in this run; quotasim does not give a "
               "deleted share's name to a new share"},
              300000};
    cases.push_back(c);
  }

  // env g 2; A RESERVE L=1, B RESERVE L=1; the queue terminates
  // QUOTA_MANAGEMENT_LIMIT_EXCEEDED after 600 s. big (A, n=2 > L) gets the
  // reason at 0: due at 600. At 100 the entry becomes 900 s: a clock keeps
  // the due time it started with, and fires because an entry for the
  // reason exists at 600. big2 gets the reason at 700: due at 1600 (900 s).
  // At 800 the queue is DISABLED: x at 900 is rejected; at 1000 the entry
  // is removed, so big2's check at 1600 does nothing (big2 stays RUNNABLE,
  // the run ends at that stale check). At 1100 the queue is ENABLED again:
  // y (B) runs 1200-1300. UpdateSchedulingPolicy: one with a
  // fairsharePolicy and one naming another policy are rejected; the FIFO
  // one changes nothing.
  {
    UpdateJobQueueRequest longer = QueueUpdate();
    longer.time_limit_actions = std::vector<JobStateTimeLimitAction>{{kQleCode, "RUNNABLE", 900, "TERMINATE"}};
    UpdateJobQueueRequest disable = QueueUpdate();
    disable.state = Toggle::kDisabled;
    UpdateJobQueueRequest none = QueueUpdate();
    none.time_limit_actions = std::vector<JobStateTimeLimitAction>{};
    UpdateJobQueueRequest enable = QueueUpdate();
    enable.state = Toggle::kEnabled;
    UpdateJobQueueRequest other = QueueUpdate();
    other.scheduling_policy_arn = "another-policy";
    UpdateSchedulingPolicyRequest fair;
    fair.arn = "sp";
    fair.has_fairshare_policy = true;
    UpdateSchedulingPolicyRequest fifo;
    fifo.arn = "arn:aws:batch:us-east-1:123456789012:scheduling-policy/sp";
    fifo.has_quota_share_policy = true;
    ApiCase c{"UpdateJobQueueStateAndTimeLimits",
              ScenarioBuilder()
                  .Environment({{kG, 2}})
                  .TimeLimitAction(kQleCode, 600)
                  .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                  .Share(ShareBuilder("B").Limit(kG, 1).Reserve())
                  .Submit(0, JobBuilder("big", "A").Instances(kG, 2).Run(100))
                  .Event(100, longer)
                  .Event(150, fair)
                  .Event(160, fifo)
                  .Event(170, other)
                  .Submit(700, JobBuilder("big2", "A").Instances(kG, 2).Run(100))
                  .Event(800, disable)
                  .Submit(900, JobBuilder("x", "B").Run(10))
                  .Event(1000, none)
                  .Event(1100, enable)
                  .Submit(1200, JobBuilder("y", "B").Run(100))
                  .Build(),
              {"0.0 big RUNNABLE " + kQle, "600.0 big FAILED " + S(reasons::kTimeLimitPrefix) + kQleCode,
               "700.0 big2 RUNNABLE " + kQle, "1200.0 y SCHEDULED n=1", "1300.0 y SUCCEEDED"},
              {"events[2]: ClientException: fairsharePolicy cannot be set on a scheduling policy with a "
               "quotaSharePolicy",
               "events[4]: ClientException: schedulingPolicyArn 'another-policy' is not the queue's quota share "
               "scheduling policy",
               "events[7]: ClientException: job queue 'q' is DISABLED and does not accept new jobs"},
              1600000};
    cases.push_back(c);
  }
  // The time-limit clock under both readings (§5). env g 2; A RESERVE L=1,
  // B RESERVE L=1; the queue terminates QUOTA_MANAGEMENT_LIMIT_EXCEEDED
  // after 600 s. r (A) runs 0-400. big (A, n=2 > L) gets the reason at 0 as
  // A's head. At 50 quick (A, priority 5) and at 100 hi (A, priority 9)
  // arrive ahead of big and wait (r holds A's one instance). r ends at 400:
  // hi runs 400-500, quick 500-600. b1 (B, n=2) gets the reason at 1300; at
  // 1350 b0 (B, priority 5) gets ahead of it and starts in the same instant.
  //  * FROM_REASON (the default): big's clock runs from the reason at 0
  //    whatever is ahead of it: FAILED at 600; b1's at 1900.
  //  * AT_HEAD ("remained at the head of the queue", API Reference,
  //    JobStateTimeLimitAction): big is not the head from 50, and its clock
  //    stops; it is the head again when quick starts at 500, and its clock
  //    starts afresh: FAILED at 1100. b1 was never off the head at the end
  //    of an instant, so its clock runs on and fires at 1900.
  const std::string kQleFailed = S(reasons::kTimeLimitPrefix) + kQleCode;
  for (const TimeLimitClock clock : {TimeLimitClock::kFromReason, TimeLimitClock::kAtHead}) {
    const bool at_head = clock == TimeLimitClock::kAtHead;
    std::vector<std::string> key = {"0.0 r SCHEDULED n=1", "0.0 big RUNNABLE " + kQle, "400.0 r SUCCEEDED",
                                    "400.0 hi SCHEDULED n=1", "500.0 hi SUCCEEDED", "500.0 quick SCHEDULED n=1"};
    if (!at_head) key.push_back("600.0 big FAILED " + kQleFailed);
    key.push_back("600.0 quick SUCCEEDED");
    if (at_head) key.push_back("1100.0 big FAILED " + kQleFailed);
    key.insert(key.end(), {"1300.0 b1 RUNNABLE " + kQle, "1350.0 b0 SCHEDULED n=1", "1450.0 b0 SUCCEEDED",
                           "1900.0 b1 FAILED " + kQleFailed});
    ApiCase c{at_head ? "TimeLimitClockRunsAtTheHead" : "TimeLimitClockFromReason",
              ScenarioBuilder()
                  .Environment({{kG, 2}})
                  .Clock(clock)
                  .TimeLimitAction(kQleCode, 600)
                  .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                  .Share(ShareBuilder("B").Limit(kG, 1).Reserve())
                  .Submit(0, JobBuilder("r", "A").Run(400))
                  .Submit(0, JobBuilder("big", "A").Instances(kG, 2).Run(100))
                  .Submit(50, JobBuilder("quick", "A").Priority(5).Run(100))
                  .Submit(100, JobBuilder("hi", "A").Priority(9).Run(100))
                  .Submit(1300, JobBuilder("b1", "B").Instances(kG, 2).Run(100))
                  .Submit(1350, JobBuilder("b0", "B").Priority(5).Run(100))
                  .Build(),
              key,
              {},
              1900000};
    cases.push_back(c);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(ApiActions, ApiActionTest, ::testing::Combine(BothEngines(), ::testing::ValuesIn(Cases())),
                         BothEnginesNames<ApiCase>(PrintApiCase));

}  // namespace
}  // namespace qs::testing
