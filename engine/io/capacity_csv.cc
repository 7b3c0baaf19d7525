// File: engine/io/capacity_csv.cc
#include "engine/io/capacity_csv.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "engine/util/strings.h"

namespace qs {
namespace {

std::string_view Strip(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool ParseInt(std::string_view s, int64_t* out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && p == end;
}

// Seconds as a plain decimal number, 0..1e12, to milliseconds.
bool ParseSeconds(std::string_view s, SimTime* out) {
  if (s.empty() || s.size() > 40) return false;
  std::string copy(s);
  char* end = nullptr;
  const double d = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(d) || d < 0 || d > 1e12) return false;
  *out = static_cast<SimTime>(std::llround(d * static_cast<double>(kMillisPerSecond)));
  return true;
}

}  // namespace

absl::StatusOr<std::vector<AvailabilityStep>> ParseAvailabilityCsv(std::string_view text, std::string_view file) {
  std::vector<AvailabilityStep> steps;
  int line_no = 0;
  bool first_row = true;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = Strip(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    auto where = [&] { return absl::StrCat(Sv(file), ":", line_no, ": "); };
    const size_t comma = line.find(',');
    if (comma == std::string_view::npos || line.find(',', comma + 1) != std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(where(), "expected 2 columns: atSeconds,instances"));
    }
    const std::string_view at_text = Strip(line.substr(0, comma));
    const std::string_view n_text = Strip(line.substr(comma + 1));
    if (first_row && at_text == "atSeconds" && n_text == "instances") {
      first_row = false;
      continue;
    }
    first_row = false;
    AvailabilityStep step;
    if (!ParseSeconds(at_text, &step.at)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), "atSeconds must be a number of seconds from 0 to 1e12, got \"", Sv(at_text), "\""));
    }
    if (!ParseInt(n_text, &step.instances) || step.instances < 0 || step.instances > 2147483647) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), "instances must be an integer from 0 to 2147483647, got \"", Sv(n_text), "\""));
    }
    if (!steps.empty() && step.at <= steps.back().at) {
      return absl::InvalidArgumentError(absl::StrCat(where(), "atSeconds must be strictly increasing"));
    }
    steps.push_back(step);
  }
  if (steps.empty()) return absl::InvalidArgumentError(absl::StrCat(Sv(file), ": no availability rows"));
  return steps;
}

absl::Status LoadAvailabilityCsvs(Scenario& s, const std::string& scenario_path) {
  for (TypeCapacity& c : s.knobs.capacity.types) {
    if (c.availability_csv.empty()) continue;
    std::string path = c.availability_csv;
    if (path[0] != '/') {
      const size_t slash = scenario_path.rfind('/');
      if (slash != std::string::npos) path = scenario_path.substr(0, slash + 1) + path;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return absl::NotFoundError(absl::StrCat(scenario_path, ": simulation.capacity.instanceTypes.", c.instance_type,
                                              ".availabilityCsv: cannot open ", path));
    }
    std::ostringstream text;
    text << in.rdbuf();
    absl::StatusOr<std::vector<AvailabilityStep>> steps = ParseAvailabilityCsv(text.str(), path);
    if (!steps.ok()) return steps.status();
    c.availability = *std::move(steps);
    c.availability_csv.clear();
  }
  return absl::OkStatus();
}

}  // namespace qs
