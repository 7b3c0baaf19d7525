// File: engine/fast/summary_accumulators.h
//
// The run summary kept by the fast engine itself (RunOptions::summary;
// `quotasim run --summary` without --events): the same Summary, byte for
// byte, that SummaryBuilder (engine/log/summary.h) computes from the event
// log records, whose definitions it follows. SummaryBuilder stays as its
// check: tests and the differential fuzzer compare the two on every input.
//
// Why a second implementation: building a JobRecord for every transition,
// handing it through the sinks and finding the job's track again by its
// slot was about a fifth of a run's engine thread (1e6 jobs, steady and
// stress). Here the engine hands each transition over as a few integers
// at the point it would emit the record: a line with no status reason and
// no preemption (most lines) to Submitted(), Scheduled() or Line(), any
// other as a JobTransition to Apply(); both go through the same per-status
// steps. The per-job state is 64 bytes in an array indexed by the engine's
// job slot (slots are reused, so it holds the jobs in flight; in huge pages
// when it is big); shares and instance types are indices, named once, in
// Finish().
//
// The engine calls these exactly where it emits a job record, in the same
// order, so the backlog's time integral (a floating-point sum) adds the
// same terms in the same order as SummaryBuilder's.
//
// Thread-compatible: the engine's thread only.
#ifndef QS_ENGINE_FAST_SUMMARY_ACCUMULATORS_H_
#define QS_ENGINE_FAST_SUMMARY_ACCUMULATORS_H_

#include <cassert>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/log/event_log.h"
#include "engine/log/summary.h"
#include "engine/model/time.h"
#include "engine/util/huge_pages.h"

namespace qs::engine_internal {

// What the summary reads of one job record (JobRecord's fields it uses,
// as indices and counts).
struct JobTransition {
  SimTime time = 0;
  int32_t slot = -1;   // JobRecord::job_slot
  int32_t share = -1;  // JobRecord::share_index
  JobStatus status = JobStatus::kSubmitted;
  // status_reason is SageMaker's capacity error / starts "MISCONFIGURATION:".
  bool capacity_error = false;
  bool misconfigured = false;
  // For the first misconfigured job of the run (wants_example()): its name
  // and reason, for Summary::never_ran_example.
  std::string_view job_name, reason;
  // SCHEDULED lines: the instance type, the instances and their borrowed part.
  int32_t unit = -1;
  int64_t quantity = 0, borrowed = 0;
  // Preemption-start lines.
  PreemptionType preemption = PreemptionType::kNone;
  int32_t preempted_for_slot = -1;
  SimTime checkpointed_ms = 0;
  bool has_preemption_summary = false;
  WaitCause wait_cause = WaitCause::kNone;
};

class SummaryAccumulators {
 public:
  // `wait_causes`: SummaryBuilder::set_wait_causes.
  // `huge_pages`: RunOptions::huge_pages, for the per-slot array.
  SummaryAccumulators(bool wait_causes, bool huge_pages)
      : jobs_(HugePageAllocator<JobAcc>(huge_pages)), wait_causes_expected_(wait_causes) {}

  // Any line, as a JobTransition.
  void Apply(const JobTransition& t);
  // The common lines, without the JobTransition: a line with no status
  // reason, no preemption, no preemption summary and no wait cause (most
  // of a run's: a job that dispatches at once makes SUBMITTED, RUNNABLE,
  // SCHEDULED, STARTING and RUNNING in one instant). The same rules as
  // Apply() on such a line: both go through the per-status steps below,
  // where each rule is written once.
  void Submitted(int32_t slot, int32_t share, SimTime time) {
    Open(slot, share);
    SubmittedStep(Enter(slot, JobStatus::kSubmitted, time), time);
  }
  void Scheduled(int32_t slot, SimTime time, int32_t unit, int64_t quantity, int64_t borrowed) {
    ScheduledStep(Enter(slot, JobStatus::kScheduled, time), time, unit, quantity, borrowed);
  }
  // RUNNABLE, STARTING, RUNNING, SUCCEEDED or FAILED.
  void Line(int32_t slot, JobStatus status, SimTime time) {
    JobAcc& j = Enter(slot, status, time);
    if (status == JobStatus::kRunnable) {
      RunnableStep(j, time);
    } else if (status == JobStatus::kRunning) {
      RunningStep(j, time);
    } else if (IsTerminal(status)) {
      EndedStep(j, status, time);
      CloseEntry(j);
    }
  }
  // The engine expects a transition of the job in `slot` soon: its entry,
  // cold since the job's last transition, is fetched. Called for a new
  // head (its dispatch), and where the engine first loads the job record
  // of an event or a submission, so that the two misses overlap.
  void Prefetch(int32_t slot) const {
    if (static_cast<size_t>(slot) < jobs_.size()) __builtin_prefetch(&jobs_[static_cast<size_t>(slot)], 1);
  }
  void OnRejected() { ++rejected_; }
  void OnCapacity(SimTime time, int32_t unit, int64_t max_capacity);
  // Whether Apply() wants job_name and reason with a misconfigured transition.
  bool wants_example() const { return never_ran_example_.empty(); }

  // The run ended at end_time: closes every open attempt and cause, counts
  // the unfinished jobs. `share_names` and `unit_names` by index (two share
  // indices of one name, a share deleted and created again, are one share,
  // as SummaryBuilder keys shares by name).
  Summary Finish(SimTime end_time, int64_t invariant_violations, const std::vector<std::string_view>& share_names,
                 const std::vector<std::string_view>& unit_names);

 private:
  // One per job slot; reset when the job ends.
  struct JobAcc {
    SimTime first_runnable = -1;
    SimTime attempt_start = 0;
    SimTime running_since = -1;
    SimTime reclaim_start = -1;
    SimTime cause_since = 0;
    int32_t own = 0, borrowed = 0;
    int32_t share = -1;
    int32_t unit = -1;  // of the attempt
    WaitCause cause = WaitCause::kNone;  // an open cause line's
    bool live = false;
    bool scheduled_once = false;
    bool dispatched = false;
    bool waiting = false;  // counted in waiting_
    bool misconfigured = false;  // had a MISCONFIGURATION reason
  };
  static_assert(sizeof(JobAcc) == 64, "a cache line per job slot");
  struct ShareAcc {
    bool present = false;  // a record of one of its jobs was seen
    ShareSummary s;        // all but wait and reclaim; instance_ms filled from unit_ms in Finish()
    // By unit index: (own, borrowed) instance-ms, and whether a SCHEDULED
    // line of the share named the unit (SummaryBuilder's map entry).
    std::vector<std::pair<int64_t, int64_t>> unit_ms;
    std::vector<uint8_t> unit_seen;
    std::vector<SimTime> waits, reclaims;
  };

  JobAcc& JobAt(int32_t slot) {
    const size_t i = static_cast<size_t>(slot);
    // resize(i + 1), not a doubled size: the vector doubles its capacity
    // itself, and only the entries up to i are written (first touches of
    // fresh pages are what a slot array costs; engine/util/huge_pages.h).
    if (i >= jobs_.size()) jobs_.resize(i + 1);
    return jobs_[i];
  }
  ShareAcc& ShareAt(int32_t share) {
    const size_t i = static_cast<size_t>(share);
    if (i >= shares_.size()) shares_.resize(i + 1);
    return shares_[i];
  }
  // A SUBMITTED line: the job's entry in `slot` (free until now) and its
  // share's, made as needed.
  void Open(int32_t slot, int32_t share);
  // A later line's entry: made by the job's SUBMITTED line.
  JobAcc& Entry(int32_t slot) {
    assert(static_cast<size_t>(slot) < jobs_.size() && jobs_[static_cast<size_t>(slot)].live);
    return jobs_[static_cast<size_t>(slot)];
  }
  ShareAcc& ShareOf(const JobAcc& j) { return shares_[static_cast<size_t>(j.share)]; }
  // Every line's first step, in Apply() and in each entry above: the job's
  // entry, with its open wait cause closed unless the line is RUNNABLE (a
  // RUNNABLE line leaves the job waiting; a cause line replaces the cause
  // itself).
  JobAcc& Enter(int32_t slot, JobStatus status, SimTime time) {
    JobAcc& j = Entry(slot);
    if (status != JobStatus::kRunnable) CloseCause(j, time);
    return j;
  }

  // The steps of a line by its status, each rule once, after Enter().
  void SubmittedStep(JobAcc& j, SimTime time) {
    ++ShareOf(j).s.submitted;
    SetWaiting(j, true, time);
    backlog_.at_last_submission = waiting_;
    backlog_.last_submission = time;
    waiting_ms_at_last_submission_ =
        waiting_ms_ + static_cast<double>(waiting_) * static_cast<double>(time - backlog_since_);
  }
  // A RUNNABLE line that is not a wait-cause line: the attempt (if any)
  // ends, and the job waits.
  void RunnableStep(JobAcc& j, SimTime time) {
    CloseAttempt(j, time);
    SetWaiting(j, true, time);
    if (j.first_runnable < 0) j.first_runnable = time;
  }
  // A SCHEDULED line that is not a preemption start.
  void ScheduledStep(JobAcc& j, SimTime time, int32_t unit, int64_t quantity, int64_t borrowed);
  // A RUNNING line that is not a preemption start.
  void RunningStep(JobAcc& j, SimTime time) { j.running_since = time; }
  void EndedStep(JobAcc& j, JobStatus status, SimTime time) {
    CloseAttempt(j, time);
    SetWaiting(j, false, time);
    ShareAcc& sh = ShareOf(j);
    if (status == JobStatus::kSucceeded) {
      ++sh.s.succeeded;
    } else {
      ++sh.s.failed;
    }
  }
  // After a terminal line: the slot's next job starts afresh.
  void CloseEntry(JobAcc& j) {
    if (j.misconfigured && !j.scheduled_once) ++ended_never_ran_;
    j = JobAcc{};
  }

  void SetWaiting(JobAcc& j, bool waiting, SimTime now) {
    if (j.waiting == waiting) return;
    waiting_ms_ += static_cast<double>(waiting_) * static_cast<double>(now - backlog_since_);
    backlog_since_ = now;
    j.waiting = waiting;
    waiting_ += waiting ? 1 : -1;
    if (waiting_ > backlog_.peak) {
      backlog_.peak = waiting_;
      backlog_.peak_time = now;
    }
  }
  void CloseCause(JobAcc& j, SimTime now) {
    if (j.cause == WaitCause::kNone) return;
    ShareOf(j).s.wait_by_cause_ms[static_cast<size_t>(j.cause)] += now - j.cause_since;
    j.cause = WaitCause::kNone;
  }
  void CloseAttempt(JobAcc& j, SimTime now) {
    if (!j.dispatched) return;
    std::pair<int64_t, int64_t>& ms = ShareOf(j).unit_ms[static_cast<size_t>(j.unit)];
    ms.first += j.own * (now - j.attempt_start);
    ms.second += j.borrowed * (now - j.attempt_start);
    j.dispatched = false;
    j.running_since = -1;
  }

  std::vector<JobAcc, HugePageAllocator<JobAcc>> jobs_;
  std::vector<ShareAcc> shares_;
  // By unit index: (current capacity, since), present, and the integral so far.
  struct UnitCapacity {
    bool present = false;
    int64_t current = 0;
    SimTime since = 0;
    int64_t ms = 0;
  };
  std::vector<UnitCapacity> capacity_;
  bool saw_causes_ = false;
  const bool wait_causes_expected_;
  int64_t rejected_ = 0;
  int64_t waiting_ = 0;
  SimTime backlog_since_ = 0;
  double waiting_ms_ = 0;
  double waiting_ms_at_last_submission_ = 0;
  BacklogStats backlog_;
  int64_t ended_never_ran_ = 0;
  std::string never_ran_example_;
};

}  // namespace qs::engine_internal

#endif  // QS_ENGINE_FAST_SUMMARY_ACCUMULATORS_H_
