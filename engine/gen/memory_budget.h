// File: engine/gen/memory_budget.h
//
// A refusal, before the work starts, of runs that cannot fit in memory.
// `quotasim gen` and `quotasim run` hold the whole scenario as request
// objects; 1e7 generated jobs took 6.2 GB to generate and 6.7 GB to run
// (about 620 and 670 bytes per event). A run larger than the machine's
// memory would otherwise end in the kernel's OOM killer, with no message,
// after minutes of work: the issue allows --jobs up to 1e8. The check is a
// lower bound (kMinBytesPerEvent is below both figures), so it refuses only
// what certainly cannot fit.
#ifndef QUOTASIM_ENGINE_GEN_MEMORY_BUDGET_H_
#define QUOTASIM_ENGINE_GEN_MEMORY_BUDGET_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace qs::gen {

inline constexpr uint64_t kMinBytesPerEvent = 500;

// Physical memory of this machine (sysconf), or 0 when unknown (the check
// is then skipped).
uint64_t PhysicalMemoryBytes();

// OK when `events` scenario events fit in `memory_bytes` at
// kMinBytesPerEvent (or memory_bytes is 0); otherwise an error that names
// `what` (a file or "quotasim gen") and both sizes.
absl::Status CheckMemoryBudget(uint64_t events, uint64_t memory_bytes, std::string_view what);

}  // namespace qs::gen

#endif  // QUOTASIM_ENGINE_GEN_MEMORY_BUDGET_H_
