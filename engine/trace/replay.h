// File: engine/trace/replay.h
//
// Trace replay: trace + mapping -> Workload (policy-independent: service jobs
// with whole-instance demands, shares and their derived limits over time),
// then Workload + Policy -> Scenario (made block by block as the run reaches
// it: WorkloadStream, workload_stream.h), run by the fast engine, observed by
// SummaryBuilder (summary.h) and a ReplayObserver (time series, wait CDF,
// fairness) -> PolicyRun.
//
// Workload rules (see mapping.h for the knobs):
//  * instances = ceil(gpus / gpusPerInstance); a fractional GPU takes a whole
//    instance (quota shares count instances). Jobs with 0 GPUs are skipped
//    (counted) unless zeroGpuJobs is "oneInstance".
//  * submit times are shifted so the earliest job submits at 0; jobs are
//    ordered by (submit, file line) and named j0000000, j0000001, ... in that
//    order (the index is the name, so observers need no hash lookups).
//  * teams become shares: explicit `teams` first, else prefix + team for the
//    maxShares-1 teams with most demand (instance-seconds; ties by name) and
//    `otherShare` for the rest. Share names keep [A-Za-z0-9_-] (others
//    become '_'); shares are declared in name order.
//  * limits: "proportional" gives every share 1 instance and divides the
//    rest of the environment by demand (largest remainder, ties by name);
//    "given" takes them from the mapping; "quotaTable" reads a per-day table
//    (quota_table.h): floor(GPUs / gpusPerInstance), at least 1 (AWS needs
//    maxCapacity >= 1), with an UpdateQuotaShare for each share and day whose
//    value changes, and an UpdateServiceEnvironment when the environment
//    (absent `instances`: the sum of the limits) changes.
//
// Scenario rules: CreateQuotaShare for every share at time 0 (template and
// named entries of the policy applied), then limit changes and submissions
// in time order (changes first at equal times). A single-share policy puts
// every job in one RESERVE share sized like the environment.
//
// Determinism: everything here is a pure function of its inputs; RunPolicy
// may run for several policies in parallel (each run owns its state).
//
// Thread-safety: Workload is immutable once built; concurrent RunPolicy
// calls on the same Workload are safe.
#ifndef QS_ENGINE_TRACE_REPLAY_H_
#define QS_ENGINE_TRACE_REPLAY_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/run.h"
#include "engine/model/scenario.h"
#include "engine/log/share_table.h"
#include "engine/log/summary.h"
#include "engine/trace/mapping.h"
#include "engine/trace/policy.h"
#include "engine/trace/quota_table.h"
#include "engine/trace/trace_reader.h"

namespace qs::trace {

struct WorkloadJob {
  SimTime submit = 0;
  SimTime run = 0;
  int64_t instances = 0;
  int64_t line = 0;
  int32_t share = 0;
  int32_t priority = 0;
  bool failed = false;
};

struct LimitChange {
  SimTime time = 0;
  int64_t day = 0;                 // row of the quota table
  std::vector<int64_t> limits;     // per share
  int64_t environment = 0;
};

struct Workload {
  std::string trace_name;          // file name without directory and extensions
  std::string instance_type;
  std::vector<std::string> shares;             // declaration order (by name)
  std::vector<std::string> share_teams;        // "team1 team2 ..." per share, for reports
  std::vector<int64_t> limits;                 // initial limit per share
  int64_t environment = 0;                     // initial environment instances
  std::vector<LimitChange> changes;            // later limit changes (quota table)
  std::vector<WorkloadJob> jobs;               // by (submit, line)
  std::vector<int64_t> demand_instance_seconds;  // per share
  ImportStats import;
  int64_t zero_gpu_skipped = 0;
  int64_t rounded_up = 0;          // jobs whose GPUs were not a multiple of gpusPerInstance
  uint64_t fingerprint = 0;        // FNV-1a of all of the above that affects a run

  int ShareIndex(std::string_view name) const;
};

// Imports `trace_path` and applies the mapping. `table` is required when the
// mapping's limits come from a quota table (else ignored).
absl::StatusOr<Workload> BuildWorkload(const std::string& trace_path, TraceFormat format,
                                       const ImportOptions& import, const Mapping& mapping,
                                       const QuotaTable* table);
// Same from already-imported jobs (tests, fuzzers).
absl::StatusOr<Workload> BuildWorkloadFromJobs(std::string trace_name, const std::vector<TraceJob>& jobs,
                                               const Mapping& mapping, const QuotaTable* table);

// What the CLI commands load: trace + mapping (+ quota table).
struct WorkloadInputs {
  std::string trace_path;
  std::string format;            // empty: the mapping's, else guessed from the file name
  std::string mapping_path;
  std::string quota_table_path;  // empty: the mapping's
  std::string swf_team;          // empty: the mapping's
  bool skip_bad_rows = false;
};
struct LoadedWorkload {
  Workload workload;
  Mapping mapping;
};
absl::StatusOr<LoadedWorkload> LoadWorkload(const WorkloadInputs& in);

// The scenario one policy gives, held whole (WorkloadStream's blocks read
// into one Scenario; RunPolicy streams them instead). `job_share` (may be
// null) receives the share index of every job in this scenario (all 0 for a
// single-share policy).
absl::StatusOr<Scenario> BuildScenario(const Workload& w, const Policy& p, std::vector<int32_t>* job_share);

// Shared progress counters, updated by runs in any thread (relaxed atomics;
// progress output only, never results).
struct ReplayProgress {
  std::atomic<int64_t> jobs_done{0};
  std::atomic<int64_t> sim_ms_max{0};
  std::atomic<int64_t> runs_done{0};
};

// Everything one policy run produces.
struct PolicyRun {
  std::string policy;
  std::string description;
  Summary summary;              // with its RunProvenance
  std::vector<DeclaredShare> shares;  // as the policy declares them (the per-share table)
  std::string summary_json;     // SummaryToJson
  // hour, per-share instances in use, total, capacity, preemptions (cross,
  // in-share), then per share the borrowed part of its use ("borrowed:S")
  // and its limit on the trace's type ("limit:S"); bucket averages.
  std::string timeseries_csv;
  std::string waits_csv;        // wait-time CDF
  std::string metrics_json;     // the comparison row (report.h reads it)
  RunStats stats;
};

struct RunPolicyOptions {
  bool check_invariants = true;
  SimTime bucket = 3600 * kMillisPerSecond;  // time-series resolution
  ReplayProgress* progress = nullptr;
  std::string events_path;                   // write the JSON Lines log here when set
  std::string tool_version;                  // the summary's run.quotasim
  // Build the compare files (timeseries_csv, waits_csv, metrics_json); off,
  // only the summary (and the shares) are filled in.
  bool report = true;
};

absl::StatusOr<PolicyRun> RunPolicy(const Workload& w, const Policy& p, const RunPolicyOptions& options);

}  // namespace qs::trace

#endif  // QS_ENGINE_TRACE_REPLAY_H_
