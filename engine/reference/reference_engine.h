// File: engine/reference/reference_engine.h
//
// The reference engine's one class (internal to engine/reference/): see
// reference_engine.cc for what it is and how it reads docs/semantics.md. It
// shares no code with the fast engine (engine/fast/), which it checks.
//
//   reference_engine.cc      the run loop, internal events, scenario requests
//   reference_pass.cc        the pass: phases 1-3, victim choice, preemption
//   reference_invariants.cc  the invariant checks
#ifndef QS_ENGINE_REFERENCE_REFERENCE_ENGINE_H_
#define QS_ENGINE_REFERENCE_REFERENCE_ENGINE_H_

//  * Snapshot totals list units with non-zero use only.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/log/event_log.h"
#include "engine/run.h"
#include "engine/model/scenario.h"
#include "engine/model/time.h"
#include "engine/model/validation.h"

namespace qs::reference_internal {

inline constexpr int kNone = -1;
inline constexpr size_t kMaxViolationMessages = 20;
inline constexpr size_t kRecentAttemptsWindow = 10;
inline constexpr size_t kFrontOfQueueMax = 100;
inline constexpr std::string_view kMisconfigurationPrefix = "MISCONFIGURATION:";

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
  // DeleteQuotaShare (§7): kept as an empty share without limits, found by
  // no name lookup and listed in no snapshot.
  bool deleted = false;
  // The head's MISCONFIGURATION time-limit clock (§5): the job and reason it
  // runs for (kNone: none), and a generation its event carries.
  int clock_job = kNone;
  std::string clock_reason;
  int64_t clock_gen = 0;
  // The job whose cause line was last written as this share's head, and
  // that cause (§9; kNone: none).
  int cause_job = kNone;
  WaitCause cause = WaitCause::kNone;
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
  std::optional<int64_t> max_runtime_seconds;  // StoppingCondition.MaxRuntimeInSeconds
  std::optional<SimTime> checkpoint_interval;  // the job's, else the knob's (§6)
  SimTime running_since = -1;                  // RUNNING of the current attempt
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
  bool max_runtime_exceeded = false;  // ... or by MaxRuntimeInSeconds (§5)

  // simulation.capacity: the current attempt ends in a capacity error
  // (its instances are never provisioned); the SCHEDULED time of the first
  // of the job's current run of capacity errors (its time-limit clock).
  bool capacity_doomed = false;
  std::optional<SimTime> capacity_run_start;

  // Draining victim.
  bool draining = false;
  PreemptionType drain_type = PreemptionType::kNone;
  int drain_for = kNone;  // the job the drain makes room for, or kNone
  // The job it was last preempted in-share for, until it is dispatched
  // again: backfill does not dispatch it while that job is the head (§4).
  int in_share_victim_of = kNone;

  // Reservation (RUNNABLE head waiting on a preemption it triggered).
  bool has_reservation = false;
  // RUNNABLE again after a preemption drain, its priority unchanged since it
  // was preempted (`reranked` marks a change during the drain): with
  // victimReturn BEHIND_RESERVATION it does not take the head from a job of
  // its share holding a reservation (§6).
  bool returned = false;
  bool reranked = false;  // its priority changed while it drained
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
  kTick,
  kCapacityError,  // SageMaker could not provision the attempt (§2, "Capacity")
  kHeadTimeLimit   // a head's MISCONFIGURATION clock ran out (§5)
};

struct InternalEvent {
  EventKind kind = EventKind::kTick;
  int job = kNone;
  int64_t token = 0;  // job epoch (life cycle), reason version (time limit) or clock generation (head time limit)
};

// An exact non-negative ratio Use/L, or infinity.
struct Ratio {
  bool infinite = false;
  int64_t num = 0;
  int64_t den = 1;
};
inline bool RatioLess(const Ratio& a, const Ratio& b) {
  if (a.infinite || b.infinite) return !a.infinite && b.infinite;
  return a.num * b.den < b.num * a.den;
}

inline bool IsMisconfiguration(std::string_view reason) {
  return reason.substr(0, kMisconfigurationPrefix.size()) == kMisconfigurationPrefix;
}

class Engine {
 public:
  Engine(const Scenario& scenario, LogSink& sink, bool check_invariants, int64_t cycle_preemptions,
         bool wait_causes)
      : sc_(scenario),
        sink_(sink),
        check_invariants_(check_invariants),
        cycle_preemptions_(cycle_preemptions),
        wait_causes_(wait_causes) {
    for (const CapacityLimit& l : sc_.service_environment.capacity_limits) {
      env_limits_[l.capacity_unit] = l.max_capacity;
    }
    env_enabled_ = sc_.service_environment.state == Toggle::kEnabled;
    time_limit_actions_ = sc_.job_queue.time_limit_actions;
  }

  RunStats Run();

 private:
  // ---------------------------------------------------------------- lookups
  int FindShare(std::string_view name) const {
    for (size_t i = 0; i < shares_.size(); ++i) {
      if (shares_[i].name == name && !shares_[i].deleted) return static_cast<int>(i);
    }
    return kNone;
  }
  // The first current jobStateTimeLimitActions entry for `reason` (its code,
  // the part before " - ", or the whole reason), or nullptr.
  const JobStateTimeLimitAction* TimeLimitActionFor(std::string_view reason) const {
    std::string_view code = reasons::ReasonCode(reason);
    for (const JobStateTimeLimitAction& a : time_limit_actions_) {
      if (a.reason == code || a.reason == reason) return &a;
    }
    return nullptr;
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
  // Instances of u provisioned by SageMaker: those of dispatched attempts
  // (draining ones included) not doomed to a capacity error.
  int64_t Provisioned(const std::string& u) const {
    int64_t sum = 0;
    for (const std::vector<int>& share_held : held_) {
      for (int i : share_held) {
        const Job& j = jobs_[static_cast<size_t>(i)];
        if (IsDispatched(j.status) && j.unit == u && !j.capacity_doomed) sum += j.count;
      }
    }
    return sum;
  }
  int64_t FreeFor(const Job& j) const { return Free(j.unit) + (j.has_reservation ? j.hold : 0); }
  int64_t SumLimits(const std::string& u) const {
    int64_t sum = 0;
    for (size_t s = 0; s < shares_.size(); ++s) sum += Limit(static_cast<int>(s), u);
    return sum;
  }
  bool UnassignedLendable() const {
    return sc_.knobs.unassigned_capacity == UnassignedCapacity::kLendable;
  }
  // Whether share t's head waits for u within t's own limit (§3 "Entitled
  // capacity"): it needs u, could ever start, and Own[t,u] + n <= L[t,u].
  bool HeadEntitled(int t, int h, const std::string& u) const {
    const Job& j = jobs_[static_cast<size_t>(h)];
    return j.unit == u && NeverFitReason(j).empty() && Own(t, u) + j.count <= Limit(t, u);
  }
  // Whether share t lends none of u because of its head: the head holds a
  // reservation on u, or (entitledCapacity WITHHELD) waits for u within t's
  // own limit. Lent parts coming back do not change t's Own, so this holds
  // for IdleAfterReturn too.
  bool HeadWithholds(int t, const std::string& u) const {
    const int h = Head(t);
    if (h == kNone) return false;
    if (jobs_[static_cast<size_t>(h)].has_reservation && jobs_[static_cast<size_t>(h)].unit == u) return true;
    return sc_.knobs.entitled_capacity == EntitledCapacity::kWithheld && HeadEntitled(t, h, u);
  }
  // Idle[t,u] of a share: 0 while its head holds a reservation on u, or
  // (entitledCapacity WITHHELD) while its head waits for u within its own
  // limit.
  int64_t Idle(int t, const std::string& u) const {
    const Share& sh = shares_[static_cast<size_t>(t)];
    if (sh.strategy == Strategy::kReserve) return 0;
    const int64_t headroom = Headroom(t, u);
    if (headroom <= 0) return 0;  // (before the head scan, which cannot raise it)
    if (HeadWithholds(t, u)) return 0;
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
    if (HeadWithholds(t, u)) return 0;
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
    out.reserve(shares_.size() + 1);  // one allocation (the fuzzers' malloc profile)
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

  // Phase 2's arithmetic for head j of share s (§4): `own` = max(0, min(n,
  // H)) instances from its own headroom, `borrow` = n - own to draw from the
  // lenders (in LendersFor order), and their idle sum. Phase2 decides with
  // it and CauseOfHead (§9) explains with it.
  struct BorrowNeed {
    int64_t own = 0, borrow = 0, idle = 0;
    std::vector<Lender> lenders;
  };
  BorrowNeed NeedToBorrow(int s, const Job& j) const {
    BorrowNeed need;
    need.own = std::max<int64_t>(0, std::min<int64_t>(j.count, Headroom(s, j.unit)));
    need.borrow = j.count - need.own;
    need.lenders = LendersFor(s, j.unit);
    for (const Lender& l : need.lenders) need.idle += l.idle;
    return need;
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
  // The first RUNNABLE job in queue order; with victimReturn
  // BEHIND_RESERVATION, a RUNNABLE job holding a reservation that only
  // returned victims rank before (§6, "Preemption cycles").
  int Head(int s) const {
    int best = kNone;
    for (int i : live_[static_cast<size_t>(s)]) {
      const Job& j = jobs_[static_cast<size_t>(i)];
      if (j.status != JobStatus::kRunnable) continue;
      if (best == kNone || QueueBefore(static_cast<int>(i), best)) best = static_cast<int>(i);
    }
    if (best == kNone || sc_.knobs.victim_return != VictimReturn::kBehindReservation ||
        jobs_[static_cast<size_t>(best)].has_reservation) {
      return best;
    }
    for (int h : live_[static_cast<size_t>(s)]) {
      const Job& holder = jobs_[static_cast<size_t>(h)];
      if (holder.status != JobStatus::kRunnable || !holder.has_reservation) continue;
      bool only_returned_before = true;
      for (int i : live_[static_cast<size_t>(s)]) {
        const Job& j = jobs_[static_cast<size_t>(i)];
        if (j.status == JobStatus::kRunnable && QueueBefore(i, h) && !j.returned) only_returned_before = false;
      }
      if (only_returned_before) return h;
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
    order.reserve(static_cast<size_t>(count));  // one allocation (the fuzzers' malloc profile)
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
        ratio.reserve(static_cast<size_t>(count));
        head.reserve(static_cast<size_t>(count));
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
    if (IsTerminal(status)) {
      Progress();  // a job finished
      // An ended job's reservation goes at once (§4): its hold is free and
      // its victims drain for nobody. Only wait causes read it before the
      // next pass would drop it.
      if (j.has_reservation) DropReservation(static_cast<int>(&j - jobs_.data()));
    }
    std::string copy(reason);
    j.status = status;
    j.reason = std::move(copy);
    ++j.reason_version;
    rec.status = status;
    rec.status_reason = j.reason;
    sink_.OnJob(rec);
    if (wait_causes_ && status == JobStatus::kRunnable) runnable_lines_.push_back(static_cast<int>(&j - jobs_.data()));
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
    j.capacity_doomed = false;
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
      // §2: still RUNNABLE with the reason given when the clock started.
      return j.status != JobStatus::kRunnable || j.reason_version != e.token;
    }
    if (e.kind == EventKind::kHeadTimeLimit) {
      // §5: still its share's head with the reason its clock started for.
      const Share& sh = shares_[static_cast<size_t>(j.share)];
      return sh.clock_gen != e.token || sh.clock_job != e.job || j.status != JobStatus::kRunnable ||
             j.reason != sh.clock_reason || Head(j.share) != e.job;
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
  void TerminateJob(Job& j, std::string_view reason);
  void OnDeleteShare(const ScenarioEvent& ev, const DeleteQuotaShareRequest& r);
  void OnUpdateQueue(const ScenarioEvent& ev, const UpdateJobQueueRequest& r);

  // ------------------------------------------------------------- pass
  void Pass();
  bool Phase1(const std::vector<int>& order, std::vector<bool>& blocked);
  bool Phase2(const std::vector<int>& order, std::vector<bool>& blocked);
  bool Phase3(const std::vector<int>& order, std::vector<bool>& blocked);
  bool Backfill(int s, int head);
  std::string_view NeverFitReason(const Job& j) const;
  bool LookAt(int ji);
  void StartTimeLimitClock(int ji);
  void SweepHeadClocks();
  // §9, reference_wait_causes.cc: the cause lines of an instant's end, and
  // the cause of share s's head ji.
  void WriteWaitCauses();
  WaitCause CauseOfHead(int s, int ji) const;
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
  // key: (invariant, share index or kNone, unit); no strings built per check.
  using AllowanceKey = std::tuple<int, int, std::string>;
  // `what` builds the violation message; it runs only on a violation.
  template <typename What>
  void CheckCapped(AllowanceKey key, int64_t excess, bool reset, const What& what);
  void CheckInvariants(bool reset_allowances);

  const Scenario& sc_;
  LogSink& sink_;
  const bool check_invariants_;
  // Preemption cycles (docs/semantics.md): per job, preemptions since the
  // last request, attempt end or finished job.
  const int64_t cycle_preemptions_;
  std::map<int, int64_t> preempted_since_progress_;
  // §9: write cause lines; the jobs with a RUNNABLE line in this instant,
  // in line order (repeats included).
  const bool wait_causes_;
  std::vector<int> runnable_lines_;
  void Progress() { preempted_since_progress_.clear(); }
  RunStats stats_;
  SimTime now_ = 0;
  std::map<std::string, int64_t> env_limits_;
  bool env_enabled_ = true;
  std::vector<Share> shares_;  // creation (declaration) order
  // The job queue as UpdateJobQueue leaves it (§7).
  bool queue_enabled_ = true;
  std::vector<JobStateTimeLimitAction> time_limit_actions_;
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
  absl::flat_hash_map<AllowanceKey, int64_t> allowance_;  // invariant key -> excess still allowed
};

}  // namespace qs::reference_internal

#endif  // QS_ENGINE_REFERENCE_REFERENCE_ENGINE_H_
