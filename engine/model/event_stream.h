// File: engine/model/event_stream.h
//
// A scenario read block by block instead of held whole: what lets `quotasim
// run X.qsb` simulate 1e7-1e8 jobs in a fraction of the memory a Scenario of
// request objects takes (about 430 bytes per event). The fast engine
// (RunFastEngine(const EventStream&, ...), engine/run.h) keeps its own
// compact state per job and decodes the blocks as the run reaches them.
//
// gen::QsbFileStream (engine/gen/qsb.h) reads a .qsb file this way;
// ScenarioIndex (engine/model/scenario_index.h) is what a run needs to know
// before it starts (capacity units, job names). For a stream that states
// its blocks' facts up front (facts(): a .qsb file of version 9 or later with
// generated job names) it reads only the blocks that hold requests other
// than job requests; else it reads every block once and checks what only
// the whole file can show (time order across blocks, unique job names, the
// submit count).
//
// Thread-safety: ReadBlock() must be safe to call concurrently (the engine
// decodes the next blocks on another thread while it simulates).
#ifndef QS_ENGINE_MODEL_EVENT_STREAM_H_
#define QS_ENGINE_MODEL_EVENT_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/model/scenario.h"

namespace qs {

// What a stream's source states about its blocks before they are read, so
// that a run need not read them all before its first event. The source
// checks each block against its part when ReadBlock() reads it (and rejects
// the stream at opening when the parts do not add up: the submit count,
// the time order across blocks); a run that stops before the last block
// reads the rest then (RunFastEngine), so every block is still checked.
struct StreamFacts {
  // The instance types the submissions name (those without a payload
  // error), sorted and distinct.
  std::vector<std::string> submit_units;
  // The named submissions are named "j0", "j1", ... in event order
  // (GeneratedJobNumber): this many.
  int64_t named_submissions = 0;
  // The blocks holding any event that is not a job request (IsJobRequest),
  // in order.
  std::vector<size_t> request_blocks;
};

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
  // Replaces `out` with the events of block b that are not job requests
  // (IsJobRequest), in order, after ReadBlock()'s checks of the whole block
  // and with its errors: what IndexEventStream reads of the request blocks
  // a stream's facts() lists. This default reads the block and filters it;
  // a source may decode the job requests without keeping them.
  virtual absl::Status ReadBlockRequests(size_t b, std::vector<ScenarioEvent>& out) const {
    if (absl::Status st = ReadBlock(b, out); !st.ok()) return st;
    std::erase_if(out, [](const ScenarioEvent& ev) { return IsJobRequest(ev.request); });
    return absl::OkStatus();
  }
  // True for a stream whose blocks are made from memory rather than decoded
  // (a trace replay's WorkloadStream): cheaper to make on the engine's own
  // thread than to hand to another one, whose wake-ups and spinning cost
  // more CPU time than the making.
  virtual bool ReadOnCallerThread() const { return false; }
  // The stream's facts stated up front, or nullptr (the default: every
  // block must be read to know them).
  virtual const StreamFacts* facts() const { return nullptr; }
};

}  // namespace qs

#endif  // QS_ENGINE_MODEL_EVENT_STREAM_H_
