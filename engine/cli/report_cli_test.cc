// The what-if path end to end, as a user runs it on their own queue: import
// an AWS export -> run with wait causes -> whatif --set <share>.borrowLimit ->
// explain -> report, and the page opened in headless Chromium
// (scripts/report-browser-check). Also: the report's series agree with the
// summary computed on its own, and bad inputs exit 2 naming the file.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/io/scenario_json.h"
#include "engine/report/run_series.h"
#include "engine/testing/command.h"
#include "engine/testing/random_scenario.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

namespace fs = std::filesystem;
using Result = qs::testing::CommandResult;
using Json = nlohmann::json;

Result Quotasim(const std::string& args) {
  return qs::testing::RunCommandLine(std::string(QS_QUOTASIM_BIN) + " " + args);
}

const std::string kQueueExport = QS_SOURCE_DIR "/engine/testdata/aws-export/queue-a";
const std::string kNotebook = QS_SOURCE_DIR "/scenarios/notebook-example.json";
const std::string kBrowserCheck = QS_SOURCE_DIR "/scripts/report-browser-check";

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("quotasim_report_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  Json ReadJson(const fs::path& p) { return Json::parse(qs::testing::ReadWholeFile(p)); }
  std::string P(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(ReportTest, ImportRunWhatIfExplainReportEndToEnd) {
  // import: the queue as AWS ran it.
  Result r = Quotasim("import aws " + kQueueExport + " --out " + P("queue.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // run, with wait causes: the two jobs larger than their share can ever hold
  // wait as MISCONFIGURATION.
  r = Quotasim("run " + P("queue.json") + " -q --wait-causes --events " + P("run.events.jsonl") + " --summary " +
               P("run.summary.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json run = ReadJson(P("run.summary.json"));
  EXPECT_EQ(run["run"]["waitCauses"], true);
  EXPECT_GT(run["total"]["waitByCauseSeconds"]["MISCONFIGURATION"].get<double>(), 0) << run.dump(2);
  // whatif: research may not borrow, and the environment has two g5s.
  r = Quotasim("whatif " + P("queue.json") +
               " --set research.borrowLimit=0 --set "
               "environment.capacityLimits.ml.g5.xlarge=2 --wait-causes --events"
               " --out " +
               P("w"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("borrow 50% -> 0%"), std::string::npos) << r.output;
  const Json changed = ReadJson(P("w/changed.summary.json"));
  const Json& research = changed["quotaShares"]["research"]["waitByCauseSeconds"];
  EXPECT_GT(research["ENVIRONMENT_FULL"].get<double>(), 0) << research.dump(2);
  EXPECT_GT(research["BEHIND_HEAD"].get<double>(), 0) << research.dump(2);
  // explain: one job's story with its causes, and the share's waits by cause.
  r = Quotasim("explain " + P("w/changed.events.jsonl") + " llama-ft-lr1e5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("waits: ENVIRONMENT_FULL (quota allows it, but the "
                          "environment has no free instances)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("2 ml.g5.xlarge: 2 from its own limit"), std::string::npos) << r.output;
  r = Quotasim("explain " + P("w/changed.events.jsonl") + " --share research");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("by wait cause:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("MISCONFIGURATION (it can never start as configured)"), std::string::npos) << r.output;
  // report: one page with the what-if's changes and both runs.
  r = Quotasim("report " + P("w") + " --out " + P("whatif.html"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string html = qs::testing::ReadWholeFile(P("whatif.html"));
  EXPECT_NE(html.find("<section id=\"comparison\">"), std::string::npos);
  EXPECT_NE(html.find("data-chart=\"whatif-cdf\""), std::string::npos);
  EXPECT_NE(html.find("data-chart=\"causes\""), std::string::npos);
  EXPECT_NE(html.find("Time RUNNABLE by wait cause, before &rarr; after"), std::string::npos);
  EXPECT_NE(html.find("--set research.borrowLimit=0"), std::string::npos);
  EXPECT_NE(html.find("limit 4"),
            std::string::npos);                        // research's g5 limit, read from the scenario
  EXPECT_EQ(html.find("http://"), std::string::npos);  // nothing to fetch
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  // The page in a browser: loads without console errors, shows its parts.
  r = qs::testing::RunCommandLine(kBrowserCheck + " " + P("whatif.html") +
                                  " --expect 'section#comparison=1' --expect 'table.shares=4' --expect 'table.causes=1'"
                                  " --expect 'svg[data-chart=whatif-cdf]=3' --expect "
                                  "'svg[data-chart=wait-cdf]=2'"
                                  " --expect 'svg[data-chart=use]=8' --expect 'svg[data-chart=causes]=2'"
                                  " --screenshot " +
                                  P("whatif.png"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GT(fs::file_size(P("whatif.png")), 10'000u);
}

// The report's series and the summary are computed apart (one from the log
// lines, one from the engine's records); they agree on every share's waits
// and instance-seconds.
TEST_F(ReportTest, SeriesAgreeWithTheSummary) {
  // A random scenario of the differential test's generator: waits,
  // borrowing, preemptions and drains on a few shares and types.
  int shares = 0;
  double waited = 0, borrowed_total = 0;
  for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    {
      std::ofstream f(P("g.json"));
      f << qs::ScenarioToJson(
          qs::testing::RandomScenario(seed, qs::testing::RandomScenarioOptions{4, 2, 60, true, false}));
    }
    Result r = Quotasim("run " + P("g.json") + " -q --cycle-preemptions 1000 --events " + P("g.events.jsonl") +
                        " --summary " + P("g.summary.json"));
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;  // (1: a preemption cycle stopped it)
    const Json summary = ReadJson(P("g.summary.json"));
    const qs::SimTime end = static_cast<qs::SimTime>(std::llround(summary["endTime"].get<double>() * 1000));
    std::ifstream log(P("g.events.jsonl"));
    absl::StatusOr<qs::RunSeries> series = qs::ScanEventLog(log, "g.events.jsonl", end, 97);
    ASSERT_TRUE(series.ok()) << series.status();
    for (const auto& [share, s] : summary["quotaShares"].items()) {
      ++shares;
      waited += s["waitSeconds"]["max"].get<double>();
      const auto w = series->waits.find(share);
      const size_t count = w == series->waits.end() ? 0 : w->second.size();
      EXPECT_EQ(static_cast<double>(count), s["waitSeconds"]["count"].get<double>()) << share;
      if (count > 0) {
        EXPECT_EQ(static_cast<double>(w->second.back()) / 1000, s["waitSeconds"]["max"].get<double>()) << share;
      }
      for (const auto& [unit, is] : s["instanceSeconds"].items()) {
        const auto u = series->use.find({share, unit});
        ASSERT_NE(u, series->use.end()) << share << " " << unit;
        double own = 0, borrowed = 0;
        for (int k = 0; k < series->slices; ++k) {
          const double len = static_cast<double>(std::min(end, (k + 1) * series->slice) - k * series->slice);
          own += u->second.own[static_cast<size_t>(k)] * len / 1000;
          borrowed += u->second.borrowed[static_cast<size_t>(k)] * len / 1000;
        }
        EXPECT_NEAR(own, is["own"].get<double>(), 1e-6 * (1 + is["own"].get<double>())) << share << " " << unit;
        EXPECT_NEAR(borrowed, is["borrowed"].get<double>(), 1e-6 * (1 + is["borrowed"].get<double>())) << share;
        borrowed_total += borrowed;
      }
    }
  }
  EXPECT_GE(shares, 6);
  EXPECT_GT(waited, 0);  // the scenarios make jobs wait and borrow: the check
                         // has something to check
  EXPECT_GT(borrowed_total, 0);
}

// CAPACITY_ERROR: SageMaker can provision no g5 (availability 0), so every
// attempt of the notebook's first job, alone in QS3, ends in a capacity error
// after 300 s and is dispatched again at once; explain marks each such
// SCHEDULED line as a wait, and the summary counts its time.
TEST_F(ReportTest, CapacityErrorWaits) {
  Json sc = ReadJson(kNotebook);
  Json solo = sc["events"][0];
  solo["request"]["jobName"] = "solo";
  solo["request"]["quotaShareName"] = "QS3";
  sc["events"] = Json::array({solo});
  sc["simulation"]["capacity"] = {
      {"errorSeconds", 300},
      {"instanceTypes", {{"ml.g5.xlarge", {{"availability", {{{"atSeconds", 0}, {"instances", 0}}}}}}}}};
  sc["simulation"]["horizonSeconds"] = 700;
  {
    std::ofstream f(P("cap.json"));
    f << sc.dump(2);
  }
  Result r = Quotasim("run " + P("cap.json") + " -q --wait-causes --events " + P("cap.events.jsonl") + " --summary " +
                      P("cap.summary.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json summary = ReadJson(P("cap.summary.json"));
  // Dispatched at 0, 300 and 600: two errors (600 s) by the horizon at 700.
  EXPECT_EQ(summary["quotaShares"]["QS3"]["waitByCauseSeconds"]["CAPACITY_ERROR"].get<double>(), 600)
      << summary.dump(2);
  EXPECT_EQ(summary["quotaShares"]["QS3"]["capacityErrors"], 2);
  r = Quotasim("explain " + P("cap.events.jsonl") + " solo");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("from its own limit; waits: CAPACITY_ERROR (SCHEDULED, but SageMaker could not provision the "
                          "instances)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("by wait cause:\n    10.0m  CAPACITY_ERROR"), std::string::npos) << r.output;
}

// A run's summary with its log beside it (<stem>.summary.json and
// <stem>.events.jsonl); without a log the page says what it lacks.
TEST_F(ReportTest, RunSummaryWithAndWithoutItsLog) {
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --events " + P("nb.events.jsonl") + " --summary " + P("nb.summary.json"))
                .exit_code,
            0);
  Result r = Quotasim("report " + P("nb.summary.json") + " --out " + P("nb.html") + " --title 'Notebook example'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string html = qs::testing::ReadWholeFile(P("nb.html"));
  EXPECT_NE(html.find("<title>Notebook example</title>"), std::string::npos);
  EXPECT_NE(html.find("data-chart=\"wait-cdf\""), std::string::npos);
  EXPECT_NE(html.find("data-chart=\"preemptions\""),
            std::string::npos);  // the notebook preempts twice
  EXPECT_NE(html.find("LEND_AND_BORROW"), std::string::npos);
  fs::remove(P("nb.events.jsonl"));
  r = Quotasim("report " + P("nb.summary.json") + " --out " + P("nb2.html"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  html = qs::testing::ReadWholeFile(P("nb2.html"));
  EXPECT_EQ(html.find("data-chart=\"wait-cdf\""), std::string::npos);
  EXPECT_NE(html.find("No event log with this summary"), std::string::npos);
}

// A trace compare's folder (committed under results/): each policy's
// timeseries.csv and waits.csv stand in for its log, limits included.
TEST_F(ReportTest, TraceCompareFolder) {
  const std::string kth = QS_SOURCE_DIR "/results/swf-kth-sp2";
  Result r = Quotasim("report " + kth + " --out " + P("kth.html"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("9 run(s)"), std::string::npos) << r.output;
  const std::string html = qs::testing::ReadWholeFile(P("kth.html"));
  EXPECT_NE(html.find("Runs side by side"), std::string::npos);
  EXPECT_NE(html.find("Limits from borrow-unlimited.timeseries.csv"), std::string::npos);
  EXPECT_NE(html.find("data-chart=\"use\""), std::string::npos);
  EXPECT_NE(html.find("all jobs"), std::string::npos);  // the wait CDF of all jobs
  EXPECT_NE(html.find("data-chart=\"preemptions\""), std::string::npos);
  // A broken row names the file and the line.
  fs::create_directories(P("t"));
  fs::copy_file(kth + "/lend.summary.json", P("t/lend.summary.json"));
  {
    std::ofstream ts(P("t/lend.timeseries.csv"));
    ts << "hour,g14,total,capacity,preempt_cross,preempt_in,borrowed:g14,limit:g14\n0.00,1.0,1.0,4.0,0,0,0.0,2.0\n"
          "6.00,x,1.0,4.0,0,0,0.0,2.0\n";
  }
  r = Quotasim("report " + P("t") + " --out " + P("t.html"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("lend.timeseries.csv:3: column g14: 'x' is not a number >= 0"), std::string::npos)
      << r.output;
}

TEST_F(ReportTest, BadInputsExitTwoNamingTheFile) {
  Result r = Quotasim("report " + P("missing") + " --out " + P("x.html"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find(P("missing") + ": no such file or folder"), std::string::npos) << r.output;
  r = Quotasim("report " + kNotebook + " --out " + P("x.html"));  // a scenario, not a summary
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("not a quotasim run summary ($.quotaShares missing "
                          "or not an object)"),
            std::string::npos)
      << r.output;
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --summary " + P("nb.summary.json")).exit_code, 0);
  {
    std::ofstream bad(P("nb.events.jsonl"));
    bad << "{\"time\": 0.0, \"jobName\": \"a\", \"quotaShareName\": \"QS1\", "
           "\"status\": \"SUBMITTED\"}\n{broken\n";
  }
  r = Quotasim("report " + P("nb.summary.json") + " --out " + P("x.html"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find(P("nb.events.jsonl") + ":2: not a JSON object"), std::string::npos) << r.output;
  r = Quotasim("report " + P("nb.summary.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--out REPORT.html is required"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(P("x.html")));
}

}  // namespace
