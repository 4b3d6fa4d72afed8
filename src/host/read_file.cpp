// SPDX-License-Identifier: Apache-2.0
#include "streampipe/host/read_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace streampipe::host {

ReadFileError::ReadFileError(const std::filesystem::path& path, std::string reason, int error_number)
    : std::runtime_error(fmt::format("{}: {}", path.string(), reason)),
      reason_(std::move(reason)),
      error_number_(error_number) {}

const char* describe_file_type(unsigned mode) noexcept {
  const auto m = static_cast<mode_t>(mode);
  if (S_ISREG(m)) return "a regular file";
  if (S_ISDIR(m)) return "a folder";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "a special file";
}

namespace {

// An open regular file, examined before anything is read.
struct Opened {
  int fd = -1;
  std::uint64_t size = 0;
  Opened(const Opened&) = delete;
  Opened& operator=(const Opened&) = delete;
  explicit Opened(const std::filesystem::path& path) {
    // O_NONBLOCK: opening a FIFO without a writer would otherwise wait for one.
    fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      throw ReadFileError(path, fmt::format("cannot open: {}", std::strerror(err)), err);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      throw ReadFileError(path, fmt::format("cannot examine: {}", std::strerror(err)), err);
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      throw ReadFileError(path, fmt::format("is {}, not a regular file", describe_file_type(st.st_mode)),
                          S_ISDIR(st.st_mode) ? EISDIR : 0);
    }
    size = static_cast<std::uint64_t>(st.st_size);
  }
  ~Opened() { ::close(fd); }
  // Fills data[from, end) as far as the file goes; the end reached.
  std::size_t read_into(const std::filesystem::path& path, std::vector<std::byte>& data, std::size_t from) const {
    std::size_t done = from;
    while (done < data.size()) {
      const ssize_t n = ::read(fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        throw ReadFileError(path, fmt::format("cannot read: {}", std::strerror(err)), err);
      }
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    return done;
  }
};

}  // namespace

std::vector<std::byte> read_regular_file(const std::filesystem::path& path, const HeadCheck& check,
                                         std::size_t head_bytes) {
  const Opened file(path);
  const auto shrank = [&](std::size_t got) {
    return ReadFileError(path, fmt::format("read {} of {} bytes (the file shrank)", got, file.size));
  };
  std::vector<std::byte> data(static_cast<std::size_t>(std::min<std::uint64_t>(file.size, head_bytes)));
  if (const std::size_t got = file.read_into(path, data, 0); got != data.size()) throw shrank(got);
  if (check) check(data, file.size);
  const std::size_t head = data.size();
  data.resize(static_cast<std::size_t>(file.size));
  if (const std::size_t got = file.read_into(path, data, head); got != data.size()) throw shrank(got);
  return data;
}

std::optional<std::vector<std::byte>> read_file_head(const std::filesystem::path& path, std::size_t bytes) noexcept {
  try {
    const Opened file(path);
    std::vector<std::byte> head(static_cast<std::size_t>(std::min<std::uint64_t>(file.size, bytes)));
    head.resize(file.read_into(path, head, 0));
    return head;
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace streampipe::host
