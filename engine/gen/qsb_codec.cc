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
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "engine/model/capacity.h"

namespace qs::gen::qsb_internal {
namespace {

// A submission's fields (after its type): the one writer of them, for
// PutRequest() and QsbEventWriter::PutSubmit() alike (GetSubmitInto() reads
// them back in this order).
void PutSubmitFields(Writer& w, const QsbSubmitView& v) {
  w.OS(v.job_name);
  w.OS(v.job_queue);
  w.OS(v.service_job_type);
  w.OS(v.quota_share_name);
  w.OS(v.share_identifier);
  w.OI(v.scheduling_priority);
  w.OI(v.retry_attempts);
  w.OI(v.attempt_duration_seconds);
  w.OI(v.preemption_retries);
  w.S(v.payload_error);
  w.S(v.payload_raw);
  w.S(v.instance_type);
  w.I(v.instance_count);
  w.I(v.run_time);
  w.E8(v.outcome);
  if (w.version >= 5) {
    w.OI(v.max_runtime_seconds);
    w.OI(v.checkpoint_interval);
  }
}

// The fields CreateQuotaShare and UpdateQuotaShare share, after their
// name / ARN, in declaration order (engine/model/scenario.h).
template <typename ShareRequest>
void PutShareConfig(Writer& w, const ShareRequest& r) {
  w.OLimits(r.capacity_limits);
  w.B(r.has_resource_sharing);
  w.OE(r.strategy);
  w.OI(r.borrow_limit);
  w.OE(r.in_share_preemption);
  w.OE(r.state);
}

template <typename ShareRequest>
void GetShareConfig(Reader& rd, ShareRequest& r) {
  r.capacity_limits = rd.OLimits();
  r.has_resource_sharing = rd.B();
  r.strategy = rd.OE<Strategy>(3, "strategy");
  r.borrow_limit = rd.OInt32("borrowLimit");
  r.in_share_preemption = rd.OE<Toggle>(2, "inSharePreemption");
  r.state = rd.OE<Toggle>(2, "state");
}

void PutRequest(Writer& w, const Request& req) {
  w.U(req.index());
  std::visit(
      [&](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, SubmitServiceJobRequest>) {
          PutSubmitFields(w, ViewOf(r));
        } else if constexpr (std::is_same_v<T, UpdateServiceJobRequest>) {
          w.OS(r.job_id);
          w.OI(r.scheduling_priority);
        } else if constexpr (std::is_same_v<T, TerminateServiceJobRequest>) {
          w.OS(r.job_id);
          w.OS(r.reason);
        } else if constexpr (std::is_same_v<T, CreateQuotaShareRequest>) {
          w.OS(r.quota_share_name);
          w.OS(r.job_queue);
          PutShareConfig(w, r);
        } else if constexpr (std::is_same_v<T, UpdateQuotaShareRequest>) {
          w.OS(r.quota_share_arn);
          PutShareConfig(w, r);
        } else if constexpr (std::is_same_v<T, UpdateServiceEnvironmentRequest>) {
          w.OS(r.service_environment);
          w.OE(r.state);
          w.OLimits(r.capacity_limits);
        } else if constexpr (std::is_same_v<T, GetJobQueueSnapshotRequest>) {
          w.OS(r.job_queue);
        } else if constexpr (std::is_same_v<T, DeleteQuotaShareRequest>) {
          w.OS(r.quota_share_arn);
        } else if constexpr (std::is_same_v<T, UpdateJobQueueRequest>) {
          w.OS(r.job_queue);
          w.OE(r.state);
          w.OI(r.priority);
          w.OS(r.scheduling_policy_arn);
          w.B(r.time_limit_actions.has_value());
          if (r.time_limit_actions) w.Actions(*r.time_limit_actions);
        } else if constexpr (std::is_same_v<T, UpdateSchedulingPolicyRequest>) {
          w.OS(r.arn);
          w.B(r.has_quota_share_policy);
          w.B(r.has_fairshare_policy);
        }
      },
      req);
}

// A submission's fields (after its type), into `r`, which may hold an
// earlier submission: every field is written, strings into the buffers
// already there.
void GetSubmitInto(Reader& rd, SubmitServiceJobRequest& r) {
  rd.OSInto(r.job_name);
  rd.OSInto(r.job_queue);
  rd.OSInto(r.service_job_type);
  rd.OSInto(r.quota_share_name);
  rd.OSInto(r.share_identifier);
  r.scheduling_priority = rd.OInt32("schedulingPriority");
  r.retry_attempts = rd.OInt32("attempts");
  r.attempt_duration_seconds = rd.OInt32("attemptDurationSeconds");
  r.preemption_retries = rd.OInt32("preemptionRetriesBeforeTermination");
  rd.SInto(r.payload_error);
  rd.SInto(r.payload_raw);
  rd.SInto(r.instance_type);
  r.instance_count = rd.Int32("InstanceCount");
  r.run_time = rd.Time("runSeconds");
  r.outcome = rd.E8<JobOutcome>(2, "outcome");
  r.max_runtime_seconds.reset();
  r.checkpoint_interval.reset();
  if (rd.version >= 5) {
    r.max_runtime_seconds = rd.OInt32("MaxRuntimeInSeconds");
    r.checkpoint_interval = rd.OInterval("checkpointIntervalSeconds");
  }
}

Request GetRequest(Reader& rd) {
  const uint64_t type = rd.U();
  switch (type) {
    case 0: {
      SubmitServiceJobRequest r;
      GetSubmitInto(rd, r);
      return r;
    }
    case 1: {
      UpdateServiceJobRequest r;
      r.job_id = rd.OS();
      r.scheduling_priority = rd.OInt32("schedulingPriority");
      return r;
    }
    case 2: {
      TerminateServiceJobRequest r;
      r.job_id = rd.OS();
      r.reason = rd.OS();
      return r;
    }
    case 3: {
      CreateQuotaShareRequest r;
      r.quota_share_name = rd.OS();
      r.job_queue = rd.OS();
      GetShareConfig(rd, r);
      return r;
    }
    case 4: {
      UpdateQuotaShareRequest r;
      r.quota_share_arn = rd.OS();
      GetShareConfig(rd, r);
      return r;
    }
    case 5: {
      UpdateServiceEnvironmentRequest r;
      r.service_environment = rd.OS();
      r.state = rd.OE<Toggle>(2, "state");
      r.capacity_limits = rd.OLimits();
      return r;
    }
    case 6: {
      GetJobQueueSnapshotRequest r;
      r.job_queue = rd.OS();
      return r;
    }
    case 7: {
      DeleteQuotaShareRequest r;
      r.quota_share_arn = rd.OS();
      return r;
    }
    case 8: {
      // Checked as the JSON parser checks it (an invalid action list is a
      // malformed document, not a request AWS rejects).
      UpdateJobQueueRequest r;
      r.job_queue = rd.OS();
      r.state = rd.OE<Toggle>(2, "state");
      r.priority = rd.OInt32("priority");
      r.scheduling_policy_arn = rd.OS();
      if (rd.B()) {
        r.time_limit_actions = rd.Actions();
      }
      return r;
    }
    case 9: {
      UpdateSchedulingPolicyRequest r;
      r.arn = rd.OS();
      r.has_quota_share_policy = rd.B();
      r.has_fairshare_policy = rd.B();
      return r;
    }
    default:
      rd.Fail(absl::StrCat("unknown request type ", type));
      return GetJobQueueSnapshotRequest{};
  }
}

// An event's time and path; paths are "quotaShares[i]" or "events[i]": the
// kind and index are stored.
void PutEventHead(Writer& w, SimTime time, bool is_event, uint64_t index) {
  w.I(time);
  w.B(is_event);
  w.U(index);
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
  ev.time = rd.Time("time");
  const bool is_event = rd.B();
  const uint64_t idx = rd.U();
  char path[40];
  char* p = path;
  const std::string_view kind = is_event ? "events[" : "quotaShares[";
  p = std::copy(kind.begin(), kind.end(), p);
  p = std::to_chars(p, path + sizeof(path) - 1, idx).ptr;
  *p++ = ']';
  ev.path.assign(path, static_cast<size_t>(p - path));
  // A peek at the type: GetRequest() reads it again.
  Reader peek = rd;
  if (peek.U() != 0) {
    ev.request = GetRequest(rd);
    return;
  }
  rd = peek;
  if (!std::holds_alternative<SubmitServiceJobRequest>(ev.request)) ev.request.emplace<SubmitServiceJobRequest>();
  GetSubmitInto(rd, std::get<SubmitServiceJobRequest>(ev.request));
}

}  // namespace qs::gen::qsb_internal

namespace qs::gen {
namespace {

using qsb_internal::PutEvent;
using qsb_internal::PutEventHead;
using qsb_internal::PutSubmitFields;
using qsb_internal::Writer;

}  // namespace

void QsbEventWriter::Put(const ScenarioEvent& ev) {
  Writer w;
  w.version = version_;
  w.out.swap(out_);
  PutEvent(w, ev);
  w.out.swap(out_);
}

void QsbEventWriter::PutSubmit(const QsbSubmitView& v) {
  Writer w;
  w.version = version_;
  w.out.swap(out_);
  // PutEvent() of events[index] holding the submission.
  PutEventHead(w, v.time, true, v.index);
  w.U(Request(std::in_place_type<SubmitServiceJobRequest>).index());
  PutSubmitFields(w, v);
  w.out.swap(out_);
}

}  // namespace qs::gen
