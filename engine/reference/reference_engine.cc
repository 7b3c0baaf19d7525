// File: engine/reference/reference_engine.cc
//
// The reference engine: a deliberately simple, slow and obviously-correct
// implementation of docs/semantics.md. It keeps only the primary state (the
// shares' configuration, the jobs with their status, their own/borrowed
// parts and reservations, and a queue of pending internal events) and
// recomputes every derived quantity (Own, Lent, Use, H, Free, Idle, heads,
// visiting orders) from scratch by linear scans each time it is needed. No
// incremental counters exist that could drift. The scans read lists of job
// indices instead of all jobs ever submitted: per share, its unfinished jobs
// (queue scans) and the jobs that may hold capacity or a reservation
// (capacity scans), plus the jobs that hold borrowed parts (Lent). Each list
// is a superset, pruned once per pass; a job is listed where it starts
// holding (Dispatch, Preempt), and the invariant checker verifies that no
// holder is missing. So a run costs events x (queued + running jobs), and a
// long queue does not slow the capacity scans.
//
// The code follows docs/semantics.md section by section; comments cite the
// section (§) they implement. Where the page is silent, or its letter
// contradicts the spec, this engine reads it as follows (the fast engine
// must do the same):
//  * Cancelled internal events (life-cycle events of a preempted or
//    terminated attempt, time-limit checks whose reason changed) stay in the
//    queue and are skipped silently when popped; their instant still counts
//    (end time, a pass).
//  * Ticks (§1, schedulingIntervalSeconds > 0) are scheduled only after a
//    batch that ran no pass, so a job that can never start does not tick
//    forever; the log is the same as with the letter of §1.
//  * The horizon: the run ends at the horizon when an event lies beyond it.
//  * A DISABLED environment: its passes do nothing at all (no rounds).
//  * Phase 3 never preempts when the head already fits without victims, and
//    "each lender's idle grows by what V drew from it" is read as the idle
//    that lender will have, max(0, H + drawn) (0 for RESERVE or a lender
//    whose head holds a reservation on the unit).
//  * Backfill runs whenever phase 1 stops at a head without dispatching or
//    preempting (never fits, Own + n > L, or reclaim impossible), not while
//    the share waits; a later job looked at by backfill gets or loses its
//    MISCONFIGURATION reason like a head.
#include "engine/reference/reference_engine.h"
#include "engine/model/capacity.h"

namespace qs {
namespace reference_internal {

// ===================================================================== run
RunStats Engine::Run() {
  for (const auto& [u, c] : env_limits_) {
    CapacityRecord r;
    r.time = 0;
    r.capacity_unit = u;
    r.max_capacity = c;
    sink_.OnCapacity(r);
  }
  const SimTime interval = sc_.knobs.scheduling_interval;
  size_t next_scenario = 0;
  SimTime end_time = 0;
  int64_t next_progress = 0;
  while (true) {
    std::optional<SimTime> next;
    if (next_scenario < sc_.events.size()) next = sc_.events[next_scenario].time;
    if (!queue_.empty()) {
      SimTime qt = queue_.begin()->first.first;
      if (!next || qt < *next) next = qt;
    }
    if (!next) break;
    if (sc_.knobs.horizon && *next > *sc_.knobs.horizon) {
      end_time = *sc_.knobs.horizon;
      break;
    }
    now_ = *next;
    end_time = now_;
    if (stats_.events_processed >= next_progress) {  // a progress line's figures (LogSink::OnProgress)
      next_progress = stats_.events_processed + (1 << 16);
      sink_.OnProgress(now_, stats_.jobs_submitted);
    }
    // Scenario events first at any instant, then internal events in creation
    // order, including those created while processing (§1).
    while (next_scenario < sc_.events.size() && sc_.events[next_scenario].time == now_) {
      ProcessScenario(sc_.events[next_scenario]);
      ++next_scenario;
      CheckInvariants(false);
    }
    ProcessInternalAt(now_);
    bool passed = false;
    while (interval == 0 || now_ % interval == 0) {
      Pass();
      passed = true;
      CheckInvariants(false);
      if (!stats_.stopped.empty()) break;  // a preemption cycle: stop after this pass
      if (!HasInternalAt(now_)) break;
      ProcessInternalAt(now_);
    }
    if (!stats_.stopped.empty()) break;
    SweepHeadClocks();
    if (wait_causes_) WriteWaitCauses();
    // Ticks. docs/semantics.md §1 schedules one after *each* batch with a
    // RUNNABLE job; we schedule it only after a batch that ran no pass: a
    // batch that ran one has settled (state changes only through events, and
    // every later batch off the grid schedules its own tick), so the logs are
    // the same, but a job that can never start no longer ticks forever.
    if (interval > 0 && !passed) {
      bool any_runnable = false;
      for (const std::vector<int>& share_jobs : live_) {
        for (int i : share_jobs) {
          any_runnable = any_runnable || jobs_[static_cast<size_t>(i)].status == JobStatus::kRunnable;
        }
      }
      if (any_runnable && !(pending_tick_ && *pending_tick_ > now_)) {
        SimTime tick = (now_ / interval + 1) * interval;
        pending_tick_ = tick;
        Schedule(tick, InternalEvent{EventKind::kTick, kNone, 0});
      }
    }
  }
  stats_.end_time = end_time;
  sink_.OnEnd(end_time);
  return stats_;
}

// ============================================================ internal events
void Engine::ProcessInternal(const InternalEvent& e) {
  ++stats_.events_processed;
  if (e.kind == EventKind::kTick) {
    if (pending_tick_ && *pending_tick_ == now_) pending_tick_.reset();
    return;
  }
  // Stale events (the attempt was preempted or terminated; the time-limit
  // reason was cleared or replaced) are skipped silently.
  if (IsCancelled(e)) return;
  Job& j = jobs_[static_cast<size_t>(e.job)];
  if (e.kind == EventKind::kTimeLimit || e.kind == EventKind::kHeadTimeLimit) {
    // §5: still RUNNABLE with the reason given when the clock started; the
    // queue's current entry for it (§7: UpdateJobQueue may have removed it).
    const JobStateTimeLimitAction* a = TimeLimitActionFor(j.reason);
    if (a == nullptr) return;
    SetStatus(j, JobStatus::kFailed, std::string(reasons::kTimeLimitPrefix) + a->reason);
    return;
  }
  switch (e.kind) {
    case EventKind::kBecomeRunnable:
      ++j.epoch;
      j.runnable_since = now_;
      SetStatus(j, JobStatus::kRunnable, "");
      break;
    case EventKind::kStarting:
      j.capacity_run_start.reset();  // the instances were obtained
      SetStatus(j, JobStatus::kStarting, j.reason);
      Schedule(now_ + LatencyOf(sc_.knobs, FindTypeLatencies(sc_.knobs.latencies, j.unit), LatencyKind::kDownload,
                                e.job, now_),
               InternalEvent{EventKind::kRunning, e.job, j.epoch});
      break;
    case EventKind::kRunning: {
      SetStatus(j, JobStatus::kRunning, j.reason);
      j.running_since = now_;
      SimTime duration = j.run_time;
      j.timed_out = false;
      j.max_runtime_exceeded = false;
      if (j.attempt_duration_seconds) {
        SimTime limit = *j.attempt_duration_seconds * kMillisPerSecond;
        if (j.run_time > limit) {
          j.timed_out = true;
          duration = limit;
        }
      }
      // SageMaker's MaxRuntimeInSeconds stops the attempt when it comes
      // first; Batch's own timeout wins a tie (§5).
      if (j.max_runtime_seconds && *j.max_runtime_seconds * kMillisPerSecond < duration) {
        j.timed_out = false;
        j.max_runtime_exceeded = true;
        duration = *j.max_runtime_seconds * kMillisPerSecond;
      }
      Schedule(now_ + duration, InternalEvent{EventKind::kAttemptEnd, e.job, j.epoch});
      break;
    }
    case EventKind::kAttemptEnd: {
      Progress();  // an attempt ended
      bool timed_out = j.timed_out;
      Release(j);
      ++j.epoch;
      std::string_view reason;
      if (j.max_runtime_exceeded) {
        reason = reasons::kMaxRuntimeExceeded;
      } else if (timed_out) {
        reason = reasons::kAttemptTimeout;
      } else if (j.outcome == JobOutcome::kFailed) {
        reason = reasons::kSimulatedFailure;
      } else {
        SetStatus(j, JobStatus::kSucceeded, "");
        break;
      }
      ++j.failed_attempts;
      if (j.failed_attempts < j.max_attempts) {
        j.runnable_since = now_;
        SetStatus(j, JobStatus::kRunnable, reason);
      } else {
        SetStatus(j, JobStatus::kFailed, reason);
      }
      break;
    }
    case EventKind::kDrainEnd: {
      std::string_view runnable_reason = j.drain_type == PreemptionType::kInShare
                                             ? reasons::kInSharePreempted
                                             : reasons::kCrossSharePreempted;
      Release(j);
      ++j.epoch;
      j.capacity_run_start.reset();  // a preemption ends a run of capacity errors
      ++j.preempted_attempt_count;
      j.recent_preempted.insert(j.recent_preempted.begin(),
                                PreemptedAttempt{j.dispatched_at, now_, runnable_reason});
      if (j.recent_preempted.size() > kRecentAttemptsWindow) {
        j.recent_preempted.resize(kRecentAttemptsWindow);
      }
      JobRecord rec = BaseRecord(j);
      rec.has_preemption_summary = true;
      rec.preempted_attempt_count = j.preempted_attempt_count;
      rec.recent_preempted_attempts = j.recent_preempted;
      if (j.preemption_retries && j.preempted_attempt_count > *j.preemption_retries) {
        Commit(j, JobStatus::kFailed, reasons::kPreemptionRetriesExhausted, rec);
      } else {
        j.runnable_since = now_;
        j.returned = !j.reranked;
        j.reranked = false;
        Commit(j, JobStatus::kRunnable, runnable_reason, rec);
      }
      break;
    }
    case EventKind::kCapacityError: {
      // §2 "Capacity": RUNNABLE again without using an attempt; the
      // queue's time-limit action for the reason counts from the SCHEDULED
      // time of the first capacity error of the run.
      if (!j.capacity_run_start) j.capacity_run_start = j.dispatched_at;
      Release(j);
      ++j.epoch;
      j.runnable_since = now_;
      SetStatus(j, JobStatus::kRunnable, reasons::kInsufficientCapacity);
      if (const JobStateTimeLimitAction* a = TimeLimitActionFor(reasons::kInsufficientCapacity)) {
        Schedule(std::max(now_, *j.capacity_run_start + a->max_time_seconds * kMillisPerSecond),
                 InternalEvent{EventKind::kTimeLimit, e.job, j.reason_version});
      }
      break;
    }
    case EventKind::kTimeLimit:
    case EventKind::kHeadTimeLimit:
    case EventKind::kTick:
      break;
  }
}

// ============================================================ scenario events
void Engine::ProcessScenario(const ScenarioEvent& ev) {
  ++stats_.events_processed;
  Progress();  // a request applied (or rejected)
  if (const auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request)) {
    OnSubmit(ev, *r);
  } else if (const auto* r1 = std::get_if<UpdateServiceJobRequest>(&ev.request)) {
    OnUpdateJob(ev, *r1);
  } else if (const auto* r2 = std::get_if<TerminateServiceJobRequest>(&ev.request)) {
    OnTerminate(ev, *r2);
  } else if (const auto* r3 = std::get_if<CreateQuotaShareRequest>(&ev.request)) {
    OnCreateShare(ev, *r3);
  } else if (const auto* r4 = std::get_if<UpdateQuotaShareRequest>(&ev.request)) {
    OnUpdateShare(ev, *r4);
  } else if (const auto* r5 = std::get_if<UpdateServiceEnvironmentRequest>(&ev.request)) {
    OnUpdateEnvironment(ev, *r5);
  } else if (const auto* r6 = std::get_if<GetJobQueueSnapshotRequest>(&ev.request)) {
    OnSnapshot(ev, *r6);
  } else if (const auto* r7 = std::get_if<DeleteQuotaShareRequest>(&ev.request)) {
    OnDeleteShare(ev, *r7);
  } else if (const auto* r8 = std::get_if<UpdateJobQueueRequest>(&ev.request)) {
    OnUpdateQueue(ev, *r8);
  } else if (const auto* r9 = std::get_if<UpdateSchedulingPolicyRequest>(&ev.request)) {
    // A quota share policy's only setting is FIFO: an accepted update changes nothing.
    if (absl::Status st = ValidateUpdateSchedulingPolicy(*r9, sc_.scheduling_policy.name); !st.ok()) Reject(ev, st);
  }
}

void Engine::OnSubmit(const ScenarioEvent& ev, const SubmitServiceJobRequest& r) {
  ShareFacts facts;
  facts.queue_enabled = queue_enabled_;
  int s = kNone;
  if (r.quota_share_name) {
    s = FindShare(*r.quota_share_name);
    facts.exists = s != kNone;
    facts.enabled = facts.exists && shares_[static_cast<size_t>(s)].enabled;
  }
  absl::Status st = ValidateSubmit(r, sc_.job_queue.name, facts);
  if (!st.ok()) {
    Reject(ev, st);
    return;
  }
  Job j;
  j.name = *r.job_name;
  j.share = s;
  j.priority = r.scheduling_priority.value_or(0);
  j.created_at = now_;
  j.unit = r.instance_type;
  j.count = r.instance_count;
  j.max_attempts = r.retry_attempts.value_or(1);
  j.attempt_duration_seconds = r.attempt_duration_seconds;
  j.max_runtime_seconds = r.max_runtime_seconds;
  j.checkpoint_interval = r.checkpoint_interval ? r.checkpoint_interval : sc_.knobs.checkpoint_interval;
  j.preemption_retries = r.preemption_retries;
  j.run_time = r.run_time;
  j.outcome = r.outcome;
  jobs_.push_back(std::move(j));
  ++stats_.jobs_submitted;
  int ji = static_cast<int>(jobs_.size() - 1);
  Job& job = jobs_.back();
  live_[static_cast<size_t>(job.share)].push_back(ji);
  SetStatus(job, JobStatus::kSubmitted, "");
  Schedule(now_ + sc_.knobs.submit_latency,
           InternalEvent{EventKind::kBecomeRunnable, ji, job.epoch});
}

// What validation needs to know of the job a request names (its index in
// *ji, kNone when there is no such job).
JobFacts Engine::FactsOf(const std::optional<std::string>& job_id, int* ji) const {
  JobFacts facts;
  *ji = job_id ? FindJob(*job_id) : kNone;
  if (*ji != kNone) {
    facts.exists = true;
    facts.terminal = IsTerminal(jobs_[static_cast<size_t>(*ji)].status);
    facts.status = JobStatusName(jobs_[static_cast<size_t>(*ji)].status);
  }
  return facts;
}

void Engine::OnUpdateJob(const ScenarioEvent& ev, const UpdateServiceJobRequest& r) {
  int ji = kNone;
  const JobFacts facts = FactsOf(r.job_id, &ji);
  absl::Status st = ValidateUpdateServiceJob(r, facts);
  if (!st.ok()) {
    Reject(ev, st);
    return;
  }
  Job& j = jobs_[static_cast<size_t>(ji)];
  if (j.priority != *r.scheduling_priority) {
    j.returned = false;  // a request: it ranks as any job ...
    if (j.draining) j.reranked = true;  // ... also once back from its drain
  }
  j.priority = *r.scheduling_priority;
}

void Engine::OnTerminate(const ScenarioEvent& ev, const TerminateServiceJobRequest& r) {
  int ji = kNone;
  const JobFacts facts = FactsOf(r.job_id, &ji);
  absl::Status st = ValidateTerminateServiceJob(r, facts);
  if (!st.ok()) {
    Reject(ev, st);
    return;
  }
  TerminateJob(jobs_[static_cast<size_t>(ji)], *r.reason);
}

// FAILED at once with `reason` (TerminateServiceJob, DeleteQuotaShare).
void Engine::TerminateJob(Job& j, std::string_view reason) {
  Release(j);  // no drain; a victim's instances go to its beneficiary's hold
  ++j.epoch;   // cancels pending events
  SetStatus(j, JobStatus::kFailed, reason);  // drops its reservation, if any (§4)
}

void Engine::OnCreateShare(const ScenarioEvent& ev, const CreateQuotaShareRequest& r) {
  bool exists = r.quota_share_name && FindShare(*r.quota_share_name) != kNone;
  int live = 0;
  bool was_deleted = false;
  for (const Share& sh : shares_) {
    if (!sh.deleted) ++live;
    if (sh.deleted && r.quota_share_name && sh.name == *r.quota_share_name) was_deleted = true;
  }
  absl::Status st = ValidateCreateQuotaShare(r, sc_.job_queue.name, live, exists);
  if (st.ok()) st = CheckShareSlot(*r.quota_share_name, was_deleted, static_cast<int>(shares_.size()));
  if (!st.ok()) {
    Reject(ev, st);
    return;
  }
  Share sh;
  sh.name = *r.quota_share_name;
  sh.strategy = *r.strategy;
  sh.borrow_limit = r.borrow_limit.value_or(-1);
  sh.in_share_preemption = *r.in_share_preemption == Toggle::kEnabled;
  sh.enabled = r.state.value_or(Toggle::kEnabled) == Toggle::kEnabled;
  for (const CapacityLimit& l : *r.capacity_limits) sh.limits[l.capacity_unit] = l.max_capacity;
  shares_.push_back(std::move(sh));
  live_.resize(shares_.size());
  held_.resize(shares_.size());
}

// §7 DeleteQuotaShare: the DISABLED share's jobs are terminated in
// submission order (as TerminateServiceJob does); the share keeps no limits.
void Engine::OnDeleteShare(const ScenarioEvent& ev, const DeleteQuotaShareRequest& r) {
  const int s = r.quota_share_arn ? FindShare(ShareNameFromArn(*r.quota_share_arn)) : kNone;
  const bool enabled = s != kNone && shares_[static_cast<size_t>(s)].enabled;
  if (absl::Status st = ValidateDeleteQuotaShare(r, s != kNone, enabled); !st.ok()) {
    Reject(ev, st);
    return;
  }
  const std::string reason = DeletedShareReason(shares_[static_cast<size_t>(s)].name);
  for (Job& j : jobs_) {
    if (j.share == s && !IsTerminal(j.status)) TerminateJob(j, reason);
  }
  shares_[static_cast<size_t>(s)].deleted = true;
  shares_[static_cast<size_t>(s)].limits.clear();
  // What it lent stays lent: excess over its (now empty) limits may only drain.
  CheckInvariants(true);
}

// §7 UpdateJobQueue: the state (DISABLED: no new submissions) and the
// jobStateTimeLimitActions.
void Engine::OnUpdateQueue(const ScenarioEvent& ev, const UpdateJobQueueRequest& r) {
  if (absl::Status st = ValidateUpdateJobQueue(r, sc_.job_queue.name, sc_.scheduling_policy.name,
                                                     CapacityMayStick(sc_.knobs.capacity) && !sc_.knobs.horizon); !st.ok()) {
    Reject(ev, st);
    return;
  }
  if (r.state) queue_enabled_ = *r.state == Toggle::kEnabled;
  if (r.time_limit_actions) time_limit_actions_ = *r.time_limit_actions;
}

void Engine::OnUpdateShare(const ScenarioEvent& ev, const UpdateQuotaShareRequest& r) {
  int s = r.quota_share_arn ? FindShare(ShareNameFromArn(*r.quota_share_arn)) : kNone;
  absl::Status st = ValidateUpdateQuotaShare(r, s != kNone);
  if (!st.ok()) {
    Reject(ev, st);
    return;
  }
  Share& sh = shares_[static_cast<size_t>(s)];
  if (r.capacity_limits) {
    sh.limits.clear();
    for (const CapacityLimit& l : *r.capacity_limits) sh.limits[l.capacity_unit] = l.max_capacity;
  }
  if (r.has_resource_sharing) {
    sh.strategy = *r.strategy;
    sh.borrow_limit = r.borrow_limit.value_or(-1);
  }
  if (r.in_share_preemption) sh.in_share_preemption = *r.in_share_preemption == Toggle::kEnabled;
  if (r.state) sh.enabled = *r.state == Toggle::kEnabled;
  CheckInvariants(true);
}

void Engine::OnUpdateEnvironment(const ScenarioEvent& ev,
                                 const UpdateServiceEnvironmentRequest& r) {
  absl::Status st = ValidateUpdateServiceEnvironment(r, sc_.service_environment.name);
  if (!st.ok()) {
    Reject(ev, st);
    return;
  }
  if (r.capacity_limits) {
    std::map<std::string, int64_t> next;
    for (const CapacityLimit& l : *r.capacity_limits) next[l.capacity_unit] = l.max_capacity;
    std::set<std::string> units;
    for (const auto& [u, c] : env_limits_) units.insert(u);
    for (const auto& [u, c] : next) units.insert(u);
    for (const std::string& u : units) {
      auto o = env_limits_.find(u);
      auto n = next.find(u);
      int64_t before = o == env_limits_.end() ? 0 : o->second;
      int64_t after = n == next.end() ? 0 : n->second;
      if (before != after) {
        CapacityRecord rec;
        rec.time = now_;
        rec.capacity_unit = u;
        rec.max_capacity = after;
        sink_.OnCapacity(rec);
      }
    }
    env_limits_ = std::move(next);
  }
  if (r.state) env_enabled_ = *r.state == Toggle::kEnabled;
  CheckInvariants(true);
}

void Engine::OnSnapshot(const ScenarioEvent& ev, const GetJobQueueSnapshotRequest& r) {
  absl::Status st = ValidateGetJobQueueSnapshot(r, sc_.job_queue.name);
  if (!st.ok()) {
    Reject(ev, st);
    return;
  }
  // §8.
  SnapshotRecord rec;
  rec.time = now_;
  // Priority, then share usage (the share's use/limit ratio, as
  // UNDER_LIMIT_FIRST reads it), then queue order.
  std::vector<int> all = Queue(kNone);
  std::vector<Ratio> ratio;
  for (size_t s = 0; s < shares_.size(); ++s) ratio.push_back(UseRatio(static_cast<int>(s)));
  std::stable_sort(all.begin(), all.end(), [&](int a, int b) {
    const Job& ja = jobs_[static_cast<size_t>(a)];
    const Job& jb = jobs_[static_cast<size_t>(b)];
    if (ja.priority != jb.priority) return ja.priority > jb.priority;
    return RatioLess(ratio[static_cast<size_t>(ja.share)], ratio[static_cast<size_t>(jb.share)]);
  });
  for (size_t i = 0; i < all.size() && i < kFrontOfQueueMax; ++i) {
    const Job& j = jobs_[static_cast<size_t>(all[i])];
    rec.front_of_queue.push_back(SnapshotJob{j.name, j.runnable_since});
  }
  std::set<std::string> units = AllUnits();
  for (size_t s = 0; s < shares_.size(); ++s) {
    if (shares_[s].deleted) continue;
    SnapshotShare entry;
    entry.share_name = shares_[s].name;
    int h = Head(static_cast<int>(s));
    if (h != kNone) {
      const Job& j = jobs_[static_cast<size_t>(h)];
      entry.front.push_back(SnapshotJob{j.name, j.runnable_since});
    }
    for (const std::string& u : units) {
      int64_t use = Use(static_cast<int>(s), u);
      if (use != 0) entry.usage.push_back(SnapshotUsage{u, use});
    }
    rec.shares.push_back(std::move(entry));
  }
  for (const std::string& u : units) {
    int64_t use = TotalUse(u);
    if (use != 0) rec.total_usage.push_back(SnapshotUsage{u, use});
  }
  sink_.OnSnapshot(rec);
}

}  // namespace reference_internal

RunStats RunReferenceEngine(const Scenario& scenario, LogSink& sink, bool check_invariants,
                            int64_t cycle_preemptions, bool wait_causes) {
  reference_internal::Engine engine(scenario, sink, check_invariants, cycle_preemptions, wait_causes);
  return engine.Run();
}

}  // namespace qs
