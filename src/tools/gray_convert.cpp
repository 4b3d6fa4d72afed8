// SPDX-License-Identifier: Apache-2.0
// The gray tool's run: one engine item per file, decode and encode on host workers, the
// luma conversion on the lanes (see gray.hpp).

#include "streampipe/tools/gray.hpp"
#include "streampipe/report/host_info.hpp"

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
#include <fcntl.h>
#include <stop_token>
#include <sys/stat.h>
#include <unistd.h>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace streampipe::tools::gray {
namespace fs = std::filesystem;

namespace {

// The whole file, or an error naming it with the system's reason. Opened without blocking
// and checked to be a regular file first: a FIFO or a device would block or never end.
std::vector<std::byte> read_whole_file(const fs::path& path) {
  const auto fail = [&](const char* what, int err) {
    return std::runtime_error(fmt::format("{}: {}: {}", path.string(), what, std::strerror(err)));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw fail("cannot open", errno);
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw fail("cannot examine", errno);
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISDIR(st.st_mode) ? "folder" : S_ISFIFO(st.st_mode) ? "FIFO" : "device or socket";
    throw std::runtime_error(
        fmt::format("{}: not a regular file (a {}); cannot read it as an image", path.string(), kind));
  }
  std::vector<std::byte> data(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::read(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail("cannot read", errno);
    if (n == 0)
      throw std::runtime_error(
          fmt::format("{}: read {} of {} bytes (the file shrank)", path.string(), done, data.size()));
    done += static_cast<std::size_t>(n);
  }
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
  const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(2u, report::usable_cores()));
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
  eo.devices = o.devices;
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
    f.cancelled = r.status == pipeline::ItemStatus::cancelled;
    if (!f.ok) f.error = file_error(f, r);
    ++finished;
    if (o.on_file) o.on_file(f, finished);
  };
  // Declared before the engine, so it outlives the engine's lanes that use it.
#if defined(STREAMPIPE_HAVE_NVJPEG)
  std::unique_ptr<GpuDecodeStage> gpu_decode;
  if (o.decode == Decode::gpu) {
    // nvJPEG's state lives on one GPU, and its operation decodes into that GPU's buffers.
    if (o.devices.size() > 1) throw std::invalid_argument("--decode gpu runs on one GPU: name it (--devices N)");
    eo.devices = {o.devices.empty() ? 0 : o.devices.front()};
    gpu_decode = std::make_unique<GpuDecodeStage>(Device(eo.devices.front()), lanes, summary.files);
  }
  pipeline::Engine engine(gpu_decode ? gpu_decode->operation() : ops::gray_operation(), eo);
#else
  pipeline::Engine engine(ops::gray_operation(), eo);
#endif
  summary.backend = pipeline::backend_name(engine.backend());
  summary.device = "host";
  if (engine.backend() == pipeline::Backend::gpu) {
    summary.device.clear();
    for (const int d : engine.devices()) summary.device += (summary.device.empty() ? "" : ", ") + Device(d).name();
  }
  summary.engine = engine.describe();

  const report::Overwrite overwrite = o.force ? report::Overwrite::allow : report::Overwrite::refuse;
  // A stop cancels what has not reached a lane and wakes a submit waiting for a slot; the
  // loop then submits nothing more. Declared after the engine, so it is gone before it.
  const std::stop_callback cancel_on_stop(o.stop, [&engine] { engine.cancel(); });
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t submitted = 0;
  for (std::size_t i = 0; i < jobs.size() && !o.stop.stop_requested(); ++i, ++submitted) {
    FileResult* file = &summary.files[i];
    pipeline::Item item;
    item.label = jobs[i].input.string();
    // Each file's result is written by its own produce, then its own consume (ordered by the
    // engine), and read by on_complete after both.
    item.produce = [&, file, i](pipeline::StagingInput& staging) {
      (void)i;  // the GPU decoder's slot, when nvJPEG is built in
      const auto data = read_whole_file(file->input);
      file->bytes_in = data.size();
#if defined(STREAMPIPE_HAVE_NVJPEG)
      if (gpu_decode && gpu_decode->stage(i, data, staging)) return;
#endif
      file->decoder = "cpu";
      // 16-bit samples stay 16-bit here, so the result reports the depth of the file;
      // to_rgb8 rounds them to 8 bits as libpng's strip_16 would.
      io::ImageReadOptions read;
      read.limits = o.limits;
      const io::Image image = io::decode_image(data, read, file->input.string());
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
  for (std::size_t i = submitted; i < jobs.size(); ++i) {
    summary.files[i].cancelled = true;
    summary.files[i].error = fmt::format("{}: not started: the run was stopped", jobs[i].input.string());
  }
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
    } else if (f.cancelled) {
      ++summary.cancelled;
    } else {
      ++summary.failed;
    }
  }
  summary.records = engine.timeline().records();
  summary.timeline = engine.timeline().report();
  return summary;
}

}  // namespace streampipe::tools::gray
