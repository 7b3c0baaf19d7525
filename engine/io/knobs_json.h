// File: engine/io/knobs_json.h
//
// The `simulation` knobs as the scenario format writes them: every knob in
// the format's key order, times in seconds, horizonSeconds only when set.
// ScenarioToJson writes this object, and a run summary's `run.simulation`
// is it with horizonSeconds made explicit (engine/log/summary.h).
#ifndef QS_ENGINE_IO_KNOBS_JSON_H_
#define QS_ENGINE_IO_KNOBS_JSON_H_

#include "engine/model/scenario.h"
#include "nlohmann/json.hpp"

namespace qs {

nlohmann::ordered_json KnobsJson(const Knobs& k);  // scenario_json_write.cc

}  // namespace qs

#endif  // QS_ENGINE_IO_KNOBS_JSON_H_
