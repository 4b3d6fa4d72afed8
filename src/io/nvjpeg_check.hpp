// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/io's nvJPEG files: SP_NVJPEG_CHECK(call) throws io::NvjpegError naming the
// call, file:line and the status; nvjpeg_format() is nvJPEG's name for a GpuJpegOutput.

#include "streampipe/io/gpu_jpeg_decoder.hpp"

#include <nvjpeg.h>

namespace streampipe::io::detail {
[[noreturn]] void throw_nvjpeg_error(nvjpegStatus_t status, const char* call, const char* file, int line);
// For destructors: reports on stderr, never throws.
void report_nvjpeg_error(nvjpegStatus_t status, const char* call, const char* file, int line) noexcept;

inline nvjpegOutputFormat_t nvjpeg_format(GpuJpegOutput output) noexcept {
  return output == GpuJpegOutput::rgb ? NVJPEG_OUTPUT_RGBI : NVJPEG_OUTPUT_Y;
}
}  // namespace streampipe::io::detail

#define SP_NVJPEG_CHECK(call) \
  SP_STATUS_CHECK(call, NVJPEG_STATUS_SUCCESS, ::streampipe::io::detail::throw_nvjpeg_error)
#define SP_NVJPEG_CHECK_NOTHROW(call) \
  SP_STATUS_CHECK(call, NVJPEG_STATUS_SUCCESS, ::streampipe::io::detail::report_nvjpeg_error)
