// File: engine/gen/qsb.cc
//
// The .qsb file around the codec of qsb_codec.h: the frame header and its
// checksums, the version 1 payload and the version 2 to 9 block table with
// its blocks (encoded and decoded in parallel), the duplicate-jobName
// check, reading and writing files, and QsbFileStream.
#include "engine/gen/qsb.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>

#include "absl/strings/str_cat.h"
#include "engine/gen/memory_budget.h"
#include "engine/gen/qsb_codec.h"
#include "engine/io/scenario_json.h"
#include "engine/util/strings.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/parallel_sort.h"
#include "oneapi/tbb/partitioner.h"

namespace qs::gen {
namespace {

using qsb_internal::Checksum;
using qsb_internal::Fnv1a;
using qsb_internal::GetEventInto;
using qsb_internal::GetHead;
using qsb_internal::kHeaderBytes;
using qsb_internal::kMagic;
using qsb_internal::PutEvent;
using qsb_internal::PutHead;
using qsb_internal::Reader;
using qsb_internal::Writer;

// The JSON parser's rule, which engines rely on (later requests name jobs by
// jobName): no two submissions share a jobName. Empty when none do, else the
// message for the duplicate that comes first in event order (as the parser).
// Names are hashed and the hashes sorted in parallel; only equal hashes are
// compared by name.
std::string DuplicateJobName(const Scenario& s) {
  struct Key {
    uint64_t hash;
    size_t event;  // SIZE_MAX: not a named submission
    bool operator<(const Key& o) const { return hash != o.hash ? hash < o.hash : event < o.event; }
  };
  const size_t n = s.events.size();
  auto name_of = [&](size_t i) -> const std::string* {
    const auto* r = std::get_if<SubmitServiceJobRequest>(&s.events[i].request);
    return r != nullptr && r->job_name ? &*r->job_name : nullptr;
  };
  std::vector<Key> keys(n);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 4096), [&](const tbb::blocked_range<size_t>& range) {
    for (size_t i = range.begin(); i != range.end(); ++i) {
      const std::string* name = name_of(i);
      keys[i] = name ? Key{Fnv1a(*name), i} : Key{0, SIZE_MAX};
    }
  });
  tbb::parallel_sort(keys.begin(), keys.end());
  size_t best_second = SIZE_MAX, best_first = 0;
  for (size_t a = 0; a < n;) {
    size_t b = a + 1;
    while (b < n && keys[b].hash == keys[a].hash) ++b;
    // Within one hash (sorted by event), the first event whose name equals
    // an earlier one's. (Many copies of one name stop at the second; only
    // distinct names with one hash are compared pairwise.)
    bool found = false;
    for (size_t y = a + 1; y < b && !found && keys[y].event != SIZE_MAX; ++y) {
      for (size_t x = a; x < y; ++x) {
        if (*name_of(keys[x].event) == *name_of(keys[y].event)) {
          if (keys[y].event < best_second) {
            best_second = keys[y].event;
            best_first = keys[x].event;
          }
          found = true;
          break;
        }
      }
    }
    a = b;
  }
  if (best_second == SIZE_MAX) return {};
  return absl::StrCat(s.events[best_second].path, ".request.jobName: duplicate jobName '",
                      *name_of(best_second), "' (first at ", s.events[best_first].path, ")");
}

// The file header (magic, version, payload size, checksum), with room
// reserved for the payload that follows it.
std::string FrameHeader(uint32_t version, uint64_t payload_bytes, uint64_t sum) {
  std::string out(kMagic, 4);
  out.reserve(kHeaderBytes + payload_bytes);
  auto put32 = [&](uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  auto put64 = [&](uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); };
  put32(version);
  put64(payload_bytes);
  put64(sum);
  return out;
}

std::string Frame(uint32_t version, std::string_view payload, uint64_t sum) {
  std::string out = FrameHeader(version, payload.size(), sum);
  out += payload;
  return out;
}

uint64_t Get64(std::string_view b, size_t at) {
  uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}

absl::StatusOr<Scenario> DecodeV1(std::string_view payload, std::string_view source, uint64_t memory_bytes,
                                  const std::function<absl::Status(const std::string&)>& err) {
  Reader rd(payload, kHeaderBytes, 1);
  Scenario s = GetHead(rd, source, 1);
  const uint64_t nevents = rd.U();
  // Every event takes at least 4 bytes: a count beyond that is corrupt.
  if (nevents > rd.left() / 4 + 1) rd.Fail("event count larger than the file can hold");
  if (!rd.ok()) return err(rd.error());
  if (absl::Status st = CheckMemoryBudget(nevents, memory_bytes, source); !st.ok()) return st;
  s.events.reserve(nevents);
  SimTime last = 0;
  int64_t submits = 0;
  for (uint64_t i = 0; i < nevents && rd.ok(); ++i) {
    ScenarioEvent ev;
    GetEventInto(rd, ev);
    if (ev.time < last) rd.Fail("events are not sorted by time");
    last = ev.time;
    if (std::holds_alternative<SubmitServiceJobRequest>(ev.request)) ++submits;
    s.events.push_back(std::move(ev));
  }
  if (rd.ok() && !rd.done()) rd.Fail("trailing bytes after the last event");
  if (rd.ok() && submits != s.submit_count) rd.Fail("submit count does not match the events");
  if (!rd.ok()) return err(rd.error());
  if (std::string dup = DuplicateJobName(s); !dup.empty()) return err(dup);
  return s;
}

// Version 2's head and block table. Block offsets are file offsets.
struct BlockRef {
  uint64_t count = 0, offset = 0, bytes = 0, sum = 0;
  uint64_t first = 0;  // index of its first event
  // Version 9: the block's facts (QsbBlockFacts), its units as indices into
  // TableFacts::units (ascending), and the number of named submissions
  // before it.
  uint64_t submits = 0, named = 0, named_before = 0;
  SimTime first_time = 0, last_time = 0;
  bool requests = false;
  std::vector<uint32_t> units;
};
// Version 9: the units the submissions name (sorted) and whether the named
// submissions are "j0", "j1", ... in order.
struct TableFacts {
  bool on = false;  // version 9 or later
  std::vector<std::string> units;
  bool generated_names = false;
};
struct V2Layout {
  Scenario head;
  uint64_t nevents = 0;
  std::vector<BlockRef> blocks;
  TableFacts table;
};

// `head` is the head's bytes (checksum already checked), found at file
// offset kHeaderBytes + 8; body_bytes follow it up to the end of the file.
absl::StatusOr<V2Layout> ParseV2Head(std::string_view head, uint64_t body_bytes, std::string_view source,
                                     uint32_t version, const std::function<absl::Status(const std::string&)>& err) {
  Reader rd(head, kHeaderBytes + 8, version);
  V2Layout out;
  out.head = GetHead(rd, source, version);
  out.nevents = rd.U();
  const uint64_t nblocks = rd.U();
  const uint64_t body_at = kHeaderBytes + 8 + head.size();
  if (nblocks > body_bytes / 4 + 1) rd.Fail("block count larger than the file can hold");
  uint64_t total = 0, offset = 0, named = 0;
  out.table.on = version >= 9;
  for (uint64_t b = 0; b < nblocks && rd.ok(); ++b) {
    BlockRef k;
    k.count = rd.U();
    k.bytes = rd.U();
    k.sum = rd.U();
    k.first = total;
    k.offset = body_at + offset;
    // Every event takes at least 4 bytes.
    if (k.bytes > body_bytes - offset) rd.Fail(absl::StrCat("event block ", b, " extends beyond the end (truncated?)"));
    else if (k.count > k.bytes / 4 + 1) rd.Fail(absl::StrCat("event block ", b, " counts more events than it can hold"));
    if (out.table.on) {
      k.submits = rd.U();
      k.named = rd.U();
      k.named_before = named;
      k.first_time = rd.Time("a block's first event time");
      const uint64_t span = rd.U();
      k.last_time = k.first_time + static_cast<SimTime>(std::min<uint64_t>(span, kMaxSimTime));
      k.requests = rd.B();
      const uint64_t nunits = rd.U();
      if (nunits > k.count) rd.Fail(absl::StrCat("event block ", b, " names more units than it has events"));
      for (uint64_t u = 0; u < nunits && rd.ok(); ++u) {
        const uint64_t i = rd.U();
        if (i > UINT32_MAX || (!k.units.empty() && i <= k.units.back())) {
          rd.Fail(absl::StrCat("event block ", b, ": its units are not ascending"));
        }
        k.units.push_back(static_cast<uint32_t>(i));
      }
      if (k.submits > k.count || k.named > k.submits) {
        rd.Fail(absl::StrCat("event block ", b, " counts more submissions than events"));
      } else if (k.last_time > kMaxSimTime || span > static_cast<uint64_t>(kMaxSimTime)) {
        rd.Fail(absl::StrCat("event block ", b, ": its last event time must be in [0, 1e12] seconds"));
      } else if (k.count == 0 && (k.first_time != 0 || span != 0 || k.requests)) {
        rd.Fail(absl::StrCat("event block ", b, " is empty but states events"));
      } else if (!out.blocks.empty() && k.count > 0 && out.blocks.back().count > 0 &&
                 k.first_time < out.blocks.back().last_time) {
        rd.Fail(absl::StrCat("events are not sorted by time (event block ", b, ")"));
      }
      named += k.named;
    }
    total += k.count;
    offset += k.bytes;
    out.blocks.push_back(std::move(k));
  }
  if (out.table.on && rd.ok()) {
    const uint64_t nunits = rd.U();
    if (nunits > rd.left()) rd.Fail("unit count larger than the head can hold");
    for (uint64_t u = 0; u < nunits && rd.ok(); ++u) {
      out.table.units.push_back(rd.S());
      if (u > 0 && out.table.units[u] <= out.table.units[u - 1]) rd.Fail("the block table's units are not sorted and distinct");
    }
    out.table.generated_names = rd.B();
    // Each listed unit is some block's, and each block's is listed.
    std::vector<bool> used(out.table.units.size());
    for (size_t b = 0; b < out.blocks.size() && rd.ok(); ++b) {
      for (uint32_t i : out.blocks[b].units) {
        if (i >= used.size()) rd.Fail(absl::StrCat("event block ", b, " names a unit the block table does not list"));
        else used[i] = true;
      }
    }
    if (rd.ok() && std::find(used.begin(), used.end(), false) != used.end()) {
      rd.Fail("the block table lists a unit no block names");
    }
    uint64_t submits = 0;
    for (const BlockRef& k : out.blocks) submits += k.submits;
    if (rd.ok() && submits != static_cast<uint64_t>(out.head.submit_count)) {
      rd.Fail("submit count does not match the block table");
    }
  }
  if (rd.ok() && !rd.done()) rd.Fail("trailing bytes after the block table");
  if (rd.ok() && total != out.nevents) rd.Fail("event count does not match the event blocks");
  if (rd.ok() && offset != body_bytes) rd.Fail("trailing bytes after the last event block");
  if (!rd.ok()) return err(rd.error());
  return out;
}

// The first event of block k that contradicts the table (an instance type
// it does not list; with generated names, a name off the sequence), by its
// path; empty when there is none.
std::string FirstEventOffTable(const ScenarioEvent* events, const BlockRef& k, const TableFacts& table) {
  uint64_t named = 0;
  for (uint64_t i = 0; i < k.count; ++i) {
    const ScenarioEvent& ev = events[i];
    const auto* r = std::get_if<SubmitServiceJobRequest>(&ev.request);
    if (r == nullptr) continue;
    if (const std::optional<std::string_view> unit = SubmitUnit(*r);
        unit && !std::binary_search(table.units.begin(), table.units.end(), *unit)) {
      return absl::StrCat(ev.path, ".request: instance type '", r->instance_type, "' is not among the block table's units");
    }
    if (!r->job_name) continue;
    if (table.generated_names && GeneratedJobNumber(*r->job_name) != static_cast<int64_t>(k.named_before + named)) {
      return absl::StrCat(ev.path, ".request.jobName: '", *r->job_name, "' where the block table states generated name j",
                          k.named_before + named);
    }
    ++named;
  }
  return {};
}

// The block's facts `f`, noted as the writer noted them while the block
// was decoded, against its entry in the table.
// `events` may be nullptr (a block decoded without keeping its events):
// an off-table name or type is then reported without naming the event.
std::string CheckAgainstTable(const ScenarioEvent* events, const QsbBlockFacts& f, const BlockRef& k, size_t b,
                              const TableFacts& table) {
  auto differs = [&](const char* what) {
    return absl::StrCat("event block ", b, " differs from its entry in the block table (", what, ")");
  };
  std::vector<uint32_t> units;
  bool listed = true;
  for (const std::string& u : f.units) {
    const auto it = std::lower_bound(table.units.begin(), table.units.end(), u);
    listed &= it != table.units.end() && *it == u;
    if (listed) units.push_back(static_cast<uint32_t>(it - table.units.begin()));
  }
  const bool names = !table.generated_names || f.named == 0 ||
                     (f.generated_names && f.first_job == static_cast<int64_t>(k.named_before));
  if (!listed || !names) {
    std::string e = events != nullptr ? FirstEventOffTable(events, k, table) : std::string();
    return e.empty() ? differs("job names") : e;
  }
  std::sort(units.begin(), units.end());
  if (f.submits != k.submits || f.named != k.named) return differs("submissions");
  if (f.requests != k.requests) return differs("requests other than job requests");
  if (units != k.units) return differs("instance types");
  if (k.count > 0 && (f.first_time != k.first_time || f.last_time != k.last_time)) {
    return differs("first and last event times");
  }
  return {};
}

// Decodes block b (`bytes`, as found at k.offset) into out[0..k.count),
// noting its facts (as the writer did) into `facts` for the checks across
// blocks: empty, or the error (without the source). From version 9
// (table.on), the block must be what its entry in the block table states.
// With out == nullptr, each event is decoded into one scratch event and
// those that are not job requests are appended to *requests (the index's
// read of a request block), after the same checks.
std::string DecodeBlock(std::string_view bytes, const BlockRef& k, size_t b, ScenarioEvent* out, QsbBlockFacts& facts,
                        uint32_t version, const TableFacts& table, std::vector<ScenarioEvent>* requests = nullptr) {
  if (Checksum(bytes, version) != k.sum) return absl::StrCat("checksum mismatch in event block ", b, " (corrupted file)");
  Reader br(bytes, k.offset, version);
  ScenarioEvent scratch;
  for (uint64_t i = 0; i < k.count && br.ok(); ++i) {
    ScenarioEvent& ev = out != nullptr ? out[i] : scratch;
    GetEventInto(br, ev);
    if (i > 0 && ev.time < facts.last_time) br.Fail("events are not sorted by time");
    facts.NoteEvent(ev);
    if (out == nullptr && !IsJobRequest(ev.request)) requests->push_back(ev);
  }
  if (br.ok() && !br.done()) br.Fail(absl::StrCat("trailing bytes in event block ", b));
  if (!br.ok()) return br.error();
  return table.on ? CheckAgainstTable(out, facts, k, b, table) : std::string();
}

absl::StatusOr<Scenario> DecodeV2(std::string_view payload, uint64_t head_sum, std::string_view source,
                                  uint32_t version, uint64_t memory_bytes,
                                  const std::function<absl::Status(const std::string&)>& err) {
  if (payload.size() < 8) return err("payload shorter than its head length (truncated?)");
  const uint64_t head_bytes = Get64(payload, 0);
  if (head_bytes > payload.size() - 8) return err("head length beyond the end (truncated?)");
  const std::string_view head = payload.substr(8, head_bytes);
  if (Checksum(head, version) != head_sum) return err("checksum mismatch in the head (corrupted file)");
  absl::StatusOr<V2Layout> layout = ParseV2Head(head, payload.size() - 8 - head_bytes, source, version, err);
  if (!layout.ok()) return layout.status();
  Scenario s = std::move(layout->head);
  const std::vector<BlockRef>& blocks = layout->blocks;
  if (absl::Status st = CheckMemoryBudget(layout->nevents, memory_bytes, source); !st.ok()) return st;
  // The blocks decode independently, in parallel, each into its own slice
  // of the events; errors are reported for the first bad block, so the
  // result (and the message) never depends on the thread count.
  s.events.resize(layout->nevents);
  std::vector<std::string> errors(blocks.size());
  std::vector<QsbBlockFacts> facts(blocks.size());
  tbb::parallel_for(tbb::blocked_range<size_t>(0, blocks.size(), 1), [&](const tbb::blocked_range<size_t>& range) {
    for (size_t b = range.begin(); b != range.end(); ++b) {
      const BlockRef& k = blocks[b];
      errors[b] = DecodeBlock(payload.substr(k.offset - kHeaderBytes, k.bytes), k, b, &s.events[k.first], facts[b],
                              version, layout->table);
    }
  }, tbb::simple_partitioner());
  int64_t submits = 0;
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (!errors[b].empty()) return err(errors[b]);
    if (b > 0 && blocks[b].count > 0 && blocks[b - 1].count > 0 && facts[b].first_time < facts[b - 1].last_time) {
      return err(absl::StrCat("events are not sorted by time (event block ", b, ")"));
    }
    submits += facts[b].submits;
  }
  if (submits != s.submit_count) return err("submit count does not match the events");
  if (std::string dup = DuplicateJobName(s); !dup.empty()) return err(dup);
  return s;
}

}  // namespace

std::string EncodeQsb(const Scenario& s, uint32_t version, size_t block_events) {
  if (version == 1) {
    Writer head;
    head.version = 1;
    PutHead(head, s, s.events.size(), 1);
    for (const ScenarioEvent& ev : s.events) PutEvent(head, ev);
    return Frame(1, head.out, Checksum(head.out, 1));
  }
  return EncodeQsbEvents(
      s, s.events.size(),
      [&](size_t first, size_t end, QsbEventWriter& w) {
        for (size_t i = first; i < end; ++i) w.Put(s.events[i]);
      },
      block_events, version);
}

uint64_t QsbChecksum(std::string_view bytes, uint32_t version) { return Checksum(bytes, version); }

std::string QsbPrefix(const Scenario& head_of, size_t nevents, const std::vector<QsbBlockInfo>& blocks,
                      uint32_t version) {
  Writer head;
  PutHead(head, head_of, nevents, version);
  head.U(blocks.size());
  // Version 9: the units all blocks name, sorted; each block's as indices.
  std::vector<std::string> units;
  if (version >= 9) {
    for (const QsbBlockInfo& b : blocks) units.insert(units.end(), b.facts.units.begin(), b.facts.units.end());
    std::sort(units.begin(), units.end());
    units.erase(std::unique(units.begin(), units.end()), units.end());
  }
  uint64_t total = 0, named = 0;
  bool generated = true;
  for (const QsbBlockInfo& b : blocks) {
    head.U(b.events);
    head.U(b.bytes);
    head.U(b.sum);
    total += b.bytes;
    if (version < 9) continue;
    const QsbBlockFacts& f = b.facts;
    head.U(f.submits);
    head.U(f.named);
    head.I(f.first_time);
    head.U(static_cast<uint64_t>(f.last_time - f.first_time));
    head.B(f.requests);
    std::vector<uint64_t> ids;
    for (const std::string& u : f.units) {
      ids.push_back(static_cast<uint64_t>(std::lower_bound(units.begin(), units.end(), u) - units.begin()));
    }
    std::sort(ids.begin(), ids.end());
    head.U(ids.size());
    for (uint64_t i : ids) head.U(i);
    if (f.named > 0 && (!f.generated_names || f.first_job != static_cast<int64_t>(named))) generated = false;
    named += f.named;
  }
  if (version >= 9) {
    head.U(units.size());
    for (const std::string& u : units) head.S(u);
    head.B(generated);
  }
  // payload = head length | head | blocks.
  const uint64_t head_bytes = head.out.size();
  std::string prefix = FrameHeader(version, 8 + head_bytes + total, Checksum(head.out, version));
  prefix.append(reinterpret_cast<const char*>(&head_bytes), 8);
  prefix += head.out;
  prefix.shrink_to_fit();  // FrameHeader reserved room for the whole file
  return prefix;
}

QsbParts EncodeQsbParts(const Scenario& head_of, size_t nevents, const QsbEventRange& events,
                        size_t block_events, uint32_t version) {
  // Version 2: events in blocks of block_events, encoded in parallel.
  block_events = std::max<size_t>(1, block_events);
  const size_t nblocks = (nevents + block_events - 1) / block_events;
  std::vector<std::string> blocks(nblocks);
  std::vector<uint64_t> sums(nblocks);  // hashed here, in parallel
  std::vector<QsbBlockFacts> facts(nblocks);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, nblocks, 1), [&](const tbb::blocked_range<size_t>& range) {
    for (size_t b = range.begin(); b != range.end(); ++b) {
      const size_t first = b * block_events, end = std::min(nevents, (b + 1) * block_events);
      QsbEventWriter w((end - first) * kQsbReserveBytesPerEvent, version);
      events(first, end, w);
      blocks[b] = w.Take();
      facts[b] = w.TakeFacts();
      sums[b] = Checksum(blocks[b], version);
    }
  }, tbb::simple_partitioner());
  std::vector<QsbBlockInfo> table(nblocks);
  for (size_t b = 0; b < nblocks; ++b) {
    table[b] = QsbBlockInfo{std::min(nevents, (b + 1) * block_events) - b * block_events, blocks[b].size(), sums[b],
                            std::move(facts[b])};
  }
  QsbParts parts;
  parts.prefix = QsbPrefix(head_of, nevents, table, version);
  parts.blocks = std::move(blocks);
  return parts;
}

std::string EncodeQsbEvents(const Scenario& head_of, size_t nevents, const QsbEventRange& events,
                            size_t block_events, uint32_t version) {
  QsbParts parts = EncodeQsbParts(head_of, nevents, events, block_events, version);
  // The frame is built in place (one copy of the blocks, each freed once
  // appended).
  std::string out = std::move(parts.prefix);
  for (std::string& b : parts.blocks) {
    out += b;
    std::string().swap(b);
  }
  return out;
}

absl::Status WriteQsbParts(QsbParts parts, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::NotFoundError(absl::StrCat(path, ": cannot write"));
  out.write(parts.prefix.data(), static_cast<std::streamsize>(parts.prefix.size()));
  for (std::string& b : parts.blocks) {
    out.write(b.data(), static_cast<std::streamsize>(b.size()));
    std::string().swap(b);
  }
  out.flush();
  if (!out) return absl::DataLossError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

absl::StatusOr<Scenario> DecodeQsb(std::string_view bytes, std::string_view source, uint64_t memory_bytes) {
  auto err = [&](const std::string& m) -> absl::Status {
    return absl::InvalidArgumentError(absl::StrCat(Sv(source), ": ", m));
  };
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, 4) != 0) {
    return err("not a .qsb file (bad magic)");
  }
  uint32_t version;
  std::memcpy(&version, bytes.data() + 4, 4);
  const uint64_t size = Get64(bytes, 8);
  const uint64_t sum = Get64(bytes, 16);
  if (version < 1 || version > kQsbVersion) {
    return err(absl::StrCat("unsupported .qsb version ", version, " (this build reads 1 to ", kQsbVersion, ")"));
  }
  if (size != bytes.size() - kHeaderBytes) return err("payload size does not match the file size (truncated?)");
  const std::string_view payload = bytes.substr(kHeaderBytes);
  if (version == 1) {
    if (Checksum(payload, 1) != sum) return err("checksum mismatch (corrupted file)");
    return DecodeV1(payload, source, memory_bytes, err);
  }
  return DecodeV2(payload, sum, source, version, memory_bytes, err);
}

absl::Status WriteQsbFile(const Scenario& s, const std::string& path) {
  return WriteQsbBytes(EncodeQsb(s), path);
}

absl::Status WriteQsbBytes(std::string_view bytes, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::NotFoundError(absl::StrCat(path, ": cannot write"));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) return absl::DataLossError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

absl::StatusOr<Scenario> ReadQsbFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open scenario file"));
  const std::streamoff size = in.tellg();
  if (size < 0) return absl::DataLossError(absl::StrCat(path, ": cannot read"));
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  in.read(bytes.data(), size);
  if (in.gcount() != size) return absl::DataLossError(absl::StrCat(path, ": read failed"));
  return DecodeQsb(bytes, path, PhysicalMemoryBytes());
}

struct QsbFileStream::Impl {
  std::string source;
  int fd = -1;         // Open(): the file
  std::string bytes;   // FromBytes(): the whole file
  std::vector<BlockRef> blocks;
  TableFacts table;
  std::optional<StreamFacts> facts;  // version 9 with generated names
  bool v1 = false;
  uint32_t version = kQsbVersion;
  Scenario v1_whole;   // version 1: the decoded file, served as one block

  ~Impl() {
    if (fd >= 0) ::close(fd);
  }
  absl::Status Err(const std::string& m) const {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", m));
  }
  // n bytes at `offset` into out (the caller checked the range).
  absl::Status Read(uint64_t offset, uint64_t n, std::string& out) const {
    if (fd < 0) {
      out.assign(bytes, offset, n);
      return absl::OkStatus();
    }
    out.resize(n);
    uint64_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(fd, out.data() + done, n - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        return absl::DataLossError(absl::StrCat(source, ": read failed at byte offset ", offset + done,
                                                got < 0 ? absl::StrCat(": ", std::strerror(errno)) : " (file shrank?)"));
      }
      done += static_cast<uint64_t>(got);
    }
    return absl::OkStatus();
  }
};

QsbFileStream::QsbFileStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
QsbFileStream::~QsbFileStream() = default;

absl::StatusOr<std::unique_ptr<QsbFileStream>> QsbFileStream::OpenImpl(std::unique_ptr<Impl> impl, uint64_t size,
                                                                     uint64_t memory_bytes) {
  auto make = [](std::unique_ptr<Impl> i, Scenario head, size_t n) {
    auto s = std::unique_ptr<QsbFileStream>(new QsbFileStream(std::move(i)));
    s->head_ = std::move(head);
    s->nevents_ = n;
    return s;
  };
  auto err = [&](const std::string& m) { return impl->Err(m); };
  std::string header;
  if (size < kHeaderBytes) return err("not a .qsb file (bad magic)");
  if (absl::Status st = impl->Read(0, kHeaderBytes, header); !st.ok()) return st;
  if (std::memcmp(header.data(), kMagic, 4) != 0) return err("not a .qsb file (bad magic)");
  uint32_t version;
  std::memcpy(&version, header.data() + 4, 4);
  const uint64_t payload = Get64(header, 8);
  const uint64_t sum = Get64(header, 16);
  if (version < 1 || version > kQsbVersion) {
    return err(absl::StrCat("unsupported .qsb version ", version, " (this build reads 1 to ", kQsbVersion, ")"));
  }
  if (payload != size - kHeaderBytes) return err("payload size does not match the file size (truncated?)");
  impl->version = version;
  if (version == 1) {
    std::string all;
    if (absl::Status st = impl->Read(0, size, all); !st.ok()) return st;
    absl::StatusOr<Scenario> s = DecodeQsb(all, impl->source, memory_bytes);
    if (!s.ok()) return s.status();
    impl->v1 = true;
    impl->v1_whole = *std::move(s);
    Scenario head = impl->v1_whole;
    head.events.clear();
    const size_t n = impl->v1_whole.events.size();
    return make(std::move(impl), std::move(head), n);
  }
  if (payload < 8) return err("payload shorter than its head length (truncated?)");
  std::string len;
  if (absl::Status st = impl->Read(kHeaderBytes, 8, len); !st.ok()) return st;
  const uint64_t head_bytes = Get64(len, 0);
  if (head_bytes > payload - 8) return err("head length beyond the end (truncated?)");
  std::string head;
  if (absl::Status st = impl->Read(kHeaderBytes + 8, head_bytes, head); !st.ok()) return st;
  if (Checksum(head, version) != sum) return err("checksum mismatch in the head (corrupted file)");
  absl::StatusOr<V2Layout> layout = ParseV2Head(head, payload - 8 - head_bytes, impl->source, version, err);
  if (!layout.ok()) return layout.status();
  if (absl::Status st = CheckMemoryBudget(static_cast<uint64_t>(std::max<int64_t>(0, layout->head.submit_count)),
                                          memory_bytes, impl->source, kMinStreamRunBytesPerJob, "job submissions");
      !st.ok()) {
    return st;
  }
  impl->blocks = std::move(layout->blocks);
  impl->table = std::move(layout->table);
  if (impl->table.on && impl->table.generated_names) {
    StreamFacts& f = impl->facts.emplace();
    f.submit_units = impl->table.units;
    for (size_t b = 0; b < impl->blocks.size(); ++b) {
      f.named_submissions += static_cast<int64_t>(impl->blocks[b].named);
      if (impl->blocks[b].requests) f.request_blocks.push_back(b);
    }
  }
  return make(std::move(impl), std::move(layout->head), layout->nevents);
}

absl::StatusOr<std::unique_ptr<QsbFileStream>> QsbFileStream::Open(const std::string& path, uint64_t memory_bytes) {
  auto impl = std::make_unique<Impl>();
  impl->source = path;
  impl->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (impl->fd < 0) return absl::NotFoundError(absl::StrCat(path, ": cannot open scenario file"));
  struct stat st;
  if (::fstat(impl->fd, &st) != 0 || st.st_size < 0) return absl::DataLossError(absl::StrCat(path, ": cannot read"));
  return OpenImpl(std::move(impl), static_cast<uint64_t>(st.st_size), memory_bytes);
}

absl::StatusOr<std::unique_ptr<QsbFileStream>> QsbFileStream::FromBytes(std::string bytes, std::string_view source) {
  auto impl = std::make_unique<Impl>();
  impl->source = std::string(source);
  const uint64_t size = bytes.size();
  impl->bytes = std::move(bytes);
  return OpenImpl(std::move(impl), size, 0);
}

size_t QsbFileStream::num_blocks() const { return impl_->v1 ? 1 : impl_->blocks.size(); }

absl::Status QsbFileStream::ReadBlock(size_t b, std::vector<ScenarioEvent>& out) const {
  if (impl_->v1) {
    out = impl_->v1_whole.events;
    return absl::OkStatus();
  }
  const BlockRef& k = impl_->blocks.at(b);
  thread_local std::string bytes;
  if (absl::Status st = impl_->Read(k.offset, k.bytes, bytes); !st.ok()) return st;
  out.resize(k.count);
  QsbBlockFacts facts;
  if (std::string e = DecodeBlock(bytes, k, b, out.data(), facts, impl_->version, impl_->table); !e.empty()) {
    return impl_->Err(e);
  }
  return absl::OkStatus();
}

absl::Status QsbFileStream::ReadBlockRequests(size_t b, std::vector<ScenarioEvent>& out) const {
  if (impl_->v1) return EventStream::ReadBlockRequests(b, out);
  const BlockRef& k = impl_->blocks.at(b);
  thread_local std::string bytes;
  if (absl::Status st = impl_->Read(k.offset, k.bytes, bytes); !st.ok()) return st;
  out.clear();
  QsbBlockFacts facts;
  if (DecodeBlock(bytes, k, b, nullptr, facts, impl_->version, impl_->table, &out).empty()) return absl::OkStatus();
  // A check failed: the block read whole gives ReadBlock's error, word for word.
  return EventStream::ReadBlockRequests(b, out);
}

const StreamFacts* QsbFileStream::facts() const { return impl_->facts ? &*impl_->facts : nullptr; }

bool IsQsbPath(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".qsb") == 0;
}

absl::StatusOr<Scenario> LoadAnyScenarioFile(const std::string& path) {
  return LoadAnyScenarioFile(path, PhysicalMemoryBytes());
}

absl::StatusOr<Scenario> LoadAnyScenarioFile(const std::string& path, uint64_t memory_bytes) {
  if (IsQsbPath(path)) return ReadQsbFile(path);
  struct stat st;
  if (memory_bytes > 0 && ::stat(path.c_str(), &st) == 0 && st.st_size > 0) {
    if (absl::Status s = CheckMemoryBudget(static_cast<uint64_t>(st.st_size), memory_bytes, path,
                                           kMinJsonBytesPerFileByte, "bytes of JSON");
        !s.ok()) {
      return s;
    }
  }
  return LoadScenarioFile(path);
}

}  // namespace qs::gen
