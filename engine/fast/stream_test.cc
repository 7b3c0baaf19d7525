// A streamed run (QsbFileStream + RunFastEngine(EventStream)) must be the
// run of the same scenario held whole, byte for byte, and a bad stream must
// fail as DecodeQsb fails on the same bytes.
#include <algorithm>
#include <atomic>
#include <functional>
#include <sstream>
#include <variant>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/log/event_log.h"
#include "engine/gen/generator.h"
#include "engine/gen/memory_budget.h"
#include "engine/gen/qsb.h"
#include "engine/run.h"
#include "engine/model/scenario_index.h"
#include "engine/io/scenario_json.h"
#include "engine/testing/capture.h"
#include "engine/testing/random_scenario.h"
#include "engine/testing/scenario_builder.h"
#include "gtest/gtest.h"
#include "oneapi/tbb/task_arena.h"

namespace qs {
namespace {

gen::GenOptions Gen(int64_t jobs, uint64_t seed) {
  gen::GenOptions o;
  o.jobs = jobs;
  o.shares = 20;
  o.units = 5;
  o.seed = seed;
  o.preemption = true;
  return o;
}

testing::Captured CaptureStream(const EventStream& stream) {
  std::ostringstream out;
  testing::Captured c;
  {
    JsonlWriter w(&out);
    RunOptions o;
    o.check_invariants = true;
    absl::StatusOr<RunStats> stats = RunFastEngine(stream, w, o);
    EXPECT_TRUE(stats.ok()) << stats.status().message();
    if (stats.ok()) c.stats = *stats;
  }
  c.log = out.str();
  return c;
}

// The streamed run of each encoding equals the run of the scenario that
// encoding holds: the scenario itself for the version written, the file
// decoded whole for older versions (which lack later fields and knobs).
void ExpectStreamedEqualsWhole(const Scenario& sc, const std::string& what) {
  const testing::Captured current = testing::CaptureFast(sc, /*full_check=*/false);
  ASSERT_EQ(current.stats.invariant_violations, 0) << what;
  for (uint32_t version : {1u, 2u, 9u, gen::kQsbVersion}) {
    testing::Captured older;
    if (version != gen::kQsbVersion) {
      absl::StatusOr<Scenario> decoded = gen::DecodeQsb(gen::EncodeQsb(sc, version), "x.qsb");
      ASSERT_TRUE(decoded.ok()) << decoded.status().message();
      older = testing::CaptureFast(*decoded, /*full_check=*/false);
    }
    const testing::Captured& whole = version == gen::kQsbVersion ? current : older;
    for (size_t block : {size_t{1}, size_t{97}, gen::kQsbBlockEvents}) {
      if (version == 1 && block != gen::kQsbBlockEvents) continue;
      if (block == 1 && sc.events.size() > 3000) continue;
      auto stream = gen::QsbFileStream::FromBytes(gen::EncodeQsb(sc, version, block), "x.qsb");
      ASSERT_TRUE(stream.ok()) << what << ": " << stream.status().message();
      for (int threads : {1, 2}) {
        tbb::task_arena arena(threads);
        testing::Captured streamed;
        arena.execute([&] { streamed = CaptureStream(**stream); });
        EXPECT_EQ(testing::FirstDifference(streamed.log, whole.log), "")
            << what << ", version " << version << ", blocks of " << block << ", " << threads << " threads";
        EXPECT_EQ(streamed.stats.events_processed, whole.stats.events_processed) << what;
        EXPECT_EQ(streamed.stats.invariant_violations, 0) << what;
      }
    }
  }
}

TEST(StreamTest, StreamedRunEqualsTheRunOfTheWholeScenario) {
  for (int64_t jobs : {1, 800, 20'000}) {
    ExpectStreamedEqualsWhole(*gen::Generate(Gen(jobs, 11 + static_cast<uint64_t>(jobs))),
                              absl::StrCat("generated, ", jobs, " jobs"));
  }
  absl::StatusOr<Scenario> nb = LoadScenarioFile(QS_SHARED_DIR "/scenarios/notebook-example.json");
  ASSERT_TRUE(nb.ok());
  ExpectStreamedEqualsWhole(*nb, "notebook-example.json");
  // Random scenarios reach rejections, terminations, limit changes and
  // snapshots that the generator rarely makes.
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    ExpectStreamedEqualsWhole(testing::RandomScenario(seed), absl::StrCat("random scenario ", seed));
  }
  ExpectStreamedEqualsWhole(Scenario{}, "empty scenario");
}

// A streamed run's checked submissions find their share by the id the
// decoding task gave their share name (among the names the scenario's
// CreateQuotaShare requests give), which the engine maps to the share while
// it exists; the whole scenario's run looks the name up. Both agree for a
// share created during the run (a submission before it and after it), a
// share deleted (and a later submission to it, and a rejected attempt to
// create it again), a name no request creates, and no name at all.
TEST(StreamTest, CheckedShareNamesFollowCreationAndDeletion) {
  using testing::JobBuilder;
  using testing::ScenarioBuilder;
  using testing::ShareBuilder;
  using testing::ShareUpdateBuilder;
  const std::string kG = "ml.g5.xlarge";
  DeleteQuotaShareRequest delete_a;
  delete_a.quota_share_arn = "A";
  SubmitServiceJobRequest nameless = JobBuilder("n1", "A").Run(10).Build();
  nameless.quota_share_name.reset();
  const Scenario sc = ScenarioBuilder()
                          .Environment({{kG, 4}})
                          .Share(ShareBuilder("A").Limit(kG, 2).Lend())
                          .Share(ShareBuilder("B").Limit(kG, 1).LendAndBorrow())
                          .Submit(0, JobBuilder("a1", "A").Run(100))
                          .Submit(0, JobBuilder("z1", "Z").Run(10))
                          .Submit(5, JobBuilder("c1", "C").Run(10))
                          .CreateShare(10, ShareBuilder("C").Limit(kG, 1).LendAndBorrow())
                          .Submit(20, JobBuilder("c2", "C").Instances(kG, 2).Run(50))
                          .Submit(20, JobBuilder("b1", "B").Instances(kG, 2).Run(50))
                          .UpdateShare(30, ShareUpdateBuilder("A").Disabled())
                          .Event(30, delete_a)
                          .Submit(40, JobBuilder("a2", "A").Run(10))
                          .CreateShare(45, ShareBuilder("A").Limit(kG, 1).Lend())
                          .Submit(50, JobBuilder("a3", "A").Run(10))
                          .Event(50, nameless)
                          .Submit(60, JobBuilder("c3", "C").Run(10))
                          .Build();
  ExpectStreamedEqualsWhole(sc, "share names");
  // The run is the one described: c2 and c3 run on C (created at 10); z1,
  // c1 (before C), a2 and a3 (after A's deletion), the nameless job and the
  // second CreateQuotaShare of A are rejected.
  const testing::Captured whole = testing::CaptureFast(sc, /*full_check=*/true);
  EXPECT_EQ(whole.stats.invariant_violations, 0);
  for (const char* job : {"c2", "c3"}) {
    EXPECT_NE(whole.log.find(absl::StrCat("\"jobName\": \"", job, "\", \"quotaShareName\": \"C\", \"status\": \"SCHEDULED\"")),
              std::string::npos)
        << job << "\n" << whole.log;
  }
  size_t rejected = 0;
  for (size_t at = whole.log.find("\"rejected\": true"); at != std::string::npos;
       at = whole.log.find("\"rejected\": true", at + 1)) {
    ++rejected;
  }
  EXPECT_EQ(rejected, 6u) << whole.log;
}

TEST(StreamTest, AFileStreamReadsWhatWasWritten) {
  const Scenario sc = *gen::Generate(Gen(3000, 5));
  const std::string path = ::testing::TempDir() + "stream_test.qsb";
  ASSERT_TRUE(gen::WriteQsbFile(sc, path).ok());
  auto stream = gen::QsbFileStream::Open(path);
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  EXPECT_EQ(testing::FirstDifference(CaptureStream(**stream).log, testing::CaptureFast(sc, false).log), "");
  EXPECT_EQ(gen::QsbFileStream::Open(path + ".missing").status().code(), absl::StatusCode::kNotFound);
  // The memory guard counts job submissions at the bytes a streamed run keeps per job.
  const uint64_t need = static_cast<uint64_t>(sc.submit_count) * gen::kMinStreamRunBytesPerJob;
  EXPECT_TRUE(gen::QsbFileStream::Open(path, need).ok());
  absl::StatusOr<std::unique_ptr<gen::QsbFileStream>> refused = gen::QsbFileStream::Open(path, need - 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("3000 job submissions need at least"), std::string::npos)
      << refused.status().message();
}

// Blocks are decoded into the events of the last block read (their strings
// reused): the events must be those a fresh read gives, and those encoded,
// whatever the buffer held before (other request types, longer strings).
// Submissions with every optional field and long strings, bare ones and
// other requests, in a cycle of three: with blocks of two events, every slot
// of a block reads over a different kind of event.
Scenario MixedEvents() {
  Scenario sc = testing::RandomScenario(1);
  sc.events.clear();
  sc.submit_count = 0;
  for (int i = 0; i < 30; ++i) {
    ScenarioEvent ev;
    ev.time = i * 1000;
    ev.path = absl::StrCat("events[", i * 1000003, "]");
    if (i % 3 == 0) {
      SubmitServiceJobRequest r;
      r.job_name = absl::StrCat("a-job-name-longer-than-a-short-string-", i);
      r.job_queue = "queue-with-a-long-name-xxxxxxxxxxxxxxxx";
      r.service_job_type = "SAGEMAKER_TRAINING";
      r.quota_share_name = "share-with-a-long-name-xxxxxxxxxxxxxxxx";
      r.share_identifier = "fairshare-identifier";
      r.scheduling_priority = 7;
      r.retry_attempts = 3;
      r.attempt_duration_seconds = 3600;
      r.preemption_retries = 2;
      r.payload_error = "serviceRequestPayload is not JSON: a long explanation";
      r.payload_raw = "{not json at all, and longer than fifteen bytes";
      r.instance_type = "ml.p4d.24xlarge-and-then-some";
      r.instance_count = 16;
      r.run_time = 123456;
      r.outcome = JobOutcome::kFailed;
      ev.request = std::move(r);
      ++sc.submit_count;
    } else if (i % 3 == 1) {
      SubmitServiceJobRequest r;
      r.job_name = absl::StrCat("j", i);
      r.instance_type = "g";
      r.instance_count = 1;
      ev.request = std::move(r);
      ++sc.submit_count;
    } else {
      UpdateServiceJobRequest r;
      r.job_id = absl::StrCat("j", i - 1);
      r.scheduling_priority = 1;
      ev.request = std::move(r);
    }
    sc.events.push_back(std::move(ev));
  }
  return sc;
}

TEST(StreamTest, ReadingIntoUsedEventsGivesWhatAFreshReadGives) {
  for (uint64_t seed = 0; seed <= 40; ++seed) {
    const Scenario sc = seed == 0 ? MixedEvents() : testing::RandomScenario(seed);
    auto stream = gen::QsbFileStream::FromBytes(gen::EncodeQsb(sc, gen::kQsbVersion, seed == 0 ? 2 : 7), "x.qsb");
    ASSERT_TRUE(stream.ok()) << stream.status().message();
    const size_t n = (*stream)->num_blocks();
    std::vector<ScenarioEvent> used;
    ASSERT_EQ((*stream)->num_events(), sc.events.size());
    size_t first = 0;
    for (size_t b = 0; b < n; ++b) {  // each block over its predecessor's events
      std::vector<ScenarioEvent> fresh;
      ASSERT_TRUE((*stream)->ReadBlock(b, fresh).ok());
      ASSERT_TRUE((*stream)->ReadBlock(b, used).ok());
      ASSERT_EQ(fresh, used) << "seed " << seed << ", block " << b;
      ASSERT_TRUE(std::equal(fresh.begin(), fresh.end(), sc.events.begin() + static_cast<int64_t>(first)))
          << "seed " << seed << ", block " << b;
      first += fresh.size();
      // Then the block again over the next one's events (or a shorter one).
      if (b + 1 < n) {
        ASSERT_TRUE((*stream)->ReadBlock(b + 1, used).ok());
        ASSERT_TRUE((*stream)->ReadBlock(b, used).ok());
        ASSERT_EQ(fresh, used) << "seed " << seed << ", block " << b << " over block " << b + 1;
      }
    }
  }
}

// The error of streaming `bytes` (opening, then indexing), or "".
std::string StreamError(const std::string& bytes) {
  auto stream = gen::QsbFileStream::FromBytes(bytes, "x.qsb");
  if (!stream.ok()) return std::string(stream.status().message());
  absl::StatusOr<ScenarioIndex> index = IndexEventStream(**stream);
  return index.ok() ? "" : std::string(index.status().message());
}

std::string DecodeError(const std::string& bytes) {
  absl::StatusOr<Scenario> s = gen::DecodeQsb(bytes, "x.qsb");
  return s.ok() ? "" : std::string(s.status().message());
}

TEST(StreamTest, BadStreamsFailAsDecodingThemWholeFails) {
  gen::GenOptions o = Gen(300, 3);
  Scenario sc = *gen::Generate(o);
  // Blocks out of time order, checksums intact.
  Scenario swapped = sc;
  const size_t r = swapped.events.size() % 50 + 100;
  std::rotate(swapped.events.begin(), swapped.events.begin() + static_cast<int64_t>(r), swapped.events.end());
  // A duplicate jobName, in different blocks and in one.
  Scenario dup = sc, dup_near = sc;
  std::vector<SubmitServiceJobRequest*> a, b;
  for (ScenarioEvent& ev : dup.events) {
    if (auto* q = std::get_if<SubmitServiceJobRequest>(&ev.request)) a.push_back(q);
  }
  for (ScenarioEvent& ev : dup_near.events) {
    if (auto* q = std::get_if<SubmitServiceJobRequest>(&ev.request)) b.push_back(q);
  }
  a[250]->job_name = *a[3]->job_name;
  a[120]->job_name = *a[40]->job_name;  // the earlier repeat is the one named
  b[8]->job_name = *b[7]->job_name;
  for (const std::string& bytes :
       {gen::EncodeQsb(swapped, 2, 50), gen::EncodeQsb(dup, 2, 50), gen::EncodeQsb(dup_near, 2, 50),
        gen::EncodeQsb(dup, 1)}) {
    const std::string want = DecodeError(bytes);
    ASSERT_NE(want, "");
    EXPECT_EQ(StreamError(bytes), want);
  }
  EXPECT_NE(StreamError(gen::EncodeQsb(dup, 2, 50)).find("duplicate jobName 'j40'"), std::string::npos);
  // Every truncation and every flipped byte of a small many-block file
  // fails, as whole decoding does (the message may differ: the stream checks
  // the head before the blocks).
  o.jobs = 20;
  const std::string small = gen::EncodeQsb(*gen::Generate(o), 2, 4);
  for (size_t cut = 0; cut < small.size(); ++cut) {
    EXPECT_NE(StreamError(small.substr(0, cut)), "") << "cut at " << cut;
  }
  for (size_t at = 0; at < small.size(); ++at) {
    std::string bad = small;
    bad[at] ^= 0x40;
    EXPECT_NE(StreamError(bad), "") << "byte " << at;
  }
}

// A stream whose blocks read once (the index pass) and then fail: the run
// stops with the error instead of going on without the events.
class FailingSecondRead : public EventStream {
 public:
  explicit FailingSecondRead(const EventStream& s) : s_(s) {}
  const Scenario& head() const override { return s_.head(); }
  size_t num_events() const override { return s_.num_events(); }
  size_t num_blocks() const override { return s_.num_blocks(); }
  absl::Status ReadBlock(size_t b, std::vector<ScenarioEvent>& out) const override {
    if (b == num_blocks() - 1 && reads_.fetch_add(1) > 0) return absl::DataLossError("x.qsb: read failed");
    return s_.ReadBlock(b, out);
  }

 private:
  const EventStream& s_;
  mutable std::atomic<int> reads_{0};
};

TEST(StreamTest, ABlockFailingDuringTheRunEndsItWithTheError) {
  auto stream = gen::QsbFileStream::FromBytes(gen::EncodeQsb(*gen::Generate(Gen(500, 9)), 2, 100), "x.qsb");
  ASSERT_TRUE(stream.ok());
  FailingSecondRead failing(**stream);
  std::ostringstream out;
  JsonlWriter sink(&out);
  absl::StatusOr<RunStats> stats = RunFastEngine(failing, sink, RunOptions{});
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().message(), "x.qsb: read failed");
}

// Version 9 through its public pieces (QsbEventWriter, QsbPrefix): the
// bytes of `sc` in blocks of `block` events, each block's facts first given
// to edit(block, facts) (to state what the block does not hold).
std::string EncodeEdited(const Scenario& sc, size_t block, const std::function<void(size_t, gen::QsbBlockFacts&)>& edit) {
  std::vector<gen::QsbBlockInfo> table;
  std::string body;
  for (size_t first = 0, b = 0; first < sc.events.size(); first += block, ++b) {
    const size_t end = std::min(sc.events.size(), first + block);
    gen::QsbEventWriter w(0);
    for (size_t i = first; i < end; ++i) w.Put(sc.events[i]);
    std::string bytes = w.Take();
    gen::QsbBlockFacts f = w.TakeFacts();
    edit(b, f);
    const uint64_t sum = gen::QsbChecksum(bytes);
    table.push_back(gen::QsbBlockInfo{end - first, bytes.size(), sum, std::move(f)});
    body += bytes;
  }
  return gen::QsbPrefix(sc, sc.events.size(), table) + body;
}

// The error of opening, indexing or running `bytes` streamed ("" if none).
std::string StreamRunError(const std::string& bytes) {
  auto stream = gen::QsbFileStream::FromBytes(bytes, "x.qsb");
  if (!stream.ok()) return std::string(stream.status().message());
  std::ostringstream out;
  JsonlWriter sink(&out);
  absl::StatusOr<RunStats> stats = RunFastEngine(**stream, sink, RunOptions{});
  return stats.ok() ? "" : std::string(stats.status().message());
}

// Counts the blocks read through it.
class CountingStream : public EventStream {
 public:
  explicit CountingStream(const EventStream& s) : s_(s) {}
  const Scenario& head() const override { return s_.head(); }
  size_t num_events() const override { return s_.num_events(); }
  size_t num_blocks() const override { return s_.num_blocks(); }
  absl::Status ReadBlock(size_t b, std::vector<ScenarioEvent>& out) const override {
    ++reads_;
    return s_.ReadBlock(b, out);
  }
  const StreamFacts* facts() const override { return s_.facts(); }
  int reads() const { return reads_.load(); }

 private:
  const EventStream& s_;
  mutable std::atomic<int> reads_{0};
};

// A version 9 file with generated names is indexed from its block table and
// the blocks holding other requests (share limit changes here), and gives
// the index of the whole scenario; with one name off the pattern, it is
// indexed by reading every block, as earlier versions.
TEST(StreamTest, Version9IndexesFromTheBlockTable) {
  const Scenario sc = *gen::Generate(Gen(3000, 5));
  const size_t block = 100;
  EXPECT_EQ(EncodeEdited(sc, block, [](size_t, gen::QsbBlockFacts&) {}), gen::EncodeQsb(sc, gen::kQsbVersion, block));
  auto stream = gen::QsbFileStream::FromBytes(gen::EncodeQsb(sc, gen::kQsbVersion, block), "x.qsb");
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  const StreamFacts* facts = (*stream)->facts();
  ASSERT_NE(facts, nullptr);
  std::vector<std::string> units;
  std::vector<size_t> request_blocks;
  for (size_t i = 0; i < sc.events.size(); ++i) {
    if (const auto* r = std::get_if<SubmitServiceJobRequest>(&sc.events[i].request)) units.push_back(r->instance_type);
    if (!IsJobRequest(sc.events[i].request) &&
        (request_blocks.empty() || request_blocks.back() != i / block)) {
      request_blocks.push_back(i / block);
    }
  }
  std::sort(units.begin(), units.end());
  units.erase(std::unique(units.begin(), units.end()), units.end());
  EXPECT_EQ(facts->submit_units, units);
  EXPECT_EQ(facts->named_submissions, sc.submit_count);
  EXPECT_EQ(facts->request_blocks, request_blocks);
  ASSERT_GT(request_blocks.size(), 1u);  // the quota shares and a limit change
  ASSERT_LT(request_blocks.size(), (*stream)->num_blocks() / 2);

  const ScenarioIndex want = IndexScenario(sc);
  auto same = [&](const ScenarioIndex& got) {
    EXPECT_EQ(got.units, want.units);
    EXPECT_EQ(got.share_requests, want.share_requests);
    ASSERT_EQ(got.job_names.num_ordinals(), want.job_names.num_ordinals());
    for (int64_t k = 0; k < want.job_names.num_ordinals(); ++k) {
      ASSERT_EQ(got.job_names.Name(got.job_names.RankOf(k)), want.job_names.Name(want.job_names.RankOf(k)));
    }
  };
  CountingStream counted(**stream);
  absl::StatusOr<ScenarioIndex> idx = IndexEventStream(counted);
  ASSERT_TRUE(idx.ok()) << idx.status().message();
  same(*idx);
  EXPECT_EQ(counted.reads(), static_cast<int>(request_blocks.size()));

  Scenario renamed = sc;
  for (ScenarioEvent& ev : renamed.events) {
    if (auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request)) {
      r->job_name = "zeta";
      break;
    }
  }
  auto stream2 = gen::QsbFileStream::FromBytes(gen::EncodeQsb(renamed, gen::kQsbVersion, block), "x.qsb");
  ASSERT_TRUE(stream2.ok());
  EXPECT_EQ((*stream2)->facts(), nullptr);
  CountingStream counted2(**stream2);
  ASSERT_TRUE(IndexEventStream(counted2).ok());
  EXPECT_EQ(counted2.reads(), static_cast<int>((*stream2)->num_blocks()));
}

// QsbFileStream::ReadBlockRequests (what the index reads of the request
// blocks) decodes each event into one scratch event and keeps the non-job
// requests: the same events as ReadBlock filtered, and on a damaged file
// ReadBlock's own status, block by block, for every flipped byte of a small
// many-block file.
TEST(StreamTest, ReadBlockRequestsIsReadBlockFiltered) {
  auto agree = [](const EventStream& stream, const std::string& what) {
    for (size_t b = 0; b < stream.num_blocks(); ++b) {
      std::vector<ScenarioEvent> all, requests = {ScenarioEvent{}};  // replaced, not appended to
      const absl::Status whole = stream.ReadBlock(b, all);
      const absl::Status kept = stream.ReadBlockRequests(b, requests);
      ASSERT_EQ(kept, whole) << what << ", block " << b;
      if (!whole.ok()) continue;
      std::erase_if(all, [](const ScenarioEvent& ev) { return IsJobRequest(ev.request); });
      ASSERT_EQ(requests, all) << what << ", block " << b;
    }
  };
  const Scenario sc = *gen::Generate(Gen(3000, 5));
  auto stream = gen::QsbFileStream::FromBytes(gen::EncodeQsb(sc, gen::kQsbVersion, 100), "x.qsb");
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  agree(**stream, "3000 jobs");
  const std::string small = gen::EncodeQsb(*gen::Generate(Gen(20, 3)), gen::kQsbVersion, 4);
  int opened = 0;
  for (size_t at = 0; at < small.size(); ++at) {
    std::string bad = small;
    bad[at] ^= 0x40;
    auto s = gen::QsbFileStream::FromBytes(bad, "x.qsb");
    if (!s.ok()) continue;  // refused at opening: no block to read
    ++opened;
    agree(**s, absl::StrCat("byte ", at));
  }
  EXPECT_GT(opened, 0);
}

// Each block is checked against its entry in the block table when it is
// read, whole (DecodeQsb) or streamed, where a run reaches it; a run that
// stops at its horizon reads the blocks it did not reach.
TEST(StreamTest, Version9BlocksAreCheckedAgainstTheirTableEntries) {
  Scenario sc = *gen::Generate(Gen(3000, 5));
  const size_t block = 100;
  std::vector<size_t> submit_event;  // event index of each submission
  for (size_t i = 0; i < sc.events.size(); ++i) {
    if (std::holds_alternative<SubmitServiceJobRequest>(sc.events[i].request)) submit_event.push_back(i);
  }
  const size_t last = sc.events.size() / block - 1;  // a full block near the end
  struct Case {
    std::string what;
    Scenario scenario;
    std::function<void(size_t, gen::QsbBlockFacts&)> edit;
    std::string want;
  };
  std::vector<Case> cases;
  // A block after `last - 1` with room for one more submission.
  std::vector<size_t> submits_in(sc.events.size() / block + 1);
  for (size_t i : submit_event) ++submits_in[i / block];
  size_t roomy = last;
  while (roomy + 1 < submits_in.size() && submits_in[roomy] == block) ++roomy;
  ASSERT_LT(submits_in[roomy], block);
  cases.push_back({"a submission moved between blocks", sc,
                   [&](size_t b, gen::QsbBlockFacts& f) {
                     if (b == last - 1) --f.submits, --f.named;
                     if (b == roomy) ++f.submits, ++f.named;
                   },
                   absl::StrCat("x.qsb: event block ", last - 1,
                                " differs from its entry in the block table (submissions)")});
  cases.push_back({"a later first time", sc,
                   [&](size_t b, gen::QsbBlockFacts& f) {
                     if (b == last) ++f.first_time;
                   },
                   absl::StrCat("event block ", last, " differs from its entry in the block table (first and last")});
  cases.push_back({"a request flag", sc,
                   [&](size_t b, gen::QsbBlockFacts& f) {
                     if (b == last) f.requests = !f.requests;
                   },
                   absl::StrCat("event block ", last, " differs from its entry in the block table (requests")});
  cases.push_back({"a unit left out", sc,
                   [&](size_t b, gen::QsbBlockFacts& f) {
                     if (b == last) f.units.pop_back();
                   },
                   absl::StrCat("event block ", last, " differs from its entry in the block table (instance types)")});
  Scenario misnamed = sc;
  const size_t k = submit_event.size() - 150;  // in or near the last blocks
  std::get<SubmitServiceJobRequest>(misnamed.events[submit_event[k]].request).job_name = "j999999";
  cases.push_back({"a name off the pattern stated as generated", misnamed,
                   [&](size_t b, gen::QsbBlockFacts& f) {
                     if (b == submit_event[k] / block) f.generated_names = true;
                   },
                   absl::StrCat(".request.jobName: 'j999999' where the block table states generated name j", k)});
  Scenario new_unit = sc;
  const size_t u = submit_event.size() - 120;
  const ScenarioEvent& moved = new_unit.events[submit_event[u]];
  std::get<SubmitServiceJobRequest>(new_unit.events[submit_event[u]].request).instance_type = "ml.unlisted";
  cases.push_back({"an instance type the table does not list", new_unit,
                   [&](size_t b, gen::QsbBlockFacts& f) {
                     if (b == submit_event[u] / block) std::erase(f.units, "ml.unlisted");
                   },
                   absl::StrCat(moved.path, ".request: instance type 'ml.unlisted' is not among the block table's units")});
  for (Case& c : cases) {
    const std::string bytes = EncodeEdited(c.scenario, block, c.edit);
    const std::string whole = DecodeError(bytes), streamed = StreamRunError(bytes);
    EXPECT_NE(whole.find(c.want), std::string::npos) << c.what << ": " << whole;
    EXPECT_NE(streamed.find(c.want), std::string::npos) << c.what << ": " << streamed;
    // The index (which reads only the blocks with requests) cannot see it;
    // a run that ends at a horizon long before the block still does.
    Scenario early = c.scenario;
    early.knobs.horizon = sc.events[2 * block].time;
    const std::string stopped = StreamRunError(EncodeEdited(early, block, c.edit));
    EXPECT_NE(stopped.find(c.want), std::string::npos) << c.what << " (horizon): " << stopped;
  }
  // Every flipped byte of a small many-block file fails the run.
  gen::GenOptions o = Gen(20, 3);
  const std::string small = gen::EncodeQsb(*gen::Generate(o), gen::kQsbVersion, 4);
  ASSERT_EQ(StreamRunError(small), "");
  for (size_t at = 0; at < small.size(); ++at) {
    std::string bad = small;
    bad[at] ^= 0x40;
    EXPECT_NE(StreamRunError(bad), "") << "byte " << at;
  }
}

TEST(JobNamesTest, RanksFollowByteOrderAndFindReturnsThem) {
  const std::vector<std::string> names = {"b", "a", "ab", "", "b2", "a"};
  std::string chars;
  std::vector<uint64_t> ends;
  for (const std::string& n : names) {
    chars += n;
    ends.push_back(chars.size());
  }
  const JobNames jn = JobNames::Build(chars, ends);
  ASSERT_EQ(jn.num_names(), 5);  // "", "a", "ab", "b", "b2"
  EXPECT_EQ(jn.num_ordinals(), 6);
  EXPECT_EQ(jn.RankOf(0), 3);
  EXPECT_EQ(jn.RankOf(1), 1);
  EXPECT_EQ(jn.RankOf(5), 1);
  EXPECT_EQ(jn.RankOf(3), 0);
  for (int32_t r = 0; r < jn.num_names(); ++r) EXPECT_EQ(jn.Find(jn.Name(r)), r);
  EXPECT_EQ(jn.Name(2), "ab");
  EXPECT_EQ(jn.Find("c"), JobNames::kNotFound);
  EXPECT_EQ(jn.Find("a0"), JobNames::kNotFound);
  ASSERT_TRUE(jn.first_duplicate().has_value());
  EXPECT_EQ(*jn.first_duplicate(), std::make_pair(int64_t{5}, int64_t{1}));
  EXPECT_FALSE(JobNames::Build("xy", {1, 2}).first_duplicate().has_value());
  EXPECT_EQ(JobNames::Build("", {}).num_names(), 0);
  EXPECT_EQ(JobNames::Build("", {}).Find("x"), JobNames::kNotFound);
}

// The generated-names fast path (JobNames::Sequential) against the general
// one (Build, a sort) on the same names, across digit-count boundaries.
TEST(JobNamesTest, SequentialEqualsBuildOfTheSameNames) {
  // Chunks of 4,096 names: 4095-4097 and 12345 cross their boundaries;
  // 100001 has a chunk start deep in a subtree (NumberAt's walk).
  for (int64_t n : {0, 1, 2, 9, 10, 11, 99, 100, 101, 1000, 4095, 4096, 4097, 12345, 100001}) {
    std::string chars;
    std::vector<uint64_t> ends;
    for (int64_t k = 0; k < n; ++k) {
      chars += "j" + std::to_string(k);
      ends.push_back(chars.size());
    }
    const JobNames want = JobNames::Build(chars, ends);
    const JobNames got = JobNames::Sequential(n);
    ASSERT_EQ(got.num_names(), want.num_names()) << n;
    ASSERT_EQ(got.num_ordinals(), want.num_ordinals()) << n;
    for (int32_t r = 0; r < want.num_names(); ++r) ASSERT_EQ(got.Name(r), want.Name(r)) << n << " rank " << r;
    for (int64_t k = 0; k < n; ++k) ASSERT_EQ(got.RankOf(k), want.RankOf(k)) << n << " ordinal " << k;
    EXPECT_FALSE(got.first_duplicate().has_value());
    // Find() reads the number of a generated name; the same ranks as the
    // search over the built names, and no other name is found.
    for (int64_t k = 0; k < n; ++k) ASSERT_EQ(got.Find("j" + std::to_string(k)), want.Find("j" + std::to_string(k))) << k;
    EXPECT_EQ(got.Find("j" + std::to_string(n)), JobNames::kNotFound);
    for (const char* other : {"", "j", "j-1", "j01", "x1", "j1 ", "J1", "j99999999999999999999"}) {
      EXPECT_EQ(got.Find(other), JobNames::kNotFound) << other;
      EXPECT_EQ(want.Find(other), JobNames::kNotFound) << other;
    }
  }
}

// A scenario's index is the same whichever way its names were collected:
// generated names (the fast path), the same with one name changed or
// moved (the general path from the middle of a block), and a duplicate
// still found, with its paths, in a streamed file.
TEST(JobNamesTest, IndexTakesTheFastPathOnlyForGeneratedNames) {
  Scenario sc = *gen::Generate(Gen(3000, 5));
  auto names_of = [](const ScenarioIndex& idx) {
    std::vector<std::string> out;
    for (int32_t r = 0; r < idx.job_names.num_names(); ++r) out.emplace_back(idx.job_names.Name(r));
    for (int64_t k = 0; k < idx.job_names.num_ordinals(); ++k) out.push_back(std::to_string(idx.job_names.RankOf(k)));
    return out;
  };
  auto general = [](const Scenario& s) {  // Build() over the names in ordinal order
    std::string chars;
    std::vector<uint64_t> ends;
    for (const ScenarioEvent& ev : s.events) {
      if (const auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request); r != nullptr && r->job_name) {
        chars += *r->job_name;
        ends.push_back(chars.size());
      }
    }
    ScenarioIndex idx;
    idx.job_names = JobNames::Build(chars, ends);
    return idx;
  };
  auto streamed = [](const Scenario& s) {
    const std::string path = ::testing::TempDir() + "names_test.qsb";
    EXPECT_TRUE(gen::WriteQsbFile(s, path).ok());
    auto stream = gen::QsbFileStream::Open(path);
    EXPECT_TRUE(stream.ok());
    return IndexEventStream(**stream);
  };
  EXPECT_EQ(names_of(IndexScenario(sc)), names_of(general(sc)));
  absl::StatusOr<ScenarioIndex> st = streamed(sc);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(names_of(*st), names_of(general(sc)));
  // One name off the pattern, in the middle.
  std::vector<SubmitServiceJobRequest*> submits;
  for (ScenarioEvent& ev : sc.events) {
    if (auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request)) submits.push_back(r);
  }
  ASSERT_GT(submits.size(), 2000u);
  submits[1500]->job_name = "zeta";
  EXPECT_EQ(names_of(IndexScenario(sc)), names_of(general(sc)));
  st = streamed(sc);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(names_of(*st), names_of(general(sc)));
  // A duplicate of an earlier generated name.
  submits[1500]->job_name = "j7";
  st = streamed(sc);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("duplicate jobName 'j7'"), std::string::npos) << st.status().message();
}

}  // namespace
}  // namespace qs
