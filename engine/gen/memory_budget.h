// File: engine/gen/memory_budget.h
//
// A refusal, before the work starts, of runs that cannot fit in memory.
// `quotasim gen --out X.json`, and `quotasim run` of a .json scenario or on
// the reference engine, hold the whole scenario as request objects: 1e7
// generated jobs took 6.7 GB to run and 6.2 GB to generate that way (about
// 670 and 620 bytes per event); `gen --out X.qsb` draws and encodes window
// by window (about 20 MB at any size: nothing to check), and `run X.qsb` on the fast
// engine streams the blocks and keeps per job only the slot of the name's
// rank, the summary's wait and, for names gen did not make, the name and its
// rank (1e7 generated jobs in about 0.17-0.18 GB: job records are held only for
// the jobs in flight, generated names are computed). A run
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
// A JSON scenario is read whole, then parsed into a document at least as
// large as its text: a bound per byte of the file.
inline constexpr uint64_t kMinJsonBytesPerFileByte = 2;
// `quotasim run X.qsb` streams the events (QsbFileStream) and keeps per job
// the job slot of its name's rank (4 bytes) and the summary's wait (8
// bytes); names gen did not make add the name and its rank by ordinal:
// a bound per job submission. (The fast engine's 112-byte job records are
// held for jobs in flight only; generated names are not stored.)
inline constexpr uint64_t kMinStreamRunBytesPerJob = 12;

// Physical memory of this machine (sysconf), or 0 when unknown (the check
// is then skipped).
uint64_t PhysicalMemoryBytes();

// OK when `events` scenario events fit in `memory_bytes` at
// bytes_per_event (or memory_bytes is 0); otherwise an error that names
// `what` (a file or "quotasim gen") and both sizes. `noun` names what is
// counted.
absl::Status CheckMemoryBudget(uint64_t events, uint64_t memory_bytes, std::string_view what,
                               uint64_t bytes_per_event = kMinBytesPerEvent,
                               std::string_view noun = "scenario events");

}  // namespace qs::gen

#endif  // QUOTASIM_ENGINE_GEN_MEMORY_BUDGET_H_
