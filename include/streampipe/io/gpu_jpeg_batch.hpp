// SPDX-License-Identifier: Apache-2.0
#pragma once
// Batched JPEG decoding on the GPU's JPEG engines (nvJPEG's hardware backend; builds with
// nvJPEG only). One state per stream that decodes, used by one thread at a time. The engines
// want many images per call: one image per call runs at a sixth of the rate of 16 (docs/gray.md).
// Only baseline JPEGs whose sampling the engines take (GpuJpegInfo::engine_sampling) may be
// given. A batch fails as a whole (NvjpegError: nvJPEG does not say which image); the caller
// then decodes its images one by one another way. Wrong arguments: std::invalid_argument.
// The state's buffers are allocated ahead, for the largest width and height reserve() or any
// batch gave: left to nvJPEG, they were freed and allocated again as sizes changed from
// batch to batch, and photographs of mixed sizes decoded several times slower
// (docs/gray.md). The hardware backend takes no allocator, so this is the only way around it;
// allocating is slow, so a run reserves its largest size once.

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

  // Allocates the buffers for batches of up to `batch` images of up to `width` x `height`
  // decoded as `output` (NvjpegError when nvJPEG cannot).
  void reserve(std::size_t batch, std::uint32_t width, std::uint32_t height, GpuJpegOutput output);
  // Decodes every target as `output` asks, written in `stream` order; allocates larger
  // buffers first when an image is larger than any before. Call with the decoder's device
  // current.
  void decode(std::span<const GpuJpegTarget> targets, GpuJpegOutput output, StreamRef stream);

 private:
  const GpuJpegDecoder* decoder_;
  nvjpegJpegState* state_ = nullptr;
  // The batch size and output nvjpegDecodeBatchedInitialize was given (0: not initialized).
  std::size_t initialized_for_ = 0;
  GpuJpegOutput initialized_output_ = GpuJpegOutput::rgb;
  void initialize(std::size_t batch, GpuJpegOutput output);
  void allocate(std::size_t batch, std::uint32_t width, std::uint32_t height, GpuJpegOutput output);

  // What the buffers were allocated for (0: nothing yet). Setting the state up for another
  // batch size keeps them.
  std::size_t allocated_batch_ = 0;
  std::uint32_t allocated_width_ = 0, allocated_height_ = 0;
  GpuJpegOutput allocated_output_ = GpuJpegOutput::rgb;
};

}  // namespace streampipe::io
