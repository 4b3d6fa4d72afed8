// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal: SHA-256 through OpenSSL's EVP interface, the strong hash behind the kernel
// cache's keys and checksums (disk_cache.cpp).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace streampipe::jit::detail {

using Sha256Digest = std::array<std::uint8_t, 32>;

// Throws std::runtime_error with OpenSSL's reason if the digest cannot be computed (only
// when OpenSSL cannot allocate or has no SHA-256 provider).
[[nodiscard]] Sha256Digest sha256(std::string_view bytes);
// 64 lowercase hex digits.
[[nodiscard]] std::string to_hex(const Sha256Digest& digest);

}  // namespace streampipe::jit::detail
