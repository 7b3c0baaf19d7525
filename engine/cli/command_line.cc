#include "engine/cli/command_line.h"

#include <filesystem>
#include <iostream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "engine/cli/commands.h"
#include "engine/util/atomic_file.h"
#include "engine/util/strings.h"

namespace qs {

namespace po = boost::program_options;

std::optional<int> ParseCommandLine(std::string_view command, const std::vector<std::string>& args,
                                    const po::options_description& visible, const po::options_description& hidden,
                                    const po::positional_options_description& positional,
                                    std::string_view help_epilog, po::variables_map& vm) {
  po::options_description all;
  all.add(visible).add(hidden);
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return UsageError(command, e.what());
  }
  if (vm.count("help")) {
    std::cout << visible << help_epilog;
    return kExitOk;
  }
  return std::nullopt;
}

std::optional<int> ParseCommandLine(std::string_view command, const std::vector<std::string>& args,
                                    const po::options_description& visible, std::initializer_list<Positional> positionals,
                                    std::string_view help_epilog, po::variables_map& vm) {
  po::options_description hidden;
  po::positional_options_description pos;
  for (const Positional& p : positionals) {
    if (p.rest != nullptr) {
      hidden.add_options()(p.name, po::value<std::vector<std::string>>(p.rest));
      pos.add(p.name, -1);
    } else {
      hidden.add_options()(p.name, po::value<std::string>(p.one));
      pos.add(p.name, 1);
    }
  }
  return ParseCommandLine(command, args, visible, hidden, pos, help_epilog, vm);
}

int ReportError(const absl::Status& s) {
  std::cerr << "quotasim: " << s.message() << "\n";
  return ExitCodeFor(s);
}

std::string UnwritableCompression(std::string_view option, std::string_view path, bool gzip,
                                  std::string_view plain) {
  static constexpr std::string_view kOthers[] = {".zst", ".zstd", ".bz2", ".xz", ".lz4", ".lzma", ".lz", ".zip", ".7z", ".br", ".Z"};
  auto ends = [&](std::string_view ext) {
    return path.size() > ext.size() && path.substr(path.size() - ext.size()) == ext;
  };
  for (std::string_view ext : kOthers) {
    if (ends(ext)) {
      return absl::StrCat(Sv(option), " ", Sv(path), ": ", Sv(ext), " compression is not supported (",
                          gzip ? "name it .gz for gzip, or" : "name it", " ", Sv(plain), " for plain text)");
    }
  }
  if (!gzip && ends(".gz")) {
    return absl::StrCat(Sv(option), " ", Sv(path), ": this file is written uncompressed (name it ", Sv(plain), ")");
  }
  return "";
}

namespace {
// Whether writing output `out` would replace file `other` (an existing
// input or another output).
bool SameFile(const std::string& out, const std::string& other) {
  if (out.empty() || other.empty() || out == "-" || other == "-" || WritesInPlace(out)) return false;
  std::error_code ec;
  if (std::filesystem::equivalent(out, other, ec) && !ec) return true;  // both exist
  const std::filesystem::path a = std::filesystem::weakly_canonical(ReplacedPath(out), ec);
  if (ec) return false;
  const std::filesystem::path b = std::filesystem::weakly_canonical(ReplacedPath(other), ec);
  return !ec && a == b;
}
}  // namespace

std::string OutputClash(const std::vector<std::pair<std::string_view, std::string>>& outputs,
                        const std::vector<std::pair<std::string_view, std::string>>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [option, path] = outputs[i];
    for (const auto& [input, in_path] : inputs) {
      if (SameFile(path, in_path)) {
        return absl::StrCat(Sv(option), " ", path, " would overwrite the input ", Sv(input),
                            "; write it elsewhere");
      }
    }
    for (size_t k = i + 1; k < outputs.size(); ++k) {
      if (SameFile(path, outputs[k].second)) {
        return absl::StrCat(Sv(option), " and ", Sv(outputs[k].first), " name the same file (", path,
                            "); give each output its own");
      }
    }
  }
  return "";
}

int UsageError(std::string_view command, std::string_view message) {
  std::cerr << "quotasim " << command << ": " << message << "\nTry 'quotasim " << command << " --help'.\n";
  return kExitUsage;
}

}  // namespace qs
