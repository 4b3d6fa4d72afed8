// SPDX-License-Identifier: Apache-2.0
// Experiment 2 of `bench streams`: N arrays x 1M floats through the single-block 64-thread
// multiply/divide kernel. Peers: the naive loop and one stream per array (pinned); then
// the batched engine from pinned input, pageable input into pinned output, and pageable
// both ways (the only row on the host backend).

#include "streams/experiments.hpp"
#include "streams/float_arrays.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/pinned_pool.hpp"
#include "streampipe/ops/multiply_divide.hpp"
#include "streampipe/ops/pipeline_ops.hpp"
#include "streampipe/pipeline/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace streampipe::bench::streams {

Experiment arrays_experiment(const Config& c, bool gpu, const LinkLimits* link) {
  Experiment ex{"arrays",
                fmt::format("{} arrays x 1M float32, single-block 64-thread kernel (x2 /2, 50 times)", c.arrays),
                "pinned H2D", {}};
  constexpr std::size_t kElems = FloatArrays::kElems, kBytes = FloatArrays::kBytes;
  const auto n = static_cast<std::size_t>(c.arrays);
  const ops::MultiplyDivideShape shape{1, 64, 50};
  FloatArrays arrays(n, 100, gpu);
  auto& in = arrays.in;
  auto& out = arrays.out;
  auto& pin_in = arrays.pin_in;
  auto& pin_out = arrays.pin_out;
  const auto poison_pageable = [&] { arrays.poison_pageable(); };
  const auto verify_pageable = [&] { return arrays.pageable_right(); };
  const auto poison_pinned = [&] { arrays.poison_pinned(); };
  const auto verify_pinned = [&] { return arrays.pinned_right(); };
  if (gpu) {
    const Device dev(c.device);
    {
      Stream s(dev);
      DeviceBuffer<float> d_in(dev, kElems), d_out(dev, kElems);
      ex.rows.push_back(timed_row("naive loop (pinned)", 1, std::min(c.runs, 3), poison_pinned, [&] {
        for (std::size_t i = 0; i < n; ++i) {
          SP_CUDA_CHECK(cudaMemcpyAsync(d_in.data(), pin_in[i].data(), kBytes, cudaMemcpyHostToDevice, s.handle()));
          ops::multiply_divide(s.ref(), d_in.data(), d_out.data(), kElems, shape);
          SP_CUDA_CHECK(cudaMemcpyAsync(pin_out[i].data(), d_out.data(), kBytes, cudaMemcpyDeviceToHost, s.handle()));
          s.synchronize();
        }
      }, verify_pinned));
      ex.rows.back().peer = true;
    }
    ex.rows.push_back(stream_per_array_row(c, dev, arrays, "one stream per array (pinned)",
                                           [&](StreamRef s, const float* x, float* y, std::size_t elems) {
                                             ops::multiply_divide(s, x, y, elems, shape);
                                           }));
  }
  // One launch per batch covers `batch` arrays (one block each), so the single-block kernels
  // of many arrays run at once instead of queueing behind each other on a few streams.
  const auto op = ops::multiply_divide_operation(shape);
  auto o = engine_options(gpu, c.device, c.lanes > 0 ? c.lanes : 8);
  std::string reason = "lanes and batch set on the command line";
  if (c.lanes == 0 && c.batch == 0) {
    const auto plan = pipeline::plan_items(op, std::as_bytes(std::span<const float>(in[0])), kBytes, n, o);
    o = plan.options;
    reason = "planner: " + plan.reason;
  } else {
    o.batch_items = c.batch > 0 ? c.batch : 10;
    o.batch_bytes = static_cast<std::size_t>(o.batch_items) * kBytes;
  }
  apply_engine_overrides(c, o);
  pipeline::Engine engine(op, o);
  if (gpu) {
    ex.rows.push_back(engine_row(c, engine, "engine, pinned input", c.runs, n, [&](std::size_t i) {
      return pipeline::make_item(std::span<const std::byte>(pin_in[i].bytes()), pin_out[i].bytes());
    }, poison_pinned, verify_pinned, "arrays-engine-pinned", reason));
    ex.rows.push_back(engine_row(c, engine, "engine, pageable input, pinned output", c.runs, n, [&](std::size_t i) {
      return pipeline::make_item(std::span<const float>(in[i]), pin_out[i].as<float>());
    }, poison_pinned, verify_pinned, "arrays-engine-pageable-in", reason));
  }
  ex.rows.push_back(engine_row(c, engine, gpu ? "engine, pageable input and output" : "engine on the host backend",
                               gpu ? c.runs : 1, n, [&](std::size_t i) {
    return pipeline::make_item(std::span<const float>(in[i]), std::span<float>(out[i]));
  }, poison_pageable, verify_pageable, "arrays-engine-pageable", reason));
  for (const auto& set : gpu ? wider_device_sets(c) : std::vector<std::vector<int>>{}) {
    auto spread = o;
    spread.devices = set;
    pipeline::Engine across(op, spread);
    ex.rows.push_back(engine_row(c, across, fmt::format("engine, pageable input and output, {} GPUs", set.size()),
                                 c.runs, n, [&](std::size_t i) {
      return pipeline::make_item(std::span<const float>(in[i]), std::span<float>(out[i]));
    }, poison_pageable, verify_pageable, "", ""));
    ex.rows.back().fields["devices"] = set.size();
  }
  for (auto& r : ex.rows) {
    r.fields["bytes"] = n * kBytes;
    r.fields["limit_gbps"] = (link ? link->peak_gbps("pinned_h2d") : 0) * r.fields.value("devices", 1.0);
  }
  return ex;
}

}  // namespace streampipe::bench::streams
