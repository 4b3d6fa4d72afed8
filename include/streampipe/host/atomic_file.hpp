// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writes a file so that readers see either the old content or the complete new content,
// never a partial one: the data goes to a temporary file (".<name>.tmp-XXXXXX", the name cut
// short where it would be too long) in the same directory, is flushed, then renamed over the
// target. Parent directories are created. Only a regular file is ever replaced: an existing
// symbolic link, device, FIFO, socket or folder at the target is an error, whatever
// Overwrite says (a rename would turn /dev/null into a regular file).
//
// A process that must end at once (a second Ctrl-C) calls abandon_writes_in_progress()
// first: the temporary files of writes under way are removed and no write completes after,
// so an interrupted run leaves neither debris nor a half-written target.

#include <cstddef>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace streampipe::host {

enum class Overwrite { allow, refuse };

// The system refused a write: what() names the file and the reason; error_number() is the
// errno, so that callers can report it as their language does (Python's PermissionError).
class WriteFileError : public std::runtime_error {
 public:
  WriteFileError(const std::string& message, int error_number);
  [[nodiscard]] int error_number() const noexcept { return error_number_; }

 private:
  int error_number_ = 0;
};

// When the data reaches the disk. each_file: fsync before the rename, so the file is durable
// when the call returns. later: the file's blocks are reserved before the data is written
// (fallocate; a full disk fails the call as with each_file) and its write-back is started
// (sync_file_range) without waiting for it; the caller makes its files durable with
// sync_files() after its last write, by when most of the data is on disk. Until then a power
// loss, not a crash of the process, can lose files already renamed into place. Where the
// file system cannot reserve blocks, `later` falls back to each_file for that file.
enum class Flush { each_file, later };

// Throws std::runtime_error naming the target path and the system error (a WriteFileError,
// carrying the errno, where the system refused) or, after abandon_writes_in_progress(), that
// the process is ending. With Overwrite::refuse an
// existing target is an error (checked before writing and again by the link step). The file
// gets `mode` less the process's umask, as open() would give it.
void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> data,
                           Overwrite overwrite = Overwrite::allow, Flush flush = Flush::each_file,
                           unsigned mode = 0666);
void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           Overwrite overwrite = Overwrite::allow, Flush flush = Flush::each_file,
                           unsigned mode = 0666);

// The same, for a file written piece by piece whose size is not known at first (a row per
// generation): write() buffers into the temporary file, commit() flushes it to disk and
// renames it into place; destroyed without commit() (a failure, an interruption) the
// temporary file is removed and the target left as it was. Throws as write_file_atomically.
class AtomicFileWriter {
 public:
  AtomicFileWriter(std::filesystem::path path, Overwrite overwrite);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(std::string_view text);
  void commit();

 private:
  void drain();
  static constexpr std::size_t kBuffer = std::size_t{1} << 16;
  std::filesystem::path path_;
  Overwrite overwrite_;
  int fd_ = -1;
  std::string tmp_;
  std::string buffer_;
};

// Makes files written with Flush::later durable: each file (fsync), then each folder they are
// in (fsync, for the renames), on up to `threads` threads at once. Only these files are
// flushed, not the rest of their file system. Returns an entry per file: empty when it is on
// disk, else why not, naming the file or its folder. A failure is reported, not thrown.
[[nodiscard]] std::vector<std::string> sync_files(std::span<const std::filesystem::path> files, unsigned threads);

// Removes the temporary file of every write_file_atomically under way in this process and
// makes those writes, and every later one, fail without touching their targets. For a
// process about to end (it cannot be undone); thread-safe, not async-signal-safe (call it
// from a thread that waits for signals, not from a handler). Returns the files removed.
std::size_t abandon_writes_in_progress() noexcept;

}  // namespace streampipe::host
