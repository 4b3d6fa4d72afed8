// SPDX-License-Identifier: Apache-2.0
// nvjpegDecodeBatched on the hardware backend (see gpu_jpeg_batch.hpp). The state is set up
// again only when the batch size or the output changes: a run's batches are mostly of one
// size, and all of one output.

#include "streampipe/io/gpu_jpeg_batch.hpp"

#include "nvjpeg_check.hpp"

#include <fmt/format.h>

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

void GpuJpegBatchState::decode(std::span<const GpuJpegTarget> targets, GpuJpegOutput output, StreamRef stream) {
  if (targets.empty()) return;
  if (stream.device_index() != decoder_->device().index())
    throw std::invalid_argument(fmt::format("batched GPU JPEG decode: a stream of device {} for a decoder of device {}",
                                            stream.device_index(), decoder_->device().index()));
  std::vector<const unsigned char*> data(targets.size());
  std::vector<std::size_t> lengths(targets.size());
  std::vector<nvjpegImage_t> out(targets.size());
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
  }
  if (initialized_for_ != targets.size() || initialized_output_ != output) {
    initialized_for_ = 0;  // a failed initialization leaves the state to be set up again
    SP_NVJPEG_CHECK(nvjpegDecodeBatchedInitialize(decoder_->handle(), state_, static_cast<int>(targets.size()), 1,
                                                  detail::nvjpeg_format(output)));
    initialized_for_ = targets.size();
    initialized_output_ = output;
  }
  try {
    SP_NVJPEG_CHECK(
        nvjpegDecodeBatched(decoder_->handle(), state_, data.data(), lengths.data(), out.data(), stream.handle()));
  } catch (...) {
    initialized_for_ = 0;  // nvJPEG: initialize again to reset a failed batch
    throw;
  }
}

}  // namespace streampipe::io
