// quotasim: command-line front end. Each subcommand lives in its own file
// (engine/cli/*_command.cc) and is listed in kCommands below.
//
// Exit codes of every subcommand: 0 success; 2 an input document is invalid
// (the message names the file and the JSON path or line); 1 any other error.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "engine/cli/commands.h"
#include "engine/util/malloc_arena.h"

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>&);
};

constexpr Command kCommands[] = {
    {"run", "simulate a scenario (.json) and write its event log and summary", qs::RunCommand},
    {"validate", "check a scenario document only", qs::ValidateCommand},
    {"gen", "generate a seeded synthetic workload (.json or .qsb)", qs::GenCommand},
    {"sweep", "run many (scenario x knob) variants in parallel", qs::SweepCommand},
    {"replay", "replay a real cluster trace under one policy", qs::ReplayCommand},
    {"compare", "replay a trace under many policies; comparison report", qs::CompareCommand},
    {"merge", "join the shard outputs of compare --shard K/N into one report", qs::MergeCommand},
};

void PrintUsage(std::ostream& os) {
  os << "quotasim: simulate AWS Batch quota-share scheduling\n\nUsage: quotasim SUBCOMMAND [options]\n\n";
  for (const Command& c : kCommands) os << "  " << c.name << std::string(12 - std::strlen(c.name), ' ') << c.summary << "\n";
  os << "\n  quotasim SUBCOMMAND --help   options of a subcommand\n"
        "\nScenario format and event log: docs/semantics.md and the scenario-format spec.\n";
}

}  // namespace

int main(int argc, char** argv) {
  qs::UseOneMallocArena();  // before any thread starts (engine/util/malloc_arena.h)
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    PrintUsage(args.empty() ? std::cerr : std::cout);
    return args.empty() ? qs::kExitError : qs::kExitOk;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  for (const Command& c : kCommands) {
    if (cmd == c.name) return c.run(args);
  }
  std::cerr << "quotasim: unknown subcommand '" << cmd << "'\n";
  PrintUsage(std::cerr);
  return qs::kExitError;
}
