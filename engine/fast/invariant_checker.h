// File: engine/fast/invariant_checker.h
//
// The spec's invariants on the fast engine's accounts, apart from the code
// that keeps them:
//   1 use of a type within the environment's limit;
//   2 a share's own use within its limit and its borrowing within its cap;
//   3 lending only idle own capacity (nothing from RESERVE);
//   4 conservation: every job in one state (the per-state counts its
//     transitions kept equal those of the job records), counters equal to
//     the sum of the job records (Recount, with full_invariant_check);
//   5 a reclaim that would let a head within its limit start is started
//     (CheckReclaimFired, with full_invariant_check), and a head that
//     reclaimed starts by preemption + drain + interval (CheckDeadlines);
//   6 (first half, in the engine's TryReclaim) no reclaim for a head that
//     fits without.
// After a configuration change (ResetAllowances) the invariants are judged
// afresh: excess that exists then may drain but never grow, and reclaims
// started under the old configuration are no longer bound to a deadline.
//
// Every check appends its findings, in a fixed order, to `out`; the engine
// counts and reports them (RunStats::violation_messages).
//
// Thread-compatible.
#ifndef QS_ENGINE_FAST_INVARIANT_CHECKER_H_
#define QS_ENGINE_FAST_INVARIANT_CHECKER_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/fast/state.h"

namespace qs::engine_internal {

class InvariantChecker {
 public:
  explicit InvariantChecker(bool full) : full_(full) {}

  // Sizes: after the units are known, and after each new share.
  void Resize(int32_t shares, int32_t units);
  // Bookkeeping the engine reports as it goes: jobs per state, as their
  // transitions move them (Recount compares it with the records).
  void CountSubmitted() { ++status_count_[static_cast<int>(JobStatus::kSubmitted)]; }
  void CountStatus(JobStatus from, JobStatus to) {
    --status_count_[static_cast<int>(from)];
    ++status_count_[static_cast<int>(to)];
  }
  // Share s's counters on u changed: CheckLimits looks at the pair, and at
  // u's environment totals.
  void Touch(int32_t s, int32_t u) {
    touched_shares_[static_cast<size_t>(u)] |= uint64_t{1} << s;
    TouchUnit(u);
  }
  // u's total use or total hold changed: CheckLimits looks at u's totals.
  void TouchUnit(int32_t u) {
    if (!unit_flag_[static_cast<size_t>(u)]) {
      unit_flag_[static_cast<size_t>(u)] = 1;
      touched_units_.push_back(u);
    }
  }
  void AddReclaimDeadline(int32_t job, uint32_t epoch, SimTime deadline) {
    deadlines_.push_back(Deadline{job, epoch, deadline});
  }
  void ResetAllowances(const FastState& st);

  // Invariant 1 on the touched units, 2-3 on the touched pairs (every unit
  // and pair when full). Inline, since the engine calls it after every
  // event and most events touch no counter (a call with nothing touched was
  // about 4% of a steady run's engine thread, out of line).
  void CheckLimits(const FastState& st, std::vector<std::string>& out) {
    if (full_ || !touched_units_.empty()) CheckTouched(st, out);
  }
  // Invariant 4: every counter, and the jobs in each state that is not
  // terminal, recomputed from the job records. (Ended jobs leave no record:
  // their slots are reused.)
  void Recount(const FastState& st, std::vector<std::string>& out);
  // Invariant 5's deadline for heads that reclaimed. Inline: the engine
  // calls it after every pass, and most passes follow no reclaim.
  void CheckDeadlines(const FastState& st, SimTime now, std::vector<std::string>& out) {
    if (!deadlines_.empty()) CheckPendingDeadlines(st, now, out);
  }
  // Invariant 5: no head that fits its limit left without a reclaim that
  // would let it start.
  void CheckReclaimFired(const FastState& st, std::vector<std::string>& out) const;
  // Invariant 4 at the end: no job left dispatched or SUBMITTED.
  void CheckEndOfRun(const FastState& st, std::vector<std::string>& out) const;

 private:
  struct Excess {
    int64_t limit = 0, lend = 0;
  };
  struct Deadline {
    int32_t job;
    uint32_t epoch;
    SimTime deadline;
  };
  static Excess ComputeExcess(const FastState& st, int32_t s, int32_t u) {
    const Share& sh = st.shares[s];
    Excess e;
    // Use <= L + B, checked as its two parts: own instances within the limit
    // and borrowed ones within the borrow cap (a strategy change to LEND with
    // borrowed jobs still running is then excess that may only drain).
    const int64_t cap = st.BorrowCap(sh, u);
    e.limit = std::max<int64_t>(0, sh.own[u] - sh.limit[u]) +
              (cap == kUnlimited ? 0 : std::max<int64_t>(0, sh.borrowed[u] - cap));
    e.lend = sh.strategy == Strategy::kReserve ? sh.lent[u] : std::max<int64_t>(0, sh.own[u] + sh.lent[u] - sh.limit[u]);
    return e;
  }
  // CheckLimits' invariants 1-3 on what was touched (everything when full):
  // CheckUnit and CheckPair, whose findings are written out of line. The
  // units in the order they were touched, then their pairs, unit by unit in
  // that order and by share within a unit.
  void CheckTouched(const FastState& st, std::vector<std::string>& out);
  void CheckPendingDeadlines(const FastState& st, SimTime now, std::vector<std::string>& out);
  void CheckUnit(const FastState& st, int32_t u, std::vector<std::string>& out);
  void CheckPair(const FastState& st, int32_t s, int32_t u, std::vector<std::string>& out);
  [[gnu::cold]] static void ReportUnit(const FastState& st, int32_t u, bool over, std::vector<std::string>& out);
  [[gnu::cold]] static void ReportPair(const FastState& st, int32_t s, int32_t u, bool over_limit, bool over_lent,
                                       std::vector<std::string>& out);

  const bool full_;
  int32_t units_ = 0;
  std::array<int64_t, 8> status_count_{};
  std::vector<int64_t> allow1_;          // per unit
  std::vector<int64_t> allow2_, allow3_;  // [share * units + unit]
  // Changed since the last CheckLimits(): units whose totals or whose
  // shares' counters changed (every Touch() touches its unit), and per unit
  // the shares whose counters on it changed (shares are bits, state.h).
  std::vector<int32_t> touched_units_;
  std::vector<char> unit_flag_;
  std::vector<uint64_t> touched_shares_;  // by unit
  std::vector<Deadline> deadlines_;
  struct RecountScratch {  // Recount()'s counters, [share * units + unit]
    std::vector<int64_t> own, lent, borrowed, use, hold, ulent, prov, queued, candidates;
    std::array<int64_t, 8> in_state{};  // jobs by status
  };
  RecountScratch recount_;
};

}  // namespace qs::engine_internal

#endif  // QS_ENGINE_FAST_INVARIANT_CHECKER_H_
