// The reference engine's invariant checks: see reference_engine.cc.
#include "engine/reference/reference_engine.h"

namespace qs::reference_internal {

// ============================================================== invariants
// A capped quantity: `excess` over its cap must be <= 0, except for the
// excess that existed right after a configuration change, which may only
// shrink afterwards.
template <typename What>
void Engine::CheckCapped(AllowanceKey key, int64_t excess, bool reset, const What& what) {
  int64_t& allowed = allowance_[std::move(key)];
  if (reset) {
    allowed = std::max<int64_t>(0, excess);
    return;
  }
  if (excess > allowed) {
    Violation(absl::StrCat(what(), " (excess ", excess, ", allowed ", allowed, ")"));
    return;
  }
  allowed = std::max<int64_t>(0, excess);
}

void Engine::CheckInvariants(bool reset) {
  if (!check_invariants_) return;
  std::set<std::string> units = AllUnits();
  for (const std::string& u : units) {
    // 1. sum_s Use[s,u] <= SE[u].
    CheckCapped({1, kNone, u}, TotalUse(u) - EnvLimit(u), reset,
                [&] { return absl::StrCat("invariant 1: use of ", u, " exceeds the environment limit"); });
    for (size_t si = 0; si < shares_.size(); ++si) {
      const int s = static_cast<int>(si);
      const Share& sh = shares_[si];
      // 2. Use <= L + B; RESERVE / LEND never above L.
      // Checked as its two parts (own <= L, borrowed <= B), so that excess
      // left by a configuration change may only drain.
      CheckCapped({2, s, u}, Own(s, u) - Limit(s, u), reset,
                  [&] { return absl::StrCat("invariant 2: share ", sh.name, " holds more own ", u, " than its limit"); });
      if (!BorrowUnlimited(s)) {
        CheckCapped({3, s, u}, Borrowed(s, u) - BorrowCap(s, u), reset,
                    [&] { return absl::StrCat("invariant 2: share ", sh.name, " borrows more ", u, " than its cap"); });
      }
      // 3. A share lends only from its idle own capacity; RESERVE lends nothing.
      int64_t lent = Lent(sh.name, u);
      int64_t idle_own =
          sh.strategy == Strategy::kReserve ? 0 : std::max<int64_t>(0, Limit(s, u) - Own(s, u));
      CheckCapped({4, s, u}, lent - idle_own, reset,
                  [&] { return absl::StrCat("invariant 3: share ", sh.name, " lends too much ", u); });
    }
    int64_t unassigned_lent = Lent(kUnassignedLenderName, u);
    int64_t unassigned_cap =
        UnassignedLendable() ? std::max<int64_t>(0, EnvLimit(u) - SumLimits(u)) : 0;
    CheckCapped({5, kNone, u},
                unassigned_lent - unassigned_cap, reset,
                [&] { return absl::StrCat("invariant 3: unassigned capacity over-lent for ", u); });
  }
  if (reset) return;
  // 4. Conservation and consistency of every job.
  if (static_cast<int64_t>(jobs_.size()) != stats_.jobs_submitted) {
    Violation("invariant 4: job count differs from accepted submissions");
  }
  for (const Job& j : jobs_) {
    if ((Holds(j) && !j.in_held) || (!j.parts.empty() && !j.in_borrowers)) {
      Violation(absl::StrCat("reference: job ", std::string(j.name),
                             " holds capacity but is missing from the held or borrowers index"));
    }
    if (j.status == JobStatus::kPending) {
      Violation(absl::StrCat("invariant 4: job ", std::string(j.name), " is PENDING"));
    }
    if (IsDispatched(j.status)) {
      int64_t parts = 0;
      bool bad_part = false;
      for (const Part& p : j.parts) {
        parts += p.quantity;
        bad_part =
            bad_part || p.quantity <= 0 || p.lender == shares_[static_cast<size_t>(j.share)].name;
      }
      if (j.own < 0 || bad_part || j.own + parts != j.count) {
        Violation(absl::StrCat("invariant 4: job ", std::string(j.name), " holds ", j.own, "+",
                               parts, " instances, needs ", j.count));
      }
    } else if (j.own != 0 || !j.parts.empty() || j.draining) {
      Violation(absl::StrCat("invariant 4: job ", std::string(j.name), " holds instances while ",
                             JobStatusName(j.status)));
    }
    if (j.hold < 0 || j.hold > j.count || (!j.has_reservation && j.hold != 0)) {
      Violation(absl::StrCat("invariant 4: job ", std::string(j.name), " has hold ", j.hold));
    }
  }
}

}  // namespace qs::reference_internal
