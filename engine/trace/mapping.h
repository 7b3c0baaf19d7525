// File: engine/trace/mapping.h
//
// The mapping file (JSON): how the jobs of a trace become AWS Batch service
// jobs. It is policy-independent (the hardware and the teams); the policy
// file (policy.h) says how the shares share.
//
//   {
//     "description": "Philly 2017, one V100 per ml.p3.2xlarge",
//     "trace": {"format": "philly-pollux",            // default for --format
//               "swfTeam": "group",                   // swf: group|user|queue|partition
//               "gavelStepsPerSecond": 1.0},          // philly-gavel only
//     "environment": {"instanceType": "ml.p3.2xlarge",
//                     "gpusPerInstance": 1,           // jobs take ceil(gpus / this) instances
//                     "instances": 640},              // absent: the sum of the share limits
//     "shares": {"teams": {"6214e9": "vc6214e9"},     // optional explicit team -> share
//                "prefix": "vc",                      // automatic names: prefix + team
//                "maxShares": 20,                     // top maxShares-1 teams by demand + other
//                "otherShare": "other",               // teams not given their own share
//                "teamFrom": "trace"},                // or "constant": every job in otherShare
//     "priority": "none",                             // or "trace" (qos class, ...)
//     "zeroGpuJobs": "skip",                          // or "oneInstance"
//     "failedJobs": "fail",                           // or "succeed"
//     "limits": {"source": "proportional"}            // to historical demand
//            |  {"source": "given", "instances": {"vc6214e9": 64, ...}}
//            |  {"source": "quotaTable", "file": "venus.csv",   // relative to the mapping file
//                "columns": {"vc6214e9": "vcEwI", ...}}         // share -> table column
//   }
//
// Every key is optional except where a limit source needs its fields; unknown
// keys are an error. Errors read "<file>: <json path>: <problem>".
//
// Thread-safety: plain values and pure functions.
#ifndef QS_ENGINE_TRACE_MAPPING_H_
#define QS_ENGINE_TRACE_MAPPING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/trace/trace_reader.h"

namespace qs::trace {

enum class LimitSource : uint8_t { kProportional, kGiven, kQuotaTable };

struct Mapping {
  std::string source;
  std::string description;
  std::optional<TraceFormat> format;
  SwfTeamField swf_team = SwfTeamField::kGroup;
  double gavel_steps_per_second = 1.0;

  std::string instance_type = "ml.p3.2xlarge";
  double gpus_per_instance = 1.0;
  std::optional<int64_t> instances;

  std::map<std::string, std::string> teams;  // explicit team -> share
  std::string share_prefix;
  int max_shares = 20;
  std::string other_share = "other";
  bool constant_team = false;

  bool trace_priority = false;
  bool zero_gpu_one_instance = false;
  bool failed_jobs_fail = true;

  LimitSource limit_source = LimitSource::kProportional;
  std::map<std::string, int64_t> given_limits;        // share -> instances
  std::string quota_table_path;                       // resolved against the mapping's directory
  std::map<std::string, std::string> quota_columns;   // share -> column
};

absl::StatusOr<Mapping> ParseMapping(std::string_view json_text, std::string_view source);
// Reads a mapping file; a relative quota-table path is resolved against the
// file's directory.
absl::StatusOr<Mapping> LoadMappingFile(const std::string& path);

}  // namespace qs::trace

#endif  // QS_ENGINE_TRACE_MAPPING_H_
