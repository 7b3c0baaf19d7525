#include "engine/model/scenario_index.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <limits>
#include <variant>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "engine/util/strings.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/enumerable_thread_specific.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/parallel_sort.h"

namespace qs {
namespace {

// The capacity units and the job names one request mentions.
template <typename AddUnit, typename AddName>
void Visit(const ScenarioEvent& ev, const AddUnit& add_unit, const AddName& add_name) {
  std::visit(
      [&](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, SubmitServiceJobRequest>) {
          if (const std::optional<std::string_view> unit = SubmitUnit(r)) add_unit(*unit);
          if (r.job_name) add_name(*r.job_name);
        } else if constexpr (std::is_same_v<T, CreateQuotaShareRequest> ||
                             std::is_same_v<T, UpdateQuotaShareRequest> ||
                             std::is_same_v<T, UpdateServiceEnvironmentRequest>) {
          if (r.capacity_limits) {
            for (const CapacityLimit& l : *r.capacity_limits) add_unit(l.capacity_unit);
          }
        }
      },
      ev.request);
}

// "j<k>", the name `quotasim gen` gives its k-th job, written into buf.
std::string_view GeneratedName(int64_t k, char (&buf)[24]) {
  buf[0] = 'j';
  const char* end = std::to_chars(buf + 1, buf + sizeof(buf), k).ptr;
  return std::string_view(buf, static_cast<size_t>(end - buf));
}

// Job names in the order they come, held only when they break the pattern
// of generated names: while every name is "j<first + i>" (canonical
// digits), only `first` and `count` are kept (JobNames::Sequential then
// needs no names at all); at the first that is not, the run so far is
// written out and names are collected as they come.
class NameRun {
 public:
  void Add(std::string_view name) {
    if (sequential_) {
      const std::optional<int64_t> v = GeneratedJobNumber(name);
      if (v && (count_ == 0 || *v == first_ + count_)) {
        if (count_ == 0) first_ = *v;
        ++count_;
        return;
      }
      Materialize();
    }
    Append(name);
  }
  bool sequential() const { return sequential_; }
  int64_t first() const { return first_; }
  int64_t size() const { return sequential_ ? count_ : static_cast<int64_t>(ends_.size()); }
  // The names as chars and ends (a sequential run written out).
  void Materialize() {
    if (!sequential_) return;
    sequential_ = false;
    char buf[24];
    for (int64_t i = 0; i < count_; ++i) Append(GeneratedName(first_ + i, buf));
  }
  const std::string& chars() const { return chars_; }
  const std::vector<uint64_t>& ends() const { return ends_; }

 private:
  void Append(std::string_view name) {
    chars_ += name;
    ends_.push_back(chars_.size());
  }
  bool sequential_ = true;
  int64_t first_ = 0, count_ = 0;
  std::string chars_;
  std::vector<uint64_t> ends_;  // within chars_
};

std::vector<std::string> SortedUnits(const absl::flat_hash_set<std::string>& seen) {
  std::vector<std::string> units(seen.begin(), seen.end());
  std::sort(units.begin(), units.end());
  return units;
}

}  // namespace

JobNames JobNames::Build(std::string_view chars, const std::vector<uint64_t>& ends) {
  JobNames out;
  const size_t n = ends.size();
  auto name = [&](size_t k) {
    const uint64_t begin = k == 0 ? 0 : ends[k - 1];
    return chars.substr(begin, ends[k] - begin);
  };
  // Each name's first 8 bytes as a big-endian integer decide most
  // comparisons without touching the strings (names have no NUL bytes, so
  // zero padding orders a prefix first, as string comparison does). The key
  // (name, ordinal) is a total order: the result does not depend on how
  // parallel_sort splits the work.
  struct Key {
    uint64_t prefix;
    uint32_t ordinal_hi;
    uint32_t ordinal_lo;
    size_t ordinal() const { return (static_cast<size_t>(ordinal_hi) << 32) | ordinal_lo; }
  };
  std::vector<Key> keys(n);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 1 << 14), [&](const tbb::blocked_range<size_t>& range) {
    for (size_t k = range.begin(); k != range.end(); ++k) {
      const std::string_view s = name(k);
      uint64_t p = 0;
      for (size_t i = 0; i < 8; ++i) p = (p << 8) | (i < s.size() ? static_cast<unsigned char>(s[i]) : 0u);
      keys[k] = Key{p, static_cast<uint32_t>(k >> 32), static_cast<uint32_t>(k)};
    }
  });
  tbb::parallel_sort(keys.begin(), keys.end(), [&](const Key& a, const Key& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const int c = name(a.ordinal()).compare(name(b.ordinal()));
    return c != 0 ? c < 0 : a.ordinal() < b.ordinal();
  });
  out.rank_.resize(n);
  out.chars_.reserve(chars.size());
  const bool wide = chars.size() > std::numeric_limits<uint32_t>::max();
  int32_t names = 0;
  for (size_t i = 0; i < n;) {
    const std::string_view s = name(keys[i].ordinal());
    size_t end = i + 1;
    while (end < n && keys[end].prefix == keys[i].prefix && name(keys[end].ordinal()) == s) ++end;
    const int32_t rank = names++;
    out.chars_ += s;
    if (wide) {
      out.ends64_.push_back(out.chars_.size());
    } else {
      out.ends32_.push_back(static_cast<uint32_t>(out.chars_.size()));
    }
    for (size_t k = i; k < end; ++k) out.rank_[keys[k].ordinal()] = rank;
    // Equal names sort by ordinal: the second is the earliest repeat.
    if (end - i > 1) {
      const auto dup = std::make_pair(static_cast<int64_t>(keys[i + 1].ordinal()),
                                      static_cast<int64_t>(keys[i].ordinal()));
      if (!out.first_duplicate_ || dup.first < out.first_duplicate_->first) out.first_duplicate_ = dup;
    }
    i = end;
  }
  out.chars_.shrink_to_fit();  // room was reserved for repeated names too
  return out;
}

JobNames JobNames::Sequential(int64_t n) {
  JobNames out;
  out.generated_ = std::make_shared<const GeneratedNames>(n);
  return out;
}

JobNames::GeneratedNames::GeneratedNames(int64_t n)
    : n_(n), num_chunks_((n + kChunk - 1) / kChunk),
      chunks_(std::make_unique<std::atomic<const Chunk*>[]>(static_cast<size_t>(num_chunks_))) {
  digits_ = 1;
  for (int64_t p = 10; p <= n - 1; p *= 10) ++digits_;
  for (int64_t c = 0; c < num_chunks_; ++c) chunks_[static_cast<size_t>(c)].store(nullptr);
}

JobNames::GeneratedNames::~GeneratedNames() {
  for (int64_t c = 0; c < num_chunks_; ++c) delete chunks_[static_cast<size_t>(c)].load();
}

int64_t JobNames::GeneratedNames::Subtree(int64_t m) const {
  int64_t count = 0;
  for (int64_t a = m, b = m + 1; a < n_; a *= 10, b *= 10) count += std::min(b, n_) - a;
  return count;
}

int32_t JobNames::GeneratedNames::RankOf(int64_t k) const {
  // g[l]: the l-digit numbers below g[l] are those whose digits, padded with
  // zeros to digits_, are below k's so padded: k * 10^(l - len) for l at
  // least k's length len, else k's first l digits, plus one unless the rest
  // are all zeros (ceil(k / 10^(len - l))).
  int64_t g[20];
  int len = 1;
  for (int64_t p = 10; p <= k; p *= 10) ++len;
  g[len] = k;
  int64_t head = k;
  bool rest = false;  // a non-zero digit after the first l
  for (int l = len - 1; l >= 1; --l) {
    rest |= head % 10 != 0;
    head /= 10;
    g[l] = head + (rest ? 1 : 0);
  }
  for (int l = len + 1; l <= digits_; ++l) g[l] = g[l - 1] * 10;
  int64_t rank = 0;
  int64_t lo = 0, hi = 10;  // the l-digit numbers: [lo, hi) (0 has one digit)
  for (int l = 1; l <= digits_; ++l) {
    rank += std::max<int64_t>(0, std::min({g[l], hi, n_}) - lo);
    lo = hi;
    hi *= 10;
  }
  // The prefixes of k equal to it when padded (k without trailing zeros)
  // sort before it.
  for (int64_t m = k; m > 0 && m % 10 == 0; m /= 10) ++rank;
  return static_cast<int32_t>(rank);
}

int32_t JobNames::GeneratedNames::RankAfter(int64_t k, int32_t previous) const {
  // Between "j<k-1>" and "j<k>", when adding one carries no digit: k-1's
  // extensions (its subtree but itself) and nothing else.
  if (k % 10 == 0 || k == 1) return RankOf(k);
  return static_cast<int32_t>(previous + Subtree(k - 1));
}

int64_t JobNames::GeneratedNames::NumberAt(int64_t rank) const {
  if (rank == 0) return 0;  // "j0" sorts first
  int64_t left = rank - 1;  // names to pass after "j0"
  int64_t cur = 1;
  while (true) {
    const int64_t subtree = Subtree(cur);
    if (left >= subtree) {
      left -= subtree;
      ++cur;  // the next sibling (rank < n: never past the last one)
    } else if (left == 0) {
      return cur;
    } else {
      --left;
      cur *= 10;  // into the first child
    }
  }
}

const JobNames::GeneratedNames::Chunk& JobNames::GeneratedNames::ChunkAt(int64_t c) const {
  std::atomic<const Chunk*>& slot = chunks_[static_cast<size_t>(c)];
  if (const Chunk* p = slot.load(std::memory_order_acquire); p != nullptr) return *p;
  auto made = std::make_unique<Chunk>();
  const int64_t first = c * kChunk, end = std::min(n_, first + kChunk);
  made->ends.reserve(static_cast<size_t>(end - first));
  char buf[24];
  // Names in byte order from the chunk's first: a walk of the digit trie
  // (after k: k0 if it exists; else up past trailing 9s and ends, then the
  // next sibling; after 0: 1).
  int64_t k = NumberAt(first);
  for (int64_t r = first; r < end; ++r) {
    made->chars += GeneratedName(k, buf);
    made->ends.push_back(static_cast<uint32_t>(made->chars.size()));
    if (k == 0) {
      k = 1;
    } else if (k <= (n_ - 1) / 10) {
      k *= 10;
    } else {
      while (k % 10 == 9 || k + 1 >= n_) k /= 10;
      ++k;
    }
  }
  const Chunk* expected = nullptr;
  if (slot.compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel, std::memory_order_acquire)) {
    return *made.release();
  }
  return *expected;  // another thread wrote the same chunk first
}

std::string_view JobNames::GeneratedNames::Name(int32_t rank) const {
  const Chunk& ch = ChunkAt(rank >> kChunkBits);
  const size_t i = static_cast<size_t>(rank & (kChunk - 1));
  const uint32_t begin = i == 0 ? 0 : ch.ends[i - 1];
  return std::string_view(ch.chars).substr(begin, ch.ends[i] - begin);
}

int32_t JobNames::Find(std::string_view name) const {
  if (generated_ != nullptr) {
    const std::optional<int64_t> k = GeneratedJobNumber(name);
    return k && *k < num_ordinals() ? RankOf(*k) : kNotFound;
  }
  int32_t lo = 0, hi = num_names();
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (Name(mid) < name) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < num_names() && Name(lo) == name ? lo : kNotFound;
}

namespace {

bool IsShareRequest(const ScenarioEvent& ev) {
  return std::holds_alternative<CreateQuotaShareRequest>(ev.request) ||
         std::holds_alternative<UpdateQuotaShareRequest>(ev.request);
}

// The capacity units a scenario's head declares (its environment's limits).
absl::flat_hash_set<std::string> HeadUnits(const Scenario& head) {
  absl::flat_hash_set<std::string> units;
  for (const CapacityLimit& l : head.service_environment.capacity_limits) units.insert(l.capacity_unit);
  return units;
}

// One event's part of an index: a share request is kept, the capacity
// units it mentions go into `units`, its jobName (if any) to add_name.
template <typename AddName>
void IndexEvent(const ScenarioEvent& ev, absl::flat_hash_set<std::string>& units,
                std::vector<ScenarioEvent>& share_requests, const AddName& add_name) {
  if (IsShareRequest(ev)) share_requests.push_back(ev);
  Visit(
      ev, [&](std::string_view u) {
        if (!units.contains(absl::string_view(u.data(), u.size()))) units.emplace(u);
      },
      add_name);
}

}  // namespace

ScenarioIndex IndexScenario(const Scenario& scenario) {
  absl::flat_hash_set<std::string> seen = HeadUnits(scenario);
  NameRun names;
  ScenarioIndex idx;
  for (const ScenarioEvent& ev : scenario.events) {
    IndexEvent(ev, seen, idx.share_requests, [&](std::string_view name) { names.Add(name); });
  }
  idx.units = SortedUnits(seen);
  if (names.sequential() && (names.size() == 0 || names.first() == 0)) {
    idx.job_names = JobNames::Sequential(names.size());
  } else {
    names.Materialize();
    idx.job_names = JobNames::Build(names.chars(), names.ends());
  }
  return idx;
}

ScenarioIndex IndexScenarioParts(const Scenario& head, const std::vector<ScenarioEvent>& requests,
                                 const std::vector<std::string>& submit_units, std::string_view name_chars,
                                 const std::vector<uint64_t>& name_ends) {
  absl::flat_hash_set<std::string> seen = HeadUnits(head);
  for (const std::string& u : submit_units) seen.insert(u);
  ScenarioIndex idx;
  for (const ScenarioEvent& ev : requests) IndexEvent(ev, seen, idx.share_requests, [](std::string_view) {});
  idx.units = SortedUnits(seen);
  idx.job_names = JobNames::Build(name_chars, name_ends);
  return idx;
}

absl::StatusOr<ScenarioIndex> IndexEventStream(const EventStream& stream) {
  const Scenario& head = stream.head();
  auto err = [&](const std::string& m) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(head.source), ": ", m));
  };
  if (const StreamFacts* facts = stream.facts(); facts != nullptr) {
    // The source stated the facts (and checked what spans blocks): only the
    // blocks with requests other than job requests are read, for the share
    // requests and the units those requests name.
    absl::flat_hash_set<std::string> seen = HeadUnits(head);
    for (const std::string& u : facts->submit_units) seen.insert(u);
    ScenarioIndex idx;
    std::vector<ScenarioEvent> events;
    for (size_t b : facts->request_blocks) {
      if (absl::Status st = stream.ReadBlockRequests(b, events); !st.ok()) return st;
      for (const ScenarioEvent& ev : events) IndexEvent(ev, seen, idx.share_requests, [](std::string_view) {});
    }
    idx.units = SortedUnits(seen);
    idx.job_names = JobNames::Sequential(facts->named_submissions);
    return idx;
  }
  struct Block {
    absl::Status status;
    absl::flat_hash_set<std::string> units;
    NameRun names;
    std::vector<ScenarioEvent> share_requests;
    int64_t events = 0, submits = 0;
    SimTime first_time = 0, last_time = 0;
  };
  std::vector<Block> blocks(stream.num_blocks());
  // One event buffer per thread, reused block after block (decoding into
  // the last block's events allocates next to nothing); freed on return.
  tbb::enumerable_thread_specific<std::vector<ScenarioEvent>> buffers;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, blocks.size(), 1), [&](const tbb::blocked_range<size_t>& range) {
    std::vector<ScenarioEvent>& events = buffers.local();
    for (size_t b = range.begin(); b != range.end(); ++b) {
      Block& k = blocks[b];
      k.status = stream.ReadBlock(b, events);
      if (!k.status.ok()) continue;
      k.events = static_cast<int64_t>(events.size());
      if (!events.empty()) {
        k.first_time = events.front().time;
        k.last_time = events.back().time;
      }
      for (const ScenarioEvent& ev : events) {
        if (std::holds_alternative<SubmitServiceJobRequest>(ev.request)) ++k.submits;
        IndexEvent(ev, k.units, k.share_requests, [&](std::string_view name) { k.names.Add(name); });
      }
    }
  }, tbb::simple_partitioner());
  absl::flat_hash_set<std::string> seen = HeadUnits(head);
  int64_t submits = 0, events = 0;
  size_t chars_size = 0, names = 0;
  // Generated names ("j0", "j1", ... in order across all blocks) need no
  // collecting and no sort (JobNames::Sequential).
  bool sequential = true;
  std::vector<ScenarioEvent> share_requests;
  for (size_t b = 0; b < blocks.size(); ++b) {
    Block& k = blocks[b];
    if (!k.status.ok()) return k.status;
    for (ScenarioEvent& ev : k.share_requests) share_requests.push_back(std::move(ev));
    if (b > 0 && k.events > 0 && blocks[b - 1].events > 0 && k.first_time < blocks[b - 1].last_time) {
      return err(absl::StrCat("events are not sorted by time (event block ", b, ")"));
    }
    submits += k.submits;
    events += k.events;
    if (!k.names.sequential() || (k.names.size() > 0 && k.names.first() != static_cast<int64_t>(names))) {
      sequential = false;
    }
    chars_size += k.names.chars().size();
    names += static_cast<size_t>(k.names.size());
    for (const std::string& u : k.units) seen.insert(u);
  }
  if (static_cast<size_t>(events) != stream.num_events()) return err("event count does not match the event blocks");
  if (submits != head.submit_count) return err("submit count does not match the events");
  std::vector<int64_t> first_ordinal(blocks.size() + 1, 0);  // of each block's named submissions
  for (size_t b = 0; b < blocks.size(); ++b) {
    first_ordinal[b + 1] = first_ordinal[b] + blocks[b].names.size();
  }
  ScenarioIndex idx;
  idx.units = SortedUnits(seen);
  idx.share_requests = std::move(share_requests);
  if (sequential) {
    blocks.clear();
    idx.job_names = JobNames::Sequential(static_cast<int64_t>(names));
  } else {
    std::string chars;
    std::vector<uint64_t> ends;
    chars.reserve(chars_size);
    ends.reserve(names);
    for (size_t b = 0; b < blocks.size(); ++b) {
      Block& k = blocks[b];
      k.names.Materialize();
      const uint64_t base = chars.size();
      chars += k.names.chars();
      for (uint64_t e : k.names.ends()) ends.push_back(base + e);
      k = Block();  // free as we go
    }
    idx.job_names = JobNames::Build(chars, ends);
  }
  if (const auto& dup = idx.job_names.first_duplicate(); dup) {
    // Rare: find the two requests again for their paths.
    auto path_of = [&](int64_t ordinal) -> std::string {
      const size_t b = static_cast<size_t>(
          std::upper_bound(first_ordinal.begin(), first_ordinal.end(), ordinal) - first_ordinal.begin() - 1);
      std::vector<ScenarioEvent> evs;
      if (!stream.ReadBlock(b, evs).ok()) return "?";
      int64_t k = first_ordinal[b];
      for (const ScenarioEvent& ev : evs) {
        const auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request);
        if (r == nullptr || !r->job_name) continue;
        if (k++ == ordinal) return ev.path;
      }
      return "?";
    };
    const std::string_view name = idx.job_names.Name(idx.job_names.RankOf(dup->first));
    return err(absl::StrCat(path_of(dup->first), ".request.jobName: duplicate jobName '", Sv(name),
                            "' (first at ", path_of(dup->second), ")"));
  }
  return idx;
}

}  // namespace qs
