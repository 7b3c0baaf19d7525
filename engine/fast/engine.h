// File: engine/fast/engine.h
//
// The fast quota-share engine behind RunFastEngine() (engine/run.h): a
// discrete-event simulation of AWS Batch quota management for SageMaker
// Training job queues, following ../shared/spec/quota-semantics.md as pinned
// down by docs/semantics.md. Every decision has a twin in the reference
// engine (engine/reference/), which is kept independent of this code; tests
// and fuzzers demand identical logs.
//
// The engine is a few parts, each with its header as its manual:
//   event_queue.h       the event core: (time, sequence) order, lazy cancel
//   scenario_source.h   scenario events, whole or streamed block by block
//   state.h             the accounts: job records, shares, per-type counts
//   job_queue.h         a share's RUNNABLE jobs: per-priority arrays in seq order
//   visit_order.h       the order a pass round visits the shares
//   settling.h          which shares a round may skip (settled, self-bound)
//   decisions.h         borrow plan and victim sets, read-only
//   invariant_checker.h invariants 1-6 on the accounts
//   summary_accumulators.h  the run summary, kept as jobs move (RunOptions::summary)
// and the Engine class below, which owns them and is split by concern:
//   engine.cc    the run loop and internal events (time, attempts, drains)
//   requests.cc  scenario requests: validation, submissions, configuration
//   pass.cc      the pass: phases 1-3 asking the decisions, applying them
//   effects.cc   every change to a job and the accounts, and its records
//   wait_causes.cc  why each RUNNABLE job waits (RunOptions::wait_causes)
//
// Design
//  * One Engine owns all state of one run; no globals. Time is integer
//    milliseconds; scenario events come first at equal times, then internal
//    events in (time, sequence) order.
//  * Per share: a JobQueue of RUNNABLE jobs in (priority desc, submission
//    order), an array per priority appended at the back and taken from the
//    front, so a submission and a dispatched head are O(1) and a priority
//    update O(log n) (older seqs coming back go to a small side list); per
//    (share, unit) a VictimList of dispatched, not draining jobs in victim
//    order (a flat array, appended to in the usual case; victim_list.h), per
//    (lender, unit) one of the jobs borrowing from the lender, per unit one
//    of borrowing jobs. Preemption draws candidates from these only until
//    the head fits.
//  * A pass costs O(rounds x shares x (log n + dispatched or preempted jobs)):
//    it never walks a queue, except with `backfill: true`, which by
//    definition looks past blocked heads; settled shares are skipped.
//  * Accounting is incremental (effects.cc); the InvariantChecker compares
//    it with the limits after every event and, with full_invariant_check,
//    recounts it from the job records.
//
// Thread-safety: thread-compatible; one thread drives an Engine.
#ifndef QS_ENGINE_FAST_ENGINE_H_
#define QS_ENGINE_FAST_ENGINE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "engine/log/event_log.h"
#include "engine/model/event_stream.h"
#include "engine/fast/decisions.h"
#include "engine/fast/event_queue.h"
#include "engine/fast/invariant_checker.h"
#include "engine/fast/scenario_source.h"
#include "engine/fast/settling.h"
#include "engine/fast/summary_accumulators.h"
#include "engine/fast/state.h"
#include "engine/fast/visit_order.h"
#include "engine/run.h"
#include "engine/model/scenario.h"
#include "engine/model/scenario_index.h"
#include "engine/model/validation.h"

namespace qs::engine_internal {

class Engine {
 public:
  // bench/engine_benchmark.cc times single steps (a pass, a victim choice,
  // the event queue) on engine state through this class.
  friend class EngineBenchProbe;

  // A scenario held whole.
  Engine(const Scenario& scenario, LogSink& sink, const RunOptions& options);
  // A scenario read block by block (`index` from IndexEventStream(stream));
  // the next blocks are decoded on a oneTBB task while the run goes on.
  Engine(const EventStream& stream, ScenarioIndex index, LogSink& sink, const RunOptions& options);
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  RunStats Run();
  // After Run() with RunOptions::summary: what the summary still needs,
  // taken out so that the engine's state can be freed before its waits are
  // ranked (FinishSummary; RunFastEngine does both).
  struct PendingSummary {
    std::unique_ptr<SummaryAccumulators> accumulators;
    std::vector<std::string> share_names, unit_names;
    SimTime end_time = 0;
    int64_t invariant_violations = 0;
  };
  PendingSummary TakeSummary();
  // After Run(): OK, or the error that stopped a streamed run early, or one
  // in a block a run that stopped early had not read (ScenarioSource::ReadUnread).
  absl::Status FinishStream() { return source_.ReadUnread(); }

  // Invariants 1-4 of the spec (limits, lending, conservation) on the
  // current state: OkStatus, or an InternalError naming every violation.
  // With full_invariant_check it also recounts all accounting from the job
  // records. Invariants 5 and 6 are temporal and checked around passes and
  // preemptions (AfterPass, TryReclaim). Run() calls this after every event
  // when RunOptions::check_invariants is set.
  absl::Status CheckInvariants();

 private:
  // Both constructors end here: `scenario` gives everything but the events.
  // `index` by reference: the stream's source reads index.units while the
  // arguments are made, before st_ takes the index.
  Engine(const Scenario& config, ScenarioIndex&& index, LogSink& sink, const RunOptions& options,
         ScenarioSource source);

  // --- engine.cc: the run loop and internal events
  void Push(SimTime time, EventType type, int32_t job, uint32_t tag, int32_t aux) {
    events_.Push(now_, time, type, job, tag, aux);
  }
  void ApplyInternalEvent(const Event& ev);
  // After every event: the limits where counters changed (inline, as most
  // events change none; out of line, the call and its frame were about
  // 1.6% of a steady run's instructions), and the full recount if asked for.
  void AfterEvent() {
    if (!opt_.check_invariants) return;
    checker_.CheckLimits(st_, found_);
    if (opt_.full_invariant_check) checker_.Recount(st_, found_);
    if (!found_.empty()) ReportFound();
  }
  void AfterPass();
  void ReportFound();  // a Violation() for each of found_, which it empties
  // timeLimitClock AT_HEAD: the jobStateTimeLimitActions clock of a
  // MISCONFIGURATION reason runs while the job is its share's head with the
  // reason (docs/semantics.md §5): at the end of each instant, for each share
  // whose head or head's reason changed, the old clock stops and a new one
  // starts.
  void SweepHeadClocks();
  void Violation(std::string message);
  // --- wait_causes.cc (RunOptions::wait_causes; docs/semantics.md §9)
  // At the end of an instant: a cause line for each RUNNABLE job whose cause
  // changed or that had a RUNNABLE line in this instant.
  void EmitWaitCauses();
  // The cause of share s's head h, from the accounts as they are (uses
  // lenders_scratch_).
  WaitCause WaitCauseOf(int32_t s, int32_t h);
  void EmitCause(int32_t id, WaitCause cause);
  void Progress() {  // a request applied, an attempt ended, a job finished
    if (!streak_.empty()) streak_.clear();
  }

  // --- requests.cc: scenario requests
  struct JobFactsHolder {
    int32_t id = kNone;
    JobFacts facts;
  };
  void ApplyScenarioEvent(const ScenarioEvent& ev);
  void ApplySubmit(const ScenarioEvent& ev, const SubmitServiceJobRequest& r, int64_t ordinal);
  void Reject(const ScenarioEvent& ev, const absl::Status& status);
  JobFactsHolder FactsOf(const std::optional<std::string>& job_id) const;
  void CreateShare(const CreateQuotaShareRequest& r);
  void UpdateShare(int32_t s, const UpdateQuotaShareRequest& r);
  void UpdateEnvironment(const UpdateServiceEnvironmentRequest& r);
  // The live share a quotaShareArn (a name or an ARN) names, or kNone.
  int32_t ShareOfArn(const std::optional<std::string>& arn) const;
  void DeleteShare(int32_t s);
  void UpdateQueue(const UpdateJobQueueRequest& r);
  void SetTimeLimitActions(std::vector<JobStateTimeLimitAction> actions);
  // The index of the current jobStateTimeLimitActions entry for `reason`, or -1.
  int32_t TimeLimitActionFor(std::string_view reason) const;
  void StrategyMasks();  // Settling::borrowers_mask, in_share_mask; FastState::lending_mask

  // --- pass.cc: the pass
  void RunPass();
  // Whether head `id` of share s may be considered: a head that can never
  // start under the configuration gets its MISCONFIGURATION reason (once)
  // and loses any reservation; a head that can again loses that reason.
  // A head is looked at again and again while it waits (about 11 looks a
  // job on the stress profile): the share keeps its last verdict that its
  // head can start, which stands while the limits and the head's reason
  // stay as they were (Share::fits_seq); else LookAgain.
  bool LookAt(int32_t s, int32_t id) {
    const Share& sh = st_.shares[s];
    const Job& j = st_.jobs[id];
    if (sh.fits_seq == j.seq && sh.fits_epoch == st_.limits_epoch && sh.fits_reason == j.reason) return true;
    return LookAgain(s, id);
  }
  bool LookAgain(int32_t s, int32_t id);
  bool Phase1(int32_t s);
  bool Backfill(int32_t s, int32_t head);
  void BlockOutsidePhase1(int32_t s);
  bool Phase2Eligible(int32_t s);
  bool Phase2();
  bool TryBorrow(int32_t s, int32_t id);
  bool Phase3(int32_t s);
  bool TryReclaim(int32_t s, int32_t id);
  bool Blocked(int32_t s) const { return ((blocked_ >> s) & 1) != 0; }
  bool Waiting(int32_t s) const {
    const int32_t h = st_.Head(s);
    return h != kNone && st_.jobs[h].pending_victims > 0;
  }

  // --- effects.cc: changes to jobs and accounts, and their records
  // Every status change goes here (inline: out of line, it was about 15
  // instructions of call and frame around 10 of work).
  void SetStatus(int32_t id, JobStatus status) {
    Job& j = st_.jobs[id];
    if (IsTerminal(j.status)) TerminalChanged(id, status);
    checker_.CountStatus(j.status, status);
    if (j.status == JobStatus::kRunnable) --runnable_count_;
    if (status == JobStatus::kRunnable) ++runnable_count_;
    j.status = status;
  }
  void TerminalChanged(int32_t id, JobStatus status);  // invariant 4's violation
  void MakeRunnable(int32_t id, std::string_view reason, bool with_summary = false, bool returned = false);
  void Finish(int32_t id, JobStatus st, std::string_view reason, bool with_summary);
  void SetReason(int32_t id, std::string_view reason);
  void SetPriority(int32_t id, int32_t priority);
  void Terminate(int32_t id, std::string_view reason);
  void EndDrain(int32_t id);
  void GiveToBeneficiary(int32_t id);
  void RemoveFromQueue(int32_t id);
  // Drops job id's reservation (its hold and pending victims), if it has
  // one. Inline: most calls (every dispatch, every failed borrow) find none.
  void DropReservation(int32_t id) {
    const Job& j = st_.jobs[id];
    if (j.hold != 0 || j.pending_victims != 0) DropHeldReservation(id);
  }
  void DropHeldReservation(int32_t id);
  // Sets job j's hold: its unit's total_hold follows, and the invariant
  // checker is told the unit's totals changed. Every hold change goes here.
  void SetHold(Job& j, int64_t hold);
  void Dispatch(int32_t id, int64_t own, const std::vector<Part>& parts);
  void Release(int32_t id);
  void StartPreemption(int32_t id, const std::vector<int32_t>& victims, PreemptionType type);
  // A dispatched, not draining job enters / leaves the candidate lists.
  // The looks of the shares waiting on its type read those lists, so the
  // change must unsettle them: Dispatch and Release do it by their Touch of
  // the job's share and type, the other callers by CandidatesChanged.
  void AddCandidate(int32_t id);
  void RemoveCandidate(int32_t id);
  void CandidatesChanged(int32_t id) {
    settling_.UnitChanged(st_.jobs[id].unit);
    settling_.OwnChanged(st_.jobs[id].share);
  }
  template <typename Fn>
  void ForEachCandidateList(int32_t id, Fn&& fn);
  // Share s's head: the first job in queue order, or the reservation holder
  // ahead of returned victims (victimReturn BEHIND_RESERVATION). Inline up
  // to the holder's case (HolderOrFront), which few calls reach.
  int32_t HeadOf(int32_t s) const {
    const Share& sh = st_.shares[s];
    if (sh.queue.empty()) return kNone;
    const int32_t front = sh.queue.Front().id;
    const int32_t r = sh.res_job;
    if (r == kNone || r == front || st_.knobs.victim_return != VictimReturn::kBehindReservation) return front;
    return HolderOrFront(s, front);
  }
  // HeadOf(s) when a holder other than the front is held behind returned
  // victims: the holder if every job ahead of it is a returned victim.
  int32_t HolderOrFront(int32_t s, int32_t front) const;
  // After job `id` entered or left share s's queue: the cached head, and the
  // share unsettled if its head changed or is `id`.
  void QueueChanged(int32_t s, int32_t id);
  // A victim's run kept by its last checkpoint as its preemption starts
  // (taken off its remaining run); 0 without checkpoints or before RUNNING.
  SimTime Checkpoint(int32_t vid);
  // Share s's counters on u changed: the invariant checker's pair, the
  // share's order key, and the shares whose head needs u. `lending`: only
  // s's lent count changed, which the order key does not read (its use is
  // own + borrowed) and a self-bound share reads only if it may borrow (its
  // headroom sets how much it must borrow).
  void Touch(int32_t s, int32_t u, bool lending = false) {
    if (!lending) order_.MarkUse(s);
    settling_.UnitChanged(u);
    if (!lending || st_.shares[s].strategy == Strategy::kLendAndBorrow) settling_.OwnChanged(s);
    checker_.Touch(s, u);
  }
  JobRecord BaseRecord(int32_t id, JobStatus st, std::string_view reason) const;
  // What the summary accumulators read of the record BaseRecord(id, st, reason) would start.
  // Inline: it was a call and a frame for each of the 6-7 lines a job makes.
  JobTransition TransitionOf(int32_t id, JobStatus status, std::string_view reason) const {
    const Job& j = st_.jobs[id];
    JobTransition t;
    t.time = now_;
    t.slot = id;
    t.share = j.share;
    t.status = status;
    t.capacity_error = reason == reasons::kInsufficientCapacity;
    t.misconfigured = reasons::IsMisconfiguration(reason);
    if (t.misconfigured && summary_->wants_example()) {
      t.job_name = st_.NameOf(j);
      t.reason = reason;
    }
    return t;
  }
  // A job's line: to the summary accumulators, to the sink as a record
  // (RunOptions::job_records; EmitRecord), and a RUNNABLE line to the wait
  // causes' bookkeeping (NoteRunnableLine). Inline, so that a line with no
  // reason and no preemption summary (most lines; the callers mostly pass
  // a constant status) goes to the summary's entry for its status.
  [[gnu::always_inline]] void EmitJob(int32_t id, JobStatus status, std::string_view reason,
                                      bool with_summary = false) {
    if (summary_ != nullptr) {
      if (reason.empty() && !with_summary) {
        SummaryPlainLine(id, status);
      } else {
        SummaryLine(id, status, reason, with_summary);
      }
    }
    if (opt_.job_records) EmitRecord(id, status, reason, with_summary);
    if (status == JobStatus::kRunnable && opt_.wait_causes) NoteRunnableLine(id);
  }
  void SummaryPlainLine(int32_t id, JobStatus status) {
    const Job& j = st_.jobs[id];
    switch (status) {
      case JobStatus::kSubmitted:
        summary_->Submitted(id, j.share, now_);
        return;
      case JobStatus::kScheduled:
        summary_->Scheduled(id, now_, j.unit, j.n, j.borrowed_total);  // the sum of its parts (Dispatch)
        return;
      default:
        summary_->Line(id, status, now_);
        return;
    }
  }
  void SummaryLine(int32_t id, JobStatus status, std::string_view reason, bool with_summary);
  void EmitRecord(int32_t id, JobStatus st, std::string_view reason, bool with_summary);
  void NoteRunnableLine(int32_t id);
  // Unit u's capacity is now st_.se[u] (time 0, UpdateServiceEnvironment).
  void EmitCapacity(int32_t u);
  void EmitSnapshot();

  const Scenario& sc_;  // configuration only: events come from source_
  LogSink& sink_;
  const RunOptions opt_;
  ScenarioSource source_;
  // By source_.share_names() position: the share of that name while it
  // exists, else kNone (ApplySubmit's lookup of a checked submission's
  // share; CreateShare and DeleteShare keep it beside FastState::share_ids).
  // share_names_complete_: every share created had its name there (always,
  // since the names come from the same requests; if not, ApplySubmit looks
  // the name up in share_ids).
  std::vector<int32_t> share_by_name_;
  bool share_names_complete_ = true;
  FastState st_;
  EventQueue events_;
  VisitOrder order_;
  Settling settling_;
  InvariantChecker checker_;
  std::unique_ptr<SummaryAccumulators> summary_;  // with RunOptions::summary

  SimTime now_ = 0;
  SimTime next_tick_ = -1;
  int64_t next_progress_ = 0;  // stats_.events_processed at the next LogSink::OnProgress
  int64_t next_submit_ = 0;  // ordinal of the next named submission
  std::pair<int64_t, int32_t> last_named_{-2, 0};  // the last accepted one's ordinal and name rank
  int64_t runnable_count_ = 0;
  bool round_dropped_ = false;  // a reservation was dropped in this round
  bool dirty_ = true;           // state changed since the last pass
  uint64_t blocked_ = 0;        // bits over shares: blocked for the rest of this pass
  // The job queue as UpdateJobQueue leaves it (docs/semantics.md §7): its
  // state and jobStateTimeLimitActions, with each entry's FAILED reason.
  bool queue_enabled_ = true;
  std::vector<JobStateTimeLimitAction> time_limit_actions_;
  std::vector<std::string> time_limit_reasons_;
  uint64_t clock_touched_ = 0;  // bits over shares: head or head's reason changed this instant
  // Jobs with a RUNNABLE line in this instant, in line order, as (slot,
  // Job::seq); the seqs of those still owed a cause line (wait_causes).
  std::vector<std::pair<int32_t, int32_t>> cause_fresh_;
  absl::flat_hash_set<int32_t> cause_fresh_seqs_;
  // Scratch kept to save an allocation per call.
  std::vector<LenderIdle> lenders_scratch_;
  BorrowPlan plan_scratch_;
  std::vector<int32_t> victims_scratch_;  // a victim choice's answer
  std::vector<int32_t> backfill_scratch_;  // Backfill's jobs behind the head
  // Phase 2's list of eligible heads, each Job::seq << 8 | share (a
  // share is in it at most once; seqs are unique), and the head it was
  // pushed with, by share.
  std::vector<uint64_t> phase2_heads_;
  std::vector<int32_t> phase2_head_of_;
  std::vector<BorrowedPart> borrowed_scratch_;
  std::vector<std::string> found_;  // AfterEvent()'s and AfterPass()'s findings; empty between calls
  // Preemption cycles (RunOptions::cycle_preemptions): per job, preemptions
  // since the last progress; emptied by Progress().
  absl::flat_hash_map<int32_t, int64_t> streak_;
  RunStats stats_;
};

}  // namespace qs::engine_internal

#endif  // QS_ENGINE_FAST_ENGINE_H_
