// SPDX-License-Identifier: Apache-2.0
#pragma once
// Decoded bytes shared by every thread decoding at once. A pixel limit bounds one image, not
// what several threads hold together: a 2 MB PNG of 16384^2 16-bit RGBA pixels passes the
// default limit and decodes to 2 GiB, and 16 threads taking such files at once would need
// 32 GiB. With a budget (DecodeLimits::budget), a decoder reserves an image's bytes from its
// header before allocating them, and waits while other threads hold the rest; an image
// larger than the whole budget fails alone, named, with both figures. A thread that holds a
// reservation already is never made to wait (it could be waiting for itself): it may go
// past the budget by that one image.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace streampipe::io {

// Made with std::make_shared (DecodeLimits::budget): each reservation keeps it alive.
class DecodeBudget : public std::enable_shared_from_this<DecodeBudget> {
 public:
  // `bytes` in all; `what` says where the figure comes from, in refusals ("--max-memory-mib
  // 512", "half the memory available").
  DecodeBudget(std::uint64_t bytes, std::string what);

  // Holds `bytes` until the last copy of the returned handle is gone (an Image keeps it).
  // Throws ImageError(source, ...) when `bytes` exceed the whole budget.
  [[nodiscard]] std::shared_ptr<const void> reserve(std::uint64_t bytes, const std::string& source);

  [[nodiscard]] std::uint64_t total() const noexcept { return total_; }
  [[nodiscard]] std::uint64_t held() const;
  [[nodiscard]] std::uint64_t peak() const;  // the most held at once

 private:
  void release(std::uint64_t bytes) noexcept;
  std::uint64_t total_;
  std::string what_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  std::uint64_t held_ = 0;
  std::uint64_t peak_ = 0;
};

}  // namespace streampipe::io
