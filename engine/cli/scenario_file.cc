#include "engine/cli/scenario_file.h"

#include <utility>

#include "engine/gen/memory_budget.h"

namespace qs {

absl::StatusOr<OpenedScenario> OpenScenario(const std::string& path, bool stream_qsb, const Overrides& overrides) {
  OpenedScenario opened;
  if (stream_qsb && gen::IsQsbPath(path)) {
    absl::StatusOr<std::unique_ptr<gen::QsbFileStream>> stream =
        gen::QsbFileStream::Open(path, gen::PhysicalMemoryBytes());
    if (!stream.ok()) return stream.status();
    opened.stream = *std::move(stream);
    if (!overrides.empty()) {
      opened.overrides = std::make_unique<Overrides>(overrides);
      opened.view = std::make_unique<OverriddenStream>(*opened.stream, *opened.overrides);
      if (absl::Status st = opened.view->Check(); !st.ok()) return st;
    }
    absl::StatusOr<ScenarioIndex> index = IndexEventStream(opened.events());
    if (!index.ok()) return index.status();
    if (absl::Status st = overrides.CheckShares(index->share_requests); !st.ok()) return st;
    opened.index = *std::move(index);
    return opened;
  }
  absl::StatusOr<Scenario> scenario = gen::LoadAnyScenarioFile(path);
  if (!scenario.ok()) return scenario.status();
  if (absl::Status st = ApplyOverrides(overrides, *scenario); !st.ok()) return st;
  opened.whole = *std::move(scenario);
  return opened;
}

}  // namespace qs
