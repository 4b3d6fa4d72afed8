// SPDX-License-Identifier: Apache-2.0
#pragma once
// SHA-256 (FIPS 180-4), the strong hash behind the kernel cache's keys and checksums.
// Incremental: update() any number of times, then digest() once. Self-contained so the
// cache never depends on whether OpenSSL happens to be installed.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace streampipe::jit {

class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256() noexcept;
  Sha256& update(std::span<const std::byte> data) noexcept;
  Sha256& update(std::string_view text) noexcept;
  // Length-prefixed field: distinct field lists never hash alike ("ab","c" vs "a","bc").
  Sha256& field(std::string_view text) noexcept;
  [[nodiscard]] Digest digest() noexcept;  // finalizes; the object is spent afterwards

  [[nodiscard]] static Digest of(std::string_view text) noexcept;
  [[nodiscard]] static std::string hex(const Digest& digest);

 private:
  void block(const std::uint8_t* p) noexcept;
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes hashed so far
};

}  // namespace streampipe::jit
