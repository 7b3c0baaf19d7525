// The synthetic generator and the .qsb format: determinism at any thread
// count, the shape of the workload, and an exact write/read round trip with
// corruption detected.
#include <algorithm>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/gen/generator.h"
#include "engine/gen/generator_setup.h"
#include "engine/gen/memory_budget.h"
#include "engine/gen/qsb.h"
#include "engine/gen/qsb_codec.h"
#include "engine/io/scenario_json.h"
#include "gtest/gtest.h"
#include "oneapi/tbb/task_arena.h"

namespace qs::gen {
namespace {

GenOptions Small() {
  GenOptions o;
  o.jobs = 50'000;  // several blocks
  o.shares = 20;
  o.units = 5;
  o.seed = 42;
  return o;
}

TEST(GeneratorTest, SameBytesAtOneAndTwoThreads) {
  std::string one, two;
  tbb::task_arena a1(1), a2(2);
  a1.execute([&] { one = EncodeQsb(*Generate(Small())); });
  a2.execute([&] { two = EncodeQsb(*Generate(Small())); });
  EXPECT_EQ(one, two);
  GenOptions other = Small();
  other.seed = 43;
  EXPECT_NE(EncodeQsb(*Generate(other)), one);
}

TEST(GeneratorTest, WorkloadHasTheDocumentedShape) {
  absl::StatusOr<Scenario> sc = Generate(Small());
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(sc->submit_count, 50'000);
  int64_t shares = 0, submits = 0, updates = 0, terminates = 0, limit_changes = 0, big = 0, uncapped = 0;
  SimTime last = 0;
  std::vector<SimTime> runs;
  std::map<std::string, std::map<std::string, int64_t>> limits;  // share -> unit -> limit
  for (const ScenarioEvent& ev : sc->events) {
    EXPECT_GE(ev.time, last);
    last = ev.time;
    if (const auto* r = std::get_if<CreateQuotaShareRequest>(&ev.request)) {
      ++shares;
      for (const CapacityLimit& l : *r->capacity_limits) limits[*r->quota_share_name][l.capacity_unit] = l.max_capacity;
    }
    if (const auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request)) {
      ++submits;
      runs.push_back(r->run_time);
      EXPECT_GE(r->instance_count, 1);
      EXPECT_LE(r->instance_count, 16);
      // A type of its share, at most a quarter of the share's limit for it.
      const auto& mine = limits.at(*r->quota_share_name);
      ASSERT_EQ(mine.count(r->instance_type), 1u) << *r->job_name;
      EXPECT_LE(r->instance_count, std::max<int64_t>(1, mine.at(r->instance_type) / 4)) << *r->job_name;
      if (mine.at(r->instance_type) / 4 >= 16) {  // the weights, where the cap does not cut them
        ++uncapped;
        if (r->instance_count >= 8) ++big;
      }
    }
    if (std::holds_alternative<UpdateServiceJobRequest>(ev.request)) ++updates;
    if (std::holds_alternative<TerminateServiceJobRequest>(ev.request)) ++terminates;
    if (std::holds_alternative<UpdateQuotaShareRequest>(ev.request)) ++limit_changes;
  }
  EXPECT_EQ(shares, 20);
  // Limits follow the Zipf-like team sizes: team-0 is 20 times team-19.
  auto total = [&](const std::string& share) {
    int64_t t = 0;
    for (const auto& [unit, l] : limits.at(share)) t += l;
    return t;
  };
  EXPECT_GT(total("team-0"), 5 * total("team-19"));
  EXPECT_GT(total("team-0"), total("team-1"));
  EXPECT_EQ(submits, 50'000);
  EXPECT_EQ(limit_changes, 8);  // 4 temporary changes, each undone later
  EXPECT_NEAR(static_cast<double>(updates) / 50'000, 0.02, 0.005);
  EXPECT_NEAR(static_cast<double>(terminates) / 50'000, 0.01, 0.003);
  EXPECT_GT(uncapped, 5'000);
  EXPECT_NEAR(static_cast<double>(big) / static_cast<double>(uncapped), 0.13, 0.02);  // 8 and 16: 9% + 4%
  std::sort(runs.begin(), runs.end());
  const double median_s = static_cast<double>(runs[runs.size() / 2]) / 1000.0;
  EXPECT_NEAR(median_s, 900, 60);  // Philly-like 15 minutes
  EXPECT_GT(runs.back(), 86'400'000);  // a tail to days
}

// Mt64 is MT19937-64: the sequence of std::mt19937_64 from the same seed,
// across several refills of its 312 words, for seeds as Rng makes them.
TEST(GeneratorTest, Mt64IsStdMt19937_64) {
  for (uint64_t seed : {uint64_t{0}, uint64_t{5489}, uint64_t{0x9E3779B97F4A7C15ULL}, ~uint64_t{0}}) {
    generator_internal::Mt64 mine(seed);
    std::mt19937_64 std_mt(seed);
    for (int i = 0; i < 5000; ++i) ASSERT_EQ(mine(), std_mt()) << "seed " << seed << " draw " << i;
  }
}

// The stress profile is gen's shape before profiles, byte for byte: the
// FNV-1a hash of a small scenario's .qsb bytes, taken from the binary of
// the commit before profiles (70e3da3) and unchanged since. Version 2 bytes:
// version 3 differs only by its number and one knob byte in the head. The
// blocks of 65,536 events are those the hash was taken with (gen writes
// 4,096 since: the block table differs, the events do not).
TEST(GeneratorTest, StressProfileKeepsTheBytesOfTheOldDefault) {
  GenOptions o = GenOptions::For(Profile::kStress);
  o.jobs = 20'000;
  o.shares = 7;
  o.units = 3;
  o.seed = 3;
  const std::string bytes = EncodeQsb(*Generate(o), 2, 65536);
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ULL;
  EXPECT_EQ(h, 12740764961206535229ULL) << "size " << bytes.size();
}

// Steady follow-ups aim at jobs still alive: a priority update or a
// termination comes before the job's first attempt could end (arrival +
// run time), and an update before the termination of the same job.
TEST(GeneratorTest, SteadyFollowUpsComeWhileTheJobIsAlive) {
  GenOptions o = Small();
  o.priority_update_fraction = 0.2;
  o.terminate_fraction = 0.1;
  absl::StatusOr<Scenario> sc = Generate(o);
  ASSERT_TRUE(sc.ok());
  std::map<std::string, SimTime> ends, terminated;
  int64_t updates = 0, terminations = 0;
  for (const ScenarioEvent& ev : sc->events) {
    if (const auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request)) ends[*r->job_name] = ev.time + r->run_time;
    if (const auto* r = std::get_if<UpdateServiceJobRequest>(&ev.request)) {
      ++updates;
      ASSERT_EQ(ends.count(*r->job_id), 1u) << *r->job_id;
      EXPECT_LT(ev.time, ends[*r->job_id]) << *r->job_id;
      EXPECT_EQ(terminated.count(*r->job_id), 0u) << *r->job_id;
    }
    if (const auto* r = std::get_if<TerminateServiceJobRequest>(&ev.request)) {
      ++terminations;
      ASSERT_EQ(ends.count(*r->job_id), 1u) << *r->job_id;
      EXPECT_LT(ev.time, ends[*r->job_id]) << *r->job_id;
      terminated[*r->job_id] = ev.time;
    }
  }
  EXPECT_GT(updates, 5'000);
  EXPECT_GT(terminations, 3'000);
}

// Every share offers about `load` times its limits on each of its types
// (scaled down where the environment holds less than the limits add up to):
// offered instance-time over the span, per (share, type). The old rate
// (team size against limits, caps left out) failed this: team-1 offered
// 1.3x its limit on ml.g5.48xlarge.
TEST(GeneratorTest, EachShareOffersTheLoadOfItsLimits) {
  GenOptions o = Small();
  o.jobs = 400'000;
  o.load = 0.7;
  o.burst_fraction = 0;  // bursts compress time; the long-run mean is what is checked
  absl::StatusOr<Scenario> sc = Generate(o);
  ASSERT_TRUE(sc.ok());
  std::map<std::string, int64_t> env;
  for (const CapacityLimit& c : sc->service_environment.capacity_limits) env[c.capacity_unit] = c.max_capacity;
  std::map<std::string, std::map<std::string, int64_t>> limits;
  std::map<std::string, int64_t> sum;
  std::map<std::pair<std::string, std::string>, double> work;  // instance-seconds offered
  SimTime span = 0;
  for (const ScenarioEvent& ev : sc->events) {
    if (const auto* r = std::get_if<CreateQuotaShareRequest>(&ev.request)) {
      for (const CapacityLimit& l : *r->capacity_limits) {
        limits[*r->quota_share_name][l.capacity_unit] = l.max_capacity;
        sum[l.capacity_unit] += l.max_capacity;
      }
    }
    if (const auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request)) {
      work[{*r->quota_share_name, r->instance_type}] +=
          static_cast<double>(r->instance_count) * static_cast<double>(r->run_time) / 1000.0;
      span = ev.time;
    }
  }
  int checked = 0;
  for (const auto& [share, units] : limits) {
    for (const auto& [unit, limit] : units) {
      const double scale = std::min(1.0, static_cast<double>(env[unit]) / static_cast<double>(sum[unit]));
      const double offered = work[{share, unit}] / (static_cast<double>(span) / 1000.0);
      const double want = o.load * static_cast<double>(limit) * scale;
      // Heavy tails: a pair with few jobs strays; the big ones must not.
      if (want < 20) continue;
      EXPECT_NEAR(offered / want, 1.0, 0.2) << share << " " << unit << " offered " << offered << " want " << want;
      ++checked;
    }
  }
  EXPECT_GT(checked, 10);
}

TEST(GeneratorTest, RejectsAbsurdOptions) {
  GenOptions o = Small();
  o.jobs = 0;
  EXPECT_FALSE(Generate(o).ok());
  o = Small();
  o.shares = 21;
  EXPECT_FALSE(Generate(o).ok());
  o = Small();
  o.units = 6;
  EXPECT_FALSE(Generate(o).ok());
  o = Small();
  o.load = -1;
  EXPECT_FALSE(Generate(o).ok());
}

TEST(QsbTest, RoundTripIsExactForGeneratedAndParsedScenarios) {
  GenOptions o = Small();
  o.jobs = 3000;
  Scenario sc = *Generate(o);
  absl::StatusOr<Scenario> back = DecodeQsb(EncodeQsb(sc), sc.source);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(EncodeQsb(*back), EncodeQsb(sc));
  EXPECT_EQ(ScenarioToJson(*back), ScenarioToJson(sc));
  absl::StatusOr<Scenario> nb = LoadScenarioFile(QS_SHARED_DIR "/scenarios/notebook-example.json");
  ASSERT_TRUE(nb.ok());
  absl::StatusOr<Scenario> nb2 = DecodeQsb(EncodeQsb(*nb), nb->source);
  ASSERT_TRUE(nb2.ok()) << nb2.status().message();
  EXPECT_EQ(ScenarioToJson(*nb2), ScenarioToJson(*nb));
}

// One event of every request type, every optional field set, and a
// submission with none: their .qsb bytes are pinned (version 10; version 8,
// the same in version 9; and version 4, which lacks the submission's
// optionals after its outcome), so that an
// edit of RequestFields (qsb_codec.cc) that changes the format fails here: a
// round trip cannot see it, since the reader reads what the writer wrote.
// The values were also given by the codec before RequestFields (36fa132).
std::vector<ScenarioEvent> EveryRequest() {
  std::vector<ScenarioEvent> evs;
  auto add = [&evs](Request r) {
    ScenarioEvent ev;
    ev.time = 1000 * static_cast<SimTime>(evs.size() + 1);
    ev.path = absl::StrCat("events[", evs.size(), "]");
    ev.request = std::move(r);
    evs.push_back(std::move(ev));
  };
  SubmitServiceJobRequest full;
  full.job_name = "j1";
  full.job_queue = "q";
  full.service_job_type = "SAGEMAKER_TRAINING";
  full.quota_share_name = "A";
  full.share_identifier = "x";
  full.scheduling_priority = 7;
  full.retry_attempts = 3;
  full.attempt_duration_seconds = 900;
  full.preemption_retries = 2;
  full.payload_raw = "{}";
  full.instance_type = "ml.p4d.24xlarge";
  full.instance_count = 4;
  full.run_time = 123456;
  full.outcome = JobOutcome::kFailed;
  full.max_runtime_seconds = 3600;
  full.checkpoint_interval = 60000;
  add(full);
  SubmitServiceJobRequest bare;
  bare.payload_error = "payload";
  add(bare);
  UpdateServiceJobRequest update;
  update.job_id = "j1";
  update.scheduling_priority = -9;
  add(update);
  TerminateServiceJobRequest terminate;
  terminate.job_id = "j1";
  terminate.reason = "done";
  add(terminate);
  const std::vector<CapacityLimit> limits = {{"ml.p4d.24xlarge", 8}, {"ml.g5.xlarge", 300}};
  CreateQuotaShareRequest create;
  create.quota_share_name = "B";
  create.job_queue = "q";
  create.capacity_limits = limits;
  create.has_resource_sharing = true;
  create.strategy = Strategy::kLendAndBorrow;
  create.borrow_limit = 150;
  create.in_share_preemption = Toggle::kEnabled;
  create.state = Toggle::kDisabled;
  add(create);
  UpdateQuotaShareRequest share_update;
  share_update.quota_share_arn = "arn:aws:batch:us-east-1:1:quota-share/B";
  share_update.capacity_limits = limits;
  share_update.strategy = Strategy::kLend;
  share_update.in_share_preemption = Toggle::kDisabled;
  add(share_update);
  UpdateServiceEnvironmentRequest environment;
  environment.service_environment = "se";
  environment.state = Toggle::kEnabled;
  environment.capacity_limits = limits;
  add(environment);
  GetJobQueueSnapshotRequest snapshot;
  snapshot.job_queue = "q";
  add(snapshot);
  DeleteQuotaShareRequest del;
  del.quota_share_arn = "B";
  add(del);
  UpdateJobQueueRequest queue;
  queue.job_queue = "q";
  queue.state = Toggle::kEnabled;
  queue.priority = 3;
  queue.scheduling_policy_arn = "sp";
  queue.time_limit_actions =
      std::vector<JobStateTimeLimitAction>{{"CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY", "RUNNABLE", 600, "TERMINATE"}};
  add(queue);
  UpdateSchedulingPolicyRequest policy;
  policy.arn = "sp";
  policy.has_quota_share_policy = true;
  add(policy);
  return evs;
}

TEST(QsbTest, RequestBytesArePinned) {
  const std::vector<ScenarioEvent> evs = EveryRequest();
  const std::tuple<uint32_t, size_t, uint64_t> pinned[] = {{10, 428, 3536211725132084517ULL},
                                                            {9, 430, 9659977631110634528ULL},
                                                            {8, 430, 9659977631110634528ULL},
                                                            {4, 421, 3602785087360790732ULL}};
  for (const auto& [version, size, sum] : pinned) {
    QsbEventWriter w(0, version);
    for (const ScenarioEvent& ev : evs) w.Put(ev);
    const std::string bytes = w.Take();
    EXPECT_EQ(bytes.size(), size) << "version " << version;
    EXPECT_EQ(qsb_internal::LaneSum(bytes), sum) << "version " << version;
    // And they read back as written (version 4 without the two optionals).
    qsb_internal::Reader rd(bytes, 0, version);
    for (const ScenarioEvent& want : evs) {
      ScenarioEvent got;
      qsb_internal::GetEventInto(rd, got);
      ASSERT_TRUE(rd.ok()) << rd.error();
      ScenarioEvent expect = want;
      if (auto* r = std::get_if<SubmitServiceJobRequest>(&expect.request); r != nullptr && version < 5) {
        r->max_runtime_seconds.reset();
        r->checkpoint_interval.reset();
      }
      EXPECT_EQ(got.time, expect.time);
      EXPECT_EQ(got.path, expect.path);
      EXPECT_TRUE(got.request == expect.request) << expect.path << ", version " << version;
    }
    EXPECT_TRUE(rd.done());
  }
}

// Version 10 writes each event relative to the earlier ones of its block:
// two submissions, their bytes worked out by hand from traces/README.md.
TEST(QsbTest, Version10EventsAreCodedAgainstTheirBlock) {
  auto submit = [](SimTime time, int index, const char* name) {
    SubmitServiceJobRequest r;
    r.job_name = name;
    r.quota_share_name = "A";
    r.instance_type = "u";
    r.instance_count = 1;
    r.run_time = 5000;
    ScenarioEvent ev;
    ev.time = time;
    ev.path = absl::StrCat("events[", index, "]");
    ev.request = std::move(r);
    return ev;
  };
  const std::vector<ScenarioEvent> evs = {submit(1000, 0, "j0"), submit(1500, 1, "j1")};
  QsbEventWriter w(0, 10);
  for (const ScenarioEvent& ev : evs) w.Put(ev);
  const std::string want = {
      // time 1000 (zig-zag 2000), events[], index 0 - (-1 + 1), type 0, name "next generated" (j0),
      // no queue or job type, share literal "A", no share identifier, four absent ints, "" and "",
      // unit literal "u", count 1, run 5000 (zig-zag 10000), SUCCEEDED, two absent optionals.
      '\xd0', '\x0f', 1, 0, 0, 2, 0, 0, 1, 1, 'A', 0, 0, 0, 0, 0, 0, 0, 1, 1, 'u', 2, '\x90', '\x4e', 0, 0, 0,
      // 500 ms later (zig-zag 1000), events[1], j1 next, share and unit entry 0 (code 2).
      '\xe8', '\x07', 1, 0, 0, 2, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 2, '\x90', '\x4e', 0, 0, 0};
  EXPECT_EQ(w.Take(), want);
}

// Every coding choice of version 10 round-trips: literal, absent, jumping
// and consecutive generated names; dictionary hits and literals for every
// field, empty strings in optionals; paths of both kinds out of order; and
// other requests between submissions; in blocks of 1, 3 and 64 events.
TEST(QsbTest, Version10RoundTripsEveryCodingChoice) {
  Scenario sc;
  sc.source = "codes";
  SimTime t = 0;
  const char* names[] = {"j0", "j1", "j2", "j7", "j8", "job-x", "j05", "j", "j999999999999999999", "jx1"};
  const char* shares[] = {"A", "B", "", "team-with-a-long-name-01"};
  for (int i = 0; i < 300; ++i) {
    ScenarioEvent ev;
    t += (i * 7919) % 5 == 0 ? 0 : (i * 104729) % 100000;
    ev.time = t;
    const int kind = (i * 31) % 11;
    ev.path = absl::StrCat(kind == 0 ? "quotaShares[" : "events[", i % 13 == 0 ? 1000 - i : i, "]");
    if (kind == 10) {
      UpdateServiceJobRequest u;
      u.job_id = absl::StrCat("j", i);
      ev.request = std::move(u);
    } else {
      SubmitServiceJobRequest r;
      if (i % 5 != 4) r.job_name = i < 200 ? absl::StrCat("j", i / 2 * 2 + (i % 7 == 0)) : names[i % 10];
      if (i % 3 == 0) r.job_queue = i % 2 ? "q" : "";
      if (i % 4 == 0) r.service_job_type = "SAGEMAKER_TRAINING";
      if (i % 6 != 5) r.quota_share_name = shares[i % 4];
      if (i % 9 == 0) r.share_identifier = absl::StrCat("id", i % 4);
      if (i % 17 == 0) r.payload_error = "payload";
      if (i % 19 == 0) r.payload_raw = "{}";
      r.instance_type = i % 23 == 0 ? "" : (i % 2 ? "ml.p4d.24xlarge" : "ml.g5.xlarge");
      r.instance_count = i % 8;
      r.run_time = i * 1000;
      ev.request = std::move(r);
      ++sc.submit_count;
    }
    sc.events.push_back(std::move(ev));
  }
  // Names must be unique to read back: make the few clashes literal.
  std::map<std::string, int> seen;
  for (ScenarioEvent& ev : sc.events) {
    if (auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request); r != nullptr && r->job_name) {
      if (seen[*r->job_name]++ > 0) r->job_name = absl::StrCat(*r->job_name, "-", seen[*r->job_name]);
    }
  }
  for (size_t block : {size_t{1}, size_t{3}, size_t{64}}) {
    const std::string bytes = EncodeQsb(sc, 10, block);
    absl::StatusOr<Scenario> back = DecodeQsb(bytes, "codes.qsb");
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_TRUE(back->events == sc.events) << "blocks of " << block;
    back->source = sc.source;
    EXPECT_TRUE(EncodeQsb(*back, 10, block) == bytes) << "blocks of " << block;
  }
}

// A version 10 block whose codes do not decode is refused with the byte
// offset: an unknown name code, a generated name beyond 18 digits or
// written as a literal, a dictionary code past the field's entries, and
// times that leave [0, 1e12] s.
TEST(QsbTest, Version10BadCodesAreNamed) {
  struct Case {
    const char* what;
    std::function<void(qsb_internal::Writer&)> name_and_share;
    const char* message;
    size_t offset;  // of the byte after the bad code, from a base of 100
  };
  const Case cases[] = {
      {"name code 4", [](qsb_internal::Writer& w) { w.U(4); }, "bad job name code 4", 105},
      {"19 digits", [](qsb_internal::Writer& w) { w.U(3); w.U(1000000000000000000ULL); },
       "a generated job name beyond 18 digits", 114},
      {"generated literal", [](qsb_internal::Writer& w) { w.U(1); w.S("j5"); },
       "a generated job name written as a literal", 108},
      {"share code 5", [](qsb_internal::Writer& w) { w.U(0); w.U(0); w.U(0); w.U(5); },
       "string code 5 beyond the block's 0 entries", 108},
  };
  for (const Case& c : cases) {
    qsb_internal::Writer w;
    w.version = 10;
    w.I(0);     // time
    w.B(true);  // events[0]
    w.I(0);
    w.U(0);     // a submission
    c.name_and_share(w);
    w.out.append(40, '\0');
    qsb_internal::Reader rd(w.out, 100, 10);
    ScenarioEvent ev;
    qsb_internal::GetEventInto(rd, ev);
    EXPECT_NE(rd.error().find(c.message), std::string::npos) << c.what << ": " << rd.error();
    EXPECT_EQ(rd.error().rfind(absl::StrCat("byte offset ", c.offset, ": "), 0), 0u) << c.what << ": " << rd.error();
  }
  for (int64_t delta : {int64_t{-1}, kMaxSimTime + 1}) {
    qsb_internal::Writer w;
    w.I(delta);
    w.out.append(40, '\0');
    qsb_internal::Reader rd(w.out, 0, 10);
    ScenarioEvent ev;
    qsb_internal::GetEventInto(rd, ev);
    EXPECT_NE(rd.error().find("time must be in [0, 1e12] seconds"), std::string::npos) << delta << ": " << rd.error();
  }
}

// Version 9's block table (each block's facts, the units, the generated
// names flag) is pinned with the whole file of those events in blocks of
// 4; it also holds them as their facts say.
TEST(QsbTest, Version9BlockTableIsPinned) {
  Scenario sc;
  sc.source = "pinned";
  sc.events = EveryRequest();
  sc.submit_count = 2;
  const std::string bytes = EncodeQsb(sc, 9, 4);
  EXPECT_EQ(bytes.size(), 585u);
  EXPECT_EQ(qsb_internal::LaneSum(bytes), 16050128644233063413ULL);
  absl::StatusOr<Scenario> back = DecodeQsb(bytes, "pinned.qsb");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->events == sc.events);
  // "j1" is not the first generated name (j0): no facts for a run.
  auto stream = QsbFileStream::FromBytes(bytes, "pinned.qsb");
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  EXPECT_EQ((*stream)->facts(), nullptr);
}

TEST(QsbTest, ReadsVersion1AndManyBlocksAlike) {
  GenOptions o = Small();
  o.jobs = 2000;
  const Scenario sc = *Generate(o);
  const std::string want = ScenarioToJson(sc);
  for (const std::string& bytes : {EncodeQsb(sc, 1), EncodeQsb(sc, 2, 1), EncodeQsb(sc, 2, 97), EncodeQsb(sc)}) {
    absl::StatusOr<Scenario> back = DecodeQsb(bytes, sc.source);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(ScenarioToJson(*back), want);
  }
  // entitledCapacity exists from version 3 on: it round-trips there, and a
  // file of versions 1 and 2 reads as its default (the knob did not exist).
  Scenario lending = sc;
  lending.knobs.entitled_capacity = EntitledCapacity::kLendable;
  absl::StatusOr<Scenario> v3 = DecodeQsb(EncodeQsb(lending, 3, 97), sc.source);
  ASSERT_TRUE(v3.ok()) << v3.status().message();
  EXPECT_EQ(v3->knobs.entitled_capacity, EntitledCapacity::kLendable);
  EXPECT_EQ(ScenarioToJson(*v3), ScenarioToJson(lending));
  for (uint32_t old : {1u, 2u}) {
    absl::StatusOr<Scenario> back = DecodeQsb(EncodeQsb(lending, old, 97), sc.source);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->knobs.entitled_capacity, EntitledCapacity::kWithheld) << "version " << old;
  }
  // A submission's MaxRuntimeInSeconds from version 5 on: it round-trips
  // there and is absent when read from version 4.
  Scenario with_limit = sc;
  for (ScenarioEvent& ev : with_limit.events) {
    if (auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request)) {
      r->max_runtime_seconds = 3600;
      break;
    }
  }
  absl::StatusOr<Scenario> v5 = DecodeQsb(EncodeQsb(with_limit, 5, 97), sc.source);
  ASSERT_TRUE(v5.ok()) << v5.status().message();
  EXPECT_EQ(ScenarioToJson(*v5), ScenarioToJson(with_limit));
  absl::StatusOr<Scenario> v4_limit = DecodeQsb(EncodeQsb(with_limit, 4, 97), sc.source);
  ASSERT_TRUE(v4_limit.ok()) << v4_limit.status().message();
  EXPECT_EQ(ScenarioToJson(*v4_limit), ScenarioToJson(sc));
  // victimReturn likewise from version 4 on.
  Scenario in_place = sc;
  in_place.knobs.victim_return = VictimReturn::kInPlace;
  absl::StatusOr<Scenario> v4 = DecodeQsb(EncodeQsb(in_place, 4, 97), sc.source);
  ASSERT_TRUE(v4.ok()) << v4.status().message();
  EXPECT_EQ(ScenarioToJson(*v4), ScenarioToJson(in_place));
  for (uint32_t old : {1u, 2u, 3u}) {
    absl::StatusOr<Scenario> back = DecodeQsb(EncodeQsb(in_place, old, 97), sc.source);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->knobs.victim_return, VictimReturn::kBehindReservation) << "version " << old;
  }
  // Decoding in parallel gives the same scenario at any thread count.
  const std::string blocks = EncodeQsb(sc, 2, 64);
  tbb::task_arena a1(1), a2(2);
  Scenario one, two;
  a1.execute([&] { one = *DecodeQsb(blocks, "x.qsb"); });
  a2.execute([&] { two = *DecodeQsb(blocks, "x.qsb"); });
  EXPECT_TRUE(one == two);
  // An empty scenario has no blocks.
  Scenario empty;
  EXPECT_TRUE(DecodeQsb(EncodeQsb(empty), "").ok());
}

TEST(QsbTest, GenerateQsbEqualsEncodingTheGeneratedScenario) {
  for (int64_t jobs : {1, 700, 5000}) {
    GenOptions o = Small();
    o.jobs = jobs;
    o.seed = 7 + static_cast<uint64_t>(jobs);
    const Scenario sc = *Generate(o);
    for (size_t block : {size_t{1}, size_t{97}, kQsbBlockEvents}) {
      if (block == 1 && jobs > 700) continue;  // one block per event: slow, and 700 covers it
      const std::string want = EncodeQsb(sc, kQsbVersion, block);
      tbb::task_arena a1(1), a2(2);
      std::string one, two;
      a1.execute([&] { one = *GenerateQsb(o, block); });
      a2.execute([&] { two = *GenerateQsb(o, block); });
      EXPECT_EQ(one, want) << jobs << " jobs, blocks of " << block;
      EXPECT_EQ(two, want) << jobs << " jobs, blocks of " << block;
      const std::string path = ::testing::TempDir() + "gen_test.qsb";
      ASSERT_TRUE(GenerateQsbFile(o, path, block).ok());
      std::ifstream f(path, std::ios::binary);
      const std::string file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      EXPECT_EQ(file, want) << jobs << " jobs, blocks of " << block << ", written to a file";
    }
  }
  GenOptions bad = Small();
  bad.jobs = 0;
  EXPECT_FALSE(GenerateQsb(bad).ok());
  EXPECT_FALSE(GenerateQsbFile(bad, ::testing::TempDir() + "bad.qsb").ok());
  EXPECT_FALSE(GenerateQsbFile(Small(), "/nonexistent-dir/x.qsb").ok());
}

// The streamed encoding draws the jobs window by window and finds the last
// arrival from the last block: windows of one block (several windows, a
// follow-up heap carried across them) and the exact search for the last
// arrival give the bytes of the scenario held whole, in both profiles.
TEST(QsbTest, WindowsAndTheLastArrivalShortcutChangeNoByte) {
  for (Profile p : {Profile::kSteady, Profile::kStress}) {
    GenOptions o = GenOptions::For(p);
    o.jobs = 3 * kBlockJobs + 123;
    o.shares = 5;
    o.units = 2;
    o.seed = 21;
    const std::string want = EncodeQsb(*Generate(o), kQsbVersion, 997);
    EXPECT_EQ(*GenerateQsb(o, 997, 1), want) << ProfileName(p) << ", windows of one block";
    EXPECT_EQ(*GenerateQsb(o, 997, 2, /*exact_span=*/true), want) << ProfileName(p) << ", exact last arrival";
    EXPECT_EQ(*GenerateQsb(o, 997), want) << ProfileName(p);
  }
}

TEST(MemoryBudgetTest, RefusesOnlyWhatCannotFit) {
  EXPECT_TRUE(CheckMemoryBudget(1000, 1000 * kMinBytesPerEvent, "x").ok());
  EXPECT_TRUE(CheckMemoryBudget(100'000'000, 0, "x").ok());  // memory unknown: no check
  const absl::Status st = CheckMemoryBudget(100'000'000, uint64_t{24} << 30, "quotasim gen");
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted);
  const std::string m(st.message());
  EXPECT_NE(m.find("quotasim gen: 100000000 scenario events need at least 46.6 GiB of memory (500 bytes each)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("this machine has 24.0 GiB"), std::string::npos) << m;
  // No overflow for absurd counts.
  EXPECT_FALSE(CheckMemoryBudget(~uint64_t{0}, uint64_t{1} << 40, "x").ok());
}

TEST(QsbTest, RefusesAFileThatCannotFitBeforeDecodingIt) {
  GenOptions o = Small();
  o.jobs = 1000;
  const Scenario sc = *Generate(o);
  const uint64_t events = sc.events.size();
  for (uint32_t version : {1u, 2u, 3u, 7u, 8u, 9u, kQsbVersion}) {
    const std::string bytes = EncodeQsb(sc, version);
    EXPECT_TRUE(DecodeQsb(bytes, "big.qsb", events * kMinBytesPerEvent).ok());
    absl::StatusOr<Scenario> refused = DecodeQsb(bytes, "big.qsb", events * kMinBytesPerEvent - 1);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_NE(refused.status().message().find(absl::StrCat("big.qsb: ", events, " scenario events need")),
              std::string::npos)
        << refused.status().message();
  }
}

TEST(MemoryBudgetTest, AJsonScenarioTooBigForMemoryIsRefusedBeforeReading) {
  const std::string path = QS_SHARED_DIR "/scenarios/notebook-example.json";
  ASSERT_TRUE(LoadAnyScenarioFile(path, 0).ok());
  ASSERT_TRUE(LoadAnyScenarioFile(path, uint64_t{1} << 30).ok());
  absl::StatusOr<Scenario> refused = LoadAnyScenarioFile(path, 100);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("notebook-example.json: "), std::string::npos);
  EXPECT_NE(refused.status().message().find(" bytes of JSON need at least"), std::string::npos)
      << refused.status().message();
}

TEST(QsbTest, BadBlocksAreNamed) {
  GenOptions o = Small();
  o.jobs = 300;
  const Scenario sc = *Generate(o);
  // A flipped byte in the last block: that block's checksum (FNV-1a to
  // version 7, the lane sum from 8).
  for (uint32_t version : {2u, 7u, 8u, 9u, kQsbVersion}) {
    std::string flipped = EncodeQsb(sc, version, 50);
    flipped[flipped.size() - 5] ^= 0x21;
    const std::string m = std::string(DecodeQsb(flipped, "x.qsb").status().message());
    EXPECT_NE(m.find("x.qsb: checksum mismatch in event block"), std::string::npos) << "version " << version << ": " << m;
  }
  // Blocks out of time order (the same bytes, blocks swapped, checksums
  // intact): decoded, then caught across the block boundary.
  Scenario swapped = sc;
  const size_t r = swapped.events.size() % 50 + 100;  // the seam falls on a block boundary
  std::rotate(swapped.events.begin(), swapped.events.begin() + static_cast<int64_t>(r), swapped.events.end());
  const std::string m2 = std::string(DecodeQsb(EncodeQsb(swapped, 2, 50), "x.qsb").status().message());
  EXPECT_NE(m2.find("not sorted by time (event block"), std::string::npos) << m2;
  // From version 9 the block table states each block's first and last
  // times: caught there, before any block is decoded.
  const std::string m9 = std::string(DecodeQsb(EncodeQsb(swapped, kQsbVersion, 50), "x.qsb").status().message());
  EXPECT_NE(m9.find("not sorted by time (event block"), std::string::npos) << m9;
}

// The version 8 checksum (qsb_codec.h, LaneSum) is part of the format:
// its values are pinned, and every single-bit flip at every position of
// inputs of every length up to 100 bytes (each tail path: words, bytes)
// changes it, as does a swap of two 8-byte words.
TEST(QsbTest, LaneSumIsPinnedAndSeesEveryBitFlip) {
  using qsb_internal::LaneSum;
  std::string bytes;
  for (int i = 0; i < 100; ++i) bytes.push_back(static_cast<char>(i * 37 + 11));
  EXPECT_EQ(LaneSum(""), 10416879180377615705ULL);
  EXPECT_EQ(LaneSum(bytes), 15005918868703601953ULL);
  for (size_t n = 0; n <= bytes.size(); ++n) {
    const std::string_view s(bytes.data(), n);
    const uint64_t sum = LaneSum(s);
    for (size_t i = 0; i < n; ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string t(s);
        t[i] = static_cast<char>(t[i] ^ (1 << bit));
        EXPECT_NE(LaneSum(t), sum) << "length " << n << ", byte " << i << ", bit " << bit;
      }
    }
  }
  std::string swapped = bytes;
  std::swap_ranges(swapped.begin(), swapped.begin() + 8, swapped.begin() + 8);
  EXPECT_NE(LaneSum(swapped), LaneSum(bytes));
}

TEST(QsbTest, DuplicateJobNamesAreRejectedAsInJson) {
  GenOptions o = Small();
  o.jobs = 100;
  Scenario sc = *Generate(o);
  std::vector<SubmitServiceJobRequest*> submits;
  for (ScenarioEvent& ev : sc.events) {
    if (auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request)) submits.push_back(r);
  }
  submits[7]->job_name = *submits[3]->job_name;
  for (uint32_t version : {1u, 2u, 3u, 7u, 8u, 9u, kQsbVersion}) {
    const std::string m = std::string(DecodeQsb(EncodeQsb(sc, version, 16), "x.qsb").status().message());
    EXPECT_NE(m.find("x.qsb: events["), std::string::npos) << m;
    EXPECT_NE(m.find("].request.jobName: duplicate jobName 'j3' (first at events["), std::string::npos) << m;
  }
}

TEST(QsbTest, CorruptFilesGiveErrorsNotCrashes) {
  GenOptions o = Small();
  o.jobs = 200;
  const std::string good = EncodeQsb(*Generate(o));
  EXPECT_NE(DecodeQsb("", "x.qsb").status().message().find("bad magic"), std::string::npos);
  EXPECT_NE(DecodeQsb(good.substr(0, good.size() - 3), "x.qsb").status().message().find("truncated"),
            std::string::npos);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x5a;
  EXPECT_NE(DecodeQsb(flipped, "x.qsb").status().message().find("checksum"), std::string::npos);
  std::string version = good;
  version[4] = static_cast<char>(kQsbVersion + 1);
  EXPECT_NE(DecodeQsb(version, "x.qsb").status().message().find("version"), std::string::npos);
  // Every truncation point is handled, in both versions; so is every
  // single-byte corruption of a small many-block file.
  for (size_t cut = 0; cut < good.size(); cut += 97) EXPECT_FALSE(DecodeQsb(good.substr(0, cut), "x.qsb").ok());
  const std::string v1 = EncodeQsb(*Generate(o), 1);
  for (size_t cut = 0; cut < v1.size(); cut += 97) EXPECT_FALSE(DecodeQsb(v1.substr(0, cut), "x.qsb").ok());
  o.jobs = 20;
  for (uint32_t v : {2u, 9u, kQsbVersion}) {
    const std::string small = EncodeQsb(*Generate(o), v, 4);
    for (size_t at = 0; at < small.size(); ++at) {
      std::string bad = small;
      bad[at] ^= 0x40;
      EXPECT_FALSE(DecodeQsb(bad, "x.qsb").ok()) << "version " << v << ", byte " << at;
    }
  }
}

}  // namespace
}  // namespace qs::gen
