// Scenario requests on the fast engine: each is validated as AWS would
// (engine/model/validation.h) and applied, or logged as a rejected line.
#include <algorithm>
#include <numeric>
#include <string>
#include <variant>
#include <vector>

#include "engine/fast/engine.h"

namespace qs::engine_internal {

void Engine::Reject(const ScenarioEvent& ev, const absl::Status& status) {
  std::string msg = ClientExceptionMessage(status);
  sink_.OnRejected(RejectedRecord{now_, ActionName(ev.request), msg, ev.path});
  if (summary_ != nullptr) summary_->OnRejected();
}

Engine::JobFactsHolder Engine::FactsOf(const std::optional<std::string>& job_id) const {
  JobFactsHolder h;
  if (!job_id) return h;
  const int32_t rank = st_.index.job_names.Find(*job_id);
  if (rank == JobNames::kNotFound || st_.rank_job[rank] == kNone) return h;
  const int32_t slot = st_.rank_job[rank];
  h.facts.exists = true;
  if (slot == FastState::kEndedSucceeded || slot == FastState::kEndedFailed) {
    // Its record is given back; what AWS says of an ended job is its status.
    h.facts.terminal = true;
    h.facts.status = JobStatusName(slot == FastState::kEndedSucceeded ? JobStatus::kSucceeded : JobStatus::kFailed);
    return h;
  }
  h.id = slot;
  const Job& j = st_.jobs[h.id];
  h.facts.terminal = IsTerminal(j.status);
  h.facts.status = JobStatusName(j.status);
  return h;
}

int32_t Engine::ShareOfArn(const std::optional<std::string>& arn) const {
  if (!arn) return kNone;
  auto it = st_.share_ids.find(std::string(ShareNameFromArn(*arn)));
  return it == st_.share_ids.end() ? kNone : it->second;
}

void Engine::ApplyScenarioEvent(const ScenarioEvent& ev) {
  Progress();
  // Everything but a submission (its RUNNABLE comes as an internal event)
  // and a snapshot may change what the next pass decides.
  if (!std::holds_alternative<SubmitServiceJobRequest>(ev.request) &&
      !std::holds_alternative<GetJobQueueSnapshotRequest>(ev.request)) {
    dirty_ = true;
  }
  std::visit(
      [&](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, SubmitServiceJobRequest>) {
          const int64_t ordinal = r.job_name ? next_submit_++ : kNone;
          ApplySubmit(ev, r, ordinal);
        } else if constexpr (std::is_same_v<T, UpdateServiceJobRequest>) {
          JobFactsHolder h = FactsOf(r.job_id);
          if (absl::Status s = ValidateUpdateServiceJob(r, h.facts); !s.ok()) return Reject(ev, s);
          SetPriority(h.id, static_cast<int32_t>(*r.scheduling_priority));
        } else if constexpr (std::is_same_v<T, TerminateServiceJobRequest>) {
          JobFactsHolder h = FactsOf(r.job_id);
          if (absl::Status s = ValidateTerminateServiceJob(r, h.facts); !s.ok()) return Reject(ev, s);
          Terminate(h.id, *r.reason);
        } else if constexpr (std::is_same_v<T, CreateQuotaShareRequest>) {
          bool exists = r.quota_share_name && st_.share_ids.contains(*r.quota_share_name);
          const int live = static_cast<int>(st_.share_ids.size());
          if (absl::Status s = ValidateCreateQuotaShare(r, sc_.job_queue.name, live, exists); !s.ok()) {
            return Reject(ev, s);
          }
          const bool was_deleted = std::any_of(st_.shares.begin(), st_.shares.end(), [&r](const Share& sh) {
            return sh.deleted && sh.name == *r.quota_share_name;
          });
          if (absl::Status s = CheckShareSlot(*r.quota_share_name, was_deleted, st_.NumShares()); !s.ok()) {
            return Reject(ev, s);
          }
          CreateShare(r);
        } else if constexpr (std::is_same_v<T, UpdateQuotaShareRequest>) {
          const int32_t s = ShareOfArn(r.quota_share_arn);
          if (absl::Status status = ValidateUpdateQuotaShare(r, s != kNone); !status.ok()) return Reject(ev, status);
          UpdateShare(s, r);
        } else if constexpr (std::is_same_v<T, UpdateServiceEnvironmentRequest>) {
          if (absl::Status s = ValidateUpdateServiceEnvironment(r, sc_.service_environment.name); !s.ok()) {
            return Reject(ev, s);
          }
          UpdateEnvironment(r);
        } else if constexpr (std::is_same_v<T, GetJobQueueSnapshotRequest>) {
          if (absl::Status s = ValidateGetJobQueueSnapshot(r, sc_.job_queue.name); !s.ok()) {
            return Reject(ev, s);
          }
          EmitSnapshot();
        } else if constexpr (std::is_same_v<T, DeleteQuotaShareRequest>) {
          const int32_t s = ShareOfArn(r.quota_share_arn);
          const bool enabled = s != kNone && st_.shares[s].state == Toggle::kEnabled;
          if (absl::Status status = ValidateDeleteQuotaShare(r, s != kNone, enabled); !status.ok()) {
            return Reject(ev, status);
          }
          DeleteShare(s);
        } else if constexpr (std::is_same_v<T, UpdateJobQueueRequest>) {
          if (absl::Status s = ValidateUpdateJobQueue(r, sc_.job_queue.name, sc_.scheduling_policy.name,
                                                     CapacityMayStick(st_.knobs.capacity) && !st_.knobs.horizon); !s.ok()) {
            return Reject(ev, s);
          }
          UpdateQueue(r);
        } else if constexpr (std::is_same_v<T, UpdateSchedulingPolicyRequest>) {
          if (absl::Status s = ValidateUpdateSchedulingPolicy(r, sc_.scheduling_policy.name); !s.ok()) {
            return Reject(ev, s);
          }
          // FIFO is the only setting of a quota share policy: nothing changes.
        }
      },
      ev.request);
}

void Engine::ApplySubmit(const ScenarioEvent& ev, const SubmitServiceJobRequest& r, int64_t ordinal) {
  ShareFacts facts;
  facts.queue_enabled = queue_enabled_;
  // Run() applies the event just after source_.Advance(): PassedChecked() says
  // whether its request-only checks ran and passed on the decoding thread,
  // which also looked up its share name's id.
  const bool checked = source_.PassedChecked();
  int32_t s = kNone;
  if (checked && share_names_complete_) {
    const int32_t k = source_.CheckedShareName();
    s = k >= 0 ? share_by_name_[static_cast<size_t>(k)] : kNone;
  } else if (r.quota_share_name) {
    auto it = st_.share_ids.find(*r.quota_share_name);
    if (it != st_.share_ids.end()) s = it->second;
  }
  if (s != kNone) {
    facts.exists = true;
    facts.enabled = st_.shares[s].state == Toggle::kEnabled;
  }
  if (absl::Status status = checked ? ValidateSubmitState(r, sc_.job_queue.name, facts)
                                    : ValidateSubmit(r, sc_.job_queue.name, facts);
      !status.ok()) {
    return Reject(ev, status);
  }
  const int32_t id = st_.TakeSlot(static_cast<int32_t>(stats_.jobs_submitted));
  if (summary_ != nullptr) summary_->Prefetch(id);  // its miss overlaps the record's
  Job& j = st_.jobs[id];
  j.share = s;
  j.unit = checked ? source_.CheckedUnit() : st_.UnitOf(r.instance_type);  // looked up on the decoding task
  // The parsers keep these within int32 and validation within their ranges.
  j.n = static_cast<int32_t>(r.instance_count);
  j.priority = static_cast<int32_t>(r.scheduling_priority.value_or(0));
  // Validation rejects a submission without a name. Ordinals come in order
  // (but for rejected submissions): RankAfter takes the step from the last.
  j.name_rank = ordinal == last_named_.first + 1 ? st_.index.job_names.RankAfter(ordinal, last_named_.second)
                                                 : st_.index.job_names.RankOf(ordinal);
  last_named_ = {ordinal, j.name_rank};
  j.run_time = r.run_time;
  j.outcome = r.outcome;
  j.retry_attempts = static_cast<int8_t>(r.retry_attempts.value_or(1));
  if (r.checkpoint_interval) st_.checkpoint_interval[id] = *r.checkpoint_interval;
  j.attempt_limit_s = static_cast<int32_t>(r.attempt_duration_seconds.value_or(-1));
  j.limit_is_max_runtime = false;
  if (r.max_runtime_seconds && (j.attempt_limit_s < 0 || *r.max_runtime_seconds < j.attempt_limit_s) &&
      !QsMutant(12)) {
    j.attempt_limit_s = static_cast<int32_t>(*r.max_runtime_seconds);
    j.limit_is_max_runtime = true;
  }
  j.preemption_retries = static_cast<int32_t>(r.preemption_retries.value_or(-1));
  st_.rank_job[j.name_rank] = id;
  ++stats_.jobs_submitted;
  checker_.CountSubmitted();
  EmitJob(id, JobStatus::kSubmitted, "");
  Push(now_ + st_.knobs.submit_latency, EventType::kBecomeRunnable, id, j.attempt, 0);
}

void Engine::CreateShare(const CreateQuotaShareRequest& r) {
  const int32_t s = st_.NumShares();
  st_.shares.emplace_back();
  Share& sh = st_.shares.back();
  sh.name = *r.quota_share_name;
  const size_t nu = st_.unit_names.size();
  sh.limit.assign(nu, 0);
  sh.own.assign(nu, 0);
  sh.lent.assign(nu, 0);
  sh.borrowed.assign(nu, 0);
  sh.dispatched.resize(nu);
  for (const CapacityLimit& l : *r.capacity_limits) sh.limit[st_.UnitOf(l.capacity_unit)] = l.max_capacity;
  st_.NoteRoomAll(s);
  sh.strategy = *r.strategy;
  sh.borrow_limit = r.borrow_limit.value_or(-1);
  sh.in_share = *r.in_share_preemption;
  sh.state = r.state.value_or(Toggle::kEnabled);
  st_.SumLimits();
  st_.share_ids[sh.name] = s;
  if (const int32_t k = source_.ShareNameId(sh.name); k >= 0) {
    share_by_name_[static_cast<size_t>(k)] = s;
  } else {
    share_names_complete_ = false;
  }
  // Name ranks for the share order's last tie-break (shares are few).
  std::vector<int32_t> by_name(st_.shares.size());
  std::iota(by_name.begin(), by_name.end(), 0);
  std::sort(by_name.begin(), by_name.end(),
            [this](int32_t a, int32_t b) { return st_.shares[a].name < st_.shares[b].name; });
  for (size_t k = 0; k < by_name.size(); ++k) st_.shares[by_name[k]].name_rank = static_cast<int32_t>(k);
  st_.lender_sets.emplace_back(nu);  // per unit: dispatched jobs that drew from s
  checker_.Resize(st_.NumShares(), st_.NumUnits());
  settling_.Unsettle(~uint64_t{0});
  order_.MarkAll();  // name ranks, and a new share
  StrategyMasks();
}

void Engine::UpdateShare(int32_t s, const UpdateQuotaShareRequest& r) {
  Share& sh = st_.shares[s];
  if (r.capacity_limits) {
    std::fill(sh.limit.begin(), sh.limit.end(), 0);
    for (const CapacityLimit& l : *r.capacity_limits) sh.limit[st_.UnitOf(l.capacity_unit)] = l.max_capacity;
    st_.NoteRoomAll(s);
  }
  if (r.has_resource_sharing) {
    sh.strategy = *r.strategy;
    sh.borrow_limit = r.borrow_limit.value_or(-1);
  }
  if (r.in_share_preemption) sh.in_share = *r.in_share_preemption;
  if (r.state) sh.state = *r.state;
  order_.MarkUse(s);
  StrategyMasks();
  st_.SumLimits();
  checker_.ResetAllowances(st_);
  settling_.Unsettle(~uint64_t{0});
}

// DeleteQuotaShare (docs/semantics.md §7): the share's jobs are terminated
// in submission order; the share stays as an empty slot without limits
// (jobs that borrowed from it keep what they hold), out of every lookup by
// name, and its name is not given to a new share.
void Engine::DeleteShare(int32_t s) {
  std::vector<std::pair<int32_t, int32_t>> mine;  // (seq, slot)
  for (int32_t id = 0; id < static_cast<int32_t>(st_.jobs.size()); ++id) {
    const Job& j = st_.jobs[id];
    if (j.share == s && !IsTerminal(j.status)) mine.emplace_back(j.seq, id);
  }
  std::sort(mine.begin(), mine.end());
  Share& sh = st_.shares[s];
  const std::string reason = DeletedShareReason(sh.name);
  for (const auto& [seq, id] : mine) Terminate(id, reason);
  sh.deleted = true;
  std::fill(sh.limit.begin(), sh.limit.end(), 0);
  st_.NoteRoomAll(s);
  st_.share_ids.erase(sh.name);
  if (const int32_t k = source_.ShareNameId(sh.name); k >= 0) share_by_name_[static_cast<size_t>(k)] = kNone;
  order_.MarkAll();
  StrategyMasks();
  st_.SumLimits();
  checker_.ResetAllowances(st_);
  settling_.Unsettle(~uint64_t{0});
}

// UpdateJobQueue (docs/semantics.md §7).
void Engine::UpdateQueue(const UpdateJobQueueRequest& r) {
  if (r.state) queue_enabled_ = *r.state == Toggle::kEnabled;
  if (r.time_limit_actions) SetTimeLimitActions(*r.time_limit_actions);
}

void Engine::StrategyMasks() {
  settling_.borrowers_mask = settling_.in_share_mask = st_.lending_mask = 0;
  for (int32_t s = 0; s < st_.NumShares(); ++s) {
    if (FastState::StrategyLends(st_.shares[s])) st_.lending_mask |= uint64_t{1} << s;
    if (st_.shares[s].strategy == Strategy::kLendAndBorrow) settling_.borrowers_mask |= uint64_t{1} << s;
    if (st_.shares[s].in_share == Toggle::kEnabled) settling_.in_share_mask |= uint64_t{1} << s;
  }
}

void Engine::UpdateEnvironment(const UpdateServiceEnvironmentRequest& r) {
  if (r.state) st_.se_enabled = *r.state == Toggle::kEnabled;
  if (r.capacity_limits) {
    ++st_.limits_epoch;
    std::vector<int64_t> next(st_.se.size(), 0);
    for (const CapacityLimit& l : *r.capacity_limits) next[st_.UnitOf(l.capacity_unit)] = l.max_capacity;
    for (int32_t u = 0; u < st_.NumUnits(); ++u) {
      if (next[u] != st_.se[u]) {
        st_.se[u] = next[u];
        EmitCapacity(u);
      }
    }
  }
  checker_.ResetAllowances(st_);
  settling_.Unsettle(~uint64_t{0});
}

}  // namespace qs::engine_internal
