// The fast engine's run loop and internal events: see engine/fast/engine.h
// for the parts and docs/semantics.md for the rules.
#include "engine/fast/engine.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/util/strings.h"

namespace qs {
namespace engine_internal {

namespace {
constexpr size_t kMaxViolationMessages = 20;
}  // namespace

Engine::Engine(const Scenario& scenario, LogSink& sink, const RunOptions& options)
    : Engine(scenario, IndexScenario(scenario), sink, options, ScenarioSource(scenario)) {}

Engine::Engine(const EventStream& stream, ScenarioIndex index, LogSink& sink, const RunOptions& options)
    : Engine(stream.head(), std::move(index), sink, options, ScenarioSource(stream, index)) {}

Engine::Engine(const Scenario& config, ScenarioIndex&& index, LogSink& sink, const RunOptions& options,
               ScenarioSource source)
    : sc_(config),
      sink_(sink),
      opt_(options),
      source_(std::move(source)),
      st_(config, options.knobs.value_or(config.knobs), std::move(index), options.huge_pages),
      settling_(options.skip_settled_shares && !st_.knobs.backfill),
      checker_(options.full_invariant_check) {
  if (options.summary != nullptr) summary_ = std::make_unique<SummaryAccumulators>(options.wait_causes, options.huge_pages);
  settling_.unit_heads.assign(st_.unit_names.size(), 0);
  share_by_name_.assign(source_.share_names().size(), kNone);
  checker_.Resize(0, st_.NumUnits());
  SetTimeLimitActions(sc_.job_queue.time_limit_actions);
}

void Engine::SetTimeLimitActions(std::vector<JobStateTimeLimitAction> actions) {
  time_limit_actions_ = std::move(actions);
  time_limit_reasons_.clear();
  for (const JobStateTimeLimitAction& a : time_limit_actions_) {
    time_limit_reasons_.push_back(absl::StrCat(Sv(reasons::kTimeLimitPrefix), a.reason));
  }
}

int32_t Engine::TimeLimitActionFor(std::string_view reason) const {
  const std::string_view code = reasons::ReasonCode(reason);
  for (size_t i = 0; i < time_limit_actions_.size(); ++i) {
    if (time_limit_actions_[i].reason == code || time_limit_actions_[i].reason == reason) return static_cast<int32_t>(i);
  }
  return -1;
}

RunStats Engine::Run() {
  for (int32_t u = 0; u < st_.NumUnits(); ++u) {
    if (st_.se[u] > 0) EmitCapacity(u);
  }
  const Knobs& knobs = st_.knobs;
  auto apply_internal = [this](const Event& ev) {
    ++stats_.events_processed;
    ApplyInternalEvent(ev);
    AfterEvent();
  };
  SimTime end_time = 0;
  while (true) {
    const ScenarioEvent* next = source_.Peek();
    const bool have_sc = next != nullptr;
    const bool have_int = !events_.Empty();
    if (!have_sc && !have_int) break;
    SimTime t = have_sc ? next->time : events_.NextTime(now_);
    if (have_int && events_.NextTime(now_) < t) t = events_.NextTime(now_);
    if (knobs.horizon && t > *knobs.horizon) {
      end_time = *knobs.horizon;
      break;
    }
    now_ = t;
    end_time = t;
    if (stats_.events_processed >= next_progress_) {
      next_progress_ = stats_.events_processed + (1 << 16);
      sink_.OnProgress(now_, stats_.jobs_submitted);
    }
    bool passed = false;
    while (true) {
      for (const ScenarioEvent* ev; (ev = source_.Peek()) != nullptr && ev->time == t;) {
        ++stats_.events_processed;
        source_.Advance();  // the event stays valid until the next Peek()
        ApplyScenarioEvent(*ev);
        AfterEvent();
      }
      events_.DrainDueAt(t, apply_internal);
      if (knobs.scheduling_interval == 0 || t % knobs.scheduling_interval == 0) {
        // A pass on unchanged state changes nothing (it ended on a round
        // with no progress), so it is skipped; except with ROUND_ROBIN,
        // whose visiting order advances with every round.
        if (dirty_ || knobs.share_order == ShareOrder::kRoundRobin) {
          dirty_ = false;
          const auto start = opt_.time_passes ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
          RunPass();
          if (opt_.time_passes) {
            stats_.pass_ns +=
                std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
          }
          AfterPass();
        }
        passed = true;
      }
      if (!stats_.stopped.empty()) break;  // a preemption cycle: stop after this pass
      if (!events_.HasDueAt(t)) break;
    }
    if (!stats_.stopped.empty()) break;
    if (clock_touched_ != 0) SweepHeadClocks();
    if (opt_.wait_causes) EmitWaitCauses();
    // A batch that ran no pass may have left work for the next tick; a batch
    // that ran one has settled, so a stuck queue does not tick forever.
    if (knobs.scheduling_interval > 0 && !passed && runnable_count_ > 0 && next_tick_ <= t) {
      next_tick_ = (t / knobs.scheduling_interval + 1) * knobs.scheduling_interval;
      Push(next_tick_, EventType::kTick, kNone, 0, 0);
    }
  }
  if (opt_.check_invariants && stats_.stopped.empty()) {
    std::vector<std::string> found;
    checker_.CheckEndOfRun(st_, found);
    for (std::string& m : found) Violation(std::move(m));
  }
  stats_.end_time = end_time;
  sink_.OnEnd(end_time);
  return stats_;
}

void Engine::SweepHeadClocks() {
  if (st_.knobs.time_limit_clock != TimeLimitClock::kAtHead) {
    clock_touched_ = 0;
    return;
  }
  for (uint64_t m = clock_touched_; m != 0; m &= m - 1) {
    const int32_t s = std::countr_zero(m);
    Share& sh = st_.shares[s];
    int32_t seq = -1;
    uint32_t reason = 0;
    if (const int32_t h = sh.head; h != kNone) {
      const Job& j = st_.jobs[h];
      if (j.status == JobStatus::kRunnable && reasons::IsMisconfiguration(st_.reasons.Text(j.reason))) {
        seq = j.seq;
        reason = j.reason;
      }
    }
    if (seq == sh.clock_seq && reason == sh.clock_reason) continue;
    sh.clock_seq = seq;
    sh.clock_reason = reason;
    ++sh.clock_gen;
    if (seq < 0) continue;
    if (const int32_t i = TimeLimitActionFor(st_.reasons.Text(reason)); i >= 0) {
      Push(now_ + time_limit_actions_[static_cast<size_t>(i)].max_time_seconds * kMillisPerSecond, EventType::kTimeLimit,
           sh.head, sh.clock_gen, s + 1);
    }
  }
  clock_touched_ = 0;
}

void Engine::ApplyInternalEvent(const Event& ev) {
  if (ev.type == EventType::kTick) {
    if (next_tick_ == ev.time) next_tick_ = -1;
    return;
  }
  Job& j = st_.jobs[ev.job];
  if (summary_ != nullptr) summary_->Prefetch(ev.job);  // its miss overlaps the record's
  // STARTING and RUNNING change no capacity and no queue.
  if (ev.type != EventType::kStarting && ev.type != EventType::kRunning) dirty_ = true;
  switch (ev.type) {
    case EventType::kBecomeRunnable:
      if (j.status != JobStatus::kSubmitted || j.attempt != ev.tag) return;
      MakeRunnable(ev.job, "");
      return;
    case EventType::kStarting:
      if (j.status != JobStatus::kScheduled || j.attempt != ev.tag || j.draining) return;
      SetStatus(ev.job, JobStatus::kStarting);
      if (!st_.capacity_streak.empty()) st_.capacity_streak.erase(ev.job);  // its instances were obtained
      EmitJob(ev.job, JobStatus::kStarting, st_.reasons.Text(j.reason));
      Push(now_ + st_.Latency(j, LatencyKind::kDownload, now_), EventType::kRunning, ev.job, j.attempt, 0);
      return;
    case EventType::kRunning: {
      if (j.status != JobStatus::kStarting || j.attempt != ev.tag || j.draining) return;
      SetStatus(ev.job, JobStatus::kRunning);
      EmitJob(ev.job, JobStatus::kRunning, st_.reasons.Text(j.reason));
      // The attempt ends when it has run its time, or at its limit: Batch's
      // timeout (aux 1) or SageMaker's MaxRuntimeInSeconds (aux 2).
      const SimTime run = j.run_time;
      const int64_t limit = j.attempt_limit_s;
      if (limit >= 0 && run > limit * kMillisPerSecond) {
        Push(now_ + limit * kMillisPerSecond, EventType::kAttemptEnd, ev.job, j.attempt, j.limit_is_max_runtime ? 2 : 1);
      } else {
        Push(now_ + run, EventType::kAttemptEnd, ev.job, j.attempt, 0);
      }
      return;
    }
    case EventType::kAttemptEnd: {
      if (j.status != JobStatus::kRunning || j.attempt != ev.tag || j.draining) return;
      st_.PrefetchEnd(ev.job);  // for Finish, after Release
      Progress();
      const bool stopped = ev.aux != 0;
      Release(ev.job);
      if (!stopped && j.outcome == JobOutcome::kSucceeded) {
        Finish(ev.job, JobStatus::kSucceeded, "", false);
        return;
      }
      std::string_view why = ev.aux == 1   ? reasons::kAttemptTimeout
                             : ev.aux == 2 ? reasons::kMaxRuntimeExceeded
                                           : reasons::kSimulatedFailure;
      ++j.failed_attempts;
      if (j.failed_attempts < j.retry_attempts) {
        MakeRunnable(ev.job, why);
      } else {
        Finish(ev.job, JobStatus::kFailed, why, false);
      }
      return;
    }
    case EventType::kDrainEnd:
      if (!j.draining || j.attempt != ev.tag) return;
      EndDrain(ev.job);
      return;
    case EventType::kTimeLimit: {
      if (ev.aux > 0) {
        // A head's MISCONFIGURATION clock (aux: share + 1): still that
        // share's head with the reason it started for.
        const Share& sh = st_.shares[ev.aux - 1];
        if (sh.clock_gen != ev.tag || sh.head != ev.job || j.seq != sh.clock_seq || j.status != JobStatus::kRunnable ||
            j.reason != sh.clock_reason) {
          return;
        }
      } else if (j.status != JobStatus::kRunnable || j.reason_epoch != ev.tag) {
        return;
      }
      // The entry for the reason in the queue's current list (UpdateJobQueue
      // may have changed it since the clock started; none left: no action).
      const int32_t action = TimeLimitActionFor(st_.reasons.Text(j.reason));
      if (action < 0) return;
      RemoveFromQueue(ev.job);
      Finish(ev.job, JobStatus::kFailed, time_limit_reasons_[static_cast<size_t>(action)], false);
      return;
    }
    case EventType::kTick:
      return;
    case EventType::kCapacityError: {
      if (j.status != JobStatus::kScheduled || j.attempt != ev.tag || j.draining) return;
      // Back to RUNNABLE without using an attempt (docs/semantics.md §2,
      // "Capacity"); the time-limit clock runs from the SCHEDULED time of
      // the first of a run of capacity errors.
      const SimTime start = QsMutant(14) ? now_ : st_.capacity_streak.try_emplace(ev.job, j.dispatched_at).first->second;
      Release(ev.job);
      MakeRunnable(ev.job, reasons::kInsufficientCapacity);
      if (const int32_t i = TimeLimitActionFor(reasons::kInsufficientCapacity); i >= 0) {
        Push(std::max(now_, start + time_limit_actions_[static_cast<size_t>(i)].max_time_seconds * kMillisPerSecond),
             EventType::kTimeLimit, ev.job, j.reason_epoch, 0);
      }
      return;
    }
  }
}

// ---------------------------------------------------------------------------
// Invariants (engine/fast/invariant_checker.h)

void Engine::Violation(std::string message) {
  ++stats_.invariant_violations;
  if (stats_.violation_messages.size() < kMaxViolationMessages) {
    stats_.violation_messages.push_back(absl::StrCat("t=", FormatSeconds(now_), ": ", message));
  }
}

void Engine::ReportFound() {
  for (std::string& m : found_) Violation(std::move(m));
  found_.clear();
}

void Engine::AfterPass() {
  if (!opt_.check_invariants) return;
  AfterEvent();
  checker_.CheckDeadlines(st_, now_, found_);
  if (opt_.full_invariant_check) checker_.CheckReclaimFired(st_, found_);
  if (!found_.empty()) ReportFound();
}

absl::Status Engine::CheckInvariants() {
  std::vector<std::string> found;
  checker_.CheckLimits(st_, found);
  if (opt_.full_invariant_check) checker_.Recount(st_, found);
  if (found.empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrJoin(found, "; "));
}

}  // namespace engine_internal

engine_internal::Engine::PendingSummary engine_internal::Engine::TakeSummary() {
  PendingSummary p;
  if (summary_ == nullptr) return p;
  p.accumulators = std::move(summary_);
  for (const engine_internal::Share& sh : st_.shares) p.share_names.push_back(sh.name);
  p.unit_names.assign(st_.unit_names.begin(), st_.unit_names.end());
  p.end_time = stats_.end_time;
  p.invariant_violations = stats_.invariant_violations;
  return p;
}

namespace {

// The run's summary into RunOptions::summary, once the engine is gone: the
// waits (8 bytes a job) are ranked after the job records, name tables and
// queues were freed, so that their peak does not add to the run's.
void FinishSummary(engine_internal::Engine::PendingSummary& p, const RunOptions& options) {
  if (p.accumulators == nullptr) return;
  const std::vector<std::string_view> shares(p.share_names.begin(), p.share_names.end());
  const std::vector<std::string_view> units(p.unit_names.begin(), p.unit_names.end());
  *options.summary = p.accumulators->Finish(p.end_time, p.invariant_violations, shares, units);
}

}  // namespace

RunStats RunFastEngine(const Scenario& scenario, LogSink& sink, const RunOptions& options) {
  RunStats stats;
  engine_internal::Engine::PendingSummary summary;
  {
    engine_internal::Engine engine(scenario, sink, options);
    stats = engine.Run();
    summary = engine.TakeSummary();
  }
  FinishSummary(summary, options);
  return stats;
}

absl::StatusOr<RunStats> RunFastEngine(const EventStream& stream, LogSink& sink, const RunOptions& options) {
  absl::StatusOr<ScenarioIndex> index = IndexEventStream(stream);
  if (!index.ok()) return index.status();
  return RunFastEngine(stream, *std::move(index), sink, options);
}

absl::StatusOr<RunStats> RunFastEngine(const EventStream& stream, ScenarioIndex index, LogSink& sink,
                                       const RunOptions& options) {
  RunStats stats;
  engine_internal::Engine::PendingSummary summary;
  {
    engine_internal::Engine engine(stream, std::move(index), sink, options);
    stats = engine.Run();
    if (absl::Status st = engine.FinishStream(); !st.ok()) return st;
    summary = engine.TakeSummary();
  }
  FinishSummary(summary, options);
  return stats;
}

}  // namespace qs
