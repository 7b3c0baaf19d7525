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

class AtomicFile {
 public:
  // (stdout_ is computed from the size and first byte: GCC 12 warns of a
  // maybe-uninitialized read in `path_ == "-"` after the move.)
  explicit AtomicFile(std::string path) : stdout_(path.size() == 1 && path[0] == '-'), path_(std::move(path)) {
    if (stdout_) return;
    in_place_ = WritesInPlace(path_);
    if (in_place_) {
      file_ = std::make_unique<std::ofstream>(path_, std::ios::binary | std::ios::trunc);
      return;
    }
    target_ = ReplacedPath(path_);
    temp_ = TempPathBeside(target_);
    file_ = std::make_unique<std::ofstream>(temp_, std::ios::binary | std::ios::trunc);
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile() {
    if (file_ && !committed_ && !in_place_) {
      file_.reset();
      std::error_code ec;
      std::filesystem::remove(temp_, ec);
    }
  }

  bool is_stdout() const { return stdout_; }
  const std::string& path() const { return path_; }
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
    if (!*file_) return absl::DataLossError(absl::StrCat("cannot write ", path_));
    committed_ = true;  // RenameOver removes the temporary file on failure
    if (in_place_) return absl::OkStatus();
    return RenameOver(temp_, target_);
  }

 private:
  bool stdout_;
  bool in_place_ = false;
  std::string path_;
  std::string target_;  // the file replaced (ReplacedPath)
  std::string temp_;
  std::unique_ptr<std::ofstream> file_;
  bool committed_ = false;
};

}  // namespace qs

#endif  // QS_ENGINE_UTIL_ATOMIC_FILE_H_
