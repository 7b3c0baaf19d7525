#include "engine/fast/decisions.h"

#include <algorithm>
#include <array>
#include <bit>
#include <span>

namespace qs::engine_internal {

int64_t GatherLenders(const FastState& st, int32_t s, int32_t u, std::vector<LenderIdle>& lenders) {
  lenders.clear();
  int64_t total = 0;
  // Shares without headroom on u, or whose strategy keeps it, lend nothing:
  // only the lending shares of with_room[u] are asked.
  for (uint64_t m = st.with_room[u] & st.lending_mask & ~(uint64_t{1} << s); m != 0; m &= m - 1) {
    const int32_t t = std::countr_zero(m);
    const int64_t idle = st.Idle(t, u, 0);
    if (idle > 0) {
      lenders.push_back({idle, t});
      total += idle;
    }
  }
  if (st.knobs.unassigned_capacity == UnassignedCapacity::kLendable) {
    const int64_t idle = st.Idle(kUnassignedLender, u, 0);
    if (idle > 0) {
      lenders.push_back({idle, kUnassignedLender});
      total += idle;
    }
  }
  return total;
}

bool PlanBorrow(const FastState& st, int32_t s, int32_t id, std::vector<LenderIdle>& lenders, BorrowPlan& plan) {
  const Job& j = st.jobs[id];
  const int32_t u = j.unit;
  const int64_t b = st.ToBorrow(s, j);
  if (st.FreeFor(id) < j.n) return false;
  if (st.BorrowCapRefuses(s, u, b)) return false;
  const int64_t total = GatherLenders(st, s, u, lenders);
  if (total < b) return false;
  // Idle capacity (desc), then the name: shares by their name rank, the
  // unassigned lender (at most one entry) by its name against the share's.
  std::sort(lenders.begin(), lenders.end(), [&](const LenderIdle& x, const LenderIdle& y) {
    if (x.idle != y.idle) return x.idle > y.idle;
    if (x.who != kUnassignedLender && y.who != kUnassignedLender) {
      return st.shares[x.who].name_rank < st.shares[y.who].name_rank;
    }
    return st.LenderName(x.who) < st.LenderName(y.who);
  });
  plan.own = j.n - b;
  plan.parts.clear();
  int64_t left = b;
  for (const LenderIdle& l : lenders) {
    if (left == 0) break;
    const int64_t take = std::min(l.idle, left);
    plan.parts.push_back(Part{l.who, take});
    left -= take;
  }
  return true;
}

namespace {

// What a set of marked victims would return: instances, own and borrowed
// ones, and per lender (shares, then unassigned capacity).
// On the stack: a victim choice allocates nothing.
struct Gains {
  int64_t n = 0, own = 0, borrowed = 0;
  std::array<int64_t, kMaxQuotaShares + 1> from{};
  uint64_t lenders = 0;  // shares whose `from` was ever added to
};

void AddGain(const FastState& st, Gains& g, int32_t v, int64_t sign) {
  const Job& j = st.jobs[v];
  g.n += sign * j.n;
  g.own += sign * j.own;
  g.borrowed += sign * j.borrowed_total;
  for (const Part& p : st.PartsOf(j)) {
    g.from[static_cast<size_t>(p.lender == kUnassignedLender ? st.NumShares() : p.lender)] += sign * p.qty;
    if (p.lender != kUnassignedLender) g.lenders |= uint64_t{1} << p.lender;
  }
}

// `next()` yields the candidates in victim order, kNone at the end. They are
// drawn only until the head fits, so a preemption looks at the victims it
// takes, not at every dispatched job (the walk is complete only when even all
// candidates are not enough).
template <typename Next, typename Fits>
bool ChooseVictims(const FastState& st, Next&& next, Gains& g, const Fits& fits, std::vector<int32_t>& marked) {
  marked.clear();
  bool ok = false;
  for (int32_t v = next(); v != kNone; v = next()) {
    AddGain(st, g, v, +1);
    marked.push_back(v);
    if (fits(g)) {
      ok = true;
      break;
    }
  }
  if (!ok) {
    marked.clear();
    return false;
  }
  for (int64_t i = static_cast<int64_t>(marked.size()) - 2; i >= 0 && !QsMutant(4); --i) {
    AddGain(st, g, marked[static_cast<size_t>(i)], -1);
    if (fits(g)) {
      marked.erase(marked.begin() + i);
    } else {
      AddGain(st, g, marked[static_cast<size_t>(i)], +1);
    }
  }
  return true;
}

}  // namespace

bool CrossShareVictims(const FastState& st, int32_t s, int32_t id, std::vector<int32_t>& victims) {
  const Job& j = st.jobs[id];
  const int32_t u = j.unit;
  const int64_t h = st.Headroom(s, u);
  const int64_t free = st.FreeFor(id);
  Gains g;
  auto fits = [&](const Gains& x) { return h + x.from[static_cast<size_t>(s)] >= j.n && free + x.n >= j.n; };
  // Group A: jobs of other shares holding u borrowed from s, in victim order.
  const VictimList& group_a = st.lender_sets[s][u];
  auto a_it = group_a.begin();
  if (!ChooseVictims(st, [&] { return a_it == group_a.end() ? kNone : (a_it++)->id; }, g, fits, victims)) {
    // Walk A then B (one list, so that fill-back sees both groups). Group B,
    // in victim order: other shares' jobs borrowing u, not from s, merged
    // with the non-borrowing jobs on u of other shares over their limit.
    // Each source is a VictimList in victim order; the merge draws lazily.
    struct Source {
      VictimList::const_iterator it, end;
      int32_t share;  // kNone: borrowers_by_unit (skip s's jobs and those drawing from s); else that share's list
    };
    std::array<Source, kMaxQuotaShares + 1> source_array;
    const std::span<Source> sources = [&] {
      size_t n = 0;
      source_array[n++] = {st.borrowers_by_unit[u].begin(), st.borrowers_by_unit[u].end(), kNone};
      for (int32_t t = 0; t < st.NumShares(); ++t) {
        if (t == s || st.shares[t].own[u] <= st.shares[t].limit[u]) continue;
        const VictimList& d = st.shares[t].dispatched[u];
        source_array[n++] = {d.begin(), d.end(), t};
      }
      return std::span<Source>(source_array.data(), n);
    }();
    auto skip = [&](Source& src) {  // to the next job of group B in this source
      for (; src.it != src.end; ++src.it) {
        const Job& v = st.jobs[src.it->id];
        if (src.share != kNone) {
          if (v.borrowed_total == 0) return;
          continue;
        }
        if (v.share == s) continue;
        bool from_s = false;
        for (const Part& p : st.PartsOf(v)) from_s |= p.lender == s;
        if (!from_s) return;
      }
    };
    for (Source& src : sources) skip(src);
    a_it = group_a.begin();  // all of A (not enough alone), then B
    auto next = [&]() -> int32_t {
      if (a_it != group_a.end()) return (a_it++)->id;
      Source* best = nullptr;
      for (Source& src : sources) {
        if (src.it != src.end && (best == nullptr || *src.it < *best->it)) best = &src;
      }
      if (best == nullptr) return kNone;
      const int32_t v = best->it->id;
      ++best->it;
      skip(*best);
      return v;
    };
    bool any_b = false;
    for (const Source& src : sources) any_b |= src.it != src.end;
    if (!any_b) return false;
    Gains g2;
    return ChooseVictims(st, next, g2, fits, victims);
  }
  return true;
}

bool InShareVictims(const FastState& st, int32_t s, int32_t id, std::vector<int32_t>& victims) {
  const Share& sh = st.shares[s];
  const Job& j = st.jobs[id];
  const int32_t u = j.unit;
  // Candidates: the share's dispatched jobs on u of lower priority, in victim
  // order, drawn lazily from the list.
  const VictimList& dispatched = sh.dispatched[u];
  // No candidate (most calls: the head's share runs nothing of lower
  // priority on u), read off the first key where the order is by priority
  // first: no victims, whether or not the head fits already.
  if (const VictimKey* first = dispatched.First();
      first == nullptr || (st.knobs.victim_order == VictimOrder::kPriorityThenNewest &&
                           st.PriorityIn(*first) >= j.priority)) {
    victims.clear();
    return false;
  }
  auto it = dispatched.begin();
  // To the next candidate (`it` stays on it), or to the end.
  auto skip = [&] {
    for (; it != dispatched.end(); ++it) {
      if (st.PriorityIn(*it) < j.priority) return;
      if (st.knobs.victim_order == VictimOrder::kPriorityThenNewest) {
        it = dispatched.end();  // sorted by priority: no lower one follows
        return;
      }
    }
  };
  auto next = [&]() -> int32_t {
    skip();
    return it != dispatched.end() ? (it++)->id : kNone;
  };
  // No candidate in another order: the same.
  skip();
  if (it == dispatched.end()) {
    victims.clear();
    return false;
  }
  const int64_t own = sh.own[u], h = st.Headroom(s, u), free = st.FreeFor(id), borrowed = sh.borrowed[u];
  const int64_t l = sh.limit[u], cap = st.BorrowCap(sh, u);
  const bool can_borrow = sh.strategy == Strategy::kLendAndBorrow;
  auto fits = [&](const Gains& x) {
    const int64_t own2 = own - x.own, h2 = h + x.own, free2 = free + x.n;
    if (free2 < j.n) return false;
    if (own2 + j.n <= l && h2 >= j.n) return true;
    if (!can_borrow) return false;
    const int64_t a = std::max<int64_t>(0, std::min<int64_t>(j.n, h2));
    const int64_t b = j.n - a;
    if (cap != kUnlimited && borrowed - x.borrowed + b > cap) return false;
    // A share with no headroom and nothing coming back, or whose strategy
    // keeps its capacity, lends nothing.
    int64_t idle = 0;
    for (uint64_t m = (st.with_room[u] | x.lenders) & st.lending_mask & ~(uint64_t{1} << s); m != 0; m &= m - 1) {
      const int32_t t = std::countr_zero(m);
      idle += st.Idle(t, u, x.from[static_cast<size_t>(t)]);
    }
    if (st.knobs.unassigned_capacity == UnassignedCapacity::kLendable) {
      idle += st.Idle(kUnassignedLender, u, x.from[static_cast<size_t>(st.NumShares())]);
    }
    return idle >= b;
  };
  Gains g;
  // Capacity freed by a reservation dropped earlier in this round: the head
  // starts in the next round without preempting anyone.
  if (fits(g)) {
    victims.clear();
    return false;
  }
  return ChooseVictims(st, next, g, fits, victims);
}

}  // namespace qs::engine_internal
