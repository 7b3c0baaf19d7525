// File: engine/trace/internal/text.h
//
// Small text helpers shared by the trace importers and the quota-table
// reader: CSV field splitting (RFC 4180 quotes), whitespace splitting, strict
// number parsing and civil-date arithmetic. Not part of the public API.
//
// Thread-safety: pure functions.
#ifndef QS_ENGINE_TRACE_INTERNAL_TEXT_H_
#define QS_ENGINE_TRACE_INTERNAL_TEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qs::trace::trace_internal {

// Removes leading and trailing spaces, tabs and a trailing '\r'.
std::string_view Trim(std::string_view s);

// Splits one CSV line into fields. Fields may be double-quoted ("" inside
// quotes is a quote). Returns false (and leaves `error`) on an unterminated
// quote or text after a closing quote. Fields are trimmed of spaces.
bool SplitCsv(std::string_view line, std::vector<std::string>* fields, std::string* error);

// Splits on runs of spaces and tabs (SWF).
void SplitWhitespace(std::string_view line, std::vector<std::string_view>* fields);

// Strict decimal number: the whole text must be a finite number (no "nan",
// "inf", hex or trailing junk). Leading '+' is accepted.
std::optional<double> ParseDouble(std::string_view s);
// Strict integer in int64 range.
std::optional<int64_t> ParseInt(std::string_view s);

// Days since 1970-01-01 of a proleptic Gregorian date, or nullopt when the
// date does not exist.
std::optional<int64_t> DaysFromCivil(int64_t y, int64_t m, int64_t d);
// "YYYY-MM-DD" -> days since 1970-01-01.
std::optional<int64_t> ParseDate(std::string_view s);
// "YYYY-MM-DD HH:MM:SS" (naive, no zone) -> seconds since 1970-01-01 00:00:00.
std::optional<int64_t> ParseDateTime(std::string_view s);

// Short quoted rendering of a field for messages (at most ~40 characters,
// control bytes escaped).
std::string Quote(std::string_view s);

}  // namespace qs::trace::trace_internal

#endif  // QS_ENGINE_TRACE_INTERNAL_TEXT_H_
