#include "engine/log/explain.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "engine/log/share_table.h"
#include "engine/util/strings.h"
#include "nlohmann/json.hpp"

namespace qs {
namespace {

using Json = nlohmann::json;

std::string ReasonName(const std::string& reason) { return reason.empty() ? "waiting for capacity (no reason)" : reason; }

// Time RUNNABLE per reason and time dispatched, from a job's lines in order;
// `end` closes an interval still open.
struct Totals {
  std::map<std::string, SimTime> runnable;  // reason -> time
  SimTime runnable_total = 0, dispatched = 0;
  int64_t dispatches = 0, preemptions = 0;
  bool waiting_at_end = false;
};

bool Dispatched(const std::string& s) { return s == "SCHEDULED" || s == "STARTING" || s == "RUNNING"; }

Totals Tally(const std::vector<const LogJobLine*>& lines, SimTime end) {
  Totals t;
  for (size_t i = 0; i < lines.size(); ++i) {
    const LogJobLine& l = *lines[i];
    const SimTime next = i + 1 < lines.size() ? lines[i + 1]->time : end;
    if (l.status == "SCHEDULED" && (i == 0 || lines[i - 1]->status != "SCHEDULED")) ++t.dispatches;
    if (!l.preempted_for.empty()) ++t.preemptions;
    if (l.status == "RUNNABLE") {
      t.runnable[l.reason] += next - l.time;
      t.runnable_total += next - l.time;
      if (i + 1 == lines.size()) t.waiting_at_end = true;
    } else if (Dispatched(l.status)) {
      t.dispatched += next - l.time;
    }
  }
  return t;
}

}  // namespace

absl::StatusOr<std::vector<LogJobLine>> ReadJobLines(std::istream& in, std::string_view source) {
  std::vector<LogJobLine> out;
  std::string text;
  int64_t n = 0;
  auto bad = [&](std::string_view problem) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(source), ":", n, ": ", Sv(problem)));
  };
  while (std::getline(in, text)) {
    ++n;
    if (text.empty()) continue;
    const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object (an event log has one per line)");
    if (!j.contains("jobName") || !j.contains("status")) continue;  // rejected requests, snapshots
    LogJobLine l;
    const auto time = j.find("time");
    if (time == j.end() || !time->is_number()) return bad("a job line without a numeric time");
    l.time = static_cast<SimTime>(std::llround(time->get<double>() * 1000));
    if (!j["jobName"].is_string() || !j["status"].is_string()) return bad("jobName and status must be strings");
    l.job = j["jobName"].get<std::string>();
    l.status = j["status"].get<std::string>();
    if (auto it = j.find("quotaShareName"); it != j.end() && it->is_string()) l.share = it->get<std::string>();
    if (auto it = j.find("statusReason"); it != j.end() && it->is_string()) l.reason = it->get<std::string>();
    if (auto it = j.find("capacityUsage"); it != j.end() && it->is_array() && !it->empty()) {
      const Json& u = (*it)[0];
      if (u.contains("capacityUnit") && u["capacityUnit"].is_string()) l.unit = u["capacityUnit"].get<std::string>();
      if (u.contains("quantity") && u["quantity"].is_number()) l.quantity = u["quantity"].get<int64_t>();
    }
    if (auto it = j.find("borrowed"); it != j.end() && it->is_array()) {
      for (const Json& b : *it) {
        if (b.contains("from") && b["from"].is_string() && b.contains("quantity") && b["quantity"].is_number()) {
          l.borrowed.push_back({b["from"].get<std::string>(), b["quantity"].get<int64_t>()});
        }
      }
    }
    if (auto it = j.find("preemptedFor"); it != j.end() && it->is_string()) l.preempted_for = it->get<std::string>();
    if (auto it = j.find("preemptionType"); it != j.end() && it->is_string()) {
      l.preemption_type = it->get<std::string>();
    }
    if (auto it = j.find("checkpointedSeconds"); it != j.end() && it->is_number()) {
      l.checkpointed = static_cast<SimTime>(std::llround(it->get<double>() * 1000));
    }
    out.push_back(std::move(l));
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(Sv(source), ": read error"));
  return out;
}

absl::StatusOr<std::string> ExplainJob(const std::vector<LogJobLine>& lines, const std::string& job) {
  std::vector<const LogJobLine*> mine;
  std::vector<const LogJobLine*> for_it;  // preemptions that made room for the job
  SimTime end = 0;
  for (const LogJobLine& l : lines) {
    end = std::max(end, l.time);
    if (l.job == job) mine.push_back(&l);
    if (l.preempted_for == job) for_it.push_back(&l);
  }
  if (mine.empty()) return absl::NotFoundError(absl::StrCat("the log has no line of job '", job, "'"));
  std::string s = absl::StrCat("job ", job, ", quota share ", mine.front()->share, "\n");
  for (const LogJobLine* l : mine) {
    std::string detail;
    if (!l->preempted_for.empty()) {
      detail = absl::StrCat("preempted (", l->preemption_type == "IN_SHARE" ? "in-share" : "cross-share",
                            ") to make room for ", l->preempted_for);
      if (l->checkpointed > 0) absl::StrAppend(&detail, ", keeping ", HumanDuration(l->checkpointed), " of checkpoints");
      absl::StrAppend(&detail, ": ", l->reason);
    } else if (l->status == "SCHEDULED" && !l->unit.empty()) {
      int64_t borrowed = 0;
      for (const auto& [from, q] : l->borrowed) borrowed += q;
      detail = absl::StrCat(l->quantity, " ", l->unit, ": ", l->quantity - borrowed, " from its own limit");
      for (const auto& [from, q] : l->borrowed) absl::StrAppend(&detail, ", ", q, " borrowed from ", from);
    } else {
      detail = l->reason;
    }
    absl::StrAppend(&s, "  ", HumanDuration(l->time), std::string(10 - std::min<size_t>(10, HumanDuration(l->time).size()), ' '),
                    l->status, std::string(11 - std::min<size_t>(10, l->status.size()), ' '), detail, "\n");
  }
  for (const LogJobLine* l : for_it) {
    absl::StrAppend(&s, "  made room for it: ", l->job, " (", l->share, ") preempted ",
                    l->preemption_type == "IN_SHARE" ? "in-share" : "cross-share", " at ", HumanDuration(l->time),
                    "\n");
  }
  const Totals t = Tally(mine, end);
  absl::StrAppend(&s, "  RUNNABLE ", HumanDuration(t.runnable_total), t.waiting_at_end ? " (still waiting at the end of the log)" : "", "\n");
  for (const auto& [reason, d] : t.runnable) absl::StrAppend(&s, "    ", HumanDuration(d), "  ", ReasonName(reason), "\n");
  absl::StrAppend(&s, "  dispatched ", HumanDuration(t.dispatched), " in ", t.dispatches, " dispatch(es); preempted ",
                  t.preemptions, " time(s); last status ", mine.back()->status, "\n");
  return s;
}

absl::StatusOr<std::string> ExplainShare(const std::vector<LogJobLine>& lines, const std::string& share, size_t top) {
  std::map<std::string, std::vector<const LogJobLine*>> jobs;
  SimTime end = 0;
  for (const LogJobLine& l : lines) {
    end = std::max(end, l.time);
    if (l.share == share) jobs[l.job].push_back(&l);
  }
  if (jobs.empty()) return absl::NotFoundError(absl::StrCat("the log has no job of quota share '", share, "'"));
  std::map<std::string, SimTime> by_reason;
  std::vector<std::pair<SimTime, std::string>> waits;
  SimTime total = 0;
  int64_t waiting_at_end = 0;
  for (const auto& [job, mine] : jobs) {
    const Totals t = Tally(mine, end);
    for (const auto& [reason, d] : t.runnable) by_reason[reason] += d;
    total += t.runnable_total;
    waiting_at_end += t.waiting_at_end ? 1 : 0;
    waits.push_back({t.runnable_total, job});
  }
  std::string s = absl::StrCat("quota share ", share, ": ", jobs.size(), " jobs, RUNNABLE ", HumanDuration(total),
                               " in all (", waiting_at_end, " still waiting at the end of the log)\n  by statusReason:\n");
  std::vector<std::pair<SimTime, std::string>> reasons;
  for (const auto& [reason, d] : by_reason) reasons.push_back({d, reason});
  std::sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (const auto& [d, reason] : reasons) absl::StrAppend(&s, "    ", HumanDuration(d), "  ", ReasonName(reason), "\n");
  std::sort(waits.begin(), waits.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  if (waits.size() > top) waits.resize(top);
  absl::StrAppend(&s, "  longest waits:");
  for (const auto& [d, job] : waits) absl::StrAppend(&s, " ", job, " ", HumanDuration(d), ";");
  if (!waits.empty()) s.pop_back();
  s += "\n";
  return s;
}

}  // namespace qs
