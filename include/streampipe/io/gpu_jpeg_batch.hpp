// SPDX-License-Identifier: Apache-2.0
#pragma once
// Batched JPEG decoding on the GPU's JPEG engines (nvJPEG's hardware backend; builds with
// nvJPEG only). One state per stream that decodes, used by one thread at a time. The engines
// want many images per call: one image per call runs at a sixth of the rate of 16 (docs/gray.md).
// Only baseline JPEGs whose sampling the engines take (GpuJpegInfo::engine_sampling) may be
// given. A batch fails as a whole (NvjpegError: nvJPEG does not say which image); the caller
// then decodes its images one by one another way. Wrong arguments: std::invalid_argument.

#include "streampipe/io/gpu_jpeg_decoder.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace streampipe::io {

struct GpuJpegTarget {
  std::span<const std::byte> jpeg;  // host memory, unchanged until the call returns
  GpuJpegInfo info;                 // GpuJpegDecoder::info() of it
  // Device memory: info.width * info.height * bytes_per_pixel(output) bytes, rows of
  // width * bytes_per_pixel(output), for the output the batch is decoded to.
  std::uint8_t* pixels = nullptr;
};

class GpuJpegBatchState {
 public:
  // `decoder` uses GpuJpegBackend::hardware and outlives this state.
  explicit GpuJpegBatchState(const GpuJpegDecoder& decoder);
  ~GpuJpegBatchState();
  GpuJpegBatchState(const GpuJpegBatchState&) = delete;
  GpuJpegBatchState& operator=(const GpuJpegBatchState&) = delete;

  // Decodes every target as `output` asks, written in `stream` order. Call with the
  // decoder's device current.
  void decode(std::span<const GpuJpegTarget> targets, GpuJpegOutput output, StreamRef stream);

 private:
  const GpuJpegDecoder* decoder_;
  nvjpegJpegState* state_ = nullptr;
  // The batch size and output nvjpegDecodeBatchedInitialize was given (0: not initialized).
  std::size_t initialized_for_ = 0;
  GpuJpegOutput initialized_output_ = GpuJpegOutput::rgb;
};

}  // namespace streampipe::io
