#include "engine/cli/scenario_file.h"

#include <utility>

#include "engine/gen/memory_budget.h"

namespace qs {

absl::StatusOr<OpenedScenario> OpenScenario(const std::string& path, bool stream_qsb) {
  OpenedScenario opened;
  if (stream_qsb && gen::IsQsbPath(path)) {
    absl::StatusOr<std::unique_ptr<gen::QsbFileStream>> stream =
        gen::QsbFileStream::Open(path, gen::PhysicalMemoryBytes());
    if (!stream.ok()) return stream.status();
    absl::StatusOr<ScenarioIndex> index = IndexEventStream(**stream);
    if (!index.ok()) return index.status();
    opened.stream = *std::move(stream);
    opened.index = *std::move(index);
    return opened;
  }
  absl::StatusOr<Scenario> scenario = gen::LoadAnyScenarioFile(path);
  if (!scenario.ok()) return scenario.status();
  opened.whole = *std::move(scenario);
  return opened;
}

}  // namespace qs
