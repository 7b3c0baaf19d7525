// File: engine/log/summary.h
//
// The run summary of `quotasim run --summary FILE` (scenario-format.md,
// "Summary"), computed from the event log records alone. Because it only
// reads records, the fast and the reference engine share it, and the summary
// of a run can be recomputed from its JSON Lines log.
//
// Definitions (per share, and in total):
//  * jobs submitted / succeeded / failed / unfinished (not terminal at the end).
//  * instanceSeconds[unit].own / .borrowed: instances held (from the SCHEDULED
//    line's capacityUsage minus its borrowed parts, and the borrowed parts)
//    times the time held, until the line that ends the attempt (RUNNABLE,
//    SUCCEEDED, FAILED) or the end of the run.
//  * waitSeconds: first RUNNABLE -> first SCHEDULED of each job that was
//    scheduled (count, mean, p50, p95, p99, max; nearest-rank percentiles).
//  * preemptions: preemption starts of the share's jobs, cross-share and
//    in-share.
//  * workLostInstanceSeconds: for each preempted attempt that reached
//    RUNNING, instances x (drain end - RUNNING time - the part of the run
//    its last checkpoint kept, checkpointedSeconds).
//  * capacityErrors: RUNNABLE lines with the CAPACITY:INSUFFICIENT_INSTANCE_
//    CAPACITY reason (attempts SageMaker could not provision); written only
//    when the run had at least one.
//  * reclaimLatencySeconds: for jobs of the share that triggered a
//    cross-share preemption, from its first preemption start to the job's
//    SCHEDULED (count, max, p99).
//  * total.utilisation[unit]: instance-seconds used / integral of the
//    environment's capacity over [0, endTime].
//  * invariantViolations: reported by the engine (must be 0).
//  * waitByCauseSeconds (runs with wait causes, RunOptions::wait_causes;
//    docs/semantics.md §9): the time the share's jobs spent RUNNABLE, every
//    RUNNABLE spell (not only the first wait), split by the cause lines'
//    causes; CAPACITY_ERROR is the SCHEDULED time of attempts that ended in
//    a capacity error. Written for runs with wait causes (set_wait_causes)
//    and whenever the records have cause lines.
//  * backlog: jobs waiting (submitted, not terminal, holding no capacity:
//    SUBMITTED/RUNNABLE, or requeued after a preemption or a retry), at its
//    peak, as a time-weighted mean over the arrivals [0, last submission],
//    and at the last submission. A stable cluster keeps the last near the
//    mean; a saturated one ends the arrivals at its peak.
//
// Thread-safety: thread-compatible.
#ifndef QS_ENGINE_LOG_SUMMARY_H_
#define QS_ENGINE_LOG_SUMMARY_H_

#include <cstdint>
#include <array>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "engine/log/event_log.h"
#include "engine/model/scenario.h"

namespace qs {

struct DurationStats {
  int64_t count = 0;
  SimTime sum = 0;
  SimTime p50 = 0, p95 = 0, p99 = 0, max = 0;
  bool operator==(const DurationStats&) const = default;
};

// Count, sum, nearest-rank p50/p95/p99 (ceil(p/100 * n), 1-based) and max
// of `values` (waits, reclaim latencies); zeros when empty. Linear time: the
// order statistics are selected, not sorted for.
DurationStats DurationStatsOf(std::vector<SimTime> values);
// The same of `values` in place (reordering them), with no copy.
DurationStats DurationStatsIn(std::span<SimTime> values);

struct ShareSummary {
  int64_t submitted = 0, succeeded = 0, failed = 0, unfinished = 0;
  // unit -> (own, borrowed) in instance-milliseconds.
  std::map<std::string, std::pair<int64_t, int64_t>> instance_ms;
  DurationStats wait;
  int64_t preempted_cross = 0, preempted_in = 0;
  int64_t work_lost_instance_ms = 0;
  DurationStats reclaim;
  // Capacity errors (docs/semantics.md §2, "Capacity"): attempts SageMaker
  // could not provision. In the JSON only when a run had any.
  int64_t capacity_errors = 0;
  // Milliseconds RUNNABLE by WaitCause (index), and CAPACITY_ERROR's
  // SCHEDULED time; in the JSON only when the log had cause lines.
  std::array<int64_t, kNumWaitCauses> wait_by_cause_ms{};
  bool operator==(const ShareSummary&) const = default;
};

// Adds share s's counts, instance-ms and wait causes to `total` (not its
// wait and reclaim statistics, which are ranked over all jobs).
void AccumulateShare(ShareSummary& total, const ShareSummary& s);

struct BacklogStats {
  int64_t peak = 0;
  SimTime peak_time = 0;
  double mean_over_arrivals = 0;
  int64_t at_last_submission = 0;
  SimTime last_submission = 0;
  bool operator==(const BacklogStats&) const = default;
};

// Where a summary came from: the `run` object that leads the JSON, set by
// the command that ran it (not by SummaryBuilder, which sees records only).
struct RunProvenance {
  std::string scenario;   // the scenario file as named on the command line, or "TRACE under POLICY"
  std::string engine;     // "fast" | "reference"
  std::string quotasim;   // version and commit of the tool
  Knobs knobs;            // every `simulation` knob, defaults written out
  int64_t cycle_preemptions = 0;  // the guard (--cycle-preemptions; 0 = never)
  bool invariant_checks = true;
  std::string stopped;    // why the run stopped early; empty when it ran to its end
  // The --set KEY=VALUE overrides applied to the scenario (engine/io/overrides.h),
  // in order; written only when there are some.
  std::vector<std::string> overrides;
  // RunOptions::wait_causes; written (as waitCauses: true) only when set.
  bool wait_causes = false;
};

struct Summary {
  std::optional<RunProvenance> run;
  SimTime end_time = 0;
  BacklogStats backlog;
  int64_t invariant_violations = 0;
  int64_t rejected_requests = 0;
  ShareSummary total;
  bool wait_causes = false;  // the log had cause lines
  std::map<std::string, double> utilisation;  // unit -> fraction
  std::map<std::string, ShareSummary> shares;  // by name
  // Jobs that never ran because their share or the environment cannot hold
  // them: a MISCONFIGURATION reason and never SCHEDULED, ended so or still
  // waiting at the end. Not in the JSON: `quotasim run` warns of them
  // (`--strict` makes them an error), naming the first job of the run that
  // had such a reason ("JOB: CODE").
  int64_t never_ran = 0;
  std::string never_ran_example;
};

// Whether two summaries have the same figures, every field but `run`
// compared exactly (doubles included): the check of the fast engine's own
// summary against SummaryBuilder's, cheaper than comparing their JSON.
bool SameFigures(const Summary& a, const Summary& b);

class SummaryBuilder : public LogSink {
 public:
  void OnJob(const JobRecord& r) override;
  void OnRejected(const RejectedRecord& r) override;
  void OnSnapshot(const SnapshotRecord&) override {}
  void OnCapacity(const CapacityRecord& r) override;
  void OnEnd(SimTime end_time) override;

  // The run writes cause lines (RunOptions::wait_causes): the summary has
  // waitByCauseSeconds even if no job ever waited past an instant (the log
  // then has no cause line to tell). Without it, cause lines in the records
  // turn it on.
  void set_wait_causes(bool on) { wait_causes_expected_ = on; }

  // Valid after OnEnd().
  Summary Build(int64_t invariant_violations) const;

 private:
  // Entries of shares_ and of a ShareSummary::instance_ms (std::map nodes
  // are stable): name and value behind one pointer.
  using UnitEntry = std::pair<const std::string, std::pair<int64_t, int64_t>>;
  struct ShareAcc {
    ShareSummary s;
    std::vector<SimTime> waits, reclaims;
    // By JobRecord::unit_index: the entry of s.instance_ms, found by name
    // once per unit.
    std::vector<UnitEntry*> unit_by_index;
  };
  using ShareEntry = std::pair<const std::string, ShareAcc>;
  // One per job in flight (a million and more in a big backlogged run):
  // kept to 72 bytes.
  struct Track {
    ShareEntry* share = nullptr;
    UnitEntry* unit = nullptr;  // instance_ms slot of the attempt
    SimTime first_runnable = -1;
    SimTime attempt_start = 0;
    SimTime running_since = -1;
    SimTime reclaim_start = -1;
    int64_t own = 0, borrowed = 0;
    bool scheduled_once = false;
    bool dispatched = false;
    bool terminal = false;
    bool waiting = false;  // counted in waiting_
    bool misconfigured = false;  // had a MISCONFIGURATION reason (Summary::never_ran)
  };
  static_assert(sizeof(Track) <= 72, "one track per job in flight: keep it small");
  void CloseAttempt(Track& t, SimTime now);
  void SetWaiting(Track& t, bool waiting, SimTime now);
  void Apply(Track& t, const JobRecord& r);
  Track* FindTrack(int32_t slot, std::string_view name);
  // The record's share (by JobRecord::share_index when it has one, else by
  // name) and the unit of a SCHEDULED record in that share.
  ShareEntry* ShareOf(const JobRecord& r);
  static UnitEntry* UnitOf(ShareAcc& sh, const JobRecord& r);
  std::vector<ShareEntry*> share_by_index_;  // by JobRecord::share_index, found by name once

  // Jobs in flight. Records that carry the engine's job_slot index a dense
  // slot -> track table (4 bytes per job; no name hashing on the engine's
  // thread) into a pool of tracks reused through a free list; records read
  // back from a log (no slot) are keyed by name.
  std::vector<int32_t> slot_track_;  // -1: none
  std::deque<Track> pool_;  // grows in chunks: no doubling of a million in-flight tracks
  std::vector<int32_t> free_tracks_;
  absl::node_hash_map<std::string, Track> by_name_;  // stable: cause_open_ points into it
  // RUNNABLE jobs with a cause line: their cause and since when.
  absl::flat_hash_map<const Track*, std::pair<WaitCause, SimTime>> cause_open_;
  bool saw_causes_ = false;
  bool wait_causes_expected_ = false;
  void CloseCause(Track& t, SimTime now);
  std::map<std::string, ShareAcc, std::less<>> shares_;
  std::map<std::string, std::pair<int64_t, SimTime>> capacity_;  // unit -> (current, since)
  std::map<std::string, int64_t> capacity_ms_;                    // unit -> integral so far
  int64_t rejected_ = 0;
  int64_t never_ran_ = 0;  // Summary::never_ran, once OnEnd() counted those still waiting
  std::string never_ran_example_;
  // The backlog: jobs waiting now, its integral over time (job-ms) up to
  // backlog_since_, and the figures of BacklogStats.
  int64_t waiting_ = 0;
  SimTime backlog_since_ = 0;
  double waiting_ms_ = 0;
  double waiting_ms_at_last_submission_ = 0;
  BacklogStats backlog_;
  SimTime end_time_ = 0;
  bool ended_ = false;
};

// JSON text of the summary (stable key order, newline-terminated). The
// per-share table is in engine/log/share_table.h.
std::string SummaryToJson(const Summary& s);

}  // namespace qs

#endif  // QS_ENGINE_LOG_SUMMARY_H_
