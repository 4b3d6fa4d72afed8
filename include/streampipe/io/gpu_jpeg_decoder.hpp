// SPDX-License-Identifier: Apache-2.0
#pragma once
// JPEG decoding on the GPU with nvJPEG (compiled only when configure finds it:
// STREAMPIPE_HAVE_NVJPEG). GpuJpegDecoder owns the library handle for one device and is
// shared by every stream; each stream that decodes (an engine lane) owns one GpuJpegState,
// created once and reused, and used by one thread at a time. decode() runs nvJPEG's host
// part (parsing; Huffman decoding on the hybrid backend) in the calling thread and enqueues
// the rest on the stream, so the output (RGB, or the luma alone) is ready in stream order.
// Every nvJPEG failure throws NvjpegError naming the call and the status (e.g.
// NVJPEG_STATUS_BAD_JPEG); wrong arguments to decode() std::invalid_argument; the
// destructors never throw. The handle gives nvJPEG device memory in stream order and
// page-locked memory from the process's pinned pool (src/io/nvjpeg_allocators.hpp): a state
// or encoder made from it frees its buffers in the order of the streams it used, which must
// outlive it. Batched decoding on the JPEG engines: gpu_jpeg_batch.hpp; encoding:
// gpu_jpeg_encoder.hpp.

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/stream.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

struct nvjpegHandle;     // nvjpeg.h's opaque types, kept out of this header
struct nvjpegJpegState;

namespace streampipe::io {

// "NVJPEG_STATUS_BAD_JPEG", ...; "NVJPEG_STATUS_UNKNOWN" for a status this build does not know.
[[nodiscard]] const char* nvjpeg_status_name(int status) noexcept;

// An nvJPEG call failed (streampipe::Error, api() nvJPEG). status() is the nvjpegStatus_t.
class NvjpegError : public Error {
 public:
  NvjpegError(int status, const char* call, const char* file, int line);
};

// Which of nvJPEG's implementations a handle uses. `general`: parsing and Huffman decoding on
// the calling thread, the rest on the GPU; every JPEG nvJPEG reads. `hardware`: the GPU's JPEG
// engines (A100, H100, ...), batched decoding only (GpuJpegBatchState), baseline JPEGs only.
enum class GpuJpegBackend { general, hardware };

// What a decode writes: interleaved 8-bit RGB, or the luma alone (NVJPEG_OUTPUT_Y: a YCbCr
// JPEG's Y plane, without the chroma's upsampling and colour conversion; a gray JPEG's
// samples), rows packed without padding.
enum class GpuJpegOutput { rgb, luma };

[[nodiscard]] constexpr std::size_t bytes_per_pixel(GpuJpegOutput output) noexcept {
  return output == GpuJpegOutput::rgb ? 3 : 1;
}

struct GpuJpegInfo {
  std::uint32_t width = 0, height = 0;
  int components = 0;
  std::string sampling;    // "4:4:4", "4:2:0", "gray", ... or "unknown"
  bool supported = false;  // nvJPEG knows the sampling and the image has 1 or 3 components
  bool engine_sampling = false;  // the JPEG engines take the sampling (not 4:1:1 or 4:1:0)
};

namespace detail {
class NvjpegAllocators;
}

class GpuJpegDecoder {
 public:
  // Throws NvjpegError when the backend cannot be used here (no JPEG engines: `hardware`).
  explicit GpuJpegDecoder(Device device, GpuJpegBackend backend = GpuJpegBackend::general);
  ~GpuJpegDecoder();
  GpuJpegDecoder(const GpuJpegDecoder&) = delete;
  GpuJpegDecoder& operator=(const GpuJpegDecoder&) = delete;

  [[nodiscard]] const Device& device() const noexcept { return device_; }
  [[nodiscard]] nvjpegHandle* handle() const noexcept { return handle_; }
  [[nodiscard]] GpuJpegBackend backend() const noexcept { return backend_; }
  // The hardware backend's JPEG engines (0 for `general`).
  [[nodiscard]] unsigned hardware_engines() const;
  // The frame header as nvJPEG reads it; thread-safe.
  [[nodiscard]] GpuJpegInfo info(std::span<const std::byte> jpeg) const;

 private:
  Device device_;
  GpuJpegBackend backend_;
  std::unique_ptr<detail::NvjpegAllocators> allocators_;  // outlives handle_
  nvjpegHandle* handle_ = nullptr;
};

class GpuJpegState {
 public:
  explicit GpuJpegState(const GpuJpegDecoder& decoder);
  ~GpuJpegState();
  GpuJpegState(const GpuJpegState&) = delete;
  GpuJpegState& operator=(const GpuJpegState&) = delete;

  // Decodes `jpeg` (host memory; info() of it given) as `output` asks into `pixels`: device
  // memory of the decoder's device, at least info.width * info.height * bytes_per_pixel(output)
  // bytes, rows of width * bytes_per_pixel(output), written in `stream` order. `jpeg` must stay
  // unchanged until the stream has passed this point. Call with the decoder's device current.
  void decode(std::span<const std::byte> jpeg, const GpuJpegInfo& info, GpuJpegOutput output,
              std::span<std::uint8_t> pixels, StreamRef stream);

 private:
  const GpuJpegDecoder* decoder_;
  nvjpegJpegState* state_ = nullptr;
};

}  // namespace streampipe::io
