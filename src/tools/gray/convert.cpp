// SPDX-License-Identifier: Apache-2.0
// The gray tool's run (see tools/gray/convert.hpp): items built, submitted to the engine's device set,
// drained. Without nvJPEG in the run, one item per file: decode and encode on host workers,
// the luma on whichever member takes it. With it, one item per group of files
// (gpu_stage.hpp), so that a GPU's JPEG engines get many images per call.

#include "streampipe/tools/gray/convert.hpp"

#include "file_io.hpp"
#include "gpu_order.hpp"
#include "luma_operation.hpp"
#include "run_summary.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/nvtx.hpp"
#include "streampipe/host/atomic_file.hpp"
#include "streampipe/host/host_info.hpp"
#include "streampipe/tools/gray/pixels.hpp"

#if defined(STREAMPIPE_HAVE_NVJPEG)
#include "gpu_stage.hpp"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <stop_token>

namespace streampipe::tools::gray {
namespace {

// One file, one item: a host worker decodes it into the staging input as its luma or as
// 8-bit RGB (pixels.hpp), the lane copies or converts it, a host worker encodes and writes
// the result.
pipeline::Item file_item(FileResult& file, const Options& o, host::Overwrite overwrite) {
  pipeline::Item item;
  item.label = file.input.string();
  // Each file's result is written by its own produce, then its own consume (ordered by the
  // engine), and read by on_complete after both.
  item.produce = [&file, &o](pipeline::StagingInput& staging) {
    const io::Image image = detail::read_and_decode(file, o);
    const std::size_t pixels = static_cast<std::size_t>(image.width) * image.height;
    const auto in = staging.allocate(staged_bytes(image), pixels);
    stage(image, {reinterpret_cast<std::uint8_t*>(in.data()), in.size()});
  };
  item.consume = [&file, &o, overwrite](std::span<const std::byte> out) {
    detail::write_output(
        file, detail::encode_output(file, {reinterpret_cast<const std::uint8_t*>(out.data()), out.size()}, o),
        overwrite);
  };
  return item;
}

// Larger batches gain little, and larger groups have hung nvJPEG (docs/gray.md, "groups").
constexpr std::size_t kMaxAutoGroup = 16;

// Files per engine item with nvJPEG. The JPEG engines run at a sixth of their rate with one
// image per call and near their best from 16 (docs/gray.md); but a group is decoded (on the
// CPU's lanes, or by the CPU for the GPU's encoder) or encoded by one worker, so where a
// worker does most of a group's work smaller groups keep every worker busy to the end:
// there are then about four groups per worker, else two.
std::size_t group_size(std::size_t files, int threads, bool worker_heavy) {
  const std::size_t groups = static_cast<std::size_t>(threads) * (worker_heavy ? 4 : 2);
  return std::clamp<std::size_t>((files + groups - 1) / groups, 1, worker_heavy ? 8 : kMaxAutoGroup);
}

// The kind of work (pipeline::Item::work_kind) of items of files nvJPEG may decode.
constexpr int kFilesForNvjpeg = 1;

// What a GPU's start and its tear-down (which the command waits for at its end) cost a run
// with nvJPEG (its two handles and the JPEG engines' buffers, beside busy host workers:
// docs/gray.md) and without (a context and pools): the CPU alone finishes a shorter run.
constexpr double kGpuStartWithNvjpegMs = 2000;
constexpr double kGpuStopWithNvjpegMs = 800;
constexpr double kGpuStartMs = 500;
constexpr double kGpuStopMs = 200;

void check_options(const Options& o) {
  if (o.jpeg_quality < 1 || o.jpeg_quality > 100)
    throw std::invalid_argument(fmt::format("JPEG quality {} is not in 1-100", o.jpeg_quality));
  if (o.png_compression < 0 || o.png_compression > 9)
    throw std::invalid_argument(fmt::format("PNG compression {} is not in 0-9", o.png_compression));
  const auto& e = o.engine;
  if (e.host_threads < 0 || e.host_threads > 1024)
    throw std::invalid_argument(fmt::format("threads {} is not in 0-1024", e.host_threads));
  if (e.lanes < 0 || e.lanes > 64) throw std::invalid_argument(fmt::format("lanes {} is not in 0-64", e.lanes));
  if (e.cpu_lanes < 0 || e.cpu_lanes > 1024)
    throw std::invalid_argument(fmt::format("CPU lanes {} is not in 0-1024", e.cpu_lanes));
  if (o.group < 0 || o.group > 256) throw std::invalid_argument(fmt::format("group {} is not in 0-256", o.group));
  if (o.encode == Encode::gpu && o.format == io::ImageFormat::png && o.png_compression != 1)
    throw std::invalid_argument(fmt::format("GPU PNG encoding writes compression 1 (filter up, strategy fast), not {}",
                                            o.png_compression));
}

}  // namespace

pipeline::EngineOptions engine_defaults() {
  pipeline::EngineOptions o;
  o.lanes = 4;
  o.cpu_lanes = 0;
  o.depth = 0;
  o.host_threads = 0;
  o.gpu_start_ms = 0;  // 0 and 0: gray's own figures, below
  o.gpu_stop_ms = 0;
  o.delivery = pipeline::Delivery::as_completed;
  return o;
}

RunSummary convert(std::span<const Job> jobs, const Options& o) {
  const auto t_call = std::chrono::steady_clock::now();
  const double call_ms = pipeline::Timeline::now_ms();
  check_options(o);
  const int threads = o.engine.host_threads > 0 ? o.engine.host_threads
                                                : static_cast<int>(std::max(2u, host::usable_cores()));
  const bool gpu_asked = o.decode == Decode::gpu || o.encode == Encode::gpu;
  if (gpu_asked && !gpu_decode_available())
    throw std::invalid_argument(
        "GPU decoding and encoding (--decode gpu, --encode gpu) need nvJPEG, which this build does not have");
  if (gpu_asked && (o.engine.backend == pipeline::Backend::host || o.engine.simulate_gpus))
    throw std::invalid_argument(
        "GPU decoding and encoding (--decode gpu, --encode gpu) need a GPU, not the host backend");
  // automatic puts a codec on the GPUs wherever a GPU with nvJPEG may take files (the engine
  // still starts none for a run the CPU finishes sooner): with both codecs there the CPU and
  // a GPU beat the CPU alone (docs/gray.md). The GPU writes PNG at compression 1 only.
  const bool gpus_may_join = gpu_decode_available() && o.engine.backend != pipeline::Backend::host &&
                             !o.engine.simulate_gpus && (gpu_asked || Device::driver_installed());
  const bool decode_on_gpu = o.decode == Decode::gpu || (o.decode == Decode::automatic && gpus_may_join);
  const bool encode_on_gpu =
      o.encode == Encode::gpu || (o.encode == Encode::automatic && gpus_may_join &&
                                  (o.format == io::ImageFormat::jpeg || o.png_compression == 1));
  const bool gpu_codecs = decode_on_gpu || encode_on_gpu;

  // One range over the whole run in Nsight Systems. Opened before the engine starts its
  // threads, it also makes NVTX's lazy initialization happen once, here, not racing in them.
  const NvtxRange range("streampipe gray");
  RunSummary summary;
  summary.files.resize(jobs.size());
  summary.items.resize(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    summary.files[i].input = jobs[i].input;
    summary.files[i].output = jobs[i].output;
  }
  const host::Overwrite overwrite = o.force ? host::Overwrite::allow : host::Overwrite::refuse;
  pipeline::EngineOptions eo = o.engine;
  eo.host_threads = threads;
  eo.lanes = eo.lanes > 0 ? eo.lanes : 4;
  eo.cpu_lanes = eo.cpu_lanes > 0 ? eo.cpu_lanes : std::max(2, threads / 4);
  // Enough slots that every worker can stage one item while each lane holds one.
  if (eo.depth <= 0) eo.depth = std::max(2, (threads + 2 * std::min(eo.lanes, eo.cpu_lanes) - 1) / std::min(eo.lanes, eo.cpu_lanes));
  // Without GPU codecs a GPU would only copy decoded luma through (and take the luma of RGB
  // PNG inputs) while host workers still decode and encode its files: the CPU and a GPU
  // together were slower than the CPU alone (docs/gray.md), so such a run is the CPU's. With
  // them, automatic is the CPU's lanes and the GPUs: the CPU converts files while nvJPEG
  // starts, then both take files. (Simulated GPUs stay: they are the CPU's lanes, there to
  // test the spreading of files.)
  if (eo.backend == pipeline::Backend::automatic && !eo.simulate_gpus) {
    if (!gpu_codecs) {
      eo.backend = pipeline::Backend::host;
      eo.devices.clear();  // --devices names GPUs this run does not use
    } else if (!Device::driver_installed()) {
      // Counting the GPUs starts CUDA (0.1-0.4 s, docs/gray.md) before the CPU's lanes could
      // work: the engine finds them meanwhile, and says in the summary if there are none.
      throw std::invalid_argument(fmt::format("GPU decoding and encoding (--decode gpu, --encode gpu) need a GPU: {}",
                                              Device::unavailable_reason().value_or("none found")));
    }
  }
  const bool may_use_gpu = eo.backend != pipeline::Backend::host && !eo.simulate_gpus;
  const bool nvjpeg = gpu_decode_available() && may_use_gpu;
  const bool gpu_decode = nvjpeg && decode_on_gpu;
  const bool gpu_encode = nvjpeg && encode_on_gpu;
  if (gpu_decode || gpu_encode)
    summary.group = o.group > 0 ? static_cast<std::size_t>(o.group) : group_size(jobs.size(), threads, !gpu_encode || !gpu_decode);
  const std::size_t per_item = summary.group;
  // With GPU decoding the files nvJPEG will not take go first, one per item (the CPU converts
  // them while the GPUs start), then those it may, in groups: a group of files the JPEG
  // engines cannot take would be decoded by one host worker, file after file.
  std::vector<Job> reordered;
  detail::GpuOrder gpu_order;
  if (gpu_decode && jobs.size() > 1) {
    gpu_order = detail::order_for_gpu_decoding(jobs, static_cast<unsigned>(threads));
    for (const std::size_t i : gpu_order.order) reordered.push_back(jobs[i]);
    jobs = reordered;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      summary.files[i].input = jobs[i].input;
      summary.files[i].output = jobs[i].output;
    }
  }
  // Files go one per item until a GPU has joined (the CPU's lanes gain nothing from groups,
  // and a short run ends sooner without them): at most one item per file.
  eo.expected_items = jobs.size();
  const bool nvjpeg_starts = gpu_decode || (gpu_encode && o.format == io::ImageFormat::jpeg);
  if (eo.gpu_start_ms <= 0 && eo.gpu_stop_ms <= 0) {
    eo.gpu_start_ms = nvjpeg_starts ? kGpuStartWithNvjpegMs : kGpuStartMs;
    eo.gpu_stop_ms = nvjpeg_starts ? kGpuStopWithNvjpegMs : kGpuStopMs;
  }

#if defined(STREAMPIPE_HAVE_NVJPEG)
  // Declared before the engine, so it outlives the engine's lanes that use it.
  std::unique_ptr<detail::GpuStage> stage;
  if (gpu_decode || gpu_encode)
    stage = std::make_unique<detail::GpuStage>(detail::GpuStageSetup{.decode = gpu_decode,
                                                                      .encode = gpu_encode,
                                                                      .group = per_item,
                                                                      .largest_width = gpu_order.largest_width,
                                                                      .largest_height = gpu_order.largest_height},
                                               summary.files, o);
  detail::GpuStage* const gpu_stage = stage.get();
#endif
  std::vector<std::size_t> item_file(jobs.size());  // without the GPU stage an item is one file
  const auto first_file_of = [&](std::size_t item) -> std::pair<std::size_t, std::size_t> {
#if defined(STREAMPIPE_HAVE_NVJPEG)
    if (gpu_stage) {
      const auto group = gpu_stage->files_of(item);
      return {group.first, group.count};
    }
#endif
    return {item_file.at(item), 1};
  };
  std::mutex progress_mutex;
  std::size_t finished = 0;
  // Items submitted as groups for a GPU and not yet delivered (the submit loop below).
  std::atomic<std::size_t> groups_in_flight{0};
  std::vector<char> item_for_gpu(jobs.size(), 0);  // written before its item's submit
  eo.on_complete = [&](const pipeline::ItemResult& r) {
    if (item_for_gpu.at(r.index) != 0) --groups_in_flight;
    std::lock_guard lock(progress_mutex);
    const auto [first, count] = first_file_of(r.index);
    for (std::size_t i = first; i < first + count; ++i) {
      FileResult& f = summary.files.at(i);
      summary.items.at(i) = r;
      detail::settle_file(f, r);
      ++finished;
      if (o.on_file) o.on_file(f, finished);
    }
  };
#if defined(STREAMPIPE_HAVE_NVJPEG)
  pipeline::Engine engine(gpu_stage ? gpu_stage->operation() : detail::luma_operation(), eo);
#else
  pipeline::Engine engine(detail::luma_operation(), eo);
#endif
  const auto t0 = std::chrono::steady_clock::now();
  summary.setup_ms = std::chrono::duration<double, std::milli>(t0 - t_call).count();
  summary.threads = threads;
  summary.lanes = eo.lanes;
  summary.cpu_lanes = engine.device_set().cpu ? eo.cpu_lanes : 0;

  // A stop cancels what has not reached a lane and wakes a submit waiting for a slot; the
  // loop then submits nothing more. Declared after the engine, so it is gone before it.
  const std::stop_callback cancel_on_stop(o.stop, [&engine] { engine.cancel(); });
  // Two cursors: the files only the host decodes, [0, gpu_from), one per item; and the rest,
  // one per item until a GPU has joined, then in groups. Once a GPU has joined, groups go
  // between the host's files, two in flight per GPU lane (one on the lane, one staged): a
  // GPU that joins while the CPU still has files of its own starts on the groups at once,
  // rather than after them, and the host's files keep the other slots.
  const std::size_t gpu_from = gpu_order.order.empty() ? 0 : gpu_order.gpu_from;
  std::size_t next_host = 0, next_rest = gpu_from, items = 0;
  const std::size_t groups_per_gpu = 2 * static_cast<std::size_t>(eo.lanes);
  while ((next_host < gpu_from || next_rest < jobs.size()) && !o.stop.stop_requested()) {
    const std::size_t gpus = engine.gpus_ready();
    const bool group_now = gpus > 0 && next_rest < jobs.size() &&
                           (next_host == gpu_from || groups_in_flight.load() < gpus * groups_per_gpu);
    std::size_t first = 0, count = 1;
    if (group_now || next_host == gpu_from) {
      first = next_rest;
      count = gpus > 0 ? std::min(per_item, jobs.size() - first) : 1;
      next_rest += count;
    } else {
      first = next_host++;
    }
#if defined(STREAMPIPE_HAVE_NVJPEG)
    if (gpu_stage) {
      // A group is as many units of work as it has files: the CPU, measured on single
      // files, must not look as quick on a group of sixteen. Files nvJPEG may decode are
      // another kind of work than those only the host decodes (on whatever device their
      // item runs): a GPU measured on the latter would look no faster than the CPU.
      const bool for_gpu = first >= gpu_from && gpus > 0;
      item_for_gpu[items] = for_gpu ? 1 : 0;
      if (for_gpu) ++groups_in_flight;
      pipeline::Item item = gpu_stage->item(items++, {first, count}, overwrite);
      item.work = static_cast<double>(count);
      item.work_kind = !gpu_order.order.empty() && first >= gpu_from ? kFilesForNvjpeg : 0;
      (void)engine.submit(std::move(item));
      continue;
    }
#endif
    item_file[items++] = first;
    (void)engine.submit(file_item(summary.files[first], o, overwrite));
  }
  engine.drain();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if ((i < gpu_from ? i >= next_host : i >= next_rest)) {
      summary.files[i].cancelled = true;
      summary.files[i].error = fmt::format("{}: not started: the run was stopped", jobs[i].input.string());
    }
  }
  // Each output's write-back started as it was written; the fsyncs now mostly find it done,
  // where an fsync per file on its worker held the worker (docs/gray.md).
  const auto t_sync = std::chrono::steady_clock::now();
  detail::sync_outputs(summary.files, static_cast<unsigned>(threads));
  summary.sync_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_sync).count();
  summary.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  summary.records = engine.timeline().records();
  summary.engine = engine.describe();
#if defined(STREAMPIPE_HAVE_NVJPEG)
  if (gpu_stage) summary.codecs = gpu_stage->describe();
#endif
  detail::total_up(summary, engine.device_report(), call_ms, gpu_encode);
  summary.gpus_left_out = engine.gpus_left_out();
  if (summary.encode != "cpu") summary.encoder = o.format == io::ImageFormat::png ? "GPU PNG encoder" : "nvJPEG";
  summary.timeline = engine.timeline().report();
  if (!gpu_order.order.empty()) {  // back in job order
    std::vector<FileResult> files(summary.files.size());
    std::vector<pipeline::ItemResult> results(summary.items.size());
    for (std::size_t k = 0; k < gpu_order.order.size(); ++k) {
      files[gpu_order.order[k]] = std::move(summary.files[k]);
      results[gpu_order.order[k]] = std::move(summary.items[k]);
    }
    summary.files = std::move(files);
    summary.items = std::move(results);
  }
  return summary;
}

}  // namespace streampipe::tools::gray
