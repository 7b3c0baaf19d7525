// File: engine/util/atomic_file.h
//
// AtomicFile: an output file that appears under its name only when it is
// complete. The bytes go to a temporary file beside the target (same folder,
// so the rename stays on one file system), and Commit() renames it over the
// target. A run that fails, or is killed, leaves the previous file (or none)
// under the target name, never a partial one: a failed or abandoned
// AtomicFile removes its temporary file when destroyed (a process killed by
// a signal may leave `.NAME.tmp-PID` behind, never NAME).
//
// The path "-" means standard output: the stream is std::cout and Commit()
// flushes it. A target that exists and is not a regular file (a device such
// as /dev/null, a FIFO, the pipe behind /dev/stdout) is written in place:
// renaming a file over it would replace the device node or the pipe with a
// regular file (as root, `--events /dev/null` once did). A symlink is
// followed: the file it names is replaced and the link stays, as with `>`.
//
// Thread-compatible.
#ifndef QS_ENGINE_UTIL_ATOMIC_FILE_H_
#define QS_ENGINE_UTIL_ATOMIC_FILE_H_

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace qs {

// Whether an output for `path` is written in place (see above): `path`
// exists, after symlinks, and is neither a regular file nor a folder; or it
// is under /dev (but /dev/shm) or /proc, whose names are never replaced
// (/dev/stdout names fd 1, which may be a regular file the shell opened).
inline bool WritesInPlace(const std::string& path) {
  std::error_code ec;
  const std::string abs = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (!ec && ((abs.rfind("/dev/", 0) == 0 && abs.rfind("/dev/shm/", 0) != 0) || abs.rfind("/proc/", 0) == 0)) {
    return true;
  }
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  return !ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) &&
         !std::filesystem::is_directory(st);
}

// The file an output for `path` replaces: the file a symlink names, even
// one that does not exist yet (the link stays), else `path`.
inline std::string ReplacedPath(const std::string& path) {
  std::filesystem::path p(path);
  std::error_code ec;
  for (int hops = 0; hops < 40 && std::filesystem::is_symlink(std::filesystem::symlink_status(p, ec)); ++hops) {
    const std::filesystem::path target = std::filesystem::read_symlink(p, ec);
    if (ec) return path;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return p.string();
}

// The temporary name AtomicFile writes `path` under: `.NAME.tmp-PID` in the
// same folder.
inline std::string TempPathBeside(const std::string& path) {
  const std::filesystem::path target(path);
  return (target.parent_path() / absl::StrCat(".", target.filename().string(), ".tmp-", getpid())).string();
}

// Renames a complete temporary file over `path` (or removes it on failure).
inline absl::Status RenameOver(const std::string& temp, const std::string& path) {
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (!ec) return absl::OkStatus();
  std::filesystem::remove(temp, ec);
  return absl::DataLossError(absl::StrCat("cannot write ", path, ": ", ec.message()));
}

// Where an output for `path` is written, for writers that open the file
// themselves (gen's streamed .qsb) and for AtomicFile: write_path() is a
// temporary name beside the replaced file (ReplacedPath), or `path` itself
// when it is written in place (WritesInPlace); Commit() renames the first
// over the replaced file. Destroyed without a Commit(), it removes the
// temporary file.
class AtomicPath {
 public:
  explicit AtomicPath(std::string path) : path_(std::move(path)), in_place_(WritesInPlace(path_)) {
    if (in_place_) {
      write_ = path_;
      return;
    }
    target_ = ReplacedPath(path_);
    write_ = TempPathBeside(target_);
  }
  AtomicPath(const AtomicPath&) = delete;
  AtomicPath& operator=(const AtomicPath&) = delete;
  ~AtomicPath() {
    if (committed_ || in_place_) return;
    std::error_code ec;
    std::filesystem::remove(write_, ec);
  }

  const std::string& path() const { return path_; }
  const std::string& write_path() const { return write_; }
  // The file at write_path() is complete (and closed): under its name.
  absl::Status Commit() {
    committed_ = true;  // RenameOver removes the temporary file on failure
    return in_place_ ? absl::OkStatus() : RenameOver(write_, target_);
  }

 private:
  std::string path_;
  bool in_place_;
  std::string target_;  // the file replaced (ReplacedPath); empty in place
  std::string write_;
  bool committed_ = false;
};

class AtomicFile {
 public:
  // (stdout_ is computed from the size and first byte: GCC 12 warns of a
  // maybe-uninitialized read in `path_ == "-"` after the move.)
  explicit AtomicFile(std::string path) : stdout_(path.size() == 1 && path[0] == '-') {
    if (stdout_) return;
    where_.emplace(std::move(path));
    file_ = std::make_unique<std::ofstream>(where_->write_path(), std::ios::binary | std::ios::trunc);
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  // The file is closed before where_ removes an uncommitted temporary one.
  ~AtomicFile() { file_.reset(); }

  bool is_stdout() const { return stdout_; }
  const std::string& path() const { return stdout_ ? kStdout : where_->path(); }
  // False once opening or a write failed.
  bool ok() const { return is_stdout() ? static_cast<bool>(std::cout) : static_cast<bool>(*file_); }
  std::ostream& stream() { return is_stdout() ? std::cout : *file_; }

  // Flushes and closes the file and renames it to the target name (in
  // place: only flushes and closes).
  absl::Status Commit() {
    if (is_stdout()) {
      std::cout.flush();
      return std::cout ? absl::OkStatus() : absl::DataLossError("error writing to standard output");
    }
    file_->close();
    if (!*file_) return absl::DataLossError(absl::StrCat("cannot write ", where_->path()));
    return where_->Commit();
  }

 private:
  inline static const std::string kStdout = "-";
  bool stdout_;
  std::optional<AtomicPath> where_;  // not for standard output
  std::unique_ptr<std::ofstream> file_;
};

}  // namespace qs

#endif  // QS_ENGINE_UTIL_ATOMIC_FILE_H_
