#include "engine/report/report_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/log/event_log.h"
#include "engine/log/share_table.h"

namespace qs {
namespace {

using Json = nlohmann::json;

// Tableau 10: distinguishable, and readable on white.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr const char* kDashes[] = {"", "6 3", "2 2", "8 3 2 3"};
constexpr int kColors = 10;
// One colour per WaitCause (index 1..), apart from the shares' palette.
constexpr const char* kCauseColors[] = {"",        "#b9b9b9", "#555555", "#d62728", "#9467bd", "#17becf",
                                        "#ff7f0e", "#e377c2", "#bcbd22", "#8c564b", "#98df8a", "#1f1f1f"};
static_assert(sizeof(kCauseColors) / sizeof(kCauseColors[0]) == kNumWaitCauses, "a colour per cause");

std::string Esc(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string Fmt(double v, int decimals = 1) { return absl::StrFormat("%.*f", decimals, v); }

double Num(const Json& j, std::initializer_list<const char*> path) {
  const Json* p = &j;
  for (const char* k : path) {
    if (!p->is_object() || !p->contains(k)) return 0;
    p = &(*p)[k];
  }
  return p->is_number() ? p->get<double>() : 0;
}

SimTime Ms(double seconds) { return static_cast<SimTime>(std::llround(seconds * 1000)); }

// A share's colour and dash pattern, fixed for the page.
struct Style {
  std::string color, dash;
};
class Styles {
 public:
  const Style& Of(const std::string& share) {
    auto it = styles_.find(share);
    if (it != styles_.end()) return it->second;
    const size_t k = styles_.size();
    return styles_[share] = Style{kPalette[k % kColors], kDashes[(k / kColors) % 4]};
  }

 private:
  std::map<std::string, Style> styles_;
};

std::string StrokeAttrs(const Style& s, double width = 1.8) {
  std::string a = absl::StrCat("stroke=\"", s.color, "\" stroke-width=\"", Fmt(width), "\" fill=\"none\"");
  if (!s.dash.empty()) absl::StrAppend(&a, " stroke-dasharray=\"", s.dash, "\"");
  return a;
}

// Nice tick step for a range: 1, 2 or 5 times a power of ten.
double NiceStep(double range, int target) {
  if (range <= 0) return 1;
  const double raw = range / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

// Ticks of a duration axis [0, max_ms], labelled in the largest unit that
// gives at least two of it.
std::vector<std::pair<double, std::string>> TimeTicks(SimTime max_ms) {
  struct Unit {
    double ms;
    const char* name;
  };
  const Unit units[] = {{86'400'000, "d"}, {3'600'000, "h"}, {60'000, "m"}, {1000, "s"}};
  Unit u = units[3];
  for (const Unit& c : units) {
    if (static_cast<double>(max_ms) >= 2 * c.ms) {
      u = c;
      break;
    }
  }
  const double range = static_cast<double>(max_ms) / u.ms;
  const double step = NiceStep(range, 5);
  std::vector<std::pair<double, std::string>> ticks;
  for (double v = 0; v <= range + 1e-9; v += step) {
    ticks.push_back({v * u.ms, absl::StrCat(step < 1 ? Fmt(v, 1) : Fmt(v, 0), u.name)});
  }
  return ticks;
}

std::vector<std::pair<double, std::string>> CountTicks(double max) {
  const double step = std::max(1.0, NiceStep(max, 4));
  std::vector<std::pair<double, std::string>> ticks;
  for (double v = 0; v <= max + 1e-9; v += step) ticks.push_back({v, Fmt(v, 0)});
  return ticks;
}

// A plot area inside an SVG of w x h with margins for the axes.
struct Plot {
  double w, h;
  double left = 46, right = 12, top = 12, bottom = 30;
  double xmax = 1, ymax = 1;
  double X(double x) const { return left + (w - left - right) * std::clamp(x / xmax, 0.0, 1.0); }
  double Y(double y) const { return h - bottom - (h - top - bottom) * std::clamp(y / ymax, 0.0, 1.0); }
};

std::string Open(const Plot& p, const char* chart, std::string_view label) {
  return absl::StrCat("<svg class=\"chart\" data-chart=\"", chart, "\" role=\"img\" aria-label=\"", Esc(label),
                      "\" viewBox=\"0 0 ", Fmt(p.w, 0), " ", Fmt(p.h, 0), "\" width=\"", Fmt(p.w, 0), "\" height=\"",
                      Fmt(p.h, 0), "\">");
}

std::string Axes(const Plot& p, const std::vector<std::pair<double, std::string>>& xt,
                 const std::vector<std::pair<double, std::string>>& yt) {
  std::string s;
  for (const auto& [v, label] : yt) {
    const double y = p.Y(v);
    absl::StrAppend(&s, "<line class=\"grid\" x1=\"", Fmt(p.left), "\" x2=\"", Fmt(p.w - p.right), "\" y1=\"", Fmt(y),
                    "\" y2=\"", Fmt(y), "\"/><text class=\"tick\" x=\"", Fmt(p.left - 4), "\" y=\"", Fmt(y + 4),
                    "\" text-anchor=\"end\">", Esc(label), "</text>");
  }
  for (const auto& [v, label] : xt) {
    const double x = p.X(v);
    absl::StrAppend(&s, "<text class=\"tick\" x=\"", Fmt(x), "\" y=\"", Fmt(p.h - p.bottom + 14),
                    "\" text-anchor=\"middle\">", Esc(label), "</text>");
  }
  absl::StrAppend(&s, "<line class=\"axis\" x1=\"", Fmt(p.left), "\" x2=\"", Fmt(p.w - p.right), "\" y1=\"",
                  Fmt(p.h - p.bottom), "\" y2=\"", Fmt(p.h - p.bottom), "\"/>");
  return s;
}

// A CDF as a path: up to 400 quantile steps of the sorted waits.
std::string CdfPath(const Plot& p, const std::vector<SimTime>& w) {
  if (w.empty()) return "";
  std::string d = absl::StrCat("M", Fmt(p.X(0)), " ", Fmt(p.Y(0)));
  const size_t n = w.size();
  const size_t steps = std::min<size_t>(n, 400);
  double last_y = 0;
  for (size_t q = 1; q <= steps; ++q) {
    const size_t idx = (q * n + steps - 1) / steps - 1;
    const double y = static_cast<double>(idx + 1) / static_cast<double>(n);
    const double x = p.X(static_cast<double>(w[idx]));
    absl::StrAppend(&d, " L", Fmt(x), " ", Fmt(p.Y(last_y)), " L", Fmt(x), " ", Fmt(p.Y(y)));
    last_y = y;
  }
  return d;
}

std::string Legend(const std::vector<std::string>& names, Styles& styles) {
  std::string s = "<div class=\"legend\">";
  for (const std::string& n : names) {
    const Style& st = styles.Of(n);
    absl::StrAppend(&s, "<span><svg width=\"22\" height=\"10\"><line x1=\"1\" x2=\"21\" y1=\"5\" y2=\"5\" ",
                    StrokeAttrs(st, 3), "/></svg>", Esc(n), "</span>");
  }
  return s + "</div>";
}

// The shares of a run in the order of its configuration, then any only its
// summary has (by name).
std::vector<std::string> ShareNames(const ReportRun& r) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const ReportShare& c : r.config) {
    if (seen.insert(c.name).second) names.push_back(c.name);
  }
  if (r.summary.contains("quotaShares") && r.summary["quotaShares"].is_object()) {
    for (const auto& [name, v] : r.summary["quotaShares"].items()) {
      if (seen.insert(name).second) names.push_back(name);
    }
  }
  return names;
}

// The run's shares, then any other key of a series map ("all jobs", "all
// shares" of a trace compare's files).
template <typename Map>
std::vector<std::string> NamesWith(const ReportRun& r, const Map& m) {
  std::vector<std::string> names = ShareNames(r);
  for (const auto& [k, v] : m) {
    if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
  }
  return names;
}

const ReportShare* ConfigOf(const ReportRun& r, const std::string& share) {
  for (const ReportShare& c : r.config) {
    if (c.name == share) return &c;
  }
  return nullptr;
}

const Json& Empty() {
  static const Json kEmpty = Json::object();
  return kEmpty;
}

const Json& ShareJson(const ReportRun& r, const std::string& share) {
  if (!r.summary.contains("quotaShares") || !r.summary["quotaShares"].contains(share)) return Empty();
  return r.summary["quotaShares"][share];
}

const Json& TotalJson(const ReportRun& r) { return r.summary.contains("total") ? r.summary["total"] : Empty(); }

std::string Wait(const Json& s, const char* p) {
  if (Num(s, {"waitSeconds", "count"}) == 0) return "-";
  return HumanDuration(Ms(Num(s, {"waitSeconds", p})));
}

double InstanceHours(const Json& s, const char* which) {
  double sum = 0;
  if (s.contains("instanceSeconds") && s["instanceSeconds"].is_object()) {
    for (const auto& [unit, v] : s["instanceSeconds"].items()) sum += Num(v, {which});
  }
  return sum / 3600;
}

std::string LimitText(const ReportShare* c) {
  if (c == nullptr) return "?";
  if (c->limits.empty()) return "none";
  std::string s;
  for (const auto& [unit, n] : c->limits) absl::StrAppend(&s, s.empty() ? "" : ", ", n, " ", unit);
  return s;
}

std::string ShareTableHtml(const ReportRun& r, Styles& styles) {
  std::string s =
      "<div class=\"scroll\"><table class=\"shares\"><thead><tr><th>quota share</th><th>limit</th><th>strategy</th><th>borrowLimit</th>"
      "<th>in-share</th><th>jobs</th><th>succeeded</th><th>failed</th><th>unfinished</th><th>wait p50</th>"
      "<th>p95</th><th>p99</th><th>own inst-h</th><th>borrowed inst-h</th><th>preempted (cross / in)</th>"
      "<th>lost inst-h</th></tr></thead><tbody>";
  auto row = [&](const std::string& name, const Json& j, const ReportShare* c, bool total) {
    absl::StrAppend(&s, "<tr", total ? " class=\"total\"" : "", "><td>");
    if (!total) {
      absl::StrAppend(&s, "<span class=\"swatch\" style=\"background:", styles.Of(name).color, "\"></span>");
    }
    absl::StrAppend(&s, Esc(name), "</td><td class=\"wrap\">", total ? "" : Esc(LimitText(c)), "</td><td>",
                    c ? Esc(c->strategy) : "", "</td><td>", c ? Esc(c->borrow_limit) : "", "</td><td>",
                    c ? Esc(c->in_share) : "", "</td>");
    for (const char* k : {"jobsSubmitted", "jobsSucceeded", "jobsFailed", "jobsUnfinished"}) {
      absl::StrAppend(&s, "<td class=\"n\">", Fmt(Num(j, {k}), 0), "</td>");
    }
    for (const char* p : {"p50", "p95", "p99"}) absl::StrAppend(&s, "<td class=\"n\">", Wait(j, p), "</td>");
    absl::StrAppend(&s, "<td class=\"n\">", Fmt(InstanceHours(j, "own")), "</td><td class=\"n\">",
                    Fmt(InstanceHours(j, "borrowed")), "</td><td class=\"n\">",
                    Fmt(Num(j, {"preemptions", "crossShare"}), 0), " / ", Fmt(Num(j, {"preemptions", "inShare"}), 0),
                    "</td><td class=\"n\">", Fmt(Num(j, {"workLostInstanceSeconds"}) / 3600), "</td></tr>");
  };
  for (const std::string& name : ShareNames(r)) row(name, ShareJson(r, name), ConfigOf(r, name), false);
  row("TOTAL", TotalJson(r), nullptr, true);
  return s + "</tbody></table></div>";
}

// Wait by cause (runs with --wait-causes): one stacked bar per share.
std::string CausesHtml(const ReportRun& r) {
  std::vector<std::string> shares;
  double most = 0;
  for (const std::string& name : ShareNames(r)) {
    const Json& j = ShareJson(r, name);
    if (!j.contains("waitByCauseSeconds")) continue;
    double sum = 0;
    for (const auto& [c, v] : j["waitByCauseSeconds"].items()) sum += v.is_number() ? v.get<double>() : 0;
    shares.push_back(name);
    most = std::max(most, sum);
  }
  if (shares.empty()) return "";
  const double w = 860, bar = 18, label = 140, right = 90;
  const double h = 16 + bar * 1.5 * static_cast<double>(shares.size()) + 8;
  std::string s = absl::StrCat("<h3>Time RUNNABLE by wait cause</h3><svg class=\"chart\" data-chart=\"causes\" role=\"img\" "
                               "aria-label=\"wait by cause\" viewBox=\"0 0 ", Fmt(w, 0), " ", Fmt(h, 0), "\" width=\"",
                               Fmt(w, 0), "\" height=\"", Fmt(h, 0), "\">");
  std::set<int> used;
  for (size_t i = 0; i < shares.size(); ++i) {
    const Json& causes = ShareJson(r, shares[i])["waitByCauseSeconds"];
    const double y = 8 + bar * 1.5 * static_cast<double>(i);
    absl::StrAppend(&s, "<text class=\"tick\" x=\"", Fmt(label - 6), "\" y=\"", Fmt(y + bar - 5),
                    "\" text-anchor=\"end\">", Esc(shares[i]), "</text>");
    double x = label, total = 0;
    for (int c = 1; c < kNumWaitCauses; ++c) {
      const char* name = WaitCauseName(static_cast<WaitCause>(c));
      const double v = causes.contains(name) && causes[name].is_number() ? causes[name].get<double>() : 0;
      if (v <= 0 || most <= 0) continue;
      used.insert(c);
      total += v;
      const double len = (w - label - right) * v / most;
      absl::StrAppend(&s, "<rect x=\"", Fmt(x), "\" y=\"", Fmt(y), "\" width=\"", Fmt(std::max(len, 0.5)),
                      "\" height=\"", Fmt(bar), "\" fill=\"", kCauseColors[c], "\"><title>", Esc(shares[i]),
                      ": ", name, " ", HumanDuration(Ms(v)), "</title></rect>");
      x += len;
    }
    absl::StrAppend(&s, "<text class=\"tick\" x=\"", Fmt(x + 4), "\" y=\"", Fmt(y + bar - 5), "\">",
                    HumanDuration(Ms(total)), "</text>");
  }
  s += "</svg><div class=\"legend\">";
  for (int c : used) {
    absl::StrAppend(&s, "<span><span class=\"swatch\" style=\"background:", kCauseColors[c], "\"></span>",
                    WaitCauseName(static_cast<WaitCause>(c)), "</span>");
  }
  return s + "</div><p class=\"note\">Job-time spent RUNNABLE, every spell, by the cause of its cause lines; "
             "CAPACITY_ERROR is SCHEDULED time of attempts SageMaker could not provision (docs/semantics.md §9).</p>";
}

SimTime CdfXMax(const std::vector<const std::vector<SimTime>*>& all) {
  // The largest p99: a tail of 1% does not squash the rest of the curves.
  SimTime xmax = 0;
  for (const std::vector<SimTime>* w : all) {
    if (w->empty()) continue;
    xmax = std::max(xmax, (*w)[std::min(w->size() - 1, (w->size() * 99 + 99) / 100 - 1)]);
  }
  return std::max<SimTime>(xmax, 1000);
}

std::string WaitCdf(const ReportRun& r, Styles& styles) {
  const RunSeries& rs = *r.series;
  std::vector<std::string> names;
  std::vector<const std::vector<SimTime>*> all;
  for (const std::string& n : NamesWith(r, rs.waits)) {
    if (auto it = rs.waits.find(n); it != rs.waits.end() && !it->second.empty()) {
      names.push_back(n);
      all.push_back(&it->second);
    }
  }
  if (names.empty()) return "<p class=\"note\">No job of this run was scheduled: no waits to draw.</p>";
  Plot p{720, 260};
  p.xmax = static_cast<double>(CdfXMax(all));
  std::string s = "<h3>Wait: first RUNNABLE to first SCHEDULED, share of jobs waiting at most x</h3>" +
                  Open(p, "wait-cdf", "wait CDF per share") +
                  Axes(p, TimeTicks(static_cast<SimTime>(p.xmax)),
                       {{0, "0"}, {0.25, "25%"}, {0.5, "50%"}, {0.75, "75%"}, {1, "100%"}});
  for (size_t i = 0; i < names.size(); ++i) {
    absl::StrAppend(&s, "<path d=\"", CdfPath(p, *all[i]), "\" ", StrokeAttrs(styles.Of(names[i])), "><title>",
                    Esc(names[i]), "</title></path>");
  }
  return s + "</svg>" + Legend(names, styles) + "<p class=\"note\">x axis cut at the largest p99 (" +
         HumanDuration(static_cast<SimTime>(p.xmax)) + ").</p>";
}

std::string UseCharts(const ReportRun& r, Styles& styles) {
  const RunSeries& rs = *r.series;
  std::string s = "<h3>Instances held over time (own, borrowed) against the share's limit</h3><div class=\"grid\">";
  int charts = 0;
  for (const std::string& name : ShareNames(r)) {
    const ReportShare* c = ConfigOf(r, name);
    std::set<std::string> units;
    if (c != nullptr) {
      for (const auto& [u, n] : c->limits) units.insert(u);
    }
    for (const auto& [key, u] : rs.use) {
      if (key.first == name) units.insert(key.second);
    }
    for (const std::string& unit : units) {
      const auto it = rs.use.find({name, unit});
      const int64_t limit = c != nullptr && c->limits.count(unit) ? c->limits.at(unit) : -1;
      double ymax = std::max<double>(1, static_cast<double>(limit));
      if (it != rs.use.end()) ymax = std::max(ymax, it->second.peak);
      Plot p{420, 170};
      p.xmax = static_cast<double>(rs.end);
      p.ymax = ymax * 1.1;
      const Style& st = styles.Of(name);
      absl::StrAppend(&s, "<figure><figcaption>", Esc(name), " &middot; ", Esc(unit), "</figcaption>",
                      Open(p, "use", name + " " + unit), Axes(p, TimeTicks(rs.end), CountTicks(p.ymax)));
      if (it != rs.use.end()) {
        // Own use as a filled area, borrowed stacked on it (lighter).
        const UseSeries& u = it->second;
        for (int layer = 1; layer >= 0; --layer) {
          std::string d = absl::StrCat("M", Fmt(p.X(0)), " ", Fmt(p.Y(0)));
          for (int k = 0; k < rs.slices; ++k) {
            const double v = u.own[static_cast<size_t>(k)] + (layer == 1 ? u.borrowed[static_cast<size_t>(k)] : 0);
            const double x0 = static_cast<double>(k) * static_cast<double>(rs.slice);
            const double x1 = std::min(static_cast<double>(rs.end), x0 + static_cast<double>(rs.slice));
            absl::StrAppend(&d, " L", Fmt(p.X(x0)), " ", Fmt(p.Y(v)), " L", Fmt(p.X(x1)), " ", Fmt(p.Y(v)));
          }
          absl::StrAppend(&d, " L", Fmt(p.X(static_cast<double>(rs.end))), " ", Fmt(p.Y(0)), " Z");
          absl::StrAppend(&s, "<path d=\"", d, "\" fill=\"", st.color, "\" fill-opacity=\"", layer == 1 ? "0.35" : "0.85",
                          "\" stroke=\"none\"><title>", layer == 1 ? "own + borrowed" : "own", "</title></path>");
        }
      }
      if (limit >= 0) {
        absl::StrAppend(&s, "<line class=\"limit\" x1=\"", Fmt(p.left), "\" x2=\"", Fmt(p.w - p.right), "\" y1=\"",
                        Fmt(p.Y(static_cast<double>(limit))), "\" y2=\"", Fmt(p.Y(static_cast<double>(limit))),
                        "\"/><text class=\"tick\" x=\"", Fmt(p.w - p.right - 2), "\" y=\"",
                        Fmt(p.Y(static_cast<double>(limit)) - 3), "\" text-anchor=\"end\">limit ", limit, "</text>");
      }
      s += "</svg></figure>";
      ++charts;
    }
  }
  if (charts == 0) return "";
  return s + "</div><p class=\"note\">Mean instances per slice of " + HumanDuration(rs.slice) +
         "; dark: from the share's own limit, light: borrowed; dashed: the limit at the start of the run.</p>";
}

std::string PreemptionChart(const ReportRun& r, Styles& styles) {
  const RunSeries& rs = *r.series;
  if (rs.preemptions.empty()) return "<p class=\"note\">No preemption in this run.</p>";
  std::vector<double> stack(static_cast<size_t>(rs.slices), 0);
  std::vector<std::string> names;
  for (const std::string& n : NamesWith(r, rs.preemptions)) {
    if (auto it = rs.preemptions.find(n); it != rs.preemptions.end()) {
      names.push_back(n);
      for (int k = 0; k < rs.slices; ++k) stack[static_cast<size_t>(k)] += static_cast<double>(it->second[static_cast<size_t>(k)]);
    }
  }
  Plot p{720, 200};
  p.xmax = static_cast<double>(rs.end);
  p.ymax = std::max(1.0, *std::max_element(stack.begin(), stack.end())) * 1.1;
  std::string s = "<h3>Preemptions of each share's jobs over time</h3>" + Open(p, "preemptions", "preemptions over time") +
                  Axes(p, TimeTicks(rs.end), CountTicks(p.ymax));
  std::fill(stack.begin(), stack.end(), 0);
  for (const std::string& n : names) {
    const std::vector<int64_t>& v = rs.preemptions.at(n);
    for (int k = 0; k < rs.slices; ++k) {
      const double c = static_cast<double>(v[static_cast<size_t>(k)]);
      if (c == 0) continue;
      const double x0 = p.X(static_cast<double>(k) * static_cast<double>(rs.slice));
      const double x1 = p.X(static_cast<double>(k + 1) * static_cast<double>(rs.slice));
      const double y0 = p.Y(stack[static_cast<size_t>(k)]), y1 = p.Y(stack[static_cast<size_t>(k)] + c);
      absl::StrAppend(&s, "<rect x=\"", Fmt(x0), "\" y=\"", Fmt(y1), "\" width=\"", Fmt(std::max(1.0, x1 - x0 - 0.5)),
                      "\" height=\"", Fmt(y0 - y1), "\" fill=\"", styles.Of(n).color, "\"><title>", Esc(n), ": ",
                      Fmt(c, 0), "</title></rect>");
      stack[static_cast<size_t>(k)] += c;
    }
  }
  return s + "</svg>" + Legend(names, styles) + "<p class=\"note\">Preemption starts per slice of " +
         HumanDuration(rs.slice) + ", by the share of the preempted job.</p>";
}

// "before -> after (change)"; `decimals` for counts (0) and instance-hours (1).
std::string Delta(double before, double after, bool time, bool lower_is_better, int decimals = 0) {
  const double d = after - before;
  auto show = [&](double v) { return time ? (v == 0 ? std::string("0") : HumanDuration(Ms(v))) : Fmt(v, decimals); };
  std::string cls = d == 0 ? "same" : ((d < 0) == lower_is_better ? "better" : "worse");
  std::string sign = d > 0 ? "+" : d < 0 ? "-" : "";
  return absl::StrCat("<td class=\"n\">", show(before), " &rarr; ", show(after), " <span class=\"", cls, "\">(",
                      sign, show(std::fabs(d)), ")</span></td>");
}

// A what-if's wait by cause, before -> after, for the causes either run has
// (both runs with --wait-causes).
std::string CauseChanges(const ReportRun& a, const ReportRun& b, const std::vector<std::string>& names) {
  auto causes_of = [](const Json& share) -> const Json& {
    return share.contains("waitByCauseSeconds") ? share["waitByCauseSeconds"] : Empty();
  };
  // Per row (share or TOTAL), its waitByCauseSeconds before and after.
  std::vector<std::pair<const Json*, const Json*>> rows;
  for (const std::string& n : names) {
    rows.emplace_back(&causes_of(n == "TOTAL" ? TotalJson(a) : ShareJson(a, n)),
                      &causes_of(n == "TOTAL" ? TotalJson(b) : ShareJson(b, n)));
  }
  std::vector<int> used;
  for (int c = 1; c < kNumWaitCauses; ++c) {
    const char* name = WaitCauseName(static_cast<WaitCause>(c));
    for (const auto& [x, y] : rows) {
      if (Num(*x, {name}) > 0 || Num(*y, {name}) > 0) {
        used.push_back(c);
        break;
      }
    }
  }
  if (used.empty()) return "";
  std::string s = "<h3>Time RUNNABLE by wait cause, before &rarr; after</h3><div class=\"scroll\"><table "
                  "class=\"shares causes\"><thead><tr><th>quota share</th>";
  for (int c : used) {
    absl::StrAppend(&s, "<th><span class=\"swatch\" style=\"background:", kCauseColors[c], "\"></span>",
                    WaitCauseName(static_cast<WaitCause>(c)), "</th>");
  }
  s += "</tr></thead><tbody>";
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i];
    absl::StrAppend(&s, "<tr", n == "TOTAL" ? " class=\"total\"" : "", "><td>", Esc(n), "</td>");
    for (int c : used) {
      const char* name = WaitCauseName(static_cast<WaitCause>(c));
      s += Delta(Num(*rows[i].first, {name}), Num(*rows[i].second, {name}), true, true);
    }
    s += "</tr>";
  }
  return s + "</tbody></table></div><p class=\"note\">Job-time spent RUNNABLE by cause (docs/semantics.md §9): "
             "where the change moved the waiting.</p>";
}

std::string Comparison(const ReportInput& in, Styles& styles) {
  std::string s = "<section id=\"comparison\"><h2>";
  if (in.kind == "what-if" && in.runs.size() == 2) {
    const ReportRun& a = in.runs[0];
    const ReportRun& b = in.runs[1];
    absl::StrAppend(&s, "What changes: ", Esc(a.label), " &rarr; ", Esc(b.label), "</h2>",
                    "<div class=\"scroll\"><table class=\"shares whatif\"><thead><tr><th>quota share</th><th>wait p50</th><th>p95</th>"
                    "<th>p99</th><th>jobs started</th><th>succeeded</th><th>preemptions</th><th>lost inst-h</th>"
                    "</tr></thead><tbody>");
    std::vector<std::string> names = ShareNames(a);
    for (const std::string& n : ShareNames(b)) {
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
    names.push_back("TOTAL");
    for (const std::string& n : names) {
      const Json& x = n == "TOTAL" ? TotalJson(a) : ShareJson(a, n);
      const Json& y = n == "TOTAL" ? TotalJson(b) : ShareJson(b, n);
      absl::StrAppend(&s, "<tr", n == "TOTAL" ? " class=\"total\"" : "", "><td>", Esc(n), "</td>");
      for (const char* q : {"p50", "p95", "p99"}) {
        s += Delta(Num(x, {"waitSeconds", q}), Num(y, {"waitSeconds", q}), true, true);
      }
      s += Delta(Num(x, {"waitSeconds", "count"}), Num(y, {"waitSeconds", "count"}), false, false);
      s += Delta(Num(x, {"jobsSucceeded"}), Num(y, {"jobsSucceeded"}), false, false);
      s += Delta(Num(x, {"preemptions", "crossShare"}) + Num(x, {"preemptions", "inShare"}),
                 Num(y, {"preemptions", "crossShare"}) + Num(y, {"preemptions", "inShare"}), false, true);
      s += Delta(Num(x, {"workLostInstanceSeconds"}) / 3600, Num(y, {"workLostInstanceSeconds"}) / 3600, false, true, 1);
      s += "</tr>";
    }
    s += "</tbody></table></div><p class=\"note\">Green: better for the share (shorter waits, more jobs done, fewer "
         "preemptions, less work lost); red: worse. Waits are over the jobs that started.</p>";
    s += CauseChanges(a, b, names);
    if (a.series && b.series) {
      absl::StrAppend(&s, "<h3>Wait CDF per share: ", Esc(a.label), " (grey, dashed) and ", Esc(b.label),
                      " (colour)</h3><div class=\"grid\">");
      for (const std::string& n : names) {
        if (n == "TOTAL") continue;
        static const std::vector<SimTime> kNone;
        const auto wa = a.series->waits.find(n);
        const auto wb = b.series->waits.find(n);
        const std::vector<SimTime>& va = wa == a.series->waits.end() ? kNone : wa->second;
        const std::vector<SimTime>& vb = wb == b.series->waits.end() ? kNone : wb->second;
        if (va.empty() && vb.empty()) continue;
        Plot p{420, 170};
        p.xmax = static_cast<double>(CdfXMax({&va, &vb}));
        absl::StrAppend(&s, "<figure><figcaption>", Esc(n), "</figcaption>", Open(p, "whatif-cdf", n),
                        Axes(p, TimeTicks(static_cast<SimTime>(p.xmax)), {{0, "0"}, {0.5, "50%"}, {1, "100%"}}),
                        "<path d=\"", CdfPath(p, va), "\" stroke=\"#888\" stroke-width=\"1.8\" fill=\"none\" "
                        "stroke-dasharray=\"5 3\"><title>", Esc(a.label), "</title></path><path d=\"", CdfPath(p, vb),
                        "\" ", StrokeAttrs(styles.Of(n)), "><title>", Esc(b.label), "</title></path></svg></figure>");
      }
      s += "</div>";
    }
    return s + "</section>";
  }
  absl::StrAppend(&s, "Runs side by side</h2><div class=\"scroll\"><table class=\"shares runs\"><thead><tr><th>run</th><th>jobs</th>"
                      "<th>succeeded</th><th>unfinished</th><th>wait p50</th><th>p95</th><th>p99</th>"
                      "<th>preemptions</th><th>lost inst-h</th></tr></thead><tbody>");
  for (size_t i = 0; i < in.runs.size(); ++i) {
    const ReportRun& r = in.runs[i];
    const Json& t = TotalJson(r);
    absl::StrAppend(&s, "<tr><td><a href=\"#run-", i + 1, "\">", Esc(r.label), "</a></td><td class=\"n\">",
                    Fmt(Num(t, {"jobsSubmitted"}), 0), "</td><td class=\"n\">", Fmt(Num(t, {"jobsSucceeded"}), 0),
                    "</td><td class=\"n\">", Fmt(Num(t, {"jobsUnfinished"}), 0), "</td>");
    for (const char* q : {"p50", "p95", "p99"}) absl::StrAppend(&s, "<td class=\"n\">", Wait(t, q), "</td>");
    absl::StrAppend(&s, "<td class=\"n\">",
                    Fmt(Num(t, {"preemptions", "crossShare"}) + Num(t, {"preemptions", "inShare"}), 0),
                    "</td><td class=\"n\">", Fmt(Num(t, {"workLostInstanceSeconds"}) / 3600), "</td></tr>");
  }
  return s + "</tbody></table></div></section>";
}

std::string RunHeader(const ReportRun& r) {
  std::string s;
  const Json& run = r.summary.contains("run") ? r.summary["run"] : Empty();
  if (run.contains("scenario") && run["scenario"].is_string()) {
    absl::StrAppend(&s, "scenario <code>", Esc(run["scenario"].get<std::string>()), "</code>");
  }
  if (run.contains("overrides") && run["overrides"].is_array()) {
    for (const Json& o : run["overrides"]) {
      if (o.is_string()) absl::StrAppend(&s, " <code>--set ", Esc(o.get<std::string>()), "</code>");
    }
  }
  absl::StrAppend(&s, "; simulated ", HumanDuration(Ms(Num(r.summary, {"endTime"}))));
  if (run.contains("stopped") && run["stopped"].is_string()) {
    absl::StrAppend(&s, "; <strong>stopped early</strong>: ", Esc(run["stopped"].get<std::string>()));
  }
  if (Num(r.summary, {"invariantViolations"}) > 0) {
    absl::StrAppend(&s, "; <strong>", Fmt(Num(r.summary, {"invariantViolations"}), 0), " invariant violations</strong>");
  }
  return s;
}

constexpr const char* kStyle = R"css(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#222;margin:24px auto;max-width:1180px;padding:0 16px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}.meta,.note{color:#666;font-size:12.5px}code{font-size:12.5px;background:#f4f4f4;padding:0 3px}
.scroll{overflow-x:auto}table.shares{border-collapse:collapse;font-size:12.5px;margin:6px 0}table.shares th,table.shares td{border-bottom:1px solid #e4e4e4;padding:3px 6px;text-align:left;white-space:nowrap}
table.shares th{background:#f6f6f6;font-weight:600;white-space:normal;vertical-align:bottom}td.n{text-align:right;font-variant-numeric:tabular-nums}table.shares td.wrap{white-space:normal;min-width:90px;max-width:150px}tr.total td{font-weight:600;border-top:2px solid #bbb}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px;vertical-align:baseline}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12.5px;margin:4px 0}.legend span{display:inline-flex;align-items:center;gap:4px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));gap:8px}figure{margin:0}figcaption{font-size:12.5px;font-weight:600}
svg.chart{max-width:100%;height:auto;background:#fff}svg .grid{stroke:#eee}svg .axis{stroke:#999}svg .tick{font-size:10.5px;fill:#555}
svg .limit{stroke:#222;stroke-dasharray:5 3;stroke-width:1.2}.better{color:#1a7f37}.worse{color:#cf222e}.same{color:#777}
section.run{margin-top:20px}
)css";

}  // namespace

std::string ReportHtml(const ReportInput& in) {
  Styles styles;
  for (const ReportRun& r : in.runs) {
    for (const std::string& n : ShareNames(r)) styles.Of(n);  // colours in declaration order
  }
  std::string s = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>",
      Esc(in.title), "</title><style>", kStyle, "</style></head><body><h1>", Esc(in.title), "</h1><p class=\"meta\">",
      Esc(in.kind), " report from <code>", Esc(in.source), "</code>, ", in.runs.size(), " run(s); quotasim ",
      Esc(in.tool_version), "</p>");
  if (in.runs.size() >= 2) s += Comparison(in, styles);
  for (size_t i = 0; i < in.runs.size(); ++i) {
    const ReportRun& r = in.runs[i];
    absl::StrAppend(&s, "<section class=\"run\" id=\"run-", i + 1, "\"><h2>", Esc(r.label), "</h2><p class=\"meta\">",
                    RunHeader(r), "</p>");
    if (!r.config_note.empty()) absl::StrAppend(&s, "<p class=\"note\">", Esc(r.config_note), "</p>");
    s += ShareTableHtml(r, styles);
    s += CausesHtml(r);
    if (r.series) {
      s += WaitCdf(r, styles);
      s += UseCharts(r, styles);
      s += PreemptionChart(r, styles);
    } else {
      absl::StrAppend(&s, "<p class=\"note\">", Esc(r.log_note), "</p>");
    }
    s += "</section>";
  }
  return s + "</body></html>\n";
}

}  // namespace qs
