// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel-cache key and compile result that the cache fuzzer's seeds are written with
// (fuzz/seeds) and that the fuzz target reads entries against.

#include "streampipe/jit/disk_cache.hpp"

namespace streampipe::fuzz {

[[nodiscard]] const jit::CacheKey& cache_fixture_key();
// A result with every field set: a log, two lowered names, a binary of `binary_bytes`.
[[nodiscard]] jit::CompileResult cache_fixture_result(jit::BinaryKind kind, std::size_t binary_bytes);

}  // namespace streampipe::fuzz
