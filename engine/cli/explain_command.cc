// `quotasim explain LOG JOB` / `quotasim explain LOG --share S`: a job's
// story or a share's waits from an event log (engine/log/explain.h). LOG is
// the JSON Lines of `run --events` or `whatif --events` (gzip too).
#include <iostream>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "boost/program_options.hpp"
#include "engine/cli/command_line.h"
#include "engine/cli/commands.h"
#include "engine/log/explain.h"
#include "engine/util/gzip_istream.h"

namespace po = boost::program_options;

namespace qs {

int ExplainCommand(const std::vector<std::string>& args) {
  po::options_description opts("quotasim explain LOG JOB | quotasim explain LOG --share SHARE");
  std::string log_path, job, share;
  int top = 10;
  opts.add_options()("help,h", "show this help")("share", po::value<std::string>(&share),
                                                   "the share's waits by statusReason and its longest waits")(
      "top", po::value<int>(&top)->default_value(10), "how many of the longest waits --share lists");
  const std::initializer_list<Positional> positionals = {{"log", &log_path}, {"job", &job}};
  po::variables_map vm;
  if (std::optional<int> done = ParseCommandLine(
          "explain", args, opts, positionals,
          "\nJOB: every line of the job with its time, status and reason, what each dispatch took (own and\n"
          "borrowed instances, by lender), each preemption (cross-share or in-share, for whom), the preemptions\n"
          "made for it, and its time RUNNABLE by statusReason and time dispatched. --share: the share's time\n"
          "RUNNABLE by statusReason and its longest waits. Exit 2 when the log is malformed or has no such job.\n",
          vm)) {
    return *done;
  }
  if (log_path.empty()) return UsageError("explain", "missing LOG (the --events file of run or whatif)");
  if (job.empty() == share.empty()) return UsageError("explain", "give either a JOB or --share SHARE");
  if (top < 0) return UsageError("explain", "--top must be >= 0");
  gzFile f = gzopen(log_path.c_str(), "rb");
  if (f == nullptr) return ReportError(absl::InvalidArgumentError(log_path + ": cannot be opened"));
  GzStreamBuf buf(f);
  std::istream in(&buf);
  absl::StatusOr<std::vector<LogJobLine>> lines = ReadJobLines(in, log_path);
  if (!buf.error().empty()) return ReportError(absl::DataLossError(log_path + ": gzip stream error: " + buf.error()));
  if (!lines.ok()) return ReportError(lines.status());
  absl::StatusOr<std::string> text = job.empty() ? ExplainShare(*lines, share, static_cast<size_t>(top))
                                                 : ExplainJob(*lines, job);
  if (!text.ok()) return ReportError(absl::InvalidArgumentError(log_path + ": " + std::string(text.status().message())));
  std::cout << *text;
  return kExitOk;
}

}  // namespace qs
