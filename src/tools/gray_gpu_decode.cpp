// SPDX-License-Identifier: Apache-2.0
// --decode gpu: nvJPEG on the lanes' streams (see gray_gpu_decode.hpp).

#include "gray_gpu_decode.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/io/gpu_jpeg_decoder.hpp"
#include "streampipe/io/image.hpp"
#include "streampipe/io/jpeg_header.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"
#include "streampipe/tools/gray_decode.hpp"
#include "streampipe/tools/gray_pixels.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

namespace streampipe::tools::gray {

namespace {

// Where item i's file bytes wait in its pinned staging input (written by its produce stage,
// read by its lane's enqueue, which the engine orders after it).
struct Ticket {
  const std::byte* jpeg = nullptr;  // nullptr: the input holds 8-bit RGB decoded by a worker
  std::size_t bytes = 0;
};

struct Lane {
  std::unique_ptr<io::GpuJpegState> state;
  DeviceBuffer<std::uint8_t> rgb;        // nvJPEG's output, the luma kernel's input
  PinnedBuffer<std::uint8_t> host_rgb;   // a file nvJPEG refused, decoded on the host
  std::optional<Event> uploaded;         // the last upload from host_rgb has finished
};

}  // namespace

struct GpuDecodeStage::Impl {
  Device device;
  io::GpuJpegDecoder decoder;
  std::span<FileResult> files;
  std::vector<Ticket> tickets;
  std::vector<Lane> lanes;

  Impl(const Device& d, int lane_count, std::span<FileResult> f)
      : device(d), decoder(d), files(f), tickets(f.size()), lanes(static_cast<std::size_t>(lane_count)) {
    for (auto& lane : lanes) lane.state = std::make_unique<io::GpuJpegState>(decoder);
  }

  // The lane's RGB buffer holds at least `bytes`. Growing waits for the lane's earlier work,
  // which may still read the old buffer (only for the first image, or a larger one).
  static void reserve_rgb(Lane& lane, const Device& device, std::size_t bytes, StreamRef stream) {
    if (lane.rgb.size() >= bytes) return;
    stream.synchronize();
    lane.rgb.reset();
    lane.rgb = DeviceBuffer<std::uint8_t>(device, bytes);
  }

  // nvJPEG refused the file: decode it on the host (as --decode cpu would, with the same
  // errors) and upload the RGB to the lane's buffer.
  void decode_on_host(Lane& lane, const Ticket& t, FileResult& file, std::size_t rgb_bytes, StreamRef stream) {
    const io::Image image = io::decode_image({t.jpeg, t.bytes}, {}, file.input.string());
    if (image.width != file.width || image.height != file.height)
      throw std::runtime_error(fmt::format("{}: decodes to {}x{}, its frame header says {}x{}", file.input.string(),
                                           image.width, image.height, file.width, file.height));
    if (lane.uploaded) lane.uploaded->synchronize();  // host_rgb is free again
    if (lane.host_rgb.size() < rgb_bytes) {
      lane.host_rgb.reset();
      lane.host_rgb = PinnedBuffer<std::uint8_t>(rgb_bytes);
    }
    to_rgb8(image, {lane.host_rgb.data(), rgb_bytes});
    SP_CUDA_CHECK(cudaMemcpyAsync(lane.rgb.data(), lane.host_rgb.data(), rgb_bytes, cudaMemcpyHostToDevice,
                                  stream.handle()));
    if (!lane.uploaded) lane.uploaded.emplace(device, EventTiming::disabled);
    lane.uploaded->record(stream);
    file.channels = image.channels;
    file.bit_depth = image.bit_depth;
  }

  void convert_item(const pipeline::Batch& b, std::size_t k) {
    const std::size_t index = b.index(k);
    const Ticket& t = tickets.at(index);
    auto* gray = b.out_as<std::uint8_t>(k);
    const std::size_t pixels = b.items()[k].out_bytes;
    if (t.jpeg == nullptr) {
      ops::rgb_to_gray(b.stream(), b.in_as<const std::uint8_t>(k), gray, pixels);
      return;
    }
    FileResult& file = files[index];
    Lane& lane = lanes.at(static_cast<std::size_t>(b.lane()));
    const std::size_t rgb_bytes = pixels * 3;
    reserve_rgb(lane, device, rgb_bytes, b.stream());
    const std::span<const std::byte> jpeg(t.jpeg, t.bytes);
    std::string refused;
    try {
      const io::GpuJpegInfo info = decoder.info(jpeg);
      if (!info.supported) {
        refused = fmt::format("nvJPEG: {}-component {} sampling", info.components, info.sampling);
      } else if (info.width != file.width || info.height != file.height) {
        refused = "nvJPEG reads another size";
      } else {
        lane.state->decode_rgb(jpeg, info, {lane.rgb.data(), rgb_bytes}, b.stream());
        file.decoder = "gpu";
      }
    } catch (const io::NvjpegError& e) {
      refused = fmt::format("nvJPEG: {}", e.status_name());
    }
    if (!refused.empty()) {
      file.decoder = "cpu";
      file.fallback = refused;  // counted even when the host decoder fails the file too
      decode_on_host(lane, t, file, rgb_bytes, b.stream());
    }
    ops::rgb_to_gray(b.stream(), lane.rgb.data(), gray, pixels);
  }
};

GpuDecodeStage::GpuDecodeStage(const Device& device, int lanes, std::span<FileResult> files)
    : impl_(std::make_unique<Impl>(device, lanes, files)) {}

GpuDecodeStage::~GpuDecodeStage() = default;

bool GpuDecodeStage::stage(std::size_t index, std::span<const std::byte> data, pipeline::StagingInput& staging) {
  FileResult& file = impl_->files[index];
  if (auto refusal = gpu_decode_refusal(data)) {
    file.fallback = std::move(*refusal);
    return false;
  }
  const auto header = io::read_jpeg_header(data);  // gpu_decode_refusal accepted it
  if (!header) throw std::logic_error("gray --decode gpu: an accepted JPEG has no header");
  file.width = header->width;
  file.height = header->height;
  file.channels = header->components;
  file.bit_depth = 8;
  const std::size_t pixels = std::size_t{header->width} * header->height;
  const auto in = staging.allocate(data.size(), pixels);
  std::memcpy(in.data(), data.data(), data.size());
  impl_->tickets.at(index) = {in.data(), in.size()};
  return true;
}

pipeline::Operation GpuDecodeStage::operation() {
  pipeline::Operation op;
  op.name = "nvJPEG decode + rgb to gray";
  op.device = [impl = impl_.get()](const pipeline::Batch& b) {
    for (std::size_t k = 0; k < b.size(); ++k) impl->convert_item(b, k);
  };
  op.host = [](const pipeline::Batch&) {
    throw std::logic_error("gray --decode gpu runs on the GPU backend only");
  };
  return op;
}

}  // namespace streampipe::tools::gray
