// AsyncLog writes exactly JsonlWriter's bytes and builds exactly the summary
// of a SummaryBuilder fed on the engine thread, and SpscRing hands
// every item over once, in order, under concurrent use. Run under the `tsan`
// preset these are the ThreadSanitizer stress tests of the lock-free code
// (README: `cmake --preset tsan && ctest --preset tsan -R async_log`).
#include "engine/log/async_log.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/log/event_log.h"
#include "engine/run.h"
#include "engine/log/summary.h"
#include "engine/testing/random_scenario.h"
#include "gtest/gtest.h"

namespace qs {
namespace {

TEST(SpscRingTest, EveryItemOnceInOrderAcrossThreads) {
  constexpr uint64_t kItems = 200'000;
  for (size_t capacity : {1, 2, 3, 64}) {
    SpscRing<uint64_t> ring(capacity);
    std::thread producer([&] {
      for (uint64_t i = 1; i <= kItems; ++i) {
        while (!ring.TryPush(i)) std::this_thread::yield();
      }
    });
    uint64_t expected = 1, sum = 0;
    while (expected <= kItems) {
      uint64_t v = 0;
      if (!ring.TryPop(v)) {
        std::this_thread::yield();
        continue;
      }
      ASSERT_EQ(v, expected) << "capacity " << capacity;
      sum += v;
      ++expected;
    }
    producer.join();
    uint64_t v = 0;
    EXPECT_FALSE(ring.TryPop(v));
    EXPECT_EQ(sum, kItems * (kItems + 1) / 2);
  }
}

TEST(SpscRingTest, ReportsFullAndEmpty) {
  SpscRing<int> ring(2);
  int v = 0;
  EXPECT_FALSE(ring.TryPop(v));
  EXPECT_TRUE(ring.TryPush(1));
  EXPECT_TRUE(ring.TryPush(2));
  EXPECT_FALSE(ring.TryPush(3));
  EXPECT_TRUE(ring.TryPop(v));
  EXPECT_EQ(v, 1);
  EXPECT_TRUE(ring.TryPush(3));
  EXPECT_TRUE(ring.TryPop(v));
  EXPECT_EQ(v, 2);
  EXPECT_TRUE(ring.TryPop(v));
  EXPECT_EQ(v, 3);
  EXPECT_FALSE(ring.TryPop(v));
}

// The fast engine's log of random scenarios (rejections, snapshots,
// preemptions included) through both writers at once; tiny chunks and rings
// make the engine thread wait for the writer thread constantly.
TEST(AsyncLogTest, SameBytesAsJsonlWriter) {
  int with_preemptions = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    testing::RandomScenarioOptions o;
    o.max_jobs = 120;
    const Scenario sc = testing::RandomScenario(seed, o);
    for (size_t chunk : {size_t{1}, size_t{300}, size_t{1} << 16}) {
      std::ostringstream sync_out, async_out;
      {
        JsonlWriter sync(&sync_out);
        AsyncLog async(&async_out, nullptr, chunk, /*ring_chunks=*/2);
        TeeSink tee({&sync, &async});
        RunFastEngine(sc, tee, RunOptions{});
        sync.Flush();
        async.Flush();
        ASSERT_EQ(async_out.str(), sync_out.str()) << "seed " << seed << ", chunk " << chunk;
        if (chunk == 1) {  // one chunk per record: the ring of 2 wraps around
          const std::string out = sync_out.str();
          EXPECT_EQ(async.chunks_submitted(), std::count(out.begin(), out.end(), '\n')) << "seed " << seed;
        }
      }
      ASSERT_EQ(async_out.str(), sync_out.str()) << "after destruction; seed " << seed;
      if (chunk == 1 && sync_out.str().find("preemptionSummary") != std::string::npos) ++with_preemptions;
    }
  }
  EXPECT_GT(with_preemptions, 5);  // the encoding of every optional part is exercised
}

// The summary built on the consumer thread, with and without the log, is
// the one built on the engine thread: every record kind the summary reads
// (jobs with their slots, rejections, capacity changes, the end) survives
// the encoding, in order.
TEST(AsyncLogTest, SameSummaryAsSummaryBuilder) {
  int with_capacity_changes = 0, with_rejections = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    testing::RandomScenarioOptions o;
    o.max_jobs = 120;
    const Scenario sc = testing::RandomScenario(seed, o);
    SummaryBuilder direct;
    const RunStats stats = RunFastEngine(sc, direct, RunOptions{});
    const Summary built = direct.Build(stats.invariant_violations);
    const std::string expected = SummaryToJson(built);
    if (built.rejected_requests > 0) ++with_rejections;
    for (const ScenarioEvent& ev : sc.events) {
      if (std::holds_alternative<UpdateServiceEnvironmentRequest>(ev.request)) {
        ++with_capacity_changes;
        break;
      }
    }
    for (size_t chunk : {size_t{1}, size_t{300}, size_t{1} << 16}) {
      for (bool with_log : {false, true}) {
        std::ostringstream log;
        SummaryBuilder async_summary;
        {
          AsyncLog async(with_log ? &log : nullptr, &async_summary, chunk, /*ring_chunks=*/2);
          RunFastEngine(sc, async, RunOptions{});
          async.Flush();
          ASSERT_EQ(SummaryToJson(async_summary.Build(stats.invariant_violations)), expected)
              << "seed " << seed << ", chunk " << chunk << ", log " << with_log;
        }
        EXPECT_EQ(log.str().empty(), !with_log) << "seed " << seed;
      }
    }
  }
  EXPECT_GT(with_capacity_changes, 5);
  EXPECT_GT(with_rejections, 5);
}

TEST(AsyncLogTest, FlushWritesEverythingSoFar) {
  std::ostringstream out;
  AsyncLog w(&out, nullptr, 1 << 20, 4);
  RejectedRecord r;
  r.time = 1500;
  r.action = "SubmitServiceJob";
  r.message = "ClientException: \"quoted\"\n";
  r.path = "events[3]";
  w.OnRejected(r);
  w.Flush();
  std::string expected;
  JsonlWriter::AppendRejected(expected, r);
  EXPECT_EQ(out.str(), expected);
  w.OnRejected(r);
  w.Flush();
  EXPECT_EQ(out.str(), expected + expected);
}

}  // namespace
}  // namespace qs
