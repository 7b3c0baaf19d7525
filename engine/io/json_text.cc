// JSON text -> JSON values and message helpers: see engine/io/json_text.h.
#include "engine/io/json_text.h"

#include <algorithm>
#include <string>

#include "engine/util/strings.h"

namespace qs::json_text {

namespace {
bool IsIdentifier(std::string_view key);
}  // namespace

// ---------------------------------------------------------------------------
// Message text. Messages are one line of ASCII whatever the input holds.

// The first <= max bytes of `s`, not splitting a UTF-8 sequence.
std::string_view Truncate(std::string_view s, size_t max, bool* cut) {
  *cut = s.size() > max;
  if (!*cut) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

// `s` as a JSON string literal (ASCII, escaped), cut after kMaxQuotedBytes
// with "..." after the closing quote.
std::string Quote(std::string_view s) {
  bool cut = false;
  std::string_view head = Truncate(s, kMaxQuotedBytes, &cut);
  std::string out =
      Json(std::string(head)).dump(-1, ' ', /*ensure_ascii=*/true, Json::error_handler_t::replace);
  if (cut) out += "...";
  return out;
}

// `s` between single quotes, escaped as in Quote(): 'qs1_job'.
std::string SingleQuote(std::string_view s) {
  bool cut = false;
  std::string_view head = Truncate(s, kMaxQuotedBytes, &cut);
  std::string body =
      Json(std::string(head)).dump(-1, ' ', /*ensure_ascii=*/true, Json::error_handler_t::replace);
  body = body.substr(1, body.size() - 2);
  return absl::StrCat("'", body, "'", cut ? "..." : "");
}

// Bytes outside printable ASCII as \xNN.
std::string Sanitize(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7F) {
      out.push_back(ch);
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

// "string \"x\"", "number 3.5", "object", ... for "got ..." in messages.
std::string Describe(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return v.get<bool>() ? "boolean true" : "boolean false";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return absl::StrCat("number ", v.dump());
    case Json::value_t::string:
      return absl::StrCat("string ", Quote(v.get_ref<const std::string&>()));
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    case Json::value_t::binary:
      return "binary";
    case Json::value_t::discarded:
      break;
  }
  return "nothing";
}

// ---------------------------------------------------------------------------
// JSON paths: quotaShares[2].capacityLimits[0].maxCapacity.

namespace {
bool IsIdentifier(std::string_view key) {
  if (key.empty() || key.size() > kMaxQuotedBytes) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    char c = key[i];
    bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
  }
  return true;
}
}  // namespace

void AppendKey(std::string& out, std::string_view key) {
  if (IsIdentifier(key)) {
    if (!out.empty()) out.push_back('.');
    out.append(key);
  } else {
    absl::StrAppend(&out, "[", Quote(key), "]");
  }
}

void AppendIndex(std::string& out, size_t index) { absl::StrAppend(&out, "[", index, "]"); }


// ---------------------------------------------------------------------------
// Text -> JSON values.

// "line L, column C" of the last of the first `consumed` bytes (nlohmann's
// convention: a column counts the bytes read on that line; reading past the
// end counts one more).
std::string LineColumn(std::string_view text, size_t consumed) {
  size_t end = std::min(consumed, text.size());
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return absl::StrCat("line ", line, ", column ", consumed - line_start);
}

// Bytes consumed up to and including the first bracket that opens level
// max_depth + 1, or 0 if the text never nests that deep. Brackets inside
// strings do not count. Exact for valid JSON; for invalid JSON either answer
// is fine since the parser rejects the text anyway.
size_t FindTooDeep(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > max_depth) return i + 1;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return 0;
}

// nlohmann's what() without "[json.exception.parse_error.101] parse error at
// line 1, column 1: ".
std::string NlohmannReason(std::string_view what) {
  if (!what.empty() && what.front() == '[') {
    size_t close = what.find("] ");
    if (close != std::string_view::npos) what.remove_prefix(close + 2);
  }
  if (what.substr(0, 11) == "parse error") {
    size_t colon = what.find(": ");
    if (colon != std::string_view::npos) what.remove_prefix(colon + 2);
  }
  return Sanitize(what);
}

TextResult ReadJsonText(std::string_view text, DomBuilder& builder) {
  TextResult result;
  if (size_t at = FindTooDeep(text, static_cast<size_t>(kMaxJsonDepth)); at != 0) {
    result.location = LineColumn(text, at);
    result.reason = absl::StrCat("nesting deeper than ", kMaxJsonDepth, " levels");
    return result;
  }
  result.ok = Json::sax_parse(text.data(), text.data() + text.size(), &builder);
  if (result.ok) return result;
  result.sink_status = builder.sink_status();
  if (!builder.location().empty() || builder.consumed() == 0) {
    result.location = builder.location().empty() ? "top level" : builder.location();
  } else {
    result.location = LineColumn(text, builder.consumed());
  }
  result.reason = builder.reason();
  return result;
}

}  // namespace qs::json_text
