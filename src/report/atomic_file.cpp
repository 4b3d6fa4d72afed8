// SPDX-License-Identifier: Apache-2.0
#include "streampipe/report/atomic_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace streampipe::report {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path, int err) {
  throw std::runtime_error(fmt::format("{} {}: {}", what, path.string(), std::strerror(err)));
}

// umask() can only be read by setting it, which races with other threads creating files;
// Linux reports it in /proc/self/status instead.
mode_t process_umask() {
  static const mode_t mask = [] {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
    return static_cast<mode_t>(022);
  }();
  return mask;
}

// The temporary files of writes under way. Creating one and renaming it into place both
// happen under the mutex, so that once abandon_writes_in_progress() holds it no temporary
// file can appear or become a target behind its back. Never destroyed: a signal may end the
// process while static destructors run.
struct InProgress {
  std::mutex mutex;
  std::set<std::string> temporaries;
  bool abandoned = false;
};
InProgress& in_progress() {
  static auto* registry = new InProgress;
  return *registry;
}

[[noreturn]] void abandoned(const std::filesystem::path& path) {
  throw std::runtime_error(fmt::format("{}: not written: the process is ending", path.string()));
}

void forget_temporary(const std::string& tmp) {
  auto& r = in_progress();
  const std::lock_guard lock(r.mutex);
  if (r.temporaries.erase(tmp) > 0) ::unlink(tmp.c_str());
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> data,
                           Overwrite overwrite, Flush flush) {
  namespace fs = std::filesystem;
  if (overwrite == Overwrite::refuse && fs::exists(path))
    throw std::runtime_error(fmt::format("{} exists (use --force to overwrite)", path.string()));
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create {}: {}", parent.string(), ec.message()));

  auto& registry = in_progress();
  std::string tmp = (parent / fmt::format(".{}.tmp-XXXXXX", path.filename().string())).string();
  int fd = -1;
  {
    const std::lock_guard lock(registry.mutex);
    if (registry.abandoned) abandoned(path);
    fd = ::mkstemp(tmp.data());
    if (fd < 0) fail("cannot create a temporary file next to", path, errno);
    registry.temporaries.insert(tmp);
  }

  // Flush::later: the blocks reserved now, so that delayed allocation cannot find the disk
  // full after the rename. A file system that cannot reserve them syncs this file instead.
  bool sync_now = flush == Flush::each_file;
  if (!sync_now && !data.empty()) {
    const int reserved = ::fallocate(fd, 0, 0, static_cast<off_t>(data.size())) == 0 ? 0 : errno;
    if (reserved == EOPNOTSUPP || reserved == ENOSYS || reserved == EINVAL) {
      sync_now = true;
    } else if (reserved != 0) {
      ::close(fd);
      forget_temporary(tmp);
      fail("cannot write", path, reserved);
    }
  }
  const auto* p = reinterpret_cast<const char*>(data.data());
  std::size_t left = data.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      forget_temporary(tmp);
      fail("cannot write", path, err);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  // mkstemp creates 0600; give the output the permissions a plain open() would.
  (void)::fchmod(fd, 0666 & ~process_umask());
  // A full disk may only show here (delayed allocation), so both results count.
  const int synced = !sync_now || ::fsync(fd) == 0 ? 0 : errno;
  const int closed = ::close(fd) == 0 ? 0 : errno;
  if (synced != 0 || closed != 0) {
    forget_temporary(tmp);
    fail("cannot write", path, synced != 0 ? synced : closed);
  }

  const std::lock_guard lock(registry.mutex);
  if (registry.abandoned) abandoned(path);  // its temporary file is gone already
  registry.temporaries.erase(tmp);
  if (overwrite == Overwrite::refuse) {
    // link() fails if the target appeared meanwhile, unlike rename().
    const int linked = ::link(tmp.c_str(), path.c_str()) == 0 ? 0 : errno;
    ::unlink(tmp.c_str());
    if (linked == EEXIST) throw std::runtime_error(fmt::format("{} exists (use --force to overwrite)", path.string()));
    if (linked != 0) fail("cannot create", path, linked);
    return;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail("cannot rename into place", path, err);
  }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           Overwrite overwrite, Flush flush) {
  write_file_atomically(path, std::as_bytes(std::span(text.data(), text.size())), overwrite, flush);
}

void sync_file_system(const std::filesystem::path& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("cannot open", directory, errno);
  const int synced = ::syncfs(fd) == 0 ? 0 : errno;
  ::close(fd);
  if (synced != 0) fail("cannot write to disk the files under", directory, synced);
}

std::size_t abandon_writes_in_progress() noexcept {
  auto& registry = in_progress();
  const std::lock_guard lock(registry.mutex);
  registry.abandoned = true;
  for (const auto& tmp : registry.temporaries) ::unlink(tmp.c_str());
  const std::size_t removed = registry.temporaries.size();
  registry.temporaries.clear();
  return removed;
}

}  // namespace streampipe::report
