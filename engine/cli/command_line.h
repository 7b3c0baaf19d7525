// File: engine/cli/command_line.h
//
// The one command-line convention of every `quotasim` subcommand (Boost.
// Program_options): visible options plus hidden positional arguments; a
// parse error prints one line and a pointer to --help and exits 2; `--help` prints the
// usage and an epilog and exits 0.
#ifndef QS_ENGINE_CLI_COMMAND_LINE_H_
#define QS_ENGINE_CLI_COMMAND_LINE_H_

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "boost/program_options.hpp"

namespace qs {

// Parses `args` into `vm`. Returns the exit code when the command is done
// (error or help), nullopt when it should go on.
std::optional<int> ParseCommandLine(std::string_view command, const std::vector<std::string>& args,
                                    const boost::program_options::options_description& visible,
                                    const boost::program_options::options_description& hidden,
                                    const boost::program_options::positional_options_description& positional,
                                    std::string_view help_epilog, boost::program_options::variables_map& vm);

// A positional argument, in the order given: one value (`one`) or every
// value left (`rest`, last).
struct Positional {
  const char* name;
  std::string* one = nullptr;
  std::vector<std::string>* rest = nullptr;
};
// The same, the hidden options and their positions made from `positionals`:
//   ParseCommandLine("run", args, opts, {{"scenario", &path}}, epilog, vm)
//   ParseCommandLine("sweep", args, opts, {{"scenario", nullptr, &paths}}, epilog, vm)
std::optional<int> ParseCommandLine(std::string_view command, const std::vector<std::string>& args,
                                    const boost::program_options::options_description& visible,
                                    std::initializer_list<Positional> positionals, std::string_view help_epilog,
                                    boost::program_options::variables_map& vm);

}  // namespace qs

#endif  // QS_ENGINE_CLI_COMMAND_LINE_H_
