// File: engine/engine.h
//
// The fast quota-share engine behind RunFastEngine() (engine/run.h): a
// discrete-event simulation of AWS Batch quota management for SageMaker
// Training job queues, following ../shared/spec/quota-semantics.md as pinned
// down by docs/semantics.md.
//
// Design
//  * One Engine owns all state of one run; no globals. Time is integer
//    milliseconds; internal events are ordered by (time, sequence number
//    assigned at insertion) and scenario events come first at equal times.
//    Cancellation is lazy: every job carries an attempt counter and a stale
//    event (e.g. the completion of an attempt that was preempted) is skipped.
//  * Per share: a B-tree of RUNNABLE jobs keyed (priority desc, submission
//    order), so the head is O(1) and a priority update O(log n); per
//    (share, unit) and per (lender, unit) B-trees of dispatched, not draining
//    jobs in victim order; per unit a B-tree of borrowing jobs. Preemption
//    draws candidates from these trees (cross-share group B as a lazy merge)
//    only until the head fits, so it looks at the victims it takes, not at
//    all dispatched jobs (it walks all candidates only when even they are
//    not enough).
//  * Scenario events come from a Scenario held whole or, in a streamed run
//    (engine/event_stream.h), one block at a time, the next block decoded
//    on a oneTBB task meanwhile. The job record copies the facts of its
//    request and names live in the ScenarioIndex, so nothing points into a
//    block once its events are applied.
//  * The share order keeps each share's sort key (use/limit ratio, head)
//    between rounds, recomputes the keys of shares whose use, limits or head
//    changed (order_dirty_ bits), and sorts from the last round's order.
//  * Accounting (Own, Lent, Borrowed per share and unit; use and holds per
//    unit) is incremental. CheckInvariants() compares it with the limits after
//    every event; Recount() (full_invariant_check) recomputes it from the job
//    records.
//  * A pass costs O(rounds x shares x (log n + dispatched or preempted jobs)):
//    it never walks a queue, except with `backfill: true`, which by
//    definition looks past blocked heads.
//  * Settled shares: what phases 1-3 decide for a share's head reads only
//    the head job, the configuration and the state of the head's instance
//    type u (use, holds, reservations, lending and the candidate trees of
//    every share on u). A share whose look in a round did nothing, and
//    whose inputs did not change until the round ended, is settled: later
//    rounds and passes skip it until one of those inputs changes
//    (UnitChanged(u) for every change on u: Touch, candidate trees, holds,
//    reservations; QueueChanged for a new head or a change to the head
//    job; every configuration change), since the look would do nothing
//    again (a fruitless look changes nothing a look reads; LookAt's reason
//    updates are idempotent). Settled and changed are bits over shares
//    (at most 64), so a pass after a job ends looks at the shares waiting
//    on that job's type, and one after a job joins behind a head looks at
//    none. A settled share is also *self-bound* when its look read nothing
//    of the other shares: its head is over its own limit (phase 1 does
//    nothing), it cannot borrow or its borrow cap alone refuses (phase 2
//    fails before it reads the lenders), it has no in-share preemption or
//    no dispatched job of lower priority on u (phase 3 has no candidate),
//    and the head holds nothing and waits for no victim. A change on u by
//    another share leaves it settled; only a change of its own use,
//    candidates or (if it may borrow: its headroom sets how much it must
//    borrow) lending (OwnChanged), of its queue's head or of the
//    configuration unsettles it. At 1e6 generated jobs that saves half of
//    the looks. Off with `backfill: true` (a backfill reads jobs behind the
//    head) and with RunOptions::skip_settled_shares false.
//
// Thread-safety: thread-compatible; one thread drives an Engine.
#ifndef QS_ENGINE_ENGINE_H_
#define QS_ENGINE_ENGINE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <queue>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_set.h"
#include "absl/status/status.h"
#include "engine/event_log.h"
#include "engine/event_stream.h"
#include "engine/internal/mutants.h"
#include "engine/run.h"
#include "engine/scenario.h"
#include "engine/scenario_index.h"
#include "engine/validation.h"

namespace qs {
namespace engine_internal {

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
  ~Engine();

  RunStats Run();
  // OK, or the error that stopped a streamed run early (a block that no
  // longer reads as it did when indexed).
  const absl::Status& stream_status() const { return stream_status_; }

  // Invariants 1-4 of the spec (limits, lending, conservation) on the
  // current state: OkStatus, or an InternalError naming every violation.
  // With full_invariant_check it also recounts all accounting from the job
  // records. Invariants 5 and 6 are temporal and checked around passes and
  // preemptions (AfterPass, TryReclaim). Run() calls this after every event
  // when RunOptions::check_invariants is set.
  absl::Status CheckInvariants();

 private:
  enum class EventType : uint8_t {
    kBecomeRunnable,
    kStarting,
    kRunning,
    kAttemptEnd,
    kDrainEnd,
    kTimeLimit,
    kTick,
  };
  struct Event {
    SimTime time;
    int64_t seq;
    EventType type;
    int32_t job;
    uint32_t tag;  // attempt or reason epoch the event belongs to
    int32_t aux;   // timeout flag / time-limit entry
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };
  // A borrowed part: `lender` is a share index, or UnassignedLender().
  struct Part {
    int32_t lender;
    int64_t qty;
  };
  struct QueueKey {
    int64_t neg_priority;
    int32_t id;  // submission order == (createdAt, submission) order
    bool operator<(const QueueKey& o) const {
      return neg_priority != o.neg_priority ? neg_priority < o.neg_priority : id < o.id;
    }
  };
  struct VictimKey {
    int64_t a, b, c;
    int32_t name_rank;
    int32_t id;
    bool operator<(const VictimKey& o) const {
      if (a != o.a) return a < o.a;
      if (b != o.b) return b < o.b;
      if (c != o.c) return c < o.c;
      return name_rank < o.name_rank;
    }
  };
  // The per-job record: 112 bytes (static_assert below), the request's
  // facts included, so that a streamed run keeps nothing else per job but
  // its name (index_.job_names); at 1e7 jobs the records are most of a run's
  // memory. Borrowed parts and the recent preempted attempts, which few jobs
  // have, live in side tables (parts_, recent_) keyed by job id; the status
  // reason is an id into reason_texts_. The fields a pass reads for every
  // head it looks at come first (48 bytes).
  struct Job {
    // Read by every pass (LookAt, phases 1-3, victim choice). Counts are
    // int32 API values (instance counts, and own/borrowed parts of them).
    int32_t n = 0;
    uint32_t reason = 0;  // ReasonText(reason); 0 is ""
    int32_t share = -1;
    int32_t unit = -1;
    int32_t priority = 0;
    // While RUNNABLE: the reservation (hold <= n).
    int32_t hold = 0;
    int32_t pending_victims = 0;
    int32_t name_rank = 0;
    JobStatus status = JobStatus::kSubmitted;
    bool draining = false;
    PreemptionType drain_type = PreemptionType::kNone;
    bool has_parts = false;  // an entry in parts_
    uint32_t res_epoch = 0;
    // While dispatched.
    int32_t own = 0;
    int32_t borrowed_total = 0;
    // The rest.
    SimTime run_time = 0;  // simulation.runSeconds, in ms
    SimTime dispatched_at = 0;
    SimTime runnable_since = 0;
    uint32_t attempt = 0;
    uint32_t reason_epoch = 0;
    int32_t failed_attempts = 0;
    int32_t preempted_count = 0;
    int32_t beneficiary = -1;
    uint32_t beneficiary_epoch = 0;
    int32_t attempt_limit_s = -1;     // timeoutConfig.attemptDurationSeconds, -1 none
    int32_t preemption_retries = -1;  // preemptionRetriesBeforeTermination, -1 none
    int16_t retry_attempts = 1;       // retryStrategy.attempts (validated 1..10)
    JobOutcome outcome = JobOutcome::kSucceeded;
  };
  static_assert(sizeof(Job) <= 112, "the job record must stay compact (issue #3)");
  struct Share {
    std::string name;
    Strategy strategy = Strategy::kReserve;
    int64_t borrow_limit = -1;
    Toggle in_share = Toggle::kDisabled;
    Toggle state = Toggle::kEnabled;
    std::vector<int64_t> limit, own, lent, borrowed;  // per unit
    std::vector<int64_t> allow2, allow3;              // invariant allowances
    absl::btree_set<QueueKey> queue;                  // RUNNABLE jobs
    std::vector<absl::btree_set<VictimKey>> dispatched;  // per unit, not draining
    int32_t res_job = -1;  // job holding a reservation, if any
    int32_t name_rank = 0;  // rank of the name among all shares
    // max_u (own + borrowed) / limit as (num, den), den 0 = infinite; kept
    // for ComputeOrder() and recomputed only when `ratio_stale` (Touch(),
    // limit changes).
    int64_t ratio_num = 0, ratio_den = 1;
    bool ratio_stale = true;
    int32_t head = -1;  // queue.begin()->id, -1 if empty (QueueChanged())
  };
  struct OrderKey {  // ComputeOrder()'s sort key of a share
    int64_t num, den;  // max_u use/limit; den 0 = infinite
    int32_t head;      // job id of the head, INT32_MAX if none
    int32_t name_rank;
  };
  struct Gains {
    explicit Gains(size_t lenders) : from(lenders, 0) {}
    int64_t n = 0, own = 0, borrowed = 0;
    std::vector<int64_t> from;  // per lender (shares, then unassigned)
  };
  struct Excess {
    int64_t limit = 0, lend = 0;
  };
  struct ReclaimDeadline {
    int32_t job;
    uint32_t epoch;
    SimTime deadline;
  };
  struct JobFactsHolder {
    int32_t id = -1;
    JobFacts facts;
  };

  int32_t NumShares() const { return static_cast<int32_t>(shares_.size()); }
  int32_t NumUnits() const { return static_cast<int32_t>(unit_names_.size()); }
  int32_t UnassignedLender() const { return 1 << 20; }
  int32_t UnitOf(std::string_view name) const;
  std::string_view NameOf(const Job& j) const { return index_.job_names.Name(j.name_rank); }
  // Status reasons by id (Job::reason). ReasonId interns a text by content
  // (a copy in interned_ the first time it is seen); "" is id 0.
  std::string_view ReasonText(uint32_t id) const { return reason_texts_[id]; }
  uint32_t ReasonId(std::string_view text);
  // The next scenario event, or nullptr at the end (or when a streamed
  // block fails: stream_status_).
  const ScenarioEvent* PeekScenarioEvent() {
    if (ev_next_ == ev_end_ && blocks_) NextBlock();
    return ev_next_ != ev_end_ ? ev_next_ : nullptr;
  }
  void NextBlock();
  std::string_view LenderName(int32_t t) const;

  void Push(SimTime time, EventType type, int32_t job, uint32_t tag, int32_t aux);
  void ApplyScenarioEvent(const ScenarioEvent& ev);
  void ApplyInternalEvent(const Event& ev);
  void ApplySubmit(const ScenarioEvent& ev, const SubmitServiceJobRequest& r, int64_t ordinal);
  void Reject(const ScenarioEvent& ev, const absl::Status& status);
  JobFactsHolder FactsOf(const std::optional<std::string>& job_id) const;
  void CreateShare(const CreateQuotaShareRequest& r);
  void UpdateShare(int32_t s, const UpdateQuotaShareRequest& r);
  void UpdateEnvironment(const UpdateServiceEnvironmentRequest& r);
  void SumLimits();  // assigned_limits_, lendable_limits_
  void StrategyMasks();  // borrowers_mask_, in_share_mask_

  void SetStatus(int32_t id, JobStatus st);
  void MakeRunnable(int32_t id, std::string_view reason, bool with_summary = false);
  void Finish(int32_t id, JobStatus st, std::string_view reason, bool with_summary);
  void SetReason(int32_t id, std::string_view reason);
  void SetPriority(int32_t id, int32_t priority);
  void Terminate(int32_t id, std::string_view reason);
  void EndDrain(int32_t id);
  void GiveToBeneficiary(int32_t id);
  void RemoveFromQueue(int32_t id);
  void DropReservation(int32_t id);

  int64_t BorrowCap(const Share& sh, int32_t u) const;
  // What head j of share s must borrow beyond its own headroom, and whether
  // s's borrow cap refuses borrowing b more of u (TryBorrow's check, which
  // SelfBound() relies on reading only the share).
  int64_t ToBorrow(int32_t s, const Job& j) const;
  bool BorrowCapRefuses(int32_t s, int32_t u, int64_t b) const;
  int64_t Headroom(int32_t s, int32_t u) const {
    const Share& sh = shares_[s];
    return sh.limit[u] - sh.own[u] - sh.lent[u];
  }
  int64_t FreeFor(int32_t id) const {
    const Job& j = jobs_[id];
    return se_[j.unit] - total_use_[j.unit] - (QsMutant(3) ? 0 : total_hold_[j.unit] - j.hold);
  }
  int64_t Idle(int32_t t, int32_t u, int64_t extra) const;
  void Dispatch(int32_t id, int64_t own, const std::vector<Part>& parts);
  void Release(int32_t id);
  VictimKey KeyOf(int32_t id) const;
  void AddCandidate(int32_t id);
  void RemoveCandidate(int32_t id);

  int32_t Head(int32_t s) const { return shares_[s].head; }
  bool Waiting(int32_t s) const;
  // Settled shares (design notes above).
  static_assert(kMaxQuotaShares <= 64, "settled shares are bits of a uint64_t");
  bool Settled(int32_t s) const { return skip_settled_ && ((unsettled_ >> s) & 1) == 0; }
  void Unsettle(uint64_t shares) {
    unsettled_ |= shares;
    fresh_ &= ~shares;
    self_bound_ &= ~shares;
  }
  // A change on unit u: shares waiting on u, but not the self-bound ones.
  void UnitChanged(int32_t u) {
    if (u >= 0) Unsettle(unit_heads_[u] & ~self_bound_);
  }
  // A change of share s's own use, lending or candidates.
  void OwnChanged(int32_t s) { Unsettle(self_bound_ & (uint64_t{1} << s)); }
  // Whether settled share s's fruitless look read only s's own state (see
  // the design notes): then only OwnChanged, QueueChanged or a configuration
  // change can give its look another outcome.
  bool SelfBound(int32_t s) const;
  // After job `id` entered or left share s's queue: the cached head, and the
  // share unsettled if its head changed or is `id`.
  void QueueChanged(int32_t s, int32_t id);
  std::string_view NeverFitsReason(int32_t s, const Job& j) const;
  bool LookAt(int32_t s, int32_t id);
  void ComputeOrder();
  void RunPass();
  bool Phase1(int32_t s);
  bool Backfill(int32_t s);
  void BlockOutsidePhase1(int32_t s);
  bool Phase2Eligible(int32_t s);
  bool Phase2();
  bool TryBorrow(int32_t s, int32_t id);
  bool Phase3(int32_t s);
  // Phase 3's choice for head `id` of share `s`: the victims, or none when
  // the head fits without or cannot fit even with all. Changes nothing.
  std::vector<int32_t> InShareVictims(int32_t s, int32_t id);
  bool TryReclaim(int32_t s, int32_t id);
  // TryReclaim's choice (groups A then B, §6): the victims or none. Changes
  // nothing.
  std::vector<int32_t> CrossShareVictims(int32_t s, int32_t id);
  template <typename Next, typename Fits>
  std::vector<int32_t> ChooseVictims(Next&& next, Gains& g, const Fits& fits);
  void AddGain(Gains& g, int32_t v, int64_t sign);
  void StartPreemption(int32_t id, const std::vector<int32_t>& victims, PreemptionType type);

  JobRecord BaseRecord(int32_t id, JobStatus st, std::string_view reason) const;
  void EmitJob(int32_t id, JobStatus st, std::string_view reason, bool with_summary = false);
  void EmitSnapshot();

  // Marks (share, unit) for the next CheckLimits() and the share's order key
  // for recomputing, and unsettles the shares whose head needs u.
  // `lending`: only s's lent count changed, which a self-bound share reads
  // only if it may borrow (its headroom sets how much it must borrow).
  void Touch(int32_t s, int32_t u, bool lending = false) {
    shares_[s].ratio_stale = true;
    order_dirty_ |= uint64_t{1} << s;
    UnitChanged(u);
    if (!lending || shares_[s].strategy == Strategy::kLendAndBorrow) OwnChanged(s);
    const int32_t key = s * NumUnits() + u;  // touched_flag_ is sized by CreateShare
    if (!touched_flag_[key]) {
      touched_flag_[key] = 1;
      touched_.push_back(key);
    }
  }
  void Violation(std::string message);
  Excess ComputeExcess(int32_t s, int32_t u) const;
  void ResetAllowances();
  void AfterEvent();
  void AfterPass();
  std::vector<std::string> CollectViolations();
  void CheckLimits();
  void Recount();
  void CheckReclaimFired();
  void CheckEndOfRun();

  // Both constructors end here: `scenario` gives everything but the events.
  Engine(const Scenario& scenario, ScenarioIndex index, LogSink& sink, const RunOptions& options);

  const Scenario& sc_;  // configuration only: events come from ev_next_
  LogSink& sink_;
  const RunOptions opt_;
  const Knobs knobs_;
  const ScenarioIndex index_;

  // Scenario events not yet applied: [ev_next_, ev_end_) of the whole
  // scenario, or of the current block of a streamed one (blocks_).
  class BlockReader;
  const ScenarioEvent* ev_next_ = nullptr;
  const ScenarioEvent* ev_end_ = nullptr;
  std::unique_ptr<BlockReader> blocks_;
  absl::Status stream_status_;

  std::vector<std::string_view> unit_names_;  // sorted; index = unit id (views of index_.units)
  absl::flat_hash_map<std::string_view, int32_t> unit_ids_;
  int64_t next_submit_ = 0;        // ordinal of the next named submission
  std::vector<int32_t> rank_job_;  // by name rank: the job submitted under it, or -1
  // Status reason texts (stable copies) and their ids.
  absl::node_hash_set<std::string> interned_;
  std::vector<std::string_view> reason_texts_{std::string_view()};
  absl::flat_hash_map<std::string_view, uint32_t> reason_ids_;
  absl::flat_hash_map<std::string, int32_t> share_ids_;  // owns keys: shares_ reallocates
  std::vector<std::string> time_limit_reasons_;

  std::vector<int64_t> se_, total_use_, total_hold_, unassigned_lent_;
  // Per unit: the sum of all shares' limits, and of LEND / LEND_AND_BORROW
  // shares' limits (what NeverFitsReason() needs; shares change rarely).
  std::vector<int64_t> assigned_limits_, lendable_limits_;
  bool se_enabled_ = true;
  std::vector<Job> jobs_;
  // Side tables of the job records: borrowed parts of dispatched borrowing
  // jobs, and the last preempted attempts (newest first, at most 10) of jobs
  // preempted at least once.
  absl::flat_hash_map<int32_t, std::vector<Part>> parts_;
  absl::flat_hash_map<int32_t, std::vector<PreemptedAttempt>> recent_;
  int32_t IdOf(const Job& j) const { return static_cast<int32_t>(&j - jobs_.data()); }
  const std::vector<Part>& PartsOf(const Job& j) const {
    static const std::vector<Part> kNoParts;
    return j.has_parts ? parts_.at(IdOf(j)) : kNoParts;
  }
  std::span<const PreemptedAttempt> RecentOf(const Job& j) const {
    if (j.preempted_count == 0) return {};
    auto it = recent_.find(IdOf(j));
    return it == recent_.end() ? std::span<const PreemptedAttempt>() : std::span<const PreemptedAttempt>(it->second);
  }
  std::vector<Share> shares_;
  // lender_sets_[t][u]: dispatched, not draining jobs holding u borrowed from t.
  std::vector<std::vector<absl::btree_set<VictimKey>>> lender_sets_;
  std::vector<absl::btree_set<VictimKey>> borrowers_by_unit_;

  // Internal events: a heap of those due later, and a FIFO of those due at
  // now_ (the zero latencies: RUNNABLE after a submit, STARTING, RUNNING),
  // which skip the heap. Every event pushed at now_ has a higher sequence
  // number than every heap event due at now_, and the FIFO is emptied
  // before time moves on, so (time, sequence) order holds.
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
  std::vector<Event> now_events_;
  bool HasInternalEvent() const { return !now_events_.empty() || !queue_.empty(); }
  SimTime NextInternalTime() const { return now_events_.empty() ? queue_.top().time : now_; }
  int64_t next_seq_ = 0;
  SimTime now_ = 0;
  SimTime next_tick_ = -1;
  int64_t runnable_count_ = 0;
  uint64_t round_counter_ = 0;
  bool round_dropped_ = false;  // a reservation was dropped in this round
  bool dirty_ = true;           // state changed since the last pass
  std::vector<int32_t> order_;
  std::vector<OrderKey> order_keys_;  // by share
  std::vector<char> blocked_;
  // Settled shares (design notes above); bit s = share s.
  const bool skip_settled_;
  uint64_t unsettled_ = ~uint64_t{0};
  struct Lender {
    int64_t idle;
    int32_t who;
  };
  std::vector<Lender> lenders_scratch_;  // TryBorrow's, kept to save an allocation per call
  uint64_t self_bound_ = 0;  // settled shares whose look read only their own state
  uint64_t fresh_ = 0;       // looked at in this round's phase 1, unchanged since
  uint64_t with_head_ = 0;   // shares with a RUNNABLE job
  uint64_t with_res_ = 0;    // shares with a reservation (res_job)
  uint64_t borrowers_mask_ = 0, in_share_mask_ = 0;  // LEND_AND_BORROW; in-share preemption on
  std::vector<uint64_t> unit_heads_;  // by unit: shares whose head needs it
  uint64_t eligible2_ = 0;   // Phase2Eligible() when last judged (read while settled)
  std::vector<std::pair<int32_t, int32_t>> phase2_heads_;  // Phase2()'s heap
  uint64_t order_dirty_ = ~uint64_t{0};  // shares whose order key changed since ComputeOrder()
  std::vector<BorrowedPart> borrowed_scratch_;

  struct RecountScratch {  // Recount()'s counters, [share * units + unit]
    std::vector<int64_t> own, lent, borrowed, use, hold, ulent, queued;
  };
  RecountScratch recount_;
  std::vector<int32_t> touched_;  // (share, unit) keys changed since the last CheckLimits()
  std::vector<char> touched_flag_;
  std::array<int64_t, 8> status_count_{};
  std::vector<int64_t> allow1_;
  std::vector<ReclaimDeadline> reclaim_deadlines_;
  std::vector<std::string>* collect_ = nullptr;  // CollectViolations() in progress
  // Preemption cycles (RunOptions::cycle_preemptions): per job, preemptions
  // since the last progress (a request applied, an attempt ended, a job
  // finished); emptied by Progress().
  absl::flat_hash_map<int32_t, int64_t> streak_;
  void Progress() {
    if (!streak_.empty()) streak_.clear();
  }
  RunStats stats_;
};

}  // namespace engine_internal
}  // namespace qs

#endif  // QS_ENGINE_ENGINE_H_
