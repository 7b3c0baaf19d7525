// File: engine/util/gzip_istream.h
//
// A std::streambuf over a zlib gzFile: reads gzip files and, transparently,
// plain ones. Read errors are kept in error() (the stream just ends).
//
//   gzFile f = gzopen(path.c_str(), "rb");   // nullptr: cannot open
//   GzStreamBuf buf(f);                      // owns f
//   std::istream in(&buf);
//
// Thread-compatible.
#ifndef QS_ENGINE_UTIL_GZIP_ISTREAM_H_
#define QS_ENGINE_UTIL_GZIP_ISTREAM_H_

#include <zlib.h>

#include <array>
#include <streambuf>
#include <string>

namespace qs {

class GzStreamBuf : public std::streambuf {
 public:
  explicit GzStreamBuf(gzFile f) : file_(f) {}
  ~GzStreamBuf() override {
    if (file_ != nullptr) gzclose(file_);
  }
  const std::string& error() const { return error_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (file_ == nullptr || !error_.empty()) return traits_type::eof();
    const int n = gzread(file_, buf_.data(), static_cast<unsigned>(buf_.size()));
    if (n < 0) {
      int errnum = 0;
      const char* msg = gzerror(file_, &errnum);
      error_ = msg != nullptr ? msg : "gzip read error";
      return traits_type::eof();
    }
    if (n == 0) {
      int errnum = 0;
      const char* msg = gzerror(file_, &errnum);
      if (errnum != Z_OK && errnum != Z_STREAM_END) error_ = msg != nullptr ? msg : "gzip read error";
      return traits_type::eof();
    }
    setg(buf_.data(), buf_.data(), buf_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  gzFile file_;
  std::array<char, 1 << 16> buf_{};
  std::string error_;
};

}  // namespace qs

#endif  // QS_ENGINE_UTIL_GZIP_ISTREAM_H_
