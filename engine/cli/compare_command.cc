// `quotasim compare`: one trace under a list of policies, in parallel, with a
// comparison report; `--shard K/N` runs one part of the list (merge_command.cc
// joins the parts). Given scenario files (.json, .qsb) instead, without a
// mapping, it runs each (with --set applied to all) and writes their
// summaries side by side (CompareScenarios).
#include <algorithm>
#include <chrono>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "boost/program_options.hpp"
#include "engine/cli/command_line.h"
#include "engine/cli/commands.h"
#include "engine/cli/scenario_file.h"
#include "engine/gen/qsb.h"
#include "engine/io/overrides.h"
#include "engine/log/share_table.h"
#include "engine/log/summary.h"
#include "engine/run.h"
#include "engine/util/atomic_file.h"
#include "engine/trace/progress.h"
#include "engine/trace/replay.h"
#include "engine/trace/report.h"
#include "engine/util/out_dir.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/global_control.h"
#include "oneapi/tbb/info.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/partitioner.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace qs {
namespace {

// Policy arguments: files, directories (every *.json inside, by name), or
// "standard" for the standard set.
absl::StatusOr<std::vector<trace::Policy>> LoadPolicies(const std::vector<std::string>& args) {
  std::vector<trace::Policy> out;
  for (const std::string& a : args) {
    if (a == "standard") {
      absl::StatusOr<std::vector<trace::Policy>> s = trace::StandardPolicies();
      if (!s.ok()) return s.status();
      for (trace::Policy& p : *s) out.push_back(std::move(p));
      continue;
    }
    std::vector<std::string> files;
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      for (const auto& e : fs::directory_iterator(a, ec)) {
        if (e.path().extension() == ".json") files.push_back(e.path().string());
      }
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(a);
    }
    for (const std::string& f : files) {
      absl::StatusOr<trace::Policy> p = trace::LoadPolicyFile(f);
      if (!p.ok()) return p.status();
      out.push_back(std::move(*p));
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (out[i].name == out[j].name) {
        return absl::InvalidArgumentError(absl::StrCat("two policies are named '", out[i].name, "'"));
      }
    }
  }
  return out;
}

// Scenario files side by side: each run (fast engine, --set applied to
// all) in parallel; per scenario <stem>.summary.json, and comparison.csv
// (a row per scenario and share, then the scenario's TOTAL) and
// comparison.md (the totals, then each scenario's per-share table).
int CompareScenarios(const std::vector<std::string>& paths, const std::vector<std::string>& sets, std::string out_dir,
                     bool force, int threads, bool check, bool wait_causes) {
  absl::StatusOr<Overrides> overrides = Overrides::Parse(sets);
  if (!overrides.ok()) return UsageError("compare", std::string(overrides.status().message()));
  struct Item {
    std::string path, name;
    std::optional<OpenedScenario> opened;
    ShareDeclarations declared;
    Summary summary;
    RunStats stats;
    absl::Status error;
  };
  std::vector<Item> items(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    Item& it = items[i];
    it.path = paths[i];
    it.name = fs::path(paths[i]).stem().string();
    for (size_t j = 0; j < i; ++j) {
      if (items[j].name == it.name) {
        return UsageError("compare", "two scenario files are named '" + it.name + "' (" + items[j].path + ", " + it.path + ")");
      }
    }
    absl::StatusOr<OpenedScenario> opened = OpenScenario(it.path, /*stream_qsb=*/true, *overrides);
    if (!opened.ok()) return ReportError(opened.status());
    it.opened = *std::move(opened);
    for (const ScenarioEvent& ev : it.opened->whole ? it.opened->whole->events : it.opened->index->share_requests) {
      it.declared.Note(ev, it.opened->head());
    }
  }
  if (out_dir.empty()) out_dir = "out/compare-scenarios";
  if (absl::Status s = PrepareOutDir(out_dir, force, /*shared=*/false, "compare"); !s.ok()) return ReportError(s);
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                  static_cast<size_t>(threads == 0 ? tbb::info::default_concurrency() : threads));
  RunOptions options;
  options.check_invariants = check;
  options.wait_causes = wait_causes;
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, items.size(), 1),
      [&](const tbb::blocked_range<size_t>& range) {
        for (size_t i = range.begin(); i != range.end(); ++i) {
          Item& it = items[i];
          // The engine keeps the summary itself (RunOptions::summary).
          NullSink b;
          RunOptions o = options;
          o.summary = &it.summary;
          o.job_records = false;
          if (it.opened->streamed()) {
            absl::StatusOr<RunStats> st = RunFastEngine(it.opened->events(), *std::move(it.opened->index), b, o);
            if (!st.ok()) {
              it.error = st.status();
              continue;
            }
            it.stats = *std::move(st);
          } else {
            it.stats = RunFastEngine(*it.opened->whole, b, o);
          }
          it.summary.run = RunProvenance{it.path, "fast", ToolVersion(), it.opened->head().knobs,
                                         options.cycle_preemptions, options.check_invariants, it.stats.stopped, sets,
                                         wait_causes};
        }
      },
      tbb::simple_partitioner());
  std::string csv, md = "# Scenario comparison\n\n| scenario | jobs | succeeded | failed | unfinished | wait p50 | "
                        "wait p95 | wait p99 | preempted | lost inst-h | status |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::string details;
  int code = kExitOk;
  for (const Item& it : items) {
    if (!it.error.ok()) return ReportError(it.error);
    AtomicFile f((fs::path(out_dir) / (it.name + ".summary.json")).string());
    f.stream() << SummaryToJson(it.summary);
    if (absl::Status st = f.Commit(); !st.ok()) return ReportError(st);
    // The per-share rows of `run --format csv`, each led by the scenario.
    const std::string rows = ShareTable(it.summary, it.declared.shares(), TableFormat::kCsv);
    const size_t header_end = rows.find('\n');
    if (csv.empty()) csv = "scenario," + rows.substr(0, header_end + 1);
    for (size_t p = header_end + 1; p < rows.size();) {
      const size_t e = rows.find('\n', p);
      csv += it.name + "," + rows.substr(p, e - p + 1);
      p = e + 1;
    }
    const ShareSummary& t = it.summary.total;
    auto wait = [&](SimTime v) { return t.wait.count == 0 ? std::string("-") : HumanDuration(v); };
    md += "| " + it.name + " | " + std::to_string(t.submitted) + " | " + std::to_string(t.succeeded) + " | " +
          std::to_string(t.failed) + " | " + std::to_string(t.unfinished) + " | " + wait(t.wait.p50) + " | " +
          wait(t.wait.p95) + " | " + wait(t.wait.p99) + " | " + std::to_string(t.preempted_cross + t.preempted_in) +
          " | " + absl::StrFormat("%.1f", static_cast<double>(t.work_lost_instance_ms) / 3.6e6) + " | " +
          (it.stats.stopped.empty() ? "complete" : "stopped") + " |\n";
    details += "\n## " + it.name + " (" + it.path + ")\n\n```\n" +
               ShareTable(it.summary, it.declared.shares(), TableFormat::kTable) + "```\n";
    if (!it.stats.stopped.empty()) {
      std::cerr << "quotasim: " << it.path << ": " << it.stats.stopped << "\n";
      code = kExitError;
    }
    for (const std::string& v : it.stats.violation_messages) {
      std::cerr << "quotasim: " << it.path << ": INVARIANT VIOLATION: " << v << "\n";
      code = kExitError;
    }
  }
  if (!sets.empty()) md += "\nEvery scenario run with --set " + overrides->ToString() + ".\n";
  md += details;
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"comparison.csv", csv}, {"comparison.md", md}}) {
    AtomicFile f((fs::path(out_dir) / name).string());
    f.stream() << text;
    if (absl::Status st = f.Commit(); !st.ok()) return ReportError(st);
  }
  std::cout << "compare: " << items.size() << " scenarios into " << out_dir << " (comparison.md, comparison.csv)\n";
  return code;
}

}  // namespace

int CompareCommand(const std::vector<std::string>& args) {
  po::options_description opts("quotasim compare TRACE --mapping M.json [options] | quotasim compare A.json B.json ... [--set ...]");
  trace::WorkloadInputs in;
  std::vector<std::string> policy_args;
  std::string out_dir, shard_arg;
  int threads = 0;
  double bucket_hours = 1;
  std::vector<std::string> sets;
  opts.add_options()("help,h", "show this help")(
      "set", po::value<std::vector<std::string>>(&sets),
      "KEY=VALUE applied to every scenario file (scenario files only; quotasim run --help)")(
      "wait-causes", "scenario files only: their summaries get waitByCauseSeconds, as `run --wait-causes`")(
      "format", po::value<std::string>(&in.format),
      "swf | philly-pollux | philly-gavel | philly-rfold | alibaba-openb (default: the mapping's)")(
      "mapping", po::value<std::string>(&in.mapping_path), "mapping file (JSON)")(
      "policies", po::value<std::vector<std::string>>(&policy_args)->multitoken(),
      "policy files or directories of them, or 'standard' (default: standard)")(
      "out", po::value<std::string>(&out_dir), "output folder, new or empty (or --force; default: out/<trace name>)")(
      "force", "replace the files of an earlier run in --out (a folder quotasim made)")(
      "shard", po::value<std::string>(&shard_arg),
      "run only shard K of N of the policy list (K/N); default from AWS_BATCH_JOB_ARRAY_INDEX/SIZE, "
      "SLURM_ARRAY_TASK_ID/COUNT or JOB_COMPLETION_INDEX with QS_SHARD_COUNT")(
      "threads", po::value<int>(&threads)->default_value(0),
      "worker threads (0 = all cores); output bytes never depend on it")(
      "bucket-hours", po::value<double>(&bucket_hours)->default_value(1), "time-series bucket, hours")(
      "skip-bad-rows", "skip (and count) malformed trace rows instead of stopping at the first")(
      "swf-team", po::value<std::string>(&in.swf_team), "SWF team field: group | user | queue | partition")(
      "quota-table", po::value<std::string>(&in.quota_table_path), "per-day quota table overriding the mapping's")(
      "no-check", "skip the engine's invariant checks after every event (faster)")(
      "list-policies", "print the standard policies and exit")(
      "write-policies", po::value<std::string>(), "write the standard policies as DIR/<name>.json and exit");
  std::vector<std::string> inputs;
  const std::initializer_list<Positional> positionals = {{"trace", nullptr, &inputs}};
  po::variables_map vm;
  if (std::optional<int> done = ParseCommandLine("compare", args, opts, positionals,
                                                 "\nWrites into the output directory, per policy: <policy>.summary.json, .metrics.json,\n"
                 ".timeseries.csv, .waits.csv; and the report comparison.md, comparison.csv,\n"
                 "share-waits.csv (plots: scripts/plot-compare DIR). With N > 1 shards each shard writes its\n"
                 "policies and a shard-K-of-N.json manifest; `quotasim merge` writes the report, byte-identical\n"
                 "to a single run's.\n", vm)) {
    return *done;
  }
  if (vm.count("list-policies")) {
    absl::StatusOr<std::vector<trace::Policy>> s = trace::StandardPolicies();
    if (!s.ok()) return ReportError(s.status());
    for (const trace::Policy& p : *s) std::cout << p.name << ": " << p.description << "\n";
    return kExitOk;
  }
  if (vm.count("write-policies")) {
    const std::string dir = vm["write-policies"].as<std::string>();
    std::error_code ec;
    fs::create_directories(dir, ec);
    for (const auto& [name, doc] : trace::StandardPolicyDocuments()) {
      std::ofstream out(fs::path(dir) / (name + ".json"), std::ios::binary | std::ios::trunc);
      out << doc;
      if (!out) {
        std::cerr << "quotasim: cannot write " << (fs::path(dir) / (name + ".json")).string() << "\n";
        return kExitError;
      }
    }
    return kExitOk;
  }
  // Scenario files (no mapping): each run as written, side by side.
  auto is_scenario = [](const std::string& p) {
    return gen::IsQsbPath(p) || (p.size() > 5 && p.compare(p.size() - 5, 5, ".json") == 0);
  };
  if (!inputs.empty() && in.mapping_path.empty() &&
      std::all_of(inputs.begin(), inputs.end(), is_scenario)) {
    if (threads < 0) return UsageError("compare", "--threads must be >= 0");
    return CompareScenarios(inputs, sets, out_dir, vm.count("force") > 0, threads, vm.count("no-check") == 0,
                            vm.count("wait-causes") > 0);
  }
  if (!sets.empty()) return UsageError("compare", "--set applies to scenario files (a trace's settings come from its policies)");
  if (vm.count("wait-causes")) {
    return UsageError("compare", "--wait-causes applies to scenario files (a trace compare writes no cause lines)");
  }
  if (inputs.size() > 1) return UsageError("compare", "one TRACE at a time (several arguments: scenario files .json/.qsb)");
  if (!inputs.empty()) in.trace_path = inputs[0];
  if (in.trace_path.empty() || in.mapping_path.empty()) {
    return UsageError("compare", "TRACE and --mapping are required (or scenario files: compare A.json B.json ...)");
  }
  if (threads < 0 || !(bucket_hours > 0)) {
    return UsageError("compare", "--threads must be >= 0 and --bucket-hours > 0");
  }
  trace::Shard shard;
  if (!shard_arg.empty()) {
    absl::StatusOr<trace::Shard> s = trace::ParseShard(shard_arg);
    if (!s.ok()) return UsageError("compare", "--shard: " + std::string(s.status().message()));
    shard = *s;
  } else {
    absl::StatusOr<std::optional<trace::Shard>> s = trace::ShardFromEnvironment(&std::getenv);
    if (!s.ok()) return UsageError("compare", std::string(s.status().message()));
    if (*s) shard = **s;
  }
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                  static_cast<size_t>(threads == 0 ? tbb::info::default_concurrency() : threads));
  const auto start = std::chrono::steady_clock::now();
  if (policy_args.empty()) policy_args.push_back("standard");
  absl::StatusOr<std::vector<trace::Policy>> policies = LoadPolicies(policy_args);
  if (!policies.ok()) return ReportError(policies.status());
  if (policies->empty()) {
    std::cerr << "quotasim compare: no policies\n";
    return kExitError;
  }
  in.skip_bad_rows = vm.count("skip-bad-rows") > 0;
  absl::StatusOr<trace::LoadedWorkload> loaded = trace::LoadWorkload(in);
  if (!loaded.ok()) return ReportError(loaded.status());
  const trace::Workload& w = loaded->workload;
  if (w.import.skipped > 0 || w.import.incomplete > 0) {
    std::cerr << "quotasim: " << in.trace_path << ": " << w.import.skipped << " bad rows skipped, "
              << w.import.incomplete << " rows with unknown size or run time not replayable\n";
    for (const std::string& e : w.import.skipped_examples) std::cerr << "  skipped: " << e << "\n";
  }
  if (out_dir.empty()) out_dir = (fs::path("out") / w.trace_name).string();
  // The folder holds this comparison's files only; the shards of one
  // comparison may share it (engine/util/out_dir.h).
  if (absl::Status s = PrepareOutDir(out_dir, vm.count("force") > 0, shard.count > 1, "compare"); !s.ok()) {
    return ReportError(s);
  }
  const std::vector<size_t> which = trace::ShardPolicies(policies->size(), shard);
  trace::ReplayProgress counters;
  trace::ProgressLine progress(&counters, static_cast<int64_t>(w.jobs.size() * which.size()),
                               static_cast<int64_t>(which.size()));
  trace::RunPolicyOptions ro;
  ro.check_invariants = vm.count("no-check") == 0;
  ro.bucket = static_cast<SimTime>(bucket_hours * 3.6e6);
  ro.progress = &counters;
  ro.tool_version = ToolVersion();
  absl::StatusOr<std::vector<trace::PolicyRun>> runs = trace::RunComparison(w, *policies, which, ro);
  progress.Stop();
  if (!runs.ok()) return ReportError(runs.status());
  int64_t violations = 0;
  bool any_stopped = false;  // a policy's run caught in a preemption cycle (written up to its stop)
  for (const trace::PolicyRun& r : *runs) {
    if (!r.stats.stopped.empty()) {
      std::cerr << "quotasim: " << r.policy << ": " << r.stats.stopped << "\n";
      any_stopped = true;
    }
    absl::Status s = trace::WritePolicyRun(out_dir, r);
    if (!s.ok()) return ReportError(s);
    violations += r.stats.invariant_violations;
    for (const std::string& v : r.stats.violation_messages) {
      std::cerr << "quotasim: " << r.policy << ": INVARIANT VIOLATION: " << v << "\n";
    }
  }
  const trace::Manifest manifest = trace::MakeManifest(w, loaded->mapping, *policies, shard);
  if (absl::Status s = trace::WriteManifest(out_dir, manifest); !s.ok()) return ReportError(s);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (shard.count == 1) {
    if (absl::Status s = trace::WriteReport(out_dir, manifest); !s.ok()) return ReportError(s);
    std::cout << "compare: " << w.trace_name << ", " << w.jobs.size() << " jobs x " << which.size()
              << " policies in " << secs << " s wall; report " << (fs::path(out_dir) / "comparison.md").string()
              << " (plots: scripts/plot-compare " << out_dir << ")\n";
  } else {
    std::cout << "compare: shard " << shard.index << "/" << shard.count << ": " << which.size() << " of "
              << policies->size() << " policies in " << secs << " s wall into " << out_dir
              << "; when every shard is done: quotasim merge --out DIR SHARD_DIRS...\n";
  }
  return violations == 0 && !any_stopped ? kExitOk : kExitError;
}

}  // namespace qs
