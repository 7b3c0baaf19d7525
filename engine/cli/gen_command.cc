// `quotasim gen`: seeded synthetic workloads (engine/gen/generator.h).
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "boost/program_options.hpp"
#include "engine/cli/command_line.h"
#include "engine/cli/commands.h"
#include "engine/util/atomic_file.h"
#include "engine/gen/generator.h"
#include "engine/gen/memory_budget.h"
#include "engine/gen/qsb.h"
#include "engine/io/scenario_json.h"
#include "engine/log/share_table.h"
#include "engine/util/progress_ticker.h"
#include "engine/log/summary.h"
#include "oneapi/tbb/global_control.h"
#include "oneapi/tbb/info.h"

namespace po = boost::program_options;

namespace qs {

namespace {

// A job count as people write it: 1000000, 1e6, 2.5e5 (a whole number).
std::optional<int64_t> ParseCount(const std::string& text) {
  if (text.empty() || text.size() > 32) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long whole = std::strtoll(text.c_str(), &end, 10);
  if (errno == 0 && *end == '\0') return whole;
  errno = 0;
  const double d = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 1e15) {
    return std::nullopt;
  }
  return static_cast<int64_t>(d);
}

}  // namespace

int GenCommand(const std::vector<std::string>& args) {
  gen::GenOptions o;
  std::string profile_text = "steady";
  double load = 0, diurnal = 0;
  std::string jobs_text = std::to_string(o.jobs);
  std::string out;
  int threads = 0;
  bool no_preemption = false;
  po::options_description opts("quotasim gen --jobs N --out FILE [options]");
  opts.add_options()("help,h", "show this help")(
      "profile", po::value<std::string>(&profile_text)->default_value(profile_text),
      "workload shape: steady (a cluster in a stable regime: bounded backlog, waits of minutes to hours) "
      "or stress (saturated: day-long bursts, random priorities, a growing backlog)")(
      "jobs", po::value<std::string>(&jobs_text)->default_value(jobs_text),
      "job submissions (1 .. 100000000; 1e6 is 1000000)")(
      "shares", po::value<int>(&o.shares)->default_value(o.shares), "quota shares (1 .. 20)")(
      "units", po::value<int>(&o.units)->default_value(o.units), "GPU instance types (1 .. 5)")(
      "seed", po::value<uint64_t>(&o.seed)->default_value(o.seed), "random seed")(
      "load", po::value<double>(&load), "offered load per share and type (instance-time / limit; default 0.7 steady, 0.9 stress)")(
      "diurnal-amplitude", po::value<double>(&diurnal),
      "daily swing of the arrival rate, rate x (1 + a sin(2 pi t / day)), a in [0, 1) (default 0.3 steady, 0.5 "
      "stress)")(
      "median-run-seconds", po::value<double>(&o.median_run_seconds)->default_value(o.median_run_seconds),
      "median run time (lognormal, sigma 1.6)")(
      "max-run-seconds", po::value<double>(&o.max_run_seconds)->default_value(o.max_run_seconds),
      "run-time cap")("priority-updates", po::value<double>(&o.priority_update_fraction)
                                          ->default_value(o.priority_update_fraction, absl::StrCat(o.priority_update_fraction)),
                      "fraction of jobs whose priority is updated later")(
      "terminations", po::value<double>(&o.terminate_fraction)->default_value(o.terminate_fraction, absl::StrCat(o.terminate_fraction)),
      "fraction of jobs terminated")("limit-changes", po::value<int>(&o.limit_changes)->default_value(o.limit_changes),
                                     "temporary limit changes (each an UpdateQuotaShare and one back)")(
      "no-preemption", po::bool_switch(&no_preemption), "only RESERVE/LEND shares, in-share preemption off")(
      "threads", po::value<int>(&threads)->default_value(0), "worker threads (0 = all cores); output never depends on it")(
      "out", po::value<std::string>(&out), "output file: .json (scenario format) or .qsb (compact binary)");
  po::options_description hidden;
  po::positional_options_description pos;
  po::variables_map vm;
  if (std::optional<int> done = ParseCommandLine("gen", args, opts, hidden, pos,
                                                 "", vm)) {
    return *done;
  }
  if (std::optional<int64_t> jobs = ParseCount(jobs_text)) {
    o.jobs = *jobs;
  } else {
    return UsageError("gen", "--jobs " + jobs_text + ": not a whole number of jobs");
  }
  if (out.empty()) return UsageError("gen", "--out FILE is required");
  if (std::optional<gen::Profile> p = gen::ParseProfile(profile_text)) {
    const gen::GenOptions defaults = gen::GenOptions::For(*p);
    o.profile = *p;
    o.load = vm.count("load") != 0 ? load : defaults.load;
    o.diurnal_amplitude = vm.count("diurnal-amplitude") != 0 ? diurnal : defaults.diurnal_amplitude;
  } else {
    return UsageError("gen", "--profile " + profile_text + ": expected steady or stress");
  }
  auto ends_with = [&out](std::string_view ext) {
    return out.size() > ext.size() && out.compare(out.size() - ext.size(), ext.size(), ext) == 0;
  };
  const bool qsb = ends_with(".qsb");
  if (!qsb && !ends_with(".json")) {
    return UsageError("gen", "--out " + out + ": the file name must end in .json or .qsb");
  }
  if (threads < 0) return UsageError("gen", "--threads must be >= 0");
  o.preemption = !no_preemption;
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                  static_cast<size_t>(threads == 0 ? tbb::info::default_concurrency() : threads));
  if (absl::Status st = gen::ValidateGenOptions(o); !st.ok()) return UsageError("gen", std::string(st.message()));
  // Refuse up front what cannot fit (at least one event per job) rather
  // than end in the OOM killer. A .json scenario is generated whole; a .qsb
  // one is drawn and encoded window by window in memory that does not grow
  // with --jobs (GenerateQsbFile), so only its disk space can run out.
  if (absl::Status st = qsb ? absl::OkStatus()
                            : gen::CheckMemoryBudget(static_cast<uint64_t>(o.jobs),  // >= 1: validated
                                                     gen::PhysicalMemoryBytes(), "quotasim gen", gen::kMinBytesPerEvent);
      !st.ok()) {
    std::cerr << st.message() << "\n";
    return kExitError;
  }
  // The file appears under its name only when complete (a temporary name
  // beside it, then a rename; engine/util/atomic_file.h).
  gen::OfferedLoad offered;
  std::atomic<int64_t> written{0};
  std::atomic<bool> drawn{false};
  ProgressTicker ticker("quotasim gen", [&] {
    if (qsb) return absl::StrFormat("%.0f MB of event blocks written", static_cast<double>(written.load()) / 1e6);
    return std::string(drawn.load() ? "writing the JSON document" : "drawing the workload");
  });
  if (qsb) {
    AtomicPath where(out);  // removes the temporary file unless committed
    absl::Status s = gen::GenerateQsbFile(o, where.write_path(), gen::kQsbBlockEvents, &offered, &written);
    ticker.Stop();
    if (s.ok()) s = where.Commit();
    if (!s.ok()) {
      std::cerr << "quotasim gen: " << s.message() << "\n";
      return kExitError;
    }
  } else {
    absl::StatusOr<Scenario> sc = gen::Generate(o, &offered);
    drawn = true;
    if (!sc.ok()) {
      ticker.Stop();
      std::cerr << "quotasim gen: " << sc.status().message() << "\n";
      return kExitError;
    }
    AtomicFile f(out);
    f.stream() << ScenarioToJson(*sc);
    const absl::Status s = f.Commit();
    ticker.Stop();  // before any message
    if (!s.ok()) {
      std::cerr << "quotasim gen: " << s.message() << "\n";
      return kExitError;
    }
  }
  std::cerr << "quotasim gen: wrote " << o.jobs << " jobs, " << o.shares << " shares, " << o.units
            << " instance types to " << out << " (profile " << gen::ProfileName(o.profile) << ", load " << o.load << ")\n";
  // What the workload offers; `quotasim run` shows what the engine made of
  // it (utilisation, waits, backlog).
  std::cerr << "  arrivals over " << HumanDuration(offered.span) << "; "
            << offered.follow_ups << " priority updates and terminations, each aimed at a job "
            << (o.profile == gen::Profile::kSteady ? "still alive" : "that may be gone") << "\n"
            << "  offered utilisation (instance-time asked / capacity over the arrivals):";
  for (const auto& [unit, u] : offered.utilisation) std::cerr << " " << unit << " " << absl::StrFormat("%.0f%%", 100 * u);
  std::cerr << "\n";
  return kExitOk;
}

}  // namespace qs
