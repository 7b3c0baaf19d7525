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
//  * Snapshot totals list units with non-zero use only.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/event_log.h"
#include "engine/run.h"
#include "engine/scenario.h"
#include "engine/time.h"
#include "engine/validation.h"

namespace qs {
namespace reference_internal {
namespace {

constexpr int kNone = -1;
constexpr size_t kMaxViolationMessages = 20;
constexpr size_t kRecentAttemptsWindow = 10;
constexpr size_t kFrontOfQueueMax = 100;
constexpr std::string_view kMisconfigurationPrefix = "MISCONFIGURATION:";

// One borrowed part of a dispatched job: `quantity` instances of the job's
// unit drawn from `lender` (a share name or kUnassignedLenderName).
struct Part {
  std::string lender;
  int64_t quantity = 0;
};

struct Share {
  std::string name;
  Strategy strategy = Strategy::kReserve;
  int64_t borrow_limit = -1;  // -1 = unlimited (meaningful for LEND_AND_BORROW only)
  bool in_share_preemption = false;
  bool enabled = true;
  std::map<std::string, int64_t> limits;  // unit -> maxCapacity
};

struct Job {
  std::string_view name;  // into the Scenario
  int share = kNone;
  int64_t priority = 0;
  SimTime created_at = 0;
  std::string unit;
  int64_t count = 0;  // n
  int64_t max_attempts = 1;
  int64_t failed_attempts = 0;
  std::optional<int64_t> attempt_duration_seconds;
  std::optional<int64_t> preemption_retries;
  SimTime run_time = 0;
  JobOutcome outcome = JobOutcome::kSucceeded;

  JobStatus status = JobStatus::kSubmitted;
  std::string reason;
  int64_t epoch = 0;           // bumped to cancel pending life-cycle events
  int64_t reason_version = 0;  // bumped on every log line of the job
  SimTime runnable_since = 0;  // earliestTimeAtPosition

  // Dispatched attempt.
  SimTime dispatched_at = 0;
  int64_t own = 0;
  std::vector<Part> parts;  // in draw order
  bool timed_out = false;   // the current attempt ends by timeout

  // Draining victim.
  bool draining = false;
  PreemptionType drain_type = PreemptionType::kNone;
  int drain_for = kNone;  // the job the drain makes room for, or kNone

  // Reservation (RUNNABLE head waiting on a preemption it triggered).
  bool has_reservation = false;
  int64_t hold = 0;

  bool in_held = false;       // listed in Engine::held_
  bool in_borrowers = false;  // listed in Engine::borrowers_

  // preemptionSummary.
  int64_t preempted_attempt_count = 0;
  std::vector<PreemptedAttempt> recent_preempted;  // newest first
};

enum class EventKind : uint8_t {
  kBecomeRunnable,
  kStarting,
  kRunning,
  kAttemptEnd,
  kDrainEnd,
  kTimeLimit,
  kTick
};

struct InternalEvent {
  EventKind kind = EventKind::kTick;
  int job = kNone;
  int64_t token = 0;        // job epoch (life cycle) or reason version (time limit)
  size_t action_index = 0;  // kTimeLimit: index into jobStateTimeLimitActions
};

// An exact non-negative ratio Use/L, or infinity.
struct Ratio {
  bool infinite = false;
  int64_t num = 0;
  int64_t den = 1;
};
bool RatioLess(const Ratio& a, const Ratio& b) {
  if (a.infinite || b.infinite) return !a.infinite && b.infinite;
  return a.num * b.den < b.num * a.den;
}

bool IsMisconfiguration(std::string_view reason) {
  return reason.substr(0, kMisconfigurationPrefix.size()) == kMisconfigurationPrefix;
}

class Engine {
 public:
  Engine(const Scenario& scenario, LogSink& sink, bool check_invariants, int64_t cycle_preemptions)
      : sc_(scenario), sink_(sink), check_invariants_(check_invariants), cycle_preemptions_(cycle_preemptions) {
    for (const CapacityLimit& l : sc_.service_environment.capacity_limits) {
      env_limits_[l.capacity_unit] = l.max_capacity;
    }
    env_enabled_ = sc_.service_environment.state == Toggle::kEnabled;
  }

  RunStats Run();

 private:
  // ---------------------------------------------------------------- lookups
  int FindShare(std::string_view name) const {
    for (size_t i = 0; i < shares_.size(); ++i) {
      if (shares_[i].name == name) return static_cast<int>(i);
    }
    return kNone;
  }
  int FindJob(std::string_view name) const {
    for (size_t i = 0; i < jobs_.size(); ++i) {
      if (jobs_[i].name == name) return static_cast<int>(i);
    }
    return kNone;
  }

  // ------------------------------------------------------ accounting (§3)
  // A job a capacity scan must see: it holds instances (dispatched or
  // draining) or a reservation.
  static bool Holds(const Job& j) {
    return IsDispatched(j.status) || j.draining || j.has_reservation;
  }
  // Lists job `ji` in held_ (once). Called where a job starts holding:
  // Dispatch (instances) and Preempt (the reservation of the head).
  void NoteHeld(int ji) {
    Job& j = jobs_[static_cast<size_t>(ji)];
    if (j.in_held) return;
    j.in_held = true;
    held_[static_cast<size_t>(j.share)].push_back(ji);
  }
  // Lists job `ji` in borrowers_ (once); called by Dispatch when it borrows.
  void NoteBorrower(int ji) {
    Job& j = jobs_[static_cast<size_t>(ji)];
    if (j.in_borrowers) return;
    j.in_borrowers = true;
    borrowers_.push_back(ji);
  }
  int64_t EnvLimit(const std::string& u) const {
    auto it = env_limits_.find(u);
    return it == env_limits_.end() ? 0 : it->second;
  }
  int64_t Limit(int s, const std::string& u) const {
    const Share& sh = shares_[static_cast<size_t>(s)];
    auto it = sh.limits.find(u);
    return it == sh.limits.end() ? 0 : it->second;
  }
  bool BorrowUnlimited(int s) const {
    const Share& sh = shares_[static_cast<size_t>(s)];
    return sh.strategy == Strategy::kLendAndBorrow && sh.borrow_limit == -1;
  }
  // B[s,u]; only meaningful when !BorrowUnlimited(s).
  int64_t BorrowCap(int s, const std::string& u) const {
    const Share& sh = shares_[static_cast<size_t>(s)];
    if (sh.strategy != Strategy::kLendAndBorrow) return 0;
    return Limit(s, u) * sh.borrow_limit / 100;  // floor: both operands >= 0
  }
  bool WithinBorrowCap(int s, const std::string& u, int64_t borrowed) const {
    return BorrowUnlimited(s) || borrowed <= BorrowCap(s, u);
  }
  static int64_t BorrowedOf(const Job& j) {
    int64_t b = 0;
    for (const Part& p : j.parts) b += p.quantity;
    return b;
  }
  static int64_t DrawnFrom(const Job& j, std::string_view lender) {
    int64_t b = 0;
    for (const Part& p : j.parts) {
      if (p.lender == lender) b += p.quantity;
    }
    return b;
  }
  int64_t Own(int s, const std::string& u) const {
    int64_t sum = 0;
    for (int i : held_[static_cast<size_t>(s)]) {
      const Job& j = jobs_[static_cast<size_t>(i)];
      if (IsDispatched(j.status) && j.share == s && j.unit == u) sum += j.own;
    }
    return sum;
  }
  int64_t Borrowed(int s, const std::string& u) const {
    int64_t sum = 0;
    for (int i : held_[static_cast<size_t>(s)]) {
      const Job& j = jobs_[static_cast<size_t>(i)];
      if (IsDispatched(j.status) && j.share == s && j.unit == u) sum += BorrowedOf(j);
    }
    return sum;
  }
  int64_t Lent(std::string_view lender, const std::string& u) const {
    int64_t sum = 0;
    for (int i : borrowers_) {
      const Job& j = jobs_[static_cast<size_t>(i)];
      if (IsDispatched(j.status) && j.unit == u) sum += DrawnFrom(j, lender);
    }
    return sum;
  }
  int64_t Use(int s, const std::string& u) const { return Own(s, u) + Borrowed(s, u); }
  int64_t Headroom(int s, const std::string& u) const {
    return Limit(s, u) - Own(s, u) - Lent(shares_[static_cast<size_t>(s)].name, u);
  }
  int64_t TotalUse(const std::string& u) const {
    int64_t sum = 0;
    for (const std::vector<int>& share_held : held_) {
      for (int i : share_held) {
        const Job& j = jobs_[static_cast<size_t>(i)];
        if (IsDispatched(j.status) && j.unit == u) sum += j.own + BorrowedOf(j);
      }
    }
    return sum;
  }
  int64_t TotalHold(const std::string& u) const {
    int64_t sum = 0;
    for (const std::vector<int>& share_held : held_) {
      for (int i : share_held) {
        const Job& j = jobs_[static_cast<size_t>(i)];
        if (j.has_reservation && j.unit == u) sum += j.hold;
      }
    }
    return sum;
  }
  int64_t Free(const std::string& u) const { return EnvLimit(u) - TotalUse(u) - TotalHold(u); }
  int64_t FreeFor(const Job& j) const { return Free(j.unit) + (j.has_reservation ? j.hold : 0); }
  int64_t SumLimits(const std::string& u) const {
    int64_t sum = 0;
    for (size_t s = 0; s < shares_.size(); ++s) sum += Limit(static_cast<int>(s), u);
    return sum;
  }
  bool UnassignedLendable() const {
    return sc_.knobs.unassigned_capacity == UnassignedCapacity::kLendable;
  }
  // Idle[t,u] of a share.
  int64_t Idle(int t, const std::string& u) const {
    const Share& sh = shares_[static_cast<size_t>(t)];
    if (sh.strategy == Strategy::kReserve) return 0;
    const int64_t headroom = Headroom(t, u);
    if (headroom <= 0) return 0;  // (before the head scan, which cannot raise it)
    int h = Head(t);
    if (h != kNone && jobs_[static_cast<size_t>(h)].has_reservation &&
        jobs_[static_cast<size_t>(h)].unit == u) {
      return 0;
    }
    return headroom;
  }
  int64_t UnassignedIdle(const std::string& u) const {
    return std::max<int64_t>(0, EnvLimit(u) - SumLimits(u) - Lent(kUnassignedLenderName, u));
  }
  // Idle of lender `name` (a share other than `s`, or the unassigned
  // capacity) once `returned` instances it lent come back.
  int64_t IdleAfterReturn(std::string_view name, int s, const std::string& u,
                          int64_t returned) const {
    if (name == kUnassignedLenderName) {
      return std::max<int64_t>(
          0, EnvLimit(u) - SumLimits(u) - Lent(kUnassignedLenderName, u) + returned);
    }
    int t = FindShare(name);
    if (t == kNone || t == s || shares_[static_cast<size_t>(t)].strategy == Strategy::kReserve) {
      return 0;
    }
    const int64_t idle = Headroom(t, u) + returned;
    if (idle <= 0) return 0;  // (before the head scan, which cannot raise it)
    int h = Head(t);
    if (h != kNone && jobs_[static_cast<size_t>(h)].has_reservation &&
        jobs_[static_cast<size_t>(h)].unit == u) {
      return 0;
    }
    return idle;
  }

  struct Lender {
    std::string_view name;  // a share's name (shares_ does not change during a pass) or kUnassignedLenderName
    int64_t idle = 0;
  };
  // The lenders share `s` may borrow `u` from (other LEND / LEND_AND_BORROW
  // shares, plus the unassigned capacity when LENDABLE), ordered by most idle,
  // then name (§4 phase 2).
  std::vector<Lender> LendersFor(int s, const std::string& u) const {
    std::vector<Lender> out;
    for (size_t t = 0; t < shares_.size(); ++t) {
      if (static_cast<int>(t) == s) continue;
      if (shares_[t].strategy == Strategy::kReserve) continue;
      out.push_back({shares_[t].name, Idle(static_cast<int>(t), u)});
    }
    if (UnassignedLendable())
      out.push_back({kUnassignedLenderName, UnassignedIdle(u)});
    std::sort(out.begin(), out.end(), [](const Lender& a, const Lender& b) {
      if (a.idle != b.idle) return a.idle > b.idle;
      return a.name < b.name;
    });
    return out;
  }

  std::set<std::string> AllUnits() const {
    std::set<std::string> units;
    for (const auto& [u, c] : env_limits_) units.insert(u);
    for (const Share& sh : shares_) {
      for (const auto& [u, c] : sh.limits) units.insert(u);
    }
    for (const Job& j : jobs_) units.insert(j.unit);
    return units;
  }

  // --------------------------------------------------------- queues (§4)
  bool QueueBefore(int a, int b) const {
    const Job& x = jobs_[static_cast<size_t>(a)];
    const Job& y = jobs_[static_cast<size_t>(b)];
    if (x.priority != y.priority) return x.priority > y.priority;
    if (x.created_at != y.created_at) return x.created_at < y.created_at;
    return a < b;  // job index = submission order
  }
  int Head(int s) const {
    int best = kNone;
    for (int i : live_[static_cast<size_t>(s)]) {
      const Job& j = jobs_[static_cast<size_t>(i)];
      if (j.status != JobStatus::kRunnable) continue;
      if (best == kNone || QueueBefore(static_cast<int>(i), best)) best = static_cast<int>(i);
    }
    return best;
  }
  std::vector<int> Queue(int s) const {
    std::vector<int> q;
    for (size_t t = 0; t < live_.size(); ++t) {
      if (s != kNone && static_cast<int>(t) != s) continue;
      for (int i : live_[t]) {
        if (jobs_[static_cast<size_t>(i)].status == JobStatus::kRunnable) q.push_back(i);
      }
    }
    std::sort(q.begin(), q.end(), [this](int a, int b) { return QueueBefore(a, b); });
    return q;
  }
  int VictimsDrainingFor(int j) const {
    int n = 0;
    for (const std::vector<int>& share_held : held_) {
      for (int i : share_held) {
        const Job& v = jobs_[static_cast<size_t>(i)];
        if (v.draining && v.drain_for == j) ++n;
      }
    }
    return n;
  }
  bool Waiting(int s) const {
    int h = Head(s);
    return h != kNone && VictimsDrainingFor(h) > 0;
  }

  Ratio UseRatio(int s) const {
    std::set<std::string> units;
    for (const auto& [u, c] : shares_[static_cast<size_t>(s)].limits) units.insert(u);
    for (int i : held_[static_cast<size_t>(s)]) {
      const Job& j = jobs_[static_cast<size_t>(i)];
      if (j.share == s && IsDispatched(j.status)) units.insert(j.unit);
    }
    Ratio r;
    for (const std::string& u : units) {
      int64_t l = Limit(s, u);
      int64_t use = Use(s, u);
      Ratio x;
      if (l > 0) {
        x.num = use;
        x.den = l;
      } else if (use > 0) {
        x.infinite = true;
      } else {
        continue;
      }
      if (RatioLess(r, x)) r = x;
    }
    return r;
  }

  // Visiting order of a round (§4), recomputed at the start of each round.
  std::vector<int> VisitingOrder() {
    const int count = static_cast<int>(shares_.size());
    std::vector<int> order;
    for (int s = 0; s < count; ++s) order.push_back(s);
    switch (sc_.knobs.share_order) {
      case ShareOrder::kDeclaration:
        break;
      case ShareOrder::kRoundRobin: {
        if (count > 0) {
          int64_t k = rounds_ % count;
          std::rotate(order.begin(), order.begin() + k, order.end());
        }
        break;
      }
      case ShareOrder::kUnderLimitFirst: {
        std::vector<Ratio> ratio;
        std::vector<int> head;
        for (int s = 0; s < count; ++s) {
          ratio.push_back(UseRatio(s));
          head.push_back(Head(s));
        }
        std::sort(order.begin(), order.end(), [&](int a, int b) {
          const Ratio& ra = ratio[static_cast<size_t>(a)];
          const Ratio& rb = ratio[static_cast<size_t>(b)];
          if (RatioLess(ra, rb)) return true;
          if (RatioLess(rb, ra)) return false;
          int ha = head[static_cast<size_t>(a)];
          int hb = head[static_cast<size_t>(b)];
          if ((ha != kNone) != (hb != kNone)) return ha != kNone;
          if (ha != kNone && hb != kNone && ha != hb) {
            const Job& ja = jobs_[static_cast<size_t>(ha)];
            const Job& jb = jobs_[static_cast<size_t>(hb)];
            if (ja.created_at != jb.created_at) return ja.created_at < jb.created_at;
            return ha < hb;
          }
          return shares_[static_cast<size_t>(a)].name < shares_[static_cast<size_t>(b)].name;
        });
        break;
      }
    }
    ++rounds_;
    return order;
  }

  // ------------------------------------------------------------ logging
  JobRecord BaseRecord(const Job& j) const {
    JobRecord r;
    r.time = now_;
    r.job_name = j.name;
    r.job_slot = static_cast<int32_t>(&j - jobs_.data());
    r.share_name = shares_[static_cast<size_t>(j.share)].name;
    return r;
  }
  // Changes the job's status and reason and writes the line `rec` (whose
  // status and reason are filled in here).
  void Commit(Job& j, JobStatus status, std::string_view reason, JobRecord rec) {
    if (IsTerminal(j.status)) {
      Violation(absl::StrCat("invariant 4: terminal job ", std::string(j.name), " changes to ",
                             JobStatusName(status)));
    }
    if (IsTerminal(status)) Progress();  // a job finished
    std::string copy(reason);
    j.status = status;
    j.reason = std::move(copy);
    ++j.reason_version;
    rec.status = status;
    rec.status_reason = j.reason;
    sink_.OnJob(rec);
  }
  void SetStatus(Job& j, JobStatus status, std::string_view reason) {
    Commit(j, status, reason, BaseRecord(j));
  }
  void Reject(const ScenarioEvent& ev, const absl::Status& status) {
    std::string message = ClientExceptionMessage(status);
    RejectedRecord r;
    r.time = now_;
    r.action = ActionName(ev.request);
    r.message = message;
    r.path = ev.path;
    sink_.OnRejected(r);
  }

  // ------------------------------------------------------------ events
  void Schedule(SimTime t, InternalEvent e) { queue_.emplace(std::make_pair(t, next_seq_++), e); }
  bool HasInternalAt(SimTime t) const {
    return !queue_.empty() && queue_.begin()->first.first == t;
  }
  void ProcessInternalAt(SimTime t) {
    while (HasInternalAt(t)) {
      InternalEvent e = queue_.begin()->second;
      queue_.erase(queue_.begin());
      ProcessInternal(e);
      CheckInvariants(false);
    }
  }

  // Frees the instances of a job (its attempt ended, its drain ended, or it
  // was terminated). A victim's instances go to the hold of the job it was
  // draining for (§6 reservation).
  void Release(Job& j) {
    if (j.draining && j.drain_for != kNone) {
      Job& target = jobs_[static_cast<size_t>(j.drain_for)];
      if (target.has_reservation) target.hold = std::min(target.count, target.hold + j.count);
    }
    j.own = 0;
    j.parts.clear();
    j.draining = false;
    j.drain_type = PreemptionType::kNone;
    j.drain_for = kNone;
    j.timed_out = false;
  }
  void DropReservation(int ji) {
    Job& j = jobs_[static_cast<size_t>(ji)];
    if (j.has_reservation) dropped_in_round_ = true;
    j.has_reservation = false;
    j.hold = 0;
    for (const std::vector<int>& share_held : held_) {
      for (int i : share_held) {
        Job& v = jobs_[static_cast<size_t>(i)];
        if (v.draining && v.drain_for == ji) v.drain_for = kNone;
      }
    }
  }

  bool IsCancelled(const InternalEvent& e) const {
    if (e.kind == EventKind::kTick) return false;
    const Job& j = jobs_[static_cast<size_t>(e.job)];
    if (e.kind == EventKind::kTimeLimit) {
      // §5: still RUNNABLE with the reason given when the clock started.
      return j.status != JobStatus::kRunnable || j.reason_version != e.token;
    }
    return j.epoch != e.token;
  }
  void ProcessInternal(const InternalEvent& e);
  void ProcessScenario(const ScenarioEvent& ev);
  void OnSubmit(const ScenarioEvent& ev, const SubmitServiceJobRequest& r);
  JobFacts FactsOf(const std::optional<std::string>& job_id, int* ji) const;
  void OnUpdateJob(const ScenarioEvent& ev, const UpdateServiceJobRequest& r);
  void OnTerminate(const ScenarioEvent& ev, const TerminateServiceJobRequest& r);
  void OnCreateShare(const ScenarioEvent& ev, const CreateQuotaShareRequest& r);
  void OnUpdateShare(const ScenarioEvent& ev, const UpdateQuotaShareRequest& r);
  void OnUpdateEnvironment(const ScenarioEvent& ev, const UpdateServiceEnvironmentRequest& r);
  void OnSnapshot(const ScenarioEvent& ev, const GetJobQueueSnapshotRequest& r);

  // ------------------------------------------------------------- pass
  void Pass();
  bool Phase1(const std::vector<int>& order, std::vector<bool>& blocked);
  bool Phase2(const std::vector<int>& order, std::vector<bool>& blocked);
  bool Phase3(const std::vector<int>& order, std::vector<bool>& blocked);
  bool Backfill(int s, int head);
  std::string_view NeverFitReason(const Job& j) const;
  bool LookAt(int ji);
  void StartTimeLimitClock(int ji);
  void Dispatch(int ji, int64_t own, std::vector<Part> parts);
  bool TryCrossShareReclaim(int ji);
  bool VictimBefore(int a, int b) const;
  std::vector<int> ChooseSet(const std::vector<int>& candidates,
                             const std::function<bool(const std::vector<int>&)>& fits) const;
  void Preempt(const std::vector<int>& victims, int ji, PreemptionType type);

  // -------------------------------------------------------- invariants
  void Violation(std::string message) {
    ++stats_.invariant_violations;
    if (stats_.violation_messages.size() < kMaxViolationMessages) {
      stats_.violation_messages.push_back(absl::StrCat("t=", FormatSeconds(now_), "s: ", message));
    }
  }
  // `what` builds the violation message; it runs only on a violation.
  template <typename What>
  void CheckCapped(const std::string& key, int64_t excess, bool reset, const What& what);
  void CheckInvariants(bool reset_allowances);

  const Scenario& sc_;
  LogSink& sink_;
  const bool check_invariants_;
  // Preemption cycles (docs/semantics.md): per job, preemptions since the
  // last request, attempt end or finished job.
  const int64_t cycle_preemptions_;
  std::map<int, int64_t> preempted_since_progress_;
  void Progress() { preempted_since_progress_.clear(); }
  RunStats stats_;
  SimTime now_ = 0;
  std::map<std::string, int64_t> env_limits_;
  bool env_enabled_ = true;
  std::vector<Share> shares_;  // creation (declaration) order
  std::vector<Job> jobs_;      // submission order
  // Per share (index as shares_), the indices of its jobs a queue scan may
  // still need, in submission order: all but the finished ones (terminal, no
  // reservation, not draining). Pruned at the start of every pass; scans
  // skip the finished jobs still listed by their predicates.
  std::vector<std::vector<int>> live_;
  // Indices of the jobs that may hold capacity or a reservation (Holds()):
  // a superset of them, each listed once (Job::in_held). The capacity scans
  // (Own, Lent, TotalUse, victims ...) read it instead of live_, so a long
  // RUNNABLE backlog does not multiply their cost. A job starts holding only
  // in Dispatch or Preempt, which list it; the list is pruned at the start
  // of every pass, and CheckInvariants verifies that it misses no one.
  std::vector<std::vector<int>> held_;  // per share, as live_
  // The same for the jobs that hold borrowed parts (Lent() reads only
  // them; parts are set only in Dispatch, which lists the job).
  std::vector<int> borrowers_;
  std::map<std::pair<SimTime, int64_t>, InternalEvent> queue_;
  int64_t next_seq_ = 0;
  std::optional<SimTime> pending_tick_;
  int64_t rounds_ = 0;                        // rounds of all passes so far (ROUND_ROBIN)
  bool dropped_in_round_ = false;             // a reservation was dropped in this round
  std::map<std::string, int64_t> allowance_;  // invariant key -> excess still allowed
};

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
        Schedule(tick, InternalEvent{EventKind::kTick, kNone, 0, 0});
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
  if (e.kind == EventKind::kTimeLimit) {
    // §5: still RUNNABLE with the reason given when the clock started.
    const JobStateTimeLimitAction& a = sc_.job_queue.time_limit_actions[e.action_index];
    SetStatus(j, JobStatus::kFailed, std::string(reasons::kTimeLimitPrefix) + a.reason);
    return;
  }
  switch (e.kind) {
    case EventKind::kBecomeRunnable:
      ++j.epoch;
      j.runnable_since = now_;
      SetStatus(j, JobStatus::kRunnable, "");
      break;
    case EventKind::kStarting:
      SetStatus(j, JobStatus::kStarting, j.reason);
      Schedule(now_ + sc_.knobs.download, InternalEvent{EventKind::kRunning, e.job, j.epoch, 0});
      break;
    case EventKind::kRunning: {
      SetStatus(j, JobStatus::kRunning, j.reason);
      SimTime duration = j.run_time;
      j.timed_out = false;
      if (j.attempt_duration_seconds) {
        SimTime limit = *j.attempt_duration_seconds * kMillisPerSecond;
        if (j.run_time > limit) {
          j.timed_out = true;
          duration = limit;
        }
      }
      Schedule(now_ + duration, InternalEvent{EventKind::kAttemptEnd, e.job, j.epoch, 0});
      break;
    }
    case EventKind::kAttemptEnd: {
      Progress();  // an attempt ended
      bool timed_out = j.timed_out;
      Release(j);
      ++j.epoch;
      std::string_view reason;
      if (timed_out) {
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
        Commit(j, JobStatus::kRunnable, runnable_reason, rec);
      }
      break;
    }
    case EventKind::kTimeLimit:
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
  }
}

void Engine::OnSubmit(const ScenarioEvent& ev, const SubmitServiceJobRequest& r) {
  ShareFacts facts;
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
           InternalEvent{EventKind::kBecomeRunnable, ji, job.epoch, 0});
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
  jobs_[static_cast<size_t>(ji)].priority = *r.scheduling_priority;
}

void Engine::OnTerminate(const ScenarioEvent& ev, const TerminateServiceJobRequest& r) {
  int ji = kNone;
  const JobFacts facts = FactsOf(r.job_id, &ji);
  absl::Status st = ValidateTerminateServiceJob(r, facts);
  if (!st.ok()) {
    Reject(ev, st);
    return;
  }
  Job& j = jobs_[static_cast<size_t>(ji)];
  Release(j);  // no drain; a victim's instances go to its beneficiary's hold
  ++j.epoch;   // cancels pending events
  SetStatus(j, JobStatus::kFailed, *r.reason);
  // Its own reservation, if any, is dropped at the start of the next pass (§4).
}

void Engine::OnCreateShare(const ScenarioEvent& ev, const CreateQuotaShareRequest& r) {
  bool exists = r.quota_share_name && FindShare(*r.quota_share_name) != kNone;
  absl::Status st =
      ValidateCreateQuotaShare(r, sc_.job_queue.name, static_cast<int>(shares_.size()), exists);
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
  std::vector<int> all = Queue(kNone);
  for (size_t i = 0; i < all.size() && i < kFrontOfQueueMax; ++i) {
    const Job& j = jobs_[static_cast<size_t>(all[i])];
    rec.front_of_queue.push_back(SnapshotJob{j.name, j.runnable_since});
  }
  std::set<std::string> units = AllUnits();
  for (size_t s = 0; s < shares_.size(); ++s) {
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

// ==================================================================== pass
void Engine::Pass() {
  ++stats_.passes;
  for (std::vector<int>& share_jobs : live_) {
    std::erase_if(share_jobs, [this](int i) {
      const Job& j = jobs_[static_cast<size_t>(i)];
      return IsTerminal(j.status) && !j.has_reservation && !j.draining;
    });
  }
  for (std::vector<int>& share_held : held_) {
    std::erase_if(share_held, [this](int i) {
      Job& j = jobs_[static_cast<size_t>(i)];
      j.in_held = Holds(j);
      return !j.in_held;
    });
  }
  std::erase_if(borrowers_, [this](int i) {
    Job& j = jobs_[static_cast<size_t>(i)];
    j.in_borrowers = !j.parts.empty();
    return !j.in_borrowers;
  });
  // A DISABLED service environment dispatches nothing and preempts nothing
  // (§3): its passes look at nothing (no never-fit reasons, no rounds).
  if (!env_enabled_) return;
  // Start of pass: drop reservations of jobs no longer RUNNABLE or no longer
  // the head of their share.
  for (const std::vector<int>& share_held : held_) {
    for (int i : share_held) {
      const Job& j = jobs_[static_cast<size_t>(i)];
      if (!j.has_reservation) continue;
      if (j.status != JobStatus::kRunnable || Head(j.share) != static_cast<int>(i)) {
        DropReservation(static_cast<int>(i));
      }
    }
  }
  std::vector<bool> blocked(shares_.size(), false);
  // Rounds go on while they dispatch, preempt, or drop a reservation (which
  // frees capacity that earlier phases of the round did not see).
  while (true) {
    dropped_in_round_ = false;
    std::vector<int> order = VisitingOrder();
    bool progress = false;
    progress = Phase1(order, blocked) || progress;
    progress = Phase2(order, blocked) || progress;
    progress = Phase3(order, blocked) || progress;
    if (!progress && !dropped_in_round_) break;
  }
}

std::string_view Engine::NeverFitReason(const Job& j) const {
  const Share& sh = shares_[static_cast<size_t>(j.share)];
  const int64_t n = j.count;
  const int64_t se = EnvLimit(j.unit);  // 0 when the environment does not list the unit
  if (n > se) return reasons::kSeMaxResource;
  const int64_t l = Limit(j.share, j.unit);
  if ((sh.strategy == Strategy::kReserve || sh.strategy == Strategy::kLend) && n > l) {
    return reasons::kQuotaLimitExceeded;
  }
  if (sh.strategy == Strategy::kLendAndBorrow) {
    if (!BorrowUnlimited(j.share) && n > l + BorrowCap(j.share, j.unit)) {
      return reasons::kQuotaAndBorrowLimitExceeded;
    }
    int64_t configured = 0;
    for (size_t t = 0; t < shares_.size(); ++t) {
      if (static_cast<int>(t) == j.share || shares_[t].strategy == Strategy::kReserve) continue;
      configured += Limit(static_cast<int>(t), j.unit);
    }
    if (UnassignedLendable()) configured += std::max<int64_t>(0, se - SumLimits(j.unit));
    if (n - l > configured) return reasons::kBorrowExceedsConfigured;
  }
  return {};
}

// The never-fits check (§4), run whenever a job is looked at. Returns true
// when the job never fits (it then has the matching reason).
bool Engine::LookAt(int ji) {
  Job& j = jobs_[static_cast<size_t>(ji)];
  std::string_view reason = NeverFitReason(j);
  if (!reason.empty()) {
    if (j.reason != reason) {
      SetStatus(j, JobStatus::kRunnable, reason);
      StartTimeLimitClock(ji);
    }
    if (j.has_reservation) DropReservation(ji);
    return true;
  }
  if (IsMisconfiguration(j.reason)) SetStatus(j, JobStatus::kRunnable, "");
  return false;
}

void Engine::StartTimeLimitClock(int ji) {
  const Job& j = jobs_[static_cast<size_t>(ji)];
  std::string_view code = reasons::ReasonCode(j.reason);
  const auto& actions = sc_.job_queue.time_limit_actions;
  for (size_t i = 0; i < actions.size(); ++i) {
    if (actions[i].reason == code || actions[i].reason == j.reason) {
      Schedule(now_ + actions[i].max_time_seconds * kMillisPerSecond,
               InternalEvent{EventKind::kTimeLimit, ji, j.reason_version, i});
      return;
    }
  }
}

void Engine::Dispatch(int ji, int64_t own, std::vector<Part> parts) {
  if (jobs_[static_cast<size_t>(ji)].has_reservation) DropReservation(ji);
  NoteHeld(ji);
  Job& j = jobs_[static_cast<size_t>(ji)];
  j.own = own;
  j.parts = std::move(parts);
  if (!j.parts.empty()) NoteBorrower(ji);
  j.dispatched_at = now_;
  ++j.epoch;
  std::vector<BorrowedPart> borrowed;
  for (const Part& p : j.parts) borrowed.push_back(BorrowedPart{p.lender, j.unit, p.quantity});
  JobRecord rec = BaseRecord(j);
  rec.has_usage = true;
  rec.capacity_unit = j.unit;
  rec.quantity = j.count;
  rec.borrowed = borrowed;
  Commit(j, JobStatus::kScheduled, "", rec);
  Schedule(now_ + sc_.knobs.provision, InternalEvent{EventKind::kStarting, ji, j.epoch, 0});
}

// Phase 1 (own capacity). Returns true when something was dispatched or a
// preemption started.
bool Engine::Phase1(const std::vector<int>& order, std::vector<bool>& blocked) {
  bool progress = false;
  for (int s : order) {
    // A waiting share's head is still looked at: it dispatches if it fits now.
    if (blocked[static_cast<size_t>(s)]) continue;
    bool stopped = false;  // the head stopped without dispatching or preempting
    int head = kNone;
    while (true) {
      head = Head(s);
      if (head == kNone) break;
      if (LookAt(head)) {
        blocked[static_cast<size_t>(s)] = true;
        stopped = true;
        break;
      }
      const Job& j = jobs_[static_cast<size_t>(head)];
      const int64_t n = j.count;
      if (Own(s, j.unit) + n > Limit(s, j.unit)) {
        stopped = VictimsDrainingFor(head) == 0;  // phase 2 may borrow; a waiting share just waits
        break;
      }
      if (env_enabled_ && Headroom(s, j.unit) >= n && FreeFor(j) >= n) {
        Dispatch(head, n, {});
        progress = true;
        continue;
      }
      if (VictimsDrainingFor(head) > 0) break;  // the share waits
      if (TryCrossShareReclaim(head)) {
        progress = true;  // the share now waits
        break;
      }
      stopped = true;
      break;
    }
    if (stopped && sc_.knobs.backfill && head != kNone) {
      progress = Backfill(s, head) || progress;
    }
  }
  return progress;
}

// Backfill (§4 phase 1): later jobs of the share, in queue order, dispatched
// from its own limit when H >= n and Free >= n; never-fit ones get their
// reason and are skipped. A later job never borrows or preempts.
bool Engine::Backfill(int s, int head) {
  // A head holding a reservation counts on the share's own headroom too.
  if (jobs_[static_cast<size_t>(head)].has_reservation) return false;
  bool progress = false;
  std::vector<int> queue = Queue(s);
  for (int k : queue) {
    if (k == head) continue;
    if (LookAt(k)) continue;
    const Job& j = jobs_[static_cast<size_t>(k)];
    if (env_enabled_ && Headroom(s, j.unit) >= j.count && FreeFor(j) >= j.count) {
      Dispatch(k, j.count, {});
      progress = true;
    }
  }
  return progress;
}

// Phase 2 (borrowing), LEND_AND_BORROW shares only; heads served oldest first.
bool Engine::Phase2(const std::vector<int>& order, std::vector<bool>& blocked) {
  bool progress = false;
  std::vector<bool> eligible(shares_.size(), false);
  auto evaluate = [&](int s) {
    eligible[static_cast<size_t>(s)] = false;
    if (shares_[static_cast<size_t>(s)].strategy != Strategy::kLendAndBorrow) return;
    if (blocked[static_cast<size_t>(s)] || Waiting(s)) return;
    int h = Head(s);
    if (h == kNone) return;
    if (LookAt(h)) {
      blocked[static_cast<size_t>(s)] = true;
      return;
    }
    const Job& j = jobs_[static_cast<size_t>(h)];
    eligible[static_cast<size_t>(s)] = Headroom(s, j.unit) < j.count;
  };
  for (int s : order) evaluate(s);
  while (true) {
    int pick = kNone;
    int pick_head = kNone;
    for (int s : order) {
      if (!eligible[static_cast<size_t>(s)]) continue;
      int h = Head(s);
      if (pick == kNone ||
          jobs_[static_cast<size_t>(h)].created_at <
              jobs_[static_cast<size_t>(pick_head)].created_at ||
          (jobs_[static_cast<size_t>(h)].created_at ==
               jobs_[static_cast<size_t>(pick_head)].created_at &&
           h < pick_head)) {
        pick = s;
        pick_head = h;
      }
    }
    if (pick == kNone) break;
    const Job& j = jobs_[static_cast<size_t>(pick_head)];
    const int64_t n = j.count;
    const int64_t a = std::max<int64_t>(0, std::min(n, Headroom(pick, j.unit)));
    const int64_t b = n - a;
    std::vector<Lender> lenders = LendersFor(pick, j.unit);
    int64_t idle_sum = 0;
    for (const Lender& l : lenders) idle_sum += l.idle;
    bool ok = env_enabled_ && FreeFor(j) >= n &&
              WithinBorrowCap(pick, j.unit, Borrowed(pick, j.unit) + b) && idle_sum >= b;
    if (!ok) {
      eligible[static_cast<size_t>(pick)] = false;
      continue;
    }
    std::vector<Part> parts;
    int64_t remaining = b;
    for (const Lender& l : lenders) {
      if (remaining == 0) break;
      int64_t take = std::min(l.idle, remaining);
      if (take <= 0) continue;
      parts.push_back(Part{std::string(l.name), take});
      remaining -= take;
    }
    Dispatch(pick_head, a, std::move(parts));
    progress = true;
    evaluate(pick);
  }
  return progress;
}

// Phase 3 (in-share preemption).
bool Engine::Phase3(const std::vector<int>& order, std::vector<bool>& blocked) {
  bool progress = false;
  for (int s : order) {
    const Share& sh = shares_[static_cast<size_t>(s)];
    if (!sh.in_share_preemption) continue;
    if (blocked[static_cast<size_t>(s)] || Waiting(s)) continue;
    int h = Head(s);
    if (h == kNone) continue;
    if (LookAt(h)) {
      blocked[static_cast<size_t>(s)] = true;
      continue;
    }
    if (!env_enabled_) continue;  // a DISABLED environment preempts nothing
    const Job& j = jobs_[static_cast<size_t>(h)];
    const std::string& u = j.unit;
    const int64_t n = j.count;
    std::vector<int> candidates;
    for (int i : held_[static_cast<size_t>(s)]) {
      const Job& v = jobs_[static_cast<size_t>(i)];
      if (v.share == s && IsDispatched(v.status) && !v.draining && v.unit == u &&
          v.priority < j.priority) {
        candidates.push_back(static_cast<int>(i));
      }
    }
    std::sort(candidates.begin(), candidates.end(),
              [this](int a, int b) { return VictimBefore(a, b); });
    const int64_t own = Own(s, u);
    const int64_t headroom = Headroom(s, u);
    const int64_t free_j = FreeFor(j);
    const int64_t borrowed = Borrowed(s, u);
    const int64_t limit = Limit(s, u);
    const bool lab = sh.strategy == Strategy::kLendAndBorrow;
    const std::vector<Lender> lenders = LendersFor(s, u);
    auto fits = [&](const std::vector<int>& victims) {
      int64_t v_own = 0, v_n = 0, v_borrowed = 0;
      for (int v : victims) {
        const Job& vj = jobs_[static_cast<size_t>(v)];
        v_own += vj.own;
        v_n += vj.count;
        v_borrowed += BorrowedOf(vj);
      }
      const int64_t own2 = own - v_own;
      const int64_t h2 = headroom + v_own;
      const int64_t free2 = free_j + v_n;
      const int64_t borrowed2 = borrowed - v_borrowed;
      if (own2 + n <= limit && h2 >= n && free2 >= n) return true;
      if (!lab) return false;
      // Each lender's idle as it will be once the victims drained: its
      // headroom grows by what they drew from it (0 still for a lender whose
      // head holds a reservation on u).
      int64_t idle2 = 0;
      for (const Lender& l : lenders) {
        int64_t drawn = 0;
        for (int v : victims) drawn += DrawnFrom(jobs_[static_cast<size_t>(v)], l.name);
        idle2 += IdleAfterReturn(l.name, s, u, drawn);
      }
      const int64_t a = std::max<int64_t>(0, std::min(n, h2));
      const int64_t b = n - a;
      return free2 >= n && WithinBorrowCap(s, u, borrowed2 + b) && idle2 >= b;
    };
    // Never preempt when the head already fits without victims (spec §4:
    // "never when free or idle lendable capacity already suffices"; e.g. the
    // head became the head in this round after phase 1 looked at its share).
    if (fits({})) continue;
    std::vector<int> victims = ChooseSet(candidates, fits);
    if (victims.empty()) continue;
    Preempt(victims, h, PreemptionType::kInShare);
    progress = true;
  }
  return progress;
}

bool Engine::VictimBefore(int a, int b) const {
  const Job& x = jobs_[static_cast<size_t>(a)];
  const Job& y = jobs_[static_cast<size_t>(b)];
  const int64_t bx = BorrowedOf(x);
  const int64_t by = BorrowedOf(y);
  if (sc_.knobs.victim_order == VictimOrder::kMostBorrowedFirst) {
    if (bx != by) return bx > by;
    if (x.priority != y.priority) return x.priority < y.priority;
    if (x.dispatched_at != y.dispatched_at) return x.dispatched_at > y.dispatched_at;
    return x.name < y.name;
  }
  if (x.priority != y.priority) return x.priority < y.priority;
  if (x.dispatched_at != y.dispatched_at) return x.dispatched_at > y.dispatched_at;
  if (bx != by) return bx > by;
  return x.name < y.name;
}

// §6 choosing the set: mark in candidate order until the fit test holds, then
// unmark from the second-to-last back to the first each one not needed.
std::vector<int> Engine::ChooseSet(const std::vector<int>& candidates,
                                   const std::function<bool(const std::vector<int>&)>& fits) const {
  std::vector<int> marked;
  bool found = false;
  for (int c : candidates) {
    marked.push_back(c);
    if (fits(marked)) {
      found = true;
      break;
    }
  }
  if (!found) return {};
  for (size_t i = marked.size() - 1; i-- > 0;) {
    std::vector<int> without = marked;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    if (fits(without)) marked = std::move(without);
  }
  return marked;
}

// Cross-share reclaim (§6) for head `ji` with Own + n <= L.
bool Engine::TryCrossShareReclaim(int ji) {
  if (!env_enabled_) return false;  // a DISABLED environment preempts nothing
  const Job& j = jobs_[static_cast<size_t>(ji)];
  const int s = j.share;
  const std::string& u = j.unit;
  const std::string& name = shares_[static_cast<size_t>(s)].name;
  std::vector<int> group_a, group_b;
  for (const std::vector<int>& share_held : held_) {
    for (int i : share_held) {
      const Job& v = jobs_[static_cast<size_t>(i)];
      if (v.share == s || !IsDispatched(v.status) || v.draining || v.unit != u) continue;
      if (DrawnFrom(v, name) > 0) {
        group_a.push_back(static_cast<int>(i));
      } else if (BorrowedOf(v) > 0 || Own(v.share, u) > Limit(v.share, u)) {
        group_b.push_back(static_cast<int>(i));
      }
    }
  }
  auto by_victim_order = [this](int a, int b) { return VictimBefore(a, b); };
  std::sort(group_a.begin(), group_a.end(), by_victim_order);
  std::sort(group_b.begin(), group_b.end(), by_victim_order);
  std::vector<int> candidates = group_a;
  candidates.insert(candidates.end(), group_b.begin(), group_b.end());
  const int64_t n = j.count;
  const int64_t headroom = Headroom(s, u);
  const int64_t free_j = FreeFor(j);
  auto fits = [&](const std::vector<int>& victims) {
    int64_t from_s = 0, v_n = 0;
    for (int v : victims) {
      from_s += DrawnFrom(jobs_[static_cast<size_t>(v)], name);
      v_n += jobs_[static_cast<size_t>(v)].count;
    }
    return headroom + from_s >= n && free_j + v_n >= n;
  };
  std::vector<int> victims = ChooseSet(candidates, fits);
  if (victims.empty()) return false;
  Preempt(victims, ji, PreemptionType::kCrossShare);
  return true;
}

void Engine::Preempt(const std::vector<int>& victims, int ji, PreemptionType type) {
  const std::string_view in_progress = type == PreemptionType::kInShare
                                           ? reasons::kInShareInProgress
                                           : reasons::kCrossShareInProgress;
  int64_t v_n = 0;
  for (int v : victims) {
    Job& vj = jobs_[static_cast<size_t>(v)];
    vj.draining = true;
    vj.drain_type = type;
    vj.drain_for = ji;
    ++vj.epoch;  // freeze: cancel its pending STARTING / RUNNING / attempt end
    v_n += vj.count;
    JobRecord rec = BaseRecord(vj);
    rec.preemption = type;
    rec.preempted_for = jobs_[static_cast<size_t>(ji)].name;
    rec.preempted_for_slot = static_cast<int32_t>(ji);
    Commit(vj, vj.status, in_progress, rec);
    Schedule(now_ + sc_.knobs.preemption_drain,
             InternalEvent{EventKind::kDrainEnd, v, vj.epoch, 0});
    if (cycle_preemptions_ > 0 && ++preempted_since_progress_[v] == cycle_preemptions_ && stats_.stopped.empty()) {
      stats_.stopped = PreemptionCycleMessage(now_, vj.name, shares_[static_cast<size_t>(vj.share)].name,
                                              cycle_preemptions_);
    }
  }
  NoteHeld(ji);
  Job& j = jobs_[static_cast<size_t>(ji)];
  j.has_reservation = true;
  j.hold = std::max<int64_t>(0, j.count - v_n);
}

// ============================================================== invariants
// A capped quantity: `excess` over its cap must be <= 0, except for the
// excess that existed right after a configuration change, which may only
// shrink afterwards.
template <typename What>
void Engine::CheckCapped(const std::string& key, int64_t excess, bool reset, const What& what) {
  int64_t& allowed = allowance_[key];
  if (reset) {
    allowed = std::max<int64_t>(0, excess);
    return;
  }
  if (excess > allowed) {
    Violation(absl::StrCat(what(), " (excess ", excess, ", allowed ", allowed, ")"));
    return;
  }
  allowed = std::max<int64_t>(0, excess);
}

void Engine::CheckInvariants(bool reset) {
  if (!check_invariants_) return;
  std::set<std::string> units = AllUnits();
  for (const std::string& u : units) {
    // 1. sum_s Use[s,u] <= SE[u].
    CheckCapped(absl::StrCat("1|", u), TotalUse(u) - EnvLimit(u), reset,
                [&] { return absl::StrCat("invariant 1: use of ", u, " exceeds the environment limit"); });
    for (size_t si = 0; si < shares_.size(); ++si) {
      const int s = static_cast<int>(si);
      const Share& sh = shares_[si];
      // 2. Use <= L + B; RESERVE / LEND never above L.
      // Checked as its two parts (own <= L, borrowed <= B), so that excess
      // left by a configuration change may only drain.
      CheckCapped(absl::StrCat("2o|", sh.name, "|", u), Own(s, u) - Limit(s, u), reset,
                  [&] { return absl::StrCat("invariant 2: share ", sh.name, " holds more own ", u, " than its limit"); });
      if (!BorrowUnlimited(s)) {
        CheckCapped(absl::StrCat("2b|", sh.name, "|", u), Borrowed(s, u) - BorrowCap(s, u), reset,
                    [&] { return absl::StrCat("invariant 2: share ", sh.name, " borrows more ", u, " than its cap"); });
      }
      // 3. A share lends only from its idle own capacity; RESERVE lends nothing.
      int64_t lent = Lent(sh.name, u);
      int64_t idle_own =
          sh.strategy == Strategy::kReserve ? 0 : std::max<int64_t>(0, Limit(s, u) - Own(s, u));
      CheckCapped(absl::StrCat("3|", sh.name, "|", u), lent - idle_own, reset,
                  [&] { return absl::StrCat("invariant 3: share ", sh.name, " lends too much ", u); });
    }
    int64_t unassigned_lent = Lent(kUnassignedLenderName, u);
    int64_t unassigned_cap =
        UnassignedLendable() ? std::max<int64_t>(0, EnvLimit(u) - SumLimits(u)) : 0;
    CheckCapped(absl::StrCat("3|", std::string(kUnassignedLenderName), "|", u),
                unassigned_lent - unassigned_cap, reset,
                [&] { return absl::StrCat("invariant 3: unassigned capacity over-lent for ", u); });
  }
  if (reset) return;
  // 4. Conservation and consistency of every job.
  if (static_cast<int64_t>(jobs_.size()) != stats_.jobs_submitted) {
    Violation("invariant 4: job count differs from accepted submissions");
  }
  for (const Job& j : jobs_) {
    if ((Holds(j) && !j.in_held) || (!j.parts.empty() && !j.in_borrowers)) {
      Violation(absl::StrCat("reference: job ", std::string(j.name),
                             " holds capacity but is missing from the held or borrowers index"));
    }
    if (j.status == JobStatus::kPending) {
      Violation(absl::StrCat("invariant 4: job ", std::string(j.name), " is PENDING"));
    }
    if (IsDispatched(j.status)) {
      int64_t parts = 0;
      bool bad_part = false;
      for (const Part& p : j.parts) {
        parts += p.quantity;
        bad_part =
            bad_part || p.quantity <= 0 || p.lender == shares_[static_cast<size_t>(j.share)].name;
      }
      if (j.own < 0 || bad_part || j.own + parts != j.count) {
        Violation(absl::StrCat("invariant 4: job ", std::string(j.name), " holds ", j.own, "+",
                               parts, " instances, needs ", j.count));
      }
    } else if (j.own != 0 || !j.parts.empty() || j.draining) {
      Violation(absl::StrCat("invariant 4: job ", std::string(j.name), " holds instances while ",
                             JobStatusName(j.status)));
    }
    if (j.hold < 0 || j.hold > j.count || (!j.has_reservation && j.hold != 0)) {
      Violation(absl::StrCat("invariant 4: job ", std::string(j.name), " has hold ", j.hold));
    }
  }
}

}  // namespace
}  // namespace reference_internal

RunStats RunReferenceEngine(const Scenario& scenario, LogSink& sink, bool check_invariants,
                            int64_t cycle_preemptions) {
  reference_internal::Engine engine(scenario, sink, check_invariants, cycle_preemptions);
  return engine.Run();
}

}  // namespace qs
