// File: engine/util/gzip_ostream.h
//
// GzipOstream: an std::ostream that gzip-compresses what is written to it
// into another ostream (zlib, a gzip member readable by gunzip and zcat).
// `quotasim run --events X.jsonl.gz` writes its log through one: event logs
// are text with long repeated keys and compress about tenfold.
//
//   std::ofstream file(path, std::ios::binary);
//   GzipOstream gz(file);
//   gz << "...";
//   gz.Finish();  // flushes the last block and the gzip trailer; false on error
//
// Thread-compatible.
#ifndef QS_ENGINE_UTIL_GZIP_OSTREAM_H_
#define QS_ENGINE_UTIL_GZIP_OSTREAM_H_

#include <zlib.h>

#include <array>
#include <ostream>
#include <streambuf>

namespace qs {

class GzipStreambuf : public std::streambuf {
 public:
  explicit GzipStreambuf(std::ostream& sink) : sink_(sink) {
    ok_ = deflateInit2(&z_, 6, Z_DEFLATED, 15 + 16 /* gzip header */, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    setp(in_.data(), in_.data() + in_.size());
  }
  GzipStreambuf(const GzipStreambuf&) = delete;
  GzipStreambuf& operator=(const GzipStreambuf&) = delete;
  ~GzipStreambuf() override {
    Finish();
    deflateEnd(&z_);
  }

  // Compresses what is buffered and writes the trailer; idempotent.
  bool Finish() {
    if (!finished_) {
      finished_ = true;
      ok_ = Deflate(Z_FINISH) && ok_;
      sink_.flush();
    }
    return ok_ && static_cast<bool>(sink_);
  }

 protected:
  int_type overflow(int_type ch) override {
    if (finished_ || !Deflate(Z_NO_FLUSH)) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return finished_ || Deflate(Z_SYNC_FLUSH) ? 0 : -1; }

 private:
  // Compresses the put area with `flush` and writes the output to the sink.
  bool Deflate(int flush) {
    if (!ok_) return false;
    z_.next_in = reinterpret_cast<Bytef*>(pbase());
    z_.avail_in = static_cast<uInt>(pptr() - pbase());
    int rc = Z_OK;
    do {
      z_.next_out = reinterpret_cast<Bytef*>(out_.data());
      z_.avail_out = static_cast<uInt>(out_.size());
      rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) return ok_ = false;
      sink_.write(out_.data(), static_cast<std::streamsize>(out_.size() - z_.avail_out));
    } while (z_.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    setp(in_.data(), in_.data() + in_.size());
    return static_cast<bool>(sink_);
  }

  std::ostream& sink_;
  z_stream z_{};
  std::array<char, 1 << 16> in_{};
  std::array<char, 1 << 16> out_{};
  bool ok_ = false;
  bool finished_ = false;
};

class GzipOstream : public std::ostream {
 public:
  explicit GzipOstream(std::ostream& sink) : std::ostream(nullptr), buf_(sink) { rdbuf(&buf_); }
  bool Finish() {
    flush();
    return buf_.Finish();
  }

 private:
  GzipStreambuf buf_;
};

}  // namespace qs

#endif  // QS_ENGINE_UTIL_GZIP_OSTREAM_H_
