// File: engine/gen/memory_budget.cc
#include "engine/gen/memory_budget.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace qs::gen {
namespace {

std::string GiB(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

}  // namespace

uint64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

absl::Status CheckMemoryBudget(uint64_t events, uint64_t memory_bytes, std::string_view what,
                               uint64_t bytes_per_event, std::string_view noun) {
  if (memory_bytes == 0) return absl::OkStatus();
  bytes_per_event = std::max<uint64_t>(1, bytes_per_event);
  const uint64_t need = events > std::numeric_limits<uint64_t>::max() / bytes_per_event
                            ? std::numeric_limits<uint64_t>::max()
                            : events * bytes_per_event;
  if (need <= memory_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      std::string(what), ": ", events, " ", std::string(noun), " need at least ", GiB(need), " of memory (",
      bytes_per_event, " bytes each), and this machine has ",
      GiB(memory_bytes), "; use fewer jobs or a larger machine"));
}

}  // namespace qs::gen
