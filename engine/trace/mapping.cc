#include "engine/trace/mapping.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "engine/util/strings.h"
#include "nlohmann/json.hpp"

namespace qs::trace {
namespace {

using Json = nlohmann::json;

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}
  absl::Status Error(const std::string& path, const std::string& msg) const {
    return absl::InvalidArgumentError(absl::StrCat(Sv(source_), ": ", path, ": ", msg));
  }
  absl::Status Keys(const Json& v, const std::string& path, std::initializer_list<const char*> keys) const {
    if (!v.is_object()) return Error(path, "expected an object");
    for (auto it = v.begin(); it != v.end(); ++it) {
      bool known = false;
      for (const char* k : keys) known = known || it.key() == k;
      if (!known) {
        std::string list;
        for (const char* k : keys) absl::StrAppend(&list, list.empty() ? "" : ", ", k);
        return Error(Join(path, it.key()), absl::StrCat("unknown key; expected one of: ", list));
      }
    }
    return absl::OkStatus();
  }
  static std::string Join(const std::string& path, const std::string& key) {
    return path.empty() ? key : absl::StrCat(path, ".", key);
  }
  absl::StatusOr<std::string> String(const Json& v, const std::string& path) const {
    if (!v.is_string()) return Error(path, "expected a string");
    return v.get<std::string>();
  }
  absl::StatusOr<double> Number(const Json& v, const std::string& path, double lo, double hi) const {
    if (!v.is_number()) return Error(path, "expected a number");
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < lo || d > hi) {
      return Error(path, absl::StrCat("must be in [", lo, ", ", hi, "], got ", d));
    }
    return d;
  }
  absl::StatusOr<int64_t> Int(const Json& v, const std::string& path, int64_t lo, int64_t hi) const {
    if (!v.is_number_integer()) return Error(path, "expected an integer");
    const int64_t i = v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)
                          ? INT64_MAX
                          : v.get<int64_t>();
    if (i < lo || i > hi) return Error(path, absl::StrCat("must be in [", lo, ", ", hi, "], got ", i));
    return i;
  }
  absl::StatusOr<std::string> Enum(const Json& v, const std::string& path,
                                   std::initializer_list<const char*> values) const {
    if (v.is_string()) {
      for (const char* e : values) {
        if (v.get<std::string>() == e) return std::string(e);
      }
    }
    std::string list;
    for (const char* e : values) absl::StrAppend(&list, list.empty() ? "" : ", ", e);
    return Error(path, absl::StrCat("expected one of: ", list));
  }
  absl::Status StringMap(const Json& v, const std::string& path, std::map<std::string, std::string>* out) const {
    if (!v.is_object()) return Error(path, "expected an object of strings");
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!it->is_string()) return Error(Join(path, it.key()), "expected a string");
      (*out)[it.key()] = it->get<std::string>();
    }
    return absl::OkStatus();
  }

 private:
  std::string_view source_;
};

#define QS_MAP_ASSIGN(lhs, expr)           \
  do {                                     \
    auto qs_v_ = (expr);                   \
    if (!qs_v_.ok()) return qs_v_.status(); \
    lhs = *std::move(qs_v_);               \
  } while (false)
#define QS_MAP_CHECK(expr)                 \
  do {                                     \
    absl::Status qs_s_ = (expr);           \
    if (!qs_s_.ok()) return qs_s_;         \
  } while (false)

}  // namespace

absl::StatusOr<Mapping> ParseMapping(std::string_view json_text, std::string_view source) {
  Reader r(source);
  Json root = Json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return r.Error("(document)", "not valid JSON");
  Mapping m;
  m.source = std::string(source);
  QS_MAP_CHECK(r.Keys(root, "(document)",
                      {"description", "trace", "environment", "shares", "priority", "zeroGpuJobs",
                       "failedJobs", "limits"}));
  if (root.contains("description")) QS_MAP_ASSIGN(m.description, r.String(root["description"], "description"));
  if (root.contains("trace")) {
    const Json& t = root["trace"];
    QS_MAP_CHECK(r.Keys(t, "trace", {"format", "swfTeam", "gavelStepsPerSecond"}));
    if (t.contains("format")) {
      std::string f;
      QS_MAP_ASSIGN(f, r.String(t["format"], "trace.format"));
      auto fmt = ParseTraceFormat(f);
      if (!fmt.ok()) return r.Error("trace.format", std::string(fmt.status().message()));
      m.format = *fmt;
    }
    if (t.contains("swfTeam")) {
      std::string f;
      QS_MAP_ASSIGN(f, r.Enum(t["swfTeam"], "trace.swfTeam", {"group", "user", "queue", "partition"}));
      m.swf_team = *ParseSwfTeamField(f);
    }
    if (t.contains("gavelStepsPerSecond")) {
      QS_MAP_ASSIGN(m.gavel_steps_per_second, r.Number(t["gavelStepsPerSecond"], "trace.gavelStepsPerSecond", 1e-6, 1e9));
    }
  }
  if (root.contains("environment")) {
    const Json& e = root["environment"];
    QS_MAP_CHECK(r.Keys(e, "environment", {"instanceType", "gpusPerInstance", "instances"}));
    if (e.contains("instanceType")) {
      QS_MAP_ASSIGN(m.instance_type, r.String(e["instanceType"], "environment.instanceType"));
      if (m.instance_type.empty()) return r.Error("environment.instanceType", "must not be empty");
    }
    if (e.contains("gpusPerInstance")) {
      QS_MAP_ASSIGN(m.gpus_per_instance, r.Number(e["gpusPerInstance"], "environment.gpusPerInstance", 1e-3, 1e6));
    }
    if (e.contains("instances")) {
      int64_t n = 0;
      QS_MAP_ASSIGN(n, r.Int(e["instances"], "environment.instances", 1, 2147483647));
      m.instances = n;
    }
  }
  if (root.contains("shares")) {
    const Json& s = root["shares"];
    QS_MAP_CHECK(r.Keys(s, "shares", {"teams", "prefix", "maxShares", "otherShare", "teamFrom"}));
    if (s.contains("teams")) QS_MAP_CHECK(r.StringMap(s["teams"], "shares.teams", &m.teams));
    if (s.contains("prefix")) QS_MAP_ASSIGN(m.share_prefix, r.String(s["prefix"], "shares.prefix"));
    if (s.contains("maxShares")) {
      int64_t n = 0;
      QS_MAP_ASSIGN(n, r.Int(s["maxShares"], "shares.maxShares", 1, 20));
      m.max_shares = static_cast<int>(n);
    }
    if (s.contains("otherShare")) {
      QS_MAP_ASSIGN(m.other_share, r.String(s["otherShare"], "shares.otherShare"));
      if (m.other_share.empty()) return r.Error("shares.otherShare", "must not be empty");
    }
    if (s.contains("teamFrom")) {
      std::string v;
      QS_MAP_ASSIGN(v, r.Enum(s["teamFrom"], "shares.teamFrom", {"trace", "constant"}));
      m.constant_team = v == "constant";
    }
  }
  if (root.contains("priority")) {
    std::string v;
    QS_MAP_ASSIGN(v, r.Enum(root["priority"], "priority", {"none", "trace"}));
    m.trace_priority = v == "trace";
  }
  if (root.contains("zeroGpuJobs")) {
    std::string v;
    QS_MAP_ASSIGN(v, r.Enum(root["zeroGpuJobs"], "zeroGpuJobs", {"skip", "oneInstance"}));
    m.zero_gpu_one_instance = v == "oneInstance";
  }
  if (root.contains("failedJobs")) {
    std::string v;
    QS_MAP_ASSIGN(v, r.Enum(root["failedJobs"], "failedJobs", {"fail", "succeed"}));
    m.failed_jobs_fail = v == "fail";
  }
  if (root.contains("limits")) {
    const Json& l = root["limits"];
    QS_MAP_CHECK(r.Keys(l, "limits", {"source", "instances", "file", "columns"}));
    if (!l.contains("source")) return r.Error("limits.source", "missing required key");
    std::string v;
    QS_MAP_ASSIGN(v, r.Enum(l["source"], "limits.source", {"proportional", "given", "quotaTable"}));
    if (v == "given") {
      m.limit_source = LimitSource::kGiven;
      if (!l.contains("instances") || !l["instances"].is_object()) {
        return r.Error("limits.instances", "required with source \"given\": an object share -> instances");
      }
      for (auto it = l["instances"].begin(); it != l["instances"].end(); ++it) {
        int64_t n = 0;
        QS_MAP_ASSIGN(n, r.Int(*it, absl::StrCat("limits.instances.", it.key()), 1, 2147483647));
        m.given_limits[it.key()] = n;
      }
    } else if (v == "quotaTable") {
      m.limit_source = LimitSource::kQuotaTable;
      if (!l.contains("file")) return r.Error("limits.file", "required with source \"quotaTable\"");
      QS_MAP_ASSIGN(m.quota_table_path, r.String(l["file"], "limits.file"));
      if (!l.contains("columns")) return r.Error("limits.columns", "required with source \"quotaTable\"");
      QS_MAP_CHECK(r.StringMap(l["columns"], "limits.columns", &m.quota_columns));
    }
  }
  return m;
}

absl::StatusOr<Mapping> LoadMappingFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open mapping ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  auto m = ParseMapping(ss.str(), path);
  if (m.ok() && !m->quota_table_path.empty() && std::filesystem::path(m->quota_table_path).is_relative()) {
    m->quota_table_path =
        (std::filesystem::path(path).parent_path() / m->quota_table_path).lexically_normal().string();
  }
  return m;
}

}  // namespace qs::trace
