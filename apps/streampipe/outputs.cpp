// SPDX-License-Identifier: Apache-2.0
#include "outputs.hpp"

#include "commands.hpp"

#include <filesystem>

namespace streampipe::cli {

namespace fs = std::filesystem;

void Outputs::claim(std::string_view option, const std::string& path) {
  if (path.empty()) return;
  if (path == "-") {
    claim_terminal(option);
    return;
  }
  const fs::path normal = fs::path(path).lexically_normal();
  for (const auto& [other, claimed] : files_)
    if (fs::path(claimed).lexically_normal() == normal)
      throw UsageError(fmt::format("{} and {} both name {}", other, option, path));
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw UsageError(fmt::format("{} {}: is a folder, not a file", option, path));
  if (!force_ && fs::exists(path, ec))
    throw UsageError(fmt::format("{} {}: the file exists (use --force to replace it)", option, path));
  files_.emplace_back(option, path);
}

void Outputs::check_dir(std::string_view option, const std::string& dir) {
  if (dir.empty() || dir == "-")
    throw UsageError(fmt::format("{} '{}': give a folder to write into (created if needed)", option, dir));
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw UsageError(fmt::format("{} {}: exists and is not a folder", option, dir));
}

void Outputs::claim_terminal(std::string_view what) {
  if (!stdout_owner_.empty())
    throw UsageError(fmt::format("{} and {} both want standard output: give one of them a file", stdout_owner_, what));
  stdout_owner_ = what;
}

void Outputs::write(const std::string& path, std::string_view content) const {
  if (path.empty()) return;
  if (path == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    std::fflush(stdout);
    return;
  }
  report::write_file_atomically(path, content, overwrite());
}

}  // namespace streampipe::cli
