// File: engine/fast/visit_order.h
//
// The order in which a pass round visits the shares
// (simulation.shareOrder, docs/semantics.md "Share order"):
//  * DECLARATION: as the shares were created;
//  * ROUND_ROBIN: declaration order rotated by the round number;
//  * UNDER_LIMIT_FIRST: by r(s) = max_u (own + borrowed) / limit as an exact
//    fraction (infinite when a type with limit 0 is used), then the older
//    head (Job::seq follows (createdAt, submission)), shares with a head
//    first, then the share name.
//
// UNDER_LIMIT_FIRST keeps each share's sort key between rounds and
// recomputes only those of shares marked since (MarkUse: its use or limits
// changed; MarkHead: its head changed) that the round may visit (those with
// a head), then insertion-sorts from the last sorted order, which is linear
// for a nearly sorted order. The keys of the shares visited are a strict
// total order (name ranks are unique, and so are their heads), so their
// order does not depend on the order the sort starts from, nor on where the
// stale keys of the others fall. Most rounds visit one or two shares (the
// others are settled or have no head): then ForEach picks the next one by
// key among those it would visit, and nothing is sorted.
//
// Thread-compatible.
#ifndef QS_ENGINE_FAST_VISIT_ORDER_H_
#define QS_ENGINE_FAST_VISIT_ORDER_H_

#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

#include "engine/fast/state.h"

namespace qs::engine_internal {

// r(s) = max_u (own + borrowed) / limit of share s as an exact fraction;
// {1, 0} is infinite (use on a type whose limit is 0), the only ratio with
// den 0. UNDER_LIMIT_FIRST sorts by it, and the snapshot reads it as the
// share's usage.
struct UseRatio {
  int64_t num = 0, den = 1;
};
UseRatio ShareUseRatio(const FastState& st, int32_t s);
// Negative, zero or positive as a is below, equal to or above b, exactly,
// by cross-multiplication (counts and limits are int32, so the products
// fit). Infinite needs no case of its own: against a finite n/d (d > 0) it
// gives 1 * d > n * 0, so it is above every finite ratio, and against
// itself 1 * 0 == 1 * 0.
inline int UseRatioCompare(const UseRatio& a, const UseRatio& b) {
  const int64_t l = a.num * b.den, r = b.num * a.den;
  return (l > r) - (l < r);
}
inline bool UseRatioLess(const UseRatio& a, const UseRatio& b) { return UseRatioCompare(a, b) < 0; }

class VisitOrder {
 public:
  // Share s's use/limit ratio and sort key must be recomputed.
  void MarkUse(int32_t s) {
    ratio_stale_ |= uint64_t{1} << s;
    dirty_ |= uint64_t{1} << s;
  }
  // Share s's head changed (its key, not its ratio).
  void MarkHead(int32_t s) { dirty_ |= uint64_t{1} << s; }
  // Every key (a new share: name ranks changed).
  void MarkAll() { dirty_ = ~uint64_t{0}; }

  // Starts a round (advancing the round number): recomputes the keys of the
  // shares marked since that are in `may_visit`, the shares this round's
  // visits can reach (those with a head: a pass queues no job). The keys of
  // the others stay marked until a round may visit them; meanwhile they sort
  // somewhere, which does not change the order among the shares visited.
  // `likely` holds the shares the round will probably visit: with
  // UNDER_LIMIT_FIRST and at most kSelectShares of them, the round picks
  // them by key as it goes (ForEach) instead of sorting all.
  void StartRound(const FastState& st, uint64_t likely, uint64_t may_visit);
  // Calls visit(s) for each share, in this round's order, whose bit is set
  // in active() at its turn. active() is read again after every visit: a
  // share a visit makes active is visited at its own turn if that is still
  // to come, and not if it has passed. The same visits, in the same order,
  // as walking the whole order and skipping the shares whose bit is clear.
  template <typename Active, typename Visit>
  void ForEach(const Active& active, const Visit& visit) const;
  // A round that did not run still advances ROUND_ROBIN's rotation.
  void SkipRound() { ++round_; }

  // At most this many likely shares: ForEach picks by key (O(active) per
  // visit) instead of a sort of all shares.
  static constexpr int kSelectShares = 4;

 private:
  // A key never computed is still a valid one (a share not yet visited
  // sorts among the others by a consistent order).
  struct Key {
    UseRatio ratio;  // ShareUseRatio, recomputed when marked stale (MarkUse)
    int32_t head = std::numeric_limits<int32_t>::max();  // Job::seq of the head, INT32_MAX if none
    int32_t name_rank = 0;
  };
  // UNDER_LIMIT_FIRST's order: a strict total order on the shares.
  bool Less(int32_t a, int32_t b) const;

  std::vector<int32_t> order_;
  std::vector<Key> keys_;  // by share; a key's ratio is valid unless ratio_stale_
  uint64_t round_ = 0;
  uint64_t dirty_ = ~uint64_t{0};
  uint64_t ratio_stale_ = ~uint64_t{0};
  bool pick_ = false;     // this round: ForEach picks by key, order_ is not sorted
  bool unsorted_ = true;  // keys changed since order_ was last sorted
};

template <typename Active, typename Visit>
void VisitOrder::ForEach(const Active& active, const Visit& visit) const {
  if (!pick_) {
    for (int32_t s : order_) {
      if ((active() >> s) & 1) visit(s);
    }
    return;
  }
  uint64_t passed = 0;  // visited, or their turn is over
  int32_t last = -1;
  while (true) {
    int32_t best = -1;
    for (uint64_t m = active() & ~passed; m != 0; m &= m - 1) {
      const int32_t s = std::countr_zero(m);
      if (last >= 0 && Less(s, last)) {
        passed |= uint64_t{1} << s;  // its turn came before the last visit
        continue;
      }
      if (best < 0 || Less(s, best)) best = s;
    }
    if (best < 0) return;
    passed |= uint64_t{1} << best;
    last = best;
    visit(best);
  }
}

}  // namespace qs::engine_internal

#endif  // QS_ENGINE_FAST_VISIT_ORDER_H_
