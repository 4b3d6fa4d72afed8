// SPDX-License-Identifier: Apache-2.0
// nvJPEG behind RAII handles (see gpu_jpeg_decoder.hpp). Single-phase nvjpegDecode per state:
// the state keeps nvJPEG's pinned and device work buffers between images, so after the
// first images of the largest size a decode allocates nothing.

#include "streampipe/io/gpu_jpeg_decoder.hpp"

#include "nvjpeg_allocators.hpp"
#include "nvjpeg_check.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <stdexcept>

namespace streampipe::io {

const char* nvjpeg_status_name(int status) noexcept {
  switch (status) {
    case NVJPEG_STATUS_SUCCESS: return "NVJPEG_STATUS_SUCCESS";
    case NVJPEG_STATUS_NOT_INITIALIZED: return "NVJPEG_STATUS_NOT_INITIALIZED";
    case NVJPEG_STATUS_INVALID_PARAMETER: return "NVJPEG_STATUS_INVALID_PARAMETER";
    case NVJPEG_STATUS_BAD_JPEG: return "NVJPEG_STATUS_BAD_JPEG";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED: return "NVJPEG_STATUS_JPEG_NOT_SUPPORTED";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE: return "NVJPEG_STATUS_ALLOCATOR_FAILURE";
    case NVJPEG_STATUS_EXECUTION_FAILED: return "NVJPEG_STATUS_EXECUTION_FAILED";
    case NVJPEG_STATUS_ARCH_MISMATCH: return "NVJPEG_STATUS_ARCH_MISMATCH";
    case NVJPEG_STATUS_INTERNAL_ERROR: return "NVJPEG_STATUS_INTERNAL_ERROR";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED: return "NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED";
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM: return "NVJPEG_STATUS_INCOMPLETE_BITSTREAM";
    default: return "NVJPEG_STATUS_UNKNOWN";
  }
}

NvjpegError::NvjpegError(int status, const char* call, const char* file, int line)
    : Error({.api = Api::nvjpeg,
             .status = status,
             .status_name = nvjpeg_status_name(status),
             .description = {},
             .call = call != nullptr ? call : "",
             .file = file != nullptr ? file : "",
             .line = line,
             .detail = {}}) {}

namespace detail {

void throw_nvjpeg_error(nvjpegStatus_t status, const char* call, const char* file, int line) {
  throw NvjpegError(static_cast<int>(status), call, file, line);
}

void report_nvjpeg_error(nvjpegStatus_t status, const char* call, const char* file, int line) noexcept {
  std::fprintf(stderr, "streampipe: nvJPEG error %s (%d) in destructor: %s\n  at %s:%d\n", nvjpeg_status_name(status),
               static_cast<int>(status), call, file, line);
}

}  // namespace detail

namespace {

const char* sampling_name(nvjpegChromaSubsampling_t s) noexcept {
  switch (s) {
    case NVJPEG_CSS_444: return "4:4:4";
    case NVJPEG_CSS_422: return "4:2:2";
    case NVJPEG_CSS_420: return "4:2:0";
    case NVJPEG_CSS_440: return "4:4:0";
    case NVJPEG_CSS_411: return "4:1:1";
    case NVJPEG_CSS_410: return "4:1:0";
    case NVJPEG_CSS_410V: return "4:1:0 (vertical)";
    case NVJPEG_CSS_GRAY: return "gray";
    default: return "unknown";
  }
}

const unsigned char* bytes_of(std::span<const std::byte> s) noexcept {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

GpuJpegDecoder::GpuJpegDecoder(Device device, GpuJpegBackend backend)
    : device_(device), backend_(backend), allocators_(std::make_unique<detail::NvjpegAllocators>()) {
  const CurrentDeviceGuard guard(device_);
  nvjpegHandle_t handle = nullptr;
  const nvjpegBackend_t implementation =
      backend == GpuJpegBackend::hardware ? NVJPEG_BACKEND_HARDWARE : NVJPEG_BACKEND_DEFAULT;
  // Interpolated chroma upsampling is closer to libjpeg-turbo's default ("fancy") upsampling
  // than replication; a library version or backend that does not know the flag refuses it,
  // and then the handle is created with the default flags.
  const nvjpegStatus_t with_interpolation =
      nvjpegCreateExV2(implementation, allocators_->device(), allocators_->pinned(),
                       NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION, &handle);
  if (with_interpolation != NVJPEG_STATUS_SUCCESS) {
    handle = nullptr;
    SP_NVJPEG_CHECK(nvjpegCreateExV2(implementation, allocators_->device(), allocators_->pinned(),
                                     NVJPEG_FLAGS_DEFAULT, &handle));
  }
  handle_ = handle;
}

unsigned GpuJpegDecoder::hardware_engines() const {
  if (backend_ != GpuJpegBackend::hardware) return 0;
  // The hardware backend asks the driver for its device's context: a thread may have none.
  const CurrentDeviceGuard guard(device_);
  unsigned engines = 0, cores = 0;
  SP_NVJPEG_CHECK(nvjpegGetHardwareDecoderInfo(handle_, &engines, &cores));
  return engines;
}

namespace {

// nvJPEG frees its buffers on the current device: make it the decoder's (and destroy the
// handle even if that fails).
void make_current_for_teardown(std::optional<CurrentDeviceGuard>& guard, const Device& device) noexcept {
  try {
    guard.emplace(device);
  } catch (const std::exception&) {
    // A broken context: nvJPEG's own calls will report it.
  }
}

}  // namespace

GpuJpegDecoder::~GpuJpegDecoder() {
  if (handle_ == nullptr) return;
  std::optional<CurrentDeviceGuard> guard;
  make_current_for_teardown(guard, device_);
  SP_NVJPEG_CHECK_NOTHROW(nvjpegDestroy(handle_));
}

GpuJpegInfo GpuJpegDecoder::info(std::span<const std::byte> jpeg) const {
  int components = 0;
  nvjpegChromaSubsampling_t sampling = NVJPEG_CSS_UNKNOWN;
  int widths[NVJPEG_MAX_COMPONENT] = {};
  int heights[NVJPEG_MAX_COMPONENT] = {};
  SP_NVJPEG_CHECK(nvjpegGetImageInfo(handle_, bytes_of(jpeg), jpeg.size(), &components, &sampling, widths, heights));
  GpuJpegInfo info;
  info.width = widths[0] > 0 ? static_cast<std::uint32_t>(widths[0]) : 0;
  info.height = heights[0] > 0 ? static_cast<std::uint32_t>(heights[0]) : 0;
  info.components = components;
  info.sampling = sampling_name(sampling);
  info.engine_sampling = sampling == NVJPEG_CSS_444 || sampling == NVJPEG_CSS_422 || sampling == NVJPEG_CSS_420 ||
                         sampling == NVJPEG_CSS_440 || sampling == NVJPEG_CSS_GRAY;
  info.supported = sampling != NVJPEG_CSS_UNKNOWN && (components == 1 || components == 3) && info.width > 0 &&
                   info.height > 0;
  return info;
}

GpuJpegState::GpuJpegState(const GpuJpegDecoder& decoder) : decoder_(&decoder) {
  const CurrentDeviceGuard guard(decoder.device());
  nvjpegJpegState_t state = nullptr;
  SP_NVJPEG_CHECK(nvjpegJpegStateCreate(decoder.handle(), &state));
  state_ = state;
}

GpuJpegState::~GpuJpegState() {
  if (state_ == nullptr) return;
  std::optional<CurrentDeviceGuard> guard;
  make_current_for_teardown(guard, decoder_->device());
  SP_NVJPEG_CHECK_NOTHROW(nvjpegJpegStateDestroy(state_));
}

void GpuJpegState::decode(std::span<const std::byte> jpeg, const GpuJpegInfo& info, GpuJpegOutput output,
                          std::span<std::uint8_t> pixels, StreamRef stream) {
  if (!info.supported)
    throw std::invalid_argument(fmt::format("GPU JPEG decode: a {}-component {} JPEG is not supported",
                                            info.components, info.sampling));
  const std::size_t row = std::size_t{info.width} * bytes_per_pixel(output);
  const std::size_t need = row * info.height;
  if (pixels.size() < need)
    throw std::invalid_argument(fmt::format("GPU JPEG decode: {} bytes given for a {}x{} image of {} byte(s) a pixel "
                                            "({} needed)",
                                            pixels.size(), info.width, info.height, bytes_per_pixel(output), need));
  if (stream.device_index() != decoder_->device().index())
    throw std::invalid_argument(fmt::format("GPU JPEG decode: a stream of device {} for a decoder of device {}",
                                            stream.device_index(), decoder_->device().index()));
  nvjpegImage_t out{};
  out.channel[0] = pixels.data();
  out.pitch[0] = row;
  SP_NVJPEG_CHECK(nvjpegDecode(decoder_->handle(), state_, bytes_of(jpeg), jpeg.size(), detail::nvjpeg_format(output), &out,
                               stream.handle()));
}

}  // namespace streampipe::io
