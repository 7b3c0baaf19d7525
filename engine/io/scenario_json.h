// File: engine/io/scenario_json.h
//
// The scenario JSON format of ../shared/spec/scenario-format.md: its parser
// (text -> Scenario) and its writer (Scenario -> canonical text).
//
// The parser is the gate between untrusted bytes and the engines. It returns
// a Scenario only for a well-formed document; anything else is an
// InvalidArgumentError whose message is one line naming where and what:
//
//   <source>: <json path>: <problem>
//       bad.json: events[3].request.schedulingPriority: expected an integer, got string "x"
//       bad.json: quotaShares[0].foo: unknown key; expected one of: capacityLimits, ...
//   <source>: line L, column C: <problem>          (JSON syntax errors)
//       bad.json: line 4, column 1: syntax error while parsing object - unexpected end of input; ...
//
// A request AWS would reject (share name missing, priority 10000, 21 shares,
// unparseable serviceRequestPayload, ...) is NOT a parse error: it is stored
// as written and rejected by the engines through validation.h, because a
// rejection is part of what the simulation shows (scenario.h explains the
// split).
//
// Robustness (a fuzzer feeds raw bytes): the parser never throws, never
// recurses on the input (documents nested deeper than kMaxJsonDepth are
// rejected before nlohmann sees them), bounds every number (API integers to
// int32, times to [0, 1e12] seconds) and is linear in the input. The
// `events` array is converted element by element while the text is read,
// so a file with millions of events never exists as one JSON DOM.
//
// Example:
//   absl::StatusOr<Scenario> s = LoadScenarioFile("notebook-example.json");
//   if (!s.ok()) { std::cerr << s.status().message() << "\n"; return 2; }
//
// Thread-safety: pure functions.
#ifndef QS_ENGINE_IO_SCENARIO_JSON_H_
#define QS_ENGINE_IO_SCENARIO_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/model/scenario.h"

namespace qs {

// Deepest nesting of arrays and objects accepted in a scenario document (and
// in a serviceRequestPayload string).
inline constexpr int kMaxJsonDepth = 64;

// Parses a scenario document. `source_name` prefixes every error message and
// becomes Scenario::source.
absl::StatusOr<Scenario> ParseScenario(std::string_view json_text, std::string_view source_name);

// Reads and parses a file; the source name is `path`. An unreadable file is a
// NotFoundError naming it.
absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path);

// Canonical JSON text of `s` in the scenario format (top-level sections one
// per line, each quotaShares / events entry on its own line, defaults
// written out, times in seconds). For every Scenario that ParseScenario
// returns, ParseScenario(ScenarioToJson(s), s.source) == s, and so
// ScenarioToJson is a fixed point after one round. Events are written in
// their original file order when their paths ("events[k]") allow it,
// otherwise in stored order. The payload is written as
// {"ResourceConfig":{"InstanceType","InstanceCount"}}, or, when it had an
// error, as its original text (payload_raw) so that the error comes back.
std::string ScenarioToJson(const Scenario& s);

}  // namespace qs

#endif  // QS_ENGINE_IO_SCENARIO_JSON_H_
