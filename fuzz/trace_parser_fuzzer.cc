// trace_parser_fuzzer: raw bytes into every trace importer
// (engine/trace/trace_reader.h: SWF and the CSV formats). The first byte
// chooses the options (skip_bad_rows, which SWF field is the team); the rest
// is fed to ReadTrace once per format. Importers must never crash, hang or
// leak, and what they report must be consistent:
//  * delivered jobs == ImportStats::jobs, and jobs + skipped <= rows;
//  * without skip_bad_rows nothing is skipped;
//  * every job has a positive, non-decreasing line number, a duration >= 0
//    and a finite GPU count within [0, kMaxGpus];
//  * an error has a message; parsing is deterministic (a second parse of the
//    same bytes gives the same jobs and status; checked for one format per
//    input, chosen by the first byte, which keeps the target above 1,000
//    executions per second).
// Built only when the importer library (target qs_trace) exists.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "engine/trace/trace_reader.h"
#include "fuzz/fuzz_check.h"

namespace {

struct Result {
  absl::Status status;
  qs::trace::ImportStats stats;
  std::vector<qs::trace::TraceJob> jobs;
};

Result Read(const std::string& text, qs::trace::TraceFormat format, const qs::trace::ImportOptions& options) {
  Result r;
  std::istringstream in(text);
  r.status = qs::trace::ReadTrace(
      in, "fuzz.trace", format, options, [&](const qs::trace::TraceJob& j) { r.jobs.push_back(j); }, &r.stats);
  return r;
}

bool SameJob(const qs::trace::TraceJob& a, const qs::trace::TraceJob& b) {
  return a.line == b.line && a.id == b.id && a.submit == b.submit && a.duration == b.duration &&
         a.gpus == b.gpus && a.team == b.team && a.priority == b.priority && a.failed == b.failed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 64 * 1024) return -1;
  qs::trace::ImportOptions options;
  options.skip_bad_rows = (data[0] & 1) != 0;
  static constexpr qs::trace::SwfTeamField kTeams[] = {qs::trace::SwfTeamField::kGroup, qs::trace::SwfTeamField::kUser,
                                                       qs::trace::SwfTeamField::kQueue,
                                                       qs::trace::SwfTeamField::kPartition};
  options.swf_team = kTeams[(data[0] >> 1) & 3];
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);

  static constexpr qs::trace::TraceFormat kFormats[] = {
      qs::trace::TraceFormat::kSwf, qs::trace::TraceFormat::kPhillyPollux, qs::trace::TraceFormat::kPhillyGavel,
      qs::trace::TraceFormat::kPhillyRfold, qs::trace::TraceFormat::kAlibabaOpenb};
  const size_t twice = (data[0] >> 3) % std::size(kFormats);  // the format parsed a second time
  for (size_t f = 0; f < std::size(kFormats); ++f) {
    const qs::trace::TraceFormat format = kFormats[f];
    const char* name = qs::trace::TraceFormatName(format);
    const Result r = Read(text, format, options);
    QS_FUZZ_CHECK(r.status.ok() || !r.status.message().empty(), "trace " << name << ": error without a message");
    QS_FUZZ_CHECK(static_cast<int64_t>(r.jobs.size()) == r.stats.jobs,
                  "trace " << name << ": delivered " << r.jobs.size() << " jobs, stats say " << r.stats.jobs);
    QS_FUZZ_CHECK(r.stats.jobs + r.stats.skipped <= r.stats.rows,
                  "trace " << name << ": " << r.stats.jobs << " jobs + " << r.stats.skipped << " skipped > "
                           << r.stats.rows << " rows");
    QS_FUZZ_CHECK(options.skip_bad_rows || r.stats.skipped == 0,
                  "trace " << name << ": skipped rows without skip_bad_rows");
    QS_FUZZ_CHECK(r.stats.skipped_examples.size() <= 10, "trace " << name << ": too many skipped examples kept");
    int64_t last_line = 0;
    for (const qs::trace::TraceJob& j : r.jobs) {
      QS_FUZZ_CHECK(j.line >= 1 && j.line >= last_line,
                    "trace " << name << ": job line " << j.line << " after line " << last_line);
      last_line = j.line;
      QS_FUZZ_CHECK(j.duration >= 0, "trace " << name << ": line " << j.line << " has duration " << j.duration);
      QS_FUZZ_CHECK(std::isfinite(j.gpus) && j.gpus >= 0 && j.gpus <= qs::trace::kMaxGpus,
                    "trace " << name << ": line " << j.line << " has " << j.gpus << " GPUs");
    }
    if (f != twice) continue;
    const Result again = Read(text, format, options);
    bool same = again.status == r.status && again.jobs.size() == r.jobs.size();
    for (size_t i = 0; same && i < r.jobs.size(); ++i) same = SameJob(again.jobs[i], r.jobs[i]);
    QS_FUZZ_CHECK(same, "trace " << name << ": two parses of the same bytes differ");
  }
  return 0;
}
