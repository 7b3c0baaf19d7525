#include "engine/model/scenario_index.h"

#include <algorithm>
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
          if (r.payload_error.empty()) add_unit(r.instance_type);
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
  out.chars_.shrink_to_fit();
  return out;
}

int32_t JobNames::Find(std::string_view name) const {
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

ScenarioIndex IndexScenario(const Scenario& scenario) {
  absl::flat_hash_set<std::string> seen;
  for (const CapacityLimit& l : scenario.service_environment.capacity_limits) seen.insert(l.capacity_unit);
  std::string chars;
  std::vector<uint64_t> ends;
  ends.reserve(static_cast<size_t>(std::max<int64_t>(0, scenario.submit_count)));
  for (const ScenarioEvent& ev : scenario.events) {
    Visit(
        ev, [&](std::string_view u) {
          if (!seen.contains(absl::string_view(u.data(), u.size()))) seen.emplace(u);
        },
        [&](std::string_view name) {
          chars += name;
          ends.push_back(chars.size());
        });
  }
  ScenarioIndex idx;
  idx.units = SortedUnits(seen);
  idx.job_names = JobNames::Build(chars, ends);
  return idx;
}

absl::StatusOr<ScenarioIndex> IndexEventStream(const EventStream& stream) {
  const Scenario& head = stream.head();
  auto err = [&](const std::string& m) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(head.source), ": ", m));
  };
  struct Block {
    absl::Status status;
    absl::flat_hash_set<std::string> units;
    std::string chars;
    std::vector<uint64_t> ends;  // within chars
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
        Visit(
            ev, [&](std::string_view u) {
              if (!k.units.contains(absl::string_view(u.data(), u.size()))) k.units.emplace(u);
            },
            [&](std::string_view name) {
              k.chars += name;
              k.ends.push_back(k.chars.size());
            });
      }
    }
  }, tbb::simple_partitioner());
  absl::flat_hash_set<std::string> seen;
  for (const CapacityLimit& l : head.service_environment.capacity_limits) seen.insert(l.capacity_unit);
  int64_t submits = 0, events = 0;
  size_t chars_size = 0, names = 0;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const Block& k = blocks[b];
    if (!k.status.ok()) return k.status;
    if (b > 0 && k.events > 0 && blocks[b - 1].events > 0 && k.first_time < blocks[b - 1].last_time) {
      return err(absl::StrCat("events are not sorted by time (event block ", b, ")"));
    }
    submits += k.submits;
    events += k.events;
    chars_size += k.chars.size();
    names += k.ends.size();
    for (const std::string& u : k.units) seen.insert(u);
  }
  if (static_cast<size_t>(events) != stream.num_events()) return err("event count does not match the event blocks");
  if (submits != head.submit_count) return err("submit count does not match the events");
  std::string chars;
  std::vector<uint64_t> ends;
  chars.reserve(chars_size);
  ends.reserve(names);
  std::vector<int64_t> first_ordinal(blocks.size() + 1, 0);  // of each block's named submissions
  for (size_t b = 0; b < blocks.size(); ++b) {
    Block& k = blocks[b];
    const uint64_t base = chars.size();
    chars += k.chars;
    for (uint64_t e : k.ends) ends.push_back(base + e);
    first_ordinal[b + 1] = first_ordinal[b] + static_cast<int64_t>(k.ends.size());
    k = Block();  // free as we go
  }
  ScenarioIndex idx;
  idx.units = SortedUnits(seen);
  idx.job_names = JobNames::Build(chars, ends);
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
