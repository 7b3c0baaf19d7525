// File: engine/model/scenario_index.h
//
// What the fast engine must know about a whole scenario before its first
// event: every capacity unit it mentions (unit ids follow name order, so
// "units by name" is "units by id") and every submitted jobName, ranked by
// name (victim order's last tie-break compares ranks, not strings; requests
// name jobs by jobName).
//
// JobNames stores the distinct names once, sorted, in one character array
// (about 17 bytes per job with 8-character names) instead of a hash map of
// strings (over 40): at 1e7 jobs that difference is most of the memory left
// beside the job records.
//
//   ScenarioIndex idx = IndexScenario(scenario);          // held whole
//   absl::StatusOr<ScenarioIndex> idx = IndexEventStream(stream);  // blocks
//
// IndexEventStream decodes every block once (in parallel) and is where a
// streamed file is validated as a whole, with the messages DecodeQsb gives:
// times sorted across blocks, the submit count, unique jobNames. A stream
// that states its facts up front (EventStream::facts(), a version 9+ .qsb
// file with generated names) has checked those when it opened; then only
// its blocks with requests other than job requests are read here.
//
// Thread-safety: an index is immutable once built; concurrent reads are safe.
#ifndef QS_ENGINE_MODEL_SCENARIO_INDEX_H_
#define QS_ENGINE_MODEL_SCENARIO_INDEX_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/model/event_stream.h"
#include "engine/model/scenario.h"

namespace qs {

class JobNames {
 public:
  static constexpr int32_t kNotFound = -1;

  JobNames() = default;
  // `chars` holds the names of the named submissions in order ("ordinals"
  // 0..n-1), name k ending at ends[k]. Sorting runs on oneTBB; the result
  // does not depend on the thread count.
  static JobNames Build(std::string_view chars, const std::vector<uint64_t>& ends);
  // The names "j0" .. "j<n-1>" in ordinal order (what `quotasim gen`
  // writes): the same JobNames as Build() of those names, made in one pass
  // in name order, without collecting or sorting them.
  static JobNames Sequential(int64_t n);

  int64_t num_ordinals() const { return static_cast<int64_t>(rank_.size()); }
  int32_t num_names() const { return static_cast<int32_t>(ends32_.size() + ends64_.size()); }
  // Rank (position among the distinct names, by byte order) of ordinal k.
  int32_t RankOf(int64_t ordinal) const { return rank_[static_cast<size_t>(ordinal)]; }
  std::string_view Name(int32_t rank) const {
    const uint64_t begin = rank == 0 ? 0 : End(rank - 1);
    return std::string_view(chars_).substr(begin, End(rank) - begin);
  }
  // The rank of `name`, or kNotFound: a binary search, or for Sequential()
  // names the rank of ordinal k for "j<k>".
  int32_t Find(std::string_view name) const;
  // The first ordinal whose name equals an earlier one's, with the first
  // ordinal of that name; nullopt when all names are distinct.
  const std::optional<std::pair<int64_t, int64_t>>& first_duplicate() const { return first_duplicate_; }

 private:
  uint64_t End(int32_t rank) const {
    const size_t r = static_cast<size_t>(rank);
    return ends64_.empty() ? ends32_[r] : ends64_[r];
  }

  std::string chars_;  // distinct names, sorted, concatenated
  // By rank: end of the name in chars_; 32-bit unless chars_ exceeds 4 GiB.
  std::vector<uint32_t> ends32_;
  std::vector<uint64_t> ends64_;
  std::vector<int32_t> rank_;   // by ordinal
  bool generated_ = false;      // made by Sequential(): Find() reads the number
  std::optional<std::pair<int64_t, int64_t>> first_duplicate_;
};

struct ScenarioIndex {
  std::vector<std::string> units;  // sorted, distinct
  JobNames job_names;
  // The CreateQuotaShare and UpdateQuotaShare events, in scenario order (a
  // handful; the per-share table lists the shares as declared).
  std::vector<ScenarioEvent> share_requests;
};

// For a Scenario held whole (the parsers already checked it).
ScenarioIndex IndexScenario(const Scenario& scenario);
// For a scenario made elsewhere (a trace replay's WorkloadStream,
// engine/trace/workload_stream.h), given in parts instead of events: its
// head, every event that is not a submission (in scenario order), the
// capacity units its submissions name and their jobNames in submission
// order (name k in name_chars ending at name_ends[k]). The result is
// IndexScenario's of the whole scenario.
ScenarioIndex IndexScenarioParts(const Scenario& head, const std::vector<ScenarioEvent>& requests,
                                 const std::vector<std::string>& submit_units, std::string_view name_chars,
                                 const std::vector<uint64_t>& name_ends);
// Reads every block of `stream` (only those facts() lists, when it states
// facts); an error (a bad block, events out of time order, a submit count or
// a duplicate jobName) is an InvalidArgumentError naming the source, as
// DecodeQsb's.
absl::StatusOr<ScenarioIndex> IndexEventStream(const EventStream& stream);

}  // namespace qs

#endif  // QS_ENGINE_MODEL_SCENARIO_INDEX_H_
