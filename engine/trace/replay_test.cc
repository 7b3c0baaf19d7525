#include "engine/trace/replay.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/io/scenario_json.h"
#include "engine/log/event_log.h"
#include "engine/trace/policy.h"
#include "engine/trace/report.h"
#include "engine/trace/workload_stream.h"
#include "gtest/gtest.h"
#include "oneapi/tbb/task_arena.h"

namespace qs::trace {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TraceJob Job(int64_t line, SimTime submit_s, SimTime run_s, double gpus, std::string team, int64_t prio = 0) {
  TraceJob j;
  j.line = line;
  j.submit = submit_s * 1000;
  j.duration = run_s * 1000;
  j.gpus = gpus;
  j.team = std::move(team);
  j.priority = prio;
  return j;
}

// A bursty synthetic trace: 5 teams, demand well above capacity at times.
std::vector<TraceJob> Synthetic(int n) {
  std::mt19937_64 rng(42);
  std::vector<TraceJob> jobs;
  const char* teams[] = {"alpha", "beta", "gamma", "delta", "eps"};
  SimTime t = 1000;
  for (int i = 0; i < n; ++i) {
    t += static_cast<SimTime>(rng() % 120);
    const int team = static_cast<int>(rng() % 5);
    const double gpus = (rng() % 10 == 0) ? 8 : static_cast<double>(1 + rng() % 3);
    jobs.push_back(Job(i + 2, t, 60 + static_cast<SimTime>(rng() % 5000), gpus, teams[team],
                       static_cast<int64_t>(rng() % 3)));
  }
  return jobs;
}

Mapping BasicMapping(int64_t instances) {
  Mapping m;
  m.source = "m.json";
  m.instance_type = "ml.p4d.24xlarge";
  m.gpus_per_instance = 1;
  m.instances = instances;
  return m;
}

TEST(Workload, RoundsSortsShiftsAndSplitsLimits) {
  std::vector<TraceJob> jobs = {Job(2, 100, 10, 9, "a"), Job(3, 50, 20, 8, "b"), Job(4, 50, 5, 0, "a"),
                                Job(5, 60, 100, 0.5, "c")};
  Mapping m = BasicMapping(10);
  m.gpus_per_instance = 8;
  m.share_prefix = "t";
  absl::StatusOr<Workload> w = BuildWorkloadFromJobs("x", jobs, m, nullptr);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->zero_gpu_skipped, 1);
  EXPECT_EQ(w->rounded_up, 2);  // 9 GPUs -> 2 instances, 0.5 -> 1
  ASSERT_EQ(w->jobs.size(), 3u);
  EXPECT_EQ(w->jobs[0].submit, 0);  // line 3 first, shifted to 0
  EXPECT_EQ(w->jobs[0].line, 3);
  EXPECT_EQ(w->jobs[2].instances, 2);
  EXPECT_EQ(w->shares, (std::vector<std::string>{"ta", "tb", "tc"}));
  // Demand (instance-s): a 20, b 20, c 100 -> 1 each plus 7 split 7*20/140=1, 1, 5.
  EXPECT_EQ(w->limits, (std::vector<int64_t>{2, 2, 6}));
  // maxShares folds the smallest teams into otherShare.
  m.max_shares = 2;
  w = BuildWorkloadFromJobs("x", jobs, m, nullptr);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->shares, (std::vector<std::string>{"other", "tc"}));
}

TEST(Workload, QuotaTableBecomesLimitChanges) {
  std::istringstream in("date,A,B,total\n2020-04-01,16,8,24\n2020-04-02,16,8,24\n2020-04-03,8,0,8\n");
  absl::StatusOr<QuotaTable> t = ReadQuotaTable(in, "q.csv");
  ASSERT_TRUE(t.ok());
  Mapping m = BasicMapping(1);
  m.instances.reset();
  m.gpus_per_instance = 4;
  m.limit_source = LimitSource::kQuotaTable;
  m.quota_columns = {{"a", "A"}, {"b", "B"}};
  absl::StatusOr<Workload> w =
      BuildWorkloadFromJobs("x", {Job(1, 0, 10, 1, "a"), Job(2, 0, 10, 1, "b")}, m, &*t);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->limits, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(w->environment, 6);
  ASSERT_EQ(w->changes.size(), 1u);
  EXPECT_EQ(w->changes[0].time, 2 * 86400 * 1000);
  EXPECT_EQ(w->changes[0].limits, (std::vector<int64_t>{2, 1}));  // 0 GPUs -> the minimum of 1
  EXPECT_EQ(w->changes[0].environment, 3);
  absl::StatusOr<std::vector<Policy>> std_policies = StandardPolicies();
  ASSERT_TRUE(std_policies.ok());
  absl::StatusOr<Scenario> sc = BuildScenario(*w, (*std_policies)[1], nullptr);
  ASSERT_TRUE(sc.ok());
  int updates = 0, env_updates = 0;
  for (const ScenarioEvent& e : sc->events) {
    updates += std::holds_alternative<UpdateQuotaShareRequest>(e.request) ? 1 : 0;
    env_updates += std::holds_alternative<UpdateServiceEnvironmentRequest>(e.request) ? 1 : 0;
  }
  EXPECT_EQ(updates, 2);
  EXPECT_EQ(env_updates, 1);
  // A share without a column is an error naming it.
  m.quota_columns.erase("b");
  w = BuildWorkloadFromJobs("x", {Job(1, 0, 10, 1, "a"), Job(2, 0, 10, 1, "b")}, m, &*t);
  EXPECT_NE(w.status().message().find("no entry for share 'b'"), std::string::npos) << w.status();
}

TEST(Policy, TemplateAndNamedShares) {
  // The issue's example: team X a RESERVE share of 16 instances, the others
  // LEND_AND_BORROW with a 100% borrow limit.
  absl::StatusOr<Policy> p = ParsePolicy(R"({
    "description": "X reserved",
    "quotaShares": [
      {"quotaShareName": "X", "capacityLimits": [{"capacityUnit": "ml.p4d.24xlarge", "maxCapacity": 16}],
       "resourceSharingConfiguration": {"strategy": "RESERVE"}},
      {"quotaShareName": "*", "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": 100},
       "preemptionConfiguration": {"inSharePreemption": "DISABLED"}}]})",
                                         "p.json", "p");
  ASSERT_TRUE(p.ok()) << p.status();
  Mapping m = BasicMapping(40);
  m.teams = {{"x", "X"}, {"y", "Y"}};
  absl::StatusOr<Workload> w =
      BuildWorkloadFromJobs("t", {Job(1, 0, 10, 1, "x"), Job(2, 0, 30, 1, "y"), Job(3, 0, 10, 1, "z")}, m, nullptr);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->shares, (std::vector<std::string>{"X", "Y", "other"}));
  absl::StatusOr<Scenario> sc = BuildScenario(*w, *p, nullptr);
  ASSERT_TRUE(sc.ok());
  const auto& x = std::get<CreateQuotaShareRequest>(sc->events[0].request);
  const auto& y = std::get<CreateQuotaShareRequest>(sc->events[1].request);
  EXPECT_EQ(*x.strategy, Strategy::kReserve);
  EXPECT_EQ((*x.capacity_limits)[0].max_capacity, 16);
  EXPECT_EQ(*x.in_share_preemption, Toggle::kDisabled);
  EXPECT_EQ(*y.strategy, Strategy::kLendAndBorrow);
  EXPECT_EQ(*y.borrow_limit, 100);
  EXPECT_EQ((*y.capacity_limits)[0].capacity_unit, "ml.p4d.24xlarge");
  EXPECT_EQ(sc->service_environment.capacity_limits[0].max_capacity, 40);
  EXPECT_EQ(sc->submit_count, 3);
  // Errors name the path.
  auto bad = ParsePolicy(R"({"quotaShares": [{"quotaShareName": "*", "capacityLimits": []}]})", "b.json", "b");
  EXPECT_NE(bad.status().message().find("b.json: quotaShares[0]"), std::string::npos) << bad.status();
  bad = ParsePolicy(R"({"replay": {"single": "x"}})", "b.json", "b");
  EXPECT_EQ(bad.status().message(), "b.json: replay.single: unknown key; expected one of: singleShare, ignorePriority");
  bad = ParsePolicy(R"({"simulation": {"preemptionDrainSeconds": "x"}})", "b.json", "b");
  EXPECT_NE(bad.status().message().find("b.json: simulation.preemptionDrainSeconds"), std::string::npos);
}

// A replay's scenario made block by block (workload_stream.h): the same
// events at any block size, in the scenario rules' order, IndexScenario's
// index without the events, and the same log as the scenario held whole.
TEST(WorkloadStream, SameScenarioAtAnyBlockSize) {
  // Four days of quota table under 3,000 jobs of about 50 hours: limit
  // changes fall between submissions.
  std::istringstream in(
      "date,A,B,C,total\n2020-04-01,16,8,8,32\n2020-04-02,12,8,4,24\n2020-04-03,8,4,12,24\n"
      "2020-04-04,4,4,4,12\n");
  absl::StatusOr<QuotaTable> t = ReadQuotaTable(in, "q.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  Mapping m = BasicMapping(1);
  m.instances.reset();
  m.gpus_per_instance = 1;
  m.limit_source = LimitSource::kQuotaTable;
  m.teams = {{"alpha", "a"}, {"beta", "b"}, {"gamma", "c"}, {"delta", "c"}, {"eps", "c"}};
  m.quota_columns = {{"a", "A"}, {"b", "B"}, {"c", "C"}};
  absl::StatusOr<Workload> w = BuildWorkloadFromJobs("x", Synthetic(3000), m, &*t);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_GE(w->changes.size(), 2u);
  ASSERT_LT(w->changes.front().time, w->jobs.back().submit);
  // A submission at the time of each limit change (the change goes first).
  size_t ties = 0;
  for (const LimitChange& c : w->changes) {
    for (WorkloadJob& j : w->jobs) {
      if (j.submit >= c.time) {
        j.submit = c.time;
        ++ties;
        break;
      }
    }
  }
  ASSERT_GE(ties, 2u);
  absl::StatusOr<std::vector<Policy>> policies = StandardPolicies();
  ASSERT_TRUE(policies.ok());
  for (const Policy& p : *policies) {
    SCOPED_TRACE(p.name);
    absl::StatusOr<Scenario> whole = BuildScenario(*w, p, nullptr);
    ASSERT_TRUE(whole.ok()) << whole.status();
    const std::string expected = ScenarioToJson(*whole);
    for (size_t block : {size_t{1}, size_t{7}, size_t{1000}, WorkloadStream::kBlockEvents}) {
      const WorkloadStream stream(*w, p, block);
      Scenario sc = stream.head();
      std::vector<ScenarioEvent> events;
      for (size_t b = 0; b < stream.num_blocks(); ++b) {
        ASSERT_TRUE(stream.ReadBlock(b, events).ok());
        EXPECT_TRUE(!events.empty() && events.size() <= block);
        for (ScenarioEvent& ev : events) sc.events.push_back(std::move(ev));
      }
      ASSERT_EQ(sc.events.size(), stream.num_events());
      EXPECT_EQ(ScenarioToJson(sc), expected) << "block size " << block;
    }
    // The rules' order: the creations at 0, then by time, requests before
    // submissions at equal times; submissions in workload order.
    size_t next_job = 0;
    bool creating = true;
    for (size_t e = 0; e < whole->events.size(); ++e) {
      const ScenarioEvent& ev = whole->events[e];
      const bool create = std::holds_alternative<CreateQuotaShareRequest>(ev.request);
      if (!create) creating = false;
      EXPECT_TRUE(!create || creating) << e;
      if (e > 0) {
        EXPECT_LE(whole->events[e - 1].time, ev.time) << e;
      }
      if (const auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request)) {
        char name[16];
        std::snprintf(name, sizeof(name), "j%07zu", next_job);
        EXPECT_EQ(*r->job_name, name);
        EXPECT_EQ(ev.time, w->jobs[next_job++].submit);
        if (e + 1 < whole->events.size() && whole->events[e + 1].time == ev.time) {
          EXPECT_TRUE(std::holds_alternative<SubmitServiceJobRequest>(whole->events[e + 1].request)) << e;
        }
      }
    }
    EXPECT_EQ(next_job, w->jobs.size());
    // The index, made without the events.
    const WorkloadStream stream(*w, p, 7);
    const ScenarioIndex a = stream.Index(), b = IndexScenario(*whole);
    EXPECT_EQ(a.units, b.units);
    ASSERT_EQ(a.share_requests.size(), b.share_requests.size());
    for (size_t i = 0; i < a.share_requests.size(); ++i) EXPECT_EQ(a.share_requests[i].path, b.share_requests[i].path);
    ASSERT_EQ(a.job_names.num_ordinals(), b.job_names.num_ordinals());
    for (int64_t k = 0; k < a.job_names.num_ordinals(); ++k) ASSERT_EQ(a.job_names.RankOf(k), b.job_names.RankOf(k));
    // The same log from the stream as from the scenario held whole.
    std::ostringstream log_whole, log_stream;
    {
      JsonlWriter sink(&log_whole);
      RunFastEngine(*whole, sink, RunOptions{});
    }
    {
      JsonlWriter sink(&log_stream);
      absl::StatusOr<RunStats> stats = RunFastEngine(stream, stream.Index(), sink, RunOptions{});
      ASSERT_TRUE(stats.ok()) << stats.status();
      EXPECT_EQ(stats->invariant_violations, 0);
    }
    EXPECT_GT(log_whole.str().size(), 100000u);
    EXPECT_EQ(log_stream.str(), log_whole.str());
  }
}

TEST(Policy, ShippedFilesEqualTheStandardSet) {
  for (const auto& [name, doc] : StandardPolicyDocuments()) {
    const std::string path = std::string(QS_SOURCE_DIR) + "/traces/policies/" + name + ".json";
    EXPECT_EQ(Slurp(path), doc) << path << " differs from StandardPolicyDocuments(); regenerate it";
  }
}

std::vector<std::string> RunAll(const Workload& w, const std::vector<Policy>& policies, int threads) {
  std::vector<size_t> all(policies.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<std::string> out;
  tbb::task_arena arena(threads);
  arena.execute([&] {
    auto runs = RunComparison(w, policies, all, RunPolicyOptions{});
    ASSERT_TRUE(runs.ok()) << runs.status();
    for (const PolicyRun& r : *runs) {
      EXPECT_EQ(r.stats.invariant_violations, 0) << r.policy;
      out.push_back(r.summary_json + r.metrics_json + r.timeseries_csv + r.waits_csv);
    }
  });
  return out;
}

TEST(Compare, IdenticalAtAnyThreadCount) {
  absl::StatusOr<Workload> w = BuildWorkloadFromJobs("synthetic", Synthetic(3000), BasicMapping(24), nullptr);
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<std::vector<Policy>> policies = StandardPolicies();
  ASSERT_TRUE(policies.ok());
  const std::vector<std::string> one = RunAll(*w, *policies, 1);
  const std::vector<std::string> two = RunAll(*w, *policies, 2);
  EXPECT_EQ(one, two);
  // The synthetic load is heavy enough to preempt under borrowing (borrow-100).
  EXPECT_EQ(one[5].find("\"preemptionsCrossShare\": 0,"), std::string::npos);
}

TEST(Compare, ShardsMergeToTheSingleRunReport) {
  Mapping m = BasicMapping(24);
  m.description = "synthetic";
  absl::StatusOr<Workload> w = BuildWorkloadFromJobs("synthetic", Synthetic(1500), m, nullptr);
  ASSERT_TRUE(w.ok());
  absl::StatusOr<std::vector<Policy>> policies = StandardPolicies();
  ASSERT_TRUE(policies.ok());
  const fs::path root = fs::path(testing::TempDir()) / "qs_shard_test";
  fs::remove_all(root);
  auto run_shard = [&](Shard s, const fs::path& dir) {
    fs::create_directories(dir);
    auto runs = RunComparison(*w, *policies, ShardPolicies(policies->size(), s), RunPolicyOptions{});
    ASSERT_TRUE(runs.ok());
    for (const PolicyRun& r : *runs) ASSERT_TRUE(WritePolicyRun(dir.string(), r).ok());
    const Manifest man = MakeManifest(*w, m, *policies, s);
    ASSERT_TRUE(WriteManifest(dir.string(), man).ok());
    if (s.count == 1) {
      ASSERT_TRUE(WriteReport(dir.string(), man).ok());
    }
  };
  run_shard({0, 1}, root / "single");
  run_shard({0, 3}, root / "s0");
  run_shard({1, 3}, root / "s1");
  // A missing shard is an error naming it.
  absl::Status missing = MergeShards((root / "merged").string(), {(root / "s0").string(), (root / "s1").string()});
  EXPECT_NE(missing.message().find("shard 2 of 3 is missing"), std::string::npos) << missing;
  run_shard({2, 3}, root / "s2");
  absl::Status s = MergeShards((root / "merged").string(),
                               {(root / "s0").string(), (root / "s1").string(), (root / "s2").string()});
  ASSERT_TRUE(s.ok()) << s;
  for (const char* f : {"comparison.md", "comparison.csv", "share-waits.csv"}) {
    const std::string a = Slurp((root / "single" / f).string());
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_EQ(a, Slurp((root / "merged" / f).string())) << f;
  }
  // Shards of another comparison do not merge.
  Mapping m2 = BasicMapping(25);
  absl::StatusOr<Workload> w2 = BuildWorkloadFromJobs("synthetic", Synthetic(1500), m2, nullptr);
  const Manifest other = MakeManifest(*w2, m2, *policies, {2, 3});
  ASSERT_TRUE(WriteManifest((root / "s2").string(), other).ok());
  s = MergeShards((root / "merged2").string(), {(root / "s0").string(), (root / "s1").string(), (root / "s2").string()});
  EXPECT_NE(s.message().find("describe different comparisons"), std::string::npos) << s;
}

TEST(Compare, ShardArgumentsAndEnvironment) {
  EXPECT_EQ(*ParseShard("1/4"), (Shard{1, 4}));
  EXPECT_FALSE(ParseShard("4/4").ok());
  EXPECT_FALSE(ParseShard("x").ok());
  auto env = [](std::map<std::string, std::string> vars) {
    return [vars](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  };
  EXPECT_EQ(**ShardFromEnvironment(env({{"AWS_BATCH_JOB_ARRAY_INDEX", "2"}, {"AWS_BATCH_JOB_ARRAY_SIZE", "3"}})),
            (Shard{2, 3}));
  EXPECT_EQ(**ShardFromEnvironment(env({{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_COUNT", "4"},
                                        {"SLURM_ARRAY_TASK_MIN", "3"}})),
            (Shard{2, 4}));
  EXPECT_EQ(**ShardFromEnvironment(env({{"JOB_COMPLETION_INDEX", "0"}, {"QS_SHARD_COUNT", "2"}})), (Shard{0, 2}));
  EXPECT_FALSE(ShardFromEnvironment(env({{"JOB_COMPLETION_INDEX", "0"}})).ok());
  EXPECT_FALSE(ShardFromEnvironment(env({{"AWS_BATCH_JOB_ARRAY_INDEX", "3"}, {"AWS_BATCH_JOB_ARRAY_SIZE", "3"}})).ok());
  EXPECT_FALSE(ShardFromEnvironment(env({}))->has_value());
  EXPECT_EQ(ShardPolicies(7, {1, 3}), (std::vector<size_t>{1, 4}));
}

TEST(Replay, TimeSeriesAddsUpToTheSummary) {
  absl::StatusOr<Workload> w = BuildWorkloadFromJobs("synthetic", Synthetic(400), BasicMapping(24), nullptr);
  ASSERT_TRUE(w.ok());
  absl::StatusOr<std::vector<Policy>> policies = StandardPolicies();
  RunPolicyOptions o;
  o.bucket = 600 * 1000;
  absl::StatusOr<PolicyRun> run = RunPolicy(*w, (*policies)[5], o);
  ASSERT_TRUE(run.ok());
  // Sum of the "total" column x bucket = instance-seconds of the summary,
  // and of the "borrowed:S" columns = the borrowed part; every "limit:S"
  // column is positive (the policy gives each share a limit on the type).
  auto split = [](const std::string& line) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    return f;
  };
  std::istringstream in(run->timeseries_csv);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split(line);
  auto col = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  ASSERT_LT(col("total"), header.size());
  std::vector<size_t> borrowed_cols, limit_cols;
  for (size_t c = 1; c < col("total"); ++c) {
    borrowed_cols.push_back(col("borrowed:" + header[c]));
    limit_cols.push_back(col("limit:" + header[c]));
    ASSERT_LT(borrowed_cols.back(), header.size()) << header[c];
    ASSERT_LT(limit_cols.back(), header.size()) << header[c];
  }
  ASSERT_FALSE(borrowed_cols.empty());
  double total = 0, borrowed = 0;
  int64_t preempt = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split(line);
    ASSERT_EQ(f.size(), header.size()) << line;
    total += std::stod(f[col("total")]) * 600;
    for (size_t c : borrowed_cols) borrowed += std::stod(f[c]) * 600;
    for (size_t c : limit_cols) EXPECT_GT(std::stod(f[c]), 0) << header[c] << ": " << line;
    preempt += std::stoll(f[col("preempt_cross")]) + std::stoll(f[col("preempt_in")]);
  }
  int64_t used_ms = 0, borrowed_ms = 0;
  for (const auto& [unit, v] : run->summary.total.instance_ms) {
    used_ms += v.first + v.second;
    borrowed_ms += v.second;
  }
  EXPECT_NEAR(total, static_cast<double>(used_ms) / 1000.0, 0.05 * 600 * 100);  // 0.1 rounding per bucket
  EXPECT_GT(borrowed_ms, 0);
  EXPECT_NEAR(borrowed, static_cast<double>(borrowed_ms) / 1000.0, 0.05 * 600 * 100);
  EXPECT_EQ(preempt, run->summary.total.preempted_cross + run->summary.total.preempted_in);
}

}  // namespace
}  // namespace qs::trace
