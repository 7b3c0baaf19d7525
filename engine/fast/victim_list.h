// File: engine/fast/victim_list.h
//
// Victim candidates in victim order: the dispatched, not draining jobs of a
// share on one type (Share::dispatched), of a lender's borrowers on one type
// (FastState::lender_sets) and of the borrowers of one type
// (FastState::borrowers_by_unit). Preemption draws victims from the front
// (engine/fast/decisions.h); a pass reads the first (IsSelfBound).
//
// A list of at most kFlatMax keys is a flat array kept in reverse order, the
// first victim last. A job dispatched now is usually first in victim order
// (the newest of the lowest priority, or of the only one), so the usual
// insert is an append; another insert shifts the keys after its place, at
// most kFlatMax of them. An erase of the last key (the first victim) pops it
// and the tombstones behind it; another finds its key by binary search on
// the keys alone and leaves a tombstone (the id negated), which iteration
// skips; the array is compacted when tombstones outnumber the keys. A longer list (a
// large pool, e.g. thousands of one-instance jobs of many priorities) is an
// absl::btree_set, where every insert and erase is O(log n), until it falls
// to kFlatMax / 4 keys.
//
// Before, every list was a B-tree, and the share lists were erased lazily
// and purged by a look at each entry's job record: node allocations, splits
// and those cold loads were most of AddCandidate and RemoveCandidate (about
// a tenth of a steady run's engine thread). The flat lists took about 5%
// off the stress profile's 1e6-job run and off a 20,000-job pool; on the
// steady profile the change was within the noise (commit 821c6690).
//
// kFlatMax was 256, then 512 (commit 703da30b, whose message and the
// next commit's have the measurements): the steady profile's lists of the
// borrowers of a type hold 256-512 keys, and the Philly replay's one pool
// up to 2,490. A flat insert appends when the job is the newest of the
// lowest priority; else it moves the keys after its place, which with
// many priorities costs more than the tree's insert somewhere beyond 512
// keys, while an appending list gains from being flat at any size.
//
// The order is a strict total one (VictimKey's name_rank is unique), so
// both forms give the same order.
//
// A list may also note each key's index in the flat array, as it was put
// there, in a caller's array by job id (`places`; the share lists do,
// FastState::victim_place). A key never moves to a lower index: appends,
// pops and tombstones move no key, an insert in the middle moves the keys
// after it one place on, and compaction and the return from the tree
// note every key's index again. So an erase looks at the noted place
// first and, if another key is there, searches only from it to the end.
// The steady profile's share lists hold about 150 keys and tombstones, and
// their inserts nearly all append: there an erase mostly finds its key at
// once (or within kNear places of it), where the search was most of its
// cost.
//
// Thread-compatible.
#ifndef QS_ENGINE_FAST_VICTIM_LIST_H_
#define QS_ENGINE_FAST_VICTIM_LIST_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <vector>

#include "absl/container/btree_set.h"

namespace qs::engine_internal {

// A dispatched job's place in victim order (FastState::KeyOf); `id` (the
// job's slot) is not part of the order.
struct VictimKey {
  int64_t a, b, c;
  int32_t name_rank;
  int32_t id;
  bool operator<(const VictimKey& o) const {
    if (a != o.a) return a < o.a;
    if (b != o.b) return b < o.b;
    if (c != o.c) return c < o.c;
    return name_rank < o.name_rank;
  }
};

class VictimList {
  using Tree = absl::btree_set<VictimKey>;

 public:
  static constexpr size_t kFlatMax = 512;
  // An erase with `places` looks this far from the noted place before it
  // searches.
  static constexpr size_t kNear = 8;

  // Iterates the keys in victim order.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = VictimKey;
    using difference_type = std::ptrdiff_t;
    using pointer = const VictimKey*;
    using reference = const VictimKey&;
    const_iterator() = default;
    reference operator*() const { return tree_ ? *it_ : base_[i_]; }
    pointer operator->() const { return &**this; }
    const_iterator& operator++() {
      if (tree_) {
        ++it_;
      } else {
        --i_;
        Skip();
      }
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator t = *this;
      ++*this;
      return t;
    }
    bool operator==(const const_iterator& o) const { return tree_ ? it_ == o.it_ : i_ == o.i_; }

   private:
    friend class VictimList;
    const_iterator(const VictimKey* base, std::ptrdiff_t i) : base_(base), i_(i) { Skip(); }
    explicit const_iterator(Tree::const_iterator it) : it_(it), tree_(true) {}
    void Skip() {
      while (i_ >= 0 && base_[i_].id < 0) --i_;
    }
    const VictimKey* base_ = nullptr;
    std::ptrdiff_t i_ = -1;
    Tree::const_iterator it_{};
    bool tree_ = false;
  };

  VictimList() = default;
  VictimList(VictimList&&) noexcept = default;
  VictimList& operator=(VictimList&&) noexcept = default;

  const_iterator begin() const {
    return tree_ ? const_iterator(tree_->begin()) : const_iterator(keys_.data(), Last());
  }
  const_iterator end() const { return tree_ ? const_iterator(tree_->end()) : const_iterator(keys_.data(), -1); }
  // The first key in victim order, or nullptr if the list is empty. (A flat
  // list's last key is never a tombstone: an erase there pops it with the
  // tombstones behind it.)
  const VictimKey* First() const {
    if (tree_) return tree_->empty() ? nullptr : &*tree_->begin();
    return keys_.empty() ? nullptr : &keys_.back();
  }
  size_t size() const { return tree_ ? tree_->size() : keys_.size() - dead_; }
  bool empty() const { return size() == 0; }

  // Inserts k; its job is not in the list (a tombstone of its key is
  // revived). `places`: see above; the same array, or none, on every call.
  void Insert(const VictimKey& k, int32_t* places = nullptr) {
    if (tree_) {
      tree_->insert(tree_->begin(), k);  // hinted: the newest job usually comes first
      return;
    }
    if (keys_.empty() || k < keys_.back()) {
      if (places != nullptr) places[k.id] = static_cast<int32_t>(keys_.size());
      keys_.push_back(k);
    } else {
      auto it = std::lower_bound(keys_.begin(), keys_.end(), k, Greater);  // the first key <= k
      if (it != keys_.end() && !(*it < k)) {
        if (it->id < 0) --dead_;
        it->id = k.id;
        if (places != nullptr) places[k.id] = static_cast<int32_t>(it - keys_.begin());
        return;
      }
      if (places != nullptr) places[k.id] = static_cast<int32_t>(it - keys_.begin());
      keys_.insert(it, k);  // the keys after it move on: their places stay lower bounds
    }
    if (keys_.size() - dead_ > kFlatMax) ToTree();
  }
  // Erases k, if present.
  void Erase(const VictimKey& k, int32_t* places = nullptr) {
    if (tree_) {
      tree_->erase(k);
      if (tree_->size() <= kFlatMax / 4) ToFlat(places);
      return;
    }
    size_t i = keys_.size();
    size_t from = 0;  // k, if in the list, is at `from` or after
    if (places != nullptr) {
      // Any value if k is not in the list: then the search below misses.
      from = std::min(static_cast<size_t>(static_cast<uint32_t>(places[k.id])), keys_.size());
      // Mostly at its place, or a few on (inserts in the middle are few).
      for (size_t x = from, stop = std::min(from + kNear, keys_.size()); x < stop; ++x) {
        if (keys_[x].id == k.id) {
          if (Same(keys_[x], k)) i = x;
          break;
        }
      }
    }
    if (i == keys_.size() && !keys_.empty() && Same(keys_.back(), k)) i = keys_.size() - 1;
    if (i == keys_.size()) {
      auto it = std::lower_bound(keys_.begin() + static_cast<std::ptrdiff_t>(from), keys_.end(), k, Greater);
      if (it == keys_.end() || *it < k || it->id < 0) return;
      i = static_cast<size_t>(it - keys_.begin());
    }
    if (i + 1 == keys_.size()) {
      // The first in victim order (a victim taken, the newest job ending):
      // dropped with the tombstones behind it.
      keys_.pop_back();
      while (!keys_.empty() && keys_.back().id < 0) {
        keys_.pop_back();
        --dead_;
      }
      return;
    }
    keys_[i].id = ~keys_[i].id;
    if (++dead_ > keys_.size() / 2 + 16) Compact(places);
  }
  bool contains(const VictimKey& k) const {
    if (tree_) return tree_->contains(k);
    auto it = std::lower_bound(keys_.begin(), keys_.end(), k, Greater);
    return it != keys_.end() && !(*it < k) && it->id >= 0;
  }

 private:
  static bool Greater(const VictimKey& a, const VictimKey& b) { return b < a; }
  // x is k's live entry (the same job and the same key).
  static bool Same(const VictimKey& x, const VictimKey& k) { return x.id == k.id && !(x < k) && !(k < x); }
  std::ptrdiff_t Last() const { return static_cast<std::ptrdiff_t>(keys_.size()) - 1; }
  void Renumber(int32_t* places) const {
    if (places == nullptr) return;
    for (size_t i = 0; i < keys_.size(); ++i) places[keys_[i].id] = static_cast<int32_t>(i);
  }
  void Compact(int32_t* places) {
    keys_.erase(std::remove_if(keys_.begin(), keys_.end(), [](const VictimKey& x) { return x.id < 0; }), keys_.end());
    dead_ = 0;
    Renumber(places);
  }
  void ToTree() {
    tree_ = std::make_unique<Tree>();
    for (auto it = keys_.rbegin(); it != keys_.rend(); ++it) {
      if (it->id >= 0) tree_->insert(tree_->end(), *it);
    }
    std::vector<VictimKey>().swap(keys_);
    dead_ = 0;
  }
  void ToFlat(int32_t* places) {
    keys_.assign(tree_->rbegin(), tree_->rend());
    tree_.reset();
    dead_ = 0;
    Renumber(places);
  }

  std::vector<VictimKey> keys_;  // flat: descending, the first in victim order last
  size_t dead_ = 0;              // flat: tombstones among keys_
  std::unique_ptr<Tree> tree_;   // more than kFlatMax keys: the list is this
};

}  // namespace qs::engine_internal

#endif  // QS_ENGINE_FAST_VICTIM_LIST_H_
