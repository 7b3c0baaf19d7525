#include "engine/trace/report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "engine/trace/internal/text.h"
#include "engine/util/atomic_file.h"
#include "engine/util/strings.h"
#include "nlohmann/json.hpp"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/partitioner.h"

namespace qs::trace {
namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

constexpr const char* kPolicyFiles[] = {".summary.json", ".metrics.json", ".timeseries.csv", ".waits.csv"};

// Complete or not at all under `path` (engine/util/atomic_file.h).
absl::Status WriteFile(const std::string& path, const std::string& text) {
  AtomicFile out(path);
  out.stream() << text;
  return out.Commit();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

// Human duration for tables.
std::string Dur(double s) {
  if (s < 60) return Fmt("%.0f s", s);
  if (s < 3600) return Fmt("%.1f min", s / 60);
  if (s < 86400) return Fmt("%.1f h", s / 3600);
  return Fmt("%.1f d", s / 86400);
}

double Num(const Json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0; }
int64_t Int(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : 0;
}
std::string Str(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// "complete", or "stopped" for a run caught in a preemption cycle (its
// figures are those up to the stop); metrics from before the status key
// existed read as complete.
std::string Status(const Json& r) {
  const std::string s = Str(r, "status");
  return s.empty() ? "complete" : s;
}

std::string ShardFileName(Shard s) { return absl::StrCat("shard-", s.index, "-of-", s.count, ".json"); }

}  // namespace

absl::StatusOr<Shard> ParseShard(std::string_view text) {
  const size_t slash = text.find('/');
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat("--shard expects K/N with 0 <= K < N, got '", Sv(text), "'"));
  };
  if (slash == std::string_view::npos) return bad();
  auto k = trace_internal::ParseInt(text.substr(0, slash));
  auto n = trace_internal::ParseInt(text.substr(slash + 1));
  if (!k || !n || *n < 1 || *n > 100000 || *k < 0 || *k >= *n) return bad();
  return Shard{static_cast<int>(*k), static_cast<int>(*n)};
}

absl::StatusOr<std::optional<Shard>> ShardFromEnvironment(const std::function<const char*(const char*)>& getenv) {
  auto get = [&](const char* name) -> std::optional<std::string> {
    const char* v = getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
  auto make = [](const std::string& what, const std::string& index, const std::string& count,
                 int64_t offset) -> absl::StatusOr<std::optional<Shard>> {
    auto k = trace_internal::ParseInt(index);
    auto n = trace_internal::ParseInt(count);
    if (!k || !n || *k - offset < 0 || *n < 1 || *k - offset >= *n || *n > 100000) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": index '", index, "' and count '", count,
                                                     "' do not give a shard 0 <= K < N"));
    }
    return std::optional<Shard>(Shard{static_cast<int>(*k - offset), static_cast<int>(*n)});
  };
  if (auto idx = get("AWS_BATCH_JOB_ARRAY_INDEX")) {
    auto size = get("AWS_BATCH_JOB_ARRAY_SIZE");
    if (!size) size = get("QS_SHARD_COUNT");
    if (!size) {
      return absl::InvalidArgumentError(
          "AWS_BATCH_JOB_ARRAY_INDEX is set but neither AWS_BATCH_JOB_ARRAY_SIZE nor QS_SHARD_COUNT: "
          "pass --shard K/N or set QS_SHARD_COUNT to the array size");
    }
    return make("AWS Batch array job", *idx, *size, 0);
  }
  if (auto idx = get("SLURM_ARRAY_TASK_ID")) {
    auto count = get("SLURM_ARRAY_TASK_COUNT");
    if (!count) return absl::InvalidArgumentError("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not");
    int64_t min = 0;
    if (auto m = get("SLURM_ARRAY_TASK_MIN")) min = trace_internal::ParseInt(*m).value_or(0);
    return make("Slurm array job", *idx, *count, min);
  }
  if (auto idx = get("JOB_COMPLETION_INDEX")) {
    auto count = get("QS_SHARD_COUNT");
    if (!count) {
      return absl::InvalidArgumentError("JOB_COMPLETION_INDEX is set but QS_SHARD_COUNT (the completions) is not");
    }
    return make("Kubernetes indexed job", *idx, *count, 0);
  }
  return std::optional<Shard>();
}

std::vector<size_t> ShardPolicies(size_t num_policies, Shard shard) {
  std::vector<size_t> out;
  for (size_t i = 0; i < num_policies; ++i) {
    if (static_cast<int>(i % static_cast<size_t>(shard.count)) == shard.index) out.push_back(i);
  }
  return out;
}

Manifest MakeManifest(const Workload& w, const Mapping& m, const std::vector<Policy>& policies, Shard shard) {
  Manifest out;
  out.trace_name = w.trace_name;
  out.mapping_description = m.description;
  char hex[20];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(w.fingerprint));
  out.fingerprint = hex;
  Json wj;
  wj["jobs"] = w.jobs.size();
  wj["importedRows"] = w.import.rows;
  wj["skippedBadRows"] = w.import.skipped;
  wj["incompleteRows"] = w.import.incomplete;
  wj["zeroGpuJobsSkipped"] = w.zero_gpu_skipped;
  wj["jobsRoundedUp"] = w.rounded_up;
  wj["instanceType"] = w.instance_type;
  wj["environmentInstances"] = w.environment;
  wj["limitChanges"] = w.changes.size();
  Json shares = Json::array();
  for (size_t s = 0; s < w.shares.size(); ++s) {
    int64_t jobs = 0;
    for (const WorkloadJob& j : w.jobs) jobs += j.share == static_cast<int32_t>(s) ? 1 : 0;
    shares.push_back({{"name", w.shares[s]},
                      {"teams", w.share_teams[s]},
                      {"jobs", jobs},
                      {"initialLimit", w.limits[s]},
                      {"demandInstanceHours", static_cast<double>(w.demand_instance_seconds[s]) / 3600.0}});
  }
  wj["shares"] = shares;
  out.workload_json = wj.dump();
  for (const Policy& p : policies) out.policies.push_back(p.name);
  out.shard = shard;
  for (size_t i : ShardPolicies(policies.size(), shard)) out.ran.push_back(policies[i].name);
  return out;
}

absl::StatusOr<std::vector<PolicyRun>> RunComparison(const Workload& w, const std::vector<Policy>& policies,
                                                     const std::vector<size_t>& which,
                                                     const RunPolicyOptions& options) {
  std::vector<absl::StatusOr<PolicyRun>> slots(which.size(), absl::UnknownError("not run"));
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, which.size(), 1),
      [&](const tbb::blocked_range<size_t>& r) {
        for (size_t i = r.begin(); i != r.end(); ++i) slots[i] = RunPolicy(w, policies[which[i]], options);
      },
      tbb::simple_partitioner());
  std::vector<PolicyRun> out;
  out.reserve(which.size());
  for (auto& s : slots) {
    if (!s.ok()) return s.status();
    out.push_back(std::move(*s));
  }
  return out;
}

absl::Status WritePolicyRun(const std::string& dir, const PolicyRun& run) {
  const std::string base = (fs::path(dir) / run.policy).string();
  for (const auto& [suffix, text] : {std::pair<const char*, const std::string*>{".summary.json", &run.summary_json},
                                     {".metrics.json", &run.metrics_json},
                                     {".timeseries.csv", &run.timeseries_csv},
                                     {".waits.csv", &run.waits_csv}}) {
    absl::Status s = WriteFile(base + suffix, *text);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status WriteManifest(const std::string& dir, const Manifest& m) {
  Json j;
  j["trace"] = m.trace_name;
  j["mapping"] = m.mapping_description;
  j["fingerprint"] = m.fingerprint;
  j["workload"] = Json::parse(m.workload_json);
  j["policies"] = m.policies;
  j["shard"] = {{"index", m.shard.index}, {"count", m.shard.count}};
  j["ran"] = m.ran;
  return WriteFile((fs::path(dir) / ShardFileName(m.shard)).string(), j.dump(2) + "\n");
}

absl::StatusOr<Manifest> ReadManifest(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  Json j = Json::parse(*text, nullptr, false);
  auto bad = [&](const char* what) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a quotasim compare manifest (", what, ")"));
  };
  if (j.is_discarded() || !j.is_object()) return bad("not JSON");
  Manifest m;
  m.trace_name = Str(j, "trace");
  m.mapping_description = Str(j, "mapping");
  m.fingerprint = Str(j, "fingerprint");
  if (!j.contains("workload") || !j["workload"].is_object()) return bad("workload");
  m.workload_json = j["workload"].dump();
  for (const char* key : {"policies", "ran"}) {
    if (!j.contains(key) || !j[key].is_array()) return bad(key);
    for (const Json& p : j[key]) {
      if (!p.is_string()) return bad(key);
      (std::string(key) == "ran" ? m.ran : m.policies).push_back(p.get<std::string>());
    }
  }
  if (!j.contains("shard") || !j["shard"].is_object()) return bad("shard");
  m.shard.index = static_cast<int>(Int(j["shard"], "index"));
  m.shard.count = static_cast<int>(Int(j["shard"], "count"));
  if (m.shard.count < 1 || m.shard.index < 0 || m.shard.index >= m.shard.count) return bad("shard");
  return m;
}

absl::Status WriteReport(const std::string& dir, const Manifest& m) {
  std::vector<Json> rows;
  for (const std::string& p : m.policies) {
    const std::string path = (fs::path(dir) / (p + ".metrics.json")).string();
    absl::StatusOr<std::string> text = ReadFile(path);
    if (!text.ok()) return text.status();
    Json j = Json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return absl::InvalidArgumentError(absl::StrCat(path, ": not JSON"));
    rows.push_back(std::move(j));
  }
  const Json w = Json::parse(m.workload_json);

  // comparison.csv
  std::string csv =
      "policy,utilisation,jobs_submitted,jobs_finished,jobs_terminated,jobs_unfinished,wait_mean_s,wait_p50_s,"
      "wait_p95_s,wait_p99_s,wait_max_s,preemptions_cross_share,preemptions_in_share,instance_hours_lost,"
      "reclaim_count,reclaim_p99_s,reclaim_max_s,fairness_jain,end_time_s,invariant_violations,status\n";
  for (const Json& r : rows) {
    const Json& wait = r["waitSeconds"];
    const Json& rec = r["reclaimLatencySeconds"];
    absl::StrAppend(&csv, Str(r, "policy"), ",", Fmt("%.4f", Num(r, "utilisation")), ",", Int(r, "jobsSubmitted"), ",",
                    Int(r, "jobsFinished"), ",", Int(r, "jobsTerminated"), ",", Int(r, "jobsUnfinished"), ",",
                    Fmt("%.1f", Num(wait, "mean")), ",", Fmt("%.1f", Num(wait, "p50")), ",",
                    Fmt("%.1f", Num(wait, "p95")), ",", Fmt("%.1f", Num(wait, "p99")), ",",
                    Fmt("%.1f", Num(wait, "max")), ",", Int(r, "preemptionsCrossShare"), ",",
                    Int(r, "preemptionsInShare"), ",", Fmt("%.2f", Num(r, "instanceHoursLost")), ",",
                    Int(rec, "count"), ",", Fmt("%.1f", Num(rec, "p99")), ",", Fmt("%.1f", Num(rec, "max")), ",",
                    Fmt("%.4f", Num(r, "fairnessJain")), ",", Fmt("%.1f", Num(r, "endTimeSeconds")), ",",
                    Int(r, "invariantViolations"), ",", Status(r), "\n");
  }

  // share-waits.csv (long form) and the per-share table.
  std::string share_csv = "policy,share,jobs,wait_p50_s,wait_p95_s,wait_p99_s,mean_bounded_slowdown,instance_hours,"
                          "borrowed_instance_hours\n";
  std::vector<std::string> share_names;
  std::map<std::string, std::map<std::string, std::string>> cell;  // share -> policy -> text
  for (const Json& r : rows) {
    for (const Json& s : r["shares"]) {
      const std::string name = Str(s, "name");
      if (std::find(share_names.begin(), share_names.end(), name) == share_names.end()) share_names.push_back(name);
      absl::StrAppend(&share_csv, Str(r, "policy"), ",", name, ",", Int(s, "jobs"), ",",
                      Fmt("%.1f", Num(s, "waitP50")), ",", Fmt("%.1f", Num(s, "waitP95")), ",",
                      Fmt("%.1f", Num(s, "waitP99")), ",", Fmt("%.3f", Num(s, "meanBoundedSlowdown")), ",",
                      Fmt("%.2f", Num(s, "instanceHours")), ",", Fmt("%.2f", Num(s, "borrowedInstanceHours")), "\n");
      cell[name][Str(r, "policy")] = absl::StrCat(Dur(Num(s, "waitP50")), " / ", Dur(Num(s, "waitP95")), " / ",
                                                  Dur(Num(s, "waitP99")));
    }
  }

  // comparison.md
  std::string md = absl::StrCat("# Policy comparison: ", m.trace_name, "\n\n");
  absl::StrAppend(&md, "Mapping: ", m.mapping_description.empty() ? "(no description)" : m.mapping_description, "\n\n");
  absl::StrAppend(&md, "Workload: ", Int(w, "jobs"), " jobs replayed (", Int(w, "importedRows"), " rows read, ",
                  Int(w, "skippedBadRows"), " bad rows skipped, ", Int(w, "incompleteRows"),
                  " rows with unknown size or run time, ", Int(w, "zeroGpuJobsSkipped"), " zero-GPU jobs skipped, ",
                  Int(w, "jobsRoundedUp"), " jobs rounded up to whole instances); environment ",
                  Int(w, "environmentInstances"), " x ", Str(w, "instanceType"), " at time 0, ",
                  Int(w, "limitChanges"), " limit changes; workload fingerprint ", m.fingerprint, ".\n\n");
  md += "| share | teams | jobs | initial limit | demand (instance-h) |\n|---|---|---:|---:|---:|\n";
  for (const Json& s : w["shares"]) {
    absl::StrAppend(&md, "| ", Str(s, "name"), " | ", Str(s, "teams"), " | ", Int(s, "jobs"), " | ",
                    Int(s, "initialLimit"), " | ", Fmt("%.0f", Num(s, "demandInstanceHours")), " |\n");
  }
  md += "\n## Comparison\n\n"
        "| policy | utilisation | finished | terminated | unfinished | wait mean | wait p50 | wait p95 | wait p99 "
        "| preemptions cross / in | instance-h lost | reclaim p99 / max | fairness | status |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const Json& r : rows) {
    const Json& wait = r["waitSeconds"];
    const Json& rec = r["reclaimLatencySeconds"];
    absl::StrAppend(&md, "| ", Str(r, "policy"), " | ", Fmt("%.1f%%", 100 * Num(r, "utilisation")), " | ",
                    Int(r, "jobsFinished"), " | ", Int(r, "jobsTerminated"), " | ", Int(r, "jobsUnfinished"), " | ",
                    Dur(Num(wait, "mean")), " | ", Dur(Num(wait, "p50")), " | ", Dur(Num(wait, "p95")), " | ",
                    Dur(Num(wait, "p99")), " | ", Int(r, "preemptionsCrossShare"), " / ", Int(r, "preemptionsInShare"),
                    " | ", Fmt("%.0f", Num(r, "instanceHoursLost")), " | ",
                    Int(rec, "count") ? absl::StrCat(Dur(Num(rec, "p99")), " / ", Dur(Num(rec, "max"))) : "-", " | ",
                    Fmt("%.3f", Num(r, "fairnessJain")), " | ", Status(r), " |\n");
  }
  md += "\nUtilisation: instance-seconds used / instance-seconds available until the last event. Finished: jobs that "
        "ran to the end (SUCCEEDED, or FAILED as in the trace). Terminated: jobs that could never fit their share "
        "and were failed by the queue's 10-minute jobStateTimeLimitAction. Wait: first RUNNABLE to first SCHEDULED. "
        "Fairness: Jain's index over shares of their mean bounded slowdown (10 s), 1 = every share slowed down "
        "alike.\n\n## Wait per share (p50 / p95 / p99)\n\n| share |";
  for (const Json& r : rows) absl::StrAppend(&md, " ", Str(r, "policy"), " |");
  md += "\n|---|";
  for (size_t i = 0; i < rows.size(); ++i) md += "---|";
  md += "\n";
  for (const std::string& s : share_names) {
    absl::StrAppend(&md, "| ", s, " |");
    for (const Json& r : rows) {
      auto it = cell[s].find(Str(r, "policy"));
      absl::StrAppend(&md, " ", it == cell[s].end() ? "-" : it->second, " |");
    }
    md += "\n";
  }
  md += "\n## Policies\n\n";
  for (const Json& r : rows) absl::StrAppend(&md, "- `", Str(r, "policy"), "`: ", Str(r, "description"), "\n");

  for (const auto& [name, text] : {std::pair<const char*, const std::string*>{"comparison.md", &md},
                                   {"comparison.csv", &csv},
                                   {"share-waits.csv", &share_csv}}) {
    absl::Status s = WriteFile((fs::path(dir) / name).string(), *text);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status MergeShards(const std::string& out_dir, const std::vector<std::string>& shard_dirs) {
  if (shard_dirs.empty()) return absl::InvalidArgumentError("merge: no shard directories given");
  struct Found {
    Manifest m;
    std::string dir;
    std::string file;
  };
  std::vector<Found> found;
  std::set<std::string> seen_files;
  for (const std::string& dir : shard_dirs) {
    std::error_code ec;
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string n = e.path().filename().string();
      if (n.rfind("shard-", 0) == 0 && n.size() > 5 && n.substr(n.size() - 5) == ".json") names.push_back(n);
    }
    if (ec) return absl::NotFoundError(absl::StrCat("merge: cannot list ", dir, ": ", ec.message()));
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) {
      const std::string path = (fs::path(dir) / n).string();
      const std::string canon = fs::weakly_canonical(path, ec).string();
      if (!seen_files.insert(canon).second) continue;  // the same directory given twice
      absl::StatusOr<Manifest> m = ReadManifest(path);
      if (!m.ok()) return m.status();
      found.push_back({std::move(*m), dir, path});
    }
  }
  if (found.empty()) return absl::NotFoundError("merge: no shard-K-of-N.json manifest in the given directories");
  const Manifest& first = found[0].m;
  std::map<int, const Found*> by_index;
  for (const Found& f : found) {
    if (f.m.shard.count != first.shard.count) {
      // A single full run (shard 0 of 1) next to shards is ignored only if it is in the output dir.
      return absl::InvalidArgumentError(absl::StrCat("merge: ", f.file, " is shard ", f.m.shard.index, " of ",
                                                     f.m.shard.count, " but ", found[0].file, " is of ",
                                                     first.shard.count));
    }
    if (f.m.fingerprint != first.fingerprint || f.m.policies != first.policies ||
        f.m.workload_json != first.workload_json) {
      return absl::InvalidArgumentError(absl::StrCat("merge: ", f.file, " and ", found[0].file,
                                                     " describe different comparisons (trace, mapping or policies)"));
    }
    if (!by_index.emplace(f.m.shard.index, &f).second) {
      return absl::InvalidArgumentError(absl::StrCat("merge: shard ", f.m.shard.index, " appears twice"));
    }
  }
  for (int k = 0; k < first.shard.count; ++k) {
    if (by_index.find(k) == by_index.end()) {
      return absl::NotFoundError(absl::StrCat("merge: shard ", k, " of ", first.shard.count, " is missing"));
    }
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat("merge: cannot create ", out_dir, ": ", ec.message()));
  Manifest merged = first;
  merged.ran.clear();
  for (const auto& [k, f] : by_index) {
    const bool same_dir = fs::equivalent(f->dir, out_dir, ec);
    for (const std::string& p : f->m.ran) {
      merged.ran.push_back(p);
      for (const char* suffix : kPolicyFiles) {
        const fs::path from = fs::path(f->dir) / (p + suffix);
        if (!fs::exists(from)) return absl::NotFoundError(absl::StrCat("merge: missing ", from.string()));
        if (!same_dir) fs::copy_file(from, fs::path(out_dir) / (p + suffix), fs::copy_options::overwrite_existing, ec);
        if (ec) return absl::PermissionDeniedError(absl::StrCat("merge: cannot copy ", from.string(), ": ", ec.message()));
      }
    }
    if (!same_dir) {
      fs::copy_file(f->file, fs::path(out_dir) / fs::path(f->file).filename(), fs::copy_options::overwrite_existing, ec);
    }
  }
  std::vector<std::string> all = merged.ran;
  std::sort(all.begin(), all.end());
  std::vector<std::string> want = first.policies;
  std::sort(want.begin(), want.end());
  if (all != want) return absl::InvalidArgumentError("merge: the shards did not run every policy exactly once");
  return WriteReport(out_dir, merged);
}

}  // namespace qs::trace
