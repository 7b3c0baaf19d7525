// File: engine/trace/report.h
//
// Policy comparison on one trace: running a list of policies in parallel,
// writing each policy's outputs, sharding the list over machines, merging
// shard outputs, and the comparison report.
//
// Output directory (results/<trace>/ by default):
//   <policy>.summary.json     SummaryToJson of the run (summary.h)
//   <policy>.metrics.json     the comparison row and per-share waits
//   <policy>.timeseries.csv   per-share instances in use per bucket, total,
//                             capacity, cross-share / in-share preemptions
//   <policy>.waits.csv        wait-time CDF (percentile, seconds)
//   shard-K-of-N.json         manifest of the run that wrote them
//   comparison.md, comparison.csv, share-waits.csv   the report
// The plots (scripts/plot-compare) are drawn from the CSV files.
//
// Determinism: RunComparison runs policy i in slot i (tbb::parallel_for over
// a blocked_range with grain 1); the outputs depend only on the workload and
// the policies, never on thread count or shard layout. WriteReport reads the
// per-policy files back, so a single run and a merge of shards produce
// byte-identical report files. Nothing written depends on wall time, paths
// of the machine or shard layout, except the shard-K-of-N.json manifest.
//
// Sharding: policy i belongs to shard i mod N. ShardFromEnvironment() reads
// AWS_BATCH_JOB_ARRAY_INDEX / AWS_BATCH_JOB_ARRAY_SIZE,
// SLURM_ARRAY_TASK_ID (minus SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_COUNT,
// or JOB_COMPLETION_INDEX (Kubernetes indexed Jobs; the count from
// QS_SHARD_COUNT), in that order.
//
// Thread-safety: functions are safe to call concurrently on distinct
// directories.
#ifndef QS_ENGINE_TRACE_REPORT_H_
#define QS_ENGINE_TRACE_REPORT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/trace/policy.h"
#include "engine/trace/replay.h"

namespace qs::trace {

struct Shard {
  int index = 0;
  int count = 1;
  bool operator==(const Shard&) const = default;
};

// "K/N" with 0 <= K < N.
absl::StatusOr<Shard> ParseShard(std::string_view text);
// From the job-array environment (see above); nullopt when none is set.
// `getenv` is injectable for tests.
absl::StatusOr<std::optional<Shard>> ShardFromEnvironment(
    const std::function<const char*(const char*)>& getenv);
// Indices of `num_policies` that belong to `shard`.
std::vector<size_t> ShardPolicies(size_t num_policies, Shard shard);

// What a compare run writes besides the per-policy files: everything the
// report needs about the workload, and which policies this shard ran.
struct Manifest {
  std::string trace_name;
  std::string mapping_description;
  std::string fingerprint;         // hex of Workload::fingerprint
  std::string workload_json;       // description of the workload (identical on every shard)
  std::vector<std::string> policies;  // all policies of the comparison, report order
  Shard shard;
  std::vector<std::string> ran;       // the policies this shard ran
};
Manifest MakeManifest(const Workload& w, const Mapping& m, const std::vector<Policy>& policies, Shard shard);

// Runs policies[i] for every i in `which`, in parallel, results in the order
// of `which`. The first error (in that order) is returned.
absl::StatusOr<std::vector<PolicyRun>> RunComparison(const Workload& w, const std::vector<Policy>& policies,
                                                     const std::vector<size_t>& which,
                                                     const RunPolicyOptions& options);

absl::Status WritePolicyRun(const std::string& dir, const PolicyRun& run);
absl::Status WriteManifest(const std::string& dir, const Manifest& m);
absl::StatusOr<Manifest> ReadManifest(const std::string& path);

// Reads <dir>/<policy>.metrics.json for every policy of `m` and writes
// comparison.md, comparison.csv and share-waits.csv into `dir`.
absl::Status WriteReport(const std::string& dir, const Manifest& m);

// Collects the shard-*.json manifests of `shard_dirs`, checks they describe
// the same comparison (fingerprint, policy list, shard count) and cover every
// shard exactly once, copies the per-policy files into `out_dir` (when it is
// another directory) and writes the report there.
absl::Status MergeShards(const std::string& out_dir, const std::vector<std::string>& shard_dirs);

}  // namespace qs::trace

#endif  // QS_ENGINE_TRACE_REPORT_H_
