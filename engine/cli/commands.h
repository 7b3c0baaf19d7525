// File: engine/cli/commands.h
//
// The subcommands of the `quotasim` binary. Each takes the arguments after
// its name and returns the process exit code.
#ifndef QS_ENGINE_CLI_COMMANDS_H_
#define QS_ENGINE_CLI_COMMANDS_H_

#include <string>
#include <vector>

namespace qs {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitInvalidDocument = 2;

int RunCommand(const std::vector<std::string>& args);       // run_command.cc
int ValidateCommand(const std::vector<std::string>& args);  // run_command.cc
int GenCommand(const std::vector<std::string>& args);       // gen_command.cc
int SweepCommand(const std::vector<std::string>& args);     // sweep_command.cc
int ReplayCommand(const std::vector<std::string>& args);    // replay_command.cc
int CompareCommand(const std::vector<std::string>& args);   // compare_command.cc
int MergeCommand(const std::vector<std::string>& args);     // merge_command.cc

}  // namespace qs

#endif  // QS_ENGINE_CLI_COMMANDS_H_
