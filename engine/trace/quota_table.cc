#include "engine/trace/quota_table.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "engine/trace/internal/text.h"
#include "engine/util/strings.h"

namespace qs::trace {

using trace_internal::ParseDate;
using trace_internal::ParseInt;
using trace_internal::Quote;
using trace_internal::SplitCsv;
using trace_internal::Trim;

int QuotaTable::ColumnIndex(std::string_view column) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == column) return static_cast<int>(i);
  }
  return -1;
}

double QuotaTable::MeanGpus(int column) const {
  if (gpus.empty() || column < 0) return 0;
  double sum = 0;
  for (const auto& row : gpus) sum += static_cast<double>(row[static_cast<size_t>(column)]);
  return sum / static_cast<double>(gpus.size());
}

absl::StatusOr<QuotaTable> ReadQuotaTable(std::istream& in, std::string_view source) {
  QuotaTable t;
  t.source = std::string(source);
  std::string line;
  int64_t line_no = 0;
  auto err = [&](const std::string& msg) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(source), ":", line_no, ": ", msg));
  };
  std::vector<std::string> f;
  std::string split_error;
  bool header = false;
  int total_col = -1;
  size_t width = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (Trim(line).empty()) continue;
    if (!SplitCsv(line, &f, &split_error)) return err(split_error);
    if (!header) {
      if (f.size() < 2 || f[0] != "date") {
        return err(absl::StrCat("missing header: expected date,<team columns>[,total], got ", Quote(line)));
      }
      for (size_t i = 1; i < f.size(); ++i) {
        if (f[i].empty()) return err(absl::StrCat("empty column name in the header (field ", i + 1, ")"));
        if (f[i] == "total") {
          total_col = static_cast<int>(i);
        } else {
          if (t.ColumnIndex(f[i]) >= 0) return err(absl::StrCat("duplicate column ", Quote(f[i])));
          t.columns.push_back(f[i]);
        }
      }
      if (t.columns.empty()) return err("no team columns in the header");
      width = f.size();
      header = true;
      continue;
    }
    if (f.size() != width) return err(absl::StrCat("expected ", width, " fields, got ", f.size()));
    auto day = ParseDate(f[0]);
    if (!day) return err(absl::StrCat("date: expected YYYY-MM-DD, got ", Quote(f[0])));
    if (!t.days.empty() && *day <= t.days.back()) return err("dates must increase");
    std::vector<int64_t> row;
    int64_t sum = 0, total = -1;
    for (size_t i = 1; i < f.size(); ++i) {
      auto v = ParseInt(f[i]);
      if (!v || *v < 0 || *v > 1'000'000) {
        return err(absl::StrCat("field ", i + 1, ": expected a GPU count in [0, 1000000], got ", Quote(f[i])));
      }
      if (static_cast<int>(i) == total_col) {
        total = *v;
      } else {
        row.push_back(*v);
        sum += *v;
      }
    }
    t.days.push_back(*day);
    t.gpus.push_back(std::move(row));
    t.total.push_back(total >= 0 ? total : sum);
  }
  if (!header) return absl::InvalidArgumentError(absl::StrCat(Sv(source), ":1: empty file (missing header)"));
  if (t.days.empty()) return absl::InvalidArgumentError(absl::StrCat(Sv(source), ": no rows after the header"));
  return t;
}

absl::StatusOr<QuotaTable> ReadQuotaTableFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open quota table ", path));
  return ReadQuotaTable(in, path);
}

}  // namespace qs::trace
