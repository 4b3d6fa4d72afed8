// SPDX-License-Identifier: Apache-2.0
#include "streampipe/pipeline/planner.hpp"
#include "streampipe/host/host_info.hpp"

#include "launch_concurrency.hpp"

#include "streampipe/cuda/bandwidth.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/report/statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

namespace streampipe::pipeline {
namespace {

// Median device time of op on `copies` copies of `sample`, as one batch (ms).
double probe_ms(const Operation& op, int device_index, std::span<const std::byte> sample, std::size_t out_bytes,
                std::size_t copies) {
  const Device device(device_index);
  CurrentDeviceGuard guard(device);
  constexpr std::size_t kAlign = 256;
  const std::size_t in_stride = (sample.size() + kAlign - 1) / kAlign * kAlign;
  const std::size_t out_stride = (out_bytes + kAlign - 1) / kAlign * kAlign;
  Stream stream(device);
  DeviceBuffer<std::byte> d_in(device, in_stride * copies), d_out(device, std::max<std::size_t>(out_stride * copies, 1));
  std::vector<ItemDescriptor> items;
  std::vector<std::size_t> indices;
  for (std::size_t k = 0; k < copies; ++k) {
    // Default: the sample may be host or device memory.
    SP_CUDA_CHECK(cudaMemcpyAsync(d_in.data() + k * in_stride, sample.data(), sample.size(), cudaMemcpyDefault,
                                  stream.handle()));
    items.push_back({k * in_stride, sample.size(), k * out_stride, out_bytes});
    indices.push_back(k);
  }
  DeviceBuffer<ItemDescriptor> d_items(device, items.size());
  SP_CUDA_CHECK(cudaMemcpyAsync(d_items.data(), items.data(), d_items.bytes(), cudaMemcpyHostToDevice, stream.handle()));
  const Batch batch(d_in.data(), in_stride * copies, d_out.data(), out_stride * copies, items,
                    copies > 1 ? d_items.data() : nullptr, 0, device.index(), stream.ref(), indices);
  Event start(device), stop(device);
  std::vector<double> ms;
  for (int run = 0; run < 4; ++run) {  // the first run loads modules and warms clocks
    start.record(stream.ref());
    op.device(batch);
    stop.record(stream.ref());
    stop.synchronize();
    if (run > 0) ms.push_back(elapsed(start, stop).count());
  }
  return report::median(ms);
}

// Median wall time of `streams` launches of op at once, one per stream, each on its own
// copy of `sample`: from an event before the first to the last one's end (ms).
double probe_concurrent_ms(const Operation& op, int device_index, std::span<const std::byte> sample,
                           std::size_t out_bytes, int streams) {
  const Device device(device_index);
  CurrentDeviceGuard guard(device);
  const std::size_t n = static_cast<std::size_t>(streams);
  std::vector<Stream> lanes;
  std::vector<DeviceBuffer<std::byte>> ins, outs;
  std::vector<Event> done;
  lanes.reserve(n);
  for (std::size_t k = 0; k < n; ++k) {
    lanes.emplace_back(device);
    ins.emplace_back(device, sample.size());
    outs.emplace_back(device, std::max<std::size_t>(out_bytes, 1));
    done.emplace_back(device, EventTiming::disabled);  // a timed one would hold its hardware queue
    SP_CUDA_CHECK(cudaMemcpyAsync(ins[k].data(), sample.data(), sample.size(), cudaMemcpyDefault, lanes[k].handle()));
  }
  for (auto& l : lanes) l.synchronize();
  const std::vector<ItemDescriptor> items{{0, sample.size(), 0, out_bytes}};
  const std::vector<std::size_t> indices{0};
  Stream head(device);
  Event start(device), stop(device);
  std::vector<double> ms;
  for (int run = 0; run < 3; ++run) {  // the first run warms the lanes up
    start.record(head.ref());
    for (std::size_t k = 0; k < n; ++k) {
      SP_CUDA_CHECK(cudaStreamWaitEvent(lanes[k].handle(), start.handle(), 0));
      op.device(Batch(ins[k].data(), sample.size(), outs[k].data(), out_bytes, items, nullptr, static_cast<int>(k),
                      device.index(), lanes[k].ref(), indices));
      done[k].record(lanes[k].ref());
    }
    // The head waits only once every launch is queued: a wait holds the head's hardware
    // queue, which some lanes share.
    for (std::size_t k = 0; k < n; ++k) SP_CUDA_CHECK(cudaStreamWaitEvent(head.handle(), done[k].handle(), 0));
    stop.record(head.ref());
    stop.synchronize();
    if (run > 0) ms.push_back(elapsed(start, stop).count());
  }
  return report::median(ms);
}

// Whether the set has a GPU to plan for: a named backend, or a GPU on the machine.
Backend resolve(Backend b) {
  if (b == Backend::automatic) return Device::count() > 0 ? Backend::gpu : Backend::host;
  return b;
}

// The set's first GPU: every device of a set runs the same lanes and batches.
int probe_device(const EngineOptions& o) { return o.devices.empty() ? 0 : o.devices.front(); }

// The most launches the planner gives lanes of their own on one GPU (a GPU runs at most 128
// grids at once on the architectures streampipe builds for).
constexpr int kMaxLanes = 128;

// Probes `op` on 8, 32 and 128 streams at once (no more than the items, and no more than a
// quarter of the GPU's free memory holds) and plans lanes from what ran at once.
detail::ConcurrencyPlan probe_concurrency(const Operation& op, int device, std::span<const std::byte> sample,
                                          std::size_t out_bytes, std::size_t count, const Plan& plan) {
  const std::size_t per_stream = sample.size() + out_bytes + 512;
  const std::size_t memory_cap = Device(device).memory_info().free_bytes / 4 / std::max<std::size_t>(per_stream, 1);
  const int cap = static_cast<int>(std::min<std::size_t>({count, memory_cap, static_cast<std::size_t>(kMaxLanes)}));
  std::vector<detail::ConcurrencyProbe> probes;
  for (const int k : {8, 32, kMaxLanes}) {
    const int streams = std::min(k, cap);
    if (streams < 2 || (!probes.empty() && probes.back().streams >= streams)) break;
    probes.push_back({streams, probe_concurrent_ms(op, device, sample, out_bytes, streams)});
    // A width that ran no more at once than the last one rules out the wider ones.
    const auto at_once = [&](const detail::ConcurrencyProbe& p) { return p.streams * plan.kernel_ms_one / p.ms; };
    if (probes.size() > 1 && at_once(probes.back()) <= at_once(probes[probes.size() - 2])) break;
  }
  return detail::plan_concurrency(plan.kernel_ms_one, probes, count, cap);
}

}  // namespace

Plan plan_chunked(const Operation& op, std::span<const std::byte> in, std::size_t in_record, std::size_t out_record,
                  const EngineOptions& base) {
  if (in.empty() || in_record == 0 || out_record == 0) throw std::invalid_argument("plan_chunked: empty input or record");
  Plan plan;
  plan.options = base;
  plan.options.backend = resolve(base.backend);
  const std::size_t records = in.size() / in_record;
  // At least 8 chunks so the pipeline fills; at most 64 MiB and at least 1 MiB each.
  std::size_t chunk_bytes = std::clamp<std::size_t>(in.size() / 8, std::size_t{1} << 20, std::size_t{16} << 20);
  std::size_t chunk = std::max<std::size_t>(1, std::min(records, chunk_bytes / in_record));
  if (plan.options.backend == Backend::host) {
    plan.options.lanes = static_cast<int>(std::clamp(host::usable_cores(), 1u, 16u));
    plan.chunk_records = chunk;
    plan.reason = fmt::format("host backend: one lane per core ({}), {} MiB chunks", plan.options.lanes,
                              (chunk * in_record) >> 20);
    return plan;
  }
  const int device = probe_device(plan.options);
  const LinkLimits& link = link_limits(Device(device));
  const double in_ms = static_cast<double>(chunk * in_record) / (link.peak_gbps("pinned_h2d") * 1e6);
  const double out_ms = static_cast<double>(chunk * out_record) / (link.peak_gbps("pinned_d2h") * 1e6);
  plan.transfer_ms = std::max(in_ms, out_ms);
  plan.kernel_ms = probe_ms(op, device, in.first(chunk * in_record), chunk * out_record, 1);
  if (plan.kernel_ms <= plan.transfer_ms) {
    plan.options.lanes = 4;  // one chunk in each copy engine, one on the SMs, one being refilled
    plan.reason = fmt::format("copy-bound: kernel {:.3f} ms vs transfer {:.3f} ms per {} MiB chunk -> {} lanes",
                              plan.kernel_ms, plan.transfer_ms, (chunk * in_record) >> 20, plan.options.lanes);
  } else {
    plan.options.lanes = static_cast<int>(std::clamp(std::ceil(plan.kernel_ms / plan.transfer_ms) + 2.0, 4.0, 16.0));
    plan.reason = fmt::format("compute-bound: kernel {:.3f} ms vs transfer {:.3f} ms per {} MiB chunk -> {} lanes",
                              plan.kernel_ms, plan.transfer_ms, (chunk * in_record) >> 20, plan.options.lanes);
  }
  plan.options.depth = 2;
  plan.chunk_records = chunk;
  return plan;
}

Plan plan_items(const Operation& op, std::span<const std::byte> sample, std::size_t out_bytes, std::size_t count,
                const EngineOptions& base) {
  if (sample.empty()) throw std::invalid_argument("plan_items: empty sample item");
  Plan plan;
  plan.options = base;
  plan.options.backend = resolve(base.backend);
  if (plan.options.backend == Backend::host) {
    plan.options.lanes = static_cast<int>(std::clamp(host::usable_cores(), 1u, 16u));
    plan.options.batch_items = 1;
    plan.reason = fmt::format("host backend: one lane per core ({})", plan.options.lanes);
    return plan;
  }
  const int device = probe_device(plan.options);
  const LinkLimits& link = link_limits(Device(device));
  const double in_ms = static_cast<double>(sample.size()) / (link.peak_gbps("pinned_h2d") * 1e6);
  const double out_ms = static_cast<double>(out_bytes) / (link.peak_gbps("pinned_d2h") * 1e6);
  const double item_transfer = std::max(in_ms, out_ms);
  constexpr std::size_t kProbeBatch = 8;
  plan.kernel_ms_one = probe_ms(op, device, sample, out_bytes, 1);
  const double batch_ms = count >= kProbeBatch ? probe_ms(op, device, sample, out_bytes, kProbeBatch) : 0;
  const bool occupancy_light = count >= kProbeBatch && batch_ms < 0.5 * kProbeBatch * plan.kernel_ms_one;
  if (occupancy_light && plan.kernel_ms_one > item_transfer) {
    // A batch costs about one kernel's time however many items it holds, and a lane runs its
    // batches one after another (copy in, kernel, copy out on one stream). The link stays
    // busy only when about kernel / item_link items compute at once, where item_link is an
    // item's share of the link with both directions running; 1.5x that covers the time each
    // lane spends in its own copies. Sixteen lanes; batches as large as that needs.
    const double both = link.peak_gbps("bidirectional");
    const double item_link = std::max(
        item_transfer, both > 0 ? static_cast<double>(sample.size() + out_bytes) / (both * 1e6) : 0.0);
    const double kernel_batch = std::max(plan.kernel_ms_one, batch_ms);
    const int lanes = 16;
    const double in_compute = 1.5 * kernel_batch / item_link;
    const auto b = static_cast<int>(std::clamp(std::ceil(in_compute / lanes), 1.0, 64.0));
    plan.options.lanes = lanes;
    plan.options.batch_items = b;
    plan.options.batch_bytes = static_cast<std::size_t>(b) * ((sample.size() + 255) / 256 * 256);
    plan.kernel_ms = batch_ms;
    plan.transfer_ms = b * item_transfer;
    plan.reason = fmt::format(
        "small kernel: one item {:.3f} ms, {} items in one launch {:.3f} ms, {:.3f} ms of link per item -> "
        "{:.0f} items computing at once: batches of {} on {} lanes",
        plan.kernel_ms_one, kProbeBatch, batch_ms, item_link, in_compute, b, lanes);
  } else {
    plan.options.batch_items = 1;
    plan.kernel_ms = plan.kernel_ms_one;
    plan.transfer_ms = item_transfer;
    detail::ConcurrencyPlan wide;
    if (plan.kernel_ms_one > item_transfer && count >= 2) wide = probe_concurrency(op, device, sample, out_bytes, count, plan);
    if (wide.lanes > 0) {
      // Batched launches run one after another on a lane; launches that each fill a fraction
      // of the GPU need lanes of their own to run at once.
      plan.options.lanes = wide.lanes;
      plan.reason = fmt::format("small launches: {}; no batching ({} items in one launch {:.3f} ms)", wide.reason,
                                kProbeBatch, batch_ms);
    } else if (plan.kernel_ms_one <= item_transfer) {
      plan.options.lanes = 4;
      plan.reason = fmt::format("copy-bound: kernel {:.3f} ms vs transfer {:.3f} ms per item -> 4 lanes, no batching",
                                plan.kernel_ms_one, item_transfer);
    } else {
      plan.options.lanes = static_cast<int>(std::clamp(std::ceil(plan.kernel_ms_one / item_transfer) + 2.0, 4.0, 16.0));
      plan.reason = fmt::format("compute-bound: kernel {:.3f} ms vs transfer {:.3f} ms per item{} -> {} lanes",
                                plan.kernel_ms_one, item_transfer,
                                wide.reason.empty() ? std::string() : "; " + wide.reason, plan.options.lanes);
    }
  }
  plan.options.depth = 2;
  return plan;
}

}  // namespace streampipe::pipeline
