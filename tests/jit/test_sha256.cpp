// SPDX-License-Identifier: Apache-2.0
#include "streampipe/jit/sha256.hpp"

#include <gtest/gtest.h>

#include <string>

using streampipe::jit::Sha256;

namespace {

std::string hex_of(std::string_view text) { return Sha256::hex(Sha256::of(text)); }

}  // namespace

// FIPS 180-4 / NIST CAVS example vectors.
TEST(Sha256, FipsVectors) {
  EXPECT_EQ(hex_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex_of("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(hex_of(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalEqualsOneShotAcrossBlockBoundaries) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 7 + 3));
  const auto expected = Sha256::of(data);
  for (std::size_t split : {0u, 1u, 55u, 56u, 63u, 64u, 65u, 127u, 128u, 999u}) {
    Sha256 h;
    h.update(std::string_view(data).substr(0, split));
    h.update(std::string_view(data).substr(split));
    EXPECT_EQ(h.digest(), expected) << "split at " << split;
  }
}

TEST(Sha256, FieldsAreLengthPrefixed) {
  EXPECT_NE(Sha256().field("ab").field("c").digest(), Sha256().field("a").field("bc").digest());
}
