// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the kernel-cache entry reader (jit::decode_entry). Any bytes must decode or
// throw JitError. An entry's trailing SHA-256 guards its body, so the target reads each input
// twice: as it is (the checksum path) and with the checksum made right, which lets the
// fuzzer reach the length-prefixed fields behind it. What decodes must encode and decode
// again to the same result.

#include "cache_fixture.hpp"

#include "streampipe/jit/errors.hpp"

#include <openssl/sha.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace {

using namespace streampipe;

std::optional<jit::CompileResult> decode_or_refuse(const std::string& bytes) {
  try {
    return jit::decode_entry(bytes, fuzz::cache_fixture_key());
  } catch (const jit::JitError&) {
    return std::nullopt;
  }
}

void check(bool ok) {
  if (!ok) std::abort();  // libFuzzer reports the input
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  (void)decode_or_refuse(bytes);
  if (bytes.size() < SHA256_DIGEST_LENGTH) return 0;
  const std::size_t body = bytes.size() - SHA256_DIGEST_LENGTH;
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), body, reinterpret_cast<unsigned char*>(&bytes[body]));
  const auto result = decode_or_refuse(bytes);
  if (!result) return 0;
  check(result->from_disk_cache && !result->binary.empty());
  const auto again = decode_or_refuse(jit::encode_entry(fuzz::cache_fixture_key(), *result));
  check(again.has_value());
  check(again->program_name == result->program_name && again->arch == result->arch && again->kind == result->kind &&
        again->log == result->log && again->lowered == result->lowered && again->binary == result->binary);
  return 0;
}
