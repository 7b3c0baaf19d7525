#include "engine/fast/summary_accumulators.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/util/strings.h"

namespace qs::engine_internal {

void SummaryAccumulators::Apply(const JobTransition& r) {
  // A job's first line is SUBMITTED, and its last is SUCCEEDED or FAILED,
  // which frees its entry (the engine gives its slot back only then): its
  // entry and its share's are made by the SUBMITTED line, and every later
  // line finds them.
  if (r.status == JobStatus::kSubmitted) Open(r.slot, r.share);
  JobAcc& j = Enter(r.slot, r.status, r.time);
  ShareAcc& sh = ShareOf(j);
  if (r.misconfigured) {
    j.misconfigured = true;
    if (never_ran_example_.empty()) {
      never_ran_example_ = absl::StrCat(Sv(r.job_name), ": ", Sv(reasons::ReasonCode(r.reason)));
    }
  }
  switch (r.status) {
    case JobStatus::kSubmitted:
      SubmittedStep(j, r.time);
      break;
    case JobStatus::kRunnable:
      if (r.has_preemption_summary && j.running_since >= 0) {
        sh.s.work_lost_instance_ms += (j.own + j.borrowed) * (r.time - j.running_since);
      }
      if (r.wait_cause != WaitCause::kNone) {  // a cause line
        saw_causes_ = true;
        CloseCause(j, r.time);
        j.cause = r.wait_cause;
        j.cause_since = r.time;
        break;
      }
      if (j.dispatched && r.capacity_error) {
        ++sh.s.capacity_errors;
        sh.s.wait_by_cause_ms[static_cast<size_t>(WaitCause::kCapacityError)] += r.time - j.attempt_start;
      }
      RunnableStep(j, r.time);
      break;
    case JobStatus::kScheduled:
      if (r.preemption != PreemptionType::kNone) break;  // preemption start on a SCHEDULED job
      ScheduledStep(j, r.time, r.unit, r.quantity, r.borrowed);
      break;
    case JobStatus::kRunning:
      if (r.preemption == PreemptionType::kNone) {
        RunningStep(j, r.time);
      } else if (j.running_since >= 0) {
        // Preemption start: the checkpointed part of the run is not lost.
        j.running_since += r.checkpointed_ms;
      }
      break;
    case JobStatus::kSucceeded:
    case JobStatus::kFailed:
      if (r.has_preemption_summary && j.running_since >= 0) {
        sh.s.work_lost_instance_ms += (j.own + j.borrowed) * (r.time - j.running_since);
      }
      EndedStep(j, r.status, r.time);
      break;
    default:
      break;
  }
  if (r.preemption == PreemptionType::kCrossShare) {
    ++sh.s.preempted_cross;
    // The job it makes room for is in flight: it has its entry (no resize,
    // which would move `j`).
    const size_t b = static_cast<size_t>(r.preempted_for_slot);
    if (b < jobs_.size() && jobs_[b].live && jobs_[b].reclaim_start < 0) jobs_[b].reclaim_start = r.time;
  } else if (r.preemption == PreemptionType::kInShare) {
    ++sh.s.preempted_in;
  }
  if (IsTerminal(r.status)) CloseEntry(j);
}

void SummaryAccumulators::ScheduledStep(JobAcc& j, SimTime time, int32_t unit, int64_t quantity, int64_t borrowed) {
  ShareAcc& sh = ShareOf(j);
  if (!j.scheduled_once) {
    j.scheduled_once = true;
    sh.waits.push_back(time - j.first_runnable);
  }
  if (j.reclaim_start >= 0) {
    sh.reclaims.push_back(time - j.reclaim_start);
    j.reclaim_start = -1;
  }
  j.dispatched = true;
  SetWaiting(j, false, time);
  j.attempt_start = time;
  j.unit = unit;
  const size_t u = static_cast<size_t>(unit);
  if (u >= sh.unit_ms.size()) {
    sh.unit_ms.resize(u + 1);
    sh.unit_seen.resize(u + 1);
  }
  sh.unit_seen[u] = 1;
  j.borrowed = static_cast<int32_t>(borrowed);
  j.own = static_cast<int32_t>(quantity - borrowed);
}

void SummaryAccumulators::Open(int32_t slot, int32_t share) {
  JobAcc& j = JobAt(slot);
  assert(!j.live);
  j.live = true;
  j.share = share;
  ShareAt(share).present = true;
}

void SummaryAccumulators::OnCapacity(SimTime time, int32_t unit, int64_t max_capacity) {
  const size_t u = static_cast<size_t>(unit);
  if (u >= capacity_.size()) capacity_.resize(u + 1);
  UnitCapacity& c = capacity_[u];
  if (!c.present) {
    c.present = true;
    c.since = time;
  }
  c.ms += c.current * (time - c.since);
  c.current = max_capacity;
  c.since = time;
}

Summary SummaryAccumulators::Finish(SimTime end_time, int64_t invariant_violations,
                                    const std::vector<std::string_view>& share_names,
                                    const std::vector<std::string_view>& unit_names) {
  Summary out;
  out.end_time = end_time;
  out.invariant_violations = invariant_violations;
  out.rejected_requests = rejected_;
  out.wait_causes = saw_causes_ || wait_causes_expected_;
  out.never_ran = ended_never_ran_;
  out.never_ran_example = never_ran_example_;
  for (JobAcc& j : jobs_) {
    if (!j.live) continue;
    ShareAcc& sh = shares_[static_cast<size_t>(j.share)];
    ++sh.s.unfinished;
    CloseCause(j, end_time);
    CloseAttempt(j, end_time);
    if (j.misconfigured && !j.scheduled_once) ++out.never_ran;
  }
  out.backlog = backlog_;
  if (backlog_.last_submission > 0) {
    out.backlog.mean_over_arrivals = waiting_ms_at_last_submission_ / static_cast<double>(backlog_.last_submission);
  }
  // Shares by name, as SummaryBuilder keys them. The waits and reclaim
  // latencies (8 bytes a job: 80 MB at 1e7 jobs) are moved, ranked in
  // place and freed share by share as they join the totals', never copied
  // whole: copies raised a 1e7-job run's peak memory by 140 MB.
  struct Named {
    ShareSummary s;
    std::vector<SimTime> waits, reclaims;
  };
  // Appends `from` to `to` and frees it (taking its buffer when `to` has
  // none and no room reserved).
  auto join = [](std::vector<SimTime>& to, std::vector<SimTime>& from) {
    if (to.capacity() == 0) {
      to.swap(from);
    } else {
      to.insert(to.end(), from.begin(), from.end());
    }
    std::vector<SimTime>().swap(from);
  };
  std::map<std::string, Named> by_name;
  size_t total_waits = 0, total_reclaims = 0;
  for (size_t i = 0; i < shares_.size(); ++i) {
    ShareAcc& sh = shares_[i];
    if (!sh.present) continue;
    for (size_t u = 0; u < sh.unit_seen.size(); ++u) {
      if (sh.unit_seen[u]) sh.s.instance_ms[std::string(unit_names[u])] = sh.unit_ms[u];
    }
    Named& n = by_name[std::string(share_names[i])];
    AccumulateShare(n.s, sh.s);
    total_waits += sh.waits.size();
    total_reclaims += sh.reclaims.size();
    join(n.waits, sh.waits);
    join(n.reclaims, sh.reclaims);
  }
  std::vector<SimTime> all_waits, all_reclaims;
  all_waits.reserve(total_waits);
  all_reclaims.reserve(total_reclaims);
  for (auto& [name, n] : by_name) {
    ShareSummary& s = n.s;
    // Ranking reorders a share's values, which leaves the totals' the same.
    s.wait = DurationStatsIn(n.waits);
    s.reclaim = DurationStatsIn(n.reclaims);
    join(all_waits, n.waits);
    join(all_reclaims, n.reclaims);
    AccumulateShare(out.total, s);
    out.shares[name] = std::move(s);
  }
  out.total.wait = DurationStatsIn(all_waits);
  out.total.reclaim = DurationStatsIn(all_reclaims);
  for (size_t u = 0; u < capacity_.size(); ++u) {
    UnitCapacity& c = capacity_[u];
    if (!c.present) continue;
    const int64_t cap_ms = c.ms + c.current * (end_time - c.since);
    auto it = out.total.instance_ms.find(std::string(unit_names[u]));
    const int64_t used = it == out.total.instance_ms.end() ? 0 : it->second.first + it->second.second;
    out.utilisation[std::string(unit_names[u])] = cap_ms > 0 ? static_cast<double>(used) / static_cast<double>(cap_ms) : 0.0;
  }
  return out;
}

}  // namespace qs::engine_internal
