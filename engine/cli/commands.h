// File: engine/cli/commands.h
//
// The subcommands of the `quotasim` binary. Each takes the arguments after
// its name and returns the process exit code.
#ifndef QS_ENGINE_CLI_COMMANDS_H_
#define QS_ENGINE_CLI_COMMANDS_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace qs {

// Exit codes, one meaning each, for every subcommand:
//   0  done;
//   1  the run could not complete (stopped in a preemption cycle, invariant
//      violations, a file that cannot be read or written);
//   2  a usage error (unknown subcommand or option, a bad option value) or
//      an invalid input document (the message names the file and the JSON
//      path, line or block).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInvalidDocument = 2;

// The one mapping of an error to an exit code: an invalid document
// (InvalidArgumentError) 2, anything else 1.
inline int ExitCodeFor(const absl::Status& s) {
  return s.code() == absl::StatusCode::kInvalidArgument ? kExitInvalidDocument : kExitError;
}
// Prints "quotasim: <message>" on stderr; returns ExitCodeFor(s).
int ReportError(const absl::Status& s);
// Prints "quotasim <command>: <message>" and a pointer to --help on stderr;
// returns kExitUsage.
int UsageError(std::string_view command, std::string_view message);
// For an output FILE given as `option` (--events, --summary, ...): the
// usage error's text when the name ends in the extension of a compression
// quotasim does not write there (.zst, .bz2, .xz, .lz4, ...; `.gz` too
// unless `gzip`), so that such a file never silently holds plain text; ""
// for any other name. `plain` is the extension to suggest (".jsonl").
std::string UnwritableCompression(std::string_view option, std::string_view path, bool gzip,
                                  std::string_view plain);
// A usage error when two outputs, or an output and an input, are one file
// (after symlinks: "a" and "./a", a link and its file): the later rename
// would drop one output, or the run would overwrite its own input. "" when
// all differ. Standard output ("-"), empty paths and in-place targets
// (/dev/null, a FIFO: AtomicFile) are never a clash. Each entry is an
// option's name (or "SCENARIO") and its path.
std::string OutputClash(const std::vector<std::pair<std::string_view, std::string>>& outputs,
                        const std::vector<std::pair<std::string_view, std::string>>& inputs);

// "0.x.y (commit)": the version `quotasim --version` prints first, and the
// `run.quotasim` of a summary (quotasim_main.cc).
std::string ToolVersion();

int RunCommand(const std::vector<std::string>& args);       // run_command.cc
int ValidateCommand(const std::vector<std::string>& args);  // run_command.cc
int GenCommand(const std::vector<std::string>& args);       // gen_command.cc
int SweepCommand(const std::vector<std::string>& args);     // sweep_command.cc
int WhatIfCommand(const std::vector<std::string>& args);    // whatif_command.cc
int ImportCommand(const std::vector<std::string>& args);    // import_command.cc
int CalibrateCommand(const std::vector<std::string>& args); // calibrate_command.cc
int ExplainCommand(const std::vector<std::string>& args);   // explain_command.cc
int ReportCommand(const std::vector<std::string>& args);    // report_command.cc
int ReplayCommand(const std::vector<std::string>& args);    // replay_command.cc
int CompareCommand(const std::vector<std::string>& args);   // compare_command.cc
int MergeCommand(const std::vector<std::string>& args);     // merge_command.cc

}  // namespace qs

#endif  // QS_ENGINE_CLI_COMMANDS_H_
