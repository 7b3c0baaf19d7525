#include "engine/log/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "engine/log/share_table.h"
#include "engine/util/strings.h"

namespace qs {
namespace {

absl::Status CsvError(std::string_view source, size_t line, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(Sv(source), ": line ", line, ": ", Sv(problem)));
}

std::optional<SimTime> SecondsField(std::string_view v, bool* ok) {
  *ok = true;
  if (v.empty()) return std::nullopt;
  double s;
  if (!absl::SimpleAtod(Sv(v), &s) || !(s >= 0 && s <= 1e12)) {
    *ok = false;
    return std::nullopt;
  }
  return static_cast<SimTime>(std::llround(s * 1000));
}

SimTime Quantile(std::vector<SimTime> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1;
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

absl::StatusOr<std::vector<ObservedStart>> ParseObservedCsv(std::string_view text, std::string_view source) {
  std::vector<ObservedStart> out;
  std::vector<std::string_view> lines = SplitOn(text, '\n');
  if (lines.empty() || lines[0].empty()) return CsvError(source, 1, "empty: expected a header line");
  const std::vector<std::string_view> header = SplitOn(lines[0], ',');
  auto column = [&](std::string_view name) -> int {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return static_cast<int>(i);
    }
    return -1;
  };
  const int job = column("jobName"), share = column("quotaShare"), created = column("createdSeconds"),
            started = column("startedSeconds");
  if (job < 0 || share < 0 || created < 0 || started < 0) {
    return CsvError(source, 1, "the header must name jobName, quotaShare, createdSeconds and startedSeconds "
                               "(the .observed.csv of quotasim import aws)");
  }
  for (size_t n = 1; n < lines.size(); ++n) {
    if (lines[n].empty()) continue;
    const std::vector<std::string_view> f = SplitOn(lines[n], ',');
    if (f.size() != header.size()) {
      return CsvError(source, n + 1, absl::StrCat(f.size(), " fields, the header has ", header.size()));
    }
    ObservedStart o;
    o.job = std::string(f[static_cast<size_t>(job)]);
    o.share = std::string(f[static_cast<size_t>(share)]);
    if (o.job.empty()) return CsvError(source, n + 1, "jobName is empty");
    bool ok = true;
    const std::optional<SimTime> c = SecondsField(f[static_cast<size_t>(created)], &ok);
    if (!ok || !c) return CsvError(source, n + 1, "createdSeconds must be seconds >= 0");
    o.created = *c;
    o.started = SecondsField(f[static_cast<size_t>(started)], &ok);
    if (!ok) return CsvError(source, n + 1, "startedSeconds must be seconds >= 0 or empty");
    out.push_back(std::move(o));
  }
  return out;
}

void StartRecorder::OnJob(const JobRecord& r) {
  auto it = jobs_.find(r.job_name);
  if (it == jobs_.end()) it = jobs_.emplace(std::string(r.job_name), State{}).first;
  State& s = it->second;
  if (r.preemption == PreemptionType::kNone && r.status == JobStatus::kRunning && s.status != JobStatus::kRunning) {
    s.running = r.time;
  }
  s.status = r.status;
}

std::optional<SimTime> StartRecorder::StartOf(const std::string& job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? std::nullopt : it->second.running;
}

StartFit CompareStarts(const std::vector<ObservedStart>& observed, const StartRecorder& simulated, size_t worst) {
  StartFit fit;
  std::vector<SimTime> abs_errors, errors;
  std::vector<StartError> all;
  int64_t within = 0;
  for (const ObservedStart& o : observed) {
    const std::optional<SimTime> sim = simulated.StartOf(o.job);
    if (o.started && sim) {
      ++fit.compared;
      const SimTime e = *sim - *o.started;
      errors.push_back(e);
      abs_errors.push_back(std::llabs(e));
      if (std::llabs(e) <= 60 * kMillisPerSecond) ++within;
      all.push_back({o.job, o.share, *o.started, *sim});
    } else if (o.started) {
      ++fit.only_observed;
    } else if (sim) {
      ++fit.only_simulated;
    } else {
      ++fit.neither;
    }
  }
  fit.median_abs = Quantile(abs_errors, 0.5);
  fit.p90_abs = Quantile(abs_errors, 0.9);
  fit.median_signed = Quantile(errors, 0.5);
  fit.within_minute = fit.compared == 0 ? 0 : static_cast<double>(within) / static_cast<double>(fit.compared);
  std::sort(all.begin(), all.end(), [](const StartError& a, const StartError& b) {
    const SimTime x = std::llabs(a.simulated - a.observed), y = std::llabs(b.simulated - b.observed);
    return x != y ? x > y : a.job < b.job;
  });
  if (all.size() > worst) all.resize(worst);
  fit.worst = std::move(all);
  return fit;
}

std::string FormatStartFit(const StartFit& fit) {
  std::string s = absl::StrCat("  jobs compared: ", fit.compared, " (started in AWS only: ", fit.only_observed,
                               ", in the simulation only: ", fit.only_simulated, ", in neither: ", fit.neither, ")\n");
  if (fit.compared == 0) return s;
  char pct[32];
  std::snprintf(pct, sizeof(pct), "%.0f%%", 100 * fit.within_minute);
  absl::StrAppend(&s, "  start error |simulated - observed|: median ", HumanDuration(fit.median_abs), ", p90 ",
                  HumanDuration(fit.p90_abs), "; median signed ", SignedHumanDuration(fit.median_signed),
                  fit.median_signed > 0 ? " (the simulation starts later)"
                  : fit.median_signed < 0 ? " (the simulation starts earlier)"
                                          : "",
                  "; within a minute: ", pct, "\n");
  if (!fit.worst.empty()) absl::StrAppend(&s, "  worst jobs:\n");
  for (const StartError& e : fit.worst) {
    absl::StrAppend(&s, "    ", e.job, " (", e.share, "): observed ", HumanDuration(e.observed), ", simulated ",
                    HumanDuration(e.simulated), " (", SignedHumanDuration(e.simulated - e.observed), ")\n");
  }
  return s;
}

}  // namespace qs
