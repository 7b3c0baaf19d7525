// Every ClientException rule of quota-semantics.md section 1, one named case
// each: the request is rejected, and the message names the offending field.
#include "engine/model/validation.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace qs {
namespace {

CreateQuotaShareRequest GoodShare() {
  CreateQuotaShareRequest r;
  r.quota_share_name = "QS1";
  r.capacity_limits = std::vector<CapacityLimit>{{"ml.g5.xlarge", 1}};
  r.has_resource_sharing = true;
  r.strategy = Strategy::kLendAndBorrow;
  r.borrow_limit = 200;
  r.in_share_preemption = Toggle::kEnabled;
  return r;
}

SubmitServiceJobRequest GoodJob() {
  SubmitServiceJobRequest r;
  r.job_name = "job-1";
  r.quota_share_name = "QS1";
  r.scheduling_priority = 5;
  r.instance_type = "ml.g5.xlarge";
  r.instance_count = 1;
  return r;
}

void ExpectRejected(const absl::Status& s, const std::string& field, const std::string& name) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << name;
  EXPECT_NE(std::string(s.message()).find(field), std::string::npos) << name << ": " << s.message();
}

TEST(CreateQuotaShareValidationTest, AcceptsAWellFormedShare) {
  EXPECT_TRUE(ValidateCreateQuotaShare(GoodShare(), "q", 0, false).ok());
  CreateQuotaShareRequest r = GoodShare();
  r.strategy = Strategy::kReserve;
  r.borrow_limit.reset();
  EXPECT_TRUE(ValidateCreateQuotaShare(r, "q", 19, false).ok());
  r = GoodShare();
  r.borrow_limit = -1;  // unlimited
  EXPECT_TRUE(ValidateCreateQuotaShare(r, "q", 0, false).ok());
}

TEST(CreateQuotaShareValidationTest, RejectsEachRuleOfSection1) {
  struct Case {
    std::string name;
    CreateQuotaShareRequest r;
    int share_count;
    bool exists;
    std::string field;
  };
  std::vector<Case> cases;
  auto add = [&](std::string name, auto mutate, std::string field, int count = 0, bool exists = false) {
    CreateQuotaShareRequest r = GoodShare();
    mutate(r);
    cases.push_back({std::move(name), std::move(r), count, exists, std::move(field)});
  };
  add("missing name", [](auto& r) { r.quota_share_name.reset(); }, "quotaShareName");
  add("name with a space", [](auto& r) { r.quota_share_name = "QS 1"; }, "quotaShareName");
  add("name of 129 characters", [](auto& r) { r.quota_share_name = std::string(129, 'a'); }, "quotaShareName");
  add("no capacity limits", [](auto& r) { r.capacity_limits = std::vector<CapacityLimit>{}; }, "capacityLimits");
  add("six capacity limits",
      [](auto& r) {
        r.capacity_limits = std::vector<CapacityLimit>{{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}, {"f", 1}};
      },
      "capacityLimits");
  add("duplicate unit", [](auto& r) { r.capacity_limits = std::vector<CapacityLimit>{{"a", 1}, {"a", 2}}; },
      "capacityLimits[1].capacityUnit");
  add("maxCapacity 0", [](auto& r) { r.capacity_limits = std::vector<CapacityLimit>{{"a", 0}}; },
      "capacityLimits[0].maxCapacity");
  add("borrowLimit -2", [](auto& r) { r.borrow_limit = -2; }, "borrowLimit");
  add("borrowLimit on LEND", [](auto& r) { r.strategy = Strategy::kLend; }, "borrowLimit");
  add("borrowLimit on RESERVE", [](auto& r) { r.strategy = Strategy::kReserve; }, "borrowLimit");
  add("missing resourceSharingConfiguration", [](auto& r) { r.has_resource_sharing = false; },
      "resourceSharingConfiguration");
  add("missing strategy", [](auto& r) { r.strategy.reset(); }, "strategy");
  add("missing preemptionConfiguration", [](auto& r) { r.in_share_preemption.reset(); },
      "preemptionConfiguration");
  add("21st share", [](auto&) {}, "maximum of 20", 20);
  add("duplicate share name", [](auto&) {}, "already exists", 3, true);
  add("other job queue", [](auto& r) { r.job_queue = "other"; }, "jobQueue");
  for (const Case& c : cases) {
    ExpectRejected(ValidateCreateQuotaShare(c.r, "q", c.share_count, c.exists), c.field, c.name);
  }
}

TEST(UpdateQuotaShareValidationTest, RejectsUnknownShareAndBadFields) {
  UpdateQuotaShareRequest r;
  r.quota_share_arn = "QS9";
  ExpectRejected(ValidateUpdateQuotaShare(r, false), "does not exist", "unknown share");
  r.capacity_limits = std::vector<CapacityLimit>{{"a", 0}};
  ExpectRejected(ValidateUpdateQuotaShare(r, true), "maxCapacity", "maxCapacity 0");
  r.capacity_limits.reset();
  r.has_resource_sharing = true;
  r.strategy = Strategy::kLend;
  r.borrow_limit = 10;
  ExpectRejected(ValidateUpdateQuotaShare(r, true), "borrowLimit", "borrowLimit on LEND");
  r.strategy = Strategy::kLendAndBorrow;
  EXPECT_TRUE(ValidateUpdateQuotaShare(r, true).ok());
  UpdateQuotaShareRequest none;
  ExpectRejected(ValidateUpdateQuotaShare(none, false), "quotaShareArn", "missing arn");
}

TEST(ShareNameFromArnTest, AcceptsNamesAndArns) {
  EXPECT_EQ(ShareNameFromArn("QS1"), "QS1");
  EXPECT_EQ(ShareNameFromArn("arn:aws:batch:us-east-1:123456789012:job-queue/q/quota-share/QS1"), "QS1");
  EXPECT_TRUE(NamesQueue("q", "q"));
  EXPECT_TRUE(NamesQueue("arn:aws:batch:us-east-1:123456789012:job-queue/q", "q"));
  EXPECT_FALSE(NamesQueue("arn:aws:batch:us-east-1:123456789012:job-queue/qq", "q"));
  EXPECT_FALSE(NamesQueue("xq", "q"));
}

TEST(SubmitValidationTest, RejectsEachRule) {
  const ShareFacts ok{true, true};
  EXPECT_TRUE(ValidateSubmit(GoodJob(), "q", ok).ok());
  struct Case {
    std::string name;
    SubmitServiceJobRequest r;
    ShareFacts share;
    std::string field;
  };
  std::vector<Case> cases;
  auto add = [&](std::string name, auto mutate, std::string field, ShareFacts share = ShareFacts{true, true}) {
    SubmitServiceJobRequest r = GoodJob();
    mutate(r);
    cases.push_back({std::move(name), std::move(r), share, std::move(field)});
  };
  add("missing jobName", [](auto& r) { r.job_name.reset(); }, "jobName");
  add("jobName starting with -", [](auto& r) { r.job_name = "-x"; }, "jobName");
  add("missing quotaShareName", [](auto& r) { r.quota_share_name.reset(); }, "quotaShareName");
  add("unknown share", [](auto&) {}, "does not exist", ShareFacts{false, false});
  add("DISABLED share", [](auto&) {}, "DISABLED", ShareFacts{true, false});
  add("priority -1", [](auto& r) { r.scheduling_priority = -1; }, "schedulingPriority");
  add("priority 10000", [](auto& r) { r.scheduling_priority = 10000; }, "schedulingPriority");
  add("attempts 0", [](auto& r) { r.retry_attempts = 0; }, "retryStrategy.attempts");
  add("attempts 11", [](auto& r) { r.retry_attempts = 11; }, "retryStrategy.attempts");
  add("timeout 0", [](auto& r) { r.attempt_duration_seconds = 0; }, "attemptDurationSeconds");
  add("preemption retries -1", [](auto& r) { r.preemption_retries = -1; }, "preemptionRetriesBeforeTermination");
  add("shareIdentifier", [](auto& r) { r.share_identifier = "x"; }, "shareIdentifier");
  add("other queue", [](auto& r) { r.job_queue = "other"; }, "jobQueue");
  add("other job type", [](auto& r) { r.service_job_type = "EKS"; }, "serviceJobType");
  add("payload error", [](auto& r) { r.payload_error = "serviceRequestPayload is required"; },
      "serviceRequestPayload");
  add("InstanceCount 0", [](auto& r) { r.instance_count = 0; }, "InstanceCount");
  for (const Case& c : cases) ExpectRejected(ValidateSubmit(c.r, "q", c.share), c.field, c.name);
  // The split the fast engine uses (request-only checks on its decoding
  // thread, the rest on its own): for every request and every state of the
  // queue and the share, the same answer, message for message, wherever
  // the request-only checks pass; where they fail, the request is rejected
  // whatever the state.
  cases.push_back({"good", GoodJob(), ok, ""});
  for (const Case& c : cases) {
    for (int bits = 0; bits < 8; ++bits) {
      const ShareFacts share{(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0};
      const absl::Status full = ValidateSubmit(c.r, "q", share);
      if (SubmitRequestChecksPass(c.r, "q")) {
        EXPECT_EQ(ValidateSubmitState(c.r, "q", share), full) << c.name << ", facts " << bits;
      } else {
        EXPECT_FALSE(full.ok()) << c.name << ", facts " << bits;
      }
    }
  }
  // The request-only checks pass exactly where the request is accepted by
  // an enabled queue and share.
  for (const Case& c : cases) {
    EXPECT_EQ(SubmitRequestChecksPass(c.r, "q"), ValidateSubmit(c.r, "q", ShareFacts{true, true, true}).ok()) << c.name;
  }
  // Boundaries that are accepted.
  SubmitServiceJobRequest r = GoodJob();
  r.scheduling_priority = 9999;
  r.retry_attempts = 10;
  r.preemption_retries = 0;
  EXPECT_TRUE(ValidateSubmit(r, "q", ok).ok());
  r.scheduling_priority = 0;
  r.retry_attempts = 1;
  EXPECT_TRUE(ValidateSubmit(r, "q", ok).ok());
}

TEST(JobRequestValidationTest, UpdateAndTerminateNeedALiveJob) {
  UpdateServiceJobRequest u;
  u.job_id = "a";
  u.scheduling_priority = 3;
  ExpectRejected(ValidateUpdateServiceJob(u, JobFacts{false, false, ""}), "does not exist", "unknown job");
  ExpectRejected(ValidateUpdateServiceJob(u, JobFacts{true, true, "SUCCEEDED"}), "already SUCCEEDED", "terminal");
  EXPECT_TRUE(ValidateUpdateServiceJob(u, JobFacts{true, false, "RUNNING"}).ok());
  u.scheduling_priority = 10000;
  ExpectRejected(ValidateUpdateServiceJob(u, JobFacts{true, false, "RUNNING"}), "schedulingPriority", "range");
  TerminateServiceJobRequest t;
  t.job_id = "a";
  ExpectRejected(ValidateTerminateServiceJob(t, JobFacts{true, false, "RUNNABLE"}), "reason", "no reason");
  t.reason = "stop";
  EXPECT_TRUE(ValidateTerminateServiceJob(t, JobFacts{true, false, "RUNNABLE"}).ok());
  ExpectRejected(ValidateTerminateServiceJob(t, JobFacts{true, true, "FAILED"}), "already FAILED", "terminal");
}

TEST(EnvironmentValidationTest, UpdateServiceEnvironmentRules) {
  UpdateServiceEnvironmentRequest r;
  ExpectRejected(ValidateUpdateServiceEnvironment(r, "se"), "serviceEnvironment", "missing");
  r.service_environment = "other";
  ExpectRejected(ValidateUpdateServiceEnvironment(r, "se"), "does not exist", "other environment");
  r.service_environment = "se";
  r.capacity_limits = std::vector<CapacityLimit>{{"a", 0}};
  ExpectRejected(ValidateUpdateServiceEnvironment(r, "se"), "maxCapacity", "zero");
  r.capacity_limits = std::vector<CapacityLimit>{{"a", 2}, {"a", 3}};
  ExpectRejected(ValidateUpdateServiceEnvironment(r, "se"), "more than once", "duplicate");
  r.capacity_limits = std::vector<CapacityLimit>{{"a", 2}};
  EXPECT_TRUE(ValidateUpdateServiceEnvironment(r, "se").ok());
  GetJobQueueSnapshotRequest g;
  EXPECT_TRUE(ValidateGetJobQueueSnapshot(g, "q").ok());
  g.job_queue = "nope";
  ExpectRejected(ValidateGetJobQueueSnapshot(g, "q"), "jobQueue", "other queue");
}

}  // namespace
}  // namespace qs
