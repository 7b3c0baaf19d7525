// File: engine/util/huge_pages.h
//
// HugePageAllocator: an allocator for the few arrays sized by the job count
// (the fast engine's job records, the name-rank table). A block of 2 MiB or
// more is mapped on a 2 MiB boundary and marked MADV_HUGEPAGE, so that the
// kernel (transparent huge pages in `madvise` mode, the Debian default) can
// back it with 2 MiB pages: one page fault per 2 MiB instead of per 4 KiB.
// In the VMs quotasim runs on, a first touch of a 4 KiB page costs 8-15 us
// of CPU, so at 1e7 jobs the job records alone (1.1 GB) cost seconds of
// faults. Smaller blocks come from operator new. Where the kernel refuses
// huge pages, the mapping still works with 4 KiB pages.
//
// Thread-safety: stateless; as thread-safe as mmap.
#ifndef QS_ENGINE_UTIL_HUGE_PAGES_H_
#define QS_ENGINE_UTIL_HUGE_PAGES_H_

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace qs {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// Maps `bytes` (rounded up to 2 MiB) on a 2 MiB boundary, advised for huge
// pages; nullptr if the mapping fails.
inline void* MapHugePages(size_t bytes) {
  const size_t len = (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  void* raw = mmap(nullptr, len + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + len + kHugePageBytes;
  if (end > aligned + len) munmap(reinterpret_cast<void*>(aligned + len), end - (aligned + len));
  void* p = reinterpret_cast<void*>(aligned);
  madvise(p, len, MADV_HUGEPAGE);
  return p;
}

inline void UnmapHugePages(void* p, size_t bytes) {
  munmap(p, (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1));
}

// Advises the whole 2 MiB pages inside [p, p + bytes) for transparent huge
// pages: for a big array that is already allocated (e.g. a std::vector's
// buffer after reserve()) and not yet touched. Memory from malloc may be
// advised like this; the advice ends with the mapping.
inline void AdviseHugePages(void* p, size_t bytes) {
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(uintptr_t{kHugePageBytes} - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// `enabled` false gives plain operator new for every block (to measure the
// difference, RunOptions::huge_pages).
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  explicit HugePageAllocator(bool on) : enabled(on) {}
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>& o) : enabled(o.enabled) {}  // NOLINT: allocator rebinding

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (!enabled || bytes < kHugePageBytes) return static_cast<T*>(::operator new(bytes));
    void* p = MapHugePages(bytes);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (!enabled || bytes < kHugePageBytes) {
      ::operator delete(p);
    } else {
      UnmapHugePages(p, bytes);
    }
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>& o) const { return enabled == o.enabled; }

  bool enabled = true;
};

}  // namespace qs

#endif  // QS_ENGINE_UTIL_HUGE_PAGES_H_
