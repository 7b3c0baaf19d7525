// workload_fuzzer: generated workloads (`quotasim gen`, both profiles) at a
// scale the scenario fuzzers never reach -- hundreds to thousands of jobs,
// backlogs, reservations behind returned victims, long runs of settled
// shares -- under knob and share settings drawn from the input, through
//  * the fast engine as it runs by default (settled shares skipped,
//    engine/fast/settling.h) with its invariant checks on,
//  * the fast engine looking at every share in every round
//    (RunOptions::skip_settled_shares off), and
//  * the reference engine, when the workload has at most kMaxReferenceJobs
//    jobs (the reference rescans every queue in every pass: a 3,000-job
//    stress workload takes it seconds).
// The logs must be identical (record digests, fuzz/record_digest.h; on a
// mismatch the runs are made again with text to print the first differing
// line) and the checker must find nothing. A failure prints the two
// commands that reproduce it outside the fuzzer: `quotasim gen ...` and
// `quotasim run ... --set ...` (and `--engine reference` for the other
// side; settled-share skipping has no flag, the message says so).
//
// Caught: with ff443258's fix taken out again, a default-knob stress
// workload of 3,000 jobs (seed 445) failed after 228 executions, about ten
// seconds from an empty corpus (fuzz/regressions/workload_fuzzer/).
//
// Why: the settling bug fixed in ff443258 (a head changed by a job behind
// it left its share settled; a divergence under entitledCapacity LENDABLE)
// needed a 20,000-job stress workload to show, and hours of the small-input
// fuzzers never produced it. Here every input is a new seed of a generated
// workload under a new knob combination: a random search over workloads
// rather than mutation of one, which is what the nightly run of this target
// is for (scripts/fuzz-nightly; a few executions a second).
//
// Input: FuzzedDataProvider bytes, each choice's 0 the default, so short
// inputs give default-knob workloads of kMaxJobs jobs, 20 shares and 5
// instance types (the benchmark's shape, scaled down).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/gen/generator.h"
#include "engine/io/overrides.h"
#include "engine/log/event_log.h"
#include "engine/run.h"
#include "engine/util/strings.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/record_digest.h"
#include "fuzz/string_log.h"

namespace {

constexpr int64_t kMaxJobs = 3000;
constexpr int64_t kMaxReferenceJobs = 300;
// IN_PLACE may cycle by design; every run stops at the same point.
constexpr int64_t kCyclePreemptions = 1000;

struct Drawn {
  qs::gen::GenOptions gen;
  std::vector<std::string> sets;  // --set KEY=VALUE, in order
};

// One of `values`, "" (the scenario's own) for choice 0.
std::string Pick(FuzzedDataProvider& p, std::initializer_list<const char*> values) {
  const size_t i = p.ConsumeIntegralInRange<size_t>(0, values.size());
  return i == 0 ? std::string() : std::string(values.begin()[i - 1]);
}

Drawn Draw(FuzzedDataProvider& p) {
  Drawn d;
  const bool stress = p.ConsumeBool();
  d.gen = qs::gen::GenOptions::For(stress ? qs::gen::Profile::kStress : qs::gen::Profile::kSteady);
  d.gen.seed = p.ConsumeIntegral<uint64_t>();
  // Counted down from the benchmark's shape (20 shares, 5 types), scaled.
  d.gen.jobs = kMaxJobs - p.ConsumeIntegralInRange<int64_t>(0, kMaxJobs - 50);
  d.gen.shares = 20 - p.ConsumeIntegralInRange<int>(0, 19);
  d.gen.units = 5 - p.ConsumeIntegralInRange<int>(0, 4);
  const double loads[] = {0, 0.5, 1.2, 2.0};  // 0: the profile's own
  if (const double l = loads[p.ConsumeIntegralInRange<size_t>(0, 3)]; l > 0) d.gen.load = l;
  d.gen.preemption = !p.ConsumeBool();
  struct Knob {
    const char* key;
    std::initializer_list<const char*> values;
  };
  const Knob knobs[] = {
      {"shareOrder", {"ROUND_ROBIN", "DECLARATION"}},
      {"victimOrder", {"MOST_BORROWED_FIRST"}},
      {"backfill", {"true"}},
      {"unassignedCapacity", {"LENDABLE"}},
      {"entitledCapacity", {"LENDABLE"}},
      {"victimReturn", {"IN_PLACE"}},
      {"timeLimitClock", {"AT_HEAD"}},
      {"schedulingIntervalSeconds", {"30", "300"}},
      {"preemptionDrainSeconds", {"0", "120"}},
      {"submitLatencySeconds", {"5"}},
      {"provisionSeconds", {"60"}},
      {"downloadSeconds", {"30"}},
      {"checkpointIntervalSeconds", {"600"}},
      {"*.borrowLimit", {"0", "50", "-1"}},
      {"*.inSharePreemption", {"DISABLED", "ENABLED"}},
      {"*.strategy", {"LEND_AND_BORROW", "LEND"}},
  };
  for (const Knob& k : knobs) {
    if (std::string v = Pick(p, k.values); !v.empty()) d.sets.push_back(absl::StrCat(k.key, "=", v));
  }
  return d;
}

// The commands that make the same run outside the fuzzer.
std::string Reproduction(const Drawn& d, const char* engine_or_flags) {
  std::string sets;
  for (const std::string& s : d.sets) absl::StrAppend(&sets, " --set '", s, "'");
  return absl::StrCat("quotasim gen --profile ", qs::Sv(qs::gen::ProfileName(d.gen.profile)), " --jobs ", d.gen.jobs,
                      " --shares ", d.gen.shares, " --units ", d.gen.units, " --seed ", d.gen.seed, " --load ",
                      d.gen.load, d.gen.preemption ? "" : " --no-preemption", " --out w.qsb\n  quotasim run w.qsb",
                      sets, " --cycle-preemptions ", kCyclePreemptions, " --events e.jsonl ", engine_or_flags);
}

struct Log {
  std::string text;
  uint64_t digest = 0;
  qs::RunStats stats;
};

enum class Engine { kFast, kFastEveryShare, kReference };

void RunOne(const qs::Scenario& sc, Engine engine, bool text, Log& log) {
  qs::fuzz::DigestLog digest;
  qs::fuzz::StringLog w(&log.text);
  qs::TeeSink both({&w, &digest});
  qs::LogSink& sink = text ? static_cast<qs::LogSink&>(both) : digest;
  if (engine == Engine::kReference) {
    log.stats = qs::RunReferenceEngine(sc, sink, /*check_invariants=*/false, kCyclePreemptions);
  } else {
    qs::RunOptions o;
    o.check_invariants = engine == Engine::kFast;
    o.skip_settled_shares = engine == Engine::kFast;
    o.cycle_preemptions = kCyclePreemptions;
    log.stats = qs::RunFastEngine(sc, sink, o);
  }
  log.digest = digest.digest_with_causes();
}

void ExpectSame(const qs::Scenario& sc, const Drawn& d, Log& fast, Engine other_engine, Log& other,
                const char* what, const char* flags) {
  if (fast.digest == other.digest && fast.stats.end_time == other.stats.end_time &&
      fast.stats.stopped == other.stats.stopped) {
    return;
  }
  RunOne(sc, Engine::kFast, /*text=*/true, fast);
  RunOne(sc, other_engine, /*text=*/true, other);
  QS_FUZZ_CHECK(false, "differential mismatch (A = fast engine, B = " << what << "): "
                           << qs::fuzz::FirstDifference(fast.text, other.text) << "\nend times " << fast.stats.end_time
                           << " vs " << other.stats.end_time << ", stopped '" << fast.stats.stopped << "' vs '"
                           << other.stats.stopped << "'\nreproduce:\n  " << Reproduction(d, flags));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  const Drawn d = Draw(p);
  if (!qs::gen::ValidateGenOptions(d.gen).ok()) return -1;
  absl::StatusOr<qs::Scenario> sc = qs::gen::Generate(d.gen);
  QS_FUZZ_CHECK(sc.ok(), "generator: " << sc.status().message());
  absl::StatusOr<qs::Overrides> o = qs::Overrides::Parse(d.sets);
  QS_FUZZ_CHECK(o.ok(), "overrides: " << o.status().message());
  // A setting AWS would refuse for some request of this workload (a
  // borrowLimit left on a share made LEND, say) is no workload to compare.
  if (!qs::ApplyOverrides(*o, *sc).ok()) return -1;

  static Log& fast = *new Log;
  static Log& every = *new Log;
  static Log& reference = *new Log;
  RunOne(*sc, Engine::kFast, /*text=*/false, fast);
  QS_FUZZ_CHECK(fast.stats.invariant_violations == 0,
                "fast engine checker: " << fast.stats.invariant_violations << " violation(s); first: "
                                        << fast.stats.violation_messages.front() << "\nreproduce:\n  "
                                        << Reproduction(d, ""));
  QS_FUZZ_CHECK(fast.stats.stopped.empty() || sc->knobs.victim_return == qs::VictimReturn::kInPlace,
                "preemption cycle under victimReturn BEHIND_RESERVATION: " << fast.stats.stopped << "\nreproduce:\n  "
                                                                            << Reproduction(d, ""));
  RunOne(*sc, Engine::kFastEveryShare, /*text=*/false, every);
  ExpectSame(*sc, d, fast, Engine::kFastEveryShare, every, "fast engine looking at every share in every round",
             "(A; B is this run with RunOptions::skip_settled_shares false, which no flag sets: "
             "ExpectSkippingChangesNothing in engine/conformance/differential_test.cc runs both)");
  if (d.gen.jobs <= kMaxReferenceJobs) {
    RunOne(*sc, Engine::kReference, /*text=*/false, reference);
    ExpectSame(*sc, d, fast, Engine::kReference, reference, "reference engine", "--engine reference");
  }
  return 0;
}
