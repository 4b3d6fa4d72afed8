// SPDX-License-Identifier: Apache-2.0
#include "outputs.hpp"

#include "commands.hpp"

#include "streampipe/host/file_content.hpp"
#include "streampipe/host/read_file.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
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

// What `option` writes to `path`: what the option always writes, else (a benchmark's
// declared outputs, the files -o names) by the path's extension.
host::Content expected_content(std::string_view option, const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (option == "--json" || option == "--report-json" || option == "--trace") return host::Content::json;
  if (option == "--gantt" || option == "--svg") return host::Content::svg;
  if (option == "--population") return ext == ".json" ? host::Content::json : host::Content::text;
  if (ext == ".json") return host::Content::json;
  if (ext == ".svg") return host::Content::svg;
  if (ext == ".png") return host::Content::png;
  if (ext == ".jpg" || ext == ".jpeg") return host::Content::jpeg;
  return host::Content::text;
}

// An existing file that `option` would replace holds content of its own kind (an image an
// option took as its value by mistake, "--json a.png b.png", is never replaced).
void check_content(std::string_view option, const std::string& path) {
  const auto head = host::read_file_head(path, 4096);
  if (!head) return;  // unreadable: the write itself will say what is wrong
  const host::Content found = host::sniff_content(*head);
  const host::Content written = expected_content(option, path);
  if (host::may_replace(written, found)) return;
  throw UsageError(fmt::format("{} {}: the file holds {}, not {}; an output never replaces a file of another kind, "
                               "--force or not (did {} take another argument as its value?)",
                               option, path, host::describe(found), host::describe(written), option));
}

// The folder `path` would be created in, or its nearest existing parent, must let this
// process create files: found before any work, not after it (a read-only --json target).
void check_writable_folder(std::string_view option, const std::string& path, bool is_folder) {
  fs::path dir = is_folder ? fs::path(path) : fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  while (!fs::exists(dir, ec) && dir.has_parent_path() && dir.parent_path() != dir) dir = dir.parent_path();
  if (!fs::is_directory(dir, ec)) return;  // a file on the way: the write names it
  if (::faccessat(AT_FDCWD, dir.c_str(), W_OK | X_OK, AT_EACCESS) == 0) return;
  const int err = errno;
  throw UsageError(fmt::format("{} {}: cannot create files in {}: {}", option, path, dir.string(), std::strerror(err)));
}

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
