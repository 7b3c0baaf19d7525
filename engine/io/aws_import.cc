#include "engine/io/aws_import.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/io/json_read.h"
#include "engine/io/json_text.h"
#include "engine/io/scenario_json.h"
#include "engine/util/status_macros.h"
#include "engine/util/strings.h"

namespace qs {
namespace {

namespace fs = std::filesystem;
using json_read::Json;
using json_read::Path;
using json_read::Reader;

struct File {
  std::string name;  // as shown in messages: DIR/name
  Json doc;
};

// Field readers: `required` keys are errors when absent.
absl::StatusOr<std::optional<std::string>> Str(const Reader& r, const Json& o, const Path& p, const char* key,
                                               bool required) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) {
    if (required) return r.Error(p.Key(key), "missing required key");
    return std::optional<std::string>();
  }
  if (!it->is_string()) return r.TypeError(p.Key(key), "a string", *it);
  return std::optional<std::string>(it->get<std::string>());
}

absl::StatusOr<std::optional<int64_t>> Int(const Reader& r, const Json& o, const Path& p, const char* key,
                                           bool required) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) {
    if (required) return r.Error(p.Key(key), "missing required key");
    return std::optional<int64_t>();
  }
  if (it->is_number_integer() || it->is_number_unsigned()) {
    if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return r.Error(p.Key(key), "out of range");
    }
    return std::optional<int64_t>(it->get<int64_t>());
  }
  if (it->is_number_float()) {
    const double d = it->get<double>();
    if (d == static_cast<double>(static_cast<int64_t>(d))) return std::optional<int64_t>(static_cast<int64_t>(d));
  }
  return r.TypeError(p.Key(key), "an integer", *it);
}

absl::Status OneOf(const Reader& r, const Path& p, const std::string& v, std::initializer_list<const char*> allowed) {
  for (const char* a : allowed) {
    if (v == a) return absl::OkStatus();
  }
  std::vector<std::string> names(allowed.begin(), allowed.end());
  return r.Error(p, absl::StrCat("expected one of ", absl::StrJoin(names, ", "), ", got \"", v, "\""));
}

// "...:job-queue/NAME" or NAME -> NAME; for shares ".../quota-share/NAME".
std::string NameOf(const std::string& arn_or_name, std::string_view marker) {
  const size_t pos = arn_or_name.rfind(marker);
  return pos == std::string::npos ? arn_or_name : arn_or_name.substr(pos + marker.size());
}

struct Limit {
  std::string unit;
  int64_t max = 0;
};

absl::StatusOr<std::vector<Limit>> Limits(const Reader& r, const Json& o, const Path& p, bool required) {
  std::vector<Limit> out;
  auto it = o.find("capacityLimits");
  if (it == o.end()) {
    if (required) return r.Error(p.Key("capacityLimits"), "missing required key");
    return out;
  }
  const Path lp = p.Key("capacityLimits");
  if (!it->is_array()) return r.TypeError(lp, "an array", *it);
  for (size_t i = 0; i < it->size(); ++i) {
    const Path ep = lp.Index(i);
    const Json& e = (*it)[i];
    if (!e.is_object()) return r.TypeError(ep, "an object", e);
    QS_ASSIGN_OR_RETURN(std::optional<std::string> unit, Str(r, e, ep, "capacityUnit", true));
    QS_ASSIGN_OR_RETURN(std::optional<int64_t> max, Int(r, e, ep, "maxCapacity", true));
    if (*max < 0) return r.Error(ep.Key("maxCapacity"), absl::StrCat("must be >= 0, got ", *max));
    out.push_back({*unit, *max});
  }
  return out;
}

struct Environment {
  std::string file, name, arn, state;
  std::vector<Limit> limits;
};
struct Action {
  std::string reason, state, action;
  int64_t max_time = 0;
};
struct Queue {
  std::string file, name, arn, policy_arn, state;
  int64_t priority = 0;
  std::vector<std::pair<int64_t, std::string>> environments;  // (order, name or ARN)
  std::vector<Action> actions;
};
struct Policy {
  std::string file, name, arn;
  bool quota = false;
};
struct ShareCfg {
  std::string file, name, queue_arn, strategy, in_share = "DISABLED", state = "ENABLED";
  std::vector<Limit> limits;
  std::optional<int64_t> borrow;
};
struct Attempt {
  std::optional<int64_t> started, stopped;
};
struct JobD {
  std::string file, id, name, queue, share, status, reason, payload;
  int64_t priority = 0, created = 0;
  std::optional<int64_t> scheduled, started, stopped, retry_attempts, attempt_duration, preemption_retries,
      max_runtime;
  bool terminated = false, evaluate_on_exit = false;
  std::vector<Attempt> attempts;
};

absl::Status ReadEnvironments(const File& f, std::vector<Environment>& out) {
  const Reader r(f.name);
  const Path top;
  const Json& list = f.doc["serviceEnvironments"];
  const Path lp = top.Key("serviceEnvironments");
  if (!list.is_array()) return r.TypeError(lp, "an array", list);
  for (size_t i = 0; i < list.size(); ++i) {
    const Path p = lp.Index(i);
    const Json& e = list[i];
    if (!e.is_object()) return r.TypeError(p, "an object", e);
    Environment env;
    env.file = f.name;
    QS_ASSIGN_OR_RETURN(std::optional<std::string> name, Str(r, e, p, "serviceEnvironmentName", true));
    QS_ASSIGN_OR_RETURN(std::optional<std::string> arn, Str(r, e, p, "serviceEnvironmentArn", false));
    QS_ASSIGN_OR_RETURN(std::optional<std::string> type, Str(r, e, p, "serviceEnvironmentType", true));
    QS_ASSIGN_OR_RETURN(std::optional<std::string> state, Str(r, e, p, "state", false));
    QS_RETURN_IF_ERROR(OneOf(r, p.Key("serviceEnvironmentType"), *type, {"SAGEMAKER_TRAINING"}));
    env.state = state.value_or("ENABLED");
    QS_RETURN_IF_ERROR(OneOf(r, p.Key("state"), env.state, {"ENABLED", "DISABLED"}));
    QS_ASSIGN_OR_RETURN(env.limits, Limits(r, e, p, true));
    env.name = *name;
    env.arn = arn.value_or("");
    out.push_back(std::move(env));
  }
  return absl::OkStatus();
}

absl::Status ReadQueues(const File& f, std::vector<Queue>& out) {
  const Reader r(f.name);
  const Path lp = Path().Key("jobQueues");
  const Json& list = f.doc["jobQueues"];
  if (!list.is_array()) return r.TypeError(lp, "an array", list);
  for (size_t i = 0; i < list.size(); ++i) {
    const Path p = lp.Index(i);
    const Json& e = list[i];
    if (!e.is_object()) return r.TypeError(p, "an object", e);
    Queue q;
    q.file = f.name;
    QS_ASSIGN_OR_RETURN(std::optional<std::string> name, Str(r, e, p, "jobQueueName", true));
    QS_ASSIGN_OR_RETURN(std::optional<std::string> arn, Str(r, e, p, "jobQueueArn", false));
    QS_ASSIGN_OR_RETURN(std::optional<std::string> policy, Str(r, e, p, "schedulingPolicyArn", false));
    QS_ASSIGN_OR_RETURN(std::optional<std::string> state, Str(r, e, p, "state", false));
    QS_ASSIGN_OR_RETURN(std::optional<int64_t> priority, Int(r, e, p, "priority", false));
    q.name = *name;
    q.arn = arn.value_or("");
    q.policy_arn = policy.value_or("");
    q.state = state.value_or("ENABLED");
    QS_RETURN_IF_ERROR(OneOf(r, p.Key("state"), q.state, {"ENABLED", "DISABLED"}));
    q.priority = priority.value_or(0);
    if (auto it = e.find("serviceEnvironmentOrder"); it != e.end()) {
      const Path op = p.Key("serviceEnvironmentOrder");
      if (!it->is_array()) return r.TypeError(op, "an array", *it);
      for (size_t k = 0; k < it->size(); ++k) {
        const Json& o = (*it)[k];
        if (!o.is_object()) return r.TypeError(op.Index(k), "an object", o);
        QS_ASSIGN_OR_RETURN(std::optional<int64_t> order, Int(r, o, op.Index(k), "order", true));
        QS_ASSIGN_OR_RETURN(std::optional<std::string> env, Str(r, o, op.Index(k), "serviceEnvironment", true));
        q.environments.push_back({*order, *env});
      }
      std::stable_sort(q.environments.begin(), q.environments.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    if (auto it = e.find("jobStateTimeLimitActions"); it != e.end()) {
      const Path ap = p.Key("jobStateTimeLimitActions");
      if (!it->is_array()) return r.TypeError(ap, "an array", *it);
      for (size_t k = 0; k < it->size(); ++k) {
        const Json& a = (*it)[k];
        const Path kp = ap.Index(k);
        if (!a.is_object()) return r.TypeError(kp, "an object", a);
        Action act;
        QS_ASSIGN_OR_RETURN(std::optional<std::string> reason, Str(r, a, kp, "reason", true));
        QS_ASSIGN_OR_RETURN(std::optional<std::string> st, Str(r, a, kp, "state", true));
        QS_ASSIGN_OR_RETURN(std::optional<int64_t> max, Int(r, a, kp, "maxTimeSeconds", true));
        QS_ASSIGN_OR_RETURN(std::optional<std::string> action, Str(r, a, kp, "action", true));
        QS_RETURN_IF_ERROR(OneOf(r, kp.Key("state"), *st, {"RUNNABLE"}));
        QS_RETURN_IF_ERROR(OneOf(r, kp.Key("action"), *action, {"CANCEL", "TERMINATE"}));
        act.reason = *reason;
        act.state = *st;
        act.max_time = *max;
        act.action = *action;
        q.actions.push_back(std::move(act));
      }
    }
    out.push_back(std::move(q));
  }
  return absl::OkStatus();
}

absl::Status ReadPolicies(const File& f, std::vector<Policy>& out) {
  const Reader r(f.name);
  const Path lp = Path().Key("schedulingPolicies");
  const Json& list = f.doc["schedulingPolicies"];
  if (!list.is_array()) return r.TypeError(lp, "an array", list);
  for (size_t i = 0; i < list.size(); ++i) {
    const Path p = lp.Index(i);
    const Json& e = list[i];
    if (!e.is_object()) return r.TypeError(p, "an object", e);
    QS_ASSIGN_OR_RETURN(std::optional<std::string> name, Str(r, e, p, "name", true));
    QS_ASSIGN_OR_RETURN(std::optional<std::string> arn, Str(r, e, p, "arn", false));
    out.push_back({f.name, *name, arn.value_or(""), e.contains("quotaSharePolicy")});
  }
  return absl::OkStatus();
}

absl::Status ReadShare(const Reader& r, const Json& e, const Path& p, const std::string& file,
                       std::vector<ShareCfg>& out) {
  if (!e.is_object()) return r.TypeError(p, "an object", e);
  ShareCfg s;
  s.file = file;
  QS_ASSIGN_OR_RETURN(std::optional<std::string> name, Str(r, e, p, "quotaShareName", true));
  QS_ASSIGN_OR_RETURN(std::optional<std::string> queue, Str(r, e, p, "jobQueueArn", false));
  if (!queue) {
    QS_ASSIGN_OR_RETURN(queue, Str(r, e, p, "jobQueue", false));
  }
  QS_ASSIGN_OR_RETURN(std::optional<std::string> state, Str(r, e, p, "state", false));
  s.name = *name;
  s.queue_arn = queue.value_or("");
  s.state = state.value_or("ENABLED");
  QS_RETURN_IF_ERROR(OneOf(r, p.Key("state"), s.state, {"ENABLED", "DISABLED"}));
  QS_ASSIGN_OR_RETURN(s.limits, Limits(r, e, p, true));
  const auto rs = e.find("resourceSharingConfiguration");
  if (rs == e.end()) return r.Error(p.Key("resourceSharingConfiguration"), "missing required key");
  const Path rp = p.Key("resourceSharingConfiguration");
  if (!rs->is_object()) return r.TypeError(rp, "an object", *rs);
  QS_ASSIGN_OR_RETURN(std::optional<std::string> strategy, Str(r, *rs, rp, "strategy", true));
  QS_RETURN_IF_ERROR(OneOf(r, rp.Key("strategy"), *strategy, {"RESERVE", "LEND", "LEND_AND_BORROW"}));
  s.strategy = *strategy;
  QS_ASSIGN_OR_RETURN(s.borrow, Int(r, *rs, rp, "borrowLimit", false));
  if (s.strategy != "LEND_AND_BORROW") s.borrow.reset();  // printed as -1 on other strategies by some tools
  if (const auto pc = e.find("preemptionConfiguration"); pc != e.end()) {
    const Path pp = p.Key("preemptionConfiguration");
    if (!pc->is_object()) return r.TypeError(pp, "an object", *pc);
    QS_ASSIGN_OR_RETURN(std::optional<std::string> in_share, Str(r, *pc, pp, "inSharePreemption", false));
    if (in_share) {
      QS_RETURN_IF_ERROR(OneOf(r, pp.Key("inSharePreemption"), *in_share, {"ENABLED", "DISABLED"}));
      s.in_share = *in_share;
    }
  }
  out.push_back(std::move(s));
  return absl::OkStatus();
}

absl::Status ReadJob(const File& f, std::vector<JobD>& out) {
  const Reader r(f.name);
  const Path p;
  const Json& e = f.doc;
  JobD j;
  j.file = f.name;
  QS_ASSIGN_OR_RETURN(std::optional<std::string> id, Str(r, e, p, "jobId", true));
  QS_ASSIGN_OR_RETURN(std::optional<std::string> name, Str(r, e, p, "jobName", true));
  QS_ASSIGN_OR_RETURN(std::optional<std::string> queue, Str(r, e, p, "jobQueue", true));
  QS_ASSIGN_OR_RETURN(std::optional<std::string> type, Str(r, e, p, "serviceJobType", true));
  QS_ASSIGN_OR_RETURN(std::optional<std::string> share, Str(r, e, p, "quotaShareName", false));
  QS_ASSIGN_OR_RETURN(std::optional<std::string> status, Str(r, e, p, "status", true));
  QS_ASSIGN_OR_RETURN(std::optional<std::string> reason, Str(r, e, p, "statusReason", false));
  QS_ASSIGN_OR_RETURN(std::optional<std::string> payload, Str(r, e, p, "serviceRequestPayload", true));
  QS_ASSIGN_OR_RETURN(std::optional<int64_t> priority, Int(r, e, p, "schedulingPriority", false));
  QS_ASSIGN_OR_RETURN(std::optional<int64_t> created, Int(r, e, p, "createdAt", true));
  QS_ASSIGN_OR_RETURN(j.scheduled, Int(r, e, p, "scheduledAt", false));
  QS_ASSIGN_OR_RETURN(j.started, Int(r, e, p, "startedAt", false));
  QS_ASSIGN_OR_RETURN(j.stopped, Int(r, e, p, "stoppedAt", false));
  QS_RETURN_IF_ERROR(OneOf(r, p.Key("serviceJobType"), *type, {"SAGEMAKER_TRAINING"}));
  QS_RETURN_IF_ERROR(OneOf(r, p.Key("status"), *status,
                           {"SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING", "SUCCEEDED",
                            "FAILED"}));
  j.id = *id;
  j.name = *name;
  j.queue = *queue;
  j.share = share.value_or("");
  j.status = *status;
  j.reason = reason.value_or("");
  j.payload = *payload;
  j.priority = priority.value_or(0);
  j.created = *created;
  if (auto it = e.find("isTerminated"); it != e.end() && it->is_boolean()) j.terminated = it->get<bool>();
  if (auto it = e.find("retryStrategy"); it != e.end() && it->is_object()) {
    QS_ASSIGN_OR_RETURN(j.retry_attempts, Int(r, *it, p.Key("retryStrategy"), "attempts", false));
    if (auto ev = it->find("evaluateOnExit"); ev != it->end() && ev->is_array() && !ev->empty()) {
      j.evaluate_on_exit = true;
    }
  }
  if (auto it = e.find("timeoutConfig"); it != e.end() && it->is_object()) {
    QS_ASSIGN_OR_RETURN(j.attempt_duration, Int(r, *it, p.Key("timeoutConfig"), "attemptDurationSeconds", false));
  }
  if (auto it = e.find("preemptionConfiguration"); it != e.end() && it->is_object()) {
    QS_ASSIGN_OR_RETURN(j.preemption_retries,
                        Int(r, *it, p.Key("preemptionConfiguration"), "preemptionRetriesBeforeTermination", false));
  }
  // Timestamps in order (createdAt <= scheduledAt <= startedAt <= stoppedAt).
  std::vector<std::pair<const char*, std::optional<int64_t>>> times = {
      {"createdAt", j.created}, {"scheduledAt", j.scheduled}, {"startedAt", j.started}, {"stoppedAt", j.stopped}};
  const char* last_key = nullptr;
  int64_t last = 0;
  for (const auto& [key, t] : times) {
    if (!t) continue;
    if (last_key != nullptr && *t < last) {
      return r.Error(p.Key(key), absl::StrCat(*t, " is before ", last_key, " ", last,
                                              ": the timestamps of a job must not decrease"));
    }
    last_key = key;
    last = *t;
  }
  if (auto it = e.find("attempts"); it != e.end() && it->is_array()) {
    const Path ap = p.Key("attempts");
    for (size_t k = 0; k < it->size(); ++k) {
      const Json& a = (*it)[k];
      const Path kp = ap.Index(k);
      if (!a.is_object()) return r.TypeError(kp, "an object", a);
      Attempt at;
      QS_ASSIGN_OR_RETURN(at.started, Int(r, a, kp, "startedAt", false));
      QS_ASSIGN_OR_RETURN(at.stopped, Int(r, a, kp, "stoppedAt", false));
      if (at.started && *at.started < j.created) {
        return r.Error(kp.Key("startedAt"), absl::StrCat(*at.started, " is before the job's createdAt ", j.created));
      }
      if (at.started && at.stopped && *at.stopped < *at.started) {
        return r.Error(kp.Key("stoppedAt"), absl::StrCat(*at.stopped, " is before the attempt's startedAt ",
                                                         *at.started));
      }
      j.attempts.push_back(at);
    }
  }
  // The payload: a JSON string of the CreateTrainingJob request.
  const Json body = Json::parse(j.payload, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return r.Error(p.Key("serviceRequestPayload"), "not a JSON object (the CreateTrainingJob request)");
  }
  if (auto sc = body.find("StoppingCondition"); sc != body.end() && sc->is_object()) {
    if (auto m = sc->find("MaxRuntimeInSeconds"); m != sc->end() && m->is_number_integer()) {
      j.max_runtime = m->get<int64_t>();
    }
  }
  out.push_back(std::move(j));
  return absl::OkStatus();
}

int64_t Median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

std::string Seconds(int64_t ms) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%lld.%03lld", static_cast<long long>(ms / 1000),
                static_cast<long long>(ms % 1000));
  // Trim trailing zeros ("12.000" -> "12", "12.500" -> "12.5").
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

Json SecondsJson(int64_t ms) {
  if (ms % 1000 == 0) return Json(ms / 1000);
  return Json(static_cast<double>(ms) / 1000.0);
}

}  // namespace

absl::StatusOr<AwsImport> ImportAwsExport(const std::string& dir, const AwsImportOptions& options) {
  AwsImport result;
  AwsImportReport& rep = result.report;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(dir, ": not a folder (the output of scripts/aws-export)"));
  }
  std::vector<fs::path> paths;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".json") paths.push_back(e.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<Environment> envs;
  std::vector<Queue> queues;
  std::vector<Policy> policies;
  std::vector<ShareCfg> shares, listed_shares;
  std::vector<JobD> jobs;
  std::map<std::string, std::string> listed_jobs;  // jobId -> file, from list-service-jobs
  for (const fs::path& path : paths) {
    const std::string name = path.string();
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) return absl::InvalidArgumentError(absl::StrCat(name, ": cannot be read"));
    const std::string text = ss.str();
    json_text::DomBuilder builder;
    json_text::TextResult parsed = json_text::ReadJsonText(text, builder);
    if (!parsed.ok) return absl::InvalidArgumentError(absl::StrCat(name, ": ", parsed.location, ": ", parsed.reason));
    File f{name, std::move(builder.root())};
    ++rep.files_read;
    const Reader r(name);
    if (!f.doc.is_object()) {
      rep.ignored_files.push_back(name + ": not a JSON object");
      continue;
    }
    for (const char* token : {"NextToken", "nextToken"}) {
      if (f.doc.contains(token)) {
        return r.Error(Path().Key(token), "the output was cut by --max-items; export without it (scripts/aws-export)");
      }
    }
    if (f.doc.contains("serviceEnvironments")) {
      QS_RETURN_IF_ERROR(ReadEnvironments(f, envs));
    } else if (f.doc.contains("jobQueues")) {
      QS_RETURN_IF_ERROR(ReadQueues(f, queues));
    } else if (f.doc.contains("schedulingPolicies")) {
      QS_RETURN_IF_ERROR(ReadPolicies(f, policies));
    } else if (f.doc.contains("quotaShares")) {
      const Json& list = f.doc["quotaShares"];
      const Path lp = Path().Key("quotaShares");
      if (!list.is_array()) return r.TypeError(lp, "an array", list);
      for (size_t i = 0; i < list.size(); ++i) QS_RETURN_IF_ERROR(ReadShare(r, list[i], lp.Index(i), name, listed_shares));
    } else if (f.doc.contains("quotaShareName") && f.doc.contains("capacityLimits") && !f.doc.contains("jobId")) {
      QS_RETURN_IF_ERROR(ReadShare(r, f.doc, Path(), name, shares));
    } else if (f.doc.contains("jobSummaryList")) {
      const Json& list = f.doc["jobSummaryList"];
      const Path lp = Path().Key("jobSummaryList");
      if (!list.is_array()) return r.TypeError(lp, "an array", list);
      for (size_t i = 0; i < list.size(); ++i) {
        if (!list[i].is_object()) return r.TypeError(lp.Index(i), "an object", list[i]);
        QS_ASSIGN_OR_RETURN(std::optional<std::string> id, Str(r, list[i], lp.Index(i), "jobId", true));
        listed_jobs.emplace(*id, name);
      }
    } else if (f.doc.contains("jobId") && f.doc.contains("serviceJobType")) {
      QS_RETURN_IF_ERROR(ReadJob(f, jobs));
    } else {
      rep.ignored_files.push_back(name + ": not an AWS Batch output quotasim reads");
    }
  }
  // A describe-quota-share wins over the list's entry for the same share.
  for (ShareCfg& s : listed_shares) {
    if (std::none_of(shares.begin(), shares.end(), [&](const ShareCfg& x) { return x.name == s.name; })) {
      shares.push_back(std::move(s));
    }
  }
  auto missing = [&](const char* what, const char* command) {
    return absl::InvalidArgumentError(absl::StrCat(dir, ": no `aws batch ", command, "` output (", what, ") among the ",
                                                   rep.files_read, " JSON files; scripts/aws-export writes it"));
  };
  if (queues.empty()) return missing("the job queue", "describe-job-queues");
  if (envs.empty()) return missing("the service environment", "describe-service-environments");
  if (policies.empty()) return missing("the scheduling policy", "describe-scheduling-policies");
  if (shares.empty()) return missing("the quota shares", "describe-quota-share or list-quota-shares");

  // The queue.
  const Queue* queue = nullptr;
  if (!options.queue.empty()) {
    for (const Queue& q : queues) {
      if (q.name == options.queue || q.arn == options.queue) queue = &q;
    }
    if (queue == nullptr) return absl::InvalidArgumentError(absl::StrCat(dir, ": no job queue '", options.queue, "'"));
  } else if (queues.size() == 1) {
    queue = &queues[0];
  } else {
    std::vector<std::string> names;
    for (const Queue& q : queues) names.push_back(q.name);
    return absl::InvalidArgumentError(
        absl::StrCat(dir, ": ", queues.size(), " job queues (", absl::StrJoin(names, ", "), "); choose one with --queue"));
  }
  rep.queue = queue->name;
  const Reader qr(queue->file);
  if (queue->environments.empty()) {
    return qr.Error(Path().Key("jobQueues"), absl::StrCat("job queue ", queue->name, " has no serviceEnvironmentOrder"));
  }
  const std::string& env_ref = queue->environments.front().second;
  const Environment* env = nullptr;
  for (const Environment& e : envs) {
    if (e.name == env_ref || e.arn == env_ref || e.name == NameOf(env_ref, "/")) env = &e;
  }
  if (env == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(queue->file, ": job queue ", queue->name, " uses service environment '",
                                                   env_ref, "', which no describe-service-environments output describes"));
  }
  if (queue->environments.size() > 1) ++rep.notes["service environments after the first ignored (one per queue)"];
  rep.environment = env->name;
  const Policy* policy = nullptr;
  for (const Policy& p : policies) {
    if (p.arn == queue->policy_arn || p.name == queue->policy_arn || p.name == NameOf(queue->policy_arn, "/")) policy = &p;
  }
  if (policy == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(queue->file, ": job queue ", queue->name, " uses scheduling policy '",
                                                   queue->policy_arn,
                                                   "', which no describe-scheduling-policies output describes"));
  }
  if (!policy->quota) {
    return absl::InvalidArgumentError(
        absl::StrCat(policy->file, ": scheduling policy ", policy->name, " has no quotaSharePolicy: not a quota-managed queue"));
  }
  rep.policy = policy->name;
  auto in_queue = [&](const std::string& ref) {
    return ref.empty() || ref == queue->name || ref == queue->arn || NameOf(ref, "job-queue/") == queue->name;
  };
  std::vector<const ShareCfg*> queue_shares;
  for (const ShareCfg& s : shares) {
    if (in_queue(s.queue_arn)) queue_shares.push_back(&s);
  }
  std::sort(queue_shares.begin(), queue_shares.end(),
            [](const ShareCfg* a, const ShareCfg* b) { return a->name < b->name; });
  rep.shares = static_cast<int64_t>(queue_shares.size());

  // Jobs of the queue, in createdAt order (then jobId).
  std::vector<const JobD*> mine;
  std::set<std::string> described;
  for (const JobD& j : jobs) {
    described.insert(j.id);
    if (!in_queue(j.queue)) {
      ++rep.skipped["in another job queue"];
      continue;
    }
    const bool known = std::any_of(queue_shares.begin(), queue_shares.end(),
                                   [&](const ShareCfg* s) { return s->name == j.share; });
    if (!known) {
      std::vector<std::string> names;
      for (const ShareCfg* s : queue_shares) names.push_back(s->name);
      return Reader(j.file).Error(
          Path().Key("quotaShareName"),
          absl::StrCat("job ", j.name, " is in quota share '", j.share, "', which the export does not describe (shares of ",
                       queue->name, ": ", absl::StrJoin(names, ", "), ")"));
    }
    mine.push_back(&j);
  }
  for (const auto& [id, file] : listed_jobs) {
    if (!described.contains(id)) ++rep.skipped["listed by list-service-jobs but not described (no describe-service-job output)"];
  }
  std::sort(mine.begin(), mine.end(), [](const JobD* a, const JobD* b) {
    return a->created != b->created ? a->created < b->created : a->id < b->id;
  });
  // Export time and time 0.
  int64_t latest = 0;
  for (const JobD* j : mine) {
    for (const std::optional<int64_t>& t : {std::optional<int64_t>(j->created), j->scheduled, j->started, j->stopped}) {
      if (t) latest = std::max(latest, *t);
    }
    for (const Attempt& a : j->attempts) {
      if (a.stopped) latest = std::max(latest, *a.stopped);
    }
  }
  rep.export_time_inferred = !options.export_time_ms.has_value();
  rep.export_ms = options.export_time_ms.value_or(latest);
  rep.time0_ms = mine.empty() ? rep.export_ms : mine.front()->created;
  if (rep.export_ms < latest) {
    return absl::InvalidArgumentError(absl::StrCat("--export-time ", rep.export_ms, " is before the latest timestamp in ",
                                                   dir, " (", latest, ")"));
  }
  // Observed runs: the last attempt that ran to an end.
  auto last_run = [](const JobD& j) -> std::optional<int64_t> {
    std::optional<int64_t> run;
    std::optional<int64_t> start;
    for (const Attempt& a : j.attempts) {
      if (a.started && a.stopped && (!start || *a.started >= *start)) {
        start = a.started;
        run = *a.stopped - *a.started;
      }
    }
    if (!run && j.started && j.stopped) run = *j.stopped - *j.started;
    return run;
  };
  std::map<std::string, std::vector<int64_t>> succeeded_runs;
  std::vector<int64_t> all_runs;
  for (const JobD* j : mine) {
    if (j->status != "SUCCEEDED") continue;
    if (std::optional<int64_t> run = last_run(*j)) {
      succeeded_runs[j->share].push_back(*run);
      all_runs.push_back(*run);
    }
  }
  auto estimate = [&](const JobD& j) -> std::pair<int64_t, const char*> {
    if (auto it = succeeded_runs.find(j.share); it != succeeded_runs.end()) {
      return {Median(it->second), "median run of the share's SUCCEEDED jobs"};
    }
    if (!all_runs.empty()) return {Median(all_runs), "median run of all SUCCEEDED jobs"};
    if (j.max_runtime) return {*j.max_runtime * 1000, "the payload's MaxRuntimeInSeconds"};
    return {3600 * 1000, "one hour (no SUCCEEDED job, no MaxRuntimeInSeconds)"};
  };

  // The scenario document.
  nlohmann::ordered_json doc;
  doc["schedulingPolicy"] = {{"name", policy->name}, {"quotaSharePolicy", {{"idleResourceAssignmentStrategy", "FIFO"}}}};
  nlohmann::ordered_json env_limits = nlohmann::ordered_json::array();
  for (const Limit& l : env->limits) env_limits.push_back({{"capacityUnit", l.unit}, {"maxCapacity", l.max}});
  doc["serviceEnvironment"] = {{"serviceEnvironmentName", env->name},
                               {"serviceEnvironmentType", "SAGEMAKER_TRAINING"},
                               {"state", env->state},
                               {"capacityLimits", env_limits}};
  nlohmann::ordered_json jq = {{"jobQueueName", queue->name},
                               {"jobQueueType", "SAGEMAKER_TRAINING"},
                               {"priority", queue->priority}};
  if (!queue->actions.empty()) {
    nlohmann::ordered_json actions = nlohmann::ordered_json::array();
    for (const Action& a : queue->actions) {
      actions.push_back({{"reason", a.reason}, {"state", a.state}, {"maxTimeSeconds", a.max_time}, {"action", a.action}});
    }
    jq["jobStateTimeLimitActions"] = actions;
  }
  doc["jobQueue"] = jq;
  nlohmann::ordered_json share_list = nlohmann::ordered_json::array();
  for (const ShareCfg* s : queue_shares) {
    nlohmann::ordered_json limits = nlohmann::ordered_json::array();
    for (const Limit& l : s->limits) limits.push_back({{"capacityUnit", l.unit}, {"maxCapacity", l.max}});
    nlohmann::ordered_json rs = {{"strategy", s->strategy}};
    if (s->borrow) rs["borrowLimit"] = *s->borrow;
    share_list.push_back({{"quotaShareName", s->name},
                          {"capacityLimits", limits},
                          {"resourceSharingConfiguration", rs},
                          {"preemptionConfiguration", {{"inSharePreemption", s->in_share}}},
                          {"state", s->state}});
  }
  doc["quotaShares"] = share_list;
  if (options.horizon) doc["simulation"] = {{"horizonSeconds", SecondsJson(rep.export_ms - rep.time0_ms)}};
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  std::vector<std::pair<int64_t, nlohmann::ordered_json>> terminations;
  std::set<std::string> names;
  for (const JobD* jp : mine) {
    const JobD& j = *jp;
    std::string name = j.name;
    if (!names.insert(name).second) {
      name = absl::StrCat(j.name, "-", j.id.substr(0, 8));
      names.insert(name);
      ++rep.notes["renamed: jobName not unique (name-<first 8 characters of the jobId>)"];
    }
    nlohmann::ordered_json req = {{"jobName", name},
                                  {"jobQueue", queue->name},
                                  {"serviceJobType", "SAGEMAKER_TRAINING"},
                                  {"quotaShareName", j.share},
                                  {"schedulingPriority", j.priority},
                                  {"serviceRequestPayload", j.payload}};
    if (j.retry_attempts) req["retryStrategy"] = {{"attempts", *j.retry_attempts}};
    if (j.evaluate_on_exit) ++rep.notes["retryStrategy.evaluateOnExit dropped (the simulator retries every failure)"];
    if (j.attempt_duration) req["timeoutConfig"] = {{"attemptDurationSeconds", *j.attempt_duration}};
    if (j.preemption_retries) {
      req["preemptionConfiguration"] = {{"preemptionRetriesBeforeTermination", *j.preemption_retries}};
    }
    // Run time and outcome.
    const bool time_limit = j.reason.rfind("Terminated by JobStateTimeLimit action", 0) == 0;
    const bool user_terminated = j.terminated && !time_limit;
    const std::optional<int64_t> observed = last_run(j);
    int64_t run = 0;
    std::string outcome = "SUCCEEDED";
    if ((j.status == "SUCCEEDED" || j.status == "FAILED") && observed && !user_terminated) {
      run = *observed;
      outcome = j.status;
      ++rep.notes["run time observed (the last attempt's stoppedAt - startedAt)"];
    } else if (j.status == "RUNNING" || j.status == "STARTING" || (user_terminated && observed)) {
      const int64_t so_far = observed ? *observed : rep.export_ms - j.started.value_or(rep.export_ms);
      const auto [est, how] = estimate(j);
      run = std::max(so_far, est);
      ++rep.notes[absl::StrCat("run time open-ended (", user_terminated ? "terminated" : "running at export",
                               "): the longer of the time run and the ", how)];
    } else {
      const auto [est, how] = estimate(j);
      run = est;
      ++rep.notes[absl::StrCat("run time estimated (never ran): ", how)];
    }
    if (j.max_runtime && run > *j.max_runtime * 1000) run = *j.max_runtime * 1000;
    nlohmann::ordered_json sim = {{"runSeconds", SecondsJson(run)}};
    if (outcome == "FAILED") sim["outcome"] = "FAILED";
    events.push_back({{"time", SecondsJson(j.created - rep.time0_ms)},
                      {"action", "SubmitServiceJob"},
                      {"request", req},
                      {"simulation", sim}});
    if (user_terminated && j.stopped) {
      terminations.push_back(
          {*j.stopped, {{"time", SecondsJson(*j.stopped - rep.time0_ms)},
                        {"action", "TerminateServiceJob"},
                        {"request", {{"jobId", name}, {"reason", j.reason.empty() ? "terminated" : j.reason}}}}});
      ++rep.notes["terminated by a user: TerminateServiceJob at its stoppedAt"];
    }
    ObservedJob o;
    o.job_name = name;
    o.job_id = j.id;
    o.share = j.share;
    o.status = j.status;
    o.created_ms = j.created - rep.time0_ms;
    std::optional<int64_t> start;
    for (const Attempt& a : j.attempts) {
      if (a.started && (!start || *a.started > *start)) start = a.started;
    }
    if (!start) start = j.started;
    if (start) o.started_ms = *start - rep.time0_ms;
    if (j.stopped) o.stopped_ms = *j.stopped - rep.time0_ms;
    result.observed.push_back(std::move(o));
  }
  std::stable_sort(terminations.begin(), terminations.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [t, ev] : terminations) events.push_back(std::move(ev));
  doc["events"] = events;
  rep.jobs = static_cast<int64_t>(mine.size());
  result.scenario_json = doc.dump(2) + "\n";
  // What we wrote must be a scenario quotasim reads.
  absl::StatusOr<Scenario> check = ParseScenario(result.scenario_json, "the imported scenario");
  if (!check.ok()) {
    return absl::InternalError(absl::StrCat("import produced a scenario quotasim cannot read (a bug): ",
                                            check.status().message()));
  }
  return result;
}

std::string FormatImportReport(const AwsImportReport& r, const std::string& out_path) {
  std::string s = absl::StrCat("quotasim import aws: job queue ", r.queue, " (service environment ", r.environment,
                               ", scheduling policy ", r.policy, "): ", r.shares, " quota shares, ", r.jobs,
                               " jobs -> ", out_path, "\n");
  absl::StrAppend(&s, "  ", r.files_read, " JSON files read; time 0 = ", r.time0_ms, " (epoch ms); export time ",
                  r.export_ms, r.export_time_inferred ? " (the latest timestamp in the export; --export-time to set it)"
                                                      : " (--export-time)",
                  " = ", Seconds(r.export_ms - r.time0_ms), " s\n");
  for (const std::string& f : r.ignored_files) absl::StrAppend(&s, "  ignored ", f, "\n");
  int64_t skipped = 0;
  for (const auto& [why, n] : r.skipped) skipped += n;
  absl::StrAppend(&s, "  ", skipped, " jobs skipped", skipped == 0 ? "" : ":", "\n");
  for (const auto& [why, n] : r.skipped) absl::StrAppend(&s, "    ", n, " ", why, "\n");
  for (const auto& [what, n] : r.notes) absl::StrAppend(&s, "  ", n, " ", what, "\n");
  return s;
}

std::string ObservedCsv(const std::vector<ObservedJob>& jobs) {
  std::string out = "jobName,jobId,quotaShare,status,createdSeconds,startedSeconds,stoppedSeconds\n";
  auto num = [](const std::optional<int64_t>& v) { return v ? Seconds(*v) : std::string(); };
  for (const ObservedJob& j : jobs) {
    absl::StrAppend(&out, j.job_name, ",", j.job_id, ",", j.share, ",", j.status, ",", Seconds(j.created_ms), ",",
                    num(j.started_ms), ",", num(j.stopped_ms), "\n");
  }
  return out;
}

}  // namespace qs
