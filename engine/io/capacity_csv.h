// File: engine/io/capacity_csv.h
//
// simulation.capacity.instanceTypes.<type>.availabilityCsv: an availability
// schedule in a CSV file beside the scenario. One step per row,
// `atSeconds,instances` (a header row with those names is allowed; blank
// rows and rows starting with '#' are skipped); atSeconds strictly
// increasing, instances an integer >= 0. Errors name the file and line.
#ifndef QS_ENGINE_IO_CAPACITY_CSV_H_
#define QS_ENGINE_IO_CAPACITY_CSV_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/model/scenario.h"

namespace qs {

// Parses the CSV text of `file` (named in errors).
absl::StatusOr<std::vector<AvailabilityStep>> ParseAvailabilityCsv(std::string_view text, std::string_view file);

// Reads every availabilityCsv of `s` into its `availability` (paths relative
// to the folder of `scenario_path` unless absolute) and clears the names.
absl::Status LoadAvailabilityCsvs(Scenario& s, const std::string& scenario_path);

}  // namespace qs

#endif  // QS_ENGINE_IO_CAPACITY_CSV_H_
