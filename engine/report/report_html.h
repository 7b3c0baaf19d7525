// File: engine/report/report_html.h
//
// `quotasim report`: one self-contained HTML page (inline CSS and SVG, no
// script, no network: its Content-Security-Policy forbids any load) from the
// summaries of one run, a what-if, a sweep or a compare, and their event logs
// when there are some.
//
//   ReportInput in;  // engine/cli/report_command.cc fills it from files
//   in.runs.push_back(ReportRun{"base", summary_json, config, "", series, ""});
//   std::string html = ReportHtml(in);
//
// The page: a header naming the runs (scenario, --set overrides, stopped or
// not); with two or more runs a comparison (a what-if: per share "before ->
// after (change)" of waits, jobs started and succeeded, preemptions and lost
// instance-hours, and the wait CDFs of both runs per share); then per run its
// per-share table (limits, strategy, borrowLimit, jobs, waits, own and
// borrowed instance-hours, preemptions, lost instance-hours), its wait by
// cause (runs with --wait-causes), and from its event log the wait CDF of
// every share, the instances each share holds over time (own and borrowed)
// against its limit, and the preemptions over time. Shares keep one colour
// (and, past ten shares, one dash pattern) across the page; durations are in
// s, m, h or d. Elements tests look for: table.shares, svg.chart (with
// data-chart = wait-cdf | use | preemptions | whatif-cdf | causes),
// section.run, section#comparison.
//
// Thread-compatible.
#ifndef QS_ENGINE_REPORT_REPORT_HTML_H_
#define QS_ENGINE_REPORT_REPORT_HTML_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/report/run_series.h"
#include "nlohmann/json.hpp"

namespace qs {

// A share's configuration as the run had it (its scenario with its --set
// overrides, as the share table reads it).
struct ReportShare {
  std::string name;
  std::map<std::string, int64_t> limits;  // instance type -> maxCapacity
  std::string strategy;                   // RESERVE | LEND | LEND_AND_BORROW
  std::string borrow_limit;               // "-" unless LEND_AND_BORROW; "unlimited" or "N%"
  std::string in_share;                   // ENABLED | DISABLED
};

struct ReportRun {
  std::string label;
  nlohmann::json summary;            // as SummaryToJson writes it
  std::vector<ReportShare> config;   // empty when the scenario could not be read
  std::string config_note;           // why not ("" when read)
  std::optional<RunSeries> series;   // from its event log
  std::string log_note;              // why there is none ("" when read)
};

struct ReportInput {
  std::string title;
  std::string kind;  // "run" | "what-if" | "sweep" | "compare"
  std::string source;
  std::string tool_version;
  std::vector<ReportRun> runs;  // a what-if: base, then changed
};

std::string ReportHtml(const ReportInput& in);

}  // namespace qs

#endif  // QS_ENGINE_REPORT_REPORT_HTML_H_
