// SPDX-License-Identifier: Apache-2.0
#pragma once
// Compile-or-load with both caches:
//   Module m = load_module(gpu, program);   // memory cache, then disk cache, then NVRTC
// The in-memory cache is per device and per process, keyed like the disk cache. The disk
// cache location and switch come from the environment (see disk_cache.hpp) unless
// CacheOptions says otherwise. A disk cache that cannot be written is reported once on
// stderr and in LoadStats::cache_warning; the compile still succeeds.

#include "streampipe/jit/disk_cache.hpp"
#include "streampipe/jit/module.hpp"
#include "streampipe/jit/program.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace streampipe::jit {

struct CacheOptions {
  bool memory = true;
  bool disk = true;                                 // still off if the environment says so
  std::optional<std::filesystem::path> directory;   // overrides the environment
};

enum class LoadOrigin { memory, disk, compiled };

struct LoadStats {
  LoadOrigin origin = LoadOrigin::compiled;
  std::string key;             // the cache key (hex)
  double compile_ms = 0.0;     // NVRTC time, when it compiled
  double total_ms = 0.0;       // key, lookup, compile and load together
  std::string cache_warning;   // a corrupt entry replaced, or an unwritable directory
};

// Without a device: the disk-cached compile alone (arch must be set on the program or given).
[[nodiscard]] CompileResult compile_cached(const Program& program, const std::string& arch,
                                           const CacheOptions& options = {}, LoadStats* stats = nullptr);

[[nodiscard]] Module load_module(const Device& device, const Program& program,
                                 const CacheOptions& options = {}, LoadStats* stats = nullptr);

// Drops every module of the in-memory cache (modules still referenced stay loaded).
void clear_memory_cache();

[[nodiscard]] const char* to_string(LoadOrigin origin) noexcept;

}  // namespace streampipe::jit
