#include "engine/report/run_series.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "engine/log/explain.h"
#include "engine/util/strings.h"

namespace qs {
namespace {

struct JobState {
  std::string share, unit;
  int64_t own = 0, borrowed = 0;
  SimTime first_runnable = -1;
  bool dispatched = false, scheduled_once = false;
};

// Open use of one (share, unit): instances held now and since when.
struct Open {
  int64_t own = 0, borrowed = 0;
  SimTime since = 0;
};

}  // namespace

absl::StatusOr<RunSeries> ScanEventLog(std::istream& in, std::string_view source, SimTime end, int slices) {
  RunSeries out;
  out.end = std::max<SimTime>(end, 1);
  out.slices = std::max(slices, 1);
  out.slice = std::max<SimTime>(1, (out.end + out.slices - 1) / out.slices);
  out.slices = static_cast<int>((out.end + out.slice - 1) / out.slice);  // none past the end
  absl::flat_hash_map<std::string, JobState> jobs;
  std::map<std::pair<std::string, std::string>, Open> open;

  // Adds what (share, unit) held over [o.since, to) to its slices.
  auto flush = [&](const std::pair<std::string, std::string>& key, Open& o, SimTime to) {
    UseSeries& u = out.use[key];
    if (u.own.empty()) {
      u.own.assign(static_cast<size_t>(out.slices), 0.0);
      u.borrowed.assign(static_cast<size_t>(out.slices), 0.0);
    }
    to = std::min(to, out.end);
    for (SimTime t = o.since; t < to;) {
      const int64_t k = std::min<int64_t>(t / out.slice, out.slices - 1);
      const SimTime slice_end = k == out.slices - 1 ? to : std::min(to, (k + 1) * out.slice);
      const double d = static_cast<double>(slice_end - t);
      u.own[static_cast<size_t>(k)] += static_cast<double>(o.own) * d;
      u.borrowed[static_cast<size_t>(k)] += static_cast<double>(o.borrowed) * d;
      t = slice_end;
    }
    o.since = std::max(o.since, to);
  };
  auto change = [&](const JobState& j, int64_t sign, SimTime now) {
    const auto key = std::make_pair(j.share, j.unit);
    Open& o = open[key];
    flush(key, o, now);
    o.since = now;
    o.own += sign * j.own;
    o.borrowed += sign * j.borrowed;
    UseSeries& u = out.use[key];
    u.peak = std::max(u.peak, static_cast<double>(o.own + o.borrowed));
  };

  std::string text;
  int64_t n = 0;
  LogJobLine l;
  while (std::getline(in, text)) {
    ++n;
    if (text.empty()) continue;
    absl::StatusOr<bool> job = ParseJobLine(text, &l);
    if (!job.ok()) return absl::InvalidArgumentError(absl::StrCat(Sv(source), ":", n, ": ", job.status().message()));
    if (!*job) continue;
    ++out.lines;
    JobState& j = jobs[l.job];
    if (j.share.empty()) j.share = l.share;
    if (!l.preempted_for.empty()) {
      std::vector<int64_t>& p = out.preemptions[j.share];
      if (p.empty()) p.assign(static_cast<size_t>(out.slices), 0);
      ++p[static_cast<size_t>(std::clamp<int64_t>(l.time / out.slice, 0, out.slices - 1))];
      continue;  // the victim keeps its instances until its drain ends
    }
    if (l.status == "RUNNABLE" || l.status == "SUCCEEDED" || l.status == "FAILED") {
      if (j.dispatched) change(j, -1, l.time);
      j.dispatched = false;
      if (l.status == "RUNNABLE" && j.first_runnable < 0) j.first_runnable = l.time;
      if (l.status != "RUNNABLE") jobs.erase(l.job);
    } else if (l.status == "SCHEDULED" && !l.unit.empty()) {
      if (j.dispatched) change(j, -1, l.time);  // (a log never has two in a row)
      if (!j.scheduled_once && j.first_runnable >= 0) out.waits[j.share].push_back(l.time - j.first_runnable);
      j.scheduled_once = true;
      j.unit = l.unit;
      j.borrowed = 0;
      for (const auto& [from, q] : l.borrowed) j.borrowed += q;
      j.own = l.quantity - j.borrowed;
      j.dispatched = true;
      change(j, +1, l.time);
    }
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(Sv(source), ": read error"));
  for (auto& [key, o] : open) flush(key, o, out.end);
  for (auto& [key, u] : out.use) {
    for (int k = 0; k < out.slices; ++k) {
      const SimTime start = static_cast<SimTime>(k) * out.slice;
      const SimTime len = k == out.slices - 1 ? out.end - start : out.slice;
      const double d = static_cast<double>(std::max<SimTime>(len, 1));
      u.own[static_cast<size_t>(k)] /= d;
      u.borrowed[static_cast<size_t>(k)] /= d;
    }
  }
  for (auto& [share, w] : out.waits) std::sort(w.begin(), w.end());
  return out;
}

}  // namespace qs
