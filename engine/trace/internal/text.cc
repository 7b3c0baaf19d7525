#include "engine/trace/internal/text.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace qs::trace::trace_internal {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool SplitCsv(std::string_view line, std::vector<std::string>* fields, std::string* error) {
  fields->clear();
  size_t i = 0;
  const size_t n = line.size();
  while (true) {
    std::string field;
    while (i < n && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i < n && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < n) {
        if (line[i] == '"') {
          if (i + 1 < n && line[i + 1] == '"') {
            field.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        field.push_back(line[i++]);
      }
      if (!closed) {
        *error = "unterminated quoted field";
        return false;
      }
      while (i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      if (i < n && line[i] != ',') {
        *error = "text after a closing quote";
        return false;
      }
    } else {
      size_t start = i;
      while (i < n && line[i] != ',') ++i;
      field = std::string(Trim(line.substr(start, i - start)));
    }
    fields->push_back(std::move(field));
    if (i >= n) break;
    ++i;  // the comma
  }
  return true;
}

void SplitWhitespace(std::string_view line, std::vector<std::string_view>* fields) {
  fields->clear();
  size_t i = 0;
  const size_t n = line.size();
  while (i < n) {
    while (i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    if (i >= n) break;
    size_t start = i;
    while (i < n && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    fields->push_back(line.substr(start, i - start));
  }
}

std::optional<double> ParseDouble(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() || s.size() > 64) return std::nullopt;
  // Only digits, sign, point and exponent: rejects "nan", "inf", hex floats.
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) {
      return std::nullopt;
    }
  }
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1) return std::nullopt;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  const int64_t mdays = kDays[m - 1] + (m == 2 && leap ? 1 : 0);
  if (d > mdays) return std::nullopt;
  // H. Hinnant, days_from_civil.
  y -= m <= 2 ? 1 : 0;
  const int64_t era = y / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

namespace {
std::optional<int64_t> Digits(std::string_view s, size_t pos, size_t len) {
  if (pos + len > s.size()) return std::nullopt;
  int64_t v = 0;
  for (size_t i = pos; i < pos + len; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}
}  // namespace

std::optional<int64_t> ParseDate(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  auto y = Digits(s, 0, 4), m = Digits(s, 5, 2), d = Digits(s, 8, 2);
  if (!y || !m || !d) return std::nullopt;
  return DaysFromCivil(*y, *m, *d);
}

std::optional<int64_t> ParseDateTime(std::string_view s) {
  if (s.size() != 19 || s[10] != ' ' || s[13] != ':' || s[16] != ':') return std::nullopt;
  auto days = ParseDate(s.substr(0, 10));
  auto hh = Digits(s, 11, 2), mm = Digits(s, 14, 2), ss = Digits(s, 17, 2);
  if (!days || !hh || !mm || !ss || *hh > 23 || *mm > 59 || *ss > 60) return std::nullopt;
  return *days * 86400 + *hh * 3600 + *mm * 60 + *ss;
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  size_t shown = 0;
  for (char c : s) {
    if (++shown > 40) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    } else {
      out.push_back(c);
    }
  }
  out += "\"";
  return out;
}

}  // namespace qs::trace::trace_internal
