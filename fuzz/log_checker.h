// File: fuzz/log_checker.h
//
// An independent check of an engine's event log, written from the spec
// (../shared/spec/quota-semantics.md section 3) and docs/semantics.md without
// looking at how the engines account. It is a LogSink: it sees exactly the
// records the JSON Lines writer sees, rebuilds the accounting from them
// (SCHEDULED lines carry the demand and its borrowed parts; capacity comes
// from OnCapacity records; share configuration from the scenario's requests
// that were not rejected) and QS_FUZZ_CHECKs after every record:
//
//  invariant 1   sum of use of a unit <= environment capacity (excess only
//                after a lowering, and it may only shrink)
//  invariant 2   Own <= L and Borrowed <= B per share and unit (same rule
//                for excess after a limit change); only LEND_AND_BORROW
//                shares borrow
//  invariant 3   a RESERVE share lends nothing; Own + Lent <= L; lenders are
//                LEND / LEND_AND_BORROW shares other than the borrower (or the
//                unassigned capacity when LENDABLE)
//  invariant 4   each job's status sequence is legal (SUBMITTED -> RUNNABLE ->
//                SCHEDULED -> STARTING -> RUNNING -> ...), a terminal job
//                never changes, a draining victim only ends in RUNNABLE or
//                FAILED, every accepted TerminateServiceJob fails its job at
//                once, snapshots agree with the rebuilt usage, and at the end
//                of a run without horizon no job is SUBMITTED or dispatched
//                and a RUNNABLE job is left only behind a never-fitting head
//                (or in a disabled environment)
//  queue order   without backfill only the head of a share (priority desc,
//                createdAt, submission order) is dispatched; with victimReturn
//                BEHIND_RESERVATION a job a victim was preempted for may be
//                dispatched ahead of returned victims
//  entitled      (entitledCapacity WITHHELD) no share lends a unit while its
//  capacity      head waits for that unit within its own limit
//  victims       every victim is a candidate of its preemption (same unit;
//                cross-share: group A, borrowing from the preemptor's share,
//                or group B, borrowing or over its share's limit; in-share:
//                strictly lower priority); the victims of one preemption
//                are logged in candidate order (group, then victimOrder with
//                its tie-breaks); and no candidate ranked before a victim
//                that would give back exactly what that victim gives back
//                (instances, own, parts per lender) is spared: the fit test
//                sees only those sums, so the walk and its fill-back keep
//                the earlier of two such jobs (docs/semantics.md §6); a
//                cross-share set chosen while no reservation or drain was in
//                flight passes the fit test (H + parts drawn from the
//                preemptor's share >= n, Free + n(V) >= n) and none of its
//                victims could be left out (fill-back)
//  visiting      (DECLARATION, UNDER_LIMIT_FIRST) at a share's first
//  order         dispatch of an instant from its own limit (phase 1), while
//                no reservation or drain is in flight (so Free and H are
//                known exactly), no share visited before it in that round
//                has a head that phase 1 would dispatch (Own + n <= L,
//                H >= n, Free >= n): that share would have taken it first
//  capacity      (simulation.capacity) a capacity error comes errorSeconds
//                after SCHEDULED with the documented reason and uses no
//                attempt; replayed in line order at the end, every attempt's
//                fate is the rule's: it gets its instances unless its seeded
//                draw fails or the instances provisioned to earlier attempts
//                still held plus its own exceed the type's availability (so
//                provisioned capacity never exceeds availability at a
//                dispatch); the time-limit action for the reason fires at
//                maxTimeSeconds after the first SCHEDULED of a run of errors
//  checkpoints   a RUNNING victim keeps whole checkpoint intervals of its
//                run (checkpointedSeconds); its later attempts run the rest
//  time limits   a RUNNABLE job whose time-limit clock came due was
//                terminated then (checked as time moves on)
//  API actions   DeleteQuotaShare fails the share's jobs at once and the
//                share is gone; UpdateJobQueue's jobStateTimeLimitActions
//                apply to clocks as docs/semantics.md §7 says
//  timing        latencies (drawn per job from simulation.latencies), run times, timeouts (attemptDurationSeconds and
//                StoppingCondition.MaxRuntimeInSeconds), drains, retries and
//                preemption-retry limits as the scenario says
//
// Usage:
//   LogChecker checker(scenario);
//   TeeSink tee({&checker, &writer});
//   RunStats st = RunFastEngine(scenario, tee, options);
//   checker.Finish(st);
#ifndef QS_FUZZ_LOG_CHECKER_H_
#define QS_FUZZ_LOG_CHECKER_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/log/event_log.h"
#include "engine/model/capacity.h"
#include "engine/run.h"
#include "engine/model/scenario.h"

namespace qs::fuzz {

class LogChecker : public LogSink {
 public:
  explicit LogChecker(const Scenario& sc);

  void OnJob(const JobRecord& r) override;
  void OnRejected(const RejectedRecord& r) override;
  void OnSnapshot(const SnapshotRecord& r) override;
  void OnCapacity(const CapacityRecord& r) override;
  void OnEnd(SimTime end_time) override;

  // Cross-checks the engine's statistics against the log; call after the run.
  void Finish(const RunStats& stats);

 private:
  struct Part {
    std::string lender;
    int64_t qty = 0;
  };
  struct Job {
    const SubmitServiceJobRequest* req = nullptr;
    int64_t index = -1;  // submission order (order of SUBMITTED lines)
    std::string share;
    bool seen = false;
    JobStatus status = JobStatus::kSubmitted;
    std::string reason;
    SimTime created_at = 0;
    SimTime status_time = 0;  // time of the last status change
    int64_t priority = 0;
    int64_t attempts_used = 0;
    int64_t preempted = 0;
    SimTime checkpointed = 0;  // run kept by checkpoints at its preemptions
    int64_t attempt = -1;              // its dispatched attempt in attempts_, -1 when none
    SimTime capacity_run_start = -1;   // SCHEDULED time of the first of a run of capacity errors
    // Dispatched: what it holds.
    std::string unit;
    int64_t own = 0;
    std::vector<Part> parts;
    // RUNNABLE: when it came back from a preemption drain (-1: not since its
    // last dispatch) and when its priority last changed; a victim was
    // preempted for it since it became RUNNABLE (`reserved`; the engine may
    // drop the reservation without a line).
    SimTime returned_at = -1;
    SimTime priority_changed_at = -1;
    bool reserved = false;
    // Draining victim.
    bool frozen = false;
    SimTime frozen_at = 0;
    PreemptionType frozen_type = PreemptionType::kNone;
  };
  struct Share {
    bool exists = false;
    Strategy strategy = Strategy::kReserve;
    int64_t borrow_limit = -1;
    std::map<std::string, int64_t> limit;
    std::map<std::string, int64_t> own, borrowed, lent;
    std::map<std::string, int64_t> allow_own, allow_borrowed, allow_lent;
    size_t order = 0;
  };
  // A dispatch, for the capacity replay: fate 1 provisioned (STARTING),
  // -1 capacity error, 0 not seen (preempted, terminated or cut off first).
  struct Attempt {
    std::string unit;
    int64_t n = 0, seq = 0, line = 0;
    SimTime at = 0;
    int64_t release_line = INT64_MAX;
    int fate = 0;
    std::string job;
  };
  struct Terminate {
    SimTime time;
    std::string path, job, reason;
  };
  // A DeleteQuotaShare request: when accepted, every job of the share not
  // yet ended is FAILED at its time with DeletedShareReason.
  struct Delete {
    SimTime time;
    std::string path, share;
  };
  // An UpdateJobQueue that sets jobStateTimeLimitActions.
  struct ActionsUpdate {
    SimTime time;
    std::string path;
    const std::vector<JobStateTimeLimitAction>* actions;
  };

  void Now(SimTime t);
  void ApplyConfigUpTo(SimTime t);
  void ResetShareAllowances(Share& s);
  void CheckAccounting(const char* when);
  int64_t BorrowCap(const Share& s, const std::string& unit) const;
  int64_t Limit(const Share& s, const std::string& unit) const;
  // The job's latency of `kind` starting at `t` (simulation.latencies).
  SimTime Latency(const Job& j, LatencyKind kind, SimTime t) const;
  void Release(Job& j);
  bool RanksBefore(const Job& a, const Job& b) const;
  // Share `share`'s head (its first RUNNABLE job in queue order), or nulls.
  std::pair<const std::string*, const Job*> HeadOf(const std::string& share) const;
  // With victimReturn BEHIND_RESERVATION: whether `j` (RUNNABLE, reserved)
  // may be its share's head although jobs rank before it: all of them are
  // returned victims (docs/semantics.md §6).
  bool MayLeadReturned(const Job& j) const;
  bool IsTerminateLine(const std::string& job, const JobRecord& r) const;
  // Victim choice (docs/semantics.md §6): whether `c` is a candidate of a
  // preemption for `p` (its group: 0 = A, 1 = B, 0 for in-share; -1 = not
  // a candidate), and whether (group, victimOrder key) ranks `a` before `b`.
  int VictimGroup(const Job& c, const Job& p, bool in_share) const;
  bool VictimBefore(const std::string& an, const Job& a, int ag, const std::string& bn, const Job& b, int bg) const;
  int64_t BorrowedOf(const Job& j) const;
  SimTime DispatchedAt(const Job& j) const;
  void CheckVictim(const std::string& name, const Job& v, const std::string& for_name, const Job& p, bool in_share,
                   bool p_was_reserved);
  // At the record after a preemption's last victim line: a cross-share set
  // chosen while no reservation or drain was in flight (Free and H exact)
  // passes the fit test and no victim of it could be spared.
  void FlushVictimSet();
  // Share visiting order (docs/semantics.md §4) at an own-limit dispatch.
  void CheckVisitingOrder(const std::string& name, const Job& j, bool own_only);
  bool VisitedBefore(const std::string& a, const std::string& b) const;
  void CheckTerminatesBefore(SimTime t, bool inclusive);
  void CheckDeletesBefore(SimTime t, bool inclusive);
  // The jobStateTimeLimitActions in effect at `t` (updates at t included;
  // valid once every request at t has been applied or rejected).
  const std::vector<JobStateTimeLimitAction>& ActionsAt(SimTime t) const;
  static const JobStateTimeLimitAction* ActionFor(const std::vector<JobStateTimeLimitAction>& list,
                                                  std::string_view reason);
  void CheckCapacityReplay();
  void CheckTimeLimitsBefore(SimTime t);
  // When the queue's time-limit action for the job's current reason is due
  // (RUNNABLE job), or -1 when none applies or it cannot be told from the
  // log (a MISCONFIGURATION reason under timeLimitClock AT_HEAD).
  SimTime TimeLimitDue(const Job& j) const;
  // Under AT_HEAD: the earliest time a MISCONFIGURATION clock can terminate
  // the job, or -1.
  SimTime MisconfigDueAtLeast(const Job& j, SimTime t) const;
  bool Fires(const Job& j, SimTime due) const;
  Job& JobFor(const JobRecord& r);

  const Scenario& sc_;
  SimTime now_ = 0;
  bool ended_ = false;
  SimTime end_time_ = 0;
  int64_t submitted_lines_ = 0;
  std::unordered_map<std::string, Job> jobs_;
  std::map<std::string, Share> shares_;
  size_t share_count_ = 0;
  std::map<std::string, int64_t> se_, use_, allow_se_;
  std::map<std::string, int64_t> unassigned_lent_;
  bool env_enabled_ = true;
  std::set<std::string> rejected_paths_;
  size_t next_config_ = 0;       // index into sc_.events of the next request not applied
  std::vector<Terminate> terminates_;
  std::vector<Delete> deletes_;
  size_t next_delete_ = 0;
  std::vector<ActionsUpdate> action_updates_;
  std::vector<Attempt> attempts_;
  int64_t line_ = 0;  // job lines so far
  // The last victim line: its time, preemptor, type and victim.
  SimTime victim_time_ = -1;
  std::string victim_for_, victim_name_;
  PreemptionType victim_type_ = PreemptionType::kNone;
  // The victims of the preemption being logged; whether its fit test can be
  // evaluated exactly.
  std::vector<std::string> victim_set_;
  bool victim_set_known_ = false;
  // Shares with a dispatch line at instant dispatch_instant_.
  SimTime dispatch_instant_ = -1;
  std::set<std::string> dispatched_shares_;
  size_t next_terminate_ = 0;
};

}  // namespace qs::fuzz

#endif  // QS_FUZZ_LOG_CHECKER_H_
