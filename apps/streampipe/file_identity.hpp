// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a path names on this machine, so that the CLI can tell whether an output would
// replace an input or another output: two paths name one file when they lead to the same
// device and inode (hard links, symbolic links, "./a" and "a", bind mounts), and two files
// not created yet are one when their canonical paths agree (symbolic folders resolved).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <utility>

namespace streampipe::cli {

enum class FileKind { absent, regular, directory, symlink, character_device, block_device, fifo, socket, other };

struct FileIdentity {
  FileKind kind = FileKind::absent;              // the path itself, not followed (a link is a symlink)
  FileKind target = FileKind::absent;            // what it leads to, links followed (absent: dangling)
  std::optional<std::pair<dev_t, ino_t>> inode;  // of `target`, when it exists
  std::filesystem::path canonical;               // absolute, links resolved as far as they exist
  int error = 0;                                 // errno of a failed lstat other than "no such file"
};

// Never throws: a path that cannot be examined (a folder without search permission on the
// way) has kind absent and `error` set.
[[nodiscard]] FileIdentity identify(const std::string& path);

// "a FIFO", "a character device", ... for messages.
[[nodiscard]] std::string_view describe(FileKind kind) noexcept;

}  // namespace streampipe::cli
