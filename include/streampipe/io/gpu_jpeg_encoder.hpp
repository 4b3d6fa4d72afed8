// SPDX-License-Identifier: Apache-2.0
#pragma once
// Gray JPEG encoding on the GPU with nvJPEG (builds with nvJPEG only): baseline, one
// component, the quality's standard tables, the same file layout libjpeg writes for a gray
// image (JFIF). One encoder per stream, used by one thread at a time; it borrows the
// library handle of a GpuJpegDecoder. Every nvJPEG failure throws
// NvjpegError; a quality outside 1-100 std::invalid_argument; the destructor never throws.

#include "streampipe/io/gpu_jpeg_decoder.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

struct nvjpegEncoderState;  // nvjpeg.h's opaque types
struct nvjpegEncoderParams;

namespace streampipe::io {

class GpuJpegEncoder {
 public:
  // `library` (either backend: encoding does not use the decode backend) outlives the encoder.
  GpuJpegEncoder(const GpuJpegDecoder& library, int quality, StreamRef stream);
  ~GpuJpegEncoder();
  GpuJpegEncoder(const GpuJpegEncoder&) = delete;
  GpuJpegEncoder& operator=(const GpuJpegEncoder&) = delete;

  // Enqueues the encoding of `gray` (device memory, `height` rows of `width` bytes) in
  // `stream`. Call with the library's device current.
  void encode_gray(const std::uint8_t* gray, std::uint32_t width, std::uint32_t height, StreamRef stream);
  // The JPEG file of the last encode_gray(), once `stream` has passed it (this waits for the
  // stream). Several encoders on one stream encode in turn and are then retrieved in turn.
  [[nodiscard]] std::vector<std::byte> retrieve(StreamRef stream);

 private:
  const GpuJpegDecoder* library_;
  nvjpegEncoderState* state_ = nullptr;
  nvjpegEncoderParams* params_ = nullptr;
};

}  // namespace streampipe::io
