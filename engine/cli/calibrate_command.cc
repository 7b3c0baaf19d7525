// `quotasim calibrate`: how far the simulation of an imported queue is from
// what AWS did, and which latency knobs (or any --set key) fit it best.
//
//   quotasim calibrate queue.json [--observed queue.observed.csv]
//       [--search provisionSeconds=0,60,120,240 --search downloadSeconds=0,60] [--set KEY=VALUE]
//
// Runs the scenario once per combination of the --search values (in
// parallel; the scenario as imported when there is none) and compares each
// job's simulated start with its observed one (engine/log/calibration.h):
// median and p90 absolute error, the bias, the share of jobs within a
// minute. Prints the variants best first (by median, then p90 absolute
// error, then the order given) and, for the best, the worst jobs and the
// --set line that reproduces it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "boost/program_options.hpp"
#include "engine/cli/command_line.h"
#include "engine/cli/commands.h"
#include "engine/cli/scenario_file.h"
#include "engine/io/overrides.h"
#include "engine/log/calibration.h"
#include "engine/log/share_table.h"
#include "engine/run.h"
#include "engine/util/atomic_file.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/global_control.h"
#include "oneapi/tbb/info.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/partitioner.h"

namespace po = boost::program_options;

namespace qs {

int CalibrateCommand(const std::vector<std::string>& args) {
  po::options_description opts("quotasim calibrate SCENARIO.json [--observed X.observed.csv] [--search KEY=v1,v2 ...]");
  std::string scenario_path, observed_path;
  std::vector<std::string> search, sets;
  int threads = 0, worst = 10;
  opts.add_options()("help,h", "show this help")(
      "observed", po::value<std::string>(&observed_path),
      "observed start times (default: SCENARIO.observed.csv, written by quotasim import aws)")(
      "search", po::value<std::vector<std::string>>(&search),
      "a setting and the values to try, e.g. provisionSeconds=0,60,120 (any --set key; repeatable: every "
      "combination is run)")(
      "set", po::value<std::vector<std::string>>(&sets), "KEY=VALUE: a change every variant gets")(
      "worst", po::value<int>(&worst)->default_value(10), "how many of the worst jobs to list")(
      "threads", po::value<int>(&threads)->default_value(0), "worker threads (0 = all cores)");
  const std::initializer_list<Positional> positionals = {{"scenario", &scenario_path}};
  po::variables_map vm;
  if (std::optional<int> done = ParseCommandLine(
          "calibrate", args, opts, positionals,
          "\nCompares each job's simulated start (its last RUNNING) with its observed start (the last attempt's\n"
          "startedAt) and, with --search, ranks the combinations of values by how well they fit.\n",
          vm)) {
    return *done;
  }
  if (scenario_path.empty()) return UsageError("calibrate", "missing SCENARIO argument");
  if (threads < 0 || worst < 0) return UsageError("calibrate", "--threads and --worst must be >= 0");
  if (observed_path.empty()) {
    const std::string ext = ".json";
    if (scenario_path.size() <= ext.size() || scenario_path.compare(scenario_path.size() - ext.size(), ext.size(), ext) != 0) {
      return UsageError("calibrate", "--observed FILE is required when the scenario is not a .json file");
    }
    observed_path = scenario_path.substr(0, scenario_path.size() - ext.size()) + ".observed.csv";
  }
  // The axes, checked as --set values.
  struct Axis {
    std::string key;
    std::vector<std::string> values;
  };
  std::vector<Axis> axes;
  for (const std::string& s : search) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
      return UsageError("calibrate", "--search expects KEY=v1,v2,..., got '" + s + "'");
    }
    Axis a{s.substr(0, eq), absl::StrSplit(s.substr(eq + 1), ',')};
    for (const std::string& v : a.values) {
      if (absl::StatusOr<Overrides::Item> it = Overrides::ParseItem(a.key + "=" + v); !it.ok()) {
        return UsageError("calibrate", std::string(it.status().message()));
      }
    }
    axes.push_back(std::move(a));
  }
  if (absl::StatusOr<Overrides> fixed = Overrides::Parse(sets); !fixed.ok()) {
    return UsageError("calibrate", std::string(fixed.status().message()));
  }
  std::string observed_text;
  {
    std::ifstream in(observed_path, std::ios::binary);
    if (!in) return ReportError(absl::InvalidArgumentError(observed_path + ": cannot be read (quotasim import aws writes it beside the scenario)"));
    std::stringstream ss;
    ss << in.rdbuf();
    observed_text = ss.str();
  }
  absl::StatusOr<std::vector<ObservedStart>> observed = ParseObservedCsv(observed_text, observed_path);
  if (!observed.ok()) return ReportError(observed.status());
  absl::StatusOr<OpenedScenario> opened = OpenScenario(scenario_path, /*stream_qsb=*/false);
  if (!opened.ok()) return ReportError(opened.status());
  const Scenario& base = *opened->whole;

  struct Variant {
    std::vector<std::string> sets;  // the fixed --set, then the searched values
    std::string name;               // the searched values
    Scenario scenario;
    StartFit fit;
  };
  std::vector<Variant> variants;
  size_t combos = 1;
  for (const Axis& a : axes) combos *= a.values.size();
  for (size_t c = 0; c < combos; ++c) {
    Variant v;
    v.sets = sets;
    std::vector<std::string> parts;
    size_t rest = c;
    for (size_t ai = axes.size(); ai-- > 0;) {
      parts.insert(parts.begin(), axes[ai].key + "=" + axes[ai].values[rest % axes[ai].values.size()]);
      rest /= axes[ai].values.size();
    }
    v.name = parts.empty() ? "(as imported)" : absl::StrJoin(parts, " ");
    v.sets.insert(v.sets.end(), parts.begin(), parts.end());
    absl::StatusOr<Overrides> o = Overrides::Parse(v.sets);
    if (!o.ok()) return UsageError("calibrate", std::string(o.status().message()));
    v.scenario = base;
    if (absl::Status st = ApplyOverrides(*o, v.scenario); !st.ok()) return ReportError(st);
    variants.push_back(std::move(v));
  }
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                  static_cast<size_t>(threads == 0 ? tbb::info::default_concurrency() : threads));
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, variants.size(), 1),
      [&](const tbb::blocked_range<size_t>& range) {
        for (size_t i = range.begin(); i != range.end(); ++i) {
          StartRecorder rec;
          RunOptions options;
          options.check_invariants = false;
          RunFastEngine(variants[i].scenario, rec, options);
          variants[i].fit = CompareStarts(*observed, rec, static_cast<size_t>(worst));
        }
      },
      tbb::simple_partitioner());
  std::vector<size_t> order(variants.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const StartFit& x = variants[a].fit;
    const StartFit& y = variants[b].fit;
    if (x.median_abs != y.median_abs) return x.median_abs < y.median_abs;
    return x.p90_abs < y.p90_abs;
  });
  std::cout << "calibrate: " << scenario_path << " against " << observed_path << " (" << observed->size()
            << " jobs)\n";
  std::vector<std::vector<std::string>> cells = {{"variant", "median |error|", "p90 |error|", "median signed",
                                                  "within 1 min", "compared"}};
  for (size_t i : order) {
    const StartFit& f = variants[i].fit;
    char pct[32];
    std::snprintf(pct, sizeof(pct), "%.0f%%", 100 * f.within_minute);
    cells.push_back({variants[i].name, HumanDuration(f.median_abs), HumanDuration(f.p90_abs),
                     SignedHumanDuration(f.median_signed), pct,
                     std::to_string(f.compared)});
  }
  std::cout << AlignColumns(cells, 1);
  const Variant& best = variants[order.front()];
  std::cout << "best: " << best.name << "\n" << FormatStartFit(best.fit);
  if (!best.sets.empty()) {
    std::string line;
    for (const std::string& s : best.sets) line += " --set " + s;
    std::cout << "  to run it:" << line << "\n";
  }
  return kExitOk;
}

}  // namespace qs
