// The fast engine: see engine/engine.h for the design and docs/semantics.md
// for the rules. Every decision here has a twin in
// engine/reference/reference_engine.cc; tests demand identical logs.
#include "engine/engine.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <numeric>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/internal/mutants.h"
#include "engine/util/strings.h"
#include "engine/validation.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/task_group.h"

namespace qs {
namespace engine_internal {

namespace {

constexpr int32_t kNone = -1;
constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max() / 4;
constexpr size_t kMaxViolationMessages = 20;
constexpr size_t kRecentPreemptions = 10;
constexpr size_t kSnapshotFrontJobs = 100;

bool IsMisconfigReason(std::string_view r) { return r.rfind("MISCONFIGURATION:", 0) == 0; }

}  // namespace

// ---------------------------------------------------------------------------
// Construction

// Decodes a streamed scenario's blocks in batches: while the engine applies
// the events of one batch, a oneTBB task decodes the next (in parallel over
// its blocks when threads are free). The batches and their order do not
// depend on the thread count, and neither does anything the engine sees.
class Engine::BlockReader {
 public:
  BlockReader(const EventStream& stream, size_t batch_blocks)
      : stream_(stream), batch_(std::max<size_t>(1, batch_blocks)) {
    cur_.resize(batch_);
    next_.resize(batch_);
    next_status_.resize(batch_);
    StartDecode(0);
  }
  ~BlockReader() { tasks_.wait(); }

  // The next block's events; false at the end or on an error (status()).
  bool Next(const ScenarioEvent*& begin, const ScenarioEvent*& end) {
    while (true) {
      if (pos_ < cur_count_) {
        const std::vector<ScenarioEvent>& evs = cur_[pos_++];
        begin = evs.data();
        end = evs.data() + evs.size();
        if (begin != end) return true;
        continue;
      }
      if (next_first_ >= stream_.num_blocks() || !status_.ok()) return false;
      tasks_.wait();
      for (size_t i = 0; i < next_count_; ++i) {
        if (!next_status_[i].ok()) {
          status_ = next_status_[i];
          return false;
        }
      }
      std::swap(cur_, next_);
      cur_count_ = next_count_;
      pos_ = 0;
      StartDecode(next_first_ + next_count_);
    }
  }
  const absl::Status& status() const { return status_; }

 private:
  void StartDecode(size_t first) {
    next_first_ = first;
    next_count_ = first >= stream_.num_blocks() ? 0 : std::min(batch_, stream_.num_blocks() - first);
    if (next_count_ == 0) return;
    tasks_.run([this, first] {
      tbb::parallel_for(tbb::blocked_range<size_t>(0, next_count_, 1), [&](const tbb::blocked_range<size_t>& r) {
        for (size_t i = r.begin(); i != r.end(); ++i) next_status_[i] = stream_.ReadBlock(first + i, next_[i]);
      }, tbb::simple_partitioner());
    });
  }

  const EventStream& stream_;
  const size_t batch_;
  std::vector<std::vector<ScenarioEvent>> cur_, next_;
  std::vector<absl::Status> next_status_;
  size_t cur_count_ = 0, pos_ = 0;
  size_t next_first_ = 0, next_count_ = 0;
  absl::Status status_;
  tbb::task_group tasks_;
};

Engine::Engine(const Scenario& scenario, LogSink& sink, const RunOptions& options)
    : Engine(scenario, IndexScenario(scenario), sink, options) {
  ev_next_ = scenario.events.data();
  ev_end_ = scenario.events.data() + scenario.events.size();
}

Engine::Engine(const EventStream& stream, ScenarioIndex index, LogSink& sink, const RunOptions& options)
    : Engine(stream.head(), std::move(index), sink, options) {
  // One block per batch: the engine's thread is busy simulating, so one
  // other thread decodes, and far faster than the engine consumes; each
  // batch in memory costs a block of request objects (64Ki x ~430 bytes).
  blocks_ = std::make_unique<BlockReader>(stream, 1);
}

Engine::~Engine() = default;

void Engine::NextBlock() {
  if (!blocks_->Next(ev_next_, ev_end_)) {
    ev_next_ = ev_end_ = nullptr;
    stream_status_ = blocks_->status();
    blocks_.reset();
  }
}

Engine::Engine(const Scenario& scenario, ScenarioIndex index, LogSink& sink, const RunOptions& options)
    : sc_(scenario),
      sink_(sink),
      opt_(options),
      knobs_(options.knobs.value_or(scenario.knobs)),
      index_(std::move(index)),
      skip_settled_(options.skip_settled_shares && !knobs_.backfill) {
  // Every capacity unit the scenario can mention; ids follow name order so
  // that "units by name" is "units by id".
  unit_names_.assign(index_.units.begin(), index_.units.end());
  for (size_t i = 0; i < unit_names_.size(); ++i) unit_ids_[unit_names_[i]] = static_cast<int32_t>(i);
  const size_t nu = unit_names_.size();
  se_.assign(nu, 0);
  total_use_.assign(nu, 0);
  total_hold_.assign(nu, 0);
  unassigned_lent_.assign(nu, 0);
  borrowers_by_unit_.resize(nu);
  allow1_.assign(nu, 0);
  unit_heads_.assign(nu, 0);
  se_enabled_ = sc_.service_environment.state == Toggle::kEnabled;
  for (const CapacityLimit& l : sc_.service_environment.capacity_limits) {
    se_[UnitOf(l.capacity_unit)] = l.max_capacity;
  }
  for (const JobStateTimeLimitAction& a : sc_.job_queue.time_limit_actions) {
    time_limit_reasons_.push_back(absl::StrCat(Sv(reasons::kTimeLimitPrefix), a.reason));
  }
  jobs_.reserve(static_cast<size_t>(sc_.submit_count));
  // Name ranks give victim order its final, unique tie-break without string
  // comparisons on the hot path, and requests find jobs by rank.
  rank_job_.assign(static_cast<size_t>(index_.job_names.num_names()), kNone);
}

uint32_t Engine::ReasonId(std::string_view text) {
  if (text.empty()) return 0;
  auto it = reason_ids_.find(text);
  if (it != reason_ids_.end()) return it->second;
  // A copy: callers pass static texts, time limit reasons and request
  // fields of a streamed block alike.
  const std::string_view stable = *interned_.insert(std::string(text)).first;
  const uint32_t id = static_cast<uint32_t>(reason_texts_.size());
  reason_texts_.push_back(stable);
  reason_ids_.emplace(stable, id);
  return id;
}

int32_t Engine::UnitOf(std::string_view name) const {
  auto it = unit_ids_.find(name);
  return it == unit_ids_.end() ? kNone : it->second;
}

// ---------------------------------------------------------------------------
// Main loop

RunStats Engine::Run() {
  for (int32_t u = 0; u < NumUnits(); ++u) {
    if (se_[u] > 0) sink_.OnCapacity(CapacityRecord{0, unit_names_[u], se_[u]});
  }
  SimTime end_time = 0;
  while (true) {
    const ScenarioEvent* next = PeekScenarioEvent();
    bool have_sc = next != nullptr;
    bool have_int = HasInternalEvent();
    if (!have_sc && !have_int) break;
    SimTime t = have_sc ? next->time : NextInternalTime();
    if (have_int && NextInternalTime() < t) t = NextInternalTime();
    if (knobs_.horizon && t > *knobs_.horizon) {
      end_time = *knobs_.horizon;
      break;
    }
    now_ = t;
    end_time = t;
    bool passed = false;
    while (true) {
      for (const ScenarioEvent* ev; (ev = PeekScenarioEvent()) != nullptr && ev->time == t;) {
        ++stats_.events_processed;
        ++ev_next_;  // the event stays valid until the next PeekScenarioEvent()
        ApplyScenarioEvent(*ev);
        AfterEvent();
      }
      // Heap events at t first: they were pushed before t, so their
      // sequence numbers are lower than those pushed at t (now_events_).
      while (!queue_.empty() && queue_.top().time == t) {
        Event ev = queue_.top();
        queue_.pop();
        ++stats_.events_processed;
        ApplyInternalEvent(ev);
        AfterEvent();
      }
      // Index, not iterator: applying an event may push more at t.
      for (size_t i = 0; i < now_events_.size(); ++i) {
        const Event ev = now_events_[i];
        ++stats_.events_processed;
        ApplyInternalEvent(ev);
        AfterEvent();
      }
      now_events_.clear();
      if (knobs_.scheduling_interval == 0 || t % knobs_.scheduling_interval == 0) {
        // A pass on unchanged state changes nothing (it ended on a round
        // with no progress), so it is skipped; except with ROUND_ROBIN,
        // whose visiting order advances with every round.
        if (dirty_ || knobs_.share_order == ShareOrder::kRoundRobin) {
          dirty_ = false;
          RunPass();
          AfterPass();
        }
        passed = true;
      }
      if (!stats_.stopped.empty()) break;  // a preemption cycle: stop after this pass
      if (now_events_.empty() && (queue_.empty() || queue_.top().time != t)) break;
    }
    if (!stats_.stopped.empty()) break;
    // A batch that ran no pass may have left work for the next tick; a batch
    // that ran one has settled, so a stuck queue does not tick forever.
    if (knobs_.scheduling_interval > 0 && !passed && runnable_count_ > 0 && next_tick_ <= t) {
      next_tick_ = (t / knobs_.scheduling_interval + 1) * knobs_.scheduling_interval;
      Push(next_tick_, EventType::kTick, kNone, 0, 0);
    }
  }
  if (opt_.check_invariants && stats_.stopped.empty()) CheckEndOfRun();
  stats_.end_time = end_time;
  sink_.OnEnd(end_time);
  return stats_;
}

void Engine::Push(SimTime time, EventType type, int32_t job, uint32_t tag, int32_t aux) {
  const Event ev{time, next_seq_++, type, job, tag, aux};
  if (time == now_) {
    now_events_.push_back(ev);
  } else {
    queue_.push(ev);
  }
}

// ---------------------------------------------------------------------------
// Scenario events

void Engine::Reject(const ScenarioEvent& ev, const absl::Status& status) {
  std::string msg = ClientExceptionMessage(status);
  sink_.OnRejected(RejectedRecord{now_, ActionName(ev.request), msg, ev.path});
}

Engine::JobFactsHolder Engine::FactsOf(const std::optional<std::string>& job_id) const {
  JobFactsHolder h;
  if (!job_id) return h;
  const int32_t rank = index_.job_names.Find(*job_id);
  if (rank == JobNames::kNotFound || rank_job_[rank] == kNone) return h;
  h.id = rank_job_[rank];
  const Job& j = jobs_[h.id];
  h.facts.exists = true;
  h.facts.terminal = IsTerminal(j.status);
  h.facts.status = JobStatusName(j.status);
  return h;
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
          bool exists = r.quota_share_name && share_ids_.contains(*r.quota_share_name);
          if (absl::Status s = ValidateCreateQuotaShare(r, sc_.job_queue.name, NumShares(), exists);
              !s.ok()) {
            return Reject(ev, s);
          }
          CreateShare(r);
        } else if constexpr (std::is_same_v<T, UpdateQuotaShareRequest>) {
          int32_t s = kNone;
          if (r.quota_share_arn) {
            auto it = share_ids_.find(std::string(ShareNameFromArn(*r.quota_share_arn)));
            if (it != share_ids_.end()) s = it->second;
          }
          if (absl::Status st = ValidateUpdateQuotaShare(r, s != kNone); !st.ok()) return Reject(ev, st);
          UpdateShare(s, r);
        } else if constexpr (std::is_same_v<T, UpdateServiceEnvironmentRequest>) {
          if (absl::Status s = ValidateUpdateServiceEnvironment(r, sc_.service_environment.name);
              !s.ok()) {
            return Reject(ev, s);
          }
          UpdateEnvironment(r);
        } else if constexpr (std::is_same_v<T, GetJobQueueSnapshotRequest>) {
          if (absl::Status s = ValidateGetJobQueueSnapshot(r, sc_.job_queue.name); !s.ok()) {
            return Reject(ev, s);
          }
          EmitSnapshot();
        }
      },
      ev.request);
}

void Engine::ApplySubmit(const ScenarioEvent& ev, const SubmitServiceJobRequest& r, int64_t ordinal) {
  ShareFacts facts;
  int32_t s = kNone;
  if (r.quota_share_name) {
    auto it = share_ids_.find(*r.quota_share_name);
    if (it != share_ids_.end()) {
      s = it->second;
      facts.exists = true;
      facts.enabled = shares_[s].state == Toggle::kEnabled;
    }
  }
  if (absl::Status st = ValidateSubmit(r, sc_.job_queue.name, facts); !st.ok()) return Reject(ev, st);
  const int32_t id = static_cast<int32_t>(jobs_.size());
  jobs_.emplace_back();
  Job& j = jobs_.back();
  j.share = s;
  j.unit = UnitOf(r.instance_type);
  // The parsers keep these within int32 and validation within their ranges.
  j.n = static_cast<int32_t>(r.instance_count);
  j.priority = static_cast<int32_t>(r.scheduling_priority.value_or(0));
  j.name_rank = index_.job_names.RankOf(ordinal);  // validation rejects a submission without a name
  j.run_time = r.run_time;
  j.outcome = r.outcome;
  j.retry_attempts = static_cast<int16_t>(r.retry_attempts.value_or(1));
  j.attempt_limit_s = static_cast<int32_t>(r.attempt_duration_seconds.value_or(-1));
  j.preemption_retries = static_cast<int32_t>(r.preemption_retries.value_or(-1));
  rank_job_[j.name_rank] = id;
  ++stats_.jobs_submitted;
  ++status_count_[static_cast<int>(JobStatus::kSubmitted)];
  EmitJob(id, JobStatus::kSubmitted, "");
  Push(now_ + knobs_.submit_latency, EventType::kBecomeRunnable, id, j.attempt, 0);
}

void Engine::CreateShare(const CreateQuotaShareRequest& r) {
  const int32_t s = NumShares();
  shares_.emplace_back();
  Share& sh = shares_.back();
  sh.name = *r.quota_share_name;
  const size_t nu = unit_names_.size();
  sh.limit.assign(nu, 0);
  sh.own.assign(nu, 0);
  sh.lent.assign(nu, 0);
  sh.borrowed.assign(nu, 0);
  sh.dispatched.resize(nu);
  sh.allow2.assign(nu, 0);
  sh.allow3.assign(nu, 0);
  for (const CapacityLimit& l : *r.capacity_limits) sh.limit[UnitOf(l.capacity_unit)] = l.max_capacity;
  sh.strategy = *r.strategy;
  sh.borrow_limit = r.borrow_limit.value_or(-1);
  sh.in_share = *r.in_share_preemption;
  sh.state = r.state.value_or(Toggle::kEnabled);
  SumLimits();
  share_ids_[sh.name] = s;
  // Name ranks for the share order's last tie-break (shares are few).
  std::vector<int32_t> by_name(shares_.size());
  std::iota(by_name.begin(), by_name.end(), 0);
  std::sort(by_name.begin(), by_name.end(),
            [this](int32_t a, int32_t b) { return shares_[a].name < shares_[b].name; });
  for (size_t k = 0; k < by_name.size(); ++k) shares_[by_name[k]].name_rank = static_cast<int32_t>(k);
  lender_sets_.emplace_back(nu);  // per unit: dispatched jobs that drew from s
  touched_flag_.resize(shares_.size() * nu, 0);
  Unsettle(~uint64_t{0});
  order_dirty_ = ~uint64_t{0};  // name ranks, and a new share
  StrategyMasks();
}

void Engine::UpdateShare(int32_t s, const UpdateQuotaShareRequest& r) {
  Share& sh = shares_[s];
  if (r.capacity_limits) {
    std::fill(sh.limit.begin(), sh.limit.end(), 0);
    for (const CapacityLimit& l : *r.capacity_limits) sh.limit[UnitOf(l.capacity_unit)] = l.max_capacity;
  }
  if (r.has_resource_sharing) {
    sh.strategy = *r.strategy;
    sh.borrow_limit = r.borrow_limit.value_or(-1);
  }
  if (r.in_share_preemption) sh.in_share = *r.in_share_preemption;
  if (r.state) sh.state = *r.state;
  sh.ratio_stale = true;
  order_dirty_ |= uint64_t{1} << s;
  StrategyMasks();
  SumLimits();
  ResetAllowances();
  Unsettle(~uint64_t{0});
}

void Engine::StrategyMasks() {
  borrowers_mask_ = in_share_mask_ = 0;
  for (int32_t s = 0; s < NumShares(); ++s) {
    if (shares_[s].strategy == Strategy::kLendAndBorrow) borrowers_mask_ |= uint64_t{1} << s;
    if (shares_[s].in_share == Toggle::kEnabled) in_share_mask_ |= uint64_t{1} << s;
  }
}

void Engine::SumLimits() {
  assigned_limits_.assign(unit_names_.size(), 0);
  lendable_limits_.assign(unit_names_.size(), 0);
  for (const Share& sh : shares_) {
    for (int32_t u = 0; u < NumUnits(); ++u) {
      assigned_limits_[u] += sh.limit[u];
      if (sh.strategy != Strategy::kReserve) lendable_limits_[u] += sh.limit[u];
    }
  }
}

void Engine::UpdateEnvironment(const UpdateServiceEnvironmentRequest& r) {
  if (r.state) se_enabled_ = *r.state == Toggle::kEnabled;
  if (r.capacity_limits) {
    std::vector<int64_t> next(se_.size(), 0);
    for (const CapacityLimit& l : *r.capacity_limits) next[UnitOf(l.capacity_unit)] = l.max_capacity;
    for (int32_t u = 0; u < NumUnits(); ++u) {
      if (next[u] != se_[u]) {
        se_[u] = next[u];
        sink_.OnCapacity(CapacityRecord{now_, unit_names_[u], se_[u]});
      }
    }
  }
  ResetAllowances();
  Unsettle(~uint64_t{0});
}

// ---------------------------------------------------------------------------
// Internal events

void Engine::ApplyInternalEvent(const Event& ev) {
  if (ev.type == EventType::kTick) {
    if (next_tick_ == ev.time) next_tick_ = -1;
    return;
  }
  Job& j = jobs_[ev.job];
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
      EmitJob(ev.job, JobStatus::kStarting, ReasonText(j.reason));
      Push(now_ + knobs_.download, EventType::kRunning, ev.job, j.attempt, 0);
      return;
    case EventType::kRunning: {
      if (j.status != JobStatus::kStarting || j.attempt != ev.tag || j.draining) return;
      SetStatus(ev.job, JobStatus::kRunning);
      EmitJob(ev.job, JobStatus::kRunning, ReasonText(j.reason));
      const SimTime run = j.run_time;
      const int64_t limit = j.attempt_limit_s;
      if (limit >= 0 && run > limit * kMillisPerSecond) {
        Push(now_ + limit * kMillisPerSecond, EventType::kAttemptEnd, ev.job, j.attempt, 1);
      } else {
        Push(now_ + run, EventType::kAttemptEnd, ev.job, j.attempt, 0);
      }
      return;
    }
    case EventType::kAttemptEnd: {
      if (j.status != JobStatus::kRunning || j.attempt != ev.tag || j.draining) return;
      Progress();
      const bool timeout = ev.aux == 1;
      Release(ev.job);
      if (!timeout && j.outcome == JobOutcome::kSucceeded) {
        Finish(ev.job, JobStatus::kSucceeded, "", false);
        return;
      }
      std::string_view why = timeout ? reasons::kAttemptTimeout : reasons::kSimulatedFailure;
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
    case EventType::kTimeLimit:
      if (j.status != JobStatus::kRunnable || j.reason_epoch != ev.tag) return;
      RemoveFromQueue(ev.job);
      Finish(ev.job, JobStatus::kFailed, time_limit_reasons_[ev.aux], false);
      return;
    case EventType::kTick:
      return;
  }
}

void Engine::EndDrain(int32_t id) {
  Job& j = jobs_[id];
  const PreemptionType type = j.drain_type;
  GiveToBeneficiary(id);
  Release(id);
  j.draining = false;
  ++j.preempted_count;
  std::string_view runnable_reason =
      type == PreemptionType::kCrossShare ? reasons::kCrossSharePreempted : reasons::kInSharePreempted;
  std::vector<PreemptedAttempt>& recent = recent_[id];
  recent.insert(recent.begin(), PreemptedAttempt{j.dispatched_at, now_, runnable_reason});
  if (recent.size() > kRecentPreemptions) recent.pop_back();
  const int32_t retries = j.preemption_retries;
  if (retries >= 0 && j.preempted_count > retries - (QsMutant(6) ? 1 : 0)) {
    Finish(id, JobStatus::kFailed, reasons::kPreemptionRetriesExhausted, true);
  } else {
    MakeRunnable(id, runnable_reason, true);
  }
}

// Moves a releasing victim's instances into its beneficiary's hold.
void Engine::GiveToBeneficiary(int32_t id) {
  Job& v = jobs_[id];
  if (!v.draining || v.beneficiary == kNone) return;
  Job& b = jobs_[v.beneficiary];
  if (b.status == JobStatus::kRunnable && b.res_epoch == v.beneficiary_epoch) {
    UnitChanged(b.unit);  // its hold and pending victims
    if (b.pending_victims > 0) --b.pending_victims;
    const int64_t add = std::min<int64_t>(v.n, b.n - b.hold);
    if (add > 0) {
      b.hold += static_cast<int32_t>(add);
      total_hold_[b.unit] += add;
    }
  }
  v.beneficiary = kNone;
}

void Engine::Terminate(int32_t id, std::string_view reason) {
  Job& j = jobs_[id];
  if (IsDispatched(j.status)) {
    GiveToBeneficiary(id);
    Release(id);
    j.draining = false;
  } else if (j.status == JobStatus::kRunnable) {
    RemoveFromQueue(id);
    if (QsMutant(8)) return;
  }
  Finish(id, JobStatus::kFailed, reason, false);
}

// ---------------------------------------------------------------------------
// Job state changes

void Engine::SetStatus(int32_t id, JobStatus st) {
  Job& j = jobs_[id];
  if (IsTerminal(j.status)) {
    Violation(absl::StrCat("invariant 4: terminal job ", Sv(NameOf(j)), " changed to ",
                           JobStatusName(st)));
  }
  --status_count_[static_cast<int>(j.status)];
  ++status_count_[static_cast<int>(st)];
  if (j.status == JobStatus::kRunnable) --runnable_count_;
  if (st == JobStatus::kRunnable) ++runnable_count_;
  j.status = st;
}

void Engine::MakeRunnable(int32_t id, std::string_view reason, bool with_summary) {
  Job& j = jobs_[id];
  ++j.attempt;
  SetStatus(id, JobStatus::kRunnable);
  j.reason = ReasonId(reason);
  ++j.reason_epoch;
  j.runnable_since = now_;
  shares_[j.share].queue.insert(QueueKey{-j.priority, id});
  QueueChanged(j.share, id);
  EmitJob(id, JobStatus::kRunnable, reason, with_summary);
}

void Engine::Finish(int32_t id, JobStatus st, std::string_view reason, bool with_summary) {
  Progress();
  Job& j = jobs_[id];
  DropReservation(id);
  ++j.attempt;
  SetStatus(id, st);
  j.reason = ReasonId(reason);
  ++j.reason_epoch;
  EmitJob(id, st, reason, with_summary);
}

void Engine::SetReason(int32_t id, std::string_view reason) {
  Job& j = jobs_[id];
  j.reason = ReasonId(reason);
  ++j.reason_epoch;
  EmitJob(id, j.status, reason);
  if (!IsMisconfigReason(reason)) return;
  const std::string_view code = reasons::ReasonCode(reason);
  const std::vector<JobStateTimeLimitAction>& actions = sc_.job_queue.time_limit_actions;
  for (size_t i = 0; i < actions.size(); ++i) {
    if (actions[i].reason == code || actions[i].reason == reason) {
      Push(now_ + actions[i].max_time_seconds * kMillisPerSecond, EventType::kTimeLimit, id,
           j.reason_epoch, static_cast<int32_t>(i));
      break;
    }
  }
}

void Engine::SetPriority(int32_t id, int32_t priority) {
  Job& j = jobs_[id];
  if (j.priority == priority) return;
  const bool queued = j.status == JobStatus::kRunnable;
  const bool candidate = IsDispatched(j.status) && !j.draining;
  if (queued) shares_[j.share].queue.erase(QueueKey{-j.priority, id});
  if (candidate) RemoveCandidate(id);
  j.priority = priority;
  if (queued) {
    shares_[j.share].queue.insert(QueueKey{-j.priority, id});
    QueueChanged(j.share, id);
  }
  if (candidate) AddCandidate(id);
}

void Engine::RemoveFromQueue(int32_t id) {
  Job& j = jobs_[id];
  shares_[j.share].queue.erase(QueueKey{-j.priority, id});
  QueueChanged(j.share, id);
}

void Engine::DropReservation(int32_t id) {
  Job& j = jobs_[id];
  if (j.hold == 0 && j.pending_victims == 0) return;
  UnitChanged(j.unit);
  total_hold_[j.unit] -= j.hold;
  j.hold = 0;
  j.pending_victims = 0;
  ++j.res_epoch;
  round_dropped_ = true;  // capacity others may use appeared mid-pass
  Share& sh = shares_[j.share];
  if (sh.res_job == id) {
    sh.res_job = kNone;
    with_res_ &= ~(uint64_t{1} << j.share);
  }
}

// ---------------------------------------------------------------------------
// Accounting

int64_t Engine::BorrowCap(const Share& sh, int32_t u) const {
  if (sh.strategy != Strategy::kLendAndBorrow) return 0;
  if (sh.borrow_limit < 0) return kUnlimited;
  return sh.limit[u] * sh.borrow_limit / 100;
}

int64_t Engine::ToBorrow(int32_t s, const Job& j) const {
  return j.n - std::max<int64_t>(0, std::min<int64_t>(j.n, Headroom(s, j.unit)));
}

bool Engine::BorrowCapRefuses(int32_t s, int32_t u, int64_t b) const {
  const Share& sh = shares_[s];
  const int64_t cap = BorrowCap(sh, u);
  return cap != kUnlimited && sh.borrowed[u] + b > cap + (QsMutant(1) ? 1 : 0);
}

int64_t Engine::Idle(int32_t t, int32_t u, int64_t extra) const {
  if (t == UnassignedLender()) {
    return std::max<int64_t>(0, se_[u] - assigned_limits_[u] - unassigned_lent_[u] + extra);
  }
  const Share& sh = shares_[t];
  if (sh.strategy == Strategy::kReserve && !QsMutant(2)) return 0;
  if (sh.res_job != kNone && jobs_[sh.res_job].unit == u) return 0;
  return std::max<int64_t>(0, Headroom(t, u) + extra);
}

void Engine::Dispatch(int32_t id, int64_t own, const std::vector<Part>& parts) {
  Job& j = jobs_[id];
  DropReservation(id);
  RemoveFromQueue(id);
  Share& sh = shares_[j.share];
  j.own = static_cast<int32_t>(own);  // <= n
  j.has_parts = !parts.empty();
  if (j.has_parts) parts_[id] = parts;
  j.borrowed_total = 0;
  for (const Part& p : parts) {
    j.borrowed_total += static_cast<int32_t>(p.qty);  // parts sum to at most n
    if (p.lender == UnassignedLender()) {
      unassigned_lent_[j.unit] += p.qty;
    } else {
      shares_[p.lender].lent[j.unit] += p.qty;
      Touch(p.lender, j.unit, /*lending=*/true);
    }
  }
  Touch(j.share, j.unit);
  sh.own[j.unit] += own;
  sh.borrowed[j.unit] += j.borrowed_total;
  total_use_[j.unit] += j.n;
  ++j.attempt;
  j.dispatched_at = now_;
  SetStatus(id, JobStatus::kScheduled);
  j.reason = 0;
  ++j.reason_epoch;
  AddCandidate(id);
  EmitJob(id, JobStatus::kScheduled, "");
  Push(now_ + knobs_.provision, EventType::kStarting, id, j.attempt, 0);
}

void Engine::Release(int32_t id) {
  Job& j = jobs_[id];
  if (!j.draining) RemoveCandidate(id);
  Share& sh = shares_[j.share];
  for (const Part& p : PartsOf(j)) {
    if (p.lender == UnassignedLender()) {
      unassigned_lent_[j.unit] -= p.qty;
    } else {
      shares_[p.lender].lent[j.unit] -= p.qty;
      Touch(p.lender, j.unit, /*lending=*/true);
    }
  }
  Touch(j.share, j.unit);
  sh.own[j.unit] -= j.own;
  sh.borrowed[j.unit] -= j.borrowed_total;
  total_use_[j.unit] -= j.n;
  j.own = 0;
  j.borrowed_total = 0;
  if (j.has_parts) {
    parts_.erase(id);
    j.has_parts = false;
  }
}

Engine::VictimKey Engine::KeyOf(int32_t id) const {
  const Job& j = jobs_[id];
  if (knobs_.victim_order == VictimOrder::kMostBorrowedFirst) {
    return VictimKey{-j.borrowed_total, j.priority, -j.dispatched_at, j.name_rank, id};
  }
  return VictimKey{j.priority, -j.dispatched_at, -j.borrowed_total, j.name_rank, id};
}

void Engine::AddCandidate(int32_t id) {
  const Job& j = jobs_[id];
  const VictimKey k = KeyOf(id);
  UnitChanged(j.unit);
  OwnChanged(j.share);
  shares_[j.share].dispatched[j.unit].insert(k);
  if (j.borrowed_total > 0) borrowers_by_unit_[j.unit].insert(k);
  for (const Part& p : PartsOf(j)) {
    if (p.lender != UnassignedLender()) lender_sets_[p.lender][j.unit].insert(k);
  }
}

void Engine::RemoveCandidate(int32_t id) {
  const Job& j = jobs_[id];
  const VictimKey k = KeyOf(id);
  UnitChanged(j.unit);
  OwnChanged(j.share);
  shares_[j.share].dispatched[j.unit].erase(k);
  if (j.borrowed_total > 0) borrowers_by_unit_[j.unit].erase(k);
  for (const Part& p : PartsOf(j)) {
    if (p.lender != UnassignedLender()) lender_sets_[p.lender][j.unit].erase(k);
  }
}

// ---------------------------------------------------------------------------
// The pass

void Engine::QueueChanged(int32_t s, int32_t id) {
  Share& sh = shares_[s];
  const int32_t old_head = sh.head;
  const int32_t new_head = sh.queue.empty() ? kNone : sh.queue.begin()->id;
  if (old_head != new_head) {
    const uint64_t bit = uint64_t{1} << s;
    if (old_head != kNone && jobs_[old_head].unit != kNone) unit_heads_[jobs_[old_head].unit] &= ~bit;
    if (new_head != kNone && jobs_[new_head].unit != kNone) unit_heads_[jobs_[new_head].unit] |= bit;
    with_head_ = new_head != kNone ? with_head_ | bit : with_head_ & ~bit;
    sh.head = new_head;
    order_dirty_ |= bit;
  }
  // Jobs behind an unchanged head are not read by a look (no backfill).
  if (old_head == id || new_head == id) Unsettle(uint64_t{1} << s);
}

bool Engine::Waiting(int32_t s) const {
  const int32_t h = Head(s);
  return h != kNone && jobs_[h].pending_victims > 0;
}

std::string_view Engine::NeverFitsReason(int32_t s, const Job& j) const {
  const Share& sh = shares_[s];
  const int32_t u = j.unit;
  if (u == kNone || j.n > se_[u]) return reasons::kSeMaxResource;
  const int64_t l = sh.limit[u];
  if (sh.strategy != Strategy::kLendAndBorrow) {
    return j.n > l ? reasons::kQuotaLimitExceeded : std::string_view();
  }
  const int64_t b = BorrowCap(sh, u);
  if (b != kUnlimited && j.n > l + b) return reasons::kQuotaAndBorrowLimitExceeded;
  if (j.n > l) {
    // The other shares' lendable limits (sums kept by SumLimits()).
    int64_t lendable = lendable_limits_[u] - (sh.strategy != Strategy::kReserve ? l : 0);
    if (knobs_.unassigned_capacity == UnassignedCapacity::kLendable) {
      lendable += std::max<int64_t>(0, se_[u] - assigned_limits_[u]);
    }
    if (j.n - l > lendable) return reasons::kBorrowExceedsConfigured;
  }
  return {};
}

bool Engine::LookAt(int32_t s, int32_t id) {
  Job& j = jobs_[id];
  std::string_view never = NeverFitsReason(s, j);
  if (!never.empty()) {
    if (ReasonText(j.reason) != never) SetReason(id, never);
    DropReservation(id);
    return false;
  }
  if (IsMisconfigReason(ReasonText(j.reason))) SetReason(id, "");
  return true;
}

void Engine::ComputeOrder() {
  const int32_t ns = NumShares();
  const uint64_t round = round_counter_++;
  // UNDER_LIMIT_FIRST starts from the last round's order: its sort key below
  // is a strict total order (name ranks are unique), so the result does not
  // depend on it, and an insertion sort of a nearly sorted order is linear.
  if (knobs_.share_order != ShareOrder::kUnderLimitFirst || order_.size() != static_cast<size_t>(ns)) {
    order_.resize(static_cast<size_t>(ns));
    for (int32_t s = 0; s < ns; ++s) order_[s] = s;
  }
  if (ns == 0) return;
  switch (knobs_.share_order) {
    case ShareOrder::kDeclaration:
      return;
    case ShareOrder::kRoundRobin:
      std::rotate(order_.begin(), order_.begin() + static_cast<int64_t>(round % static_cast<uint64_t>(ns)),
                  order_.end());
      return;
    case ShareOrder::kUnderLimitFirst:
      break;
  }
  // r(s) = max_u Use/L as an exact fraction (num, den); den 0 = infinite.
  // The sort keys are kept between rounds, so that the comparisons are
  // integer only (no name compares, no B-tree lookups), and recomputed for
  // the shares whose use, limits or head changed since (order_dirty_); with
  // none, the order stands.
  if (order_dirty_ == 0) return;
  order_keys_.resize(static_cast<size_t>(ns));
  for (uint64_t dirty = order_dirty_; dirty != 0; dirty &= dirty - 1) {
    const int32_t s = std::countr_zero(dirty);
    if (s >= ns) break;
    Share& sh = shares_[s];
    if (sh.ratio_stale) {
      sh.ratio_stale = false;
      int64_t num = 0, den = 1;
      for (int32_t u = 0; u < NumUnits(); ++u) {
        const int64_t use = sh.own[u] + sh.borrowed[u];
        if (sh.limit[u] == 0) {
          if (use > 0) num = 1, den = 0;
          if (den == 0) break;
          continue;
        }
        if (use * den > num * sh.limit[u]) num = use, den = sh.limit[u];
      }
      sh.ratio_num = num;
      sh.ratio_den = den;
    }
    OrderKey& k = order_keys_[s];
    k.num = sh.ratio_num;
    k.den = sh.ratio_den;
    const int32_t h = Head(s);
    k.head = h == kNone ? std::numeric_limits<int32_t>::max() : h;  // shares with a head first
    k.name_rank = sh.name_rank;
  }
  order_dirty_ = 0;
  auto less = [this](int32_t a, int32_t b) {
    const OrderKey& x = order_keys_[a];
    const OrderKey& y = order_keys_[b];
    if (x.den == 0 || y.den == 0) {
      if ((x.den == 0) != (y.den == 0)) return x.den != 0;
    } else if (const int64_t l = x.num * y.den, r = y.num * x.den; l != r) {
      return l < r;
    }
    // Equal ratios: the older head first (job ids follow (createdAt,
    // submission)), then the share name.
    if (x.head != y.head) return x.head < y.head;
    return x.name_rank < y.name_rank;
  };
  // Insertion sort: a queue holds at most kMaxQuotaShares (20) shares.
  static_assert(kMaxQuotaShares <= 64, "insertion sort of the share order assumes few shares");
  for (size_t i = 1; i < order_.size(); ++i) {
    const int32_t v = order_[i];
    size_t k = i;
    for (; k > 0 && less(v, order_[k - 1]); --k) order_[k] = order_[k - 1];
    order_[k] = v;
  }
}

void Engine::RunPass() {
  ++stats_.passes;
  if (!se_enabled_) return;
  for (uint64_t m = with_res_; m != 0; m &= m - 1) {
    const int32_t s = std::countr_zero(m);
    const int32_t r = shares_[s].res_job;
    if (r != kNone && (jobs_[r].status != JobStatus::kRunnable || Head(s) != r)) DropReservation(r);
  }
  blocked_.assign(static_cast<size_t>(NumShares()), 0);
  while (true) {
    if (skip_settled_ && (unsettled_ & with_head_) == 0) {
      // Every share is settled or has no head: the round would do nothing.
      ++round_counter_;
      break;
    }
    bool progress = false;
    round_dropped_ = false;
    ComputeOrder();
    // The masks skip shares each phase would return from at once (no head;
    // not LEND_AND_BORROW; in-share preemption off), read at each share's turn.
    for (int32_t s : order_) {
      if ((with_head_ >> s) & 1) progress |= Phase1(s);
    }
    progress |= Phase2();
    for (int32_t s : order_) {
      if (((with_head_ & in_share_mask_) >> s) & 1) progress |= Phase3(s);
    }
    // A share looked at in phase 1 and not unsettled since did nothing in
    // phases 1-3 on what it read (anything it did would have unsettled it):
    // settled until that changes.
    unsettled_ &= ~fresh_;
    for (uint64_t m = fresh_; m != 0; m &= m - 1) {
      const int32_t s = std::countr_zero(m);
      if (SelfBound(s)) self_bound_ |= uint64_t{1} << s;
    }
    fresh_ = 0;
    if (!progress && !round_dropped_) break;
  }
}

bool Engine::SelfBound(int32_t s) const {
  const int32_t id = Head(s);
  if (id == kNone) return false;
  const Job& j = jobs_[id];
  const Share& sh = shares_[s];
  const int32_t u = j.unit;
  if (u == kNone || j.hold != 0 || j.pending_victims != 0 || sh.res_job != kNone) return false;
  // Phase 1 dispatches or reclaims only within the share's own limit.
  if (sh.own[u] + j.n <= sh.limit[u]) return false;
  // Phase 2: TryBorrow's cap check reads only the share (and fails whatever
  // the free capacity it checks first).
  if (sh.strategy == Strategy::kLendAndBorrow && !BorrowCapRefuses(s, u, ToBorrow(s, j))) return false;
  // Phase 3: no candidate of lower priority (the first is the lowest only
  // in PRIORITY_THEN_NEWEST order).
  if (sh.in_share == Toggle::kEnabled) {
    const absl::btree_set<VictimKey>& d = sh.dispatched[u];
    if (knobs_.victim_order != VictimOrder::kPriorityThenNewest) return false;
    if (!d.empty() && jobs_[d.begin()->id].priority < j.priority) return false;
  }
  return true;
}

bool Engine::Phase1(int32_t s) {
  if (blocked_[s] || Settled(s)) return false;
  fresh_ |= uint64_t{1} << s;
  bool progress = false;
  while (true) {
    const int32_t id = Head(s);
    if (id == kNone) return progress;
    if (!LookAt(s, id)) {
      if (QsMutant(7)) {
        progress |= Backfill(s);
        return progress;
      }
      blocked_[s] = 1;
      if (knobs_.backfill) progress |= Backfill(s);
      return progress;
    }
    const Job& j = jobs_[id];
    const Share& sh = shares_[s];
    const int32_t u = j.unit;
    if (sh.own[u] + j.n <= sh.limit[u]) {
      if (Headroom(s, u) >= j.n && FreeFor(id) >= j.n) {
        Dispatch(id, j.n, {});
        progress = true;
        continue;
      }
      if (j.pending_victims > 0) return progress;  // waiting
      if (TryReclaim(s, id)) return true;
    }
    if (knobs_.backfill) progress |= Backfill(s);
    return progress;
  }
}

bool Engine::Backfill(int32_t s) {
  std::vector<int32_t> later;
  auto it = shares_[s].queue.begin();
  if (it == shares_[s].queue.end()) return false;
  // A head holding a reservation counts on the share's own headroom too.
  if (const Job& head = jobs_[it->id]; head.hold > 0 || head.pending_victims > 0) return false;
  for (++it; it != shares_[s].queue.end(); ++it) later.push_back(it->id);
  bool progress = false;
  for (int32_t id : later) {
    if (!LookAt(s, id)) continue;
    const Job& j = jobs_[id];
    const Share& sh = shares_[s];
    if (sh.own[j.unit] + j.n <= sh.limit[j.unit] && Headroom(s, j.unit) >= j.n && FreeFor(id) >= j.n) {
      Dispatch(id, j.n, {});
      progress = true;
    }
  }
  return progress;
}

// A head found never-fitting in phase 2 or 3 blocks its share for the rest
// of the pass without the backfill phase 1 would have run behind it. The
// next pass does run that backfill (it may set later jobs' reasons or
// dispatch them), so that pass must not be skipped as "nothing changed"
// (found by the differential test, seed 9157 of 10,000).
void Engine::BlockOutsidePhase1(int32_t s) {
  blocked_[s] = 1;
  if (knobs_.backfill) dirty_ = true;
}

bool Engine::Phase2Eligible(int32_t s) {
  const Share& sh = shares_[s];
  if (sh.strategy != Strategy::kLendAndBorrow || blocked_[s] || Waiting(s)) return false;
  const int32_t id = Head(s);
  if (id == kNone) return false;
  if (!LookAt(s, id)) {
    BlockOutsidePhase1(s);
    return false;
  }
  return Headroom(s, jobs_[id].unit) < jobs_[id].n;
}

bool Engine::Phase2() {
  // Every borrower with a head settled: the loop below would only read their
  // eligibility bits and skip each at its turn (only a borrow unsettles).
  if (skip_settled_ && (with_head_ & borrowers_mask_ & unsettled_) == 0) return false;
  // A min-heap of (job id, share): oldest (createdAt, submission) first.
  std::vector<std::pair<int32_t, int32_t>>& heads = phase2_heads_;
  heads.clear();
  for (int32_t s : order_) {
    if ((((with_head_ & borrowers_mask_) >> s) & 1) == 0) continue;  // not eligible
    // A settled share's eligibility is what it was when it settled (it was
    // judged in that round, on what it still reads).
    const uint64_t bit = uint64_t{1} << s;
    bool eligible;
    if (Settled(s)) {
      eligible = (eligible2_ & bit) != 0;
    } else {
      eligible = Phase2Eligible(s);
      eligible2_ = eligible ? eligible2_ | bit : eligible2_ & ~bit;
    }
    if (eligible) heads.push_back({Head(s), s});
  }
  std::make_heap(heads.begin(), heads.end(), std::greater<>());
  bool progress = false;
  while (!heads.empty()) {
    std::pop_heap(heads.begin(), heads.end(), std::greater<>());
    const auto [id, s] = heads.back();
    heads.pop_back();
    // Eligibility is judged when the heads are gathered, the borrow later:
    // a share is skipped if it is settled when its turn comes, i.e. if the
    // borrow would read what it already failed on.
    if (!Settled(s) && TryBorrow(s, id)) {
      progress = true;
      if (Phase2Eligible(s)) {
        heads.push_back({Head(s), s});
        std::push_heap(heads.begin(), heads.end(), std::greater<>());
      }
    }
  }
  return progress;
}

bool Engine::TryBorrow(int32_t s, int32_t id) {
  const Job& j = jobs_[id];
  const int32_t u = j.unit;
  const int64_t b = ToBorrow(s, j);
  const int64_t a = j.n - b;
  if (FreeFor(id) < j.n) return false;
  if (BorrowCapRefuses(s, u, b)) return false;
  std::vector<Lender>& lenders = lenders_scratch_;
  lenders.clear();
  int64_t total = 0;
  for (int32_t t = 0; t < NumShares(); ++t) {
    if (t == s) continue;
    const int64_t idle = Idle(t, u, 0);
    if (idle > 0) {
      lenders.push_back({idle, t});
      total += idle;
    }
  }
  if (knobs_.unassigned_capacity == UnassignedCapacity::kLendable) {
    const int64_t idle = Idle(UnassignedLender(), u, 0);
    if (idle > 0) {
      lenders.push_back({idle, UnassignedLender()});
      total += idle;
    }
  }
  if (total < b) return false;
  std::sort(lenders.begin(), lenders.end(), [&](const Lender& x, const Lender& y) {
    if (x.idle != y.idle) return x.idle > y.idle;
    return LenderName(x.who) < LenderName(y.who);
  });
  std::vector<Part> parts;
  int64_t left = b;
  for (const Lender& l : lenders) {
    if (left == 0) break;
    const int64_t take = std::min(l.idle, left);
    parts.push_back(Part{l.who, take});
    left -= take;
  }
  Dispatch(id, a, parts);
  return true;
}

std::string_view Engine::LenderName(int32_t t) const {
  return t == UnassignedLender() ? kUnassignedLenderName : std::string_view(shares_[t].name);
}

// --- Victim selection -------------------------------------------------------

// `next()` yields the candidates in victim order, kNone at the end. They are
// drawn only until the head fits, so a preemption looks at the victims it
// takes, not at every dispatched job (the walk is complete only when even all
// candidates are not enough).
template <typename Next, typename Fits>
std::vector<int32_t> Engine::ChooseVictims(Next&& next, Gains& g, const Fits& fits) {
  std::vector<int32_t> marked;
  bool ok = false;
  for (int32_t v = next(); v != kNone; v = next()) {
    AddGain(g, v, +1);
    marked.push_back(v);
    if (fits(g)) {
      ok = true;
      break;
    }
  }
  if (!ok) return {};
  for (int64_t i = static_cast<int64_t>(marked.size()) - 2; i >= 0 && !QsMutant(4); --i) {
    AddGain(g, marked[static_cast<size_t>(i)], -1);
    if (fits(g)) {
      marked.erase(marked.begin() + i);
    } else {
      AddGain(g, marked[static_cast<size_t>(i)], +1);
    }
  }
  return marked;
}

void Engine::AddGain(Gains& g, int32_t v, int64_t sign) {
  const Job& j = jobs_[v];
  g.n += sign * j.n;
  g.own += sign * j.own;
  g.borrowed += sign * j.borrowed_total;
  for (const Part& p : PartsOf(j)) g.from[static_cast<size_t>(p.lender == UnassignedLender() ? NumShares() : p.lender)] += sign * p.qty;
}

bool Engine::TryReclaim(int32_t s, int32_t id) {
  std::vector<int32_t> victims = CrossShareVictims(s, id);
  if (victims.empty()) return false;
  const Job& j = jobs_[id];
  if (opt_.check_invariants && Headroom(s, j.unit) >= j.n && FreeFor(id) >= j.n) {
    Violation(absl::StrCat("invariant 6: cross-share preemption for ", Sv(NameOf(j)),
                           " although it fits without"));
  }
  StartPreemption(id, victims, PreemptionType::kCrossShare);
  return true;
}

std::vector<int32_t> Engine::CrossShareVictims(int32_t s, int32_t id) {
  const Job& j = jobs_[id];
  const int32_t u = j.unit;
  const int64_t h = Headroom(s, u);
  const int64_t free = FreeFor(id);
  Gains g(static_cast<size_t>(NumShares()) + 1);
  auto fits = [&](const Gains& x) { return h + x.from[static_cast<size_t>(s)] >= j.n && free + x.n >= j.n; };
  // Group A: jobs of other shares holding u borrowed from s, in victim order.
  const absl::btree_set<VictimKey>& group_a = lender_sets_[s][u];
  auto a_it = group_a.begin();
  std::vector<int32_t> victims = ChooseVictims(
      [&] { return a_it == group_a.end() ? kNone : (a_it++)->id; }, g, fits);
  if (victims.empty()) {
    // Walk A then B (one list, so that fill-back sees both groups). Group B,
    // in victim order: other shares' jobs borrowing u, not from s, merged
    // with the non-borrowing jobs on u of other shares over their limit.
    // Each source is a B-tree in victim order; the merge draws lazily.
    struct Source {
      absl::btree_set<VictimKey>::const_iterator it, end;
      bool borrowers;  // borrowers_by_unit_: skip s's jobs and those drawing from s
    };
    std::vector<Source> sources;
    sources.push_back({borrowers_by_unit_[u].begin(), borrowers_by_unit_[u].end(), true});
    for (int32_t t = 0; t < NumShares(); ++t) {
      if (t == s || shares_[t].own[u] <= shares_[t].limit[u]) continue;
      sources.push_back({shares_[t].dispatched[u].begin(), shares_[t].dispatched[u].end(), false});
    }
    auto skip = [&](Source& src) {  // to the next job of group B in this source
      for (; src.it != src.end; ++src.it) {
        const Job& v = jobs_[src.it->id];
        if (!src.borrowers) {
          if (v.borrowed_total == 0) return;
          continue;
        }
        if (v.share == s) continue;
        bool from_s = false;
        for (const Part& p : PartsOf(v)) from_s |= p.lender == s;
        if (!from_s) return;
      }
    };
    for (Source& src : sources) skip(src);
    a_it = group_a.begin();  // all of A (not enough alone), then B
    auto next = [&]() -> int32_t {
      if (a_it != group_a.end()) return (a_it++)->id;
      Source* best = nullptr;
      for (Source& src : sources) {
        if (src.it != src.end && (best == nullptr || *src.it < *best->it)) best = &src;
      }
      if (best == nullptr) return kNone;
      const int32_t v = best->it->id;
      ++best->it;
      skip(*best);
      return v;
    };
    bool any_b = false;
    for (const Source& src : sources) any_b |= src.it != src.end;
    if (!any_b) return {};
    Gains g2(static_cast<size_t>(NumShares()) + 1);
    victims = ChooseVictims(next, g2, fits);
  }
  return victims;
}

bool Engine::Phase3(int32_t s) {
  const Share& sh = shares_[s];
  if (blocked_[s] || sh.in_share != Toggle::kEnabled || Settled(s) || Waiting(s)) return false;
  const int32_t id = Head(s);
  if (id == kNone) return false;
  if (!LookAt(s, id)) {
    BlockOutsidePhase1(s);
    return false;
  }
  std::vector<int32_t> victims = InShareVictims(s, id);
  if (victims.empty()) return false;
  StartPreemption(id, victims, PreemptionType::kInShare);
  return true;
}

std::vector<int32_t> Engine::InShareVictims(int32_t s, int32_t id) {
  const Share& sh = shares_[s];
  const Job& j = jobs_[id];
  const int32_t u = j.unit;
  // Candidates: the share's dispatched jobs on u of lower priority, in victim
  // order, drawn lazily from the B-tree.
  const absl::btree_set<VictimKey>& dispatched = sh.dispatched[u];
  auto it = dispatched.begin();
  auto next = [&]() -> int32_t {
    for (; it != dispatched.end(); ++it) {
      if (jobs_[it->id].priority < j.priority) return (it++)->id;
      if (knobs_.victim_order == VictimOrder::kPriorityThenNewest) {
        it = dispatched.end();  // sorted by priority: no lower one follows
        break;
      }
    }
    return kNone;
  };
  const int64_t own = sh.own[u], h = Headroom(s, u), free = FreeFor(id), borrowed = sh.borrowed[u];
  const int64_t l = sh.limit[u], cap = BorrowCap(sh, u);
  const bool can_borrow = sh.strategy == Strategy::kLendAndBorrow;
  auto fits = [&](const Gains& x) {
    const int64_t own2 = own - x.own, h2 = h + x.own, free2 = free + x.n;
    if (free2 < j.n) return false;
    if (own2 + j.n <= l && h2 >= j.n) return true;
    if (!can_borrow) return false;
    const int64_t a = std::max<int64_t>(0, std::min<int64_t>(j.n, h2));
    const int64_t b = j.n - a;
    if (cap != kUnlimited && borrowed - x.borrowed + b > cap) return false;
    int64_t idle = 0;
    for (int32_t t = 0; t < NumShares(); ++t) {
      if (t != s) idle += Idle(t, u, x.from[static_cast<size_t>(t)]);
    }
    if (knobs_.unassigned_capacity == UnassignedCapacity::kLendable) {
      idle += Idle(UnassignedLender(), u, x.from[static_cast<size_t>(NumShares())]);
    }
    return idle >= b;
  };
  Gains g(static_cast<size_t>(NumShares()) + 1);
  // Capacity freed by a reservation dropped earlier in this round: the head
  // starts in the next round without preempting anyone.
  if (fits(g)) return {};
  return ChooseVictims(next, g, fits);
}

void Engine::StartPreemption(int32_t id, const std::vector<int32_t>& victims, PreemptionType type) {
  Job& j = jobs_[id];
  int64_t nv = 0;
  for (int32_t v : victims) nv += jobs_[v].n;
  for (int32_t vid : victims) {
    Job& v = jobs_[vid];
    RemoveCandidate(vid);
    if (QsMutant(5)) {
      v.draining = true;  // Release() must not look for it in the candidate sets
      Release(vid);
    }
    v.draining = true;
    v.drain_type = type;
    v.beneficiary = id;
    v.beneficiary_epoch = j.res_epoch;
    ++v.attempt;  // cancels its pending STARTING / RUNNING / attempt end
    v.reason = ReasonId(type == PreemptionType::kCrossShare ? reasons::kCrossShareInProgress
                                                            : reasons::kInShareInProgress);
    ++v.reason_epoch;
    JobRecord r = BaseRecord(vid, v.status, ReasonText(v.reason));
    r.preemption = type;
    r.preempted_for = NameOf(j);
    r.preempted_for_slot = id;
    sink_.OnJob(r);
    Push(now_ + knobs_.preemption_drain, EventType::kDrainEnd, vid, v.attempt, 0);
    if (opt_.cycle_preemptions > 0 && ++streak_[vid] == opt_.cycle_preemptions && stats_.stopped.empty()) {
      stats_.stopped = PreemptionCycleMessage(now_, NameOf(v), shares_[v.share].name, opt_.cycle_preemptions);
    }
  }
  UnitChanged(j.unit);
  total_hold_[j.unit] -= j.hold;
  j.hold = static_cast<int32_t>(std::max<int64_t>(0, j.n - nv));
  total_hold_[j.unit] += j.hold;
  j.pending_victims = static_cast<int32_t>(victims.size());
  shares_[j.share].res_job = id;
  with_res_ |= uint64_t{1} << j.share;
  if (opt_.check_invariants && type == PreemptionType::kCrossShare) {
    const SimTime interval = knobs_.scheduling_interval;
    reclaim_deadlines_.push_back(
        ReclaimDeadline{id, j.res_epoch, now_ + knobs_.preemption_drain + interval});
  }
}

// ---------------------------------------------------------------------------
// Log records

JobRecord Engine::BaseRecord(int32_t id, JobStatus st, std::string_view reason) const {
  const Job& j = jobs_[id];
  JobRecord r;
  r.time = now_;
  r.job_name = NameOf(j);
  r.job_slot = id;
  r.share_name = shares_[j.share].name;
  r.status = st;
  r.status_reason = reason;
  return r;
}

void Engine::EmitJob(int32_t id, JobStatus st, std::string_view reason, bool with_summary) {
  const Job& j = jobs_[id];
  JobRecord r = BaseRecord(id, st, reason);
  if (st == JobStatus::kScheduled) {
    r.has_usage = true;
    r.capacity_unit = unit_names_[j.unit];
    r.quantity = j.n;
    borrowed_scratch_.clear();
    for (const Part& p : PartsOf(j)) {
      borrowed_scratch_.push_back(BorrowedPart{LenderName(p.lender), unit_names_[j.unit], p.qty});
    }
    r.borrowed = borrowed_scratch_;
  }
  if (with_summary) {
    r.has_preemption_summary = true;
    r.preempted_attempt_count = j.preempted_count;
    r.recent_preempted_attempts = RecentOf(j);
  }
  sink_.OnJob(r);
}

void Engine::EmitSnapshot() {
  SnapshotRecord rec;
  rec.time = now_;
  // frontOfQueue: k-way merge of the share queues by (priority desc, id).
  std::vector<std::pair<QueueKey, int32_t>> heads;
  std::vector<absl::btree_set<QueueKey>::const_iterator> its;
  for (int32_t s = 0; s < NumShares(); ++s) its.push_back(shares_[s].queue.begin());
  while (rec.front_of_queue.size() < kSnapshotFrontJobs) {
    int32_t best = kNone;
    for (int32_t s = 0; s < NumShares(); ++s) {
      if (its[s] == shares_[s].queue.end()) continue;
      if (best == kNone || *its[s] < *its[best]) best = s;
    }
    if (best == kNone) break;
    const Job& j = jobs_[its[best]->id];
    rec.front_of_queue.push_back(SnapshotJob{NameOf(j), j.runnable_since});
    ++its[best];
  }
  for (int32_t s = 0; s < NumShares(); ++s) {
    const Share& sh = shares_[s];
    SnapshotShare ss;
    ss.share_name = sh.name;
    if (const int32_t h = Head(s); h != kNone) {
      ss.front.push_back(SnapshotJob{NameOf(jobs_[h]), jobs_[h].runnable_since});
    }
    for (int32_t u = 0; u < NumUnits(); ++u) {
      const int64_t use = sh.own[u] + sh.borrowed[u];
      if (use > 0) ss.usage.push_back(SnapshotUsage{unit_names_[u], use});
    }
    rec.shares.push_back(std::move(ss));
  }
  for (int32_t u = 0; u < NumUnits(); ++u) {
    if (total_use_[u] > 0) rec.total_usage.push_back(SnapshotUsage{unit_names_[u], total_use_[u]});
  }
  sink_.OnSnapshot(rec);
}

// ---------------------------------------------------------------------------
// Invariants

void Engine::Violation(std::string message) {
  if (collect_ != nullptr) {
    collect_->push_back(std::move(message));
    return;
  }
  ++stats_.invariant_violations;
  if (stats_.violation_messages.size() < kMaxViolationMessages) {
    stats_.violation_messages.push_back(absl::StrCat("t=", FormatSeconds(now_), ": ", message));
  }
}

Engine::Excess Engine::ComputeExcess(int32_t s, int32_t u) const {
  const Share& sh = shares_[s];
  Excess e;
  // Use <= L + B, checked as its two parts: own instances within the limit
  // and borrowed ones within the borrow cap (a strategy change to LEND with
  // borrowed jobs still running is then excess that may only drain).
  const int64_t cap = BorrowCap(sh, u);
  e.limit = std::max<int64_t>(0, sh.own[u] - sh.limit[u]) +
            (cap == kUnlimited ? 0 : std::max<int64_t>(0, sh.borrowed[u] - cap));
  e.lend = sh.strategy == Strategy::kReserve
               ? sh.lent[u]
               : std::max<int64_t>(0, sh.own[u] + sh.lent[u] - sh.limit[u]);
  return e;
}

// After a configuration change the invariants are judged afresh: excess that
// exists now may drain but never grow, and reclaims started under the old
// configuration are no longer bound to their deadline (the environment may
// have shrunk under them).
void Engine::ResetAllowances() {
  reclaim_deadlines_.clear();
  for (int32_t u = 0; u < NumUnits(); ++u) allow1_[u] = std::max<int64_t>(0, total_use_[u] - se_[u]);
  for (int32_t s = 0; s < NumShares(); ++s) {
    for (int32_t u = 0; u < NumUnits(); ++u) {
      const Excess e = ComputeExcess(s, u);
      shares_[s].allow2[u] = e.limit;
      shares_[s].allow3[u] = e.lend;
    }
  }
}

void Engine::AfterEvent() {
  if (!opt_.check_invariants) return;
  for (std::string& m : CollectViolations()) Violation(std::move(m));
}

std::vector<std::string> Engine::CollectViolations() {
  std::vector<std::string> found;
  collect_ = &found;
  CheckLimits();
  if (opt_.full_invariant_check) Recount();
  collect_ = nullptr;
  return found;
}

absl::Status Engine::CheckInvariants() {
  std::vector<std::string> found = CollectViolations();
  if (found.empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrJoin(found, "; "));
}

void Engine::AfterPass() {
  if (!opt_.check_invariants) return;
  for (std::string& m : CollectViolations()) Violation(std::move(m));
  // Invariant 6 (second half) and 5 (timing): a job that triggered a reclaim
  // must start by preemption time + drain + interval while it stays the head.
  size_t keep = 0;
  for (const ReclaimDeadline& d : reclaim_deadlines_) {
    const Job& j = jobs_[d.job];
    const bool pending = j.status == JobStatus::kRunnable && j.res_epoch == d.epoch;
    if (!pending) continue;
    if (now_ > d.deadline) {
      Violation(absl::StrCat("invariant 5: ", Sv(NameOf(j)),
                             " reclaimed capacity but did not start by ", FormatSeconds(d.deadline)));
      continue;
    }
    reclaim_deadlines_[keep++] = d;
  }
  reclaim_deadlines_.resize(keep);
  if (opt_.full_invariant_check) CheckReclaimFired();
}

void Engine::CheckLimits() {
  for (int32_t u = 0; u < NumUnits(); ++u) {
    const int64_t e1 = std::max<int64_t>(0, total_use_[u] - se_[u]);
    if (e1 > allow1_[u]) {
      Violation(absl::StrCat("invariant 1: ", Sv(unit_names_[u]), " in use ", total_use_[u],
                             " > environment limit ", se_[u]));
    }
    allow1_[u] = std::min(allow1_[u], e1);
    if (total_hold_[u] < 0) Violation(absl::StrCat("negative hold for ", Sv(unit_names_[u])));
  }
  // Invariants 2 and 3 per (share, unit): a pair whose counters did not
  // change since the last check cannot have a new violation (its allowance
  // already equals its excess), so only touched pairs are checked, except
  // under full_invariant_check, which checks every pair.
  auto check = [&](int32_t s, int32_t u) {
    Share& sh = shares_[s];
    const Excess e = ComputeExcess(s, u);
    if (e.limit > sh.allow2[u]) {
      Violation(absl::StrCat("invariant 2: share ", sh.name, " uses ", sh.own[u] + sh.borrowed[u],
                             " of ", Sv(unit_names_[u]), ", over limit plus borrow cap"));
    }
    if (e.lend > sh.allow3[u]) {
      Violation(absl::StrCat("invariant 3: share ", sh.name, " lends ", sh.lent[u], " of ",
                             Sv(unit_names_[u]), " beyond its idle own capacity"));
    }
    sh.allow2[u] = std::min(sh.allow2[u], e.limit);
    sh.allow3[u] = std::min(sh.allow3[u], e.lend);
  };
  if (opt_.full_invariant_check) {
    for (int32_t s = 0; s < NumShares(); ++s) {
      for (int32_t u = 0; u < NumUnits(); ++u) check(s, u);
    }
  } else {
    for (int32_t key : touched_) check(key / NumUnits(), key % NumUnits());
  }
  for (int32_t key : touched_) touched_flag_[key] = 0;
  touched_.clear();
  int64_t counted = 0;
  for (int64_t c : status_count_) counted += c;
  if (counted != stats_.jobs_submitted) {
    Violation(absl::StrCat("invariant 4: ", counted, " jobs in states but ", stats_.jobs_submitted,
                           " submitted"));
  }
}

// Recomputes every counter from the job records (invariant 4: instances are
// conserved; each job is in exactly one state).
void Engine::Recount() {
  // Flat scratch arrays, reused across calls: this runs after every event in
  // the fuzzers, where an allocation per call would dominate.
  const size_t nu = unit_names_.size(), ns = shares_.size();
  RecountScratch& r = recount_;
  r.own.assign(ns * nu, 0);
  r.lent.assign(ns * nu, 0);
  r.borrowed.assign(ns * nu, 0);
  r.use.assign(nu, 0);
  r.hold.assign(nu, 0);
  r.ulent.assign(nu, 0);
  r.queued.assign(ns, 0);
  for (const Job& j : jobs_) {
    if (IsDispatched(j.status)) {
      int64_t sum = j.own;
      r.own[j.share * nu + j.unit] += j.own;
      for (const Part& p : PartsOf(j)) {
        sum += p.qty;
        r.borrowed[j.share * nu + j.unit] += p.qty;
        if (p.lender == UnassignedLender()) {
          r.ulent[j.unit] += p.qty;
        } else {
          r.lent[p.lender * nu + j.unit] += p.qty;
        }
      }
      if (sum != j.n) Violation(absl::StrCat("invariant 4: job ", Sv(NameOf(j)), " holds ", sum, " of ", j.n));
      r.use[j.unit] += j.n;
    } else if (j.own != 0 || j.has_parts) {
      Violation(absl::StrCat("invariant 4: job ", Sv(NameOf(j)), " holds capacity while ",
                             JobStatusName(j.status)));
    }
    if (j.status == JobStatus::kRunnable) {
      ++r.queued[j.share];
      if (j.unit != kNone) r.hold[j.unit] += j.hold;
    } else if (j.hold != 0) {
      Violation(absl::StrCat("job ", Sv(NameOf(j)), " keeps a hold while ", JobStatusName(j.status)));
    }
  }
  auto same = [nu](const int64_t* counted, const std::vector<int64_t>& kept) {
    return std::equal(kept.begin(), kept.end(), counted, counted + nu);
  };
  for (size_t s = 0; s < ns; ++s) {
    if (static_cast<int64_t>(shares_[s].queue.size()) != r.queued[s]) {
      Violation(absl::StrCat("invariant 4: share ", shares_[s].name, " queue holds ", shares_[s].queue.size(),
                             " jobs but ", r.queued[s], " are RUNNABLE"));
    }
    if (!same(&r.own[s * nu], shares_[s].own) || !same(&r.lent[s * nu], shares_[s].lent) ||
        !same(&r.borrowed[s * nu], shares_[s].borrowed)) {
      Violation(absl::StrCat("invariant 4: share ", shares_[s].name, " counters disagree with jobs"));
    }
  }
  if (r.use != total_use_ || r.hold != total_hold_ || r.ulent != unassigned_lent_) {
    Violation("invariant 4: environment counters disagree with jobs");
  }
}

// Invariant 5: after a pass, no share's head that fits its own limit is left
// without a reservation while preempting every candidate would let it start.
void Engine::CheckReclaimFired() {
  if (!se_enabled_) return;
  for (int32_t s = 0; s < NumShares(); ++s) {
    const int32_t id = Head(s);
    if (id == kNone) continue;
    const Job& j = jobs_[id];
    if (j.pending_victims > 0 || !NeverFitsReason(s, j).empty()) continue;
    const Share& sh = shares_[s];
    const int32_t u = j.unit;
    if (sh.own[u] + j.n > sh.limit[u]) continue;
    int64_t gain_h = 0, gain_f = 0;
    for (size_t v = 0; v < jobs_.size(); ++v) {
      const Job& x = jobs_[v];
      if (!IsDispatched(x.status) || x.draining || x.share == s || x.unit != u) continue;
      bool eligible = x.borrowed_total > 0 || shares_[x.share].own[u] > shares_[x.share].limit[u];
      if (!eligible) continue;
      gain_f += x.n;
      for (const Part& p : PartsOf(x)) {
        if (p.lender == s) gain_h += p.qty;
      }
    }
    if (Headroom(s, u) + gain_h >= j.n && FreeFor(id) + gain_f >= j.n) {
      Violation(absl::StrCat("invariant 5: head ", Sv(NameOf(j)), " of ", sh.name,
                             " fits its limit and reclaim is possible, but nothing was started"));
    }
  }
}

void Engine::CheckEndOfRun() {
  if (knobs_.horizon) return;  // jobs may legitimately be cut off
  for (const Job& j : jobs_) {
    if (IsDispatched(j.status) || j.status == JobStatus::kSubmitted) {
      Violation(absl::StrCat("invariant 4: job ", Sv(NameOf(j)), " left ", JobStatusName(j.status),
                             " with no event pending"));
    }
  }
}

}  // namespace engine_internal

RunStats RunFastEngine(const Scenario& scenario, LogSink& sink, const RunOptions& options) {
  engine_internal::Engine engine(scenario, sink, options);
  return engine.Run();
}

absl::StatusOr<RunStats> RunFastEngine(const EventStream& stream, LogSink& sink, const RunOptions& options) {
  absl::StatusOr<ScenarioIndex> index = IndexEventStream(stream);
  if (!index.ok()) return index.status();
  return RunFastEngine(stream, *std::move(index), sink, options);
}

absl::StatusOr<RunStats> RunFastEngine(const EventStream& stream, ScenarioIndex index, LogSink& sink,
                                       const RunOptions& options) {
  engine_internal::Engine engine(stream, std::move(index), sink, options);
  RunStats stats = engine.Run();
  if (!engine.stream_status().ok()) return engine.stream_status();
  return stats;
}

}  // namespace qs
