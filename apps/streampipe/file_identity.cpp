// SPDX-License-Identifier: Apache-2.0
#include "file_identity.hpp"

#include <array>
#include <cerrno>
#include <sys/stat.h>
#include <system_error>

namespace streampipe::cli {
namespace {

// Each kind of file lstat reports, with its name in messages: one table for both ways.
struct KindEntry {
  FileKind kind;
  mode_t type;  // the S_IFMT bits
  std::string_view words;
};
constexpr std::array<KindEntry, 7> kKinds = {{{FileKind::regular, S_IFREG, "a regular file"},
                                              {FileKind::directory, S_IFDIR, "a folder"},
                                              {FileKind::symlink, S_IFLNK, "a symbolic link"},
                                              {FileKind::character_device, S_IFCHR, "a character device"},
                                              {FileKind::block_device, S_IFBLK, "a block device"},
                                              {FileKind::fifo, S_IFIFO, "a FIFO (named pipe)"},
                                              {FileKind::socket, S_IFSOCK, "a socket"}}};

FileKind kind_of(mode_t mode) noexcept {
  for (const KindEntry& k : kKinds)
    if ((mode & S_IFMT) == k.type) return k.kind;
  return FileKind::other;
}

}  // namespace

FileIdentity identify(const std::string& path) {
  namespace fs = std::filesystem;
  FileIdentity id;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) id.error = errno;
  } else {
    id.kind = kind_of(st.st_mode);
    id.target = id.kind;
    if (id.kind == FileKind::symlink)
      id.target = ::stat(path.c_str(), &st) == 0 ? kind_of(st.st_mode) : FileKind::absent;
    if (id.target != FileKind::absent) id.inode = std::make_pair(st.st_dev, st.st_ino);
  }
  std::error_code ec;
  id.canonical = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) id.canonical = fs::absolute(path, ec).lexically_normal();
  return id;
}

std::string_view describe(FileKind kind) noexcept {
  if (kind == FileKind::absent) return "missing";
  for (const KindEntry& k : kKinds)
    if (k.kind == kind) return k.words;
  return "a special file";
}

}  // namespace streampipe::cli
