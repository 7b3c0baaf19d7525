// File: engine/fast/scenario_source.h
//
// Where the fast engine's scenario events come from: a Scenario held whole,
// or an EventStream (engine/model/event_stream.h) read block by block, the next
// block decoded on a oneTBB task while the engine applies the current one
// (on the engine's own thread for a stream that says ReadOnCallerThread()).
// The batches and their order do not depend on the thread count, and neither
// does anything the engine sees.
//
// The decoding task also runs the request-only checks of each submission
// (SubmitRequestChecksPass, engine/model/validation.h), work taken off the
// engine's thread: PassedChecked() says whether they passed for the event
// just passed, and for one that did, CheckedUnit() is the id of its
// instance type (FastState::UnitOf's, from the same sorted names) and
// CheckedShareName() the id of its quotaShareName among the names the
// scenario's CreateQuotaShare requests give (share_names()), which the
// engine maps to the share of that name while it exists. A scenario held
// whole, and a stream read on the caller's thread, have no such flags
// (PassedChecked() is false), and the engine runs the full ValidateSubmit,
// UnitOf and share name lookup, which give the same answers.
//
// Usage:
//   ScenarioSource src(scenario);              // or ScenarioSource(stream, index)
//   while (const ScenarioEvent* ev = src.Peek()) { ...; src.Advance(); }
//   if (!src.status().ok()) ...                // a block that failed to read
//
// The event Peek() returns stays valid until the next Peek().
//
// Thread-compatible: one thread drives it (the decoding task is internal).
#ifndef QS_ENGINE_FAST_SCENARIO_SOURCE_H_
#define QS_ENGINE_FAST_SCENARIO_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "engine/model/event_stream.h"
#include "engine/model/scenario.h"
#include "engine/model/scenario_index.h"

namespace qs::engine_internal {

class ScenarioSource {
 public:
  explicit ScenarioSource(const Scenario& scenario);
  // `index`: the stream's (IndexEventStream). Its units (sorted and
  // distinct) are CheckedUnit()'s ids; the names its share requests create,
  // sorted and distinct, are share_names(), CheckedShareName()'s ids.
  ScenarioSource(const EventStream& stream, const ScenarioIndex& index);
  ScenarioSource(ScenarioSource&&) noexcept;
  ScenarioSource& operator=(ScenarioSource&&) noexcept;
  ~ScenarioSource();

  // The next scenario event, or nullptr at the end (or when a streamed
  // block fails: status()).
  const ScenarioEvent* Peek() {
    if (next_ == end_ && blocks_) NextBlock();
    return next_ != end_ ? next_ : nullptr;
  }
  // Past the event Peek() returned (which stays valid until the next Peek()).
  // Also prefetches the event after the next one: the decoding task wrote
  // it (about 460 bytes) a block earlier, and the engine's first loads of
  // each event missed the caches.
  void Advance() {
    ++next_;
    if (checked_ != nullptr) ++checked_;
    if (end_ - next_ > 1) Prefetch(next_ + 1);
  }
  // After Advance(): true if the event passed is a submission whose
  // request-only checks ran on the decoding task and passed (its full
  // validation is then ValidateSubmitState); false if they failed or did not run.
  bool PassedChecked() const { return checked_ != nullptr && checked_[-1].unit != kNotPassed; }
  // After PassedChecked() was true: the submission's instance type's
  // position in `units`, or -1 if it is not there.
  int32_t CheckedUnit() const { return checked_[-1].unit; }
  // After PassedChecked() was true: the position of the submission's
  // quotaShareName in share_names(), or -1 if it has none or no share
  // request creates that name.
  int32_t CheckedShareName() const { return checked_[-1].share_name; }
  // The names the stream's CreateQuotaShare requests give, sorted and
  // distinct (empty for a scenario held whole).
  const std::vector<std::string>& share_names() const { return share_names_; }
  // A name's position in share_names(), or -1.
  int32_t ShareNameId(std::string_view name) const;
  // A checked_ entry's unit: the event is not a submission whose checks passed.
  static constexpr int32_t kNotPassed = INT32_MIN;
  struct Checked {
    int32_t unit;        // kNotPassed, or CheckedUnit()
    int32_t share_name;  // CheckedShareName()
  };
  // OK, or the error that stopped a streamed run early (a block that no
  // longer reads as it did when indexed).
  const absl::Status& status() const { return status_; }
  // For a run that ended before the stream's last block (a horizon, a
  // preemption cycle) over a stream that states its facts (whose blocks were
  // not all read before the run): reads the blocks not yet read, so that
  // each is checked as a complete run would have; the first error in block
  // order, else OK. Any other source: status().
  absl::Status ReadUnread();

 private:
  class BlockReader;
  void NextBlock();
  static void Prefetch(const ScenarioEvent* ev) {
    const char* p = reinterpret_cast<const char*>(ev);
    for (size_t o = 0; o < sizeof(ScenarioEvent); o += 64) __builtin_prefetch(p + o);
    __builtin_prefetch(p + sizeof(ScenarioEvent) - 1);
  }

  const ScenarioEvent* next_ = nullptr;
  const ScenarioEvent* end_ = nullptr;
  const Checked* checked_ = nullptr;  // beside next_, or nullptr
  std::vector<std::string> share_names_;
  std::unique_ptr<BlockReader> blocks_;
  const StreamFacts* stream_facts_ = nullptr;
  absl::Status status_;
};

}  // namespace qs::engine_internal

#endif  // QS_ENGINE_FAST_SCENARIO_SOURCE_H_
