// Engine benchmarks (issue "Millions of submissions"): end to end, fast vs
// reference, sweep scaling, event-log cost and a preemption-heavy workload.
//
// Every benchmark checks its answer once before timing (simdjson style): the
// fast engine's summary must equal the reference engine's where the
// reference runs, and every run must report zero invariant violations;
// otherwise the benchmark is skipped with an error, never timed.
//
// Counters: jobs_per_s and events_per_s (rates), peak_rss_bytes (process
// high-water mark after the benchmark) and bytes_per_job (that mark divided
// by the jobs of the largest scenario held at once).
//
// --qs_smoke (used by CTest) shrinks every size so the suite runs in seconds.
#include <sys/resource.h>

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <ostream>
#include <streambuf>
#include <optional>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "bench/bench_main.h"
#include "absl/strings/str_cat.h"
#include "engine/log/async_log.h"
#include "engine/fast/engine.h"
#include "engine/log/event_log.h"
#include "engine/gen/generator.h"
#include "engine/gen/qsb.h"
#include "engine/run.h"
#include "engine/log/summary.h"
#include "engine/testing/scenario_builder.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/partitioner.h"
#include "oneapi/tbb/task_arena.h"

namespace qs {
namespace {


int64_t Scale(int64_t jobs) { return bench::Smoke() ? std::max<int64_t>(200, jobs / 500) : jobs; }

int64_t PeakRssBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

// The workload of a row: `gen`'s default profile (steady) unless asked.
gen::GenOptions Options(int64_t jobs, uint64_t seed = 11, gen::Profile profile = gen::Profile::kSteady) {
  gen::GenOptions o = gen::GenOptions::For(profile);
  o.jobs = jobs;
  o.shares = 20;
  o.units = 5;
  o.seed = seed;
  o.preemption = true;
  return o;
}

// Scenarios are cached per size: generating them is measured only in
// BM_EndToEnd.
const Scenario& CachedScenario(int64_t jobs, double load = gen::GenOptions().load) {
  static std::map<std::pair<int64_t, double>, std::unique_ptr<Scenario>> cache;
  auto& slot = cache[{jobs, load}];
  if (!slot) {
    gen::GenOptions o = Options(jobs);
    o.load = load;
    slot = std::make_unique<Scenario>(*gen::Generate(o));
  }
  return *slot;
}

// The fast vs reference comparison runs at load 0.5: the reference rescans
// the queued and running jobs for every decision, and those grow with the
// run (the generator scales the arrival rate with it) and with the load; at
// the steady profile's load 0.7 the 1e5-job reference run would dominate
// the suite.
constexpr double kComparisonLoad = 0.5;

struct Result {
  std::string summary;
  RunStats stats;
  Summary figures;  // what `summary` is the JSON of
};

Result RunFast(const Scenario& sc, LogSink* extra = nullptr) {
  SummaryBuilder b;
  std::vector<LogSink*> sinks = {&b};
  if (extra) sinks.push_back(extra);
  TeeSink tee(sinks);
  RunOptions o;
  o.check_invariants = false;
  Result r;
  r.stats = RunFastEngine(sc, tee, o);
  r.summary = SummaryToJson(b.Build(r.stats.invariant_violations));
  return r;
}

Result RunReference(const Scenario& sc) {
  SummaryBuilder b;
  Result r;
  r.stats = RunReferenceEngine(sc, b, /*check_invariants=*/false);  // as RunFast
  r.summary = SummaryToJson(b.Build(r.stats.invariant_violations));
  return r;
}

// One checked run: invariants on, and the reference where it is affordable.
bool Verify(benchmark::State& state, const Scenario& sc, bool with_reference) {
  SummaryBuilder b;
  RunOptions o;
  o.check_invariants = true;
  RunStats stats = RunFastEngine(sc, b, o);
  if (stats.invariant_violations != 0) {
    state.SkipWithError(("invariant violations: " + stats.violation_messages[0]).c_str());
    return false;
  }
  if (with_reference && SummaryToJson(b.Build(0)) != RunReference(sc).summary) {
    state.SkipWithError("fast and reference engine summaries differ");
    return false;
  }
  return true;
}

void SetCounters(benchmark::State& state, int64_t jobs, int64_t events) {
  state.counters["jobs_per_s"] = benchmark::Counter(static_cast<double>(jobs), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_rss_bytes"] = static_cast<double>(PeakRssBytes());
  state.counters["bytes_per_job"] = static_cast<double>(PeakRssBytes()) / static_cast<double>(jobs);
}

// Where a streamed run's summary is made (issue #15, item 3).
enum class SummaryWay {
  kInEngine,      // the fast engine's own (RunOptions::summary), no job records: `run --summary`
  kEngineThread,  // SummaryBuilder over the records, on the engine's thread (`run` before item 3)
  kSecondThread,  // SummaryBuilder on AsyncLog's second thread (`run --events` builds it so)
};

// `quotasim run X.qsb --summary S` in process: the file streamed into the
// fast engine, the summary made `way`.
absl::StatusOr<Result> StreamRun(const std::string& path, const RunOptions& run_options,
                                 SummaryWay way = SummaryWay::kInEngine) {
  absl::StatusOr<std::unique_ptr<gen::QsbFileStream>> stream = gen::QsbFileStream::Open(path);
  if (!stream.ok()) return stream.status();
  RunOptions ro = run_options;
  Result r;
  SummaryBuilder b;
  NullSink none;
  std::optional<AsyncLog> async;
  LogSink* sink = &b;
  if (way == SummaryWay::kInEngine) {
    ro.summary = &r.figures;
    ro.job_records = false;
    sink = &none;
  } else if (way == SummaryWay::kSecondThread) {
    async.emplace(nullptr, &b);
    sink = &*async;
  }
  absl::StatusOr<RunStats> stats = RunFastEngine(**stream, *sink, ro);
  if (async) async->Flush();
  if (!stats.ok()) return stats.status();
  r.stats = *stats;
  if (way != SummaryWay::kInEngine) r.figures = b.Build(r.stats.invariant_violations);
  r.summary = SummaryToJson(r.figures);
  return r;
}

// The regime the run was in, beside its speed (issue "Engine v2", item 7):
// the backlog (peak, mean over the arrivals, at the last arrival), the
// environment's utilisation (mean over the types), the waits and the
// rejected requests.
void SetRegimeCounters(benchmark::State& state, const Summary& s) {
  state.counters["backlog_peak"] = static_cast<double>(s.backlog.peak);
  state.counters["backlog_mean"] = s.backlog.mean_over_arrivals;
  state.counters["backlog_end"] = static_cast<double>(s.backlog.at_last_submission);
  double util = 0;
  for (const auto& [unit, u] : s.utilisation) util += u;
  state.counters["utilisation"] = s.utilisation.empty() ? 0.0 : util / static_cast<double>(s.utilisation.size());
  state.counters["wait_p50_s"] = static_cast<double>(s.total.wait.p50) / 1000.0;
  state.counters["wait_p95_s"] = static_cast<double>(s.total.wait.p95) / 1000.0;
  state.counters["wait_p99_s"] = static_cast<double>(s.total.wait.p99) / 1000.0;
  state.counters["rejected"] = static_cast<double>(s.rejected_requests);
}

absl::StatusOr<Result> GenerateAndStream(const gen::GenOptions& o, const std::string& path) {
  if (absl::Status st = gen::GenerateQsbFile(o, path); !st.ok()) return st;
  RunOptions ro;
  ro.check_invariants = true;
  return StreamRun(path, ro);
}

void BM_EndToEnd(benchmark::State& state) {
  const gen::Profile profile = state.range(0) == 0 ? gen::Profile::kSteady : gen::Profile::kStress;
  const int64_t jobs = Scale(state.range(1));
  const std::string path =
      (std::filesystem::temp_directory_path() / absl::StrCat("quotasim-bench-", getpid(), "-", jobs, ".qsb")).string();
  // The checked run: no invariant violation; at small sizes the reference's
  // summary.
  absl::StatusOr<Result> checked = GenerateAndStream(Options(jobs, 11, profile), path);
  if (!checked.ok()) {
    state.SkipWithError(std::string(checked.status().message()).c_str());
    return;
  }
  if (checked->stats.invariant_violations != 0) {
    state.SkipWithError(("invariant violations: " + checked->stats.violation_messages[0]).c_str());
    return;
  }
  if (jobs <= 1000 && checked->summary != RunReference(*gen::Generate(Options(jobs, 11, profile))).summary) {
    state.SkipWithError("streamed fast engine and reference engine summaries differ");
    return;
  }
  int64_t events = 0;
  for (auto _ : state) {
    absl::StatusOr<Result> r = GenerateAndStream(Options(jobs, 11, profile), path);
    if (!r.ok() || r->summary != checked->summary) {
      state.SkipWithError("the timed run's summary differs from the checked run's");
      break;
    }
    events = r->stats.events_processed;
  }
  std::filesystem::remove(path);
  SetCounters(state, jobs, events);
  SetRegimeCounters(state, checked->figures);
}
// profile 0: steady (gen's default), 1: stress.
BENCHMARK(BM_EndToEnd)
    ->ArgNames({"profile", "jobs"})
    ->Args({0, 100'000})
    ->Args({0, 1'000'000})
    ->Args({1, 100'000})
    ->Args({1, 1'000'000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// `quotasim gen --out X.qsb` alone (GenerateQsbFile): wall time and the
// process's peak RSS, which must not grow with the jobs (the jobs are drawn
// and encoded window by window). scripts/bench runs the 1e7 row in a
// process of its own, so that the peak is gen's alone.
void BM_GenQsb(benchmark::State& state) {
  const int64_t jobs = Scale(state.range(0));
  const std::string path =
      (std::filesystem::temp_directory_path() / absl::StrCat("quotasim-bench-gen-", getpid(), ".qsb")).string();
  for (auto _ : state) {
    if (absl::Status st = gen::GenerateQsbFile(Options(jobs), path); !st.ok()) {
      state.SkipWithError(std::string(st.message()).c_str());
      break;
    }
  }
  std::error_code ec;
  state.counters["file_bytes"] = static_cast<double>(std::filesystem::file_size(path, ec));
  std::filesystem::remove(path, ec);
  state.counters["jobs_per_s"] = benchmark::Counter(static_cast<double>(jobs), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_rss_bytes"] = static_cast<double>(PeakRssBytes());
}
BENCHMARK(BM_GenQsb)->ArgName("jobs")->Arg(1'000'000)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GenQsb)->ArgName("jobs")->Arg(10'000'000)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// The 1e6-job (default profile) .qsb file of the rows that time only the
// run, written once per row (untimed) into the temp folder; "" with the row
// marked skipped when it cannot be written. The caller removes it.
std::string WriteRunFile(benchmark::State& state, const char* tag) {
  const std::string path =
      (std::filesystem::temp_directory_path() / absl::StrCat("quotasim-bench-", tag, "-", getpid(), ".qsb")).string();
  if (absl::Status st = gen::GenerateQsbFile(Options(Scale(1'000'000)), path); !st.ok()) {
    state.SkipWithError(std::string(st.message()).c_str());
    return "";
  }
  return path;
}

// RunOptions::huge_pages (engine/util/huge_pages.h) on and off: the streamed
// run of `quotasim run X.qsb --summary S` on a 1e6-job file written once
// (untimed). Counters: minor page faults and system CPU seconds of the
// process per run (getrusage), beside the wall time. The engine thread is
// instruction-bound, so the wall time may move less than the faults.
void BM_HugePages(benchmark::State& state) {
  const bool huge = state.range(0) != 0;
  const std::string path = WriteRunFile(state, "huge");
  if (path.empty()) return;
  auto usage = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u;
  };
  double faults = 0, sys_s = 0;
  std::string first;
  for (auto _ : state) {
    const rusage before = usage();
    RunOptions ro;
    ro.huge_pages = huge;
    absl::StatusOr<Result> run = StreamRun(path, ro);
    const rusage after = usage();
    if (!run.ok() || run->stats.invariant_violations != 0) {
      state.SkipWithError("the run failed or violated an invariant");
      break;
    }
    if (first.empty()) first = run->summary;
    if (run->summary != first) {
      state.SkipWithError("runs gave different summaries");
      break;
    }
    faults += static_cast<double>(after.ru_minflt - before.ru_minflt);
    sys_s += static_cast<double>(after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
             1e-6 * static_cast<double>(after.ru_stime.tv_usec - before.ru_stime.tv_usec);
  }
  std::filesystem::remove(path);
  state.counters["minor_faults"] = benchmark::Counter(faults, benchmark::Counter::kAvgIterations);
  state.counters["sys_seconds"] = benchmark::Counter(sys_s, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_HugePages)->ArgName("huge_pages")->Arg(0)->Arg(1)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();

// Where `quotasim run X.qsb --summary S` makes the summary (issue #15,
// item 3): 0, the fast engine keeps it itself and makes no job records
// (what `run` does with no --events); 1, SummaryBuilder over the records on
// the engine's thread (what it did before); 2, SummaryBuilder on AsyncLog's
// second thread (what it does with --events). The 1e6-job steady file is
// written once (untimed); every run's summary is checked against way 1's.
// Wall time and the process's CPU time (all threads) side by side: compare
// the rows as ratios.
void BM_SummaryWay(benchmark::State& state) {
  const auto way = static_cast<SummaryWay>(state.range(0));
  const std::string path = WriteRunFile(state, "summary");
  if (path.empty()) return;
  RunOptions ro;
  ro.check_invariants = true;
  absl::StatusOr<Result> checked = StreamRun(path, ro, SummaryWay::kEngineThread);
  for (auto _ : state) {
    absl::StatusOr<Result> run = StreamRun(path, ro, way);
    if (!run.ok() || !checked.ok() || run->summary != checked->summary) {
      state.SkipWithError("the summary differs from SummaryBuilder's on the engine's thread");
      break;
    }
  }
  std::filesystem::remove(path);
}
BENCHMARK(BM_SummaryWay)->ArgName("summary_way")->Arg(0)->Arg(1)->Arg(2)->Iterations(3)->Unit(benchmark::kMillisecond)
    ->UseRealTime()->MeasureProcessCPUTime();

// The same workload through both engines: the speed-up is the ratio of the
// two rows at equal size.
void BM_FastEngine(benchmark::State& state) {
  const Scenario& sc = CachedScenario(Scale(state.range(0)), kComparisonLoad);
  if (!Verify(state, sc, sc.submit_count <= 1'000)) return;
  int64_t events = 0;
  for (auto _ : state) events = RunFast(sc).stats.events_processed;
  SetCounters(state, sc.submit_count, events);
}
BENCHMARK(BM_FastEngine)->ArgName("jobs")->Arg(1'000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

void BM_ReferenceEngine(benchmark::State& state) {
  const Scenario& sc = CachedScenario(Scale(state.range(0)), kComparisonLoad);
  if (!Verify(state, sc, false)) return;
  int64_t events = 0;
  std::string summary;
  for (auto _ : state) {
    Result r = RunReference(sc);
    events = r.stats.events_processed;
    summary = std::move(r.summary);
  }
  // Its answer, checked after the one timed run (sizes where the fast
  // benchmark cannot afford the reference first).
  if (summary != RunFast(sc).summary) {
    state.SkipWithError("fast and reference engine summaries differ");
    return;
  }
  SetCounters(state, sc.submit_count, events);
}
// One iteration each: the reference rescans the jobs it keeps listed for
// every decision (1e5 jobs take about 3 minutes), and its summary is
// compared with the fast engine's after the run.
BENCHMARK(BM_ReferenceEngine)->ArgName("jobs")->Arg(1'000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond)->Iterations(1);

// Eight knob variants of one scenario in a TBB arena of 1 or 2 threads.
void BM_Sweep8(benchmark::State& state) {
  const Scenario& sc = CachedScenario(Scale(100'000));
  if (!Verify(state, sc, false)) return;
  std::vector<Knobs> variants;
  for (SimTime drain : {0, 20'000, 60'000, 120'000}) {
    for (ShareOrder order : {ShareOrder::kUnderLimitFirst, ShareOrder::kRoundRobin}) {
      Knobs k = sc.knobs;
      k.preemption_drain = drain;
      k.share_order = order;
      variants.push_back(k);
    }
  }
  tbb::task_arena arena(static_cast<int>(state.range(0)));
  std::vector<std::string> out(variants.size());
  for (auto _ : state) {
    arena.execute([&] {
      // One task per variant (simple_partitioner, grain 1): whole engine
      // runs of unequal length, balanced by work stealing.
      tbb::parallel_for(
          tbb::blocked_range<size_t>(0, variants.size(), 1),
          [&](const tbb::blocked_range<size_t>& r) {
            for (size_t i = r.begin(); i != r.end(); ++i) {
              SummaryBuilder b;
              RunOptions o;
              o.check_invariants = false;
              o.knobs = variants[i];
              RunStats stats = RunFastEngine(sc, b, o);
              out[i] = SummaryToJson(b.Build(stats.invariant_violations));
            }
          },
          tbb::simple_partitioner());
    });
  }
  SetCounters(state, sc.submit_count * static_cast<int64_t>(variants.size()), 0);
}
// Five repetitions, reported as mean/median/stddev: single runs on this
// shared 2-core machine vary by up to 50% (per-variant timings showed the
// variants themselves no slower on 2 threads than on 1; the spread comes
// from the machine), and the 2-vs-1-thread ratio is taken between the
// medians.
BENCHMARK(BM_Sweep8)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(5)->ReportAggregatesOnly(true);

// A streambuf that counts bytes and drops them: the cost of formatting the
// JSON Lines log without the cost of a disk.
class NullBuf : public std::streambuf {
 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
  int overflow(int c) override { return c; }
};

// The three log rows run 3 iterations each: single ~1 s iterations varied by
// +-20% between runs on the shared machine, more than the effect measured.
// Writer: JsonlWriter (formatted and written on the engine thread) or
// AsyncLog (on a second thread, what `quotasim run --events` uses);
// the time includes the final flush.
template <typename Writer>
void BM_WithLog(benchmark::State& state) {
  const Scenario& sc = CachedScenario(Scale(state.range(0)));
  if (!Verify(state, sc, false)) return;
  NullBuf buf;
  std::ostream null(&buf);
  int64_t events = 0;
  for (auto _ : state) {
    Writer w(&null);
    events = RunFast(sc, &w).stats.events_processed;
    w.Flush();
  }
  SetCounters(state, sc.submit_count, events);
}
BENCHMARK_TEMPLATE(BM_WithLog, JsonlWriter)->Name("BM_WithEventLog")->ArgName("jobs")->Arg(100'000)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_WithLog, AsyncLog)->Name("BM_WithAsyncEventLog")->ArgName("jobs")->Arg(100'000)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_WithoutEventLog(benchmark::State& state) {
  const Scenario& sc = CachedScenario(Scale(state.range(0)));
  if (!Verify(state, sc, false)) return;
  int64_t events = 0;
  for (auto _ : state) events = RunFast(sc).stats.events_processed;
  SetCounters(state, sc.submit_count, events);
}
BENCHMARK(BM_WithoutEventLog)->ArgName("jobs")->Arg(100'000)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();

// Victim selection under pressure: an overloaded workload with short runs
// where most shares borrow and in-share preemption is on.
void BM_PreemptionHeavy(benchmark::State& state) {
  gen::GenOptions o = Options(Scale(state.range(0)), 99, gen::Profile::kStress);
  o.load = 3.0;
  o.median_run_seconds = 120;
  o.priority_update_fraction = 0.2;
  static std::unique_ptr<Scenario> sc;
  if (!sc || sc->submit_count != o.jobs) sc = std::make_unique<Scenario>(*gen::Generate(o));
  if (!Verify(state, *sc, sc->submit_count <= 1000)) return;
  int64_t events = 0;
  for (auto _ : state) events = RunFast(*sc).stats.events_processed;
  SetCounters(state, sc->submit_count, events);
}
BENCHMARK(BM_PreemptionHeavy)->ArgName("jobs")->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace qs

// --- Micro-benchmarks: single steps of the fast engine on prepared state.
namespace qs::engine_internal {

class EngineBenchProbe {
 public:
  using Event = engine_internal::Event;
  using EventType = engine_internal::EventType;
  using EventQueue = engine_internal::EventQueue::Heap;
  static void Pass(Engine& e) { e.RunPass(); }
  // Makes the next pass look at every share again, as after a change to
  // each (a pass on unchanged state skips its settled shares).
  static void UnsettleAll(Engine& e) {
    e.settling_.Unsettle(~uint64_t{0});
    e.order_.MarkAll();
  }
  static std::vector<int32_t> InShareVictims(Engine& e, int32_t s, int32_t id) {
    std::vector<int32_t> v;
    engine_internal::InShareVictims(e.st_, s, id, v);
    return v;
  }
  // As the pass asks: into a vector kept between calls.
  static bool InShareVictimsInto(Engine& e, int32_t s, int32_t id, std::vector<int32_t>& v) {
    return engine_internal::InShareVictims(e.st_, s, id, v);
  }
  static int32_t JobId(const Engine& e, std::string_view name) {
    return e.st_.rank_job.at(static_cast<size_t>(e.st_.index.job_names.Find(name)));
  }
  static int32_t Share(const Engine& e, const std::string& name) { return e.st_.share_ids.at(name); }
  static int64_t Dispatched(const Engine& e) {
    int64_t n = 0;
    for (const Job& j : e.st_.jobs) n += IsDispatched(j.status) && !j.draining ? 1 : 0;
    return n;
  }
  static int32_t Priority(const Engine& e, int32_t id) { return e.st_.jobs[id].priority; }
};

}  // namespace qs::engine_internal

namespace qs {
namespace {

using Probe = engine_internal::EngineBenchProbe;
using testing::JobBuilder;
using testing::ScenarioBuilder;
using testing::ShareBuilder;
constexpr char kMicroUnit[] = "ml.p4d.24xlarge";

// The micro-benchmarks prepare state with Engine::Run() and a horizon at the
// last request: it applies them, runs their passes and stops.
JobBuilder MicroJob(int64_t index, const std::string& share, int64_t n, int64_t priority) {
  return JobBuilder(absl::StrCat("j", index), share).Priority(priority).Instances(kMicroUnit, n).Run(1e6);
}

// The engine's event queue (the radix heap): N events at random times
// pushed, then all taken, time by time.
void BM_EventQueue(benchmark::State& state) {
  const int64_t n = Scale(state.range(0));
  std::mt19937_64 rng(5);
  std::vector<SimTime> times(static_cast<size_t>(n));
  for (SimTime& t : times) t = static_cast<SimTime>(rng() % 86'400'000);
  auto fill = [&](Probe::EventQueue& q) {
    for (int64_t i = 0; i < n; ++i) {
      q.push(Probe::Event{times[static_cast<size_t>(i)], i, Probe::EventType::kAttemptEnd, static_cast<int32_t>(i), 0, 0});
    }
  };
  {  // its answer: (time, sequence) order
    Probe::EventQueue q;
    fill(q);
    SimTime last_t = -1;
    int64_t last_seq = -1;
    bool ordered = true;
    while (!q.empty()) {
      q.TakeMin([&](const Probe::Event& e) {
        ordered &= e.time > last_t || (e.time == last_t && e.seq > last_seq);
        last_t = e.time;
        last_seq = e.seq;
      });
    }
    if (!ordered) {
      state.SkipWithError("event queue out of (time, sequence) order");
      return;
    }
  }
  for (auto _ : state) {
    Probe::EventQueue q;
    fill(q);
    int64_t sum = 0;
    while (!q.empty()) q.TakeMin([&](const Probe::Event& e) { sum += e.job; });
    benchmark::DoNotOptimize(sum);
  }
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_EventQueue)->ArgName("events")->Arg(10'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// The scheduling passes of a real run, where BM_DispatchPass times one
// contrived pass: the 1e6-job steady run of BM_EndToEnd (gen's default
// workload, streamed from its .qsb file), with RunOptions::time_passes
// adding up the time inside every pass. Counters: ns per pass and per
// round (a pass runs rounds of phases 1-3 until one makes no progress),
// and the cost of the steady_clock reading pair taken around each pass,
// which is included in those figures.
void BM_PassesInRun(benchmark::State& state) {
  const int64_t jobs = Scale(state.range(0));
  const std::string path =
      (std::filesystem::temp_directory_path() / absl::StrCat("quotasim-bench-passes-", getpid(), ".qsb")).string();
  if (absl::Status st = gen::GenerateQsbFile(Options(jobs, 11, gen::Profile::kSteady), path); !st.ok()) {
    state.SkipWithError(std::string(st.message()).c_str());
    return;
  }
  RunOptions ro;
  ro.check_invariants = true;
  ro.time_passes = true;
  RunStats stats;
  for (auto _ : state) {
    absl::StatusOr<Result> r = StreamRun(path, ro);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      break;
    }
    stats = r->stats;
  }
  std::filesystem::remove(path);
  // The clock pair's own cost, as the engine takes it.
  constexpr int kReads = 1'000'000;
  const auto t0 = std::chrono::steady_clock::now();
  int64_t sink = 0;
  for (int i = 0; i < kReads; ++i) {
    const auto a = std::chrono::steady_clock::now();
    sink += (std::chrono::steady_clock::now() - a).count();
  }
  benchmark::DoNotOptimize(sink);
  const double clock_pair_ns =
      static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count()) /
      kReads;
  if (stats.passes == 0 || stats.pass_rounds == 0) {
    state.SkipWithError("the run made no pass");
    return;
  }
  state.counters["passes"] = static_cast<double>(stats.passes);
  state.counters["rounds"] = static_cast<double>(stats.pass_rounds);
  state.counters["ns_per_pass"] = static_cast<double>(stats.pass_ns) / static_cast<double>(stats.passes);
  state.counters["ns_per_round"] = static_cast<double>(stats.pass_ns) / static_cast<double>(stats.pass_rounds);
  state.counters["clock_pair_ns"] = clock_pair_ns;
  // Without the clock pair: its cost in the loop above taken off once per
  // pass (an estimate: inside the engine the pair may overlap other work).
  const double net_ns = static_cast<double>(stats.pass_ns) - clock_pair_ns * static_cast<double>(stats.passes);
  state.counters["ns_per_pass_net"] = net_ns / static_cast<double>(stats.passes);
  state.counters["ns_per_round_net"] = net_ns / static_cast<double>(stats.pass_rounds);
  state.counters["pass_seconds"] = static_cast<double>(stats.pass_ns) / 1e9;
}
BENCHMARK(BM_PassesInRun)->ArgName("jobs")->Arg(1'000'000)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// One scheduling pass over 20 full shares (a 16-instance job running on each
// 16-instance limit) with `queued` jobs waiting in every share: the pass looks
// at each share's head, never along a queue, so its cost must not grow with
// the queue length. Every share is unsettled before each pass, so that it
// is a full pass (looking at all 20 heads), not one that skips them all.
void BM_DispatchPass(benchmark::State& state) {
  const int64_t queued = bench::Smoke() ? std::min<int64_t>(state.range(0), 100) : state.range(0);
  ScenarioBuilder b;
  b.Environment({{kMicroUnit, 20 * 16}}).Horizon(0);
  int64_t jobs = 0;
  for (int s = 0; s < 20; ++s) b.Share(ShareBuilder(absl::StrCat("team-", s)).Limit(kMicroUnit, 16).Reserve().InShare(false));
  for (int s = 0; s < 20; ++s) {
    b.Submit(0, MicroJob(jobs++, absl::StrCat("team-", s), 16, 0));
    for (int64_t i = 0; i < queued; ++i) b.Submit(0, MicroJob(jobs++, absl::StrCat("team-", s), 1, 0));
  }
  const Scenario sc = b.Build();
  SummaryBuilder sink;
  RunOptions o;
  o.check_invariants = true;
  engine_internal::Engine e(sc, sink, o);
  const RunStats stats = e.Run();
  Probe::Pass(e);  // its answer: nothing moves, nothing is violated
  if (stats.invariant_violations != 0 || !e.CheckInvariants().ok() || Probe::Dispatched(e) != 20) {
    state.SkipWithError("unexpected state after the prepared pass");
    return;
  }
  for (auto _ : state) {
    Probe::UnsettleAll(e);
    Probe::Pass(e);
  }
  state.counters["queued_jobs"] = static_cast<double>(20 * queued);
}
BENCHMARK(BM_DispatchPass)->ArgName("queued_per_share")->Arg(10)->Arg(10'000)->Unit(benchmark::kMicrosecond);

// In-share victim selection for a priority-9 head needing 4 instances in a
// share whose limit is filled by `dispatched` 1-instance priority-0 jobs:
// candidates come from the share's victim-order list and are drawn only
// until the head fits, so the cost must not grow with the dispatched jobs.
void BM_VictimSelection(benchmark::State& state) {
  const int64_t dispatched = std::max<int64_t>(16, Scale(state.range(0)));
  ScenarioBuilder b;
  b.Environment({{kMicroUnit, dispatched}}).Share(ShareBuilder("team").Limit(kMicroUnit, dispatched).Reserve().InShare(true));
  for (int64_t i = 0; i < dispatched; ++i) b.Submit(0, MicroJob(i, "team", 1, 0));
  // Arrives 1 ms later, preempts 4 and waits for their drain.
  b.Submit(0.001, MicroJob(dispatched, "team", 4, 9)).Horizon(0.001);
  const Scenario sc = b.Build();
  SummaryBuilder sink;
  RunOptions o;
  o.check_invariants = true;
  engine_internal::Engine e(sc, sink, o);
  const RunStats stats = e.Run();
  const int32_t s = Probe::Share(e, "team");
  const int32_t head = Probe::JobId(e, absl::StrCat("j", dispatched));
  std::vector<int32_t> v = Probe::InShareVictims(e, s, head);  // its answer: 4 more of priority 0
  bool ok = stats.invariant_violations == 0 && v.size() == 4 && Probe::Dispatched(e) == dispatched - 4;
  for (int32_t id : v) ok = ok && Probe::Priority(e, id) == 0;
  if (!ok) {
    state.SkipWithError(absl::StrCat("unexpected victims: ", v.size(), " chosen, ", Probe::Dispatched(e), " dispatched, ", stats.invariant_violations, " violations").c_str());
    return;
  }
  std::vector<int32_t> scratch;
  for (auto _ : state) benchmark::DoNotOptimize(Probe::InShareVictimsInto(e, s, head, scratch));
  state.counters["dispatched_jobs"] = static_cast<double>(dispatched);
}
BENCHMARK(BM_VictimSelection)->ArgName("dispatched")->Arg(1'000)->Arg(100'000)->Unit(benchmark::kMicrosecond);

// The 10-million-job target of issue #3: one timed iteration after the
// checked run. scripts/bench runs it in a process of its own, so that its
// peak RSS counter is this path's alone.
BENCHMARK(BM_EndToEnd)
    ->ArgNames({"profile", "jobs"})
    ->Args({0, 10'000'000})
    ->Args({1, 10'000'000})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace qs

int main(int argc, char** argv) { return qs::bench::BenchmarkMain(argc, argv); }
