// The fast engine on the documented AWS example (quota-semantics.md section 7,
// ../shared/scenarios/README.md): every step at the documented time, and the
// full event log as a golden file.
#include <algorithm>
#include <fstream>
#include <queue>
#include <set>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/log/event_log.h"
#include "engine/run.h"
#include "engine/io/scenario_json.h"
#include "engine/fast/event_queue.h"
#include "engine/fast/invariant_checker.h"
#include "engine/fast/job_queue.h"
#include "engine/fast/state.h"
#include "engine/fast/victim_list.h"
#include "engine/fast/visit_order.h"
#include "engine/model/scenario_index.h"
#include "engine/testing/capture.h"
#include "engine/testing/scenario_builder.h"
#include "gtest/gtest.h"

namespace qs {
namespace {

struct Line {
  double time;
  std::string job, status, reason;
};

class Recorder : public LogSink {
 public:
  void OnJob(const JobRecord& r) override {
    lines.push_back({static_cast<double>(r.time) / 1000.0, std::string(r.job_name),
                     JobStatusName(r.status), std::string(r.status_reason)});
  }
  void OnRejected(const RejectedRecord&) override { ++rejected; }
  void OnSnapshot(const SnapshotRecord&) override { ++snapshots; }
  std::vector<Line> lines;
  int rejected = 0, snapshots = 0;
};

Scenario Notebook() {
  absl::StatusOr<Scenario> sc = LoadScenarioFile(QS_SHARED_DIR "/scenarios/notebook-example.json");
  EXPECT_TRUE(sc.ok()) << sc.status().message();
  return *sc;
}

// scenarios/README.md, row by row. SUBMITTED / RUNNABLE at submit, STARTING
// and RUNNING (zero latencies) are checked separately.
TEST(NotebookExampleTest, ReproducesEveryDocumentedStepAtItsTime) {
  Recorder rec;
  RunOptions full;
  full.full_invariant_check = true;
  RunStats stats = RunFastEngine(Notebook(), rec, full);
  EXPECT_EQ(stats.invariant_violations, 0);
  EXPECT_EQ(rec.rejected, 0);
  EXPECT_EQ(rec.snapshots, 1);
  using reasons::kCrossShareInProgress, reasons::kInShareInProgress, reasons::kCrossSharePreempted,
      reasons::kInSharePreempted;
  const std::vector<std::tuple<double, std::string, std::string, std::string>> want = {
      {0, "qs1_job_high", "SCHEDULED", ""},
      {0, "qs1_job_med", "SCHEDULED", ""},
      {60, "qs1_job_med", "RUNNING", std::string(kCrossShareInProgress)},
      {80, "qs1_job_med", "RUNNABLE", std::string(kCrossSharePreempted)},
      {80, "qs2_job_1", "SCHEDULED", ""},
      {120, "qs1_job_high", "RUNNING", std::string(kInShareInProgress)},
      {140, "qs1_job_high", "RUNNABLE", std::string(kInSharePreempted)},
      {140, "qs1_job_low", "SCHEDULED", ""},
      {380, "qs2_job_1", "SUCCEEDED", ""},
      {380, "qs1_job_high", "SCHEDULED", ""},
      {440, "qs1_job_low", "SUCCEEDED", ""},
      {440, "qs1_job_med", "SCHEDULED", ""},
      {680, "qs1_job_high", "SUCCEEDED", ""},
      {740, "qs1_job_med", "SUCCEEDED", ""},
  };
  std::vector<std::tuple<double, std::string, std::string, std::string>> got;
  for (const Line& l : rec.lines) {
    if (l.status == "SUBMITTED" || l.status == "STARTING" ||
        (l.status == "RUNNING" && l.reason.empty()) || (l.status == "RUNNABLE" && l.reason.empty())) {
      continue;
    }
    got.emplace_back(l.time, l.job, l.status, l.reason);
  }
  EXPECT_EQ(got, want);
  // qs1_job_low waits RUNNABLE from 0 until 140 (QS3's idle instance is reserved).
  bool low_runnable_at_0 = false;
  for (const Line& l : rec.lines) {
    if (l.job == "qs1_job_low" && l.status == "RUNNABLE" && l.time == 0) low_runnable_at_0 = true;
  }
  EXPECT_TRUE(low_runnable_at_0);
}

TEST(NotebookExampleTest, FullEventLogMatchesGoldenFile) {
  testing::Captured c = testing::CaptureFast(Notebook());
  std::ifstream in(QS_SOURCE_DIR "/engine/testdata/notebook-example.events.jsonl", std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file";
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(testing::FirstDifference(c.log, golden.str()), "");
}

// A scenario the differential fuzzer found: after an environment update,
// j7 (S1) borrows u0 from S2 and j6 (S2) borrows u2 from S0; S1's j1
// reclaims u2 from j6 and S2's j4 reclaims u0 from j7. With victimReturn
// IN_PLACE both victims come back to RUNNABLE in their old places, ahead of
// the jobs they were preempted for (j7 is older than j1, j6 has a higher
// priority than j4), so those lose their holds, the victims borrow again,
// and so on for ever. The run must stop, say why, and keep its invariants
// up to the stop.
TEST(PreemptionCycleTest, ARunCaughtInACycleStopsAndSaysWhy) {
  absl::StatusOr<Scenario> sc = LoadScenarioFile(QS_SOURCE_DIR "/engine/testdata/preemption-cycle.json");
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  ASSERT_EQ(sc->knobs.victim_return, VictimReturn::kInPlace);  // the file says so
  SimTime last_end = 0;
  for (int64_t k : {100, 300}) {
    RunOptions o;
    o.full_invariant_check = true;
    o.cycle_preemptions = k;
    const testing::Captured c = testing::CaptureFast(*sc, o);
    EXPECT_NE(c.stats.stopped.find(absl::StrCat("was preempted ", k, " times")), std::string::npos) << c.stats.stopped;
    EXPECT_NE(c.stats.stopped.find("a preemption cycle"), std::string::npos) << c.stats.stopped;
    EXPECT_TRUE(c.stats.stopped.find("job j6 ") != std::string::npos ||
                c.stats.stopped.find("job j7 ") != std::string::npos)
        << c.stats.stopped;
    EXPECT_EQ(c.stats.invariant_violations, 0) << c.stats.violation_messages.front();
    // It stopped after the pass of the k-th preemption, later for a larger k.
    EXPECT_NE(c.log.find(absl::StrCat("\"preemptedAttemptCount\": ", k - 1, ",")), std::string::npos);
    EXPECT_EQ(c.log.find(absl::StrCat("\"preemptedAttemptCount\": ", k + 1, ",")), std::string::npos);
    EXPECT_GT(c.stats.end_time, last_end);
    last_end = c.stats.end_time;
  }
  // A run that ends by itself is not stopped by the default (the
  // differential tests, which compare with the reference engine, which has no
  // such stop, run thousands more); a threshold of 1 stops at the first
  // preemption.
  EXPECT_EQ(testing::CaptureFast(Notebook()).stats.stopped, "");
  RunOptions o;
  o.cycle_preemptions = 1;
  EXPECT_NE(testing::CaptureFast(Notebook(), o).stats.stopped.find("was preempted 1 times"), std::string::npos);
}

// The same scenario under the default, victimReturn BEHIND_RESERVATION: j7
// and j6 come back behind j1 and j4, which keep the capacity reclaimed for
// them and start at the next pass (1170); no preemption follows, and both
// engines write the same log with no invariant violation.
TEST(PreemptionCycleTest, VictimsReturningBehindTheHolderEndTheCycle) {
  absl::StatusOr<Scenario> sc = LoadScenarioFile(QS_SOURCE_DIR "/engine/testdata/preemption-cycle.json");
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  ASSERT_EQ(sc->knobs.victim_return, VictimReturn::kInPlace);  // as the file says
  sc->knobs.victim_return = VictimReturn::kBehindReservation;
  RunOptions o;
  o.full_invariant_check = true;
  const testing::Captured fast = testing::CaptureFast(*sc, o);
  const testing::Captured ref = testing::CaptureReference(*sc);
  EXPECT_EQ(fast.stats.stopped, "");
  EXPECT_EQ(fast.stats.invariant_violations, 0);
  EXPECT_EQ(testing::FirstDifference(fast.log, ref.log), "");
  EXPECT_NE(fast.log.find(R"({"time": 1170.0, "jobName": "j1", "quotaShareName": "S1", "status": "SCHEDULED")"),
            std::string::npos);
  EXPECT_NE(fast.log.find(R"({"time": 1170.0, "jobName": "j4", "quotaShareName": "S2", "status": "SCHEDULED")"),
            std::string::npos);
  size_t preemptions = 0;
  for (size_t at = fast.log.find("PREEMPTION_IN_PROGRESS"); at != std::string::npos;
       at = fast.log.find("PREEMPTION_IN_PROGRESS", at + 1)) {
    ++preemptions;
  }
  EXPECT_EQ(preemptions, 2u);
}

// docs/semantics.md §6: a share's own borrowing job is never a cross-share
// victim of the share's head, even when the environment is short. SE 2; R
// (limit 1) runs rb borrowing LN's instance, C's c1 holds the other one;
// R's new head rc fits R's limit but nothing is free. Preempting rb would
// swap one job of R for another, so rc waits until rb ends (both engines,
// no invariant violation with the full check).
TEST(CrossShareReclaimTest, NeverPreemptsTheReclaimingSharesOwnBorrower) {
  absl::StatusOr<Scenario> sc =
      LoadScenarioFile(QS_SOURCE_DIR "/engine/testdata/own-borrower-not-reclaimed.json");
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  const testing::Captured fast = testing::CaptureFast(*sc);
  const testing::Captured ref = testing::CaptureReference(*sc);
  EXPECT_EQ(fast.log, ref.log);
  EXPECT_EQ(fast.stats.invariant_violations, 0);
  EXPECT_EQ(fast.log.find("PREEMPTION_IN_PROGRESS"), std::string::npos);
  // rb borrowed from LN at 0, so the setup holds; rc starts when rb ends.
  EXPECT_NE(fast.log.find(R"("jobName": "rb", "quotaShareName": "R", "status": "SCHEDULED", "statusReason": "", )"
                          R"("capacityUsage": [{"capacityUnit": "ml.g5.xlarge", "quantity": 1}], )"
                          R"("borrowed": [{"from": "LN")"),
            std::string::npos)
      << fast.log;
  EXPECT_NE(fast.log.find(R"({"time": 1000.0, "jobName": "rc", "quotaShareName": "R", "status": "SCHEDULED")"),
            std::string::npos)
      << fast.log;
}


// The invariant checker's invariant 1 (in use <= the environment's limit)
// and the hold's sign, per unit: looked at where the engine reported a
// change (TouchUnit; Touch marks the pair's unit too), or at every unit
// under the full check. A violation is reported when it arises (its unit
// is touched then) and again at each look while it lasts; an excess that
// existed when the limits changed (ResetAllowances) is allowed to drain,
// not to grow.
TEST(InvariantCheckerTest, UnitTotalsAreCheckedWhereTheyChanged) {
  const Scenario sc = testing::ScenarioBuilder().Environment({{"ml.a", 4}, {"ml.b", 2}}).Build();
  const std::string over5 = "invariant 1: ml.a in use 5 > environment limit 4";
  const std::string over6 = "invariant 1: ml.a in use 6 > environment limit 4";
  for (const bool full : {false, true}) {
    SCOPED_TRACE(full ? "full check" : "touched units");
    engine_internal::FastState st(sc, sc.knobs, IndexScenario(sc), /*huge_pages=*/false);
    engine_internal::InvariantChecker c(full);
    c.Resize(0, st.NumUnits());
    c.ResetAllowances(st);
    const int32_t a = st.UnitOf("ml.a"), b = st.UnitOf("ml.b");
    auto check = [&] {
      std::vector<std::string> out;
      c.CheckLimits(st, out);
      return out;
    };
    using Found = std::vector<std::string>;
    st.total_use[a] = 5;  // not reported to the checker: only the full check sees it
    EXPECT_EQ(check(), full ? Found{over5} : Found{});
    c.TouchUnit(a);
    EXPECT_EQ(check(), Found{over5});
    EXPECT_EQ(check(), full ? Found{over5} : Found{});  // no change since
    st.total_use[a] = 6;
    st.total_hold[b] = -1;
    c.TouchUnit(a);
    c.TouchUnit(b);
    EXPECT_EQ(check(), (Found{over6, "negative hold for ml.b"}));
    st.total_hold[b] = 0;
    c.TouchUnit(b);
    // The environment shrank under 5 running instances: they may drain.
    st.total_use[a] = 5;
    c.ResetAllowances(st);
    c.TouchUnit(a);
    EXPECT_EQ(check(), Found{});
    st.total_use[a] = 6;
    c.TouchUnit(a);
    EXPECT_EQ(check(), Found{over6});
    st.total_use[a] = 4;
    c.TouchUnit(a);
    EXPECT_EQ(check(), Found{});
    st.total_use[a] = 5;  // the allowance fell with the drain
    c.TouchUnit(a);
    EXPECT_EQ(check(), Found{over5});
  }
}

// Invariant 4's count of jobs per state: the checker counts what the
// engine's transitions report (CountSubmitted, CountStatus), and the full
// check's Recount compares it with the job records, for every state a live
// job can be in. A record whose status moved without its transition being
// counted is found; an ended job's record (its slot free until it is taken
// again) is not counted.
TEST(InvariantCheckerTest, JobsPerStateAreRecountedFromTheRecords) {
  const Scenario sc = testing::ScenarioBuilder().Environment({{"ml.a", 4}}).Build();
  engine_internal::FastState st(sc, sc.knobs, IndexScenario(sc), /*huge_pages=*/false);
  engine_internal::InvariantChecker c(/*full=*/true);
  c.Resize(0, st.NumUnits());
  c.ResetAllowances(st);
  auto recount = [&] {
    std::vector<std::string> out;
    c.Recount(st, out);
    return out;
  };
  using Found = std::vector<std::string>;
  st.TakeSlot(0);
  const int32_t b = st.TakeSlot(1);
  c.CountSubmitted();
  c.CountSubmitted();
  EXPECT_EQ(recount(), Found{});
  st.jobs[b].status = JobStatus::kSucceeded;  // not counted
  EXPECT_EQ(recount(), Found{"invariant 4: 1 job records are SUBMITTED but 2 jobs went there"});
  c.CountStatus(JobStatus::kSubmitted, JobStatus::kSucceeded);
  EXPECT_EQ(recount(), Found{});
  c.CountSubmitted();  // a submission whose record was never taken
  EXPECT_EQ(recount(), Found{"invariant 4: 1 job records are SUBMITTED but 2 jobs went there"});
  st.TakeSlot(2);  // and now it is
  EXPECT_EQ(recount(), Found{});
}

// The radix heap takes the events of its least time in (time, seq) order,
// as std::priority_queue pops them, through random pushes (never before the
// time last taken, as in the engine) and takes, with many equal times, times
// far apart (high buckets) and close (low ones), and a big heap.
TEST(RadixEventHeapTest, TakesInTimeThenSequenceOrderAsAPriorityQueue) {
  using engine_internal::Event;
  auto later = [](const Event& a, const Event& b) { return a.time != b.time ? a.time > b.time : a.seq > b.seq; };
  std::mt19937_64 rng(11);
  for (int round = 0; round < 300; ++round) {
    engine_internal::RadixEventHeap heap;
    std::priority_queue<Event, std::vector<Event>, decltype(later)> want(later);
    int64_t seq = 0;
    SimTime now = static_cast<SimTime>(rng() % 1000);
    // Few distinct times (ties decided by seq), a day, or up to 2^50 ms.
    const uint64_t spread = round % 3 == 0 ? 3 : round % 3 == 1 ? 86'400'000 : uint64_t{1} << 50;
    const int ops = 1 + static_cast<int>(rng() % 400);
    auto take = [&] {
      const SimTime t = heap.MinTime();
      ASSERT_EQ(t, want.top().time) << "round " << round;
      heap.TakeMin([&](const Event& ev) {
        ASSERT_EQ(ev.seq, want.top().seq) << "round " << round;
        want.pop();
        // An event taken may push later ones, as in the engine.
        if (ev.job % 4 == 0) {
          const Event more{t + 1 + static_cast<SimTime>(rng() % spread), seq++, engine_internal::EventType::kTick, 1, 0, 0};
          heap.push(more);
          want.push(more);
        }
      });
      ASSERT_TRUE(want.empty() || want.top().time > t) << "round " << round;
      now = t;
    };
    for (int k = 0; k < ops; ++k) {
      if (rng() % 3 != 0 || want.empty()) {
        const Event ev{now + static_cast<SimTime>(rng() % spread), seq++, engine_internal::EventType::kTick, k, 0, 0};
        heap.push(ev);
        want.push(ev);
      } else {
        take();
      }
      ASSERT_EQ(heap.size(), want.size());
    }
    while (!want.empty()) take();
    EXPECT_TRUE(heap.empty());
  }
  // A big heap: 50,000 events over 50 times, taken time by time.
  engine_internal::RadixEventHeap heap;
  std::priority_queue<Event, std::vector<Event>, decltype(later)> want(later);
  for (int64_t k = 0; k < 50'000; ++k) {
    const Event ev{static_cast<SimTime>(rng() % 50), k, engine_internal::EventType::kTick, 0, 0, 0};
    heap.push(ev);
    want.push(ev);
  }
  while (!want.empty()) {
    heap.TakeMin([&](const Event& ev) {
      ASSERT_EQ(ev.seq, want.top().seq) << want.size() << " left";
      want.pop();
    });
  }
  EXPECT_TRUE(heap.empty());
}

// The share queue (per-priority arrays, an ordered side list for older
// seqs, tombstones) holds the same keys in the same order as a std::set of
// QueueKey, through random inserts (mostly new seqs, some old ones coming
// back), erases at the front and in the middle, and priority changes, with
// few and many priority levels (levels dropped past kKeptLevels).
TEST(JobQueueTest, KeepsTheOrderOfASetOfQueueKeys) {
  using engine_internal::QueueKey;
  std::mt19937_64 rng(20261206);
  int64_t side_inserts = 0, middle_erases = 0;
  for (int round = 0; round < 300; ++round) {
    engine_internal::JobQueue q;
    std::set<QueueKey> want;
    std::vector<QueueKey> out;  // keys that left: some come back with their seq
    int32_t next_seq = 0;
    const uint64_t levels = round % 3 == 0 ? 40 : 1 + rng() % 4;
    const int ops = 1 + static_cast<int>(rng() % 3000);
    for (int k = 0; k < ops; ++k) {
      const uint64_t op = rng() % 10;
      if (want.empty() || op < 4) {  // a submission
        const QueueKey key{-static_cast<int64_t>(rng() % levels), next_seq++, static_cast<int32_t>(rng() % 1000)};
        q.Insert(key);
        want.insert(key);
      } else if (op < 5 && !out.empty()) {  // an older job comes back, maybe at a new priority
        const size_t i = rng() % out.size();
        QueueKey key = out[i];
        out[i] = out.back();
        out.pop_back();
        if (rng() % 3 == 0) key.neg_priority = -static_cast<int64_t>(rng() % levels);
        side_inserts += want.empty() || key.seq < std::prev(want.end())->seq ? 1 : 0;
        q.Insert(key);
        want.insert(key);
      } else if (op < 8) {  // the front is dispatched
        ASSERT_EQ(q.Front().seq, want.begin()->seq) << "round " << round << ", op " << k;
        ASSERT_EQ(q.Front().id, want.begin()->id);
        q.Erase(*want.begin());
        if (rng() % 2 == 0) out.push_back(*want.begin());
        want.erase(want.begin());
      } else {  // a job in the middle leaves
        auto it = want.begin();
        std::advance(it, static_cast<std::ptrdiff_t>(rng() % want.size()));
        ++middle_erases;
        q.Erase(*it);
        out.push_back(*it);
        want.erase(it);
      }
      ASSERT_EQ(q.size(), want.size());
      ASSERT_EQ(q.empty(), want.empty());
      if (k % 97 == 0 || k + 1 == ops) {
        std::vector<std::tuple<int64_t, int32_t, int32_t>> got, expected;
        for (const QueueKey& key : q) got.emplace_back(key.neg_priority, key.seq, key.id);
        for (const QueueKey& key : want) expected.emplace_back(key.neg_priority, key.seq, key.id);
        ASSERT_EQ(got, expected) << "round " << round << ", op " << k;
      }
    }
  }
  EXPECT_GT(side_inserts, 10000);
  EXPECT_GT(middle_erases, 10000);
}

// A victim list (flat and reversed up to kFlatMax keys, a B-tree above,
// tombstones for erased keys) iterates the same keys in the same order as
// a std::set of VictimKey, through appends (a newest job: first in victim
// order), inserts in the middle, keys coming back after an erase (a
// tombstone revived), erases anywhere, erases of the first victim (popped
// with the tombstones behind it) and erases of keys not in it, while
// it grows past kFlatMax (to the tree) and falls back below kFlatMax / 4.
// Every other round the list notes its keys' places (as the share lists
// do): job ids are then unique, as in the engine, the places start as
// garbage, and the key that is not in the list has the id of one that may be.
TEST(VictimListTest, KeepsTheOrderOfASetOfVictimKeys) {
  using engine_internal::VictimKey;
  using engine_internal::VictimList;
  std::mt19937_64 rng(20261207);
  int64_t middle_inserts = 0, revived = 0, to_tree = 0, to_flat = 0, first_erases = 0;
  for (int round = 0; round < 60; ++round) {
    const bool noted = round % 4 >= 2;  // both parities of `round` below
    std::vector<int32_t> place_array(8000);
    for (int32_t& p : place_array) p = static_cast<int32_t>(rng());
    int32_t* places = noted ? place_array.data() : nullptr;
    VictimList list;
    std::set<VictimKey> want;
    std::vector<VictimKey> out;  // erased keys: some come back
    int64_t now = 0;
    int32_t next_rank = 0;
    const int64_t levels = round % 2 == 0 ? 1 : 1 + static_cast<int64_t>(rng() % 30);
    const size_t cap = round % 3 == 0 ? 40 : 600;  // the size it oscillates around
    bool grow = true, big = false;
    const int ops = 1 + static_cast<int>(rng() % 6000);
    for (int k = 0; k < ops; ++k) {
      if (want.size() >= cap) grow = false;
      if (want.size() <= cap / 16) grow = true;
      // Of 10 ops, growing: 6 dispatches, 1 comes back, 2 leave, 1 misses;
      // shrinking: 2, 1, 6, 1.
      const uint64_t op = rng() % 10;
      const uint64_t inserts = grow ? 6 : 2;
      if (want.empty() || op < inserts) {  // a dispatch: the newest, at a random priority
        const int32_t rank = next_rank++;
        const VictimKey key{static_cast<int64_t>(rng() % levels), -(now += 1 + rng() % 3), 0, rank,
                            noted ? rank : static_cast<int32_t>(rng() % 100000)};
        middle_inserts += !want.empty() && *want.begin() < key ? 1 : 0;
        list.Insert(key, places);
        want.insert(key);
      } else if (op < inserts + 1 && !out.empty()) {  // a key erased earlier comes back
        const size_t i = rng() % out.size();
        const VictimKey key = out[i];
        out[i] = out.back();
        out.pop_back();
        if (want.count(key) != 0) continue;
        ++revived;
        list.Insert(key, places);
        want.insert(key);
      } else if (op < 9) {  // a job anywhere leaves; one in three, the first victim (taken)
        auto it = want.begin();
        if (rng() % 3 == 0) {
          ++first_erases;
        } else {
          std::advance(it, static_cast<std::ptrdiff_t>(rng() % want.size()));
        }
        list.Erase(*it, places);
        out.push_back(*it);
        want.erase(it);
      } else {  // an erase of a key not in the list changes nothing
        const VictimKey key{static_cast<int64_t>(rng() % levels), -(now + 1), 0, next_rank + 1, 7};
        list.Erase(key, places);
        ASSERT_FALSE(list.contains(key));
      }
      if (want.size() > VictimList::kFlatMax && !big) {
        big = true;
        ++to_tree;
      }
      if (want.size() <= VictimList::kFlatMax / 4 && big) {
        big = false;
        ++to_flat;
      }
      ASSERT_EQ(list.size(), want.size());
      ASSERT_EQ(list.empty(), want.empty());
      if (k % 53 == 0 || k + 1 == ops) {
        std::vector<std::tuple<int64_t, int64_t, int32_t, int32_t>> got, expected;
        for (const VictimKey& key : list) got.emplace_back(key.a, key.b, key.name_rank, key.id);
        for (const VictimKey& key : want) expected.emplace_back(key.a, key.b, key.name_rank, key.id);
        ASSERT_EQ(got, expected) << "round " << round << ", op " << k;
        if (!want.empty()) {
          const VictimKey& any = *std::next(want.begin(), static_cast<std::ptrdiff_t>(rng() % want.size()));
          ASSERT_TRUE(list.contains(any));
        }
      }
    }
  }
  EXPECT_GT(middle_inserts, 10000);
  EXPECT_GT(revived, 1000);
  EXPECT_GT(first_erases, 10000);
  EXPECT_GT(to_tree, 20);
  EXPECT_GT(to_flat, 10);
}

// More jobs running on one share and type than a flat victim list holds
// (VictimList::kFlatMax; up to about 700 here, most of one instance: the
// list turned into a tree once, as a temporary print in ToTree showed), of many
// priorities, with in-share preemption: the list becomes a B-tree and, as
// the jobs end, flat again; both engines write the same log, and the full
// check (every list against the job records, after every event) finds
// nothing.
TEST(VictimListTest, AShareRunningHundredsOfJobsPreemptsAsTheReference) {
  using testing::JobBuilder;
  using testing::ScenarioBuilder;
  using testing::ShareBuilder;
  const std::string kG = "ml.g5.xlarge";
  static_assert(engine_internal::VictimList::kFlatMax < 600, "share A must run more jobs than a flat list holds");
  ScenarioBuilder b;
  b.Environment({{kG, 800}})
      .Share(ShareBuilder("A").Limit(kG, 700).LendAndBorrow().InShare(true))
      .Share(ShareBuilder("B").Limit(kG, 100).Lend());
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    const bool a = rng() % 8 != 0;
    b.Submit(i * 0.2, JobBuilder(absl::StrCat("j", i), a ? "A" : "B")
                          .Priority(static_cast<int64_t>(rng() % 50))
                          .Instances(kG, rng() % 8 == 0 ? 2 : 1)
                          .Run(200 + static_cast<double>(rng() % 1200)));
  }
  const Scenario sc = b.Build();
  const testing::Captured fast = testing::CaptureFast(sc);
  const testing::Captured ref = testing::CaptureReference(sc);
  EXPECT_EQ(fast.stats.invariant_violations, 0);
  EXPECT_EQ(testing::FirstDifference(fast.log, ref.log), "");
  EXPECT_NE(fast.log.find("PREEMPTION_IN_PROGRESS"), std::string::npos);
}

// VisitOrder::ForEach picking the next share by key (the few-shares path
// most rounds take) visits exactly what walking the sorted order does, on
// random keys (ratio ties, infinite ratios, shares without a head) and with
// visits that make other shares active or inactive as they go.
// Both are also checked against UNDER_LIMIT_FIRST written out here on its
// own (docs/semantics.md "Share order": the ratio with an explicit infinity,
// then the older head, shares with a head first, then the name), with every
// share active throughout.
TEST(VisitOrderTest, PickingByKeyVisitsAsTheSortedWalk) {
  std::mt19937_64 rng(20261206);
  int picked_rounds = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Scenario sc;
    sc.service_environment.capacity_limits = {{"u", 100}};
    ScenarioIndex index;
    index.units = {"u"};
    engine_internal::FastState st(sc, Knobs{}, index, /*huge_pages=*/false);
    const int ns = 1 + static_cast<int>(rng() % 20);
    std::vector<int32_t> ranks(static_cast<size_t>(ns));
    for (int s = 0; s < ns; ++s) ranks[static_cast<size_t>(s)] = s;
    std::shuffle(ranks.begin(), ranks.end(), rng);
    for (int s = 0; s < ns; ++s) {
      engine_internal::Share sh;
      sh.name_rank = ranks[static_cast<size_t>(s)];
      sh.limit = {static_cast<int64_t>(rng() % 4)};  // 0: an infinite ratio when used
      sh.own = {static_cast<int64_t>(rng() % 5)};
      sh.borrowed = {static_cast<int64_t>(rng() % 2)};
      sh.lent = {0};
      if (rng() % 4 != 0) {  // a head; seqs collide only across trials
        engine_internal::Job j;
        j.seq = static_cast<int32_t>(rng() % 8);
        st.jobs.push_back(j);
        sh.head = static_cast<int32_t>(st.jobs.size() - 1);
        sh.head_seq = j.seq;
      }
      st.shares.push_back(std::move(sh));
    }
    const uint64_t all = ns == 64 ? ~uint64_t{0} : (uint64_t{1} << ns) - 1;
    const uint64_t start = rng() & all;
    const uint64_t salt = rng();
    // A visit to s turns some shares on and some off, the same way in both walks.
    auto run = [&](uint64_t likely) {
      engine_internal::VisitOrder order;
      order.StartRound(st, likely, all);
      uint64_t active = start;
      std::vector<int32_t> visits;
      order.ForEach([&] { return active; },
                    [&](int32_t s) {
                      visits.push_back(s);
                      const uint64_t h = (salt ^ (static_cast<uint64_t>(s) * 0x9E3779B97F4A7C15ull)) *
                                         (visits.size() + 1);
                      active = (active | ((h >> 7) & (h >> 23) & all)) & ~((h >> 41) & (h >> 3) & all);
                    });
      return visits;
    };
    const std::vector<int32_t> walked = run(~uint64_t{0});  // more than kSelectShares: sorted, walked
    const std::vector<int32_t> picked = run(0);    // none likely: picked by key
    ASSERT_EQ(picked, walked) << "trial " << trial << ", " << ns << " shares";
    picked_rounds += walked.size() > 1 ? 1 : 0;

    // The order itself, from the shares' counters.
    struct Want {
      bool infinite;
      int64_t num, den;
      int64_t head;  // the head's seq; shares without one after all others
      int32_t name_rank, share;
    };
    std::vector<Want> want;
    for (int s = 0; s < ns; ++s) {
      const engine_internal::Share& sh = st.shares[static_cast<size_t>(s)];
      const int64_t use = sh.own[0] + sh.borrowed[0];
      Want w{false, 0, 1, sh.head == engine_internal::kNone ? int64_t{1} << 40 : sh.head_seq, sh.name_rank, s};
      if (sh.limit[0] == 0) {
        w.infinite = use > 0;
      } else {
        w.num = use;
        w.den = sh.limit[0];
      }
      want.push_back(w);
    }
    std::sort(want.begin(), want.end(), [](const Want& a, const Want& b) {
      if (a.infinite != b.infinite) return b.infinite;
      if (!a.infinite && a.num * b.den != b.num * a.den) return a.num * b.den < b.num * a.den;
      if (a.head != b.head) return a.head < b.head;
      return a.name_rank < b.name_rank;
    });
    std::vector<int32_t> expected;
    for (const Want& w : want) expected.push_back(w.share);
    for (uint64_t likely : {~uint64_t{0}, uint64_t{0}}) {
      engine_internal::VisitOrder order;
      order.StartRound(st, likely, all);
      std::vector<int32_t> visits;
      order.ForEach([&] { return all; }, [&](int32_t s) { visits.push_back(s); });
      ASSERT_EQ(visits, expected) << "trial " << trial << ", " << ns << " shares, likely " << likely;
    }
  }
  EXPECT_GT(picked_rounds, 1000);
}

}  // namespace
}  // namespace qs
