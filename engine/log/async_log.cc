#include "engine/log/async_log.h"

#include <cstring>
#include <string_view>
#include <utility>

namespace qs {
namespace {

// The chunk encoding: per record a tag byte, then fixed-size fields as raw
// bytes and strings as (uint32 length, bytes). Written and read by this file
// only, within one process.
enum Tag : char { kJob = 'J', kRejected = 'R', kLine = 'L', kCapacity = 'C', kEnd = 'E' };

template <typename T>
void Put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}
void PutStr(std::string& out, std::string_view s) {
  Put<uint32_t>(out, static_cast<uint32_t>(s.size()));
  out.append(s.data(), s.size());
}

class Reader {
 public:
  explicit Reader(const std::string& s) : p_(s.data()), end_(s.data() + s.size()) {}
  bool done() const { return p_ >= end_; }
  template <typename T>
  T Get() {
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  std::string_view Str() {
    const uint32_t n = Get<uint32_t>();
    std::string_view s(p_, n);
    p_ += n;
    return s;
  }

 private:
  const char* p_;
  const char* end_;
};

}  // namespace

AsyncLog::AsyncLog(std::ostream* out, SummaryBuilder* summary, size_t chunk_bytes, size_t ring_chunks)
    : out_(out),
      summary_(summary),
      chunk_bytes_(chunk_bytes == 0 ? 1 : chunk_bytes),
      full_(ring_chunks < 2 ? 2 : ring_chunks),
      empty_(full_.capacity()),
      thread_([this] { WriterLoop(); }) {
  current_ = std::make_unique<std::string>();
  current_->reserve(chunk_bytes_ + 4096);
  allocated_ = 1;
}

AsyncLog::~AsyncLog() {
  Flush();
  stop_.store(true, std::memory_order_release);
  signal_.fetch_add(1, std::memory_order_release);
  signal_.notify_one();
  thread_.join();
}

void AsyncLog::OnJob(const JobRecord& r) {
  std::string& c = *current_;
  c.push_back(kJob);
  Put<int64_t>(c, r.time);
  Put<int32_t>(c, r.job_slot);
  Put<int32_t>(c, r.preempted_for_slot);
  Put<uint8_t>(c, static_cast<uint8_t>(r.status));
  Put<uint8_t>(c, static_cast<uint8_t>(r.preemption));
  Put<uint8_t>(c, static_cast<uint8_t>(r.wait_cause));
  Put<uint8_t>(c, static_cast<uint8_t>((r.has_usage ? 1 : 0) | (r.has_preemption_summary ? 2 : 0) |
                                       (r.checkpointed_ms > 0 ? 4 : 0) |
                                       (r.status_reason == reasons::kInsufficientCapacity ? 8 : 0)));
  if (r.checkpointed_ms > 0) Put<int64_t>(c, r.checkpointed_ms);
  if (out_ == nullptr) {
    // Only the summary reads the record (SummaryBuilder::OnJob): a job is
    // found by its slot, by name only without one; the status reason (but
    // whether it is a capacity error: flag 8), the lenders' names and the
    // preemption summary's attempts are not read.
    if (r.job_slot < 0) PutStr(c, r.job_name);
    PutStr(c, r.share_name);
    if (r.has_usage) {
      PutStr(c, r.capacity_unit);
      Put<int64_t>(c, r.quantity);
      Put<uint32_t>(c, static_cast<uint32_t>(r.borrowed.size()));
      for (const BorrowedPart& b : r.borrowed) Put<int64_t>(c, b.quantity);
    }
    if (r.preemption != PreemptionType::kNone && r.preempted_for_slot < 0) PutStr(c, r.preempted_for);
    MaybeSubmit();
    return;
  }
  PutStr(c, r.job_name);
  PutStr(c, r.share_name);
  PutStr(c, r.status_reason);
  if (r.has_usage) {
    PutStr(c, r.capacity_unit);
    Put<int64_t>(c, r.quantity);
    Put<uint32_t>(c, static_cast<uint32_t>(r.borrowed.size()));
    for (const BorrowedPart& b : r.borrowed) {
      PutStr(c, b.from);
      PutStr(c, b.capacity_unit);
      Put<int64_t>(c, b.quantity);
    }
  }
  if (r.preemption != PreemptionType::kNone) PutStr(c, r.preempted_for);
  if (r.has_preemption_summary) {
    Put<int64_t>(c, r.preempted_attempt_count);
    Put<uint32_t>(c, static_cast<uint32_t>(r.recent_preempted_attempts.size()));
    for (const PreemptedAttempt& a : r.recent_preempted_attempts) {
      Put<int64_t>(c, a.started_at);
      Put<int64_t>(c, a.stopped_at);
      PutStr(c, a.status_reason);
    }
  }
  MaybeSubmit();
}

void AsyncLog::OnRejected(const RejectedRecord& r) {
  std::string& c = *current_;
  c.push_back(kRejected);
  Put<int64_t>(c, r.time);
  PutStr(c, r.action);
  PutStr(c, r.message);
  PutStr(c, r.path);
  MaybeSubmit();
}

void AsyncLog::OnSnapshot(const SnapshotRecord& r) {
  if (out_ == nullptr) return;  // the summary does not read snapshots
  std::string line;
  JsonlWriter::AppendSnapshot(line, r);
  current_->push_back(kLine);
  PutStr(*current_, line);
  MaybeSubmit();
}

void AsyncLog::OnCapacity(const CapacityRecord& r) {
  if (summary_ == nullptr) return;  // not a log line
  std::string& c = *current_;
  c.push_back(kCapacity);
  Put<int64_t>(c, r.time);
  PutStr(c, r.capacity_unit);
  Put<int64_t>(c, r.max_capacity);
  MaybeSubmit();
}

void AsyncLog::OnEnd(SimTime end_time) {
  if (summary_ == nullptr) return;
  current_->push_back(kEnd);
  Put<int64_t>(*current_, end_time);
  MaybeSubmit();
}

void AsyncLog::MaybeSubmit() {
  if (current_->size() >= chunk_bytes_) Submit();
}

void AsyncLog::Submit() {
  if (current_->empty()) return;
  // full_ holds every chunk but the one the engine thread owns, so this
  // push cannot fail.
  full_.TryPush(std::move(current_));
  submitted_.fetch_add(1, std::memory_order_relaxed);
  signal_.fetch_add(1, std::memory_order_release);
  signal_.notify_one();
  // A fresh chunk: a returned one, a new one while under the bound, or wait
  // for the writer thread to return one.
  while (!empty_.TryPop(current_)) {
    if (allocated_ < full_.capacity()) {
      current_ = std::make_unique<std::string>();
      current_->reserve(chunk_bytes_ + 4096);
      ++allocated_;
      return;
    }
    const int64_t w = written_.load(std::memory_order_acquire);
    if (empty_.TryPop(current_)) break;
    written_.wait(w, std::memory_order_acquire);
  }
}

void AsyncLog::Flush() {
  Submit();
  const int64_t id = flush_requests_.fetch_add(1, std::memory_order_release) + 1;
  signal_.fetch_add(1, std::memory_order_release);
  signal_.notify_one();
  for (int64_t done = flushes_done_.load(std::memory_order_acquire); done < id;
       done = flushes_done_.load(std::memory_order_acquire)) {
    flushes_done_.wait(done, std::memory_order_acquire);
  }
}

void AsyncLog::WriterLoop() {
  std::string text;
  while (true) {
    // Read the requests first, then drain: everything pushed before a flush
    // request or the stop is then in the ring when we drain it.
    const int64_t seen = signal_.load(std::memory_order_acquire);
    const int64_t flush_id = flush_requests_.load(std::memory_order_acquire);
    const bool stop = stop_.load(std::memory_order_acquire);
    Chunk c;
    while (full_.TryPop(c)) {
      text.clear();
      Decode(*c, text);
      if (out_ != nullptr && !text.empty()) out_->write(text.data(), static_cast<std::streamsize>(text.size()));
      c->clear();
      empty_.TryPush(std::move(c));  // capacity >= every chunk: cannot fail
      written_.fetch_add(1, std::memory_order_release);
      written_.notify_one();
    }
    if (flush_id != flushes_done_.load(std::memory_order_relaxed)) {
      if (out_ != nullptr) out_->flush();
      flushes_done_.store(flush_id, std::memory_order_release);
      flushes_done_.notify_one();
    }
    if (stop) return;
    signal_.wait(seen, std::memory_order_acquire);
  }
}

void AsyncLog::Decode(const std::string& chunk, std::string& text) {
  Reader in(chunk);
  std::vector<BorrowedPart> borrowed;
  std::vector<PreemptedAttempt> recent;
  while (!in.done()) {
    const char tag = in.Get<char>();
    if (tag == kJob) {
      JobRecord r;
      r.time = in.Get<int64_t>();
      r.job_slot = in.Get<int32_t>();
      r.preempted_for_slot = in.Get<int32_t>();
      r.status = static_cast<JobStatus>(in.Get<uint8_t>());
      r.preemption = static_cast<PreemptionType>(in.Get<uint8_t>());
      r.wait_cause = static_cast<WaitCause>(in.Get<uint8_t>());
      const uint8_t flags = in.Get<uint8_t>();
      r.has_usage = (flags & 1) != 0;
      r.has_preemption_summary = (flags & 2) != 0;
      r.checkpointed_ms = (flags & 4) != 0 ? in.Get<int64_t>() : 0;
      if (out_ == nullptr) {  // the summary's fields only (OnJob)
        r.status_reason = (flags & 8) != 0 ? reasons::kInsufficientCapacity : std::string_view();
        if (r.job_slot < 0) r.job_name = in.Str();
        r.share_name = in.Str();
        if (r.has_usage) {
          r.capacity_unit = in.Str();
          r.quantity = in.Get<int64_t>();
          borrowed.resize(in.Get<uint32_t>());
          for (BorrowedPart& b : borrowed) b.quantity = in.Get<int64_t>();
          r.borrowed = borrowed;
        }
        if (r.preemption != PreemptionType::kNone && r.preempted_for_slot < 0) r.preempted_for = in.Str();
        if (summary_ != nullptr) summary_->OnJob(r);
        continue;
      }
      r.job_name = in.Str();
      r.share_name = in.Str();
      r.status_reason = in.Str();
      if (r.has_usage) {
        r.capacity_unit = in.Str();
        r.quantity = in.Get<int64_t>();
        borrowed.resize(in.Get<uint32_t>());
        for (BorrowedPart& b : borrowed) {
          b.from = in.Str();
          b.capacity_unit = in.Str();
          b.quantity = in.Get<int64_t>();
        }
        r.borrowed = borrowed;
      }
      if (r.preemption != PreemptionType::kNone) r.preempted_for = in.Str();
      if (r.has_preemption_summary) {
        r.preempted_attempt_count = in.Get<int64_t>();
        recent.resize(in.Get<uint32_t>());
        for (PreemptedAttempt& a : recent) {
          a.started_at = in.Get<int64_t>();
          a.stopped_at = in.Get<int64_t>();
          a.status_reason = in.Str();
        }
        r.recent_preempted_attempts = recent;
      }
      if (out_ != nullptr) JsonlWriter::AppendJob(text, r);
      if (summary_ != nullptr) summary_->OnJob(r);
    } else if (tag == kRejected) {
      RejectedRecord r;
      r.time = in.Get<int64_t>();
      r.action = in.Str();
      r.message = in.Str();
      r.path = in.Str();
      if (out_ != nullptr) JsonlWriter::AppendRejected(text, r);
      if (summary_ != nullptr) summary_->OnRejected(r);
    } else if (tag == kCapacity) {
      CapacityRecord r;
      r.time = in.Get<int64_t>();
      r.capacity_unit = in.Str();
      r.max_capacity = in.Get<int64_t>();
      summary_->OnCapacity(r);
    } else if (tag == kEnd) {
      summary_->OnEnd(in.Get<int64_t>());
    } else {
      text.append(in.Str());
    }
  }
}

}  // namespace qs
