// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a generated kernel (elementwise, reduction) keeps per device: its loaded module and
// kernels, built once per device on first use and shared by every later launch. Thread-safe;
// two threads racing on a first use both build, and the first result is kept (equal anyway).

#include "streampipe/cuda/device.hpp"
#include "streampipe/jit/module_cache.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace streampipe::jit {

template <typename Compiled>
class PerDevice {
 public:
  // build(device, stats) -> std::shared_ptr<Compiled>; called without the lock held.
  template <typename Build>
  const Compiled& get(const Device& device, LoadStats* stats, Build&& build) const {
    {
      const std::lock_guard lock(mutex_);
      if (const auto it = compiled_.find(device.index()); it != compiled_.end()) {
        if (stats != nullptr) stats->origin = LoadOrigin::memory;
        return *it->second;
      }
    }
    std::shared_ptr<const Compiled> built = build(device, stats);
    const std::lock_guard lock(mutex_);
    return *compiled_.try_emplace(device.index(), std::move(built)).first->second;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::map<int, std::shared_ptr<const Compiled>> compiled_;
};

// A generated source as a Program with the caller's extra compile options.
[[nodiscard]] Program generated_program(const std::string& name, const std::string& source,
                                        const std::vector<std::string>& options);

class Kernel;
// Blocks of `block` threads that can be resident at once on the whole device: the grid
// size of a grid-stride kernel.
[[nodiscard]] unsigned resident_grid(const Device& device, const Kernel& kernel, unsigned block);

}  // namespace streampipe::jit
