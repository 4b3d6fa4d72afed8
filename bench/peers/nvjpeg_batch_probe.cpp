// SPDX-License-Identifier: Apache-2.0
// The JPEG engines on a folder of real photographs, written the plain way (no streampipe):
// how fast nvJPEG's hardware backend decodes baseline JPEGs of mixed sizes to their luma
// (NVJPEG_OUTPUT_Y) in batches, on 1 and on L threads (a state and a stream each), with
// nvJPEG allocating as it does by default (counted through its allocator interface), with
// allocators that keep and reuse what nvJPEG frees, and with the state's buffers allocated once
// for the largest image (nvjpegDecodeBatchedPreAllocate). Photographs
// vary in size from batch to batch, which identical test files (nvjpeg_probe) never do.
// Every decode's luma is compared with the first variant's (identical bytes).
//
//   nvjpeg_batch_probe DIR [BATCH=16] [THREADS=4] [ROUNDS=2]
#include "plain_nvjpeg.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Jpeg {
  std::string name;
  std::vector<unsigned char> bytes;
  int width = 0, height = 0;
  std::uint64_t luma_sum = 0;  // of the first variant's decode, for the others' check
};

// Whether the frame is baseline or extended sequential Huffman (SOF0/SOF1): what the
// engines decode. Markers are walked from SOI to the first SOF.
bool sequential_huffman(const std::vector<unsigned char>& b) {
  std::size_t i = 2;
  while (i + 4 <= b.size()) {
    if (b[i] != 0xFF) return false;
    const unsigned char m = b[i + 1];
    if (m == 0xFF) { ++i; continue; }
    if (m == 0xC0 || m == 0xC1) return true;
    if (m >= 0xC2 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) return false;
    i += 2 + (std::size_t{b[i + 2]} << 8 | b[i + 3]);
  }
  return false;
}

// nvJPEG's allocations through its V2 allocator interface: counted and timed, and either
// plain (cudaMalloc, cudaHostAlloc: what nvJPEG does without allocators) or cached (device
// memory from a stream-ordered pool that keeps what is freed; page-locked blocks kept in a
// free list and reused for a request of up to their size).
struct Allocations {
  bool cached = false;
  std::mutex mutex;
  long device_calls = 0, pinned_calls = 0, pinned_misses = 0;
  double device_ms = 0, pinned_ms = 0, pinned_bytes = 0;
  std::multimap<std::size_t, void*> free_pinned;  // by size
  std::map<void*, std::size_t> pinned_size;
};

int device_malloc(void* ctx, void** p, std::size_t n, cudaStream_t st) {
  auto& a = *static_cast<Allocations*>(ctx);
  const double t = now_ms();
  const cudaError_t e = a.cached ? cudaMallocAsync(p, n, st) : cudaMalloc(p, n);
  const std::lock_guard lock(a.mutex);
  ++a.device_calls;
  a.device_ms += now_ms() - t;
  return e == cudaSuccess ? 0 : 1;
}

int device_free(void* ctx, void* p, std::size_t, cudaStream_t st) {
  auto& a = *static_cast<Allocations*>(ctx);
  const double t = now_ms();
  const cudaError_t e = a.cached ? cudaFreeAsync(p, st) : cudaFree(p);
  const std::lock_guard lock(a.mutex);
  a.device_ms += now_ms() - t;
  return e == cudaSuccess ? 0 : 1;
}

int pinned_malloc(void* ctx, void** p, std::size_t n, cudaStream_t) {
  auto& a = *static_cast<Allocations*>(ctx);
  const double t = now_ms();
  std::unique_lock lock(a.mutex);
  ++a.pinned_calls;
  if (a.cached) {
    const auto it = a.free_pinned.lower_bound(n);
    if (it != a.free_pinned.end() && it->first <= 2 * n + (1 << 20)) {
      *p = it->second;
      a.free_pinned.erase(it);
      a.pinned_ms += now_ms() - t;
      return 0;
    }
  }
  ++a.pinned_misses;
  a.pinned_bytes += double(n);
  lock.unlock();
  const cudaError_t e = cudaHostAlloc(p, n, cudaHostAllocDefault);
  lock.lock();
  if (e == cudaSuccess) a.pinned_size[*p] = n;
  a.pinned_ms += now_ms() - t;
  return e == cudaSuccess ? 0 : 1;
}

int pinned_free(void* ctx, void* p, std::size_t, cudaStream_t st) {
  auto& a = *static_cast<Allocations*>(ctx);
  const double t = now_ms();
  if (a.cached) {
    // nvJPEG may free a buffer that work on `st` still reads: kept only once that is done.
    cudaStreamSynchronize(st);
    const std::lock_guard lock(a.mutex);
    a.free_pinned.emplace(a.pinned_size.at(p), p);
    a.pinned_ms += now_ms() - t;
    return 0;
  }
  const cudaError_t e = cudaFreeHost(p);
  const std::lock_guard lock(a.mutex);
  a.pinned_size.erase(p);
  a.pinned_ms += now_ms() - t;
  return e == cudaSuccess ? 0 : 1;
}

struct Variant {
  const char* name;
  bool cached_allocations;
  bool preallocate;
  bool encode = false;  // then each decoded luma is also encoded (gray, quality 90), as gray --encode gpu does
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: nvjpeg_batch_probe DIR [BATCH=16] [THREADS=4] [ROUNDS=2]\n");
    return 2;
  }
  const int batch = argc > 2 ? std::atoi(argv[2]) : 16;
  const int max_threads = argc > 3 ? std::atoi(argv[3]) : 4;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 2;
  CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));

  nvjpegHandle_t info_handle{};
  NVJ(nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, nullptr, nullptr, 0, &info_handle));
  std::vector<Jpeg> files;
  int max_w = 0, max_h = 0;
  double pixels = 0, bytes = 0;
  std::vector<std::filesystem::path> paths;
  for (const auto& e : std::filesystem::directory_iterator(argv[1]))
    if (e.path().extension() == ".jpg") paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    Jpeg j{p.filename().string(), {std::istreambuf_iterator<char>(in), {}}};
    if (!sequential_huffman(j.bytes)) continue;
    int comps = 0, w[NVJPEG_MAX_COMPONENT] = {}, h[NVJPEG_MAX_COMPONENT] = {};
    nvjpegChromaSubsampling_t css{};
    if (nvjpegGetImageInfo(info_handle, j.bytes.data(), j.bytes.size(), &comps, &css, w, h) != NVJPEG_STATUS_SUCCESS)
      continue;
    if (css == NVJPEG_CSS_411 || css == NVJPEG_CSS_410 || css == NVJPEG_CSS_UNKNOWN) continue;
    j.width = w[0];
    j.height = h[0];
    max_w = std::max(max_w, j.width);
    max_h = std::max(max_h, j.height);
    pixels += double(j.width) * j.height;
    bytes += double(j.bytes.size());
    files.push_back(std::move(j));
  }
  const std::size_t n = files.size();
  if (n == 0) {
    std::fprintf(stderr, "no baseline JPEGs in %s\n", argv[1]);
    return 1;
  }
  int major = 0, minor = 0, patch = 0;
  nvjpegGetProperty(MAJOR_VERSION, &major);
  nvjpegGetProperty(MINOR_VERSION, &minor);
  nvjpegGetProperty(PATCH_LEVEL, &patch);
  std::printf("nvjpeg_batch_probe on %s, nvJPEG %d.%d.%d: %zu baseline JPEGs from %s, %.2f Mpx and %.0f KB on average "
              "(largest %dx%d), batches of %d, %d rounds (the first not timed)\n",
              prop.name, major, minor, patch, n, argv[1], pixels / n / 1e6, bytes / n / 1e3, max_w, max_h, batch,
              rounds);

  const Variant variants[] = {{"default", false, false},
                              {"preallocated", false, true},
                              {"cached allocations", true, false},
                              {"cached + preallocated", true, true},
                              {"cached + encode", true, false, true}};
  {  // the stream-ordered pool keeps what is freed
    cudaMemPool_t pool{};
    CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
    std::uint64_t keep = UINT64_MAX;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  const std::size_t slot_bytes = std::size_t(max_w) * max_h;
  std::printf("%-22s %7s %10s %10s %12s %12s\n", "variant", "threads", "images/s", "Mpx/s", "ms a batch", "mismatches");
  bool first_variant = true;
  for (const Variant& v : variants) {
    nvjpegHandle_t hw{};
    std::size_t free_before = 0, free_after = 0, total = 0;
    CHECK(cudaMemGetInfo(&free_before, &total));
    Allocations allocations;
    allocations.cached = v.cached_allocations;
    nvjpegDevAllocatorV2_t device_allocator{device_malloc, device_free, &allocations};
    nvjpegPinnedAllocatorV2_t pinned_allocator{pinned_malloc, pinned_free, &allocations};
    if (nvjpegCreateExV2(NVJPEG_BACKEND_HARDWARE, &device_allocator, &pinned_allocator, 0, &hw) !=
        NVJPEG_STATUS_SUCCESS) {
      std::printf("%-22s no hardware backend\n", v.name);
      continue;
    }
    for (const int threads : max_threads > 1 ? std::vector<int>{1, max_threads} : std::vector<int>{1}) {
      // A counter of files per round: a thread that overshoots one round takes nothing of the next.
      std::vector<std::atomic<std::size_t>> next(static_cast<std::size_t>(rounds));
      std::atomic<long> mismatches{0};
      double t0 = 0;
      std::atomic<int> at_start{0};
      std::vector<std::thread> pool;
      std::vector<double> ended(threads, 0.0), batch_ms(threads, 0.0);
      std::vector<int> batches(threads, 0);
      for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          CHECK(cudaSetDevice(0));
          cudaStream_t st{};
          CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
          nvjpegJpegState_t state{};
          NVJ(nvjpegJpegStateCreate(hw, &state));
          NVJ(nvjpegDecodeBatchedInitialize(hw, state, batch, 1, NVJPEG_OUTPUT_Y));
          if (v.preallocate)
            NVJ(nvjpegDecodeBatchedPreAllocate(hw, state, batch, max_w, max_h, NVJPEG_CSS_444, NVJPEG_OUTPUT_Y));
          std::vector<nvjpegEncoderState_t> enc_states(v.encode ? batch : 0);
          std::vector<nvjpegEncoderParams_t> enc_params(v.encode ? batch : 0);
          for (int k = 0; v.encode && k < batch; ++k) {
            NVJ(nvjpegEncoderStateCreate(info_handle, &enc_states[k], st));
            NVJ(nvjpegEncoderParamsCreate(info_handle, &enc_params[k], st));
            NVJ(nvjpegEncoderParamsSetQuality(enc_params[k], 90, st));
            NVJ(nvjpegEncoderParamsSetSamplingFactors(enc_params[k], NVJPEG_CSS_GRAY, st));
          }
          std::vector<unsigned char> encoded;
          if (t == 0 && v.preallocate) {
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemGetInfo(&free_after, &total));
          }
          unsigned char* d_out{};
          CHECK(cudaMalloc(&d_out, slot_bytes * batch));
          std::vector<unsigned char> host(slot_bytes * batch);
          for (int round = 0; round < rounds; ++round) {
            // Every thread starts a round together; the last round is timed.
            at_start.fetch_add(1);
            while (at_start.load() < threads * (round + 1)) std::this_thread::yield();
            if (t == 0 && round == rounds - 1) t0 = now_ms();
            const bool timed = round == rounds - 1;
            while (true) {
              const std::size_t base = next[std::size_t(round)].fetch_add(std::size_t(batch));
              if (base >= n) break;
              const std::size_t count = std::min<std::size_t>(batch, n - base);
              std::vector<const unsigned char*> data(count);
              std::vector<std::size_t> lengths(count);
              std::vector<nvjpegImage_t> out(count);
              for (std::size_t k = 0; k < count; ++k) {
                const Jpeg& j = files[base + k];
                data[k] = j.bytes.data();
                lengths[k] = j.bytes.size();
                out[k] = nvjpegImage_t{};
                out[k].channel[0] = d_out + k * slot_bytes;
                out[k].pitch[0] = std::size_t(j.width);
              }
              if (count != std::size_t(batch))
                NVJ(nvjpegDecodeBatchedInitialize(hw, state, int(count), 1, NVJPEG_OUTPUT_Y));
              const double b0 = now_ms();
              NVJ(nvjpegDecodeBatched(hw, state, data.data(), lengths.data(), out.data(), st));
              for (std::size_t k = 0; v.encode && k < count; ++k)
                NVJ(nvjpegEncodeYUV(info_handle, enc_states[k], enc_params[k], &out[k], NVJPEG_CSS_GRAY,
                                    files[base + k].width, files[base + k].height, st));
              CHECK(cudaStreamSynchronize(st));
              for (std::size_t k = 0; v.encode && k < count; ++k) {
                std::size_t len = 0;
                NVJ(nvjpegEncodeRetrieveBitstream(info_handle, enc_states[k], nullptr, &len, st));
                encoded.resize(len);
                NVJ(nvjpegEncodeRetrieveBitstream(info_handle, enc_states[k], encoded.data(), &len, st));
                CHECK(cudaStreamSynchronize(st));
              }
              if (timed) {
                batch_ms[t] += now_ms() - b0;
                ++batches[t];
              }
              if (count != std::size_t(batch)) NVJ(nvjpegDecodeBatchedInitialize(hw, state, batch, 1, NVJPEG_OUTPUT_Y));
              if (round == 0) {  // the check, outside the timed round
                CHECK(cudaMemcpy(host.data(), d_out, slot_bytes * count, cudaMemcpyDeviceToHost));
                for (std::size_t k = 0; k < count; ++k) {
                  Jpeg& j = files[base + k];
                  std::uint64_t sum = 0;
                  const unsigned char* p = host.data() + k * slot_bytes;
                  for (std::size_t i = 0; i < std::size_t(j.width) * j.height; ++i) sum += p[i];
                  if (first_variant && threads == 1) j.luma_sum = sum;
                  else if (sum != j.luma_sum) mismatches.fetch_add(1);
                }
              }
            }
          }
          ended[t] = now_ms();
          for (int k = 0; v.encode && k < batch; ++k) {
            nvjpegEncoderParamsDestroy(enc_params[k]);
            nvjpegEncoderStateDestroy(enc_states[k]);
          }
          CHECK(cudaFree(d_out));
          nvjpegJpegStateDestroy(state);
          CHECK(cudaStreamDestroy(st));
        });
      for (auto& th : pool) th.join();
      const double t1 = *std::max_element(ended.begin(), ended.end());
      double ms = 0;
      int count = 0;
      for (int t = 0; t < threads; ++t) {
        ms += batch_ms[t];
        count += batches[t];
      }
      const double s = (t1 - t0) / 1e3;
      std::printf("%-22s %7d %10.1f %10.0f %12.1f %12ld", v.name, threads, n / s, pixels / s / 1e6,
                  count ? ms / count : 0.0, mismatches.load());
      if (v.preallocate && free_after > 0)
        std::printf("   (device memory taken: %.0f MiB by the handle and %d state(s))",
                    double(free_before - free_after) / (1 << 20), threads);
      {
        const std::lock_guard lock(allocations.mutex);
        std::printf("   allocations so far: device %ld (%.0f ms), page-locked %ld, %ld new (%.0f MiB, %.0f ms)\n",
                    allocations.device_calls, allocations.device_ms, allocations.pinned_calls,
                    allocations.pinned_misses, allocations.pinned_bytes / (1 << 20), allocations.pinned_ms);
      }
      std::fflush(stdout);
    }
    first_variant = false;
    nvjpegDestroy(hw);
    for (const auto& [bytes, p] : allocations.free_pinned) cudaFreeHost(p);
  }
  nvjpegDestroy(info_handle);
  return 0;
}
