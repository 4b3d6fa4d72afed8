// SPDX-License-Identifier: Apache-2.0
#include "streampipe/report/atomic_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sys/stat.h>
#include <stdexcept>
#include <string>
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

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> data,
                           Overwrite overwrite) {
  namespace fs = std::filesystem;
  if (overwrite == Overwrite::refuse && fs::exists(path))
    throw std::runtime_error(fmt::format("{} exists (use --force to overwrite)", path.string()));
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create {}: {}", parent.string(), ec.message()));

  std::string tmpl = (parent / fmt::format(".{}.tmp-XXXXXX", path.filename().string())).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) fail("cannot create a temporary file next to", path, errno);
  const fs::path tmp = tmpl;
  const auto cleanup = [&] { ::unlink(tmp.c_str()); };

  const auto* p = reinterpret_cast<const char*>(data.data());
  std::size_t left = data.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      cleanup();
      fail("cannot write", tmp, err);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  // mkstemp creates 0600; give the output the permissions a plain open() would.
  (void)::fchmod(fd, 0666 & ~process_umask());
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    cleanup();
    fail("cannot flush", tmp, err);
  }
  if (overwrite == Overwrite::refuse) {
    // link() fails if the target appeared meanwhile, unlike rename().
    if (::link(tmp.c_str(), path.c_str()) != 0) {
      const int err = errno;
      cleanup();
      if (err == EEXIST)
        throw std::runtime_error(fmt::format("{} exists (use --force to overwrite)", path.string()));
      fail("cannot create", path, err);
    }
    cleanup();
    return;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    cleanup();
    fail("cannot rename into place", path, err);
  }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           Overwrite overwrite) {
  write_file_atomically(path, std::as_bytes(std::span(text.data(), text.size())), overwrite);
}

}  // namespace streampipe::report
