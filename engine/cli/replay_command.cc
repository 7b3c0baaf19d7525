// `quotasim replay`: one trace under one policy.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "boost/program_options.hpp"
#include "engine/cli/command_line.h"
#include "engine/cli/commands.h"
#include "engine/log/share_table.h"
#include "engine/util/atomic_file.h"
#include "engine/log/summary.h"
#include "engine/trace/progress.h"
#include "engine/trace/replay.h"
#include "oneapi/tbb/global_control.h"
#include "oneapi/tbb/info.h"

namespace po = boost::program_options;

namespace qs {
namespace {

// A policy argument: a file, or the name of a standard policy.
absl::StatusOr<trace::Policy> LoadPolicyArg(const std::string& arg) {
  absl::StatusOr<std::vector<trace::Policy>> standard = trace::StandardPolicies();
  if (!standard.ok()) return standard.status();
  for (trace::Policy& p : *standard) {
    if (p.name == arg) return std::move(p);
  }
  return trace::LoadPolicyFile(arg);
}

}  // namespace

int ReplayCommand(const std::vector<std::string>& args) {
  po::options_description opts("quotasim replay TRACE --mapping M.json --policy P.json [options]");
  trace::WorkloadInputs in;
  std::string policy_arg, summary_path, events_path, timeseries_path, table_format = "table";
  int threads = 0;
  double bucket_hours = 1;
  opts.add_options()("help,h", "show this help")(
      "format", po::value<std::string>(&in.format),
      "swf | philly-pollux | philly-gavel | philly-rfold | alibaba-openb (default: the mapping's, else "
      "guessed from the file name)")(
      "mapping", po::value<std::string>(&in.mapping_path), "mapping file (JSON): trace jobs -> service jobs")(
      "policy", po::value<std::string>(&policy_arg),
      "policy file (the scenario format's configuration part), or a standard policy name "
      "(quotasim compare --list-policies)")(
      "summary", po::value<std::string>(&summary_path), "write the run summary (JSON) here; - for standard output")(
      "events", po::value<std::string>(&events_path), "write the event log (JSON Lines) here; - for standard output")(
      "timeseries", po::value<std::string>(&timeseries_path),
      "write per-share instances in use (own and borrowed), limits and preemptions per bucket (CSV) here; - for "
      "standard output")(
      "bucket-hours", po::value<double>(&bucket_hours)->default_value(1), "time-series bucket, hours")(
      "skip-bad-rows", "skip (and count) malformed trace rows instead of stopping at the first")(
      "swf-team", po::value<std::string>(&in.swf_team), "SWF team field: group | user | queue | partition")(
      "quota-table", po::value<std::string>(&in.quota_table_path),
      "per-day quota table (Helios Venus CSV) overriding the mapping's")(
      "threads", po::value<int>(&threads)->default_value(0), "worker threads for importing (0 = all cores)")(
      "no-check", "skip the engine's invariant checks after every event (faster)")(
      "quiet,q", "do not print the per-share table")(
      "table-format", po::value<std::string>(&table_format)->default_value("table"),
      "the per-share table: table | csv | json (what `quotasim run --format` prints; --format here is "
      "the trace's)");
  const std::initializer_list<Positional> positionals = {{"trace", &in.trace_path}};
  po::variables_map vm;
  if (std::optional<int> done = ParseCommandLine("replay", args, opts, positionals,
                                                 "\nImports the trace (streaming; .gz is gunzipped), maps its jobs with the mapping file,\n"
                 "applies the policy and runs the fast engine. Prints the per-share summary table.\n"
                 "Exit 0 on success; 2 on a usage error or an invalid trace row, mapping or policy (the\n"
                 "message names the file and line or JSON path); 1 on other errors.\n", vm)) {
    return *done;
  }
  if (in.trace_path.empty() || in.mapping_path.empty() || policy_arg.empty()) {
    return UsageError("replay", "TRACE, --mapping and --policy are required");
  }
  if (threads < 0 || !(bucket_hours > 0)) {
    return UsageError("replay", "--threads must be >= 0 and --bucket-hours > 0");
  }
  for (const std::string& bad : {UnwritableCompression("--events", events_path, /*gzip=*/false, ".jsonl"),
                                 UnwritableCompression("--summary", summary_path, /*gzip=*/false, ".json"),
                                 UnwritableCompression("--timeseries", timeseries_path, /*gzip=*/false, ".csv")}) {
    if (!bad.empty()) return UsageError("replay", bad);
  }
  // "-" is standard output for one of the files; the table then goes to stderr.
  const int dashes = (events_path == "-") + (summary_path == "-") + (timeseries_path == "-");
  if (dashes > 1) return UsageError("replay", "only one of --events, --summary and --timeseries can be standard output");
  if (const std::string clash =
          OutputClash({{"--events", events_path}, {"--summary", summary_path}, {"--timeseries", timeseries_path}},
                      {{"TRACE", in.trace_path}, {"--mapping", in.mapping_path}, {"--quota-table", in.quota_table_path}});
      !clash.empty()) {
    return UsageError("replay", clash);
  }
  std::ostream& table_out = dashes > 0 ? std::cerr : std::cout;
  const std::optional<TableFormat> format = ParseTableFormat(table_format);
  if (!format) return UsageError("replay", "--table-format must be table, csv or json, not '" + table_format + "'");
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                  static_cast<size_t>(threads == 0 ? tbb::info::default_concurrency() : threads));
  in.skip_bad_rows = vm.count("skip-bad-rows") > 0;
  absl::StatusOr<trace::Policy> policy = LoadPolicyArg(policy_arg);
  if (!policy.ok()) return ReportError(policy.status());
  absl::StatusOr<trace::LoadedWorkload> loaded = trace::LoadWorkload(in);
  if (!loaded.ok()) return ReportError(loaded.status());
  const trace::Workload& w = loaded->workload;
  if (w.import.skipped > 0 || w.import.incomplete > 0) {
    std::cerr << "quotasim: " << in.trace_path << ": " << w.import.skipped << " bad rows skipped, "
              << w.import.incomplete << " rows with unknown size or run time not replayable\n";
    for (const std::string& e : w.import.skipped_examples) std::cerr << "  skipped: " << e << "\n";
  }
  trace::ReplayProgress counters;
  trace::ProgressLine progress(&counters, static_cast<int64_t>(w.jobs.size()), 1);
  trace::RunPolicyOptions ro;
  ro.check_invariants = vm.count("no-check") == 0;
  ro.bucket = static_cast<SimTime>(bucket_hours * 3.6e6);
  // The progress counters only when a progress line can be drawn, and the
  // compare files only for --timeseries: what nobody reads is not built.
  ro.progress = isatty(STDERR_FILENO) == 1 ? &counters : nullptr;
  ro.report = !timeseries_path.empty();
  ro.events_path = events_path;
  ro.tool_version = ToolVersion();
  absl::StatusOr<trace::PolicyRun> run = trace::RunPolicy(w, *policy, ro);
  progress.Stop();
  if (!run.ok()) return ReportError(run.status());
  for (const auto& [path, text] : {std::pair<std::string, const std::string*>{summary_path, &run->summary_json},
                                   {timeseries_path, &run->timeseries_csv}}) {
    if (path.empty()) continue;
    AtomicFile out(path);  // under its name only when complete; "-" is standard output
    out.stream() << *text;
    if (absl::Status st = out.Commit(); !st.ok()) return ReportError(st);
  }
  for (const std::string& v : run->stats.violation_messages) std::cerr << "quotasim: INVARIANT VIOLATION: " << v << "\n";
  if (!run->stats.stopped.empty()) std::cerr << "quotasim: " << run->stats.stopped << "\n";  // written up to the stop
  if (vm.count("quiet") == 0) {
    // csv and json: the rows alone, for a program to read as they are.
    if (*format == TableFormat::kTable) {
      table_out << w.trace_name << " under " << policy->name << ": " << w.jobs.size() << " jobs, " << w.shares.size()
                << " shares, " << w.environment << " x " << w.instance_type << "\n";
    }
    table_out << ShareTable(run->summary, run->shares, *format);
  }
  return run->stats.invariant_violations == 0 && run->stats.stopped.empty() ? kExitOk : kExitError;
}

}  // namespace qs
