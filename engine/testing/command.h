// File: engine/testing/command.h
//
// Test helpers for end-to-end tests of the `quotasim` binary: run a command
// line, capturing its exit code and its stdout and stderr together, and read
// a file whole.
#ifndef QS_ENGINE_TESTING_COMMAND_H_
#define QS_ENGINE_TESTING_COMMAND_H_

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace qs::testing {

struct CommandResult {
  int exit_code = -1;   // -1 when the command could not run or was killed
  std::string output;   // stdout and stderr
};

inline CommandResult RunCommandLine(const std::string& command) {
  const std::string cmd = command + " 2>&1";
  CommandResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string ReadWholeFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace qs::testing

#endif  // QS_ENGINE_TESTING_COMMAND_H_
