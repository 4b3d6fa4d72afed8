// SPDX-License-Identifier: Apache-2.0
#pragma once
// Launch configuration from problem size and device limits, and a checked launch.
//   auto cfg = LaunchConfig::for_elements(device, n, 256);
//   launch(stream, cfg, my_kernel, d_out, d_in, n);
// Arguments are converted to the kernel's parameter types at compile time; the launch is
// validated against the device (block size, grid size, shared memory) and its error checked.

#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/stream.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace streampipe {

struct LaunchConfig {
  dim3 grid{1, 1, 1};
  dim3 block{1, 1, 1};
  std::size_t dynamic_shared_bytes = 0;

  // 1-D config covering n elements with `block` threads each handling `per_thread` elements.
  // With max_blocks_per_sm > 0 the grid is capped at SMs × that (grid-stride kernels).
  [[nodiscard]] static LaunchConfig for_elements(const Device& device, std::size_t n,
                                                 unsigned block = 256, unsigned per_thread = 1,
                                                 unsigned max_blocks_per_sm = 0);
};

// Throws std::invalid_argument naming the violated limit.
void validate(const LaunchConfig& config, const Device& device);

[[nodiscard]] std::string describe(const LaunchConfig& config);

namespace detail {
void launch_raw(StreamRef stream, const LaunchConfig& config, const void* kernel, void** args,
                const char* kernel_name);
}

template <typename... Params, typename... Args>
void launch(StreamRef stream, const LaunchConfig& config, void (*kernel)(Params...), Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "wrong number of kernel arguments");
  static_assert((std::is_convertible_v<Args&&, Params> && ...),
                "a kernel argument does not convert to the parameter type");
  static_assert((std::is_trivially_copyable_v<std::decay_t<Params>> && ...),
                "kernel parameters must be trivially copyable");
  std::tuple<std::decay_t<Params>...> values(static_cast<Params>(std::forward<Args>(args))...);
  std::apply(
      [&](auto&... v) {
        void* pointers[] = {static_cast<void*>(&v)..., nullptr};
        detail::launch_raw(stream, config, reinterpret_cast<const void*>(kernel), pointers,
                           typeid(kernel).name());
      },
      values);
}

}  // namespace streampipe
