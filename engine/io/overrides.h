// File: engine/io/overrides.h
//
// `--set KEY=VALUE` (run, sweep, compare, whatif) and `sweep --vary
// KEY=V1,V2`: a change to a scenario's configuration, for what-if runs
// without editing the file. Keys:
//
//   <knob> or simulation.<knob>     a simulation knob of the scenario format:
//                                   submitLatencySeconds, provisionSeconds, downloadSeconds,
//                                   schedulingIntervalSeconds, preemptionDrainSeconds,
//                                   checkpointIntervalSeconds (or none), horizonSeconds (or none),
//                                   shareOrder, victimOrder, backfill, unassignedCapacity,
//                                   entitledCapacity, victimReturn, timeLimitClock,
//                                   capacity.seed, capacity.errorSeconds,
//                                   capacity.<type>.failureProbability, latencies.seed
//   <share>.borrowLimit             -1 (unlimited) or a percentage >= 0
//   <share>.strategy                RESERVE | LEND | LEND_AND_BORROW
//   <share>.capacityLimits.<type>   instances; 0 removes the type from the share's limits
//   <share>.inSharePreemption       ENABLED | DISABLED
//   *.<setting>                     the setting for every share (*.borrowLimit: every
//                                   LEND_AND_BORROW share, the only ones AWS takes it on)
//   environment.capacityLimits.<type>  instances; 0 removes the type
//   jobQueue.timeLimit.<reason>     maxTimeSeconds of the queue's RUNNABLE TERMINATE action for
//                                   the reason (600-86400), or none to remove it
//
// A share, environment or queue setting holds for the whole run: the
// share's CreateQuotaShare and every UpdateQuotaShare of it that sets the
// field carry the value (an UpdateQuotaShare's capacityLimits get the type's
// entry when they list it), and so do the environment's and queue's
// updates that list the type or set the actions. Setting a strategy other
// than LEND_AND_BORROW drops the request's borrowLimit (AWS rejects one
// there) unless a --set gives one too. Overrides apply in the order given;
// a later one for the same key wins.
//
// Errors (InvalidArgumentError) name the --set argument: an unknown key
// (with the list of keys), a value of the wrong form, a share the scenario
// never creates (with its shares), and a change that turns a request AWS
// accepted into one it rejects (with the request's JSON path and the
// ClientException message).
//
// Usage:
//   absl::StatusOr<Overrides> o = Overrides::Parse({"QS1.borrowLimit=50"});
//   absl::Status st = ApplyOverrides(*o, scenario);          // held whole
//   OverriddenStream view(stream, *o);                       // streamed; then
//   st = view.Check(); ... IndexEventStream(view) ...; o->CheckShares(index.share_requests)
//
// Thread-safety: an Overrides is immutable after Parse(); ApplyToEvent and
// OverriddenStream::ReadBlock may run concurrently.
#ifndef QS_ENGINE_IO_OVERRIDES_H_
#define QS_ENGINE_IO_OVERRIDES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/model/event_stream.h"
#include "engine/model/scenario.h"

namespace qs {

class Overrides {
 public:
  enum class Kind : uint8_t {
    kKnob,
    kShareBorrowLimit,
    kShareStrategy,
    kShareLimit,
    kShareInSharePreemption,
    kEnvironmentLimit,
    kTimeLimit,
  };
  struct Item {
    std::string arg;    // KEY=VALUE as given, for messages
    std::string key, value;
    Kind kind = Kind::kKnob;
    std::string share;  // share settings
    std::string name;   // instance type (limits) or reason (time limits)
    int64_t number = 0;  // borrowLimit, instances, seconds
    bool none = false;   // timeLimit none
    Strategy strategy = Strategy::kReserve;
    Toggle toggle = Toggle::kEnabled;
  };

  Overrides() = default;
  // Each argument is KEY=VALUE. Checks the key and the value's form.
  static absl::StatusOr<Overrides> Parse(const std::vector<std::string>& args);
  // One KEY=VALUE (sweep checks each --vary value with it).
  static absl::StatusOr<Item> ParseItem(std::string_view arg);

  bool empty() const { return items_.empty(); }
  const std::vector<Item>& items() const { return items_; }
  // True when some item changes requests (shares, environment, queue), not
  // only the head: a streamed scenario then needs an OverriddenStream.
  bool touches_requests() const;
  // The args, space-separated (for provenance and table titles).
  std::string ToString() const;

  // Knobs, the environment's and the queue's settings in `head`.
  absl::Status ApplyToHead(Scenario& head) const;
  // A share, environment or queue request. Other requests are unchanged.
  absl::Status ApplyToEvent(ScenarioEvent& ev) const;
  // Every share key names a share some CreateQuotaShare in `events` creates.
  absl::Status CheckShares(const std::vector<ScenarioEvent>& events) const;
  // Instance types the overrides name (capacity limits, capacity model).
  std::vector<std::string> Units() const;

  // The keys, for usage errors and --help.
  static std::string KeysHelp();

 private:
  std::vector<Item> items_;
};

// Applies `o` to a scenario held whole: head, every request, share names.
absl::Status ApplyOverrides(const Overrides& o, Scenario& sc);

// A streamed scenario seen through overrides: head() and every block's
// requests carry them. `base` and `o` must outlive it. Call Check() once
// (the head's changes); block errors come from ReadBlock, which
// IndexEventStream calls before a run for every block (every block with a
// request other than a job request, when the base states facts()).
class OverriddenStream : public EventStream {
 public:
  OverriddenStream(const EventStream& base, const Overrides& o);
  absl::Status Check() const { return head_status_; }
  const Scenario& head() const override { return head_; }
  size_t num_events() const override { return base_.num_events(); }
  size_t num_blocks() const override { return base_.num_blocks(); }
  absl::Status ReadBlock(size_t b, std::vector<ScenarioEvent>& out) const override;
  // The base's: overrides change no job request, and the blocks with other
  // requests are read through ReadBlock.
  const StreamFacts* facts() const override { return base_.facts(); }

 private:
  const EventStream& base_;
  const Overrides& o_;
  Scenario head_;
  absl::Status head_status_;
};

}  // namespace qs

#endif  // QS_ENGINE_IO_OVERRIDES_H_
