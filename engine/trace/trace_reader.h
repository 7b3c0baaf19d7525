// File: engine/trace/trace_reader.h
//
// Streaming importers for public cluster traces (../shared/traces/, each
// folder's PROVENANCE.md gives the schema): they turn rows into TraceJob
// records one at a time, so a trace of any size is never held whole.
//
// Formats:
//   kSwf            Standard Workload Format (.swf, .swf.gz): 18 whitespace-
//                   separated fields, ';' header comments, -1 = unknown.
//   kPhillyPollux   pollux_philly_jobs_by_vc.csv: timestamp,duration,num_gpus,gpu_time,cluster
//   kPhillyGavel    gavel_msr_seed0_per_vc_jobs.csv: vc,job_seq,arrival_s,num_gpus,...
//   kPhillyRfold    rfold_philly_trace.csv: '#' header; job id, arrival, topology, shape, size, duration
//   kAlibabaOpenb   openb_pod_list_default.csv: name,cpu_milli,...,num_gpu,gpu_milli,...,qos,...
// (The Helios Venus per-VC quota table is not a job trace: see quota_table.h.)
//
// Errors: a broken row is an InvalidArgumentError "<file>:<line>: <problem>".
// With skip_bad_rows the row is counted in ImportStats (with the first few
// messages kept) and reading goes on; nothing is dropped silently.
//
// Thread-safety: a reader is thread-compatible; distinct readers may run in
// parallel.
#ifndef QS_ENGINE_TRACE_TRACE_READER_H_
#define QS_ENGINE_TRACE_TRACE_READER_H_

#include <cstdint>
#include <functional>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/time.h"

namespace qs::trace {

enum class TraceFormat : uint8_t { kSwf, kPhillyPollux, kPhillyGavel, kPhillyRfold, kAlibabaOpenb };

// "swf", "philly-pollux", "philly-gavel", "philly-rfold", "alibaba-openb".
absl::StatusOr<TraceFormat> ParseTraceFormat(std::string_view name);
const char* TraceFormatName(TraceFormat f);

// Which SWF field names the team (quota share).
enum class SwfTeamField : uint8_t { kGroup, kUser, kQueue, kPartition };

struct ImportOptions {
  bool skip_bad_rows = false;
  SwfTeamField swf_team = SwfTeamField::kGroup;
};

// One job of a trace, in the trace's own units.
struct TraceJob {
  int64_t line = 0;        // 1-based line in the file
  std::string id;          // job id / name as given (or the line number)
  SimTime submit = 0;      // ms since the trace's first instant (its own clock)
  SimTime duration = 0;    // ms of run time (>= 0)
  double gpus = 0;         // GPUs (or processors for SWF); fractional for GPU sharing
  std::string team;        // virtual cluster, group, user, queue, partition or qos
  int64_t priority = 0;    // where the trace has one (e.g. qos class); else 0
  bool failed = false;     // the trace says the job failed (SWF status 0)
};

struct ImportStats {
  int64_t rows = 0;        // data rows seen (comments and headers excluded)
  int64_t jobs = 0;        // rows delivered as jobs
  int64_t skipped = 0;     // bad rows skipped with skip_bad_rows
  std::vector<std::string> skipped_examples;  // first 10 messages
};

// Reads `in` (already decompressed) row by row and calls `sink` for each job,
// in file order. `source` names the file in messages.
absl::Status ReadTrace(std::istream& in, std::string_view source, TraceFormat format,
                       const ImportOptions& options, const std::function<void(const TraceJob&)>& sink,
                       ImportStats* stats);

// Opens `path` (gunzipping .gz) and reads it as above.
absl::Status ReadTraceFile(const std::string& path, TraceFormat format, const ImportOptions& options,
                           const std::function<void(const TraceJob&)>& sink, ImportStats* stats);

}  // namespace qs::trace

#endif  // QS_ENGINE_TRACE_TRACE_READER_H_
