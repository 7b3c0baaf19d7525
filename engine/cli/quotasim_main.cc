// quotasim: command-line front end. Each subcommand lives in its own file
// (engine/cli/*_command.cc) and is listed in kCommands below.
//
// Exit codes of every subcommand (engine/cli/commands.h): 0 done; 1 the run
// could not complete (stopped, invariant violations, I/O errors); 2 a usage
// error or an invalid input document (the message names the file and the
// JSON path or line).
#include <cstring>
#include <iterator>
#include <iostream>
#include <string>
#include <vector>

#include "engine/cli/commands.h"
#include "qs_git_commit.h"  // QS_GIT_SHA, generated at build time

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>&);
};

}  // namespace

std::string qs::ToolVersion() { return std::string(QS_VERSION) + " (" + QS_GIT_SHA + ")"; }

namespace {

constexpr Command kCommands[] = {
    {"run", "simulate a scenario (.json) and write its event log and summary", qs::RunCommand},
    {"validate", "check a scenario document only", qs::ValidateCommand},
    {"gen", "generate a seeded synthetic workload (.json or .qsb)", qs::GenCommand},
    {"sweep", "run many (scenario x setting) variants in parallel", qs::SweepCommand},
    {"whatif", "run a scenario as written and with --set changes; per-share differences", qs::WhatIfCommand},
    {"import", "turn an AWS CLI export of a queue into a scenario (import aws DIR --out X.json)", qs::ImportCommand},
    {"calibrate", "compare an imported queue's simulated starts with the observed; search latency knobs", qs::CalibrateCommand},
    {"explain", "a job's story, or a share's waits, from an event log", qs::ExplainCommand},
    {"report", "one self-contained HTML page from a run, what-if, sweep or compare output", qs::ReportCommand},
    {"replay", "replay a real cluster trace under one policy", qs::ReplayCommand},
    {"compare", "replay a trace under many policies; comparison report", qs::CompareCommand},
    {"merge", "join the shard outputs of compare --shard K/N into one report", qs::MergeCommand},
};

void PrintVersion() {
  std::cout << "quotasim " << qs::ToolVersion() << "\n"
            << "built " << QS_BUILD_TYPE << " with " << QS_COMPILER << "\n";
}

void PrintUsage(std::ostream& os) {
  os << "quotasim: simulate AWS Batch quota-share scheduling\n\nUsage: quotasim SUBCOMMAND [options]\n\n";
  for (const Command& c : kCommands) os << "  " << c.name << std::string(12 - std::strlen(c.name), ' ') << c.summary << "\n";
  os << "\n  quotasim SUBCOMMAND --help   options of a subcommand\n"
        "  quotasim --version           version and build\n"
        "\nExit status: 0 done; 1 the run could not complete (stopped, I/O error);\n"
        "2 a usage error or an invalid scenario document.\n"
        "\nScenario format and event log: docs/semantics.md and the scenario-format spec.\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << "Usage: quotasim SUBCOMMAND [options]; subcommands: ";
    for (const Command& c : kCommands) std::cerr << c.name << (&c == &kCommands[std::size(kCommands) - 1] ? "" : ", ");
    std::cerr << ".\nTry 'quotasim --help'.\n";
    return qs::kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    PrintUsage(std::cout);
    return qs::kExitOk;
  }
  if (args[0] == "--version" || args[0] == "-V") {
    PrintVersion();
    return qs::kExitOk;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  for (const Command& c : kCommands) {
    if (cmd == c.name) return c.run(args);
  }
  std::cerr << "quotasim: unknown subcommand '" << cmd << "'\nTry 'quotasim --help'.\n";
  return qs::kExitUsage;
}
