#include "engine/fast/scenario_source.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/task_group.h"
#include "engine/model/validation.h"

namespace qs::engine_internal {

// Decodes a streamed scenario's blocks in batches: while the engine applies
// the events of one batch, a oneTBB task decodes the next (in parallel over
// its blocks when threads are free).
class ScenarioSource::BlockReader {
 public:
  BlockReader(const EventStream& stream, const std::vector<std::string>& units,
              const std::vector<std::string>& share_names, size_t batch_blocks)
      : stream_(stream), queue_name_(stream.head().job_queue.name), batch_(std::max<size_t>(1, batch_blocks)) {
    for (size_t i = 0; i < units.size(); ++i) unit_ids_[units[i]] = static_cast<int32_t>(i);
    for (size_t i = 0; i < share_names.size(); ++i) share_name_ids_[share_names[i]] = static_cast<int32_t>(i);
    cur_.resize(batch_);
    next_.resize(batch_);
    cur_checked_.resize(batch_);
    next_checked_.resize(batch_);
    next_status_.resize(batch_);
    StartDecode(0);
  }
  ~BlockReader() { tasks_.wait(); }

  // The next block's events and their checked_ entries (nullptr when the
  // block was read on the caller's thread); false at the end or on an
  // error (status()).
  bool Next(const ScenarioEvent*& begin, const ScenarioEvent*& end, const Checked*& checked) {
    while (true) {
      if (pos_ < cur_count_) {
        const std::vector<Checked>& flags = cur_checked_[pos_];
        const std::vector<ScenarioEvent>& evs = cur_[pos_++];
        begin = evs.data();
        end = evs.data() + evs.size();
        checked = flags.size() == evs.size() ? flags.data() : nullptr;
        if (begin != end) return true;
        continue;
      }
      if (next_first_ >= stream_.num_blocks() || !status_.ok()) return false;
      tasks_.wait();
      for (size_t i = 0; i < next_count_; ++i) {
        if (!next_status_[i].ok()) {
          status_ = next_status_[i];
          return false;
        }
      }
      std::swap(cur_, next_);
      std::swap(cur_checked_, next_checked_);
      cur_count_ = next_count_;
      pos_ = 0;
      StartDecode(next_first_ + next_count_);
    }
  }
  const absl::Status& status() const { return status_; }

  // The blocks from the batch being decoded on: the first error in order.
  absl::Status ReadRest() {
    tasks_.wait();
    if (!status_.ok()) return status_;
    for (size_t i = 0; i < next_count_; ++i) {
      if (!next_status_[i].ok()) return next_status_[i];
    }
    const size_t first = next_first_ + next_count_, n = stream_.num_blocks() > first ? stream_.num_blocks() - first : 0;
    std::vector<absl::Status> rest(n);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 1), [&](const tbb::blocked_range<size_t>& r) {
      std::vector<ScenarioEvent> events;
      for (size_t i = r.begin(); i != r.end(); ++i) rest[i] = stream_.ReadBlock(first + i, events);
    }, tbb::simple_partitioner());
    for (absl::Status& st : rest) {
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

 private:
  void StartDecode(size_t first) {
    next_first_ = first;
    next_count_ = first >= stream_.num_blocks() ? 0 : std::min(batch_, stream_.num_blocks() - first);
    if (next_count_ == 0) return;
    if (stream_.ReadOnCallerThread()) {
      for (size_t i = 0; i < next_count_; ++i) {
        next_status_[i] = stream_.ReadBlock(first + i, next_[i]);
        next_checked_[i].clear();  // checked on this thread: no gain in checking ahead
      }
      return;
    }
    tasks_.run([this, first] {
      tbb::parallel_for(tbb::blocked_range<size_t>(0, next_count_, 1), [&](const tbb::blocked_range<size_t>& r) {
        for (size_t i = r.begin(); i != r.end(); ++i) {
          next_status_[i] = stream_.ReadBlock(first + i, next_[i]);
          Check(next_[i], next_checked_[i]);
        }
      }, tbb::simple_partitioner());
    });
  }
  // Each event's checked_ entry: kNotPassed, or the unit and share name of
  // a submission whose request-only checks pass.
  void Check(const std::vector<ScenarioEvent>& events, std::vector<Checked>& checked) const {
    checked.resize(events.size());
    for (size_t k = 0; k < events.size(); ++k) {
      const auto* r = std::get_if<SubmitServiceJobRequest>(&events[k].request);
      if (r == nullptr || !SubmitRequestChecksPass(*r, queue_name_)) {
        checked[k] = Checked{kNotPassed, -1};
        continue;
      }
      auto it = unit_ids_.find(r->instance_type);
      checked[k].unit = it == unit_ids_.end() ? -1 : it->second;
      checked[k].share_name = -1;
      if (r->quota_share_name) {
        auto sit = share_name_ids_.find(*r->quota_share_name);
        if (sit != share_name_ids_.end()) checked[k].share_name = sit->second;
      }
    }
  }

  const EventStream& stream_;
  const std::string queue_name_;  // the stream's head's, for SubmitRequestChecksPass
  absl::flat_hash_map<std::string, int32_t> unit_ids_;        // CheckedUnit()'s
  absl::flat_hash_map<std::string, int32_t> share_name_ids_;  // CheckedShareName()'s
  const size_t batch_;
  std::vector<std::vector<ScenarioEvent>> cur_, next_;
  std::vector<std::vector<Checked>> cur_checked_, next_checked_;  // by block, beside cur_ and next_
  std::vector<absl::Status> next_status_;
  size_t cur_count_ = 0, pos_ = 0;
  size_t next_first_ = 0, next_count_ = 0;
  absl::Status status_;
  tbb::task_group tasks_;
};

ScenarioSource::ScenarioSource(const Scenario& scenario)
    : next_(scenario.events.data()), end_(scenario.events.data() + scenario.events.size()) {}

// One block per batch: the engine's thread is busy simulating, so one other
// thread decodes, and far faster than the engine consumes; each batch in
// memory costs a block of request objects (gen writes 4,096 events a block,
// about 460 bytes each).
ScenarioSource::ScenarioSource(const EventStream& stream, const ScenarioIndex& index)
    : stream_facts_(stream.facts()) {
  for (const ScenarioEvent& ev : index.share_requests) {
    const auto* r = std::get_if<CreateQuotaShareRequest>(&ev.request);
    if (r != nullptr && r->quota_share_name) share_names_.push_back(*r->quota_share_name);
  }
  std::sort(share_names_.begin(), share_names_.end());
  share_names_.erase(std::unique(share_names_.begin(), share_names_.end()), share_names_.end());
  blocks_ = std::make_unique<BlockReader>(stream, index.units, share_names_, 1);
}

int32_t ScenarioSource::ShareNameId(std::string_view name) const {
  auto it = std::lower_bound(share_names_.begin(), share_names_.end(), name);
  return it != share_names_.end() && *it == name ? static_cast<int32_t>(it - share_names_.begin()) : -1;
}

ScenarioSource::ScenarioSource(ScenarioSource&&) noexcept = default;
ScenarioSource& ScenarioSource::operator=(ScenarioSource&&) noexcept = default;
ScenarioSource::~ScenarioSource() = default;

absl::Status ScenarioSource::ReadUnread() {
  if (!blocks_ || stream_facts_ == nullptr) return status_;
  absl::Status st = blocks_->ReadRest();
  blocks_.reset();
  next_ = end_ = nullptr;
  checked_ = nullptr;
  return st;
}

void ScenarioSource::NextBlock() {
  if (!blocks_->Next(next_, end_, checked_)) {
    next_ = end_ = nullptr;
    checked_ = nullptr;
    status_ = blocks_->status();
    blocks_.reset();
  }
}

}  // namespace qs::engine_internal
