// SPDX-License-Identifier: Apache-2.0
// The kernel cache's SHA-256 (OpenSSL's EVP) against the FIPS 180-4 / NIST CAVS example
// vectors: the cache's entry names and checksums are these hex digests, so a digest that
// changed would orphan every entry on disk.

#include "sha256.hpp"  // src/jit (internal)

#include <gtest/gtest.h>

#include <string>

namespace {

using streampipe::jit::detail::sha256;
using streampipe::jit::detail::to_hex;

std::string hex_of(std::string_view text) { return to_hex(sha256(text)); }

TEST(Sha256, FipsVectors) {
  EXPECT_EQ(hex_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex_of("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(hex_of(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, BinaryInputAndLowercaseHex) {
  const std::string zeros(64, '\0');  // embedded NULs are data, not terminators
  EXPECT_EQ(hex_of(zeros), "f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a92759fb4b");
  const std::string hex = hex_of("abc");
  EXPECT_EQ(hex.size(), 64u);
  EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos);
}

}  // namespace
