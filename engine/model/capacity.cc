// File: engine/model/capacity.cc
#include "engine/model/capacity.h"

#include <algorithm>
#include <cmath>

namespace qs {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

const TypeCapacity* FindTypeCapacity(const CapacityModel& m, std::string_view instance_type) {
  for (const TypeCapacity& c : m.types) {
    if (c.instance_type == instance_type) return &c;
  }
  return nullptr;
}

int64_t AvailableAt(const TypeCapacity& c, SimTime t) {
  auto it = std::upper_bound(c.availability.begin(), c.availability.end(), t,
                             [](SimTime v, const AvailabilityStep& s) { return v < s.at; });
  if (it == c.availability.begin()) return kAvailabilityUnlimited;
  return std::prev(it)->instances;
}

bool ProvisioningDrawFails(const CapacityModel& m, const TypeCapacity& c, int64_t seq, SimTime t) {
  if (c.failure_probability <= 0) return false;
  if (c.failure_probability >= 1) return true;
  const uint64_t h = SplitMix64(m.seed ^ SplitMix64(static_cast<uint64_t>(seq) ^ SplitMix64(static_cast<uint64_t>(t))));
  const double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // [0, 1)
  return u < c.failure_probability;
}

const TypeLatencies* FindTypeLatencies(const LatencyModel& m, std::string_view instance_type) {
  for (const TypeLatencies& c : m.types) {
    if (c.instance_type == instance_type) return &c;
  }
  return nullptr;
}

SimTime DrawLatency(const LatencyDistribution& d, uint64_t seed, LatencyKind kind, int64_t seq, SimTime t) {
  if (d.kind == Distribution::kConstant) return d.a;
  const uint64_t h1 = SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(kind) ^
                                                  SplitMix64(static_cast<uint64_t>(seq) ^ SplitMix64(static_cast<uint64_t>(t)))));
  if (d.kind == Distribution::kUniform) {
    const uint64_t span = static_cast<uint64_t>(d.max - d.a) + 1;
    return d.a + static_cast<SimTime>(h1 % span);
  }
  // LOGNORMAL: median * exp(sigma * z), z standard normal (Box-Muller from
  // two hashed uniforms), capped at max and rounded to the millisecond.
  const uint64_t h2 = SplitMix64(h1);
  const double u1 = (static_cast<double>(h1 >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
  const double u2 = static_cast<double>(h2 >> 11) * 0x1.0p-53;          // [0, 1)
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  const double v = static_cast<double>(d.median) * std::exp(d.sigma * z);
  if (!(v < static_cast<double>(d.max))) return d.max;
  return static_cast<SimTime>(std::llround(v));
}

SimTime LatencyOf(const Knobs& k, const TypeLatencies* type, LatencyKind kind, int64_t seq, SimTime t) {
  const std::optional<LatencyDistribution>* d = nullptr;
  if (type != nullptr) {
    d = kind == LatencyKind::kProvision ? &type->provision : kind == LatencyKind::kDownload ? &type->download : &type->drain;
  }
  if (d == nullptr || !d->has_value()) {
    return kind == LatencyKind::kProvision ? k.provision : kind == LatencyKind::kDownload ? k.download : k.preemption_drain;
  }
  return DrawLatency(**d, k.latencies.seed, kind, seq, t);
}

bool CapacityMayStick(const CapacityModel& m) {
  for (const TypeCapacity& c : m.types) {
    if (c.failure_probability >= 1 || !c.availability.empty() || !c.availability_csv.empty()) return true;
  }
  return false;
}

bool HasCapacityAction(const std::vector<JobStateTimeLimitAction>& actions) {
  // An entry matches a reason by its code or by its whole text, as the
  // engines match it (docs/semantics.md §5).
  for (const JobStateTimeLimitAction& a : actions) {
    if (a.reason == kInsufficientCapacityCode || a.reason == kInsufficientCapacityText) {
      return true;
    }
  }
  return false;
}

std::string CapacityModelEndsProblem(const Scenario& s) {
  const Knobs& k = s.knobs;
  if (!CapacityMayStick(k.capacity) || k.horizon || HasCapacityAction(s.job_queue.time_limit_actions)) return "";
  return "an availability schedule or failureProbability 1 can keep a job failing to provision for ever: "
         "add a jobQueue.jobStateTimeLimitActions entry with reason CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY, "
         "or simulation.horizonSeconds";
}

}  // namespace qs
