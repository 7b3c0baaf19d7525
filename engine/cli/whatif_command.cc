// `quotasim whatif`: one scenario run twice on the fast engine, as written
// and with --set overrides (engine/io/overrides.h), side by side (--common
// settings go to both runs, e.g. the latency knobs calibrate found):
//
//   quotasim whatif queue.json --set QS1.borrowLimit=0 [--set ...] [--out DIR]
//
// Prints per share the setting that changed and the change in wait
// p50/p95/p99, jobs succeeded, preemptions and lost instance-hours
// (WhatIfTable, engine/log/share_table.h). With --out DIR it also writes
// base.summary.json, changed.summary.json, whatif.json and whatif.csv, and
// with --events the two event logs (base.events.jsonl, changed.events.jsonl)
// that `quotasim explain` reads. The two runs go in parallel; the output is
// the same bytes at any --threads.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "boost/program_options.hpp"
#include "engine/cli/command_line.h"
#include "engine/cli/commands.h"
#include "engine/cli/scenario_file.h"
#include "engine/io/overrides.h"
#include "engine/log/async_log.h"
#include "engine/log/share_table.h"
#include "engine/log/summary.h"
#include "engine/run.h"
#include "engine/util/atomic_file.h"
#include "engine/util/out_dir.h"
#include "oneapi/tbb/global_control.h"
#include "oneapi/tbb/info.h"
#include "oneapi/tbb/parallel_invoke.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace qs {
namespace {

struct Side {
  std::string name;  // "base" | "changed"
  std::vector<std::string> sets;
  std::optional<OpenedScenario> opened;
  ShareDeclarations declared;
  Summary summary;
  RunStats stats;
  std::string log;  // the JSON Lines log when asked for
  absl::Status error;
};

// With a log, AsyncLog writes it and builds the summary from its records
// on a second thread; without, the engine keeps the summary itself
// (RunOptions::summary) and makes no job records.
void RunSide(Side& side, const RunOptions& run_options, bool with_log) {
  RunOptions options = run_options;
  SummaryBuilder summary;
  summary.set_wait_causes(options.wait_causes);
  std::ostringstream log;
  std::optional<AsyncLog> async;
  NullSink none;
  if (with_log) {
    async.emplace(&log, &summary);
  } else {
    options.summary = &side.summary;
    options.job_records = false;
  }
  LogSink& sink = async ? static_cast<LogSink&>(*async) : none;
  OpenedScenario& o = *side.opened;
  if (o.streamed()) {
    absl::StatusOr<RunStats> st = RunFastEngine(o.events(), *std::move(o.index), sink, options);
    if (!st.ok()) {
      side.error = st.status();
      return;
    }
    side.stats = *std::move(st);
  } else {
    side.stats = RunFastEngine(*o.whole, sink, options);
  }
  if (async) {
    async->Flush();
    side.summary = summary.Build(side.stats.invariant_violations);
  }
  side.log = log.str();
}

}  // namespace

int WhatIfCommand(const std::vector<std::string>& args) {
  po::options_description opts("quotasim whatif SCENARIO.json|SCENARIO.qsb --set KEY=VALUE [--set ...] [options]");
  std::string scenario_path, out_dir, format_name = "table";
  std::vector<std::string> sets, common;
  int threads = 0;
  int64_t cycle_preemptions = kDefaultCyclePreemptions;
  opts.add_options()("help,h", "show this help")(
      "set", po::value<std::vector<std::string>>(&sets),
      "KEY=VALUE: the change to try (repeatable), e.g. QS1.borrowLimit=0, QS1.strategy=RESERVE, "
      "QS1.capacityLimits.ml.g5.xlarge=4, environment.capacityLimits.ml.g5.xlarge=8, preemptionDrainSeconds=60")(
      "common", po::value<std::vector<std::string>>(&common),
      "KEY=VALUE both runs get (repeatable), e.g. the latency knobs `quotasim calibrate` found")(
      "out", po::value<std::string>(&out_dir),
      "also write base/changed summaries and whatif.json/.csv into this folder (new or empty, or --force)")(
      "force", "replace the files of an earlier run in --out (a folder quotasim made)")(
      "events", "with --out: also write both event logs (base.events.jsonl, changed.events.jsonl)")(
      "wait-causes",
      "both runs write cause lines and waitByCauseSeconds, as `run --wait-causes` (docs/semantics.md §9)")(
      "format", po::value<std::string>(&format_name)->default_value("table"),
      "the comparison on stdout: table (aligned, human units) | csv | json")(
      "threads", po::value<int>(&threads)->default_value(0),
      "worker threads (0 = all cores); output bytes never depend on it")(
      "no-check", "skip the invariant checks after every event")(
      "cycle-preemptions", po::value<int64_t>(&cycle_preemptions)->default_value(kDefaultCyclePreemptions),
      "the preemption-cycle guard of `quotasim run` (0 = never)");
  const std::initializer_list<Positional> positionals = {{"scenario", &scenario_path}};
  po::variables_map vm;
  if (std::optional<int> done = ParseCommandLine(
          "whatif", args, opts, positionals,
          "\nRuns the scenario as written and with the --set changes, and prints per share the change in\n"
          "wait p50/p95/p99, jobs succeeded, preemptions and lost instance-hours. Keys: " +
              Overrides::KeysHelp() +
              ".\nExit 0; 1 when a run could not complete (preemption-cycle guard, invariant violations, I/O);\n"
              "2 on a usage error, an invalid scenario or a --set that does not fit the scenario.\n",
          vm)) {
    return *done;
  }
  if (scenario_path.empty()) return UsageError("whatif", "missing SCENARIO argument");
  if (sets.empty()) return UsageError("whatif", "give at least one --set KEY=VALUE to try");
  if (threads < 0) return UsageError("whatif", "--threads must be >= 0");
  if (cycle_preemptions < 0) return UsageError("whatif", "--cycle-preemptions must be >= 0");
  const std::optional<TableFormat> format = ParseTableFormat(format_name);
  if (!format) return UsageError("whatif", "--format must be table, csv or json, not '" + format_name + "'");
  const bool with_log = vm.count("events") > 0;
  if (with_log && out_dir.empty()) return UsageError("whatif", "--events needs --out DIR");
  std::vector<std::string> changed_sets = common;
  changed_sets.insert(changed_sets.end(), sets.begin(), sets.end());
  absl::StatusOr<Overrides> base_overrides = Overrides::Parse(common);
  if (!base_overrides.ok()) return UsageError("whatif", std::string(base_overrides.status().message()));
  absl::StatusOr<Overrides> overrides = Overrides::Parse(changed_sets);
  if (!overrides.ok()) return UsageError("whatif", std::string(overrides.status().message()));
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                  static_cast<size_t>(threads == 0 ? tbb::info::default_concurrency() : threads));

  Side sides[2];
  sides[0].name = "base";
  sides[0].sets = common;
  sides[1].name = "changed";
  sides[1].sets = changed_sets;
  for (Side& side : sides) {
    absl::StatusOr<OpenedScenario> opened =
        OpenScenario(scenario_path, /*stream_qsb=*/true, &side == &sides[0] ? *base_overrides : *overrides);
    if (!opened.ok()) return ReportError(opened.status());
    side.opened = *std::move(opened);
    for (const ScenarioEvent& ev : side.opened->whole ? side.opened->whole->events : side.opened->index->share_requests) {
      side.declared.Note(ev, side.opened->head());
    }
  }
  if (!out_dir.empty()) {
    if (absl::Status st = PrepareOutDir(out_dir, vm.count("force") > 0, /*shared=*/false, "whatif"); !st.ok()) {
      return ReportError(st);
    }
  }
  RunOptions options;
  options.check_invariants = vm.count("no-check") == 0;
  options.cycle_preemptions = cycle_preemptions;
  options.wait_causes = vm.count("wait-causes") > 0;
  tbb::parallel_invoke([&] { RunSide(sides[0], options, with_log); }, [&] { RunSide(sides[1], options, with_log); });
  int code = kExitOk;
  for (Side& side : sides) {
    if (!side.error.ok()) return ReportError(side.error);
    side.summary.run = RunProvenance{scenario_path, "fast", ToolVersion(), side.opened->head().knobs,
                                     cycle_preemptions, options.check_invariants, side.stats.stopped, side.sets,
                                     options.wait_causes};
    for (const std::string& v : side.stats.violation_messages) {
      std::cerr << "quotasim: " << side.name << " run: INVARIANT VIOLATION: " << v << "\n";
    }
    if (!side.stats.stopped.empty()) {
      std::cerr << "quotasim: " << side.name << " run: " << side.stats.stopped << "\n";
      code = kExitError;
    }
    if (side.stats.invariant_violations > 0) code = kExitError;
  }
  const Side& a = sides[0];
  const Side& b = sides[1];
  if (!out_dir.empty()) {
    std::vector<std::pair<std::string, std::string>> files = {
        {"base.summary.json", SummaryToJson(a.summary)},
        {"changed.summary.json", SummaryToJson(b.summary)},
        {"whatif.json", WhatIfTable(a.summary, a.declared.shares(), b.summary, b.declared.shares(), TableFormat::kJson)},
        {"whatif.csv", WhatIfTable(a.summary, a.declared.shares(), b.summary, b.declared.shares(), TableFormat::kCsv)}};
    if (with_log) {
      files.push_back({"base.events.jsonl", a.log});
      files.push_back({"changed.events.jsonl", b.log});
    }
    for (const auto& [name, text] : files) {
      AtomicFile f((fs::path(out_dir) / name).string());
      f.stream() << text;
      if (absl::Status st = f.Commit(); !st.ok()) return ReportError(st);
    }
  }
  if (*format == TableFormat::kTable) {
    std::cout << "what-if: " << scenario_path << " with "
              << absl::StrJoin(sets, " ") << (common.empty() ? "" : " (both runs: " + absl::StrJoin(common, " ") + ")")
              << "\n";
  }
  std::cout << WhatIfTable(a.summary, a.declared.shares(), b.summary, b.declared.shares(), *format);
  if (*format == TableFormat::kTable && !out_dir.empty()) std::cout << "written to " << out_dir << "\n";
  return code;
}

}  // namespace qs
