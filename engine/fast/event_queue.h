// File: engine/fast/event_queue.h
//
// The event core of the fast engine: internal events (a job becomes
// RUNNABLE, STARTING, RUNNING, an attempt or a drain ends, a time limit
// fires, a scheduling tick) ordered by (time, sequence number assigned at
// insertion).
//
// Events due later wait in a radix heap (RadixEventHeap, below: a push is
// an append to a bucket chosen by the bits the event's time shares with the
// time last taken); events due at the current instant (the zero latencies:
// RUNNABLE after a submit, STARTING, RUNNING) skip it and go to a FIFO.
// Every event pushed at `now` has a higher sequence number than every heap
// event due at `now`, and the run loop empties the FIFO before time moves
// on, so (time, sequence) order holds: the heap's events at t first, in
// sequence order, then the FIFO's.
//
// Cancellation is lazy: an event carries the attempt or reason epoch it
// belongs to (`tag`), and the engine skips one whose job has moved on.
//
// Thread-compatible; header-only, since every event goes through it.
#ifndef QS_ENGINE_FAST_EVENT_QUEUE_H_
#define QS_ENGINE_FAST_EVENT_QUEUE_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
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

// A monotone priority queue of events (a radix heap: Ahuja, Mehlhorn,
// Orlin and Tarjan): every pushed time must be at least the time last taken
// (TakeMin), which holds in the engine, where nothing is scheduled before now.
// Bucket 0 holds events at `last_` (the time last taken), bucket b > 0 those
// whose time first differs from last_ at bit b - 1 (counting from the top),
// so a push is an append, and taking the next time moves only the lowest
// non-empty bucket's events to lower buckets (an event moves a few times in
// its life, at most 64), where a 4-ary heap compared about five levels
// of children per pop (5% of the 1e7-job steady run's wall time, measured
// alternating). The least time is cached between takes. Events at one time
// come out in sequence order, which is unique: the order is total.
class RadixEventHeap {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  void push(const Event& ev) {
    assert(ev.time >= last_ && "a radix heap takes no event before the time last taken");
    const int b = Bucket(ev.time);
    buckets_[b].push_back(ev);
    if (b != 0) nonempty_ |= uint64_t{1} << (b - 1);
    if (size_++ == 0) {
      min_ = ev.time;
      min_known_ = true;
    } else if (min_known_ && ev.time < min_) {
      min_ = ev.time;
    }
  }
  // The least time. Not when empty().
  SimTime MinTime() const {
    if (!min_known_) {
      const std::vector<Event>& low =
          buckets_[0].empty() ? buckets_[static_cast<size_t>(std::countr_zero(nonempty_) + 1)] : buckets_[0];
      SimTime m = low.front().time;
      for (const Event& ev : low) m = ev.time < m ? ev.time : m;
      min_ = m;
      min_known_ = true;
    }
    return min_;
  }
  // Removes the events at MinTime() (not when empty()) and calls
  // take(ev) for each in sequence order; take may push events later than it.
  //
  // Every bucket holds its events in sequence order: a push appends the
  // highest sequence number yet, and a bucket receives moved events only
  // while it is empty (they come from the lowest non-empty bucket, in its
  // order, into lower ones). So the events at MinTime() come out of bucket
  // 0 in sequence order as they lie. The events moved to buckets above 0
  // are the lowest left after the take: their least time is the next one.
  template <typename Take>
  void TakeMin(Take&& take) {
    const SimTime t = MinTime();
    bool next_known = false;
    SimTime next = 0;
    if (buckets_[0].empty() || last_ != t) {
      const int b = std::countr_zero(nonempty_) + 1;
      std::vector<Event>& from = buckets_[static_cast<size_t>(b)];
      last_ = t;
      nonempty_ &= ~(uint64_t{1} << (b - 1));
      for (const Event& ev : from) {
        const int to = Bucket(ev.time);
        buckets_[static_cast<size_t>(to)].push_back(ev);
        if (to != 0) {
          nonempty_ |= uint64_t{1} << (to - 1);
          next = !next_known || ev.time < next ? ev.time : next;
          next_known = true;
        }
      }
      from.clear();
    }
    taking_.swap(buckets_[0]);
    assert(std::is_sorted(taking_.begin(), taking_.end(), [](const Event& x, const Event& y) { return x.seq < y.seq; }));
    size_ -= taking_.size();
    min_known_ = next_known;
    min_ = next;
    for (const Event& ev : taking_) take(ev);
    taking_.clear();
  }

 private:
  int Bucket(SimTime time) const {
    const uint64_t x = static_cast<uint64_t>(time) ^ static_cast<uint64_t>(last_);
    return x == 0 ? 0 : 64 - std::countl_zero(x);
  }
  std::array<std::vector<Event>, 65> buckets_;
  std::vector<Event> taking_;  // the events TakeMin hands out
  uint64_t nonempty_ = 0;      // bit b - 1: bucket b > 0 holds events
  size_t size_ = 0;
  SimTime last_ = 0;
  mutable SimTime min_ = 0;
  mutable bool min_known_ = true;
};

class EventQueue {
 public:
  using Heap = RadixEventHeap;

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
  SimTime NextTime(SimTime now) const { return now_events_.empty() ? heap_.MinTime() : now; }

  // Calls apply(ev) for each heap event due at t, in sequence order, then for
  // each event due now (including those that apply() pushes at now), and
  // empties the FIFO.
  template <typename Apply>
  void DrainDueAt(SimTime t, Apply&& apply) {
    if (!heap_.empty() && heap_.MinTime() == t) heap_.TakeMin(apply);
    // Index, not iterator: applying an event may push more at t.
    for (size_t i = 0; i < now_events_.size(); ++i) {
      const Event ev = now_events_[i];
      apply(ev);
    }
    now_events_.clear();
  }
  // Whether events due at t remain (pushed by the pass that followed a drain).
  bool HasDueAt(SimTime t) const { return !now_events_.empty() || (!heap_.empty() && heap_.MinTime() == t); }

 private:
  friend class EngineBenchProbe;
  RadixEventHeap heap_;
  std::vector<Event> now_events_;
  int64_t next_seq_ = 0;
};

}  // namespace qs::engine_internal

#endif  // QS_ENGINE_FAST_EVENT_QUEUE_H_
