// File: engine/testing/random_scenario.h
//
// Seeded random scenarios for differential and invariant tests: small
// environments (1-3 capacity units), 1-6 quota shares of every strategy and
// borrow limit, oversubscribed and undersubscribed environments, 5-60 jobs
// with gang sizes 1-4, failures, retries, timeouts, preemption-retry limits,
// priority updates, terminations, limit and strategy changes, environment
// changes, snapshots, requests AWS would reject, and random knob values.
//
// The same seed gives the same Scenario on every platform: the generator uses
// std::mt19937_64 with its own integer draws (no std distributions, whose
// results are implementation-defined).
//
// Thread-safety: pure function.
#ifndef QS_ENGINE_TESTING_RANDOM_SCENARIO_H_
#define QS_ENGINE_TESTING_RANDOM_SCENARIO_H_

#include <cstdint>

#include "engine/model/scenario.h"

namespace qs::testing {

struct RandomScenarioOptions {
  int max_shares = 6;
  int max_units = 3;
  int max_jobs = 60;
  bool random_knobs = true;
  bool invalid_requests = true;  // sprinkle requests AWS would reject
};

Scenario RandomScenario(uint64_t seed, const RandomScenarioOptions& options = {});

}  // namespace qs::testing

#endif  // QS_ENGINE_TESTING_RANDOM_SCENARIO_H_
