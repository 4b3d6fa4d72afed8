// SPDX-License-Identifier: Apache-2.0
#include "streampipe/host/atomic_file.hpp"

#include "streampipe/host/read_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>

namespace streampipe::host {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path, int err) {
  throw WriteFileError(fmt::format("{} {}: {}", what, path.string(), std::strerror(err)), err);
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

// The target of a write: refused when it exists and is not a regular file (a rename would
// replace a device, FIFO, socket or link with a regular file), or exists under `refuse`.
void check_target(const std::filesystem::path& path, Overwrite overwrite) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;  // absent (or unreachable: the write will say)
  if (!S_ISREG(st.st_mode))
    throw std::runtime_error(fmt::format("{}: is {}, not a regular file, and is never replaced by a written file",
                                         path.string(), describe_file_type(st.st_mode)));
  if (overwrite == Overwrite::refuse)
    throw std::runtime_error(fmt::format("{} exists (use --force to overwrite)", path.string()));
}

// ".<name>.tmp-XXXXXX" beside `path`, the name cut short where the whole would exceed the
// folder's longest file name (a name of 244-255 bytes could otherwise never be written).
std::string temporary_template(const std::filesystem::path& parent, const std::filesystem::path& path) {
  std::string name = path.filename().string();
  const long longest = ::pathconf(parent.c_str(), _PC_NAME_MAX);
  const std::size_t limit = longest > 0 ? static_cast<std::size_t>(longest) : 255;
  constexpr std::size_t kAdded = std::char_traits<char>::length("..tmp-XXXXXX");
  if (name.size() + kAdded > limit) name.resize(limit > kAdded + 1 ? limit - kAdded : 1);
  return (parent / fmt::format(".{}.tmp-XXXXXX", name)).string();
}

// A temporary file beside `path`, registered for abandon_writes_in_progress().
struct Temporary {
  int fd = -1;
  std::string path;
};

Temporary open_temporary(const std::filesystem::path& path, Overwrite overwrite) {
  namespace fs = std::filesystem;
  check_target(path, overwrite);
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw WriteFileError(fmt::format("cannot create {}: {}", parent.string(), ec.message()), ec.value());
  auto& registry = in_progress();
  Temporary t{-1, temporary_template(parent, path)};
  const std::lock_guard lock(registry.mutex);
  if (registry.abandoned) abandoned(path);
  t.fd = ::mkstemp(t.path.data());
  if (t.fd < 0) fail("cannot create a temporary file next to", path, errno);
  registry.temporaries.insert(t.path);
  return t;
}

// Writes all of `data` to `fd`; errno of the failure, or 0.
int write_all(int fd, const char* p, std::size_t left) {
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return 0;
}

// The temporary file, complete and closed, in place of `path`.
void publish(const std::string& tmp, const std::filesystem::path& path, Overwrite overwrite) {
  auto& registry = in_progress();
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

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> data,
                           Overwrite overwrite, Flush flush, unsigned mode) {
  const Temporary t = open_temporary(path, overwrite);
  const int fd = t.fd;
  const std::string& tmp = t.path;

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
  if (const int err = write_all(fd, reinterpret_cast<const char*>(data.data()), data.size())) {
    ::close(fd);
    forget_temporary(tmp);
    fail("cannot write", path, err);
  }
  // mkstemp creates 0600; give the output the permissions a plain open() would.
  (void)::fchmod(fd, static_cast<mode_t>(mode) & ~process_umask());
  // Flush::later: the write-back starts now, on the disk's time, not the caller's; an error
  // in it shows in sync_files().
  if (!sync_now && !data.empty()) (void)::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  // A full disk may only show here (delayed allocation), so both results count.
  const int synced = !sync_now || ::fsync(fd) == 0 ? 0 : errno;
  const int closed = ::close(fd) == 0 ? 0 : errno;
  if (synced != 0 || closed != 0) {
    forget_temporary(tmp);
    fail("cannot write", path, synced != 0 ? synced : closed);
  }
  publish(tmp, path, overwrite);
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           Overwrite overwrite, Flush flush, unsigned mode) {
  write_file_atomically(path, std::as_bytes(std::span(text.data(), text.size())), overwrite, flush, mode);
}

AtomicFileWriter::AtomicFileWriter(std::filesystem::path path, Overwrite overwrite)
    : path_(std::move(path)), overwrite_(overwrite) {
  const Temporary t = open_temporary(path_, overwrite_);
  fd_ = t.fd;
  tmp_ = t.path;
  buffer_.reserve(kBuffer);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ < 0) return;
  ::close(fd_);
  forget_temporary(tmp_);
}

void AtomicFileWriter::write(std::string_view text) {
  if (fd_ < 0) throw std::logic_error(fmt::format("{}: written after commit()", path_.string()));
  buffer_.append(text);
  if (buffer_.size() >= kBuffer) drain();
}

void AtomicFileWriter::drain() {
  if (const int err = write_all(fd_, buffer_.data(), buffer_.size())) fail("cannot write", path_, err);
  buffer_.clear();
}

void AtomicFileWriter::commit() {
  if (fd_ < 0) throw std::logic_error(fmt::format("{}: committed twice", path_.string()));
  drain();
  (void)::fchmod(fd_, 0666 & ~process_umask());
  const int synced = ::fsync(fd_) == 0 ? 0 : errno;
  const int closed = ::close(fd_) == 0 ? 0 : errno;
  fd_ = -1;
  if (synced != 0 || closed != 0) {
    forget_temporary(tmp_);
    fail("cannot write", path_, synced != 0 ? synced : closed);
  }
  publish(tmp_, path_, overwrite_);
}

namespace {

// errno of opening `path` and fsync'ing it, 0 when both succeeded.
int fsync_path(const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return errno;
  const int synced = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return synced;
}

// body(i) for every i < n, on up to `threads` threads (this one among them).
template <typename Body>
void for_each_index(std::size_t n, unsigned threads, const Body& body) {
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) body(i);
  };
  std::vector<std::jthread> helpers;
  const std::size_t extra = std::min<std::size_t>(std::max(threads, 1u), n) - (n > 0 ? 1 : 0);
  for (std::size_t t = 0; t < extra; ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads (a process limit): those started and this one do the rest
    }
  }
  work();
}

std::string reason(int err) { return std::error_code(err, std::system_category()).message(); }

}  // namespace

WriteFileError::WriteFileError(const std::string& message, int error_number)
    : std::runtime_error(message), error_number_(error_number) {}

std::vector<std::string> sync_files(std::span<const std::filesystem::path> files, unsigned threads) {
  std::vector<std::string> errors(files.size());
  for_each_index(files.size(), threads, [&](std::size_t i) {
    if (const int err = fsync_path(files[i], O_RDONLY))
      errors[i] = fmt::format("cannot write {} to disk: {}", files[i].string(), reason(err));
  });
  // A rename is on disk once its folder is.
  std::map<std::filesystem::path, std::vector<std::size_t>> folders;
  for (std::size_t i = 0; i < files.size(); ++i)
    if (errors[i].empty()) folders[files[i].has_parent_path() ? files[i].parent_path() : "."].push_back(i);
  std::vector<const std::pair<const std::filesystem::path, std::vector<std::size_t>>*> list;
  for (const auto& f : folders) list.push_back(&f);
  for_each_index(list.size(), threads, [&](std::size_t k) {
    const auto& [folder, members] = *list[k];
    if (const int err = fsync_path(folder, O_RDONLY | O_DIRECTORY))
      for (const std::size_t i : members)
        errors[i] = fmt::format("cannot write the folder {} to disk: {}", folder.string(), reason(err));
  });
  return errors;
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

}  // namespace streampipe::host
