#include "engine/io/overrides.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/io/json_read.h"
#include "engine/model/capacity.h"
#include "engine/model/validation.h"
#include "engine/util/strings.h"

namespace qs {
namespace {

using json_read::EnumName;
using json_read::kInt32Max;

absl::Status Bad(std::string_view arg, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("--set ", Sv(arg), ": ", Sv(problem)));
}

bool ConsumePrefix(std::string_view* s, std::string_view prefix) {
  if (!s->starts_with(prefix)) return false;
  s->remove_prefix(prefix.size());
  return true;
}

template <typename E, size_t N>
bool ParseEnum(std::string_view value, const EnumName<E> (&names)[N], E* out) {
  for (const EnumName<E>& n : names) {
    if (n.name == value) {
      *out = n.value;
      return true;
    }
  }
  return false;
}

template <typename E, size_t N>
std::string Expected(const EnumName<E> (&names)[N]) {
  std::string s = "expected ";
  for (size_t i = 0; i < N; ++i) absl::StrAppend(&s, i == 0 ? "" : i + 1 == N ? " or " : ", ", Sv(names[i].name));
  return s;
}

template <typename E, size_t N>
std::string SetEnum(std::string_view value, const EnumName<E> (&names)[N], E* out) {
  return ParseEnum(value, names, out) ? "" : Expected(names);
}

constexpr std::string_view kUnknownKnob = "unknown knob";

// Applies knob=value to `k`: "" or what is wrong with the value
// (kUnknownKnob when `knob` is no knob).
std::string ApplyKnob(Knobs& k, std::string_view knob, std::string_view value) {
  auto seconds = [&](SimTime& out) -> std::string {
    double v;
    if (!absl::SimpleAtod(Sv(value), &v) || !(v >= 0 && v <= 1e12)) return "expected seconds in [0, 1e12]";
    out = static_cast<SimTime>(std::llround(v * 1000));
    return "";
  };
  auto seed = [&](uint64_t& out) -> std::string {
    return absl::SimpleAtoi(Sv(value), &out) ? "" : "expected an unsigned 64-bit integer";
  };
  if (knob == "submitLatencySeconds") return seconds(k.submit_latency);
  if (knob == "provisionSeconds") return seconds(k.provision);
  if (knob == "downloadSeconds") return seconds(k.download);
  if (knob == "schedulingIntervalSeconds") return seconds(k.scheduling_interval);
  if (knob == "preemptionDrainSeconds") return seconds(k.preemption_drain);
  if (knob == "checkpointIntervalSeconds" || knob == "horizonSeconds") {
    std::optional<SimTime>& out = knob == "horizonSeconds" ? k.horizon : k.checkpoint_interval;
    if (value == "none") {
      out.reset();
      return "";
    }
    SimTime t = 0;
    if (std::string e = seconds(t); !e.empty()) return e + " or none";
    if (t <= 0 && knob == "checkpointIntervalSeconds") return "expected seconds > 0 or none";
    out = t;
    return "";
  }
  if (knob == "shareOrder") return SetEnum(value, json_read::kShareOrders, &k.share_order);
  if (knob == "victimOrder") return SetEnum(value, json_read::kVictimOrders, &k.victim_order);
  if (knob == "unassignedCapacity") return SetEnum(value, json_read::kUnassigned, &k.unassigned_capacity);
  if (knob == "entitledCapacity") return SetEnum(value, json_read::kEntitled, &k.entitled_capacity);
  if (knob == "victimReturn") return SetEnum(value, json_read::kVictimReturns, &k.victim_return);
  if (knob == "timeLimitClock") return SetEnum(value, json_read::kTimeLimitClocks, &k.time_limit_clock);
  if (knob == "backfill") {
    if (value == "true") k.backfill = true;
    else if (value == "false") k.backfill = false;
    else return "expected true or false";
    return "";
  }
  if (knob == "capacity.seed") return seed(k.capacity.seed);
  if (knob == "latencies.seed") return seed(k.latencies.seed);
  if (knob == "capacity.errorSeconds") {
    SimTime t = 0;
    if (std::string e = seconds(t); !e.empty()) return e;
    if (t < kMillisPerSecond) return "expected seconds >= 1";
    k.capacity.error_delay = t;
    return "";
  }
  constexpr std::string_view kCap = "capacity.", kFail = ".failureProbability";
  if (knob.starts_with(kCap) && knob.ends_with(kFail) && knob.size() > kCap.size() + kFail.size()) {
    const std::string type(knob.substr(kCap.size(), knob.size() - kCap.size() - kFail.size()));
    double p;
    if (!absl::SimpleAtod(Sv(value), &p) || !(p >= 0 && p <= 1)) return "expected a probability in [0, 1]";
    auto it = std::find_if(k.capacity.types.begin(), k.capacity.types.end(),
                           [&](const TypeCapacity& c) { return c.instance_type == type; });
    if (it == k.capacity.types.end()) {
      TypeCapacity c;
      c.instance_type = type;
      // Kept sorted by type name, as the parser leaves them.
      it = k.capacity.types.insert(
          std::lower_bound(k.capacity.types.begin(), k.capacity.types.end(), type,
                           [](const TypeCapacity& a, const std::string& b) { return a.instance_type < b; }),
          std::move(c));
    }
    it->failure_probability = p;
    return "";
  }
  return std::string(kUnknownKnob);
}

// Sets (value > 0) or removes (0) `type` in `limits`; `add`: also when absent.
void SetLimit(std::vector<CapacityLimit>& limits, const std::string& type, int64_t value, bool add) {
  auto it = std::find_if(limits.begin(), limits.end(), [&](const CapacityLimit& l) { return l.capacity_unit == type; });
  if (it == limits.end()) {
    if (add && value > 0) limits.push_back({type, value});
    return;
  }
  if (value > 0) {
    it->max_capacity = value;
  } else {
    limits.erase(it);
  }
}

// A time-limit entry is the reason's when it names its code or whole text.
bool NamesReason(const std::string& entry, const std::string& reason) {
  return entry == reason || std::string_view(entry).starts_with(reason + " - ");
}

void SetTimeLimit(std::vector<JobStateTimeLimitAction>& actions, const Overrides::Item& it) {
  if (it.none) {
    actions.erase(std::remove_if(actions.begin(), actions.end(),
                                 [&](const JobStateTimeLimitAction& a) { return NamesReason(a.reason, it.name); }),
                  actions.end());
    return;
  }
  bool found = false;
  for (JobStateTimeLimitAction& a : actions) {
    if (NamesReason(a.reason, it.name)) {
      a.max_time_seconds = it.number;
      found = true;
    }
  }
  if (!found) actions.push_back({it.name, "RUNNABLE", it.number, "TERMINATE"});
}

bool IsShareKind(Overrides::Kind k) {
  return k == Overrides::Kind::kShareBorrowLimit || k == Overrides::Kind::kShareStrategy ||
         k == Overrides::Kind::kShareLimit || k == Overrides::Kind::kShareInSharePreemption;
}

// The share items of `items` for `share` applied to a CreateQuotaShare
// (`create`: every field set, new types added) or an UpdateQuotaShare (only
// the fields the update sets; types it lists); both requests name these
// fields alike. Returns the last item applied, or nullptr.
template <typename Request>
const Overrides::Item* ApplyShareItems(const std::vector<Overrides::Item>& items, const std::string& share, bool create,
                                       Request& r) {
  using Kind = Overrides::Kind;
  auto names = [&](const Overrides::Item& it) { return it.share == share || it.share == "*"; };
  const bool sets_borrow = std::any_of(items.begin(), items.end(), [&](const Overrides::Item& b) {
    return b.kind == Kind::kShareBorrowLimit && names(b);
  });
  const Overrides::Item* last = nullptr;
  for (const Overrides::Item& it : items) {
    if (!IsShareKind(it.kind) || !names(it)) continue;
    switch (it.kind) {
      case Kind::kShareBorrowLimit:
        if (!create && !r.has_resource_sharing) continue;
        // *.borrowLimit: every LEND_AND_BORROW share (AWS takes it on no other).
        if (it.share == "*" && r.strategy != Strategy::kLendAndBorrow) continue;
        r.borrow_limit = it.number;
        break;
      case Kind::kShareStrategy:
        if (!create && !r.has_resource_sharing) continue;
        r.strategy = it.strategy;
        r.has_resource_sharing = true;
        if (it.strategy != Strategy::kLendAndBorrow && !sets_borrow) r.borrow_limit.reset();
        break;
      case Kind::kShareLimit:
        if (!r.capacity_limits) continue;
        SetLimit(*r.capacity_limits, it.name, it.number, /*add=*/create);
        break;
      case Kind::kShareInSharePreemption:
        if (!create && !r.in_share_preemption) continue;
        r.in_share_preemption = it.toggle;
        break;
      default:
        continue;
    }
    last = &it;
  }
  return last;
}

absl::Status ParseInt(const Overrides::Item& it, int64_t lo, int64_t hi, std::string_view what, int64_t* out) {
  if (!absl::SimpleAtoi(it.value, out) || *out < lo || *out > hi) {
    return Bad(it.arg, absl::StrCat("expected ", Sv(what), " (", lo, " to ", hi, "), got '", it.value, "'"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string Overrides::KeysHelp() {
  return "keys: a simulation knob (submitLatencySeconds, provisionSeconds, downloadSeconds, "
         "schedulingIntervalSeconds, preemptionDrainSeconds, checkpointIntervalSeconds, horizonSeconds, shareOrder, "
         "victimOrder, backfill, unassignedCapacity, entitledCapacity, victimReturn, timeLimitClock, capacity.seed, "
         "capacity.errorSeconds, capacity.<type>.failureProbability, latencies.seed; also as simulation.<knob>), "
         "<share>.borrowLimit, <share>.strategy, <share>.capacityLimits.<type>, <share>.inSharePreemption (<share> * = every "
         "share; *.borrowLimit every LEND_AND_BORROW share), "
         "environment.capacityLimits.<type>, jobQueue.timeLimit.<reason>";
}

absl::StatusOr<Overrides::Item> Overrides::ParseItem(std::string_view arg) {
  Item it;
  it.arg = std::string(arg);
  const size_t eq = arg.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == arg.size()) {
    return Bad(arg, "expected KEY=VALUE; " + KeysHelp());
  }
  it.key = std::string(arg.substr(0, eq));
  it.value = std::string(arg.substr(eq + 1));
  std::string_view key = it.key;
  const bool simulation = ConsumePrefix(&key, "simulation.");
  {
    Knobs probe;
    const std::string e = ApplyKnob(probe, key, it.value);
    if (e != kUnknownKnob) {
      if (!e.empty()) return Bad(arg, absl::StrCat(e, ", got '", it.value, "'"));
      it.kind = Kind::kKnob;
      it.key = std::string(key);
      return it;
    }
  }
  if (simulation) return Bad(arg, absl::StrCat("unknown simulation knob '", Sv(key), "'; ", KeysHelp()));
  if (ConsumePrefix(&key, "environment.capacityLimits.")) {
    if (key.empty()) return Bad(arg, "environment.capacityLimits needs an instance type");
    it.kind = Kind::kEnvironmentLimit;
    it.name = std::string(key);
    if (absl::Status st = ParseInt(it, 0, kInt32Max, "instances; 0 removes the type", &it.number); !st.ok()) return st;
    return it;
  }
  if (ConsumePrefix(&key, "jobQueue.timeLimit.")) {
    if (key.empty()) return Bad(arg, "jobQueue.timeLimit needs a reason, e.g. MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT");
    it.kind = Kind::kTimeLimit;
    it.name = std::string(key);
    if (it.value == "none") {
      it.none = true;
      return it;
    }
    if (absl::Status st = ParseInt(it, 600, 86400, "maxTimeSeconds or none", &it.number); !st.ok()) return st;
    return it;
  }
  const size_t dot = key.find('.');
  for (std::string_view field : {"borrowLimit", "strategy", "inSharePreemption", "capacityLimits"}) {
    if (key == field || (dot == std::string_view::npos && key.starts_with(field))) {
      return Bad(arg, absl::StrCat("a share setting names its share: <share>.", Sv(field), ", or *.", Sv(field),
                                   " for every share"));
    }
  }
  if (dot == std::string_view::npos || dot == 0 ||
      (key.substr(0, dot) != "*" && !IsValidShareName(key.substr(0, dot)))) {
    return Bad(arg, absl::StrCat("unknown key '", it.key, "'; ", KeysHelp()));
  }
  it.share = std::string(key.substr(0, dot));
  std::string_view field = key.substr(dot + 1);
  if (field == "borrowLimit") {
    it.kind = Kind::kShareBorrowLimit;
    if (absl::Status st = ParseInt(it, -1, kInt32Max, "-1 (unlimited) or a percentage", &it.number); !st.ok()) {
      return st;
    }
  } else if (field == "strategy") {
    it.kind = Kind::kShareStrategy;
    if (!ParseEnum(it.value, json_read::kStrategies, &it.strategy)) {
      return Bad(arg, absl::StrCat(Expected(json_read::kStrategies), ", got '", it.value, "'"));
    }
  } else if (field == "inSharePreemption") {
    it.kind = Kind::kShareInSharePreemption;
    if (!ParseEnum(it.value, json_read::kToggles, &it.toggle)) {
      return Bad(arg, absl::StrCat(Expected(json_read::kToggles), ", got '", it.value, "'"));
    }
  } else if (ConsumePrefix(&field, "capacityLimits.") && !field.empty()) {
    it.kind = Kind::kShareLimit;
    it.name = std::string(field);
    if (absl::Status st = ParseInt(it, 0, kInt32Max, "instances; 0 removes the type", &it.number); !st.ok()) return st;
  } else {
    return Bad(arg, absl::StrCat("unknown key '", it.key, "'; ", KeysHelp()));
  }
  return it;
}

absl::StatusOr<Overrides> Overrides::Parse(const std::vector<std::string>& args) {
  Overrides o;
  for (const std::string& a : args) {
    absl::StatusOr<Item> it = ParseItem(a);
    if (!it.ok()) return it.status();
    o.items_.push_back(*std::move(it));
  }
  return o;
}

bool Overrides::touches_requests() const {
  return std::any_of(items_.begin(), items_.end(), [](const Item& it) { return it.kind != Kind::kKnob; });
}

std::string Overrides::ToString() const {
  std::vector<std::string> args;
  for (const Item& it : items_) args.push_back(it.arg);
  return absl::StrJoin(args, " ");
}

std::vector<std::string> Overrides::Units() const {
  std::set<std::string> units;
  for (const Item& it : items_) {
    if (it.kind == Kind::kShareLimit || it.kind == Kind::kEnvironmentLimit) units.insert(it.name);
  }
  return {units.begin(), units.end()};
}

absl::Status Overrides::ApplyToHead(Scenario& head) const {
  for (const Item& it : items_) {
    switch (it.kind) {
      case Kind::kKnob:
        ApplyKnob(head.knobs, it.key, it.value);  // checked by ParseItem
        break;
      case Kind::kEnvironmentLimit:
        SetLimit(head.service_environment.capacity_limits, it.name, it.number, /*add=*/true);
        break;
      case Kind::kTimeLimit:
        SetTimeLimit(head.job_queue.time_limit_actions, it);
        break;
      default:
        break;
    }
  }
  if (std::string p = CapacityModelEndsProblem(head); !p.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--set ", ToString(), ": ", p));
  }
  return absl::OkStatus();
}

absl::Status Overrides::ApplyToEvent(ScenarioEvent& ev) const {
  if (auto* c = std::get_if<CreateQuotaShareRequest>(&ev.request)) {
    if (!c->quota_share_name) return absl::OkStatus();
    const std::string& share = *c->quota_share_name;
    auto valid = [&] {
      return c->capacity_limits && ValidateShareCapacityLimits(*c->capacity_limits).ok() && c->has_resource_sharing &&
             ValidateResourceSharing(c->strategy, c->borrow_limit).ok();
    };
    const bool was_valid = valid();
    const Item* last = ApplyShareItems(items_, share, /*create=*/true, *c);
    if (last != nullptr && was_valid) {
      absl::Status st = ValidateShareCapacityLimits(*c->capacity_limits);
      if (st.ok()) st = ValidateResourceSharing(c->strategy, c->borrow_limit);
      if (!st.ok()) {
        return Bad(last->arg, absl::StrCat(ev.path, " (CreateQuotaShare of ", share,
                                           ") would be rejected: ", ClientExceptionMessage(st)));
      }
    }
    return absl::OkStatus();
  }
  if (auto* u = std::get_if<UpdateQuotaShareRequest>(&ev.request)) {
    if (!u->quota_share_arn) return absl::OkStatus();
    const std::string share(ShareNameFromArn(*u->quota_share_arn));
    auto valid = [&] {
      return (!u->capacity_limits || ValidateShareCapacityLimits(*u->capacity_limits).ok()) &&
             (!u->has_resource_sharing || ValidateResourceSharing(u->strategy, u->borrow_limit).ok());
    };
    const bool was_valid = valid();
    const Item* last = ApplyShareItems(items_, share, /*create=*/false, *u);
    if (last != nullptr && was_valid && !valid()) {
      absl::Status st = u->capacity_limits ? ValidateShareCapacityLimits(*u->capacity_limits) : absl::OkStatus();
      if (st.ok()) st = ValidateResourceSharing(u->strategy, u->borrow_limit);
      return Bad(last->arg, absl::StrCat(ev.path, " (UpdateQuotaShare of ", share, ") would be rejected: ",
                                         ClientExceptionMessage(st)));
    }
    return absl::OkStatus();
  }
  if (auto* e = std::get_if<UpdateServiceEnvironmentRequest>(&ev.request); e && e->capacity_limits) {
    for (const Item& it : items_) {
      if (it.kind == Kind::kEnvironmentLimit) SetLimit(*e->capacity_limits, it.name, it.number, /*add=*/false);
    }
    return absl::OkStatus();
  }
  if (auto* q = std::get_if<UpdateJobQueueRequest>(&ev.request); q && q->time_limit_actions) {
    for (const Item& it : items_) {
      if (it.kind == Kind::kTimeLimit) SetTimeLimit(*q->time_limit_actions, it);
    }
  }
  return absl::OkStatus();
}

absl::Status Overrides::CheckShares(const std::vector<ScenarioEvent>& events) const {
  std::vector<std::string> shares;
  for (const ScenarioEvent& ev : events) {
    if (const auto* c = std::get_if<CreateQuotaShareRequest>(&ev.request); c && c->quota_share_name) {
      if (std::find(shares.begin(), shares.end(), *c->quota_share_name) == shares.end()) {
        shares.push_back(*c->quota_share_name);
      }
    }
  }
  for (const Item& it : items_) {
    if (!IsShareKind(it.kind) || it.share == "*" || std::find(shares.begin(), shares.end(), it.share) != shares.end()) {
      continue;
    }
    return Bad(it.arg, absl::StrCat("the scenario has no quota share '", it.share, "' (its shares: ",
                                    shares.empty() ? "none" : absl::StrJoin(shares, ", "), ")"));
  }
  return absl::OkStatus();
}

absl::Status ApplyOverrides(const Overrides& o, Scenario& sc) {
  if (o.empty()) return absl::OkStatus();
  if (absl::Status st = o.ApplyToHead(sc); !st.ok()) return st;
  for (ScenarioEvent& ev : sc.events) {
    if (absl::Status st = o.ApplyToEvent(ev); !st.ok()) return st;
  }
  return o.CheckShares(sc.events);
}

OverriddenStream::OverriddenStream(const EventStream& base, const Overrides& o)
    : base_(base), o_(o), head_(base.head()) {
  head_status_ = o_.ApplyToHead(head_);
}

absl::Status OverriddenStream::ReadBlock(size_t b, std::vector<ScenarioEvent>& out) const {
  if (absl::Status st = base_.ReadBlock(b, out); !st.ok()) return st;
  for (ScenarioEvent& ev : out) {
    if (absl::Status st = o_.ApplyToEvent(ev); !st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace qs
