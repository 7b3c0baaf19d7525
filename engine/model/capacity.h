// File: engine/model/capacity.h
//
// The facts of simulation.capacity that both engines read the same way
// (docs/semantics.md §2, "Capacity"): what a type's availability schedule
// allows at a time, and the seeded draw that decides whether one
// provisioning try fails. The rule that combines them (an attempt's
// instances are obtained when the draw passes and the instances already
// obtained plus its own fit the availability) is written in each engine.
//
// Thread-safety: pure functions.
#ifndef QS_ENGINE_MODEL_CAPACITY_H_
#define QS_ENGINE_MODEL_CAPACITY_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "engine/model/scenario.h"

namespace qs {

inline constexpr int64_t kAvailabilityUnlimited = std::numeric_limits<int64_t>::max() / 4;

// The entry for `instance_type`, or nullptr (the type always provisions).
const TypeCapacity* FindTypeCapacity(const CapacityModel& m, std::string_view instance_type);

// Instances of the type obtainable at `t`: the last step at or before t;
// kAvailabilityUnlimited before the first step and without steps.
int64_t AvailableAt(const TypeCapacity& c, SimTime t);

// Whether the provisioning try of the job accepted as submission number
// `seq` (0-based, in event order), dispatched at `t`, fails by the type's
// failureProbability. A pure function of (seed, seq, t): the same in both
// engines, at any thread count.
bool ProvisioningDrawFails(const CapacityModel& m, const TypeCapacity& c, int64_t seq, SimTime t);

// simulation.latencies (docs/semantics.md §2, "Latency distributions"). The
// three latencies of job number `seq` (accepted submissions, from 0) whose
// latency starts at `t`: provisioning at its dispatch, download at its
// STARTING, drain at its preemption start. The type's distribution when
// simulation.latencies gives one, else the knob's constant. A pure function
// of (seed, which latency, seq, t): the same in both engines.
enum class LatencyKind : uint8_t { kProvision = 1, kDownload = 2, kDrain = 3 };
SimTime LatencyOf(const Knobs& k, const TypeLatencies* type, LatencyKind kind, int64_t seq, SimTime t);
const TypeLatencies* FindTypeLatencies(const LatencyModel& m, std::string_view instance_type);
// One draw of `d` (exposed for tests).
SimTime DrawLatency(const LatencyDistribution& d, uint64_t seed, LatencyKind kind, int64_t seq, SimTime t);

// SageMaker's capacity error (User Guide, "Jobs stuck in RUNNABLE due to
// capacity", SageMaker Training section): the reason's code and its whole
// text, the statusReason of a RUNNABLE job after the error. Defined once
// here; the event log's reasons (engine/log/event_log.h) name the text.
inline constexpr std::string_view kInsufficientCapacityCode = "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY";
inline constexpr std::string_view kInsufficientCapacityText =
    "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - Unable to provision requested compute resources";

// A capacity model can keep a job failing to provision for ever (an
// availability schedule, or failureProbability 1): the run must then have a
// way to end, a jobStateTimeLimitActions entry for
// CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY or horizonSeconds. Returns the
// problem, or "" when there is none.
std::string CapacityModelEndsProblem(const Scenario& s);
// Whether the model can keep a job failing for ever (an availability
// schedule, or failureProbability 1), so that without a horizon the queue
// must keep a jobStateTimeLimitActions entry for the reason (an
// UpdateJobQueue that would drop it is rejected, docs/semantics.md §7).
bool CapacityMayStick(const CapacityModel& m);
bool HasCapacityAction(const std::vector<JobStateTimeLimitAction>& actions);

}  // namespace qs

#endif  // QS_ENGINE_MODEL_CAPACITY_H_
