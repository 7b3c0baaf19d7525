#include "engine/fast/visit_order.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace qs::engine_internal {

namespace {

// Whether m has at most k bits set. Not std::popcount, which is a call into
// libgcc (__popcountdi2) in a build for the x86-64 baseline, which has no
// popcnt instruction: this runs once a round.
constexpr bool AtMostBits(uint64_t m, int k) {
  for (int i = 0; i < k && m != 0; ++i) m &= m - 1;
  return m == 0;
}
static_assert(AtMostBits(0, 0) && !AtMostBits(1, 0) && AtMostBits(0b1011, 3) && !AtMostBits(0b1011, 2));

}  // namespace

UseRatio ShareUseRatio(const FastState& st, int32_t s) {
  const Share& sh = st.shares[s];
  UseRatio r;
  for (int32_t u = 0; u < st.NumUnits(); ++u) {
    const int64_t use = sh.own[u] + sh.borrowed[u];
    if (sh.limit[u] == 0) {
      if (use > 0) return UseRatio{1, 0};
      continue;
    }
    if (use * r.den > r.num * sh.limit[u]) r = UseRatio{use, sh.limit[u]};
  }
  return r;
}

bool VisitOrder::Less(int32_t a, int32_t b) const {
  const Key& x = keys_[a];
  const Key& y = keys_[b];
  if (const int c = UseRatioCompare(x.ratio, y.ratio); c != 0) return c < 0;
  // Equal ratios: the older head first, then the share name.
  if (x.head != y.head && !QsMutant(16)) return x.head < y.head;
  return x.name_rank < y.name_rank;
}

void VisitOrder::StartRound(const FastState& st, uint64_t likely, uint64_t may_visit) {
  const int32_t ns = st.NumShares();
  const uint64_t round = round_++;
  pick_ = false;
  // UNDER_LIMIT_FIRST starts from the last sorted order (see the header).
  if (st.knobs.share_order != ShareOrder::kUnderLimitFirst || order_.size() != static_cast<size_t>(ns)) {
    order_.resize(static_cast<size_t>(ns));
    for (int32_t s = 0; s < ns; ++s) order_[s] = s;
  }
  if (ns == 0) return;
  switch (st.knobs.share_order) {
    case ShareOrder::kDeclaration:
      return;
    case ShareOrder::kRoundRobin:
      std::rotate(order_.begin(), order_.begin() + static_cast<int64_t>(round % static_cast<uint64_t>(ns)),
                  order_.end());
      return;
    case ShareOrder::kUnderLimitFirst:
      break;
  }
  // The sort keys are kept between rounds, so that the comparisons are
  // integer only (no name compares, no B-tree lookups).
  keys_.resize(static_cast<size_t>(ns));
  const uint64_t now = dirty_ & may_visit;
  for (uint64_t dirty = now; dirty != 0; dirty &= dirty - 1) {
    const int32_t s = std::countr_zero(dirty);
    if (s >= ns) break;
    const Share& sh = st.shares[s];
    Key& k = keys_[s];
    if ((ratio_stale_ >> s) & 1) {
      ratio_stale_ &= ~(uint64_t{1} << s);
      k.ratio = ShareUseRatio(st, s);
    }
    k.head = st.Head(s) == kNone ? std::numeric_limits<int32_t>::max() : sh.head_seq;  // shares with a head first
    k.name_rank = sh.name_rank;
  }
  const bool changed = now != 0;
  dirty_ &= ~now;
  if (AtMostBits(likely, kSelectShares)) {
    pick_ = true;
    unsorted_ |= changed;
    return;
  }
  // With no key changed since the last sort, the order stands.
  if (!changed && !unsorted_) return;
  unsorted_ = false;
  // Insertion sort: a queue holds at most kMaxQuotaShares (20) shares.
  for (size_t i = 1; i < order_.size(); ++i) {
    const int32_t v = order_[i];
    size_t k = i;
    for (; k > 0 && Less(v, order_[k - 1]); --k) order_[k] = order_[k - 1];
    order_[k] = v;
  }
}

}  // namespace qs::engine_internal
