// SPDX-License-Identifier: Apache-2.0
// The gray tool's run (see gray.hpp). Without nvJPEG in the run, one engine item per file:
// decode and encode on host workers, the luma on the lanes. With it, one item per group of
// files (gray_gpu_stage.hpp), so that the GPU's JPEG engines get many images per call.

#include "streampipe/tools/gray.hpp"

#include "gray_file_cursor.hpp"
#include "gray_file_io.hpp"
#include "gray_host_start.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/nvtx.hpp"
#include "streampipe/ops/pipeline_ops.hpp"
#include "streampipe/report/atomic_file.hpp"
#include "streampipe/report/host_info.hpp"
#include "streampipe/tools/gray_pixels.hpp"

#if defined(STREAMPIPE_HAVE_NVJPEG)
#include "gray_gpu_stage.hpp"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <stop_token>

namespace streampipe::tools::gray {
namespace fs = std::filesystem;

namespace {

// One file, one item: a host worker decodes it into the staging input as 8-bit RGB, the lane
// converts it, a host worker encodes and writes the result.
pipeline::Item file_item(FileResult& file, const Options& o, report::Overwrite overwrite) {
  pipeline::Item item;
  item.label = file.input.string();
  // Each file's result is written by its own produce, then its own consume (ordered by the
  // engine), and read by on_complete after both.
  item.produce = [&file, &o](pipeline::StagingInput& staging) {
    const io::Image image = detail::read_and_decode(file, o);
    const std::size_t pixels = static_cast<std::size_t>(image.width) * image.height;
    const auto in = staging.allocate(rgb8_bytes(image), pixels);
    to_rgb8(image, {reinterpret_cast<std::uint8_t*>(in.data()), in.size()});
  };
  item.consume = [&file, &o, overwrite](std::span<const std::byte> out) {
    detail::write_output(
        file, detail::encode_output(file, {reinterpret_cast<const std::uint8_t*>(out.data()), out.size()}, o),
        overwrite);
  };
  return item;
}

// Larger batches gain little (3750 against 3090 images/s at 64), and on an H100 (nvJPEG
// 13.0.1) two streams decoding batches of 64 or a run with groups of 32 did not return.
constexpr std::size_t kMaxAutoGroup = 16;

// Files per engine item with nvJPEG. The JPEG engines run at a sixth of their rate with one
// image per call and near their best from 16 (docs/gray.md); but a group is encoded by one
// worker, so with PNG outputs (the host's work) smaller groups keep every worker busy to
// the end: there are then about four groups per worker, two with GPU-encoded JPEGs.
std::size_t group_size(std::size_t files, int threads, bool host_encodes) {
  const std::size_t groups = static_cast<std::size_t>(threads) * (host_encodes ? 4 : 2);
  return std::clamp<std::size_t>((files + groups - 1) / groups, 1, host_encodes ? 8 : kMaxAutoGroup);
}

std::string resolved(bool gpu) { return gpu ? "gpu" : "cpu"; }

// Backend::automatic with host start takes the GPU only for runs of at least this many files
// per host thread. The GPU's start (CUDA, nvJPEG's handles and states) and tear-down take
// about as long as a thread converting this many 1080p JPEGs, and gray on the GPU is at
// best a few times the host's rate; shorter runs end sooner on the host (docs/gray.md).
constexpr std::size_t kFilesPerThreadForGpu = 100;

void total_up(RunSummary& summary) {
  for (const auto& f : summary.files) {
    summary.bytes_in += f.bytes_in;
    if (f.ok && f.decoder == "gpu") ++summary.gpu_decoded;
    if (!f.fallback.empty()) ++summary.fallbacks[f.fallback];
    if (f.ok) {
      ++summary.ok;
      summary.bytes_out += f.bytes_out;
      summary.pixels += static_cast<std::uint64_t>(f.width) * f.height;
    } else if (f.cancelled) {
      ++summary.cancelled;
    } else {
      ++summary.failed;
    }
  }
}

// The host-start files into the summary after the run: their records and an ItemResult
// each, numbered after the engine's `engine_items` items (the engine numbered its own from 0).
void add_host_start(RunSummary& summary, const detail::HostStart& early, std::size_t engine_items) {
  std::vector<std::size_t> item_of(summary.files.size());
  for (std::size_t k = 0; k < early.files().size(); ++k) item_of[early.files()[k]] = engine_items + k;
  for (pipeline::StageRecord r : early.records()) {
    const std::size_t file = r.first_item;
    r.first_item = item_of[file];
    pipeline::ItemResult& item = summary.items.at(file);
    item.timing.latency_ms += r.end_ms - r.start_ms;
    (r.stage == pipeline::Stage::stage_in ? item.timing.stage_in_ms : item.timing.stage_out_ms) = r.end_ms - r.start_ms;
    summary.records.push_back(r);
  }
  for (const std::size_t file : early.files()) {
    const FileResult& f = summary.files[file];
    pipeline::ItemResult& item = summary.items[file];
    item.index = item_of[file];
    item.label = f.input.string();
    item.status = f.ok ? pipeline::ItemStatus::done : pipeline::ItemStatus::failed;
    item.error = f.error;
  }
  summary.host_start_files = early.files().size();
}

}  // namespace

RunSummary convert(std::span<const Job> jobs, const Options& o) {
  const auto t_call = std::chrono::steady_clock::now();
  const auto since_call = [t_call] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_call).count();
  };
  if (o.jpeg_quality < 1 || o.jpeg_quality > 100)
    throw std::invalid_argument(fmt::format("JPEG quality {} is not in 1-100", o.jpeg_quality));
  if (o.png_compression < 0 || o.png_compression > 9)
    throw std::invalid_argument(fmt::format("PNG compression {} is not in 0-9", o.png_compression));
  if (o.threads < 0 || o.threads > 1024) throw std::invalid_argument(fmt::format("threads {} is not in 0-1024", o.threads));
  if (o.lanes < 0 || o.lanes > 64) throw std::invalid_argument(fmt::format("lanes {} is not in 0-64", o.lanes));
  if (o.group < 0 || o.group > 256) throw std::invalid_argument(fmt::format("group {} is not in 0-256", o.group));

  const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(2u, report::usable_cores()));
  const bool gpu_asked = o.decode == Decode::gpu || o.encode == Encode::gpu;
  if (gpu_asked && !gpu_decode_available())
    throw std::invalid_argument("GPU JPEG decoding and encoding need nvJPEG, which this build does not have");
  // Decode::gpu and Encode::gpu ask for every JPEG to go through nvJPEG.
  const bool host_start = o.host_start && !gpu_asked && !jobs.empty();

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
  const report::Overwrite overwrite = o.force ? report::Overwrite::allow : report::Overwrite::refuse;

  // Files are taken in job order by whoever is ready: the host-start threads one at a time
  // until the engine is, then the engine, a group (or one file) per item.
  detail::FileCursor cursor(jobs.size());
  // A stop takes no file after it; the engine's own stop callback, below, cancels its items.
  const std::stop_callback close_on_stop(o.stop, [&cursor] { cursor.close(); });
  std::mutex progress_mutex;
  std::size_t finished = 0;
  const auto report_file = [&](const FileResult& f) {  // under progress_mutex
    ++finished;
    if (o.on_file) o.on_file(f, finished);
  };
  // The conversion starts with the first file taken: here with host start, else once the
  // engine is ready.
  auto t0 = std::chrono::steady_clock::now();
  summary.setup_ms = since_call();
  std::optional<detail::HostStart> early;
  summary.host_start = host_start;
  // setenv() races with the getenv() of threads already running (libjpeg-turbo reads its
  // settings on each thread's first decode): the environment is final before they start.
  if (o.backend != pipeline::Backend::host) request_hardware_queues();
  if (host_start)
    early.emplace(summary.files, o, overwrite, cursor, threads, [&](std::size_t file) {
      const std::lock_guard lock(progress_mutex);
      report_file(summary.files[file]);
    });

  // Everything from here to the engine's first item overlaps the host-start threads' work,
  // CUDA's initialization included (Backend::automatic asks for the GPUs here).
  pipeline::Backend backend = o.backend;
  const std::size_t gpu_from = static_cast<std::size_t>(threads) * kFilesPerThreadForGpu;
  if (backend == pipeline::Backend::automatic && host_start && jobs.size() < gpu_from) {
    backend = pipeline::Backend::host;
    summary.backend_note = fmt::format(
        "auto chose the host: {} file(s) are fewer than the GPU's start repays ({}, {} per host thread)", jobs.size(),
        gpu_from, kFilesPerThreadForGpu);
  } else if (backend == pipeline::Backend::automatic) {
    backend = Device::count() > 0 ? pipeline::Backend::gpu : pipeline::Backend::host;
  }
  if (gpu_asked && backend != pipeline::Backend::gpu)
    throw std::invalid_argument("GPU JPEG decoding and encoding need the GPU backend");
  summary.gpus_found_ms = since_call();
  // Backend::automatic: once the host-start threads have taken every file, the GPU's start
  // is stopped at its next step and the engine is made on the host (it finds nothing left).
  const bool may_stop_gpu = o.backend == pipeline::Backend::automatic && host_start;
  const auto all_taken = [&] { return may_stop_gpu && cursor.claimed() >= jobs.size(); };
  const auto stop_gpu = [&] {
    backend = pipeline::Backend::host;
    summary.backend_note = fmt::format(
        "the host threads took every file before the GPU was ready: its start was stopped {:.2f} s after the first "
        "file was taken",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  };
  if (backend == pipeline::Backend::gpu && all_taken()) stop_gpu();
  const int lanes = o.lanes > 0 ? o.lanes : backend == pipeline::Backend::gpu ? 4 : std::max(2, threads / 4);
  const bool nvjpeg = gpu_decode_available() && backend == pipeline::Backend::gpu;
  const bool gpu_decode = nvjpeg && o.decode != Decode::cpu;
  const bool gpu_encode = nvjpeg && o.encode != Encode::cpu && o.format == io::ImageFormat::jpeg;
  summary.decode = resolved(gpu_decode);
  summary.encode = resolved(gpu_encode);
  if (gpu_decode || gpu_encode)
    summary.group = o.group > 0 ? static_cast<std::size_t>(o.group) : group_size(jobs.size(), threads, !gpu_encode);

  pipeline::EngineOptions eo;
  eo.backend = backend;
  eo.devices = o.devices;
  if (backend == pipeline::Backend::gpu && eo.devices.empty())
    for (int d = 0; d < Device::count(); ++d) eo.devices.push_back(d);
  eo.lanes = lanes;
  // Enough slots that every worker can stage one item while each lane holds one on the device.
  eo.depth = std::max(2, (threads + 2 * lanes - 1) / lanes);
  eo.host_threads = threads;
  eo.delivery = pipeline::Delivery::as_completed;
  // Declared before the engine, so it outlives the engine's lanes that use it.
#if defined(STREAMPIPE_HAVE_NVJPEG)
  std::unique_ptr<detail::GpuStage> stage;
  if (gpu_decode || gpu_encode) {
    try {
      stage = std::make_unique<detail::GpuStage>(
          detail::GpuStageSetup{.devices = eo.devices, .lanes = lanes, .decode = gpu_decode, .encode = gpu_encode,
                                .group = summary.group, .stop_start = all_taken},
          summary.files, o);
      summary.codecs = stage->describe();
    } catch (const detail::StartStopped&) {
      stop_gpu();
    }
  }
#endif
  summary.codecs_ready_ms = since_call();
  if (backend == pipeline::Backend::gpu && all_taken()) stop_gpu();
  if (backend == pipeline::Backend::host && eo.backend == pipeline::Backend::gpu) {
    // The stopped GPU start's place: a host engine, made at once, for the files none took.
    eo.backend = backend;
    eo.devices.clear();  // on the host backend a device list means simulated devices
    summary.decode = summary.encode = resolved(false);
    summary.codecs.clear();
    summary.group = 1;
  }
#if defined(STREAMPIPE_HAVE_NVJPEG)
  // Made but not used when the start was stopped after it (released with the run).
  detail::GpuStage* const gpu_stage = eo.backend == pipeline::Backend::gpu ? stage.get() : nullptr;
#endif
  // Without the GPU stage an item is one file: item_file[item] is its index.
  std::vector<std::size_t> item_file(jobs.size());
  const auto files_of = [&](std::size_t item) -> detail::FileRange {
#if defined(STREAMPIPE_HAVE_NVJPEG)
    if (gpu_stage) return gpu_stage->files_of(item);
#endif
    return {item_file.at(item), 1};
  };
  eo.on_complete = [&](const pipeline::ItemResult& r) {
    std::lock_guard lock(progress_mutex);
    const auto [first, count] = files_of(r.index);
    for (std::size_t i = first; i < first + count; ++i) {
      FileResult& f = summary.files.at(i);
      summary.items.at(i) = r;
      f.cancelled = r.status == pipeline::ItemStatus::cancelled;
      // A file of a group may have failed alone (its error set) while the group went on.
      f.ok = r.ok() && f.error.empty();
      if (!r.ok() && f.error.empty()) {
        std::string what = r.error;
        if (r.exception) {
          try {
            std::rethrow_exception(r.exception);
          } catch (...) {
            what = detail::current_error(f.input);
          }
        }
        f.error = detail::file_error(f.input, what);
      }
      report_file(f);
    }
  };
#if defined(STREAMPIPE_HAVE_NVJPEG)
  pipeline::Engine engine(gpu_stage ? gpu_stage->operation() : ops::gray_operation(), eo);
#else
  pipeline::Engine engine(ops::gray_operation(), eo);
#endif
  // The engine is ready: the host-start threads finish the files they hold and take no more.
  if (early) early->stop();
  summary.engine_ready_ms = since_call();
  if (!early) {
    t0 = std::chrono::steady_clock::now();
    summary.setup_ms = summary.engine_ready_ms;
  }
  summary.backend = pipeline::backend_name(engine.backend());
  summary.device = "host";
  if (engine.backend() == pipeline::Backend::gpu) {
    summary.device.clear();
    for (const int d : engine.devices()) summary.device += (summary.device.empty() ? "" : ", ") + Device(d).name();
  }
  summary.engine = engine.describe();
  summary.threads = threads;
  summary.lanes = lanes;

  // A stop cancels what has not reached a lane and wakes a submit waiting for a slot; the
  // loop then submits nothing more. Declared after the engine, so it is gone before it.
  const std::stop_callback cancel_on_stop(o.stop, [&engine] { engine.cancel(); });
  std::size_t items = 0;
  const std::size_t per_item = summary.group;
  while (const auto files = cursor.claim(per_item)) {
#if defined(STREAMPIPE_HAVE_NVJPEG)
    if (gpu_stage) {
      (void)engine.submit(gpu_stage->item(items++, *files, overwrite));
      continue;
    }
#endif
    item_file[items++] = files->first;
    (void)engine.submit(file_item(summary.files[files->first], o, overwrite));
  }
  engine.drain();
  if (early) early->join();
  for (std::size_t i = cursor.claimed(); i < jobs.size(); ++i) {
    summary.files[i].cancelled = true;
    summary.files[i].error = fmt::format("{}: not started: the run was stopped", jobs[i].input.string());
  }
  // Each output's write-back started as it was written; the fsyncs now mostly find it done
  // (an fsync per file on its worker held the worker 2-5 ms each).
  const auto t_sync = std::chrono::steady_clock::now();
  detail::sync_outputs(summary.files, static_cast<unsigned>(threads));
  summary.sync_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_sync).count();
  summary.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  summary.records = engine.timeline().records();
  if (early) add_host_start(summary, *early, items);
  total_up(summary);
  summary.timeline = engine.timeline().report();
  return summary;
}

}  // namespace streampipe::tools::gray
