// The reference engine's pass (docs/semantics.md §4-7): see reference_engine.cc.
#include "engine/reference/reference_engine.h"
#include "engine/model/capacity.h"

namespace qs::reference_internal {

// ==================================================================== pass
void Engine::Pass() {
  ++stats_.passes;
  for (std::vector<int>& share_jobs : live_) {
    std::erase_if(share_jobs, [this](int i) {
      const Job& j = jobs_[static_cast<size_t>(i)];
      return IsTerminal(j.status) && !j.has_reservation && !j.draining;
    });
  }
  for (std::vector<int>& share_held : held_) {
    std::erase_if(share_held, [this](int i) {
      Job& j = jobs_[static_cast<size_t>(i)];
      j.in_held = Holds(j);
      return !j.in_held;
    });
  }
  std::erase_if(borrowers_, [this](int i) {
    Job& j = jobs_[static_cast<size_t>(i)];
    j.in_borrowers = !j.parts.empty();
    return !j.in_borrowers;
  });
  // A DISABLED service environment dispatches nothing and preempts nothing
  // (§3): its passes look at nothing (no never-fit reasons, no rounds).
  if (!env_enabled_) return;
  // Start of pass: drop reservations of jobs no longer RUNNABLE or no longer
  // the head of their share.
  for (const std::vector<int>& share_held : held_) {
    for (int i : share_held) {
      const Job& j = jobs_[static_cast<size_t>(i)];
      if (!j.has_reservation) continue;
      if (j.status != JobStatus::kRunnable || Head(j.share) != static_cast<int>(i)) {
        DropReservation(static_cast<int>(i));
      }
    }
  }
  std::vector<bool> blocked(shares_.size(), false);
  // Rounds go on while they dispatch, preempt, or drop a reservation (which
  // frees capacity that earlier phases of the round did not see).
  while (true) {
    dropped_in_round_ = false;
    std::vector<int> order = VisitingOrder();
    bool progress = false;
    progress = Phase1(order, blocked) || progress;
    progress = Phase2(order, blocked) || progress;
    progress = Phase3(order, blocked) || progress;
    if (!progress && !dropped_in_round_) break;
  }
}

std::string_view Engine::NeverFitReason(const Job& j) const {
  const Share& sh = shares_[static_cast<size_t>(j.share)];
  const int64_t n = j.count;
  const int64_t se = EnvLimit(j.unit);  // 0 when the environment does not list the unit
  if (n > se) return reasons::kSeMaxResource;
  const int64_t l = Limit(j.share, j.unit);
  if ((sh.strategy == Strategy::kReserve || sh.strategy == Strategy::kLend) && n > l) {
    return reasons::kQuotaLimitExceeded;
  }
  if (sh.strategy == Strategy::kLendAndBorrow) {
    if (!BorrowUnlimited(j.share) && n > l + BorrowCap(j.share, j.unit)) {
      return reasons::kQuotaAndBorrowLimitExceeded;
    }
    int64_t configured = 0;
    for (size_t t = 0; t < shares_.size(); ++t) {
      if (static_cast<int>(t) == j.share || shares_[t].strategy == Strategy::kReserve) continue;
      configured += Limit(static_cast<int>(t), j.unit);
    }
    if (UnassignedLendable()) configured += std::max<int64_t>(0, se - SumLimits(j.unit));
    if (n - l > configured) return reasons::kBorrowExceedsConfigured;
  }
  return {};
}

// The never-fits check (§4), run whenever a job is looked at. Returns true
// when the job never fits (it then has the matching reason).
bool Engine::LookAt(int ji) {
  Job& j = jobs_[static_cast<size_t>(ji)];
  std::string_view reason = NeverFitReason(j);
  if (!reason.empty()) {
    if (j.reason != reason) {
      SetStatus(j, JobStatus::kRunnable, reason);
      if (sc_.knobs.time_limit_clock == TimeLimitClock::kFromReason) StartTimeLimitClock(ji);
    }
    if (j.has_reservation) DropReservation(ji);
    return true;
  }
  if (IsMisconfiguration(j.reason)) SetStatus(j, JobStatus::kRunnable, "");
  return false;
}

// §5, timeLimitClock FROM_REASON: the clock starts with the reason.
void Engine::StartTimeLimitClock(int ji) {
  const Job& j = jobs_[static_cast<size_t>(ji)];
  if (const JobStateTimeLimitAction* a = TimeLimitActionFor(j.reason)) {
    Schedule(now_ + a->max_time_seconds * kMillisPerSecond, InternalEvent{EventKind::kTimeLimit, ji, j.reason_version});
  }
}

// §5, timeLimitClock AT_HEAD: a MISCONFIGURATION reason's clock runs while
// the job is its share's head with that reason; looked at for every share
// at the end of an instant.
void Engine::SweepHeadClocks() {
  if (sc_.knobs.time_limit_clock != TimeLimitClock::kAtHead) return;
  for (size_t s = 0; s < shares_.size(); ++s) {
    Share& sh = shares_[s];
    const int h = Head(static_cast<int>(s));
    int job = kNone;
    std::string reason;
    if (h != kNone && IsMisconfiguration(jobs_[static_cast<size_t>(h)].reason)) {
      job = h;
      reason = jobs_[static_cast<size_t>(h)].reason;
    }
    if (job == sh.clock_job && reason == sh.clock_reason) continue;
    sh.clock_job = job;
    sh.clock_reason = reason;
    ++sh.clock_gen;
    if (job == kNone) continue;
    if (const JobStateTimeLimitAction* a = TimeLimitActionFor(reason)) {
      Schedule(now_ + a->max_time_seconds * kMillisPerSecond, InternalEvent{EventKind::kHeadTimeLimit, job, sh.clock_gen});
    }
  }
}

void Engine::Dispatch(int ji, int64_t own, std::vector<Part> parts) {
  // simulation.capacity (§2, "Capacity"): decided before the job holds.
  bool doomed = false;
  {
    const Job& jc = jobs_[static_cast<size_t>(ji)];
    if (const TypeCapacity* cap = FindTypeCapacity(sc_.knobs.capacity, jc.unit)) {
      doomed = ProvisioningDrawFails(sc_.knobs.capacity, *cap, ji, now_) ||
               Provisioned(jc.unit) + jc.count > AvailableAt(*cap, now_);
    }
  }
  if (jobs_[static_cast<size_t>(ji)].has_reservation) DropReservation(ji);
  NoteHeld(ji);
  Job& j = jobs_[static_cast<size_t>(ji)];
  j.returned = false;
  j.in_share_victim_of = kNone;
  j.own = own;
  j.parts = std::move(parts);
  if (!j.parts.empty()) NoteBorrower(ji);
  j.dispatched_at = now_;
  ++j.epoch;
  std::vector<BorrowedPart> borrowed;
  for (const Part& p : j.parts) borrowed.push_back(BorrowedPart{p.lender, j.unit, p.quantity});
  JobRecord rec = BaseRecord(j);
  rec.has_usage = true;
  rec.capacity_unit = j.unit;
  rec.quantity = j.count;
  rec.borrowed = borrowed;
  Commit(j, JobStatus::kScheduled, "", rec);
  j.capacity_doomed = doomed;
  if (doomed) {
    Schedule(now_ + sc_.knobs.capacity.error_delay, InternalEvent{EventKind::kCapacityError, ji, j.epoch});
    return;
  }
  Schedule(now_ + LatencyOf(sc_.knobs, FindTypeLatencies(sc_.knobs.latencies, j.unit), LatencyKind::kProvision, ji, now_),
           InternalEvent{EventKind::kStarting, ji, j.epoch});
}

// Phase 1 (own capacity). Returns true when something was dispatched or a
// preemption started.
bool Engine::Phase1(const std::vector<int>& order, std::vector<bool>& blocked) {
  bool progress = false;
  for (int s : order) {
    // A waiting share's head is still looked at: it dispatches if it fits now.
    if (blocked[static_cast<size_t>(s)]) continue;
    bool stopped = false;  // the head stopped without dispatching or preempting
    int head = kNone;
    while (true) {
      head = Head(s);
      if (head == kNone) break;
      if (LookAt(head)) {
        blocked[static_cast<size_t>(s)] = true;
        stopped = true;
        break;
      }
      const Job& j = jobs_[static_cast<size_t>(head)];
      const int64_t n = j.count;
      if (Own(s, j.unit) + n > Limit(s, j.unit)) {
        stopped = VictimsDrainingFor(head) == 0;  // phase 2 may borrow; a waiting share just waits
        break;
      }
      if (env_enabled_ && Headroom(s, j.unit) >= n && FreeFor(j) >= n) {
        Dispatch(head, n, {});
        progress = true;
        continue;
      }
      if (VictimsDrainingFor(head) > 0) break;  // the share waits
      if (TryCrossShareReclaim(head)) {
        progress = true;  // the share now waits
        break;
      }
      // Short environment (§4 phase 1): a reservation that cannot cover the
      // head even with every victim drained is given up.
      if (j.has_reservation && FreeFor(j) < n) DropReservation(head);
      stopped = true;
      break;
    }
    if (stopped && sc_.knobs.backfill && head != kNone) {
      progress = Backfill(s, head) || progress;
    }
  }
  return progress;
}

// Backfill (§4 phase 1): later jobs of the share, in queue order, dispatched
// from its own limit when H >= n and Free >= n; never-fit ones get their
// reason and are skipped. A later job never borrows or preempts.
bool Engine::Backfill(int s, int head) {
  // A head holding a reservation counts on the share's own headroom too.
  if (jobs_[static_cast<size_t>(head)].has_reservation) return false;
  bool progress = false;
  std::vector<int> queue = Queue(s);
  for (int k : queue) {
    if (k == head) continue;
    // A job preempted in-share for the head is not given its capacity back
    // while the head waits (a preemption undone at once, for ever).
    if (jobs_[static_cast<size_t>(k)].in_share_victim_of == head) continue;
    if (LookAt(k)) continue;
    const Job& j = jobs_[static_cast<size_t>(k)];
    if (env_enabled_ && Headroom(s, j.unit) >= j.count && FreeFor(j) >= j.count) {
      Dispatch(k, j.count, {});
      progress = true;
    }
  }
  return progress;
}

// Phase 2 (borrowing), LEND_AND_BORROW shares only; heads served oldest first.
bool Engine::Phase2(const std::vector<int>& order, std::vector<bool>& blocked) {
  bool progress = false;
  std::vector<bool> eligible(shares_.size(), false);
  auto evaluate = [&](int s) {
    eligible[static_cast<size_t>(s)] = false;
    if (shares_[static_cast<size_t>(s)].strategy != Strategy::kLendAndBorrow) return;
    if (blocked[static_cast<size_t>(s)] || Waiting(s)) return;
    int h = Head(s);
    if (h == kNone) return;
    if (LookAt(h)) {
      blocked[static_cast<size_t>(s)] = true;
      return;
    }
    const Job& j = jobs_[static_cast<size_t>(h)];
    eligible[static_cast<size_t>(s)] = Headroom(s, j.unit) < j.count;
  };
  for (int s : order) evaluate(s);
  while (true) {
    int pick = kNone;
    int pick_head = kNone;
    for (int s : order) {
      if (!eligible[static_cast<size_t>(s)]) continue;
      int h = Head(s);
      if (pick == kNone ||
          jobs_[static_cast<size_t>(h)].created_at <
              jobs_[static_cast<size_t>(pick_head)].created_at ||
          (jobs_[static_cast<size_t>(h)].created_at ==
               jobs_[static_cast<size_t>(pick_head)].created_at &&
           h < pick_head)) {
        pick = s;
        pick_head = h;
      }
    }
    if (pick == kNone) break;
    const Job& j = jobs_[static_cast<size_t>(pick_head)];
    const int64_t n = j.count;
    const BorrowNeed need = NeedToBorrow(pick, j);
    bool ok = env_enabled_ && FreeFor(j) >= n &&
              WithinBorrowCap(pick, j.unit, Borrowed(pick, j.unit) + need.borrow) && need.idle >= need.borrow;
    if (!ok) {
      eligible[static_cast<size_t>(pick)] = false;
      // A head that can start only by borrowing, holding capacity its
      // victims left (none still draining: it would be waiting), loses the
      // reservation when the borrow fails (entitledCapacity WITHHELD: the
      // lenders it counted on may withhold since; §4 phase 2).
      // A reservation that cannot cover the head (short environment) is
      // given up as in phase 1, under either knob value.
      if (j.has_reservation &&
          (FreeFor(j) < n || (sc_.knobs.entitled_capacity == EntitledCapacity::kWithheld &&
                              Own(pick, j.unit) + n > Limit(pick, j.unit)))) {
        DropReservation(pick_head);
      }
      continue;
    }
    std::vector<Part> parts;
    int64_t remaining = need.borrow;
    for (const Lender& l : need.lenders) {
      if (remaining == 0) break;
      int64_t take = std::min(l.idle, remaining);
      if (take <= 0) continue;
      parts.push_back(Part{std::string(l.name), take});
      remaining -= take;
    }
    Dispatch(pick_head, need.own, std::move(parts));
    progress = true;
    evaluate(pick);
  }
  return progress;
}

// Phase 3 (in-share preemption).
bool Engine::Phase3(const std::vector<int>& order, std::vector<bool>& blocked) {
  bool progress = false;
  for (int s : order) {
    const Share& sh = shares_[static_cast<size_t>(s)];
    if (!sh.in_share_preemption) continue;
    if (blocked[static_cast<size_t>(s)] || Waiting(s)) continue;
    int h = Head(s);
    if (h == kNone) continue;
    if (LookAt(h)) {
      blocked[static_cast<size_t>(s)] = true;
      continue;
    }
    if (!env_enabled_) continue;  // a DISABLED environment preempts nothing
    const Job& j = jobs_[static_cast<size_t>(h)];
    const std::string& u = j.unit;
    const int64_t n = j.count;
    std::vector<int> candidates;
    for (int i : held_[static_cast<size_t>(s)]) {
      const Job& v = jobs_[static_cast<size_t>(i)];
      if (v.share == s && IsDispatched(v.status) && !v.draining && v.unit == u &&
          v.priority < j.priority) {
        candidates.push_back(static_cast<int>(i));
      }
    }
    std::sort(candidates.begin(), candidates.end(),
              [this](int a, int b) { return VictimBefore(a, b); });
    const int64_t own = Own(s, u);
    const int64_t headroom = Headroom(s, u);
    const int64_t free_j = FreeFor(j);
    const int64_t borrowed = Borrowed(s, u);
    const int64_t limit = Limit(s, u);
    const bool lab = sh.strategy == Strategy::kLendAndBorrow;
    const std::vector<Lender> lenders = LendersFor(s, u);
    auto fits = [&](const std::vector<int>& victims) {
      int64_t v_own = 0, v_n = 0, v_borrowed = 0;
      for (int v : victims) {
        const Job& vj = jobs_[static_cast<size_t>(v)];
        v_own += vj.own;
        v_n += vj.count;
        v_borrowed += BorrowedOf(vj);
      }
      const int64_t own2 = own - v_own;
      const int64_t h2 = headroom + v_own;
      const int64_t free2 = free_j + v_n;
      const int64_t borrowed2 = borrowed - v_borrowed;
      if (own2 + n <= limit && h2 >= n && free2 >= n) return true;
      if (!lab) return false;
      // Each lender's idle as it will be once the victims drained: its
      // headroom grows by what they drew from it (0 still for a lender whose
      // head holds a reservation on u).
      int64_t idle2 = 0;
      for (const Lender& l : lenders) {
        int64_t drawn = 0;
        for (int v : victims) drawn += DrawnFrom(jobs_[static_cast<size_t>(v)], l.name);
        idle2 += IdleAfterReturn(l.name, s, u, drawn);
      }
      const int64_t a = std::max<int64_t>(0, std::min(n, h2));
      const int64_t b = n - a;
      return free2 >= n && WithinBorrowCap(s, u, borrowed2 + b) && idle2 >= b;
    };
    // Never preempt when the head already fits without victims (spec §4:
    // "never when free or idle lendable capacity already suffices"; e.g. the
    // head became the head in this round after phase 1 looked at its share).
    if (fits({})) continue;
    std::vector<int> victims = ChooseSet(candidates, fits);
    if (victims.empty()) continue;
    Preempt(victims, h, PreemptionType::kInShare);
    progress = true;
  }
  return progress;
}

bool Engine::VictimBefore(int a, int b) const {
  const Job& x = jobs_[static_cast<size_t>(a)];
  const Job& y = jobs_[static_cast<size_t>(b)];
  const int64_t bx = BorrowedOf(x);
  const int64_t by = BorrowedOf(y);
  if (sc_.knobs.victim_order == VictimOrder::kMostBorrowedFirst) {
    if (bx != by) return bx > by;
    if (x.priority != y.priority) return x.priority < y.priority;
    if (x.dispatched_at != y.dispatched_at) return x.dispatched_at > y.dispatched_at;
    return x.name < y.name;
  }
  if (x.priority != y.priority) return x.priority < y.priority;
  if (x.dispatched_at != y.dispatched_at) return x.dispatched_at > y.dispatched_at;
  if (bx != by) return bx > by;
  return x.name < y.name;
}

// §6 choosing the set: mark in candidate order until the fit test holds, then
// unmark from the second-to-last back to the first each one not needed.
std::vector<int> Engine::ChooseSet(const std::vector<int>& candidates,
                                   const std::function<bool(const std::vector<int>&)>& fits) const {
  std::vector<int> marked;
  bool found = false;
  for (int c : candidates) {
    marked.push_back(c);
    if (fits(marked)) {
      found = true;
      break;
    }
  }
  if (!found) return {};
  for (size_t i = marked.size() - 1; i-- > 0;) {
    std::vector<int> without = marked;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    if (fits(without)) marked = std::move(without);
  }
  return marked;
}

// Cross-share reclaim (§6) for head `ji` with Own + n <= L.
bool Engine::TryCrossShareReclaim(int ji) {
  if (!env_enabled_) return false;  // a DISABLED environment preempts nothing
  const Job& j = jobs_[static_cast<size_t>(ji)];
  const int s = j.share;
  const std::string& u = j.unit;
  const std::string& name = shares_[static_cast<size_t>(s)].name;
  std::vector<int> group_a, group_b;
  for (const std::vector<int>& share_held : held_) {
    for (int i : share_held) {
      const Job& v = jobs_[static_cast<size_t>(i)];
      if (v.share == s || !IsDispatched(v.status) || v.draining || v.unit != u) continue;
      if (DrawnFrom(v, name) > 0) {
        group_a.push_back(static_cast<int>(i));
      } else if (BorrowedOf(v) > 0 || Own(v.share, u) > Limit(v.share, u)) {
        group_b.push_back(static_cast<int>(i));
      }
    }
  }
  auto by_victim_order = [this](int a, int b) { return VictimBefore(a, b); };
  std::sort(group_a.begin(), group_a.end(), by_victim_order);
  std::sort(group_b.begin(), group_b.end(), by_victim_order);
  std::vector<int> candidates = group_a;
  candidates.insert(candidates.end(), group_b.begin(), group_b.end());
  const int64_t n = j.count;
  const int64_t headroom = Headroom(s, u);
  const int64_t free_j = FreeFor(j);
  auto fits = [&](const std::vector<int>& victims) {
    int64_t from_s = 0, v_n = 0;
    for (int v : victims) {
      from_s += DrawnFrom(jobs_[static_cast<size_t>(v)], name);
      v_n += jobs_[static_cast<size_t>(v)].count;
    }
    return headroom + from_s >= n && free_j + v_n >= n;
  };
  std::vector<int> victims = ChooseSet(candidates, fits);
  if (victims.empty()) return false;
  Preempt(victims, ji, PreemptionType::kCrossShare);
  return true;
}

void Engine::Preempt(const std::vector<int>& victims, int ji, PreemptionType type) {
  const std::string_view in_progress = type == PreemptionType::kInShare
                                           ? reasons::kInShareInProgress
                                           : reasons::kCrossShareInProgress;
  int64_t v_n = 0;
  for (int v : victims) {
    Job& vj = jobs_[static_cast<size_t>(v)];
    vj.draining = true;
    vj.drain_type = type;
    vj.drain_for = ji;
    if (type == PreemptionType::kInShare) vj.in_share_victim_of = ji;
    ++vj.epoch;  // freeze: cancel its pending STARTING / RUNNING / attempt end
    v_n += vj.count;
    JobRecord rec = BaseRecord(vj);
    rec.preemption = type;
    rec.preempted_for = jobs_[static_cast<size_t>(ji)].name;
    rec.preempted_for_slot = static_cast<int32_t>(ji);
    // Checkpoints (§6): a RUNNING victim keeps its run up to its last
    // checkpoint; the next attempt runs the rest.
    if (vj.status == JobStatus::kRunning && vj.checkpoint_interval) {
      const SimTime interval = *vj.checkpoint_interval;
      rec.checkpointed_ms = (now_ - vj.running_since) / interval * interval;
      vj.run_time -= rec.checkpointed_ms;
    }
    Commit(vj, vj.status, in_progress, rec);
    Schedule(now_ + LatencyOf(sc_.knobs, FindTypeLatencies(sc_.knobs.latencies, vj.unit), LatencyKind::kDrain, v, now_),
             InternalEvent{EventKind::kDrainEnd, v, vj.epoch});
    if (cycle_preemptions_ > 0 && ++preempted_since_progress_[v] == cycle_preemptions_ && stats_.stopped.empty()) {
      stats_.stopped = PreemptionCycleMessage(now_, vj.name, shares_[static_cast<size_t>(vj.share)].name,
                                              cycle_preemptions_);
    }
  }
  NoteHeld(ji);
  Job& j = jobs_[static_cast<size_t>(ji)];
  j.has_reservation = true;
  j.hold = std::max<int64_t>(0, j.count - v_n);
}

}  // namespace qs::reference_internal
