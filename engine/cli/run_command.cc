// `quotasim run` and `quotasim validate`.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boost/program_options.hpp"
#include "engine/log/async_log.h"
#include "engine/cli/command_line.h"
#include "engine/cli/commands.h"
#include "engine/cli/preflight.h"
#include "engine/cli/scenario_file.h"
#include "engine/log/event_log.h"
#include "engine/gen/memory_budget.h"
#include "engine/gen/qsb.h"
#include "engine/run.h"
#include "engine/util/atomic_file.h"
#include "engine/util/gzip_ostream.h"
#include "engine/util/progress_ticker.h"
#include "engine/util/strings.h"
#include "engine/model/scenario_index.h"
#include "engine/io/scenario_json.h"
#include "engine/log/share_table.h"
#include "engine/log/summary.h"
#include "oneapi/tbb/global_control.h"
#include "oneapi/tbb/info.h"

namespace po = boost::program_options;

namespace qs {
namespace {

// Progress of a long run on stderr, on a terminal only (never in a pipe or
// a log file): simulated time and jobs submitted out of the scenario's,
// redrawn at most once a second, when the engine reports progress
// (LogSink::OnProgress, every 64Ki events).
class RunProgress : public LogSink {
 public:
  explicit RunProgress(int64_t jobs) : jobs_(jobs), on_(isatty(STDERR_FILENO) != 0) {}
  ~RunProgress() override { Clear(); }
  void OnJob(const JobRecord&) override {}
  void OnProgress(SimTime now, int64_t submitted) override {
    if (!on_) return;
    const auto clock = std::chrono::steady_clock::now();
    if (clock - last_ < std::chrono::seconds(1)) return;
    last_ = clock;
    const double pct = jobs_ > 0 ? 100.0 * static_cast<double>(submitted) / static_cast<double>(jobs_) : 0.0;
    std::fprintf(stderr, "\r\033[Kquotasim run: simulated %.1f days, %lld of %lld jobs submitted (%.0f%%)",
                 static_cast<double>(now) / (86400.0 * kMillisPerSecond), static_cast<long long>(submitted),
                 static_cast<long long>(jobs_), pct);
    shown_ = true;
  }
  void OnSnapshot(const SnapshotRecord&) override {}
  void OnRejected(const RejectedRecord&) override {}
  // Erases the progress line (before anything else is printed).
  void Clear() {
    if (!shown_) return;
    std::fprintf(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  const int64_t jobs_;
  const bool on_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  bool shown_ = false;
};

// What went wrong in a run that still completed: rejected requests (the
// first few reported on stderr as they happen, naming the file and the JSON
// path) and jobs that never ran because their share or the environment
// cannot hold them (Summary::never_ran). Print() writes the closing
// warnings block; `run --strict` makes it an error.
class RunWarnings : public LogSink {
 public:
  // `progress`: erased before a line is printed.
  RunWarnings(std::string source, RunProgress* progress) : source_(std::move(source)), progress_(progress) {}
  void OnJob(const JobRecord&) override {}
  void OnSnapshot(const SnapshotRecord&) override {}
  void OnRejected(const RejectedRecord& r) override {
    if (++rejected_ <= kShown) {
      progress_->Clear();
      std::fprintf(stderr, "quotasim: %s: %.*s: %.*s rejected at t=%s: %.*s\n", source_.c_str(),
                   static_cast<int>(r.path.size()), r.path.data(), static_cast<int>(r.action.size()),
                   r.action.data(), FormatSeconds(r.time).c_str(), static_cast<int>(r.message.size()),
                   r.message.data());
    }
  }

  bool any(const Summary& s) const { return rejected_ > 0 || s.never_ran > 0; }
  // The warnings block (nothing when there is nothing to say).
  void Print(const Summary& s, bool logged) const {
    if (rejected_ == 0 && s.never_ran == 0) return;
    std::fprintf(stderr, "quotasim: %s: warnings:\n", source_.c_str());
    if (rejected_ > 0) {
      std::fprintf(stderr, "  %lld request(s) rejected (%s)\n", static_cast<long long>(rejected_),
                   rejected_ <= kShown ? "listed above"
                   : logged        ? "the first 20 above; the event log has them all"
                                   : "the first 20 above; --events FILE logs them all");
    }
    if (s.never_ran > 0) {
      std::fprintf(stderr, "  %lld job(s) never ran: their share's limits or the environment cannot hold them (e.g. %s)\n",
                   static_cast<long long>(s.never_ran), s.never_ran_example.c_str());
    }
  }

 private:
  static constexpr int64_t kShown = 20;
  std::string source_;
  RunProgress* progress_;
  int64_t rejected_ = 0;
};

}  // namespace

int RunCommand(const std::vector<std::string>& args) {
  po::options_description opts("quotasim run SCENARIO.json|SCENARIO.qsb [options]");
  std::string scenario_path, events_path, summary_path, engine_name = "fast", format_name = "table";
  int threads = 0;
  int64_t cycle_preemptions = kDefaultCyclePreemptions;
  std::vector<std::string> sets;
  opts.add_options()("help,h", "show this help")(
      "set", po::value<std::vector<std::string>>(&sets),
      "KEY=VALUE: change a setting for this run, e.g. QS1.borrowLimit=50, QS1.strategy=LEND, "
      "QS1.capacityLimits.ml.g5.xlarge=4, environment.capacityLimits.ml.g5.xlarge=8, "
      "jobQueue.timeLimit.MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT=600, preemptionDrainSeconds=60 "
      "(repeatable; README, What-if)")(
      "events", po::value<std::string>(&events_path),
      "write the event log (JSON Lines) to this file; - for standard output; a name ending in .gz is "
      "gzip-compressed")(
      "summary", po::value<std::string>(&summary_path),
      "write the run summary (JSON) to this file; - for standard output")(
      "threads", po::value<int>(&threads)->default_value(0),
      "worker threads (0 = all cores); output bytes never depend on it")(
      "engine", po::value<std::string>(&engine_name)->default_value("fast"),
      "fast | reference (the simple, slow engine the fast one is checked against)")(
      "no-check", "skip the invariant checks after every event")(
      "full-check", "also recount all accounting after every event (slow; fast engine)")(
      "cycle-preemptions", po::value<int64_t>(&cycle_preemptions)->default_value(kDefaultCyclePreemptions),
      "stop a run caught in a preemption cycle once a job is preempted this often with nothing "
      "finishing in between (exit 1; 0 = never)")(
      "wait-causes",
      "add a cause line (waitCause key) each time a RUNNABLE job's reason for waiting changes, and "
      "waitByCauseSeconds to the summary (docs/semantics.md §9; off, the log is the spec's)")(
      "quiet,q", "do not print the per-share table")(
      "format", po::value<std::string>(&format_name)->default_value("table"),
      "the per-share table: table (aligned, human units) | csv | json (seconds and instance-hours)")(
      "strict", "exit 2 when requests were rejected or jobs never ran (the warnings block)");
  const std::initializer_list<Positional> positionals = {{"scenario", &scenario_path}};
  po::variables_map vm;
  if (std::optional<int> done = ParseCommandLine("run", args, opts, positionals,
                                                 "\nPrints a per-share table to stdout. Exit 0 on a completed run; 1 when the run could not\n"
                 "complete (stopped in a preemption cycle, invariant violations, I/O errors); 2 on a usage\n"
                 "error or an invalid scenario document (--strict: also when requests were rejected or\n"
                 "jobs never ran). Rejected requests are logged and reported on stderr while the run goes\n"
                 "on; a warnings block at the end counts them and the jobs that never ran.\n", vm)) {
    return *done;
  }
  if (scenario_path.empty()) return UsageError("run", "missing SCENARIO argument");
  if (engine_name != "fast" && engine_name != "reference") {
    return UsageError("run", "--engine must be fast or reference, not '" + engine_name + "'");
  }
  if (threads < 0) return UsageError("run", "--threads must be >= 0");
  for (const std::string& bad : {UnwritableCompression("--events", events_path, /*gzip=*/true, ".jsonl"),
                                 UnwritableCompression("--summary", summary_path, /*gzip=*/false, ".json")}) {
    if (!bad.empty()) return UsageError("run", bad);
  }
  if (cycle_preemptions < 0) return UsageError("run", "--cycle-preemptions must be >= 0");
  if (const std::string clash = OutputClash({{"--events", events_path}, {"--summary", summary_path}},
                                            {{"SCENARIO", scenario_path}});
      !clash.empty()) {
    return UsageError("run", clash);
  }
  const std::optional<TableFormat> format = ParseTableFormat(format_name);
  if (!format) return UsageError("run", "--format must be table, csv or json, not '" + format_name + "'");
  const int workers = threads == 0 ? tbb::info::default_concurrency() : threads;
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                  static_cast<size_t>(workers));

  // A .qsb run on the fast engine streams the file: the engine keeps its
  // compact job records and decodes the blocks as it reaches them. Every
  // block is read and checked once before any output is created.
  absl::StatusOr<Overrides> overrides = Overrides::Parse(sets);
  if (!overrides.ok()) return UsageError("run", std::string(overrides.status().message()));
  absl::StatusOr<OpenedScenario> opened =
      OpenScenario(scenario_path, /*stream_qsb=*/engine_name == "fast", *overrides);
  if (!opened.ok()) return ReportError(opened.status());
  // The shares as the scenario declares them, for the per-share table.
  ShareDeclarations declared;
  for (const ScenarioEvent& ev : opened->whole ? opened->whole->events : opened->index->share_requests) {
    declared.Note(ev, opened->head());
  }

  // Outputs appear under their names only when complete (AtomicFile): an
  // interrupted or failed run leaves the previous files, never partial ones.
  // "-" is standard output; then the per-share table goes to stderr.
  if (events_path == "-" && summary_path == "-") {
    return UsageError("run", "--events and --summary cannot both be standard output");
  }
  std::unique_ptr<AtomicFile> events_file, summary_file;
  for (auto [path, file] : {std::pair{&events_path, &events_file}, std::pair{&summary_path, &summary_file}}) {
    if (path->empty()) continue;
    *file = std::make_unique<AtomicFile>(*path);
    if (!(*file)->ok()) {
      std::cerr << "quotasim: cannot write " << *path << "\n";
      return kExitError;
    }
  }
  std::ostream& table_out = events_path == "-" || summary_path == "-" ? std::cerr : std::cout;
  SummaryBuilder summary;
  // A log named *.gz is gzip-compressed as it is written.
  const bool gzip_log = events_path.size() > 3 && events_path.compare(events_path.size() - 3, 3, ".gz") == 0;
  std::unique_ptr<GzipOstream> gz;
  if (events_file && gzip_log) gz = std::make_unique<GzipOstream>(events_file->stream());
  std::ostream* log_out = gz ? gz.get() : events_file ? &events_file->stream() : nullptr;
  // With a log, AsyncLog formats and writes it and builds the summary from
  // its records on a second thread. With no log, the fast engine keeps the
  // summary itself and makes no job records (RunOptions::summary;
  // BM_SummaryWay compares the ways), and the reference engine's records
  // build it on the engine's thread: handing them to a second thread cost
  // more CPU than building it and gained no wall time.
  std::optional<AsyncLog> async;
  if (log_out != nullptr) async.emplace(log_out, &summary);
  const bool summary_in_engine = log_out == nullptr && engine_name == "fast";
  RunProgress progress(opened->head().submit_count);
  RunWarnings warnings(scenario_path, &progress);
  std::vector<LogSink*> sinks{&progress, &warnings};
  if (!summary_in_engine) sinks.insert(sinks.begin(), async ? static_cast<LogSink*>(&*async) : &summary);
  TeeSink tee(std::move(sinks));
  Summary result;
  RunOptions options;
  if (summary_in_engine) {
    options.summary = &result;
    options.job_records = false;
  }
  options.check_invariants = vm.count("no-check") == 0;
  options.full_invariant_check = vm.count("full-check") > 0;
  options.cycle_preemptions = cycle_preemptions;
  options.wait_causes = vm.count("wait-causes") > 0;
  summary.set_wait_causes(options.wait_causes);
  RunStats stats;
  if (opened->streamed()) {
    absl::StatusOr<RunStats> streamed = RunFastEngine(opened->events(), *std::move(opened->index), tee, options);
    if (!streamed.ok()) return ReportError(streamed.status());
    stats = *std::move(streamed);
  } else {
    stats = engine_name == "fast" ? RunFastEngine(*opened->whole, tee, options)
                                  : RunReferenceEngine(*opened->whole, tee, options.check_invariants,
                                                       options.cycle_preemptions, options.wait_causes);
  }
  if (async) async->Flush();
  progress.Clear();
  if (gz && !gz->Finish()) return ReportError(absl::DataLossError("cannot write " + events_path));
  if (events_file) {
    if (absl::Status st = events_file->Commit(); !st.ok()) return ReportError(st);
  }
  if (!summary_in_engine) result = summary.Build(stats.invariant_violations);
  result.run = RunProvenance{scenario_path,      engine_name, ToolVersion(), opened->head().knobs, cycle_preemptions,
                             options.check_invariants, stats.stopped, sets, options.wait_causes};
  if (summary_file) {
    summary_file->stream() << SummaryToJson(result);
    if (absl::Status st = summary_file->Commit(); !st.ok()) return ReportError(st);
  }
  for (const std::string& v : stats.violation_messages) {
    std::cerr << "quotasim: INVARIANT VIOLATION: " << v << "\n";
  }
  if (vm.count("quiet") == 0) {
    table_out << ShareTable(result, declared.shares(), *format);
    // csv and json: the rows alone, for a program to read as they are.
    if (*format == TableFormat::kTable) {
      table_out << "event log: "
                << (events_path.empty() ? "(not written; use --events FILE)"
                    : events_path == "-" ? "(standard output)"
                                         : events_path)
                << "\n";
      if (!summary_path.empty()) {
        table_out << "summary: " << (summary_path == "-" ? "(standard output)" : summary_path) << "\n";
      }
    }
  }
  warnings.Print(result, /*logged=*/events_file != nullptr && !events_file->is_stdout());
  if (!stats.stopped.empty()) {
    // The log and summary were written up to the stop, as at a horizon.
    std::cerr << "quotasim: " << scenario_path << ": " << stats.stopped << "\n";
    return kExitError;
  }
  if (vm.count("strict") && warnings.any(result)) {
    std::cerr << "quotasim: " << scenario_path << ": --strict: the run met the problems above\n";
    return kExitInvalidDocument;
  }
  return kExitOk;
}

int ValidateCommand(const std::vector<std::string>& args) {
  std::string path;
  po::options_description opts("quotasim validate SCENARIO.json|SCENARIO.qsb [options]");
  opts.add_options()("help,h", "show this help")(
      "strict", "exit 2 when a run would meet rejected requests or jobs that never run");
  const std::initializer_list<Positional> positionals = {{"scenario", &path}};
  po::variables_map vm;
  if (std::optional<int> done = ParseCommandLine(
          "validate", args, opts, positionals,
          "\nParses the scenario document (a .qsb file block by block, with the checks of `quotasim run`)\n"
          "and reports the first problem with its JSON path (exit 2). A valid document is then checked\n"
          "for what a run would meet (engine/cli/preflight.h): requests AWS would reject whatever the\n"
          "jobs do, shares limited on instance types the environment lacks, jobs that never fit the\n"
          "environment; each is listed with its JSON path. Exit 0, or 2 under --strict when any is found.\n",
          vm)) {
    return *done;
  }
  if (path.empty()) return UsageError("validate", "missing SCENARIO argument");
  // A .qsb file is streamed: read and checked block by block, never held whole.
  std::atomic<int64_t> blocks_done{0}, blocks_total{0};
  ProgressTicker ticker("quotasim validate", [&] {
    const int64_t total = blocks_total.load(std::memory_order_relaxed);
    return total == 0 ? std::string("reading and checking the document")
                      : absl::StrCat(blocks_done.load(std::memory_order_relaxed), " of ", total,
                                     " event blocks checked for what a run would meet");
  });
  absl::StatusOr<OpenedScenario> opened = OpenScenario(path, /*stream_qsb=*/true);
  if (!opened.ok()) {
    ticker.Stop();
    return ReportError(opened.status());
  }
  if (opened->stream) blocks_total = static_cast<int64_t>(2 * opened->stream->num_blocks());
  Preflight preflight(opened->head());
  for (int pass = 0; pass < 2; ++pass) {
    auto visit = [&](const ScenarioEvent& ev) {
      if (pass == 0) {
        preflight.NoteEnvironment(ev);
      } else {
        preflight.Check(ev);
      }
    };
    if (opened->whole) {
      for (const ScenarioEvent& ev : opened->whole->events) visit(ev);
      continue;
    }
    std::vector<ScenarioEvent> block;
    for (size_t b = 0; b < opened->stream->num_blocks(); ++b) {
      if (absl::Status st = opened->stream->ReadBlock(b, block); !st.ok()) {
        ticker.Stop();
        return ReportError(st);
      }
      for (const ScenarioEvent& ev : block) visit(ev);
      blocks_done.fetch_add(1, std::memory_order_relaxed);
    }
  }
  ticker.Stop();
  std::cout << path << ": valid, " << opened->num_events() << " requests, " << opened->head().submit_count
            << " job submissions\n";
  if (preflight.total() == 0) return kExitOk;
  constexpr size_t kShown = 20;
  std::cout << path << ": " << preflight.total() << " problem(s) a run would meet:\n";
  for (size_t i = 0; i < std::min(kShown, preflight.findings().size()); ++i) {
    std::cout << "  " << preflight.findings()[i].path << ": " << preflight.findings()[i].message << "\n";
  }
  if (preflight.total() > static_cast<int64_t>(kShown)) {
    std::cout << "  ... and " << preflight.total() - static_cast<int64_t>(kShown) << " more\n";
  }
  return vm.count("strict") ? kExitInvalidDocument : kExitOk;
}

}  // namespace qs

