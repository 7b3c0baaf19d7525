// File: engine/gen/qsb.h
//
// The compact binary scenario format (.qsb) for big synthetic runs: the same
// Scenario as the JSON format, without text parsing. `quotasim gen --out
// X.qsb` writes it and `quotasim run X.qsb` reads it like a .json scenario.
// traces/README.md documents the layout:
//
//   "QSB1" | u32 version | u64 payload bytes | u64 checksum | payload
//
// Fields are unsigned integers as LEB128 varints, signed ones zig-zag
// encoded, strings as a varint length and bytes, optionals as a 0/1 byte and
// the value. The head holds: source; scheduling policy; environment; job
// queue (with jobStateTimeLimitActions); knobs; submit count; event count.
// Each event: time, path kind (0 quotaShares, 1 events) and index, request
// type (the Request variant index) and the request's fields in declaration
// order (engine/model/scenario.h).
//
//  * Version 10 (written): version 9 with each event written relative to
//    the earlier ones of its block (a block still decodes on its own): the
//    time as the difference from the previous event time, the path index as
//    the difference from the previous index of its kind plus one, a
//    submission's job name as "the next generated name" (or a number, or a
//    literal) and its other strings as codes into a dictionary per field
//    and block (qsb_codec.h, SymField). A 1e7-job gen file is 264 MB
//    instead of 633 MB (BM_GenQsb in results/).
//  * Version 9 (still read): version 8 with each block's facts in the block
//    table (its submissions, named submissions, first and last event time,
//    whether it holds a request other than a job request, the capacity
//    units its submissions name) and, after the table, the units they name
//    (sorted) and whether the jobs are named "j0", "j1", ... in order. A
//    reader checks each block against its facts when it decodes it; with
//    generated names, QsbFileStream::facts() lets a run start after reading
//    only the blocks that hold share or environment requests, where earlier
//    versions needed a pass over every block first (about a sixth of a
//    1e6-job run).
//  * Version 8 (still read): version 7 with a faster checksum for the head and
//    every block: QsbChecksum's lane sum (qsb_codec.h, LaneSum: four lanes
//    of 8-byte words, xxHash64's round) instead of byte-wise FNV-1a-64,
//    which cost about 1.4 s per pass over a 1e7-job file, and a run made
//    two passes (index and stream) after gen's one. The bytes hashed and
//    everything else are version 7's.
//  * Version 7 (still read): version 6 with the knob timeLimitClock (a byte)
//    after simulation.latencies. Versions 1 to 6 hold no such knob: read, it
//    has its default (FROM_REASON), as in a JSON scenario without the key.
//  * Version 6 (still read): version 5 with the knob simulation.capacity after
//    horizonSeconds: seed (u), errorSeconds (ms), the type count and per
//    type its name, failureProbability (the IEEE-754 bits as u),
//    availabilityCsv (a string, "" once read) and its steps (count, then
//    atSeconds ms and instances per step); then simulation.latencies: seed
//    (u), the type count and per type its name and, for provision, download
//    and drain, an optional distribution (kind byte, seconds/minSeconds,
//    maxSeconds, medianSeconds in ms, sigma as IEEE-754 bits). Versions 1 to
//    5 hold neither model: read, they are absent, as in a JSON scenario
//    without the keys.
//  * Version 5 (still read): version 4 with the knob checkpointIntervalSeconds
//    (an optional, after victimReturn) and a submission's
//    StoppingCondition.MaxRuntimeInSeconds and checkpointIntervalSeconds
//    (optionals, after its outcome).
//  * Version 4 (still read): version 3 with the knob victimReturn in the head,
//    after entitledCapacity. Versions 1 to 3 hold no such knob: read, it has
//    its default (BEHIND_RESERVATION), as in a JSON scenario without the key.
//  * Version 3 (still read): version 2 with the knob entitledCapacity in the
//    head, after unassignedCapacity. Versions 1 and 2 hold no such knob: read,
//    it has its default (WITHHELD), as in a JSON scenario without the key;
//    EncodeQsb writes them (for the reader's tests) without it.
//  * Version 2 (still read): payload = u64 head bytes | head | event blocks.
//    The head ends with a block table (count, then per block: events, bytes,
//    FNV-1a-64 of its bytes); the header's hash covers the head. Blocks of
//    kQsbBlockEvents events are encoded and decoded in parallel (oneTBB),
//    each into its own slice of the events: same bytes and same Scenario at
//    any thread count; an error names the first bad block.
//  * Version 1 (still read): payload = head | events, one hash over it all,
//    decoded sequentially.
//
// Reading checks the magic, version, size and checksums, every length against
// the bytes left, every enum, and the same number ranges as the JSON parser
// (times within [0, 1e12] s, int32 API integers) and unique jobNames. Errors
// name the file and byte offset (or the event paths of a duplicate name). Writing then reading gives an equal Scenario.
//
// Thread-safety: pure functions.
#ifndef QS_ENGINE_GEN_QSB_H_
#define QS_ENGINE_GEN_QSB_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/model/event_stream.h"
#include "engine/model/scenario.h"

namespace qs::gen {

inline constexpr uint32_t kQsbVersion = 10;    // written; 1 to 10 are read
// Events per block that gen and EncodeQsb write (versions 2 to 10; readers
// take each block's count from the block table, so files with other counts,
// such as the 65,536 written before, read the same). A streamed run keeps two
// decoded blocks (ScenarioSource): at 4,096 events of about 460 bytes they
// stay in the last-level cache, and a 1e7-job run's peak RSS is 64 MB lower
// than with 65,536.
inline constexpr size_t kQsbBlockEvents = 4096;

// versions 1 and 2 are kept for tests of the reader's compatibility;
// block_events (versions 2 to 10) is a parameter so that tests can make many
// small blocks.
std::string EncodeQsb(const Scenario& s, uint32_t version = kQsbVersion,
                      size_t block_events = kQsbBlockEvents);
// A submission as views of its fields: QsbEventWriter::PutSubmit(v) writes
// the bytes Put() writes for the ScenarioEvent {time, "events[<index>]",
// SubmitServiceJobRequest with these fields}, without building it.
struct QsbSubmitView {
  SimTime time = 0;
  uint64_t index = 0;  // the path is events[index]
  std::optional<std::string_view> job_name, job_queue, service_job_type, quota_share_name, share_identifier;
  std::optional<int64_t> scheduling_priority, retry_attempts, attempt_duration_seconds, preemption_retries;
  std::string_view payload_error, payload_raw, instance_type;
  int64_t instance_count = 0;
  std::optional<int64_t> max_runtime_seconds;
  std::optional<SimTime> checkpoint_interval;
  SimTime run_time = 0;
  JobOutcome outcome = JobOutcome::kSucceeded;
};

// Room a block writer reserves per event (generated submissions take 55-75
// bytes to version 9, about 26 from version 10).
inline constexpr size_t kQsbReserveBytesPerEvent = 96;

// A block's facts (version 9's block table), as QsbEventWriter notes them
// while it writes the block and the reader notes them again to check the
// block against its table entry.
struct QsbBlockFacts {
  uint64_t events = 0;                    // (the table's event count)
  uint64_t submits = 0, named = 0;       // submissions; those with a jobName
  SimTime first_time = 0, last_time = 0;  // 0 in an empty block
  bool requests = false;                  // an event that is not a job request (IsJobRequest)
  std::vector<std::string> units;         // instance types its submissions name (no payload error), distinct
  // Its named submissions are "j<first_job>", "j<first_job + 1>", ...
  // (-1: the block has none).
  bool generated_names = true;
  int64_t first_job = -1;

  // The next event of the block.
  void NoteEvent(const ScenarioEvent& ev);
  // The next event, a submission (QsbEventWriter::PutSubmit).
  void NoteSubmit(SimTime time, std::optional<std::string_view> job_name, std::optional<std::string_view> unit);
  // The same, with the job name already parsed: `named` whether it has
  // one, `number` its GeneratedJobNumber.
  void NoteSubmitParsed(SimTime time, bool named_job, std::optional<int64_t> number,
                        std::optional<std::string_view> unit);

 private:
  void NoteTime(SimTime time);
};

namespace qsb_internal {
class Writer;
}

// The events of one block, in order, as the encoder receives them (from
// version 10, each event is written relative to the block's earlier ones).
class QsbEventWriter {
 public:
  // Room for `bytes` up front: a block grown by doubling was copied over and
  // over (the copies and their fresh pages were a fifth of `gen`'s samples
  // at 1e7 jobs); room never written is never touched.
  explicit QsbEventWriter(size_t bytes = 0, uint32_t version = kQsbVersion);
  ~QsbEventWriter();
  void Put(const ScenarioEvent& ev);
  void PutSubmit(const QsbSubmitView& v);
  std::string Take();
  QsbBlockFacts TakeFacts() { return std::move(facts_); }

 private:
  std::unique_ptr<qsb_internal::Writer> w_;  // the bytes and version 10's state
  QsbBlockFacts facts_;
};

// Version 2 of events given by a producer rather than held in a Scenario:
// `events(first, end, w)` puts events first..end-1 in order into w; it is
// called once per block, in parallel, so it must be safe to call
// concurrently. `head` gives everything but the events (its events are not
// read; submit_count must be set). EncodeQsb(s) equals EncodeQsbEvents of
// s's own events byte for byte; `quotasim gen` uses it to encode without
// holding the generated scenario whole.
using QsbEventRange = std::function<void(size_t first, size_t end, QsbEventWriter& w)>;
std::string EncodeQsbEvents(const Scenario& head, size_t nevents, const QsbEventRange& events,
                            size_t block_events = kQsbBlockEvents, uint32_t version = kQsbVersion);
// The same bytes in parts: the file is `prefix` then the blocks in order.
// WriteQsbParts() writes them to a file without joining them, freeing each
// block once written, so a big file is never held twice.
struct QsbParts {
  std::string prefix;  // frame header, head length, head (with the block table)
  std::vector<std::string> blocks;
};
QsbParts EncodeQsbParts(const Scenario& head, size_t nevents, const QsbEventRange& events,
                        size_t block_events = kQsbBlockEvents, uint32_t version = kQsbVersion);
// The pieces of version 10 (or 2 to 9) for a writer that encodes the blocks itself (a
// streaming `gen`): each block is QsbEventWriter bytes of consecutive
// events; QsbPrefix is what precedes the blocks in the file, given every
// block's events, bytes, QsbChecksum and facts (QsbEventWriter::TakeFacts).
// EncodeQsbParts is built on them.
struct QsbBlockInfo {
  uint64_t events = 0, bytes = 0, sum = 0;
  QsbBlockFacts facts;  // written from version 9
};
// The checksum of a block (or head) of a file of `version` (FNV-1a-64 to
// version 7, the lane sum from 8).
uint64_t QsbChecksum(std::string_view bytes, uint32_t version = kQsbVersion);
std::string QsbPrefix(const Scenario& head, size_t nevents, const std::vector<QsbBlockInfo>& blocks,
                      uint32_t version = kQsbVersion);
absl::Status WriteQsbParts(QsbParts parts, const std::string& path);
// memory_bytes > 0: refuse, before decoding, a file whose events cannot fit
// in that much memory (CheckMemoryBudget); ReadQsbFile passes the machine's.
absl::StatusOr<Scenario> DecodeQsb(std::string_view bytes, std::string_view source,
                                   uint64_t memory_bytes = 0);

absl::Status WriteQsbFile(const Scenario& s, const std::string& path);
// Writes already encoded .qsb bytes (EncodeQsb, GenerateQsb) to `path`.
absl::Status WriteQsbBytes(std::string_view bytes, const std::string& path);
absl::StatusOr<Scenario> ReadQsbFile(const std::string& path);

// A .qsb file read block by block (an EventStream): what `quotasim run
// X.qsb` uses, so that the run holds the engine's compact job records, not
// the request objects. Open() checks the header, the head and the block
// table; each ReadBlock() reads its block from the file (pread) and checks
// it as DecodeQsb does, with the same messages (from version 9, also
// against its facts in the block table). IndexEventStream
// (engine/model/scenario_index.h) makes the checks that need every block,
// except for a version 9 or 10 file with generated job names: its Open() checks
// the submit count and the time order across blocks from the block table,
// no two generated names can be equal, and facts() is set, so that the
// index reads only the blocks with requests other than job requests.
// Version 1 files, which have no blocks, are decoded whole at Open() and
// served as one block.
class QsbFileStream : public EventStream {
 public:
  // memory_bytes > 0: refuse, before reading the events, a file whose run
  // cannot fit in that much memory (kMinStreamRunBytesPerEvent).
  static absl::StatusOr<std::unique_ptr<QsbFileStream>> Open(const std::string& path, uint64_t memory_bytes = 0);
  // The same over .qsb bytes in memory (tests, benchmarks); `source` names
  // them in messages.
  static absl::StatusOr<std::unique_ptr<QsbFileStream>> FromBytes(std::string bytes, std::string_view source);
  ~QsbFileStream() override;

  const Scenario& head() const override { return head_; }
  size_t num_events() const override { return nevents_; }
  size_t num_blocks() const override;
  absl::Status ReadBlock(size_t b, std::vector<ScenarioEvent>& out) const override;
  // Each event decoded into one scratch event, only the non-job requests
  // kept: the index of a 1e6-job run reads the few blocks that hold its
  // handful of share requests. Any error is ReadBlock()'s own (the
  // block is then read again whole, for the same message).
  absl::Status ReadBlockRequests(size_t b, std::vector<ScenarioEvent>& out) const override;
  const StreamFacts* facts() const override;

 private:
  struct Impl;
  explicit QsbFileStream(std::unique_ptr<Impl> impl);
  // Open() and FromBytes(): the header, head and block table of `size` bytes.
  static absl::StatusOr<std::unique_ptr<QsbFileStream>> OpenImpl(std::unique_ptr<Impl> impl, uint64_t size,
                                                                 uint64_t memory_bytes);
  std::unique_ptr<Impl> impl_;
  Scenario head_;
  size_t nevents_ = 0;
};

// True when `path` names a .qsb file (by its extension).
bool IsQsbPath(const std::string& path);

// LoadScenarioFile for either format, chosen by the extension (.qsb or not).
// A JSON file is refused before it is read when twice its size (the text,
// and a parsed document at least as large) exceeds memory_bytes, which
// defaults to this machine's (0: no check).
absl::StatusOr<Scenario> LoadAnyScenarioFile(const std::string& path);
absl::StatusOr<Scenario> LoadAnyScenarioFile(const std::string& path, uint64_t memory_bytes);

}  // namespace qs::gen

#endif  // QS_ENGINE_GEN_QSB_H_
