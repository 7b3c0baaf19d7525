// File: engine/model/time.h
//
// Simulated time. quotasim never uses floating point for time: a SimTime is a
// signed count of milliseconds since the start of the scenario (time 0).
// Scenario files give seconds (decimals allowed, millisecond resolution); the
// event log prints seconds again with FormatSeconds().
//
// Thread-safety: plain values and pure functions.
#ifndef QS_ENGINE_MODEL_TIME_H_
#define QS_ENGINE_MODEL_TIME_H_

#include <cstdint>
#include <string>

namespace qs {

using SimTime = int64_t;  // milliseconds

inline constexpr SimTime kMillisPerSecond = 1000;
// Largest time or duration a scenario may use: 10^12 seconds (about 31,700
// years). Anything larger is rejected as absurd by the parser, which keeps all
// sums of times far from int64 overflow.
inline constexpr SimTime kMaxSimTime = SimTime{1'000'000'000'000} * kMillisPerSecond;

// Prints milliseconds as seconds: 0 -> "0.0", 20000 -> "20.0", 1500 -> "1.5",
// 1 -> "0.001", -250 -> "-0.25". Always at least one decimal digit, trailing
// zeros of the fraction dropped. Exact (no floating point).
std::string FormatSeconds(SimTime ms);
void AppendSeconds(std::string& out, SimTime ms);

}  // namespace qs

#endif  // QS_ENGINE_MODEL_TIME_H_
