// SPDX-License-Identifier: Apache-2.0
#include "cache_fixture.hpp"

namespace streampipe::fuzz {

const jit::CacheKey& cache_fixture_key() {
  // The hex need not be the material's digest: decode_entry compares both as given.
  static const jit::CacheKey key{std::string(64, 'a'), std::string("streampipe-jit-cache fuzz fixture\0material", 43)};
  return key;
}

jit::CompileResult cache_fixture_result(jit::BinaryKind kind, std::size_t binary_bytes) {
  jit::CompileResult r;
  r.program_name = "saxpy.cu";
  r.arch = "sm_90";
  r.kind = kind;
  r.log = "warning: nothing to see";
  r.lowered["saxpy<float>"] = "_Z5saxpyIfEvPT_S1_S0_";
  r.lowered["scale"] = "_Z5scalePf";
  r.binary.resize(binary_bytes);
  for (std::size_t i = 0; i < binary_bytes; ++i) r.binary[i] = static_cast<std::byte>((i * 7 + 1) & 0xff);
  return r;
}

}  // namespace streampipe::fuzz
