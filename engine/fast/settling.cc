#include "engine/fast/settling.h"

namespace qs::engine_internal {

bool IsSelfBound(const FastState& st, int32_t s) {
  const int32_t id = st.Head(s);
  if (id == kNone) return false;
  const Job& j = st.jobs[id];
  const Share& sh = st.shares[s];
  const int32_t u = j.unit;
  if (u == kNone || j.hold != 0 || j.pending_victims != 0 || sh.res_job != kNone) return false;
  // Phase 1 dispatches or reclaims only within the share's own limit.
  if (sh.own[u] + j.n <= sh.limit[u]) return false;
  // Phase 2: the borrow cap check reads only the share (and fails whatever
  // the free capacity it checks first).
  if (sh.strategy == Strategy::kLendAndBorrow && !st.BorrowCapRefuses(s, u, st.ToBorrow(s, j))) return false;
  // Phase 3: no candidate of lower priority (the first is the lowest only
  // in PRIORITY_THEN_NEWEST order).
  if (sh.in_share == Toggle::kEnabled) {
    if (st.knobs.victim_order != VictimOrder::kPriorityThenNewest) return false;
    if (const VictimKey* k = sh.dispatched[u].First(); k != nullptr && st.PriorityIn(*k) < j.priority) return false;
  }
  return true;
}

}  // namespace qs::engine_internal
