// SPDX-License-Identifier: Apache-2.0
#include "outputs.hpp"

#include "commands.hpp"
#include "output_checks.hpp"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <unistd.h>
#include <utility>

namespace streampipe::cli {

namespace fs = std::filesystem;

namespace {

bool is_special(FileKind kind) noexcept {
  return kind == FileKind::character_device || kind == FileKind::block_device || kind == FileKind::fifo ||
         kind == FileKind::other;
}

// Where a link that leads nowhere would create its target.
fs::path dangling_target(const std::string& link) {
  std::error_code ec;
  fs::path to = fs::read_symlink(link, ec);
  if (ec) return fs::path(link);
  if (to.is_relative()) to = fs::absolute(link, ec).parent_path() / to;
  return fs::weakly_canonical(to, ec);
}

}  // namespace

void Outputs::input(std::string_view what, const std::string& path) {
  if (path.empty()) throw UsageError(fmt::format("{} '': an empty name names no file", what));
  const FileIdentity id = identify(path);
  if (id.error != 0) throw UsageError(fmt::format("{} {}: cannot examine it: {}", what, path, std::strerror(id.error)));
  if (id.target == FileKind::absent)
    throw UsageError(fmt::format("{} {}: {}", what, path,
                                 id.kind == FileKind::symlink ? "a symbolic link to a missing file" : "no such file"));
  if (id.target != FileKind::regular)
    throw UsageError(fmt::format("{} {}: is {}, not a regular file", what, path, describe(id.target)));
  const Holder who{std::string(what), path};
  check_unique(who, id, true);
  remember(who, id, true);
}

void Outputs::claim(std::string_view option, const std::string& path) { claim_file(option, path, true); }

void Outputs::claim_regular(std::string_view option, const std::string& path) { claim_file(option, path, false); }

void Outputs::claim_file(std::string_view option, const std::string& path, bool special_allowed) {
  if (path.empty()) return;
  if (path == "-") {
    claim_terminal(option);
    return;
  }
  const bool allowed = allow_special_ && special_allowed;
  const std::string hint = special_allowed ? " (--allow-special-outputs writes into it)" : "";
  const FileIdentity id = identify(path);
  if (id.error != 0)
    throw UsageError(fmt::format("{} {}: cannot examine it: {}", option, path, std::strerror(id.error)));
  Target target{path, false};
  FileIdentity written = id;
  if (id.kind == FileKind::symlink) {
    if (!allowed)
      throw UsageError(fmt::format("{} {}: is a symbolic link, which is never replaced by an output{}", option, path,
                                   special_allowed ? " (--allow-special-outputs writes to its target)" : ""));
    target.write_path = (id.target == FileKind::absent ? dangling_target(path) : id.canonical).string();
    written = identify(target.write_path);
  }
  if (written.kind == FileKind::directory)
    throw UsageError(fmt::format("{} {}: is a folder, not a file", option, path));
  if (written.kind == FileKind::socket)
    throw UsageError(fmt::format("{} {}: is a socket, which cannot be written as a file", option, path));
  if (is_special(written.kind)) {
    if (!allowed)
      throw UsageError(fmt::format("{} {}: is {}, not a regular file, and is never replaced by an output{}", option,
                                   path, describe(written.kind), hint));
    target.direct = true;
    target.write_path = path;  // opened as given: the kernel follows /dev/stdout and the like
  } else if (written.kind != FileKind::absent && !force_) {
    throw UsageError(fmt::format("{} {}: the file exists (use --force to replace it)", option, path));
  }
  const Holder who{std::string(option), path};
  check_unique(who, written, false);
  if (!target.direct) {
    // A FILE option's side output, not an image the command writes into its own folder (a
    // truncated earlier output there is replaced with --force).
    if (special_allowed && written.kind == FileKind::regular) check_content(option, target.write_path);
    const std::string folder = fs::path(target.write_path).parent_path().string();
    if (writable_folders_.insert(folder).second) check_writable_folder(option, target.write_path, false);
  }
  remember(who, written, false);
  if (special_allowed) targets_[path] = std::move(target);
}

void Outputs::check_unique(const Holder& who, const FileIdentity& id, bool is_input) const {
  const auto holder = [&](const std::map<std::string, Holder>& paths,
                          const std::map<std::pair<dev_t, ino_t>, Holder>& inodes) -> const Holder* {
    if (const auto it = paths.find(id.canonical.string()); it != paths.end()) return &it->second;
    if (id.inode)
      if (const auto it = inodes.find(*id.inode); it != inodes.end()) return &it->second;
    return nullptr;
  };
  const auto replaces_input = [](const Holder& output, const Holder& input) {
    return UsageError(fmt::format("{} {}: names the same file as {} {}; an output never replaces an input",
                                  output.option, output.path, input.option, input.path));
  };
  if (is_input) {
    if (const Holder* output = holder(output_paths_, output_inodes_)) throw replaces_input(*output, who);
    return;
  }
  if (const Holder* other = holder(output_paths_, output_inodes_))
    throw UsageError(fmt::format("{} and {} both name {}", other->option, who.option, who.path));
  if (const Holder* input = holder(input_paths_, input_inodes_)) throw replaces_input(who, *input);
}

void Outputs::remember(const Holder& who, const FileIdentity& id, bool is_input) {
  auto& paths = is_input ? input_paths_ : output_paths_;
  auto& inodes = is_input ? input_inodes_ : output_inodes_;
  paths.emplace(id.canonical.string(), who);
  if (id.inode) inodes.emplace(*id.inode, who);
}

void Outputs::check_dir(std::string_view option, const std::string& dir) {
  if (dir.empty() || dir == "-")
    throw UsageError(fmt::format("{} '{}': give a folder to write into (created if needed)", option, dir));
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw UsageError(fmt::format("{} {}: exists and is not a folder", option, dir));
  check_writable_folder(option, dir, true);
}

void Outputs::claim_terminal(std::string_view what) {
  if (!stdout_owner_.empty())
    throw UsageError(fmt::format("{} and {} both want standard output: give one of them a file", stdout_owner_, what));
  stdout_owner_ = what;
}

}  // namespace streampipe::cli
