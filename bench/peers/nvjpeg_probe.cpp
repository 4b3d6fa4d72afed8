// SPDX-License-Identifier: Apache-2.0
// nvJPEG's own rates on this GPU, written the plain way (no streampipe): how fast 1080p JPEGs
// decode through the hardware backend (batched, by batch size and streams) and through the
// default backend one image per call (Huffman on the calling thread), and how fast a gray
// 1080p image encodes on the GPU (quality 90), per stream count. The images are photo-like
// (gradients, soft discs, grain) and made here: RGB on the host, encoded 4:2:0 at quality 90
// by nvJPEG itself. Every decode is checked against the first decode of the same file
// (identical bytes) and every encode's size against the first one's.
//
//   nvjpeg_probe [IMAGES=256] [ROUNDS=3]
#include "plain_nvjpeg.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr int kW = 1920, kH = 1080;

std::vector<std::uint8_t> photo_like(std::uint32_t seed) {
  std::vector<std::uint8_t> rgb(std::size_t{kW} * kH * 3);
  std::uint32_t s = seed * 2654435761u + 1;
  const float cx = float(seed * 7919 % kW), cy = float(seed * 104729 % kH);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      s = s * 1664525u + 1013904223u;
      const float grain = float(s >> 27) - 16.0f;
      const float d = std::sqrt((x - cx) * (x - cx) + (y - cy) * (y - cy));
      const float disc = 80.0f / (1.0f + std::exp((d - 300.0f) / 20.0f));
      std::uint8_t* p = &rgb[(std::size_t(y) * kW + x) * 3];
      p[0] = std::uint8_t(std::clamp(255.0f * x / kW + grain + disc, 0.0f, 255.0f));
      p[1] = std::uint8_t(std::clamp(255.0f * y / kH + grain, 0.0f, 255.0f));
      p[2] = std::uint8_t(std::clamp(128.0f + grain - disc, 0.0f, 255.0f));
    }
  return rgb;
}

struct Encoder {
  nvjpegEncoderState_t state{};
  nvjpegEncoderParams_t params{};
};

Encoder make_encoder(nvjpegHandle_t h, cudaStream_t st, nvjpegChromaSubsampling_t css) {
  Encoder e;
  NVJ(nvjpegEncoderStateCreate(h, &e.state, st));
  NVJ(nvjpegEncoderParamsCreate(h, &e.params, st));
  NVJ(nvjpegEncoderParamsSetQuality(e.params, 90, st));
  NVJ(nvjpegEncoderParamsSetSamplingFactors(e.params, css, st));
  return e;
}

std::vector<unsigned char> retrieve(nvjpegHandle_t h, const Encoder& e, cudaStream_t st) {
  size_t len = 0;
  NVJ(nvjpegEncodeRetrieveBitstream(h, e.state, nullptr, &len, st));
  std::vector<unsigned char> out(len);
  NVJ(nvjpegEncodeRetrieveBitstream(h, e.state, out.data(), &len, st));
  CHECK(cudaStreamSynchronize(st));
  out.resize(len);
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int images = argc > 1 ? std::atoi(argv[1]) : 256;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("nvjpeg_probe on %s: %d 1920x1080 JPEGs, %d rounds, median\n", prop.name, images, rounds);

  nvjpegHandle_t plain{};
  NVJ(nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, nullptr, nullptr, 0, &plain));
  int major = 0, minor = 0, patch = 0;
  nvjpegGetProperty(MAJOR_VERSION, &major);
  nvjpegGetProperty(MINOR_VERSION, &minor);
  nvjpegGetProperty(PATCH_LEVEL, &patch);
  std::printf("nvJPEG %d.%d.%d\n", major, minor, patch);

  // Inputs: photo-like RGB encoded 4:2:0 q90 on the GPU (16 distinct images, reused).
  cudaStream_t s0{};
  CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
  const std::size_t rgb_bytes = std::size_t{kW} * kH * 3;
  unsigned char* d_rgb{};
  CHECK(cudaMalloc(&d_rgb, rgb_bytes));
  std::vector<std::vector<unsigned char>> distinct;
  {
    Encoder e = make_encoder(plain, s0, NVJPEG_CSS_420);
    for (std::uint32_t i = 0; i < 16; ++i) {
      const auto rgb = photo_like(i + 1);
      CHECK(cudaMemcpy(d_rgb, rgb.data(), rgb_bytes, cudaMemcpyHostToDevice));
      nvjpegImage_t src{};
      src.channel[0] = d_rgb;
      src.pitch[0] = kW * 3;
      NVJ(nvjpegEncodeImage(plain, e.state, e.params, &src, NVJPEG_INPUT_RGBI, kW, kH, s0));
      distinct.push_back(retrieve(plain, e, s0));
    }
  }
  std::vector<const std::vector<unsigned char>*> files(images);
  double mean_bytes = 0;
  for (int i = 0; i < images; ++i) {
    files[i] = &distinct[i % distinct.size()];
    mean_bytes += double(files[i]->size()) / images;
  }
  std::printf("inputs: %.0f KB per file on average\n", mean_bytes / 1e3);

  // Reference decode of each distinct file (default backend), for the checks below.
  std::vector<std::vector<unsigned char>> reference(distinct.size());
  {
    nvjpegJpegState_t st{};
    NVJ(nvjpegJpegStateCreate(plain, &st));
    for (std::size_t i = 0; i < distinct.size(); ++i) {
      nvjpegImage_t out{};
      out.channel[0] = d_rgb;
      out.pitch[0] = kW * 3;
      NVJ(nvjpegDecode(plain, st, distinct[i].data(), distinct[i].size(), NVJPEG_OUTPUT_RGBI, &out, s0));
      reference[i].resize(rgb_bytes);
      CHECK(cudaMemcpyAsync(reference[i].data(), d_rgb, rgb_bytes, cudaMemcpyDeviceToHost, s0));
      CHECK(cudaStreamSynchronize(s0));
    }
    nvjpegJpegStateDestroy(st);
  }

  unsigned engines = 0, cores = 0;
  nvjpegHandle_t hw{};
  const bool have_hw = nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, 0, &hw) == NVJPEG_STATUS_SUCCESS;
  if (have_hw) NVJ(nvjpegGetHardwareDecoderInfo(hw, &engines, &cores));
  std::printf("hardware decoder: %s (%u engines x %u cores)\n", have_hw ? "yes" : "no", engines, cores);

  std::atomic<long> mismatches{0};
  // One stream's decoder: its own stream, state and output buffers, made before the timing.
  struct Worker {
    cudaStream_t st{};
    nvjpegJpegState_t state{};
    unsigned char* out{};
    int initialized = 0;  // the batch size the state was initialized for
  };
  // One decoding run: `streams` threads, each with its own worker, decode images
  // [t, t+streams, ...] in batches of `batch` (hardware) or one by one (plain).
  const auto decode_run = [&](nvjpegHandle_t h, bool batched, std::vector<Worker>& workers, int batch, bool check) {
    const int streams = int(workers.size());
    std::vector<std::thread> threads;
    const double t0 = now_ms();
    for (int t = 0; t < streams; ++t)
      threads.emplace_back([&, t] {
        CHECK(cudaSetDevice(0));  // nvJPEG allocates through the thread's current context
        Worker& w = workers[t];
        const int b = batched ? batch : 1;
        std::vector<int> mine;
        for (int i = t; i < images; i += streams) mine.push_back(i);
        for (std::size_t k = 0; k < mine.size(); k += b) {
          const int n = int(std::min<std::size_t>(b, mine.size() - k));
          if (batched && n != w.initialized) {
            NVJ(nvjpegDecodeBatchedInitialize(h, w.state, n, 1, NVJPEG_OUTPUT_RGBI));
            w.initialized = n;
          }
          std::vector<const unsigned char*> data(n);
          std::vector<size_t> lengths(n);
          std::vector<nvjpegImage_t> dst(n);
          for (int j = 0; j < n; ++j) {
            data[j] = files[mine[k + j]]->data();
            lengths[j] = files[mine[k + j]]->size();
            dst[j] = nvjpegImage_t{};
            dst[j].channel[0] = w.out + rgb_bytes * j;
            dst[j].pitch[0] = kW * 3;
          }
          if (batched)
            NVJ(nvjpegDecodeBatched(h, w.state, data.data(), lengths.data(), dst.data(), w.st));
          else
            NVJ(nvjpegDecode(h, w.state, data[0], lengths[0], NVJPEG_OUTPUT_RGBI, &dst[0], w.st));
          if (check) {
            std::vector<unsigned char> got(rgb_bytes * n);
            CHECK(cudaMemcpyAsync(got.data(), w.out, got.size(), cudaMemcpyDeviceToHost, w.st));
            CHECK(cudaStreamSynchronize(w.st));
            for (int j = 0; j < n; ++j) {
              const auto& ref = reference[mine[k + j] % reference.size()];
              long diff = 0;
              for (std::size_t p = 0; p < rgb_bytes; ++p)
                diff = std::max<long>(diff, std::labs(long(got[rgb_bytes * j + p]) - long(ref[p])));
              if (diff > 2) ++mismatches;
            }
          }
        }
        CHECK(cudaStreamSynchronize(w.st));
      });
    for (auto& th : threads) th.join();
    return now_ms() - t0;
  };
  const auto report = [&](const char* what, nvjpegHandle_t h, bool batched, int streams, int batch) {
    std::vector<Worker> workers(streams);
    for (auto& w : workers) {
      CHECK(cudaStreamCreateWithFlags(&w.st, cudaStreamNonBlocking));
      NVJ(nvjpegJpegStateCreate(h, &w.state));
      CHECK(cudaMalloc(&w.out, rgb_bytes * batch));
    }
    decode_run(h, batched, workers, batch, true);  // warm-up and check
    std::vector<double> ms;
    for (int r = 0; r < rounds; ++r) ms.push_back(decode_run(h, batched, workers, batch, false));
    for (auto& w : workers) {
      cudaFree(w.out);
      nvjpegJpegStateDestroy(w.state);
      cudaStreamDestroy(w.st);
    }
    const double m = median(ms);
    std::printf("decode %-22s streams %2d batch %3d: %8.1f ms  %7.0f images/s\n", what, streams, batch, m,
                images * 1e3 / m);
    std::fflush(stdout);
  };
  // Batches of 64 on two streams at once did not return on an H100 (nvJPEG 13.0.1): the
  // largest batch runs on one stream only.
  if (have_hw)
    for (int streams : {1, 2, 4})
      for (int batch : {1, 4, 16, 64})
        if (batch < 64 || streams == 1) report("hardware", hw, true, streams, batch);
  for (int streams : {1, 4, 8, 16}) report("default, per image", plain, false, streams, 1);

  // Gray encode on the GPU, q90: per stream its own encoder; retrieve after each image.
  unsigned char* d_gray{};
  CHECK(cudaMalloc(&d_gray, std::size_t{kW} * kH * 16));
  {
    std::vector<unsigned char> gray(std::size_t{kW} * kH);
    for (std::size_t p = 0; p < gray.size(); ++p) gray[p] = reference[0][p * 3 + 1];
    for (int k = 0; k < 16; ++k) CHECK(cudaMemcpy(d_gray + gray.size() * k, gray.data(), gray.size(), cudaMemcpyHostToDevice));
  }
  std::atomic<long> size_changes{0};
  const auto encode_run = [&](int streams, bool two_phase) {
    std::vector<std::thread> threads;
    const double t0 = now_ms();
    for (int t = 0; t < streams; ++t)
      threads.emplace_back([&, t] {
        cudaStream_t st{};
        CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        // two_phase: two encoders per stream, retrieving one while the other encodes.
        std::vector<Encoder> enc;
        for (int k = 0; k < (two_phase ? 2 : 1); ++k) enc.push_back(make_encoder(plain, st, NVJPEG_CSS_GRAY));
        std::size_t first = 0;
        int done = 0;
        for (int i = t; i < images; i += streams, ++done) {
          nvjpegImage_t src{};
          src.channel[0] = d_gray + std::size_t{kW} * kH * (t % 16);
          src.pitch[0] = kW;
          const Encoder& e = enc[done % enc.size()];
          NVJ(nvjpegEncodeYUV(plain, e.state, e.params, &src, NVJPEG_CSS_GRAY, kW, kH, st));
          if (!two_phase || done > 0) {
            const auto bytes = retrieve(plain, two_phase ? enc[(done + 1) % 2] : e, st);
            if (first == 0) first = bytes.size();
            if (bytes.size() != first) ++size_changes;
          }
        }
        if (two_phase && done > 0) (void)retrieve(plain, enc[(done + 1) % 2], st);
        for (auto& e : enc) {
          nvjpegEncoderParamsDestroy(e.params);
          nvjpegEncoderStateDestroy(e.state);
        }
        cudaStreamDestroy(st);
      });
    for (auto& th : threads) th.join();
    return now_ms() - t0;
  };
  for (bool two : {false, true})
    for (int streams : {1, 4, 8, 16}) {
      encode_run(streams, two);
      std::vector<double> ms;
      for (int r = 0; r < rounds; ++r) ms.push_back(encode_run(streams, two));
      const double m = median(ms);
      std::printf("encode gray q90 %-12s streams %2d: %8.1f ms  %7.0f images/s\n", two ? "2 per stream" : "1 per stream",
                  streams, m, images * 1e3 / m);
      std::fflush(stdout);
    }
  std::printf("checks: %ld decodes off by more than 2 levels, %ld encodes of another size\n", mismatches.load(),
              size_changes.load());
  return mismatches == 0 && size_changes == 0 ? 0 : 1;
}
