// File: engine/fast/job_queue.h
//
// One share's queue of RUNNABLE jobs in the fast engine, in queue order:
// priority descending, then submission order (Job::seq). Each waiting job
// is an 8-byte entry (seq, slot) here; its record is FastState::jobs[slot].
//
// Layout: one level per priority, levels in priority order. Submissions
// arrive in seq order, so a level keeps its jobs in a plain array appended
// at the back and taken from the front (a dispatched head): both O(1), no
// tree to search or rebalance. A job that comes back with an older seq (a
// preempted victim, a priority update, a job re-queued after a capacity
// error) goes to the level's small ordered side list instead; the level's
// order is the merge of the two. Erasing a job in the middle (a
// termination, a priority update) binary-searches its array and leaves a
// tombstone, dropped when the array is compacted.
//
// The order is exactly that of a std::set<QueueKey> (JobQueueTest in
// engine/fast/engine_test.cc compares them on random operations); HeadOf,
// backfill and snapshots iterate it. Levels that empty out are kept while there are few of them
// (priorities are usually a handful of values), dropped beyond that.
//
// Thread-compatible.
#ifndef QS_ENGINE_FAST_JOB_QUEUE_H_
#define QS_ENGINE_FAST_JOB_QUEUE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/btree_set.h"

namespace qs::engine_internal {

// A RUNNABLE job's place in its share's queue.
struct QueueKey {
  int64_t neg_priority;
  int32_t seq;  // Job::seq: submission order == (createdAt, submission) order
  int32_t id;   // the job's slot (not ordered by: slots are recycled)
  bool operator<(const QueueKey& o) const {
    return neg_priority != o.neg_priority ? neg_priority < o.neg_priority : seq < o.seq;
  }
};

class JobQueue {
 public:
  class const_iterator;

  // k is not in the queue (no entry with its seq at its priority).
  void Insert(const QueueKey& k) {
    Level& l = LevelFor(k.neg_priority);
    const Entry e{k.seq, k.id};
    if (l.main.size() == l.head || l.main.back().seq < k.seq) {
      l.main.push_back(e);
    } else {
      l.side.insert(e);
    }
    ++l.size;
    ++size_;
  }
  // k is in the queue.
  void Erase(const QueueKey& k) {
    const size_t li = Find(k.neg_priority);
    Level& l = levels_[li];
    --l.size;
    --size_;
    if (l.head < l.main.size() && l.main[l.head].seq == k.seq) {
      // The front, nearly always: a dispatched head.
      l.main[l.head].id = kDead;
      SkipDead(l);
    } else if (auto it = std::lower_bound(l.main.begin() + static_cast<std::ptrdiff_t>(l.head), l.main.end(),
                                          k.seq, [](const Entry& e, int32_t seq) { return e.seq < seq; });
               it != l.main.end() && it->seq == k.seq && it->id == k.id) {
      it->id = kDead;
      ++l.dead;
      if (l.dead > (l.main.size() - l.head - l.dead) / 2 + 16) Compact(l);
    } else {
      l.side.erase(Entry{k.seq, k.id});
    }
    if (l.size == 0) {
      l.main.clear();
      l.head = l.dead = 0;
      if (levels_.size() > kKeptLevels) levels_.erase(levels_.begin() + static_cast<std::ptrdiff_t>(li));
    } else if (l.head > 64 && l.head > l.main.size() / 2) {
      l.main.erase(l.main.begin(), l.main.begin() + static_cast<std::ptrdiff_t>(l.head));
      l.head = 0;
    }
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // The first job in queue order; the queue is not empty.
  QueueKey Front() const {
    for (const Level& l : levels_) {
      if (l.size != 0) {
        const Entry e = l.FrontEntry();
        return QueueKey{l.neg_priority, e.seq, e.id};
      }
    }
    return QueueKey{};
  }

  const_iterator begin() const;
  const_iterator end() const;

 private:
  static constexpr int32_t kDead = -1;
  static constexpr size_t kKeptLevels = 16;
  struct Entry {
    int32_t seq;
    int32_t id;
    bool operator<(const Entry& o) const { return seq < o.seq; }
  };
  struct Level {
    int64_t neg_priority = 0;
    std::vector<Entry> main;  // seq ascending; [head, end) holds the live entries and `dead` tombstones
    size_t head = 0;          // main[head] is live, or head == main.size()
    size_t dead = 0;          // tombstones in [head, end)
    absl::btree_set<Entry> side;  // entries older than main's back when inserted
    size_t size = 0;              // live entries in main and side
    Entry FrontEntry() const {
      if (head == main.size()) return *side.begin();
      if (side.empty() || main[head].seq < side.begin()->seq) return main[head];
      return *side.begin();
    }
  };
  // main[head] was just made a tombstone (not counted in `dead`): head
  // moves past it and the tombstones behind it (counted).
  static void SkipDead(Level& l) {
    ++l.head;
    while (l.head < l.main.size() && l.main[l.head].id == kDead) {
      ++l.head;
      --l.dead;
    }
  }
  static void Compact(Level& l) {
    std::vector<Entry> kept;
    kept.reserve(l.main.size() - l.head - l.dead);
    for (size_t i = l.head; i < l.main.size(); ++i) {
      if (l.main[i].id != kDead) kept.push_back(l.main[i]);
    }
    l.main.swap(kept);
    l.head = 0;
    l.dead = 0;
  }
  size_t Find(int64_t neg_priority) const {
    size_t i = 0;
    while (levels_[i].neg_priority != neg_priority) ++i;
    return i;
  }
  Level& LevelFor(int64_t neg_priority) {
    auto it = std::lower_bound(levels_.begin(), levels_.end(), neg_priority,
                               [](const Level& l, int64_t p) { return l.neg_priority < p; });
    if (it == levels_.end() || it->neg_priority != neg_priority) {
      it = levels_.insert(it, Level{});
      it->neg_priority = neg_priority;
    }
    return *it;
  }

  std::vector<Level> levels_;
  size_t size_ = 0;
};

// Forward iteration in queue order: level by level, each the merge of its
// array (tombstones skipped) and its side list.
class JobQueue::const_iterator {
 public:
  QueueKey operator*() const {
    const Level& l = q_->levels_[level_];
    const Entry e = FromMain() ? l.main[pos_] : *side_;
    return QueueKey{l.neg_priority, e.seq, e.id};
  }
  const_iterator& operator++() {
    if (FromMain()) {
      ++pos_;
    } else {
      ++side_;
    }
    Settle();
    return *this;
  }
  bool operator==(const const_iterator& o) const {
    return level_ == o.level_ && (level_ == q_->levels_.size() || (pos_ == o.pos_ && side_ == o.side_));
  }
  bool operator!=(const const_iterator& o) const { return !(*this == o); }

 private:
  friend class JobQueue;
  const_iterator(const JobQueue* q, size_t level) : q_(q), level_(level) {
    if (level_ < q_->levels_.size()) Enter();
    Settle();
  }
  void Enter() {
    const Level& l = q_->levels_[level_];
    pos_ = l.head;
    side_ = l.side.begin();
  }
  // Past tombstones, and on to the next level with entries (or the end).
  void Settle() {
    while (level_ < q_->levels_.size()) {
      const Level& l = q_->levels_[level_];
      while (pos_ < l.main.size() && l.main[pos_].id == kDead) ++pos_;
      if (pos_ < l.main.size() || side_ != l.side.end()) return;
      if (++level_ < q_->levels_.size()) Enter();
    }
  }
  bool FromMain() const {
    const Level& l = q_->levels_[level_];
    return pos_ < l.main.size() && (side_ == l.side.end() || l.main[pos_].seq < side_->seq);
  }

  const JobQueue* q_;
  size_t level_;
  size_t pos_ = 0;
  absl::btree_set<Entry>::const_iterator side_;
};

inline JobQueue::const_iterator JobQueue::begin() const { return const_iterator(this, 0); }
inline JobQueue::const_iterator JobQueue::end() const { return const_iterator(this, levels_.size()); }

}  // namespace qs::engine_internal

#endif  // QS_ENGINE_FAST_JOB_QUEUE_H_
