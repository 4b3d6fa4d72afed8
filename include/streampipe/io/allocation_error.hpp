// SPDX-License-Identifier: Apache-2.0
#pragma once
// An allocation of a known size that failed, with a message that says what it was for:
// "cannot allocate 12.0 GiB (12884901888 bytes) for a 65536x65536 RGB image". A plain
// std::bad_alloc names nothing, and a user who asked for too large an image or board must
// learn which and how large. Derives from std::bad_alloc, so every handler of out-of-memory
// still catches it; copying never throws (the message is shared, as in std::runtime_error).

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

namespace streampipe::io {

class AllocationError : public std::bad_alloc {
 public:
  // `purpose` completes "for ...", e.g. "a 65536x65536 RGB image".
  AllocationError(std::uint64_t bytes, const std::string& purpose);
  [[nodiscard]] const char* what() const noexcept override { return message_.what(); }
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }

 private:
  std::runtime_error message_;
  std::uint64_t bytes_;
};

// "12.0 GiB", "512 MiB", "837 bytes": the size in the largest binary unit it reaches.
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);

}  // namespace streampipe::io
