// SPDX-License-Identifier: Apache-2.0
// A probe of the two things that bound the engine's stream experiments, written the plain
// way (no streampipe code), printing one JSON object per measurement:
//
//  ring   Pageable input staged through a ring of R pinned blocks by P threads while the
//         DMA engines copy each block in (and the result out to pinned memory). A block is
//         reused as soon as its H2D copy has finished (an event), so R sets how much pinned
//         staging is live: does a ring small enough to stay in the last-level cache let the
//         threads stage faster than a large one?
//  link   Pinned H2D of 64 images with their gray outputs copied back (1/3 of the bytes):
//         how much does the D2H traffic slow the H2D stream, and does it matter how the D2H
//         is issued (copy engine at once, after everything, or written by a kernel into
//         mapped host memory from a few blocks)?
//
//   staging_probe [ring|link|all] [runs=7]
#include "plain_cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <immintrin.h>

namespace {

void stream_copy(char* dst, const char* src, size_t n) {
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
  }
  _mm_sfence();
  std::memcpy(dst + i, src + i, n - i);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ---- ring ---------------------------------------------------------------------------------

struct RingConfig {
  size_t block = 8u << 20;   // bytes per staged chunk
  int ring = 8;              // pinned blocks reused round-robin
  int threads = 16;
  bool streaming = false;    // non-temporal stores into the staging
  bool dma = true;           // H2D each block, D2H the result into pinned output
  double out_fraction = 1.0; // D2H bytes per input byte
  int streams = 4;
};

struct RingBuffers {
  std::vector<char> src;  // pageable input, touched
  char* out = nullptr;    // pinned output
  char* dev = nullptr;    // device copy of everything
  size_t total = 0;
};

double run_ring(const RingConfig& c, RingBuffers& b, const std::vector<char*>& blocks,
                const std::vector<cudaEvent_t>& freed, const std::vector<cudaStream_t>& streams) {
  const size_t chunks = b.total / c.block;
  const size_t part = (c.block / c.threads + 4095) / 4096 * 4096;
  const size_t out_block = static_cast<size_t>(double(c.block) * c.out_fraction) / 256 * 256;
  std::vector<std::atomic<int>> copied(chunks);
  std::vector<std::atomic<int>> enqueued(chunks);
  for (size_t i = 0; i < chunks; ++i) copied[i] = 0, enqueued[i] = 0;
  std::barrier start(c.threads + 1);
  std::vector<std::thread> pool;
  for (int t = 0; t < c.threads; ++t)
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      for (size_t i = 0; i < chunks; ++i) {
        const size_t k = i % blocks.size();
        if (c.dma && i >= blocks.size()) {
          const size_t prev = i - blocks.size();
          while (enqueued[prev].load(std::memory_order_acquire) == 0) std::this_thread::yield();
          CHECK(cudaEventSynchronize(freed[k]));
        }
        const size_t off = size_t(t) * part;
        if (off < c.block) {
          const size_t n = std::min(part, c.block - off);
          if (c.streaming)
            stream_copy(blocks[k] + off, b.src.data() + i * c.block + off, n);
          else
            std::memcpy(blocks[k] + off, b.src.data() + i * c.block + off, n);
        }
        if (copied[i].fetch_add(1, std::memory_order_acq_rel) + 1 == c.threads) {
          if (c.dma) {
            cudaStream_t s = streams[i % streams.size()];
            CHECK(cudaMemcpyAsync(b.dev + i * c.block, blocks[k], c.block, cudaMemcpyHostToDevice, s));
            CHECK(cudaEventRecord(freed[k], s));
            if (out_block > 0)
              CHECK(cudaMemcpyAsync(b.out + i * out_block, b.dev + i * c.block, out_block, cudaMemcpyDeviceToHost, s));
          }
          enqueued[i].store(1, std::memory_order_release);
        }
      }
    });
  const double t0 = now_ms();
  start.arrive_and_wait();
  for (auto& th : pool) th.join();
  CHECK(cudaDeviceSynchronize());
  return now_ms() - t0;
}

void ring_probe(int runs) {
  RingBuffers b;
  b.total = size_t(800) << 20;
  b.src.assign(b.total, 0);
  for (size_t i = 0; i < b.total; i += 4096) b.src[i] = char(i >> 12);
  CHECK(cudaMallocHost(&b.out, b.total));
  std::memset(b.out, 0, b.total);
  CHECK(cudaMalloc(&b.dev, b.total));
  std::vector<cudaStream_t> streams(4);
  for (auto& s : streams) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int max_ring = 100;
  std::vector<char*> all_blocks(max_ring);
  for (auto& p : all_blocks) {
    CHECK(cudaMallocHost(&p, 8u << 20));
    std::memset(p, 0, 8u << 20);
  }
  std::vector<cudaEvent_t> freed(max_ring);
  for (auto& e : freed) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventBlockingSync));

  struct Case { const char* work; size_t block; double out; };
  for (const Case w : {Case{"arrays", 8u << 20, 1.0}, Case{"gray", 6220800, 1.0 / 3}}) {
    b.total = w.block * (w.block == (8u << 20) ? 100 : 64);
    for (const bool dma : {false, true})
      for (const bool streaming : {false, true})
        for (const int ring : {2, 3, 4, 6, 8, 12, 16, 32, 64}) {
          RingConfig c;
          c.block = w.block;
          c.ring = ring;
          c.streaming = streaming;
          c.dma = dma;
          c.out_fraction = w.out;
          std::vector<char*> blocks(all_blocks.begin(), all_blocks.begin() + ring);
          std::vector<double> ms;
          for (int r = 0; r < runs + 1; ++r) {
            const double t = run_ring(c, b, blocks, freed, streams);
            if (r > 0) ms.push_back(t);
          }
          std::printf("{\"probe\": \"ring\", \"work\": \"%s\", \"block_mib\": %.2f, \"ring\": %d, \"ring_mib\": %.0f, "
                      "\"threads\": %d, \"stores\": \"%s\", \"dma\": %s, \"in_mb\": %.0f, \"ms\": %.3f, "
                      "\"min_ms\": %.3f, \"max_ms\": %.3f, \"staging_gbps\": %.1f}\n",
                      w.work, double(c.block) / (1 << 20), ring, double(ring) * double(c.block) / (1 << 20),
                      c.threads, streaming ? "streaming" : "plain", dma ? "true" : "false", double(b.total) / 1e6,
                      median(ms), *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()),
                      double(b.total) / (median(ms) * 1e6));
          std::fflush(stdout);
        }
  }
}

// ---- link ---------------------------------------------------------------------------------

__global__ void write_mapped(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

void link_probe(int runs) {
  const int images = 64;
  const size_t in_bytes = 1920 * 1080 * 3, out_bytes = 1920 * 1080;
  char *h_in, *h_out, *d_in, *d_out, *h_out_mapped;
  CHECK(cudaMallocHost(&h_in, images * in_bytes));
  CHECK(cudaHostAlloc(&h_out, images * out_bytes, cudaHostAllocMapped));
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&h_out_mapped), h_out, 0));
  std::memset(h_in, 1, images * in_bytes);
  std::memset(h_out, 0, images * out_bytes);
  CHECK(cudaMalloc(&d_in, images * in_bytes));
  CHECK(cudaMalloc(&d_out, images * out_bytes));
  CHECK(cudaMemset(d_out, 7, images * out_bytes));
  std::vector<cudaStream_t> s(8);
  for (auto& x : s) CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  std::vector<cudaEvent_t> in_done(images);
  for (auto& e : in_done) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  cudaEvent_t start, stop, join;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

  // mode: 0 H2D alone; 1 D2H of image i after its H2D, one D2H stream; 2 four lanes, each
  // its own H2D+D2H in order (the engine's layout); 3 all D2H after all H2D; 4+ D2H written
  // by a kernel of `blocks` blocks into mapped host memory.
  auto measure = [&](int mode, int blocks, int lanes) {
    std::vector<double> ms;
    for (int r = 0; r < runs + 2; ++r) {
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaEventRecord(start, s[0]));
      for (auto& x : s) CHECK(cudaStreamWaitEvent(x, start, 0));
      for (int i = 0; i < images; ++i) {
        cudaStream_t h2d = mode == 2 || mode == 4 ? s[i % lanes] : s[0];
        CHECK(cudaMemcpyAsync(d_in + i * in_bytes, h_in + i * in_bytes, in_bytes, cudaMemcpyHostToDevice, h2d));
        if (mode == 1 || mode == 5) {
          CHECK(cudaEventRecord(in_done[i], h2d));
          CHECK(cudaStreamWaitEvent(s[1], in_done[i], 0));
        }
        if (mode == 1)
          CHECK(cudaMemcpyAsync(h_out + i * out_bytes, d_out + i * out_bytes, out_bytes, cudaMemcpyDeviceToHost, s[1]));
        if (mode == 2)
          CHECK(cudaMemcpyAsync(h_out + i * out_bytes, d_out + i * out_bytes, out_bytes, cudaMemcpyDeviceToHost, h2d));
        if (mode == 4)
          write_mapped<<<blocks, 256, 0, h2d>>>(reinterpret_cast<const uint4*>(d_out + i * out_bytes),
                                                reinterpret_cast<uint4*>(h_out_mapped + i * out_bytes), out_bytes / 16);
        if (mode == 5)
          write_mapped<<<blocks, 256, 0, s[1]>>>(reinterpret_cast<const uint4*>(d_out + i * out_bytes),
                                                 reinterpret_cast<uint4*>(h_out_mapped + i * out_bytes), out_bytes / 16);
      }
      if (mode == 3)
        for (int i = 0; i < images; ++i)
          CHECK(cudaMemcpyAsync(h_out + i * out_bytes, d_out + i * out_bytes, out_bytes, cudaMemcpyDeviceToHost, s[0]));
      for (size_t k = 1; k < s.size(); ++k) {
        CHECK(cudaEventRecord(join, s[k]));
        CHECK(cudaStreamWaitEvent(s[0], join, 0));
      }
      CHECK(cudaEventRecord(stop, s[0]));
      CHECK(cudaEventSynchronize(stop));
      CHECK(cudaGetLastError());
      float t = 0;
      CHECK(cudaEventElapsedTime(&t, start, stop));
      if (r >= 2) ms.push_back(t);
    }
    return ms;
  };
  struct Mode { int mode, blocks, lanes; const char* name; };
  const Mode modes[] = {
      {0, 0, 1, "H2D alone, one stream"},
      {1, 0, 1, "D2H after each H2D, one D2H stream"},
      {2, 0, 4, "4 lanes: H2D then D2H per image"},
      {2, 0, 8, "8 lanes: H2D then D2H per image"},
      {3, 0, 1, "all D2H after all H2D"},
      {4, 4, 4, "4 lanes: H2D then kernel writes mapped output, 4 blocks"},
      {4, 16, 4, "4 lanes: H2D then kernel writes mapped output, 16 blocks"},
      {4, 132, 4, "4 lanes: H2D then kernel writes mapped output, 132 blocks"},
      {5, 2, 1, "one writer stream, kernel writes mapped output, 2 blocks"},
      {5, 8, 1, "one writer stream, kernel writes mapped output, 8 blocks"},
      {5, 32, 1, "one writer stream, kernel writes mapped output, 32 blocks"},
  };
  // Alternate the modes over rounds so a drifting link shows in every mode alike.
  std::vector<std::vector<double>> all(std::size(modes));
  for (int round = 0; round < 3; ++round)
    for (size_t m = 0; m < std::size(modes); ++m) {
      auto ms = measure(modes[m].mode, modes[m].blocks, modes[m].lanes);
      all[m].insert(all[m].end(), ms.begin(), ms.end());
    }
  for (size_t m = 0; m < std::size(modes); ++m) {
    const double med = median(all[m]);
    std::printf("{\"probe\": \"link\", \"variant\": \"%s\", \"ms\": %.3f, \"min_ms\": %.3f, \"max_ms\": %.3f, "
                "\"h2d_gbps\": %.1f}\n",
                modes[m].name, med, *std::min_element(all[m].begin(), all[m].end()),
                *std::max_element(all[m].begin(), all[m].end()), double(images * in_bytes) / (med * 1e6));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "all";
  const int runs = argc > 2 ? std::atoi(argv[2]) : 7;
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("{\"device\": \"%s\"}\n", p.name);
  if (what == "link" || what == "all") link_probe(runs);
  if (what == "ring" || what == "all") ring_probe(runs);
  return 0;
}
