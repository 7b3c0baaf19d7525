// File: engine/fast/state.h
//
// The accounts of the fast engine: what every part reads. Job records and
// their side tables, shares (configuration, counters per instance type,
// queue, candidate trees), per-type environment counters, and the accessors
// that the rules are written in (Headroom, Idle, FreeFor, BorrowCap, ...).
//
// Who changes what:
//  * The engine's effects (engine/fast/effects.cc, requests.cc) are the only
//    writers. Every count here is kept up to date as jobs move (own, lent,
//    borrowed per share and type; use, holds, unassigned lending per type);
//    nothing is recomputed in a pass.
//  * The decisions (share_order, victims, borrow_plan, settling) and the
//    invariant checker read a `const FastState&`.
//  * InvariantChecker::Recount() recomputes the counts from the job records
//    to check them (full_invariant_check).
//
// Thread-compatible.
#ifndef QS_ENGINE_FAST_STATE_H_
#define QS_ENGINE_FAST_STATE_H_

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_set.h"
#include "engine/fast/job_queue.h"
#include "engine/fast/victim_list.h"
#include "engine/log/event_log.h"
#include "engine/model/capacity.h"
#include "engine/internal/mutants.h"
#include "engine/model/scenario.h"
#include "engine/model/scenario_index.h"
#include "engine/model/validation.h"
#include "engine/util/huge_pages.h"

namespace qs::engine_internal {

inline constexpr int32_t kNone = -1;
inline constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max() / 4;
// The lender id of capacity no share is assigned (unassignedCapacity: LENDABLE).
inline constexpr int32_t kUnassignedLender = 1 << 20;
static_assert(kMaxQuotaShares <= 64, "shares are bits of a uint64_t in the pass");

// A borrowed part of a dispatched job: `lender` is a share index or
// kUnassignedLender.
struct Part {
  int32_t lender;
  int64_t qty;
};

// The per-job record: 112 bytes (static_assert below), the request's facts
// included. Records live in slots (FastState::jobs) that are held only while
// the job is in flight: a slot is taken at submission and given back when
// the job ends (FastState::FreeSlot), so a run keeps records for the jobs in
// flight, not for every job it has seen; what a request may still ask of a
// finished job (that it finished, and how) is FastState::rank_job's. A
// "job id" in the fast engine is a slot; Job::seq is the submission order.
// Slots are reused with their epochs (attempt, reason_epoch, res_epoch)
// carried on, so an event or a reference left behind by the slot's earlier
// job never matches the new one. Borrowed parts and the recent preempted
// attempts, which few jobs have, live in side tables (FastState::parts, recent) keyed by job id; the status
// reason is an id into the ReasonTable. The fields a pass reads for every
// head it looks at come first (48 bytes).
struct Job {
  // Read by every pass (LookAt, phases 1-3, victim choice). Counts are
  // int32 API values (instance counts, and own/borrowed parts of them).
  int32_t n = 0;
  uint32_t reason = 0;  // ReasonTable::Text(reason); 0 is ""
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
  bool has_parts = false;  // an entry in FastState::parts
  // RUNNABLE again after a preemption drain, its priority unchanged since it
  // was preempted (`reranked` marks a change during the drain):
  // with victimReturn BEHIND_RESERVATION it does not take the head from
  // its share's reservation holder (Engine::HeadOf).
  bool returned = false;
  bool reranked = false;  // its priority changed while it drained
  bool limit_is_max_runtime = false;  // attempt_limit_s is SageMaker's MaxRuntimeInSeconds
  JobOutcome outcome = JobOutcome::kSucceeded;
  uint32_t res_epoch = 0;
  // While dispatched.
  int32_t own = 0;
  int32_t borrowed_total = 0;
  int32_t seq = 0;  // submission order among accepted submissions (queue, phase 2 and visit order)
  // The rest.
  SimTime run_time = 0;  // simulation.runSeconds, in ms
  SimTime dispatched_at = 0;
  SimTime runnable_since = 0;
  uint32_t attempt = 0;
  uint32_t reason_epoch = 0;
  int32_t preempted_count = 0;
  int32_t beneficiary = -1;
  uint32_t beneficiary_epoch = 0;
  // The earlier of timeoutConfig.attemptDurationSeconds and
  // StoppingCondition.MaxRuntimeInSeconds (-1: neither); which one it is
  // (Batch's timeout wins a tie) is limit_is_max_runtime.
  int32_t attempt_limit_s = -1;
  int32_t preemption_retries = -1;  // preemptionRetriesBeforeTermination, -1 none
  int8_t retry_attempts = 1;        // retryStrategy.attempts (validated 1..10)
  int8_t failed_attempts = 0;       // < retry_attempts
  // The dispatched attempt will not get its instances (simulation.capacity):
  // it ends with a capacity error, and its instances are not provisioned.
  bool capacity_doomed = false;
};
static_assert(sizeof(Job) <= 112, "the job record must stay compact");

struct Share {
  std::string name;
  Strategy strategy = Strategy::kReserve;
  int64_t borrow_limit = -1;
  Toggle in_share = Toggle::kDisabled;
  Toggle state = Toggle::kEnabled;
  std::vector<int64_t> limit, own, lent, borrowed;     // per unit
  JobQueue queue;                                      // RUNNABLE jobs
  std::vector<VictimList> dispatched;                  // per unit, not draining
  int32_t res_job = kNone;   // job holding a reservation, if any
  int32_t res_unit = kNone;  // its instance type
  int32_t name_rank = 0;     // rank of the name among all shares
  int32_t head = kNone;      // Engine::HeadOf: queue.begin()->id or the reservation holder; kNone if empty
  int32_t head_seq = -1;     // jobs[head].seq, kept beside it (phase 2 and the visit order read it without the record)
  // Engine::LookAt's last verdict that a head could start: the head's
  // Job::seq, FastState::limits_epoch and its reason then (not a
  // MISCONFIGURATION one).
  int32_t fits_seq = -1;
  uint32_t fits_epoch = 0, fits_reason = 0;
  bool deleted = false;      // DeleteQuotaShare: an empty slot, no limits, out of share_ids and snapshots
  // The head's MISCONFIGURATION time-limit clock (Engine::SweepHeadClocks):
  // the (head, reason) pair it runs for, and a generation its event carries.
  int32_t clock_seq = -1;     // Job::seq of the head, -1 when no clock runs
  uint32_t clock_reason = 0;  // ReasonTable id
  uint32_t clock_gen = 0;
  // The head's last cause line (RunOptions::wait_causes; Engine::EmitWaitCauses):
  // the job (slot and Job::seq) and its cause; kNone when none was written.
  int32_t cause_job = kNone;
  int32_t cause_seq = -1;
  WaitCause cause = WaitCause::kNone;
};

// Status reasons by id: Id() interns a text by content (a stable copy the
// first time it is seen); "" is id 0.
class ReasonTable {
 public:
  std::string_view Text(uint32_t id) const { return texts_[id]; }
  // 0 is the empty text (no reason), which most lines have.
  uint32_t Id(std::string_view text) { return text.empty() ? 0 : Intern(text); }

 private:
  uint32_t Intern(std::string_view text);

  absl::node_hash_set<std::string> interned_;
  std::vector<std::string_view> texts_{std::string_view()};
  absl::flat_hash_map<absl::string_view, uint32_t> ids_;  // as FastState::unit_ids
};

struct FastState {
  // `huge_pages`: RunOptions::huge_pages.
  FastState(const Scenario& scenario, const Knobs& knobs, ScenarioIndex index, bool huge_pages);

  const Knobs knobs;
  const ScenarioIndex index;

  // Instance types: ids follow name order, so "units by name" is "units by id".
  std::vector<std::string_view> unit_names;  // views of index.units
  // Keyed by absl::string_view, which absl hashes itself (Debian's Abseil
  // has its own string_view: std::string_view keys went through std::hash,
  // about 80 instructions a lookup, one lookup a submission). Look up with
  // Sv() (engine/util/strings.h).
  absl::flat_hash_map<absl::string_view, int32_t> unit_ids;

  // The job records, by slot (TakeSlot, FreeSlot): as many as jobs were in
  // flight at once, mapped for huge pages.
  std::vector<Job, HugePageAllocator<Job>> jobs;
  std::vector<int32_t> free_slots;  // given back, reused last-in first-out
  // By slot, beside jobs: a dispatched job's place in its share's victim
  // list (VictimList's `places`), so that its erase needs no search.
  std::vector<int32_t> victim_place;
  // Side tables of the job records: borrowed parts of dispatched borrowing
  // jobs, and the last preempted attempts (newest first, at most 10) of jobs
  // preempted at least once.
  absl::flat_hash_map<int32_t, std::vector<Part>> parts;
  absl::flat_hash_map<int32_t, std::vector<PreemptedAttempt>> recent;
  // simulation.checkpointIntervalSeconds of the jobs that give one (keyed
  // by slot; the others use Knobs::checkpoint_interval).
  absl::flat_hash_map<int32_t, SimTime> checkpoint_interval;
  // simulation.capacity (docs/semantics.md §2, "Capacity"): per unit, its
  // entry (nullptr: always provisions) and the instances provisioned to
  // dispatched attempts not doomed to a capacity error; per job in a run of
  // capacity errors, the SCHEDULED time of the first (the time-limit clock).
  std::vector<const TypeCapacity*> capacity_of;
  // simulation.latencies: per unit its entry (nullptr: the constant knobs).
  std::vector<const TypeLatencies*> latency_of;
  std::vector<int64_t> provisioned;
  absl::flat_hash_map<int32_t, SimTime> capacity_streak;
  // In-share victims not dispatched since: victim slot -> the seq of the job
  // they were preempted for (backfill skips them while it is the head).
  absl::flat_hash_map<int32_t, int32_t> in_share_victim_of;
  // By job name rank: the slot of the job submitted under it while it is
  // in flight; kNone before any; kEndedSucceeded / kEndedFailed once it ended.
  static constexpr int32_t kEndedSucceeded = -2, kEndedFailed = -3;
  std::vector<int32_t, HugePageAllocator<int32_t>> rank_job;
  ReasonTable reasons;

  std::vector<Share> shares;
  absl::flat_hash_map<std::string, int32_t> share_ids;  // owns keys: shares reallocates

  // Per unit: the environment's limit, instances in use, held for
  // reservations, lent from unassigned capacity; the sum of all shares'
  // limits and of LEND / LEND_AND_BORROW shares' limits (SumLimits()).
  std::vector<int64_t> se, total_use, total_hold, unassigned_lent;
  std::vector<int64_t> assigned_limits, lendable_limits;
  bool se_enabled = true;
  // By unit: bit t set iff share t has headroom there (Headroom(t, u) > 0).
  // A share without headroom lends nothing (Idle), so the lenders of u are
  // looked for among these bits only. Every change of a share's limit, own
  // or lent count is followed by NoteRoom; InvariantChecker::Recount checks
  // the bits.
  std::vector<uint64_t> with_room;
  // Bit t set iff share t's strategy lets it lend (StrategyLends), kept by
  // Engine::StrategyMasks at every strategy change. Lender walks AND it with
  // with_room: in a busy cluster most shares with room are RESERVE ones.
  uint64_t lending_mask = 0;

  // Victim candidates beside Share::dispatched[u]: lender_sets[t][u] holds
  // the dispatched, not draining jobs holding u borrowed from t;
  // borrowers_by_unit[u] those borrowing u from anyone.
  std::vector<std::vector<VictimList>> lender_sets;
  std::vector<VictimList> borrowers_by_unit;

  int32_t NumShares() const { return static_cast<int32_t>(shares.size()); }
  int32_t NumUnits() const { return static_cast<int32_t>(unit_names.size()); }
  int32_t UnitOf(std::string_view name) const;
  int32_t Head(int32_t s) const { return shares[s].head; }
  int32_t IdOf(const Job& j) const { return static_cast<int32_t>(&j - jobs.data()); }
  QueueKey QueueKeyOf(int32_t id) const { return QueueKey{-jobs[id].priority, jobs[id].seq, id}; }
  // A fresh record for a new submission (accepted as number `seq`): a slot
  // given back earlier, or a new one. FreeSlot: the job in `id` has ended
  // (its status is terminal and it holds nothing); rank_job keeps how it
  // ended, its preempted attempts are dropped and the slot is given back.
  int32_t TakeSlot(int32_t seq);
  void FreeSlot(int32_t id);
  // The job in `id` is about to end: its rank_job entry, which FreeSlot
  // writes and which is cold in a large run (4 bytes a name, read in the
  // order jobs end), is fetched meanwhile.
  void PrefetchEnd(int32_t id) const {
    __builtin_prefetch(&rank_job[static_cast<size_t>(jobs[id].name_rank)], 1);
  }
  std::string_view NameOf(const Job& j) const { return index.job_names.Name(j.name_rank); }
  std::string_view LenderName(int32_t t) const {
    return t == kUnassignedLender ? kUnassignedLenderName : std::string_view(shares[t].name);
  }
  const std::vector<Part>& PartsOf(const Job& j) const {
    static const std::vector<Part> kNoParts;
    return j.has_parts ? parts.at(IdOf(j)) : kNoParts;
  }
  std::span<const PreemptedAttempt> RecentOf(const Job& j) const {
    if (j.preempted_count == 0) return {};
    auto it = recent.find(IdOf(j));
    return it == recent.end() ? std::span<const PreemptedAttempt>() : std::span<const PreemptedAttempt>(it->second);
  }

  // The job's latency of `kind` starting at `t` (docs/semantics.md §2,
  // "Latency distributions").
  SimTime Latency(const Job& j, LatencyKind kind, SimTime t) const {
    return LatencyOf(knobs, latency_of[j.unit], kind, j.seq, t);
  }
  // L - Own - Lent of share s on u.
  int64_t Headroom(int32_t s, int32_t u) const {
    const Share& sh = shares[s];
    return sh.limit[u] - sh.own[u] - sh.lent[u];
  }
  // Instances of u neither in use nor held for others' reservations.
  int64_t FreeFor(int32_t id) const {
    const Job& j = jobs[id];
    return se[j.unit] - total_use[j.unit] - (QsMutant(3) ? 0 : total_hold[j.unit] - j.hold);
  }
  // Whether the share's strategy lets it lend its idle capacity (RESERVE
  // keeps it).
  static bool StrategyLends(const Share& sh) { return sh.strategy != Strategy::kReserve || QsMutant(2); }
  // B of a share on u: 0 unless LEND_AND_BORROW, kUnlimited without a limit.
  int64_t BorrowCap(const Share& sh, int32_t u) const {
    if (sh.strategy != Strategy::kLendAndBorrow) return 0;
    if (sh.borrow_limit < 0) return kUnlimited;
    return sh.limit[u] * sh.borrow_limit / 100;
  }
  // What head j of share s must borrow beyond its own headroom.
  int64_t ToBorrow(int32_t s, const Job& j) const {
    return j.n - std::max<int64_t>(0, std::min<int64_t>(j.n, Headroom(s, j.unit)));
  }
  // Whether s's borrow cap refuses borrowing b more of u (phase 2's check,
  // which IsSelfBound() relies on reading only the share).
  bool BorrowCapRefuses(int32_t s, int32_t u, int64_t b) const {
    const Share& sh = shares[s];
    const int64_t cap = BorrowCap(sh, u);
    return cap != kUnlimited && sh.borrowed[u] + b > cap + (QsMutant(1) ? 1 : 0);
  }
  // What lender t (a share or kUnassignedLender) could lend of u, were
  // `extra` more of its own returned (lent parts coming back: t's Own stays).
  int64_t Idle(int32_t t, int32_t u, int64_t extra) const {
    if (t == kUnassignedLender) {
      return std::max<int64_t>(0, se[u] - assigned_limits[u] - unassigned_lent[u] + extra);
    }
    // A share with no headroom lends nothing whatever else holds: decided
    // first, from the share's own counters, before the head's job record
    // (a cache miss) is read. Borrow planning asks every share in turn,
    // and in a busy cluster most are full.
    const int64_t room = Headroom(t, u) + extra;
    if (room <= 0) return 0;
    const Share& sh = shares[t];
    if (!StrategyLends(sh)) return 0;
    if (Withholds(t, sh.head, u)) return 0;
    return room;
  }
  // Whether share t, with `head` as its head (kNone: none), withholds its
  // idle capacity on u (Idle; Engine::QueueChanged asks it of the old and
  // the new head):
  //  * only a head's reservation withholds (docs/semantics.md §3, "Idle"):
  //    a holder overtaken between passes keeps its hold until the next pass
  //    drops it, but its share lends again at once (wait causes see it);
  //  * with entitledCapacity WITHHELD, a head waiting for u within t's own
  //    limit (§3, "Entitled capacity"): it needs u, could ever start (for a
  //    head within its own limit only SERVICE_ENVIRONMENT_MAX_RESOURCE can
  //    apply) and Own[t,u] + n <= L[t,u].
  bool Withholds(int32_t t, int32_t head, int32_t u) const {
    if (head == kNone) return false;
    const Share& sh = shares[t];
    if (sh.res_job == head && sh.res_unit == u) return true;
    if (knobs.entitled_capacity != EntitledCapacity::kWithheld || QsMutant(9)) return false;
    const Job& j = jobs[head];
    return j.unit == u && j.n <= se[u] && sh.own[u] + j.n <= sh.limit[u];
  }
  // Whether key k in share s's list on u (Share::dispatched) is right: its
  // job is dispatched there, not draining, and has that key
  // (InvariantChecker::Recount).
  bool LiveIn(const VictimKey& k, int32_t s, int32_t u) const {
    const Job& j = jobs[static_cast<size_t>(k.id)];
    if (!IsDispatched(j.status) || j.draining || j.share != s || j.unit != u || j.name_rank != k.name_rank) {
      return false;
    }
    const VictimKey now = KeyOf(k.id);
    return now.a == k.a && now.b == k.b && now.c == k.c;
  }
  // The priority of the job with victim key k, read from the key (its record
  // is likely cold where candidates are looked through).
  int64_t PriorityIn(const VictimKey& k) const {
    return knobs.victim_order == VictimOrder::kMostBorrowedFirst ? k.b : k.a;
  }
  // The job's place in victim order (simulation.victimOrder).
  VictimKey KeyOf(int32_t id) const {
    const Job& j = jobs[id];
    if (knobs.victim_order == VictimOrder::kMostBorrowedFirst) {
      return VictimKey{-j.borrowed_total, j.priority, -j.dispatched_at, j.name_rank, id};
    }
    return VictimKey{j.priority, QsMutant(15) ? j.dispatched_at : -j.dispatched_at, -j.borrowed_total, j.name_rank, id};
  }
  // The MISCONFIGURATION reason of a head that can never start under the
  // current configuration, or "".
  std::string_view NeverFitsReason(int32_t s, const Job& j) const;
  // assigned_limits and lendable_limits, after a share's limits or strategy
  // change; a new limits_epoch.
  void SumLimits();
  // Advances with every change to what NeverFitsReason reads of the
  // configuration (SumLimits(), an environment update), so that verdicts
  // cached under an earlier one (Share::fits_epoch) are stale.
  uint32_t limits_epoch = 1;
  // Share s's bit in with_room[u] (all units: NoteRoomAll), after its limit, own
  // or lent count on u changed.
  void NoteRoom(int32_t s, int32_t u) {
    const uint64_t bit = uint64_t{1} << s;
    with_room[u] = Headroom(s, u) > 0 ? with_room[u] | bit : with_room[u] & ~bit;
  }
  void NoteRoomAll(int32_t s) {
    for (int32_t u = 0; u < NumUnits(); ++u) NoteRoom(s, u);
  }
};

}  // namespace qs::engine_internal

#endif  // QS_ENGINE_FAST_STATE_H_
