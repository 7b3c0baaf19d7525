#include "engine/trace/workload_stream.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "absl/strings/str_cat.h"

namespace qs::trace {
namespace {

// "j%07zu": job i's name (replay.h), without printf.
std::string JobName(size_t i) {
  char digits[24];
  const char* end = std::to_chars(digits, digits + sizeof(digits), i).ptr;
  const size_t n = static_cast<size_t>(end - digits);
  std::string name(1 + std::max<size_t>(7, n), '0');
  name[0] = 'j';
  std::copy(static_cast<const char*>(digits), end, name.end() - static_cast<std::ptrdiff_t>(n));
  return name;
}

}  // namespace

WorkloadStream::WorkloadStream(const Workload& w, const Policy& p, size_t block_events)
    : w_(w), p_(p), block_events_(std::max<size_t>(1, block_events)) {
  Scenario& sc = head_;
  sc.source = p.name;
  sc.scheduling_policy = p.config.scheduling_policy;
  sc.job_queue = p.config.job_queue;
  sc.knobs = p.config.knobs;
  sc.service_environment = p.config.service_environment;
  const bool env_from_mapping = sc.service_environment.capacity_limits.empty();
  if (env_from_mapping) sc.service_environment.capacity_limits = {{w.instance_type, w.environment}};
  sc.submit_count = static_cast<int64_t>(w.jobs.size());
  const bool single = !p.single_share.empty();

  auto limits_of = [&](int64_t n) { return std::vector<CapacityLimit>{{w.instance_type, n}}; };
  // Share requests.
  names_ = single ? std::vector<std::string>{p.single_share} : w.shares;
  std::vector<bool> derived;  // limits follow the mapping (and the quota table)
  auto add_share = [&](CreateQuotaShareRequest req) {
    ScenarioEvent e;
    e.time = 0;
    e.path = absl::StrCat("quotaShares[", requests_.size(), "]");
    e.request = std::move(req);
    requests_.push_back(std::move(e));
  };
  for (size_t s = 0; s < names_.size(); ++s) {
    CreateQuotaShareRequest req;
    if (p.has_template) req = p.share_template;
    const CreateQuotaShareRequest* named = nullptr;
    for (const CreateQuotaShareRequest& n : p.named_shares) {
      if (*n.quota_share_name == names_[s]) named = &n;
    }
    if (named != nullptr) {
      if (named->capacity_limits) req.capacity_limits = named->capacity_limits;
      if (named->has_resource_sharing) {
        req.has_resource_sharing = true;
        req.strategy = named->strategy;
        req.borrow_limit = named->borrow_limit;
      }
      if (named->in_share_preemption) req.in_share_preemption = named->in_share_preemption;
      if (named->state) req.state = named->state;
      if (named->job_queue) req.job_queue = named->job_queue;
    }
    req.quota_share_name = names_[s];
    const bool is_derived = !req.capacity_limits.has_value();
    if (is_derived) req.capacity_limits = limits_of(single ? w.environment : w.limits[s]);
    if (!req.in_share_preemption) req.in_share_preemption = Toggle::kDisabled;
    derived.push_back(is_derived);
    add_share(std::move(req));
  }
  for (const CreateQuotaShareRequest& n : p.named_shares) {
    if (std::find(names_.begin(), names_.end(), *n.quota_share_name) == names_.end()) add_share(n);
  }
  creations_ = requests_.size();

  // Limit changes, in time order.
  for (const LimitChange& c : w.changes) {
    if (env_from_mapping) {
      UpdateServiceEnvironmentRequest u;
      u.service_environment = sc.service_environment.name;
      u.capacity_limits = limits_of(c.environment);
      requests_.push_back({c.time, absl::StrCat("quotaTable[day ", c.day, "].environment"), u});
    }
    for (size_t s = 0; s < names_.size(); ++s) {
      if (!derived[s]) continue;
      UpdateQuotaShareRequest u;
      u.quota_share_arn = names_[s];
      u.capacity_limits = limits_of(single ? c.environment : c.limits[s]);
      requests_.push_back({c.time, absl::StrCat("quotaTable[day ", c.day, "].", names_[s]), u});
    }
  }

  // Where each block starts: the creations, then the limit changes and the
  // submissions merged by time (changes first at equal times).
  const size_t total = num_events();
  Start at{0, 0};
  for (size_t e = 0; e < total; ++e) {
    if (e % block_events_ == 0) starts_.push_back(at);
    if (RequestComesNext(at)) {
      ++at.request;
    } else {
      ++at.job;
    }
  }
}

// The scenario rules' order: the creations first, then limit changes and
// submissions by time, a change first at equal times.
bool WorkloadStream::RequestComesNext(const Start& at) const {
  if (at.request < creations_) return true;
  if (at.request == requests_.size()) return false;
  return at.job == w_.jobs.size() || requests_[at.request].time <= w_.jobs[at.job].submit;
}

SubmitServiceJobRequest WorkloadStream::SubmitOf(size_t i) const {
  const WorkloadJob& j = w_.jobs[i];
  SubmitServiceJobRequest r;
  r.job_name = JobName(i);
  // jobQueue and serviceJobType are left out: absent, they name the one
  // queue and its type (scenario-format.md), and a trace of a million jobs
  // builds no million copies of them.
  r.quota_share_name = names_[p_.single_share.empty() ? static_cast<size_t>(j.share) : 0];
  if (!p_.ignore_priority && j.priority != 0) r.scheduling_priority = j.priority;
  r.instance_type = w_.instance_type;
  r.instance_count = j.instances;
  r.run_time = j.run;
  r.outcome = j.failed ? JobOutcome::kFailed : JobOutcome::kSucceeded;
  return r;
}

absl::Status WorkloadStream::ReadBlock(size_t b, std::vector<ScenarioEvent>& out) const {
  out.clear();
  if (b >= starts_.size()) return absl::OutOfRangeError(absl::StrCat(head_.source, ": no event block ", b));
  const size_t count = std::min(block_events_, num_events() - b * block_events_);
  out.reserve(count);
  Start at = starts_[b];
  for (size_t k = 0; k < count; ++k) {
    if (RequestComesNext(at)) {
      out.push_back(requests_[at.request++]);
    } else {
      const WorkloadJob& j = w_.jobs[at.job];
      out.push_back({j.submit, absl::StrCat("trace line ", j.line), SubmitOf(at.job)});
      ++at.job;
    }
  }
  return absl::OkStatus();
}

std::vector<int32_t> WorkloadStream::JobShares() const {
  std::vector<int32_t> shares(w_.jobs.size(), 0);
  if (p_.single_share.empty()) {
    for (size_t i = 0; i < w_.jobs.size(); ++i) shares[i] = w_.jobs[i].share;
  }
  return shares;
}

ScenarioIndex WorkloadStream::Index() const {
  std::string chars;
  std::vector<uint64_t> ends;
  chars.reserve(w_.jobs.size() * 8);
  ends.reserve(w_.jobs.size());
  for (size_t i = 0; i < w_.jobs.size(); ++i) {
    chars += JobName(i);
    ends.push_back(chars.size());
  }
  std::vector<std::string> units;
  if (!w_.jobs.empty()) units.push_back(w_.instance_type);
  return IndexScenarioParts(head_, requests_, units, chars, ends);
}

}  // namespace qs::trace
