// `quotasim merge`: joins the outputs of `quotasim compare --shard K/N` runs
// into the report a single run gives.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "boost/program_options.hpp"
#include "engine/cli/command_line.h"
#include "engine/cli/commands.h"
#include "engine/trace/report.h"
#include "engine/util/out_dir.h"

namespace po = boost::program_options;

namespace qs {

int MergeCommand(const std::vector<std::string>& args) {
  po::options_description opts("quotasim merge --out DIR SHARD_DIR... [options]");
  std::string out_dir;
  std::vector<std::string> dirs;
  opts.add_options()("help,h", "show this help")(
      "out", po::value<std::string>(&out_dir), "folder of the merged report: one of the shard folders, or a new or empty one (or --force)")(
      "force", "replace the files of an earlier run in --out (a folder quotasim made)");
  const std::initializer_list<Positional> positionals = {{"dirs", nullptr, &dirs}};
  po::variables_map vm;
  if (std::optional<int> done = ParseCommandLine("merge", args, opts, positionals,
                                                 "\nReads the shard-K-of-N.json manifests in the SHARD_DIRs (shards may also share one\n"
                 "directory), checks they are the same comparison (trace, mapping and policies: same workload\n"
                 "fingerprint) and that every shard is present once, copies the per-policy files into --out\n"
                 "and writes comparison.md, comparison.csv and share-waits.csv there.\n", vm)) {
    return *done;
  }
  if (dirs.empty()) return UsageError("merge", "no shard directories");
  if (out_dir.empty()) out_dir = dirs[0];
  bool is_shard_dir = false;
  for (const std::string& d : dirs) {
    std::error_code ec;
    is_shard_dir = is_shard_dir || std::filesystem::equivalent(d, out_dir, ec);
  }
  if (absl::Status s = PrepareOutDir(out_dir, vm.count("force") > 0, is_shard_dir, "merge"); !s.ok()) {
    return ReportError(s);
  }
  absl::Status s = trace::MergeShards(out_dir, dirs);
  if (!s.ok()) return ReportError(s);
  std::cout << "merge: report written to " << out_dir << "/comparison.md\n";
  return kExitOk;
}

}  // namespace qs
