// End-to-end tests of `--set` overrides (run, sweep) and `quotasim whatif`
// on the notebook scenario: known answers, the same figures by every path
// (run --set, whatif, sweep --vary, JSON or streamed .qsb), and the errors.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/testing/command.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

namespace fs = std::filesystem;
using Result = qs::testing::CommandResult;
using Json = nlohmann::json;

Result Quotasim(const std::string& args) {
  return qs::testing::RunCommandLine(std::string(QS_QUOTASIM_BIN) + " " + args);
}

const std::string kNotebook = QS_SOURCE_DIR "/scenarios/notebook-example.json";

class WhatIfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("quotasim_whatif_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  Json ReadJson(const fs::path& p) { return Json::parse(qs::testing::ReadWholeFile(p)); }
  // The summary without its `run` object (where it came from).
  Json Figures(const fs::path& p) {
    Json j = ReadJson(p);
    j.erase("run");
    return j;
  }
  fs::path dir_;
};

// The notebook (quota-semantics.md §7): QS1 (LEND_AND_BORROW, borrowLimit
// 200) borrows QS2's idle instance for qs1_job_med at 0, and QS2 reclaims
// it for qs2_job_1 at 60 (a cross-share preemption of a QS1 job); at 120
// qs1_job_low's new priority 4 preempts qs1_job_high in-share. With
// QS1.borrowLimit=0 QS1 borrows nothing: no cross-share preemption, the
// in-share one stays, and qs1_job_med waits for QS1's own instance.
TEST_F(WhatIfTest, BorrowLimitZeroRemovesTheReclaim) {
  Result r = Quotasim("whatif " + kNotebook + " --set QS1.borrowLimit=0 --out " + (dir_ / "w").string() +
                      " --events");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("what-if: " + kNotebook + " with QS1.borrowLimit=0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("borrow 200% -> 0%"), std::string::npos) << r.output;
  const Json w = ReadJson(dir_ / "w" / "whatif.json");
  ASSERT_EQ(w["quotaShares"].size(), 3u) << w.dump(2);
  const Json& qs1 = w["quotaShares"][0];
  EXPECT_EQ(qs1["quotaShare"], "QS1");
  EXPECT_EQ(qs1["setting"], "borrow 200% -> 0%");
  EXPECT_EQ(qs1["base"]["preempted"], (Json{{"crossShare", 1}, {"inShare", 1}}));
  EXPECT_EQ(qs1["changed"]["preempted"], (Json{{"crossShare", 0}, {"inShare", 1}}));
  EXPECT_EQ(qs1["changed"]["borrowedInstanceHours"], 0.0);
  EXPECT_EQ(qs1["delta"]["preempted"], -1);
  EXPECT_EQ(w["quotaShares"][1]["setting"], "");
  // Both runs' logs: the change's log has no cross-share preemption.
  const std::string changed_log = qs::testing::ReadWholeFile(dir_ / "w" / "changed.events.jsonl");
  const std::string base_log = qs::testing::ReadWholeFile(dir_ / "w" / "base.events.jsonl");
  EXPECT_NE(base_log.find("CROSS_SHARE"), std::string::npos);
  EXPECT_EQ(changed_log.find("CROSS_SHARE"), std::string::npos) << changed_log;
  // The base is the scenario as written; the change is `run --set`.
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --summary " + (dir_ / "base.json").string()).exit_code, 0);
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --set QS1.borrowLimit=0 --summary " + (dir_ / "set.json").string())
                .exit_code,
            0);
  EXPECT_EQ(Figures(dir_ / "w" / "base.summary.json"), Figures(dir_ / "base.json"));
  EXPECT_EQ(Figures(dir_ / "w" / "changed.summary.json"), Figures(dir_ / "set.json"));
  // The summary names the overrides it ran under.
  EXPECT_EQ(ReadJson(dir_ / "set.json")["run"]["overrides"], (Json{"QS1.borrowLimit=0"}));
  EXPECT_FALSE(ReadJson(dir_ / "base.json")["run"].contains("overrides"));
}

TEST_F(WhatIfTest, StreamedQsbGivesTheFiguresOfTheJsonScenario) {
  const std::string gen = "gen --jobs 2000 --shares 4 --units 2 --seed 5 --out ";
  const fs::path qsb = dir_ / "w.qsb", json = dir_ / "w.json";
  ASSERT_EQ(Quotasim(gen + qsb.string()).exit_code, 0);
  ASSERT_EQ(Quotasim(gen + json.string()).exit_code, 0);
  for (const std::string set :
       {"team-0.strategy=RESERVE", "team-2.borrowLimit=0", "team-3.capacityLimits.ml.p5.48xlarge=30",
        "environment.capacityLimits.ml.p4d.24xlarge=300", "preemptionDrainSeconds=60"}) {
    SCOPED_TRACE(set);
    Result a = Quotasim("run " + json.string() + " -q --set " + set + " --summary " + (dir_ / "a.json").string());
    Result b = Quotasim("run " + qsb.string() + " -q --set " + set + " --summary " + (dir_ / "b.json").string());
    Result c = Quotasim("run " + json.string() + " -q --summary " + (dir_ / "c.json").string());
    ASSERT_EQ(a.exit_code, 0) << a.output;
    ASSERT_EQ(b.exit_code, 0) << b.output;
    EXPECT_EQ(Figures(dir_ / "a.json"), Figures(dir_ / "b.json"));
    EXPECT_NE(Figures(dir_ / "a.json"), Figures(dir_ / "c.json")) << "the override changed nothing";
  }
}

TEST_F(WhatIfTest, SweepVariesShareSettings) {
  Result r = Quotasim("sweep " + kNotebook + " --vary QS1.borrowLimit=0,200 --out " + (dir_ / "s").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --summary " + (dir_ / "base.json").string()).exit_code, 0);
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --set QS1.borrowLimit=0 --summary " + (dir_ / "set.json").string())
                .exit_code,
            0);
  EXPECT_EQ(Figures(dir_ / "s" / "notebook-example__QS1.borrowLimit=200.summary.json"), Figures(dir_ / "base.json"));
  EXPECT_EQ(Figures(dir_ / "s" / "notebook-example__QS1.borrowLimit=0.summary.json"), Figures(dir_ / "set.json"));
  // "*" (every LEND_AND_BORROW share, here QS1 only) names its file "all".
  r = Quotasim("sweep " + kNotebook + " --vary '*.borrowLimit=0' --out " + (dir_ / "a").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Figures(dir_ / "a" / "notebook-example__all.borrowLimit=0.summary.json"), Figures(dir_ / "set.json"));
  // The same from a streamed file: each variant equals `run --set`.
  const fs::path qsb = dir_ / "w.qsb";
  ASSERT_EQ(Quotasim("gen --jobs 2000 --shares 4 --units 2 --seed 5 --out " + qsb.string()).exit_code, 0);
  r = Quotasim("sweep " + qsb.string() + " --vary team-0.strategy=RESERVE,LEND --set preemptionDrainSeconds=5 --out " +
               (dir_ / "q").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const std::string strategy : {"RESERVE", "LEND"}) {
    ASSERT_EQ(Quotasim("run " + qsb.string() + " -q --set preemptionDrainSeconds=5 --set team-0.strategy=" +
                       strategy + " --summary " + (dir_ / "v.json").string())
                  .exit_code,
              0);
    EXPECT_EQ(Figures(dir_ / "q" / ("w__team-0.strategy=" + strategy + ".summary.json")), Figures(dir_ / "v.json"));
  }
}

// The path for one's own queue: an AWS CLI export (fixtures written from the
// API shapes, engine/testdata/aws-export/README.md) -> import -> run ->
// whatif, with values checked against the fixtures.
const std::string kExport = QS_SOURCE_DIR "/engine/testdata/aws-export";

TEST_F(WhatIfTest, ImportRunAndWhatIfFromAnAwsExport) {
  const fs::path sc = dir_ / "queue.json";
  Result r = Quotasim("import aws " + kExport + "/queue-a --out " + sc.string() + " --export-time 2026-05-12T18:00:00Z");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("job queue ml-training-queue (service environment ml-training-se, scheduling policy "
                          "ml-quota-policy): 3 quota shares, 14 jobs"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("0 jobs skipped"), std::string::npos) << r.output;
  const Json doc = ReadJson(sc);
  EXPECT_EQ(doc["serviceEnvironment"]["capacityLimits"],
            Json::parse(R"([{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 8},
                            {"capacityUnit": "ml.p4d.24xlarge", "maxCapacity": 2}])"));
  EXPECT_EQ(doc["jobQueue"]["jobStateTimeLimitActions"][0]["reason"], "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED");
  ASSERT_EQ(doc["quotaShares"].size(), 3u);
  EXPECT_EQ(doc["quotaShares"][2]["quotaShareName"], "research");
  EXPECT_EQ(doc["quotaShares"][2]["resourceSharingConfiguration"],
            Json::parse(R"({"strategy": "LEND_AND_BORROW", "borrowLimit": 50})"));
  // 18:00:00.000 - 06:00:00.634 (the first createdAt).
  EXPECT_EQ(doc["simulation"]["horizonSeconds"], 43199.366);
  ASSERT_EQ(doc["events"].size(), 14u);
  const Json& first = doc["events"][0];
  EXPECT_EQ(first["time"], 0);
  EXPECT_EQ(first["request"]["jobName"], "llama-ft-lr3e5");
  EXPECT_EQ(first["request"]["schedulingPriority"], 50);
  // Its one attempt: 06:04:10.739 to 08:10:00.268.
  EXPECT_EQ(first["simulation"]["runSeconds"], 7549.529);
  // intern-vision-2gpu never ran: the median run of interns' SUCCEEDED jobs
  // (intern-mnist-demo, 08:03:20.742 to 08:25:00.777).
  bool found = false;
  for (const Json& ev : doc["events"]) {
    if (ev["request"]["jobName"] != "intern-vision-2gpu") continue;
    found = true;
    EXPECT_EQ(ev["simulation"]["runSeconds"], 1300.035);
    EXPECT_FALSE(ev["request"]["retryStrategy"].contains("evaluateOnExit"));
  }
  EXPECT_TRUE(found);
  const std::string observed = qs::testing::ReadWholeFile(dir_ / "queue.observed.csv");
  EXPECT_NE(observed.find("llama-ft-lr3e5,2d877835-50e3-457e-87f7-eee6a577d543,research,SUCCEEDED,0,250.105,7799.634"),
            std::string::npos)
      << observed;
  // The imported queue runs, and a what-if on it.
  r = Quotasim("run " + sc.string() + " -q --summary " + (dir_ / "s.json").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadJson(dir_ / "s.json")["total"]["jobsSubmitted"], 14);
  r = Quotasim("whatif " + sc.string() + " --set research.borrowLimit=0 --format json --common provisionSeconds=240 --out " +
               (dir_ / "w").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // --common goes to both runs, --set after it to the changed one.
  EXPECT_EQ(ReadJson(dir_ / "w" / "base.summary.json")["run"]["overrides"], (Json{"provisionSeconds=240"}));
  EXPECT_EQ(ReadJson(dir_ / "w" / "changed.summary.json")["run"]["overrides"],
            (Json{"provisionSeconds=240", "research.borrowLimit=0"}));
  const Json w = Json::parse(r.output);
  EXPECT_EQ(w["quotaShares"][2]["setting"], "borrow 50% -> 0%");
  EXPECT_GT(w["quotaShares"][2]["changed"]["waitSeconds"]["p99"].get<double>(),
            w["quotaShares"][2]["base"]["waitSeconds"]["p99"].get<double>());
  EXPECT_EQ(w["quotaShares"][2]["changed"]["borrowedInstanceHours"], 0.0);
}

// Calibration on the fixtures: AWS started most jobs 230-250 s after they
// were created (engine/testdata/aws-export/README.md); with no latency the
// simulation starts them at once, with provisionSeconds=240 about when AWS
// did, so the search ranks 240 first.
TEST_F(WhatIfTest, CalibrateRanksLatencyKnobsAgainstTheObservedStarts) {
  const fs::path sc = dir_ / "queue.json";
  ASSERT_EQ(Quotasim("import aws " + kExport + "/queue-a --out " + sc.string() + " --export-time 2026-05-12T18:00:00Z")
                .exit_code,
            0);
  Result r = Quotasim("calibrate " + sc.string() + " --search provisionSeconds=0,120,240 --worst 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("best: provisionSeconds=240\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("to run it: --set provisionSeconds=240"), std::string::npos) << r.output;
  // Ranked best first: 240, then 120, then 0.
  const size_t a = r.output.find("\nprovisionSeconds=240 "), b = r.output.find("\nprovisionSeconds=120 "),
               c = r.output.find("\nprovisionSeconds=0 ");
  EXPECT_TRUE(a < b && b < c) << r.output;
  // 12 jobs started in AWS (two are still waiting); with zero latency every
  // compared job starts earlier in the simulation.
  r = Quotasim("calibrate " + sc.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(the simulation starts earlier)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("jobs compared: "), std::string::npos) << r.output;
  // A broken observed file names its line.
  std::ofstream(dir_ / "bad.csv") << "jobName,quotaShare,createdSeconds,startedSeconds\nj,s,x,1\n";
  r = Quotasim("calibrate " + sc.string() + " --observed " + (dir_ / "bad.csv").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad.csv: line 2: createdSeconds must be seconds >= 0"), std::string::npos) << r.output;
}

TEST_F(WhatIfTest, BadExportsExitTwoWithFileAndJsonPath) {
  struct Case {
    std::string dir, message;
  };
  for (const Case& c : std::vector<Case>{
           {"missing-env", "no `aws batch describe-service-environments` output"},
           {"broken-json", "describe-job-queues.json: line 27, column 13: syntax error"},
           {"unknown-enum",
            "describe-quota-share-production.json: resourceSharingConfiguration.strategy: expected one of RESERVE, "
            "LEND, LEND_AND_BORROW, got \"SHARE_ALL\""},
           {"inconsistent-times",
            "describe-service-job-2d877835-50e3-457e-87f7-eee6a577d543.json: stoppedAt: 1778565790739 is before "
            "startedAt 1778565850739"},
           {"unknown-share", "quotaShareName: job vit-sweep-07 is in quota share 'marketing', which the export does not "
                             "describe"},
           {"no-such-folder", "no-such-folder: not a folder"},
       }) {
    SCOPED_TRACE(c.dir);
    Result r = Quotasim("import aws " + kExport + "/bad/" + c.dir + " --out " + (dir_ / "x.json").string());
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir_ / "x.json"));
  }
  Result r = Quotasim("import aws " + kExport + "/queue-a --out " + (dir_ / "x.json").string() + " --export-time yesterday");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = Quotasim("import gcp " + kExport + "/queue-a --out " + (dir_ / "x.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// explain on the notebook's log (quota-semantics.md §7): qs1_job_med
// borrows QS2's instance at 0, is reclaimed for qs2_job_1 at 60 (drain to
// 80), and runs again from QS1's own limit at 440.
TEST_F(WhatIfTest, ExplainTellsAJobsStoryAndAShareWaits) {
  const fs::path log = dir_ / "nb.jsonl";
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --events " + log.string()).exit_code, 0);
  Result r = Quotasim("explain " + log.string() + " qs1_job_med");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const std::string want : {
           "job qs1_job_med, quota share QS1\n",
           "0.0s      SCHEDULED  1 ml.g5.xlarge: 0 from its own limit, 1 borrowed from QS2\n",
           "1.0m      RUNNING    preempted (cross-share) to make room for qs2_job_1: PREEMPTION_IN_PROGRESS",
           "1.3m      RUNNABLE   Cross-share preemption triggered to reclaim borrowed capacity\n",
           "7.3m      SCHEDULED  1 ml.g5.xlarge: 1 from its own limit\n",
           "  RUNNABLE 6.0m\n",
           "dispatched 6.3m in 2 dispatch(es); preempted 1 time(s); last status SUCCEEDED\n"}) {
    EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n--\n" << r.output;
  }
  r = Quotasim("explain " + log.string() + " qs2_job_1");
  EXPECT_NE(r.output.find("made room for it: qs1_job_med (QS1) preempted cross-share at 1.0m"), std::string::npos)
      << r.output;
  r = Quotasim("explain " + log.string() + " --share QS1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("quota share QS1: 3 jobs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Cross-share preemption triggered to reclaim borrowed capacity"), std::string::npos)
      << r.output;
  // Errors: an unknown job, a malformed log.
  r = Quotasim("explain " + log.string() + " nobody");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the log has no line of job 'nobody'"), std::string::npos) << r.output;
  std::ofstream(dir_ / "bad.jsonl") << "{\"time\": 0, \"jobName\": \"a\", \"status\": \"SUBMITTED\"}\nnot json\n";
  r = Quotasim("explain " + (dir_ / "bad.jsonl").string() + " a");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad.jsonl:2: not a JSON object"), std::string::npos) << r.output;
}

// compare on scenario files: the notebook and a copy with QS1's borrowLimit
// at 0 side by side; each summary is that of `run` (the copy's = `run
// --set QS1.borrowLimit=0`).
TEST_F(WhatIfTest, CompareTakesScenarioFiles) {
  Json nb = Json::parse(qs::testing::ReadWholeFile(kNotebook));
  nb["quotaShares"][0]["resourceSharingConfiguration"]["borrowLimit"] = 0;
  const fs::path copy = dir_ / "nb-b0.json";
  std::ofstream(copy) << nb.dump(2);
  Result r = Quotasim("compare " + kNotebook + " " + copy.string() + " --out " + (dir_ / "c").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --set QS1.borrowLimit=0 --summary " + (dir_ / "set.json").string())
                .exit_code,
            0);
  EXPECT_EQ(Figures(dir_ / "c" / "nb-b0.summary.json"), Figures(dir_ / "set.json"));
  const std::string csv = qs::testing::ReadWholeFile(dir_ / "c" / "comparison.csv");
  EXPECT_EQ(csv.rfind("scenario,row,quotaShare,", 0), 0u) << csv;
  EXPECT_NE(csv.find("\nnb-b0,share,QS1,ml.g5.xlarge=1,LEND_AND_BORROW,0,ENABLED,3,3,0,0,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nnotebook-example,total,"), std::string::npos) << csv;
  const std::string md = qs::testing::ReadWholeFile(dir_ / "c" / "comparison.md");
  EXPECT_NE(md.find("| nb-b0 | 4 | 4 | 0 | 0 | 0.0s | 12.3m | 12.3m | 1 | 0.0 | complete |"), std::string::npos) << md;
  // --set applies to every scenario file; a trace needs its mapping.
  r = Quotasim("compare " + kNotebook + " " + copy.string() + " --set QS9.strategy=LEND --out " + (dir_ / "d").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = Quotasim("compare " + kNotebook + " " + copy.string() + " --force --set preemptionDrainSeconds=0 --out " +
               (dir_ / "c").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// --wait-causes on sweep and compare (scenario files): each summary is the
// one `run --wait-causes` writes, waitByCauseSeconds included.
TEST_F(WhatIfTest, SweepAndCompareTakeWaitCauses) {
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --wait-causes --set QS1.borrowLimit=0 --summary " +
                     (dir_ / "set.json").string())
                .exit_code,
            0);
  const Json set = Figures(dir_ / "set.json");
  ASSERT_TRUE(set["quotaShares"]["QS1"].contains("waitByCauseSeconds")) << set.dump(2);
  Result r = Quotasim("sweep " + kNotebook + " --vary QS1.borrowLimit=0 --wait-causes --out " + (dir_ / "s").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Figures(dir_ / "s" / "notebook-example__QS1.borrowLimit=0.summary.json"), set);
  EXPECT_EQ(ReadJson(dir_ / "s" / "notebook-example__QS1.borrowLimit=0.summary.json")["run"]["waitCauses"], true);
  r = Quotasim("compare " + kNotebook + " --set QS1.borrowLimit=0 --wait-causes --out " + (dir_ / "c").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Figures(dir_ / "c" / "notebook-example.summary.json"), set);
  // A trace compare writes no cause lines: refused rather than ignored.
  r = Quotasim("compare x.csv --mapping m.json --wait-causes");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--wait-causes applies to scenario files"), std::string::npos) << r.output;
}

TEST_F(WhatIfTest, BadOverridesExitTwoWithWhatIsWrong) {
  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{
           {"run " + kNotebook + " --set QS1.borowLimit=5", "unknown key 'QS1.borowLimit'; keys: a simulation knob"},
           {"run " + kNotebook + " --set QS9.borrowLimit=5",
            "--set QS9.borrowLimit=5: the scenario has no quota share 'QS9' (its shares: QS1, QS2, QS3)"},
           {"run " + kNotebook + " --set QS2.borrowLimit=50",
            "quotaShares[1] (CreateQuotaShare of QS2) would be rejected: ClientException: "
            "resourceSharingConfiguration.borrowLimit is only valid with strategy LEND_AND_BORROW, not LEND"},
           {"whatif " + kNotebook + " --set QS1.strategy=SHARING", "expected RESERVE, LEND or LEND_AND_BORROW"},
           {"whatif " + kNotebook, "give at least one --set KEY=VALUE"},
           {"sweep " + kNotebook + " --vary QS1.borrowLimit=0,x --out " + (dir_ / "s").string(),
            "--vary QS1.borrowLimit=x: expected -1 (unlimited) or a percentage"},
           {"sweep " + kNotebook + " --vary QS7.strategy=LEND --out " + (dir_ / "s").string(),
            "the scenario has no quota share 'QS7'"},
       }) {
    SCOPED_TRACE(c.args);
    Result r = Quotasim(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << r.output;
  }
}

}  // namespace
