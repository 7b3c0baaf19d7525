// File: engine/io/aws_import.h
//
// `quotasim import aws DIR`: the JSON the AWS CLI prints for one quota-managed
// SageMaker Training job queue (scripts/aws-export writes it; shapes and
// sources in docs/aws-api-shapes.md) -> a scenario (the scenario format of
// ../shared/spec/scenario-format.md).
//
// Files are recognised by content, whatever their names: the outputs of
// describe-service-environments, describe-job-queues,
// describe-scheduling-policies, list-quota-shares, describe-quota-share,
// list-service-jobs and describe-service-job. Other JSON files are listed in
// the report as ignored; a file with `NextToken` (an export cut by
// --max-items) is an error.
//
// The scenario: the queue (the only one, or --queue), its first service
// environment and its scheduling policy, its quota shares as they are now,
// and every described job of the queue as a SubmitServiceJob at its
// `createdAt` (time 0 = the earliest createdAt) with its share, priority
// (the value at export time), payload, retryStrategy.attempts,
// timeoutConfig and preemptionConfiguration. A job terminated by a user
// (isTerminated, not by a JobStateTimeLimit action) also gets a
// TerminateServiceJob at its stoppedAt. Run time (simulation.runSeconds):
//   * a job whose last attempt ran to an end (SUCCEEDED or FAILED): that
//     attempt's stoppedAt - startedAt; outcome its status;
//   * still RUNNING at export: at least the time run so far, and at least
//     the estimate below;
//   * never ran (waiting at export, or ended before it started): the
//     estimate: the median observed run of the share's SUCCEEDED jobs, else
//     of all SUCCEEDED jobs, else the payload's MaxRuntimeInSeconds, else
//     one hour;
// every run at most the payload's MaxRuntimeInSeconds (SageMaker stops the
// job then). The export time is --export-time, else the latest timestamp
// in the export; simulation.horizonSeconds is set to it (unless
// horizon = false), so that the simulated world ends where the observed one
// does. The report counts every job imported, skipped (and why) and every
// estimate.
//
// Errors (InvalidArgumentError) name the file and the JSON path: missing
// required outputs, broken JSON (line and column), unknown enum values,
// inconsistent timestamps (createdAt <= scheduledAt <= startedAt <=
// stoppedAt, per job and per attempt), a job in a share the export does not
// describe, several queues without --queue.
//
// Thread-compatible; a pure function of the files and options.
#ifndef QS_ENGINE_IO_AWS_IMPORT_H_
#define QS_ENGINE_IO_AWS_IMPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace qs {

struct AwsImportOptions {
  std::string queue;                      // jobQueueName or ARN; empty: the only queue
  std::optional<int64_t> export_time_ms;  // empty: the latest timestamp in the export
  bool horizon = true;                    // simulation.horizonSeconds = export time
};

// One imported job as AWS ran it (the calibration's reference).
struct ObservedJob {
  std::string job_name;  // as in the scenario (renamed when not unique)
  std::string job_id, share, status;
  int64_t created_ms = 0;  // since the scenario's time 0
  std::optional<int64_t> started_ms;  // the last attempt's startedAt
  std::optional<int64_t> stopped_ms;
};

struct AwsImportReport {
  std::string queue, environment, policy;
  int64_t files_read = 0;
  std::vector<std::string> ignored_files;  // "name: why"
  int64_t shares = 0, jobs = 0;
  std::map<std::string, int64_t> skipped;  // why -> jobs
  std::map<std::string, int64_t> notes;    // what was estimated or adjusted -> jobs
  int64_t time0_ms = 0, export_ms = 0;
  bool export_time_inferred = true;
};

struct AwsImport {
  std::string scenario_json;  // checked: ParseScenario reads it
  AwsImportReport report;
  std::vector<ObservedJob> observed;  // in scenario submission order
};

absl::StatusOr<AwsImport> ImportAwsExport(const std::string& dir, const AwsImportOptions& options);

// The report as lines for a terminal.
std::string FormatImportReport(const AwsImportReport& r, const std::string& out_path);
// observed jobs as CSV: jobName,jobId,quotaShare,status,createdSeconds,startedSeconds,stoppedSeconds.
std::string ObservedCsv(const std::vector<ObservedJob>& jobs);

}  // namespace qs

#endif  // QS_ENGINE_IO_AWS_IMPORT_H_
