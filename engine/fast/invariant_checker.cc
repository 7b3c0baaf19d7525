#include "engine/fast/invariant_checker.h"

#include <algorithm>
#include <bit>

#include "absl/strings/str_cat.h"
#include "engine/util/strings.h"

namespace qs::engine_internal {

void InvariantChecker::Resize(int32_t shares, int32_t units) {
  units_ = units;
  const size_t pairs = static_cast<size_t>(shares) * static_cast<size_t>(units);
  allow1_.resize(static_cast<size_t>(units), 0);
  unit_flag_.resize(static_cast<size_t>(units), 0);
  touched_shares_.resize(static_cast<size_t>(units), 0);
  allow2_.resize(pairs, 0);
  allow3_.resize(pairs, 0);
}

void InvariantChecker::ResetAllowances(const FastState& st) {
  deadlines_.clear();
  for (int32_t u = 0; u < st.NumUnits(); ++u) allow1_[u] = std::max<int64_t>(0, st.total_use[u] - st.se[u]);
  for (int32_t s = 0; s < st.NumShares(); ++s) {
    for (int32_t u = 0; u < st.NumUnits(); ++u) {
      const Excess e = ComputeExcess(st, s, u);
      allow2_[static_cast<size_t>(s * units_ + u)] = e.limit;
      allow3_[static_cast<size_t>(s * units_ + u)] = e.lend;
    }
  }
}

// Invariant 1 per unit, and the hold's sign: a unit whose totals did not
// change since the last check cannot have a new violation (the
// environment's limits change only with ResetAllowances(), which sets the
// allowance to the excess), so only touched units are checked, except under
// full_invariant_check.
[[gnu::always_inline]] inline void InvariantChecker::CheckUnit(const FastState& st, int32_t u,
                                                                std::vector<std::string>& out) {
  const int64_t e1 = std::max<int64_t>(0, st.total_use[u] - st.se[u]);
  if (e1 > allow1_[u] || st.total_hold[u] < 0) [[unlikely]] {
    ReportUnit(st, u, e1 > allow1_[u], out);
  }
  allow1_[u] = std::min(allow1_[u], e1);
}

void InvariantChecker::ReportUnit(const FastState& st, int32_t u, bool over, std::vector<std::string>& out) {
  if (over) {
    out.push_back(absl::StrCat("invariant 1: ", Sv(st.unit_names[u]), " in use ", st.total_use[u],
                               " > environment limit ", st.se[u]));
  }
  if (st.total_hold[u] < 0) out.push_back(absl::StrCat("negative hold for ", Sv(st.unit_names[u])));
}

// Invariants 2 and 3 per (share, unit): a pair whose counters did not
// change since the last check cannot have a new violation (its allowance
// already equals its excess), so only touched pairs are checked, except
// under full_invariant_check, which checks every pair.
[[gnu::always_inline]] inline void InvariantChecker::CheckPair(const FastState& st, int32_t s, int32_t u,
                                                                std::vector<std::string>& out) {
  const size_t key = static_cast<size_t>(s * units_ + u);
  const Excess e = ComputeExcess(st, s, u);
  if (e.limit > allow2_[key] || e.lend > allow3_[key]) [[unlikely]] {
    ReportPair(st, s, u, e.limit > allow2_[key], e.lend > allow3_[key], out);
  }
  allow2_[key] = std::min(allow2_[key], e.limit);
  allow3_[key] = std::min(allow3_[key], e.lend);
}

void InvariantChecker::ReportPair(const FastState& st, int32_t s, int32_t u, bool over_limit, bool over_lent,
                                  std::vector<std::string>& out) {
  const Share& sh = st.shares[s];
  if (over_limit) {
    out.push_back(absl::StrCat("invariant 2: share ", sh.name, " uses ", sh.own[u] + sh.borrowed[u], " of ",
                               Sv(st.unit_names[u]), ", over limit plus borrow cap"));
  }
  if (over_lent) {
    out.push_back(absl::StrCat("invariant 3: share ", sh.name, " lends ", sh.lent[u], " of ",
                               Sv(st.unit_names[u]), " beyond its idle own capacity"));
  }
}

void InvariantChecker::CheckTouched(const FastState& st, std::vector<std::string>& out) {
  if (full_) {
    for (int32_t u = 0; u < st.NumUnits(); ++u) CheckUnit(st, u, out);
    for (int32_t s = 0; s < st.NumShares(); ++s) {
      for (int32_t u = 0; u < st.NumUnits(); ++u) CheckPair(st, s, u, out);
    }
  } else if (touched_units_.size() == 1) {
    // Most events change one unit (a dispatch, a release): its loops, once.
    const int32_t u = touched_units_[0];
    CheckUnit(st, u, out);
    for (uint64_t m = touched_shares_[static_cast<size_t>(u)]; m != 0; m &= m - 1) {
      CheckPair(st, std::countr_zero(m), u, out);
    }
    unit_flag_[static_cast<size_t>(u)] = 0;
    touched_shares_[static_cast<size_t>(u)] = 0;
    touched_units_.clear();
    return;
  } else {
    for (int32_t u : touched_units_) CheckUnit(st, u, out);
    for (int32_t u : touched_units_) {
      for (uint64_t m = touched_shares_[static_cast<size_t>(u)]; m != 0; m &= m - 1) {
        CheckPair(st, std::countr_zero(m), u, out);
      }
    }
  }
  for (int32_t u : touched_units_) {
    unit_flag_[static_cast<size_t>(u)] = 0;
    touched_shares_[static_cast<size_t>(u)] = 0;
  }
  touched_units_.clear();
}

void InvariantChecker::Recount(const FastState& st, std::vector<std::string>& out) {
  // Flat scratch arrays, reused across calls: this runs after every event in
  // the fuzzers, where an allocation per call would dominate.
  const size_t nu = st.unit_names.size(), ns = st.shares.size();
  RecountScratch& r = recount_;
  r.own.assign(ns * nu, 0);
  r.lent.assign(ns * nu, 0);
  r.borrowed.assign(ns * nu, 0);
  r.use.assign(nu, 0);
  r.hold.assign(nu, 0);
  r.ulent.assign(nu, 0);
  r.prov.assign(nu, 0);
  r.queued.assign(ns, 0);
  r.candidates.assign(ns * nu, 0);
  r.in_state.fill(0);
  for (const Job& j : st.jobs) {
    ++r.in_state[static_cast<size_t>(j.status)];
    if (IsDispatched(j.status) && !j.draining) {
      // A candidate must be in its share's list (state.h).
      ++r.candidates[j.share * nu + j.unit];
      const VictimKey k = st.KeyOf(st.IdOf(j));
      if (!st.shares[j.share].dispatched[j.unit].contains(k)) {
        out.push_back(absl::StrCat("job ", Sv(st.NameOf(j)), " is missing from its share's victim candidates"));
      }
    }
    if (IsDispatched(j.status)) {
      int64_t sum = j.own;
      r.own[j.share * nu + j.unit] += j.own;
      for (const Part& p : st.PartsOf(j)) {
        sum += p.qty;
        r.borrowed[j.share * nu + j.unit] += p.qty;
        if (p.lender == kUnassignedLender) {
          r.ulent[j.unit] += p.qty;
        } else {
          r.lent[p.lender * nu + j.unit] += p.qty;
        }
      }
      if (sum != j.n) out.push_back(absl::StrCat("invariant 4: job ", Sv(st.NameOf(j)), " holds ", sum, " of ", j.n));
      r.use[j.unit] += j.n;
      if (!j.capacity_doomed) r.prov[j.unit] += j.n;
    } else if (j.own != 0 || j.has_parts || j.capacity_doomed) {
      out.push_back(absl::StrCat("invariant 4: job ", Sv(st.NameOf(j)), " holds capacity while ",
                                 JobStatusName(j.status)));
    }
    if (j.status == JobStatus::kRunnable) {
      ++r.queued[j.share];
      if (j.unit != kNone) r.hold[j.unit] += j.hold;
    } else if (j.hold != 0) {
      out.push_back(absl::StrCat("job ", Sv(st.NameOf(j)), " keeps a hold while ", JobStatusName(j.status)));
    }
  }
  auto same = [nu](const int64_t* counted, const std::vector<int64_t>& kept) {
    return std::equal(kept.begin(), kept.end(), counted, counted + nu);
  };
  for (size_t s = 0; s < ns; ++s) {
    const Share& sh = st.shares[s];
    for (int32_t u = 0; u < st.NumUnits(); ++u) {
      if ((st.Headroom(static_cast<int32_t>(s), u) > 0) != (((st.with_room[u] >> s) & 1) != 0)) {
        out.push_back(absl::StrCat("share ", sh.name, "'s headroom bit on ", Sv(st.unit_names[u]), " is stale"));
      }
    }
    if (FastState::StrategyLends(sh) != (((st.lending_mask >> s) & 1) != 0)) {
      out.push_back(absl::StrCat("share ", sh.name, "'s lending bit is stale"));
    }
    if (static_cast<int64_t>(sh.queue.size()) != r.queued[s]) {
      out.push_back(absl::StrCat("invariant 4: share ", sh.name, " queue holds ", sh.queue.size(), " jobs but ",
                                 r.queued[s], " are RUNNABLE"));
    }
    for (size_t u = 0; u < nu && u < sh.dispatched.size(); ++u) {
      int64_t listed = 0;
      for (const VictimKey& k : sh.dispatched[u]) {
        ++listed;
        if (!st.LiveIn(k, static_cast<int32_t>(s), static_cast<int32_t>(u))) {
          out.push_back(absl::StrCat("share ", sh.name, " lists job slot ", k.id, " as a victim candidate on ",
                                     Sv(st.unit_names[u]), " with a key it does not have"));
        }
      }
      if (listed != r.candidates[s * nu + u]) {
        out.push_back(absl::StrCat("share ", sh.name, " has ", listed, " victim candidates on ",
                                   Sv(st.unit_names[u]), " but ", r.candidates[s * nu + u],
                                   " dispatched, not draining jobs"));
      }
    }
    if (!same(&r.own[s * nu], sh.own) || !same(&r.lent[s * nu], sh.lent) ||
        !same(&r.borrowed[s * nu], sh.borrowed)) {
      out.push_back(absl::StrCat("invariant 4: share ", sh.name, " counters disagree with jobs"));
    }
  }
  // A slot given back keeps its ended job's record until it is taken again.
  for (size_t k = 0; k < r.in_state.size(); ++k) {
    const JobStatus status = static_cast<JobStatus>(k);
    if (IsTerminal(status) || r.in_state[k] == status_count_[k]) continue;
    out.push_back(absl::StrCat("invariant 4: ", r.in_state[k], " job records are ", JobStatusName(status), " but ",
                               status_count_[k], " jobs went there"));
  }
  if (r.use != st.total_use || r.hold != st.total_hold || r.ulent != st.unassigned_lent ||
      r.prov != st.provisioned) {
    out.push_back("invariant 4: environment counters disagree with jobs");
  }
}

void InvariantChecker::CheckPendingDeadlines(const FastState& st, SimTime now, std::vector<std::string>& out) {
  // Invariant 6 (second half) and 5 (timing): a job that triggered a reclaim
  // must start by preemption time + drain + interval while it stays the head.
  size_t keep = 0;
  for (const Deadline& d : deadlines_) {
    const Job& j = st.jobs[d.job];
    const bool pending = j.status == JobStatus::kRunnable && j.res_epoch == d.epoch;
    if (!pending) continue;
    if (now > d.deadline) {
      out.push_back(absl::StrCat("invariant 5: ", Sv(st.NameOf(j)), " reclaimed capacity but did not start by ",
                                 FormatSeconds(d.deadline)));
      continue;
    }
    deadlines_[keep++] = d;
  }
  deadlines_.resize(keep);
}

void InvariantChecker::CheckReclaimFired(const FastState& st, std::vector<std::string>& out) const {
  if (!st.se_enabled) return;
  for (int32_t s = 0; s < st.NumShares(); ++s) {
    const int32_t id = st.Head(s);
    if (id == kNone) continue;
    const Job& j = st.jobs[id];
    if (j.pending_victims > 0 || !st.NeverFitsReason(s, j).empty()) continue;
    const Share& sh = st.shares[s];
    const int32_t u = j.unit;
    if (sh.own[u] + j.n > sh.limit[u]) continue;
    int64_t gain_h = 0, gain_f = 0;
    for (const Job& x : st.jobs) {
      if (!IsDispatched(x.status) || x.draining || x.share == s || x.unit != u) continue;
      const bool eligible = x.borrowed_total > 0 || st.shares[x.share].own[u] > st.shares[x.share].limit[u];
      if (!eligible) continue;
      gain_f += x.n;
      for (const Part& p : st.PartsOf(x)) {
        if (p.lender == s) gain_h += p.qty;
      }
    }
    if (st.Headroom(s, u) + gain_h >= j.n && st.FreeFor(id) + gain_f >= j.n) {
      out.push_back(absl::StrCat("invariant 5: head ", Sv(st.NameOf(j)), " of ", sh.name,
                                 " fits its limit and reclaim is possible, but nothing was started"));
    }
  }
}

void InvariantChecker::CheckEndOfRun(const FastState& st, std::vector<std::string>& out) const {
  if (st.knobs.horizon) return;  // jobs may legitimately be cut off
  for (const Job& j : st.jobs) {
    if (IsDispatched(j.status) || j.status == JobStatus::kSubmitted) {
      out.push_back(absl::StrCat("invariant 4: job ", Sv(st.NameOf(j)), " left ", JobStatusName(j.status),
                                 " with no event pending"));
    }
  }
}

}  // namespace qs::engine_internal
