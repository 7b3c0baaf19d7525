// File: engine/cli/scenario_file.h
//
// The one place the `quotasim` commands open a scenario file: `.json` (the
// scenario format) is parsed whole; `.qsb` is either streamed (the fast
// engine reads its blocks as the run reaches them, after one checking pass
// over all of them that builds the ScenarioIndex) or decoded whole (the
// reference engine). A file too large for this machine's memory is refused
// up front (engine/gen/memory_budget.h). `--set` overrides are applied here
// too, so every command sees the changed scenario. Errors name the file and the JSON
// path or block; an invalid document is an InvalidArgumentError
// (ExitCodeFor() in commands.h maps it to exit 2).
#ifndef QS_ENGINE_CLI_SCENARIO_FILE_H_
#define QS_ENGINE_CLI_SCENARIO_FILE_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "engine/gen/qsb.h"
#include "engine/io/overrides.h"
#include "engine/model/scenario.h"
#include "engine/model/scenario_index.h"

namespace qs {

struct OpenedScenario {
  std::optional<Scenario> whole;               // held whole
  std::unique_ptr<gen::QsbFileStream> stream;  // or streamed (a .qsb file)
  // With --set overrides, the stream seen through them (and their copy).
  std::unique_ptr<Overrides> overrides;
  std::unique_ptr<OverriddenStream> view;
  std::optional<ScenarioIndex> index;          // the stream's (view's), checked

  bool streamed() const { return stream != nullptr; }
  // The events of a streamed scenario, overrides applied.
  const EventStream& events() const {
    if (view) return *view;
    return *stream;
  }
  // Everything but the events.
  const Scenario& head() const { return whole ? *whole : events().head(); }
  size_t num_events() const { return whole ? whole->events.size() : stream->num_events(); }
};

// `stream_qsb`: a .qsb file is streamed (fast engine); otherwise every
// format is held whole. `overrides` (engine/io/overrides.h) are applied to
// the scenario either way; an override that names no share of it, or that
// makes an accepted request one AWS rejects, is an InvalidArgumentError.
absl::StatusOr<OpenedScenario> OpenScenario(const std::string& path, bool stream_qsb,
                                            const Overrides& overrides = Overrides());

}  // namespace qs

#endif  // QS_ENGINE_CLI_SCENARIO_FILE_H_
