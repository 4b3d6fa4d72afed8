// SPDX-License-Identifier: Apache-2.0
// Where the bytes of a claimed output go (see outputs.hpp): standard output, a device or
// FIFO written as it is, or a file that appears whole (host::write_file_atomically, or piece
// by piece through an OutputSink).
#include "outputs.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <unistd.h>
#include <utility>

namespace streampipe::cli {
namespace {

// A device or FIFO, opened as it is (never created or renamed).
int open_direct(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot open {} for writing: {}", path, std::strerror(errno)));
  return fd;
}

// All of `content` into `fd`; closes it and throws naming `path` on a failure.
void write_fd(int fd, const std::string& path, std::string_view content) {
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(err)));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

// The whole of `content` into a device or FIFO.
void write_direct(const std::string& path, std::string_view content) {
  const int fd = open_direct(path);
  try {
    write_fd(fd, path, content);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
}

void write_stdout(std::string_view content, bool flush = true) {
  errno = 0;
  // fwrite's pointer must not be null even for zero bytes (an empty view's may be).
  if ((!content.empty() && std::fwrite(content.data(), 1, content.size(), stdout) != content.size()) ||
      (flush && std::fflush(stdout) != 0)) {
    const int err = errno != 0 ? errno : EIO;
    throw StdoutError(fmt::format("cannot write to standard output: {}", std::strerror(err)));
  }
}

}  // namespace

void Outputs::write(const std::string& path, std::string_view content) const {
  if (path.empty()) return;
  if (path == "-") {
    write_stdout(content);
    return;
  }
  const auto it = targets_.find(path);
  if (it == targets_.end()) throw std::logic_error(fmt::format("{} is written without being claimed", path));
  if (it->second.direct)
    write_direct(it->second.write_path, content);
  else
    host::write_file_atomically(it->second.write_path, content, overwrite());
}

OutputSink Outputs::open(const std::string& path) const {
  if (path.empty()) throw std::logic_error("an output without a name is opened");
  OutputSink sink;
  sink.path_ = path;
  if (path == "-") {
    sink.to_stdout_ = true;
    return sink;
  }
  const auto it = targets_.find(path);
  if (it == targets_.end()) throw std::logic_error(fmt::format("{} is opened without being claimed", path));
  if (it->second.direct)
    sink.fd_ = open_direct(it->second.write_path);
  else
    sink.file_ = std::make_unique<host::AtomicFileWriter>(it->second.write_path, overwrite());
  return sink;
}

OutputSink::OutputSink(OutputSink&& other) noexcept
    : path_(std::move(other.path_)),
      to_stdout_(other.to_stdout_),
      fd_(std::exchange(other.fd_, -1)),
      file_(std::move(other.file_)) {}

OutputSink& OutputSink::operator=(OutputSink&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    to_stdout_ = other.to_stdout_;
    fd_ = std::exchange(other.fd_, -1);
    file_ = std::move(other.file_);
  }
  return *this;
}

OutputSink::~OutputSink() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputSink::write(std::string_view text) {
  if (to_stdout_)
    write_stdout(text, false);  // stdio buffers; a closed pipe shows at the buffer's write
  else if (fd_ >= 0)
    write_fd(fd_, path_, text);
  else if (file_)
    file_->write(text);
}

void OutputSink::commit() {
  if (to_stdout_) {
    write_stdout({}, true);
  } else if (fd_ >= 0) {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) throw std::runtime_error(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
  } else if (file_) {
    file_->commit();
  }
}

}  // namespace streampipe::cli
