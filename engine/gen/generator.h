// File: engine/gen/generator.h
//
// Seeded synthetic workloads for benchmark runs (`quotasim gen`): a service
// environment of 1-5 GPU instance types, 1-20 quota shares with a mix of
// strategies, borrow limits and in-share preemption, and N job submissions
// with
//  * arrivals: a Poisson process whose rate follows a diurnal cycle
//    (rate x (1 + a sin(2 pi t / 1 day))), with bursts (blocks of jobs whose
//    gaps shrink tenfold);
//  * run times: lognormal, median `median_run_seconds` (Philly-like 15 min),
//    sigma 1.6, capped at `max_run_seconds` (a long tail to days);
//  * instance counts 1, 2, 4, 8, 16 with weights 60/15/12/9/4 %, capped at
//    a quarter of the share's limit for the type;
//  * priorities 0-9; team sizes skewed Zipf-like (share s gets weight
//    1/(s+1): a few teams dominate, as in real clusters), and limits sized
//    to them: a share's limits add up to ~128 instances x its relative size
//    (x 0.8, 1 or 1.2), split over its 1-5 instance types (at least 16
//    each). The environment holds 90-110% of the limits of each type;
//  * load: every share offers `load` times its limits on each of its types
//    (instance-time over time; scaled down on a type whose environment
//    holds less than its limits add up to), counting the quarter-of-limit
//    cap on instance counts and the run-time clamp. No share is overloaded
//    on average; the diurnal peaks (1 + a) and bursts are;
//  * priority updates, terminations and temporary quota-limit changes
//    (50-150% of a share's limits for half the time to the next change,
//    then back) sprinkled in.
//
// Determinism: jobs are generated in blocks of kBlockJobs, each from its own
// std::mt19937_64 seeded by (seed, block), with quotasim's own distribution
// code (the standard distributions are implementation-defined). Blocks run
// in parallel under oneTBB and write index-addressed slots; arrival offsets
// are a serial prefix sum over blocks. The same options give the same
// Scenario, byte for byte once written, at any thread count.
//
// Thread-safety: pure function; uses the calling arena's TBB workers.
#ifndef QS_ENGINE_GEN_GENERATOR_H_
#define QS_ENGINE_GEN_GENERATOR_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "engine/gen/qsb.h"
#include "engine/model/scenario.h"

namespace qs::gen {

inline constexpr int64_t kBlockJobs = 1 << 14;
inline constexpr int64_t kMaxJobs = 100'000'000;

struct GenOptions {
  int64_t jobs = 100'000;
  int shares = 8;            // 1..20
  int units = 2;             // 1..5 instance types
  uint64_t seed = 1;
  double load = 0.9;         // offered instance-time / limits, per share and type
  double median_run_seconds = 900;
  double max_run_seconds = 7 * 86400;
  double diurnal_amplitude = 0.5;
  double burst_fraction = 0.05;      // share of blocks that are bursts
  bool preemption = true;            // in-share preemption on some shares, borrowing on
  double priority_update_fraction = 0.02;
  double terminate_fraction = 0.01;
  int limit_changes = 4;             // temporary limit changes (two UpdateQuotaShare events each)
};

// Checks ranges (jobs 1..1e8, shares 1..20, units 1..5, load > 0, ...).
absl::Status ValidateGenOptions(const GenOptions& o);

absl::StatusOr<Scenario> Generate(const GenOptions& o);

// The .qsb bytes of Generate(o) (EncodeQsb(*Generate(o), 2, block_events),
// byte for byte), encoded block by block from the drawn jobs without
// holding the request objects of the whole scenario (`quotasim gen --out
// X.qsb`): the drawn jobs and the encoded blocks, under a third of the
// memory of Generate + EncodeQsb.
absl::StatusOr<std::string> GenerateQsb(const GenOptions& o, size_t block_events = kQsbBlockEvents);
// The same bytes written to `path` (`quotasim gen --out X.qsb`): the drawn
// jobs are freed once the blocks are encoded, and the blocks are written
// one by one, never joined, so the file is never held twice.
absl::Status GenerateQsbFile(const GenOptions& o, const std::string& path,
                             size_t block_events = kQsbBlockEvents);

}  // namespace qs::gen

#endif  // QS_ENGINE_GEN_GENERATOR_H_
