// scenario_invariants_fuzzer: bytes -> a bounded scenario (fuzz_scenario.h)
// -> the fast engine with its own invariant checker on in full
// (check_invariants + full_invariant_check: invariants 1-4 after every event,
// 5 and 6 after every pass, conservation at the end), while an independent
// checker (log_checker.h) replays every log record against the spec. Any
// violation from either aborts with a message naming the invariant.
//
// Reproduce: scenario_invariants_fuzzer <crash-file>; set
// QS_FUZZ_DUMP_SCENARIO=1 to print the decoded scenario as JSON.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "engine/log/event_log.h"
#include "engine/run.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_scenario.h"
#include "fuzz/log_checker.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<qs::Scenario> sc = qs::fuzz::ScenarioFromFuzzInput(data, size);
  if (!sc) return -1;  // not kept in the corpus
  qs::fuzz::MaybeDumpScenario(*sc);

  qs::fuzz::LogChecker checker(*sc);
  qs::RunOptions options;
  options.check_invariants = true;
  options.full_invariant_check = true;
  options.cycle_preemptions = 1000;  // a preemption cycle stops sooner (the checks are O(jobs) per event)
  const qs::RunStats stats = qs::RunFastEngine(*sc, checker, options);
  checker.Finish(stats);

  std::string first;
  if (!stats.violation_messages.empty()) first = stats.violation_messages.front();
  QS_FUZZ_CHECK(stats.invariant_violations == 0,
                "engine checker: " << stats.invariant_violations << " violation(s); first: " << first);
  // victimReturn BEHIND_RESERVATION is cycle-free (docs/semantics.md §6):
  // a guard stop is a failure; IN_PLACE may cycle by design.
  QS_FUZZ_CHECK(stats.stopped.empty() || sc->knobs.victim_return == qs::VictimReturn::kInPlace,
                "preemption cycle under victimReturn BEHIND_RESERVATION: " << stats.stopped);
  return 0;
}
