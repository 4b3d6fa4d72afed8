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
  std::uint8_t* rgb = nullptr;      // device memory: info.width * info.height * 3 bytes, rows of width * 3
};

class GpuJpegBatchState {
 public:
  // `decoder` uses GpuJpegBackend::hardware and outlives this state.
  explicit GpuJpegBatchState(const GpuJpegDecoder& decoder);
  ~GpuJpegBatchState();
  GpuJpegBatchState(const GpuJpegBatchState&) = delete;
  GpuJpegBatchState& operator=(const GpuJpegBatchState&) = delete;

  // Decodes every target to interleaved 8-bit RGB, written in `stream` order. Call with the
  // decoder's device current.
  void decode_rgb(std::span<const GpuJpegTarget> targets, StreamRef stream);

 private:
  const GpuJpegDecoder* decoder_;
  nvjpegJpegState* state_ = nullptr;
  std::size_t initialized_for_ = 0;  // the batch size nvjpegDecodeBatchedInitialize was given
};

}  // namespace streampipe::io
