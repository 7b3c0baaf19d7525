#include "engine/fast/state.h"

#include "engine/model/capacity.h"
#include "engine/util/strings.h"

#include <algorithm>
#include <string>
#include <utility>

namespace qs::engine_internal {

uint32_t ReasonTable::Intern(std::string_view text) {
  auto it = ids_.find(Sv(text));
  if (it != ids_.end()) return it->second;
  // A copy: callers pass static texts, time limit reasons and request
  // fields of a streamed block alike.
  const std::string_view stable = *interned_.insert(std::string(text)).first;
  const uint32_t id = static_cast<uint32_t>(texts_.size());
  texts_.push_back(stable);
  ids_.emplace(Sv(stable), id);
  return id;
}

FastState::FastState(const Scenario& scenario, const Knobs& k, ScenarioIndex idx, bool huge_pages)
    : knobs(k),
      index(std::move(idx)),
      jobs(HugePageAllocator<Job>(huge_pages)),
      rank_job(HugePageAllocator<int32_t>(huge_pages)) {
  // Every capacity unit the scenario can mention.
  unit_names.assign(index.units.begin(), index.units.end());
  for (size_t i = 0; i < unit_names.size(); ++i) unit_ids[Sv(unit_names[i])] = static_cast<int32_t>(i);
  const size_t nu = unit_names.size();
  se.assign(nu, 0);
  total_use.assign(nu, 0);
  total_hold.assign(nu, 0);
  unassigned_lent.assign(nu, 0);
  assigned_limits.assign(nu, 0);
  lendable_limits.assign(nu, 0);
  with_room.assign(nu, 0);
  borrowers_by_unit.resize(nu);
  provisioned.assign(nu, 0);
  capacity_of.assign(nu, nullptr);
  latency_of.assign(nu, nullptr);
  for (size_t u = 0; u < nu; ++u) {
    capacity_of[u] = FindTypeCapacity(knobs.capacity, unit_names[u]);
    latency_of[u] = FindTypeLatencies(knobs.latencies, unit_names[u]);
  }
  se_enabled = scenario.service_environment.state == Toggle::kEnabled;
  for (const CapacityLimit& l : scenario.service_environment.capacity_limits) {
    se[UnitOf(l.capacity_unit)] = l.max_capacity;
  }
  // Name ranks give victim order its final, unique tie-break without string
  // comparisons on the hot path, and requests find jobs by rank.
  rank_job.assign(static_cast<size_t>(index.job_names.num_names()), kNone);
}

int32_t FastState::TakeSlot(int32_t seq) {
  int32_t id;
  if (free_slots.empty()) {
    id = static_cast<int32_t>(jobs.size());
    jobs.emplace_back();
    victim_place.push_back(0);
  } else {
    id = free_slots.back();
    free_slots.pop_back();
    // The epochs go on from the slot's earlier job (past every value it
    // used), so its stale events and beneficiary links never match.
    const Job& old = jobs[id];
    const uint32_t attempt = old.attempt + 1, reason_epoch = old.reason_epoch + 1, res_epoch = old.res_epoch + 1;
    jobs[id] = Job{};
    jobs[id].attempt = attempt;
    jobs[id].reason_epoch = reason_epoch;
    jobs[id].res_epoch = res_epoch;
  }
  jobs[id].seq = seq;
  return id;
}

void FastState::FreeSlot(int32_t id) {
  const Job& j = jobs[id];
  // A later job of the same name may hold the rank already.
  if (rank_job[j.name_rank] == id) {
    rank_job[j.name_rank] = j.status == JobStatus::kSucceeded ? kEndedSucceeded : kEndedFailed;
  }
  if (j.preempted_count > 0) recent.erase(id);
  if (!checkpoint_interval.empty()) checkpoint_interval.erase(id);
  if (!in_share_victim_of.empty()) in_share_victim_of.erase(id);
  if (!capacity_streak.empty()) capacity_streak.erase(id);
  free_slots.push_back(id);
}

int32_t FastState::UnitOf(std::string_view name) const {
  auto it = unit_ids.find(Sv(name));
  return it == unit_ids.end() ? kNone : it->second;
}

std::string_view FastState::NeverFitsReason(int32_t s, const Job& j) const {
  const Share& sh = shares[s];
  const int32_t u = j.unit;
  if (u == kNone || j.n > se[u]) return reasons::kSeMaxResource;
  const int64_t l = sh.limit[u];
  if (sh.strategy != Strategy::kLendAndBorrow) {
    return j.n > l ? reasons::kQuotaLimitExceeded : std::string_view();
  }
  const int64_t b = BorrowCap(sh, u);
  if (b != kUnlimited && j.n > l + b) return reasons::kQuotaAndBorrowLimitExceeded;
  if (j.n > l) {
    // The other shares' lendable limits (sums kept by SumLimits()).
    int64_t lendable = lendable_limits[u] - (sh.strategy != Strategy::kReserve ? l : 0);
    if (knobs.unassigned_capacity == UnassignedCapacity::kLendable) {
      lendable += std::max<int64_t>(0, se[u] - assigned_limits[u]);
    }
    if (j.n - l > lendable) return reasons::kBorrowExceedsConfigured;
  }
  return {};
}

void FastState::SumLimits() {
  ++limits_epoch;
  assigned_limits.assign(unit_names.size(), 0);
  lendable_limits.assign(unit_names.size(), 0);
  for (const Share& sh : shares) {
    for (int32_t u = 0; u < NumUnits(); ++u) {
      assigned_limits[u] += sh.limit[u];
      if (sh.strategy != Strategy::kReserve) lendable_limits[u] += sh.limit[u];
    }
  }
}

}  // namespace qs::engine_internal
