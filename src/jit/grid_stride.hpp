// SPDX-License-Identifier: Apache-2.0
#pragma once
// The grid-stride kernels of a generated module (an elementwise kernel, a reduction's first
// pass): kernel `name` and, where the vector plan allows it, its 16-byte form `name`_vec,
// each with the grid it can keep resident. A launch takes the vectorized form when every
// pointer argument is 16-byte aligned, in enough blocks for the work and no more than can
// be resident at once. Loading throws what Module::kernel throws (JitError).

#include "streampipe/cuda/device.hpp"
#include "streampipe/jit/arguments.hpp"
#include "streampipe/jit/codegen.hpp"
#include "streampipe/jit/module.hpp"
#include "streampipe/jit/per_device.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace streampipe::jit {

struct GridStride {
  bool vectorized = false;
  std::size_t blocks = 1;
};

struct GridStrideKernels {
  Kernel scalar;
  std::optional<Kernel> vector;
  unsigned max_blocks = 1;  // SMs x resident blocks of the scalar kernel
  unsigned max_blocks_vector = 1;

  [[nodiscard]] static GridStrideKernels load(const Module& module, const Device& device, const std::string& name,
                                              bool vectorized, unsigned block) {
    GridStrideKernels k{module.kernel(name), std::nullopt, 1, 1};
    k.max_blocks = resident_grid(device, k.scalar, block);
    if (vectorized) {
      k.vector = module.kernel(name + "_vec");
      k.max_blocks_vector = resident_grid(device, *k.vector, block);
    }
    return k;
  }

  // The launch over n > 0 elements of `args`, for the plan the kernels were generated with.
  [[nodiscard]] GridStride grid(const codegen::VectorPlan& plan, const std::vector<codegen::Param>& params,
                                const std::vector<ArgumentValue>& args, std::size_t n, unsigned block) const {
    bool aligned = plan.possible;
    for (std::size_t i = 0; i < params.size() && aligned; ++i)
      if (params[i].is_pointer && reinterpret_cast<std::uintptr_t>(args[i].pointer) % 16 != 0) aligned = false;
    const std::size_t work = aligned ? (n + plan.elements - 1) / plan.elements : n;
    const std::size_t cap = aligned ? max_blocks_vector : max_blocks;
    return {aligned, std::clamp<std::size_t>((work + block - 1) / block, 1, cap)};
  }

  [[nodiscard]] const Kernel& kernel(const GridStride& grid) const { return grid.vectorized ? *vector : scalar; }
};

}  // namespace streampipe::jit
