// Conformance cases for simulation.capacity and simulation.latencies
// (docs/semantics.md §2, "Capacity" and "Latency distributions"), run on
// both engines: each scenario with its expected Key() trace derived by hand
// (derivation above each).
#include <optional>
#include <string>
#include <vector>

#include "engine/testing/conformance.h"
#include "engine/testing/scenario_builder.h"

namespace qs::testing {
namespace {

struct CapacityCase {
  std::string name;
  Scenario scenario;
  std::vector<std::string> key;
  SimTime end_time;
};

void PrintTo(const CapacityCase& c, std::ostream* os) { *os << c.name; }
std::string PrintCapacityCase(const ::testing::TestParamInfo<CapacityCase>& info) { return info.param.name; }

class CapacityRuleTest : public OnBothEngines<CapacityCase> {};

TEST_P(CapacityRuleTest, KeyTrace) {
  const CapacityCase& c = Case();
  RecordingSink sink;
  RunStats stats = RunChecked(c.scenario, sink);
  EXPECT_EQ(sink.Key(), c.key);
  EXPECT_EQ(stats.end_time, c.end_time);
  EXPECT_TRUE(sink.rejected.empty());
}

const std::string kCap = S(reasons::kInsufficientCapacity);
const std::string kCapCode = "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY";

TypeCapacity Type(std::string name, double p, std::vector<AvailabilityStep> steps) {
  TypeCapacity t;
  t.instance_type = std::move(name);
  t.failure_probability = p;
  t.availability = std::move(steps);
  return t;
}

CapacityModel Model(SimTime error_seconds, std::vector<TypeCapacity> types) {
  CapacityModel m;
  m.error_delay = error_seconds * kMillisPerSecond;
  m.types = std::move(types);
  return m;
}

std::vector<CapacityCase> Cases() {
  std::vector<CapacityCase> cases;

  // env g 2; A RESERVE L=2; availability of g: 0 until 250, then 2;
  // errorSeconds 100; retryStrategy.attempts 1 (the default). j (n=1)
  // dispatched at 0, 100 and 200 finds nothing available: each time a
  // capacity error 100 s later, RUNNABLE with the reason and dispatched
  // again in the same instant. At 300 (availability 2) it gets its
  // instances and SUCCEEDS at 400: three errors used no attempt. Each error
  // schedules the time-limit check at max(t, 0 + 900) = 900, stale by then
  // (the job was dispatched again): the run ends at 900 (§1, lazy
  // cancellation).
  cases.push_back({"CapacityErrorRequeuesWithoutUsingAnAttempt",
                   ScenarioBuilder()
                       .Environment({{kG, 2}})
                       .Share(ShareBuilder("A").Limit(kG, 2).Reserve())
                       .TimeLimitAction(kCapCode, 900)
                       .Capacity(Model(100, {Type(kG, 0, {{0, 0}, {250000, 2}})}))
                       .Submit(0, JobBuilder("j", "A").Run(100))
                       .Build(),
                   {"0.0 j SCHEDULED n=1", "100.0 j RUNNABLE " + kCap, "100.0 j SCHEDULED n=1",
                    "200.0 j RUNNABLE " + kCap, "200.0 j SCHEDULED n=1", "300.0 j RUNNABLE " + kCap,
                    "300.0 j SCHEDULED n=1", "400.0 j SUCCEEDED"},
                   900000});

  // env g 4; A RESERVE L=4; availability of g 3 from 0; provisionSeconds
  // 10; errorSeconds 50. At 0 a (n=2) is provisioned (0 + 2 <= 3); b (n=2)
  // is not (2 + 2 > 3) although the quota has room: a capacity error at 50,
  // again at 100 (a still holds 2). a runs 10-110; b's dispatch at 150 finds
  // 0 + 2 <= 3: it starts at 160 and SUCCEEDS at 260. Checks at 600 end
  // the run.
  cases.push_back({"CapacityAvailabilityLimitsProvisionedInstances",
                   ScenarioBuilder()
                       .Environment({{kG, 4}})
                       .Share(ShareBuilder("A").Limit(kG, 4).Reserve())
                       .Provision(10)
                       .TimeLimitAction(kCapCode, 600)
                       .Capacity(Model(50, {Type(kG, 0, {{0, 3}})}))
                       .Submit(0, JobBuilder("a", "A").Instances(kG, 2).Run(100))
                       .Submit(0, JobBuilder("b", "A").Instances(kG, 2).Run(100))
                       .Build(),
                   {"0.0 a SCHEDULED n=2", "0.0 b SCHEDULED n=2", "50.0 b RUNNABLE " + kCap,
                    "50.0 b SCHEDULED n=2", "100.0 b RUNNABLE " + kCap, "100.0 b SCHEDULED n=2",
                    "110.0 a SUCCEEDED", "150.0 b RUNNABLE " + kCap, "150.0 b SCHEDULED n=2",
                    "260.0 b SUCCEEDED"},
                   600000});

  // env g 1; A RESERVE L=1; g fails every try (failureProbability 1);
  // errorSeconds 250; the queue terminates CAPACITY jobs after 600 s. j is
  // SCHEDULED at 0, 250 and 500 (errors at 250, 500, 750). The clock counts
  // from the first SCHEDULED (0), so the SCHEDULED time counts: the checks
  // set at 250 and 500 are due at 600 and stale (j was dispatched again);
  // the error at 750 sets it due at max(750, 600) = 750, in the same batch,
  // before the pass: FAILED at 750.
  cases.push_back({"CapacityTimeLimitCountsScheduledTime",
                   ScenarioBuilder()
                       .Environment({{kG, 1}})
                       .Share(ShareBuilder("A").Limit(kG, 1).Reserve())
                       .TimeLimitAction(kCapCode, 600)
                       .Capacity(Model(250, {Type(kG, 1, {})}))
                       .Submit(0, JobBuilder("j", "A").Run(100))
                       .Build(),
                   {"0.0 j SCHEDULED n=1", "250.0 j RUNNABLE " + kCap, "250.0 j SCHEDULED n=1",
                    "500.0 j RUNNABLE " + kCap, "500.0 j SCHEDULED n=1", "750.0 j RUNNABLE " + kCap,
                    "750.0 j FAILED " + S(reasons::kTimeLimitPrefix) + kCapCode},
                   750000});

  // Latencies per type. env g 1, p 1; A RESERVE L g=1 p=1, in-share
  // ENABLED. p: provision CONSTANT 30, download UNIFORM 10..10 (always 10),
  // drain CONSTANT 5; g keeps the knobs (0, 0; drain 20). gj (g, run 100)
  // runs 0-100. low (p, run 100): SCHEDULED 0, RUNNING 40. high (p,
  // priority 5) at 50 preempts low in-share; low drains for 5 s, so high is
  // SCHEDULED at 55, RUNNING at 95 and SUCCEEDS at 195; low's second
  // attempt is SCHEDULED at 195, RUNNING at 235 and SUCCEEDS at 335.
  {
    LatencyModel m;
    TypeLatencies p;
    p.instance_type = "ml.p4d.24xlarge";
    p.provision = LatencyDistribution{Distribution::kConstant, 30000, 0, 0, 0};
    p.download = LatencyDistribution{Distribution::kUniform, 10000, 10000, 0, 0};
    p.drain = LatencyDistribution{Distribution::kConstant, 5000, 0, 0, 0};
    m.types.push_back(p);
    qs::Knobs k;
    k.latencies = m;
    cases.push_back({"LatenciesPerInstanceType",
                     ScenarioBuilder()
                         .Environment({{kG, 1}, {"ml.p4d.24xlarge", 1}})
                         .Share(ShareBuilder("A").Limit(kG, 1).Limit("ml.p4d.24xlarge", 1).Reserve().InShare(true))
                         .Knobs(k)
                         .Submit(0, JobBuilder("low", "A").Instances("ml.p4d.24xlarge", 1).Run(100))
                         .Submit(0, JobBuilder("gj", "A").Run(100))
                         .Submit(50, JobBuilder("high", "A").Priority(5).Instances("ml.p4d.24xlarge", 1).Run(100))
                         .Build(),
                     {"0.0 low SCHEDULED n=1", "0.0 gj SCHEDULED n=1", "50.0 low RUNNING " + kIIn + " for=high",
                      "55.0 low RUNNABLE " + kI + " #1", "55.0 high SCHEDULED n=1", "100.0 gj SUCCEEDED",
                      "195.0 high SUCCEEDED", "195.0 low SCHEDULED n=1", "335.0 low SUCCEEDED"},
                     335000});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Capacity, CapacityRuleTest, ::testing::Combine(BothEngines(), ::testing::ValuesIn(Cases())),
                         BothEnginesNames<CapacityCase>(PrintCapacityCase));

}  // namespace
}  // namespace qs::testing
