// File: engine/model/event_stream.h
//
// A scenario read block by block instead of held whole: what lets `quotasim
// run X.qsb` simulate 1e7-1e8 jobs in a fraction of the memory a Scenario of
// request objects takes (about 430 bytes per event). The fast engine
// (RunFastEngine(const EventStream&, ...), engine/run.h) keeps its own
// compact state per job and decodes the blocks as the run reaches them.
//
// gen::QsbFileStream (engine/gen/qsb.h) reads a .qsb file this way;
// ScenarioIndex (engine/model/scenario_index.h) makes the one pass over all blocks
// a run needs before it starts (capacity units, job names) and checks what
// only the whole file can show (time order across blocks, unique job names,
// the submit count).
//
// Thread-safety: ReadBlock() must be safe to call concurrently (the engine
// decodes the next blocks on another thread while it simulates).
#ifndef QS_ENGINE_MODEL_EVENT_STREAM_H_
#define QS_ENGINE_MODEL_EVENT_STREAM_H_

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "engine/model/scenario.h"

namespace qs {

class EventStream {
 public:
  virtual ~EventStream() = default;

  // Everything but the events: head().events is empty, head().submit_count
  // is the number of SubmitServiceJob events in the blocks.
  virtual const Scenario& head() const = 0;
  virtual size_t num_events() const = 0;
  virtual size_t num_blocks() const = 0;
  // Replaces `out` with the events of block b, in scenario order (blocks in
  // order give Scenario::events). An error names the source and the place.
  virtual absl::Status ReadBlock(size_t b, std::vector<ScenarioEvent>& out) const = 0;
  // True for a stream whose blocks are made from memory rather than decoded
  // (a trace replay's WorkloadStream): cheaper to make on the engine's own
  // thread than to hand to another one, whose wake-ups and spinning cost
  // more CPU time than the making.
  virtual bool ReadOnCallerThread() const { return false; }
};

}  // namespace qs

#endif  // QS_ENGINE_MODEL_EVENT_STREAM_H_
