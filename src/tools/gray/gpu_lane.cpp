// SPDX-License-Identifier: Apache-2.0
// GpuStage's lanes: one group per call (see gpu_stage.hpp). The JPEG engines take the
// group's baseline JPEGs in one call; the rest, and a batch the engines refused as a whole,
// go one by one through nvJPEG's general backend; what nvJPEG refuses there is decoded on the
// host and its gray image uploaded. Encoding waits for the lane's stream (nvJPEG gives the length only on the
// host; the PNG encoder fits its codes there), so a lane that encodes finishes its group's
// device work before it returns.

#include "gpu_stage_impl.hpp"

#include "file_io.hpp"

#include "streampipe/cuda/error.hpp"
#include "streampipe/io/image.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"
#include "streampipe/tools/gray/pixels.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace streampipe::tools::gray::detail {
namespace {

// One of the lane's buffers holds at least `bytes`. Growing waits for the lane's earlier
// work, which may still read the old buffer (only for the first group, or a larger one).
void reserve(DeviceBuffer<std::uint8_t>& buffer, const Device& device, std::size_t bytes, StreamRef stream) {
  if (buffer.size() >= bytes) return;
  stream.synchronize();
  buffer.reset();
  buffer = DeviceBuffer<std::uint8_t>(device, bytes);
}

// nvJPEG refused the file: decode it on the host (as --decode cpu would, with the same
// errors), make its gray image there and upload it to `gray`, the file's place in the output.
void decode_on_host(LaneCodecs& lane, const Device& device, const Ticket& t, FileResult& file, const Options& options,
                    std::uint8_t* gray, StreamRef stream) {
  io::ImageReadOptions read;
  read.jpeg_luma = options.jpeg_luma;
  const io::Image image = io::decode_image({t.host, t.in_bytes}, read, file.input.string());
  if (image.width != file.width || image.height != file.height)
    throw std::runtime_error(fmt::format("{}: decodes to {}x{}, its frame header says {}x{}", file.input.string(),
                                         image.width, image.height, file.width, file.height));
  const std::vector<std::uint8_t> pixels = gray8(image);
  if (lane.uploaded) lane.uploaded->synchronize();  // host_gray is free again
  if (lane.host_gray.size() < pixels.size()) {
    lane.host_gray.reset();
    lane.host_gray = PinnedBuffer<std::uint8_t>(pixels.size());
  }
  std::copy(pixels.begin(), pixels.end(), lane.host_gray.data());
  SP_CUDA_CHECK(
      cudaMemcpyAsync(gray, lane.host_gray.data(), pixels.size(), cudaMemcpyHostToDevice, stream.handle()));
  if (!lane.uploaded) lane.uploaded.emplace(device, EventTiming::disabled);
  lane.uploaded->record(stream);
  file.decoded_to = to_string(staged_as(image));
}

}  // namespace

void GpuStage::Impl::encode_png(LaneCodecs& lane, std::size_t first, std::size_t count, const std::uint8_t* out,
                                StreamRef stream) {
  std::vector<io::GpuGrayPlane> planes;
  std::vector<std::size_t> encoded;
  for (std::size_t k = 0; k < count; ++k) {
    const FileResult& f = files[first + k];
    const Ticket& t = tickets[first + k];
    if (!t.ok()) continue;
    planes.push_back({out + t.out_offset, f.width, f.height, f.width});
    encoded.push_back(k);
  }
  std::vector<io::PngStream> pngs = lane.png->encode_streams(planes, stream);
  for (std::size_t e = 0; e < encoded.size(); ++e) tickets[first + encoded[e]].png = std::move(pngs[e]);
}

void GpuStage::Impl::run_host(const pipeline::Batch& b) {
  if (b.size() != 1) throw std::logic_error("gray's GPU stage takes one group per batch");
  const auto [first, count] = files_of(b.index(0));
  const auto* in = b.in_as<const std::uint8_t>(0);
  auto* out = b.out_as<std::uint8_t>(0);
  for (std::size_t k = 0; k < count; ++k) {
    const FileResult& f = files[first + k];
    const Ticket& t = tickets[first + k];
    const std::size_t pixels = std::size_t{f.width} * f.height;
    switch (t.kind) {
      case Ticket::Kind::failed:
        break;
      case Ticket::Kind::jpeg:
        throw std::logic_error("gray: the CPU's lanes were given a compressed file");
      case Ticket::Kind::luma:
        std::copy_n(in + t.in_offset, pixels, out + t.out_offset);
        break;
      case Ticket::Kind::rgb:
        ops::rgb_to_gray_host({in + t.in_offset, pixels * 3}, {out + t.out_offset, pixels});
        break;
    }
  }
}

void GpuStage::Impl::run_lane(const pipeline::Batch& b) {
  if (b.size() != 1) throw std::logic_error("gray's GPU stage takes one group per batch");
  const auto [first, count] = files_of(b.index(0));
  DeviceCodecs* const started = b.device_state<DeviceCodecs>();
  if (started == nullptr) throw std::logic_error("gray: a GPU took a group before nvJPEG started on it");
  DeviceCodecs& codecs = *started;
  LaneCodecs& lane = started->lanes.at(static_cast<std::size_t>(b.member_lane()));
  const Device device(b.device());
  const StreamRef stream = b.stream();
  const auto* in = b.in_as<const std::uint8_t>(0);
  // The group's gray images: in its output, or, when this lane encodes them, in the lane's
  // own buffer (produce declared a token output: only the encoded files go back).
  std::uint8_t* out = b.out_as<std::uint8_t>(0);
  const bool encodes_here = output_is_token(false);
  if (encodes_here) {
    std::size_t gray_bytes = 0;
    for (std::size_t k = 0; k < count; ++k) {
      const FileResult& f = files[first + k];
      const Ticket& t = tickets[first + k];
      if (t.ok()) gray_bytes = std::max(gray_bytes, t.out_offset + std::size_t{f.width} * f.height);
    }
    reserve(lane.gray, device, gray_bytes, stream);
    out = lane.gray.data();
  }
  // JPEGs decoded to their luma go straight into the group's gray images; to RGB, into the
  // lane's RGB buffer, whose luma the kernel then takes.
  const io::GpuJpegOutput output = options.jpeg_luma ? io::GpuJpegOutput::luma : io::GpuJpegOutput::rgb;

  std::vector<std::size_t> rgb_at(count);
  std::size_t rgb_bytes = 0;
  for (std::size_t k = 0; k < count; ++k) {
    const FileResult& f = files[first + k];
    if (tickets[first + k].kind != Ticket::Kind::jpeg || output != io::GpuJpegOutput::rgb) continue;
    rgb_at[k] = rgb_bytes;
    rgb_bytes = align_up(rgb_bytes + std::size_t{f.width} * f.height * 3);
  }
  if (rgb_bytes > 0) reserve(lane.rgb, device, rgb_bytes, stream);
  const auto decoded_at = [&](std::size_t k) {
    return output == io::GpuJpegOutput::luma ? out + tickets[first + k].out_offset : lane.rgb.data() + rgb_at[k];
  };
  // A state is reused only once the GPU has finished its last decode: refilling it earlier
  // gave other files' pixels and hung nvJPEG's JPEG engines (the lane enqueues the next
  // group while the last is still on the stream). The engines' state, shared by the lanes,
  // is waited for the same way below.
  if (lane.decoded) lane.decoded->synchronize();

  // Which JPEGs go to the engines, which one by one, and which nvJPEG refuses (and why).
  std::vector<io::GpuJpegTarget> engine_batch;
  std::vector<std::size_t> engine_files, single;
  std::vector<io::GpuJpegInfo> infos(count);
  std::vector<std::string> refused(count);
  for (std::size_t k = 0; k < count; ++k) {
    FileResult& f = files[first + k];
    const Ticket& t = tickets[first + k];
    if (t.kind != Ticket::Kind::jpeg) continue;
    const std::span<const std::byte> jpeg(t.host, t.in_bytes);
    try {
      infos[k] = codecs.library().info(jpeg);
    } catch (const io::NvjpegError& e) {
      refused[k] = fmt::format("nvJPEG: {}", e.status_name());
      continue;
    }
    if (!infos[k].supported) {
      refused[k] = fmt::format("nvJPEG: {}-component {} sampling", infos[k].components, infos[k].sampling);
    } else if (infos[k].width != f.width || infos[k].height != f.height) {
      refused[k] = "nvJPEG reads another size";
    } else if (codecs.engines() && t.baseline && infos[k].engine_sampling) {
      engine_batch.push_back({jpeg, infos[k], decoded_at(k)});
      engine_files.push_back(k);
    } else {
      single.push_back(k);
    }
  }
  if (!engine_batch.empty()) {
    SharedBatchState& batched = started->batched;
    const std::lock_guard lock(batched.mutex);
    try {
      if (batched.decoded) batched.decoded->synchronize();
      batched.state->decode(engine_batch, output, stream);
      if (!batched.decoded) batched.decoded.emplace(device, EventTiming::disabled);
      batched.decoded->record(stream);
    } catch (const io::NvjpegError&) {
      single.insert(single.end(), engine_files.begin(), engine_files.end());  // one by one finds the culprit
    }
  }
  if (!single.empty() && !lane.single) {
    try {
      lane.single = std::make_unique<io::GpuJpegState>(codecs.general());
    } catch (const io::NvjpegError& e) {
      for (const std::size_t k : single) refused[k] = fmt::format("nvJPEG: {}", e.status_name());
      single.clear();
    }
  }
  for (const std::size_t k : single) {
    const Ticket& t = tickets[first + k];
    try {
      const std::size_t bytes = std::size_t{infos[k].width} * infos[k].height * io::bytes_per_pixel(output);
      lane.single->decode({t.host, t.in_bytes}, infos[k], output, {decoded_at(k), bytes}, stream);
    } catch (const io::NvjpegError& e) {
      refused[k] = fmt::format("nvJPEG: {}", e.status_name());
    }
  }
  // Files whose gray image is in the output already: decoded to luma, or made on the host.
  std::vector<bool> gray_ready(count, output == io::GpuJpegOutput::luma);
  for (std::size_t k = 0; k < count; ++k) {
    FileResult& f = files[first + k];
    Ticket& t = tickets[first + k];
    if (t.kind != Ticket::Kind::jpeg) continue;
    if (refused[k].empty()) {
      f.decoder = "gpu";
      f.decoded_to = output == io::GpuJpegOutput::luma ? "luma" : "rgb";
      continue;
    }
    f.decoder = "cpu";
    f.fallback = refused[k];  // counted even when the host decoder fails the file too
    gray_ready[k] = true;
    try {
      decode_on_host(lane, device, t, f, options, out + t.out_offset, stream);
    } catch (...) {
      f.error = current_error(f.input);
      t.kind = Ticket::Kind::failed;
    }
  }

  if (!lane.decoded) lane.decoded.emplace(device, EventTiming::disabled);
  lane.decoded->record(stream);
  for (std::size_t k = 0; k < count; ++k) {
    const FileResult& f = files[first + k];
    const Ticket& t = tickets[first + k];
    const std::size_t pixels = std::size_t{f.width} * f.height;
    if (t.kind == Ticket::Kind::luma) {
      SP_CUDA_CHECK(cudaMemcpyAsync(out + t.out_offset, in + t.in_offset, pixels, cudaMemcpyDeviceToDevice,
                                    stream.handle()));
    } else if (t.kind == Ticket::Kind::rgb) {
      ops::rgb_to_gray(stream, in + t.in_offset, out + t.out_offset, pixels);
    } else if (t.kind == Ticket::Kind::jpeg && !gray_ready[k]) {
      ops::rgb_to_gray(stream, lane.rgb.data() + rgb_at[k], out + t.out_offset, pixels);
    }
  }
  if (!setup.encode) return;
  if (encodes_png()) {
    if (!lane.png) lane.png = std::make_unique<io::GpuPngEncoder>(device);  // made on first use, as the decode states
    encode_png(lane, first, count, out, stream);
    return;
  }
  // Every image of the group is encoded before any is retrieved: one wait for the stream.
  std::vector<std::size_t> encoded;
  for (std::size_t k = 0; k < count; ++k) {
    const FileResult& f = files[first + k];
    if (!tickets[first + k].ok()) continue;
    if (lane.encoders.size() <= encoded.size())
      lane.encoders.push_back(std::make_unique<io::GpuJpegEncoder>(codecs.library(), options.jpeg_quality, stream));
    try {
      lane.encoders[encoded.size()]->encode_gray(out + tickets[first + k].out_offset, f.width, f.height, stream);
      encoded.push_back(k);
    } catch (const io::NvjpegError&) {
      // The host encodes it from the gray image, as without GPU encoding.
    }
  }
  for (std::size_t e = 0; e < encoded.size(); ++e) {
    Ticket& t = tickets[first + encoded[e]];
    try {
      t.encoded = lane.encoders[e]->retrieve(stream);
    } catch (const io::NvjpegError&) {
      t.encoded = {};
    }
  }
  // What nvJPEG's encoder refused, the host encodes: its gray image goes back on its own.
  bool copied_back = false;
  for (std::size_t k = 0; k < count; ++k) {
    const FileResult& f = files[first + k];
    Ticket& t = tickets[first + k];
    if (!t.ok() || !t.encoded.empty()) continue;
    t.gray.resize(std::size_t{f.width} * f.height);
    SP_CUDA_CHECK(cudaMemcpyAsync(t.gray.data(), out + t.out_offset, t.gray.size(), cudaMemcpyDeviceToHost,
                                  stream.handle()));
    copied_back = true;
  }
  if (copied_back) stream.synchronize();
}

}  // namespace streampipe::tools::gray::detail
