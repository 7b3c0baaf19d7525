#include "engine/trace/trace_reader.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <streambuf>

#include "absl/strings/str_cat.h"
#include "engine/trace/internal/text.h"
#include "engine/util/gzip_istream.h"
#include "engine/util/strings.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/partitioner.h"

namespace qs::trace {
namespace {

using trace_internal::ParseDateTime;
using trace_internal::ParseDouble;
using trace_internal::ParseInt;
using trace_internal::Quote;
using trace_internal::SplitCsv;
using trace_internal::SplitWhitespace;
using trace_internal::Trim;

constexpr size_t kMaxExamples = 10;

// Result of parsing one line; written into an index-addressed slot.
struct RowResult {
  enum Kind : uint8_t { kBlank, kJob, kIncomplete, kError } kind = kBlank;
  TraceJob job;
  std::string error;
};

RowResult Error(std::string message) {
  RowResult r;
  r.kind = RowResult::kError;
  r.error = std::move(message);
  return r;
}

// Checks a number against [lo, hi]; returns an error text or "".
std::string CheckRange(std::string_view what, std::string_view text, std::optional<double> v, double lo,
                       double hi) {
  if (!v) return absl::StrCat(Sv(what), ": not a number: ", Quote(text));
  if (*v < lo || *v > hi) {
    return absl::StrCat(Sv(what), " ", Sv(std::string(text)), " out of range [", lo, ", ", hi, "]");
  }
  return "";
}

SimTime ToMillis(double seconds) { return static_cast<SimTime>(std::llround(seconds * 1000.0)); }

// ---------------------------------------------------------------------------
// CSV formats: a header names the columns; rows are looked up by name.

struct CsvSpec {
  std::vector<std::string> columns;  // required header names, in file order
  bool hash_header = false;          // header line starts with '#' (rfold)
};

const CsvSpec& SpecFor(TraceFormat f) {
  static const CsvSpec kPollux{{"timestamp", "duration", "num_gpus", "gpu_time", "cluster"}, false};
  static const CsvSpec kGavel{
      {"vc", "job_seq", "arrival_s", "num_gpus", "gavel_job_type", "total_steps"}, false};
  static const CsvSpec kRfold{
      {"job id", "arrival time (sec)", "topology", "shape", "size", "duration (sec)"}, true};
  static const CsvSpec kOpenb{{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec",
                               "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time"},
                              false};
  switch (f) {
    case TraceFormat::kPhillyPollux: return kPollux;
    case TraceFormat::kPhillyGavel: return kGavel;
    case TraceFormat::kPhillyRfold: return kRfold;
    case TraceFormat::kAlibabaOpenb: return kOpenb;
    case TraceFormat::kSwf: break;
  }
  static const CsvSpec kNone;
  return kNone;
}

int64_t QosPriority(std::string_view qos) {
  if (qos == "Guaranteed") return 3;
  if (qos == "LS") return 2;
  if (qos == "Burstable") return 1;
  return 0;
}

class RowParser {
 public:
  RowParser(std::string_view source, TraceFormat format, const ImportOptions& options)
      : source_(source), format_(format), options_(options) {}

  bool is_csv() const { return format_ != TraceFormat::kSwf; }

  // CSV formats: checks the header line. Returns "" or an error text.
  std::string Header(std::string_view line) {
    const CsvSpec& spec = SpecFor(format_);
    std::string_view text = Trim(line);
    if (spec.hash_header) {
      if (text.empty() || text.front() != '#') {
        return absl::StrCat("missing header: expected a '#' line naming the columns ",
                            Expected(spec));
      }
      text.remove_prefix(1);
    }
    std::vector<std::string> names;
    std::string err;
    if (!SplitCsv(text, &names, &err) || names != spec.columns) {
      return absl::StrCat("missing or wrong header: expected ", Expected(spec), ", got ", Quote(text));
    }
    return "";
  }

  RowResult Row(std::string_view raw, int64_t line) const {
    std::string_view text = Trim(raw);
    RowResult r;
    if (text.empty()) return r;  // blank line
    if (format_ == TraceFormat::kSwf && text.front() == ';') return r;
    if (format_ == TraceFormat::kPhillyRfold && text.front() == '#') return r;
    r = format_ == TraceFormat::kSwf ? Swf(text) : Csv(text);
    if (r.kind == RowResult::kError) {
      r.error = absl::StrCat(Sv(source_), ":", line, ": ", r.error);
    } else {
      r.job.line = line;
      if (r.job.id.empty()) r.job.id = absl::StrCat(line);
    }
    return r;
  }

 private:
  static std::string Expected(const CsvSpec& spec) {
    std::string s;
    for (const std::string& c : spec.columns) absl::StrAppend(&s, s.empty() ? "" : ",", c);
    return s;
  }

  RowResult Swf(std::string_view text) const {
    std::vector<std::string_view> f;
    SplitWhitespace(text, &f);
    if (f.size() != 18) return Error(absl::StrCat("expected 18 whitespace-separated fields, got ", f.size()));
    std::array<double, 18> v{};
    for (size_t i = 0; i < 18; ++i) {
      auto d = ParseDouble(f[i]);
      if (!d) return Error(absl::StrCat("field ", i + 1, ": not a number: ", Quote(f[i])));
      if (*d < -1) return Error(absl::StrCat("field ", i + 1, ": negative value ", Sv(std::string(f[i])),
                                             " (only -1 = unknown is allowed)"));
      if (*d > kMaxTraceSeconds) {
        return Error(absl::StrCat("field ", i + 1, ": absurd value ", Sv(std::string(f[i]))));
      }
      v[i] = *d;
    }
    RowResult r;
    TraceJob& j = r.job;
    j.id = std::string(f[0]);
    const double submit = v[1], run = v[3];
    const double procs = v[4] >= 0 ? v[4] : v[7];
    if (submit < 0) return Error("field 2 (submit time) is unknown (-1)");
    if (run > kMaxDurationSeconds) {
      return Error(absl::StrCat("field 4 (run time) ", run, " s out of range [0, ", kMaxDurationSeconds, "]"));
    }
    if (procs > kMaxGpus) {
      return Error(absl::StrCat("processors ", procs, " out of range [0, ", kMaxGpus, "]"));
    }
    if (run < 0 || procs < 0) {
      r.kind = RowResult::kIncomplete;
      return r;
    }
    j.submit = ToMillis(submit);
    j.duration = ToMillis(run);
    j.gpus = procs;
    j.failed = v[10] == 0;
    size_t team_field = 12;  // group
    switch (options_.swf_team) {
      case SwfTeamField::kGroup: team_field = 12; break;
      case SwfTeamField::kUser: team_field = 11; break;
      case SwfTeamField::kQueue: team_field = 14; break;
      case SwfTeamField::kPartition: team_field = 15; break;
    }
    j.team = v[team_field] < 0 ? "unknown" : std::string(f[team_field]);
    r.kind = RowResult::kJob;
    return r;
  }

  RowResult Csv(std::string_view text) const {
    std::vector<std::string> f;
    std::string err;
    if (!SplitCsv(text, &f, &err)) return Error(err);
    const CsvSpec& spec = SpecFor(format_);
    if (f.size() != spec.columns.size()) {
      return Error(absl::StrCat("expected ", spec.columns.size(), " comma-separated fields, got ", f.size()));
    }
    RowResult r;
    r.kind = RowResult::kJob;
    TraceJob& j = r.job;
    std::string e;
    switch (format_) {
      case TraceFormat::kPhillyPollux: {
        auto ts = ParseDateTime(f[0]);
        if (!ts) return Error(absl::StrCat("timestamp: expected YYYY-MM-DD HH:MM:SS, got ", Quote(f[0])));
        if (*ts < 0) return Error(absl::StrCat("timestamp before 1970: ", Quote(f[0])));
        auto dur = ParseDouble(f[1]);
        if (!(e = CheckRange("duration", f[1], dur, 0, kMaxDurationSeconds)).empty()) return Error(e);
        auto gpus = ParseDouble(f[2]);
        if (!(e = CheckRange("num_gpus", f[2], gpus, 0, kMaxGpus)).empty()) return Error(e);
        if (f[4].empty()) return Error("cluster (team) is empty");
        j.submit = *ts * kMillisPerSecond;
        j.duration = ToMillis(*dur);
        j.gpus = *gpus;
        j.team = f[4];
        break;
      }
      case TraceFormat::kPhillyGavel: {
        if (f[0].empty()) return Error("vc (team) is empty");
        auto arrival = ParseDouble(f[2]);
        if (!(e = CheckRange("arrival_s", f[2], arrival, 0, kMaxTraceSeconds)).empty()) return Error(e);
        auto gpus = ParseDouble(f[3]);
        if (!(e = CheckRange("num_gpus", f[3], gpus, 0, kMaxGpus)).empty()) return Error(e);
        auto steps = ParseDouble(f[5]);
        const double max_steps = kMaxDurationSeconds * options_.gavel_steps_per_second;
        if (!(e = CheckRange("total_steps", f[5], steps, 0, max_steps)).empty()) return Error(e);
        j.id = absl::StrCat(f[0], ":", f[1]);
        j.submit = ToMillis(*arrival);
        j.duration = ToMillis(*steps / options_.gavel_steps_per_second);
        j.gpus = *gpus;
        j.team = f[0];
        break;
      }
      case TraceFormat::kPhillyRfold: {
        auto arrival = ParseDouble(f[1]);
        if (!(e = CheckRange("arrival time", f[1], arrival, 0, kMaxTraceSeconds)).empty()) return Error(e);
        auto size = ParseDouble(f[4]);
        if (!(e = CheckRange("size", f[4], size, 0, kMaxGpus)).empty()) return Error(e);
        auto dur = ParseDouble(f[5]);
        if (!(e = CheckRange("duration", f[5], dur, 0, kMaxDurationSeconds)).empty()) return Error(e);
        j.id = f[0];
        j.submit = ToMillis(*arrival);
        j.duration = ToMillis(*dur);
        j.gpus = *size;
        j.team = "all";
        break;
      }
      case TraceFormat::kAlibabaOpenb: {
        auto num_gpu = ParseDouble(f[3]);
        if (!(e = CheckRange("num_gpu", f[3], num_gpu, 0, kMaxGpus)).empty()) return Error(e);
        auto milli = ParseDouble(f[4]);
        if (!(e = CheckRange("gpu_milli", f[4], milli, 0, 1000)).empty()) return Error(e);
        if (f[6].empty()) return Error("qos is empty");
        auto created = ParseDouble(f[8]);
        if (!(e = CheckRange("creation_time", f[8], created, 0, kMaxTraceSeconds)).empty()) return Error(e);
        auto deleted = ParseDouble(f[9]);
        if (!(e = CheckRange("deletion_time", f[9], deleted, 0, kMaxTraceSeconds)).empty()) return Error(e);
        double start = *created;
        if (!f[10].empty()) {
          auto sched = ParseDouble(f[10]);
          if (!(e = CheckRange("scheduled_time", f[10], sched, 0, kMaxTraceSeconds)).empty()) return Error(e);
          start = *sched;
        }
        const double dur = *deleted - start;
        if (dur < 0) {
          return Error(absl::StrCat("negative duration: deletion_time ", *deleted, " is before ",
                                    f[10].empty() ? "creation_time " : "scheduled_time ", start));
        }
        if (dur > kMaxDurationSeconds) return Error(absl::StrCat("duration ", dur, " s out of range"));
        j.id = f[0];
        j.submit = ToMillis(*created);
        j.duration = ToMillis(dur);
        j.gpus = (*num_gpu == 1 && *milli > 0 && *milli < 1000) ? *milli / 1000.0 : *num_gpu;
        j.team = f[6];
        j.priority = QosPriority(f[6]);
        break;
      }
      case TraceFormat::kSwf:
        break;
    }
    return r;
  }

  std::string_view source_;
  TraceFormat format_;
  ImportOptions options_;
};

}  // namespace

absl::StatusOr<TraceFormat> ParseTraceFormat(std::string_view name) {
  for (TraceFormat f : {TraceFormat::kSwf, TraceFormat::kPhillyPollux, TraceFormat::kPhillyGavel,
                        TraceFormat::kPhillyRfold, TraceFormat::kAlibabaOpenb}) {
    if (name == TraceFormatName(f)) return f;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown trace format '", Sv(name),
      "'; expected one of: swf, philly-pollux, philly-gavel, philly-rfold, alibaba-openb"));
}

const char* TraceFormatName(TraceFormat f) {
  switch (f) {
    case TraceFormat::kSwf: return "swf";
    case TraceFormat::kPhillyPollux: return "philly-pollux";
    case TraceFormat::kPhillyGavel: return "philly-gavel";
    case TraceFormat::kPhillyRfold: return "philly-rfold";
    case TraceFormat::kAlibabaOpenb: return "alibaba-openb";
  }
  return "?";
}

absl::StatusOr<SwfTeamField> ParseSwfTeamField(std::string_view name) {
  for (SwfTeamField f : {SwfTeamField::kGroup, SwfTeamField::kUser, SwfTeamField::kQueue,
                         SwfTeamField::kPartition}) {
    if (name == SwfTeamFieldName(f)) return f;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown SWF team field '", Sv(name), "'; expected group, user, queue or partition"));
}

const char* SwfTeamFieldName(SwfTeamField f) {
  switch (f) {
    case SwfTeamField::kGroup: return "group";
    case SwfTeamField::kUser: return "user";
    case SwfTeamField::kQueue: return "queue";
    case SwfTeamField::kPartition: return "partition";
  }
  return "?";
}

absl::StatusOr<TraceFormat> GuessTraceFormat(std::string_view path) {
  auto ends = [&](std::string_view suffix) {
    return path.size() >= suffix.size() && path.substr(path.size() - suffix.size()) == suffix;
  };
  auto has = [&](std::string_view part) { return path.find(part) != std::string_view::npos; };
  if (ends(".swf") || ends(".swf.gz")) return TraceFormat::kSwf;
  if (has("pollux")) return TraceFormat::kPhillyPollux;
  if (has("gavel")) return TraceFormat::kPhillyGavel;
  if (has("rfold")) return TraceFormat::kPhillyRfold;
  if (has("openb_pod")) return TraceFormat::kAlibabaOpenb;
  return absl::NotFoundError(absl::StrCat("cannot guess the trace format of ", Sv(path), "; use --format"));
}

absl::Status ReadTrace(std::istream& in, std::string_view source, TraceFormat format,
                       const ImportOptions& options, const std::function<void(const TraceJob&)>& sink,
                       ImportStats* stats) {
  ImportStats local;
  ImportStats& st = stats != nullptr ? *stats : local;
  if (format == TraceFormat::kPhillyGavel &&
      !(options.gavel_steps_per_second > 0 && std::isfinite(options.gavel_steps_per_second))) {
    return absl::InvalidArgumentError("gavel steps per second must be a positive number");
  }
  RowParser parser(source, format, options);
  int64_t line_no = 0;
  std::string line;
  bool any_line = false;
  if (parser.is_csv()) {
    // The first non-blank line is the header.
    bool found = false;
    while (std::getline(in, line)) {
      ++line_no;
      any_line = true;
      if (Trim(line).empty()) continue;
      found = true;
      if (std::string err = parser.Header(line); !err.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(Sv(source), ":", line_no, ": ", err));
      }
      break;
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(Sv(source), ":", line_no + (any_line ? 0 : 1), ": ",
                                                     any_line ? "missing header (only blank lines)"
                                                              : "empty file (missing header)"));
    }
  }
  std::vector<std::string> block;
  std::vector<RowResult> results;
  block.reserve(kParseBlockRows);
  bool eof = false;
  while (!eof) {
    block.clear();
    const int64_t first_line = line_no + 1;
    while (block.size() < kParseBlockRows) {
      if (!std::getline(in, line)) {
        eof = true;
        break;
      }
      ++line_no;
      block.push_back(std::move(line));
      line.clear();
    }
    results.assign(block.size(), RowResult{});
    auto parse = [&](size_t i) { results[i] = parser.Row(block[i], first_line + static_cast<int64_t>(i)); };
    if (block.size() >= 2048) {
      tbb::parallel_for(tbb::blocked_range<size_t>(0, block.size(), 1024),
                        [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t i = r.begin(); i != r.end(); ++i) parse(i);
                        },
                        tbb::simple_partitioner());
    } else {
      for (size_t i = 0; i < block.size(); ++i) parse(i);
    }
    for (RowResult& r : results) {
      switch (r.kind) {
        case RowResult::kBlank:
          break;
        case RowResult::kIncomplete:
          ++st.rows;
          ++st.incomplete;
          break;
        case RowResult::kError:
          ++st.rows;
          if (!options.skip_bad_rows) return absl::InvalidArgumentError(r.error);
          ++st.skipped;
          if (st.skipped_examples.size() < kMaxExamples) st.skipped_examples.push_back(std::move(r.error));
          break;
        case RowResult::kJob:
          ++st.rows;
          ++st.jobs;
          sink(r.job);
          break;
      }
    }
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(Sv(source), ": read error"));
  if (st.rows == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        Sv(source), ":", line_no + 1, ": ", line_no == 0 ? "empty file" : "no job rows in the file"));
  }
  return absl::OkStatus();
}

absl::Status ReadTraceFile(const std::string& path, TraceFormat format, const ImportOptions& options,
                           const std::function<void(const TraceJob&)>& sink, ImportStats* stats) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(absl::StrCat("cannot open trace ", path));
  gzbuffer(f, 1 << 17);
  GzStreamBuf buf(f);
  std::istream in(&buf);
  absl::Status s = ReadTrace(in, path, format, options, sink, stats);
  if (!buf.error().empty()) {
    return absl::DataLossError(absl::StrCat(path, ": gzip stream error: ", buf.error(),
                                            s.ok() ? "" : absl::StrCat(" (", s.message(), ")")));
  }
  return s;
}

}  // namespace qs::trace
