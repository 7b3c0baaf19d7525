// File: engine/trace/quota_table.h
//
// A per-team quota table that changes over time: the Helios "Venus" per-VC
// GPU table (../shared/traces/helios-venus-vc-quota/, `date,<VC columns>,total`,
// one row per day, GPUs per VC). The replay builder turns it into share
// limits: the first row at time 0 (CreateQuotaShare), each later row whose
// values differ into UpdateQuotaShare events (and UpdateServiceEnvironment
// when the environment follows the table). Row k applies from simulated day
// k (k x 86400 s after the trace's first submit): the table's calendar dates
// are not aligned with the trace's, only its sequence of days is used.
//
// Errors name the file and line: "<file>:<line>: <problem>" (missing header,
// wrong field count, a date that is not YYYY-MM-DD or does not increase,
// negative or non-integer GPU counts, counts above 1e6).
//
// Thread-safety: plain values and pure functions.
#ifndef QS_ENGINE_TRACE_QUOTA_TABLE_H_
#define QS_ENGINE_TRACE_QUOTA_TABLE_H_

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace qs::trace {

struct QuotaTable {
  std::string source;
  std::vector<std::string> columns;         // team columns (without date and total)
  std::vector<int64_t> days;                // days since 1970-01-01, strictly increasing
  std::vector<std::vector<int64_t>> gpus;   // [row][column]
  std::vector<int64_t> total;               // the `total` column (or the row sum if absent)

  // Index of `column`, or -1.
  int ColumnIndex(std::string_view column) const;
  // Mean GPUs of a column over all rows.
  double MeanGpus(int column) const;
};

absl::StatusOr<QuotaTable> ReadQuotaTable(std::istream& in, std::string_view source);
absl::StatusOr<QuotaTable> ReadQuotaTableFile(const std::string& path);

}  // namespace qs::trace

#endif  // QS_ENGINE_TRACE_QUOTA_TABLE_H_
