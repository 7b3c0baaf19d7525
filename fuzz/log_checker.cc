#include "fuzz/log_checker.h"

#include <algorithm>
#include <string_view>
#include <variant>

#include "engine/model/capacity.h"
#include "engine/model/validation.h"
#include "fuzz/fuzz_check.h"

namespace qs::fuzz {
namespace {

constexpr int64_t kUnlimited = INT64_MAX;

int64_t Get(const std::map<std::string, int64_t>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

LogChecker::LogChecker(const Scenario& sc) : sc_(sc) {
  env_enabled_ = sc.service_environment.state == Toggle::kEnabled;
  for (const ScenarioEvent& ev : sc.events) {
    if (const auto* t = std::get_if<TerminateServiceJobRequest>(&ev.request)) {
      terminates_.push_back({ev.time, ev.path, t->job_id.value_or(""), t->reason.value_or("")});
    }
    if (const auto* d = std::get_if<DeleteQuotaShareRequest>(&ev.request)) {
      deletes_.push_back({ev.time, ev.path, std::string(ShareNameFromArn(d->quota_share_arn.value_or("")))});
    }
    if (const auto* q = std::get_if<UpdateJobQueueRequest>(&ev.request); q && q->time_limit_actions) {
      action_updates_.push_back({ev.time, ev.path, &*q->time_limit_actions});
    }
    if (const auto* s = std::get_if<SubmitServiceJobRequest>(&ev.request); s && s->job_name) {
      Job& j = jobs_[*s->job_name];
      if (j.req == nullptr) j.req = s;  // the parser keeps jobName unique; first wins otherwise
    }
  }
}

void LogChecker::Now(SimTime t) {
  QS_FUZZ_CHECK(!ended_, "invariant 4: record at t=" << t << " after the end of the run");
  QS_FUZZ_CHECK(t >= now_, "log order: record at t=" << t << " after one at t=" << now_);
  QS_FUZZ_CHECK(!sc_.knobs.horizon || t <= *sc_.knobs.horizon,
                "horizon: record at t=" << t << " beyond horizon " << *sc_.knobs.horizon);
  if (t > now_) {
    CheckTerminatesBefore(t, /*inclusive=*/false);
    CheckDeletesBefore(t, /*inclusive=*/false);
    CheckTimeLimitsBefore(t);
  }
  now_ = t;
}

// A RUNNABLE job whose jobStateTimeLimitActions clock came due before `t`,
// with the reason it had when the clock started, was terminated then: no
// such job is still RUNNABLE when time moves past its due time. (Under
// timeLimitClock AT_HEAD a MISCONFIGURATION clock runs only while the job is
// its share's head, which the log does not show: its termination is checked
// against the earliest time it could come, MisconfigDueAtLeast.)
void LogChecker::CheckTimeLimitsBefore(SimTime t) {
  if (sc_.job_queue.time_limit_actions.empty() && action_updates_.empty()) return;  // no list ever has an entry
  for (const auto& [name, j] : jobs_) {
    if (!j.seen || j.status != JobStatus::kRunnable || j.frozen) continue;
    const SimTime due = TimeLimitDue(j);
    QS_FUZZ_CHECK(due < 0 || due >= t || !Fires(j, due), "time limit: " << name << " RUNNABLE with '" << j.reason << "' since t="
                                                      << j.status_time << " was due for termination at t=" << due
                                                      << " and is still RUNNABLE at t=" << t);
  }
}

// The clock's due time comes from the list in effect when the reason was
// given; it fires only if the list in effect then still has an entry for
// the reason (docs/semantics.md §7).
SimTime LogChecker::TimeLimitDue(const Job& j) const {
  const bool capacity = j.reason == reasons::kInsufficientCapacity;
  if (!capacity && (!StartsWith(j.reason, "MISCONFIGURATION") ||
                    sc_.knobs.time_limit_clock != TimeLimitClock::kFromReason)) {
    return -1;
  }
  const JobStateTimeLimitAction* a = ActionFor(ActionsAt(j.status_time), j.reason);
  if (a == nullptr) return -1;
  return capacity ? std::max(j.status_time, j.capacity_run_start + a->max_time_seconds * kMillisPerSecond)
                  : j.status_time + a->max_time_seconds * kMillisPerSecond;
}

// A MISCONFIGURATION clock starts no earlier than the reason, with the
// entry of a list in effect at its start (between the reason and `t`): the
// earliest time it can terminate the job.
SimTime LogChecker::MisconfigDueAtLeast(const Job& j, SimTime t) const {
  SimTime least = -1;
  auto consider = [&](const std::vector<JobStateTimeLimitAction>& list) {
    if (const JobStateTimeLimitAction* a = ActionFor(list, j.reason)) {
      const SimTime due = j.status_time + a->max_time_seconds * kMillisPerSecond;
      if (least < 0 || due < least) least = due;
    }
  };
  consider(ActionsAt(j.status_time));
  for (const ActionsUpdate& u : action_updates_) {
    if (u.time > t) break;
    if (u.time > j.status_time && rejected_paths_.count(u.path) == 0) consider(*u.actions);
  }
  return least;
}

// Whether a clock due at `due` (<= the time of the record being checked)
// fires: the list in effect then still has an entry for the reason.
bool LogChecker::Fires(const Job& j, SimTime due) const {
  return due >= 0 && ActionFor(ActionsAt(due), j.reason) != nullptr;
}

const std::vector<JobStateTimeLimitAction>& LogChecker::ActionsAt(SimTime t) const {
  const std::vector<JobStateTimeLimitAction>* list = &sc_.job_queue.time_limit_actions;
  for (const ActionsUpdate& u : action_updates_) {
    if (u.time > t) break;
    if (rejected_paths_.count(u.path) == 0) list = u.actions;
  }
  return *list;
}

const JobStateTimeLimitAction* LogChecker::ActionFor(const std::vector<JobStateTimeLimitAction>& list,
                                                      std::string_view reason) {
  const std::string_view code = reasons::ReasonCode(reason);
  for (const JobStateTimeLimitAction& a : list) {
    if (a.reason == code || a.reason == reason) return &a;
  }
  return nullptr;
}

// Every accepted DeleteQuotaShare at time t failed the share's jobs at t.
void LogChecker::CheckDeletesBefore(SimTime t, bool inclusive) {
  while (next_delete_ < deletes_.size() &&
         (deletes_[next_delete_].time < t || (inclusive && deletes_[next_delete_].time == t))) {
    const Delete& d = deletes_[next_delete_++];
    if (rejected_paths_.count(d.path) != 0) continue;
    for (const auto& [name, j] : jobs_) {
      if (!j.seen || j.share != d.share) continue;
      QS_FUZZ_CHECK(j.status == JobStatus::kSucceeded || j.status == JobStatus::kFailed,
                    "DeleteQuotaShare " << d.path << " at t=" << d.time << ": job " << name << " of share "
                                        << d.share << " is still " << JobStatusName(j.status));
    }
  }
}

// Every accepted TerminateServiceJob at time t fails its job at t.
void LogChecker::CheckTerminatesBefore(SimTime t, bool inclusive) {
  while (next_terminate_ < terminates_.size() &&
         (terminates_[next_terminate_].time < t || (inclusive && terminates_[next_terminate_].time == t))) {
    const Terminate& term = terminates_[next_terminate_++];
    if (rejected_paths_.count(term.path) != 0) continue;
    auto it = jobs_.find(term.job);
    QS_FUZZ_CHECK(it != jobs_.end() && it->second.seen,
                  "invariant 4: accepted TerminateServiceJob " << term.path << " names unknown job " << term.job);
    const Job& j = it->second;
    QS_FUZZ_CHECK(j.status == JobStatus::kFailed && j.status_time == term.time,
                  "invariant 4: TerminateServiceJob " << term.path << " at t=" << term.time << " was accepted but job "
                                                      << term.job << " is " << JobStatusName(j.status)
                                                      << " (lost job?)");
  }
}

int64_t LogChecker::Limit(const Share& s, const std::string& unit) const { return Get(s.limit, unit); }

SimTime LogChecker::Latency(const Job& j, LatencyKind kind, SimTime t) const {
  return LatencyOf(sc_.knobs, FindTypeLatencies(sc_.knobs.latencies, j.unit), kind, j.index, t);
}

int64_t LogChecker::BorrowCap(const Share& s, const std::string& unit) const {
  if (s.strategy != Strategy::kLendAndBorrow) return 0;
  if (s.borrow_limit < 0) return kUnlimited;
  return Limit(s, unit) * s.borrow_limit / 100;
}

void LogChecker::ResetShareAllowances(Share& s) {
  std::set<std::string> units;
  for (const auto* m : {&s.limit, &s.own, &s.borrowed, &s.lent}) {
    for (const auto& [u, v] : *m) units.insert(u);
  }
  s.allow_own.clear();
  s.allow_borrowed.clear();
  s.allow_lent.clear();
  for (const std::string& u : units) {
    const int64_t l = Limit(s, u), own = Get(s.own, u), b = Get(s.borrowed, u), lent = Get(s.lent, u);
    const int64_t cap = BorrowCap(s, u);
    s.allow_own[u] = std::max<int64_t>(0, own - l);
    s.allow_borrowed[u] = cap == kUnlimited ? 0 : std::max<int64_t>(0, b - cap);
    s.allow_lent[u] = s.strategy == Strategy::kReserve ? lent : std::max<int64_t>(0, own + lent - l);
  }
}

// Applies the configuration requests (and priority updates) with time <= t
// that were not rejected. Called only at points where every request up to t
// has been processed (inside a pass, or at the end).
void LogChecker::ApplyConfigUpTo(SimTime t) {
  for (; next_config_ < sc_.events.size() && sc_.events[next_config_].time <= t; ++next_config_) {
    const ScenarioEvent& ev = sc_.events[next_config_];
    if (rejected_paths_.count(ev.path) != 0) continue;
    if (const auto* c = std::get_if<CreateQuotaShareRequest>(&ev.request)) {
      Share& s = shares_[*c->quota_share_name];
      QS_FUZZ_CHECK(!s.exists, "validation: duplicate share " << *c->quota_share_name << " accepted");
      s.exists = true;
      s.order = share_count_++;
      for (const CapacityLimit& l : *c->capacity_limits) s.limit[l.capacity_unit] = l.max_capacity;
      s.strategy = *c->strategy;
      s.borrow_limit = c->borrow_limit.value_or(-1);
      ResetShareAllowances(s);
    } else if (const auto* u = std::get_if<UpdateQuotaShareRequest>(&ev.request)) {
      auto it = shares_.find(std::string(ShareNameFromArn(*u->quota_share_arn)));
      QS_FUZZ_CHECK(it != shares_.end() && it->second.exists,
                    "validation: UpdateQuotaShare " << ev.path << " of a missing share accepted");
      Share& s = it->second;
      if (u->capacity_limits) {
        s.limit.clear();
        for (const CapacityLimit& l : *u->capacity_limits) s.limit[l.capacity_unit] = l.max_capacity;
      }
      if (u->has_resource_sharing) {
        s.strategy = *u->strategy;
        s.borrow_limit = u->borrow_limit.value_or(-1);
      }
      ResetShareAllowances(s);
    } else if (const auto* p = std::get_if<UpdateServiceJobRequest>(&ev.request)) {
      auto it = jobs_.find(*p->job_id);
      QS_FUZZ_CHECK(it != jobs_.end() && it->second.seen,
                    "validation: UpdateServiceJob " << ev.path << " of an unknown job accepted");
      if (it->second.priority != *p->scheduling_priority) it->second.priority_changed_at = ev.time;
      it->second.priority = *p->scheduling_priority;
    } else if (const auto* e = std::get_if<UpdateServiceEnvironmentRequest>(&ev.request)) {
      if (e->state) env_enabled_ = *e->state == Toggle::kEnabled;
    } else if (const auto* d = std::get_if<DeleteQuotaShareRequest>(&ev.request)) {
      // Gone: no limits, no new jobs; borrowers keep what it lent them.
      auto it = shares_.find(std::string(ShareNameFromArn(*d->quota_share_arn)));
      QS_FUZZ_CHECK(it != shares_.end() && it->second.exists,
                    "validation: DeleteQuotaShare " << ev.path << " of a missing share accepted");
      it->second.exists = false;
      it->second.limit.clear();
    }
  }
}

// Invariants 1-3 with the "excess only after a change, and it only shrinks"
// allowance.
void LogChecker::CheckAccounting(const char* when) {
  for (auto& [u, use] : use_) {
    const int64_t ex = std::max<int64_t>(0, use - Get(se_, u));
    int64_t& allow = allow_se_[u];
    QS_FUZZ_CHECK(ex <= allow, "invariant 1: " << when << " at t=" << now_ << ": unit " << u << " in use " << use
                                               << " > environment capacity " << Get(se_, u));
    allow = std::min(allow, ex);
  }
  for (auto& [name, s] : shares_) {
    if (!s.exists) continue;
    std::set<std::string> units;
    for (const auto* m : {&s.own, &s.borrowed, &s.lent}) {
      for (const auto& [u, v] : *m) {
        if (v != 0) units.insert(u);
      }
    }
    for (const std::string& u : units) {
      const int64_t l = Limit(s, u), own = Get(s.own, u), b = Get(s.borrowed, u), lent = Get(s.lent, u);
      const int64_t cap = BorrowCap(s, u);
      const int64_t ex_own = std::max<int64_t>(0, own - l);
      const int64_t ex_b = cap == kUnlimited ? 0 : std::max<int64_t>(0, b - cap);
      const int64_t ex_lent = s.strategy == Strategy::kReserve ? lent : std::max<int64_t>(0, own + lent - l);
      int64_t& a_own = s.allow_own[u];
      int64_t& a_b = s.allow_borrowed[u];
      int64_t& a_lent = s.allow_lent[u];
      QS_FUZZ_CHECK(ex_own <= a_own, "invariant 2: " << when << " at t=" << now_ << ": share " << name << " holds "
                                                     << own << " own " << u << " over its limit " << l);
      QS_FUZZ_CHECK(ex_b <= a_b, "invariant 2: " << when << " at t=" << now_ << ": share " << name << " borrows " << b
                                                 << " " << u << " over its borrow cap " << cap << " (limit " << l
                                                 << ", borrowLimit " << s.borrow_limit << ")");
      QS_FUZZ_CHECK(ex_lent <= a_lent, "invariant 3: " << when << " at t=" << now_ << ": share " << name << " ("
                                                       << StrategyName(s.strategy) << ") lends " << lent << " " << u
                                                       << " with own use " << own << " and limit " << l);
      a_own = std::min(a_own, ex_own);
      a_b = std::min(a_b, ex_b);
      a_lent = std::min(a_lent, ex_lent);
    }
  }
}

void LogChecker::Release(Job& j) {
  use_[j.unit] -= j.own;
  Share& s = shares_[j.share];
  s.own[j.unit] -= j.own;
  for (const Part& p : j.parts) {
    use_[j.unit] -= p.qty;
    s.borrowed[j.unit] -= p.qty;
    if (p.lender == kUnassignedLenderName) {
      unassigned_lent_[j.unit] -= p.qty;
    } else {
      shares_[p.lender].lent[j.unit] -= p.qty;
    }
  }
  QS_FUZZ_CHECK(use_[j.unit] >= 0, "invariant 4: negative use of " << j.unit);
  if (j.attempt >= 0) attempts_[static_cast<size_t>(j.attempt)].release_line = line_;
  j.attempt = -1;
  j.own = 0;
  j.parts.clear();
  CheckAccounting("release");
}

std::pair<const std::string*, const LogChecker::Job*> LogChecker::HeadOf(const std::string& share) const {
  const std::string* name = nullptr;
  const Job* head = nullptr;
  for (const auto& [n, k] : jobs_) {
    if (k.status != JobStatus::kRunnable || k.share != share || !k.seen) continue;
    if (head == nullptr || RanksBefore(k, *head)) {
      head = &k;
      name = &n;
    }
  }
  return {name, head};
}

bool LogChecker::MayLeadReturned(const Job& j) const {
  if (sc_.knobs.victim_return != VictimReturn::kBehindReservation || !j.reserved) return false;
  for (const auto& [n, k] : jobs_) {
    if (&k == &j || k.status != JobStatus::kRunnable || k.share != j.share || !k.seen) continue;
    if (!RanksBefore(k, j)) continue;
    // Returned, and its priority did not change while it drained or since
    // (a change at the very instant of its return may come first or not).
    const SimTime pc = k.priority_changed_at;
    const bool returned =
        k.returned_at >= 0 && !(k.frozen_at < pc && pc < k.returned_at) && !(pc > k.returned_at);
    if (!returned) return false;
  }
  return true;
}

int64_t LogChecker::BorrowedOf(const Job& j) const {
  int64_t b = 0;
  for (const Part& p : j.parts) b += p.qty;
  return b;
}

SimTime LogChecker::DispatchedAt(const Job& j) const {
  return j.attempt >= 0 ? attempts_[static_cast<size_t>(j.attempt)].at : -1;
}

int LogChecker::VictimGroup(const Job& c, const Job& p, bool in_share) const {
  const std::string& u = p.req->instance_type;
  if (c.unit != u) return -1;
  if (in_share) return c.share == p.share && c.priority < p.priority ? 0 : -1;
  if (c.share == p.share) return -1;
  for (const Part& part : c.parts) {
    if (part.lender == p.share) return 0;
  }
  if (!c.parts.empty()) return 1;
  auto it = shares_.find(c.share);
  if (it != shares_.end() && Get(it->second.own, u) > Limit(it->second, u)) return 1;
  return -1;
}

bool LogChecker::VictimBefore(const std::string& an, const Job& a, int ag, const std::string& bn, const Job& b,
                              int bg) const {
  if (ag != bg) return ag < bg;
  const int64_t ab = BorrowedOf(a), bb = BorrowedOf(b);
  if (sc_.knobs.victim_order == VictimOrder::kMostBorrowedFirst && ab != bb) return ab > bb;
  if (a.priority != b.priority) return a.priority < b.priority;
  const SimTime at = DispatchedAt(a), bt = DispatchedAt(b);
  if (at != bt) return at > bt;
  if (ab != bb) return ab > bb;
  return an < bn;
}

void LogChecker::FlushVictimSet() {
  if (victim_set_.empty()) return;
  std::vector<std::string> set;
  set.swap(victim_set_);
  if (!victim_set_known_) return;
  const Job& p = jobs_.at(victim_for_);
  const Share& s = shares_.at(p.share);
  const std::string& u = p.req->instance_type;
  const int64_t n = p.req->instance_count;
  const int64_t h = Limit(s, u) - Get(s.own, u) - Get(s.lent, u);
  const int64_t free = Get(se_, u) - Get(use_, u);
  auto from_s = [&](const Job& v) {
    int64_t q = 0;
    for (const Part& part : v.parts) q += part.lender == p.share ? part.qty : 0;
    return q;
  };
  int64_t fs = 0, nv = 0;
  for (const std::string& v : set) {
    fs += from_s(jobs_.at(v));
    nv += attempts_[static_cast<size_t>(jobs_.at(v).attempt)].n;
  }
  QS_FUZZ_CHECK(h + fs >= n && free + nv >= n,
                "victims: the cross-share preemption for " << victim_for_ << " (" << n << " " << u << ") at t=" << now_
                                                           << " gives back too little: H " << h << " + " << fs
                                                           << " from " << p.share << ", free " << free << " + " << nv);
  for (const std::string& v : set) {
    const Job& vj = jobs_.at(v);
    const int64_t fv = from_s(vj), n_v = attempts_[static_cast<size_t>(vj.attempt)].n;
    QS_FUZZ_CHECK(!(h + fs - fv >= n && free + nv - n_v >= n),
                  "victims: " << v << " is preempted for " << victim_for_ << " (" << n << " " << u << ") at t=" << now_
                              << " although the other " << set.size() - 1 << " victim(s) give back enough (H " << h
                              << " + " << fs - fv << " from " << p.share << ", free " << free << " + " << nv - n_v
                              << "): fill-back keeps no victim the fit test holds without");
  }
}

void LogChecker::CheckVictim(const std::string& name, const Job& v, const std::string& for_name, const Job& p,
                             bool in_share, bool p_was_reserved) {
  const char* kind = in_share ? "in-share" : "cross-share";
  const int vg = VictimGroup(v, p, in_share);
  QS_FUZZ_CHECK(vg >= 0, "victims: " << name << " (" << v.unit << ", share " << v.share << ", priority " << v.priority
                                     << ", borrowed " << BorrowedOf(v) << ") is no candidate of the " << kind
                                     << " preemption for " << for_name << " (" << p.req->instance_type << ", share "
                                     << p.share << ", priority " << p.priority << ")");
  const PreemptionType type = in_share ? PreemptionType::kInShare : PreemptionType::kCrossShare;
  if (!victim_set_.empty()) {  // the same preemption (OnJob flushed the set otherwise)
    const Job& prev = jobs_.at(victim_name_);
    QS_FUZZ_CHECK(VictimBefore(victim_name_, prev, VictimGroup(prev, p, in_share), name, v, vg),
                  "victim order: " << victim_name_ << " is logged before " << name << " in the " << kind
                                   << " preemption for " << for_name << " at t=" << now_
                                   << " but does not rank before it in " << VictimOrderName(sc_.knobs.victim_order));
  } else {
    victim_set_known_ = !in_share && !p_was_reserved;
    for (const auto& [n, k] : jobs_) {
      if (k.seen && (k.frozen || (k.status == JobStatus::kRunnable && k.reserved && &k != &p))) {
        victim_set_known_ = false;
      }
    }
  }
  victim_set_.push_back(name);
  victim_time_ = now_;
  victim_for_ = for_name;
  victim_type_ = type;
  victim_name_ = name;
  // A candidate ranked before `v` that gives back the same sums was marked
  // before it; the fit test cannot tell them apart, so fill-back cannot keep
  // `v` and drop it.
  std::map<std::string, int64_t> from_v;
  for (const Part& part : v.parts) from_v[part.lender] += part.qty;
  for (const auto& [cn, c] : jobs_) {
    if (&c == &v || !c.seen || c.frozen || !IsDispatched(c.status)) continue;
    const int cg = VictimGroup(c, p, in_share);
    if (cg < 0 || c.own != v.own || BorrowedOf(c) != BorrowedOf(v) || !VictimBefore(cn, c, cg, name, v, vg)) continue;
    std::map<std::string, int64_t> from_c;
    for (const Part& part : c.parts) from_c[part.lender] += part.qty;
    QS_FUZZ_CHECK(from_c != from_v, "victim order: " << name << " preempted (" << kind << ") for " << for_name
                                                     << " at t=" << now_ << " while " << cn
                                                     << ", ranked before it and giving back the same, is spared");
  }
}

bool LogChecker::VisitedBefore(const std::string& a, const std::string& b) const {
  const Share& sa = shares_.at(a);
  const Share& sb = shares_.at(b);
  if (sc_.knobs.share_order == ShareOrder::kDeclaration) return sa.order < sb.order;
  // UNDER_LIMIT_FIRST: r = max over units of Use / L (L = 0 with use: infinite).
  auto ratio = [&](const Share& s) {
    std::pair<int64_t, int64_t> r{0, 1};  // num, den; den 0 = infinite
    std::set<std::string> units;
    for (const auto* m : {&s.limit, &s.own, &s.borrowed}) {
      for (const auto& [u, v] : *m) units.insert(u);
    }
    for (const std::string& u : units) {
      const int64_t use = Get(s.own, u) + Get(s.borrowed, u), l = Limit(s, u);
      if (l <= 0) {
        if (use > 0) return std::pair<int64_t, int64_t>{1, 0};
        continue;
      }
      if (static_cast<int64_t>(use) * r.second > static_cast<int64_t>(r.first) * l) r = {use, l};
    }
    return r;
  };
  const auto ra = ratio(sa), rb = ratio(sb);
  if ((ra.second == 0) != (rb.second == 0)) return rb.second == 0;
  if (ra.second != 0) {
    const int64_t x = static_cast<int64_t>(ra.first) * rb.second, y = static_cast<int64_t>(rb.first) * ra.second;
    if (x != y) return x < y;
  }
  const Job* ha = HeadOf(a).second;
  const Job* hb = HeadOf(b).second;
  if ((ha == nullptr) != (hb == nullptr)) return ha != nullptr;
  if (ha != nullptr) {
    if (ha->created_at != hb->created_at) return ha->created_at < hb->created_at;
    if (ha->index != hb->index) return ha->index < hb->index;
  }
  return a < b;
}

void LogChecker::CheckVisitingOrder(const std::string& name, const Job& j, bool own_only) {
  if (dispatch_instant_ != now_) {
    dispatch_instant_ = now_;
    dispatched_shares_.clear();
  }
  const bool first = dispatched_shares_.insert(j.share).second;
  const ShareOrder order = sc_.knobs.share_order;
  if (!first || !own_only || order == ShareOrder::kRoundRobin || !env_enabled_) return;
  for (const auto& [n, k] : jobs_) {
    if (k.seen && (k.frozen || (k.status == JobStatus::kRunnable && k.reserved))) return;
  }
  for (const auto& [an, a] : shares_) {
    if (!a.exists || an == j.share) continue;
    const auto [hn, h] = HeadOf(an);
    if (h == nullptr) continue;
    const std::string& u = h->req->instance_type;
    const int64_t n = h->req->instance_count;
    const int64_t l = Limit(a, u), own = Get(a.own, u), lent = Get(a.lent, u);
    if (own + n > l || l - own - lent < n || Get(se_, u) - Get(use_, u) < n) continue;
    QS_FUZZ_CHECK(!VisitedBefore(an, j.share),
                  "visiting order: " << name << " of " << j.share << " dispatched at t=" << now_ << " while share "
                                     << an << ", visited before it (" << ShareOrderName(order) << "), has head "
                                     << *hn << " (" << n << " " << u << ") that its own limit and the free "
                                     << "capacity let start");
  }
}

bool LogChecker::RanksBefore(const Job& a, const Job& b) const {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.created_at != b.created_at) return a.created_at < b.created_at;
  return a.index < b.index;
}

bool LogChecker::IsTerminateLine(const std::string& job, const JobRecord& r) const {
  if (r.status != JobStatus::kFailed) return false;
  for (size_t i = next_delete_; i < deletes_.size() && deletes_[i].time <= r.time; ++i) {
    const Delete& d = deletes_[i];
    if (d.time == r.time && d.share == r.share_name && r.status_reason == DeletedShareReason(d.share) &&
        rejected_paths_.count(d.path) == 0) {
      return true;
    }
  }
  for (size_t i = next_terminate_; i < terminates_.size() && terminates_[i].time <= r.time; ++i) {
    const Terminate& t = terminates_[i];
    if (t.time == r.time && t.job == job && t.reason == r.status_reason && rejected_paths_.count(t.path) == 0) {
      return true;
    }
  }
  return false;
}

LogChecker::Job& LogChecker::JobFor(const JobRecord& r) {
  auto it = jobs_.find(std::string(r.job_name));
  QS_FUZZ_CHECK(it != jobs_.end() && it->second.req != nullptr,
                "invariant 4: log line for job " << r.job_name << " that the scenario never submitted");
  return it->second;
}

void LogChecker::OnJob(const JobRecord& r) {
  if (!(r.preemption != PreemptionType::kNone && r.preemption == victim_type_ && r.time == victim_time_ &&
        r.preempted_for == victim_for_)) {
    FlushVictimSet();
  }
  Now(r.time);
  ++line_;
  const std::string name(r.job_name);
  Job& j = JobFor(r);
  const SubmitServiceJobRequest& req = *j.req;
  const SimTime t = r.time;
  if (!j.seen) {
    QS_FUZZ_CHECK(r.status == JobStatus::kSubmitted && r.status_reason.empty(),
                  "invariant 4: first line of " << name << " is " << JobStatusName(r.status) << ", not SUBMITTED");
    QS_FUZZ_CHECK(req.quota_share_name && r.share_name == *req.quota_share_name,
                  "invariant 4: job " << name << " logged in share " << r.share_name);
    j.seen = true;
    j.index = submitted_lines_++;
    j.share = std::string(r.share_name);
    j.status = JobStatus::kSubmitted;
    j.created_at = t;
    j.status_time = t;
    j.priority = req.scheduling_priority.value_or(0);
    return;
  }
  QS_FUZZ_CHECK(r.share_name == j.share, "invariant 4: job " << name << " changed share to " << r.share_name);
  QS_FUZZ_CHECK(!IsTerminal(j.status), "invariant 4: terminal job " << name << " (" << JobStatusName(j.status)
                                                                    << ") changed again to " << JobStatusName(r.status)
                                                                    << " at t=" << t);
  QS_FUZZ_CHECK(r.status != JobStatus::kSubmitted && r.status != JobStatus::kPending,
                "invariant 4: job " << name << " went back to " << JobStatusName(r.status));
  const JobStatus prev = j.status;

  // Preemption start: same status, the job freezes and keeps its instances.
  if (r.preemption != PreemptionType::kNone) {
    ApplyConfigUpTo(t);
    QS_FUZZ_CHECK(IsDispatched(prev) && r.status == prev && !j.frozen,
                  "preemption: victim " << name << " is " << JobStatusName(prev) << (j.frozen ? " (draining)" : "")
                                        << ", line says " << JobStatusName(r.status));
    const bool in_share = r.preemption == PreemptionType::kInShare;
    QS_FUZZ_CHECK(r.status_reason == (in_share ? reasons::kInShareInProgress : reasons::kCrossShareInProgress),
                  "preemption: wrong reason for " << name << ": " << r.status_reason);
    auto it = jobs_.find(std::string(r.preempted_for));
    QS_FUZZ_CHECK(it != jobs_.end() && it->second.seen && it->second.status == JobStatus::kRunnable,
                  "invariant 6: " << name << " preempted for " << r.preempted_for << " which is not RUNNABLE");
    Job& beneficiary = it->second;
    const bool was_reserved = beneficiary.reserved;
    beneficiary.reserved = true;
    if (in_share) {
      QS_FUZZ_CHECK(beneficiary.share == j.share && j.priority < beneficiary.priority,
                    "preemption: in-share victim " << name << " (priority " << j.priority << ", share " << j.share
                                                   << ") for " << r.preempted_for << " (priority "
                                                   << beneficiary.priority << ", share " << beneficiary.share << ")");
    } else {
      QS_FUZZ_CHECK(beneficiary.share != j.share,
                    "preemption: cross-share victim " << name << " is in the same share as " << r.preempted_for);
    }
    CheckVictim(name, j, std::string(r.preempted_for), beneficiary, in_share, was_reserved);
    // Checkpoints: whole intervals of the run since the RUNNING line.
    const std::optional<SimTime> interval =
        req.checkpoint_interval ? req.checkpoint_interval : sc_.knobs.checkpoint_interval;
    const SimTime kept = prev == JobStatus::kRunning && interval ? (t - j.status_time) / *interval * *interval : 0;
    QS_FUZZ_CHECK(r.checkpointed_ms == kept, "checkpoints: " << name << " preempted at t=" << t << " keeps "
                                                             << r.checkpointed_ms << " ms, expected " << kept);
    j.checkpointed += kept;
    j.frozen = true;
    j.frozen_at = t;
    j.frozen_type = r.preemption;
    j.reason = std::string(r.status_reason);
    return;
  }

  if (r.status == prev) {  // a statusReason change only
    QS_FUZZ_CHECK(prev == JobStatus::kRunnable && !j.frozen && r.status_reason != j.reason,
                  "invariant 4: job " << name << " repeated status " << JobStatusName(prev) << " with reason '"
                                      << r.status_reason << "' (was '" << j.reason << "')");
    j.reason = std::string(r.status_reason);
    j.status_time = t;
    return;
  }

  const bool terminated = IsTerminateLine(name, r);
  if (j.frozen) {
    QS_FUZZ_CHECK(r.status == JobStatus::kRunnable || r.status == JobStatus::kFailed,
                  "invariant 4: draining victim " << name << " became " << JobStatusName(r.status));
    if (!terminated) {
      QS_FUZZ_CHECK(t == j.frozen_at + Latency(j, LatencyKind::kDrain, j.frozen_at),
                    "drain: victim " << name << " preempted at t=" << j.frozen_at << " released at t=" << t);
      QS_FUZZ_CHECK(r.has_preemption_summary && r.preempted_attempt_count == j.preempted + 1,
                    "drain: victim " << name << " preemption count " << r.preempted_attempt_count << ", expected "
                                     << j.preempted + 1);
      j.preempted = r.preempted_attempt_count;
      const std::optional<int64_t>& retries = req.preemption_retries;
      if (r.status == JobStatus::kFailed) {
        QS_FUZZ_CHECK(r.status_reason == reasons::kPreemptionRetriesExhausted && retries && j.preempted == *retries + 1,
                      "preemption retries: " << name << " FAILED after " << j.preempted
                                             << " preemptions with preemptionRetriesBeforeTermination "
                                             << (retries ? std::to_string(*retries) : "unset") << " (reason '"
                                             << r.status_reason << "')");
      } else {
        QS_FUZZ_CHECK(!retries || j.preempted <= *retries,
                      "preemption retries: " << name << " re-queued after " << j.preempted
                                             << " preemptions with preemptionRetriesBeforeTermination " << *retries);
        QS_FUZZ_CHECK(r.status_reason == (j.frozen_type == PreemptionType::kInShare ? reasons::kInSharePreempted
                                                                                     : reasons::kCrossSharePreempted),
                      "drain: wrong reason for " << name << ": " << r.status_reason);
      }
    }
    Release(j);
    j.frozen = false;
    j.capacity_run_start = -1;
    j.returned_at = r.status == JobStatus::kRunnable ? t : -1;
  } else if (terminated) {
    if (IsDispatched(prev)) Release(j);
  } else {
    switch (prev) {
      case JobStatus::kSubmitted:
        QS_FUZZ_CHECK(r.status == JobStatus::kRunnable && r.status_reason.empty() &&
                          t == j.created_at + sc_.knobs.submit_latency,
                      "invariant 4: " << name << " SUBMITTED at t=" << j.created_at << " -> "
                                      << JobStatusName(r.status) << " at t=" << t);
        break;
      case JobStatus::kRunnable:
        if (r.status == JobStatus::kFailed) {
          // JobStateTimeLimit: the first matching action, maxTimeSeconds after the reason was given.
          const JobStateTimeLimitAction* action = ActionFor(ActionsAt(t), j.reason);
          // A capacity error's clock runs from the first SCHEDULED of the run
          // of errors; the check comes no earlier than the error itself.
          // Under timeLimitClock AT_HEAD a MISCONFIGURATION clock runs while
          // the job is its share's head (not in the log): no earlier than the
          // least possible due time.
          const bool capacity = j.reason == reasons::kInsufficientCapacity;
          const bool misconfig = StartsWith(j.reason, "MISCONFIGURATION");
          const bool at_head = misconfig && sc_.knobs.time_limit_clock == TimeLimitClock::kAtHead;
          const SimTime due = at_head ? MisconfigDueAtLeast(j, t) : TimeLimitDue(j);
          QS_FUZZ_CHECK(action != nullptr && (misconfig || capacity) &&
                            r.status_reason == std::string(reasons::kTimeLimitPrefix) + action->reason &&
                            (at_head ? due >= 0 && t >= due : t == due),
                        "invariant 4: RUNNABLE job " << name << " (reason '" << j.reason << "' since t="
                                                     << j.status_time << ") FAILED at t=" << t << " with '"
                                                     << r.status_reason << "'");
          break;
        }
        QS_FUZZ_CHECK(r.status == JobStatus::kScheduled,
                      "invariant 4: RUNNABLE job " << name << " became " << JobStatusName(r.status));
        {
          // A time-limit check due by now runs before the pass: a job past
          // its due time is never dispatched.
          const SimTime due = TimeLimitDue(j);
          QS_FUZZ_CHECK(due < 0 || due > t || !Fires(j, due), "time limit: " << name << " (reason '" << j.reason << "' since t="
                                                            << j.status_time << ") dispatched at t=" << t
                                                            << " although its time limit was due at t=" << due);
          ApplyConfigUpTo(t);
          QS_FUZZ_CHECK(env_enabled_, "dispatch: " << name << " dispatched while the environment is DISABLED");
          QS_FUZZ_CHECK(r.has_usage && r.capacity_unit == req.instance_type && r.quantity == req.instance_count,
                        "invariant 4: " << name << " dispatched with " << r.quantity << " x " << r.capacity_unit
                                        << ", asked for " << req.instance_count << " x " << req.instance_type);
          Share& s = shares_[j.share];
          QS_FUZZ_CHECK(s.exists, "dispatch: " << name << " of missing share " << j.share);
          if (!sc_.knobs.backfill && !MayLeadReturned(j)) {
            for (const auto& [other_name, k] : jobs_) {
              if (&k == &j || k.status != JobStatus::kRunnable || k.share != j.share || !k.seen) continue;
              QS_FUZZ_CHECK(!RanksBefore(k, j), "queue order: " << name << " (priority " << j.priority
                                                                << ") dispatched while " << other_name << " (priority "
                                                                << k.priority << ", reason '" << k.reason
                                                                << "') is ahead of it in share " << j.share
                                                                << " without backfill");
            }
          }
          CheckVisitingOrder(name, j, r.borrowed.empty());
          j.returned_at = -1;
          j.reserved = false;
          const std::string unit(r.capacity_unit);
          int64_t borrowed = 0;
          j.parts.clear();
          for (const BorrowedPart& p : r.borrowed) {
            QS_FUZZ_CHECK(p.capacity_unit == r.capacity_unit && p.quantity > 0,
                          "invariant 4: " << name << " borrows " << p.quantity << " of " << p.capacity_unit);
            const std::string lender(p.from);
            if (lender == kUnassignedLenderName) {
              QS_FUZZ_CHECK(sc_.knobs.unassigned_capacity == UnassignedCapacity::kLendable,
                            "invariant 3: " << name << " borrows unassigned capacity, which is UNUSED");
              unassigned_lent_[unit] += p.quantity;
            } else {
              auto it = shares_.find(lender);
              QS_FUZZ_CHECK(it != shares_.end() && it->second.exists && lender != j.share,
                            "invariant 3: " << name << " of " << j.share << " borrows from '" << lender << "'");
              QS_FUZZ_CHECK(it->second.strategy != Strategy::kReserve,
                            "invariant 3: RESERVE share " << lender << " lends " << p.quantity << " " << unit << " to "
                                                          << name);
              if (sc_.knobs.entitled_capacity == EntitledCapacity::kWithheld) {
                // docs/semantics.md §3 "Entitled capacity": a lender whose
                // head waits for this unit within its own limit lends none.
                // Skipped when a reserved job may lead ahead of returned
                // victims: its reservation may have been dropped unlogged.
                const auto [head_name, head] = HeadOf(lender);
                bool holder_may_lead = false;
                for (const auto& [n2, k2] : jobs_) {
                  if (k2.share == lender && k2.status == JobStatus::kRunnable && k2.seen && &k2 != head &&
                      MayLeadReturned(k2)) {
                    holder_may_lead = true;
                  }
                }
                if (head != nullptr && !holder_may_lead && head->req->instance_type == unit) {
                  const int64_t n = head->req->instance_count;
                  QS_FUZZ_CHECK(n > Get(se_, unit) || Get(it->second.own, unit) + n > Limit(it->second, unit),
                                "entitled capacity: " << lender << " lends " << p.quantity << " " << unit << " to "
                                                      << name << " while its head " << *head_name << " (" << n
                                                      << ") waits within its own limit");
                }
              }
              it->second.lent[unit] += p.quantity;
            }
            borrowed += p.quantity;
            j.parts.push_back({lender, p.quantity});
          }
          QS_FUZZ_CHECK(borrowed <= r.quantity, "invariant 4: " << name << " borrows more than it needs");
          QS_FUZZ_CHECK(borrowed == 0 || s.strategy == Strategy::kLendAndBorrow,
                        "invariant 2: " << name << " of " << StrategyName(s.strategy) << " share " << j.share
                                        << " borrows " << borrowed);
          j.unit = unit;
          j.attempt = static_cast<int64_t>(attempts_.size());
          attempts_.push_back({unit, r.quantity, j.index, line_, t, INT64_MAX, 0, name});
          j.own = r.quantity - borrowed;
          s.own[unit] += j.own;
          s.borrowed[unit] += borrowed;
          use_[unit] += r.quantity;
          CheckAccounting("dispatch");
        }
        break;
      case JobStatus::kScheduled:
        if (r.status == JobStatus::kRunnable) {
          // A capacity error: no attempt used (docs/semantics.md §2).
          QS_FUZZ_CHECK(FindTypeCapacity(sc_.knobs.capacity, j.unit) != nullptr &&
                            r.status_reason == reasons::kInsufficientCapacity &&
                            t == j.status_time + sc_.knobs.capacity.error_delay,
                        "capacity: " << name << " SCHEDULED at t=" << j.status_time << " -> RUNNABLE '"
                                     << r.status_reason << "' at t=" << t);
          if (j.capacity_run_start < 0) j.capacity_run_start = j.status_time;
          attempts_[static_cast<size_t>(j.attempt)].fate = -1;
          Release(j);
          break;
        }
        QS_FUZZ_CHECK(r.status == JobStatus::kStarting &&
                          t == j.status_time + Latency(j, LatencyKind::kProvision, j.status_time),
                      "invariant 4: " << name << " SCHEDULED at t=" << j.status_time << " -> "
                                      << JobStatusName(r.status) << " at t=" << t);
        attempts_[static_cast<size_t>(j.attempt)].fate = 1;
        j.capacity_run_start = -1;
        break;
      case JobStatus::kStarting:
        QS_FUZZ_CHECK(r.status == JobStatus::kRunning && t == j.status_time + Latency(j, LatencyKind::kDownload, j.status_time),
                      "invariant 4: " << name << " STARTING at t=" << j.status_time << " -> "
                                      << JobStatusName(r.status) << " at t=" << t);
        break;
      case JobStatus::kRunning: {
        // The run, cut by timeoutConfig.attemptDurationSeconds or, if it
        // comes first, StoppingCondition.MaxRuntimeInSeconds (§5).
        SimTime run = req.run_time - j.checkpointed;
        std::string_view stop_reason;
        if (req.attempt_duration_seconds && *req.attempt_duration_seconds * kMillisPerSecond < run) {
          run = *req.attempt_duration_seconds * kMillisPerSecond;
          stop_reason = reasons::kAttemptTimeout;
        }
        if (req.max_runtime_seconds && *req.max_runtime_seconds * kMillisPerSecond < run) {
          run = *req.max_runtime_seconds * kMillisPerSecond;
          stop_reason = reasons::kMaxRuntimeExceeded;
        }
        const bool timed_out = !stop_reason.empty();
        const SimTime end = j.status_time + run;
        QS_FUZZ_CHECK(t == end, "timing: " << name << " RUNNING at t=" << j.status_time << " ended at t=" << t
                                           << ", expected t=" << end);
        if (!timed_out && req.outcome == JobOutcome::kSucceeded) {
          QS_FUZZ_CHECK(r.status == JobStatus::kSucceeded && r.status_reason.empty(),
                        "invariant 4: " << name << " should have SUCCEEDED, got " << JobStatusName(r.status));
        } else {
          ++j.attempts_used;
          const std::string_view why = timed_out ? stop_reason : reasons::kSimulatedFailure;
          const JobStatus expect =
              j.attempts_used < req.retry_attempts.value_or(1) ? JobStatus::kRunnable : JobStatus::kFailed;
          QS_FUZZ_CHECK(r.status == expect && r.status_reason == why,
                        "retries: " << name << " attempt " << j.attempts_used << " of "
                                    << req.retry_attempts.value_or(1) << " ended " << JobStatusName(r.status) << " '"
                                    << r.status_reason << "', expected " << JobStatusName(expect) << " '" << why
                                    << "'");
        }
        Release(j);
        break;
      }
      default:
        QS_FUZZ_CHECK(false, "invariant 4: " << name << " left state " << JobStatusName(prev));
    }
  }
  j.status = r.status;
  j.reason = std::string(r.status_reason);
  j.status_time = t;
}

void LogChecker::OnRejected(const RejectedRecord& r) {
  FlushVictimSet();
  Now(r.time);
  const std::string path(r.path);
  const ScenarioEvent* ev = nullptr;
  for (const ScenarioEvent& e : sc_.events) {
    if (e.path == path) {
      ev = &e;
      break;
    }
  }
  QS_FUZZ_CHECK(ev != nullptr && ev->time == r.time && r.action == ActionName(ev->request),
                "rejected: line for " << path << " at t=" << r.time << " matches no request");
  QS_FUZZ_CHECK(rejected_paths_.insert(path).second, "rejected: " << path << " rejected twice");
}

void LogChecker::OnSnapshot(const SnapshotRecord& r) {
  FlushVictimSet();
  Now(r.time);
  size_t nonzero = 0;
  for (const auto& [u, use] : use_) nonzero += use != 0 ? 1 : 0;
  QS_FUZZ_CHECK(r.total_usage.size() == nonzero,
                "snapshot: " << r.total_usage.size() << " units in use, log says " << nonzero);
  for (const SnapshotUsage& su : r.total_usage) {
    QS_FUZZ_CHECK(Get(use_, std::string(su.capacity_unit)) == su.quantity,
                  "snapshot: " << su.capacity_unit << " in use " << su.quantity << ", log says "
                               << Get(use_, std::string(su.capacity_unit)));
  }
  for (const SnapshotShare& ss : r.shares) {
    auto it = shares_.find(std::string(ss.share_name));
    for (const SnapshotUsage& su : ss.usage) {
      const std::string u(su.capacity_unit);
      const int64_t mine = it == shares_.end() ? 0 : Get(it->second.own, u) + Get(it->second.borrowed, u);
      QS_FUZZ_CHECK(mine == su.quantity, "snapshot: share " << ss.share_name << " uses " << su.quantity << " " << u
                                                            << ", log says " << mine);
    }
  }
  for (const SnapshotJob& sj : r.front_of_queue) {
    auto it = jobs_.find(std::string(sj.job_name));
    QS_FUZZ_CHECK(it != jobs_.end() && it->second.seen && it->second.status == JobStatus::kRunnable,
                  "snapshot: front of queue lists " << sj.job_name << " which is not RUNNABLE");
  }
}

void LogChecker::OnCapacity(const CapacityRecord& r) {
  FlushVictimSet();
  Now(r.time);
  const std::string u(r.capacity_unit);
  se_[u] = r.max_capacity;
  allow_se_[u] = std::max<int64_t>(0, Get(use_, u) - r.max_capacity);
}

void LogChecker::OnEnd(SimTime end_time) {
  FlushVictimSet();
  QS_FUZZ_CHECK(end_time >= now_, "end: end time " << end_time << " before the last record " << now_);
  CheckTerminatesBefore(end_time, /*inclusive=*/true);
  CheckDeletesBefore(end_time, /*inclusive=*/true);
  CheckTimeLimitsBefore(end_time + 1);  // a check due at the last instant ran too
  ended_ = true;
  end_time_ = end_time;
  ApplyConfigUpTo(end_time);
  // Conservation: every accepted submission got its SUBMITTED line.
  for (const ScenarioEvent& ev : sc_.events) {
    if (ev.time > end_time) break;
    const auto* s = std::get_if<SubmitServiceJobRequest>(&ev.request);
    if (s == nullptr || rejected_paths_.count(ev.path) != 0) continue;
    QS_FUZZ_CHECK(jobs_[*s->job_name].seen, "invariant 4: accepted submission " << ev.path << " (" << *s->job_name
                                                                               << ") never appeared in the log");
  }
  if (sc_.knobs.horizon) return;  // jobs may legitimately be cut off
  std::set<std::string> blocked_shares;  // shares with a never-fitting RUNNABLE job
  for (const auto& [name, j] : jobs_) {
    if (j.seen && j.status == JobStatus::kRunnable && StartsWith(j.reason, "MISCONFIGURATION")) {
      blocked_shares.insert(j.share);
    }
  }
  for (const auto& [name, j] : jobs_) {
    if (!j.seen) continue;
    QS_FUZZ_CHECK(j.status != JobStatus::kSubmitted && !IsDispatched(j.status),
                  "invariant 4: job " << name << " left " << JobStatusName(j.status) << " at the end of the run");
    if (j.status == JobStatus::kRunnable && env_enabled_) {
      QS_FUZZ_CHECK(blocked_shares.count(j.share) != 0,
                    "liveness: job " << name << " of share " << j.share << " left RUNNABLE (reason '" << j.reason
                                     << "') at the end of the run although nothing blocks its share");
    }
  }
}

// Replays the provisioning rule over every dispatch in line order (a
// release at an earlier line frees its instances first) and checks each
// attempt's fate against it.
void LogChecker::CheckCapacityReplay() {
  std::map<std::string, int64_t> provisioned;
  std::vector<const Attempt*> held;  // provisioned, not yet released at the current line
  for (const Attempt& a : attempts_) {
    size_t keep = 0;
    for (const Attempt* h : held) {
      if (h->release_line < a.line) {
        provisioned[h->unit] -= h->n;
      } else {
        held[keep++] = h;
      }
    }
    held.resize(keep);
    const TypeCapacity* cap = FindTypeCapacity(sc_.knobs.capacity, a.unit);
    bool fails = false;
    int64_t available = -1;
    if (cap != nullptr) {
      available = AvailableAt(*cap, a.at);
      fails = ProvisioningDrawFails(sc_.knobs.capacity, *cap, a.seq, a.at) || provisioned[a.unit] + a.n > available;
    }
    QS_FUZZ_CHECK(a.fate == 0 || (a.fate < 0) == fails,
                  "capacity: " << a.job << " dispatched at t=" << a.at << " with " << a.n << " " << a.unit << " ("
                               << provisioned[a.unit] << " provisioned, " << available << " available) "
                               << (a.fate < 0 ? "got a capacity error" : "got its instances") << ", expected "
                               << (fails ? "a capacity error" : "its instances"));
    if (!fails) {
      provisioned[a.unit] += a.n;
      held.push_back(&a);
    }
  }
}

void LogChecker::Finish(const RunStats& stats) {
  QS_FUZZ_CHECK(ended_, "end: the engine never called OnEnd");
  CheckCapacityReplay();
  QS_FUZZ_CHECK(stats.jobs_submitted == submitted_lines_,
                "invariant 4: engine counts " << stats.jobs_submitted << " submitted jobs, log shows "
                                              << submitted_lines_);
  QS_FUZZ_CHECK(stats.end_time == end_time_,
                "end: engine says end time " << stats.end_time << ", OnEnd said " << end_time_);
}

}  // namespace qs::fuzz
