// File: engine/util/strings.h
//
// Debian 12's Abseil is built without ABSL_USES_STD_STRING_VIEW, so
// absl::string_view is its own class and absl::StrCat does not accept a
// std::string_view. Sv() bridges the two without copying.
#ifndef QS_ENGINE_UTIL_STRINGS_H_
#define QS_ENGINE_UTIL_STRINGS_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace qs {

inline absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace qs

#endif  // QS_ENGINE_UTIL_STRINGS_H_
