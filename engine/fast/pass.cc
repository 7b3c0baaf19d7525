// The scheduling pass of the fast engine (docs/semantics.md §4-7): rounds
// of phase 1 (dispatch or reclaim within the share's own limit), phase 2
// (borrow, oldest head first) and phase 3 (in-share preemption), in the
// visit order, until a round makes no progress. The decisions come from
// engine/fast/decisions.h; the changes they call for from effects.cc.
#include <algorithm>
#include <bit>
#include <functional>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/fast/engine.h"
#include "engine/util/strings.h"

namespace qs::engine_internal {

void Engine::RunPass() {
  ++stats_.passes;
  if (!st_.se_enabled) return;
  for (uint64_t m = settling_.with_res; m != 0; m &= m - 1) {
    const int32_t s = std::countr_zero(m);
    const int32_t r = st_.shares[s].res_job;
    if (r != kNone && (st_.jobs[r].status != JobStatus::kRunnable || st_.Head(s) != r)) DropReservation(r);
  }
  blocked_ = 0;
  while (true) {
    if (settling_.AllSettled()) {
      // Every share is settled or has no head: the round would do nothing.
      order_.SkipRound();
      break;
    }
    ++stats_.pass_rounds;
    bool progress = false;
    round_dropped_ = false;
    // The masks skip shares each phase would return from at once (no head;
    // blocked; settled; not LEND_AND_BORROW; in-share preemption off), read
    // at each share's turn.
    auto phase1 = [this] { return settling_.with_head & ~blocked_ & settling_.Unsettled(); };
    auto phase3 = [this] { return settling_.with_head & settling_.in_share_mask & ~blocked_ & settling_.Unsettled(); };
    order_.StartRound(st_, phase1(), settling_.with_head);
    order_.ForEach(phase1, [&](int32_t s) { progress |= Phase1(s); });
    progress |= Phase2();
    order_.ForEach(phase3, [&](int32_t s) { progress |= Phase3(s); });
    // A share not unsettled since its last look in phase 1 did nothing in
    // phases 1-3 on what that look read (anything it did would have
    // unsettled it): settled until that changes.
    settling_.unsettled &= ~settling_.fresh;
    for (uint64_t m = settling_.fresh; m != 0; m &= m - 1) {
      const int32_t s = std::countr_zero(m);
      if (IsSelfBound(st_, s)) settling_.self_bound |= uint64_t{1} << s;
    }
    settling_.fresh = 0;
    if (!progress && !round_dropped_) break;
  }
}

bool Engine::LookAgain(int32_t s, int32_t id) {
  Job& j = st_.jobs[id];
  std::string_view never = st_.NeverFitsReason(s, j);
  if (!never.empty()) {
    if (st_.reasons.Text(j.reason) != never) SetReason(id, never);
    DropReservation(id);
    return false;
  }
  if (reasons::IsMisconfiguration(st_.reasons.Text(j.reason))) SetReason(id, "");
  Share& sh = st_.shares[s];
  sh.fits_seq = j.seq;
  sh.fits_epoch = st_.limits_epoch;
  sh.fits_reason = j.reason;
  return true;
}

bool Engine::Phase1(int32_t s) {
  if (Blocked(s) || settling_.Settled(s)) return false;
  bool progress = false;
  while (true) {
    // Fresh as of this look: a dispatch unsettles the share (its head
    // changed), and the look at the next head marks it again, so that a
    // share whose last look found nothing new settles in this round
    // instead of being looked at once more in the next.
    settling_.fresh |= uint64_t{1} << s;
    const int32_t id = st_.Head(s);
    if (id == kNone) return progress;
    if (!LookAt(s, id)) {
      if (QsMutant(7)) {
        progress |= Backfill(s, id);
        return progress;
      }
      blocked_ |= uint64_t{1} << s;
      if (st_.knobs.backfill) progress |= Backfill(s, id);
      return progress;
    }
    const Job& j = st_.jobs[id];
    const Share& sh = st_.shares[s];
    const int32_t u = j.unit;
    if (sh.own[u] + j.n <= sh.limit[u]) {
      if (st_.Headroom(s, u) >= j.n && st_.FreeFor(id) >= j.n) {
        Dispatch(id, j.n, {});
        progress = true;
        continue;
      }
      if (j.pending_victims > 0) return progress;  // waiting
      if (TryReclaim(s, id)) return true;
      // Short environment (docs/semantics.md §4 phase 1): a reservation that
      // cannot cover the head even with every victim drained is given up.
      if (st_.FreeFor(id) < j.n) DropReservation(id);  // a no-op without one
    }
    if (st_.knobs.backfill) progress |= Backfill(s, id);
    return progress;
  }
}

// Backfill behind `head`, the head phase 1 stopped at (§4 phase 1).
bool Engine::Backfill(int32_t s, int32_t head) {
  // A head holding a reservation counts on the share's own headroom too.
  if (const Job& h = st_.jobs[head]; h.hold > 0 || h.pending_victims > 0) return false;
  std::vector<int32_t>& later = backfill_scratch_;  // Dispatch and LookAt never backfill
  later.clear();
  const int32_t head_seq = st_.jobs[head].seq;
  for (const QueueKey& k : st_.shares[s].queue) {
    if (k.id == head) continue;
    // A job preempted in-share for the head is not given its capacity back
    // while the head waits (a preemption undone at once, for ever).
    if (!st_.in_share_victim_of.empty()) {
      if (auto it = st_.in_share_victim_of.find(k.id); it != st_.in_share_victim_of.end() && it->second == head_seq) {
        continue;
      }
    }
    later.push_back(k.id);
  }
  bool progress = false;
  for (int32_t id : later) {
    if (!LookAt(s, id)) continue;
    const Job& j = st_.jobs[id];
    const Share& sh = st_.shares[s];
    if (sh.own[j.unit] + j.n <= sh.limit[j.unit] && st_.Headroom(s, j.unit) >= j.n && st_.FreeFor(id) >= j.n) {
      Dispatch(id, j.n, {});
      progress = true;
    }
  }
  return progress;
}

// A head found never-fitting in phase 2 or 3 blocks its share for the rest
// of the pass without the backfill phase 1 would have run behind it. The
// next pass does run that backfill (it may set later jobs' reasons or
// dispatch them), so that pass must not be skipped as "nothing changed"
// (found by the differential test, seed 9157 of 10,000).
void Engine::BlockOutsidePhase1(int32_t s) {
  blocked_ |= uint64_t{1} << s;
  if (st_.knobs.backfill) dirty_ = true;
}

bool Engine::Phase2Eligible(int32_t s) {
  const Share& sh = st_.shares[s];
  if (sh.strategy != Strategy::kLendAndBorrow || Blocked(s) || Waiting(s)) return false;
  const int32_t id = st_.Head(s);
  if (id == kNone) return false;
  if (!LookAt(s, id)) {
    BlockOutsidePhase1(s);
    return false;
  }
  return st_.Headroom(s, st_.jobs[id].unit) < st_.jobs[id].n;
}

bool Engine::Phase2() {
  // Every borrower with a head settled: the loop below would only read their
  // eligibility bits and skip each at its turn (only a borrow unsettles).
  if (settling_.enabled && (settling_.with_head & settling_.borrowers_mask & settling_.unsettled) == 0) return false;
  // The eligible heads are taken oldest (createdAt, submission) first, by
  // keys Job::seq << 8 | share (integer compares: a tuple's lexicographic
  // compares were half of this function on the stress profile). A share
  // is skipped if it is settled when its turn comes, i.e. if the borrow
  // would read what it already failed on.
  //
  // The heads of shares unsettled when gathered go into a list taken least
  // key first. Those of settled shares are parked (most heads of the
  // stress profile, where they made two thirds of the list's work for
  // nothing): a parked share takes its turn only if a borrow unsettled it
  // meanwhile and its key is above every key taken so far. That is the
  // order of one list of all of them: a key below one already taken would
  // have been taken before it, settled, and skipped.
  std::vector<uint64_t>& heads = phase2_heads_;
  heads.clear();
  phase2_head_of_.resize(static_cast<size_t>(st_.NumShares()));
  uint64_t parked = 0;
  auto key_of = [&](int32_t s) {
    return static_cast<uint64_t>(static_cast<uint32_t>(st_.shares[s].head_seq)) << 8 | static_cast<uint64_t>(s);
  };
  auto push = [&](int32_t s) {
    phase2_head_of_[static_cast<size_t>(s)] = st_.Head(s);
    heads.push_back(key_of(s));
  };
  // The keys are unique, so the order of the gather does not matter: the
  // shares that can borrow and have a head are taken by their bits, each
  // judged settled or not at its turn (a judgment before it may unsettle
  // it: LookAt can drop a reservation). The settled ones met before the
  // next unsettled one are parked at once, by their bits: a settled share's
  // eligibility is what it was when it settled (it was judged in that
  // round, on what it still reads). Their keys are read when their turn
  // may come (below): until then their heads do not change, as only the
  // queue of the share a borrow is tried for changes in this phase.
  for (uint64_t todo = settling_.with_head & settling_.borrowers_mask; todo != 0;) {
    const uint64_t next = todo & settling_.Unsettled();
    const uint64_t before = next == 0 ? ~uint64_t{0} : (next & -next) - 1;  // settled, at their turn
    parked |= todo & before & settling_.eligible2;
    todo &= ~before;
    if (next == 0) break;
    const int32_t s = std::countr_zero(next);
    const uint64_t bit = uint64_t{1} << s;
    todo &= ~bit;
    const bool eligible = Phase2Eligible(s);
    settling_.eligible2 = eligible ? settling_.eligible2 | bit : settling_.eligible2 & ~bit;
    if (eligible) push(s);
  }
  bool progress = false;
  int64_t taken = -1;  // the highest key taken so far
  while (true) {
    // The oldest parked share unsettled since whose turn has not come.
    int32_t p = kNone;
    uint64_t p_key = 0;
    for (uint64_t m = parked & settling_.Unsettled(); m != 0; m &= m - 1) {
      const int32_t t = std::countr_zero(m);
      const uint64_t k = key_of(t);
      if (static_cast<int64_t>(k) > taken && (p == kNone || k < p_key)) {
        p = t;
        p_key = k;
      }
    }
    // The least gathered key: a scan, as the list holds at most one key a
    // share, and seldom more than a few (a heap's pushes and pops cost
    // more there).
    size_t least = 0;
    for (size_t i = 1; i < heads.size(); ++i) least = heads[i] < heads[least] ? i : least;
    int32_t s;
    if (p != kNone && (heads.empty() || p_key < heads[least])) {
      s = p;
      parked &= ~(uint64_t{1} << p);
      phase2_head_of_[static_cast<size_t>(p)] = st_.Head(p);
      taken = std::max(taken, static_cast<int64_t>(p_key));
    } else if (!heads.empty()) {
      const uint64_t k = heads[least];
      s = static_cast<int32_t>(k & 0xff);
      taken = std::max(taken, static_cast<int64_t>(k));
      heads[least] = heads.back();
      heads.pop_back();
    } else {
      break;
    }
    const int32_t id = phase2_head_of_[static_cast<size_t>(s)];
    if (settling_.Settled(s)) continue;
    if (TryBorrow(s, id)) {
      progress = true;
      if (Phase2Eligible(s)) push(s);
    } else {
      // A failed head holding capacity its victims left (none still
      // draining: it would be waiting) loses the reservation when the
      // environment is short of it even so, and, with entitledCapacity
      // WITHHELD, when it can start only by borrowing: the lenders it
      // counted on may withhold since (docs/semantics.md §4, phase 2).
      const Job& j = st_.jobs[id];
      const Share& sh = st_.shares[s];
      if (st_.FreeFor(id) < j.n ||
          (st_.knobs.entitled_capacity == EntitledCapacity::kWithheld &&
           sh.own[j.unit] + j.n > sh.limit[j.unit])) {
        DropReservation(id);  // a no-op without one
      }
    }
  }
  return progress;
}

bool Engine::TryBorrow(int32_t s, int32_t id) {
  if (!PlanBorrow(st_, s, id, lenders_scratch_, plan_scratch_)) return false;
  Dispatch(id, plan_scratch_.own, plan_scratch_.parts);
  return true;
}

bool Engine::Phase3(int32_t s) {
  const Share& sh = st_.shares[s];
  if (Blocked(s) || sh.in_share != Toggle::kEnabled || settling_.Settled(s) || Waiting(s)) return false;
  const int32_t id = st_.Head(s);
  if (id == kNone) return false;
  if (!LookAt(s, id)) {
    BlockOutsidePhase1(s);
    return false;
  }
  if (!InShareVictims(st_, s, id, victims_scratch_)) return false;
  StartPreemption(id, victims_scratch_, PreemptionType::kInShare);
  return true;
}

bool Engine::TryReclaim(int32_t s, int32_t id) {
  if (!CrossShareVictims(st_, s, id, victims_scratch_)) return false;
  const Job& j = st_.jobs[id];
  if (opt_.check_invariants && st_.Headroom(s, j.unit) >= j.n && st_.FreeFor(id) >= j.n) {
    Violation(absl::StrCat("invariant 6: cross-share preemption for ", Sv(st_.NameOf(j)),
                           " although it fits without"));
  }
  StartPreemption(id, victims_scratch_, PreemptionType::kCrossShare);
  return true;
}

}  // namespace qs::engine_internal
