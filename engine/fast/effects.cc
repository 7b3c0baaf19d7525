// Every change to a job and to the accounts on the fast engine, and the log
// records it emits. The pass (pass.cc), the requests (requests.cc) and the
// internal events (engine.cc) change state only through these.
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/fast/engine.h"
#include "engine/util/strings.h"

namespace qs::engine_internal {

namespace {
constexpr size_t kRecentPreemptions = 10;
constexpr size_t kSnapshotFrontJobs = 100;
}  // namespace

// ---------------------------------------------------------------------------
// Job states

void Engine::TerminalChanged(int32_t id, JobStatus status) {
  Violation(absl::StrCat("invariant 4: terminal job ", Sv(st_.NameOf(st_.jobs[id])), " changed to ",
                         JobStatusName(status)));
}

void Engine::MakeRunnable(int32_t id, std::string_view reason, bool with_summary, bool returned) {
  Job& j = st_.jobs[id];
  j.returned = returned;
  j.reranked = false;
  ++j.attempt;
  SetStatus(id, JobStatus::kRunnable);
  j.reason = st_.reasons.Id(reason);
  ++j.reason_epoch;
  j.runnable_since = now_;
  st_.shares[j.share].queue.Insert(st_.QueueKeyOf(id));
  QueueChanged(j.share, id);
  EmitJob(id, JobStatus::kRunnable, reason, with_summary);
}

void Engine::Finish(int32_t id, JobStatus status, std::string_view reason, bool with_summary) {
  st_.PrefetchEnd(id);  // for FreeSlot, after the transition
  Progress();
  Job& j = st_.jobs[id];
  DropReservation(id);
  ++j.attempt;
  SetStatus(id, status);
  j.reason = st_.reasons.Id(reason);
  ++j.reason_epoch;
  EmitJob(id, status, reason, with_summary);
  // Nothing refers to an ended job but stale events and links, which its
  // slot's epochs outrun (FastState::TakeSlot).
  st_.FreeSlot(id);
}

// A new status reason on the job's current status. A MISCONFIGURATION
// reason starts the queue's jobStateTimeLimitActions clock for it now
// (timeLimitClock FROM_REASON) or, on a head, at the end of the instant
// (AT_HEAD: SweepHeadClocks).
void Engine::SetReason(int32_t id, std::string_view reason) {
  Job& j = st_.jobs[id];
  j.reason = st_.reasons.Id(reason);
  ++j.reason_epoch;
  clock_touched_ |= uint64_t{1} << j.share;
  EmitJob(id, j.status, reason);
  if (st_.knobs.time_limit_clock != TimeLimitClock::kFromReason || !reasons::IsMisconfiguration(reason)) return;
  if (const int32_t i = TimeLimitActionFor(reason); i >= 0) {
    Push(now_ + time_limit_actions_[static_cast<size_t>(i)].max_time_seconds * kMillisPerSecond, EventType::kTimeLimit,
         id, j.reason_epoch, 0);
  }
}

void Engine::SetPriority(int32_t id, int32_t priority) {
  Job& j = st_.jobs[id];
  if (j.priority == priority) return;
  const bool queued = j.status == JobStatus::kRunnable;
  const bool candidate = IsDispatched(j.status) && !j.draining;
  if (queued) st_.shares[j.share].queue.Erase(st_.QueueKeyOf(id));
  if (candidate) RemoveCandidate(id);
  j.priority = priority;
  j.returned = false;           // a request: it ranks as any job
  j.reranked = j.draining;      // ... also once back from its drain
  if (queued) {
    st_.shares[j.share].queue.Insert(st_.QueueKeyOf(id));
    QueueChanged(j.share, id);
  }
  if (candidate) {
    AddCandidate(id);
    CandidatesChanged(id);
  }
}

void Engine::Terminate(int32_t id, std::string_view reason) {
  Job& j = st_.jobs[id];
  if (IsDispatched(j.status)) {
    GiveToBeneficiary(id);
    Release(id);
    j.draining = false;
  } else if (j.status == JobStatus::kRunnable) {
    RemoveFromQueue(id);
    if (QsMutant(8)) return;
  }
  Finish(id, JobStatus::kFailed, reason, false);
}

void Engine::EndDrain(int32_t id) {
  Job& j = st_.jobs[id];
  const PreemptionType type = j.drain_type;
  GiveToBeneficiary(id);
  Release(id);
  if (!st_.capacity_streak.empty()) st_.capacity_streak.erase(id);  // a preemption ends a run of capacity errors
  j.draining = false;
  ++j.preempted_count;
  std::string_view runnable_reason =
      type == PreemptionType::kCrossShare ? reasons::kCrossSharePreempted : reasons::kInSharePreempted;
  std::vector<PreemptedAttempt>& recent = st_.recent[id];
  recent.insert(recent.begin(), PreemptedAttempt{j.dispatched_at, now_, runnable_reason});
  if (recent.size() > kRecentPreemptions) recent.pop_back();
  const int32_t retries = j.preemption_retries;
  if (retries >= 0 && j.preempted_count > retries - (QsMutant(6) ? 1 : 0)) {
    Finish(id, JobStatus::kFailed, reasons::kPreemptionRetriesExhausted, true);
  } else {
    MakeRunnable(id, runnable_reason, true, /*returned=*/!j.reranked);
  }
}

// Moves a releasing victim's instances into its beneficiary's hold.
void Engine::GiveToBeneficiary(int32_t id) {
  Job& v = st_.jobs[id];
  if (!v.draining || v.beneficiary == kNone) return;
  Job& b = st_.jobs[v.beneficiary];
  if (b.status == JobStatus::kRunnable && b.res_epoch == v.beneficiary_epoch) {
    settling_.UnitChanged(b.unit);  // its hold and pending victims
    if (b.pending_victims > 0) --b.pending_victims;
    const int64_t add = std::min<int64_t>(v.n, b.n - b.hold);
    if (add > 0) SetHold(b, b.hold + add);
  }
  v.beneficiary = kNone;
}

// ---------------------------------------------------------------------------
// Queues and reservations

// The head of share s (docs/semantics.md §4, and §6 "Preemption cycles";
// HeadOf in engine.h): the first job in queue order, except that with
// victimReturn BEHIND_RESERVATION a job holding a reservation stays the
// head while only returned victims rank before it. The holder is nearly
// always the first; this is the case where it is not.
int32_t Engine::HolderOrFront(int32_t s, int32_t front) const {
  const Share& sh = st_.shares[s];
  const int32_t r = sh.res_job;
  if (st_.jobs[r].status != JobStatus::kRunnable || QsMutant(10)) return front;
  for (auto it = sh.queue.begin(); it != sh.queue.end() && (*it).id != r; ++it) {
    if (!st_.jobs[(*it).id].returned) return front;
  }
  return r;
}

void Engine::QueueChanged(int32_t s, int32_t id) {
  Share& sh = st_.shares[s];
  const int32_t old_head = sh.head;
  const int32_t new_head = HeadOf(s);
  if (old_head != new_head) {
    const uint64_t bit = uint64_t{1} << s;
    if (old_head != kNone && st_.jobs[old_head].unit != kNone) settling_.unit_heads[st_.jobs[old_head].unit] &= ~bit;
    if (new_head != kNone && st_.jobs[new_head].unit != kNone) settling_.unit_heads[st_.jobs[new_head].unit] |= bit;
    settling_.with_head = new_head != kNone ? settling_.with_head | bit : settling_.with_head & ~bit;
    sh.head = new_head;
    sh.head_seq = new_head != kNone ? st_.jobs[new_head].seq : -1;
    if (summary_ != nullptr && new_head != kNone) summary_->Prefetch(new_head);
    clock_touched_ |= bit;
    order_.MarkHead(s);
    // Its look reads the head, and `id` need not be the old or the new one:
    // with victimReturn BEHIND_RESERVATION a job queued between returned
    // victims and the reservation holder makes the first victim the head.
    settling_.Unsettle(bit);
    // A lender's idle capacity on a unit depends on whether its head
    // withholds it (FastState::Withholds): where that changed with the head,
    // the shares that may borrow it look again. Where it did not, the share
    // lends what it lent before, for any capacity coming back.
    // A head withholds only its own type (the reservation's type is its
    // holder's), so where the two heads' types differ, each type changed
    // if its head withheld it.
    if (st_.knobs.entitled_capacity == EntitledCapacity::kWithheld && sh.strategy != Strategy::kReserve) {
      const int32_t u_old = old_head != kNone ? st_.jobs[old_head].unit : kNone;
      const int32_t u_new = new_head != kNone ? st_.jobs[new_head].unit : kNone;
      if (u_old == u_new) {
        if (u_old != kNone && st_.Withholds(s, old_head, u_old) != st_.Withholds(s, new_head, u_old)) {
          settling_.UnitChanged(u_old);
        }
      } else {
        if (u_old != kNone && st_.Withholds(s, old_head, u_old)) settling_.UnitChanged(u_old);
        if (u_new != kNone && st_.Withholds(s, new_head, u_new)) settling_.UnitChanged(u_new);
      }
    }
  } else if (old_head == id) {
    // Jobs behind an unchanged head are not read by a look (no backfill).
    settling_.Unsettle(uint64_t{1} << s);
  }
}

void Engine::RemoveFromQueue(int32_t id) {
  Job& j = st_.jobs[id];
  st_.shares[j.share].queue.Erase(st_.QueueKeyOf(id));
  QueueChanged(j.share, id);
}

void Engine::SetHold(Job& j, int64_t hold) {
  st_.total_hold[j.unit] += hold - j.hold;
  j.hold = static_cast<int32_t>(hold);
  checker_.TouchUnit(j.unit);
}

void Engine::DropHeldReservation(int32_t id) {
  Job& j = st_.jobs[id];
  settling_.UnitChanged(j.unit);
  SetHold(j, 0);
  j.pending_victims = 0;
  ++j.res_epoch;
  round_dropped_ = true;  // capacity others may use appeared mid-pass
  // A share blocked earlier in this pass ran its backfill before this
  // capacity appeared and is skipped by the rest of the pass (as in the
  // reference engine): the next pass must run its backfill again, so it is
  // not skipped as "nothing changed" (found by the differential fuzzer).
  if (st_.knobs.backfill && blocked_ != 0) dirty_ = true;
  Share& sh = st_.shares[j.share];
  if (sh.res_job == id) {
    sh.res_job = kNone;
    sh.res_unit = kNone;
    settling_.with_res &= ~(uint64_t{1} << j.share);
    // A holder that stayed the head ahead of returned victims is no longer.
    if (sh.head == id && st_.knobs.victim_return == VictimReturn::kBehindReservation) QueueChanged(j.share, id);
  }
}

// ---------------------------------------------------------------------------
// Capacity

void Engine::Dispatch(int32_t id, int64_t own, const std::vector<Part>& parts) {
  Job& j = st_.jobs[id];
  DropReservation(id);
  if (!st_.in_share_victim_of.empty()) st_.in_share_victim_of.erase(id);
  RemoveFromQueue(id);
  Share& sh = st_.shares[j.share];
  j.own = static_cast<int32_t>(own);  // <= n
  j.has_parts = !parts.empty();
  if (j.has_parts) st_.parts[id] = parts;
  j.borrowed_total = 0;
  for (const Part& p : parts) {
    j.borrowed_total += static_cast<int32_t>(p.qty);  // parts sum to at most n
    if (p.lender == kUnassignedLender) {
      st_.unassigned_lent[j.unit] += p.qty;
    } else {
      st_.shares[p.lender].lent[j.unit] += p.qty;
      st_.NoteRoom(p.lender, j.unit);
      Touch(p.lender, j.unit, /*lending=*/true);
    }
  }
  Touch(j.share, j.unit);  // also for its candidate entries (AddCandidate below)
  sh.own[j.unit] += own;
  st_.NoteRoom(j.share, j.unit);
  sh.borrowed[j.unit] += j.borrowed_total;
  st_.total_use[j.unit] += j.n;
  ++j.attempt;
  j.dispatched_at = now_;
  SetStatus(id, JobStatus::kScheduled);
  j.reason = 0;
  ++j.reason_epoch;
  AddCandidate(id);
  EmitJob(id, JobStatus::kScheduled, "");
  // simulation.capacity: the instances are obtained unless the draw fails
  // or those already provisioned and these exceed the type's availability;
  // else SageMaker reports a capacity error (docs/semantics.md §2).
  const TypeCapacity* cap = st_.capacity_of[j.unit];
  j.capacity_doomed = cap != nullptr && (ProvisioningDrawFails(st_.knobs.capacity, *cap, j.seq, now_) ||
                                         st_.provisioned[j.unit] + j.n > AvailableAt(*cap, now_) + (QsMutant(13) ? 1 : 0));
  if (j.capacity_doomed) {
    Push(now_ + st_.knobs.capacity.error_delay, EventType::kCapacityError, id, j.attempt, 0);
    return;
  }
  st_.provisioned[j.unit] += j.n;
  Push(now_ + st_.Latency(j, LatencyKind::kProvision, now_), EventType::kStarting, id, j.attempt, 0);
}

void Engine::Release(int32_t id) {
  Job& j = st_.jobs[id];
  if (!j.draining) RemoveCandidate(id);
  Share& sh = st_.shares[j.share];
  for (const Part& p : st_.PartsOf(j)) {
    if (p.lender == kUnassignedLender) {
      st_.unassigned_lent[j.unit] -= p.qty;
    } else {
      st_.shares[p.lender].lent[j.unit] -= p.qty;
      st_.NoteRoom(p.lender, j.unit);
      Touch(p.lender, j.unit, /*lending=*/true);
    }
  }
  Touch(j.share, j.unit);  // also for its candidate entries (RemoveCandidate above)
  sh.own[j.unit] -= j.own;
  st_.NoteRoom(j.share, j.unit);
  sh.borrowed[j.unit] -= j.borrowed_total;
  st_.total_use[j.unit] -= j.n;
  if (!j.capacity_doomed) st_.provisioned[j.unit] -= j.n;
  j.capacity_doomed = false;
  j.own = 0;
  j.borrowed_total = 0;
  if (j.has_parts) {
    st_.parts.erase(id);
    j.has_parts = false;
  }
}

// Calls fn(list) for each VictimList job `id` belongs to beside its share's
// on its type: the borrowers of the type if it borrows, and each lender's
// (FastState's candidate lists).
template <typename Fn>
void Engine::ForEachCandidateList(int32_t id, Fn&& fn) {
  const Job& j = st_.jobs[id];
  if (j.borrowed_total > 0) fn(st_.borrowers_by_unit[j.unit]);
  for (const Part& p : st_.PartsOf(j)) {
    if (p.lender != kUnassignedLender) fn(st_.lender_sets[p.lender][j.unit]);
  }
}

void Engine::AddCandidate(int32_t id) {
  const VictimKey k = st_.KeyOf(id);
  const Job& j = st_.jobs[id];
  st_.shares[j.share].dispatched[j.unit].Insert(k, st_.victim_place.data());
  ForEachCandidateList(id, [&k](VictimList& list) { list.Insert(k); });
}

void Engine::RemoveCandidate(int32_t id) {
  const VictimKey k = st_.KeyOf(id);
  const Job& j = st_.jobs[id];
  st_.shares[j.share].dispatched[j.unit].Erase(k, st_.victim_place.data());
  ForEachCandidateList(id, [&k](VictimList& list) { list.Erase(k); });
}

// Checkpoints (docs/semantics.md §6): a RUNNING victim keeps the part of
// its run up to its last checkpoint (whole intervals since RUNNING, which
// began provision + download after its dispatch); its next attempt runs the
// rest. Returns that part (0 without checkpoints or before RUNNING).
SimTime Engine::Checkpoint(int32_t vid) {
  Job& v = st_.jobs[vid];
  if (v.status != JobStatus::kRunning) return 0;
  SimTime interval = st_.knobs.checkpoint_interval.value_or(0);
  if (!st_.checkpoint_interval.empty()) {
    if (auto it = st_.checkpoint_interval.find(vid); it != st_.checkpoint_interval.end()) interval = it->second;
  }
  if (interval <= 0) return 0;
  const SimTime starting = v.dispatched_at + st_.Latency(v, LatencyKind::kProvision, v.dispatched_at);
  const SimTime ran = now_ - (starting + st_.Latency(v, LatencyKind::kDownload, starting));
  const SimTime kept = (ran / interval - (QsMutant(11) && ran >= interval ? 1 : 0)) * interval;
  v.run_time -= kept;
  return kept;
}

void Engine::StartPreemption(int32_t id, const std::vector<int32_t>& victims, PreemptionType type) {
  Job& j = st_.jobs[id];
  int64_t nv = 0;
  SimTime longest_drain = 0;
  for (int32_t v : victims) nv += st_.jobs[v].n;
  for (int32_t vid : victims) {
    Job& v = st_.jobs[vid];
    RemoveCandidate(vid);
    CandidatesChanged(vid);
    if (QsMutant(5)) {
      v.draining = true;  // Release() must not look for it in the candidate sets
      Release(vid);
    }
    v.draining = true;
    v.drain_type = type;
    v.beneficiary = id;
    v.beneficiary_epoch = j.res_epoch;
    if (type == PreemptionType::kInShare) st_.in_share_victim_of[vid] = j.seq;
    ++v.attempt;  // cancels its pending STARTING / RUNNING / attempt end
    v.reason = st_.reasons.Id(type == PreemptionType::kCrossShare ? reasons::kCrossShareInProgress
                                                                  : reasons::kInShareInProgress);
    ++v.reason_epoch;
    const SimTime kept = Checkpoint(vid);
    if (summary_ != nullptr) {
      JobTransition t = TransitionOf(vid, v.status, st_.reasons.Text(v.reason));
      t.preemption = type;
      t.preempted_for_slot = id;
      t.checkpointed_ms = kept;
      summary_->Apply(t);
    }
    if (opt_.job_records) {
      JobRecord r = BaseRecord(vid, v.status, st_.reasons.Text(v.reason));
      r.preemption = type;
      r.preempted_for = st_.NameOf(j);
      r.preempted_for_slot = id;
      r.checkpointed_ms = kept;
      sink_.OnJob(r);
    }
    const SimTime drain = st_.Latency(v, LatencyKind::kDrain, now_);
    longest_drain = std::max(longest_drain, drain);
    Push(now_ + drain, EventType::kDrainEnd, vid, v.attempt, 0);
    if (opt_.cycle_preemptions > 0 && ++streak_[vid] == opt_.cycle_preemptions && stats_.stopped.empty()) {
      stats_.stopped =
          PreemptionCycleMessage(now_, st_.NameOf(v), st_.shares[v.share].name, opt_.cycle_preemptions);
    }
  }
  settling_.UnitChanged(j.unit);
  SetHold(j, std::max<int64_t>(0, j.n - nv));
  j.pending_victims = static_cast<int32_t>(victims.size());
  st_.shares[j.share].res_job = id;
  st_.shares[j.share].res_unit = j.unit;
  settling_.with_res |= uint64_t{1} << j.share;
  if (opt_.check_invariants && type == PreemptionType::kCrossShare) {
    checker_.AddReclaimDeadline(id, j.res_epoch, now_ + longest_drain + st_.knobs.scheduling_interval);
  }
}

// ---------------------------------------------------------------------------
// Log records

JobRecord Engine::BaseRecord(int32_t id, JobStatus status, std::string_view reason) const {
  const Job& j = st_.jobs[id];
  JobRecord r;
  r.time = now_;
  r.job_name = st_.NameOf(j);
  r.job_slot = id;
  r.share_name = st_.shares[j.share].name;
  r.share_index = j.share;
  r.status = status;
  r.status_reason = reason;
  return r;
}

void Engine::SummaryLine(int32_t id, JobStatus status, std::string_view reason, bool with_summary) {
  JobTransition t = TransitionOf(id, status, reason);
  if (status == JobStatus::kScheduled) {
    const Job& j = st_.jobs[id];
    t.unit = j.unit;
    t.quantity = j.n;
    t.borrowed = j.borrowed_total;  // the sum of its parts (Dispatch)
  }
  t.has_preemption_summary = with_summary;
  summary_->Apply(t);
}

void Engine::EmitRecord(int32_t id, JobStatus status, std::string_view reason, bool with_summary) {
  const Job& j = st_.jobs[id];
  JobRecord r = BaseRecord(id, status, reason);
  if (status == JobStatus::kScheduled) {
    r.has_usage = true;
    r.capacity_unit = st_.unit_names[j.unit];
    r.unit_index = j.unit;
    r.quantity = j.n;
    borrowed_scratch_.clear();
    for (const Part& p : st_.PartsOf(j)) {
      borrowed_scratch_.push_back(BorrowedPart{st_.LenderName(p.lender), st_.unit_names[j.unit], p.qty});
    }
    r.borrowed = borrowed_scratch_;
  }
  if (with_summary) {
    r.has_preemption_summary = true;
    r.preempted_attempt_count = j.preempted_count;
    r.recent_preempted_attempts = st_.RecentOf(j);
  }
  sink_.OnJob(r);
}

void Engine::NoteRunnableLine(int32_t id) {
  const int32_t seq = st_.jobs[id].seq;
  cause_fresh_.emplace_back(id, seq);
  cause_fresh_seqs_.insert(seq);
}

void Engine::EmitCapacity(int32_t u) {
  sink_.OnCapacity(CapacityRecord{now_, st_.unit_names[u], st_.se[u]});
  if (summary_ != nullptr) summary_->OnCapacity(now_, u, st_.se[u]);
}

void Engine::EmitSnapshot() {
  SnapshotRecord rec;
  rec.time = now_;
  // frontOfQueue: k-way merge of the share queues by (priority desc, the
  // share's use/limit ratio asc, submission order). Each queue is in
  // (priority, submission) order and its ratio is one value, so the merge
  // takes the least head each time.
  std::vector<UseRatio> ratio;
  for (int32_t s = 0; s < st_.NumShares(); ++s) ratio.push_back(ShareUseRatio(st_, s));
  std::vector<JobQueue::const_iterator> its;
  for (int32_t s = 0; s < st_.NumShares(); ++s) its.push_back(st_.shares[s].queue.begin());
  auto before = [&](int32_t a, int32_t b) {  // the next jobs of shares a and b
    const QueueKey x = *its[a];
    const QueueKey y = *its[b];
    if (x.neg_priority != y.neg_priority) return x.neg_priority < y.neg_priority;
    const UseRatio& ra = ratio[static_cast<size_t>(a)];
    const UseRatio& rb = ratio[static_cast<size_t>(b)];
    if (UseRatioLess(ra, rb)) return true;
    if (UseRatioLess(rb, ra)) return false;
    return x.seq < y.seq;
  };
  while (rec.front_of_queue.size() < kSnapshotFrontJobs) {
    int32_t best = kNone;
    for (int32_t s = 0; s < st_.NumShares(); ++s) {
      if (its[s] == st_.shares[s].queue.end()) continue;
      if (best == kNone || before(s, best)) best = s;
    }
    if (best == kNone) break;
    const Job& j = st_.jobs[(*its[best]).id];
    rec.front_of_queue.push_back(SnapshotJob{st_.NameOf(j), j.runnable_since});
    ++its[best];
  }
  for (int32_t s = 0; s < st_.NumShares(); ++s) {
    const Share& sh = st_.shares[s];
    if (sh.deleted) continue;
    SnapshotShare ss;
    ss.share_name = sh.name;
    if (const int32_t h = st_.Head(s); h != kNone) {
      ss.front.push_back(SnapshotJob{st_.NameOf(st_.jobs[h]), st_.jobs[h].runnable_since});
    }
    for (int32_t u = 0; u < st_.NumUnits(); ++u) {
      const int64_t use = sh.own[u] + sh.borrowed[u];
      if (use > 0) ss.usage.push_back(SnapshotUsage{st_.unit_names[u], use});
    }
    rec.shares.push_back(std::move(ss));
  }
  for (int32_t u = 0; u < st_.NumUnits(); ++u) {
    if (st_.total_use[u] > 0) rec.total_usage.push_back(SnapshotUsage{st_.unit_names[u], st_.total_use[u]});
  }
  sink_.OnSnapshot(rec);
}

}  // namespace qs::engine_internal
