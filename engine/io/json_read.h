// File: engine/io/json_read.h
//
// The typed readers of scenario JSON (engine/io/scenario_json.cc, layer 2):
// JSON values -> model values, each knowing its JSON path (json_text::Path,
// rendered only when an error is reported) and giving the one-line messages
// of scenario_json.h. Internal to engine/io: scenario_json.cc reads the
// scenario's API objects and events with them, scenario_json_simulation.cc
// the `simulation` object.
//
// Usage:
//   const Reader r(source);
//   QS_RETURN_IF_ERROR(r.CheckObject(v, path, {"name", "state"}));
//   QS_RETURN_IF_ERROR(Get(r, v, path, "name", AsString, &out.name));
//
// Thread-compatible (a Reader holds only the source name).
#ifndef QS_ENGINE_IO_JSON_READ_H_
#define QS_ENGINE_IO_JSON_READ_H_

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "engine/io/json_text.h"
#include "engine/model/scenario.h"
#include "engine/util/strings.h"
#include "nlohmann/json.hpp"

namespace qs::json_read {

using Json = nlohmann::json;
using json_text::DomBuilder;
using json_text::Describe;
using json_text::kMaxQuotedBytes;
using json_text::kPayloadRequired;
using json_text::Path;
using json_text::Quote;
using json_text::ReadJsonText;
using json_text::Sanitize;
using json_text::SingleQuote;
using json_text::TextResult;
using json_text::Truncate;

inline constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
inline constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
inline constexpr int64_t kMaxSeconds = kMaxSimTime / kMillisPerSecond;  // 1e12

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  absl::Status Error(const Path& path, std::string_view problem) const {
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(source_), ": ", path.ToString(), ": ", Sv(problem)));
  }
  absl::Status TypeError(const Path& path, std::string_view expected, const Json& got) const {
    return Error(path, absl::StrCat("expected ", Sv(expected), ", got ", Describe(got)));
  }

  // `v` is an object whose keys are all in `allowed`.
  absl::Status CheckObject(const Json& v, const Path& path,
                           std::initializer_list<std::string_view> allowed) const {
    if (!v.is_object()) return TypeError(path, "an object", v);
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string& key = it.key();
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string expected;
      for (std::string_view a : allowed) {
        absl::StrAppend(&expected, expected.empty() ? "" : ", ", Sv(a));
      }
      return Error(path.Key(key), absl::StrCat("unknown key; expected one of: ", expected));
    }
    return absl::OkStatus();
  }

  absl::Status Require(const Json& object, const Path& path, const char* key) const {
    if (object.contains(key)) return absl::OkStatus();
    return Error(path.Key(key), "missing required key");
  }

 private:
  std::string_view source_;
};

// Converts object[key] with `convert` into *out when the key is present
// (*out may be a T or a std::optional<T>).
template <typename Out, typename Convert>
absl::Status Get(const Reader& r, const Json& object, const Path& path, const char* key,
                 Convert convert, Out* out) {
  auto it = object.find(key);
  if (it == object.end()) return absl::OkStatus();
  auto value = convert(r, *it, path.Key(key));
  if (!value.ok()) return value.status();
  *out = *std::move(value);
  return absl::OkStatus();
}

template <typename E>
struct EnumName {
  std::string_view name;
  E value;
};

inline constexpr EnumName<Strategy> kStrategies[] = {{"RESERVE", Strategy::kReserve},
                                              {"LEND", Strategy::kLend},
                                              {"LEND_AND_BORROW", Strategy::kLendAndBorrow}};
inline constexpr EnumName<Toggle> kToggles[] = {{"ENABLED", Toggle::kEnabled},
                                         {"DISABLED", Toggle::kDisabled}};
inline constexpr EnumName<ShareOrder> kShareOrders[] = {{"UNDER_LIMIT_FIRST", ShareOrder::kUnderLimitFirst},
                                                 {"ROUND_ROBIN", ShareOrder::kRoundRobin},
                                                 {"DECLARATION", ShareOrder::kDeclaration}};
inline constexpr EnumName<VictimOrder> kVictimOrders[] = {
    {"PRIORITY_THEN_NEWEST", VictimOrder::kPriorityThenNewest},
    {"MOST_BORROWED_FIRST", VictimOrder::kMostBorrowedFirst}};
inline constexpr EnumName<UnassignedCapacity> kUnassigned[] = {{"UNUSED", UnassignedCapacity::kUnused},
                                                        {"LENDABLE", UnassignedCapacity::kLendable}};
inline constexpr EnumName<EntitledCapacity> kEntitled[] = {{"WITHHELD", EntitledCapacity::kWithheld},
                                                     {"LENDABLE", EntitledCapacity::kLendable}};
inline constexpr EnumName<VictimReturn> kVictimReturns[] = {{"BEHIND_RESERVATION", VictimReturn::kBehindReservation},
                                                      {"IN_PLACE", VictimReturn::kInPlace}};
inline constexpr EnumName<TimeLimitClock> kTimeLimitClocks[] = {{"FROM_REASON", TimeLimitClock::kFromReason},
                                                                 {"AT_HEAD", TimeLimitClock::kAtHead}};
inline constexpr EnumName<JobOutcome> kOutcomes[] = {{"SUCCEEDED", JobOutcome::kSucceeded},
                                              {"FAILED", JobOutcome::kFailed}};


template <typename E, size_t N>
absl::StatusOr<E> AsEnum(const Reader& r, const Json& v, const Path& path,
                         const EnumName<E> (&names)[N]) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    for (const EnumName<E>& n : names) {
      if (n.name == s) return n.value;
    }
  }
  std::string expected = "one of ";
  for (size_t i = 0; i < N; ++i) absl::StrAppend(&expected, i == 0 ? "" : ", ", Sv(names[i].name));
  return r.TypeError(path, expected, v);
}

absl::StatusOr<std::string> AsString(const Reader& r, const Json& v, const Path& path);
absl::StatusOr<bool> AsBool(const Reader& r, const Json& v, const Path& path);
// A JSON integer (or a float with an integral value) within int32.
absl::StatusOr<int64_t> AsInt32(const Reader& r, const Json& v, const Path& path);
// Seconds (a JSON number, 0 <= x <= 1e12) as milliseconds, rounded to nearest.
absl::StatusOr<SimTime> AsSeconds(const Reader& r, const Json& v, const Path& path);
// A checkpoint interval: seconds > 0.
absl::StatusOr<SimTime> AsInterval(const Reader& r, const Json& v, const Path& path);
absl::StatusOr<Strategy> AsStrategy(const Reader& r, const Json& v, const Path& p);
absl::StatusOr<Toggle> AsToggle(const Reader& r, const Json& v, const Path& p);
absl::StatusOr<ShareOrder> AsShareOrder(const Reader& r, const Json& v, const Path& p);
absl::StatusOr<VictimOrder> AsVictimOrder(const Reader& r, const Json& v, const Path& p);
absl::StatusOr<UnassignedCapacity> AsUnassigned(const Reader& r, const Json& v, const Path& p);
absl::StatusOr<EntitledCapacity> AsEntitled(const Reader& r, const Json& v, const Path& p);
absl::StatusOr<VictimReturn> AsVictimReturn(const Reader& r, const Json& v, const Path& p);
absl::StatusOr<TimeLimitClock> AsTimeLimitClock(const Reader& r, const Json& v, const Path& p);
absl::StatusOr<JobOutcome> AsOutcome(const Reader& r, const Json& v, const Path& p);
// A draw seed of simulation.capacity or .latencies: an integer >= 0.
absl::StatusOr<uint64_t> AsSeed(const Reader& r, const Json& v, const Path& path);

// A string that must be one of `allowed` (API enums quotasim only checks).
absl::Status CheckOneOf(const Reader& r, const Json& object, const Path& path, const char* key,
                        std::initializer_list<std::string_view> allowed);
// Checks the type of an accepted-but-ignored key.
absl::Status CheckType(const Reader& r, const Json& object, const Path& path, const char* key,
                       Json::value_t type, std::string_view expected);
// `tags`: an object of strings (accepted, not kept).
absl::Status CheckTags(const Reader& r, const Json& object, const Path& path);
// capacityLimits of a share, an update or the environment, stored as
// written: validation.h judges counts, empty units and maxCapacity < 1.
absl::StatusOr<std::vector<CapacityLimit>> AsCapacityLimits(const Reader& r, const Json& v, const Path& path);

// The `simulation` object (scenario_json_simulation.cc).
absl::StatusOr<Knobs> AsKnobs(const Reader& r, const Json& v, const Path& path);

}  // namespace qs::json_read

#endif  // QS_ENGINE_IO_JSON_READ_H_
