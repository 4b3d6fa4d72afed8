// SPDX-License-Identifier: Apache-2.0
#include "sha256.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <stdexcept>

namespace streampipe::jit::detail {

Sha256Digest sha256(std::string_view bytes) {
  Sha256Digest digest{};
  unsigned size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1 ||
      size != digest.size()) [[unlikely]] {
    char reason[256] = "no reason given";
    if (const unsigned long code = ERR_get_error(); code != 0) ERR_error_string_n(code, reason, sizeof reason);
    throw std::runtime_error(fmt::format("OpenSSL could not compute a SHA-256 digest: {}", reason));
  }
  return digest;
}

std::string to_hex(const Sha256Digest& digest) { return fmt::format("{:02x}", fmt::join(digest, "")); }

}  // namespace streampipe::jit::detail
