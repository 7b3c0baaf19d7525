#include "engine/trace/trace_reader.h"

#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/trace/mapping.h"
#include "engine/trace/quota_table.h"
#include "gtest/gtest.h"

namespace qs::trace {
namespace {

std::string TestData(const std::string& name) { return std::string(QS_SOURCE_DIR) + "/engine/trace/testdata/" + name; }

struct Read {
  absl::Status status;
  std::vector<TraceJob> jobs;
  ImportStats stats;
};

Read ReadText(const std::string& text, TraceFormat f, bool skip = false) {
  std::istringstream in(text);
  Read r;
  ImportOptions o;
  o.skip_bad_rows = skip;
  r.status = ReadTrace(in, "t.csv", f, o, [&](const TraceJob& j) { r.jobs.push_back(j); }, &r.stats);
  return r;
}

Read ReadPath(const std::string& path, TraceFormat f, ImportOptions o = {}) {
  Read r;
  r.status = ReadTraceFile(path, f, o, [&](const TraceJob& j) { r.jobs.push_back(j); }, &r.stats);
  return r;
}

TEST(TraceReader, Swf) {
  Read r = ReadPath(TestData("sample.swf"), TraceFormat::kSwf);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.stats.rows, 4);
  EXPECT_EQ(r.stats.incomplete, 1);  // job 3: run time and size unknown
  EXPECT_EQ(r.jobs[0].id, "1");
  EXPECT_EQ(r.jobs[0].line, 5);
  EXPECT_EQ(r.jobs[0].submit, 0);
  EXPECT_EQ(r.jobs[0].duration, 100000);
  EXPECT_EQ(r.jobs[0].gpus, 4);
  EXPECT_EQ(r.jobs[0].team, "7");  // group
  EXPECT_FALSE(r.jobs[0].failed);
  EXPECT_TRUE(r.jobs[1].failed);
  EXPECT_EQ(r.jobs[2].gpus, 2);  // allocated unknown: requested
  EXPECT_EQ(r.jobs[2].team, "8");
  ImportOptions o;
  o.swf_team = SwfTeamField::kPartition;
  r = ReadPath(TestData("sample.swf"), TraceFormat::kSwf, o);
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.jobs[0].team, "0");
  EXPECT_EQ(r.jobs[2].team, "unknown");
  o.swf_team = SwfTeamField::kUser;
  r = ReadPath(TestData("sample.swf"), TraceFormat::kSwf, o);
  EXPECT_EQ(r.jobs[1].team, "4");
}

TEST(TraceReader, SwfGzipAndCorruptGzip) {
  const std::string dir = testing::TempDir();
  const std::string gz = dir + "/sample.swf.gz";
  std::ostringstream text;
  text << "; header\n";
  for (int i = 0; i < 20000; ++i) text << i << " " << i << " 0 10 1 -1 -1 1 10 -1 1 1 " << (i % 3) << " -1 -1 -1 -1 -1\n";
  gzFile f = gzopen(gz.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  const std::string s = text.str();
  gzwrite(f, s.data(), static_cast<unsigned>(s.size()));
  gzclose(f);
  Read r = ReadPath(gz, TraceFormat::kSwf);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.jobs.size(), 20000u);  // several parse blocks, delivered in file order
  for (size_t i = 0; i < r.jobs.size(); ++i) ASSERT_EQ(r.jobs[i].line, static_cast<int64_t>(i) + 2);
  // Truncate the compressed file: a clear error, never a crash.
  std::filesystem::resize_file(gz, std::filesystem::file_size(gz) / 2);
  r = ReadPath(gz, TraceFormat::kSwf);
  EXPECT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("sample.swf.gz"), std::string::npos) << r.status;
  r = ReadPath(dir + "/does-not-exist.swf", TraceFormat::kSwf);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kNotFound);
}

TEST(TraceReader, PhillyPollux) {
  Read r = ReadPath(TestData("sample_pollux.csv"), TraceFormat::kPhillyPollux);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.jobs[0].team, "11cb48");
  EXPECT_EQ(r.jobs[1].submit - r.jobs[0].submit, -(48 * 60 + 52) * 1000);
  EXPECT_EQ(r.jobs[2].duration, 120500);
  EXPECT_EQ(r.jobs[1].gpus, 8);
}

TEST(TraceReader, PhillyGavelRfoldOpenb) {
  Read g = ReadPath(TestData("sample_gavel.csv"), TraceFormat::kPhillyGavel);
  ASSERT_TRUE(g.status.ok()) << g.status;
  ASSERT_EQ(g.jobs.size(), 3u);
  EXPECT_EQ(g.jobs[2].id, "103959:0");
  EXPECT_EQ(g.jobs[2].duration, 500000);  // 1 step per second by default
  Read rf = ReadPath(TestData("sample_rfold.csv"), TraceFormat::kPhillyRfold);
  ASSERT_TRUE(rf.status.ok()) << rf.status;
  ASSERT_EQ(rf.jobs.size(), 3u);  // no trailing newline
  EXPECT_EQ(rf.jobs[1].gpus, 16);
  EXPECT_EQ(rf.jobs[1].duration, 0);
  EXPECT_EQ(rf.jobs[2].submit, 12500);
  EXPECT_EQ(rf.jobs[0].team, "all");
  Read ob = ReadPath(TestData("sample_openb.csv"), TraceFormat::kAlibabaOpenb);
  ASSERT_TRUE(ob.status.ok()) << ob.status;
  ASSERT_EQ(ob.jobs.size(), 4u);
  EXPECT_DOUBLE_EQ(ob.jobs[1].gpus, 0.46);
  EXPECT_EQ(ob.jobs[1].duration, 500000);  // deletion - scheduled
  EXPECT_EQ(ob.jobs[1].priority, 0);       // BE
  EXPECT_EQ(ob.jobs[0].priority, 2);       // LS
  EXPECT_EQ(ob.jobs[3].duration, 40000);   // never scheduled: deletion - creation
  EXPECT_EQ(ob.jobs[3].priority, 3);
  EXPECT_EQ(ob.jobs[2].gpus, 0);
}

struct BadCase {
  const char* name;
  TraceFormat format;
  std::string text;
  std::string expect;  // substring of the error
};

TEST(TraceReader, BrokenRowsNameFileAndLine) {
  const std::string pollux_h = "timestamp,duration,num_gpus,gpu_time,cluster\n";
  const std::string ok_pollux = "2017-10-09 07:01:55,66.0,1,66.0,a\n";
  const std::string swf_ok = "1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n";
  const std::string openb_h = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
                              "deletion_time,scheduled_time\n";
  const std::vector<BadCase> cases = {
      {"swf field count", TraceFormat::kSwf, swf_ok + "2 0 0 10 1\n", "t.csv:2: expected 18"},
      {"swf non-numeric", TraceFormat::kSwf, swf_ok + "2 x 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n",
       "t.csv:2: field 2: not a number"},
      {"swf negative", TraceFormat::kSwf, swf_ok + "2 0 0 -5 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n",
       "t.csv:2: field 4: negative"},
      {"swf absurd procs", TraceFormat::kSwf, swf_ok + "2 0 0 5 1e30 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n",
       "t.csv:2: field 5: absurd"},
      {"swf nan", TraceFormat::kSwf, "1 0 0 nan 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n", "t.csv:1: field 4"},
      {"swf empty", TraceFormat::kSwf, "", "t.csv:1: empty file"},
      {"swf comments only", TraceFormat::kSwf, "; a\n; b\n", "no job rows"},
      {"pollux missing header", TraceFormat::kPhillyPollux, ok_pollux, "t.csv:1: missing or wrong header"},
      {"pollux empty", TraceFormat::kPhillyPollux, "", "t.csv:1: empty file"},
      {"pollux header only", TraceFormat::kPhillyPollux, pollux_h, "no job rows"},
      {"pollux field count", TraceFormat::kPhillyPollux, pollux_h + ok_pollux + "2017-10-09 07:01:55,66.0,1\n",
       "t.csv:3: expected 5 comma-separated fields, got 3"},
      {"pollux bad time", TraceFormat::kPhillyPollux, pollux_h + "2017-13-09 07:01:55,66.0,1,66.0,a\n",
       "t.csv:2: timestamp"},
      {"pollux negative duration", TraceFormat::kPhillyPollux, pollux_h + "2017-10-09 07:01:55,-66.0,1,66.0,a\n",
       "t.csv:2: duration -66.0 out of range"},
      {"pollux absurd gpus", TraceFormat::kPhillyPollux, pollux_h + "2017-10-09 07:01:55,66.0,1e30,66.0,a\n",
       "t.csv:2: num_gpus 1e30 out of range"},
      {"pollux empty team", TraceFormat::kPhillyPollux, pollux_h + "2017-10-09 07:01:55,66.0,1,66.0,\n",
       "t.csv:2: cluster (team) is empty"},
      {"pollux quote", TraceFormat::kPhillyPollux, pollux_h + "\"2017,66.0,1,66.0,a\n", "t.csv:2: unterminated"},
      {"gavel non-numeric", TraceFormat::kPhillyGavel,
       "vc,job_seq,arrival_s,num_gpus,gavel_job_type,total_steps\na,0,zero,1,x,10\n", "t.csv:2: arrival_s: not a number"},
      {"rfold missing header", TraceFormat::kPhillyRfold, "0,0.0,CLOS,1,1,3600.0\n", "t.csv:1: missing header"},
      {"rfold negative", TraceFormat::kPhillyRfold,
       "#job id,arrival time (sec),topology,shape,size,duration (sec)\n0,0.0,CLOS,1,1,-3.0\n",
       "t.csv:2: duration -3.0 out of range"},
      {"openb negative duration", TraceFormat::kAlibabaOpenb, openb_h + "p,1,1,1,1000,,LS,Running,100,50,\n",
       "t.csv:2: negative duration"},
      {"openb absurd", TraceFormat::kAlibabaOpenb, openb_h + "p,1,1,1e30,1000,,LS,Running,0,50,\n",
       "t.csv:2: num_gpu 1e30 out of range"},
      {"openb field count", TraceFormat::kAlibabaOpenb, openb_h + "p,1,1\n", "t.csv:2: expected 11"},
  };
  for (const BadCase& c : cases) {
    Read r = ReadText(c.text, c.format);
    ASSERT_FALSE(r.status.ok()) << c.name;
    EXPECT_EQ(r.status.code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(r.status.message().find(c.expect), std::string::npos) << c.name << ": " << r.status.message();
  }
}

TEST(TraceReader, SkipBadRowsCountsAndReports) {
  const std::string text =
      "timestamp,duration,num_gpus,gpu_time,cluster\n"
      "2017-10-09 07:01:55,66.0,1,66.0,a\n"
      "garbage\n"
      "2017-10-09 07:01:55,-1,1,66.0,a\n"
      "2017-10-09 07:01:56,10,2,20,b\n";
  Read strict = ReadText(text, TraceFormat::kPhillyPollux);
  EXPECT_FALSE(strict.status.ok());
  Read r = ReadText(text, TraceFormat::kPhillyPollux, /*skip=*/true);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.stats.rows, 4);
  EXPECT_EQ(r.stats.skipped, 2);
  ASSERT_EQ(r.stats.skipped_examples.size(), 2u);
  EXPECT_EQ(r.stats.skipped_examples[0].rfind("t.csv:3: ", 0), 0u) << r.stats.skipped_examples[0];
  EXPECT_EQ(r.stats.skipped_examples[1].rfind("t.csv:4: ", 0), 0u);
  // A missing header is not a row: still an error.
  Read h = ReadText("2017-10-09 07:01:55,66.0,1,66.0,a\n", TraceFormat::kPhillyPollux, true);
  EXPECT_FALSE(h.status.ok());
}

TEST(TraceReader, RandomBytesNeverCrash) {
  std::mt19937_64 rng(5);
  const std::string alphabet = "0123456789,.-+e; \n\r\t\"#abcLSBE:";
  for (TraceFormat f : {TraceFormat::kSwf, TraceFormat::kPhillyPollux, TraceFormat::kPhillyGavel,
                        TraceFormat::kPhillyRfold, TraceFormat::kAlibabaOpenb}) {
    for (int i = 0; i < 300; ++i) {
      std::string s;
      const size_t n = rng() % 400;
      for (size_t k = 0; k < n; ++k) {
        s.push_back(rng() % 8 == 0 ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()]);
      }
      Read r = ReadText(s, f, (i % 2) == 0);
      (void)r;
    }
  }
}

TEST(TraceReader, FormatNames) {
  for (const char* n : {"swf", "philly-pollux", "philly-gavel", "philly-rfold", "alibaba-openb"}) {
    auto f = ParseTraceFormat(n);
    ASSERT_TRUE(f.ok());
    EXPECT_STREQ(TraceFormatName(*f), n);
  }
  EXPECT_FALSE(ParseTraceFormat("csv").ok());
  EXPECT_EQ(*GuessTraceFormat("x/KTH-SP2-1996-2.1-cln.swf.gz"), TraceFormat::kSwf);
  EXPECT_EQ(*GuessTraceFormat("pollux_philly_jobs_by_vc.csv"), TraceFormat::kPhillyPollux);
}

TEST(QuotaTable, ReadsAndRejects) {
  auto t = ReadQuotaTableFile(TestData("sample_quota.csv"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->columns, (std::vector<std::string>{"vcA", "vcB"}));
  EXPECT_EQ(t->gpus[2][0], 8);
  EXPECT_EQ(t->total[0], 24);
  auto bad = [](const std::string& text) {
    std::istringstream in(text);
    return ReadQuotaTable(in, "q.csv").status();
  };
  EXPECT_NE(bad("").message().find("q.csv:1: empty file"), std::string::npos);
  EXPECT_NE(bad("x,a\n").message().find("q.csv:1: missing header"), std::string::npos);
  EXPECT_NE(bad("date,a,total\n2020-01-01,1\n").message().find("q.csv:2: expected 3 fields"), std::string::npos);
  EXPECT_NE(bad("date,a\n2020-01-01,-1\n").message().find("q.csv:2: field 2"), std::string::npos);
  EXPECT_NE(bad("date,a\n2020-01-02,1\n2020-01-01,1\n").message().find("q.csv:3: dates must increase"),
            std::string::npos);
  EXPECT_NE(bad("date,a\n2020-02-30,1\n").message().find("q.csv:2: date"), std::string::npos);
}

TEST(Mapping, ParsesAndNamesPaths) {
  auto m = ParseMapping(R"({"environment": {"instanceType": "ml.p4d.24xlarge", "gpusPerInstance": 8, "instances": 4},
                            "shares": {"prefix": "t", "maxShares": 3}, "priority": "trace",
                            "limits": {"source": "given", "instances": {"a": 1}}})",
                        "m.json");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->gpus_per_instance, 8);
  EXPECT_EQ(m->max_shares, 3);
  EXPECT_TRUE(m->trace_priority);
  EXPECT_EQ(m->given_limits.at("a"), 1);
  auto err = [](const char* text) { return std::string(ParseMapping(text, "m.json").status().message()); };
  EXPECT_EQ(err(R"({"environment": {"gpus": 1}})"), "m.json: environment.gpus: unknown key; expected one of: "
                                                     "instanceType, gpusPerInstance, instances");
  EXPECT_EQ(err(R"({"environment": {"gpusPerInstance": -1}})"),
            "m.json: environment.gpusPerInstance: must be in [0.001, 1e+06], got -1");
  EXPECT_EQ(err(R"({"limits": {"source": "magic"}})"),
            "m.json: limits.source: expected one of: proportional, given, quotaTable");
  EXPECT_EQ(err(R"({"shares": {"maxShares": 21}})"), "m.json: shares.maxShares: must be in [1, 20], got 21");
  EXPECT_EQ(err("{"), "m.json: (document): not valid JSON");
}

}  // namespace
}  // namespace qs::trace
