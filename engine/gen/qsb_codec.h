// File: engine/gen/qsb_codec.h
//
// The byte-level codec of the .qsb format (qsb.h), internal to engine/gen:
// the varint Writer and the checked Reader, the views a submission is
// written from, and the encoders and decoders of the head and of one event
// (qsb_codec.cc, where RequestFields lists each request's fields once for
// both directions). qsb.cc frames them: the file header and checksums, the
// version 2 block table, the blocks encoded and decoded in parallel, and
// QsbFileStream.
//
// Writer and Reader are defined here, in the class, so that their field
// writers and readers (Reader::U, Reader::B, ...) stay inlinable in the
// per-event code of both files.
//
// Thread-compatible: a Writer or a Reader is used by one thread at a time.
#ifndef QS_ENGINE_GEN_QSB_CODEC_H_
#define QS_ENGINE_GEN_QSB_CODEC_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "engine/gen/qsb.h"
#include "engine/model/scenario.h"

namespace qs::gen::qsb_internal {

inline constexpr char kMagic[4] = {'Q', 'S', 'B', '1'};
inline constexpr size_t kHeaderBytes = 4 + 4 + 8 + 8;
inline constexpr int64_t kInt32Max = 2147483647;

inline uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// The checksum of versions 8 and later (qsb.h): four independent lanes over
// little-endian 8-byte words, each word folded in by xxHash64's round
// (acc = rotl(acc + w * P2, 31) * P1, xxHash's primes), the lanes merged
// with the length, the last 0-31 bytes folded one word and then one byte at
// a time, and a final avalanche. It reads 8 bytes per step in four
// independent chains where FNV-1a reads one byte per dependent multiply:
// about 20x faster here (0.06 s against 1.36 s over a 634 MB file made by
// `gen --jobs 10000000`), which mattered because gen, the index pass and
// the streamed run each hash every byte of the file. Any one flipped bit
// changes the sum (each step is a bijection of the lane); it is not
// cryptographic, as FNV-1a was not.
inline uint64_t Rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t LoadLe64(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
  return w;
}
inline uint64_t LaneSum(std::string_view s) {
  constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL, kP2 = 0xC2B2AE3D27D4EB4FULL, kP3 = 0x165667B19E3779F9ULL;
  uint64_t a0 = kP1 + kP2, a1 = kP2, a2 = 0, a3 = 0 - kP1;
  const char* p = s.data();
  const size_t n = s.size();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = Rotl64(a0 + LoadLe64(p + i) * kP2, 31) * kP1;
    a1 = Rotl64(a1 + LoadLe64(p + i + 8) * kP2, 31) * kP1;
    a2 = Rotl64(a2 + LoadLe64(p + i + 16) * kP2, 31) * kP1;
    a3 = Rotl64(a3 + LoadLe64(p + i + 24) * kP2, 31) * kP1;
  }
  uint64_t h = Rotl64(a0, 1) + Rotl64(a1, 7) + Rotl64(a2, 12) + Rotl64(a3, 18) + n;
  for (; i + 8 <= n; i += 8) h = Rotl64(h ^ (Rotl64(LoadLe64(p + i) * kP2, 31) * kP1), 27) * kP1 + kP3;
  for (; i < n; ++i) h = Rotl64(h ^ (static_cast<unsigned char>(p[i]) * kP3), 11) * kP1;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}
// The checksum a file of `version` uses for its head and blocks (and, in
// version 1, its whole payload).
inline uint64_t Checksum(std::string_view s, uint32_t version) { return version >= 8 ? LaneSum(s) : Fnv1a(s); }

inline std::optional<std::string_view> ViewOf(const std::optional<std::string>& s) {
  return s ? std::optional<std::string_view>(*s) : std::nullopt;
}

// Version 10's coded strings: a submission's string fields (but its job
// name) each keep a dictionary per block, built as the block is written and
// read. A non-optional string (Sym) is 0 for "", 1 for a literal (a length
// and bytes; it becomes the field's next entry), k >= 2 for entry k - 2; an
// optional one (OSym) is 0 when absent, else the same codes 1 and k. A job
// name (Name) is 0 when absent, 1 for a literal that is not a generated
// name, 2 for "j<n + 1>" where "j<n>" was the block's last generated name
// (n = -1 at the block's start), 3 and a varint m for "j<m>".
enum SymField : int { kSymQueue, kSymJobType, kSymShare, kSymShareId, kSymPayloadError, kSymPayloadRaw, kSymUnit,
                      kNumSymFields };
// The largest number a generated name "j<n>" can hold (GeneratedJobNumber:
// at most 18 digits).
inline constexpr int64_t kMaxGeneratedJob = 999999999999999999;

// The bytes a Writer has written: a std::string whose size runs up to 4 KiB
// ahead of the count written, kept beside it, so that writing a byte is a
// compare, a store and an add. (std::string::push_back was a call in every
// field writer: GCC 12 does not inline it; with the calls around it, it was
// a seventh of gen's instructions.) The bytes past size() are zeros, never
// read; reserve() only reserves, so memory is first touched as it is
// written.
class ByteSink {
 public:
  [[gnu::always_inline]] void push_back(char c) {
    if (n_ == s_.size()) Grow(1);
    s_.data()[n_++] = c;
  }
  [[gnu::always_inline]] void append(const char* p, size_t k) {
    if (s_.size() - n_ < k) Grow(k);
    if (k > 0) std::memcpy(s_.data() + n_, p, k);
    n_ += k;
  }
  void append(std::string_view v) { append(v.data(), v.size()); }
  void append(size_t k, char c) {
    if (s_.size() - n_ < k) Grow(k);
    std::memset(s_.data() + n_, c, k);
    n_ += k;
  }
  void reserve(size_t k) { s_.reserve(k); }
  size_t size() const { return n_; }
  std::string_view view() const { return std::string_view(s_.data(), n_); }
  operator std::string_view() const { return view(); }  // NOLINT: a sink reads as its bytes
  // The bytes written, as a string; the sink is empty after.
  std::string Take() {
    s_.resize(n_);
    n_ = 0;
    return std::move(s_);
  }

 private:
  // Room for k more bytes, and up to 4 KiB beyond them (the string doubles
  // its capacity itself when it must).
  [[gnu::noinline]] void Grow(size_t k) { s_.resize(n_ + std::max<size_t>(k, 4096)); }

  std::string s_;
  size_t n_ = 0;
};

class Writer {
 public:
  uint32_t version = kQsbVersion;  // of the file written (fields added later are not in older ones)
  // Version 10's per-block state (one Writer per block): the last event's
  // time and index (per path kind), the last generated job name, and the
  // coded strings' dictionaries.
  SimTime last_time = 0;
  uint64_t last_index[2] = {~uint64_t{0}, ~uint64_t{0}};  // the next is last + 1 (0 at a block's start)
  int64_t last_job = -1;
  absl::flat_hash_map<std::string, uint64_t> dict[kNumSymFields];
  // LEB128, built in a local buffer and appended once (one call per
  // number, not one push_back per byte); a number below 128 (most of them:
  // codes, flags, small counts and time steps) is one push_back.
  void U(uint64_t v) {
    if (v < 0x80) {
      out.push_back(static_cast<char>(v));
      return;
    }
    char buf[10];
    size_t n = 0;
    while (v >= 0x80) {
      buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    buf[n++] = static_cast<char>(v);
    out.append(buf, n);
  }
  void I(int64_t v) { U((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void B(bool b) { out.push_back(b ? 1 : 0); }
  void S(std::string_view s) {
    U(s.size());
    out.append(s);
  }
  void OS(const std::optional<std::string_view>& s) {
    B(s.has_value());
    if (s) S(*s);
  }
  void OS(const std::optional<std::string>& s) { OS(ViewOf(s)); }
  // Version 10's coded strings and names (SymField).
  void Sym(SymField f, std::string_view s) {
    if (s.empty()) {
      U(0);
    } else {
      Entry(f, s);
    }
  }
  void OSym(SymField f, const std::optional<std::string_view>& s) {
    if (!s) {
      U(0);
    } else {
      Entry(f, *s);
    }
  }
  // The GeneratedJobNumber of the last job name written (by Name(), or
  // PutIo's Name in any version); nullopt when absent or not generated.
  // QsbEventWriter::PutSubmit notes it in the block's facts.
  std::optional<int64_t> name_number;
  void Name(const std::optional<std::string_view>& name) {
    name_number.reset();
    if (!name) {
      U(0);
      return;
    }
    const std::optional<int64_t> n = GeneratedJobNumber(*name);
    name_number = n;
    if (!n) {
      U(1);
      S(*name);
    } else if (*n == last_job + 1) {
      U(2);
    } else {
      U(3);
      U(static_cast<uint64_t>(*n));
    }
    if (n) last_job = *n;
  }
  // jobStateTimeLimitActions: the count, then each entry's fields.
  void Actions(const std::vector<JobStateTimeLimitAction>& list) {
    U(list.size());
    for (const JobStateTimeLimitAction& a : list) {
      S(a.reason);
      S(a.state);
      I(a.max_time_seconds);
      S(a.action);
    }
  }
  void OI(const std::optional<int64_t>& v) {
    B(v.has_value());
    if (v) I(*v);
  }
  template <typename E>
  void E8(E e) {
    out.push_back(static_cast<char>(e));
  }
  template <typename E>
  void OE(const std::optional<E>& e) {
    B(e.has_value());
    if (e) E8(*e);
  }
  void Limits(const std::vector<CapacityLimit>& l) {
    U(l.size());
    for (const CapacityLimit& c : l) {
      S(c.capacity_unit);
      I(c.max_capacity);
    }
  }
  void OLimits(const std::optional<std::vector<CapacityLimit>>& l) {
    B(l.has_value());
    if (l) Limits(*l);
  }
  ByteSink out;

 private:
  // Code k >= 2 of an entry, or 1 and the literal (which becomes one).
  // A string's code is first looked for in a small cache keyed by where
  // the string lies (a writer is usually handed the same few stored strings
  // again and again: gen's share names and instance types), checked against
  // a copy of the bytes, so that a string at a reused address is never
  // taken for another. A miss asks the dictionary (a hash of the bytes and a
  // probe: about 100 instructions, twice per generated submission).
  void Entry(SymField f, std::string_view s) {
    Recent& r = recent_[f][(reinterpret_cast<uintptr_t>(s.data()) * 0x9E3779B97F4A7C15ULL) >> (64 - kRecentBits)];
    if (r.data == s.data() && r.key.size() == s.size() && std::memcmp(r.key.data(), s.data(), s.size()) == 0) {
      U(r.code);
      return;
    }
    const auto [it, added] = dict[f].try_emplace(absl::string_view(s.data(), s.size()), dict[f].size() + 2);
    r.data = s.data();
    r.key.assign(s);
    r.code = it->second;
    if (added) {
      U(1);
      S(s);
    } else {
      U(it->second);
    }
  }
  static constexpr int kRecentBits = 5;
  static constexpr size_t kRecent = size_t{1} << kRecentBits;
  struct Recent {
    const char* data = nullptr;  // where the string lay; nullptr: unused
    std::string key;             // its bytes then
    uint64_t code = 0;
  };
  std::array<Recent, kRecent> recent_[kNumSymFields];
};

class Reader {
 public:
  Reader(std::string_view data, size_t base, uint32_t file_version) : version(file_version), d_(data), base_(base) {}
  uint32_t version;  // of the file read
  // Version 10's per-block state, as Writer's (one Reader per block).
  SimTime last_time = 0;
  uint64_t last_index[2] = {~uint64_t{0}, ~uint64_t{0}};
  int64_t last_job = -1;
  std::vector<std::string> dict[kNumSymFields];
  bool ok() const { return err_.empty(); }
  const std::string& error() const { return err_; }
  bool done() const { return p_ == d_.size(); }
  void Fail(const std::string& what) {
    if (err_.empty()) err_ = absl::StrCat("byte offset ", base_ + p_, ": ", what);
  }
  uint64_t U() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= d_.size()) {
        Fail("truncated varint");
        return 0;
      }
      const uint8_t b = static_cast<uint8_t>(d_[p_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    Fail("varint longer than 10 bytes");
    return 0;
  }
  int64_t I() {
    const uint64_t z = U();
    return static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
  }
  bool B() {
    if (p_ >= d_.size()) {
      Fail("truncated");
      return false;
    }
    const uint8_t b = static_cast<uint8_t>(d_[p_++]);
    if (b > 1) Fail("flag byte is not 0 or 1");
    return b == 1;
  }
  std::string S() {
    std::string s;
    SInto(s);
    return s;
  }
  std::optional<std::string> OS() {
    if (!B()) return std::nullopt;
    return S();
  }
  // S() and OS() into a string that may already hold one (its buffer is
  // reused: decoding a block into last block's events allocates nothing).
  void SInto(std::string& s) {
    const uint64_t n = U();
    if (n > d_.size() - p_) {
      Fail("string length beyond the end");
      s.clear();
      return;
    }
    s.assign(d_.data() + p_, n);
    p_ += n;
  }
  void OSInto(std::optional<std::string>& s) {
    if (!B()) {
      s.reset();
      return;
    }
    if (!s) s.emplace();
    SInto(*s);
  }
  // Version 10's coded strings and names (SymField) into strings that may
  // already hold one.
  void SymInto(SymField f, std::string& s) {
    const uint64_t code = U();
    if (code == 0) {
      s.clear();
    } else {
      CodeInto(f, code, s);
    }
  }
  void OSymInto(SymField f, std::optional<std::string>& s) {
    const uint64_t code = U();
    if (code == 0) {
      s.reset();
      return;
    }
    if (!s) s.emplace();
    CodeInto(f, code, *s);
  }
  void NameInto(std::optional<std::string>& s) {
    const uint64_t code = U();
    if (code == 0) {
      s.reset();
      return;
    }
    if (!s) s.emplace();
    if (code == 1) {
      SInto(*s);
      if (ok() && GeneratedJobNumber(*s)) Fail("a generated job name written as a literal");
      return;
    }
    int64_t n = 0;
    if (code == 2) {
      n = last_job + 1;
    } else if (code == 3) {
      const uint64_t m = U();
      n = m > static_cast<uint64_t>(kMaxGeneratedJob) ? kMaxGeneratedJob + 1 : static_cast<int64_t>(m);
    } else {
      Fail(absl::StrCat("bad job name code ", code));
    }
    if (n > kMaxGeneratedJob) {
      Fail("a generated job name beyond 18 digits");
      n = 0;
    }
    last_job = n;
    char buf[24] = {'j'};
    s->assign(buf, static_cast<size_t>(std::to_chars(buf + 1, buf + sizeof(buf), n).ptr - buf));
  }
  int64_t Int32(const char* what) {
    const int64_t v = I();
    if (v < -kInt32Max - 1 || v > kInt32Max) Fail(absl::StrCat(what, " out of int32 range"));
    return v;
  }
  std::optional<int64_t> OInt32(const char* what) {
    if (!B()) return std::nullopt;
    return Int32(what);
  }
  // An optional checkpoint interval: seconds > 0.
  // jobStateTimeLimitActions, checked as the JSON parser checks them.
  std::vector<JobStateTimeLimitAction> Actions() {
    std::vector<JobStateTimeLimitAction> out;
    const uint64_t n = U();
    if (n > 100) Fail("more than 100 jobStateTimeLimitActions");
    for (uint64_t i = 0; i < n && ok(); ++i) {
      JobStateTimeLimitAction a;
      a.reason = S();
      a.state = S();
      a.max_time_seconds = Int32("maxTimeSeconds");
      a.action = S();
      if (a.reason.empty() || a.state != "RUNNABLE" || a.action != "TERMINATE" || a.max_time_seconds < 600 ||
          a.max_time_seconds > 86400) {
        Fail("a jobStateTimeLimitActions entry out of range");
      }
      out.push_back(std::move(a));
    }
    return out;
  }
  std::optional<SimTime> OInterval(const char* what) {
    if (!B()) return std::nullopt;
    const SimTime t = Time(what);
    if (t <= 0) Fail(absl::StrCat(what, " must be > 0"));
    return t;
  }
  SimTime Time(const char* what) {
    const int64_t v = I();
    if (v < 0 || v > kMaxSimTime) Fail(absl::StrCat(what, " must be in [0, 1e12] seconds"));
    return v;
  }
  template <typename E>
  E E8(int count, const char* what) {
    if (p_ >= d_.size()) {
      Fail("truncated");
      return E{};
    }
    const uint8_t b = static_cast<uint8_t>(d_[p_++]);
    if (b >= count) Fail(absl::StrCat("bad ", what, " value ", b));
    return static_cast<E>(b);
  }
  template <typename E>
  std::optional<E> OE(int count, const char* what) {
    if (!B()) return std::nullopt;
    return E8<E>(count, what);
  }
  std::vector<CapacityLimit> Limits() {
    const uint64_t n = U();
    std::vector<CapacityLimit> l;
    if (n > 1000) {
      Fail("more than 1000 capacity limits");
      return l;
    }
    for (uint64_t i = 0; i < n && ok(); ++i) {
      CapacityLimit c;
      c.capacity_unit = S();
      c.max_capacity = Int32("maxCapacity");
      l.push_back(std::move(c));
    }
    return l;
  }
  std::optional<std::vector<CapacityLimit>> OLimits() {
    if (!B()) return std::nullopt;
    return Limits();
  }
  size_t left() const { return d_.size() - p_; }

 private:
  void CodeInto(SymField f, uint64_t code, std::string& s) {
    if (code == 1) {
      SInto(s);
      dict[f].push_back(s);
    } else if (code - 2 < dict[f].size()) {
      s = dict[f][code - 2];
    } else {
      Fail(absl::StrCat("string code ", code, " beyond the block's ", dict[f].size(), " entries"));
      s.clear();
    }
  }
  std::string_view d_;
  size_t base_;
  size_t p_ = 0;
  std::string err_;
};

// The encoders and decoders of qsb_codec.cc that qsb.cc frames.

// Everything before the events, shared by both versions.
void PutHead(Writer& w, const Scenario& s, size_t nevents, uint32_t version);
// One event: its time, path kind and index, and its request.
void PutEvent(Writer& w, const ScenarioEvent& ev);
// The head PutHead wrote (its source replaced by `source`), checked as the
// JSON parser checks it; up to the event count, which the caller reads.
Scenario GetHead(Reader& rd, std::string_view source, uint32_t version);
// One event into `ev`, which may hold an earlier one (its strings are
// reused).
void GetEventInto(Reader& rd, ScenarioEvent& ev);

}  // namespace qs::gen::qsb_internal

#endif  // QS_ENGINE_GEN_QSB_CODEC_H_
