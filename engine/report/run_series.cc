#include "engine/report/run_series.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

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

  absl::Status read = ForEachJobLine(in, source, [&](LogJobLine& l) {
    ++out.lines;
    JobState& j = jobs[l.job];
    if (j.share.empty()) j.share = l.share;
    if (!l.preempted_for.empty()) {
      std::vector<int64_t>& p = out.preemptions[j.share];
      if (p.empty()) p.assign(static_cast<size_t>(out.slices), 0);
      ++p[static_cast<size_t>(std::clamp<int64_t>(l.time / out.slice, 0, out.slices - 1))];
      return;  // the victim keeps its instances until its drain ends
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
  });
  if (!read.ok()) return read;
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

namespace {

// The comma-separated fields of one line of a file quotasim wrote (no
// quoting), a trailing '\r' dropped; views into `line`.
std::vector<std::string_view> Fields(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return SplitOn(line, ',');
}

bool ParseNumber(std::string_view field, double* v) {
  if (field.empty()) return false;
  const std::string text(field);  // strtod reads up to a NUL
  char* end = nullptr;
  *v = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(*v);
}

}  // namespace

absl::StatusOr<RunSeries> ReadTraceSeries(std::istream& timeseries, std::string_view timeseries_source,
                                          std::istream* waits, std::string_view waits_source, SimTime end,
                                          const std::map<std::string, std::string>& unit_of,
                                          std::map<std::string, int64_t>* limits) {
  auto bad = [](std::string_view source, int64_t line, std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(source), ":", line, ": ", Sv(what)));
  };
  std::string text;
  if (!std::getline(timeseries, text)) return bad(timeseries_source, 1, "empty (a header row was expected)");
  const std::vector<std::string_view> header_views = Fields(text);
  const std::vector<std::string> header(header_views.begin(), header_views.end());
  if (header.empty() || header[0] != "hour") return bad(timeseries_source, 1, "the header does not start with 'hour'");
  // Columns: share use, borrowed:S, limit:S, preempt_cross / preempt_in.
  std::map<std::string, size_t> use_col, borrowed_col, limit_col;
  std::vector<size_t> preempt_cols;
  for (size_t c = 1; c < header.size(); ++c) {
    const std::string& h = header[c];
    if (h.rfind("borrowed:", 0) == 0) {
      borrowed_col[h.substr(9)] = c;
    } else if (h.rfind("limit:", 0) == 0) {
      limit_col[h.substr(6)] = c;
    } else if (h == "preempt_cross" || h == "preempt_in") {
      preempt_cols.push_back(c);
    } else if (h != "total" && h != "capacity") {
      use_col[h] = c;
    }
  }
  std::vector<std::vector<double>> rows;
  int64_t n = 1;
  while (std::getline(timeseries, text)) {
    ++n;
    if (text.empty()) continue;
    const std::vector<std::string_view> cells = Fields(text);
    if (cells.size() != header.size()) {
      return bad(timeseries_source, n, absl::StrCat(cells.size(), " cells; the header has ", header.size()));
    }
    std::vector<double> row(cells.size());
    for (size_t c = 0; c < cells.size(); ++c) {
      if (!ParseNumber(cells[c], &row[c]) || row[c] < 0) {
        return bad(timeseries_source, n, absl::StrCat("column ", header[c], ": '", Sv(cells[c]), "' is not a number >= 0"));
      }
    }
    if (!rows.empty() && row[0] <= rows.back()[0]) return bad(timeseries_source, n, "hour is not increasing");
    rows.push_back(std::move(row));
  }
  if (timeseries.bad()) return absl::DataLossError(absl::StrCat(Sv(timeseries_source), ": read error"));
  if (rows.empty()) return bad(timeseries_source, n, "no data row");
  RunSeries out;
  out.slices = static_cast<int>(rows.size());
  out.slice = rows.size() > 1 ? static_cast<SimTime>(std::llround((rows[1][0] - rows[0][0]) * 3'600'000)) : std::max<SimTime>(end, 1);
  out.slice = std::max<SimTime>(out.slice, 1);
  out.end = std::max<SimTime>(end, 1);
  for (const auto& [share, c] : use_col) {
    auto unit = unit_of.find(share);
    UseSeries& u = out.use[{share, unit == unit_of.end() ? std::string("instances") : unit->second}];
    const auto b = borrowed_col.find(share);
    for (const std::vector<double>& row : rows) {
      const double borrowed = b == borrowed_col.end() ? 0 : row[b->second];
      u.own.push_back(std::max(0.0, row[c] - borrowed));
      u.borrowed.push_back(borrowed);
      u.peak = std::max(u.peak, row[c]);
    }
    if (auto l = limit_col.find(share); l != limit_col.end() && limits != nullptr) {
      (*limits)[share] = static_cast<int64_t>(std::llround(rows.front()[l->second]));
    }
  }
  if (!preempt_cols.empty()) {
    std::vector<int64_t>& p = out.preemptions["all shares"];
    for (const std::vector<double>& row : rows) {
      double sum = 0;
      for (size_t c : preempt_cols) sum += row[c];
      p.push_back(static_cast<int64_t>(std::llround(sum)));
    }
    bool any = false;
    for (int64_t v : p) any = any || v > 0;
    if (!any) out.preemptions.clear();
  }
  if (waits != nullptr) {
    std::vector<SimTime>& w = out.waits["all jobs"];
    n = 0;
    while (std::getline(*waits, text)) {
      ++n;
      if (text.empty() || n == 1) continue;  // the header: percentile,wait_seconds
      const std::vector<std::string_view> cells = Fields(text);
      double pct = 0, seconds = 0;
      if (cells.size() != 2 || !ParseNumber(cells[0], &pct) || !ParseNumber(cells[1], &seconds) || seconds < 0) {
        return bad(waits_source, n, "expected percentile,wait_seconds");
      }
      w.push_back(static_cast<SimTime>(std::llround(seconds * 1000)));
    }
    std::sort(w.begin(), w.end());
    if (w.empty()) out.waits.clear();
  }
  return out;
}

}  // namespace qs
