// File: engine/gen/generator_setup.h
//
// What the generator (generator.h) draws with and draws first, internal to
// engine/gen: the instance types and counts, Rng (our own distributions on
// a seeded std::mt19937_64) and Setup, everything drawn before the jobs
// from stream 0 of the seed: the head with its quotaShares entries, the
// limits, the (share, type) pairs the jobs are drawn from and the arrival
// rate. MakeSetup (generator_setup.cc) fills a Setup; generator.cc draws
// the jobs and their events from it.
//
// Rng is defined in the class so that its draws stay inlinable in the
// per-job loops of generator.cc.
//
// Thread-compatible: an Rng or a Setup is used by one thread at a time.
#ifndef QS_ENGINE_GEN_GENERATOR_SETUP_H_
#define QS_ENGINE_GEN_GENERATOR_SETUP_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/gen/generator.h"
#include "engine/model/scenario.h"

namespace qs::gen::generator_internal {

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kDay = 86400.0;
inline const char* const kUnitNames[] = {"ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g5.48xlarge", "ml.g6.48xlarge",
                                         "ml.g5.12xlarge"};
inline constexpr int64_t kInstanceCounts[] = {1, 2, 4, 8, 16};
inline constexpr int kInstanceWeights[] = {60, 15, 12, 9, 4};  // percent

// Our own distributions on top of the raw 64-bit engine, so results do not
// depend on the standard library's implementation.
class Rng {
 public:
  Rng(uint64_t seed, uint64_t stream) : g_(seed * 0x9E3779B97F4A7C15ULL ^ (stream + 1) * 0xBF58476D1CE4E5B9ULL) {}
  double Uniform() { return static_cast<double>(g_() >> 11) * (1.0 / 9007199254740992.0); }  // [0,1)
  double OpenUniform() { return (static_cast<double>(g_() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
  void Skip(int n) {  // n draws, their values unused
    for (int i = 0; i < n; ++i) g_();
  }
  int64_t Below(int64_t n) { return static_cast<int64_t>(g_() % static_cast<uint64_t>(n)); }
  double Exponential() { return -std::log(OpenUniform()); }
  double Normal() {  // Box-Muller, one value per call
    const double radius = OpenUniform();
    const double angle = Uniform();
    return NormalOf(radius, angle);
  }
  static double NormalOf(double radius, double angle) {
    return std::sqrt(-2.0 * std::log(radius)) * std::cos(2.0 * kPi * angle);
  }
  // Index drawn with probability proportional to weights.
  int Weighted(const std::vector<double>& cumulative) {
    const double x = Uniform() * cumulative.back();
    return static_cast<int>(std::upper_bound(cumulative.begin(), cumulative.end(), x) - cumulative.begin());
  }

 private:
  std::mt19937_64 g_;
};

// The (share, type) pairs a job is drawn from, with their jobs per second
// and the cap on their instance counts (a quarter of the share's limit).
struct Pair {
  int share, unit;
  int64_t cap;
};

// Everything drawn before the jobs (stream 0 of the seed): the head (its
// events are the quotaShares entries), the limits and the arrival process.
// `cfg` goes on to draw the limit changes once the span is known.
struct Setup {
  explicit Setup(uint64_t seed) : cfg(seed, 0) {}
  Scenario head;
  std::vector<std::string> share_names;
  std::vector<std::vector<int64_t>> limit;     // [share][unit]
  std::vector<std::vector<int>> share_units;  // [share]
  std::vector<Pair> pairs;
  std::vector<double> pair_cum, count_cum;
  double rate = 0;  // jobs per second
  double sigma = 1.6;
  Rng cfg;
};

// Draws the Setup of `o` (a fresh Setup(o.seed)) from stream 0 of the seed.
void MakeSetup(const GenOptions& o, Setup& setup);

}  // namespace qs::gen::generator_internal

#endif  // QS_ENGINE_GEN_GENERATOR_SETUP_H_
