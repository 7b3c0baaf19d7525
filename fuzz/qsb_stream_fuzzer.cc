// qsb_stream_fuzzer: the streamed run of a .qsb file (QsbFileStream +
// RunFastEngine(EventStream), what `quotasim run X.qsb` does) against its
// simple reference, decoding the file whole (DecodeQsb) and running the
// Scenario.
//
// Input: 4 control bytes, then a bounded scenario (fuzz_scenario.h). The
// scenario is encoded as .qsb of the version written (bit 6 of c0 set) or 2
// in blocks of 1 + c0 % 64 events (version 1 when c0 is 255); when c3 != 0,
// the byte at (c1 | c2 << 8) modulo the file size is XORed with c3. Then:
//  * DecodeQsb fails <=> the stream fails to open, to index or to run
//    (version 9+ with generated names checks most blocks only as the run
//    reads them, and a run that stops early reads the rest);
//  * when both read it, the streamed run's log (with 1 and with 2 threads:
//    the next block is decoded on a oneTBB task) equals the whole run's, byte
//    for byte, with the same stats.
// On mismatch: the first differing lines, then abort().
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <tbb/task_arena.h>

#include "engine/log/event_log.h"
#include "engine/gen/qsb.h"
#include "engine/run.h"
#include "engine/model/scenario_index.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_scenario.h"
#include "fuzz/string_log.h"

using qs::fuzz::FirstDifference;
using qs::fuzz::StringLog;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return -1;
  const uint8_t c0 = data[0], c1 = data[1], c2 = data[2], c3 = data[3];
  std::optional<qs::Scenario> sc = qs::fuzz::ScenarioFromFuzzInput(data + 4, size - 4);
  if (!sc) return -1;
  qs::fuzz::MaybeDumpScenario(*sc);
  // Version 1 whole, or the version written (it carries every knob) or 2
  // (still read; without entitledCapacity and victimReturn) in blocks of
  // 1-64 events.
  const uint32_t version = c0 == 255 ? 1 : (c0 & 64) != 0 ? qs::gen::kQsbVersion : 2;
  std::string bytes = version == 1 ? qs::gen::EncodeQsb(*sc, 1) : qs::gen::EncodeQsb(*sc, version, 1 + c0 % 64);
  if (c3 != 0) bytes[(static_cast<size_t>(c1) | static_cast<size_t>(c2) << 8) % bytes.size()] ^= static_cast<char>(c3);

  absl::StatusOr<qs::Scenario> whole = qs::gen::DecodeQsb(bytes, "fuzz.qsb");
  auto stream = qs::gen::QsbFileStream::FromBytes(bytes, "fuzz.qsb");
  std::optional<qs::ScenarioIndex> index;
  std::string stream_error;
  if (!stream.ok()) {
    stream_error = std::string(stream.status().message());
  } else if (absl::StatusOr<qs::ScenarioIndex> idx = qs::IndexEventStream(**stream); !idx.ok()) {
    stream_error = std::string(idx.status().message());
  } else {
    index = *std::move(idx);
  }
  if (!whole.ok() && stream_error.empty()) {
    // Opened and indexed: the blocks the index did not read fail the run.
    std::string log;
    StringLog w(&log);
    qs::RunOptions o;
    o.check_invariants = false;
    absl::StatusOr<qs::RunStats> ran = qs::RunFastEngine(**stream, *index, w, o);
    QS_FUZZ_CHECK((*stream)->facts() != nullptr && !ran.ok(),
                  "whole decoding fails (" << whole.status().message() << ") but the stream "
                                           << ((*stream)->facts() == nullptr ? "indexed it" : "ran it"));
    stream_error = std::string(ran.status().message());
  }
  QS_FUZZ_CHECK(whole.ok() == stream_error.empty(),
                "whole decoding and streaming disagree on the file: whole "
                    << (whole.ok() ? "read it" : std::string(whole.status().message())) << "; stream "
                    << (stream_error.empty() ? "read it" : stream_error));
  if (!whole.ok()) {
    QS_FUZZ_CHECK(!stream_error.empty() && stream_error.rfind("fuzz.qsb: ", 0) == 0,
                  "stream error without the source: " << stream_error);
    return 0;
  }
  QS_FUZZ_CHECK(index->job_names.num_ordinals() <= whole->submit_count, "more named submissions than submissions");

  std::string want;
  qs::RunStats want_stats;
  {
    StringLog w(&want);
    qs::RunOptions o;
    o.check_invariants = false;  // the invariant fuzzer checks; here only the equality counts
    want_stats = qs::RunFastEngine(*whole, w, o);
  }
  static tbb::task_arena arenas[2] = {tbb::task_arena(1), tbb::task_arena(2)};
  for (tbb::task_arena& arena : arenas) {
    std::string got;
    absl::StatusOr<qs::RunStats> got_stats;
    arena.execute([&] {
      StringLog w(&got);
      qs::RunOptions o;
      o.check_invariants = false;
      got_stats = qs::RunFastEngine(**stream, *index, w, o);
    });
    QS_FUZZ_CHECK(got_stats.ok(), "the streamed run failed: " << got_stats.status().message());
    QS_FUZZ_CHECK(got == want, "streamed and whole logs differ (" << arena.max_concurrency()
                                                                  << " threads; A whole, B streamed)\n"
                                                                  << FirstDifference(want, got));
    QS_FUZZ_CHECK(got_stats->events_processed == want_stats.events_processed &&
                      got_stats->end_time == want_stats.end_time &&
                      got_stats->jobs_submitted == want_stats.jobs_submitted,
                  "streamed and whole runs' stats differ");
  }
  return 0;
}
