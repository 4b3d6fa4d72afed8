// SPDX-License-Identifier: Apache-2.0
#include "file_identity.hpp"

#include <cerrno>
#include <sys/stat.h>
#include <system_error>

namespace streampipe::cli {
namespace {

FileKind kind_of(mode_t mode) noexcept {
  if (S_ISREG(mode)) return FileKind::regular;
  if (S_ISDIR(mode)) return FileKind::directory;
  if (S_ISLNK(mode)) return FileKind::symlink;
  if (S_ISCHR(mode)) return FileKind::character_device;
  if (S_ISBLK(mode)) return FileKind::block_device;
  if (S_ISFIFO(mode)) return FileKind::fifo;
  if (S_ISSOCK(mode)) return FileKind::socket;
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
  switch (kind) {
    case FileKind::absent:
      return "missing";
    case FileKind::regular:
      return "a regular file";
    case FileKind::directory:
      return "a folder";
    case FileKind::symlink:
      return "a symbolic link";
    case FileKind::character_device:
      return "a character device";
    case FileKind::block_device:
      return "a block device";
    case FileKind::fifo:
      return "a FIFO (named pipe)";
    case FileKind::socket:
      return "a socket";
    case FileKind::other:
      return "a special file";
  }
  return "a special file";
}

}  // namespace streampipe::cli
