// SPDX-License-Identifier: Apache-2.0
#include "streampipe/tools/mandelbrot/bands.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/stream.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>

namespace streampipe::tools::mandelbrot {
namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A band's own GPU resources, made before the clock starts.
struct Part {
  Part(const Device& d, std::size_t pixels) : device(d), stream(d), counts(d, pixels), start(d), stop(d), copy(d), copied(d) {}
  Device device;
  Stream stream;
  DeviceBuffer<std::uint32_t> counts;
  Event start, stop, copy, copied;
};

}  // namespace

std::vector<RowBand> split_rows(std::uint32_t height, std::size_t bands) {
  if (bands == 0) throw std::invalid_argument("split_rows: no bands");
  std::vector<RowBand> out;
  out.reserve(bands);
  const std::uint32_t base = static_cast<std::uint32_t>(height / bands);
  const std::size_t taller = height % bands;
  std::uint32_t row = 0;
  for (std::size_t i = 0; i < bands; ++i) {
    const std::uint32_t rows = base + (i < taller ? 1u : 0u);
    out.push_back({row, rows});
    row += rows;
  }
  return out;
}

SpreadRun compute_spread(std::span<const Device> devices, const Params& p, Precision precision) {
  if (devices.empty()) throw std::invalid_argument("compute_spread: no devices");
  return compute_bands(devices, split_rows(p.height, devices.size()), p, precision);
}

SpreadRun compute_bands(std::span<const Device> devices, std::span<const RowBand> bands, const Params& p,
                        Precision precision) {
  if (devices.empty() || devices.size() != bands.size())
    throw std::invalid_argument("compute_bands: one band per device, at least one");
  p.validate();
  SpreadRun run;
  run.counts.resize(p.pixels());
  std::vector<std::unique_ptr<Part>> parts(bands.size());  // none for an empty band
  for (std::size_t i = 0; i < bands.size(); ++i) {
    run.bands.push_back({devices[i].index(), bands[i], 0, 0});
    if (bands[i].rows == 0) continue;
    const CurrentDeviceGuard on(devices[i]);
    parts[i] = std::make_unique<Part>(devices[i], std::size_t{bands[i].rows} * p.width);
    auto& part = *parts[i];
    SP_CUDA_CHECK(cudaMemsetAsync(part.counts.data(), 0xff, part.counts.bytes(), part.stream.handle()));  // poison
    part.stream.synchronize();  // setup: not part of the time
  }

  // Every kernel first: all GPUs compute at once.
  run.enqueue_begin_ms = now_ms();
  for (std::size_t i = 0; i < bands.size(); ++i) {
    if (!parts[i]) continue;
    auto& part = *parts[i];
    const CurrentDeviceGuard on(part.device);
    part.start.record(part.stream.ref());
    compute_device_rows(part.stream.ref(), p, precision, bands[i], part.counts.data());
    part.stop.record(part.stream.ref());
  }
  run.enqueue_end_ms = now_ms();
  double last_done_ms = run.enqueue_begin_ms;
  for (const auto& part : parts)
    if (part) {
      part->stop.synchronize();
      last_done_ms = now_ms();  // in order, so the last wait ends after the last band's end
    }
  // Then the copies into the pageable counts (a copy to pageable memory returns when it
  // has finished, so it waits until its band is done: hence after every launch).
  for (std::size_t i = 0; i < bands.size(); ++i) {
    if (!parts[i]) continue;
    auto& part = *parts[i];
    const CurrentDeviceGuard on(part.device);
    part.copy.record(part.stream.ref());
    SP_CUDA_CHECK(cudaMemcpyAsync(run.counts.data() + std::size_t{bands[i].first_row} * p.width, part.counts.data(),
                                  part.counts.bytes(), cudaMemcpyDeviceToHost, part.stream.handle()));
    part.copied.record(part.stream.ref());
  }
  for (std::size_t i = 0; i < bands.size(); ++i) {
    if (!parts[i]) continue;
    parts[i]->stream.synchronize();
    run.bands[i].compute_ms = elapsed(parts[i]->start, parts[i]->stop).count();
    run.bands[i].d2h_ms = elapsed(parts[i]->copy, parts[i]->copied).count();
  }
  run.complete_ms = now_ms();
  run.compute_ms = devices.size() == 1 ? run.bands[0].compute_ms : last_done_ms - run.enqueue_begin_ms;
  return run;
}

SpreadRun compute_spread_host(std::span<const int> simulated, const Params& p, Precision precision,
                              unsigned threads) {
  if (simulated.empty()) throw std::invalid_argument("compute_spread_host: no devices");
  return compute_bands_host(simulated, split_rows(p.height, simulated.size()), p, precision, threads);
}

SpreadRun compute_bands_host(std::span<const int> simulated, std::span<const RowBand> bands, const Params& p,
                             Precision precision, unsigned threads) {
  if (simulated.empty() || simulated.size() != bands.size())
    throw std::invalid_argument("compute_bands_host: one band per device, at least one");
  p.validate();
  SpreadRun run;
  run.counts.resize(p.pixels());
  run.enqueue_begin_ms = run.enqueue_end_ms = now_ms();
  for (std::size_t i = 0; i < bands.size(); ++i) {
    const double begin = now_ms();
    const auto counts = compute_host_rows(p, precision, bands[i], threads);
    std::copy(counts.begin(), counts.end(), run.counts.begin() + std::size_t{bands[i].first_row} * p.width);
    run.bands.push_back({simulated[i], bands[i], now_ms() - begin, 0});
  }
  run.complete_ms = now_ms();
  run.compute_ms = run.complete_ms - run.enqueue_begin_ms;
  return run;
}

}  // namespace streampipe::tools::mandelbrot
