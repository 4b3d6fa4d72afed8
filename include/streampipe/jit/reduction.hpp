// SPDX-License-Identifier: Apache-2.0
#pragma once
// A reduction generated from expressions (CuPy's ReductionKernel):
//   ReductionKernel sum("float", "const float* x", "x[i]", "a + b", "0.0f");
//   sum(stream.ref(), n, d_out, d_x.data());     // *d_out = sum of x[0..n)
// map: the value of element i (params and i visible); reduce: combines `a` and `b`, must be
// associative and commutative; identity: the neutral value; post_map: applied to the final
// `a` (default "a"). Two passes: a grid-stride pass of SMs x resident blocks, each block
// reducing in shared memory to one partial (vectorized like ElementwiseKernel when the map
// allows it), then one block reducing the partials and applying post_map. Any n works,
// including 0 (the result is post_map(identity)). The partials live in stream-ordered
// memory, so concurrent launches on different streams do not share scratch.

#include "streampipe/cuda/launch.hpp"
#include "streampipe/cuda/stream.hpp"
#include "streampipe/jit/arguments.hpp"
#include "streampipe/jit/codegen.hpp"
#include "streampipe/jit/errors.hpp"
#include "streampipe/jit/module_cache.hpp"
#include "streampipe/jit/per_device.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace streampipe::jit {

struct ReductionOptions {
  std::string name = "sp_reduction";
  std::string post_map = "a";
  std::string preamble;
  std::vector<std::string> compile_options;
  unsigned block = 256;
  CacheOptions cache;
};

struct ReductionLaunch {
  bool vectorized = false;
  LaunchConfig first_pass;  // grid 0 when n == 0 (only the second pass ran)
};

class ReductionKernel {
 public:
  ReductionKernel(std::string reduce_type, std::string params, std::string map, std::string reduce,
                  std::string identity, ReductionOptions options = {});

  // `out` is a device pointer to one value of the reduce type (size checked on the device).
  template <typename T, typename... Args>
  ReductionLaunch operator()(StreamRef stream, std::size_t n, T* out, Args&&... args) const {
    static_assert(!std::is_const_v<T>, "the result pointer must be writable");
    return launch_values(stream, n, out, sizeof(T), {ArgumentValue::of(args)...});
  }

  LoadStats prepare(const Device& device) const;
  // sizeof(reduce type) as the device compiler sees it.
  [[nodiscard]] std::size_t result_size(const Device& device) const;

  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  [[nodiscard]] Program program() const;
  [[nodiscard]] const codegen::VectorPlan& vector_plan() const noexcept { return plan_; }
  [[nodiscard]] const std::vector<codegen::Param>& params() const noexcept { return params_; }

  ReductionLaunch launch_values(StreamRef stream, std::size_t n, void* out, std::size_t out_size,
                                const std::vector<ArgumentValue>& args) const;

 private:
  struct Compiled;
  const Compiled& compiled_for(const Device& device, LoadStats* stats) const;

  std::string reduce_type_, map_, reduce_, identity_;
  ReductionOptions options_;
  std::vector<codegen::Param> params_;
  codegen::VectorPlan plan_;
  std::string source_;
  PerDevice<Compiled> per_device_;
};

struct ReductionSpec {
  std::string reduce_type, map, reduce, identity;
};
[[nodiscard]] std::string generate_reduction_source(const std::vector<codegen::Param>& params,
                                                    const ReductionSpec& spec, const codegen::VectorPlan& plan,
                                                    const ReductionOptions& options);

}  // namespace streampipe::jit
