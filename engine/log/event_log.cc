#include "engine/log/event_log.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace qs {

const char* JobStatusName(JobStatus s) {
  switch (s) {
    case JobStatus::kSubmitted: return "SUBMITTED";
    case JobStatus::kPending: return "PENDING";
    case JobStatus::kRunnable: return "RUNNABLE";
    case JobStatus::kScheduled: return "SCHEDULED";
    case JobStatus::kStarting: return "STARTING";
    case JobStatus::kRunning: return "RUNNING";
    case JobStatus::kSucceeded: return "SUCCEEDED";
    case JobStatus::kFailed: return "FAILED";
  }
  return "?";
}

const char* WaitCauseName(WaitCause c) {
  switch (c) {
    case WaitCause::kNone: return "";
    case WaitCause::kBehindHead: return "BEHIND_HEAD";
    case WaitCause::kEnvironmentDisabled: return "ENVIRONMENT_DISABLED";
    case WaitCause::kMisconfiguration: return "MISCONFIGURATION";
    case WaitCause::kDrainingVictims: return "DRAINING_VICTIMS";
    case WaitCause::kLentOut: return "LENT_OUT";
    case WaitCause::kShareLimit: return "SHARE_LIMIT";
    case WaitCause::kBorrowLimit: return "BORROW_LIMIT";
    case WaitCause::kNoIdleLender: return "NO_IDLE_LENDER";
    case WaitCause::kEnvironmentFull: return "ENVIRONMENT_FULL";
    case WaitCause::kNextPass: return "NEXT_PASS";
    case WaitCause::kCapacityError: return "CAPACITY_ERROR";
  }
  return "?";
}

namespace reasons {
std::string_view ReasonCode(std::string_view reason) {
  size_t pos = reason.find(" - ");
  return pos == std::string_view::npos ? reason : reason.substr(0, pos);
}
}  // namespace reasons

namespace {

// Whether `c` must be escaped inside a JSON string.
bool NeedsEscape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

// `s` escaped for a JSON string, without the quotes. Most strings (names,
// reasons) need no escape and are appended in one go; otherwise runs of
// characters that need none are.
void AppendEscaped(std::string& out, std::string_view s) {
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (!NeedsEscape(c)) continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out.append(buf);
      }
    }
  }
  out.append(s.data() + run, s.size() - run);
}

void AppendInt(std::string& out, int64_t v) {
  char buf[24];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}

void AppendUsageList(std::string& out, const std::vector<SnapshotUsage>& usage) {
  out.push_back('[');
  for (size_t i = 0; i < usage.size(); ++i) {
    out.append(i ? ", {\"capacityUnit\": \"" : "{\"capacityUnit\": \"");
    AppendEscaped(out, usage[i].capacity_unit);
    out.append("\", \"quantity\": ");
    AppendInt(out, usage[i].quantity);
    out.push_back('}');
  }
  out.push_back(']');
}

void AppendSnapshotJobs(std::string& out, const std::vector<SnapshotJob>& jobs) {
  out.push_back('[');
  for (size_t i = 0; i < jobs.size(); ++i) {
    out.append(i ? ", {\"earliestTimeAtPosition\": " : "{\"earliestTimeAtPosition\": ");
    AppendInt(out, jobs[i].earliest_time_at_position);
    out.append(", \"jobArn\": \"");
    AppendEscaped(out, jobs[i].job_name);
    out.append("\"}");
  }
  out.push_back(']');
}

}  // namespace

// The line is written in as few appends as its fields allow: each literal
// run between two values (closing quote, separator, next key, opening
// quote) is one append. Byte for byte what ../shared/spec/scenario-format.md shows.
void JsonlWriter::AppendJob(std::string& out, const JobRecord& r) {
  out.append("{\"time\": ");
  AppendSeconds(out, r.time);
  out.append(", \"jobName\": \"");
  AppendEscaped(out, r.job_name);
  out.append("\", \"quotaShareName\": \"");
  AppendEscaped(out, r.share_name);
  out.append("\", \"status\": \"");
  out.append(JobStatusName(r.status));
  out.append("\", \"statusReason\": \"");
  AppendEscaped(out, r.status_reason);
  out.push_back('"');
  if (r.has_usage) {
    out.append(", \"capacityUsage\": [{\"capacityUnit\": \"");
    AppendEscaped(out, r.capacity_unit);
    out.append("\", \"quantity\": ");
    AppendInt(out, r.quantity);
    out.append("}], \"borrowed\": [");
    for (size_t i = 0; i < r.borrowed.size(); ++i) {
      const BorrowedPart& b = r.borrowed[i];
      out.append(i ? ", {\"from\": \"" : "{\"from\": \"");
      AppendEscaped(out, b.from);
      out.append("\", \"capacityUnit\": \"");
      AppendEscaped(out, b.capacity_unit);
      out.append("\", \"quantity\": ");
      AppendInt(out, b.quantity);
      out.push_back('}');
    }
    out.push_back(']');
  }
  if (r.preemption != PreemptionType::kNone) {
    out.append(", \"preemptedFor\": \"");
    AppendEscaped(out, r.preempted_for);
    out.append(r.preemption == PreemptionType::kCrossShare ? "\", \"preemptionType\": \"CROSS_SHARE\""
                                                           : "\", \"preemptionType\": \"IN_SHARE\"");
    if (r.checkpointed_ms > 0) {
      out.append(", \"checkpointedSeconds\": ");
      AppendSeconds(out, r.checkpointed_ms);
    }
  }
  if (r.has_preemption_summary) {
    out.append(", \"preemptionSummary\": {\"preemptedAttemptCount\": ");
    AppendInt(out, r.preempted_attempt_count);
    out.append(", \"recentPreemptedAttempts\": [");
    for (size_t i = 0; i < r.recent_preempted_attempts.size(); ++i) {
      const PreemptedAttempt& a = r.recent_preempted_attempts[i];
      out.append(i ? ", {\"startedAt\": " : "{\"startedAt\": ");
      AppendInt(out, a.started_at);
      out.append(", \"stoppedAt\": ");
      AppendInt(out, a.stopped_at);
      out.append(", \"statusReason\": \"");
      AppendEscaped(out, a.status_reason);
      out.append("\"}");
    }
    out.append("]}");
  }
  if (r.wait_cause != WaitCause::kNone) {
    out.append(", \"waitCause\": \"");
    out.append(WaitCauseName(r.wait_cause));
    out.push_back('"');
  }
  out.append("}\n");
}

void JsonlWriter::AppendRejected(std::string& out, const RejectedRecord& r) {
  out.append("{\"time\": ");
  AppendSeconds(out, r.time);
  out.append(", \"rejected\": true, \"action\": \"");
  AppendEscaped(out, r.action);
  out.append("\", \"message\": \"");
  AppendEscaped(out, r.message);
  out.append("\", \"path\": \"");
  AppendEscaped(out, r.path);
  out.append("\"}\n");
}

void JsonlWriter::AppendSnapshot(std::string& out, const SnapshotRecord& r) {
  out.append("{\"time\": ");
  AppendSeconds(out, r.time);
  out.append(", \"snapshot\": {\"frontOfQueue\": {\"jobs\": ");
  AppendSnapshotJobs(out, r.front_of_queue);
  out.append(", \"lastUpdatedAt\": ");
  AppendInt(out, r.time);
  out.append("}, \"frontOfQuotaShares\": {\"lastUpdatedAt\": ");
  AppendInt(out, r.time);
  out.append(", \"quotaShares\": {");
  bool first = true;
  for (const SnapshotShare& s : r.shares) {
    if (s.front.empty()) continue;
    if (!first) out.append(", ");
    first = false;
    out.push_back('"');
    AppendEscaped(out, s.share_name);
    out.append("\": ");
    AppendSnapshotJobs(out, s.front);
  }
  out.append("}}, \"queueUtilization\": {\"lastUpdatedAt\": ");
  AppendInt(out, r.time);
  out.append(", \"quotaShareUtilization\": {\"topCapacityUtilization\": [");
  // The shares in use, by the instances they use (all types), most first;
  // declaration order among equals.
  std::vector<std::pair<int64_t, const SnapshotShare*>> top;
  for (const SnapshotShare& s : r.shares) {
    if (s.usage.empty()) continue;
    int64_t total = 0;
    for (const SnapshotUsage& u : s.usage) total += u.quantity;
    top.emplace_back(total, &s);
  }
  std::stable_sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  first = true;
  for (const auto& [total, share] : top) {
    const SnapshotShare& s = *share;
    if (!first) out.append(", ");
    first = false;
    out.append("{\"capacityUsage\": ");
    AppendUsageList(out, s.usage);
    out.append(", \"quotaShareName\": \"");
    AppendEscaped(out, s.share_name);
    out.append("\"}");
  }
  out.append("]}, \"totalCapacityUsage\": ");
  AppendUsageList(out, r.total_usage);
  out.append("}}}\n");
}

void JsonlWriter::OnJob(const JobRecord& r) {
  AppendJob(buf_, r);
  MaybeFlush();
}
void JsonlWriter::OnRejected(const RejectedRecord& r) {
  AppendRejected(buf_, r);
  MaybeFlush();
}
void JsonlWriter::OnSnapshot(const SnapshotRecord& r) {
  AppendSnapshot(buf_, r);
  MaybeFlush();
}

void JsonlWriter::MaybeFlush() {
  if (buf_.size() >= (1u << 20)) Flush();
}

void JsonlWriter::Flush() {
  if (!buf_.empty() && out_ != nullptr) {
    out_->write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  }
  buf_.clear();
  if (out_ != nullptr) out_->flush();
}

void TeeSink::OnJob(const JobRecord& r) {
  for (LogSink* s : sinks_) s->OnJob(r);
}
void TeeSink::OnRejected(const RejectedRecord& r) {
  for (LogSink* s : sinks_) s->OnRejected(r);
}
void TeeSink::OnSnapshot(const SnapshotRecord& r) {
  for (LogSink* s : sinks_) s->OnSnapshot(r);
}
void TeeSink::OnCapacity(const CapacityRecord& r) {
  for (LogSink* s : sinks_) s->OnCapacity(r);
}
void TeeSink::OnEnd(SimTime t) {
  for (LogSink* s : sinks_) s->OnEnd(t);
}

void TeeSink::OnProgress(SimTime now, int64_t jobs_submitted) {
  for (LogSink* s : sinks_) s->OnProgress(now, jobs_submitted);
}

}  // namespace qs
