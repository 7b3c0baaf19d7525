// File: engine/log/explain.h
//
// `quotasim explain`: a job's story, or a share's waits, told from an event
// log (the JSON Lines of `run --events`, `whatif --events`; the format of
// ../shared/spec/scenario-format.md).
//
//   absl::StatusOr<std::vector<LogJobLine>> lines = ReadJobLines(in, "run.jsonl");
//   std::string story = ExplainJob(*lines, "qs1_job_med");   // or an error
//   std::string waits = ExplainShare(*lines, "QS1");
//
// ExplainJob: every line of the job in order with its time, status and
// reason, what each dispatch took (own instances and borrowed parts, by
// lender), each preemption (by whom, cross-share or in-share, the job it made
// room for), the preemptions made for it, and totals: time RUNNABLE (by
// statusReason), time dispatched, attempts and preemptions.
// ExplainShare: per job of the share its time RUNNABLE, the share's time
// RUNNABLE summed by statusReason (an empty reason reads "waiting for
// capacity"), and the jobs that waited longest.
// A log written with wait causes (`run --wait-causes`, docs/semantics.md §9)
// adds, to both, the time by wait cause: RUNNABLE time by the cause of its
// cause lines, and CAPACITY_ERROR for the SCHEDULED time of attempts that
// ended in a capacity error; a job's story shows each cause line as "waits:
// CAUSE (what it means)".
//
// Lines that are not job lines (rejected requests, snapshots) are skipped;
// a line that is not JSON or lacks time, jobName or status is an error
// naming the source and the line number.
//
// Thread-compatible.
#ifndef QS_ENGINE_LOG_EXPLAIN_H_
#define QS_ENGINE_LOG_EXPLAIN_H_

#include <cstdint>
#include <functional>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/model/time.h"

namespace qs {

struct LogJobLine {
  SimTime time = 0;
  std::string job, share, status, reason;
  std::string unit;  // SCHEDULED: the demand
  int64_t quantity = 0;
  std::vector<std::pair<std::string, int64_t>> borrowed;  // (lender, instances)
  std::string preempted_for, preemption_type;             // preemption-start lines
  SimTime checkpointed = 0;
  std::string cause;  // waitCause of a cause line, else ""
};

// One line of an event log: true with *out set for a job line, false for
// another line (a rejected request, a snapshot), an InvalidArgumentError
// (without source or line) for a line that is not a JSON object or a job
// line without a numeric time or string jobName / status.
absl::StatusOr<bool> ParseJobLine(std::string_view text, LogJobLine* out);
// Calls fn for every job line of a log, in order (other lines skipped);
// errors name `source` and the line number.
absl::Status ForEachJobLine(std::istream& in, std::string_view source, const std::function<void(LogJobLine&)>& fn);
// Every job line; errors name `source` and the line number.
absl::StatusOr<std::vector<LogJobLine>> ReadJobLines(std::istream& in, std::string_view source);

// An error (NotFoundError) when the log has no line of `job`.
absl::StatusOr<std::string> ExplainJob(const std::vector<LogJobLine>& lines, const std::string& job);
absl::StatusOr<std::string> ExplainShare(const std::vector<LogJobLine>& lines, const std::string& share, size_t top);

}  // namespace qs

#endif  // QS_ENGINE_LOG_EXPLAIN_H_
