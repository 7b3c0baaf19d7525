// `quotasim report INPUT... --out REPORT.html`: one self-contained HTML page
// (engine/report/report_html.h) from
//   * a run's summary (`run --summary S.json`; its log with --events LOG, or
//     found beside it as <stem>.events.jsonl[.gz] when the summary is
//     <stem>.summary.json);
//   * a folder written by `whatif --out` (base and changed, with their logs
//     when --events wrote them), `sweep --out` or `compare --out` (every
//     *.summary.json in it, by name, each with its log if one is beside it;
//     a trace compare's <policy>.timeseries.csv and .waits.csv stand in for
//     a log).
// Each run's share limits come from its scenario (the summary's
// run.scenario, or --scenario) with its run.overrides applied; when the
// scenario cannot be read the page says so and shows no limits.
// Exit 2 for a missing input, a file that is not a summary (the message names
// the file and what is wrong) or a malformed log (file and line).
#include <cmath>
#include <filesystem>
#include <map>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "boost/program_options.hpp"
#include "engine/cli/command_line.h"
#include "engine/cli/commands.h"
#include "engine/cli/scenario_file.h"
#include "engine/io/overrides.h"
#include "engine/log/share_table.h"
#include "engine/report/report_html.h"
#include "engine/util/atomic_file.h"
#include "engine/util/gzip_istream.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace qs {
namespace {

constexpr int kSlices = 240;

// "base" of base.summary.json, "s" of s.json.
std::string Stem(const fs::path& p) {
  std::string name = p.filename().string();
  for (absl::string_view suffix : {".summary.json", ".json"}) {
    if (absl::EndsWith(name, suffix)) return name.substr(0, name.size() - suffix.size());
  }
  return name;
}

absl::StatusOr<nlohmann::json> ReadSummary(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(path.string(), ": cannot be opened"));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(path.string(), ": not JSON (byte ", e.byte, ")"));
  }
  if (!j.is_object() || !j.contains("quotaShares") || !j["quotaShares"].is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path.string(), ": not a quotasim run summary ($.quotaShares missing or not an object)"));
  }
  if (!j.contains("endTime") || !j["endTime"].is_number()) {
    return absl::InvalidArgumentError(absl::StrCat(path.string(), ": not a quotasim run summary ($.endTime missing)"));
  }
  return j;
}

// The shares as the run had them: its scenario with its --set overrides.
void ReadConfig(ReportRun& r, const std::string& scenario_override) {
  const nlohmann::json& run = r.summary.contains("run") ? r.summary["run"] : nlohmann::json::object();
  std::string path = scenario_override;
  if (path.empty() && run.contains("scenario") && run["scenario"].is_string()) path = run["scenario"].get<std::string>();
  if (path.empty()) {
    r.config_note = "The summary names no scenario (give --scenario): limits are not shown.";
    return;
  }
  std::vector<std::string> sets;
  if (run.contains("overrides") && run["overrides"].is_array()) {
    for (const nlohmann::json& o : run["overrides"]) {
      if (o.is_string()) sets.push_back(o.get<std::string>());
    }
  }
  absl::StatusOr<Overrides> overrides = Overrides::Parse(sets);
  absl::StatusOr<OpenedScenario> opened =
      overrides.ok() ? OpenScenario(path, /*stream_qsb=*/true, *overrides) : absl::StatusOr<OpenedScenario>(overrides.status());
  if (!opened.ok()) {
    r.config_note = absl::StrCat("Limits are not shown: the run's scenario could not be read (",
                                 opened.status().message(), "); give --scenario.");
    return;
  }
  ShareDeclarations decl;
  for (const ScenarioEvent& ev : opened->whole ? opened->whole->events : opened->index->share_requests) {
    decl.Note(ev, opened->head());
  }
  for (const DeclaredShare& d : decl.shares()) {
    ReportShare s;
    s.name = d.name;
    for (const CapacityLimit& l : d.limits) s.limits[l.capacity_unit] = l.max_capacity;
    s.strategy = d.strategy == Strategy::kReserve ? "RESERVE" : d.strategy == Strategy::kLend ? "LEND" : "LEND_AND_BORROW";
    s.borrow_limit = d.strategy != Strategy::kLendAndBorrow ? "-"
                     : d.borrow_limit < 0                    ? "unlimited"
                                                             : absl::StrCat(d.borrow_limit, "%");
    s.in_share = d.in_share_preemption == Toggle::kEnabled ? "ENABLED" : "DISABLED";
    r.config.push_back(std::move(s));
  }
}

absl::Status ReadSeries(ReportRun& r, const std::string& log_path) {
  gzFile f = gzopen(log_path.c_str(), "rb");
  if (f == nullptr) return absl::InvalidArgumentError(log_path + ": cannot be opened");
  GzStreamBuf buf(f);
  std::istream in(&buf);
  const SimTime end = static_cast<SimTime>(std::llround(r.summary["endTime"].get<double>() * 1000));
  absl::StatusOr<RunSeries> series = ScanEventLog(in, log_path, end, kSlices);
  if (!buf.error().empty()) return absl::DataLossError(log_path + ": gzip stream error: " + buf.error());
  if (!series.ok()) return series.status();
  r.series = *std::move(series);
  return absl::OkStatus();
}

// A trace compare's files beside <stem>.summary.json: <stem>.timeseries.csv
// and <stem>.waits.csv. The shares' limits come from the time series when
// the scenario (a trace under a policy) cannot be read.
absl::Status ReadTraceFiles(ReportRun& r, const fs::path& timeseries, const fs::path& waits) {
  std::ifstream ts(timeseries);
  if (!ts) return absl::InvalidArgumentError(timeseries.string() + ": cannot be opened");
  std::ifstream w(waits);
  std::map<std::string, std::string> unit_of;
  for (const auto& [share, v] : r.summary["quotaShares"].items()) {
    if (v.contains("instanceSeconds") && v["instanceSeconds"].is_object() && !v["instanceSeconds"].empty()) {
      unit_of[share] = v["instanceSeconds"].begin().key();
    }
  }
  std::map<std::string, int64_t> limits;
  const SimTime end = static_cast<SimTime>(std::llround(r.summary["endTime"].get<double>() * 1000));
  absl::StatusOr<RunSeries> series =
      ReadTraceSeries(ts, timeseries.string(), w ? &w : nullptr, waits.string(), end, unit_of, &limits);
  if (!series.ok()) return series.status();
  r.series = *std::move(series);
  if (r.config.empty() && !limits.empty()) {
    for (const auto& [share, limit] : limits) {
      ReportShare s;
      s.name = share;
      auto u = unit_of.find(share);
      s.limits[u == unit_of.end() ? std::string("instances") : u->second] = limit;
      r.config.push_back(std::move(s));
    }
    r.config_note = absl::StrCat("Limits from ", timeseries.filename().string(),
                                 " (a trace replay: its shares come from the policy); charts from its bucket means, "
                                 "the wait CDF over all jobs from ", waits.filename().string(), ".");
  }
  return absl::OkStatus();
}

// The log beside a summary: <stem>.events.jsonl or .jsonl.gz.
std::string LogBeside(const fs::path& summary) {
  const std::string name = summary.filename().string();
  if (!absl::EndsWith(name, ".summary.json")) return "";
  const std::string stem = Stem(summary);
  for (const char* ext : {".events.jsonl", ".events.jsonl.gz"}) {
    const fs::path p = summary.parent_path() / absl::StrCat(stem, ext);
    if (fs::exists(p)) return p.string();
  }
  return "";
}

}  // namespace

int ReportCommand(const std::vector<std::string>& args) {
  po::options_description opts("quotasim report INPUT... --out REPORT.html");
  std::vector<std::string> inputs;
  std::string out_path, title, events_path, scenario_path;
  opts.add_options()("help,h", "show this help")("out", po::value<std::string>(&out_path),
                                                   "the HTML file to write (self-contained: inline CSS and SVG)")(
      "title", po::value<std::string>(&title), "the page's title (default: from the input)")(
      "events", po::value<std::string>(&events_path),
      "the event log of a single summary given as INPUT (else <stem>.events.jsonl[.gz] beside <stem>.summary.json)")(
      "scenario", po::value<std::string>(&scenario_path),
      "read the share limits from this scenario instead of the summary's run.scenario");
  const std::initializer_list<Positional> positionals = {{"input", nullptr, &inputs}};
  po::variables_map vm;
  if (std::optional<int> done = ParseCommandLine(
          "report", args, opts, positionals,
          "\nINPUT: a run's summary (run --summary), or a folder written by whatif --out, sweep --out or\n"
          "compare --out. The page has per-share tables (limits, jobs, waits, own and borrowed use,\n"
          "preemptions), the wait by cause of runs with --wait-causes, and from event logs the wait CDFs,\n"
          "instances held over time against each limit and preemptions over time; a what-if adds its\n"
          "before -> after changes. No script, no network: it opens anywhere.\n",
          vm)) {
    return *done;
  }
  if (inputs.empty()) return UsageError("report", "missing INPUT (a summary file or an output folder)");
  if (out_path.empty()) return UsageError("report", "--out REPORT.html is required");
  {
    std::vector<std::pair<std::string_view, std::string>> read{{"--events", events_path}, {"--scenario", scenario_path}};
    for (const std::string& p : inputs) read.emplace_back("INPUT", p);
    if (const std::string clash = OutputClash({{"--out", out_path}}, read); !clash.empty()) {
      return UsageError("report", clash);
    }
  }
  if (!events_path.empty() && (inputs.size() != 1 || fs::is_directory(inputs[0]))) {
    return UsageError("report", "--events goes with a single summary file as INPUT");
  }

  ReportInput in;
  in.tool_version = ToolVersion();
  in.kind = "run";
  std::vector<fs::path> summaries;
  for (const std::string& input : inputs) {
    const fs::path p(input);
    if (!fs::exists(p)) return ReportError(absl::InvalidArgumentError(input + ": no such file or folder"));
    if (!fs::is_directory(p)) {
      summaries.push_back(p);
      continue;
    }
    if (fs::exists(p / "whatif.json")) {
      in.kind = "what-if";
      for (const char* side : {"base.summary.json", "changed.summary.json"}) {
        if (!fs::exists(p / side)) {
          return ReportError(absl::InvalidArgumentError((p / side).string() + ": missing from the what-if folder"));
        }
        summaries.push_back(p / side);
      }
      continue;
    }
    std::vector<fs::path> found;
    for (const fs::directory_entry& e : fs::directory_iterator(p)) {
      if (e.is_regular_file() && absl::EndsWith(e.path().filename().string(), ".summary.json")) found.push_back(e.path());
    }
    if (found.empty()) {
      return ReportError(absl::InvalidArgumentError(input + ": no *.summary.json in it (not a run, what-if, sweep or compare folder)"));
    }
    std::sort(found.begin(), found.end());
    in.kind = fs::exists(p / "sweep.csv") ? "sweep" : fs::exists(p / "comparison.csv") ? "compare" : "runs";
    summaries.insert(summaries.end(), found.begin(), found.end());
  }
  if (inputs.size() > 1 || (summaries.size() > 1 && in.kind == "run")) in.kind = "compare";
  in.source = inputs.size() == 1 ? inputs[0] : absl::StrCat(inputs[0], " and ", inputs.size() - 1, " more");
  in.title = title.empty() ? absl::StrCat("quotasim ", in.kind, ": ", inputs[0]) : title;

  for (const fs::path& p : summaries) {
    ReportRun r;
    r.label = Stem(p);
    absl::StatusOr<nlohmann::json> summary = ReadSummary(p);
    if (!summary.ok()) return ReportError(summary.status());
    r.summary = *std::move(summary);
    ReadConfig(r, scenario_path);
    const std::string log = !events_path.empty() ? events_path : LogBeside(p);
    const fs::path timeseries = p.parent_path() / (r.label + ".timeseries.csv");
    if (log.empty() && absl::EndsWith(p.filename().string(), ".summary.json") && fs::exists(timeseries)) {
      if (absl::Status st = ReadTraceFiles(r, timeseries, p.parent_path() / (r.label + ".waits.csv")); !st.ok()) {
        return ReportError(st);
      }
    } else if (log.empty()) {
      r.log_note = "No event log with this summary: charts of waits, use and preemptions need one (run --events "
                   "X.events.jsonl beside X.summary.json, whatif --events, or report --events LOG).";
    } else if (absl::Status st = ReadSeries(r, log); !st.ok()) {
      return ReportError(st);
    }
    in.runs.push_back(std::move(r));
  }
  AtomicFile out(out_path);
  if (!out.ok()) return ReportError(absl::InternalError("cannot write " + out_path));
  out.stream() << ReportHtml(in);
  if (absl::Status st = out.Commit(); !st.ok()) return ReportError(st);
  std::cout << "quotasim report: " << in.runs.size() << " run(s) written to " << out_path << "\n";
  return kExitOk;
}

}  // namespace qs
