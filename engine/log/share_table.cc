#include "engine/log/share_table.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/model/validation.h"
#include "engine/util/strings.h"
#include "nlohmann/json.hpp"

namespace qs {

const DeclaredShare* ShareDeclarations::Note(const ScenarioEvent& ev, const Scenario& head) {
  if (head.knobs.horizon && ev.time > *head.knobs.horizon) return nullptr;  // never applied
  if (const auto* c = std::get_if<CreateQuotaShareRequest>(&ev.request)) {
    const bool exists = c->quota_share_name && std::any_of(shares_.begin(), shares_.end(), [&](const DeclaredShare& d) {
                          return d.name == *c->quota_share_name;
                        });
    if (!ValidateCreateQuotaShare(*c, head.job_queue.name, static_cast<int>(shares_.size()), exists).ok()) {
      return nullptr;
    }
    DeclaredShare d;
    d.name = *c->quota_share_name;
    d.limits = *c->capacity_limits;
    d.strategy = c->strategy.value_or(Strategy::kReserve);
    d.borrow_limit = c->borrow_limit.value_or(-1);
    d.in_share_preemption = c->in_share_preemption.value_or(Toggle::kDisabled);
    d.state = c->state.value_or(Toggle::kEnabled);
    shares_.push_back(std::move(d));
    return &shares_.back();
  } else if (const auto* u = std::get_if<UpdateQuotaShareRequest>(&ev.request)) {
    DeclaredShare* d = nullptr;
    if (u->quota_share_arn) {
      const std::string_view name = ShareNameFromArn(*u->quota_share_arn);
      for (DeclaredShare& x : shares_) {
        if (x.name == name) d = &x;
      }
    }
    if (!ValidateUpdateQuotaShare(*u, d != nullptr).ok()) return nullptr;
    if (u->capacity_limits) d->limits = *u->capacity_limits;
    if (u->has_resource_sharing) {
      d->strategy = u->strategy.value_or(Strategy::kReserve);
      d->borrow_limit = u->borrow_limit.value_or(-1);
    }
    if (u->in_share_preemption) d->in_share_preemption = *u->in_share_preemption;
    if (u->state) d->state = *u->state;
    return d;
  }
  return nullptr;
}

std::optional<TableFormat> ParseTableFormat(std::string_view name) {
  if (name == "table") return TableFormat::kTable;
  if (name == "csv") return TableFormat::kCsv;
  if (name == "json") return TableFormat::kJson;
  return std::nullopt;
}

std::string SignedHumanDuration(SimTime ms) { return (ms < 0 ? "-" : "+") + HumanDuration(ms < 0 ? -ms : ms); }

std::string AlignColumns(const std::vector<std::vector<std::string>>& rows, size_t left_aligned) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      const std::string pad(width[c] - r[c].size(), ' ');
      if (c > 0) line += "  ";
      line += c < left_aligned ? r[c] + pad : pad + r[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string HumanDuration(SimTime ms) {
  const double sec = static_cast<double>(ms) / kMillisPerSecond;
  char buf[32];
  if (sec < 60) {
    std::snprintf(buf, sizeof(buf), "%.1fs", sec);
  } else if (sec < 3600) {
    std::snprintf(buf, sizeof(buf), "%.1fm", sec / 60);
  } else if (sec < 86400) {
    std::snprintf(buf, sizeof(buf), "%.1fh", sec / 3600);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1fd", sec / 86400);
  }
  return buf;
}

namespace {

double Hours(int64_t instance_ms) { return static_cast<double>(instance_ms) / (3600.0 * kMillisPerSecond); }
double Secs(SimTime ms) { return static_cast<double>(ms) / kMillisPerSecond; }

std::string OneDecimal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

// Names in natural order: runs of digits compare as numbers (team-2 before team-10).
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      std::string_view x(a.data() + i, ie - i), y(b.data() + j, je - j);
      while (x.size() > 1 && x[0] == '0') x.remove_prefix(1);
      while (y.size() > 1 && y[0] == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
  return a < b;
}

// One row: a share (declared or not) or TOTAL.
struct Row {
  std::string name;
  const DeclaredShare* decl = nullptr;  // null: not declared, or TOTAL
  const ShareSummary* s = nullptr;      // null: declared, no record of it
  int64_t own = 0, borrowed = 0;        // instance-ms
  bool total = false;                   // the TOTAL row, always last
};

std::vector<Row> Rows(const Summary& s, const std::vector<DeclaredShare>& declared) {
  std::vector<Row> rows;
  std::set<std::string> listed;
  for (const DeclaredShare& d : declared) {
    Row r;
    r.name = d.name;
    r.decl = &d;
    auto it = s.shares.find(d.name);
    if (it != s.shares.end()) r.s = &it->second;
    rows.push_back(r);
    listed.insert(d.name);
  }
  std::vector<const std::string*> others;
  for (const auto& [name, sh] : s.shares) {
    if (!listed.contains(name)) others.push_back(&name);
  }
  std::sort(others.begin(), others.end(), [](const std::string* a, const std::string* b) { return NaturalLess(*a, *b); });
  for (const std::string* name : others) rows.push_back(Row{*name, nullptr, &s.shares.at(*name)});
  rows.push_back(Row{"TOTAL", nullptr, &s.total, 0, 0, /*total=*/true});
  static const ShareSummary kNone;
  for (Row& r : rows) {
    if (!r.s) r.s = &kNone;
    for (const auto& [u, v] : r.s->instance_ms) {
      r.own += v.first;
      r.borrowed += v.second;
    }
  }
  return rows;
}

// A wait percentile, or "-" when no job of the share started (there is no
// wait to report, and 0 would read as "no waiting").
std::string Wait(const DurationStats& d, SimTime v) { return d.count == 0 ? "-" : HumanDuration(v); }
std::string CsvWait(const DurationStats& d, SimTime v) { return d.count == 0 ? "" : absl::StrCat(Secs(v)); }

std::string BorrowText(const DeclaredShare& d) {
  if (d.strategy != Strategy::kLendAndBorrow) return "-";
  return d.borrow_limit < 0 ? "unlimited" : absl::StrCat(d.borrow_limit, "%");
}

// Terminal cell: "4 ml.g5.xlarge", or "12 in 3 types" for several.
std::string LimitText(const DeclaredShare& d) {
  if (d.limits.size() == 1) return absl::StrCat(d.limits[0].max_capacity, " ", d.limits[0].capacity_unit);
  int64_t n = 0;
  for (const CapacityLimit& l : d.limits) n += l.max_capacity;
  return absl::StrCat(n, " in ", d.limits.size(), " types");
}

// CSV cell: "ml.g5.xlarge=4;ml.p4d.24xlarge=2".
std::string LimitList(const DeclaredShare& d) {
  std::vector<std::string> parts;
  for (const CapacityLimit& l : d.limits) parts.push_back(absl::StrCat(l.capacity_unit, "=", l.max_capacity));
  return absl::StrJoin(parts, ";");
}

std::string CsvField(const std::string& v) {
  if (v.find_first_of(",\"\n") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Table(const Summary& s, const std::vector<Row>& rows) {
  const std::vector<std::string> header = {"quota share", "limit", "strategy", "borrow", "in-share",
                                           "jobs", "succeeded", "failed", "unfinished", "wait p50",
                                           "wait p95", "wait p99", "preempted x-share", "preempted in-share",
                                           "own inst-h", "borrowed inst-h", "lost inst-h"};
  std::vector<std::vector<std::string>> cells = {header};
  for (const Row& r : rows) {
    const ShareSummary& sh = *r.s;
    cells.push_back({r.name, r.decl ? LimitText(*r.decl) : "-", r.decl ? StrategyName(r.decl->strategy) : "-",
                     r.decl ? BorrowText(*r.decl) : "-",
                     r.decl ? (r.decl->in_share_preemption == Toggle::kEnabled ? "on" : "off") : "-",
                     std::to_string(sh.submitted), std::to_string(sh.succeeded), std::to_string(sh.failed),
                     std::to_string(sh.unfinished), Wait(sh.wait, sh.wait.p50), Wait(sh.wait, sh.wait.p95),
                     Wait(sh.wait, sh.wait.p99), std::to_string(sh.preempted_cross), std::to_string(sh.preempted_in),
                     OneDecimal(Hours(r.own)), OneDecimal(Hours(r.borrowed)),
                     OneDecimal(Hours(sh.work_lost_instance_ms))});
  }
  // Every column as wide as its widest cell: aligned for any name and count;
  // the name and configuration columns left-aligned, numbers right-aligned.
  std::string out = AlignColumns(cells, 5);
  char line[512];
  for (const auto& [unit, u] : s.utilisation) {
    std::snprintf(line, sizeof(line), "utilisation %s: %.1f%%\n", unit.c_str(), 100.0 * u);
    out += line;
  }
  std::snprintf(line, sizeof(line), "simulated time: %s, rejected requests: %lld, invariant violations: %lld\n",
                HumanDuration(s.end_time).c_str(), static_cast<long long>(s.rejected_requests),
                static_cast<long long>(s.invariant_violations));
  out += line;
  std::snprintf(line, sizeof(line),
                "backlog (jobs waiting): peak %lld at %s, mean %.0f over the arrivals (to %s), %lld at the last arrival\n",
                static_cast<long long>(s.backlog.peak), HumanDuration(s.backlog.peak_time).c_str(),
                s.backlog.mean_over_arrivals, HumanDuration(s.backlog.last_submission).c_str(),
                static_cast<long long>(s.backlog.at_last_submission));
  out += line;
  return out;
}

std::string Csv(const std::vector<Row>& rows) {
  std::string out =
      "row,quotaShare,capacityLimits,strategy,borrowLimit,inSharePreemption,jobs,succeeded,failed,unfinished,"
      "waitP50Seconds,waitP95Seconds,waitP99Seconds,waitMaxSeconds,preemptedCrossShare,preemptedInShare,"
      "ownInstanceHours,borrowedInstanceHours,lostInstanceHours\n";
  for (const Row& r : rows) {
    const ShareSummary& sh = *r.s;
    std::vector<std::string> f = {r.total ? "total" : "share", r.total ? "" : CsvField(r.name),
                                  r.decl ? CsvField(LimitList(*r.decl)) : "",
                                  r.decl ? StrategyName(r.decl->strategy) : "",
                                  r.decl ? std::to_string(r.decl->borrow_limit) : "",
                                  r.decl ? ToggleName(r.decl->in_share_preemption) : "",
                                  std::to_string(sh.submitted), std::to_string(sh.succeeded),
                                  std::to_string(sh.failed), std::to_string(sh.unfinished),
                                  CsvWait(sh.wait, sh.wait.p50), CsvWait(sh.wait, sh.wait.p95),
                                  CsvWait(sh.wait, sh.wait.p99), CsvWait(sh.wait, sh.wait.max),
                                  std::to_string(sh.preempted_cross), std::to_string(sh.preempted_in),
                                  absl::StrCat(Hours(r.own)), absl::StrCat(Hours(r.borrowed)),
                                  absl::StrCat(Hours(sh.work_lost_instance_ms))};
    out += absl::StrJoin(f, ",") + "\n";
  }
  return out;
}

nlohmann::ordered_json RowJson(const Row& r) {
  const ShareSummary& sh = *r.s;
  nlohmann::ordered_json j;
  if (!r.total) j["quotaShare"] = r.name;
  if (r.decl) {
    nlohmann::ordered_json limits = nlohmann::ordered_json::array();
    for (const CapacityLimit& l : r.decl->limits) {
      limits.push_back({{"capacityUnit", l.capacity_unit}, {"maxCapacity", l.max_capacity}});
    }
    j["capacityLimits"] = limits;
    j["strategy"] = StrategyName(r.decl->strategy);
    j["borrowLimit"] = r.decl->borrow_limit;
    j["inSharePreemption"] = ToggleName(r.decl->in_share_preemption);
  }
  j["jobs"] = sh.submitted;
  j["succeeded"] = sh.succeeded;
  j["failed"] = sh.failed;
  j["unfinished"] = sh.unfinished;
  // No job of the share started: no wait to report (null, not 0).
  if (sh.wait.count == 0) {
    j["waitSeconds"] = nullptr;
  } else {
    j["waitSeconds"] = {{"p50", Secs(sh.wait.p50)}, {"p95", Secs(sh.wait.p95)}, {"p99", Secs(sh.wait.p99)},
                        {"max", Secs(sh.wait.max)}};
  }
  j["preempted"] = {{"crossShare", sh.preempted_cross}, {"inShare", sh.preempted_in}};
  j["ownInstanceHours"] = Hours(r.own);
  j["borrowedInstanceHours"] = Hours(r.borrowed);
  j["lostInstanceHours"] = Hours(sh.work_lost_instance_ms);
  return j;
}

std::string Json(const std::vector<Row>& rows) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  nlohmann::ordered_json total;
  for (const Row& r : rows) {
    if (r.total) {
      total = RowJson(r);
    } else {
      list.push_back(RowJson(r));
    }
  }
  nlohmann::ordered_json doc;
  doc["quotaShares"] = std::move(list);
  doc["total"] = std::move(total);
  return doc.dump(2) + "\n";
}

// ------------------------------------------------------------- what-if

// A share's row in both runs (either may be the empty row).
struct RowPair {
  std::string name;
  const Row* a;
  const Row* b;
  bool total = false;
};

std::vector<RowPair> Pairs(const std::vector<Row>& a, const std::vector<Row>& b, std::vector<Row>& empties) {
  static const ShareSummary kNone;
  empties.reserve(a.size() + b.size());  // pointers into it stay valid
  auto find = [](const std::vector<Row>& rows, const Row& r) -> const Row* {
    for (const Row& x : rows) {
      if (x.total == r.total && x.name == r.name) return &x;
    }
    return nullptr;
  };
  auto empty = [&](const Row& like) {
    empties.push_back(Row{like.name, nullptr, &kNone, 0, 0, like.total});
    return &empties.back();
  };
  std::vector<RowPair> out;
  for (const Row& r : a) {
    if (r.total) continue;
    const Row* other = find(b, r);
    out.push_back({r.name, &r, other ? other : empty(r)});
  }
  for (const Row& r : b) {
    if (!r.total && !find(a, r)) out.push_back({r.name, empty(r), &r});
  }
  out.push_back({"TOTAL", &a.back(), &b.back(), true});
  return out;
}

// What --set changed in a share's declaration ("" when nothing).
std::string SettingChange(const Row& a, const Row& b) {
  if (!a.decl && !b.decl) return "";
  if (!a.decl) return "new share";
  if (!b.decl) return "removed";
  std::vector<std::string> parts;
  auto note = [&](std::string_view what, const std::string& x, const std::string& y) {
    if (x != y) parts.push_back(absl::StrCat(Sv(what), " ", x, " -> ", y));
  };
  note("limit", LimitList(*a.decl), LimitList(*b.decl));
  note("strategy", StrategyName(a.decl->strategy), StrategyName(b.decl->strategy));
  note("borrow", BorrowText(*a.decl), BorrowText(*b.decl));
  note("in-share", ToggleName(a.decl->in_share_preemption), ToggleName(b.decl->in_share_preemption));
  return absl::StrJoin(parts, "; ");
}

std::string SignedDuration(SimTime d) { return d == 0 ? "=" : SignedHumanDuration(d); }

std::string WaitChange(const ShareSummary& a, SimTime va, const ShareSummary& b, SimTime vb) {
  std::string s = absl::StrCat(Wait(a.wait, va), " -> ", Wait(b.wait, vb));
  if (a.wait.count > 0 && b.wait.count > 0) absl::StrAppend(&s, " (", SignedDuration(vb - va), ")");
  return s;
}

std::string CountChange(int64_t a, int64_t b) {
  if (a == b) return absl::StrCat(a, " (=)");
  return absl::StrCat(a, " -> ", b, " (", b > a ? "+" : "", b - a, ")");
}

// Instance-hours with two decimals (a what-if often moves minutes of use).
std::string HoursChange(double a, double b) {
  auto two = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2f", v);
    return std::string(buf);
  };
  if (two(a) == two(b)) return absl::StrCat(two(a), " (=)");
  return absl::StrCat(two(a), " -> ", two(b), " (", b > a ? "+" : "", two(b - a), ")");
}

int64_t Preempted(const ShareSummary& s) { return s.preempted_cross + s.preempted_in; }

std::string WhatIfText(const std::vector<RowPair>& pairs) {
  // `started` counts the jobs the waits are over (a job still waiting at the
  // end has no wait yet): more jobs starting can raise the percentiles.
  std::vector<std::vector<std::string>> cells = {{"quota share", "setting", "started", "wait p50", "wait p95",
                                                  "wait p99", "succeeded", "preempted", "lost inst-h"}};
  for (const RowPair& p : pairs) {
    const ShareSummary& a = *p.a->s;
    const ShareSummary& b = *p.b->s;
    const std::string change = p.total ? "" : SettingChange(*p.a, *p.b);
    cells.push_back({p.name, change.empty() ? "-" : change, CountChange(a.wait.count, b.wait.count),
                     WaitChange(a, a.wait.p50, b, b.wait.p50),
                     WaitChange(a, a.wait.p95, b, b.wait.p95), WaitChange(a, a.wait.p99, b, b.wait.p99),
                     CountChange(a.succeeded, b.succeeded), CountChange(Preempted(a), Preempted(b)),
                     HoursChange(Hours(a.work_lost_instance_ms), Hours(b.work_lost_instance_ms))});
  }
  return AlignColumns(cells, 2);
}

std::string WhatIfCsv(const std::vector<RowPair>& pairs) {
  std::string out = "row,quotaShare,setting";
  const char* metrics[] = {"waitP50Seconds", "waitP95Seconds", "waitP99Seconds", "started", "succeeded",
                           "preempted", "lostInstanceHours"};
  for (const char* m : metrics) absl::StrAppend(&out, ",base_", m, ",changed_", m, ",delta_", m);
  out += "\n";
  for (const RowPair& p : pairs) {
    const ShareSummary& a = *p.a->s;
    const ShareSummary& b = *p.b->s;
    std::vector<std::string> f = {p.total ? "total" : "share", p.total ? "" : CsvField(p.name),
                                  p.total ? "" : CsvField(SettingChange(*p.a, *p.b))};
    auto wait = [&](SimTime va, SimTime vb) {
      f.push_back(CsvWait(a.wait, va));
      f.push_back(CsvWait(b.wait, vb));
      f.push_back(a.wait.count > 0 && b.wait.count > 0 ? absl::StrCat(Secs(vb - va)) : "");
    };
    wait(a.wait.p50, b.wait.p50);
    wait(a.wait.p95, b.wait.p95);
    wait(a.wait.p99, b.wait.p99);
    for (auto [x, y] : {std::pair{a.wait.count, b.wait.count}, std::pair{a.succeeded, b.succeeded},
                        std::pair{Preempted(a), Preempted(b)}}) {
      f.push_back(std::to_string(x));
      f.push_back(std::to_string(y));
      f.push_back(std::to_string(y - x));
    }
    const double la = Hours(a.work_lost_instance_ms), lb = Hours(b.work_lost_instance_ms);
    f.push_back(absl::StrCat(la));
    f.push_back(absl::StrCat(lb));
    f.push_back(absl::StrCat(lb - la));
    out += absl::StrJoin(f, ",") + "\n";
  }
  return out;
}

std::string WhatIfJson(const std::vector<RowPair>& pairs) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  nlohmann::ordered_json total;
  for (const RowPair& p : pairs) {
    const ShareSummary& a = *p.a->s;
    const ShareSummary& b = *p.b->s;
    nlohmann::ordered_json j;
    if (!p.total) {
      j["quotaShare"] = p.name;
      j["setting"] = SettingChange(*p.a, *p.b);
    }
    j["base"] = RowJson(*p.a);
    j["changed"] = RowJson(*p.b);
    nlohmann::ordered_json d;
    if (a.wait.count > 0 && b.wait.count > 0) {
      d["waitSeconds"] = {{"p50", Secs(b.wait.p50 - a.wait.p50)},
                          {"p95", Secs(b.wait.p95 - a.wait.p95)},
                          {"p99", Secs(b.wait.p99 - a.wait.p99)}};
    } else {
      d["waitSeconds"] = nullptr;
    }
    d["started"] = b.wait.count - a.wait.count;
    d["succeeded"] = b.succeeded - a.succeeded;
    d["preempted"] = Preempted(b) - Preempted(a);
    d["lostInstanceHours"] = Hours(b.work_lost_instance_ms) - Hours(a.work_lost_instance_ms);
    j["delta"] = std::move(d);
    if (p.total) {
      total = std::move(j);
    } else {
      list.push_back(std::move(j));
    }
  }
  nlohmann::ordered_json doc;
  doc["quotaShares"] = std::move(list);
  doc["total"] = std::move(total);
  return doc.dump(2) + "\n";
}

}  // namespace

std::string WhatIfTable(const Summary& base, const std::vector<DeclaredShare>& base_declared, const Summary& changed,
                        const std::vector<DeclaredShare>& changed_declared, TableFormat format) {
  const std::vector<Row> a = Rows(base, base_declared), b = Rows(changed, changed_declared);
  std::vector<Row> empties;
  const std::vector<RowPair> pairs = Pairs(a, b, empties);
  switch (format) {
    case TableFormat::kCsv:
      return WhatIfCsv(pairs);
    case TableFormat::kJson:
      return WhatIfJson(pairs);
    case TableFormat::kTable:
      break;
  }
  return WhatIfText(pairs);
}

std::string ShareTable(const Summary& s, const std::vector<DeclaredShare>& declared, TableFormat format) {
  const std::vector<Row> rows = Rows(s, declared);
  switch (format) {
    case TableFormat::kCsv:
      return Csv(rows);
    case TableFormat::kJson:
      return Json(rows);
    case TableFormat::kTable:
      break;
  }
  return Table(s, rows);
}

}  // namespace qs
