// SPDX-License-Identifier: Apache-2.0
// Experiments 3 and 4 of `bench streams`: one large array through y = 2x + 1 in chunks
// (lanes x chunk sizes, and the planner's choice) against both copy directions at once;
// and the engine's host time per tiny item, one item per transfer and 64 batched.

#include "streams/experiments.hpp"

#include "streampipe/cuda/pinned_pool.hpp"
#include "streampipe/ops/affine.hpp"
#include "streampipe/ops/pipeline_ops.hpp"
#include "streampipe/pipeline/chunked.hpp"
#include "streampipe/pipeline/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace streampipe::bench::streams {

using pipeline::Engine;

Experiment chunked_experiment(const Config& c, bool gpu, const LinkLimits* link) {
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
  const auto run = [&](Engine& engine, std::size_t chunk_records) {
    engine.timeline().clear();
    const auto result = pipeline::run_chunked(engine, in_span, out_span, chunk_records);
    if (!result.ok()) throw std::runtime_error(result.failures.front().error);
  };
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
      Row row = timed_row(fmt::format("{} lane{}, {} MiB chunks", lanes, lanes == 1 ? "" : "s", mib), c.warmup,
                          gpu ? c.runs : 1, poison, [&] { run(engine, (mib << 20) / 4); }, verify);
      add_engine_details(row, engine);
      if (lanes == 4 && mib == 16) write_trace(c, engine, "chunked-4-lanes-16MiB");
      ex.rows.push_back(std::move(row));
    }
  if (c.lanes == 0) {
    const auto op = ops::affine_operation(2.0f, 1.0f);
    const auto plan = pipeline::plan_chunked(op, std::as_bytes(in_span), 4, 4, engine_options(gpu, c.device, 4));
    Engine engine(op, plan.options);
    Row row = timed_row(fmt::format("planner: {} lanes, {} MiB chunks", plan.options.lanes, (plan.chunk_records * 4) >> 20),
                        c.warmup, gpu ? c.runs : 1, poison, [&] { run(engine, plan.chunk_records); }, verify);
    add_engine_details(row, engine);
    row.fields["detail"] = row.fields["detail"].get<std::string>() + "; planner: " + plan.reason;
    ex.rows.push_back(std::move(row));
  }
  for (auto& r : ex.rows) {
    r.fields["bytes"] = 2 * bytes;
    r.fields["limit_gbps"] = link ? link->peak_gbps("bidirectional") : 0;
  }
  return ex;
}

Experiment overhead_experiment(const Config& c, bool gpu) {
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
    Row row = timed_row(batch == 1 ? "engine, one item per transfer" : "engine, 64 items per transfer and launch",
                        c.warmup, std::min(c.runs, 3), poison, [&] {
      for (std::size_t i = 0; i < n; ++i)
        (void)engine.submit(pipeline::make_item(std::span<const float>(in[i]), std::span<float>(out[i])));
      engine.drain();
    }, verify);
    row.fields["detail"] = engine.describe();
    row.fields["bytes"] = n * kElems * 4;
    row.fields["items"] = n;
    ex.rows.push_back(std::move(row));
  }
  return ex;
}

}  // namespace streampipe::bench::streams
