// File: engine/gen/generator_setup.h
//
// What the generator (generator.h) draws with and draws first, internal to
// engine/gen: the instance types and counts, Rng (our own distributions on
// a seeded MT19937-64, Mt64) and Setup, everything drawn before the jobs
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

// MT19937-64, the same sequence as std::mt19937_64 from the same seed
// (GeneratorTest.Mt64IsStdMt19937_64 compares them), with each refill of
// 312 words tempered at once into a buffer: a draw is then a load, where
// libstdc++'s operator(), called out of line, tempered one word per call
// (a fifth of gen's time).
class Mt64 {
 public:
  explicit Mt64(uint64_t seed) {
    state_[0] = seed;
    for (size_t i = 1; i < kN; ++i) state_[i] = 6364136223846793005ULL * (state_[i - 1] ^ (state_[i - 1] >> 62)) + i;
  }
  uint64_t operator()() {
    if (next_ == kN) Refill();
    return out_[next_++];
  }

 private:
  static constexpr size_t kN = 312, kM = 156;
  static constexpr uint64_t kUpper = ~uint64_t{0} << 31, kLower = ~kUpper;
  // Branch-free: a branch on x's low bit, random by design, missed half the
  // time (and kept the loops scalar).
  static uint64_t Twist(uint64_t a, uint64_t b, uint64_t m) {
    const uint64_t x = (a & kUpper) | (b & kLower);
    return m ^ (x >> 1) ^ ((0 - (x & 1)) & 0xb5026f5aa96619e9ULL);
  }
  void Refill() {
    for (size_t i = 0; i < kN - kM; ++i) state_[i] = Twist(state_[i], state_[i + 1], state_[i + kM]);
    for (size_t i = kN - kM; i < kN - 1; ++i) state_[i] = Twist(state_[i], state_[i + 1], state_[i + kM - kN]);
    state_[kN - 1] = Twist(state_[kN - 1], state_[0], state_[kM - 1]);
    for (size_t i = 0; i < kN; ++i) {
      uint64_t x = state_[i];
      x ^= (x >> 29) & 0x5555555555555555ULL;
      x ^= (x << 17) & 0x71d67fffeda60000ULL;
      x ^= (x << 37) & 0xfff7eee000000000ULL;
      x ^= x >> 43;
      out_[i] = x;
    }
    next_ = 0;
  }
  uint64_t state_[kN];
  uint64_t out_[kN];
  size_t next_ = kN;
};

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
  Mt64 g_;
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
