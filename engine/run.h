// File: engine/run.h
//
// The entry points of the two engines. Both simulate one Scenario from time 0
// to the end (or the horizon) and report every log record to a LogSink.
//
//  * RunFastEngine (engine.h/.cc): the production engine. Indexed queues,
//    incremental accounting; optional CheckInvariants() after every event.
//  * RunReferenceEngine (reference/reference_engine.cc): a deliberately
//    simple, slow implementation of the same rules (docs/semantics.md) by
//    linear scans over all unfinished jobs. It exists to be obviously right; tests and
//    fuzzers demand byte-identical logs from both.
//
// Example:
//   absl::StatusOr<Scenario> sc = LoadScenarioFile("notebook-example.json");
//   std::ofstream out("events.jsonl");
//   JsonlWriter log(&out);
//   RunStats stats = RunFastEngine(*sc, log, RunOptions{});
//
// Thread-safety: each run owns all its state; concurrent runs on the same
// (const) Scenario with different sinks are safe.
#ifndef QS_ENGINE_RUN_H_
#define QS_ENGINE_RUN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "engine/log/event_log.h"
#include "engine/model/event_stream.h"
#include "engine/model/scenario.h"
#include "engine/model/scenario_index.h"
#include "engine/model/time.h"

namespace qs {

struct Summary;  // engine/log/summary.h

inline constexpr int64_t kDefaultCyclePreemptions = 10'000;

// RunStats::stopped for a preemption cycle (both engines say the same).
inline std::string PreemptionCycleMessage(SimTime now, std::string_view job, std::string_view share,
                                          int64_t preemptions) {
  return absl::StrCat("run stopped at t=", FormatSeconds(now), ": job ", absl::string_view(job.data(), job.size()),
                      " of share ", absl::string_view(share.data(), share.size()),
                      " was preempted ", preemptions,
                      " times with no request applied, no attempt ended and no job finished in between: a "
                      "preemption cycle (docs/semantics.md, \"Preemption cycles\"); "
                      "preemptionRetriesBeforeTermination or horizonSeconds bounds it");
}

struct RunOptions {
  // Run CheckInvariants() after every event and after every pass. Violations
  // are counted and the first few described in RunStats; the run goes on.
  bool check_invariants = true;
  // Also recount all accounting from the job records after every event and
  // check invariants 5 and 6 after every pass (O(jobs) per event: tests and
  // fuzzers only).
  bool full_invariant_check = false;
  // Fast engine: a pass skips a share whose head was looked at and could do
  // nothing (dispatch, borrow, preempt) when nothing that look read has
  // changed since: the head, its share's queue, the state of the head's
  // instance type, the configuration (engine/fast/settling.h).
  // Off, every share with a head is looked at in every round; the output is
  // the same either way (tests and fuzzers compare the two).
  bool skip_settled_shares = true;
  // Ends a run caught in a preemption cycle (docs/semantics.md, "Preemption
  // cycles"). When one job has been preempted this many times with no
  // request applied, no attempt ended and no job finished in between, the
  // run stops after that pass, as at a horizon, and RunStats::stopped says
  // why. 0: never (such a run does not end). The reference engine takes it
  // as RunReferenceEngine's cycle_preemptions.
  int64_t cycle_preemptions = kDefaultCyclePreemptions;
  // Fast engine: the arrays sized by the job count (job records, name
  // ranks) are mapped for transparent huge pages (engine/util/huge_pages.h);
  // false: plain heap blocks (benchmarks measure both; output is the same).
  bool huge_pages = true;
  // Write a cause line for each RUNNABLE job whose wait cause changed, at
  // the end of each instant (docs/semantics.md §9; `run --wait-causes`).
  // Off, the log is the spec's, byte for byte. The reference engine takes
  // it as RunReferenceEngine's wait_causes.
  bool wait_causes = false;
  // Knobs to use instead of the scenario's own (`quotasim sweep` runs one
  // scenario under many knob settings without copying it). Fast engine only.
  std::optional<Knobs> knobs;
  // Fast engine, for benchmarks: RunStats::pass_ns adds up the time spent
  // in scheduling passes (a steady_clock reading before and after each,
  // whose own cost is included).
  bool time_passes = false;
  // Fast engine: when set, the engine keeps the run's summary itself
  // (engine/fast/summary_accumulators.h) and writes it here at the end: the
  // Summary a SummaryBuilder would build from the records, byte for byte
  // (tests and the differential fuzzer compare them), without a record per
  // transition. `quotasim run --summary` without --events.
  Summary* summary = nullptr;
  // Fast engine: false sends the sink no JobRecord (rejections, snapshots,
  // capacity changes, progress and the end still go to it); for runs whose
  // only output is `summary`.
  bool job_records = true;
};

struct RunStats {
  SimTime end_time = 0;
  int64_t events_processed = 0;  // scenario + internal events, ticks included
  int64_t passes = 0;
  int64_t pass_rounds = 0;       // fast engine: rounds the passes ran (phases 1-3 once each)
  int64_t pass_ns = 0;           // fast engine, with RunOptions::time_passes: time in passes
  int64_t jobs_submitted = 0;    // accepted SubmitServiceJob requests
  int64_t invariant_violations = 0;
  std::vector<std::string> violation_messages;  // the first 20
  // Why the run ended before its events did (RunOptions::cycle_preemptions),
  // or "" when it ran to the end (or to the horizon).
  std::string stopped;
};

RunStats RunFastEngine(const Scenario& scenario, LogSink& sink, const RunOptions& options);
// The same run of a scenario read block by block (engine/model/event_stream.h):
// the same records, in a fraction of the memory. It first makes the index
// (IndexEventStream): for most streams a read of every block, so that a
// malformed stream is an error before any record is written. A stream that
// states its facts up front (EventStream::facts(): a .qsb file of version
// 9 with generated job names) is read once, by the run, and each block is
// checked against the facts as it is read: a malformed block is then an
// error when the run reaches it, after records were written (a run that
// stops early reads the rest). An error while running ends the run and is
// returned.
absl::StatusOr<RunStats> RunFastEngine(const EventStream& stream, LogSink& sink, const RunOptions& options);
// The same with the index already made (IndexEventStream(stream),
// engine/model/scenario_index.h). `quotasim run` writes its outputs under
// their names only when the run succeeded (AtomicFile).
absl::StatusOr<RunStats> RunFastEngine(const EventStream& stream, ScenarioIndex index, LogSink& sink,
                                       const RunOptions& options);
// check_invariants = false skips the reference's own (slow, string-keyed)
// invariant checks: for callers that only compare its decisions (the
// differential fuzzer, benchmarks).
RunStats RunReferenceEngine(const Scenario& scenario, LogSink& sink, bool check_invariants = true,
                            int64_t cycle_preemptions = kDefaultCyclePreemptions, bool wait_causes = false);

}  // namespace qs

#endif  // QS_ENGINE_RUN_H_
