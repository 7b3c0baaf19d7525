// File: engine/model/capacity.cc
#include "engine/model/capacity.h"

#include <algorithm>

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

std::string CapacityModelEndsProblem(const Scenario& s) {
  const Knobs& k = s.knobs;
  bool may_never_provision = false;
  for (const TypeCapacity& c : k.capacity.types) {
    if (c.failure_probability >= 1 || !c.availability.empty() || !c.availability_csv.empty()) {
      may_never_provision = true;
    }
  }
  if (!may_never_provision || k.horizon) return "";
  for (const JobStateTimeLimitAction& a : s.job_queue.time_limit_actions) {
    if (a.reason == "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY") return "";
  }
  return "an availability schedule or failureProbability 1 can keep a job failing to provision for ever: "
         "add a jobQueue.jobStateTimeLimitActions entry with reason CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY, "
         "or simulation.horizonSeconds";
}

}  // namespace qs
