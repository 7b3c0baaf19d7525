// File: engine/gen/qsb.h
//
// The compact binary scenario format (.qsb) for big synthetic runs: the same
// Scenario as the JSON format, without text parsing. `quotasim gen --out
// X.qsb` writes it and `quotasim run X.qsb` reads it like a .json scenario.
// traces/README.md documents the layout:
//
//   "QSB1" | u32 version (1) | u64 payload bytes | u64 FNV-1a-64 of payload | payload
//
// The payload is a sequence of fields: unsigned integers as LEB128 varints,
// signed ones zig-zag encoded, strings as a varint length and bytes,
// optionals as a 0/1 byte and the value. Order: source; scheduling policy;
// environment; job queue (with jobStateTimeLimitActions); knobs; submit
// count; event count; then each event: time, path kind (0 quotaShares,
// 1 events) and index, request type (the Request variant index) and the
// request's fields in declaration order (engine/scenario.h).
//
// Reading checks the magic, version, size and checksum, every length against
// the bytes left, every enum, and the same number ranges as the JSON parser
// (times within [0, 1e12] s, int32 API integers). Errors name the file and
// byte offset. Writing then reading gives an equal Scenario.
//
// Thread-safety: pure functions.
#ifndef QS_ENGINE_GEN_QSB_H_
#define QS_ENGINE_GEN_QSB_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/scenario.h"

namespace qs::gen {

inline constexpr uint32_t kQsbVersion = 1;

std::string EncodeQsb(const Scenario& s);
absl::StatusOr<Scenario> DecodeQsb(std::string_view bytes, std::string_view source);

absl::Status WriteQsbFile(const Scenario& s, const std::string& path);
absl::StatusOr<Scenario> ReadQsbFile(const std::string& path);

// LoadScenarioFile for either format, chosen by the extension (.qsb or not).
absl::StatusOr<Scenario> LoadAnyScenarioFile(const std::string& path);

}  // namespace qs::gen

#endif  // QS_ENGINE_GEN_QSB_H_
