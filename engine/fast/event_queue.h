// File: engine/fast/event_queue.h
//
// The event core of the fast engine: internal events (a job becomes
// RUNNABLE, STARTING, RUNNING, an attempt or a drain ends, a time limit
// fires, a scheduling tick) ordered by (time, sequence number assigned at
// insertion).
//
// Events due later wait in a 4-ary heap (EventHeap: half the levels of a
// binary one, the four children of a node in one 128-byte run of the
// array, the least of them found by a branch-free tournament: which child
// wins is data a branch predictor cannot learn); events due at the current
// instant
// (the zero latencies: RUNNABLE after a submit, STARTING, RUNNING) skip the
// heap and go to a FIFO. Every event pushed at `now` has a higher sequence
// number than every heap event due at `now`, and the run loop empties the
// FIFO before time moves on, so (time, sequence) order holds: the heap's
// events at t first (TakeHeapDueAt), then the FIFO's (TakeNow).
//
// Cancellation is lazy: an event carries the attempt or reason epoch it
// belongs to (`tag`), and the engine skips one whose job has moved on.
//
// Thread-compatible; header-only, since every event goes through it.
#ifndef QS_ENGINE_FAST_EVENT_QUEUE_H_
#define QS_ENGINE_FAST_EVENT_QUEUE_H_

#include <cstdint>
#include <vector>

#include "engine/model/time.h"

namespace qs::engine_internal {

enum class EventType : uint8_t {
  kBecomeRunnable,
  kStarting,
  kRunning,
  kAttemptEnd,
  kDrainEnd,
  kTimeLimit,
  kTick,
  kCapacityError,  // SageMaker could not provision the attempt (simulation.capacity)
};

struct Event {
  SimTime time;
  int64_t seq;
  EventType type;
  int32_t job;
  uint32_t tag;  // attempt or reason epoch the event belongs to
  int32_t aux;   // kAttemptEnd: 1 Batch timeout, 2 MaxRuntimeInSeconds; else 0
};

// A min-heap of events by (time, seq), four children per node, with
// std::priority_queue's interface. seq is unique, so the order is total and
// the events come out in the same order as from any other correct heap.
class EventHeap {
 public:
  bool empty() const { return v_.empty(); }
  size_t size() const { return v_.size(); }
  const Event& top() const { return v_.front(); }
  void push(const Event& ev) {
    size_t i = v_.size();
    v_.push_back(ev);
    while (i > 0) {
      const size_t parent = (i - 1) / 4;
      if (!Before(ev, v_[parent])) break;
      v_[i] = v_[parent];
      i = parent;
    }
    v_[i] = ev;
  }
  void pop() {
    const Event last = v_.back();
    v_.pop_back();
    const size_t n = v_.size();
    if (n == 0) return;
    size_t i = 0;
    while (true) {
      const size_t first = 4 * i + 1;
      if (first >= n) break;
      size_t best;
      if (first + 4 <= n) {
        // A full node: a tournament of three branch-free comparisons
        // (which child wins is data, not a predictable branch).
        const size_t a = Before(v_[first + 1], v_[first]) ? first + 1 : first;
        const size_t b = Before(v_[first + 3], v_[first + 2]) ? first + 3 : first + 2;
        best = Before(v_[b], v_[a]) ? b : a;
      } else {
        best = first;
        for (size_t c = first + 1; c < n; ++c) {
          if (Before(v_[c], v_[best])) best = c;
        }
      }
      if (!Before(v_[best], last)) break;
      v_[i] = v_[best];
      i = best;
    }
    v_[i] = last;
  }

 private:
  // (time, seq) order, computed without a branch.
  static bool Before(const Event& a, const Event& b) {
    return (a.time < b.time) | ((a.time == b.time) & (a.seq < b.seq));
  }
  std::vector<Event> v_;
};

class EventQueue {
 public:
  using Heap = EventHeap;

  // Schedules an event at `time` (>= now).
  void Push(SimTime now, SimTime time, EventType type, int32_t job, uint32_t tag, int32_t aux) {
    const Event ev{time, next_seq_++, type, job, tag, aux};
    if (time == now) {
      now_events_.push_back(ev);
    } else {
      heap_.push(ev);
    }
  }
  bool Empty() const { return now_events_.empty() && heap_.empty(); }
  // The earliest due time; `now` while events due now wait. Not when Empty().
  SimTime NextTime(SimTime now) const { return now_events_.empty() ? heap_.top().time : now; }

  // Calls apply(ev) for each heap event due at t, in sequence order, then for
  // each event due now (including those that apply() pushes at now), and
  // empties the FIFO.
  template <typename Apply>
  void DrainDueAt(SimTime t, Apply&& apply) {
    while (!heap_.empty() && heap_.top().time == t) {
      const Event ev = heap_.top();
      heap_.pop();
      apply(ev);
    }
    // Index, not iterator: applying an event may push more at t.
    for (size_t i = 0; i < now_events_.size(); ++i) {
      const Event ev = now_events_[i];
      apply(ev);
    }
    now_events_.clear();
  }
  // Whether events due at t remain (pushed by the pass that followed a drain).
  bool HasDueAt(SimTime t) const { return !now_events_.empty() || (!heap_.empty() && heap_.top().time == t); }

 private:
  friend class EngineBenchProbe;
  Heap heap_;
  std::vector<Event> now_events_;
  int64_t next_seq_ = 0;
};

}  // namespace qs::engine_internal

#endif  // QS_ENGINE_FAST_EVENT_QUEUE_H_
