// File: engine/gen/generator.cc
//
// The jobs and their events (generator.h): each block's draws in the steady
// and stress profiles, arrivals through the diurnal intensity, the event
// stream (EventSource) with its follow-ups and limit changes, and the .qsb
// written as the events are drawn (GenerateQsb, GenerateQsbFile). The
// options and what is drawn before the jobs are in generator_setup.cc.
#include "engine/gen/generator.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "engine/gen/generator_setup.h"
#include "engine/gen/qsb.h"
#include "engine/util/atomic_file.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/enumerable_thread_specific.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/partitioner.h"
#include "oneapi/tbb/task_group.h"

namespace qs::gen {
namespace {

using generator_internal::kDay;
using generator_internal::kInstanceCounts;
using generator_internal::kPi;
using generator_internal::kUnitNames;
using generator_internal::MakeSetup;
using generator_internal::Pair;
using generator_internal::Rng;
using generator_internal::Setup;

// Cumulative intensity of the diurnal process, per unit base rate:
// L(t) = t + a*P/(2 pi) * (1 - cos(2 pi t / P)). Monotone for a < 1.
double Lambda(double t, double a) { return t + a * kDay / (2 * kPi) * (1 - std::cos(2 * kPi * t / kDay)); }

// Inverse of Lambda by Newton's method from `start` (t = x is within
// a P / pi of the answer).
double InverseLambda(double x, double a, double start) {
  double t = start;
  for (int i = 0; i < 40; ++i) {
    const double f = Lambda(t, a) - x;
    const double df = 1 + a * std::sin(2 * kPi * t / kDay);
    const double step = f / std::max(df, 1e-3);
    t -= step;
    if (std::fabs(step) < 1e-6) break;
  }
  return t;
}

SimTime Ms(double seconds) { return static_cast<SimTime>(std::llround(seconds * 1000.0)); }

// 40 bytes (1e7 of them are 400 MB of fresh pages for `gen`, whose time is
// largely the kernel's): small fields narrowed to what they hold.
struct GenJob {
  double op_time;  // arrival in "operational" time (homogeneous process)
  SimTime arrival = 0;
  SimTime run = 0;
  // Follow-up requests: -1 = none, else milliseconds after arrival (< 2 h).
  int32_t update_after = -1;
  int32_t terminate_after = -1;
  int8_t share = 0;  // < 20
  int8_t unit = 0;   // < 5
  int8_t count = 1;  // 1..16
  int8_t priority = 0;
  int8_t new_priority = 0;
  bool failed = false;
};
static_assert(sizeof(GenJob) == 40);

// What a block's jobs are drawn from.
struct Draw {
  const GenOptions& o;
  double rate;  // jobs per second
  double sigma;
  const std::vector<Pair>& pairs;
  const std::vector<double>& pair_cum;
  const std::vector<double>& count_cum;
};

// A job's run time from its normal draw (Rng::Normal's two uniforms).
SimTime RunMs(const Draw& d, double radius, double angle) {
  const double run = std::min(d.o.max_run_seconds, d.o.median_run_seconds * std::exp(d.sigma * Rng::NormalOf(radius, angle)));
  return Ms(std::max(1.0, run));
}

// The job's (share, type) pair and instance count; with kFull false only
// their two draws, to keep the generator in step.
template <bool kFull>
void DrawPlacement(const Draw& d, Rng& rng, GenJob& j) {
  if constexpr (kFull) {
    const Pair& pair = d.pairs[static_cast<size_t>(rng.Weighted(d.pair_cum))];
    j.share = static_cast<int8_t>(pair.share);
    j.unit = static_cast<int8_t>(pair.unit);
    j.count = static_cast<int8_t>(std::min(kInstanceCounts[rng.Weighted(d.count_cum)], pair.cap));
  } else {
    rng.Skip(2);
  }
}

// Jobs [b * kBlockJobs, end) of the steady profile; returns the block's span
// in operational time and adds the follow-ups its jobs ask for to
// *follow_ups. With kFull every field goes into jobs[0 .. end - b *
// kBlockJobs) (reset to GenJob{} by the caller); without, `jobs` is not
// written: the same draws in the same order (so the span is the same), but
// none of the arithmetic pass 1 of EventSource does not read (placement,
// run times but where a follow-up's time needs one), which made half of
// gen's time when each block was drawn twice in full.
template <bool kFull>
double SteadyBlock(const Draw& d, Rng& rng, int64_t b, int64_t end, GenJob* jobs, int64_t* follow_ups) {
  const GenOptions& o = d.o;
  const double rate = d.rate;
  // Bursts of 50-349 jobs (a sweep of runs, a deadline) at five times
  // the rate, starting so that about burst_fraction of the jobs are in
  // one. They raise the queues for minutes to an hour, not for days.
  int64_t burst_left = 0;
  double t = 0;
  int64_t follow = 0;
  GenJob spare;
  for (int64_t i = b * kBlockJobs; i < end; ++i) {
    GenJob& j = kFull ? jobs[i - b * kBlockJobs] : spare;
    if (burst_left > 0) {
      --burst_left;
    } else if (rng.Uniform() < o.burst_fraction / 200.0) {
      burst_left = 50 + rng.Below(300);
    }
    t += rng.Exponential() / rate * (burst_left > 0 ? 0.2 : 1.0);
    j.op_time = t;
    DrawPlacement<kFull>(d, rng, j);
    const double radius = rng.OpenUniform();
    const double angle = rng.Uniform();
    if (kFull) j.run = RunMs(d, radius, angle);
    // Most jobs at the queue's usual priority 5, 2% above it (urgent runs),
    // none below: in-share preemption then moves the few urgent jobs ahead
    // instead of churning every job. (Jobs below the usual priority are the
    // first victims of every arrival in a full share, and with 5% of them
    // at 0-4 and 10% urgent, long low-priority jobs restarted from zero over
    // and over: at 1e7 jobs the backlog grew for the whole 530-day span.)
    const double pr = rng.Uniform();
    j.priority = static_cast<int8_t>(pr < 0.98 ? 5 : 6 + rng.Below(4));
    j.failed = rng.Uniform() < 0.02;
    // Follow-ups come while the job is alive: before its first attempt
    // could end (a wait or a preemption only makes it later), the
    // update before the termination.
    const bool update = rng.Uniform() < o.priority_update_fraction;
    double update_at = 0;
    if (update) {
      update_at = rng.Uniform();
      j.new_priority = static_cast<int8_t>(5 + rng.Below(5));  // escalated or kept, never lowered
    }
    const bool terminate = rng.Uniform() < o.terminate_fraction;
    double terminate_at = 0;
    if (terminate) terminate_at = rng.Uniform();
    // Without kFull a follow-up's time is only compared with 0 (below), but
    // for an update before a termination, which needs the run time.
    if (!kFull && update && terminate) j.run = RunMs(d, radius, angle);
    j.update_after = update ? static_cast<int32_t>(update_at * static_cast<double>(std::min<SimTime>(j.run, 7'200'000))) : -1;
    j.terminate_after =
        terminate ? static_cast<int32_t>(terminate_at * static_cast<double>(std::min<SimTime>(j.run, 3'600'000))) : -1;
    if (j.update_after >= j.terminate_after && terminate) j.update_after = -1;
    follow += (j.update_after >= 0) + (j.terminate_after >= 0);
  }
  *follow_ups += follow;
  return t;
}

// The same for the stress profile (the shape of gen before profiles, byte
// for byte): a block is a burst, at ten times the rate, with probability
// burst_fraction.
template <bool kFull>
double StressBlock(const Draw& d, Rng& rng, int64_t b, int64_t end, GenJob* jobs, int64_t* follow_ups) {
  const GenOptions& o = d.o;
  const double rate = d.rate;
  const bool burst = rng.Uniform() < o.burst_fraction;
  double t = 0;
  int64_t follow = 0;
  GenJob spare;
  for (int64_t i = b * kBlockJobs; i < end; ++i) {
    GenJob& j = kFull ? jobs[i - b * kBlockJobs] : spare;
    t += rng.Exponential() / rate * (burst ? 0.1 : 1.0);
    j.op_time = t;
    DrawPlacement<kFull>(d, rng, j);
    const double radius = rng.OpenUniform();
    const double angle = rng.Uniform();
    if (kFull) j.run = RunMs(d, radius, angle);
    j.priority = static_cast<int8_t>(std::min<int64_t>(9, rng.Below(4) + rng.Below(4) + rng.Below(3)));
    j.failed = rng.Uniform() < 0.02;
    j.update_after = -1;
    if (rng.Uniform() < o.priority_update_fraction) {
      j.update_after = static_cast<int32_t>(Ms(rng.Uniform() * 7200));
      j.new_priority = static_cast<int8_t>(rng.Below(10));
    }
    j.terminate_after = -1;
    if (rng.Uniform() < o.terminate_fraction) j.terminate_after = static_cast<int32_t>(Ms(rng.Uniform() * 3600));
    follow += (j.update_after >= 0) + (j.terminate_after >= 0);
  }
  *follow_ups += follow;
  return t;
}

// write(2) all of `s`; false on an error.
bool WriteAll(int fd, std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    s.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// The first `bytes` of `from` appended to `to`: in the kernel where it can
// (copy_file_range), else through a buffer.
bool CopyAll(int from, int to, uint64_t bytes) {
  off_t in = 0;
  while (bytes > 0) {
    const ssize_t n = ::copy_file_range(from, &in, to, nullptr, bytes, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes -= static_cast<uint64_t>(n);
  }
  std::string buf(1 << 20, '\0');
  while (bytes > 0) {
    const ssize_t n = ::pread(from, buf.data(), std::min<uint64_t>(bytes, buf.size()), in);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (!WriteAll(to, std::string_view(buf.data(), static_cast<size_t>(n)))) return false;
    in += n;
    bytes -= static_cast<uint64_t>(n);
  }
  return true;
}

// One event of the generated scenario, before it becomes a request:
// a submission (its drawn job), a priority update or termination of job
// `job`, or limit change `job` (UpdateQuotaShare 2c and its way back 2c+1).
struct GenEvent {
  enum Kind : uint8_t { kSubmit, kUpdate, kTerminate, kLimit };
  SimTime time = 0;
  int64_t job = 0;
  GenJob j{};  // kSubmit: the job; kUpdate: j.new_priority
  Kind kind = kSubmit;
};

// The generated events in scenario order, drawn window by window so that
// memory does not grow with --jobs. The jobs of a block of kBlockJobs come
// from their own generator (seed, 1 + block); a job's arrival needs the
// operational time of every block before it (their spans), and the limit
// changes need the last arrival, so the blocks are drawn three times:
// for their spans, for the last arrival and the follow-up count, and then
// window by window for the events. Follow-ups wait in a heap until the
// first later submission: the order is (time, key) over follow-ups and
// limit changes (key: job * 2 + kind, limit changes after), and a
// follow-up goes before every submission that comes later than it.
class EventSource {
 public:
  // exact_span: find the last arrival by drawing every block a second time
  // (pass 2 below); otherwise only the last block is drawn for it, which
  // is the answer unless rounding to milliseconds put an earlier arrival
  // later, and span_ok() tells at the end whether it was.
  EventSource(const GenOptions& o, int64_t window_blocks, bool exact_span)
      : o_(o), setup_(o.seed), window_blocks_(window_blocks) {
    MakeSetup(o_, setup_);
    n_ = o_.jobs;
    nblocks_ = (n_ + kBlockJobs - 1) / kBlockJobs;
    Draw draw{o_, setup_.rate, setup_.sigma, setup_.pairs, setup_.pair_cum, setup_.count_cum};
    draw_ = std::make_unique<Draw>(draw);
    // Pass 1: each block's span, and the follow-ups it asks for.
    std::vector<double> span(static_cast<size_t>(nblocks_));
    std::vector<int64_t> follow(static_cast<size_t>(nblocks_));
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, nblocks_, 1), [&](const tbb::blocked_range<int64_t>& range) {
      for (int64_t b = range.begin(); b != range.end(); ++b) {
        span[static_cast<size_t>(b)] = DrawSpan(b, &follow[static_cast<size_t>(b)]);
      }
    }, tbb::simple_partitioner());
    offset_.assign(static_cast<size_t>(nblocks_), 0);
    for (int64_t b = 1; b < nblocks_; ++b) offset_[b] = offset_[b - 1] + span[b - 1];
    follow_ups_ = std::accumulate(follow.begin(), follow.end(), int64_t{0});
    // Pass 2: the last arrival (the largest, as arrivals are made monotone).
    // Arrivals grow with the operational time but for rounding, so the
    // last block holds the largest; the windows check it (span_ok()).
    const int64_t from = exact_span ? 0 : nblocks_ - 1;
    std::vector<SimTime> last(static_cast<size_t>(nblocks_ - from));
    tbb::enumerable_thread_specific<std::vector<GenJob>> scratch{std::vector<GenJob>(kBlockJobs)};
    tbb::parallel_for(tbb::blocked_range<int64_t>(from, nblocks_, 1), [&](const tbb::blocked_range<int64_t>& range) {
      std::vector<GenJob>& jobs = scratch.local();
      for (int64_t b = range.begin(); b != range.end(); ++b) {
        const int64_t end = DrawBlock(b, jobs.data());
        Arrivals(b, end, jobs.data());
        SimTime m = jobs[0].arrival;
        for (int64_t i = 1; i < end - b * kBlockJobs; ++i) m = std::max(m, jobs[i].arrival);
        last[static_cast<size_t>(b - from)] = m;
      }
    }, tbb::simple_partitioner());
    span_ = *std::max_element(last.begin(), last.end());
    MakeLimitChanges();
    asked_.assign(static_cast<size_t>(o_.units), 0);
  }

  const Scenario& head() const { return setup_.head; }
  // Every event: the quotaShares entries, the submissions, the follow-ups
  // and the limit changes.
  size_t num_events() const {
    return setup_.head.events.size() + static_cast<size_t>(n_ + follow_ups_) + limit_reqs_.size();
  }
  bool done() const { return next_job_ == n_ && pending_.empty() && next_limit_ == limit_extras_.size(); }
  // Once done(): whether the last arrival the limit changes were timed by
  // was the largest (always, with exact_span).
  bool span_ok() const { return raw_max_ == span_; }

  // Appends the next events to `out` until it holds `want` or none are left.
  void Next(std::vector<GenEvent>& out, size_t want) {
    while (out.size() < want && EmitOne(out)) {
    }
  }

  // The figures of OfferedLoad; valid once done().
  OfferedLoad Offered() const {
    OfferedLoad off;
    off.span = span_;
    for (int u = 0; u < o_.units; ++u) {
      const double cap = static_cast<double>(setup_.head.service_environment.capacity_limits[static_cast<size_t>(u)].max_capacity);
      off.utilisation.push_back(
          {kUnitNames[u], span_ > 0 ? asked_[static_cast<size_t>(u)] / (cap * static_cast<double>(span_) / 1000.0) : 0.0});
    }
    off.follow_ups = follow_ups_;
    return off;
  }

  // Event `e` as the scenario holds it, with the path "events[index]".
  ScenarioEvent Make(const GenEvent& e, uint64_t index) const {
    ScenarioEvent ev;
    ev.path = absl::StrCat("events[", index, "]");
    ev.time = e.time;
    switch (e.kind) {
      case GenEvent::kSubmit: {
        const GenJob& j = e.j;
        SubmitServiceJobRequest r;
        r.job_name = absl::StrCat("j", e.job);
        r.quota_share_name = setup_.share_names[static_cast<size_t>(j.share)];
        r.scheduling_priority = j.priority;
        r.instance_type = kUnitNames[j.unit];
        r.instance_count = j.count;
        r.run_time = j.run;
        r.outcome = j.failed ? JobOutcome::kFailed : JobOutcome::kSucceeded;
        if (j.failed) r.retry_attempts = 2;
        ev.request = std::move(r);
        break;
      }
      case GenEvent::kUpdate: {
        UpdateServiceJobRequest r;
        r.job_id = absl::StrCat("j", e.job);
        r.scheduling_priority = e.j.new_priority;
        ev.request = std::move(r);
        break;
      }
      case GenEvent::kTerminate: {
        TerminateServiceJobRequest r;
        r.job_id = absl::StrCat("j", e.job);
        r.reason = "cancelled by user (synthetic)";
        ev.request = std::move(r);
        break;
      }
      case GenEvent::kLimit:
        ev.request = limit_reqs_[static_cast<size_t>(e.job)];
        break;
    }
    return ev;
  }

  // The bytes QsbEventWriter::Put(Make(e, index)) writes; a submission
  // without building it.
  void Put(const GenEvent& e, uint64_t index, QsbEventWriter& w) const {
    if (e.kind != GenEvent::kSubmit) {
      w.Put(Make(e, index));
      return;
    }
    char name[24] = {'j'};
    const GenJob& j = e.j;
    QsbSubmitView v;
    v.time = j.arrival;
    v.index = index;
    v.job_name = std::string_view(name, static_cast<size_t>(std::to_chars(name + 1, name + sizeof(name), e.job).ptr - name));
    v.quota_share_name = setup_.share_names[static_cast<size_t>(j.share)];
    v.scheduling_priority = j.priority;
    if (j.failed) v.retry_attempts = 2;
    v.instance_type = kUnitNames[j.unit];
    v.instance_count = j.count;
    v.run_time = j.run;
    v.outcome = j.failed ? JobOutcome::kFailed : JobOutcome::kSucceeded;
    w.PutSubmit(v);
  }

 private:
  // A follow-up or limit change waiting for its turn.
  struct Pending {
    SimTime time;
    int64_t key;
    int8_t new_priority;
    bool operator>(const Pending& x) const { return time != x.time ? time > x.time : key > x.key; }
  };

  // The end (a job index) of block b.
  int64_t BlockEnd(int64_t b) const { return std::min(n_, (b + 1) * kBlockJobs); }
  // Block b's draws from its own generator, in its profile (SteadyBlock,
  // StressBlock): its span in operational time, its follow-ups into
  // *follow_ups, and with kFull its jobs into jobs[0..].
  template <bool kFull>
  double DrawAny(int64_t b, GenJob* jobs, int64_t* follow_ups) const {
    Rng rng(o_.seed, 1 + static_cast<uint64_t>(b));
    *follow_ups = 0;
    return o_.profile == Profile::kSteady ? SteadyBlock<kFull>(*draw_, rng, b, BlockEnd(b), jobs, follow_ups)
                                          : StressBlock<kFull>(*draw_, rng, b, BlockEnd(b), jobs, follow_ups);
  }
  // Draws block b into jobs[0..] (buffers are reused: every field starts
  // from GenJob{}); returns its end.
  int64_t DrawBlock(int64_t b, GenJob* jobs) const {
    const int64_t end = BlockEnd(b);
    std::fill(jobs, jobs + (end - b * kBlockJobs), GenJob{});  // the draw sets only what a job has
    int64_t follow_ups;
    DrawAny<true>(b, jobs, &follow_ups);
    return end;
  }
  // Block b's span and its follow-ups, without the jobs.
  double DrawSpan(int64_t b, int64_t* follow_ups) const { return DrawAny<false>(b, nullptr, follow_ups); }
  // Operational time -> wall time through the diurnal intensity, by Newton
  // from the block's previous answer (a step or two), so the result depends
  // only on the block, never on the thread count or the window.
  void Arrivals(int64_t b, int64_t end, GenJob* jobs) const {
    double x_prev = 0, t_prev = 0;
    for (int64_t i = b * kBlockJobs; i < end; ++i) {
      GenJob& j = jobs[i - b * kBlockJobs];
      const double x = j.op_time + offset_[static_cast<size_t>(b)];
      const double t = InverseLambda(x, o_.diurnal_amplitude, i == b * kBlockJobs ? x : t_prev + (x - x_prev));
      j.arrival = Ms(t);
      x_prev = x;
      t_prev = t;
    }
  }

  // The next window of blocks into window_, arrivals made monotone across
  // windows (rounding to milliseconds may undo InverseLambda's order by a
  // millisecond).
  void DrawWindow() {
    const int64_t first_block = next_job_ / kBlockJobs;
    const int64_t end_block = std::min(nblocks_, first_block + window_blocks_);
    window_first_ = first_block * kBlockJobs;
    window_.resize(static_cast<size_t>(std::min(n_, end_block * kBlockJobs) - window_first_));
    tbb::parallel_for(tbb::blocked_range<int64_t>(first_block, end_block, 1), [&](const tbb::blocked_range<int64_t>& range) {
      for (int64_t b = range.begin(); b != range.end(); ++b) {
        GenJob* jobs = window_.data() + (b * kBlockJobs - window_first_);
        const int64_t end = DrawBlock(b, jobs);
        Arrivals(b, end, jobs);
      }
    }, tbb::simple_partitioner());
    for (GenJob& j : window_) {
      raw_max_ = std::max(raw_max_, j.arrival);
      if (any_arrival_) j.arrival = std::max(j.arrival, last_arrival_);
      last_arrival_ = j.arrival;
      any_arrival_ = true;
    }
  }

  // Limit changes are temporary quota moves (a deadline, a maintenance
  // window): a share's limits go to 50-150% for half the time to the next
  // change, then back; in the steady profile for at most six hours. (Kept
  // for ever, a cut to half left a share that cannot borrow overloaded for
  // the rest of the span; kept for a quarter of the span, it left a backlog
  // of days.)
  void MakeLimitChanges() {
    Rng& cfg = setup_.cfg;
    for (int c = 0; c < o_.limit_changes; ++c) {
      const int s = static_cast<int>(cfg.Below(o_.shares));
      const SimTime at = span_ * (c + 1) / (o_.limit_changes + 1);
      SimTime window = span_ / (2 * (o_.limit_changes + 1));
      if (o_.profile == Profile::kSteady) window = std::min<SimTime>(window, 6 * 3'600'000);
      const SimTime back = at + window;
      UpdateQuotaShareRequest change, restore;
      change.quota_share_arn = setup_.share_names[static_cast<size_t>(s)];
      restore.quota_share_arn = setup_.share_names[static_cast<size_t>(s)];
      std::vector<CapacityLimit> cl, original;
      for (int u : setup_.share_units[static_cast<size_t>(s)]) {
        cl.push_back({kUnitNames[u], std::max<int64_t>(16, setup_.limit[s][u] * (50 + cfg.Below(101)) / 100)});
        original.push_back({kUnitNames[u], setup_.limit[s][u]});
      }
      change.capacity_limits = std::move(cl);
      restore.capacity_limits = std::move(original);
      limit_reqs_.push_back(std::move(change));
      limit_reqs_.push_back(std::move(restore));
      limit_extras_.push_back({at, 2 * n_ + 2 * c, 0});
      limit_extras_.push_back({back, 2 * n_ + 2 * c + 1, 0});
    }
    std::sort(limit_extras_.begin(), limit_extras_.end(), [](const Pending& a, const Pending& b) { return b > a; });
  }

  // Appends the next event; false when none is left.
  bool EmitOne(std::vector<GenEvent>& out) {
    const GenJob* job = nullptr;
    if (next_job_ < n_) {
      if (next_job_ >= window_first_ + static_cast<int64_t>(window_.size())) DrawWindow();
      job = &window_[static_cast<size_t>(next_job_ - window_first_)];
    }
    const Pending* extra = pending_.empty() ? nullptr : &pending_.top();
    const bool limit_first = next_limit_ < limit_extras_.size() && (extra == nullptr || *extra > limit_extras_[next_limit_]);
    if (limit_first) extra = &limit_extras_[next_limit_];
    if (extra != nullptr && (job == nullptr || extra->time < job->arrival)) {
      GenEvent e;
      e.time = extra->time;
      if (limit_first) {
        e.kind = GenEvent::kLimit;
        e.job = extra->key - 2 * n_;
        ++next_limit_;
      } else {
        e.kind = extra->key % 2 == 0 ? GenEvent::kUpdate : GenEvent::kTerminate;
        e.job = extra->key / 2;
        e.j.new_priority = extra->new_priority;
        pending_.pop();
      }
      out.push_back(e);
      return true;
    }
    if (job == nullptr) return false;
    const int64_t i = next_job_++;
    GenEvent e;
    e.time = job->arrival;
    e.job = i;
    e.j = *job;
    e.kind = GenEvent::kSubmit;
    out.push_back(e);
    if (job->update_after >= 0) pending_.push({job->arrival + job->update_after, i * 2, job->new_priority});
    if (job->terminate_after >= 0) pending_.push({job->arrival + job->terminate_after, i * 2 + 1, 0});
    asked_[static_cast<size_t>(job->unit)] += static_cast<double>(job->run) / 1000.0 * job->count;
    return true;
  }

  const GenOptions o_;
  Setup setup_;
  std::unique_ptr<Draw> draw_;
  const int64_t window_blocks_;
  int64_t n_ = 0, nblocks_ = 0, follow_ups_ = 0;
  SimTime span_ = 0;
  std::vector<double> offset_;  // per block, in operational time
  std::vector<UpdateQuotaShareRequest> limit_reqs_;
  std::vector<Pending> limit_extras_;  // in (time, key) order
  size_t next_limit_ = 0;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending_;
  std::vector<GenJob> window_;
  int64_t window_first_ = 0;  // job index of window_[0]
  int64_t next_job_ = 0;
  SimTime last_arrival_ = 0;
  bool any_arrival_ = false;
  SimTime raw_max_ = std::numeric_limits<SimTime>::min();  // of the arrivals drawn so far, before the max
  std::vector<double> asked_;  // instance-seconds per type, over the submissions so far
};

// QSB blocks encoded at once (in parallel, while the next ones are drawn)
// and then written. Two rounds are in memory at a time, so this sets gen's
// memory (BM_GenQsb's peak RSS) whatever --jobs is.
constexpr size_t kEncodeBlocks = 2;

// Encodes the scenario of `o` block by block as .qsb (kQsbVersion) and hands
// each block to `sink` in order; returns the prefix (QsbPrefix) that goes
// before them. Memory: a window of drawn jobs and kEncodeBlocks blocks of
// events and bytes, whatever --jobs is. `exact_span` as EventSource's;
// *span_ok tells whether the result stands (EncodeStreamed encodes again
// otherwise).
absl::StatusOr<std::string> EncodeOnce(const GenOptions& o, size_t block_events, int64_t window_blocks,
                                       bool exact_span, const std::function<absl::Status(std::string&&)>& sink,
                                       OfferedLoad* offered, bool* span_ok) {
  EventSource src(o, window_blocks, exact_span);
  const Scenario& head = src.head();
  const size_t prefix = head.events.size();  // the quotaShares entries
  const size_t nevents = src.num_events();
  block_events = std::max<size_t>(1, block_events);
  // A round: the events [next, goal) (kEncodeBlocks blocks), encoded in
  // parallel while the next round's events are drawn; buf holds its
  // generated events, from generated index `base` on.
  struct Round {
    size_t next = 0, goal = 0, base = 0;
    std::vector<GenEvent> buf;
    std::vector<std::string> blocks;
    std::vector<uint64_t> sums;
    std::vector<QsbBlockFacts> facts;
  };
  auto fill = [&](Round& r, size_t next) -> absl::Status {
    r.next = next;
    r.goal = std::min(nevents, next + kEncodeBlocks * block_events);
    r.base = next > prefix ? next - prefix : 0;
    r.buf.clear();
    if (r.goal > prefix) src.Next(r.buf, r.goal - prefix - r.base);
    if (prefix + r.base + r.buf.size() < r.goal) return absl::InternalError("gen: fewer events drawn than counted");
    return absl::OkStatus();
  };
  auto encode = [&](Round& r) {
    const size_t nb = (r.goal - r.next + block_events - 1) / block_events;
    r.blocks.assign(nb, std::string());
    r.sums.assign(nb, 0);
    r.facts.assign(nb, QsbBlockFacts());
    tbb::parallel_for(tbb::blocked_range<size_t>(0, nb, 1), [&](const tbb::blocked_range<size_t>& range) {
      for (size_t k = range.begin(); k != range.end(); ++k) {
        const size_t first = r.next + k * block_events, end = std::min(r.goal, first + block_events);
        QsbEventWriter w((end - first) * kQsbReserveBytesPerEvent);
        for (size_t g = first; g < end; ++g) {
          if (g < prefix) {
            w.Put(head.events[g]);
          } else {
            src.Put(r.buf[g - prefix - r.base], g - prefix, w);  // const: safe beside Next()
          }
        }
        r.blocks[k] = w.Take();
        r.facts[k] = w.TakeFacts();
        r.sums[k] = QsbChecksum(r.blocks[k]);
      }
    }, tbb::simple_partitioner());
  };
  std::vector<QsbBlockInfo> table;
  Round cur, following;
  if (absl::Status st = fill(cur, 0); !st.ok()) return st;
  while (cur.next < nevents) {
    tbb::task_group tg;
    tg.run([&] { encode(cur); });
    absl::Status drawn = cur.goal < nevents ? fill(following, cur.goal) : absl::OkStatus();
    tg.wait();
    if (!drawn.ok()) return drawn;
    for (size_t k = 0; k < cur.blocks.size(); ++k) {
      const size_t first = cur.next + k * block_events, end = std::min(cur.goal, first + block_events);
      table.push_back(QsbBlockInfo{end - first, cur.blocks[k].size(), cur.sums[k], std::move(cur.facts[k])});
      if (absl::Status st = sink(std::move(cur.blocks[k])); !st.ok()) return st;
    }
    if (cur.goal >= nevents) break;
    std::swap(cur, following);
  }
  if (!src.done()) return absl::InternalError("gen: more events drawn than counted");
  *span_ok = src.span_ok();
  if (offered != nullptr) *offered = src.Offered();
  return QsbPrefix(head, nevents, table);
}

// EncodeOnce, and once more with the exact last arrival should the quick
// one have missed it; `restart` drops what the sink took the first time.
absl::StatusOr<std::string> EncodeStreamed(const GenOptions& o, size_t block_events, int64_t window_blocks,
                                           bool exact_span, const std::function<absl::Status(std::string&&)>& sink,
                                           const std::function<absl::Status()>& restart, OfferedLoad* offered) {
  bool span_ok = false;
  absl::StatusOr<std::string> prefix = EncodeOnce(o, block_events, window_blocks, exact_span, sink, offered, &span_ok);
  if (!prefix.ok() || span_ok) return prefix;
  if (absl::Status st = restart(); !st.ok()) return st;
  prefix = EncodeOnce(o, block_events, window_blocks, /*exact_span=*/true, sink, offered, &span_ok);
  if (prefix.ok() && !span_ok) return absl::InternalError("gen: the last arrival moved");  // exact cannot miss it
  return prefix;
}

}  // namespace

absl::StatusOr<Scenario> Generate(const GenOptions& o, OfferedLoad* offered) {
  if (absl::Status s = ValidateGenOptions(o); !s.ok()) return s;
  for (bool exact : {false, true}) {
    EventSource src(o, kGenWindowBlocks, exact);
    Scenario sc = src.head();
    sc.events.reserve(src.num_events());
    std::vector<GenEvent> buf;
    uint64_t index = 0;
    while (!src.done()) {
      buf.clear();
      src.Next(buf, 1 << 16);
      for (const GenEvent& e : buf) sc.events.push_back(src.Make(e, index++));
    }
    if (!src.span_ok()) continue;
    if (offered != nullptr) *offered = src.Offered();
    return sc;
  }
  return absl::InternalError("gen: the last arrival moved");  // exact_span cannot miss it
}

absl::StatusOr<std::string> GenerateQsb(const GenOptions& o, size_t block_events, int64_t window_blocks,
                                        bool exact_span) {
  if (absl::Status s = ValidateGenOptions(o); !s.ok()) return s;
  std::string blocks;
  absl::StatusOr<std::string> prefix = EncodeStreamed(
      o, block_events, window_blocks, exact_span,
      [&](std::string&& b) {
        blocks += b;
        return absl::OkStatus();
      },
      [&] {
        blocks.clear();
        return absl::OkStatus();
      },
      nullptr);
  if (!prefix.ok()) return prefix.status();
  return *prefix + blocks;
}

absl::Status GenerateQsbFile(const GenOptions& o, const std::string& path, size_t block_events,
                             OfferedLoad* offered, std::atomic<int64_t>* bytes_written) {
  if (absl::Status s = ValidateGenOptions(o); !s.ok()) return s;
  // The blocks go to a scratch file beside `path` as they are encoded; the
  // prefix, which lists them, then starts `path`, and the blocks are copied
  // after it in the kernel (copy_file_range), so that no more than a few
  // blocks are ever in memory. For a device or a FIFO (/dev/null, a pipe)
  // the scratch file goes to the temporary folder instead.
  const std::string scratch =
      WritesInPlace(path) ? (std::filesystem::temp_directory_path() /
                             absl::StrCat("quotasim-gen-", ::getpid(), ".blocks")).string()
                          : path + ".blocks";
  const int bfd = ::open(scratch.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (bfd < 0) return absl::NotFoundError(absl::StrCat(path, ": cannot write"));
  ::unlink(scratch.c_str());  // gone with the descriptor, whatever happens
  auto close_b = absl::MakeCleanup([bfd] { ::close(bfd); });
  uint64_t bytes = 0;
  absl::StatusOr<std::string> prefix = EncodeStreamed(
      o, block_events, kGenWindowBlocks, /*exact_span=*/false,
      [&](std::string&& b) {
        if (!WriteAll(bfd, b)) return absl::DataLossError(absl::StrCat(path, ": write failed"));
        bytes += b.size();
        if (bytes_written) bytes_written->store(static_cast<int64_t>(bytes), std::memory_order_relaxed);
        return absl::OkStatus();
      },
      [&] {
        bytes = 0;
        if (::ftruncate(bfd, 0) != 0 || ::lseek(bfd, 0, SEEK_SET) != 0) {
          return absl::DataLossError(absl::StrCat(path, ": write failed"));
        }
        return absl::OkStatus();
      },
      offered);
  if (!prefix.ok()) return prefix.status();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(path, ": cannot write"));
  auto close_f = absl::MakeCleanup([fd] { ::close(fd); });
  if (!WriteAll(fd, *prefix) || !CopyAll(bfd, fd, bytes)) {
    return absl::DataLossError(absl::StrCat(path, ": write failed"));
  }
  return absl::OkStatus();
}

}  // namespace qs::gen
