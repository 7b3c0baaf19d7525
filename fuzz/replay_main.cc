// Replay driver linked instead of libFuzzer when QS_FUZZ_LINKMAIN=ON (every
// ordinary build, g++ or clang): runs LLVMFuzzerTestOneInput on each file
// given, and on every file under each folder given (recursively, in sorted
// order, so runs are reproducible). Arguments starting with '-' are ignored,
// so libFuzzer-style command lines also work. Exit status 0 when every input
// ran; a failing check aborts, as under libFuzzer. With QS_REPLAY_TIMES=1
// each input's line also gives its run time in microseconds (find the inputs
// that hold a fuzzer's exec/s down).
//
//   scenario_invariants_fuzzer fuzz/corpus/scenario_invariants_fuzzer fuzz/regressions/scenario_invariants_fuzzer
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

bool RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // A fresh heap copy of exactly `size` bytes, so ASan sees reads past the end.
  std::vector<uint8_t> buf(bytes.begin(), bytes.end());
  uint8_t* data = buf.empty() ? nullptr : buf.data();
  LLVMFuzzerTestOneInput(data, buf.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::filesystem::path> files;
  int missing = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!arg.empty() && arg[0] == '-') continue;
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      std::vector<std::filesystem::path> found;
      for (const auto& e : std::filesystem::recursive_directory_iterator(arg)) {
        if (e.is_regular_file() && e.path().filename().string()[0] != '.') found.push_back(e.path());
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (std::filesystem::is_regular_file(arg, ec)) {
      files.emplace_back(arg);
    } else {
      std::fprintf(stderr, "replay: no such file or folder: %s\n", arg.c_str());
      ++missing;
    }
  }
  const bool times = std::getenv("QS_REPLAY_TIMES") != nullptr;
  int failed = 0;
  for (const auto& f : files) {
    if (!times) std::fprintf(stderr, "replay: %s\n", f.c_str());
    const auto start = std::chrono::steady_clock::now();
    if (!RunFile(f)) ++failed;
    if (times) {
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
      std::fprintf(stderr, "replay: %lld us %s\n", static_cast<long long>(us.count()), f.c_str());
    }
  }
  std::fprintf(stderr, "replay: %zu input(s) ran, %d unreadable, %d missing argument(s)\n", files.size(), failed,
               missing);
  return failed == 0 && missing == 0 ? 0 : 1;
}
