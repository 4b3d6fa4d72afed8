// SPDX-License-Identifier: Apache-2.0
// The gray tool's run: one engine item per file, decode and encode on host workers, the
// luma conversion on the lanes (see gray.hpp).

#include "streampipe/tools/gray.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/nvtx.hpp"
#include "streampipe/report/atomic_file.hpp"
#include "streampipe/ops/pipeline_ops.hpp"
#include "streampipe/tools/gray_pixels.hpp"

#if defined(STREAMPIPE_HAVE_NVJPEG)
#include "gray_gpu_decode.hpp"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace streampipe::tools::gray {
namespace fs = std::filesystem;

namespace {

std::vector<std::byte> read_whole_file(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot read: {}", path.string(), ec.message()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open for reading", path.string()));
  std::vector<std::byte> data(static_cast<std::size_t>(size));
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (in.gcount() != static_cast<std::streamsize>(data.size()))
    throw std::runtime_error(fmt::format("{}: read {} of {} bytes", path.string(), in.gcount(), data.size()));
  return data;
}

// "<input>: <reason>", whatever stage failed (image errors already start with the name).
std::string file_error(const FileResult& f, const pipeline::ItemResult& r) {
  const std::string name = f.input.string();
  std::string what = r.error;
  if (r.exception) {
    try {
      std::rethrow_exception(r.exception);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "unknown error";
    }
  }
  if (what.rfind(name + ":", 0) == 0) return what;
  return fmt::format("{}: {}", name, what);
}

}  // namespace

RunSummary convert(std::span<const Job> jobs, const Options& o) {
  if (o.jpeg_quality < 1 || o.jpeg_quality > 100)
    throw std::invalid_argument(fmt::format("JPEG quality {} is not in 1-100", o.jpeg_quality));
  if (o.png_compression < 0 || o.png_compression > 9)
    throw std::invalid_argument(fmt::format("PNG compression {} is not in 0-9", o.png_compression));
  if (o.threads < 0 || o.threads > 1024) throw std::invalid_argument(fmt::format("threads {} is not in 0-1024", o.threads));
  if (o.lanes < 0 || o.lanes > 64) throw std::invalid_argument(fmt::format("lanes {} is not in 0-64", o.lanes));

  pipeline::Backend backend = o.backend;
  if (backend == pipeline::Backend::automatic)
    backend = Device::count() > 0 ? pipeline::Backend::gpu : pipeline::Backend::host;
  const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  const int lanes = o.lanes > 0 ? o.lanes : backend == pipeline::Backend::gpu ? 4 : std::max(2, threads / 4);
  if (o.decode == Decode::gpu && !gpu_decode_available())
    throw std::invalid_argument("GPU JPEG decoding needs nvJPEG, which this build does not have");
  if (o.decode == Decode::gpu && backend != pipeline::Backend::gpu)
    throw std::invalid_argument("GPU JPEG decoding needs the GPU backend");

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

  std::mutex progress_mutex;
  std::size_t finished = 0;
  pipeline::EngineOptions eo;
  eo.backend = backend;
  eo.device = o.device;
  eo.lanes = lanes;
  // Enough slots that every worker can decode one file while each lane holds one on the device.
  eo.depth = std::max(2, (threads + 2 * lanes - 1) / lanes);
  eo.host_threads = threads;
  eo.delivery = pipeline::Delivery::as_completed;
  eo.on_complete = [&](const pipeline::ItemResult& r) {
    std::lock_guard lock(progress_mutex);
    FileResult& f = summary.files.at(r.index);
    summary.items.at(r.index) = r;
    f.ok = r.ok();
    if (!f.ok) f.error = file_error(f, r);
    ++finished;
    if (o.on_file) o.on_file(f, finished);
  };
  // Declared before the engine, so it outlives the engine's lanes that use it.
#if defined(STREAMPIPE_HAVE_NVJPEG)
  std::unique_ptr<GpuDecodeStage> gpu_decode;
  if (o.decode == Decode::gpu) gpu_decode = std::make_unique<GpuDecodeStage>(Device(o.device), lanes, summary.files);
  pipeline::Engine engine(gpu_decode ? gpu_decode->operation() : ops::gray_operation(), eo);
#else
  pipeline::Engine engine(ops::gray_operation(), eo);
#endif
  summary.backend = pipeline::backend_name(engine.backend());
  summary.device = engine.backend() == pipeline::Backend::gpu ? Device(o.device).name() : std::string("host");
  summary.engine = engine.describe();

  const report::Overwrite overwrite = o.force ? report::Overwrite::allow : report::Overwrite::refuse;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    FileResult* file = &summary.files[i];
    pipeline::Item item;
    item.label = jobs[i].input.string();
    // Each file's result is written by its own produce, then its own consume (ordered by the
    // engine), and read by on_complete after both.
    item.produce = [&, file, i](pipeline::StagingInput& staging) {
      const auto data = read_whole_file(file->input);
      file->bytes_in = data.size();
#if defined(STREAMPIPE_HAVE_NVJPEG)
      if (gpu_decode && gpu_decode->stage(i, data, staging)) return;
#endif
      file->decoder = "cpu";
      // 16-bit samples stay 16-bit here, so the result reports the depth of the file;
      // to_rgb8 rounds them to 8 bits as libpng's strip_16 would.
      const io::Image image = io::decode_image(data, {}, file->input.string());
      file->width = image.width;
      file->height = image.height;
      file->channels = image.channels;
      file->bit_depth = image.bit_depth;
      const std::size_t pixels = static_cast<std::size_t>(image.width) * image.height;
      const auto in = staging.allocate(rgb8_bytes(image), pixels);
      to_rgb8(image, {reinterpret_cast<std::uint8_t*>(in.data()), in.size()});
    };
    item.consume = [file, &o, overwrite](std::span<const std::byte> out) {
      io::Image gray;
      gray.width = file->width;
      gray.height = file->height;
      gray.channels = 1;
      gray.bit_depth = 8;
      const auto* p = reinterpret_cast<const std::uint8_t*>(out.data());
      gray.pixels.assign(p, p + out.size());
      const auto encoded = o.format == io::ImageFormat::png
                               ? io::encode_png(gray, {.compression = o.png_compression, .interlaced = false})
                               : io::encode_jpeg(gray, o.jpeg_quality);
      report::write_file_atomically(file->output, encoded, overwrite);
      file->bytes_out = encoded.size();
    };
    (void)engine.submit(std::move(item));
  }
  engine.drain();
  summary.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  summary.decode = to_string(o.decode);
  for (const auto& f : summary.files) {
    summary.bytes_in += f.bytes_in;
    if (f.ok && f.decoder == "gpu") ++summary.gpu_decoded;
    if (!f.fallback.empty()) ++summary.fallbacks[f.fallback];
    if (f.ok) {
      ++summary.ok;
      summary.bytes_out += f.bytes_out;
      summary.pixels += static_cast<std::uint64_t>(f.width) * f.height;
    } else {
      ++summary.failed;
    }
  }
  summary.records = engine.timeline().records();
  summary.timeline = engine.timeline().report();
  return summary;
}

}  // namespace streampipe::tools::gray
