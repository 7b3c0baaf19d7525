// File: engine/report/run_series.h
//
// What `quotasim report` draws from a run's event log, read in one pass: per
// share the waits of its jobs, per (share, instance type) the instances in
// use over time (own and borrowed, as the mean over each of `buckets` equal
// slices of [0, end]), and per share the preemptions of its jobs in each
// slice.
//
//   absl::StatusOr<RunSeries> s = ScanEventLog(in, "base.events.jsonl", end_ms, 240);
//
// Definitions match the summary (engine/log/summary.h): a wait is first
// RUNNABLE -> first SCHEDULED of a job that was scheduled; an attempt holds
// its SCHEDULED line's capacityUsage (minus the borrowed parts: own) until the
// line that ends it (RUNNABLE, SUCCEEDED, FAILED) or `end`; a preemption is a
// preemption-start line (preemptedFor), counted for the victim's share.
//
// Errors name the source and line (ParseJobLine, engine/log/explain.h).
//
// Thread-compatible.
#ifndef QS_ENGINE_REPORT_RUN_SERIES_H_
#define QS_ENGINE_REPORT_RUN_SERIES_H_

#include <cstdint>
#include <istream>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/model/time.h"

namespace qs {

struct UseSeries {
  std::vector<double> own, borrowed;  // mean instances per slice
  double peak = 0;                    // most instances held at once (own + borrowed)
};

struct RunSeries {
  SimTime end = 0;
  SimTime slice = 1;  // ms per slice
  int slices = 0;
  std::map<std::string, std::vector<SimTime>> waits;                    // share -> waits, ascending
  std::map<std::pair<std::string, std::string>, UseSeries> use;         // (share, unit) -> use
  std::map<std::string, std::vector<int64_t>> preemptions;             // share -> per slice
  int64_t lines = 0;                                                    // job lines read
};

// `end`: the run's endTime (its summary's); `slices` >= 1.
absl::StatusOr<RunSeries> ScanEventLog(std::istream& in, std::string_view source, SimTime end, int slices);

// The same shape from what a trace `compare` writes beside each policy's
// summary instead of a log: <policy>.timeseries.csv (per bucket of its
// `hour` column, each share's mean instances in use, "borrowed:S" of them,
// "limit:S", and the preemptions of all shares, preempt_cross + preempt_in)
// and, if given, <policy>.waits.csv (percentile,wait_seconds: the CDF of all
// jobs' waits). Use goes under (share, unit_of[share], or "instances"),
// preemptions under the share "all shares", waits under "all jobs" (one
// point per percentile). Each share's limit is put in *limits. Errors name
// the file and line.
absl::StatusOr<RunSeries> ReadTraceSeries(std::istream& timeseries, std::string_view timeseries_source,
                                          std::istream* waits, std::string_view waits_source, SimTime end,
                                          const std::map<std::string, std::string>& unit_of,
                                          std::map<std::string, int64_t>* limits);

}  // namespace qs

#endif  // QS_ENGINE_REPORT_RUN_SERIES_H_
