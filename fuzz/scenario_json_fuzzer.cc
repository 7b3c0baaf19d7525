// scenario_json_fuzzer: raw bytes into the scenario parser (ParseScenario).
// It must never crash, hang or leak (the sanitizers and libFuzzer's -timeout
// and -rss_limit_mb watch that); every document it accepts must survive
// write-then-parse unchanged, and the canonical text must be a fixed point:
//   s1 = Parse(bytes); j1 = ScenarioToJson(s1); s2 = Parse(j1)
//   => s2 == s1 and ScenarioToJson(s2) == j1.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/model/scenario.h"
#include "engine/io/scenario_json.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return -1;  // linear parser; larger inputs only slow the search
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<qs::Scenario> s1 = qs::ParseScenario(text, "fuzz.json");
  if (!s1.ok()) {
    QS_FUZZ_CHECK(!s1.status().message().empty(), "parser: error without a message");
    return 0;
  }
  const std::string j1 = qs::ScenarioToJson(*s1);
  absl::StatusOr<qs::Scenario> s2 = qs::ParseScenario(j1, s1->source);
  QS_FUZZ_CHECK(s2.ok(), "round trip: the canonical text of an accepted document does not parse: "
                             << s2.status().message() << "\n  canonical text:\n" << j1);
  QS_FUZZ_CHECK(*s2 == *s1, "round trip: write-then-parse changed the scenario\n  canonical text:\n" << j1);
  const std::string j2 = qs::ScenarioToJson(*s2);
  QS_FUZZ_CHECK(j2 == j1, "round trip: ScenarioToJson is not a fixed point\n  first:\n" << j1 << "\n  second:\n" << j2);
  return 0;
}
