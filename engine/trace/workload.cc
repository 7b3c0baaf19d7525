// File: engine/trace/workload.cc
//
// Trace jobs -> Workload (the shares, limits and jobs of a replay,
// replay.h), and BuildScenario: Workload + Policy -> Scenario, the
// WorkloadStream (workload_stream.h) read whole. RunPolicy (replay.cc) runs
// the stream.
#include "engine/trace/replay.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/log/async_log.h"
#include "engine/log/event_log.h"
#include "engine/trace/workload_stream.h"
#include "engine/util/atomic_file.h"
#include "engine/util/huge_pages.h"
#include "engine/util/strings.h"
#include "nlohmann/json.hpp"

namespace qs::trace {
namespace {

constexpr int kMaxShares = 20;
constexpr int64_t kMaxInstances = 2147483647;

std::string TraceName(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (const char* ext : {".gz", ".csv", ".swf"}) {
    const std::string e = ext;
    if (name.size() > e.size() && name.substr(name.size() - e.size()) == e) name.resize(name.size() - e.size());
  }
  return name;
}

std::string ShareName(const std::string& prefix, const std::string& team) {
  std::string out = prefix + team;
  for (char& c : out) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  // push_back, not out = "_": GCC 12's -Wrestrict misfires on the inlined
  // assignment of a literal (a 20-line false positive in every Release build).
  if (out.empty()) out.push_back('_');
  if (out.size() > 128) out.resize(128);
  return out;
}

class Fnv {
 public:
  void Bytes(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h_ = (h_ ^ b[i]) * 1099511628211ULL;
  }
  void Int(int64_t v) { Bytes(&v, sizeof(v)); }
  void Str(std::string_view s) {
    Int(static_cast<int64_t>(s.size()));
    Bytes(s.data(), s.size());
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 14695981039346656037ULL;
};

// Largest-remainder split of `total - n` over n shares by weight, each share
// starting at 1. Ties by index (shares are sorted by name).
std::vector<int64_t> Proportional(int64_t total, const std::vector<double>& weight) {
  const size_t n = weight.size();
  std::vector<int64_t> out(n, 1);
  const int64_t rest = total - static_cast<int64_t>(n);
  double wsum = 0;
  for (double w : weight) wsum += w;
  if (rest <= 0) return out;
  std::vector<double> frac(n, 0);
  int64_t given = 0;
  for (size_t i = 0; i < n; ++i) {
    const double exact = wsum > 0 ? static_cast<double>(rest) * weight[i] / wsum
                                  : static_cast<double>(rest) / static_cast<double>(n);
    const auto whole = static_cast<int64_t>(std::floor(exact));
    out[i] += whole;
    given += whole;
    frac[i] = exact - static_cast<double>(whole);
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return frac[a] > frac[b]; });
  for (size_t k = 0; given < rest && k < n; ++k, ++given) ++out[order[k]];
  return out;
}

}  // namespace

int Workload::ShareIndex(std::string_view name) const {
  for (size_t i = 0; i < shares.size(); ++i) {
    if (shares[i] == name) return static_cast<int>(i);
  }
  return -1;
}

absl::StatusOr<Workload> BuildWorkloadFromJobs(std::string trace_name, const std::vector<TraceJob>& jobs,
                                               const Mapping& m, const QuotaTable* table) {
  Workload w;
  w.trace_name = std::move(trace_name);
  w.instance_type = m.instance_type;
  const std::string src = m.source.empty() ? "mapping" : m.source;

  // Teams, their demand, and each kept job's demand.
  std::map<std::string, int> team_index;
  std::vector<std::string> team_names;
  std::vector<double> team_demand;
  struct Kept {
    const TraceJob* job;
    int64_t instances;
    int team;
  };
  std::vector<Kept> kept;
  kept.reserve(jobs.size());
  for (const TraceJob& j : jobs) {
    int64_t n = 0;
    if (j.gpus <= 0) {
      if (!m.zero_gpu_one_instance) {
        ++w.zero_gpu_skipped;
        continue;
      }
      n = 1;
    } else {
      const double q = j.gpus / m.gpus_per_instance;
      const double fl = std::floor(q);
      const double nd = q - fl < 1e-9 ? fl : std::ceil(q);
      if (nd > static_cast<double>(kMaxInstances)) {
        return absl::InvalidArgumentError(absl::StrCat(w.trace_name, ":", j.line, ": ", j.gpus,
                                                       " GPUs is more instances than AWS can count"));
      }
      n = std::max<int64_t>(1, static_cast<int64_t>(nd));
      if (static_cast<double>(n) * m.gpus_per_instance != j.gpus) ++w.rounded_up;
    }
    const std::string& team = m.constant_team ? m.other_share : j.team;
    auto [it, inserted] = team_index.try_emplace(team, static_cast<int>(team_names.size()));
    if (inserted) {
      team_names.push_back(team);
      team_demand.push_back(0);
    }
    team_demand[static_cast<size_t>(it->second)] +=
        static_cast<double>(n) * static_cast<double>(j.duration) / 1000.0;
    kept.push_back({&j, n, it->second});
  }
  if (kept.empty()) return absl::InvalidArgumentError(absl::StrCat(w.trace_name, ": no jobs to replay"));

  // Team -> share name.
  std::vector<std::string> team_share(team_names.size());
  if (m.constant_team) {
    team_share.assign(team_names.size(), m.other_share);
  } else if (!m.teams.empty()) {
    for (size_t t = 0; t < team_names.size(); ++t) {
      auto it = m.teams.find(team_names[t]);
      team_share[t] = it != m.teams.end() ? it->second : m.other_share;
    }
  } else {
    std::vector<size_t> order(team_names.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (team_demand[a] != team_demand[b]) return team_demand[a] > team_demand[b];
      return team_names[a] < team_names[b];
    });
    const size_t own = order.size() <= static_cast<size_t>(m.max_shares) ? order.size()
                                                                         : static_cast<size_t>(m.max_shares - 1);
    for (size_t k = 0; k < order.size(); ++k) {
      team_share[order[k]] = k < own ? ShareName(m.share_prefix, team_names[order[k]]) : m.other_share;
    }
  }
  std::map<std::string, std::vector<std::string>> share_members;
  for (size_t t = 0; t < team_names.size(); ++t) share_members[team_share[t]].push_back(team_names[t]);
  if (share_members.size() > static_cast<size_t>(kMaxShares)) {
    return absl::InvalidArgumentError(absl::StrCat(src, ": ", share_members.size(),
                                                   " shares; a job queue has at most 20 (use shares.maxShares)"));
  }
  for (auto& [share, members] : share_members) {
    if (ShareName("", share) != share) {
      return absl::InvalidArgumentError(absl::StrCat(src, ": share name '", share,
                                                     "' must be 1-128 of [A-Za-z0-9_-]"));
    }
    w.shares.push_back(share);
    std::sort(members.begin(), members.end());
    std::string joined;
    for (size_t i = 0; i < members.size() && i < 8; ++i) absl::StrAppend(&joined, i ? " " : "", members[i]);
    if (members.size() > 8) absl::StrAppend(&joined, " +", members.size() - 8, " more");
    w.share_teams.push_back(joined);
  }
  std::vector<int32_t> team_to_share(team_names.size());
  for (size_t t = 0; t < team_names.size(); ++t) team_to_share[t] = w.ShareIndex(team_share[t]);
  w.demand_instance_seconds.assign(w.shares.size(), 0);
  std::vector<double> share_demand(w.shares.size(), 0);
  for (size_t t = 0; t < team_names.size(); ++t) share_demand[static_cast<size_t>(team_to_share[t])] += team_demand[t];
  for (size_t s = 0; s < w.shares.size(); ++s) w.demand_instance_seconds[s] = std::llround(share_demand[s]);

  // Jobs, sorted and shifted to start at 0.
  w.jobs.reserve(kept.size());
  SimTime t0 = kMaxSimTime;
  for (const Kept& k : kept) t0 = std::min(t0, k.job->submit);
  for (const Kept& k : kept) {
    WorkloadJob j;
    j.submit = k.job->submit - t0;
    j.run = k.job->duration;
    j.instances = k.instances;
    j.line = k.job->line;
    j.share = team_to_share[static_cast<size_t>(k.team)];
    j.priority = m.trace_priority ? static_cast<int32_t>(std::clamp<int64_t>(k.job->priority, 0, 9999)) : 0;
    j.failed = m.failed_jobs_fail && k.job->failed;
    w.jobs.push_back(j);
  }
  std::stable_sort(w.jobs.begin(), w.jobs.end(), [](const WorkloadJob& a, const WorkloadJob& b) {
    return a.submit != b.submit ? a.submit < b.submit : a.line < b.line;
  });

  // Limits.
  const size_t ns = w.shares.size();
  switch (m.limit_source) {
    case LimitSource::kProportional: {
      if (!m.instances) {
        return absl::InvalidArgumentError(absl::StrCat(src, ": environment.instances is required with proportional limits"));
      }
      if (*m.instances < static_cast<int64_t>(ns)) {
        return absl::InvalidArgumentError(absl::StrCat(src, ": environment.instances ", *m.instances,
                                                       " is less than the ", ns, " shares"));
      }
      w.limits = Proportional(*m.instances, share_demand);
      w.environment = *m.instances;
      break;
    }
    case LimitSource::kGiven: {
      int64_t sum = 0;
      for (const std::string& s : w.shares) {
        auto it = m.given_limits.find(s);
        if (it == m.given_limits.end()) {
          return absl::InvalidArgumentError(absl::StrCat(src, ": limits.instances has no entry for share '", s, "'"));
        }
        w.limits.push_back(it->second);
        sum += it->second;
      }
      w.environment = m.instances ? *m.instances : sum;
      break;
    }
    case LimitSource::kQuotaTable: {
      if (table == nullptr) return absl::InvalidArgumentError(absl::StrCat(src, ": limits need a quota table"));
      std::vector<int> col(ns);
      for (size_t s = 0; s < ns; ++s) {
        auto it = m.quota_columns.find(w.shares[s]);
        if (it == m.quota_columns.end()) {
          return absl::InvalidArgumentError(absl::StrCat(src, ": limits.columns has no entry for share '", w.shares[s], "'"));
        }
        col[s] = table->ColumnIndex(it->second);
        if (col[s] < 0) {
          return absl::InvalidArgumentError(absl::StrCat(src, ": limits.columns.", w.shares[s], ": column '", it->second,
                                                         "' is not in ", table->source));
        }
      }
      auto row_limits = [&](size_t row, int64_t* env) {
        std::vector<int64_t> l(ns);
        int64_t sum = 0;
        for (size_t s = 0; s < ns; ++s) {
          const auto g = static_cast<double>(table->gpus[row][static_cast<size_t>(col[s])]);
          l[s] = std::max<int64_t>(1, static_cast<int64_t>(std::floor(g / m.gpus_per_instance + 1e-9)));
          sum += l[s];
        }
        *env = m.instances ? *m.instances : sum;
        return l;
      };
      w.limits = row_limits(0, &w.environment);
      std::vector<int64_t> prev = w.limits;
      int64_t prev_env = w.environment;
      for (size_t row = 1; row < table->days.size(); ++row) {
        int64_t env = 0;
        std::vector<int64_t> l = row_limits(row, &env);
        if (l == prev && env == prev_env) continue;
        LimitChange c;
        c.day = static_cast<int64_t>(row);
        c.time = static_cast<SimTime>(row) * 86400 * kMillisPerSecond;
        c.limits = l;
        c.environment = env;
        w.changes.push_back(std::move(c));
        prev = std::move(l);
        prev_env = env;
      }
      break;
    }
  }

  Fnv h;
  h.Str(w.instance_type);
  for (size_t s = 0; s < ns; ++s) {
    h.Str(w.shares[s]);
    h.Int(w.limits[s]);
  }
  h.Int(w.environment);
  for (const LimitChange& c : w.changes) {
    h.Int(c.time);
    h.Int(c.environment);
    for (int64_t l : c.limits) h.Int(l);
  }
  for (const WorkloadJob& j : w.jobs) {
    h.Int(j.submit);
    h.Int(j.run);
    h.Int(j.instances);
    h.Int(j.share);
    h.Int(j.priority);
    h.Int(j.failed ? 1 : 0);
  }
  w.fingerprint = h.value();
  return w;
}

absl::StatusOr<Workload> BuildWorkload(const std::string& trace_path, TraceFormat format,
                                       const ImportOptions& import, const Mapping& mapping,
                                       const QuotaTable* table) {
  std::vector<TraceJob> jobs;
  // Room for the rows of a plain file at 24 bytes a row or more (the
  // shortest real rows are about 40): no copying as the vector grows, and
  // what is reserved but never reached is never touched, so it costs no
  // page. A compressed file grows the vector as it goes.
  std::error_code ec;
  const uintmax_t file_bytes = std::filesystem::file_size(trace_path, ec);
  if (!ec && !absl::EndsWith(trace_path, ".gz")) jobs.reserve(std::min<uintmax_t>(file_bytes / 24, uintmax_t{1} << 24));
  ImportStats stats;
  absl::Status s = ReadTraceFile(trace_path, format, import, [&](const TraceJob& j) { jobs.push_back(j); }, &stats);
  if (!s.ok()) return s;
  absl::StatusOr<Workload> w = BuildWorkloadFromJobs(TraceName(trace_path), jobs, mapping, table);
  if (w.ok()) w->import = std::move(stats);
  return w;
}

absl::StatusOr<LoadedWorkload> LoadWorkload(const WorkloadInputs& in) {
  LoadedWorkload out;
  absl::StatusOr<Mapping> m = LoadMappingFile(in.mapping_path);
  if (!m.ok()) return m.status();
  out.mapping = std::move(*m);
  TraceFormat format = TraceFormat::kSwf;
  if (!in.format.empty()) {
    absl::StatusOr<TraceFormat> f = ParseTraceFormat(in.format);
    if (!f.ok()) return f.status();
    format = *f;
  } else if (out.mapping.format) {
    format = *out.mapping.format;
  } else {
    absl::StatusOr<TraceFormat> f = GuessTraceFormat(in.trace_path);
    if (!f.ok()) return f.status();
    format = *f;
  }
  ImportOptions import;
  import.skip_bad_rows = in.skip_bad_rows;
  import.swf_team = out.mapping.swf_team;
  import.gavel_steps_per_second = out.mapping.gavel_steps_per_second;
  if (!in.swf_team.empty()) {
    absl::StatusOr<SwfTeamField> t = ParseSwfTeamField(in.swf_team);
    if (!t.ok()) return t.status();
    import.swf_team = *t;
  }
  std::optional<QuotaTable> table;
  const std::string table_path = in.quota_table_path.empty() ? out.mapping.quota_table_path : in.quota_table_path;
  if (out.mapping.limit_source == LimitSource::kQuotaTable) {
    absl::StatusOr<QuotaTable> t = ReadQuotaTableFile(table_path);
    if (!t.ok()) return t.status();
    table = std::move(*t);
  }
  absl::StatusOr<Workload> w =
      BuildWorkload(in.trace_path, format, import, out.mapping, table ? &*table : nullptr);
  if (!w.ok()) return w.status();
  out.workload = std::move(*w);
  return out;
}

// ---------------------------------------------------------------------------

// The stream read whole (workload_stream.h makes the events).
absl::StatusOr<Scenario> BuildScenario(const Workload& w, const Policy& p, std::vector<int32_t>* job_share) {
  const WorkloadStream stream(w, p);
  Scenario sc = stream.head();
  sc.events.reserve(stream.num_events());
  // 432 bytes per event, touched once in order: huge pages spare a page
  // fault per 4 KiB (engine/util/huge_pages.h).
  AdviseHugePages(sc.events.data(), sc.events.capacity() * sizeof(ScenarioEvent));
  std::vector<ScenarioEvent> block;
  for (size_t b = 0; b < stream.num_blocks(); ++b) {
    if (absl::Status st = stream.ReadBlock(b, block); !st.ok()) return st;
    for (ScenarioEvent& ev : block) sc.events.push_back(std::move(ev));
  }
  if (job_share != nullptr) *job_share = stream.JobShares();
  return sc;
}

}  // namespace qs::trace
