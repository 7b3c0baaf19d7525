// File: fuzz/record_digest.h
//
// Two 64-bit digests of an engine's log records, taken from the records'
// fields instead of their JSON text. All records go through the one
// formatter (JsonlWriter::Append*), whose text is a function of the fields
// it prints, so equal digests stand for equal logs: the differential fuzzer
// compares its runs by digest and formats text only for one input in eight
// and to print a mismatch (formatting and comparing the logs of every run
// was a fifth of each execution: perf of the fuzzer over its grown corpus).
//
// Every field JsonlWriter prints is hashed, in print order; a static_assert
// on the records' sizes fails the build when a field is added, as a reminder
// to hash it here too. digest() skips cause lines (wait_cause set): the
// fuzzer's 2-thread run has wait causes the other way round, and its log
// must equal the 1-thread run's once they are taken out (docs/semantics.md
// §9); digest_with_causes() hashes them too (with their cause), for the
// comparison with the reference engine's log.
//
// Thread-safety: one DigestLog per run.
#ifndef QS_FUZZ_RECORD_DIGEST_H_
#define QS_FUZZ_RECORD_DIGEST_H_

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "engine/log/event_log.h"

namespace qs::fuzz {

// The digest's code is left out of the fuzzers' coverage instrumentation
// (clang): its branches say nothing about the engines, and with comparison
// tracing on every hashed word it was half of the digest's cost.
#if defined(__clang__)
#define QS_DIGEST_NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define QS_DIGEST_NO_COVERAGE
#endif

class DigestLog : public LogSink {
 public:
  QS_DIGEST_NO_COVERAGE void OnJob(const JobRecord& r) override {
    static_assert(sizeof(JobRecord) == 208, "JobRecord changed: hash the new field in DigestLog::OnJob");
    // Not hashed, like job_slot and preempted_for_slot: share_index and
    // unit_index are the fast engine's own indices (the reference leaves
    // them -1) and are never printed.
    cause_line_ = r.wait_cause != WaitCause::kNone;  // into digest_with_causes() only
    Word(uint64_t{1});
    Word(r.time);
    Text(r.job_name);
    Text(r.share_name);
    Word(static_cast<uint64_t>(r.status));
    Text(r.status_reason);
    Word(r.has_usage);
    if (r.has_usage) {
      Text(r.capacity_unit);
      Word(r.quantity);
      Word(r.borrowed.size());
      for (const BorrowedPart& b : r.borrowed) {
        Text(b.from);
        Text(b.capacity_unit);
        Word(b.quantity);
      }
    }
    Word(static_cast<uint64_t>(r.preemption));
    if (r.preemption != PreemptionType::kNone) {
      Text(r.preempted_for);
      Word(r.checkpointed_ms > 0 ? r.checkpointed_ms : SimTime{0});  // printed only when > 0
    }
    Word(r.has_preemption_summary);
    if (r.has_preemption_summary) {
      Word(r.preempted_attempt_count);
      Word(r.recent_preempted_attempts.size());
      for (const PreemptedAttempt& a : r.recent_preempted_attempts) {
        Word(a.started_at);
        Word(a.stopped_at);
        Text(a.status_reason);
      }
    }
    if (cause_line_) Word(static_cast<uint64_t>(r.wait_cause));
    cause_line_ = false;
  }
  QS_DIGEST_NO_COVERAGE void OnRejected(const RejectedRecord& r) override {
    static_assert(sizeof(RejectedRecord) == 56, "RejectedRecord changed: hash the new field in DigestLog::OnRejected");
    Word(uint64_t{2});
    Word(r.time);
    Text(r.action);
    Text(r.message);
    Text(r.path);
  }
  QS_DIGEST_NO_COVERAGE void OnSnapshot(const SnapshotRecord& r) override {
    static_assert(sizeof(SnapshotRecord) == 80, "SnapshotRecord changed: hash the new field in DigestLog::OnSnapshot");
    Word(uint64_t{3});
    Word(r.time);
    Jobs(r.front_of_queue);
    Word(r.shares.size());
    for (const SnapshotShare& s : r.shares) {
      Text(s.share_name);
      Jobs(s.front);
      Usage(s.usage);
    }
    Usage(r.total_usage);
  }

  uint64_t digest() const { return h_; }
  uint64_t digest_with_causes() const { return all_; }

 private:
  // FNV-1a over 64-bit words: cheap, and a difference in
  // any field changes the digest with overwhelming probability.
  static constexpr uint64_t kPrime = 0x100000001b3ULL;
  QS_DIGEST_NO_COVERAGE void Word(uint64_t v) {
    all_ = (all_ ^ v) * kPrime;
    const uint64_t next = (h_ ^ v) * kPrime;
    h_ = cause_line_ ? h_ : next;
  }
  QS_DIGEST_NO_COVERAGE void Word(int64_t v) { Word(static_cast<uint64_t>(v)); }
  QS_DIGEST_NO_COVERAGE void Word(bool v) { Word(static_cast<uint64_t>(v)); }
  // Eight bytes at a time (a byte loop cost a third of the digest under
  // the fuzzer's comparison tracing); the length keeps "ab" + "c" apart
  // from "a" + "bc".
  QS_DIGEST_NO_COVERAGE void Text(std::string_view s) {
    Word(uint64_t{s.size()});
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      Word(w);
    }
    uint64_t tail = 0;
    if (i < s.size()) std::memcpy(&tail, s.data() + i, s.size() - i);  // an empty view's data may be null
    Word(tail);
  }
  QS_DIGEST_NO_COVERAGE void Jobs(const std::vector<SnapshotJob>& jobs) {
    Word(jobs.size());
    for (const SnapshotJob& j : jobs) {
      Text(j.job_name);
      Word(j.earliest_time_at_position);
    }
  }
  QS_DIGEST_NO_COVERAGE void Usage(const std::vector<SnapshotUsage>& usage) {
    Word(usage.size());
    for (const SnapshotUsage& u : usage) {
      Text(u.capacity_unit);
      Word(u.quantity);
    }
  }

  uint64_t h_ = 0xcbf29ce484222325ULL;    // records other than cause lines
  uint64_t all_ = 0xcbf29ce484222325ULL;  // every record
  bool cause_line_ = false;               // OnJob is hashing a cause line
};

}  // namespace qs::fuzz

#undef QS_DIGEST_NO_COVERAGE

#endif  // QS_FUZZ_RECORD_DIGEST_H_
