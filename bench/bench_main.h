// File: bench/bench_main.h
//
// The shared main of quotasim's benchmark binaries: Google Benchmark's usual
// flags plus --qs_smoke, which CTest passes so that each suite shrinks its
// sizes and finishes in seconds (label bench-smoke).
#ifndef QS_BENCH_BENCH_MAIN_H_
#define QS_BENCH_BENCH_MAIN_H_

#include <cstring>
#include <vector>

#include "benchmark/benchmark.h"

namespace qs::bench {

// True when the binary runs as a CTest smoke test.
inline bool& Smoke() {
  static bool smoke = false;
  return smoke;
}

inline int BenchmarkMain(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--qs_smoke") == 0) {
      Smoke() = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace qs::bench

#endif  // QS_BENCH_BENCH_MAIN_H_
