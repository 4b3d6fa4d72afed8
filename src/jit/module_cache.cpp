// SPDX-License-Identifier: Apache-2.0
#include "streampipe/jit/module_cache.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <utility>

namespace streampipe::jit {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

struct MemoryCache {
  std::mutex mutex;
  std::map<std::pair<int, std::string>, Module> modules;
};
// Never destroyed: unloading modules while the process exits races the runtime's own
// teardown, and the driver frees everything with the context anyway.
MemoryCache& memory_cache() {
  static MemoryCache* const cache = new MemoryCache;
  return *cache;
}

// One line per directory and process: a read-only cache should not flood the output.
void warn_once(const std::string& directory, const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  const std::lock_guard lock(mutex);
  if (warned.insert(directory).second)
    std::fprintf(stderr, "streampipe: kernel cache: %s (continuing without the cache)\n", message.c_str());
}

std::optional<DiskCache> disk_cache_for(const CacheOptions& options) {
  if (!options.disk) return std::nullopt;
  if (options.directory) return DiskCache(*options.directory);
  if (auto dir = DiskCache::directory_from_environment()) return DiskCache(*dir);
  return std::nullopt;
}

CompileResult compile_with_disk(const Program& program, const std::string& arch, const CacheKey& key,
                                const CacheOptions& options, LoadStats& stats) {
  const auto disk = disk_cache_for(options);
  if (disk) {
    CacheLoad loaded = disk->load(key);
    if (loaded.status == CacheLookup::hit) {
      stats.origin = LoadOrigin::disk;
      return std::move(*loaded.result);
    }
    if (loaded.status == CacheLookup::corrupt) stats.cache_warning = "rejected " + loaded.detail + "; recompiled";
    if (loaded.status == CacheLookup::refused) {
      stats.cache_warning = "not trusted: " + loaded.detail + "; recompiled";
      warn_once(disk->directory().string(), stats.cache_warning);
    }
  }
  CompileResult result = compile(program, arch);
  stats.origin = LoadOrigin::compiled;
  stats.compile_ms = result.compile_ms;
  if (disk) {
    if (const std::string error = disk->store(key, result); !error.empty()) {
      stats.cache_warning = error;
      warn_once(disk->directory().string(), error);
    }
  }
  return result;
}

}  // namespace

const char* to_string(LoadOrigin origin) noexcept {
  switch (origin) {
    case LoadOrigin::memory: return "memory";
    case LoadOrigin::disk: return "disk";
    case LoadOrigin::compiled: return "compiled";
  }
  return "?";
}

CompileResult compile_cached(const Program& program, const std::string& arch, const CacheOptions& options,
                             LoadStats* stats) {
  const auto start = Clock::now();
  const std::string target = arch.empty() ? program.arch() : arch;
  if (target.empty()) throw JitError(fmt::format("{}: no target architecture given", program.name()));
  LoadStats local;
  const CacheKey key = cache_key(program, target);
  local.key = key.hex;
  CompileResult result = compile_with_disk(program, target, key, options, local);
  local.total_ms = ms_since(start);
  if (stats != nullptr) *stats = std::move(local);
  return result;
}

Module load_module(const Device& device, const Program& program, const CacheOptions& options, LoadStats* stats) {
  const auto start = Clock::now();
  const std::string arch = program.arch().empty() ? default_arch(device) : program.arch();
  LoadStats local;
  const CacheKey key = cache_key(program, arch);
  local.key = key.hex;
  const auto slot = std::make_pair(device.index(), key.hex);
  if (options.memory) {
    auto& cache = memory_cache();
    const std::lock_guard lock(cache.mutex);
    if (const auto it = cache.modules.find(slot); it != cache.modules.end()) {
      local.origin = LoadOrigin::memory;
      local.total_ms = ms_since(start);
      if (stats != nullptr) *stats = std::move(local);
      return it->second;
    }
  }
  Module module(device, compile_with_disk(program, arch, key, options, local));
  if (options.memory) {
    auto& cache = memory_cache();
    const std::lock_guard lock(cache.mutex);
    cache.modules.insert_or_assign(slot, module);
  }
  local.total_ms = ms_since(start);
  if (stats != nullptr) *stats = std::move(local);
  return module;
}

void clear_memory_cache() {
  auto& cache = memory_cache();
  std::map<std::pair<int, std::string>, Module> dropped;
  {
    const std::lock_guard lock(cache.mutex);
    dropped.swap(cache.modules);
  }
}

}  // namespace streampipe::jit
