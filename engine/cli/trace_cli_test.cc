// End-to-end tests of `quotasim replay`, `compare` and `merge` on a shipped
// trace (../shared/traces, NASA iPSC: 18,239 jobs): exit codes, the report
// files, identical bytes at 1 and 2 threads, and shards merged into the same
// report as a single run.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/testing/command.h"
#include "gtest/gtest.h"

namespace {

namespace fs = std::filesystem;

using Result = qs::testing::CommandResult;

Result Quotasim(const std::string& args) {
  return qs::testing::RunCommandLine(std::string(QS_QUOTASIM_BIN) + " " + args);
}

std::string ReadFile(const fs::path& p) { return qs::testing::ReadWholeFile(p); }

const std::string kTrace = QS_SHARED_DIR "/traces/swf-nasa-ipsc/NASA-iPSC-1993-3.1-cln.swf.gz";
const std::string kMapping = QS_SOURCE_DIR "/traces/mappings/swf-nasa-ipsc.json";

class TraceCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kTrace)) GTEST_SKIP() << "shared trace not present: " << kTrace;
    dir_ = fs::temp_directory_path() / ("quotasim_trace_cli_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(TraceCliTest, ReplayWritesASummary) {
  fs::path sum = dir_ / "s.json";
  Result r = Quotasim("replay " + kTrace + " --format swf --mapping " + kMapping + " --policy " + QS_SOURCE_DIR +
                      "/traces/policies/borrow-100.json --summary " + sum.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string s = ReadFile(sum);
  EXPECT_NE(s.find("\"jobsSubmitted\""), std::string::npos) << s;
  EXPECT_NE(s.find("\"invariantViolations\": 0"), std::string::npos) << s;
  EXPECT_NE(s.find("\"scenario\": \"NASA-iPSC"), std::string::npos) << s.substr(0, 600);
  EXPECT_NE(s.find(" under borrow-100\","), std::string::npos) << s.substr(0, 600);
  // The table in declaration order with the policy's limits, and as CSV.
  EXPECT_NE(r.output.find("LEND_AND_BORROW"), std::string::npos) << r.output;
  Result csv = Quotasim("replay " + kTrace + " --format swf --mapping " + kMapping + " --policy " + QS_SOURCE_DIR +
                        "/traces/policies/borrow-100.json --table-format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_EQ(csv.output.rfind("row,quotaShare,capacityLimits,", 0), 0u) << csv.output;
  EXPECT_NE(csv.output.find("\ntotal,"), std::string::npos) << csv.output;
  // "-" writes the summary to standard output (and the table to stderr);
  // the summary file's bytes are the same, and no temporary file is left.
  Result dash = Quotasim("replay " + kTrace + " --format swf --mapping " + kMapping + " --policy " + QS_SOURCE_DIR +
                         "/traces/policies/borrow-100.json -q --summary -");
  EXPECT_EQ(dash.exit_code, 0) << dash.output;
  EXPECT_EQ(dash.output, s);
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
  }
  Result two = Quotasim("replay " + kTrace + " --format swf --mapping " + kMapping + " --policy borrow-100 --summary - --events -");
  EXPECT_EQ(two.exit_code, 2) << two.output;
}

// replay writes its log uncompressed: a log named .gz (or for another
// compression) is refused up front rather than filled with plain text.
TEST_F(TraceCliTest, ReplayRefusesACompressedLogName) {
  for (const char* name : {"e.gz", "e.zst"}) {
    const fs::path ev = dir_ / name;
    Result r = Quotasim("replay " + kTrace + " --format swf --mapping " + kMapping + " --policy " + QS_SOURCE_DIR +
                        "/traces/policies/borrow-100.json -q --events " + ev.string());
    EXPECT_EQ(r.exit_code, 2) << name << "\n" << r.output;
    EXPECT_NE(r.output.find("--events " + ev.string()), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(ev)) << name;
  }
}

TEST_F(TraceCliTest, CompareIsThreadIndependentAndShardsMergeToTheSameReport) {
  const std::string base = "compare " + kTrace + " --mapping " + kMapping + " --no-check";
  fs::path one = dir_ / "one", two = dir_ / "two", s0 = dir_ / "s0", s1 = dir_ / "s1", merged = dir_ / "merged";
  Result r = Quotasim(base + " --threads 1 --out " + one.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(Quotasim(base + " --threads 2 --out " + two.string()).exit_code, 0);
  ASSERT_EQ(Quotasim(base + " --shard 0/2 --out " + s0.string()).exit_code, 0);
  ASSERT_EQ(Quotasim(base + " --shard 1/2 --out " + s1.string()).exit_code, 0);
  r = Quotasim("merge " + s0.string() + " " + s1.string() + " --out " + merged.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* f : {"comparison.md", "comparison.csv", "share-waits.csv"}) {
    const std::string a = ReadFile(one / f);
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_EQ(a, ReadFile(two / f)) << f << " differs between 1 and 2 threads";
    EXPECT_EQ(a, ReadFile(merged / f)) << f << " differs between a single run and merged shards";
  }
  EXPECT_NE(ReadFile(one / "comparison.md").find("borrow-unlimited"), std::string::npos);
  // Each policy's row says whether its run completed or stopped in a cycle.
  const std::string csv = ReadFile(one / "comparison.csv");
  EXPECT_NE(csv.find(",invariant_violations,status\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",0,complete\n"), std::string::npos) << csv;
  EXPECT_EQ(csv.find(",stopped\n"), std::string::npos) << csv;
  EXPECT_NE(ReadFile(one / "comparison.md").find("| fairness | status |"), std::string::npos);
  // Shards of one comparison may share a folder, and merge into it; a
  // finished comparison's folder is not written over without --force.
  fs::path shared = dir_ / "shared";
  ASSERT_EQ(Quotasim(base + " --shard 0/2 --out " + shared.string()).exit_code, 0);
  ASSERT_EQ(Quotasim(base + " --shard 1/2 --out " + shared.string()).exit_code, 0);
  r = Quotasim("merge " + shared.string() + " --out " + shared.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadFile(one / "comparison.md"), ReadFile(shared / "comparison.md"));
  r = Quotasim(base + " --out " + one.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = Quotasim(base + " --out " + one.string() + " --force");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(TraceCliTest, BrokenInputsFailWithFileAndLine) {
  fs::path bad = dir_ / "bad.swf";
  std::ofstream(bad) << "; header\n1 0 -1 100 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n2 10 x\n";
  Result r = Quotasim("replay " + bad.string() + " --format swf --mapping " + kMapping + " --policy " + QS_SOURCE_DIR +
                      "/traces/policies/lend.json");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("bad.swf:3"), std::string::npos) << r.output;
}

}  // namespace
