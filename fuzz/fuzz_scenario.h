// File: fuzz/fuzz_scenario.h
//
// Turns fuzzer bytes into a small, bounded Scenario for the engine fuzzers
// (scenario_invariants_fuzzer, differential_fuzzer).
//
// Two input forms:
//  * Bytes starting with '{' are a scenario JSON document (the format of
//    ../shared/spec/scenario-format.md). It is parsed with ParseScenario and
//    used only if it is within the size bounds below. This is how the bundled
//    and shared scenarios seed the corpora, and how a reproduction can be
//    written by hand.
//  * Anything else is decoded with FuzzedDataProvider: 1-5 capacity units,
//    1-20 quota shares of every strategy / borrow limit / in-share flag /
//    state, knob values, then a sequence of timed requests (submissions,
//    priority updates, terminations, share limit and strategy changes,
//    environment changes, snapshots), a few of them requests AWS would reject.
//    As in re2's fuzzer, "false / zero means the default", so short inputs
//    give plain scenarios.
//  * Bytes starting with kContendedMagic decode the rest into a dense,
//    contended scenario (DecodeContended in fuzz_scenario.cc): 2-4 shares
//    that lend and borrow on one or two types, limits adding up to the
//    environment, always kMaxJobs overlapping submissions (some with
//    preemption retry limits, some with a MaxRuntimeInSeconds below their
//    run), follow-ups; checkpoints in one input of three. Even
//    the input of that one byte exercises borrowing and reclaim, so a
//    fuzzer started from an empty corpus reaches them at once (issue #16:
//    from an empty corpus the plain form found too little).
//  * Bytes starting with kRandomMagic: the next (up to) 8 bytes, little
//    endian, seed testing::RandomScenario (engine/testing/random_scenario.h:
//    every strategy, knob and request kind, up to kMaxRandomJobs jobs), the
//    generator of the random-scenario differential test. Every new seed is a
//    whole new scenario, so an empty corpus samples the space that test
//    samples (it caught all six outside bugs of issue #16) instead of
//    mutating one default; a mutated byte elsewhere is ignored.
//
// Bounds keep every run cheap (about 1,000 runs per second or more for the
// differential fuzzer, which runs three engines, under ASan+UBSan on the
// 2-core machine; results/fuzz-nightly-*.md): at most kMaxJobs submissions
// and kMaxEvents timed requests, times within ~20 simulated minutes, run
// times up to 5 minutes, drain up to a minute, more than 6 shares in 1 input
// of 16.
#ifndef QS_FUZZ_FUZZ_SCENARIO_H_
#define QS_FUZZ_FUZZ_SCENARIO_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "engine/model/scenario.h"

namespace qs::fuzz {

inline constexpr int kMaxJobs = 12;
inline constexpr int kMaxEvents = 20;      // timed requests, submissions included
inline constexpr size_t kMaxInputBytes = 8192;
inline constexpr uint8_t kContendedMagic = 0xC7;  // first byte of the contended form
inline constexpr uint8_t kRandomMagic = 0xC9;     // first byte of the random-scenario form
inline constexpr int kMaxRandomJobs = 60;         // jobs of the random-scenario form

// The scenario for this input, or nullopt when the input is rejected (too
// large, unparseable JSON, or a JSON scenario beyond the bounds).
std::optional<Scenario> ScenarioFromFuzzInput(const uint8_t* data, size_t size);

// True when `sc` is small enough to simulate inside the fuzzing budget.
bool WithinFuzzBounds(const Scenario& sc);
// The same with other job and event limits (the random-scenario form).
bool WithinBounds(const Scenario& sc, int max_jobs, int max_events);

// If the environment variable QS_FUZZ_DUMP_SCENARIO is set, writes
// ScenarioToJson(sc) to stderr (used when reproducing a crash: the dumped
// JSON is itself a valid fuzzer input and a `quotasim run` scenario).
void MaybeDumpScenario(const Scenario& sc);

}  // namespace qs::fuzz

#endif  // QS_FUZZ_FUZZ_SCENARIO_H_
