// File: engine/trace/trace_reader.h
//
// Streaming importers for public cluster traces (../shared/traces/, each
// folder's PROVENANCE.md gives the schema): they turn rows into TraceJob
// records one at a time, so a trace of any size is never held whole.
//
// Formats:
//   kSwf            Standard Workload Format (.swf, .swf.gz): 18 whitespace-
//                   separated fields, ';' header comments, -1 = unknown.
//                   Demand = allocated processors (field 5), else requested
//                   (field 8); run time = field 4; failed = status 0; team =
//                   group, user, queue or partition (ImportOptions::swf_team).
//                   A job whose run time or processor count is -1 (unknown)
//                   cannot be replayed: it is counted in ImportStats::incomplete
//                   (never an error, never silent).
//   kPhillyPollux   pollux_philly_jobs_by_vc.csv: timestamp,duration,num_gpus,gpu_time,cluster
//                   submit = the local-time string read as a naive civil time
//                   (no time-zone or DST shift), as ms since 1970-01-01 00:00.
//   kPhillyGavel    gavel_msr_seed0_per_vc_jobs.csv: vc,job_seq,arrival_s,num_gpus,
//                   gavel_job_type,total_steps. Duration = total_steps /
//                   ImportOptions::gavel_steps_per_second (the file has no run
//                   time in seconds; Gavel's step counts are synthetic).
//   kPhillyRfold    rfold_philly_trace.csv: '#' header; job id, arrival, topology, shape,
//                   size, duration. No team column: team is "all".
//   kAlibabaOpenb   openb_pod_list_default.csv: name,cpu_milli,memory_mib,num_gpu,
//                   gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,
//                   scheduled_time. gpus = num_gpu, or gpu_milli/1000 for a
//                   GPU-sharing pod (num_gpu 1, gpu_milli < 1000); duration =
//                   deletion - (scheduled, else creation); team = qos; priority
//                   from qos: Guaranteed 3, LS 2, Burstable 1, BE 0.
// (The Helios Venus per-VC quota table is not a job trace: see quota_table.h.)
//
// Units: TraceJob::submit is milliseconds on the trace's own clock (it need
// not start at 0 and rows need not be sorted: the replay builder shifts and
// sorts). Every number is range-checked: times within [0, 1e12] s, durations
// within [0, 1e9] s, GPU / processor counts within [0, 1e6]; anything else
// (non-numeric, NaN, 1e30 GPUs, negative duration) is a bad row.
//
// Errors: a broken row is an InvalidArgumentError "<file>:<line>: <problem>".
// With skip_bad_rows the row is counted in ImportStats (with the first few
// messages kept) and reading goes on; nothing is dropped silently. A missing
// or wrong header, an empty file, a file with no job rows and a corrupt gzip
// stream are errors even with skip_bad_rows.
//
// Parallelism: rows are read in blocks of kParseBlockRows lines and a block
// is parsed with tbb::parallel_for into index-addressed slots, then delivered
// in file order, so the sink sees exactly what a serial parse would give.
//
// Robustness: a fuzzer feeds ReadTrace raw bytes for every format. Readers
// never throw, never crash, bound every number and are linear in the input.
//
// Thread-safety: pure functions; the sink is called from the calling thread.
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
#include "engine/model/time.h"

namespace qs::trace {

enum class TraceFormat : uint8_t { kSwf, kPhillyPollux, kPhillyGavel, kPhillyRfold, kAlibabaOpenb };

// "swf", "philly-pollux", "philly-gavel", "philly-rfold", "alibaba-openb".
absl::StatusOr<TraceFormat> ParseTraceFormat(std::string_view name);
const char* TraceFormatName(TraceFormat f);

// Which SWF field names the team (quota share).
enum class SwfTeamField : uint8_t { kGroup, kUser, kQueue, kPartition };
// "group", "user", "queue", "partition".
absl::StatusOr<SwfTeamField> ParseSwfTeamField(std::string_view name);
const char* SwfTeamFieldName(SwfTeamField f);

struct ImportOptions {
  bool skip_bad_rows = false;
  SwfTeamField swf_team = SwfTeamField::kGroup;
  double gavel_steps_per_second = 1.0;  // kPhillyGavel only; must be > 0
};

// Lines per parse block (see "Parallelism" above).
inline constexpr size_t kParseBlockRows = 8192;
// Bounds applied to every row.
inline constexpr double kMaxTraceSeconds = 1e12;
inline constexpr double kMaxDurationSeconds = 1e9;
inline constexpr double kMaxGpus = 1e6;

// One job of a trace, in the trace's own units.
struct TraceJob {
  int64_t line = 0;        // 1-based line in the file
  std::string id;          // job id / name as given (or the line number)
  SimTime submit = 0;      // ms on the trace's own clock (see "Units")
  SimTime duration = 0;    // ms of run time (>= 0)
  double gpus = 0;         // GPUs (or processors for SWF); fractional for GPU sharing
  std::string team;        // virtual cluster, group, user, queue, partition or qos
  int64_t priority = 0;    // where the trace has one (e.g. qos class); else 0
  bool failed = false;     // the trace says the job failed (SWF status 0)
};

struct ImportStats {
  int64_t rows = 0;        // data rows seen (comments, headers and blank lines excluded)
  int64_t jobs = 0;        // rows delivered as jobs
  int64_t skipped = 0;     // bad rows skipped with skip_bad_rows
  int64_t incomplete = 0;  // well-formed rows whose run time or size is unknown (SWF -1)
  std::vector<std::string> skipped_examples;  // first 10 messages
};

// Reads `in` (already decompressed) row by row and calls `sink` for each job,
// in file order. `source` names the file in messages. `stats` may be null.
absl::Status ReadTrace(std::istream& in, std::string_view source, TraceFormat format,
                       const ImportOptions& options, const std::function<void(const TraceJob&)>& sink,
                       ImportStats* stats);

// Opens `path` (gunzipping when it ends in .gz) and reads it as above. An
// unreadable file is a NotFoundError naming it.
absl::Status ReadTraceFile(const std::string& path, TraceFormat format, const ImportOptions& options,
                           const std::function<void(const TraceJob&)>& sink, ImportStats* stats);

// Guesses the format from a file name: *.swf / *.swf.gz -> swf, "pollux" ->
// philly-pollux, "gavel" -> philly-gavel, "rfold" -> philly-rfold,
// "openb_pod" -> alibaba-openb. NotFoundError when nothing matches.
absl::StatusOr<TraceFormat> GuessTraceFormat(std::string_view path);

}  // namespace qs::trace

#endif  // QS_ENGINE_TRACE_TRACE_READER_H_
