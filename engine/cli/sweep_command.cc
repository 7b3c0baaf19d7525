// `quotasim sweep`: many (scenario x knob) variants in parallel.
//
//   quotasim sweep A.json [B.qsb ...] --vary preemptionDrainSeconds=0,20,60
//                  --vary shareOrder=UNDER_LIMIT_FIRST,ROUND_ROBIN --out DIR
//
// Every combination of the --vary values is run on every scenario with the
// fast engine. A --vary or --set key is any `quotasim run --set` key
// (engine/io/overrides.h): simulation knobs and share, environment and
// queue settings. Variants run in parallel under oneTBB, each writing its own
// slot; files are written afterwards in variant order, so the output is the
// same bytes whatever --threads is, and the same as running each variant
// alone with `quotasim run`. Writes DIR/<scenario>__<variant>.summary.json
// and DIR/sweep.csv (one row per variant). --shard K/N runs every N-th
// variant starting at K (defaults from AWS Batch / Slurm / Kubernetes
// job-array variables, as `quotasim compare`) so a sweep can span machines.
// A .qsb scenario is checked once and streamed by each variant; a JSON one
// is held whole and shared by its variants.
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "boost/program_options.hpp"
#include "engine/cli/command_line.h"
#include "engine/cli/commands.h"
#include "engine/cli/scenario_file.h"
#include "engine/gen/memory_budget.h"
#include "engine/gen/qsb.h"
#include "engine/io/overrides.h"
#include "engine/run.h"
#include "engine/model/scenario_index.h"
#include "engine/log/summary.h"
#include "engine/trace/report.h"
#include "engine/util/atomic_file.h"
#include "engine/util/progress_ticker.h"
#include "engine/util/out_dir.h"
#include "oneapi/tbb/global_control.h"
#include "oneapi/tbb/info.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/partitioner.h"

namespace po = boost::program_options;

namespace qs {
namespace {

struct Axis {
  std::string key;
  std::vector<std::string> values;
};

// A variant's name as a file name: "*" (every share) reads "all", and no
// character a shell or a file system treats specially is left.
std::string FileName(std::string name) {
  std::string out;
  for (char c : name) {
    if (c == '*') {
      out += "all";
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '=' ||
               c == ',' || c == ':') {
      out += c;
    } else {
      out += '_';
    }
  }
  return out;
}

// A variant's scenario for a streamed file: the index of the file with the
// variant's share requests (`share_requests`, the overrides applied when
// they were checked) and instance types (its job names are the same).
ScenarioIndex IndexWith(const ScenarioIndex& base, const Overrides& o, const std::vector<ScenarioEvent>& share_requests) {
  ScenarioIndex idx = base;
  idx.share_requests = share_requests;
  for (const std::string& u : o.Units()) {
    auto it = std::lower_bound(idx.units.begin(), idx.units.end(), u);
    if (it == idx.units.end() || *it != u) idx.units.insert(it, u);
  }
  return idx;
}

}  // namespace

int SweepCommand(const std::vector<std::string>& args) {
  std::vector<std::string> scenarios, vary, sets;
  std::string out_dir, shard;
  bool force = false, wait_causes = false;
  int threads = 0;
  po::options_description opts("quotasim sweep SCENARIO... --vary knob=v1,v2 [--vary ...] --out DIR");
  opts.add_options()("help,h", "show this help")(
      "vary", po::value<std::vector<std::string>>(&vary),
      "a setting and its values, e.g. shareOrder=ROUND_ROBIN,DECLARATION or QS1.borrowLimit=0,50,100 (any --set key)")(
      "set", po::value<std::vector<std::string>>(&sets), "KEY=VALUE: a change every variant gets (see quotasim run --help)")(
      "out", po::value<std::string>(&out_dir), "output folder: new or empty (or --force)")(
      "force", po::bool_switch(&force), "replace the files of an earlier run in --out (a folder quotasim made)")(
      "wait-causes", po::bool_switch(&wait_causes),
      "every variant's summary gets waitByCauseSeconds, as `run --wait-causes` (docs/semantics.md §9)")(
      "threads", po::value<int>(&threads)->default_value(0), "worker threads (0 = all cores); output never depends on it")(
      "shard", po::value<std::string>(&shard), "K/N: run variants K, K+N, K+2N, ... (default from job-array variables)");
  const std::initializer_list<Positional> positionals = {{"scenario", nullptr, &scenarios}};
  po::variables_map vm;
  if (std::optional<int> done = ParseCommandLine("sweep", args, opts, positionals,
                                                 "", vm)) {
    return *done;
  }
  if (scenarios.empty() || out_dir.empty()) return UsageError("sweep", "SCENARIO and --out are required");
  // The same shard rules as `quotasim compare` (engine/trace/report.h).
  trace::Shard sh;
  if (!shard.empty()) {
    absl::StatusOr<trace::Shard> parsed = trace::ParseShard(shard);
    if (!parsed.ok()) return UsageError("sweep", "--shard: " + std::string(parsed.status().message()));
    sh = *parsed;
  } else {
    absl::StatusOr<std::optional<trace::Shard>> env = trace::ShardFromEnvironment(&std::getenv);
    if (!env.ok()) return UsageError("sweep", std::string(env.status().message()));
    if (*env) sh = **env;
  }
  const int64_t shard_k = sh.index, shard_n = sh.count;
  absl::StatusOr<Overrides> fixed = Overrides::Parse(sets);
  if (!fixed.ok()) return UsageError("sweep", std::string(fixed.status().message()));
  std::vector<Axis> axes;
  for (const std::string& v : vary) {
    const size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == v.size()) {
      return UsageError("sweep", "--vary expects KEY=v1,v2,..., got '" + v + "'; " + Overrides::KeysHelp());
    }
    Axis a{v.substr(0, eq), absl::StrSplit(v.substr(eq + 1), ',')};
    for (const std::string& value : a.values) {
      if (absl::StatusOr<Overrides::Item> it = Overrides::ParseItem(a.key + "=" + value); !it.ok()) {
        std::string m(it.status().message());
        if (m.rfind("--set ", 0) == 0) m.erase(0, 6);
        return UsageError("sweep", "--vary " + m);
      }
    }
    axes.push_back(std::move(a));
  }
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                  static_cast<size_t>(threads <= 0 ? tbb::info::default_concurrency() : threads));
  // A .qsb scenario is streamed by every variant (as `quotasim run` does):
  // each run keeps only its engine's compact records, and the file is read
  // and checked whole once, here. A JSON one is held whole and shared.
  std::vector<OpenedScenario> loaded;
  for (const std::string& path : scenarios) {
    absl::StatusOr<OpenedScenario> opened = OpenScenario(path, /*stream_qsb=*/true);
    if (!opened.ok()) return ReportError(opened.status());
    loaded.push_back(*std::move(opened));
  }
  // Variants: scenario-major, then the cartesian product of the axes with the
  // last axis varying fastest. Each is the --set overrides, then its values.
  struct Variant {
    size_t scenario;
    Overrides overrides;
    Knobs knobs;
    std::string name;
    std::vector<std::string> sets;
    // Its scenario's CreateQuotaShare / UpdateQuotaShare requests with the
    // overrides applied (checked before any run; a streamed run's index).
    std::vector<ScenarioEvent> share_requests;
  };
  std::vector<Variant> variants;
  size_t combos = 1;
  for (const Axis& a : axes) combos *= a.values.size();
  for (size_t s = 0; s < loaded.size(); ++s) {
    for (size_t c = 0; c < combos; ++c) {
      Variant v{s, {}, {}, std::filesystem::path(scenarios[s]).stem().string(), sets, {}};
      size_t rest = c;
      std::vector<std::string> parts;
      for (size_t ai = axes.size(); ai-- > 0;) {
        const Axis& a = axes[ai];
        const std::string& value = a.values[rest % a.values.size()];
        rest /= a.values.size();
        parts.insert(parts.begin(), a.key + "=" + value);
      }
      for (const std::string& p : parts) v.name += "__" + p;
      v.sets.insert(v.sets.end(), parts.begin(), parts.end());
      absl::StatusOr<Overrides> o = Overrides::Parse(v.sets);
      if (!o.ok()) return UsageError("sweep", std::string(o.status().message()));
      v.overrides = *std::move(o);
      // The variant's changes checked against its scenario before any run:
      // a share it does not have, a request AWS would then reject.
      Scenario head = loaded[s].head();
      if (absl::Status st = v.overrides.ApplyToHead(head); !st.ok()) return ReportError(st);
      v.knobs = head.knobs;
      std::vector<ScenarioEvent> share_requests;
      if (loaded[s].whole) {
        for (const ScenarioEvent& ev : loaded[s].whole->events) {
          if (std::holds_alternative<CreateQuotaShareRequest>(ev.request) ||
              std::holds_alternative<UpdateQuotaShareRequest>(ev.request)) {
            share_requests.push_back(ev);
          }
        }
      } else {
        share_requests = loaded[s].index->share_requests;
      }
      for (ScenarioEvent& ev : share_requests) {
        if (absl::Status st = v.overrides.ApplyToEvent(ev); !st.ok()) return ReportError(st);
      }
      if (absl::Status st = v.overrides.CheckShares(share_requests); !st.ok()) return ReportError(st);
      if (!loaded[s].whole && v.overrides.touches_requests()) v.share_requests = std::move(share_requests);
      variants.push_back(std::move(v));
    }
  }
  // The folder holds this sweep's files only (engine/util/out_dir.h).
  if (absl::Status st = PrepareOutDir(out_dir, force, shard_n > 1, "sweep"); !st.ok()) return ReportError(st);
  std::vector<size_t> mine;
  for (size_t i = 0; i < variants.size(); ++i) {
    if (static_cast<int64_t>(i) % shard_n == shard_k) mine.push_back(i);
  }
  std::vector<std::string> summaries(mine.size());
  std::vector<Summary> results(mine.size());
  std::vector<absl::Status> errors(mine.size());
  std::vector<std::string> stopped(mine.size());  // RunStats::stopped
  std::atomic<int64_t> done{0};
  ProgressTicker ticker("quotasim sweep", [&] {
    return absl::StrCat(done.load(std::memory_order_relaxed), " of ", mine.size(), " variants done");
  });
  // One task per variant (simple_partitioner, grain 1): whole engine runs
  // of unequal length, balanced by work stealing. Each writes only its slot.
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, mine.size(), 1),
      [&](const tbb::blocked_range<size_t>& range) {
        for (size_t slot = range.begin(); slot != range.end(); ++slot) {
          const Variant& v = variants[mine[slot]];
          // The engine keeps the summary itself (RunOptions::summary).
          NullSink b;
          RunOptions o;
          o.check_invariants = true;
          o.wait_causes = wait_causes;
          o.knobs = v.knobs;
          o.summary = &results[slot];
          o.job_records = false;
          const OpenedScenario& l = loaded[v.scenario];
          const bool changes_requests = v.overrides.touches_requests();
          RunStats stats;
          absl::StatusOr<RunStats> streamed;
          if (l.whole && !changes_requests) {
            stats = RunFastEngine(*l.whole, b, o);
          } else if (l.whole) {
            Scenario changed = *l.whole;  // the variant's own copy
            if (absl::Status st = ApplyOverrides(v.overrides, changed); !st.ok()) {
              errors[slot] = st;
              continue;
            }
            stats = RunFastEngine(changed, b, o);
          } else {
            if (changes_requests) {
              const OverriddenStream view(*l.stream, v.overrides);
              streamed = RunFastEngine(view, IndexWith(*l.index, v.overrides, v.share_requests), b, o);
            } else {
              streamed = RunFastEngine(*l.stream, *l.index, b, o);
            }
            if (!streamed.ok()) {
              errors[slot] = streamed.status();
              continue;
            }
            stats = *std::move(streamed);
          }
          stopped[slot] = stats.stopped;
          results[slot].run = RunProvenance{scenarios[v.scenario], "fast", ToolVersion(), v.knobs,
                                            o.cycle_preemptions, o.check_invariants, std::move(stats.stopped),
                                            v.sets, wait_causes};
          summaries[slot] = SummaryToJson(results[slot]);
          done.fetch_add(1, std::memory_order_relaxed);
        }
      },
      tbb::simple_partitioner());
  ticker.Stop();
  for (const absl::Status& st : errors) {
    if (!st.ok()) return ReportError(st);  // a block that no longer reads as it did
  }
  AtomicFile csv_file((std::filesystem::path(out_dir) / (shard_n > 1 ? absl::StrCat("sweep.shard-", shard_k, "-of-", shard_n, ".csv") : std::string("sweep.csv"))).string());
  std::ostream& csv = csv_file.stream();
  csv << "variant,jobs_submitted,jobs_succeeded,jobs_failed,jobs_unfinished,wait_p50_s,wait_p95_s,wait_p99_s,"
         "preemptions_cross,preemptions_in,work_lost_instance_s,reclaim_p99_s,invariant_violations,status\n";
  for (size_t slot = 0; slot < mine.size(); ++slot) {
    const Variant& v = variants[mine[slot]];
    AtomicFile f((std::filesystem::path(out_dir) / (FileName(v.name) + ".summary.json")).string());
    f.stream() << summaries[slot];
    const Summary& r = results[slot];
    const ShareSummary& t = r.total;
    csv << v.name << "," << t.submitted << "," << t.succeeded << "," << t.failed << "," << t.unfinished << ","
        << FormatSeconds(t.wait.p50) << "," << FormatSeconds(t.wait.p95) << "," << FormatSeconds(t.wait.p99) << ","
        << t.preempted_cross << "," << t.preempted_in << "," << FormatSeconds(t.work_lost_instance_ms) << ","
        << FormatSeconds(t.reclaim.p99) << "," << r.invariant_violations << ","
        // A variant stopped in a preemption cycle was written up to its stop
        // (why: stderr); its figures are not a complete run's.
        << (stopped[slot].empty() ? "complete" : "stopped") << "\n";
    if (absl::Status st = f.Commit(); !st.ok()) return ReportError(st);
  }
  if (absl::Status st = csv_file.Commit(); !st.ok()) return ReportError(st);
  std::cout << "quotasim sweep: " << mine.size() << " of " << variants.size() << " variants written to " << out_dir
            << "\n";
  // A variant caught in a preemption cycle was written up to its stop.
  bool any_stopped = false;
  for (size_t slot = 0; slot < mine.size(); ++slot) {
    if (stopped[slot].empty()) continue;
    std::cerr << "quotasim sweep: variant " << variants[mine[slot]].name << ": " << stopped[slot] << "\n";
    any_stopped = true;
  }
  return any_stopped ? kExitError : kExitOk;
}

}  // namespace qs
