// differential_fuzzer: the same bounded scenario (fuzz_scenario.h) through
//  * the reference engine (engine/reference/, linear scans, obviously right),
//  * the fast engine inside a tbb::task_arena of 1 thread and of 2 threads.
// All event logs must be byte-identical (JSON Lines from the one shared
// JsonlWriter), and end times and submission counts must agree; the fast
// engine's own summary (RunOptions::summary, in the 1-thread run) must be
// byte-identical to SummaryBuilder's of the reference's records. On mismatch
// the first differing lines of both logs are printed, then abort().
// Wait causes (docs/semantics.md §9) are on for inputs of odd length in the
// reference and the 1-thread run, whose logs, cause lines included, must be
// identical; the 2-thread run has them the other way, and its log must equal
// the 1-thread one once cause lines are taken out of both (they change
// nothing else).
// The logs are compared by record digests (fuzz/record_digest.h: every
// printed field, and JsonlWriter's text is a function of them), without
// formatting them; on a mismatch the runs are made again with text to
// print the difference. One input in eight (by its length) is also
// compared as text, which checks the digests against the text: logs that
// differ with equal digests, or agree with different ones, fail.
//
// Honest note: the fast engine is single-threaded today, so the two arena
// runs execute the same sequential code; they become a real determinism check
// once parts of the engine run in parallel (they inherit the arena). The
// arenas are created once (function-local statics) and idle between inputs,
// as google/fuzzing's good-fuzz-target.md asks.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tbb/task_arena.h>

#include "engine/log/event_log.h"
#include "engine/log/summary.h"
#include "engine/run.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_scenario.h"
#include "fuzz/record_digest.h"
#include "fuzz/string_log.h"

namespace {

struct Log {
  std::string text;  // empty when the run was made for its digests only
  uint64_t digest = 0;  // of the records other than cause lines
  uint64_t digest_all = 0;  // of every record
  qs::RunStats stats;
};

// A summary as bytes: its JSON and the figures the JSON leaves out.
std::string SummaryBytes(const qs::Summary& s) {
  return qs::SummaryToJson(s) + std::to_string(s.never_ran) + " " + s.never_ran_example;
}

using qs::fuzz::DigestLog;
using qs::fuzz::FirstDifference;
using qs::fuzz::StringLog;

// A scenario caught in a preemption cycle never ends by itself; both
// engines stop it at the same point (sooner than the default, for speed).
constexpr int64_t kCyclePreemptions = 1000;

// The invariants are checked on one side only, the fast engine's
// (incremental, cheap), in its 1-thread run: the logs are compared byte for
// byte, so the reference made the same decisions, and a wrong decision of
// both -- or a reference index (held_, borrowers_) that misses a job
// holding capacity, which changes its decisions -- shows as a mismatch or as
// a violation in the fast engine's state. The reference's own checker
// recounts everything after every event and cost a third of each
// execution (libFuzzer profile); the random-scenario differential test
// (engine/conformance/differential_test.cc) still runs it.
// `summary`: the fast engine's own summary (RunOptions::summary), when not null.
void RunFast(const qs::Scenario& sc, Log& log, bool check, bool wait_causes, bool text,
             qs::Summary* summary = nullptr) {
  qs::RunOptions o;
  o.check_invariants = check;
  o.cycle_preemptions = kCyclePreemptions;
  o.wait_causes = wait_causes;
  o.summary = summary;
  DigestLog digest;
  if (text) {
    StringLog w(&log.text);
    qs::TeeSink both({&w, &digest});
    log.stats = qs::RunFastEngine(sc, both, o);
  } else {
    log.text.clear();
    log.stats = qs::RunFastEngine(sc, digest, o);
  }
  log.digest = digest.digest();
  log.digest_all = digest.digest_with_causes();
}

// `summary`: SummaryBuilder's of the reference's records.
void RunReference(const qs::Scenario& sc, Log& log, bool wait_causes, bool text, qs::Summary& summary) {
  qs::SummaryBuilder builder;
  builder.set_wait_causes(wait_causes);
  DigestLog digest;
  std::vector<qs::LogSink*> to{&digest, &builder};
  std::optional<StringLog> w;
  if (text) {
    to.push_back(&w.emplace(&log.text));
  } else {
    log.text.clear();
  }
  qs::TeeSink sinks(std::move(to));
  log.stats = qs::RunReferenceEngine(sc, sinks, /*check_invariants=*/false, kCyclePreemptions, wait_causes);
  summary = builder.Build(log.stats.invariant_violations);
  log.digest = digest.digest();
  log.digest_all = digest.digest_with_causes();
}

// Whether a log line is a cause line (docs/semantics.md §9): its last key,
// `"waitCause": "..."}` (at most 40 bytes), is waitCause; only the tail is
// searched.
bool IsCauseLine(std::string_view line) {
  const size_t tail = line.size() > 48 ? line.size() - 48 : 0;
  return line.find("\"waitCause\"", tail) != std::string_view::npos;
}

// The next line of `text` from `pos` that is not a cause line ("" at the end).
std::string_view NextLine(const std::string& text, size_t& pos) {
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string_view line(text.data() + pos, end - pos);
    pos = end;
    if (!IsCauseLine(line)) return line;
  }
  return {};
}

// Whether two logs are the same once their cause lines are taken out.
bool SameWithoutCauses(const std::string& a, const std::string& b) {
  size_t pa = 0, pb = 0;
  while (true) {
    const std::string_view la = NextLine(a, pa), lb = NextLine(b, pb);
    if (la != lb) return false;
    if (la.empty()) return true;
  }
}

// The log without its cause lines (for the message of a mismatch).
std::string WithoutCauses(const std::string& text) {
  std::string out;
  size_t pos = 0;
  for (std::string_view line; !(line = NextLine(text, pos)).empty();) out.append(line);
  return out;
}

void ExpectSameStats(const Log& a, const Log& b, const char* what) {
  QS_FUZZ_CHECK(a.stats.stopped == b.stats.stopped, "differential mismatch (" << what << "): stopped '" << a.stats.stopped
                                                      << "' vs '" << b.stats.stopped << "'");
  QS_FUZZ_CHECK(a.stats.end_time == b.stats.end_time && a.stats.jobs_submitted == b.stats.jobs_submitted,
                "differential mismatch (" << what << "): end time " << a.stats.end_time << " vs " << b.stats.end_time
                                          << ", jobs " << a.stats.jobs_submitted << " vs " << b.stats.jobs_submitted);
}

// a and b were run with text: their logs must be equal, and so must their
// digests exactly when the logs are.
void ExpectSameText(const Log& a, const Log& b, const char* what) {
  if (a.text != b.text) {
    QS_FUZZ_CHECK(false, "differential mismatch (" << what << "): " << FirstDifference(a.text, b.text)
                                                   << (a.digest_all == b.digest_all
                                                           ? "\n(and the record digests agree: DigestLog, "
                                                             "fuzz/record_digest.h, misses a printed field)"
                                                           : ""));
  }
  QS_FUZZ_CHECK(a.digest_all == b.digest_all, "the logs agree but their record digests differ ("
                                                  << what << "): DigestLog (fuzz/record_digest.h) hashes "
                                                             "something the log does not print");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static tbb::task_arena* const arena1 = new tbb::task_arena(1);
  static tbb::task_arena* const arena2 = new tbb::task_arena(2);

  std::optional<qs::Scenario> sc = qs::fuzz::ScenarioFromFuzzInput(data, size);
  if (!sc) return -1;
  qs::fuzz::MaybeDumpScenario(*sc);

  // Reused across executions (their buffers keep their capacity).
  static Log& reference = *new Log;
  static Log& in1 = *new Log;
  static Log& in2 = *new Log;
  // Wait causes on for inputs of odd length: both engines write the same
  // cause lines, and the 2-thread run, with causes the other way, the same
  // log once cause lines are taken out.
  const bool causes = (size & 1) != 0;
  // Text as well as digests for one input in eight, odd and even lengths
  // alike.
  const bool text = ((size >> 1) & 7) == 0;
  // The summaries live for this execution only: kept across executions
  // (in the static logs), their allocations made libFuzzer see more mallocs
  // than frees and run a quarter of the inputs again to look for a leak.
  qs::Summary reference_summary, fast_summary;
  RunReference(*sc, reference, causes, text, reference_summary);
  arena1->execute([&] { RunFast(*sc, in1, /*check=*/true, causes, text, &fast_summary); });
  QS_FUZZ_CHECK(in1.stats.invariant_violations == 0,
                "fast engine checker: " << in1.stats.invariant_violations << " violation(s); first: "
                                        << in1.stats.violation_messages.front());
  constexpr const char* kVsReference = "A = fast engine (1-thread arena), B = reference engine";
  if (text) {
    ExpectSameText(in1, reference, kVsReference);
  } else if (in1.digest_all != reference.digest_all) {
    // Again with text, to say where (or that the digest itself is wrong).
    qs::Summary unused;
    RunReference(*sc, reference, causes, /*text=*/true, unused);
    arena1->execute([&] { RunFast(*sc, in1, /*check=*/true, causes, /*text=*/true); });
    ExpectSameText(in1, reference, kVsReference);
  }
  ExpectSameStats(in1, reference, kVsReference);
  // The fast engine's own summary against SummaryBuilder's of the
  // reference's records (both count 0 violations: the fast engine's were
  // checked above, the reference's checks are off).
  if (!qs::SameFigures(fast_summary, reference_summary)) {
    QS_FUZZ_CHECK(false, "summary mismatch (A = the fast engine's own, B = SummaryBuilder over the reference's "
                         "records):\n--- A\n" << SummaryBytes(fast_summary) << "\n--- B\n" << SummaryBytes(reference_summary));
  }
  // victimReturn BEHIND_RESERVATION is cycle-free (docs/semantics.md §6):
  // a guard stop is a failure; IN_PLACE may cycle by design.
  QS_FUZZ_CHECK(in1.stats.stopped.empty() || sc->knobs.victim_return == qs::VictimReturn::kInPlace,
                "preemption cycle under victimReturn BEHIND_RESERVATION: " << in1.stats.stopped);
  arena2->execute([&] { RunFast(*sc, in2, /*check=*/false, !causes, /*text=*/false); });
  if (in2.digest != in1.digest) {
    // Again with text, to say where (or that the digest itself is wrong).
    arena2->execute([&] { RunFast(*sc, in2, /*check=*/false, !causes, /*text=*/true); });
    QS_FUZZ_CHECK(!SameWithoutCauses(in2.text, in1.text),
                  "record digests differ but the logs without cause lines agree: DigestLog (fuzz/record_digest.h) "
                  "hashes something the log does not print");
    QS_FUZZ_CHECK(false, "differential mismatch (A = fast engine in a 2-thread arena with wait causes the other way, "
                         "B = 1-thread arena, cause lines taken out): "
                             << FirstDifference(WithoutCauses(in2.text), WithoutCauses(in1.text)));
  }
  ExpectSameStats(in2, in1, "A = fast engine in a 2-thread arena with wait causes the other way, B = 1-thread arena");
  return 0;
}
