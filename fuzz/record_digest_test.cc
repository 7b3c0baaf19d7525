// DigestLog (fuzz/record_digest.h) against JsonlWriter: the differential
// fuzzer compares its runs by digest and formats text for one input in
// eight, so the digests must be equal exactly when the printed lines are.
// Each test builds variants of a record that change one field at a time,
// printed or not, and checks every pair: same text <=> same digest.
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "engine/log/event_log.h"
#include "fuzz/record_digest.h"

namespace qs::fuzz {
namespace {

struct Variant {
  std::string name;
  std::string text;
  uint64_t digest, digest_with_causes;
};

// Every pair of variants: equal texts exactly when equal digests.
void ExpectDigestFollowsText(const std::vector<Variant>& v) {
  for (size_t a = 0; a < v.size(); ++a) {
    for (size_t b = a + 1; b < v.size(); ++b) {
      const bool same_text = v[a].text == v[b].text;
      EXPECT_EQ(same_text, v[a].digest_with_causes == v[b].digest_with_causes)
          << v[a].name << " vs " << v[b].name << "\n  " << v[a].text << "  " << v[b].text;
    }
  }
}

// One variant per change of `base`: its line (JsonlWriter) and digests.
template <typename Record>
using Changes = std::vector<std::pair<std::string, std::function<void(Record&)>>>;
template <typename Record>
void AddVariants(const std::string& kind, const Record& base, const Changes<Record>& changes,
                 std::vector<Variant>& v) {
  for (const auto& [name, change] : changes) {
    Record r = base;
    change(r);
    std::string text;
    DigestLog d;
    if constexpr (std::is_same_v<Record, JobRecord>) {
      JsonlWriter::AppendJob(text, r);
      d.OnJob(r);
    } else if constexpr (std::is_same_v<Record, RejectedRecord>) {
      JsonlWriter::AppendRejected(text, r);
      d.OnRejected(r);
    } else {
      JsonlWriter::AppendSnapshot(text, r);
      d.OnSnapshot(r);
    }
    v.push_back({kind + " " + name, text, d.digest(), d.digest_with_causes()});
  }
}

const BorrowedPart kParts[] = {{"S1", "ml.g5.xlarge", 2}, {"(unassigned)", "ml.g5.xlarge", 1}};
const PreemptedAttempt kAttempts[] = {{1000, 5000, "In-share preemption triggered by higher priority job"},
                                      {7000, 9000, "Cross-share preemption triggered to reclaim borrowed capacity"}};

JobRecord Base() {
  JobRecord r;
  r.time = 123456;
  r.job_name = "j1";
  r.job_slot = 3;
  r.share_name = "S0";
  r.share_index = 0;
  r.status = JobStatus::kScheduled;
  r.status_reason = "";
  r.has_usage = true;
  r.capacity_unit = "ml.g5.xlarge";
  r.unit_index = 1;
  r.quantity = 4;
  r.borrowed = kParts;
  r.preemption = PreemptionType::kInShare;
  r.preempted_for = "j9";
  r.preempted_for_slot = 9;
  r.checkpointed_ms = 60000;
  r.has_preemption_summary = true;
  r.preempted_attempt_count = 2;
  r.recent_preempted_attempts = kAttempts;
  return r;
}

TEST(RecordDigestTest, JobRecordDigestIsEqualExactlyWhenTheLineIs) {
  const BorrowedPart other_parts[] = {{"S1", "ml.g5.xlarge", 3}, {"(unassigned)", "ml.g5.xlarge", 1}};
  const BorrowedPart renamed_parts[] = {{"S2", "ml.g5.xlarge", 2}, {"(unassigned)", "ml.g5.xlarge", 1}};
  const BorrowedPart one_part[] = {{"S1", "ml.g5.xlarge", 2}};
  const PreemptedAttempt other_attempts[] = {{1000, 5001, "In-share preemption triggered by higher priority job"},
                                             {7000, 9000, "Cross-share preemption triggered to reclaim borrowed capacity"}};
  const PreemptedAttempt one_attempt[] = {{1000, 5000, "In-share preemption triggered by higher priority job"}};
  const Changes<JobRecord> changes = {
      {"base", [](JobRecord&) {}},
      {"time", [](JobRecord& r) { r.time += 1; }},
      {"job_name", [](JobRecord& r) { r.job_name = "j2"; }},
      {"job_name split", [](JobRecord& r) { r.job_name = "j"; r.share_name = "1S0"; }},
      {"share_name", [](JobRecord& r) { r.share_name = "S00000000"; }},
      {"status", [](JobRecord& r) { r.status = JobStatus::kStarting; }},
      {"status_reason", [](JobRecord& r) { r.status_reason = "MISCONFIGURATION:X - \"quoted\"\n"; }},
      {"no usage", [](JobRecord& r) { r.has_usage = false; }},
      {"capacity_unit", [](JobRecord& r) { r.capacity_unit = "ml.g5.2xlarge"; }},
      {"quantity", [](JobRecord& r) { r.quantity = 5; }},
      {"borrowed quantity", [&](JobRecord& r) { r.borrowed = other_parts; }},
      {"borrowed lender", [&](JobRecord& r) { r.borrowed = renamed_parts; }},
      {"one part", [&](JobRecord& r) { r.borrowed = one_part; }},
      {"no parts", [](JobRecord& r) { r.borrowed = {}; }},
      {"cross-share", [](JobRecord& r) { r.preemption = PreemptionType::kCrossShare; }},
      {"no preemption", [](JobRecord& r) { r.preemption = PreemptionType::kNone; }},
      {"preempted_for", [](JobRecord& r) { r.preempted_for = "j8"; }},
      {"checkpointed", [](JobRecord& r) { r.checkpointed_ms = 120000; }},
      {"no checkpoint", [](JobRecord& r) { r.checkpointed_ms = 0; }},
      {"no summary", [](JobRecord& r) { r.has_preemption_summary = false; }},
      {"attempt count", [](JobRecord& r) { r.preempted_attempt_count = 3; }},
      {"attempt stop", [&](JobRecord& r) { r.recent_preempted_attempts = other_attempts; }},
      {"one attempt", [&](JobRecord& r) { r.recent_preempted_attempts = one_attempt; }},
      // Not printed: the engine's indices, and what a line leaves out.
      {"job_slot", [](JobRecord& r) { r.job_slot = 4; }},
      {"share_index", [](JobRecord& r) { r.share_index = 1; }},
      {"unit_index", [](JobRecord& r) { r.unit_index = 2; }},
      {"preempted_for_slot", [](JobRecord& r) { r.preempted_for_slot = 8; }},
      {"usage off, quantity", [](JobRecord& r) { r.has_usage = false; r.quantity = 7; }},
      {"preemption off, checkpoint", [](JobRecord& r) { r.preemption = PreemptionType::kNone; r.checkpointed_ms = 1; }},
      {"negative checkpoint", [](JobRecord& r) { r.checkpointed_ms = -5; }},
      {"summary off, count", [](JobRecord& r) { r.has_preemption_summary = false; r.preempted_attempt_count = 9; }},
      // Cause lines.
      {"cause", [](JobRecord& r) { r.wait_cause = WaitCause::kLentOut; }},
      {"other cause", [](JobRecord& r) { r.wait_cause = WaitCause::kEnvironmentFull; }},
      {"cause, time", [](JobRecord& r) { r.wait_cause = WaitCause::kLentOut; r.time += 1; }},
  };
  std::vector<Variant> v;
  AddVariants("job", Base(), changes, v);
  ExpectDigestFollowsText(v);
  // The checks above must see real differences: most variants print apart.
  auto text_of = [&v](const std::string& name) {
    for (const Variant& x : v) {
      if (x.name == name) return x.text;
    }
    ADD_FAILURE() << "no variant " << name;
    return std::string();
  };
  EXPECT_NE(text_of("job base"), text_of("job time"));
  EXPECT_EQ(text_of("job base"), text_of("job job_slot"));  // not printed
}

TEST(RecordDigestTest, CauseLinesCountOnlyInTheDigestWithCauses) {
  JobRecord line = Base();
  JobRecord cause = Base();
  cause.status = JobStatus::kRunnable;
  cause.wait_cause = WaitCause::kShareLimit;
  DigestLog plain, with_cause_line;
  plain.OnJob(line);
  with_cause_line.OnJob(line);
  with_cause_line.OnJob(cause);
  EXPECT_EQ(plain.digest(), with_cause_line.digest());  // the 2-thread comparison ignores cause lines
  EXPECT_NE(plain.digest_with_causes(), with_cause_line.digest_with_causes());
  // A line after a cause line still counts in both.
  DigestLog a, b;
  a.OnJob(cause);
  a.OnJob(line);
  b.OnJob(cause);
  JobRecord later = line;
  later.time += 1;
  b.OnJob(later);
  EXPECT_NE(a.digest(), b.digest());
  EXPECT_NE(a.digest_with_causes(), b.digest_with_causes());
  // Order matters: the same lines swapped.
  DigestLog c, d;
  c.OnJob(line);
  c.OnJob(later);
  d.OnJob(later);
  d.OnJob(line);
  EXPECT_NE(c.digest_with_causes(), d.digest_with_causes());
}

TEST(RecordDigestTest, RejectedAndSnapshotDigestsFollowTheirText) {
  std::vector<Variant> v;
  const Changes<RejectedRecord> rejected = {
      {"base", [](RejectedRecord&) {}},
      {"time", [](RejectedRecord& r) { r.time = 2; }},
      {"action", [](RejectedRecord& r) { r.action = "TerminateServiceJob"; }},
      {"message", [](RejectedRecord& r) { r.message = "ClientException: other"; }},
      {"path", [](RejectedRecord& r) { r.path = "events[4]"; }},
      {"moved text", [](RejectedRecord& r) { r.action = "UpdateServiceJobClientException: x"; r.message = ""; }},
  };
  AddVariants("rejected", RejectedRecord{1, "UpdateServiceJob", "ClientException: x", "events[3]"}, rejected, v);
  const Changes<SnapshotRecord> snapshots = {
      {"base", [](SnapshotRecord&) {}},
      {"time", [](SnapshotRecord& r) { r.time = 6; }},
      {"front job", [](SnapshotRecord& r) { r.front_of_queue[0].job_name = "j3"; }},
      {"front time", [](SnapshotRecord& r) { r.front_of_queue[0].earliest_time_at_position = 4; }},
      {"no front", [](SnapshotRecord& r) { r.front_of_queue.clear(); }},
      {"share name", [](SnapshotRecord& r) { r.shares[0].share_name = "S9"; }},
      {"share front", [](SnapshotRecord& r) { r.shares[0].front.clear(); }},
      {"share usage", [](SnapshotRecord& r) { r.shares[0].usage[0].quantity = 3; }},
      {"total unit", [](SnapshotRecord& r) { r.total_usage[0].capacity_unit = "ml.p5.48xlarge"; }},
      {"total quantity", [](SnapshotRecord& r) { r.total_usage[0].quantity = 8; }},
  };
  SnapshotRecord snapshot;
  snapshot.time = 5;
  snapshot.front_of_queue = {{"j2", 3}};
  snapshot.shares = {{"S0", {{"j2", 3}}, {{"ml.g5.xlarge", 2}}}};
  snapshot.total_usage = {{"ml.g5.xlarge", 2}};
  AddVariants("snapshot", snapshot, snapshots, v);
  ExpectDigestFollowsText(v);
}

}  // namespace
}  // namespace qs::fuzz
