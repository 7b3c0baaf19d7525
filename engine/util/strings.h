// File: engine/util/strings.h
//
// Debian 12's Abseil is built without ABSL_USES_STD_STRING_VIEW, so
// absl::string_view is its own class and absl::StrCat does not accept a
// std::string_view. Sv() bridges the two without copying. SplitOn() splits
// on one character (the comma of the CSV files quotasim writes itself).
#ifndef QS_ENGINE_UTIL_STRINGS_H_
#define QS_ENGINE_UTIL_STRINGS_H_

#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"

namespace qs {

inline absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// The pieces of `s` between each `sep` (n separators give n + 1 pieces; ""
// gives one empty piece), as views into `s`.
inline std::vector<std::string_view> SplitOn(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

}  // namespace qs

#endif  // QS_ENGINE_UTIL_STRINGS_H_
