#include "engine/log/explain.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "engine/log/event_log.h"
#include "engine/log/share_table.h"
#include "engine/util/strings.h"
#include "nlohmann/json.hpp"

namespace qs {
namespace {

using Json = nlohmann::json;

std::string ReasonName(const std::string& reason) { return reason.empty() ? "waiting for capacity (no reason)" : reason; }

// What a waitCause means (docs/semantics.md §9), for a reader.
std::string CauseText(const std::string& cause) {
  static const std::map<std::string, std::string, std::less<>> kMeaning = {
      {"BEHIND_HEAD", "another job of its share is ahead of it"},
      {"ENVIRONMENT_DISABLED", "the service environment is DISABLED"},
      {"MISCONFIGURATION", "it can never start as configured"},
      {"DRAINING_VICTIMS", "jobs preempted for it are draining"},
      {"LENT_OUT", "within its share's limit, but that capacity is lent to other shares"},
      {"SHARE_LIMIT", "its share is at its limit and does not borrow"},
      {"BORROW_LIMIT", "it would borrow beyond its share's borrowLimit"},
      {"NO_IDLE_LENDER", "the other shares have too little idle capacity to lend"},
      {"ENVIRONMENT_FULL", "quota allows it, but the environment has no free instances"},
      {"NEXT_PASS", "it fits; no scheduling pass has run since"},
      {"CAPACITY_ERROR", "SCHEDULED, but SageMaker could not provision the instances"},
  };
  auto it = kMeaning.find(cause);
  return it == kMeaning.end() ? cause : absl::StrCat(cause, " (", it->second, ")");
}

// Time RUNNABLE per reason and time dispatched, from a job's lines in order;
// `end` closes an interval still open.
struct Totals {
  std::map<std::string, SimTime> runnable;  // reason -> time
  std::map<std::string, SimTime> by_cause;  // waitCause -> time (logs with cause lines)
  SimTime runnable_total = 0, dispatched = 0;
  int64_t dispatches = 0, preemptions = 0;
  bool waiting_at_end = false;
};

bool Dispatched(const std::string& s) { return s == "SCHEDULED" || s == "STARTING" || s == "RUNNING"; }

Totals Tally(const std::vector<const LogJobLine*>& lines, SimTime end) {
  Totals t;
  std::string cause;  // of the RUNNABLE spell so far
  SimTime scheduled_at = -1;
  for (size_t i = 0; i < lines.size(); ++i) {
    const LogJobLine& l = *lines[i];
    const SimTime next = i + 1 < lines.size() ? lines[i + 1]->time : end;
    if (l.status == "SCHEDULED" && (i == 0 || lines[i - 1]->status != "SCHEDULED")) {
      ++t.dispatches;
      scheduled_at = l.time;
    }
    if (!l.preempted_for.empty()) ++t.preemptions;
    if (l.status == "RUNNABLE") {
      if (scheduled_at >= 0 && l.reason == reasons::kInsufficientCapacity) {
        t.by_cause["CAPACITY_ERROR"] += l.time - scheduled_at;
      }
      scheduled_at = -1;
      if (!l.cause.empty()) cause = l.cause;
      if (!cause.empty()) t.by_cause[cause] += next - l.time;
      t.runnable[l.reason] += next - l.time;
      t.runnable_total += next - l.time;
      if (i + 1 == lines.size()) t.waiting_at_end = true;
    } else {
      cause.clear();
      if (l.status != "SCHEDULED") scheduled_at = -1;
      if (Dispatched(l.status)) t.dispatched += next - l.time;
    }
  }
  return t;
}

void AppendByCause(std::string& s, const std::map<std::string, SimTime>& by_cause) {
  if (by_cause.empty()) return;
  std::vector<std::pair<SimTime, std::string>> sorted;
  for (const auto& [cause, d] : by_cause) sorted.push_back({d, cause});
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  absl::StrAppend(&s, "  by wait cause:\n");
  for (const auto& [d, cause] : sorted) absl::StrAppend(&s, "    ", HumanDuration(d), "  ", CauseText(cause), "\n");
}

}  // namespace

absl::StatusOr<bool> ParseJobLine(std::string_view text, LogJobLine* out) {
  const Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("not a JSON object (an event log has one per line)");
  }
  if (!j.contains("jobName") || !j.contains("status")) return false;  // rejected requests, snapshots
  LogJobLine l;
  const auto time = j.find("time");
  if (time == j.end() || !time->is_number()) return absl::InvalidArgumentError("a job line without a numeric time");
  l.time = static_cast<SimTime>(std::llround(time->get<double>() * 1000));
  if (!j["jobName"].is_string() || !j["status"].is_string()) {
    return absl::InvalidArgumentError("jobName and status must be strings");
  }
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
  if (auto it = j.find("waitCause"); it != j.end() && it->is_string()) l.cause = it->get<std::string>();
  *out = std::move(l);
  return true;
}

absl::Status ForEachJobLine(std::istream& in, std::string_view source, const std::function<void(LogJobLine&)>& fn) {
  std::string text;
  int64_t n = 0;
  LogJobLine l;
  while (std::getline(in, text)) {
    ++n;
    if (text.empty()) continue;
    absl::StatusOr<bool> job = ParseJobLine(text, &l);
    if (!job.ok()) return absl::InvalidArgumentError(absl::StrCat(Sv(source), ":", n, ": ", job.status().message()));
    if (*job) fn(l);
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(Sv(source), ": read error"));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<LogJobLine>> ReadJobLines(std::istream& in, std::string_view source) {
  std::vector<LogJobLine> out;
  if (absl::Status st = ForEachJobLine(in, source, [&](LogJobLine& l) { out.push_back(std::move(l)); }); !st.ok()) {
    return st;
  }
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
  for (size_t i = 0; i < mine.size(); ++i) {
    const LogJobLine* l = mine[i];
    std::string detail;
    if (!l->preempted_for.empty()) {
      detail = absl::StrCat("preempted (", l->preemption_type == "IN_SHARE" ? "in-share" : "cross-share",
                            ") to make room for ", l->preempted_for);
      if (l->checkpointed > 0) absl::StrAppend(&detail, ", keeping ", HumanDuration(l->checkpointed), " of checkpoints");
      absl::StrAppend(&detail, ": ", l->reason);
    } else if (!l->cause.empty()) {
      detail = absl::StrCat("waits: ", CauseText(l->cause));
    } else if (l->status == "SCHEDULED" && !l->unit.empty()) {
      int64_t borrowed = 0;
      for (const auto& [from, q] : l->borrowed) borrowed += q;
      detail = absl::StrCat(l->quantity, " ", l->unit, ": ", l->quantity - borrowed, " from its own limit");
      for (const auto& [from, q] : l->borrowed) absl::StrAppend(&detail, ", ", q, " borrowed from ", from);
      // An attempt that ends in a capacity error (the next line of the job):
      // its SCHEDULED time was a wait too.
      if (i + 1 < mine.size() && mine[i + 1]->status == "RUNNABLE" &&
          mine[i + 1]->reason == reasons::kInsufficientCapacity) {
        absl::StrAppend(&detail, "; waits: ", CauseText("CAPACITY_ERROR"));
      }
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
  AppendByCause(s, t.by_cause);
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
  std::map<std::string, SimTime> by_reason, by_cause;
  std::vector<std::pair<SimTime, std::string>> waits;
  SimTime total = 0;
  int64_t waiting_at_end = 0;
  for (const auto& [job, mine] : jobs) {
    const Totals t = Tally(mine, end);
    for (const auto& [reason, d] : t.runnable) by_reason[reason] += d;
    for (const auto& [cause, d] : t.by_cause) by_cause[cause] += d;
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
  AppendByCause(s, by_cause);
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
