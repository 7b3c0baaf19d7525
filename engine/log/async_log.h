// File: engine/log/async_log.h
//
// Event-log formatting and writing off the engine thread (issue #3).
//
//  * SpscRing<T>: a bounded, lock-free single-producer single-consumer ring
//    (two atomic indices, acquire/release; no locks, no CAS).
//  * AsyncLog: a LogSink for the engine thread that moves the work done per
//    record -- formatting and writing the JSON Lines log, building the run
//    summary, or both -- to a second thread. Each record is copied into a
//    compact binary encoding (a few memcpys) in a chunk; full chunks travel
//    through one SpscRing to the consumer thread, which decodes them back
//    into records, runs the one JSON Lines formatter (JsonlWriter::AppendJob
//    /...) and writes to the stream, and feeds the SummaryBuilder; emptied
//    chunks come back through a second SpscRing for reuse. The output bytes
//    are exactly JsonlWriter's and the summary exactly a SummaryBuilder's fed
//    on the engine thread: same formatter and builder, one consumer, records
//    in order (tests: async_log_test).
//
// With no log (`out` null) a job record carries only what the summary reads
// (SummaryBuilder::OnJob: no status reason, lender names or preempted
// attempts; the job's name only when it has no slot), so the engine thread
// copies only those.
//
// Snapshot records (GetJobQueueSnapshot, rare and nested) are formatted on
// the engine thread and passed through as finished lines; the summary does
// not read them. Capacity and end records reach the summary only.
//
// Waiting: a producer facing a full ring, or the writer facing an empty one,
// blocks on std::atomic::wait (futex), so neither side spins a core.
//
// Thread-safety: one producer thread calls the LogSink methods and Flush();
// the writer thread is internal. TSan stress tests: async_log_test under the
// `tsan` preset.
#ifndef QS_ENGINE_LOG_ASYNC_LOG_H_
#define QS_ENGINE_LOG_ASYNC_LOG_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "engine/log/event_log.h"
#include "engine/log/summary.h"

namespace qs {

// Bounded single-producer single-consumer queue. Capacity is rounded up to a
// power of two. TryPush only from the producer thread, TryPop only from the
// consumer thread.
template <typename T>
class SpscRing {
 public:
  explicit SpscRing(size_t capacity) {
    size_t n = 1;
    while (n < capacity) n <<= 1;
    slots_.resize(n);
    mask_ = n - 1;
  }
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  size_t capacity() const { return slots_.size(); }

  bool TryPush(T value) {
    const size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - head_.load(std::memory_order_acquire) == slots_.size()) return false;
    slots_[tail & mask_] = std::move(value);
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }
  bool TryPop(T& out) {
    const size_t head = head_.load(std::memory_order_relaxed);
    if (tail_.load(std::memory_order_acquire) == head) return false;
    out = std::move(slots_[head & mask_]);
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

 private:
  std::vector<T> slots_;
  size_t mask_ = 0;
  alignas(64) std::atomic<size_t> head_{0};  // next slot to pop; written by the consumer
  alignas(64) std::atomic<size_t> tail_{0};  // next slot to push; written by the producer
};

class AsyncLog : public LogSink {
 public:
  // The JSON Lines log goes to `out` and the records to `summary`; either
  // may be null. Both must outlive the AsyncLog, and `summary` must not be
  // read before Flush() (or destruction) returns. chunk_bytes: encoded bytes
  // per hand-over; ring_chunks: chunks in flight at most (memory bound:
  // about chunk_bytes x (ring_chunks + 2)).
  explicit AsyncLog(std::ostream* out, SummaryBuilder* summary = nullptr, size_t chunk_bytes = 1 << 18,
                    size_t ring_chunks = 8);
  ~AsyncLog() override;
  AsyncLog(const AsyncLog&) = delete;
  AsyncLog& operator=(const AsyncLog&) = delete;

  void OnJob(const JobRecord& r) override;
  void OnRejected(const RejectedRecord& r) override;
  void OnSnapshot(const SnapshotRecord& r) override;
  void OnCapacity(const CapacityRecord& r) override;
  void OnEnd(SimTime end_time) override;

  // Hands over the current chunk and waits until the consumer thread has
  // written and summarised everything so far and flushed the stream.
  void Flush();

  // Chunks handed to the writer thread so far (tests: ring wrap-around).
  int64_t chunks_submitted() const { return submitted_.load(std::memory_order_relaxed); }

 private:
  using Chunk = std::unique_ptr<std::string>;
  void MaybeSubmit();
  void Submit();
  void WriterLoop();

  void Decode(const std::string& chunk, std::string& text);

  std::ostream* out_;
  SummaryBuilder* summary_;
  const size_t chunk_bytes_;
  Chunk current_;
  SpscRing<Chunk> full_;   // engine thread -> writer thread
  SpscRing<Chunk> empty_;  // writer thread -> engine thread (reuse)
  size_t allocated_ = 0;  // chunks created so far (engine thread only), <= full_.capacity()
  // Counters the two sides wait on (std::atomic::wait / notify_one).
  std::atomic<int64_t> signal_{0};     // bumped after every push, flush request and stop
  std::atomic<int64_t> submitted_{0};  // chunks pushed into full_
  std::atomic<int64_t> written_{0};    // chunks written and returned to empty_
  std::atomic<int64_t> flush_requests_{0};
  std::atomic<int64_t> flushes_done_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last member: started after every other member exists
};

}  // namespace qs

#endif  // QS_ENGINE_LOG_ASYNC_LOG_H_
