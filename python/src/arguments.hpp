// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kernel arguments as the package classifies them (streampipe/_arguments.py):
//   ("p", address, itemsize)   a device (or mapped) pointer to elements of that size
//   ("i"|"u"|"f", value, size) an integer/float scalar; size 0: take the parameter's size
//   ("b", bytes)               raw bytes of any other type (at most 64)
// Each helper throws std::invalid_argument (a ValueError) naming the argument's position.

#include "bindings.hpp"

#include "streampipe/jit/arguments.hpp"
#include "streampipe/jit/module.hpp"

#include <array>
#include <cstddef>
#include <vector>

namespace streampipe::python {

// The bytes one kernel parameter receives.
struct PackedBytes {
  alignas(16) std::array<std::byte, 64> data{};
  std::size_t size = 0;
};

// For a kernel of a SourceModule: `param_size` is the parameter's size as the driver reports
// it (0 when unknown), which sizes plain Python ints and floats.
[[nodiscard]] PackedBytes pack_for_parameter(const nb::tuple& arg, std::size_t param_size, std::size_t position);

// Packs `args` for parameters first..first+args.size() of `kernel`.
[[nodiscard]] std::vector<PackedBytes> pack_for_kernel(const jit::Kernel& kernel, const nb::list& args,
                                                       std::size_t first);

// For generated kernels (Elementwise/Reduction), which convert scalars themselves.
[[nodiscard]] std::vector<jit::ArgumentValue> argument_values(const nb::list& args);

}  // namespace streampipe::python
