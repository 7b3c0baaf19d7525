#include "engine/gen/qsb.h"

#include "engine/model/capacity.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <functional>

#include "absl/strings/str_cat.h"
#include "engine/gen/memory_budget.h"
#include "engine/io/scenario_json.h"
#include "engine/util/strings.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/parallel_sort.h"
#include "oneapi/tbb/partitioner.h"

namespace qs::gen {
namespace {

constexpr char kMagic[4] = {'Q', 'S', 'B', '1'};
constexpr size_t kHeaderBytes = 4 + 4 + 8 + 8;
constexpr int64_t kInt32Max = 2147483647;

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::optional<std::string_view> ViewOf(const std::optional<std::string>& s) {
  return s ? std::optional<std::string_view>(*s) : std::nullopt;
}

class Writer {
 public:
  uint32_t version = kQsbVersion;  // of the file written (fields added later are not in older ones)
  void U(uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
  void I(int64_t v) { U((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void B(bool b) { out.push_back(b ? 1 : 0); }
  void S(std::string_view s) {
    U(s.size());
    out.append(s);
  }
  void OS(const std::optional<std::string_view>& s) {
    B(s.has_value());
    if (s) S(*s);
  }
  void OS(const std::optional<std::string>& s) { OS(ViewOf(s)); }
  // jobStateTimeLimitActions: the count, then each entry's fields.
  void Actions(const std::vector<JobStateTimeLimitAction>& list) {
    U(list.size());
    for (const JobStateTimeLimitAction& a : list) {
      S(a.reason);
      S(a.state);
      I(a.max_time_seconds);
      S(a.action);
    }
  }
  void OI(const std::optional<int64_t>& v) {
    B(v.has_value());
    if (v) I(*v);
  }
  template <typename E>
  void E8(E e) {
    out.push_back(static_cast<char>(e));
  }
  template <typename E>
  void OE(const std::optional<E>& e) {
    B(e.has_value());
    if (e) E8(*e);
  }
  void Limits(const std::vector<CapacityLimit>& l) {
    U(l.size());
    for (const CapacityLimit& c : l) {
      S(c.capacity_unit);
      I(c.max_capacity);
    }
  }
  void OLimits(const std::optional<std::vector<CapacityLimit>>& l) {
    B(l.has_value());
    if (l) Limits(*l);
  }
  std::string out;
};

class Reader {
 public:
  Reader(std::string_view data, size_t base, uint32_t file_version) : version(file_version), d_(data), base_(base) {}
  uint32_t version;  // of the file read
  bool ok() const { return err_.empty(); }
  const std::string& error() const { return err_; }
  bool done() const { return p_ == d_.size(); }
  void Fail(const std::string& what) {
    if (err_.empty()) err_ = absl::StrCat("byte offset ", base_ + p_, ": ", what);
  }
  uint64_t U() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= d_.size()) {
        Fail("truncated varint");
        return 0;
      }
      const uint8_t b = static_cast<uint8_t>(d_[p_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    Fail("varint longer than 10 bytes");
    return 0;
  }
  int64_t I() {
    const uint64_t z = U();
    return static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
  }
  bool B() {
    if (p_ >= d_.size()) {
      Fail("truncated");
      return false;
    }
    const uint8_t b = static_cast<uint8_t>(d_[p_++]);
    if (b > 1) Fail("flag byte is not 0 or 1");
    return b == 1;
  }
  std::string S() {
    std::string s;
    SInto(s);
    return s;
  }
  std::optional<std::string> OS() {
    if (!B()) return std::nullopt;
    return S();
  }
  // S() and OS() into a string that may already hold one (its buffer is
  // reused: decoding a block into last block's events allocates nothing).
  void SInto(std::string& s) {
    const uint64_t n = U();
    if (n > d_.size() - p_) {
      Fail("string length beyond the end");
      s.clear();
      return;
    }
    s.assign(d_.data() + p_, n);
    p_ += n;
  }
  void OSInto(std::optional<std::string>& s) {
    if (!B()) {
      s.reset();
      return;
    }
    if (!s) s.emplace();
    SInto(*s);
  }
  int64_t Int32(const char* what) {
    const int64_t v = I();
    if (v < -kInt32Max - 1 || v > kInt32Max) Fail(absl::StrCat(what, " out of int32 range"));
    return v;
  }
  std::optional<int64_t> OInt32(const char* what) {
    if (!B()) return std::nullopt;
    return Int32(what);
  }
  // An optional checkpoint interval: seconds > 0.
  // jobStateTimeLimitActions, checked as the JSON parser checks them.
  std::vector<JobStateTimeLimitAction> Actions() {
    std::vector<JobStateTimeLimitAction> out;
    const uint64_t n = U();
    if (n > 100) Fail("more than 100 jobStateTimeLimitActions");
    for (uint64_t i = 0; i < n && ok(); ++i) {
      JobStateTimeLimitAction a;
      a.reason = S();
      a.state = S();
      a.max_time_seconds = Int32("maxTimeSeconds");
      a.action = S();
      if (a.reason.empty() || a.state != "RUNNABLE" || a.action != "TERMINATE" || a.max_time_seconds < 600 ||
          a.max_time_seconds > 86400) {
        Fail("a jobStateTimeLimitActions entry out of range");
      }
      out.push_back(std::move(a));
    }
    return out;
  }
  std::optional<SimTime> OInterval(const char* what) {
    if (!B()) return std::nullopt;
    const SimTime t = Time(what);
    if (t <= 0) Fail(absl::StrCat(what, " must be > 0"));
    return t;
  }
  SimTime Time(const char* what) {
    const int64_t v = I();
    if (v < 0 || v > kMaxSimTime) Fail(absl::StrCat(what, " must be in [0, 1e12] seconds"));
    return v;
  }
  template <typename E>
  E E8(int count, const char* what) {
    if (p_ >= d_.size()) {
      Fail("truncated");
      return E{};
    }
    const uint8_t b = static_cast<uint8_t>(d_[p_++]);
    if (b >= count) Fail(absl::StrCat("bad ", what, " value ", b));
    return static_cast<E>(b);
  }
  template <typename E>
  std::optional<E> OE(int count, const char* what) {
    if (!B()) return std::nullopt;
    return E8<E>(count, what);
  }
  std::vector<CapacityLimit> Limits() {
    const uint64_t n = U();
    std::vector<CapacityLimit> l;
    if (n > 1000) {
      Fail("more than 1000 capacity limits");
      return l;
    }
    for (uint64_t i = 0; i < n && ok(); ++i) {
      CapacityLimit c;
      c.capacity_unit = S();
      c.max_capacity = Int32("maxCapacity");
      l.push_back(std::move(c));
    }
    return l;
  }
  std::optional<std::vector<CapacityLimit>> OLimits() {
    if (!B()) return std::nullopt;
    return Limits();
  }
  size_t left() const { return d_.size() - p_; }

 private:
  std::string_view d_;
  size_t base_;
  size_t p_ = 0;
  std::string err_;
};

QsbSubmitView ViewOf(const SubmitServiceJobRequest& r) {
  QsbSubmitView v;
  v.job_name = ViewOf(r.job_name);
  v.job_queue = ViewOf(r.job_queue);
  v.service_job_type = ViewOf(r.service_job_type);
  v.quota_share_name = ViewOf(r.quota_share_name);
  v.share_identifier = ViewOf(r.share_identifier);
  v.scheduling_priority = r.scheduling_priority;
  v.retry_attempts = r.retry_attempts;
  v.attempt_duration_seconds = r.attempt_duration_seconds;
  v.preemption_retries = r.preemption_retries;
  v.payload_error = r.payload_error;
  v.payload_raw = r.payload_raw;
  v.instance_type = r.instance_type;
  v.instance_count = r.instance_count;
  v.max_runtime_seconds = r.max_runtime_seconds;
  v.checkpoint_interval = r.checkpoint_interval;
  v.run_time = r.run_time;
  v.outcome = r.outcome;
  return v;
}

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
          w.OLimits(r.capacity_limits);
          w.B(r.has_resource_sharing);
          w.OE(r.strategy);
          w.OI(r.borrow_limit);
          w.OE(r.in_share_preemption);
          w.OE(r.state);
        } else if constexpr (std::is_same_v<T, UpdateQuotaShareRequest>) {
          w.OS(r.quota_share_arn);
          w.OLimits(r.capacity_limits);
          w.B(r.has_resource_sharing);
          w.OE(r.strategy);
          w.OI(r.borrow_limit);
          w.OE(r.in_share_preemption);
          w.OE(r.state);
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
      r.capacity_limits = rd.OLimits();
      r.has_resource_sharing = rd.B();
      r.strategy = rd.OE<Strategy>(3, "strategy");
      r.borrow_limit = rd.OInt32("borrowLimit");
      r.in_share_preemption = rd.OE<Toggle>(2, "inSharePreemption");
      r.state = rd.OE<Toggle>(2, "state");
      return r;
    }
    case 4: {
      UpdateQuotaShareRequest r;
      r.quota_share_arn = rd.OS();
      r.capacity_limits = rd.OLimits();
      r.has_resource_sharing = rd.B();
      r.strategy = rd.OE<Strategy>(3, "strategy");
      r.borrow_limit = rd.OInt32("borrowLimit");
      r.in_share_preemption = rd.OE<Toggle>(2, "inSharePreemption");
      r.state = rd.OE<Toggle>(2, "state");
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
  w.I(s.submit_count);
  w.U(nevents);
}

// An event's time and path; paths are "quotaShares[i]" or "events[i]": the
// kind and index are stored.
void PutEventHead(Writer& w, SimTime time, bool is_event, uint64_t index) {
  w.I(time);
  w.B(is_event);
  w.U(index);
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

// The JSON parser's rule, which engines rely on (later requests name jobs by
// jobName): no two submissions share a jobName. Empty when none do, else the
// message for the duplicate that comes first in event order (as the parser).
// Names are hashed and the hashes sorted in parallel; only equal hashes are
// compared by name.
std::string DuplicateJobName(const Scenario& s) {
  struct Key {
    uint64_t hash;
    size_t event;  // SIZE_MAX: not a named submission
    bool operator<(const Key& o) const { return hash != o.hash ? hash < o.hash : event < o.event; }
  };
  const size_t n = s.events.size();
  auto name_of = [&](size_t i) -> const std::string* {
    const auto* r = std::get_if<SubmitServiceJobRequest>(&s.events[i].request);
    return r != nullptr && r->job_name ? &*r->job_name : nullptr;
  };
  std::vector<Key> keys(n);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 4096), [&](const tbb::blocked_range<size_t>& range) {
    for (size_t i = range.begin(); i != range.end(); ++i) {
      const std::string* name = name_of(i);
      keys[i] = name ? Key{Fnv1a(*name), i} : Key{0, SIZE_MAX};
    }
  });
  tbb::parallel_sort(keys.begin(), keys.end());
  size_t best_second = SIZE_MAX, best_first = 0;
  for (size_t a = 0; a < n;) {
    size_t b = a + 1;
    while (b < n && keys[b].hash == keys[a].hash) ++b;
    // Within one hash (sorted by event), the first event whose name equals
    // an earlier one's. (Many copies of one name stop at the second; only
    // distinct names with one hash are compared pairwise.)
    bool found = false;
    for (size_t y = a + 1; y < b && !found && keys[y].event != SIZE_MAX; ++y) {
      for (size_t x = a; x < y; ++x) {
        if (*name_of(keys[x].event) == *name_of(keys[y].event)) {
          if (keys[y].event < best_second) {
            best_second = keys[y].event;
            best_first = keys[x].event;
          }
          found = true;
          break;
        }
      }
    }
    a = b;
  }
  if (best_second == SIZE_MAX) return {};
  return absl::StrCat(s.events[best_second].path, ".request.jobName: duplicate jobName '",
                      *name_of(best_second), "' (first at ", s.events[best_first].path, ")");
}

// The file header (magic, version, payload size, checksum), with room
// reserved for the payload that follows it.
std::string FrameHeader(uint32_t version, uint64_t payload_bytes, uint64_t sum) {
  std::string out(kMagic, 4);
  out.reserve(kHeaderBytes + payload_bytes);
  auto put32 = [&](uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  auto put64 = [&](uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); };
  put32(version);
  put64(payload_bytes);
  put64(sum);
  return out;
}

std::string Frame(uint32_t version, std::string_view payload, uint64_t sum) {
  std::string out = FrameHeader(version, payload.size(), sum);
  out += payload;
  return out;
}

uint64_t Get64(std::string_view b, size_t at) {
  uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}

absl::StatusOr<Scenario> DecodeV1(std::string_view payload, std::string_view source, uint64_t memory_bytes,
                                  const std::function<absl::Status(const std::string&)>& err) {
  Reader rd(payload, kHeaderBytes, 1);
  Scenario s = GetHead(rd, source, 1);
  const uint64_t nevents = rd.U();
  // Every event takes at least 4 bytes: a count beyond that is corrupt.
  if (nevents > rd.left() / 4 + 1) rd.Fail("event count larger than the file can hold");
  if (!rd.ok()) return err(rd.error());
  if (absl::Status st = CheckMemoryBudget(nevents, memory_bytes, source); !st.ok()) return st;
  s.events.reserve(nevents);
  SimTime last = 0;
  int64_t submits = 0;
  for (uint64_t i = 0; i < nevents && rd.ok(); ++i) {
    ScenarioEvent ev;
    GetEventInto(rd, ev);
    if (ev.time < last) rd.Fail("events are not sorted by time");
    last = ev.time;
    if (std::holds_alternative<SubmitServiceJobRequest>(ev.request)) ++submits;
    s.events.push_back(std::move(ev));
  }
  if (rd.ok() && !rd.done()) rd.Fail("trailing bytes after the last event");
  if (rd.ok() && submits != s.submit_count) rd.Fail("submit count does not match the events");
  if (!rd.ok()) return err(rd.error());
  if (std::string dup = DuplicateJobName(s); !dup.empty()) return err(dup);
  return s;
}

// Version 2's head and block table. Block offsets are file offsets.
struct BlockRef {
  uint64_t count = 0, offset = 0, bytes = 0, sum = 0;
  uint64_t first = 0;  // index of its first event
};
struct V2Layout {
  Scenario head;
  uint64_t nevents = 0;
  std::vector<BlockRef> blocks;
};

// `head` is the head's bytes (checksum already checked), found at file
// offset kHeaderBytes + 8; body_bytes follow it up to the end of the file.
absl::StatusOr<V2Layout> ParseV2Head(std::string_view head, uint64_t body_bytes, std::string_view source,
                                     uint32_t version, const std::function<absl::Status(const std::string&)>& err) {
  Reader rd(head, kHeaderBytes + 8, version);
  V2Layout out;
  out.head = GetHead(rd, source, version);
  out.nevents = rd.U();
  const uint64_t nblocks = rd.U();
  const uint64_t body_at = kHeaderBytes + 8 + head.size();
  if (nblocks > body_bytes / 4 + 1) rd.Fail("block count larger than the file can hold");
  uint64_t total = 0, offset = 0;
  for (uint64_t b = 0; b < nblocks && rd.ok(); ++b) {
    BlockRef k;
    k.count = rd.U();
    k.bytes = rd.U();
    k.sum = rd.U();
    k.first = total;
    k.offset = body_at + offset;
    // Every event takes at least 4 bytes.
    if (k.bytes > body_bytes - offset) rd.Fail(absl::StrCat("event block ", b, " extends beyond the end (truncated?)"));
    else if (k.count > k.bytes / 4 + 1) rd.Fail(absl::StrCat("event block ", b, " counts more events than it can hold"));
    total += k.count;
    offset += k.bytes;
    out.blocks.push_back(k);
  }
  if (rd.ok() && !rd.done()) rd.Fail("trailing bytes after the block table");
  if (rd.ok() && total != out.nevents) rd.Fail("event count does not match the event blocks");
  if (rd.ok() && offset != body_bytes) rd.Fail("trailing bytes after the last event block");
  if (!rd.ok()) return err(rd.error());
  return out;
}

// Decodes block b (`bytes`, as found at k.offset) into out[0..k.count):
// empty, or the error (without the source).
struct BlockFacts {
  int64_t submits = 0;
  SimTime first_time = 0, last_time = 0;
};
std::string DecodeBlock(std::string_view bytes, const BlockRef& k, size_t b, ScenarioEvent* out, BlockFacts& facts,
                        uint32_t version) {
  if (Fnv1a(bytes) != k.sum) return absl::StrCat("checksum mismatch in event block ", b, " (corrupted file)");
  Reader br(bytes, k.offset, version);
  SimTime last = 0;
  for (uint64_t i = 0; i < k.count && br.ok(); ++i) {
    ScenarioEvent& ev = out[i];
    GetEventInto(br, ev);
    if (i == 0) facts.first_time = ev.time;
    else if (ev.time < last) br.Fail("events are not sorted by time");
    last = ev.time;
    if (std::holds_alternative<SubmitServiceJobRequest>(ev.request)) ++facts.submits;
  }
  facts.last_time = last;
  if (br.ok() && !br.done()) br.Fail(absl::StrCat("trailing bytes in event block ", b));
  return br.ok() ? std::string() : br.error();
}

absl::StatusOr<Scenario> DecodeV2(std::string_view payload, uint64_t head_sum, std::string_view source,
                                  uint32_t version, uint64_t memory_bytes,
                                  const std::function<absl::Status(const std::string&)>& err) {
  if (payload.size() < 8) return err("payload shorter than its head length (truncated?)");
  const uint64_t head_bytes = Get64(payload, 0);
  if (head_bytes > payload.size() - 8) return err("head length beyond the end (truncated?)");
  const std::string_view head = payload.substr(8, head_bytes);
  if (Fnv1a(head) != head_sum) return err("checksum mismatch in the head (corrupted file)");
  absl::StatusOr<V2Layout> layout = ParseV2Head(head, payload.size() - 8 - head_bytes, source, version, err);
  if (!layout.ok()) return layout.status();
  Scenario s = std::move(layout->head);
  const std::vector<BlockRef>& blocks = layout->blocks;
  if (absl::Status st = CheckMemoryBudget(layout->nevents, memory_bytes, source); !st.ok()) return st;
  // The blocks decode independently, in parallel, each into its own slice
  // of the events; errors are reported for the first bad block, so the
  // result (and the message) never depends on the thread count.
  s.events.resize(layout->nevents);
  std::vector<std::string> errors(blocks.size());
  std::vector<BlockFacts> facts(blocks.size());
  tbb::parallel_for(tbb::blocked_range<size_t>(0, blocks.size(), 1), [&](const tbb::blocked_range<size_t>& range) {
    for (size_t b = range.begin(); b != range.end(); ++b) {
      const BlockRef& k = blocks[b];
      errors[b] = DecodeBlock(payload.substr(k.offset - kHeaderBytes, k.bytes), k, b, &s.events[k.first], facts[b],
                              version);
    }
  }, tbb::simple_partitioner());
  int64_t submits = 0;
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (!errors[b].empty()) return err(errors[b]);
    if (b > 0 && blocks[b].count > 0 && blocks[b - 1].count > 0 && facts[b].first_time < facts[b - 1].last_time) {
      return err(absl::StrCat("events are not sorted by time (event block ", b, ")"));
    }
    submits += facts[b].submits;
  }
  if (submits != s.submit_count) return err("submit count does not match the events");
  if (std::string dup = DuplicateJobName(s); !dup.empty()) return err(dup);
  return s;
}

}  // namespace

std::string EncodeQsb(const Scenario& s, uint32_t version, size_t block_events) {
  if (version == 1) {
    Writer head;
    head.version = 1;
    PutHead(head, s, s.events.size(), 1);
    for (const ScenarioEvent& ev : s.events) PutEvent(head, ev);
    return Frame(1, head.out, Fnv1a(head.out));
  }
  return EncodeQsbEvents(
      s, s.events.size(),
      [&](size_t first, size_t end, QsbEventWriter& w) {
        for (size_t i = first; i < end; ++i) w.Put(s.events[i]);
      },
      block_events, version);
}

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


uint64_t QsbChecksum(std::string_view bytes) { return Fnv1a(bytes); }

std::string QsbPrefix(const Scenario& head_of, size_t nevents, const std::vector<QsbBlockInfo>& blocks,
                      uint32_t version) {
  Writer head;
  PutHead(head, head_of, nevents, version);
  head.U(blocks.size());
  uint64_t total = 0;
  for (const QsbBlockInfo& b : blocks) {
    head.U(b.events);
    head.U(b.bytes);
    head.U(b.sum);
    total += b.bytes;
  }
  // payload = head length | head | blocks.
  const uint64_t head_bytes = head.out.size();
  std::string prefix = FrameHeader(version, 8 + head_bytes + total, Fnv1a(head.out));
  prefix.append(reinterpret_cast<const char*>(&head_bytes), 8);
  prefix += head.out;
  prefix.shrink_to_fit();  // FrameHeader reserved room for the whole file
  return prefix;
}

QsbParts EncodeQsbParts(const Scenario& head_of, size_t nevents, const QsbEventRange& events,
                        size_t block_events, uint32_t version) {
  // Version 2: events in blocks of block_events, encoded in parallel.
  block_events = std::max<size_t>(1, block_events);
  const size_t nblocks = (nevents + block_events - 1) / block_events;
  std::vector<std::string> blocks(nblocks);
  std::vector<uint64_t> sums(nblocks);  // hashed here, in parallel: byte by byte, FNV-1a is slow
  tbb::parallel_for(tbb::blocked_range<size_t>(0, nblocks, 1), [&](const tbb::blocked_range<size_t>& range) {
    for (size_t b = range.begin(); b != range.end(); ++b) {
      const size_t first = b * block_events, end = std::min(nevents, (b + 1) * block_events);
      QsbEventWriter w((end - first) * kQsbReserveBytesPerEvent, version);
      events(first, end, w);
      blocks[b] = w.Take();
      sums[b] = Fnv1a(blocks[b]);
    }
  }, tbb::simple_partitioner());
  std::vector<QsbBlockInfo> table(nblocks);
  for (size_t b = 0; b < nblocks; ++b) {
    table[b] = QsbBlockInfo{std::min(nevents, (b + 1) * block_events) - b * block_events, blocks[b].size(), sums[b]};
  }
  QsbParts parts;
  parts.prefix = QsbPrefix(head_of, nevents, table, version);
  parts.blocks = std::move(blocks);
  return parts;
}

std::string EncodeQsbEvents(const Scenario& head_of, size_t nevents, const QsbEventRange& events,
                            size_t block_events, uint32_t version) {
  QsbParts parts = EncodeQsbParts(head_of, nevents, events, block_events, version);
  // The frame is built in place (one copy of the blocks, each freed once
  // appended).
  std::string out = std::move(parts.prefix);
  for (std::string& b : parts.blocks) {
    out += b;
    std::string().swap(b);
  }
  return out;
}

absl::Status WriteQsbParts(QsbParts parts, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::NotFoundError(absl::StrCat(path, ": cannot write"));
  out.write(parts.prefix.data(), static_cast<std::streamsize>(parts.prefix.size()));
  for (std::string& b : parts.blocks) {
    out.write(b.data(), static_cast<std::streamsize>(b.size()));
    std::string().swap(b);
  }
  out.flush();
  if (!out) return absl::DataLossError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

absl::StatusOr<Scenario> DecodeQsb(std::string_view bytes, std::string_view source, uint64_t memory_bytes) {
  auto err = [&](const std::string& m) -> absl::Status {
    return absl::InvalidArgumentError(absl::StrCat(Sv(source), ": ", m));
  };
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, 4) != 0) {
    return err("not a .qsb file (bad magic)");
  }
  uint32_t version;
  std::memcpy(&version, bytes.data() + 4, 4);
  const uint64_t size = Get64(bytes, 8);
  const uint64_t sum = Get64(bytes, 16);
  if (version < 1 || version > 6) {
    return err(absl::StrCat("unsupported .qsb version ", version, " (this build reads 1 to 5)"));
  }
  if (size != bytes.size() - kHeaderBytes) return err("payload size does not match the file size (truncated?)");
  const std::string_view payload = bytes.substr(kHeaderBytes);
  if (version == 1) {
    if (Fnv1a(payload) != sum) return err("checksum mismatch (corrupted file)");
    return DecodeV1(payload, source, memory_bytes, err);
  }
  return DecodeV2(payload, sum, source, version, memory_bytes, err);
}

absl::Status WriteQsbFile(const Scenario& s, const std::string& path) {
  return WriteQsbBytes(EncodeQsb(s), path);
}

absl::Status WriteQsbBytes(std::string_view bytes, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::NotFoundError(absl::StrCat(path, ": cannot write"));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) return absl::DataLossError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

absl::StatusOr<Scenario> ReadQsbFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open scenario file"));
  const std::streamoff size = in.tellg();
  if (size < 0) return absl::DataLossError(absl::StrCat(path, ": cannot read"));
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  in.read(bytes.data(), size);
  if (in.gcount() != size) return absl::DataLossError(absl::StrCat(path, ": read failed"));
  return DecodeQsb(bytes, path, PhysicalMemoryBytes());
}

struct QsbFileStream::Impl {
  std::string source;
  int fd = -1;         // Open(): the file
  std::string bytes;   // FromBytes(): the whole file
  std::vector<BlockRef> blocks;
  bool v1 = false;
  uint32_t version = kQsbVersion;
  Scenario v1_whole;   // version 1: the decoded file, served as one block

  ~Impl() {
    if (fd >= 0) ::close(fd);
  }
  absl::Status Err(const std::string& m) const {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", m));
  }
  // n bytes at `offset` into out (the caller checked the range).
  absl::Status Read(uint64_t offset, uint64_t n, std::string& out) const {
    if (fd < 0) {
      out.assign(bytes, offset, n);
      return absl::OkStatus();
    }
    out.resize(n);
    uint64_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(fd, out.data() + done, n - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        return absl::DataLossError(absl::StrCat(source, ": read failed at byte offset ", offset + done,
                                                got < 0 ? absl::StrCat(": ", std::strerror(errno)) : " (file shrank?)"));
      }
      done += static_cast<uint64_t>(got);
    }
    return absl::OkStatus();
  }
};

QsbFileStream::QsbFileStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
QsbFileStream::~QsbFileStream() = default;

absl::StatusOr<std::unique_ptr<QsbFileStream>> QsbFileStream::OpenImpl(std::unique_ptr<Impl> impl, uint64_t size,
                                                                     uint64_t memory_bytes) {
  auto make = [](std::unique_ptr<Impl> i, Scenario head, size_t n) {
    auto s = std::unique_ptr<QsbFileStream>(new QsbFileStream(std::move(i)));
    s->head_ = std::move(head);
    s->nevents_ = n;
    return s;
  };
  auto err = [&](const std::string& m) { return impl->Err(m); };
  std::string header;
  if (size < kHeaderBytes) return err("not a .qsb file (bad magic)");
  if (absl::Status st = impl->Read(0, kHeaderBytes, header); !st.ok()) return st;
  if (std::memcmp(header.data(), kMagic, 4) != 0) return err("not a .qsb file (bad magic)");
  uint32_t version;
  std::memcpy(&version, header.data() + 4, 4);
  const uint64_t payload = Get64(header, 8);
  const uint64_t sum = Get64(header, 16);
  if (version < 1 || version > 6) {
    return err(absl::StrCat("unsupported .qsb version ", version, " (this build reads 1 to 5)"));
  }
  if (payload != size - kHeaderBytes) return err("payload size does not match the file size (truncated?)");
  impl->version = version;
  if (version == 1) {
    std::string all;
    if (absl::Status st = impl->Read(0, size, all); !st.ok()) return st;
    absl::StatusOr<Scenario> s = DecodeQsb(all, impl->source, memory_bytes);
    if (!s.ok()) return s.status();
    impl->v1 = true;
    impl->v1_whole = *std::move(s);
    Scenario head = impl->v1_whole;
    head.events.clear();
    const size_t n = impl->v1_whole.events.size();
    return make(std::move(impl), std::move(head), n);
  }
  if (payload < 8) return err("payload shorter than its head length (truncated?)");
  std::string len;
  if (absl::Status st = impl->Read(kHeaderBytes, 8, len); !st.ok()) return st;
  const uint64_t head_bytes = Get64(len, 0);
  if (head_bytes > payload - 8) return err("head length beyond the end (truncated?)");
  std::string head;
  if (absl::Status st = impl->Read(kHeaderBytes + 8, head_bytes, head); !st.ok()) return st;
  if (Fnv1a(head) != sum) return err("checksum mismatch in the head (corrupted file)");
  absl::StatusOr<V2Layout> layout = ParseV2Head(head, payload - 8 - head_bytes, impl->source, version, err);
  if (!layout.ok()) return layout.status();
  if (absl::Status st = CheckMemoryBudget(static_cast<uint64_t>(std::max<int64_t>(0, layout->head.submit_count)),
                                          memory_bytes, impl->source, kMinStreamRunBytesPerJob, "job submissions");
      !st.ok()) {
    return st;
  }
  impl->blocks = std::move(layout->blocks);
  return make(std::move(impl), std::move(layout->head), layout->nevents);
}

absl::StatusOr<std::unique_ptr<QsbFileStream>> QsbFileStream::Open(const std::string& path, uint64_t memory_bytes) {
  auto impl = std::make_unique<Impl>();
  impl->source = path;
  impl->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (impl->fd < 0) return absl::NotFoundError(absl::StrCat(path, ": cannot open scenario file"));
  struct stat st;
  if (::fstat(impl->fd, &st) != 0 || st.st_size < 0) return absl::DataLossError(absl::StrCat(path, ": cannot read"));
  return OpenImpl(std::move(impl), static_cast<uint64_t>(st.st_size), memory_bytes);
}

absl::StatusOr<std::unique_ptr<QsbFileStream>> QsbFileStream::FromBytes(std::string bytes, std::string_view source) {
  auto impl = std::make_unique<Impl>();
  impl->source = std::string(source);
  const uint64_t size = bytes.size();
  impl->bytes = std::move(bytes);
  return OpenImpl(std::move(impl), size, 0);
}

size_t QsbFileStream::num_blocks() const { return impl_->v1 ? 1 : impl_->blocks.size(); }

absl::Status QsbFileStream::ReadBlock(size_t b, std::vector<ScenarioEvent>& out) const {
  if (impl_->v1) {
    out = impl_->v1_whole.events;
    return absl::OkStatus();
  }
  const BlockRef& k = impl_->blocks.at(b);
  thread_local std::string bytes;
  if (absl::Status st = impl_->Read(k.offset, k.bytes, bytes); !st.ok()) return st;
  out.resize(k.count);
  BlockFacts facts;
  if (std::string e = DecodeBlock(bytes, k, b, out.data(), facts, impl_->version); !e.empty()) return impl_->Err(e);
  return absl::OkStatus();
}

bool IsQsbPath(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".qsb") == 0;
}

absl::StatusOr<Scenario> LoadAnyScenarioFile(const std::string& path) {
  return LoadAnyScenarioFile(path, PhysicalMemoryBytes());
}

absl::StatusOr<Scenario> LoadAnyScenarioFile(const std::string& path, uint64_t memory_bytes) {
  if (IsQsbPath(path)) return ReadQsbFile(path);
  struct stat st;
  if (memory_bytes > 0 && ::stat(path.c_str(), &st) == 0 && st.st_size > 0) {
    if (absl::Status s = CheckMemoryBudget(static_cast<uint64_t>(st.st_size), memory_bytes, path,
                                           kMinJsonBytesPerFileByte, "bytes of JSON");
        !s.ok()) {
      return s;
    }
  }
  return LoadScenarioFile(path);
}

}  // namespace qs::gen
