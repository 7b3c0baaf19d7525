// File: engine/fast/decisions.h
//
// The pass's decisions, kept apart from the effects that apply them: each
// reads the accounts (a const FastState) and answers what should happen,
// changing nothing. The engine's pass (engine/fast/pass.cc) asks, then
// applies the answer (Dispatch, StartPreemption) and emits the records.
//
//  * PlanBorrow: phase 2 for head `id` of LEND_AND_BORROW share s (§5 of
//    docs/semantics.md): the instances it takes of its own headroom and the
//    parts it borrows, lenders by idle capacity (desc) then name; or nothing
//    when free capacity, the borrow cap or the lenders' idle capacity
//    refuse.
//  * CrossShareVictims: the reclaim for head `id` of share s that fits its
//    own limit (§6): group A (other shares' jobs borrowing u from s) in
//    victim order, and only if A is not enough, A then group B (other
//    shares' jobs borrowing u not from s, merged with the jobs of shares
//    over their own limit on u). Victims are drawn lazily from the candidate
//    lists until the head fits, then filled back (the newest marked
//    victims unmarked while the head still fits).
//  * InShareVictims: phase 3 (§7): share s's dispatched jobs on u of lower
//    priority, in victim order, until the head fits (own limit, or with
//    borrowing); none when it fits already (a reservation dropped earlier in
//    the round) or cannot fit even with all.
//
// Thread-compatible (they read only).
#ifndef QS_ENGINE_FAST_DECISIONS_H_
#define QS_ENGINE_FAST_DECISIONS_H_

#include <cstdint>
#include <vector>

#include "engine/fast/state.h"

namespace qs::engine_internal {

struct BorrowPlan {
  int64_t own = 0;          // of the share's own headroom
  std::vector<Part> parts;  // borrowed, per lender
};
struct LenderIdle {
  int64_t idle;
  int32_t who;
};
// The lenders share s may borrow u from (other shares, and the unassigned
// capacity when LENDABLE) with idle capacity, unordered, into `lenders`;
// returns their idle capacity summed (what phase 2 checks the borrow against).
int64_t GatherLenders(const FastState& st, int32_t s, int32_t u, std::vector<LenderIdle>& lenders);
// True and `plan` filled when head `id` of share s can start by borrowing.
// `scratch` is the caller's, kept to save an allocation per call.
bool PlanBorrow(const FastState& st, int32_t s, int32_t id, std::vector<LenderIdle>& scratch, BorrowPlan& plan);

// Both answer into `victims` (the caller's, reused: a choice allocates
// nothing once it has grown): true and the victims in victim order, or false
// and none.
bool CrossShareVictims(const FastState& st, int32_t s, int32_t id, std::vector<int32_t>& victims);
bool InShareVictims(const FastState& st, int32_t s, int32_t id, std::vector<int32_t>& victims);

}  // namespace qs::engine_internal

#endif  // QS_ENGINE_FAST_DECISIONS_H_
