// File: engine/log/calibration.h
//
// How far a simulated run of an imported queue is from what AWS did
// (`quotasim calibrate`, issue #17 item 2): each job's simulated start (the
// RUNNING line of its last attempt) against its observed one (the last
// attempt's startedAt, from the X.observed.csv that `quotasim import aws`
// writes beside the scenario).
//
//   absl::StatusOr<std::vector<ObservedStart>> obs = ParseObservedCsv(text, "x.observed.csv");
//   StartRecorder rec;              // a LogSink: feed it the run's records
//   RunFastEngine(scenario, rec, options);
//   StartFit fit = CompareStarts(*obs, rec, /*worst=*/10);
//
// Errors are simulated - observed, in milliseconds. Jobs that started in
// one world and not the other (still waiting at the export, or at the
// simulation's horizon) are counted apart, never compared.
//
// Thread-compatible.
#ifndef QS_ENGINE_LOG_CALIBRATION_H_
#define QS_ENGINE_LOG_CALIBRATION_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/log/event_log.h"

namespace qs {

struct ObservedStart {
  std::string job, share;
  SimTime created = 0;
  std::optional<SimTime> started;
};

// The CSV of ObservedCsv (engine/io/aws_import.h): a header naming at least
// jobName, quotaShare, createdSeconds and startedSeconds; errors name the
// source and the line.
absl::StatusOr<std::vector<ObservedStart>> ParseObservedCsv(std::string_view text, std::string_view source);

// Records, per job name, the time of its last move to RUNNING.
class StartRecorder : public LogSink {
 public:
  void OnJob(const JobRecord& r) override;
  void OnRejected(const RejectedRecord&) override {}
  void OnSnapshot(const SnapshotRecord&) override {}
  std::optional<SimTime> StartOf(const std::string& job) const;

 private:
  struct State {
    JobStatus status = JobStatus::kSubmitted;
    std::optional<SimTime> running;
  };
  std::map<std::string, State, std::less<>> jobs_;
};

struct StartError {
  std::string job, share;
  SimTime observed = 0, simulated = 0;
};

struct StartFit {
  int64_t compared = 0;       // started in both
  int64_t only_observed = 0;  // started in AWS, not in the simulation
  int64_t only_simulated = 0;
  int64_t neither = 0;
  SimTime median_abs = 0, p90_abs = 0;  // of |simulated - observed|
  SimTime median_signed = 0;            // bias: > 0 the simulation starts later
  double within_minute = 0;             // fraction of compared jobs with |error| <= 60 s
  std::vector<StartError> worst;        // by |error| desc, then job name
};

StartFit CompareStarts(const std::vector<ObservedStart>& observed, const StartRecorder& simulated, size_t worst);

// "a b c" lines for a terminal: the figures, then the worst jobs.
std::string FormatStartFit(const StartFit& fit);

}  // namespace qs

#endif  // QS_ENGINE_LOG_CALIBRATION_H_
