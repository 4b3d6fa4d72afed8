// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading a file whole, safely: it is opened without blocking and examined before anything
// is read, so that a FIFO (which would block until a writer came), a device (/dev/zero never
// ends) or a folder is refused by its kind, and a caller can check the first bytes and the
// size (a magic number, a limit) before the rest is read into memory: a 1.5 GB file of
// garbage costs the few bytes that show it is garbage.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace streampipe::host {

class ReadFileError : public std::runtime_error {
 public:
  ReadFileError(const std::filesystem::path& path, std::string reason, int error_number = 0);
  // Without the path: "is a FIFO, not a regular file", "cannot open: Permission denied".
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
  // The errno the system gave (ENOENT, EACCES; EISDIR for a folder, as open() for writing
  // says), so that callers can report it as their language does (Python's OSError); 0 for
  // a refusal of streampipe's own (a FIFO, a device, a file that shrank).
  [[nodiscard]] int error_number() const noexcept { return error_number_; }

 private:
  std::string reason_;
  int error_number_ = 0;
};

// Called with the first bytes (up to the head's length, fewer in a shorter file) and the
// file's size before the rest is read; throws to stop the read.
using HeadCheck = std::function<void(std::span<const std::byte> head, std::uint64_t size)>;

// The regular file `path` (links followed), whole. Throws ReadFileError naming the path and
// the kind of a file that is not regular ("a FIFO", "a character device", "a folder"), or
// the system's reason; what `check` throws after reading `head_bytes`; and ReadFileError
// when the file shrinks while being read.
[[nodiscard]] std::vector<std::byte> read_regular_file(const std::filesystem::path& path, const HeadCheck& check = {},
                                                       std::size_t head_bytes = 64);

// Up to `bytes` first bytes of the regular file `path`, opened the same way; nullopt when it
// is not a regular file or cannot be read.
[[nodiscard]] std::optional<std::vector<std::byte>> read_file_head(const std::filesystem::path& path,
                                                                   std::size_t bytes) noexcept;

// "a FIFO", "a character device", ... for a stat mode that is not a regular file.
[[nodiscard]] const char* describe_file_type(unsigned mode) noexcept;

}  // namespace streampipe::host
