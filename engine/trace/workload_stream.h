// File: engine/trace/workload_stream.h
//
// The scenario a policy gives a workload (replay.h, "Scenario rules"), as an
// EventStream (engine/model/event_stream.h): the share requests and limit
// changes are made up front, the submissions block by block as the fast
// engine reaches them. A replay so never holds one 432-byte request object
// per job at once (35 MB for Philly's 82,247 jobs, whose first touch and
// copy were about a tenth of a replay's CPU time), and the fast engine's
// ScenarioSource makes the next block on another thread. BuildScenario
// (replay.h) is this stream read whole: one piece of code makes both.
//
//   WorkloadStream stream(workload, policy);
//   absl::StatusOr<RunStats> stats = RunFastEngine(stream, stream.Index(), sink, options);
//
// The events are BuildScenario's, in its order: the CreateQuotaShare
// requests at time 0, then limit changes and submissions by time (changes
// first at equal times).
//
// Thread-safety: immutable once made; ReadBlock may run concurrently. The
// stream refers to `w` and `p`, which must outlive it.
#ifndef QS_ENGINE_TRACE_WORKLOAD_STREAM_H_
#define QS_ENGINE_TRACE_WORKLOAD_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/model/event_stream.h"
#include "engine/model/scenario.h"
#include "engine/model/scenario_index.h"
#include "engine/trace/policy.h"
#include "engine/trace/replay.h"

namespace qs::trace {

class WorkloadStream final : public EventStream {
 public:
  // Events per block: a block of request objects (4096 x 432 bytes) stays
  // in the second-level cache while the engine applies it.
  static constexpr size_t kBlockEvents = 4096;

  WorkloadStream(const Workload& w, const Policy& p, size_t block_events = kBlockEvents);

  const Scenario& head() const override { return head_; }
  size_t num_events() const override { return requests_.size() + w_.jobs.size(); }
  size_t num_blocks() const override { return starts_.size(); }
  absl::Status ReadBlock(size_t b, std::vector<ScenarioEvent>& out) const override;
  bool ReadOnCallerThread() const override { return true; }

  // Every event that is not a submission, in scenario order.
  const std::vector<ScenarioEvent>& requests() const { return requests_; }
  // The names of the scenario's shares as the workload's jobs refer to them
  // (one for a single-share policy), and each job's index among them.
  const std::vector<std::string>& share_names() const { return names_; }
  std::vector<int32_t> JobShares() const;
  // IndexScenario() of the scenario, made without making its events.
  ScenarioIndex Index() const;

 private:
  // Where block b starts: the next request (in requests_) and the next job.
  struct Start {
    size_t request = 0;
    size_t job = 0;
  };
  // Whether the event at `at` is a request (else the next submission).
  bool RequestComesNext(const Start& at) const;
  SubmitServiceJobRequest SubmitOf(size_t i) const;

  const Workload& w_;
  const Policy& p_;
  const size_t block_events_;  // every block but the last holds this many events
  Scenario head_;
  std::vector<std::string> names_;
  // The CreateQuotaShare requests (the first `creations_` entries), then the
  // limit changes in time order.
  std::vector<ScenarioEvent> requests_;
  size_t creations_ = 0;
  std::vector<Start> starts_;
};

}  // namespace qs::trace

#endif  // QS_ENGINE_TRACE_WORKLOAD_STREAM_H_
