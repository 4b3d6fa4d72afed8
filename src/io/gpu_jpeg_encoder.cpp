// SPDX-License-Identifier: Apache-2.0
// nvjpegEncodeYUV of one gray plane (see gpu_jpeg_encoder.hpp). nvJPEG gives the bitstream's
// length only on the host, so retrieving is where the stream is waited for; a lane encodes a
// whole group with one encoder per image, waits once, then retrieves each.

#include "streampipe/io/gpu_jpeg_encoder.hpp"

#include "nvjpeg_check.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace streampipe::io {

GpuJpegEncoder::GpuJpegEncoder(const GpuJpegDecoder& library, int quality, StreamRef stream) : library_(&library) {
  if (quality < 1 || quality > 100) throw std::invalid_argument(fmt::format("JPEG quality {} is not in 1-100", quality));
  const CurrentDeviceGuard guard(library.device());
  nvjpegEncoderState_t state = nullptr;
  SP_NVJPEG_CHECK(nvjpegEncoderStateCreate(library.handle(), &state, stream.handle()));
  state_ = state;
  nvjpegEncoderParams_t params = nullptr;
  try {
    SP_NVJPEG_CHECK(nvjpegEncoderParamsCreate(library.handle(), &params, stream.handle()));
    params_ = params;
    SP_NVJPEG_CHECK(nvjpegEncoderParamsSetQuality(params_, quality, stream.handle()));
    SP_NVJPEG_CHECK(nvjpegEncoderParamsSetSamplingFactors(params_, NVJPEG_CSS_GRAY, stream.handle()));
  } catch (...) {
    if (params_ != nullptr) SP_NVJPEG_CHECK_NOTHROW(nvjpegEncoderParamsDestroy(params_));
    SP_NVJPEG_CHECK_NOTHROW(nvjpegEncoderStateDestroy(state_));
    throw;
  }
}

GpuJpegEncoder::~GpuJpegEncoder() {
  try {
    const CurrentDeviceGuard guard(library_->device());
    SP_NVJPEG_CHECK_NOTHROW(nvjpegEncoderParamsDestroy(params_));
    SP_NVJPEG_CHECK_NOTHROW(nvjpegEncoderStateDestroy(state_));
  } catch (const std::exception&) {  // a broken context: nvJPEG's own calls report it
    SP_NVJPEG_CHECK_NOTHROW(nvjpegEncoderParamsDestroy(params_));
    SP_NVJPEG_CHECK_NOTHROW(nvjpegEncoderStateDestroy(state_));
  }
}

void GpuJpegEncoder::encode_gray(const std::uint8_t* gray, std::uint32_t width, std::uint32_t height,
                                 StreamRef stream) {
  if (gray == nullptr || width == 0 || height == 0)
    throw std::invalid_argument(fmt::format("encode_gray: no {}x{} image given", width, height));
  nvjpegImage_t source{};
  source.channel[0] = const_cast<unsigned char*>(gray);  // nvJPEG's struct is not const; it only reads
  source.pitch[0] = width;
  const nvjpegHandle_t h = library_->handle();
  SP_NVJPEG_CHECK(nvjpegEncodeYUV(h, state_, params_, &source, NVJPEG_CSS_GRAY, static_cast<int>(width),
                                  static_cast<int>(height), stream.handle()));
}

std::vector<std::byte> GpuJpegEncoder::retrieve(StreamRef stream) {
  const nvjpegHandle_t h = library_->handle();
  stream.synchronize();  // the encode has finished: the length below is final
  std::size_t length = 0;
  SP_NVJPEG_CHECK(nvjpegEncodeRetrieveBitstream(h, state_, nullptr, &length, stream.handle()));
  std::vector<std::byte> file(length);
  SP_NVJPEG_CHECK(nvjpegEncodeRetrieveBitstream(h, state_, reinterpret_cast<unsigned char*>(file.data()), &length,
                                                stream.handle()));
  stream.synchronize();  // the copy into `file` has landed
  file.resize(length);
  return file;
}

}  // namespace streampipe::io
