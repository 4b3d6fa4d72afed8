// SPDX-License-Identifier: Apache-2.0
// nvjpegDecodeBatched on the hardware backend (see gpu_jpeg_batch.hpp). The state is set up
// again only when the batch size or the output changes: a run's batches are mostly of one
// size, and all of one output. Its buffers are allocated ahead
// (nvjpegDecodeBatchedPreAllocate) and only ever grow.

#include "streampipe/io/gpu_jpeg_batch.hpp"

#include "nvjpeg_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

namespace streampipe::io {

GpuJpegBatchState::GpuJpegBatchState(const GpuJpegDecoder& decoder) : decoder_(&decoder) {
  if (decoder.backend() != GpuJpegBackend::hardware)
    throw std::invalid_argument("GpuJpegBatchState needs a decoder on the hardware backend");
  const CurrentDeviceGuard guard(decoder.device());
  nvjpegJpegState_t state = nullptr;
  SP_NVJPEG_CHECK(nvjpegJpegStateCreate(decoder.handle(), &state));
  state_ = state;
}

GpuJpegBatchState::~GpuJpegBatchState() {
  if (state_ == nullptr) return;
  try {
    const CurrentDeviceGuard guard(decoder_->device());
    SP_NVJPEG_CHECK_NOTHROW(nvjpegJpegStateDestroy(state_));
  } catch (const std::exception&) {
    SP_NVJPEG_CHECK_NOTHROW(nvjpegJpegStateDestroy(state_));  // a broken context: nvJPEG reports it
  }
}

void GpuJpegBatchState::initialize(std::size_t batch, GpuJpegOutput output) {
  if (initialized_for_ == batch && initialized_output_ == output) return;
  initialized_for_ = 0;  // a failed initialization leaves the state to be set up again
  SP_NVJPEG_CHECK(nvjpegDecodeBatchedInitialize(decoder_->handle(), state_, static_cast<int>(batch), 1,
                                                detail::nvjpeg_format(output)));
  initialized_for_ = batch;
  initialized_output_ = output;
}

void GpuJpegBatchState::allocate(std::size_t batch, std::uint32_t width, std::uint32_t height,
                                 GpuJpegOutput output) {
  if (allocated_batch_ >= batch && allocated_width_ >= width && allocated_height_ >= height &&
      allocated_output_ == output)
    return;
  batch = std::max(batch, allocated_output_ == output ? allocated_batch_ : 0);
  width = std::max(width, allocated_width_);
  height = std::max(height, allocated_height_);
  allocated_batch_ = 0;  // a failed allocation is tried again
  // 4:4:4 needs the most of any sampling.
  SP_NVJPEG_CHECK(nvjpegDecodeBatchedPreAllocate(decoder_->handle(), state_, static_cast<int>(batch),
                                                 static_cast<int>(width), static_cast<int>(height), NVJPEG_CSS_444,
                                                 detail::nvjpeg_format(output)));
  allocated_batch_ = batch;
  allocated_width_ = width;
  allocated_height_ = height;
  allocated_output_ = output;
}

void GpuJpegBatchState::reserve(std::size_t batch, std::uint32_t width, std::uint32_t height, GpuJpegOutput output) {
  if (batch == 0 || width == 0 || height == 0)
    throw std::invalid_argument(fmt::format("batched GPU JPEG decode: nothing to reserve ({} images of {}x{})", batch,
                                            width, height));
  const CurrentDeviceGuard guard(decoder_->device());
  initialize(batch, output);
  allocate(batch, width, height, output);
}

void GpuJpegBatchState::decode(std::span<const GpuJpegTarget> targets, GpuJpegOutput output, StreamRef stream) {
  if (targets.empty()) return;
  if (stream.device_index() != decoder_->device().index())
    throw std::invalid_argument(fmt::format("batched GPU JPEG decode: a stream of device {} for a decoder of device {}",
                                            stream.device_index(), decoder_->device().index()));
  std::vector<const unsigned char*> data(targets.size());
  std::vector<std::size_t> lengths(targets.size());
  std::vector<nvjpegImage_t> out(targets.size());
  std::uint32_t width = 0, height = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const GpuJpegTarget& t = targets[i];
    if (!t.info.supported || !t.info.engine_sampling || t.pixels == nullptr)
      throw std::invalid_argument(fmt::format("batched GPU JPEG decode: image {} of the batch ({}-component {}) is "
                                              "not for the JPEG engines",
                                              i, t.info.components, t.info.sampling));
    data[i] = reinterpret_cast<const unsigned char*>(t.jpeg.data());
    lengths[i] = t.jpeg.size();
    out[i] = nvjpegImage_t{};
    out[i].channel[0] = t.pixels;
    out[i].pitch[0] = std::size_t{t.info.width} * bytes_per_pixel(output);
    width = std::max(width, t.info.width);
    height = std::max(height, t.info.height);
  }
  initialize(targets.size(), output);
  allocate(targets.size(), width, height, output);
  try {
    SP_NVJPEG_CHECK(
        nvjpegDecodeBatched(decoder_->handle(), state_, data.data(), lengths.data(), out.data(), stream.handle()));
  } catch (...) {
    initialized_for_ = 0;  // nvJPEG: initialize again to reset a failed batch
    throw;
  }
}

}  // namespace streampipe::io
