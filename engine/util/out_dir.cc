#include "engine/util/out_dir.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/util/atomic_file.h"

namespace qs {

namespace fs = std::filesystem;

namespace {

absl::Status WriteMarker(const std::string& path, std::string_view command) {
  AtomicFile f(path);
  f.stream() << "This folder holds the output of one `quotasim " << command
             << "` run; quotasim --force may empty it.\n";
  return f.Commit();
}

}  // namespace

absl::Status PrepareOutDir(const std::string& dir, bool force, bool shared_by_shards, std::string_view command) {
  std::error_code ec;
  const fs::path path(dir);
  const fs::path marker = path / kOutDirMarker;
  const std::string marker_path = marker.string();
  auto write_marker = [&] { return WriteMarker(marker_path, command); };
  if (!fs::exists(path, ec)) {
    fs::create_directories(path, ec);
    if (ec) return absl::DataLossError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
    return write_marker();
  }
  if (!fs::is_directory(path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("--out ", dir, " exists and is not a folder"));
  }
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() != kOutDirMarker) entries.push_back(it->path());
  }
  if (ec) return absl::DataLossError(absl::StrCat("cannot read ", dir, ": ", ec.message()));
  const bool ours = fs::exists(marker, ec);
  if (entries.empty()) return write_marker();
  if (shared_by_shards && ours) return absl::OkStatus();
  if (!ours) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--out ", dir, " is not empty (", entries.size(), " entries, e.g. ", entries.front().filename().string(),
        ") and quotasim did not make it (no ", kOutDirMarker,
        " file): an output folder holds one run's files only; choose a new or empty folder"));
  }
  if (!force) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--out ", dir, " holds an earlier run's files (", entries.size(), " entries, e.g. ",
        entries.front().filename().string(), "); pass --force to replace them, or choose a new folder"));
  }
  for (const fs::path& p : entries) {
    fs::remove_all(p, ec);
    if (ec) return absl::DataLossError(absl::StrCat("cannot remove ", p.string(), ": ", ec.message()));
  }
  return write_marker();
}

}  // namespace qs
