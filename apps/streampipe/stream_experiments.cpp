// SPDX-License-Identifier: Apache-2.0
#include "stream_experiments.hpp"

#include "streampipe/cuda/bandwidth.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/pinned_pool.hpp"
#include "streampipe/report/atomic_file.hpp"
#include "streampipe/ops/affine.hpp"
#include "streampipe/ops/multiply_divide.hpp"
#include "streampipe/ops/pipeline_ops.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"
#include "streampipe/pipeline/chunked.hpp"
#include "streampipe/pipeline/engine.hpp"
#include "streampipe/pipeline/planner.hpp"
#include "streampipe/report/statistics.hpp"
#include "streampipe/report/table.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <vector>

namespace streampipe::cli {
namespace {

using pipeline::Backend;
using pipeline::Engine;
using pipeline::EngineOptions;

struct Row {
  std::string name;
  std::vector<double> ms;
  std::size_t bytes = 0;      // bytes the rate is computed from
  double limit_gbps = 0;      // the physical limit those bytes are held against
  bool verified = true;
  std::string detail;
  nlohmann::json extra = nlohmann::json::object();
};

struct Experiment {
  std::string name;
  std::string title;
  std::string limit_name;
  std::vector<Row> rows;
};

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// warm-up + timed runs of `body`; `poison` before each, `verify` after each (outside timing).
Row measure(const std::string& name, int warmup, int runs, const std::function<void()>& poison,
            const std::function<void()>& body, const std::function<bool()>& verify) {
  Row row;
  row.name = name;
  for (int i = 0; i < warmup + runs; ++i) {
    poison();
    const double t0 = now_ms();
    body();
    const double t = now_ms() - t0;
    if (!verify()) row.verified = false;
    if (i >= warmup) row.ms.push_back(t);
  }
  return row;
}

template <typename T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(n);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> dist(-1000, 1000);
    for (auto& x : v) x = dist(rng);
  } else {
    for (auto& x : v) x = static_cast<T>(rng());
  }
  return v;
}

// Poison = the bitwise complement of the reference: differs from it in every byte.
void poison_with_complement(std::byte* out, const std::byte* ref, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = ~ref[i];
}

void write_trace(const StreamExperimentConfig& c, Engine& engine, const std::string& name) {
  if (c.trace_dir.empty()) return;
  const auto base = std::filesystem::path(c.trace_dir) / name;
  report::write_file_atomically(base.string() + ".trace.json", engine.timeline().chrome_trace(name).dump() + "\n");
  report::write_file_atomically(base.string() + ".svg", engine.timeline().gantt_svg(name + "\n" + engine.describe()));
}

EngineOptions engine_options(bool gpu, int device, int lanes, int depth = 2) {
  EngineOptions o;
  o.backend = gpu ? Backend::gpu : Backend::host;
  o.device = device;
  o.lanes = lanes;
  o.depth = depth;
  return o;
}

// --depth, --host-threads and --staging-mib apply on top of whatever the planner or --lanes chose.
void apply_engine_overrides(const StreamExperimentConfig& c, EngineOptions& o) {
  if (c.depth > 0) o.depth = c.depth;
  if (c.host_threads > 0) o.host_threads = c.host_threads;
  if (c.staging_mib >= 0) o.staging_bytes = static_cast<std::size_t>(c.staging_mib) << 20;
}

void add_engine_details(Row& row, Engine& engine) {
  const auto rep = engine.timeline().report();
  row.detail = fmt::format("{}; bottleneck {} busy {:.0f}%", engine.describe(), pipeline::stage_name(rep.bottleneck),
                           100 * rep.overlap_efficiency);
  row.extra["engine"] = engine.describe();
  row.extra["timeline"] = rep;
}

// One engine variant: every run submits n items made by make(i), then drains.
Row engine_row(const StreamExperimentConfig& c, Engine& engine, const std::string& name, int runs, std::size_t n,
               const std::function<pipeline::Item(std::size_t)>& make, const std::function<void()>& poison,
               const std::function<bool()>& verify, const std::string& trace, const std::string& note) {
  Row row = measure(name, c.warmup, runs, poison, [&] {
    engine.timeline().clear();
    for (std::size_t i = 0; i < n; ++i) (void)engine.submit(make(i));
    engine.drain();
  }, verify);
  add_engine_details(row, engine);
  if (!note.empty()) row.detail += "; " + note;
  write_trace(c, engine, trace);
  return row;
}

// ---- experiment 1: images to gray -------------------------------------------------------

Experiment gray_experiment(const StreamExperimentConfig& c, bool gpu, const LinkLimits* link) {
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
  const double limit = link ? link->peak_gbps("pinned_h2d") : 0;

  if (gpu) {
    const Device dev(c.device);
    {
      Stream s(dev);
      DeviceBuffer<std::uint8_t> d_in(dev, in_bytes), d_out(dev, pixels);
      ex.rows.push_back(measure("naive loop (pageable, synchronous copies)", 1, std::min(c.runs, 3), poison_pageable, [&] {
        for (std::size_t i = 0; i < n; ++i) {
          SP_CUDA_CHECK(cudaMemcpyAsync(d_in.data(), rgb[i].data(), in_bytes, cudaMemcpyHostToDevice, s.handle()));
          ops::rgb_to_gray(s.ref(), d_in.data(), d_out.data(), pixels);
          SP_CUDA_CHECK(cudaMemcpyAsync(gray[i].data(), d_out.data(), pixels, cudaMemcpyDeviceToHost, s.handle()));
          s.synchronize();
        }
      }, verify_pageable));
    }
    {
      std::vector<Stream> streams;
      std::vector<DeviceBuffer<std::uint8_t>> d_in, d_out;
      for (std::size_t i = 0; i < n; ++i) {
        streams.emplace_back(dev);
        d_in.emplace_back(dev, in_bytes);
        d_out.emplace_back(dev, pixels);
      }
      ex.rows.push_back(measure("one stream per image (pinned)", c.warmup, c.runs, poison_pinned, [&] {
        for (std::size_t i = 0; i < n; ++i) {
          const auto s = streams[i].ref();
          SP_CUDA_CHECK(cudaMemcpyAsync(d_in[i].data(), pin_in[i].data(), in_bytes, cudaMemcpyHostToDevice, s.handle()));
          ops::rgb_to_gray(s, d_in[i].data(), d_out[i].data(), pixels);
          SP_CUDA_CHECK(cudaMemcpyAsync(pin_out[i].data(), d_out[i].data(), pixels, cudaMemcpyDeviceToHost, s.handle()));
        }
        for (auto& s : streams) s.synchronize();
      }, verify_pinned));
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
  }
  for (auto& r : ex.rows) {
    r.bytes = n * in_bytes;
    r.limit_gbps = limit;
  }
  return ex;
}

// ---- experiment 2: many arrays, single-block kernel --------------------------------------

Experiment arrays_experiment(const StreamExperimentConfig& c, bool gpu, const LinkLimits* link) {
  Experiment ex{"arrays",
                fmt::format("{} arrays x 1M float32, single-block 64-thread kernel (x2 /2, 50 times)", c.arrays),
                "pinned H2D", {}};
  constexpr std::size_t kElems = std::size_t{1} << 20, kBytes = kElems * 4;
  const auto n = static_cast<std::size_t>(c.arrays);
  const ops::MultiplyDivideShape shape{1, 64, 50};
  std::vector<std::vector<float>> in(n), out(n);
  for (std::size_t i = 0; i < n; ++i) {
    in[i] = random_values<float>(kElems, static_cast<unsigned>(100 + i));
    out[i].resize(kElems);
  }
  std::vector<PinnedBlock> pin_in, pin_out;
  if (gpu) {
    for (std::size_t i = 0; i < n; ++i) {
      pin_in.push_back(PinnedPool::global().acquire(kBytes));
      std::memcpy(pin_in.back().data(), in[i].data(), kBytes);
      pin_out.push_back(PinnedPool::global().acquire(kBytes));
    }
  }
  // The kernel is the identity on finite floats: the reference is the input itself.
  const auto poison_pageable = [&] {
    for (auto& o : out) std::memset(o.data(), 0xff, kBytes);
  };
  const auto verify_pageable = [&] {
    for (std::size_t i = 0; i < n; ++i)
      if (std::memcmp(out[i].data(), in[i].data(), kBytes) != 0) return false;
    return true;
  };
  const auto poison_pinned = [&] {
    for (auto& o : pin_out) std::memset(o.data(), 0xff, kBytes);
  };
  const auto verify_pinned = [&] {
    for (std::size_t i = 0; i < n; ++i)
      if (std::memcmp(pin_out[i].data(), in[i].data(), kBytes) != 0) return false;
    return true;
  };
  if (gpu) {
    const Device dev(c.device);
    {
      Stream s(dev);
      DeviceBuffer<float> d_in(dev, kElems), d_out(dev, kElems);
      ex.rows.push_back(measure("naive loop (pinned)", 1, std::min(c.runs, 3), poison_pinned, [&] {
        for (std::size_t i = 0; i < n; ++i) {
          SP_CUDA_CHECK(cudaMemcpyAsync(d_in.data(), pin_in[i].data(), kBytes, cudaMemcpyHostToDevice, s.handle()));
          ops::multiply_divide(s.ref(), d_in.data(), d_out.data(), kElems, shape);
          SP_CUDA_CHECK(cudaMemcpyAsync(pin_out[i].data(), d_out.data(), kBytes, cudaMemcpyDeviceToHost, s.handle()));
          s.synchronize();
        }
      }, verify_pinned));
    }
    {
      std::vector<Stream> streams;
      std::vector<DeviceBuffer<float>> d_in, d_out;
      for (std::size_t i = 0; i < n; ++i) {
        streams.emplace_back(dev);
        d_in.emplace_back(dev, kElems);
        d_out.emplace_back(dev, kElems);
      }
      ex.rows.push_back(measure("one stream per array (pinned)", c.warmup, c.runs, poison_pinned, [&] {
        for (std::size_t i = 0; i < n; ++i) {
          const auto s = streams[i].ref();
          SP_CUDA_CHECK(cudaMemcpyAsync(d_in[i].data(), pin_in[i].data(), kBytes, cudaMemcpyHostToDevice, s.handle()));
          ops::multiply_divide(s, d_in[i].data(), d_out[i].data(), kElems, shape);
          SP_CUDA_CHECK(cudaMemcpyAsync(pin_out[i].data(), d_out[i].data(), kBytes, cudaMemcpyDeviceToHost, s.handle()));
        }
        for (auto& s : streams) s.synchronize();
      }, verify_pinned));
    }
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
  Engine engine(op, o);
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
  for (auto& r : ex.rows) {
    r.bytes = n * kBytes;
    r.limit_gbps = link ? link->peak_gbps("pinned_h2d") : 0;
  }
  return ex;
}

// ---- experiment 3: one large array, chunked ----------------------------------------------

Experiment chunked_experiment(const StreamExperimentConfig& c, bool gpu, const LinkLimits* link) {
  const std::size_t bytes = c.chunked_mib << 20, n = bytes / 4;
  Experiment ex{"chunked", fmt::format("one {} MiB float array through y = 2x + 1, chunked (in + out bytes)", c.chunked_mib),
                "both directions", {}};
  std::vector<float> src = random_values<float>(n, 7), want(n);
  ops::affine_host(src, want, 2.0f, 1.0f);
  std::optional<PinnedBlock> pin_in, pin_out;
  std::vector<float> pageable_out;
  std::span<const float> in_span(src);
  std::span<float> out_span;
  if (gpu) {
    pin_in = PinnedPool::global().acquire(bytes);
    pin_out = PinnedPool::global().acquire(bytes);
    std::memcpy(pin_in->data(), src.data(), bytes);
    in_span = std::span<const float>(pin_in->as<const float>());
    out_span = pin_out->as<float>();
  } else {
    pageable_out.resize(n);
    out_span = pageable_out;
  }
  const auto poison = [&] {
    poison_with_complement(reinterpret_cast<std::byte*>(out_span.data()), reinterpret_cast<const std::byte*>(want.data()), bytes);
  };
  const auto verify = [&] { return std::memcmp(out_span.data(), want.data(), bytes) == 0; };
  std::vector<int> lane_counts = {1, 2, 4, 8};
  std::vector<std::size_t> chunk_mib = {4, 16, 64};
  if (c.lanes > 0) lane_counts = {c.lanes};
  if (!gpu) {
    lane_counts = {2};
    chunk_mib = {16};
  }
  for (int lanes : lane_counts)
    for (std::size_t mib : chunk_mib) {
      if ((mib << 20) > bytes) continue;
      Engine engine(ops::affine_operation(2.0f, 1.0f), engine_options(gpu, c.device, lanes));
      Row row = measure(fmt::format("{} lane{}, {} MiB chunks", lanes, lanes == 1 ? "" : "s", mib), c.warmup,
                        gpu ? c.runs : 1, poison, [&] {
        engine.timeline().clear();
        const auto run = pipeline::run_chunked(engine, in_span, out_span, (mib << 20) / 4);
        if (!run.ok()) throw std::runtime_error(run.failures.front().error);
      }, verify);
      add_engine_details(row, engine);
      if (lanes == 4 && mib == 16) write_trace(c, engine, "chunked-4-lanes-16MiB");
      ex.rows.push_back(std::move(row));
    }
  if (c.lanes == 0) {
    const auto op = ops::affine_operation(2.0f, 1.0f);
    const auto plan = pipeline::plan_chunked(op, std::as_bytes(in_span), 4, 4, engine_options(gpu, c.device, 4));
    Engine engine(op, plan.options);
    Row row = measure(fmt::format("planner: {} lanes, {} MiB chunks", plan.options.lanes, (plan.chunk_records * 4) >> 20),
                      c.warmup, gpu ? c.runs : 1, poison, [&] {
      engine.timeline().clear();
      const auto run = pipeline::run_chunked(engine, in_span, out_span, plan.chunk_records);
      if (!run.ok()) throw std::runtime_error(run.failures.front().error);
    }, verify);
    add_engine_details(row, engine);
    row.detail += "; planner: " + plan.reason;
    ex.rows.push_back(std::move(row));
  }
  for (auto& r : ex.rows) {
    r.bytes = 2 * bytes;
    r.limit_gbps = link ? link->peak_gbps("bidirectional") : 0;
  }
  return ex;
}

// ---- experiment 4: per-item overhead ------------------------------------------------------

Experiment overhead_experiment(const StreamExperimentConfig& c, bool gpu) {
  Experiment ex{"overhead", fmt::format("{} tiny items (1 KiB of floats, y = 2x + 1): host time per item", c.overhead_items),
                "", {}};
  const auto n = static_cast<std::size_t>(c.overhead_items);
  constexpr std::size_t kElems = 256;
  std::vector<std::vector<float>> in(n), out(n), want(n);
  for (std::size_t i = 0; i < n; ++i) {
    in[i] = random_values<float>(kElems, static_cast<unsigned>(i));
    want[i].resize(kElems);
    out[i].resize(kElems);
    ops::affine_host(in[i], want[i], 2.0f, 1.0f);
  }
  const auto poison = [&] {
    for (std::size_t i = 0; i < n; ++i)
      poison_with_complement(reinterpret_cast<std::byte*>(out[i].data()), reinterpret_cast<const std::byte*>(want[i].data()), kElems * 4);
  };
  const auto verify = [&] {
    for (std::size_t i = 0; i < n; ++i)
      if (std::memcmp(out[i].data(), want[i].data(), kElems * 4) != 0) return false;
    return true;
  };
  for (int batch : {1, 64}) {
    auto o = engine_options(gpu, c.device, c.lanes > 0 ? c.lanes : 4);
    o.batch_items = batch;
    o.record_timeline = false;
    Engine engine(ops::affine_operation(2.0f, 1.0f), o);
    Row row = measure(batch == 1 ? "engine, one item per transfer" : "engine, 64 items per transfer and launch",
                      c.warmup, std::min(c.runs, 3), poison, [&] {
      for (std::size_t i = 0; i < n; ++i)
        (void)engine.submit(pipeline::make_item(std::span<const float>(in[i]), std::span<float>(out[i])));
      engine.drain();
    }, verify);
    row.detail = engine.describe();
    row.bytes = n * kElems * 4;
    row.extra["items"] = n;
    ex.rows.push_back(std::move(row));
  }
  return ex;
}

nlohmann::json print_and_serialize(const Experiment& ex, bool& all_verified) {
  nlohmann::json j = {{"experiment", ex.name}, {"title", ex.title}, {"limit", ex.limit_name}};
  const bool overhead = ex.name == "overhead";
  report::Table table(overhead ? std::vector<std::string>{"variant", "ms", "min", "max", "us/item", "verified"}
                               : std::vector<std::string>{"variant", "ms", "min", "max", "GB/s", "% of limit", "speedup", "verified"});
  const double baseline = ex.rows.empty() ? 0 : report::summarize(ex.rows.front().ms).median;
  for (const auto& r : ex.rows) {
    const auto s = report::summarize(r.ms);
    const double gbps = s.median > 0 ? static_cast<double>(r.bytes) / (s.median * 1e6) : 0;
    const double pct = r.limit_gbps > 0 ? 100 * gbps / r.limit_gbps : 0;
    all_verified = all_verified && r.verified;
    nlohmann::json rj = {{"name", r.name},         {"ms", s},         {"bytes", r.bytes},
                         {"gbps", gbps},           {"limit_gbps", r.limit_gbps}, {"percent_of_limit", pct},
                         {"speedup_vs_first", baseline > 0 ? baseline / s.median : 0},
                         {"verified", r.verified}, {"detail", r.detail}};
    for (auto& [k, v] : r.extra.items()) rj[k] = v;
    if (overhead) {
      const double per_item_us = 1000 * s.median / r.extra["items"].get<double>();
      rj["us_per_item"] = per_item_us;
      table.add_row({r.name, fmt::format("{:.2f}", s.median), fmt::format("{:.2f}", s.min), fmt::format("{:.2f}", s.max),
                     fmt::format("{:.2f}", per_item_us), r.verified ? "yes" : "NO"});
    } else {
      table.add_row({r.name, fmt::format("{:.2f}", s.median), fmt::format("{:.2f}", s.min), fmt::format("{:.2f}", s.max),
                     fmt::format("{:.1f}", gbps), r.limit_gbps > 0 ? fmt::format("{:.0f}%", pct) : "-",
                     fmt::format("{:.1f}x", baseline / s.median), r.verified ? "yes" : "NO"});
    }
    j["rows"].push_back(rj);
  }
  fmt::print("{}", table.str(fmt::format("\n{}{}", ex.title,
                                         ex.limit_name.empty() ? "" : fmt::format(" (limit: {})", ex.limit_name))));
  for (const auto& r : ex.rows)
    if (!r.detail.empty()) fmt::print("  {}: {}\n", r.name, r.detail);
  return j;
}

}  // namespace

nlohmann::json run_stream_experiments(const StreamExperimentConfig& c, bool& all_verified) {
  const bool gpu = Device::count() > 0;
  nlohmann::json out;
  const LinkLimits* link = nullptr;
  if (gpu) {
    const Device dev(c.device);
    link = &link_limits(dev);
    out["device"] = dev.name();
    out["link_limits"] = {{"pinned_h2d_gbps", link->peak_gbps("pinned_h2d")},
                          {"pinned_d2h_gbps", link->peak_gbps("pinned_d2h")},
                          {"bidirectional_gbps", link->peak_gbps("bidirectional")}};
    fmt::print("device: {}; link measured now (best of 7 runs of 256 MiB): H2D {:.1f} GB/s, D2H {:.1f} GB/s, both {:.1f} GB/s\n", dev.name(),
               link->peak_gbps("pinned_h2d"), link->peak_gbps("pinned_d2h"), link->peak_gbps("bidirectional"));
  } else {
    out["device"] = "none (host backend)";
    fmt::print("no GPU: engine rows run on the host backend; the GPU-only peers are skipped\n");
  }
  out["runs"] = c.runs;
  out["warmup"] = c.warmup;
  out["experiments"] = nlohmann::json::array();
  const auto want = [&](const char* name) { return c.which == "all" || c.which == name; };
  if (want("gray")) out["experiments"].push_back(print_and_serialize(gray_experiment(c, gpu, link), all_verified));
  if (want("arrays")) out["experiments"].push_back(print_and_serialize(arrays_experiment(c, gpu, link), all_verified));
  if (want("chunked")) out["experiments"].push_back(print_and_serialize(chunked_experiment(c, gpu, link), all_verified));
  if (want("overhead")) out["experiments"].push_back(print_and_serialize(overhead_experiment(c, gpu), all_verified));
  return out;
}

}  // namespace streampipe::cli
