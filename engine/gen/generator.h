// File: engine/gen/generator.h
//
// Seeded synthetic workloads for benchmark runs (`quotasim gen`): a service
// environment of 1-5 GPU instance types, 1-20 quota shares with a mix of
// strategies, borrow limits and in-share preemption, and N job submissions
// with
//  * arrivals: a Poisson process whose rate follows a diurnal cycle
//    (rate x (1 + a sin(2 pi t / 1 day)); a = 0.3 steady, 0.5 stress), with
//    bursts: steady, runs of
//    50-349 jobs at five times the rate (about burst_fraction of the jobs);
//    stress, whole blocks of kBlockJobs jobs at ten times the rate;
//  * run times: lognormal, median `median_run_seconds` (Philly-like 15 min),
//    sigma 1.6, capped at `max_run_seconds` (a long tail to days);
//  * instance counts 1, 2, 4, 8, 16 with weights 60/15/12/9/4 %, capped at
//    a quarter of the share's limit for the type;
//  * priorities: steady, 98% at 5 and 2% at 6-9, priority updates to 5-9
//    (never below the usual priority); stress, 0-8 (sum of three small
//    uniforms), updates to 0-9;
//  * team sizes skewed Zipf-like (share s gets weight 1/(s+1): a few teams
//    dominate, as in real clusters), and limits sized to them: a share's
//    limits add up to ~128 instances x its relative size (x 0.8, 1 or 1.2),
//    split over its instance types (at least 16 each): steady, one type;
//    stress, about half of the types. The
//    environment holds 90-110% of the limits of each type;
//  * load: every share offers `load` times its limits on each of its types
//    (instance-time over time; scaled down on a type whose environment
//    holds less than its limits add up to), counting the quarter-of-limit
//    cap on instance counts and the run-time clamp. No share is overloaded
//    on average; the diurnal peaks (1 + a) and bursts are;
//  * priority updates, terminations and temporary quota-limit changes
//    (50-150% of a share's limits for half the time to the next change,
//    at most six hours in the steady profile, then back) sprinkled in. A
//    steady follow-up comes before its job's first attempt could end, so
//    it always finds the job alive; a stress one may find it gone.
//
// Determinism: jobs are generated in blocks of kBlockJobs, each from its own
// MT19937-64 (std::mt19937_64's sequence) seeded by (seed, block), with
// quotasim's own distribution code (the standard distributions are
// implementation-defined). Blocks run in parallel under oneTBB; arrival
// offsets are a serial prefix sum of the blocks' spans. A block is drawn
// three times (for its span, without the jobs' arithmetic; for the last
// arrival, which the limit changes need; and for its events), so the jobs
// are held one window of blocks at a time. The same options give the same
// Scenario, byte for byte once written, at any thread count and window.
//
// Thread-safety: pure function; uses the calling arena's TBB workers.
#ifndef QS_ENGINE_GEN_GENERATOR_H_
#define QS_ENGINE_GEN_GENERATOR_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/gen/qsb.h"
#include "engine/model/scenario.h"

namespace qs::gen {

inline constexpr int64_t kBlockJobs = 1 << 14;
// Blocks drawn at once by GenerateQsb/GenerateQsbFile: 16 x 16,384 jobs,
// 10 MB of drawn jobs.
inline constexpr int64_t kGenWindowBlocks = 16;
inline constexpr int64_t kMaxJobs = 100'000'000;

// The shape of the workload. kSteady (the default) is a cluster in a stable
// regime: the backlog stays bounded over the arrival span, most jobs wait
// minutes to hours, and every follow-up request aims at a job still alive.
// kStress is the saturated shape kept for stress runs and older benchmark
// rows: whole blocks of 16,384 jobs arriving ten times faster, random
// priorities 0-8, follow-ups that may find their job gone, limit changes
// lasting a quarter of the span.
enum class Profile { kSteady, kStress };

// "steady" / "stress"; nullopt for anything else.
std::optional<Profile> ParseProfile(std::string_view name);
std::string_view ProfileName(Profile p);

struct GenOptions {
  Profile profile = Profile::kSteady;
  int64_t jobs = 100'000;
  int shares = 8;            // 1..20
  int units = 2;             // 1..5 instance types
  uint64_t seed = 1;
  double load = 0.7;         // offered instance-time / limits, per share and type
  double median_run_seconds = 900;
  double max_run_seconds = 7 * 86400;
  double diurnal_amplitude = 0.5;  // For(): 0.3 steady, 0.5 stress
  double burst_fraction = 0.05;      // share of blocks that are bursts
  bool preemption = true;            // in-share preemption on some shares, borrowing on
  double priority_update_fraction = 0.02;
  double terminate_fraction = 0.01;
  int limit_changes = 4;             // temporary limit changes (two UpdateQuotaShare events each)

  // The defaults of a profile (kStress: load 0.9; kSteady: load 0.7).
  static GenOptions For(Profile p);
};

// The regime a workload offers, known before any run (`quotasim gen`
// prints it; `run` shows what the engine made of it): the arrival span
// and, per instance type, the instance-time the jobs ask for (one attempt
// each) over the environment's capacity for that span.
struct OfferedLoad {
  SimTime span = 0;
  std::vector<std::pair<std::string, double>> utilisation;  // per type, in type order
  int64_t follow_ups = 0;  // priority updates and terminations
};

// Checks ranges (jobs 1..1e8, shares 1..20, units 1..5, load > 0, ...).
absl::Status ValidateGenOptions(const GenOptions& o);

absl::StatusOr<Scenario> Generate(const GenOptions& o, OfferedLoad* offered = nullptr);

// The .qsb bytes of Generate(o) (EncodeQsb(*Generate(o), kQsbVersion, block_events),
// byte for byte), encoded block by block as the jobs are drawn, window by
// window (window_blocks blocks of kBlockJobs at a time; tests make it
// small). The events never exist as request objects all at once.
// exact_span (tests): find the last arrival, which times the limit
// changes, by drawing every block once more, rather than from the last
// block with a check at the end (and a second encoding if it failed).
absl::StatusOr<std::string> GenerateQsb(const GenOptions& o, size_t block_events = kQsbBlockEvents,
                                        int64_t window_blocks = kGenWindowBlocks, bool exact_span = false);
// The same bytes written to `path` (`quotasim gen --out X.qsb`) in memory
// that does not grow with --jobs: a window of drawn jobs and a few encoded
// blocks at a time. The blocks go to an unlinked scratch file beside `path`
// as they are encoded and are copied after the prefix that lists them.
// `bytes_written`, when given, counts the encoded bytes as they are written
// (relaxed; a progress line reads it from another thread).
absl::Status GenerateQsbFile(const GenOptions& o, const std::string& path,
                             size_t block_events = kQsbBlockEvents, OfferedLoad* offered = nullptr,
                             std::atomic<int64_t>* bytes_written = nullptr);

}  // namespace qs::gen

#endif  // QS_ENGINE_GEN_GENERATOR_H_
