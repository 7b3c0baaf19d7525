#include "engine/cli/command_line.h"

#include <iostream>

#include "engine/cli/commands.h"

namespace qs {

namespace po = boost::program_options;

std::optional<int> ParseCommandLine(std::string_view command, const std::vector<std::string>& args,
                                    const po::options_description& visible, const po::options_description& hidden,
                                    const po::positional_options_description& positional,
                                    std::string_view help_epilog, po::variables_map& vm) {
  po::options_description all;
  all.add(visible).add(hidden);
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return UsageError(command, e.what());
  }
  if (vm.count("help")) {
    std::cout << visible << help_epilog;
    return kExitOk;
  }
  return std::nullopt;
}

int ReportError(const absl::Status& s) {
  std::cerr << "quotasim: " << s.message() << "\n";
  return ExitCodeFor(s);
}

int UsageError(std::string_view command, std::string_view message) {
  std::cerr << "quotasim " << command << ": " << message << "\nTry 'quotasim " << command << " --help'.\n";
  return kExitUsage;
}

}  // namespace qs
