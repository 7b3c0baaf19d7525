// End-to-end tests of the `quotasim` binary: exit codes, messages that name
// the file and JSON path, output files, engine and thread options.
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
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

// A summary split into its `run` object (where it came from: the scenario
// file as named, the engine, the version, the knobs; engine/log/summary.h)
// and the rest, which must not depend on any of those.
struct SplitSummary {
  std::string rest, run;
};
SplitSummary SplitRun(const std::string& summary) {
  const std::string open = "{\n  \"run\": {";
  const size_t end = summary.rfind(open, 0) == 0 ? summary.find("\n  },\n", open.size()) : std::string::npos;
  if (end == std::string::npos) return {summary, ""};
  return {"{\n" + summary.substr(end + 6), summary.substr(2, end + 4 - 2)};
}
std::string SummaryFigures(const fs::path& p) { return SplitRun(ReadFile(p)).rest; }

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("quotasim_cli_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  fs::path dir_;
};

const std::string kNotebook = QS_SOURCE_DIR "/scenarios/notebook-example.json";

TEST_F(CliTest, RunWritesLogAndSummaryAndPrintsTable) {
  fs::path ev = dir_ / "e.jsonl", sum = dir_ / "s.json";
  Result r = Quotasim("run " + kNotebook + " --events " + ev.string() + " --summary " + sum.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("QS1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("event log: " + ev.string()), std::string::npos) << r.output;
  std::string log = ReadFile(ev);
  EXPECT_NE(log.find("\"jobName\": \"qs2_job_1\""), std::string::npos);
  std::string summary = ReadFile(sum);
  EXPECT_NE(summary.find("\"invariantViolations\": 0"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"quotaShares\""), std::string::npos);
  // The summary says where it came from: file, engine, the version
  // `--version` prints, and every knob.
  const std::string version = Quotasim("--version").output;
  const std::string release = version.substr(9, version.find('\n') - 9);  // after "quotasim "
  EXPECT_EQ(summary.rfind("{\n  \"run\": {\n    \"scenario\": \"" + kNotebook + "\",\n    \"engine\": \"fast\",\n"
                          "    \"quotasim\": \"" + release + "\",", 0), 0u) << summary.substr(0, 400);
  EXPECT_NE(summary.find("\"preemptionDrainSeconds\": 20,"), std::string::npos) << summary.substr(0, 800);
  EXPECT_NE(summary.find("\"horizonSeconds\": null"), std::string::npos) << summary.substr(0, 800);
  // The table: every declared share in declaration order (QS3 has no job).
  const size_t qs1 = r.output.find("\nQS1 "), qs2 = r.output.find("\nQS2 "), qs3 = r.output.find("\nQS3 ");
  EXPECT_TRUE(qs1 != std::string::npos && qs1 < qs2 && qs2 < qs3 && qs3 != std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 ml.g5.xlarge  LEND_AND_BORROW  200%"), std::string::npos) << r.output;
}

// --format csv | json: the rows alone on stdout, for programs.
TEST_F(CliTest, RunPrintsTheTableAsCsvOrJson) {
  Result csv = Quotasim("run " + kNotebook + " --format csv");
  EXPECT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_EQ(csv.output.rfind("row,quotaShare,capacityLimits,strategy,borrowLimit,inSharePreemption,jobs,", 0), 0u)
      << csv.output;
  EXPECT_EQ(std::count(csv.output.begin(), csv.output.end(), '\n'), 5) << csv.output;  // header, 3 shares, total
  EXPECT_NE(csv.output.find("\nshare,QS3,ml.g5.xlarge=1,RESERVE,-1,DISABLED,0,0,0,0,,,,,0,0,0,0,0\n"),
            std::string::npos) << csv.output;
  EXPECT_EQ(csv.output.find("event log"), std::string::npos) << csv.output;
  Result json = Quotasim("run " + kNotebook + " --format json");
  EXPECT_EQ(json.exit_code, 0) << json.output;
  EXPECT_EQ(json.output.rfind("{\n  \"quotaShares\": [\n    {\n      \"quotaShare\": \"QS1\",", 0), 0u) << json.output;
  EXPECT_NE(json.output.find("\n  \"total\": {"), std::string::npos) << json.output;
  EXPECT_EQ(json.output.back(), '\n');
  Result bad = Quotasim("run " + kNotebook + " --format yaml");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--format must be table, csv or json"), std::string::npos) << bad.output;
}

// engine/testdata/preemption-cycle.json (victimReturn IN_PLACE) never ends by itself (engine_test):
// the run stops, exits 1 naming the file and the cycle, and writes the log
// and summary up to the stop; --cycle-preemptions sets when.
TEST_F(CliTest, APreemptionCycleStopsTheRunWithExitOne) {
  const std::string scenario = QS_SOURCE_DIR "/engine/testdata/preemption-cycle.json";
  fs::path ev = dir_ / "e.jsonl", sum = dir_ / "s.json";
  Result r = Quotasim("run " + scenario + " -q --cycle-preemptions 50 --events " + ev.string() + " --summary " +
                      sum.string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("preemption-cycle.json: run stopped at t="), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("was preempted 50 times"), std::string::npos) << r.output;
  EXPECT_NE(ReadFile(sum).find("\"jobsUnfinished\": "), std::string::npos);
  EXPECT_NE(ReadFile(ev).find("\"preemptedAttemptCount\": 49,"), std::string::npos);
  EXPECT_EQ(Quotasim("run " + scenario + " -q --cycle-preemptions -1").exit_code, 2);  // a usage error
  // The default stops it too (after 10,000 preemptions of one job).
  Result d = Quotasim("run " + scenario + " -q");
  EXPECT_EQ(d.exit_code, 1);
  EXPECT_NE(d.output.find("was preempted 10000 times"), std::string::npos) << d.output.substr(0, 2000);
}

TEST_F(CliTest, ThreadCountsAndEnginesGiveIdenticalBytes) {
  std::string logs[4], runs[4];
  const char* variants[4] = {"--threads 1", "--threads 2", "--engine reference --threads 1",
                             "--engine reference --threads 2"};
  for (int i = 0; i < 4; ++i) {
    fs::path ev = dir_ / ("e" + std::to_string(i) + ".jsonl");
    fs::path sum = dir_ / ("s" + std::to_string(i) + ".json");
    Result r = Quotasim("run " + kNotebook + " -q " + variants[i] + " --events " + ev.string() +
                   " --summary " + sum.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const SplitSummary split = SplitRun(ReadFile(sum));
    logs[i] = ReadFile(ev) + "\n--\n" + split.rest;
    runs[i] = split.run;
  }
  for (int i = 1; i < 4; ++i) EXPECT_EQ(logs[0], logs[i]) << variants[i];
  // The provenance names the engine, and nothing in it depends on --threads.
  EXPECT_NE(runs[0].find("\"engine\": \"fast\""), std::string::npos) << runs[0];
  EXPECT_NE(runs[0].find("\"scenario\": \"" + kNotebook + "\""), std::string::npos) << runs[0];
  EXPECT_NE(runs[0].find("\"completed\": true"), std::string::npos) << runs[0];
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_NE(runs[2].find("\"engine\": \"reference\""), std::string::npos) << runs[2];
  EXPECT_EQ(runs[2], runs[3]);
}

// `run X.qsb` on the fast engine streams the file; it must write what the
// same scenario gives as JSON, and what the reference engine gives.
TEST_F(CliTest, StreamedQsbRunsGiveTheBytesOfTheJsonScenario) {
  const std::string gen = "gen --jobs 2000 --shares 6 --units 3 --seed 5 --out ";
  fs::path qsb = dir_ / "w.qsb", json = dir_ / "w.json";
  ASSERT_EQ(Quotasim(gen + qsb.string()).exit_code, 0);
  ASSERT_EQ(Quotasim(gen + json.string()).exit_code, 0);
  const std::string variants[5] = {json.string(), qsb.string() + " --threads 1", qsb.string() + " --threads 2",
                                    qsb.string() + " --no-check", qsb.string() + " --engine reference"};
  std::string want;
  for (int i = 0; i < 5; ++i) {
    fs::path ev = dir_ / ("e" + std::to_string(i) + ".jsonl"), sum = dir_ / ("s" + std::to_string(i) + ".json");
    Result r = Quotasim("run " + variants[i] + " -q --events " + ev.string() + " --summary " + sum.string());
    ASSERT_EQ(r.exit_code, 0) << variants[i] << "\n" << r.output;
    const std::string got = ReadFile(ev) + "\n--\n" + SummaryFigures(sum);
    if (i == 0) {
      want = got;
      EXPECT_GT(want.size(), 100000u);
    } else {
      EXPECT_TRUE(got == want) << variants[i];
    }
  }
  // validate reads a .qsb without holding it whole, with the same checks.
  Result v = Quotasim("validate " + qsb.string());
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_NE(v.output.find("valid, "), std::string::npos) << v.output;
  EXPECT_NE(v.output.find(" 2000 job submissions"), std::string::npos) << v.output;
  // A corrupted block: exit 2, the file and block named, and no output
  // created (every block is checked before the run starts).
  std::string bytes = ReadFile(qsb);
  bytes[bytes.size() - 10] = static_cast<char>(bytes[bytes.size() - 10] ^ 0x11);
  fs::path bad = Write("bad.qsb", bytes), ev = dir_ / "bad.jsonl";
  for (const std::string& cmd : {"run " + bad.string() + " --events " + ev.string(), "validate " + bad.string()}) {
    Result r = Quotasim(cmd);
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find(bad.string() + ": checksum mismatch in event block"), std::string::npos) << r.output;
  }
  EXPECT_FALSE(fs::exists(ev));
  Result missing = Quotasim("run " + (dir_ / "missing.qsb").string());
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
}

// `run --summary` without --events: the fast engine keeps the summary
// itself and writes no records (RunOptions::summary). Its summary and its
// warnings are those a run with a log builds from the records, for both
// profiles, with wait causes and without, streamed or whole, and those of
// the reference engine.
TEST_F(CliTest, TheSummaryWithoutALogIsTheSummaryOfTheLog) {
  fs::path steady = dir_ / "steady.qsb", stress = dir_ / "stress.json";
  ASSERT_EQ(Quotasim("gen --jobs 2000 --shares 5 --units 2 --seed 3 --out " + steady.string()).exit_code, 0);
  ASSERT_EQ(Quotasim("gen --profile stress --jobs 800 --shares 5 --units 2 --seed 4 --out " + stress.string()).exit_code,
            0);
  const std::string problems = QS_SOURCE_DIR "/engine/testdata/validate-problems.json";
  for (const std::string& scenario : {steady.string(), stress.string(), problems, kNotebook}) {
    for (const std::string& causes : {std::string(""), std::string(" --wait-causes")}) {
      const std::string what = scenario + causes;
      fs::path ev = dir_ / "e.jsonl", with_log = dir_ / "a.json", alone = dir_ / "b.json", ref = dir_ / "c.json";
      Result a = Quotasim("run " + scenario + causes + " -q --events " + ev.string() + " --summary " + with_log.string());
      Result b = Quotasim("run " + scenario + causes + " -q --summary " + alone.string());
      Result c = Quotasim("run " + scenario + causes + " -q --engine reference --summary " + ref.string());
      ASSERT_EQ(a.exit_code, 0) << what << "\n" << a.output;
      ASSERT_EQ(b.exit_code, 0) << what << "\n" << b.output;
      ASSERT_EQ(c.exit_code, 0) << what << "\n" << c.output;
      EXPECT_EQ(ReadFile(alone), ReadFile(with_log)) << what;
      EXPECT_EQ(SummaryFigures(alone), SummaryFigures(ref)) << what;
      // The warnings (rejections, jobs that never ran) too; the log's
      // pointer aside ("the event log has them all").
      EXPECT_EQ(b.output, c.output) << what;
      EXPECT_EQ(b.output.find("warnings:") != std::string::npos, a.output.find("warnings:") != std::string::npos)
          << what;
    }
  }
}

// `sweep` streams .qsb scenarios in every variant and shares JSON ones: the
// same workload in either format, at 1 or 2 threads, gives the same files.
TEST_F(CliTest, SweepGivesTheSameSummariesForJsonAndQsbAtAnyThreadCount) {
  const std::string gen = "gen --jobs 1500 --shares 5 --units 2 --seed 8 --out ";
  fs::path qsb = dir_ / "w.qsb", json = dir_ / "w.json";
  ASSERT_EQ(Quotasim(gen + qsb.string()).exit_code, 0);
  ASSERT_EQ(Quotasim(gen + json.string()).exit_code, 0);
  const std::string vary = " --vary preemptionDrainSeconds=0,60 --vary shareOrder=UNDER_LIMIT_FIRST,ROUND_ROBIN";
  std::string want;
  const std::string runs[3] = {json.string() + " --threads 1", qsb.string() + " --threads 1",
                               qsb.string() + " --threads 2"};
  for (int i = 0; i < 3; ++i) {
    fs::path out = dir_ / ("out" + std::to_string(i));
    Result r = Quotasim("sweep " + runs[i] + vary + " --out " + out.string());
    ASSERT_EQ(r.exit_code, 0) << runs[i] << "\n" << r.output;
    std::string got = ReadFile(out / "sweep.csv");
    for (const char* v : {"w__preemptionDrainSeconds=0__shareOrder=UNDER_LIMIT_FIRST",
                          "w__preemptionDrainSeconds=60__shareOrder=ROUND_ROBIN"}) {
      got += SummaryFigures(out / (std::string(v) + ".summary.json"));
    }
    if (i == 0) {
      want = got;
      EXPECT_EQ(std::count(want.begin(), want.end(), '\n') > 4, true);
      EXPECT_NE(want.find("\"invariantViolations\": 0"), std::string::npos) << want.substr(0, 2000);
      EXPECT_NE(want.find(",invariant_violations,status\n"), std::string::npos) << want.substr(0, 2000);
      EXPECT_NE(want.find(",0,complete\n"), std::string::npos) << want.substr(0, 2000);
      // Each variant's summary names its knob values and that it completed.
      const std::string run = SplitRun(ReadFile(out / "w__preemptionDrainSeconds=60__shareOrder=ROUND_ROBIN.summary.json")).run;
      EXPECT_NE(run.find("\"preemptionDrainSeconds\": 60,"), std::string::npos) << run;
      EXPECT_NE(run.find("\"shareOrder\": \"ROUND_ROBIN\","), std::string::npos) << run;
      EXPECT_NE(run.find("\"completed\": true"), std::string::npos) << run;
    } else {
      EXPECT_TRUE(got == want) << runs[i];
    }
  }
}

// entitledCapacity is a sweep knob like the others: each variant's summary
// names its value; a value it does not know is a usage error.
TEST_F(CliTest, SweepVariesEntitledCapacity) {
  const fs::path out = dir_ / "ent";
  Result r = Quotasim("sweep " + kNotebook + " --vary entitledCapacity=WITHHELD,LENDABLE --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* v : {"WITHHELD", "LENDABLE"}) {
    const std::string run =
        SplitRun(ReadFile(out / ("notebook-example__entitledCapacity=" + std::string(v) + ".summary.json"))).run;
    EXPECT_NE(run.find("\"entitledCapacity\": \"" + std::string(v) + "\""), std::string::npos) << run;
  }
  Result bad = Quotasim("sweep " + kNotebook + " --vary entitledCapacity=KEPT --out " + (dir_ / "ent2").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("expected WITHHELD or LENDABLE"), std::string::npos) << bad.output;
}

// An --out folder holds one run's files only (engine/util/out_dir.h): a
// stale folder is refused (exit 2) and left as it was; --force empties a
// folder quotasim made, never one it did not.
TEST_F(CliTest, StaleOutFolderIsRefusedOrReplacedWithForce) {
  const fs::path out = dir_ / "sw";
  const std::string base = "sweep " + kNotebook + " --out " + out.string();
  Result first = Quotasim(base + " --vary preemptionDrainSeconds=0,60");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(fs::exists(out / ".quotasim-out"));
  const fs::path old_variant = out / "notebook-example__preemptionDrainSeconds=60.summary.json";
  ASSERT_TRUE(fs::exists(old_variant));
  const std::string old_csv = ReadFile(out / "sweep.csv");

  Result again = Quotasim(base + " --vary preemptionDrainSeconds=5");
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("--force"), std::string::npos) << again.output;
  EXPECT_EQ(ReadFile(out / "sweep.csv"), old_csv);

  Result forced = Quotasim(base + " --vary preemptionDrainSeconds=5 --force");
  ASSERT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_FALSE(fs::exists(old_variant)) << "a stale variant survived --force";
  EXPECT_TRUE(fs::exists(out / "notebook-example__preemptionDrainSeconds=5.summary.json"));
  for (const auto& e : fs::directory_iterator(out)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
  }

  // A folder quotasim did not make is never cleaned.
  const fs::path mine = dir_ / "mine";
  fs::create_directories(mine);
  std::ofstream(mine / "notes.txt") << "keep me";
  Result foreign = Quotasim("sweep " + kNotebook + " --vary preemptionDrainSeconds=0 --force --out " + mine.string());
  EXPECT_EQ(foreign.exit_code, 2) << foreign.output;
  EXPECT_EQ(ReadFile(mine / "notes.txt"), "keep me");
}

TEST_F(CliTest, MalformedDocumentsExitTwoWithFileAndJsonPath) {
  struct Case {
    const char* name;
    std::string text;
    std::string want;  // substring of the message
  };
  std::string nb = ReadFile(kNotebook);
  const Case cases[] = {
      {"truncated", nb.substr(0, nb.size() / 2), "line "},
      {"unknown_top_key", "{\"schedulingPolicy\": {}, \"bogus\": 1}", "bogus"},
      {"wrong_type",
       [&] {
         std::string s = nb;
         s.replace(s.find("\"maxCapacity\": 3"), 16, "\"maxCapacity\": \"3\"");
         return s;
       }(),
       "serviceEnvironment.capacityLimits[0].maxCapacity"},
      {"negative_time",
       [&] {
         std::string s = nb;
         s.replace(s.find("\"time\": 60"), 10, "\"time\": -60");
         return s;
       }(),
       "events[3].time"},
      {"huge_number",
       [&] {
         std::string s = nb;
         s.replace(s.find("\"runSeconds\": 300"), 17, "\"runSeconds\": 1e300");
         return s;
       }(),
       "events[0].simulation.runSeconds"},
      {"not_an_object", "[1, 2, 3]", ""},
      {"empty", "", ""},
  };
  for (const Case& c : cases) {
    fs::path p = Write(std::string(c.name) + ".json", c.text);
    Result r = Quotasim("run " + p.string() + " -q");
    EXPECT_EQ(r.exit_code, 2) << c.name << ": " << r.output;
    EXPECT_NE(r.output.find(p.string() + ": "), std::string::npos) << c.name << ": " << r.output;
    EXPECT_NE(r.output.find(c.want), std::string::npos) << c.name << ": " << r.output;
    // one line
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << c.name << ": " << r.output;
  }
}

TEST_F(CliTest, RejectedRequestsAreLoggedAndTheRunGoesOn) {
  std::string nb = ReadFile(kNotebook);
  // A 21st share is impossible here, so reuse a name: the duplicate is rejected.
  std::string s = nb;
  const std::string marker = "\"quotaShareName\": \"QS2\"";
  s.replace(s.find(marker), marker.size(), "\"quotaShareName\": \"QS1\"");
  fs::path p = Write("dup.json", s);
  fs::path ev = dir_ / "e.jsonl";
  Result r = Quotasim("run " + p.string() + " -q --events " + ev.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("quotaShares[1]: CreateQuotaShare rejected"), std::string::npos) << r.output;
  std::string log = ReadFile(ev);
  EXPECT_NE(log.find("\"rejected\": true, \"action\": \"CreateQuotaShare\""), std::string::npos) << log;
  EXPECT_NE(log.find("\"path\": \"events[3]\""), std::string::npos) << log;  // qs2_job_1: no QS2
}

// "-" is standard output: the log lines go there (the table to stderr),
// byte for byte what --events FILE writes.
TEST_F(CliTest, DashWritesTheLogToStandardOutput) {
  fs::path ev = dir_ / "e.jsonl";
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --events " + ev.string()).exit_code, 0);
  Result r = qs::testing::RunCommandLine("(" + std::string(QS_QUOTASIM_BIN) + " run " + kNotebook +
                                         " --events - 2>/dev/null)");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, ReadFile(ev));
  // A name ending in .gz is gzip-compressed: gunzip gives the same bytes.
  fs::path gz = dir_ / "e.jsonl.gz";
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --events " + gz.string()).exit_code, 0);
  Result unzipped = qs::testing::RunCommandLine("(gzip -dc " + gz.string() + " 2>/dev/null)");
  EXPECT_EQ(unzipped.exit_code, 0);
  EXPECT_EQ(unzipped.output, ReadFile(ev));
  EXPECT_LT(fs::file_size(gz), fs::file_size(ev) / 3);
  Result both = Quotasim("run " + kNotebook + " --events - --summary -");
  EXPECT_EQ(both.exit_code, 2) << both.output;
}

// Outputs appear under their names only when complete: a run killed half
// way leaves the previous log and summary in place, not a partial file.
TEST_F(CliTest, AKilledRunLeavesNoPartialFileUnderTheTargetName) {
  fs::path qsb = dir_ / "w.qsb", ev = dir_ / "e.jsonl", sum = dir_ / "s.json";
  ASSERT_EQ(Quotasim("gen --jobs 300000 --shares 8 --units 2 --seed 3 --out " + qsb.string()).exit_code, 0);
  for (const fs::path& p : {ev, sum}) {
    std::ofstream(p) << "previous run\n";
  }
  Result r = qs::testing::RunCommandLine("timeout -s KILL 1 " + std::string(QS_QUOTASIM_BIN) + " run " +
                                         qsb.string() + " -q --events " + ev.string() + " --summary " + sum.string());
  ASSERT_NE(r.exit_code, 0) << "the run finished within a second; the test needs a longer one";
  EXPECT_EQ(ReadFile(ev), "previous run\n");
  EXPECT_EQ(ReadFile(sum), "previous run\n");
  // A complete run replaces both.
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --events " + ev.string() + " --summary " + sum.string()).exit_code, 0);
  EXPECT_NE(ReadFile(sum).find("\"endTime\""), std::string::npos) << ReadFile(sum);
}

// An output that is a FIFO (or a device such as /dev/null, or the pipe
// behind /dev/stdout) is written in place, not replaced by a renamed file;
// a symlink keeps naming the file, which is replaced. (A FIFO in the
// test's folder stands for the devices: a regression here must not be able
// to replace the machine's /dev/null.)
TEST_F(CliTest, OutputsToAFifoOrThroughASymlinkLeaveThemInPlace) {
  const fs::path ev = dir_ / "e.jsonl", fifo = dir_ / "fifo.jsonl", got = dir_ / "got.jsonl";
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --events " + ev.string()).exit_code, 0);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The reader gives up after 60 s, so that a writer that never opens the
  // FIFO fails the test instead of hanging it.
  auto through_fifo = [&](const std::string& args) {
    return qs::testing::RunCommandLine("(timeout 60 cat " + fifo.string() + " > " + got.string() + " & " +
                                       std::string(QS_QUOTASIM_BIN) + " " + args + "; rc=$?; wait; exit $rc)");
  };
  Result r = through_fifo("run " + kNotebook + " -q --events " + fifo.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(ReadFile(got), ReadFile(ev));
  // gen's streamed .qsb (its scratch file goes to the temporary folder, not
  // beside the FIFO), and the file it wrote runs.
  const fs::path qsb = dir_ / "w.qsb", qsb_fifo = dir_ / "fifo.qsb";
  const std::string gen = "gen --jobs 2000 --shares 4 --units 2 --seed 5 --out ";
  ASSERT_EQ(Quotasim(gen + qsb.string()).exit_code, 0);
  ASSERT_EQ(::mkfifo(qsb_fifo.c_str(), 0600), 0);
  r = qs::testing::RunCommandLine("(timeout 60 cat " + qsb_fifo.string() + " > " + got.string() + " & " +
                                  std::string(QS_QUOTASIM_BIN) + " " + gen + qsb_fifo.string() + "; rc=$?; wait; exit $rc)");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::is_fifo(qsb_fifo));
  EXPECT_EQ(ReadFile(got), ReadFile(qsb));
  for (const fs::directory_entry& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().filename().string().find(".blocks"), std::string::npos) << e.path();
  }
  // A symlink to the summary: the link stays, the file it names is replaced.
  const fs::path real = dir_ / "real.json", link = dir_ / "link.json", sum = dir_ / "s.json";
  std::ofstream(real) << "previous run\n";
  fs::create_symlink("real.json", link);
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --summary " + sum.string()).exit_code, 0);
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --summary " + link.string()).exit_code, 0);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(SummaryFigures(real), SummaryFigures(sum));
  // A link to a file not yet there: the file is made, the link stays.
  const fs::path dangling = dir_ / "dangling.json";
  fs::create_symlink("new.json", dangling);
  ASSERT_EQ(Quotasim("run " + kNotebook + " -q --summary " + dangling.string()).exit_code, 0);
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_EQ(SummaryFigures(dir_ / "new.json"), SummaryFigures(sum));
}

// Two outputs that are one file (also through a symlink), or an output
// that is the input, are refused before the run (exit 2, both named): the
// later rename would drop one output, or the run would overwrite its input.
TEST_F(CliTest, OutputsThatAreOneFileOrTheRunsInputAreRefused) {
  const fs::path scenario = Write("sc.json", ReadFile(kNotebook)), out = dir_ / "o.json", link = dir_ / "l.json";
  Result r = Quotasim("run " + scenario.string() + " -q --events " + out.string() + " --summary " + out.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--events and --summary name the same file"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));
  fs::create_symlink("o.json", link);
  r = Quotasim("run " + scenario.string() + " -q --events " + link.string() + " --summary " + out.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = Quotasim("run " + scenario.string() + " -q --summary " + (dir_ / "." / "sc.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("would overwrite the input SCENARIO"), std::string::npos) << r.output;
  EXPECT_EQ(ReadFile(scenario), ReadFile(kNotebook));
  // Distinct files run.
  r = Quotasim("run " + scenario.string() + " -q --events " + (dir_ / "e.jsonl").string() + " --summary " + out.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// validate reports what a run would meet, with JSON paths: a share limited
// on an instance type the environment lacks, a share AWS would reject
// (borrowLimit -5) and the job submitted to it, a job larger than the
// environment. Exit 0, or 2 under --strict; a clean scenario passes --strict.
TEST_F(CliTest, ValidateReportsWhatARunWouldMeet) {
  const std::string problems = QS_SOURCE_DIR "/engine/testdata/validate-problems.json";
  Result r = Quotasim("validate " + problems);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* want :
       {"4 problem(s) a run would meet", "quotaShares[1].capacityLimits[1]: quota share QS2 has a limit for ml.p4d.24xlarge",
        "quotaShares[2]: CreateQuotaShare would be rejected: ClientException: ", "job too_big needs 4 ml.g5.xlarge",
        "SubmitServiceJob would be rejected: ClientException: "}) {
    EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output;
  }
  EXPECT_EQ(Quotasim("validate --strict " + problems).exit_code, 2);
  // The run of it completes, and ends with a warnings block; --strict exits 2.
  Result run = Quotasim("run -q " + problems);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("warnings:\n  2 request(s) rejected (listed above)\n"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("  1 job(s) never ran: their share's limits or the environment cannot hold them (e.g. "
                            "too_big: MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE)"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(Quotasim("run -q --strict " + problems).exit_code, 2);
  EXPECT_EQ(Quotasim("run -q --strict --engine reference " + problems).exit_code, 2);
  Result clean_run = Quotasim("run -q --strict " + kNotebook);
  EXPECT_EQ(clean_run.exit_code, 0) << clean_run.output;
  EXPECT_EQ(clean_run.output.find("warnings"), std::string::npos) << clean_run.output;
  Result clean = Quotasim("validate --strict " + kNotebook);
  EXPECT_EQ(clean.exit_code, 0) << clean.output;
  EXPECT_EQ(clean.output.find("problem"), std::string::npos) << clean.output;
}

// Exit codes (engine/cli/commands.h): 2 for a usage error, with one line and
// a pointer to --help (not the whole help); 1 when the run cannot complete
// (here: a file that cannot be read); 0 for help and version.
TEST_F(CliTest, UsageErrorsExitTwoWithAPointerToHelp) {
  for (const std::string& args :
       {std::string(""), std::string("frobnicate"), std::string("run"), "run " + kNotebook + " --engine turbo",
        "run " + kNotebook + " --bogus", "run " + kNotebook + " --threads -1", std::string("gen --jobs 10"),
        "gen --jobs 10 --out " + (dir_ / "x.yaml").string(), "gen --jobs 0 --out " + (dir_ / "x.qsb").string(),
        "sweep " + kNotebook + " --vary bogus=1 --out " + (dir_ / "sw").string(), std::string("merge"),
        std::string("replay"), std::string("compare")}) {
    Result r = Quotasim(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("--help'"), std::string::npos) << args << "\n" << r.output;
    EXPECT_LT(std::count(r.output.begin(), r.output.end(), '\n'), 4) << args << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(dir_ / "x.yaml"));
  EXPECT_EQ(Quotasim("gen --jobs 1.5 --out " + (dir_ / "x.qsb").string()).exit_code, 2);
  // Counts as people write them.
  Result sci = Quotasim("gen --jobs 2e3 --shares 2 --units 1 --out " + (dir_ / "sci.qsb").string());
  EXPECT_EQ(sci.exit_code, 0) << sci.output;
  EXPECT_NE(sci.output.find("wrote 2000 jobs"), std::string::npos) << sci.output;
  EXPECT_EQ(Quotasim("run /nonexistent/file.json").exit_code, 1);
  EXPECT_EQ(Quotasim("run --help").exit_code, 0);
  EXPECT_EQ(Quotasim("--help").exit_code, 0);
  EXPECT_EQ(Quotasim("validate " + kNotebook).exit_code, 0);
}

// A log named for a compression quotasim does not write is refused before
// the run (exit 2, nothing created), rather than filled with plain text;
// .gz is gzip, and any other name is plain JSON Lines.
TEST_F(CliTest, EventLogsNamedForAnUnwrittenCompressionAreRefused) {
  for (const char* name : {"e.jsonl.zst", "e.bz2", "e.xz", "e.lz4"}) {
    const fs::path ev = dir_ / name;
    Result r = Quotasim("run " + kNotebook + " -q --events " + ev.string());
    EXPECT_EQ(r.exit_code, 2) << name << "\n" << r.output;
    EXPECT_NE(r.output.find("compression is not supported"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(ev)) << name;
  }
  for (const char* name : {"e.gz", "e.jsonl", "e.log", "events"}) {
    Result r = Quotasim("run " + kNotebook + " -q --events " + (dir_ / name).string());
    EXPECT_EQ(r.exit_code, 0) << name << "\n" << r.output;
  }
  EXPECT_EQ(ReadFile(dir_ / "e.gz").substr(0, 2), "\x1f\x8b");  // gzip's magic
  EXPECT_EQ(ReadFile(dir_ / "e.jsonl"), ReadFile(dir_ / "events"));
  // The summary is plain JSON: any compression's name is refused for it.
  for (const char* name : {"s.json.gz", "s.zst"}) {
    const fs::path sum = dir_ / name;
    Result r = Quotasim("run " + kNotebook + " -q --summary " + sum.string());
    EXPECT_EQ(r.exit_code, 2) << name << "\n" << r.output;
    EXPECT_NE(r.output.find("--summary " + sum.string()), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(sum)) << name;
  }
}

TEST_F(CliTest, VersionNamesTheReleaseAndTheBuild) {
  Result r = Quotasim("--version");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("quotasim 0.", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("built "), std::string::npos) << r.output;
}

}  // namespace
