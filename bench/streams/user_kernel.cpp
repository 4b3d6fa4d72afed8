// SPDX-License-Identifier: Apache-2.0
// Experiment `user-kernel` of `bench streams`: the chapter's 200 arrays x 1M float32 through
// a user's own single-block kernel, compiled at run time as a user compiles it from
// docs/jit.md and wrapped in an operation by hand (a launch per item on the lane's stream),
// with no batched form. The peer is what the user would write without streampipe: a stream
// per array. The engine takes every knob from the planner, which must see that one launch
// fills a fraction of the GPU.

#include "streams/experiments.hpp"
#include "streams/float_arrays.hpp"

#include "streampipe/jit/module_cache.hpp"
#include "streampipe/pipeline/planner.hpp"

#include <fmt/format.h>


namespace streampipe::bench::streams {
namespace {

// The kernel as the chapter writes it: one block strides over the whole array.
constexpr const char* kSource = R"(
extern "C" __global__ void multiply_divide(const float* in, float* out, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    float x = in[i];
    for (int r = 0; r < 50; ++r) { x = x * 2.0f; x = x / 2.0f; }
    out[i] = x;
  }
}
)";

constexpr unsigned kThreads = 64;

// A launch per item, one block of 64 threads: what a user's operation around their kernel is.
pipeline::Operation user_operation(const jit::Kernel& kernel) {
  pipeline::Operation op;
  op.name = "user kernel multiply_divide";
  op.output_bytes = [](std::size_t n) { return n; };
  op.device = [kernel](const pipeline::Batch& b) {
    for (std::size_t k = 0; k < b.size(); ++k) {
      const auto n = static_cast<int>(b.items()[k].in_bytes / sizeof(float));
      LaunchConfig config;
      config.block = dim3(kThreads);
      kernel.launch(b.stream(), config, static_cast<const float*>(b.in_as<float>(k)), b.out_as<float>(k), n);
    }
  };
  return op;
}

}  // namespace

Experiment user_kernel_experiment(const Config& c, bool gpu, const LinkLimits* link) {
  Experiment ex{"user-kernel",
                fmt::format("{} arrays x 1M float32, a user's own single-block 64-thread kernel (x2 /2, 50 times), "
                            "compiled at run time, a launch per array",
                            c.arrays),
                "pinned H2D", {}};
  if (!gpu) return ex;  // a runtime-compiled kernel needs a GPU; the other experiments cover the host
  constexpr std::size_t kBytes = FloatArrays::kBytes;
  const auto n = static_cast<std::size_t>(c.arrays);
  const Device dev(c.device);
  const jit::Module module = jit::load_module(dev, jit::Program("user_kernel.cu", kSource));
  const jit::Kernel kernel = module.kernel("multiply_divide");
  FloatArrays arrays(n, 300, true);
  const auto poison_pinned = [&] { arrays.poison_pinned(); };
  const auto verify_pinned = [&] { return arrays.pinned_right(); };
  const auto poison_pageable = [&] { arrays.poison_pageable(); };
  const auto verify_pageable = [&] { return arrays.pageable_right(); };
  auto& in = arrays.in;
  auto& out = arrays.out;
  LaunchConfig config;
  config.block = dim3(kThreads);
  ex.rows.push_back(stream_per_array_row(c, dev, arrays, "hand-written C++, one stream per array (pinned)",
                                         [&](StreamRef s, const float* x, float* y, std::size_t elems) {
                                           kernel.launch(s, config, x, y, static_cast<int>(elems));
                                         }));
  const pipeline::Operation op = user_operation(kernel);
  auto o = engine_options(true, c.device, 4);
  std::string reason = "lanes set on the command line";
  if (c.lanes == 0) {
    const auto plan = pipeline::plan_items(op, std::as_bytes(std::span<const float>(in[0])), kBytes, n, o);
    o = plan.options;
    reason = "planner: " + plan.reason;
  } else {
    o.lanes = c.lanes;
  }
  apply_engine_overrides(c, o);
  pipeline::Engine engine(op, o);
  ex.rows.push_back(engine_row(c, engine, "engine, planned (pinned)", c.runs, n, [&](std::size_t i) {
    return pipeline::make_item(std::span<const std::byte>(arrays.pin_in[i].bytes()), arrays.pin_out[i].bytes());
  }, poison_pinned, verify_pinned, "user-kernel-engine-pinned", reason));
  ex.rows.push_back(engine_row(c, engine, "engine, planned (pageable in and out)", c.runs, n, [&](std::size_t i) {
    return pipeline::make_item(std::span<const float>(in[i]), std::span<float>(out[i]));
  }, poison_pageable, verify_pageable, "user-kernel-engine-pageable", reason));
  for (auto& r : ex.rows) {
    r.fields["bytes"] = n * kBytes;
    r.fields["limit_gbps"] = link ? link->peak_gbps("pinned_h2d") : 0;
  }
  return ex;
}

}  // namespace streampipe::bench::streams
