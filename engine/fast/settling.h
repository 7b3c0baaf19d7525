// File: engine/fast/settling.h
//
// Settled shares: which shares a pass round may skip.
//
// What phases 1-3 decide for a share's head reads only the head job, the
// configuration and the state of the head's instance type u (use, holds,
// reservations, lending and the candidate trees of every share on u). A
// share whose look in a round did nothing, and whose inputs did not change
// until the round ended, is settled: later rounds and passes skip it until
// one of those inputs changes (UnitChanged(u) for every change on u;
// Unsettle for a new head or a change to the head job; every configuration
// change), since the look would do nothing again (a fruitless look changes
// nothing a look reads; its reason updates are idempotent). Settled and
// changed are bits over shares (at most 64), so a pass after a job ends
// looks at the shares waiting on that job's type, and one after a job joins
// behind a head looks at none.
//
// A settled share is also *self-bound* when its look read nothing of the
// other shares (IsSelfBound): its head is over its own limit (phase 1 does
// nothing), it cannot borrow or its borrow cap alone refuses (phase 2 fails
// before it reads the lenders), it has no in-share preemption or no
// dispatched job of lower priority on u (phase 3 has no candidate), and the
// head holds nothing and waits for no victim. A change on u by another share
// leaves it settled; only a change of its own use, candidates or (if it may
// borrow: its headroom sets how much it must borrow) lending (OwnChanged),
// of its queue's head or of the configuration unsettles it. At 1e6
// generated jobs that saves half of the looks.
//
// Off with `backfill: true` (a backfill reads jobs behind the head) and with
// RunOptions::skip_settled_shares false.
//
// Thread-compatible.
#ifndef QS_ENGINE_FAST_SETTLING_H_
#define QS_ENGINE_FAST_SETTLING_H_

#include <cstdint>
#include <vector>

#include "engine/fast/state.h"

namespace qs::engine_internal {

struct Settling {
  explicit Settling(bool on) : enabled(on) {}

  bool Settled(int32_t s) const { return enabled && ((unsettled >> s) & 1) == 0; }
  // The shares not settled (all when off).
  uint64_t Unsettled() const { return enabled ? unsettled : ~uint64_t{0}; }
  void Unsettle(uint64_t shares) {
    unsettled |= shares;
    fresh &= ~shares;
    self_bound &= ~shares;
  }
  // A change on unit u: shares waiting on u, but not the self-bound ones.
  void UnitChanged(int32_t u) {
    if (u >= 0) Unsettle(unit_heads[u] & ~self_bound);
  }
  // A change of share s's own use, lending or candidates.
  void OwnChanged(int32_t s) { Unsettle(self_bound & (uint64_t{1} << s)); }
  // Whether every share with a head is settled (a round would do nothing).
  bool AllSettled() const { return enabled && (unsettled & with_head) == 0; }

  const bool enabled;
  uint64_t unsettled = ~uint64_t{0};
  uint64_t self_bound = 0;  // settled shares whose look read only their own state
  uint64_t fresh = 0;       // unchanged since its last look in this round's phase 1
  uint64_t with_head = 0;   // shares with a RUNNABLE job
  uint64_t with_res = 0;    // shares with a reservation (Share::res_job)
  uint64_t borrowers_mask = 0, in_share_mask = 0;  // LEND_AND_BORROW; in-share preemption on
  std::vector<uint64_t> unit_heads;  // by unit: shares whose head needs it
  uint64_t eligible2 = 0;            // phase 2 eligibility when last judged (read while settled)
};

// Whether settled share s's fruitless look read only s's own state (see
// above): then only OwnChanged, a head change or a configuration change can
// give its look another outcome.
bool IsSelfBound(const FastState& st, int32_t s);

}  // namespace qs::engine_internal

#endif  // QS_ENGINE_FAST_SETTLING_H_
