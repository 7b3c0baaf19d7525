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
// changed; MarkHead: its head changed), then insertion-sorts from the last
// round's order, which is linear for a nearly sorted order. The key is a
// strict total order (name ranks are unique), so the result does not depend
// on the order it starts from.
//
// Thread-compatible.
#ifndef QS_ENGINE_FAST_VISIT_ORDER_H_
#define QS_ENGINE_FAST_VISIT_ORDER_H_

#include <cstdint>
#include <vector>

#include "engine/fast/state.h"

namespace qs::engine_internal {

// r(s) = max_u (own + borrowed) / limit of share s as an exact fraction;
// den 0 is infinite (use on a type whose limit is 0). UNDER_LIMIT_FIRST
// sorts by it, and the snapshot reads it as the share's usage.
struct UseRatio {
  int64_t num = 0, den = 1;
};
UseRatio ShareUseRatio(const FastState& st, int32_t s);
// Strictly less, exactly; infinite only equals infinite.
inline bool UseRatioLess(const UseRatio& a, const UseRatio& b) {
  if (a.den == 0 || b.den == 0) return a.den != 0 && b.den == 0;
  return a.num * b.den < b.num * a.den;
}

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

  // The order for the next round; advances the round number.
  const std::vector<int32_t>& Compute(const FastState& st);
  // A round that did not run still advances ROUND_ROBIN's rotation.
  void SkipRound() { ++round_; }
  const std::vector<int32_t>& order() const { return order_; }

 private:
  struct Key {
    int64_t num, den;  // max_u use/limit; den 0 = infinite
    int32_t head;      // Job::seq of the head, INT32_MAX if none
    int32_t name_rank;
  };
  std::vector<int32_t> order_;
  std::vector<Key> keys_;      // by share
  std::vector<UseRatio> ratios_;  // by share, valid unless ratio_stale_
  uint64_t round_ = 0;
  uint64_t dirty_ = ~uint64_t{0};
  uint64_t ratio_stale_ = ~uint64_t{0};
};

}  // namespace qs::engine_internal

#endif  // QS_ENGINE_FAST_VISIT_ORDER_H_
