// File: engine/gen/qsb_codec.cc
//
// The encoders and decoders of qsb_codec.h: the head (everything before the
// events) and one event with its request, field by field in declaration
// order (qsb.h), and QsbEventWriter. qsb.cc frames them into a file.
#include "engine/gen/qsb_codec.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "engine/model/capacity.h"

namespace qs::gen::qsb_internal {
namespace {

// The fields of each request in a .qsb file, written once for both
// directions: RequestFields(io, r) lists r's fields in file order and is
// called with a PutIo (writing r: a request, or a QsbSubmitView of a
// generated submission) or a GetIo (reading into r, with the checks the
// JSON parser makes; `what` names the field in an error). A field added to
// a request is added here once, behind a version test when older files
// lack it (Absent: a reader leaves it unset).
class PutIo {
 public:
  explicit PutIo(Writer& w) : w_(w) {}
  uint32_t version() const { return w_.version; }
  void Str(std::string_view s) { w_.S(s); }
  template <typename S>
  void OStr(const std::optional<S>& s) {
    w_.OS(s);
  }
  void Int32(int64_t v, const char*) { w_.I(v); }
  template <typename T>
  void OInt32(const std::optional<T>& v, const char*) {
    w_.OI(v);
  }
  void Time(SimTime v, const char*) { w_.I(v); }
  void OInterval(const std::optional<SimTime>& v, const char*) { w_.OI(v); }
  template <typename E>
  void Enum(E e, int, const char*) {
    w_.E8(e);
  }
  template <typename E>
  void OEnum(const std::optional<E>& e, int, const char*) {
    w_.OE(e);
  }
  void Flag(bool b) { w_.B(b); }
  void OLimits(const std::optional<std::vector<CapacityLimit>>& l) { w_.OLimits(l); }
  void OActions(const std::optional<std::vector<JobStateTimeLimitAction>>& a) {
    w_.B(a.has_value());
    if (a) w_.Actions(*a);
  }
  template <typename T>
  void Absent(const T&) {}
  // A submission's strings: coded from version 10 (SymField).
  void Sym(SymField f, std::string_view s) {
    if (w_.version >= 10) w_.Sym(f, s);
    else w_.S(s);
  }
  template <typename S>
  void OSym(SymField f, const std::optional<S>& s) {
    if (w_.version >= 10) w_.OSym(f, s);
    else w_.OS(s);
  }
  template <typename S>
  void Name(const std::optional<S>& s) {
    if (w_.version >= 10) {
      w_.Name(s);
    } else {
      w_.OS(s);
      w_.name_number = s ? GeneratedJobNumber(*s) : std::nullopt;
    }
  }

 private:
  Writer& w_;
};

class GetIo {
 public:
  explicit GetIo(Reader& rd) : rd_(rd) {}
  uint32_t version() const { return rd_.version; }
  // Strings go into the buffers already there (a block decoded into the
  // last block's events allocates nothing).
  void Str(std::string& s) { rd_.SInto(s); }
  void OStr(std::optional<std::string>& s) { rd_.OSInto(s); }
  void Int32(int64_t& v, const char* what) { v = rd_.Int32(what); }
  template <typename T>
  void OInt32(std::optional<T>& v, const char* what) {
    v = rd_.OInt32(what);
  }
  void Time(SimTime& v, const char* what) { v = rd_.Time(what); }
  void OInterval(std::optional<SimTime>& v, const char* what) { v = rd_.OInterval(what); }
  template <typename E>
  void Enum(E& e, int count, const char* what) {
    e = rd_.E8<E>(count, what);
  }
  template <typename E>
  void OEnum(std::optional<E>& e, int count, const char* what) {
    e = rd_.OE<E>(count, what);
  }
  void Flag(bool& b) { b = rd_.B(); }
  void OLimits(std::optional<std::vector<CapacityLimit>>& l) { l = rd_.OLimits(); }
  // Checked as the JSON parser checks it (an invalid action list is a
  // malformed document, not a request AWS rejects).
  void OActions(std::optional<std::vector<JobStateTimeLimitAction>>& a) {
    if (rd_.B()) {
      a = rd_.Actions();
    } else {
      a.reset();
    }
  }
  template <typename T>
  void Absent(std::optional<T>& v) {
    v.reset();
  }
  void Sym(SymField f, std::string& s) {
    if (rd_.version >= 10) rd_.SymInto(f, s);
    else rd_.SInto(s);
  }
  void OSym(SymField f, std::optional<std::string>& s) {
    if (rd_.version >= 10) rd_.OSymInto(f, s);
    else rd_.OSInto(s);
  }
  void Name(std::optional<std::string>& s) {
    if (rd_.version >= 10) rd_.NameInto(s);
    else rd_.OSInto(s);
  }

 private:
  Reader& rd_;
};

// A submission's fields (after its type): a SubmitServiceJobRequest, or the
// QsbSubmitView `quotasim gen` writes from (the same member names).
template <typename Io, typename R>
void SubmitFields(Io& io, R& r) {
  io.Name(r.job_name);
  io.OSym(kSymQueue, r.job_queue);
  io.OSym(kSymJobType, r.service_job_type);
  io.OSym(kSymShare, r.quota_share_name);
  io.OSym(kSymShareId, r.share_identifier);
  io.OInt32(r.scheduling_priority, "schedulingPriority");
  io.OInt32(r.retry_attempts, "attempts");
  io.OInt32(r.attempt_duration_seconds, "attemptDurationSeconds");
  io.OInt32(r.preemption_retries, "preemptionRetriesBeforeTermination");
  io.Sym(kSymPayloadError, r.payload_error);
  io.Sym(kSymPayloadRaw, r.payload_raw);
  io.Sym(kSymUnit, r.instance_type);
  io.Int32(r.instance_count, "InstanceCount");
  io.Time(r.run_time, "runSeconds");
  io.Enum(r.outcome, 2, "outcome");
  if (io.version() >= 5) {  // optionals after the outcome from version 5
    io.OInt32(r.max_runtime_seconds, "MaxRuntimeInSeconds");
    io.OInterval(r.checkpoint_interval, "checkpointIntervalSeconds");
  } else {
    io.Absent(r.max_runtime_seconds);
    io.Absent(r.checkpoint_interval);
  }
}

// The fields CreateQuotaShare and UpdateQuotaShare share, after their
// name / ARN, in declaration order (engine/model/scenario.h).
template <typename Io, typename R>
void ShareConfigFields(Io& io, R& r) {
  io.OLimits(r.capacity_limits);
  io.Flag(r.has_resource_sharing);
  io.OEnum(r.strategy, 3, "strategy");
  io.OInt32(r.borrow_limit, "borrowLimit");
  io.OEnum(r.in_share_preemption, 2, "inSharePreemption");
  io.OEnum(r.state, 2, "state");
}

template <typename Io, typename R>
void RequestFields(Io& io, R& r) {
  using T = std::remove_const_t<R>;
  if constexpr (std::is_same_v<T, SubmitServiceJobRequest> || std::is_same_v<T, QsbSubmitView>) {
    SubmitFields(io, r);
  } else if constexpr (std::is_same_v<T, UpdateServiceJobRequest>) {
    io.OStr(r.job_id);
    io.OInt32(r.scheduling_priority, "schedulingPriority");
  } else if constexpr (std::is_same_v<T, TerminateServiceJobRequest>) {
    io.OStr(r.job_id);
    io.OStr(r.reason);
  } else if constexpr (std::is_same_v<T, CreateQuotaShareRequest>) {
    io.OStr(r.quota_share_name);
    io.OStr(r.job_queue);
    ShareConfigFields(io, r);
  } else if constexpr (std::is_same_v<T, UpdateQuotaShareRequest>) {
    io.OStr(r.quota_share_arn);
    ShareConfigFields(io, r);
  } else if constexpr (std::is_same_v<T, UpdateServiceEnvironmentRequest>) {
    io.OStr(r.service_environment);
    io.OEnum(r.state, 2, "state");
    io.OLimits(r.capacity_limits);
  } else if constexpr (std::is_same_v<T, GetJobQueueSnapshotRequest>) {
    io.OStr(r.job_queue);
  } else if constexpr (std::is_same_v<T, DeleteQuotaShareRequest>) {
    io.OStr(r.quota_share_arn);
  } else if constexpr (std::is_same_v<T, UpdateJobQueueRequest>) {
    io.OStr(r.job_queue);
    io.OEnum(r.state, 2, "state");
    io.OInt32(r.priority, "priority");
    io.OStr(r.scheduling_policy_arn);
    io.OActions(r.time_limit_actions);
  } else if constexpr (std::is_same_v<T, UpdateSchedulingPolicyRequest>) {
    io.OStr(r.arn);
    io.Flag(r.has_quota_share_policy);
    io.Flag(r.has_fairshare_policy);
  } else {
    static_assert(sizeof(T) == 0, "a request type without its .qsb fields");
  }
}

// A request's type code is its index in the Request variant.
template <typename T, size_t... I>
constexpr size_t RequestIndexOf(std::index_sequence<I...>) {
  size_t index = 0;
  static_cast<void>(((std::is_same_v<T, std::variant_alternative_t<I, Request>> && (index = I, true)) || ...));
  return index;
}
template <typename T>
inline constexpr size_t kRequestIndex = RequestIndexOf<T>(std::make_index_sequence<std::variant_size_v<Request>>{});

template <size_t... I>
bool EmplaceRequest(Request& r, uint64_t type, std::index_sequence<I...>) {
  return ((type == I && (r.emplace<I>(), true)) || ...);
}

void PutRequest(Writer& w, const Request& req) {
  w.U(req.index());
  PutIo io(w);
  std::visit([&io](const auto& r) { RequestFields(io, r); }, req);
}

// A submission's fields (after its type), into `r`, which may hold an
// earlier submission: every field is written, strings into the buffers
// already there.
void GetSubmitInto(Reader& rd, SubmitServiceJobRequest& r) {
  GetIo io(rd);
  SubmitFields(io, r);
}

Request GetRequest(Reader& rd, uint64_t type) {
  Request req;
  if (!EmplaceRequest(req, type, std::make_index_sequence<std::variant_size_v<Request>>{})) {
    rd.Fail(absl::StrCat("unknown request type ", type));
    return GetJobQueueSnapshotRequest{};
  }
  GetIo io(rd);
  std::visit([&io](auto& r) { RequestFields(io, r); }, req);
  return req;
}

// An event's time and path; paths are "quotaShares[i]" or "events[i]": the
// kind and index are stored. From version 10 the time as the (zig-zag)
// difference from the block's last event time (0 at its start), and the
// index as the difference from the last index of its kind plus one.
void PutEventHead(Writer& w, SimTime time, bool is_event, uint64_t index) {
  if (w.version < 10) {
    w.I(time);
    w.B(is_event);
    w.U(index);
    return;
  }
  // (In unsigned arithmetic: any time is written without overflow; the
  // reader refuses times outside [0, 1e12] s.)
  w.I(static_cast<int64_t>(static_cast<uint64_t>(time) - static_cast<uint64_t>(w.last_time)));
  w.last_time = time;
  w.B(is_event);
  w.I(static_cast<int64_t>(index - (w.last_index[is_event] + 1)));
  w.last_index[is_event] = index;
}

}  // namespace

// Everything before the events, shared by both versions.
void PutHead(Writer& w, const Scenario& s, size_t nevents, uint32_t version) {
  w.S(s.source);
  w.S(s.scheduling_policy.name);
  w.B(s.scheduling_policy.has_quota_share_policy);
  w.B(s.scheduling_policy.has_fairshare_policy);
  w.S(s.service_environment.name);
  w.E8(s.service_environment.state);
  w.Limits(s.service_environment.capacity_limits);
  w.S(s.job_queue.name);
  w.I(s.job_queue.priority);
  w.Actions(s.job_queue.time_limit_actions);
  const Knobs& k = s.knobs;
  w.I(k.submit_latency);
  w.I(k.provision);
  w.I(k.download);
  w.I(k.scheduling_interval);
  w.I(k.preemption_drain);
  w.E8(k.share_order);
  w.E8(k.victim_order);
  w.B(k.backfill);
  w.E8(k.unassigned_capacity);
  if (version >= 3) w.E8(k.entitled_capacity);
  if (version >= 4) w.E8(k.victim_return);
  if (version >= 5) w.OI(k.checkpoint_interval);
  w.B(k.horizon.has_value());
  if (k.horizon) w.I(*k.horizon);
  if (version >= 6) {
    const CapacityModel& c = k.capacity;
    w.U(c.seed);
    w.I(c.error_delay);
    w.U(c.types.size());
    for (const TypeCapacity& t : c.types) {
      w.S(t.instance_type);
      w.U(std::bit_cast<uint64_t>(t.failure_probability));
      w.S(t.availability_csv);
      w.U(t.availability.size());
      for (const AvailabilityStep& a : t.availability) {
        w.I(a.at);
        w.I(a.instances);
      }
    }
    const LatencyModel& l = k.latencies;
    w.U(l.seed);
    w.U(l.types.size());
    for (const TypeLatencies& t : l.types) {
      w.S(t.instance_type);
      for (const std::optional<LatencyDistribution>* d : {&t.provision, &t.download, &t.drain}) {
        w.B(d->has_value());
        if (!d->has_value()) continue;
        w.E8((*d)->kind);
        w.I((*d)->a);
        w.I((*d)->max);
        w.I((*d)->median);
        w.U(std::bit_cast<uint64_t>((*d)->sigma));
      }
    }
  }
  if (version >= 7) w.E8(k.time_limit_clock);
  w.I(s.submit_count);
  w.U(nevents);
}

void PutEvent(Writer& w, const ScenarioEvent& ev) {
  const bool share = ev.path.rfind("quotaShares[", 0) == 0;
  const size_t open = ev.path.find('[');
  PutEventHead(w, ev.time, !share,
               open == std::string::npos ? 0 : std::strtoull(ev.path.c_str() + open + 1, nullptr, 10));
  PutRequest(w, ev.request);
}

Scenario GetHead(Reader& rd, std::string_view source, uint32_t version) {
  Scenario s;
  s.source = rd.S();
  s.source = std::string(source);
  s.scheduling_policy.name = rd.S();
  s.scheduling_policy.has_quota_share_policy = rd.B();
  s.scheduling_policy.has_fairshare_policy = rd.B();
  s.service_environment.name = rd.S();
  s.service_environment.state = rd.E8<Toggle>(2, "state");
  s.service_environment.capacity_limits = rd.Limits();
  s.job_queue.name = rd.S();
  s.job_queue.priority = rd.Int32("priority");
  s.job_queue.time_limit_actions = rd.Actions();
  Knobs& k = s.knobs;
  k.submit_latency = rd.Time("submitLatencySeconds");
  k.provision = rd.Time("provisionSeconds");
  k.download = rd.Time("downloadSeconds");
  k.scheduling_interval = rd.Time("schedulingIntervalSeconds");
  k.preemption_drain = rd.Time("preemptionDrainSeconds");
  k.share_order = rd.E8<ShareOrder>(3, "shareOrder");
  k.victim_order = rd.E8<VictimOrder>(2, "victimOrder");
  k.backfill = rd.B();
  k.unassigned_capacity = rd.E8<UnassignedCapacity>(2, "unassignedCapacity");
  if (version >= 3) k.entitled_capacity = rd.E8<EntitledCapacity>(2, "entitledCapacity");
  if (version >= 4) k.victim_return = rd.E8<VictimReturn>(2, "victimReturn");
  if (version >= 5) k.checkpoint_interval = rd.OInterval("checkpointIntervalSeconds");
  if (rd.B()) k.horizon = rd.Time("horizonSeconds");
  if (version >= 6) {
    // simulation.capacity, checked as the JSON parser checks it.
    CapacityModel& c = k.capacity;
    c.seed = rd.U();
    c.error_delay = rd.Time("capacity.errorSeconds");
    if (c.error_delay < kMillisPerSecond) rd.Fail("capacity.errorSeconds must be at least 1 second");
    const uint64_t ntypes = rd.U();
    if (ntypes > 1000) rd.Fail("more than 1000 capacity instance types");
    for (uint64_t i = 0; i < ntypes && rd.ok(); ++i) {
      TypeCapacity t;
      t.instance_type = rd.S();
      if (t.instance_type.empty()) rd.Fail("an empty capacity instance type");
      if (!c.types.empty() && t.instance_type <= c.types.back().instance_type) {
        rd.Fail("capacity instance types not in strictly increasing name order");
      }
      t.failure_probability = std::bit_cast<double>(rd.U());
      if (!(t.failure_probability >= 0 && t.failure_probability <= 1)) {
        rd.Fail("capacity failureProbability must be between 0 and 1");
      }
      t.availability_csv = rd.S();
      const uint64_t nsteps = rd.U();
      if (nsteps > (uint64_t{1} << 24)) rd.Fail("more than 2^24 availability steps");
      for (uint64_t j = 0; j < nsteps && rd.ok(); ++j) {
        AvailabilityStep a;
        a.at = rd.Time("availability atSeconds");
        a.instances = rd.Int32("availability instances");
        if (a.instances < 0) rd.Fail("availability instances must be >= 0");
        if (!t.availability.empty() && a.at <= t.availability.back().at) {
          rd.Fail("availability steps not in strictly increasing atSeconds");
        }
        t.availability.push_back(a);
      }
      if (!t.availability.empty() && !t.availability_csv.empty()) rd.Fail("both availability and availabilityCsv");
      c.types.push_back(std::move(t));
    }
    // simulation.latencies, checked as the JSON parser checks it.
    LatencyModel& l = k.latencies;
    l.seed = rd.U();
    const uint64_t nlat = rd.U();
    if (nlat > 1000) rd.Fail("more than 1000 latency instance types");
    for (uint64_t i = 0; i < nlat && rd.ok(); ++i) {
      TypeLatencies t;
      t.instance_type = rd.S();
      if (t.instance_type.empty()) rd.Fail("an empty latency instance type");
      if (!l.types.empty() && t.instance_type <= l.types.back().instance_type) {
        rd.Fail("latency instance types not in strictly increasing name order");
      }
      int which = 0;
      for (std::optional<LatencyDistribution>* d : {&t.provision, &t.download, &t.drain}) {
        ++which;
        if (!rd.B()) continue;
        LatencyDistribution x;
        x.kind = rd.E8<Distribution>(3, "latency distribution");
        x.a = rd.Time("latency seconds");
        x.max = rd.Time("latency maxSeconds");
        x.median = rd.Time("latency medianSeconds");
        x.sigma = std::bit_cast<double>(rd.U());
        if (!(x.sigma >= 0 && x.sigma <= 10)) rd.Fail("latency sigma must be from 0 to 10");
        if (x.kind == Distribution::kUniform && x.max < x.a) rd.Fail("latency maxSeconds below minSeconds");
        if (x.kind == Distribution::kLognormal && x.max < x.median) rd.Fail("latency maxSeconds below medianSeconds");
        const SimTime top = x.kind == Distribution::kConstant ? x.a : x.max;
        if (which == 3 && top > kStopGracePeriod) rd.Fail("a drain latency beyond the 120 s stop grace period");
        *d = x;
      }
      l.types.push_back(std::move(t));
    }
    if (rd.ok()) {
      if (std::string problem = CapacityModelEndsProblem(s); !problem.empty()) rd.Fail(problem);
    }
  }
  if (version >= 7) k.time_limit_clock = rd.E8<TimeLimitClock>(2, "timeLimitClock");
  s.submit_count = rd.I();
  return s;
}

// One event into `ev`, which may hold an earlier one: a submission (nearly
// every event of a big file) is decoded field by field into the strings
// already there, so that decoding a block into the last block's events
// allocates next to nothing.
void GetEventInto(Reader& rd, ScenarioEvent& ev) {
  bool is_event = false;
  uint64_t idx = 0;
  if (rd.version < 10) {
    ev.time = rd.Time("time");
    is_event = rd.B();
    idx = rd.U();
  } else {
    const int64_t delta = rd.I();
    // The sum is checked before it is made: no overflow.
    if (delta < -rd.last_time || delta > kMaxSimTime - rd.last_time) rd.Fail("time must be in [0, 1e12] seconds");
    else rd.last_time += delta;
    ev.time = rd.last_time;
    is_event = rd.B();
    idx = rd.last_index[is_event] + 1 + static_cast<uint64_t>(rd.I());
    rd.last_index[is_event] = idx;
  }
  char path[40];
  char* p = path;
  const std::string_view kind = is_event ? "events[" : "quotaShares[";
  p = std::copy(kind.begin(), kind.end(), p);
  p = std::to_chars(p, path + sizeof(path) - 1, idx).ptr;
  *p++ = ']';
  ev.path.assign(path, static_cast<size_t>(p - path));
  if (const uint64_t type = rd.U(); type != kRequestIndex<SubmitServiceJobRequest>) {
    ev.request = GetRequest(rd, type);
    return;
  }
  if (!std::holds_alternative<SubmitServiceJobRequest>(ev.request)) ev.request.emplace<SubmitServiceJobRequest>();
  GetSubmitInto(rd, std::get<SubmitServiceJobRequest>(ev.request));
}

}  // namespace qs::gen::qsb_internal

namespace qs::gen {
namespace {

using qsb_internal::PutEvent;
using qsb_internal::PutEventHead;
using qsb_internal::Writer;

}  // namespace

void QsbBlockFacts::NoteTime(SimTime time) {
  if (events++ == 0) first_time = time;
  last_time = time;
}

void QsbBlockFacts::NoteEvent(const ScenarioEvent& ev) {
  if (const auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request)) {
    NoteSubmit(ev.time, qsb_internal::ViewOf(r->job_name), SubmitUnit(*r));
    return;
  }
  NoteTime(ev.time);
  requests |= !IsJobRequest(ev.request);
}

void QsbBlockFacts::NoteSubmit(SimTime time, std::optional<std::string_view> job_name,
                               std::optional<std::string_view> unit) {
  NoteSubmitParsed(time, job_name.has_value(), job_name ? GeneratedJobNumber(*job_name) : std::nullopt, unit);
}

void QsbBlockFacts::NoteSubmitParsed(SimTime time, bool named_job, std::optional<int64_t> number,
                                     std::optional<std::string_view> unit) {
  NoteTime(time);
  ++submits;
  if (unit && std::find(units.begin(), units.end(), *unit) == units.end()) units.emplace_back(*unit);
  if (!named_job) return;
  if (!number || (named > 0 && *number != first_job + static_cast<int64_t>(named))) generated_names = false;
  if (named == 0) first_job = number.value_or(-1);
  ++named;
}

QsbEventWriter::QsbEventWriter(size_t bytes, uint32_t version) : w_(std::make_unique<Writer>()) {
  w_->version = version;
  w_->out.reserve(bytes);
}

QsbEventWriter::~QsbEventWriter() = default;

std::string QsbEventWriter::Take() { return w_->out.Take(); }

void QsbEventWriter::Put(const ScenarioEvent& ev) {
  facts_.NoteEvent(ev);
  PutEvent(*w_, ev);
}

void QsbEventWriter::PutSubmit(const QsbSubmitView& v) {
  // PutEvent() of events[index] holding the submission.
  PutEventHead(*w_, v.time, true, v.index);
  w_->U(qsb_internal::kRequestIndex<SubmitServiceJobRequest>);
  qsb_internal::PutIo io(*w_);
  qsb_internal::SubmitFields(io, v);
  // The name as the writer parsed it (not parsed twice).
  facts_.NoteSubmitParsed(v.time, v.job_name.has_value(), w_->name_number, SubmitUnit(v));
}

}  // namespace qs::gen
