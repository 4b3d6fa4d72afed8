// SPDX-License-Identifier: Apache-2.0
#pragma once
// The run's files handed out in job order to whoever asks first: the host threads that
// convert files while the GPU starts take one at a time, the engine a group at a time. Each
// file is handed out exactly once. Pure (an atomic counter), so it is tested alone.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <optional>

namespace streampipe::tools::gray::detail {

struct FileRange {
  std::size_t first = 0;
  std::size_t count = 0;
};

class FileCursor {
 public:
  explicit FileCursor(std::size_t files) noexcept : files_(files) {}

  // The next files, at most `n` (n >= 1) of them, or nullopt once every file is handed out
  // or the cursor is closed. Thread-safe.
  [[nodiscard]] std::optional<FileRange> claim(std::size_t n) noexcept {
    if (closed_.load(std::memory_order_acquire)) return std::nullopt;
    const std::size_t first = next_.fetch_add(n, std::memory_order_relaxed);
    if (first >= files_) return std::nullopt;
    return FileRange{first, std::min(n, files_ - first)};
  }

  // No claim after this one returns succeeds (a claim racing with it may still); for a stop.
  void close() noexcept { closed_.store(true, std::memory_order_release); }

  // Files handed out so far: they are [0, claimed()).
  [[nodiscard]] std::size_t claimed() const noexcept {
    return std::min(files_, next_.load(std::memory_order_relaxed));
  }

 private:
  const std::size_t files_;
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> closed_{false};
};

}  // namespace streampipe::tools::gray::detail
