// File: engine/util/out_dir.h
//
// PrepareOutDir: the one policy for the `--out DIR` folders of `sweep`,
// `compare` and `merge`, so that a folder holds one run's files only.
//
//  * A folder that does not exist is created; an empty one is used.
//  * Every folder quotasim writes into gets a marker file, `.quotasim-out`,
//    naming the command that wrote it.
//  * A folder that is not empty is refused (a usage error, exit 2), unless
//      - `force` is set and the folder has the marker: its entries are
//        removed first (the marker proves quotasim made the folder; a folder
//        without it is never cleaned, --force or not);
//      - the run is one shard of several (`shared_by_shards`) and the folder
//        has the marker: the shards of one comparison or sweep write into
//        one folder (`quotasim merge` checks they belong together).
//
// Each file in the folder is still written through AtomicFile
// (engine/util/atomic_file.h): a killed run leaves no partial file under a
// final name.
//
// Thread-compatible.
#ifndef QS_ENGINE_UTIL_OUT_DIR_H_
#define QS_ENGINE_UTIL_OUT_DIR_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace qs {

inline constexpr char kOutDirMarker[] = ".quotasim-out";

// InvalidArgumentError (exit 2) for a refused folder, with what to do;
// another error when the folder cannot be created, read or cleaned.
absl::Status PrepareOutDir(const std::string& dir, bool force, bool shared_by_shards, std::string_view command);

}  // namespace qs

#endif  // QS_ENGINE_UTIL_OUT_DIR_H_
