#include "engine/log/summary.h"

#include <vector>
#include <string_view>
#include <cctype>
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "engine/io/knobs_json.h"
#include "engine/util/strings.h"
#include "nlohmann/json.hpp"

namespace qs {
namespace {

double Seconds(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

nlohmann::ordered_json StatsJson(const DurationStats& d, bool full) {
  nlohmann::ordered_json j;
  j["count"] = d.count;
  if (full) {
    j["mean"] = d.count ? Seconds(d.sum) / static_cast<double>(d.count) : 0.0;
    j["p50"] = Seconds(d.p50);
    j["p95"] = Seconds(d.p95);
  }
  j["p99"] = Seconds(d.p99);
  j["max"] = Seconds(d.max);
  return j;
}

nlohmann::ordered_json ShareJson(const ShareSummary& s, bool with_capacity, bool with_causes) {
  nlohmann::ordered_json j;
  j["jobsSubmitted"] = s.submitted;
  j["jobsSucceeded"] = s.succeeded;
  j["jobsFailed"] = s.failed;
  j["jobsUnfinished"] = s.unfinished;
  nlohmann::ordered_json is = nlohmann::ordered_json::object();
  for (const auto& [unit, v] : s.instance_ms) {
    is[unit] = {{"own", Seconds(v.first)}, {"borrowed", Seconds(v.second)}};
  }
  j["instanceSeconds"] = is;
  j["waitSeconds"] = StatsJson(s.wait, true);
  j["preemptions"] = {{"crossShare", s.preempted_cross}, {"inShare", s.preempted_in}};
  j["workLostInstanceSeconds"] = Seconds(s.work_lost_instance_ms);
  j["reclaimLatencySeconds"] = StatsJson(s.reclaim, false);
  if (with_capacity) j["capacityErrors"] = s.capacity_errors;
  if (with_causes) {
    nlohmann::ordered_json causes = nlohmann::ordered_json::object();
    for (int c = 1; c < kNumWaitCauses; ++c) {
      causes[WaitCauseName(static_cast<WaitCause>(c))] = Seconds(s.wait_by_cause_ms[static_cast<size_t>(c)]);
    }
    j["waitByCauseSeconds"] = std::move(causes);
  }
  return j;
}

}  // namespace

void AccumulateShare(ShareSummary& total, const ShareSummary& s) {
  total.submitted += s.submitted;
  total.succeeded += s.succeeded;
  total.failed += s.failed;
  total.unfinished += s.unfinished;
  for (const auto& [unit, v] : s.instance_ms) {
    total.instance_ms[unit].first += v.first;
    total.instance_ms[unit].second += v.second;
  }
  total.preempted_cross += s.preempted_cross;
  total.preempted_in += s.preempted_in;
  total.work_lost_instance_ms += s.work_lost_instance_ms;
  total.capacity_errors += s.capacity_errors;
  for (size_t c = 0; c < s.wait_by_cause_ms.size(); ++c) total.wait_by_cause_ms[c] += s.wait_by_cause_ms[c];
}

DurationStats DurationStatsOf(std::vector<SimTime> v) { return DurationStatsIn(v); }

DurationStats DurationStatsIn(std::span<SimTime> v) {
  DurationStats d;
  if (v.empty()) return d;
  const size_t n = v.size();
  d.count = static_cast<int64_t>(n);
  for (SimTime x : v) d.sum += x;
  // Nearest rank, ceil(p/100 * n) 1-based. Three order statistics and the
  // maximum, not a sorted vector: each nth_element runs on the part right of
  // the one before (everything left of index k is <= v[k] after it), O(n) in
  // all. Sorting a 1e7-job run's waits, per share and in total, cost about
  // 0.3 s of its 14 s.
  auto index = [n](size_t p) { return std::max<size_t>((p * n + 99) / 100, 1) - 1; };
  const size_t i50 = index(50), i95 = index(95), i99 = index(99);
  const auto b = v.begin();
  // Each value is read at once: the next selection may move it.
  std::nth_element(b, b + static_cast<std::ptrdiff_t>(i50), v.end());
  d.p50 = v[i50];
  std::nth_element(b + static_cast<std::ptrdiff_t>(i50), b + static_cast<std::ptrdiff_t>(i95), v.end());
  d.p95 = v[i95];
  std::nth_element(b + static_cast<std::ptrdiff_t>(i95), b + static_cast<std::ptrdiff_t>(i99), v.end());
  d.p99 = v[i99];
  d.max = *std::max_element(b + static_cast<std::ptrdiff_t>(i99), v.end());
  return d;
}

void SummaryBuilder::SetWaiting(Track& t, bool waiting, SimTime now) {
  if (t.waiting == waiting) return;
  waiting_ms_ += static_cast<double>(waiting_) * static_cast<double>(now - backlog_since_);
  backlog_since_ = now;
  t.waiting = waiting;
  waiting_ += waiting ? 1 : -1;
  if (waiting_ > backlog_.peak) {
    backlog_.peak = waiting_;
    backlog_.peak_time = now;
  }
}

void SummaryBuilder::CloseCause(Track& t, SimTime now) {
  if (cause_open_.empty()) return;
  auto it = cause_open_.find(&t);
  if (it == cause_open_.end()) return;
  t.share->second.s.wait_by_cause_ms[static_cast<size_t>(it->second.first)] += now - it->second.second;
  cause_open_.erase(it);
}

void SummaryBuilder::CloseAttempt(Track& t, SimTime now) {
  if (!t.dispatched) return;
  t.unit->second.first += t.own * (now - t.attempt_start);
  t.unit->second.second += t.borrowed * (now - t.attempt_start);
  t.dispatched = false;
  t.running_since = -1;
}

SummaryBuilder::Track* SummaryBuilder::FindTrack(int32_t slot, std::string_view name) {
  if (slot >= 0) {
    if (static_cast<size_t>(slot) >= slot_track_.size() || slot_track_[slot] < 0) return nullptr;
    return &pool_[slot_track_[slot]];
  }
  auto it = by_name_.find(Sv(name));
  return it == by_name_.end() ? nullptr : &it->second;
}

namespace {
// cache[index] if set; else find(), kept in cache[index] when index >= 0
// (-1: the record has no index).
template <typename Entry, typename Find>
Entry* ByIndex(std::vector<Entry*>& cache, int32_t index, const Find& find) {
  if (index < 0) return find();
  const size_t i = static_cast<size_t>(index);
  if (i >= cache.size()) cache.resize(i + 1, nullptr);
  if (cache[i] == nullptr) cache[i] = find();
  return cache[i];
}
}  // namespace

SummaryBuilder::ShareEntry* SummaryBuilder::ShareOf(const JobRecord& r) {
  return ByIndex(share_by_index_, r.share_index, [&] {
    auto st = shares_.find(r.share_name);
    if (st == shares_.end()) st = shares_.emplace(std::string(r.share_name), ShareAcc{}).first;
    return &*st;
  });
}

SummaryBuilder::UnitEntry* SummaryBuilder::UnitOf(ShareAcc& sh, const JobRecord& r) {
  return ByIndex(sh.unit_by_index, r.unit_index,
                 [&] { return &*sh.s.instance_ms.try_emplace(std::string(r.capacity_unit)).first; });
}

void SummaryBuilder::OnJob(const JobRecord& r) {
  // A finished job's track is no longer needed (and a later job of the same
  // name starts afresh); only jobs in flight are held.
  if (r.job_slot >= 0) {
    const size_t slot = static_cast<size_t>(r.job_slot);
    if (slot >= slot_track_.size()) slot_track_.resize(std::max(slot + 1, 2 * slot_track_.size()), -1);
    int32_t& k = slot_track_[slot];
    if (k < 0) {
      if (free_tracks_.empty()) {
        k = static_cast<int32_t>(pool_.size());
        pool_.emplace_back();
      } else {
        k = free_tracks_.back();
        free_tracks_.pop_back();
      }
    }
    Track& t = pool_[k];
    Apply(t, r);
    if (t.terminal) {
      t = Track{};
      free_tracks_.push_back(k);
      k = -1;
    }
  } else {
    auto jt = by_name_.find(Sv(r.job_name));
    if (jt == by_name_.end()) jt = by_name_.emplace(std::string(r.job_name), Track{}).first;
    Apply(jt->second, r);
    if (jt->second.terminal) by_name_.erase(jt);
  }
}

void SummaryBuilder::Apply(Track& t, const JobRecord& r) {
  // The job's share, looked up by name once per job (the track keeps it; a
  // job's share never changes, but two jobs of one name in a log may differ).
  if (t.share == nullptr || (r.job_slot < 0 && t.share->first != r.share_name)) {
    t.share = ShareOf(r);
    t.unit = nullptr;
  }
  ShareAcc& sh = t.share->second;
  if (reasons::IsMisconfiguration(r.status_reason)) {
    t.misconfigured = true;
    if (never_ran_example_.empty()) {
      never_ran_example_ = absl::StrCat(Sv(r.job_name), ": ", Sv(reasons::ReasonCode(r.status_reason)));
    }
  }
  if (r.status != JobStatus::kRunnable) CloseCause(t, r.time);
  switch (r.status) {
    case JobStatus::kSubmitted:
      ++sh.s.submitted;
      SetWaiting(t, true, r.time);
      backlog_.at_last_submission = waiting_;
      backlog_.last_submission = r.time;
      waiting_ms_at_last_submission_ = waiting_ms_ + static_cast<double>(waiting_) * static_cast<double>(r.time - backlog_since_);
      break;
    case JobStatus::kRunnable:
      if (r.has_preemption_summary && t.running_since >= 0) {
        sh.s.work_lost_instance_ms += (t.own + t.borrowed) * (r.time - t.running_since);
      }
      if (r.wait_cause != WaitCause::kNone) {  // a cause line
        saw_causes_ = true;
        CloseCause(t, r.time);
        cause_open_[&t] = {r.wait_cause, r.time};
        break;
      }
      if (t.dispatched && r.status_reason == reasons::kInsufficientCapacity) {
        ++sh.s.capacity_errors;
        sh.s.wait_by_cause_ms[static_cast<size_t>(WaitCause::kCapacityError)] += r.time - t.attempt_start;
      }
      CloseAttempt(t, r.time);
      SetWaiting(t, true, r.time);
      if (t.first_runnable < 0) t.first_runnable = r.time;
      break;
    case JobStatus::kScheduled:
      if (r.preemption != PreemptionType::kNone) break;  // preemption start on a SCHEDULED job
      if (!t.scheduled_once) {
        t.scheduled_once = true;
        sh.waits.push_back(r.time - t.first_runnable);
      }
      if (t.reclaim_start >= 0) {
        sh.reclaims.push_back(r.time - t.reclaim_start);
        t.reclaim_start = -1;
      }
      t.dispatched = true;
      SetWaiting(t, false, r.time);
      t.attempt_start = r.time;
      if (r.unit_index >= 0 || t.unit == nullptr || t.unit->first != r.capacity_unit) t.unit = UnitOf(sh, r);
      t.borrowed = 0;
      for (const BorrowedPart& b : r.borrowed) t.borrowed += b.quantity;
      t.own = r.quantity - t.borrowed;
      break;
    case JobStatus::kRunning:
      if (r.preemption == PreemptionType::kNone) {
        t.running_since = r.time;
      } else if (t.running_since >= 0) {
        // Preemption start: the checkpointed part of the run is not lost.
        t.running_since += r.checkpointed_ms;
      }
      break;
    case JobStatus::kSucceeded:
    case JobStatus::kFailed:
      if (r.has_preemption_summary && t.running_since >= 0) {
        sh.s.work_lost_instance_ms += (t.own + t.borrowed) * (r.time - t.running_since);
      }
      CloseAttempt(t, r.time);
      SetWaiting(t, false, r.time);
      t.terminal = true;
      if (t.misconfigured && !t.scheduled_once) ++never_ran_;
      t.reclaim_start = -1;
      if (r.status == JobStatus::kSucceeded) {
        ++sh.s.succeeded;
      } else {
        ++sh.s.failed;
      }
      break;
    default:
      break;
  }
  if (r.preemption == PreemptionType::kCrossShare) {
    ++sh.s.preempted_cross;
    Track* b = FindTrack(r.preempted_for_slot, r.preempted_for);
    if (b != nullptr && b->reclaim_start < 0) b->reclaim_start = r.time;
  } else if (r.preemption == PreemptionType::kInShare) {
    ++sh.s.preempted_in;
  }
}

void SummaryBuilder::OnRejected(const RejectedRecord&) { ++rejected_; }

void SummaryBuilder::OnCapacity(const CapacityRecord& r) {
  auto [it, inserted] = capacity_.try_emplace(std::string(r.capacity_unit), 0, r.time);
  capacity_ms_[it->first] += it->second.first * (r.time - it->second.second);
  it->second = {r.max_capacity, r.time};
}

void SummaryBuilder::OnEnd(SimTime end_time) {
  end_time_ = end_time;
  ended_ = true;
  auto close = [&](Track& t) {
    if (!t.terminal) ++t.share->second.s.unfinished;
    if (!t.terminal && t.misconfigured && !t.scheduled_once) ++never_ran_;
    CloseCause(t, end_time);
    CloseAttempt(t, end_time);
  };
  for (int32_t k : slot_track_) {
    if (k >= 0) close(pool_[k]);
  }
  for (auto& [name, t] : by_name_) close(t);
  for (auto& [unit, c] : capacity_) {
    capacity_ms_[unit] += c.first * (end_time - c.second);
    c.second = end_time;
  }
}

Summary SummaryBuilder::Build(int64_t invariant_violations) const {
  Summary out;
  out.end_time = end_time_;
  out.invariant_violations = invariant_violations;
  out.rejected_requests = rejected_;
  out.wait_causes = saw_causes_ || wait_causes_expected_;
  out.never_ran = never_ran_;
  out.never_ran_example = never_ran_example_;
  out.backlog = backlog_;
  if (backlog_.last_submission > 0) {
    out.backlog.mean_over_arrivals = waiting_ms_at_last_submission_ / static_cast<double>(backlog_.last_submission);
  }
  std::vector<SimTime> all_waits, all_reclaims;
  for (const auto& [name, acc] : shares_) {
    ShareSummary s = acc.s;
    s.wait = DurationStatsOf(acc.waits);
    s.reclaim = DurationStatsOf(acc.reclaims);
    all_waits.insert(all_waits.end(), acc.waits.begin(), acc.waits.end());
    all_reclaims.insert(all_reclaims.end(), acc.reclaims.begin(), acc.reclaims.end());
    AccumulateShare(out.total, s);
    out.shares[name] = std::move(s);
  }
  out.total.wait = DurationStatsOf(std::move(all_waits));
  out.total.reclaim = DurationStatsOf(std::move(all_reclaims));
  for (const auto& [unit, cap_ms] : capacity_ms_) {
    auto it = out.total.instance_ms.find(unit);
    const int64_t used = it == out.total.instance_ms.end() ? 0 : it->second.first + it->second.second;
    out.utilisation[unit] = cap_ms > 0 ? static_cast<double>(used) / static_cast<double>(cap_ms) : 0.0;
  }
  return out;
}

bool SameFigures(const Summary& a, const Summary& b) {
  return a.end_time == b.end_time && a.backlog == b.backlog && a.invariant_violations == b.invariant_violations &&
         a.rejected_requests == b.rejected_requests && a.total == b.total && a.wait_causes == b.wait_causes &&
         a.utilisation == b.utilisation && a.shares == b.shares && a.never_ran == b.never_ran &&
         a.never_ran_example == b.never_ran_example;
}

std::string SummaryToJson(const Summary& s) {
  nlohmann::ordered_json j;
  if (s.run) {
    const RunProvenance& r = *s.run;
    nlohmann::ordered_json knobs = KnobsJson(r.knobs);
    if (!r.knobs.horizon) knobs["horizonSeconds"] = nullptr;
    j["run"] = {{"scenario", r.scenario},
                {"engine", r.engine},
                {"quotasim", r.quotasim},
                {"simulation", std::move(knobs)},
                {"cyclePreemptions", r.cycle_preemptions},
                {"invariantChecks", r.invariant_checks},
                {"completed", r.stopped.empty()},
                {"stopped", r.stopped.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.stopped)}};
    if (!r.overrides.empty()) j["run"]["overrides"] = r.overrides;
    if (r.wait_causes) j["run"]["waitCauses"] = true;
  }
  j["endTime"] = Seconds(s.end_time);
  j["invariantViolations"] = s.invariant_violations;
  j["rejectedRequests"] = s.rejected_requests;
  j["backlog"] = {{"peak", s.backlog.peak},
                  {"peakTime", Seconds(s.backlog.peak_time)},
                  {"meanOverArrivals", std::round(s.backlog.mean_over_arrivals * 10) / 10},
                  {"atLastSubmission", s.backlog.at_last_submission},
                  {"lastSubmissionTime", Seconds(s.backlog.last_submission)}};
  const bool with_capacity = s.total.capacity_errors > 0;
  nlohmann::ordered_json total = ShareJson(s.total, with_capacity, s.wait_causes);
  nlohmann::ordered_json util = nlohmann::ordered_json::object();
  for (const auto& [unit, u] : s.utilisation) util[unit] = u;
  total["utilisation"] = util;
  j["total"] = total;
  nlohmann::ordered_json shares = nlohmann::ordered_json::object();
  for (const auto& [name, sh] : s.shares) shares[name] = ShareJson(sh, with_capacity, s.wait_causes);
  j["quotaShares"] = shares;
  return j.dump(2) + "\n";
}

}  // namespace qs
