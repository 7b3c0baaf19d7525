// `quotasim import aws DIR --out SCENARIO.json`: an AWS account's queue as a
// scenario (engine/io/aws_import.h; scripts/aws-export writes DIR).
//
// Writes SCENARIO.json and, beside it, SCENARIO.observed.csv (each job's
// createdAt, startedAt and stoppedAt as AWS ran it, in scenario seconds:
// what a run of the scenario is compared with), and prints what was
// imported, skipped and estimated.
#include <cctype>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "boost/program_options.hpp"
#include "engine/cli/command_line.h"
#include "engine/cli/commands.h"
#include "engine/io/aws_import.h"
#include "engine/util/atomic_file.h"
#include "engine/util/strings.h"

namespace po = boost::program_options;

namespace qs {
namespace {

// Epoch milliseconds, or an ISO 8601 UTC time "2026-05-12T18:00:00Z" (with
// optional .sss).
std::optional<int64_t> ParseTime(const std::string& s) {
  int64_t ms = 0;
  if (absl::SimpleAtoi(Sv(s), &ms)) return ms;
  std::tm tm{};
  int frac = 0, consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return std::nullopt;
  }
  std::string rest = s.substr(static_cast<size_t>(consumed));
  if (!rest.empty() && rest[0] == '.') {
    size_t i = 1;
    int digits = 0;
    for (; i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i])); ++i) {
      if (digits < 3) {
        frac = frac * 10 + (rest[i] - '0');
        ++digits;
      }
    }
    for (; digits < 3; ++digits) frac *= 10;
    rest = rest.substr(i);
  }
  if (rest != "Z") return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const time_t t = timegm(&tm);
  return static_cast<int64_t>(t) * 1000 + frac;
}

}  // namespace

int ImportCommand(const std::vector<std::string>& args) {
  po::options_description opts("quotasim import aws DIR --out SCENARIO.json [options]");
  std::string source, dir, out, queue, export_time;
  opts.add_options()("help,h", "show this help")(
      "out", po::value<std::string>(&out), "the scenario to write (.json); SCENARIO.observed.csv is written beside it")(
      "queue", po::value<std::string>(&queue), "the job queue (name or ARN) when the export holds several")(
      "export-time", po::value<std::string>(&export_time),
      "when the export was taken: epoch milliseconds or 2026-05-12T18:00:00Z (default: the latest timestamp in it)")(
      "no-horizon", "let the jobs in flight at the export run to their end (default: the run stops at the export time)");
  const std::initializer_list<Positional> positionals = {{"source", &source}, {"dir", &dir}};
  po::variables_map vm;
  if (std::optional<int> done = ParseCommandLine(
          "import", args, opts, positionals,
          "\nReads the JSON the AWS CLI printed for one quota-managed SageMaker Training job queue (scripts/aws-export\n"
          "QUEUE DIR runs the calls; files are recognised by content) and writes a scenario: the queue, its service\n"
          "environment, scheduling policy and quota shares as they are now, and every job as a SubmitServiceJob at its\n"
          "createdAt with its run time from its attempts (docs/aws-api-shapes.md, engine/io/aws_import.h). Exit 2 on a\n"
          "missing or malformed file (the message names the file and the JSON path).\n",
          vm)) {
    return *done;
  }
  if (source != "aws") return UsageError("import", source.empty() ? "missing source: quotasim import aws DIR" : "unknown source '" + source + "' (only aws)");
  if (dir.empty()) return UsageError("import", "missing DIR (the folder scripts/aws-export wrote)");
  if (out.empty()) return UsageError("import", "--out SCENARIO.json is required");
  if (out.size() < 5 || out.compare(out.size() - 5, 5, ".json") != 0) {
    return UsageError("import", "--out " + out + ": the scenario file name must end in .json");
  }
  AwsImportOptions o;
  o.queue = queue;
  o.horizon = vm.count("no-horizon") == 0;
  if (!export_time.empty()) {
    o.export_time_ms = ParseTime(export_time);
    if (!o.export_time_ms) {
      return UsageError("import", "--export-time " + export_time + ": expected epoch milliseconds or 2026-05-12T18:00:00Z");
    }
  }
  absl::StatusOr<AwsImport> imported = ImportAwsExport(dir, o);
  if (!imported.ok()) return ReportError(imported.status());
  const std::string observed = out.substr(0, out.size() - 5) + ".observed.csv";
  for (const auto& [path, text] : {std::pair{out, imported->scenario_json}, std::pair{observed, ObservedCsv(imported->observed)}}) {
    AtomicFile f(path);
    if (!f.ok()) {
      std::cerr << "quotasim: cannot write " << path << "\n";
      return kExitError;
    }
    f.stream() << text;
    if (absl::Status st = f.Commit(); !st.ok()) return ReportError(st);
  }
  std::cout << FormatImportReport(imported->report, out) << "  observed start and stop times: " << observed << "\n";
  return kExitOk;
}

}  // namespace qs
