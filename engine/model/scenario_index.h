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
// strings (over 40). The names `quotasim gen` gives ("j0" .. "j<n-1>",
// JobNames::Sequential) are not stored at all: a rank is computed from the
// number, and names are written out 4,096 at a time only when asked for
// (event logs, messages; a summary-only run asks for almost none). At 1e7
// jobs that saved about 160 MB and a third of a second of serial start-up.
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

#include <atomic>
#include <cstdint>
#include <memory>
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
  // writes; n < 2^31): the same JobNames as Build() of those names, with
  // nothing collected, sorted or stored (GeneratedNames).
  static JobNames Sequential(int64_t n);

  int64_t num_ordinals() const {
    return generated_ != nullptr ? generated_->size() : static_cast<int64_t>(rank_.size());
  }
  int32_t num_names() const {
    return generated_ != nullptr ? static_cast<int32_t>(generated_->size())
                                 : static_cast<int32_t>(ends32_.size() + ends64_.size());
  }
  // Rank (position among the distinct names, by byte order) of ordinal k.
  int32_t RankOf(int64_t ordinal) const {
    return generated_ != nullptr ? generated_->RankOf(ordinal) : rank_[static_cast<size_t>(ordinal)];
  }
  // RankOf(ordinal) given RankOf(ordinal - 1), as a reader going through
  // the ordinals in order has it: for generated names nearly always one
  // step (k-1's extensions lie between "j<k-1>" and "j<k>").
  int32_t RankAfter(int64_t ordinal, int32_t previous_rank) const {
    return generated_ != nullptr ? generated_->RankAfter(ordinal, previous_rank) : rank_[static_cast<size_t>(ordinal)];
  }
  // The name of a rank; the view stays valid as long as this JobNames (or
  // a copy of it) does.
  std::string_view Name(int32_t rank) const {
    if (generated_ != nullptr) return generated_->Name(rank);
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
  // "j0" .. "j<n-1>" without their characters. Ranks: the names sort as
  // the digit strings of 0 .. n-1, and the rank of k's string counts, for
  // each length l, the l-digit numbers m whose string sorts before it, which
  // is those with m * 10^(D-l) below k's digits padded with zeros to D (the
  // digits of n-1), plus the prefixes of k that padding makes equal to it
  // (k with trailing zeros dropped): a dozen multiplications, no table.
  // Names: a chunk of kChunk consecutive ranks is written out (a walk of the
  // digit trie from its first name) the first time one of its names is
  // asked for, and published with a compare-exchange, so that concurrent
  // readers (sweeps share an index) need no lock; a chunk is never changed
  // or freed before the GeneratedNames is.
  class GeneratedNames {
   public:
    explicit GeneratedNames(int64_t n);
    ~GeneratedNames();
    GeneratedNames(const GeneratedNames&) = delete;
    GeneratedNames& operator=(const GeneratedNames&) = delete;
    int64_t size() const { return n_; }
    int32_t RankOf(int64_t k) const;
    int32_t RankAfter(int64_t k, int32_t previous) const;
    // The number whose name has `rank` (0 <= rank < n).
    int64_t NumberAt(int64_t rank) const;
    // The names with m's digits as a prefix, m's included (m >= 1): m's
    // subtree of the digit trie, below n.
    int64_t Subtree(int64_t m) const;
    std::string_view Name(int32_t rank) const;

   private:
    static constexpr int kChunkBits = 12;
    static constexpr int64_t kChunk = int64_t{1} << kChunkBits;
    struct Chunk {
      std::string chars;
      std::vector<uint32_t> ends;  // of each name in chars
    };
    const Chunk& ChunkAt(int64_t c) const;
    int64_t n_;
    int64_t num_chunks_;
    int digits_;  // of n - 1 (1 when n <= 10)
    std::unique_ptr<std::atomic<const Chunk*>[]> chunks_;
  };

  uint64_t End(int32_t rank) const {
    const size_t r = static_cast<size_t>(rank);
    return ends64_.empty() ? ends32_[r] : ends64_[r];
  }

  std::string chars_;  // distinct names, sorted, concatenated
  // By rank: end of the name in chars_; 32-bit unless chars_ exceeds 4 GiB.
  std::vector<uint32_t> ends32_;
  std::vector<uint64_t> ends64_;
  std::vector<int32_t> rank_;   // by ordinal
  // Made by Sequential(): none of the above is used, and Find() reads the
  // number. Shared by copies (it is never changed but for its chunks).
  std::shared_ptr<const GeneratedNames> generated_;
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
