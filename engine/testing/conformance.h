// File: engine/testing/conformance.h
//
// Support for the rule conformance suite (engine/conformance/): one focused
// scenario per rule and knob value of docs/semantics.md, each with the
// expected log derived by hand from the rules, run on both engines as one
// parameterised suite, so both implementations answer to the same table.
//
// Traces are compared as compact strings, one per job line:
//   "<t> <job> <STATUS>[ <statusReason>][ n=<q>[ <lender>:<q>...]][ for=<job>][ #<count>]"
// where n= appears on SCHEDULED lines (with the borrowed parts in draw
// order), for= on preemption-start lines and #count on lines ending a
// preempted attempt. Key() drops the routine lines (SUBMITTED, and
// RUNNABLE / STARTING / RUNNING with an empty reason); Full() keeps all.
#ifndef QS_ENGINE_TESTING_CONFORMANCE_H_
#define QS_ENGINE_TESTING_CONFORMANCE_H_

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/log/event_log.h"
#include "engine/run.h"
#include "engine/model/scenario.h"
#include "engine/io/scenario_json.h"
#include "engine/testing/scenario_builder.h"
#include "engine/model/time.h"
#include "gtest/gtest.h"
#include <tuple>

namespace qs::testing {

// The engines the suite runs on. Every test is instantiated once per
// engine (prefix Reference/ or Fast/ in the test name); the fixture sets the
// engine that RunEngineUnderTest() runs for the test's duration.
enum class EngineKind { kReference, kFast };
inline const char* EngineName(EngineKind e) { return e == EngineKind::kFast ? "Fast" : "Reference"; }
inline auto BothEngines() { return ::testing::Values(EngineKind::kReference, EngineKind::kFast); }
inline EngineKind& EngineUnderTest() {
  static EngineKind engine = EngineKind::kReference;
  return engine;
}

// The reference engine as `quotasim run --engine reference` runs it; the
// fast engine with the full invariant checks (every counter recounted from
// the job records after every event).
inline RunStats RunEngineUnderTest(const Scenario& sc, LogSink& sink) {
  if (EngineUnderTest() == EngineKind::kReference) return RunReferenceEngine(sc, sink);
  RunOptions o;
  o.full_invariant_check = true;
  return RunFastEngine(sc, sink, o);
}

// A test on both engines: TEST_P(ConformanceTest, Name).
class ConformanceTest : public ::testing::TestWithParam<EngineKind> {
 protected:
  void SetUp() override { EngineUnderTest() = GetParam(); }
};

// A table-driven test on both engines: the parameter is (engine, Case);
// Case() is the table's row.
template <typename C>
class OnBothEngines : public ::testing::TestWithParam<std::tuple<EngineKind, C>> {
 protected:
  void SetUp() override { EngineUnderTest() = std::get<0>(this->GetParam()); }
  const C& Case() const { return std::get<1>(this->GetParam()); }
};

// Test names "<Engine>_<row name>" from a row naming function.
template <typename C, typename NameFn>
auto BothEnginesNames(NameFn fn) {
  return [fn](const ::testing::TestParamInfo<std::tuple<EngineKind, C>>& p) {
    return std::string(EngineName(std::get<0>(p.param))) + "_" +
           std::string(fn(::testing::TestParamInfo<C>(std::get<1>(p.param), p.index)));
  };
}


inline constexpr const char* kG = "ml.g5.xlarge";

struct Line {
  SimTime time = 0;
  std::string job, share, status, reason;
  bool has_usage = false;
  std::string unit;
  int64_t quantity = 0;
  std::vector<std::pair<std::string, int64_t>> borrowed;
  PreemptionType preemption = PreemptionType::kNone;
  std::string preempted_for;
  SimTime checkpointed = 0;
  bool has_summary = false;
  int64_t count = 0;
  std::vector<PreemptedAttempt> recent;  // status_reason views static constants
};

struct Rejected {
  SimTime time;
  std::string action, message, path;
};

struct Snap {
  SimTime time;
  std::vector<std::pair<std::string, SimTime>> front;
  std::vector<std::string> shares;  // "name front=<job|-> usage=<u:q,...>"
  std::vector<std::pair<std::string, int64_t>> total;
};

class RecordingSink : public LogSink {
 public:
  void OnJob(const JobRecord& r) override {
    Line l;
    l.time = r.time;
    l.job = std::string(r.job_name);
    l.share = std::string(r.share_name);
    l.status = JobStatusName(r.status);
    l.reason = std::string(r.status_reason);
    l.has_usage = r.has_usage;
    l.unit = std::string(r.capacity_unit);
    l.quantity = r.quantity;
    for (const BorrowedPart& p : r.borrowed) {
      EXPECT_EQ(p.capacity_unit, r.capacity_unit);
      l.borrowed.emplace_back(std::string(p.from), p.quantity);
    }
    l.preemption = r.preemption;
    l.preempted_for = std::string(r.preempted_for);
    l.checkpointed = r.checkpointed_ms;
    l.has_summary = r.has_preemption_summary;
    l.count = r.preempted_attempt_count;
    l.recent.assign(r.recent_preempted_attempts.begin(), r.recent_preempted_attempts.end());
    lines.push_back(std::move(l));
  }
  void OnRejected(const RejectedRecord& r) override {
    rejected.push_back(
        Rejected{r.time, std::string(r.action), std::string(r.message), std::string(r.path)});
  }
  void OnSnapshot(const SnapshotRecord& r) override {
    Snap s;
    s.time = r.time;
    for (const SnapshotJob& j : r.front_of_queue) {
      s.front.emplace_back(std::string(j.job_name), j.earliest_time_at_position);
    }
    for (const SnapshotShare& sh : r.shares) {
      std::string e = std::string(sh.share_name) + " front=";
      e += sh.front.empty() ? "-" : std::string(sh.front[0].job_name);
      e += " usage=";
      for (const SnapshotUsage& u : sh.usage) {
        e += std::string(u.capacity_unit) + ":" + std::to_string(u.quantity) + ",";
      }
      s.shares.push_back(e);
    }
    for (const SnapshotUsage& u : r.total_usage) {
      s.total.emplace_back(std::string(u.capacity_unit), u.quantity);
    }
    snapshots.push_back(std::move(s));
  }
  void OnCapacity(const CapacityRecord& r) override {
    capacity.push_back(FormatSeconds(r.time) + " " + std::string(r.capacity_unit) + " " +
                       std::to_string(r.max_capacity));
  }
  void OnEnd(SimTime t) override {
    EXPECT_FALSE(end.has_value()) << "OnEnd called twice";
    end = t;
  }

  static std::string Render(const Line& l) {
    std::string s = FormatSeconds(l.time) + " " + l.job + " " + l.status;
    if (!l.reason.empty()) s += " " + l.reason;
    if (l.has_usage) {
      s += " n=" + std::to_string(l.quantity);
      for (const auto& [from, q] : l.borrowed) s += " " + from + ":" + std::to_string(q);
    }
    if (l.preemption != PreemptionType::kNone) s += " for=" + l.preempted_for;
    if (l.checkpointed > 0) s += " kept=" + FormatSeconds(l.checkpointed);
    if (l.has_summary) s += " #" + std::to_string(l.count);
    return s;
  }
  std::vector<std::string> Full() const {
    std::vector<std::string> out;
    for (const Line& l : lines) out.push_back(Render(l));
    return out;
  }
  std::vector<std::string> Key() const {
    std::vector<std::string> out;
    for (const Line& l : lines) {
      bool routine = l.reason.empty() && (l.status == "SUBMITTED" || l.status == "RUNNABLE" ||
                                          l.status == "STARTING" || l.status == "RUNNING");
      if (!routine) out.push_back(Render(l));
    }
    return out;
  }
  const Line* Last(std::string_view job) const {
    const Line* found = nullptr;
    for (const Line& l : lines) {
      if (l.job == job) found = &l;
    }
    return found;
  }

  std::vector<Line> lines;
  std::vector<Rejected> rejected;
  std::vector<Snap> snapshots;
  std::vector<std::string> capacity;
  std::optional<SimTime> end;
};

// Runs the engine under test and checks the run-wide guarantees every test
// shares: no invariant violation, OnEnd called once with RunStats.end_time.
inline RunStats RunChecked(const Scenario& sc, RecordingSink& sink) {
  RunStats stats = RunEngineUnderTest(sc, sink);
  EXPECT_EQ(stats.invariant_violations, 0);
  for (const std::string& m : stats.violation_messages) ADD_FAILURE() << m;
  EXPECT_TRUE(sink.end.has_value());
  if (sink.end) {
    EXPECT_EQ(*sink.end, stats.end_time);
  }
  return stats;
}

inline std::string S(std::string_view v) { return std::string(v); }

// Reasons, shortened for the expectations.
inline const std::string kXIn = S(reasons::kCrossShareInProgress);
inline const std::string kIIn = S(reasons::kInShareInProgress);
inline const std::string kX = S(reasons::kCrossSharePreempted);
inline const std::string kI = S(reasons::kInSharePreempted);

}  // namespace qs::testing

#endif  // QS_ENGINE_TESTING_CONFORMANCE_H_
