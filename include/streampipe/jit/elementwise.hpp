// SPDX-License-Identifier: Apache-2.0
#pragma once
// A kernel generated from a parameter list and a per-element operation (PyCUDA's and
// CuPy's ElementwiseKernel):
//   ElementwiseKernel add("const float* a, const float* b, float* c", "c[i] = a[i] + b[i]");
//   add(stream.ref(), n, d_a.data(), d_b.data(), d_c.data());
// The operation runs once for every i in [0, n); `n` is visible to it. The kernel is a
// grid-stride loop with the grid sized from the device (SMs x resident blocks). When the
// operation uses arrays only as name[i] and every array is 16-byte aligned at launch,
// a vectorized variant moves 16 bytes per array per step (see codegen.hpp). Compiled per
// device on first use, through the memory and disk caches.

#include "streampipe/cuda/launch.hpp"
#include "streampipe/cuda/stream.hpp"
#include "streampipe/jit/arguments.hpp"
#include "streampipe/jit/codegen.hpp"
#include "streampipe/jit/module_cache.hpp"
#include "streampipe/jit/per_device.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace streampipe::jit {

struct ElementwiseOptions {
  std::string name = "sp_elementwise";  // kernel name (a C identifier)
  std::string preamble;                 // code placed before the kernel (helpers, includes)
  std::vector<std::string> compile_options;
  unsigned block = 256;
  CacheOptions cache;
};

struct ElementwiseLaunch {
  bool launched = false;    // false when n == 0
  bool vectorized = false;
  LaunchConfig config;
};

class ElementwiseKernel {
 public:
  // Throws JitError for a bad parameter list, name or block size (nothing is compiled yet).
  ElementwiseKernel(std::string params, std::string operation, ElementwiseOptions options = {});

  template <typename... Args>
  ElementwiseLaunch operator()(StreamRef stream, std::size_t n, Args&&... args) const {
    return launch_values(stream, n, {ArgumentValue::of(args)...});
  }

  // Compiles (or loads) for a device ahead of the first launch; returns how it was obtained.
  LoadStats prepare(const Device& device) const;

  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  [[nodiscard]] Program program() const;
  [[nodiscard]] const std::vector<codegen::Param>& params() const noexcept { return params_; }
  [[nodiscard]] const codegen::VectorPlan& vector_plan() const noexcept { return plan_; }
  [[nodiscard]] const std::string& name() const noexcept { return options_.name; }

  ElementwiseLaunch launch_values(StreamRef stream, std::size_t n, const std::vector<ArgumentValue>& args) const;

 private:
  struct Compiled;
  const Compiled& compiled_for(const Device& device, LoadStats* stats) const;

  std::string operation_;
  ElementwiseOptions options_;
  std::vector<codegen::Param> params_;
  codegen::VectorPlan plan_;
  std::string source_;
  PerDevice<Compiled> per_device_;
};

// The CUDA source for a parameter list and operation (what ElementwiseKernel compiles).
[[nodiscard]] std::string generate_elementwise_source(const std::vector<codegen::Param>& params,
                                                      const std::string& operation,
                                                      const codegen::VectorPlan& plan,
                                                      const ElementwiseOptions& options);

}  // namespace streampipe::jit
