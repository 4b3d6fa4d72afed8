// SPDX-License-Identifier: Apache-2.0
// Where nvJPEG's start-up and tear-down go on this GPU, written the plain way (no streampipe):
// each step a program like gray takes before its first GPU decode - CUDA's initialization,
// the context, a default and a hardware-backend handle, the JPEG engines' count, four lane
// states of each backend, the first and second decode through each, GPU encoder states, a
// 48 MiB pinned buffer - then the tear-down in the order gray releases them, one line and
// its milliseconds each. With "malloc" nvJPEG's pinned buffers come from malloc and its
// device buffers from cudaMalloc, to see whether its own allocations are the cost; with
// "hardware-first" the hardware handle is made before the default one. Last, a gray image is
// encoded from each handle's encoder state, to see whether the hardware handle encodes, and to
// the same bytes.
//
//   nvjpeg_startup_probe FILE.jpg [malloc] [hardware-first]
#include "plain_nvjpeg.hpp"

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace {

double last_ms = 0;
void step(const char* what) {
  const double t = now_ms();
  std::printf("%8.1f ms  %s\n", t - last_ms, what);
  std::fflush(stdout);
  last_ms = now_ms();
}

int device_malloc(void** p, size_t n) { return cudaMalloc(p, n) == cudaSuccess ? 0 : 1; }
int device_free(void* p) { return cudaFree(p) == cudaSuccess ? 0 : 1; }
int host_malloc(void** p, size_t n, unsigned int) { return (*p = std::malloc(n)) != nullptr ? 0 : 1; }
int host_free(void* p) {
  std::free(p);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: nvjpeg_startup_probe FILE.jpg [malloc] [hardware-first]\n");
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  const std::vector<unsigned char> jpg((std::istreambuf_iterator<char>(file)), {});
  if (jpg.empty()) {
    std::fprintf(stderr, "%s: cannot read it\n", argv[1]);
    return 1;
  }
  bool plain = false, hardware_first = false;
  for (int a = 2; a < argc; ++a) {
    plain = plain || std::strcmp(argv[a], "malloc") == 0;
    hardware_first = hardware_first || std::strcmp(argv[a], "hardware-first") == 0;
  }
  nvjpegDevAllocator_t dev{device_malloc, device_free};
  nvjpegPinnedAllocator_t pinned{host_malloc, host_free};
  std::printf("nvJPEG start-up, step by step (%s allocators)\n", plain ? "malloc/cudaMalloc" : "nvJPEG's own");
  last_ms = now_ms();
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  step("cudaGetDeviceCount (CUDA's initialization)");
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(nullptr));
  step("context of GPU 0");
  nvjpegHandle_t general{}, hardware{};
  const unsigned flags = NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION;
  const auto make = [&](nvjpegBackend_t backend, nvjpegHandle_t* handle, const char* what) {
    NVJ(nvjpegCreateEx(backend, plain ? &dev : nullptr, plain ? &pinned : nullptr, flags, handle));
    step(what);
  };
  if (hardware_first) make(NVJPEG_BACKEND_HARDWARE, &hardware, "handle, hardware backend");
  make(NVJPEG_BACKEND_DEFAULT, &general, "handle, default backend");
  if (!hardware_first) make(NVJPEG_BACKEND_HARDWARE, &hardware, "handle, hardware backend");
  unsigned engines = 0, cores = 0;
  NVJ(nvjpegGetHardwareDecoderInfo(hardware, &engines, &cores));
  step("JPEG engines counted");
  cudaStream_t stream{};
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int components = 0;
  nvjpegChromaSubsampling_t sampling{};
  int widths[NVJPEG_MAX_COMPONENT] = {}, heights[NVJPEG_MAX_COMPONENT] = {};
  NVJ(nvjpegGetImageInfo(general, jpg.data(), jpg.size(), &components, &sampling, widths, heights));
  const size_t rgb = size_t(widths[0]) * heights[0] * 3;
  constexpr int kLanes = 4, kBatch = 8;
  unsigned char* out = nullptr;
  CHECK(cudaMalloc(&out, rgb * kBatch));
  std::vector<nvjpegJpegState_t> singles(kLanes), batched(kLanes);
  for (auto& s : singles) {
    NVJ(nvjpegJpegStateCreate(general, &s));
    step("  lane state, default backend");
  }
  for (auto& s : batched) {
    NVJ(nvjpegJpegStateCreate(hardware, &s));
    step("  lane state, hardware backend");
  }
  nvjpegImage_t image{};
  image.channel[0] = out;
  image.pitch[0] = unsigned(widths[0] * 3);
  for (auto& s : singles)
    for (const char* which : {"  first decode, default backend", "  second decode, default backend"}) {
      NVJ(nvjpegDecode(general, s, jpg.data(), jpg.size(), NVJPEG_OUTPUT_RGBI, &image, stream));
      CHECK(cudaStreamSynchronize(stream));
      step(which);
    }
  std::vector<const unsigned char*> data(kBatch, jpg.data());
  std::vector<size_t> lengths(kBatch, jpg.size());
  std::vector<nvjpegImage_t> images(kBatch);
  for (int k = 0; k < kBatch; ++k) {
    images[k].channel[0] = out + rgb * k;
    images[k].pitch[0] = unsigned(widths[0] * 3);
  }
  for (auto& s : batched) {
    NVJ(nvjpegDecodeBatchedInitialize(hardware, s, kBatch, 1, NVJPEG_OUTPUT_RGBI));
    for (const char* which : {"  first batch of 8, JPEG engines", "  second batch of 8, JPEG engines"}) {
      NVJ(nvjpegDecodeBatched(hardware, s, data.data(), lengths.data(), images.data(), stream));
      CHECK(cudaStreamSynchronize(stream));
      step(which);
    }
  }
  std::vector<nvjpegEncoderState_t> encoders(2 * kLanes);
  std::vector<nvjpegEncoderParams_t> params(2 * kLanes);
  for (size_t e = 0; e < encoders.size(); ++e) {
    NVJ(nvjpegEncoderStateCreate(general, &encoders[e], stream));
    NVJ(nvjpegEncoderParamsCreate(general, &params[e], stream));
  }
  step("8 encoder states and parameters");
  // One gray image (the decoded image's red samples) encoded from each handle's encoder.
  std::vector<unsigned char> encoded[2];
  for (int h = 0; h < 2; ++h) {
    nvjpegEncoderState_t state{};
    nvjpegEncoderParams_t p{};
    const nvjpegStatus_t made = nvjpegEncoderStateCreate(h == 0 ? general : hardware, &state, stream);
    if (made != NVJPEG_STATUS_SUCCESS) {
      std::printf("encoder state from the %s handle: nvJPEG status %d\n", h == 0 ? "default" : "hardware", int(made));
      continue;
    }
    NVJ(nvjpegEncoderParamsCreate(h == 0 ? general : hardware, &p, stream));
    NVJ(nvjpegEncoderParamsSetQuality(p, 90, stream));
    NVJ(nvjpegEncoderParamsSetSamplingFactors(p, NVJPEG_CSS_GRAY, stream));
    nvjpegImage_t gray{};
    gray.channel[0] = out;
    gray.pitch[0] = unsigned(widths[0] * 3);
    NVJ(nvjpegEncodeYUV(h == 0 ? general : hardware, state, p, &gray, NVJPEG_CSS_GRAY, widths[0], heights[0], stream));
    size_t length = 0;
    NVJ(nvjpegEncodeRetrieveBitstream(h == 0 ? general : hardware, state, nullptr, &length, stream));
    encoded[h].resize(length);
    NVJ(nvjpegEncodeRetrieveBitstream(h == 0 ? general : hardware, state, encoded[h].data(), &length, stream));
    CHECK(cudaStreamSynchronize(stream));
    NVJ(nvjpegEncoderParamsDestroy(p));
    NVJ(nvjpegEncoderStateDestroy(state));
  }
  std::printf("gray encode: default handle %zu bytes, hardware handle %zu bytes, %s\n", encoded[0].size(),
              encoded[1].size(), encoded[0] == encoded[1] ? "the same bytes" : "DIFFERENT bytes");
  last_ms = now_ms();
  void* staging = nullptr;
  CHECK(cudaHostAlloc(&staging, size_t{48} << 20, cudaHostAllocDefault));
  step("cudaHostAlloc 48 MiB");
  CHECK(cudaFreeHost(staging));
  for (size_t e = 0; e < encoders.size(); ++e) {
    NVJ(nvjpegEncoderParamsDestroy(params[e]));
    NVJ(nvjpegEncoderStateDestroy(encoders[e]));
  }
  step("tear-down: encoders");
  for (auto s : singles) NVJ(nvjpegJpegStateDestroy(s));
  step("tear-down: lane states, default backend");
  for (auto s : batched) NVJ(nvjpegJpegStateDestroy(s));
  step("tear-down: lane states, hardware backend");
  NVJ(nvjpegDestroy(hardware));
  NVJ(nvjpegDestroy(general));
  step("tear-down: handles");
  CHECK(cudaFree(out));
  CHECK(cudaStreamDestroy(stream));
  std::printf("%u JPEG engines; %d GPU(s)\n", engines, count);
  return 0;
}
