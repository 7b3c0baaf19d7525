// File: engine/io/json_read.cc
//
// The typed readers of json_read.h: scalars, enums, API keys quotasim only
// checks, capacity limits.
#include "engine/io/json_read.h"

#include <cmath>

#include "engine/util/status_macros.h"

namespace qs::json_read {

absl::StatusOr<std::string> AsString(const Reader& r, const Json& v, const Path& path) {
  if (!v.is_string()) return r.TypeError(path, "a string", v);
  return v.get_ref<const std::string&>();
}

absl::StatusOr<bool> AsBool(const Reader& r, const Json& v, const Path& path) {
  if (!v.is_boolean()) return r.TypeError(path, "a boolean", v);
  return v.get<bool>();
}

// A JSON integer (or a float with an integral value) within int32.
absl::StatusOr<int64_t> AsInt32(const Reader& r, const Json& v, const Path& path) {
  auto out_of_range = [&] {
    return r.Error(path, absl::StrCat("out of range: expected an integer between ", kInt32Min,
                                      " and ", kInt32Max, ", got ", Describe(v)));
  };
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(kInt32Max)) return out_of_range();
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    if (i < kInt32Min || i > kInt32Max) return out_of_range();
    return i;
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d) return r.TypeError(path, "an integer", v);
    if (d < static_cast<double>(kInt32Min) || d > static_cast<double>(kInt32Max)) {
      return out_of_range();
    }
    return static_cast<int64_t>(d);
  }
  return r.TypeError(path, "an integer", v);
}

// Seconds (a JSON number, 0 <= x <= 1e12) as milliseconds, rounded to nearest.
absl::StatusOr<SimTime> AsSeconds(const Reader& r, const Json& v, const Path& path) {
  auto negative = [&] { return r.Error(path, absl::StrCat("must be >= 0 seconds, got ", Describe(v))); };
  auto too_large = [&] {
    return r.Error(path, absl::StrCat("must be at most 1e12 seconds, got ", Describe(v)));
  };
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(kMaxSeconds)) return too_large();
    return static_cast<SimTime>(u) * kMillisPerSecond;
  }
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    if (i < 0) return negative();
    if (i > kMaxSeconds) return too_large();
    return i * kMillisPerSecond;
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isnan(d)) return r.TypeError(path, "a number of seconds", v);
    if (d < 0) return negative();
    if (d > static_cast<double>(kMaxSeconds)) return too_large();
    return static_cast<SimTime>(std::llround(d * static_cast<double>(kMillisPerSecond)));
  }
  return r.TypeError(path, "a number of seconds", v);
}


absl::StatusOr<Strategy> AsStrategy(const Reader& r, const Json& v, const Path& p) {
  return AsEnum(r, v, p, kStrategies);
}
absl::StatusOr<Toggle> AsToggle(const Reader& r, const Json& v, const Path& p) {
  return AsEnum(r, v, p, kToggles);
}
absl::StatusOr<ShareOrder> AsShareOrder(const Reader& r, const Json& v, const Path& p) {
  return AsEnum(r, v, p, kShareOrders);
}
absl::StatusOr<VictimOrder> AsVictimOrder(const Reader& r, const Json& v, const Path& p) {
  return AsEnum(r, v, p, kVictimOrders);
}
absl::StatusOr<UnassignedCapacity> AsUnassigned(const Reader& r, const Json& v, const Path& p) {
  return AsEnum(r, v, p, kUnassigned);
}
absl::StatusOr<EntitledCapacity> AsEntitled(const Reader& r, const Json& v, const Path& p) {
  return AsEnum(r, v, p, kEntitled);
}
// A checkpoint interval: seconds > 0.
absl::StatusOr<SimTime> AsInterval(const Reader& r, const Json& v, const Path& path) {
  QS_ASSIGN_OR_RETURN(SimTime t, AsSeconds(r, v, path));
  if (t <= 0) return r.Error(path, absl::StrCat("must be > 0 seconds, got ", Describe(v)));
  return t;
}
absl::StatusOr<VictimReturn> AsVictimReturn(const Reader& r, const Json& v, const Path& p) {
  return AsEnum(r, v, p, kVictimReturns);
}
absl::StatusOr<TimeLimitClock> AsTimeLimitClock(const Reader& r, const Json& v, const Path& p) {
  return AsEnum(r, v, p, kTimeLimitClocks);
}
absl::StatusOr<JobOutcome> AsOutcome(const Reader& r, const Json& v, const Path& p) {
  return AsEnum(r, v, p, kOutcomes);
}

// A string that must be one of `allowed` (API enums quotasim only checks).
absl::Status CheckOneOf(const Reader& r, const Json& object, const Path& path, const char* key,
                        std::initializer_list<std::string_view> allowed) {
  auto it = object.find(key);
  if (it == object.end()) return absl::OkStatus();
  if (it->is_string() && std::find(allowed.begin(), allowed.end(),
                                   it->get_ref<const std::string&>()) != allowed.end()) {
    return absl::OkStatus();
  }
  std::string expected = allowed.size() == 1 ? "" : "one of ";
  bool first = true;
  for (std::string_view a : allowed) {
    absl::StrAppend(&expected, first ? "" : ", ", Sv(a));
    first = false;
  }
  return r.TypeError(path.Key(key), expected, *it);
}

// Checks the type of an accepted-but-ignored key.
absl::Status CheckType(const Reader& r, const Json& object, const Path& path, const char* key,
                       Json::value_t type, std::string_view expected) {
  auto it = object.find(key);
  if (it == object.end() || it->type() == type) return absl::OkStatus();
  return r.TypeError(path.Key(key), expected, *it);
}

// `tags`: an object of strings (accepted, not kept).
absl::Status CheckTags(const Reader& r, const Json& object, const Path& path) {
  auto it = object.find("tags");
  if (it == object.end()) return absl::OkStatus();
  Path tags = path.Key("tags");
  if (!it->is_object()) return r.TypeError(tags, "an object of strings", *it);
  for (auto t = it->begin(); t != it->end(); ++t) {
    if (!t->is_string()) return r.TypeError(tags.Key(t.key()), "a string", *t);
  }
  return absl::OkStatus();
}

// capacityLimits of a share or an update, stored as written: validation.h
// judges counts, empty units and maxCapacity < 1.
absl::StatusOr<std::vector<CapacityLimit>> AsCapacityLimits(const Reader& r, const Json& v,
                                                            const Path& path) {
  if (!v.is_array()) return r.TypeError(path, "an array", v);
  std::vector<CapacityLimit> limits;
  limits.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const Path entry = path.Index(i);
    const Json& e = v[i];
    QS_RETURN_IF_ERROR(r.CheckObject(e, entry, {"capacityUnit", "maxCapacity"}));
    CapacityLimit limit;
    QS_RETURN_IF_ERROR(Get(r, e, entry, "capacityUnit", AsString, &limit.capacity_unit));
    QS_RETURN_IF_ERROR(Get(r, e, entry, "maxCapacity", AsInt32, &limit.max_capacity));
    limits.push_back(std::move(limit));
  }
  return limits;
}
// A draw seed of simulation.capacity or .latencies: an integer >= 0.
absl::StatusOr<uint64_t> AsSeed(const Reader& r, const Json& v, const Path& path) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
    return r.TypeError(path, "an integer >= 0", v);
  }
  return v.get<uint64_t>();
}

}  // namespace qs::json_read
