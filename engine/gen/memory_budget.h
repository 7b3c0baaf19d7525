// File: engine/gen/memory_budget.h
//
// A refusal, before the work starts, of runs that cannot fit in memory.
// `quotasim run` and `quotasim gen --out X.json` hold the whole scenario as
// request objects: 1e7 generated jobs took 6.7 GB to run and 6.2 GB to
// generate that way (about 670 and 620 bytes per event); `gen --out X.qsb`
// holds the drawn jobs and encoded blocks (1.8 GB, about 180 bytes). A run
// larger than the machine's memory would otherwise end in the kernel's OOM
// killer, with no message, after minutes of work: --jobs goes up to 1e8.
// The constants are lower bounds under those figures, so the check refuses
// only what certainly cannot fit.
#ifndef QUOTASIM_ENGINE_GEN_MEMORY_BUDGET_H_
#define QUOTASIM_ENGINE_GEN_MEMORY_BUDGET_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace qs::gen {

inline constexpr uint64_t kMinBytesPerEvent = 500;
// `quotasim gen --out X.qsb` holds the drawn jobs and the encoded blocks,
// not the request objects (GenerateQsb).
inline constexpr uint64_t kMinGenQsbBytesPerEvent = 100;

// Physical memory of this machine (sysconf), or 0 when unknown (the check
// is then skipped).
uint64_t PhysicalMemoryBytes();

// OK when `events` scenario events fit in `memory_bytes` at
// bytes_per_event (or memory_bytes is 0); otherwise an error that names
// `what` (a file or "quotasim gen") and both sizes.
absl::Status CheckMemoryBudget(uint64_t events, uint64_t memory_bytes, std::string_view what,
                               uint64_t bytes_per_event = kMinBytesPerEvent);

}  // namespace qs::gen

#endif  // QUOTASIM_ENGINE_GEN_MEMORY_BUDGET_H_
