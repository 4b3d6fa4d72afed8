// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a folder holds, entry by entry (links not followed): each regular file's SHA-256,
// each link's target, each special file's kind. Comparing two snapshots proves that no
// input or earlier output changed, and lists what appeared; files() lists a source folder
// for the rules its files must keep (apps_rules.cpp).

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace streampipe::testing {

class TreeSnapshot {
 public:
  // Throws std::runtime_error when the folder cannot be walked.
  static TreeSnapshot of(const std::filesystem::path& root);

  // The regular files' paths relative to the root, sorted (what a source-tree rule reads).
  [[nodiscard]] std::vector<std::string> files() const;
  // Paths relative to the root that are in `after` and not here.
  [[nodiscard]] std::vector<std::string> added(const TreeSnapshot& after) const;
  // "path: what changed" for every entry of this snapshot that `after` lacks or holds
  // differently (content, kind, link target).
  [[nodiscard]] std::vector<std::string> changed(const TreeSnapshot& after) const;

 private:
  std::map<std::string, std::string> entries_;  // relative path -> "file <sha256>", "link -> x", "fifo", ...
};

// The SHA-256 of a file's content, in hex; "unreadable" when it cannot be read.
[[nodiscard]] std::string sha256_of_file(const std::filesystem::path& path);

}  // namespace streampipe::testing
