// SPDX-License-Identifier: Apache-2.0
// Experiment 1 of `bench streams`: N RGB 1920x1080 images to gray. Peers: the naive loop
// (pageable, synchronous copies) and one stream per image (pinned); then the engine from
// pinned input, from pageable input into pinned output, and pageable both ways (the only
// row on the host backend).

#include "streams/experiments.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/pinned_pool.hpp"
#include "streampipe/ops/pipeline_ops.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"
#include "streampipe/pipeline/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace streampipe::bench::streams {

using pipeline::Engine;
using pipeline::EngineOptions;

Experiment gray_experiment(const Config& c, bool gpu, const LinkLimits* link) {
  Experiment ex{"gray", fmt::format("{} RGB images 1920x1080 -> gray", c.images), "pinned H2D", {}};
  const std::size_t pixels = 1920 * 1080, in_bytes = 3 * pixels;
  const auto n = static_cast<std::size_t>(c.images);
  std::vector<std::vector<std::uint8_t>> rgb(n), gray(n), want(n);
  for (std::size_t i = 0; i < n; ++i) {
    rgb[i] = random_values<std::uint8_t>(in_bytes, static_cast<unsigned>(i + 1));
    want[i].resize(pixels);
    gray[i].resize(pixels);
    ops::rgb_to_gray_host(rgb[i], want[i]);
  }
  auto& pool = PinnedPool::global();
  std::vector<PinnedBlock> pin_in, pin_out;
  if (gpu) {
    for (std::size_t i = 0; i < n; ++i) {
      pin_in.push_back(pool.acquire(in_bytes));
      std::memcpy(pin_in.back().data(), rgb[i].data(), in_bytes);
      pin_out.push_back(pool.acquire(pixels));
    }
  }
  const auto poison_pageable = [&] {
    for (std::size_t i = 0; i < n; ++i)
      poison_with_complement(reinterpret_cast<std::byte*>(gray[i].data()), reinterpret_cast<const std::byte*>(want[i].data()), pixels);
  };
  const auto verify_pageable = [&] {
    for (std::size_t i = 0; i < n; ++i)
      if (gray[i] != want[i]) return false;
    return true;
  };
  const auto poison_pinned = [&] {
    for (std::size_t i = 0; i < n; ++i)
      poison_with_complement(pin_out[i].data(), reinterpret_cast<const std::byte*>(want[i].data()), pixels);
  };
  const auto verify_pinned = [&] {
    for (std::size_t i = 0; i < n; ++i)
      if (std::memcmp(pin_out[i].data(), want[i].data(), pixels) != 0) return false;
    return true;
  };

  if (gpu) {
    const Device dev(c.device);
    {
      Stream s(dev);
      DeviceBuffer<std::uint8_t> d_in(dev, in_bytes), d_out(dev, pixels);
      ex.rows.push_back(timed_row("naive loop (pageable, synchronous copies)", 1, std::min(c.runs, 3), poison_pageable, [&] {
        for (std::size_t i = 0; i < n; ++i) {
          SP_CUDA_CHECK(cudaMemcpyAsync(d_in.data(), rgb[i].data(), in_bytes, cudaMemcpyHostToDevice, s.handle()));
          ops::rgb_to_gray(s.ref(), d_in.data(), d_out.data(), pixels);
          SP_CUDA_CHECK(cudaMemcpyAsync(gray[i].data(), d_out.data(), pixels, cudaMemcpyDeviceToHost, s.handle()));
          s.synchronize();
        }
      }, verify_pageable));
      ex.rows.back().peer = true;
    }
    {
      std::vector<Stream> streams;
      std::vector<DeviceBuffer<std::uint8_t>> d_in, d_out;
      for (std::size_t i = 0; i < n; ++i) {
        streams.emplace_back(dev);
        d_in.emplace_back(dev, in_bytes);
        d_out.emplace_back(dev, pixels);
      }
      ex.rows.push_back(timed_row("one stream per image (pinned)", c.warmup, c.runs, poison_pinned, [&] {
        for (std::size_t i = 0; i < n; ++i) {
          const auto s = streams[i].ref();
          SP_CUDA_CHECK(cudaMemcpyAsync(d_in[i].data(), pin_in[i].data(), in_bytes, cudaMemcpyHostToDevice, s.handle()));
          ops::rgb_to_gray(s, d_in[i].data(), d_out[i].data(), pixels);
          SP_CUDA_CHECK(cudaMemcpyAsync(pin_out[i].data(), d_out[i].data(), pixels, cudaMemcpyDeviceToHost, s.handle()));
        }
        for (auto& s : streams) s.synchronize();
      }, verify_pinned));
      ex.rows.back().peer = true;
    }
  }
  {
    const auto op = ops::gray_operation();
    EngineOptions o = engine_options(gpu, c.device, c.lanes > 0 ? c.lanes : 4);
    std::string reason = "lanes set on the command line";
    if (c.lanes == 0) {
      const auto plan = pipeline::plan_items(op, std::as_bytes(std::span<const std::uint8_t>(rgb[0])), pixels, n, o);
      o = plan.options;
      reason = "planner: " + plan.reason;
    }
    apply_engine_overrides(c, o);
    Engine engine(op, o);
    if (gpu) {
      ex.rows.push_back(engine_row(c, engine, "engine, pinned input", c.runs, n, [&](std::size_t i) {
        return pipeline::make_item(std::span<const std::byte>(pin_in[i].bytes()), pin_out[i].bytes());
      }, poison_pinned, verify_pinned, "gray-engine-pinned", reason));
      // Pageable input alone: outputs land in pinned buffers the caller owns.
      ex.rows.push_back(engine_row(c, engine, "engine, pageable input, pinned output", c.runs, n, [&](std::size_t i) {
        return pipeline::make_item(std::span<const std::uint8_t>(rgb[i]), pin_out[i].as<std::uint8_t>());
      }, poison_pinned, verify_pinned, "gray-engine-pageable-in", reason));
    }
    ex.rows.push_back(engine_row(c, engine, gpu ? "engine, pageable input and output" : "engine on the host backend",
                                 c.runs, n, [&](std::size_t i) {
      return pipeline::make_item(std::span<const std::uint8_t>(rgb[i]), std::span<std::uint8_t>(gray[i]));
    }, poison_pageable, verify_pageable, "gray-engine-pageable", reason));
    for (const auto& set : gpu ? wider_device_sets(c) : std::vector<std::vector<int>>{}) {
      EngineOptions spread = o;
      spread.devices = set;
      Engine across(op, spread);
      const std::string gpus = fmt::format(", {} GPUs", set.size());
      ex.rows.push_back(engine_row(c, across, "engine, pinned input" + gpus, c.runs, n, [&](std::size_t i) {
        return pipeline::make_item(std::span<const std::byte>(pin_in[i].bytes()), pin_out[i].bytes());
      }, poison_pinned, verify_pinned, "", ""));
      ex.rows.back().fields["devices"] = set.size();
      ex.rows.push_back(engine_row(c, across, "engine, pageable input and output" + gpus, c.runs, n, [&](std::size_t i) {
        return pipeline::make_item(std::span<const std::uint8_t>(rgb[i]), std::span<std::uint8_t>(gray[i]));
      }, poison_pageable, verify_pageable, "", ""));
      ex.rows.back().fields["devices"] = set.size();
    }
  }
  const double limit = link ? link->peak_gbps("pinned_h2d") : 0;
  for (auto& r : ex.rows) {
    r.fields["bytes"] = n * in_bytes;
    r.fields["limit_gbps"] = limit * r.fields.value("devices", 1.0);  // a set of k GPUs: k links
  }
  return ex;
}

}  // namespace streampipe::bench::streams
