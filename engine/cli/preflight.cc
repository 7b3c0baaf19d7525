#include "engine/cli/preflight.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "engine/model/validation.h"

namespace qs {

Preflight::Preflight(const Scenario& head) : head_(head) {
  for (const CapacityLimit& l : head.service_environment.capacity_limits) {
    env_now_[l.capacity_unit] = l.max_capacity;
    env_max_[l.capacity_unit] = std::max(env_max_[l.capacity_unit], l.max_capacity);
  }
}

void Preflight::Add(std::string path, std::string message) {
  ++total_;
  if (findings_.size() < kKept) findings_.push_back({std::move(path), std::move(message)});
}

void Preflight::NoteEnvironment(const ScenarioEvent& ev) {
  const auto* r = std::get_if<UpdateServiceEnvironmentRequest>(&ev.request);
  if (r == nullptr || !r->capacity_limits) return;
  if (!ValidateUpdateServiceEnvironment(*r, head_.service_environment.name).ok()) return;
  for (const CapacityLimit& l : *r->capacity_limits) {
    env_max_[l.capacity_unit] = std::max(env_max_[l.capacity_unit], l.max_capacity);
  }
}

void Preflight::CheckShareUnits(const std::string& path, const std::string& share,
                                const std::vector<CapacityLimit>& limits) {
  for (size_t i = 0; i < limits.size(); ++i) {
    auto it = env_now_.find(limits[i].capacity_unit);
    if (it == env_now_.end() || it->second == 0) {
      Add(absl::StrCat(path, ".capacityLimits[", i, "]"),
          absl::StrCat("quota share ", share, " has a limit for ", limits[i].capacity_unit,
                       ", which the service environment does not have: its jobs of that type never run"));
    }
  }
}

void Preflight::Check(const ScenarioEvent& ev) {
  const std::string& queue = head_.job_queue.name;
  auto rejected = [&](const absl::Status& s) {
    Add(ev.path, absl::StrCat(ActionName(ev.request), " would be rejected: ", ClientExceptionMessage(s)));
  };
  std::visit(
      [&](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, CreateQuotaShareRequest>) {
          const bool exists = r.quota_share_name && shares_.contains(*r.quota_share_name);
          if (absl::Status s = ValidateCreateQuotaShare(r, queue, static_cast<int>(shares_.size()), exists); !s.ok()) {
            return rejected(s);
          }
          shares_[*r.quota_share_name].enabled = r.state.value_or(Toggle::kEnabled) == Toggle::kEnabled;
          CheckShareUnits(ev.path, *r.quota_share_name, *r.capacity_limits);
        } else if constexpr (std::is_same_v<T, UpdateQuotaShareRequest>) {
          std::string name = r.quota_share_arn ? std::string(ShareNameFromArn(*r.quota_share_arn)) : "";
          auto it = shares_.find(name);
          if (absl::Status s = ValidateUpdateQuotaShare(r, it != shares_.end()); !s.ok()) return rejected(s);
          if (r.state) it->second.enabled = *r.state == Toggle::kEnabled;
          if (r.capacity_limits) CheckShareUnits(ev.path, name, *r.capacity_limits);
        } else if constexpr (std::is_same_v<T, UpdateServiceEnvironmentRequest>) {
          if (absl::Status s = ValidateUpdateServiceEnvironment(r, head_.service_environment.name); !s.ok()) {
            return rejected(s);
          }
          if (r.capacity_limits) {
            env_now_.clear();
            for (const CapacityLimit& l : *r.capacity_limits) env_now_[l.capacity_unit] = l.max_capacity;
          }
        } else if constexpr (std::is_same_v<T, SubmitServiceJobRequest>) {
          ShareFacts facts;
          if (r.quota_share_name) {
            if (auto it = shares_.find(*r.quota_share_name); it != shares_.end()) {
              facts.exists = true;
              facts.enabled = it->second.enabled;
            }
          }
          if (absl::Status s = ValidateSubmit(r, queue, facts); !s.ok()) return rejected(s);
          submitted_.insert(*r.job_name);
          auto it = env_max_.find(r.instance_type);
          const int64_t most = it == env_max_.end() ? 0 : it->second;
          if (r.instance_count > most) {
            Add(ev.path, absl::StrCat("job ", *r.job_name, " needs ", r.instance_count, " ", r.instance_type,
                                      " but the service environment never has more than ", most,
                                      ": it never runs (MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE)"));
          }
        } else if constexpr (std::is_same_v<T, UpdateServiceJobRequest> ||
                             std::is_same_v<T, TerminateServiceJobRequest>) {
          JobFacts facts;
          facts.exists = r.job_id && submitted_.contains(*r.job_id);
          facts.status = "RUNNABLE";  // what the run decides; only state-free checks count here
          absl::Status s;
          if constexpr (std::is_same_v<T, UpdateServiceJobRequest>) {
            s = ValidateUpdateServiceJob(r, facts);
          } else {
            s = ValidateTerminateServiceJob(r, facts);
          }
          if (!s.ok()) rejected(s);
        } else if constexpr (std::is_same_v<T, GetJobQueueSnapshotRequest>) {
          if (absl::Status s = ValidateGetJobQueueSnapshot(r, queue); !s.ok()) rejected(s);
        }
      },
      ev.request);
}

}  // namespace qs
