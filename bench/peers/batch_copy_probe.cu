// SPDX-License-Identifier: Apache-2.0
// Does CUDA's batched copy (cudaMemcpyBatchAsync, CUDA 12.8+) beat what the engine does
// today? Written the plain way (no streampipe code), every copy verified after its runs,
// the wall time of each variant (enqueue to completion, host clock after a synchronize)
// the median of the runs after a warm-up, one table and one JSON object per row:
//
//  pageable  64 items of 1920x1080x3 bytes from pageable memory to the device:
//            a cudaMemcpyAsync per item; one batch (each source access order); and the
//            engine's way, 16 threads copying items into a small ring of pinned blocks
//            that a stream per thread copies in.
//  tiny      20000 items of 4 KiB to the device, from pinned and from pageable memory:
//            a cudaMemcpyAsync per item; one batch; and the engine's batching, the items
//            packed into one pinned buffer by the host and copied in with one call.
//
//   batch_copy_probe [pageable|tiny|all] [runs=7]
#include "plain_cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Items {
  std::vector<const void*> src;
  std::vector<void*> dst;
  std::vector<std::size_t> bytes;
};

// Median of `runs` wall times of `body` (each ends synchronized) after one warm-up; poisons
// the device copy before each run and checks it after the last.
double time_runs(int runs, const std::function<void()>& poison, const std::function<void()>& body,
                 const std::function<bool()>& verify, bool& ok) {
  std::vector<double> ms;
  for (int r = 0; r <= runs; ++r) {
    poison();
    const double t0 = now_ms();
    body();
    const double t = now_ms() - t0;
    if (r > 0) ms.push_back(t);
  }
  ok = verify();
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void batch(const Items& it, cudaMemcpySrcAccessOrder order, cudaStream_t s) {
  cudaMemcpyAttributes attr{};
  attr.srcAccessOrder = order;
  attr.flags = cudaMemcpyFlagPreferOverlapWithCompute;
  std::size_t attr_index = 0;
  CHECK(cudaMemcpyBatchAsync(it.dst.data(), it.src.data(), it.bytes.data(), it.src.size(), &attr, &attr_index, 1, s));
}

void row(const char* experiment, const char* variant, std::size_t items, std::size_t bytes, double ms, bool ok) {
  const double gbps = static_cast<double>(bytes) / (ms * 1e6);
  std::printf("%-9s %-52s %8.2f ms %8.2f GB/s %7.2f us/item  %s\n", experiment, variant, ms, gbps,
              1000.0 * ms / static_cast<double>(items), ok ? "verified" : "MISMATCH");
  std::fprintf(stderr,
               "{\"experiment\": \"%s\", \"variant\": \"%s\", \"items\": %zu, \"bytes\": %zu, \"ms\": %.4f, "
               "\"gbps\": %.3f, \"verified\": %s}\n",
               experiment, variant, items, bytes, ms, gbps, ok ? "true" : "false");
}

// `count` items of `size` bytes at `host`, each to its own place in `device`.
Items items_of(const unsigned char* host, unsigned char* device, std::size_t count, std::size_t size) {
  Items it;
  for (std::size_t i = 0; i < count; ++i) {
    it.src.push_back(host + i * size);
    it.dst.push_back(device + i * size);
    it.bytes.push_back(size);
  }
  return it;
}

bool device_equals(const unsigned char* device, const unsigned char* want, std::size_t bytes) {
  std::vector<unsigned char> back(bytes);
  CHECK(cudaMemcpy(back.data(), device, bytes, cudaMemcpyDeviceToHost));
  return std::memcmp(back.data(), want, bytes) == 0;
}

void pageable(int runs) {
  constexpr std::size_t kItems = 64, kSize = 1920 * 1080 * 3, kTotal = kItems * kSize;
  std::vector<unsigned char> host(kTotal);
  for (std::size_t i = 0; i < kTotal; ++i) host[i] = static_cast<unsigned char>(i * 2654435761u >> 24);
  unsigned char* device = nullptr;
  CHECK(cudaMalloc(&device, kTotal));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const Items it = items_of(host.data(), device, kItems, kSize);
  const auto poison = [&] { CHECK(cudaMemset(device, 0xA5, kTotal)); };
  const auto verify = [&] { return device_equals(device, host.data(), kTotal); };
  bool ok = false;

  double ms = time_runs(runs, poison, [&] {
    for (std::size_t i = 0; i < kItems; ++i)
      CHECK(cudaMemcpyAsync(it.dst[i], it.src[i], kSize, cudaMemcpyHostToDevice, s));
    CHECK(cudaStreamSynchronize(s));
  }, verify, ok);
  row("pageable", "cudaMemcpyAsync per item, one stream", kItems, kTotal, ms, ok);

  const std::pair<cudaMemcpySrcAccessOrder, const char*> orders[] = {
      {cudaMemcpySrcAccessOrderStream, "cudaMemcpyBatchAsync, source in stream order"},
      {cudaMemcpySrcAccessOrderDuringApiCall, "cudaMemcpyBatchAsync, source read during the call"},
      {cudaMemcpySrcAccessOrderAny, "cudaMemcpyBatchAsync, source in any order"}};
  for (const auto& [order, name] : orders) {
    ms = time_runs(runs, poison, [&] {
      batch(it, order, s);
      CHECK(cudaStreamSynchronize(s));
    }, verify, ok);
    row("pageable", name, kItems, kTotal, ms, ok);
  }

  // The engine's way: threads stage items into pinned blocks (a ring of 2 per thread, 48 MiB
  // in all like the engine's default budget), each thread's stream copies its blocks in, and
  // a block is written again once the copy that read it has finished.
  constexpr int kThreads = 16, kPerThread = 2;
  std::vector<unsigned char*> blocks(kThreads * kPerThread);
  for (auto& b : blocks) CHECK(cudaMallocHost(reinterpret_cast<void**>(&b), kSize));
  std::vector<cudaStream_t> streams(kThreads);
  std::vector<cudaEvent_t> read(kThreads * kPerThread);
  for (auto& st : streams) CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  for (auto& e : read) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  ms = time_runs(runs, poison, [&] {
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        int turn = 0;
        for (std::size_t i = next++; i < kItems; i = next++, ++turn) {
          const int b = t * kPerThread + turn % kPerThread;
          CHECK(cudaEventSynchronize(read[b]));  // the block's previous copy has read it
          std::memcpy(blocks[b], it.src[i], kSize);
          CHECK(cudaMemcpyAsync(it.dst[i], blocks[b], kSize, cudaMemcpyHostToDevice, streams[t]));
          CHECK(cudaEventRecord(read[b], streams[t]));
        }
        CHECK(cudaStreamSynchronize(streams[t]));
      });
    for (auto& th : threads) th.join();
  }, verify, ok);
  row("pageable", "16 threads staging into a pinned ring, a stream each", kItems, kTotal, ms, ok);

  for (auto& b : blocks) CHECK(cudaFreeHost(b));
  for (auto& st : streams) CHECK(cudaStreamDestroy(st));
  for (auto& e : read) CHECK(cudaEventDestroy(e));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(device));
}

void tiny(int runs) {
  constexpr std::size_t kItems = 20000, kSize = 4096, kTotal = kItems * kSize;
  unsigned char* pinned = nullptr;
  CHECK(cudaMallocHost(reinterpret_cast<void**>(&pinned), kTotal));
  std::vector<unsigned char> pageable_host(kTotal);
  for (std::size_t i = 0; i < kTotal; ++i) pinned[i] = pageable_host[i] = static_cast<unsigned char>(i * 40503u >> 8);
  unsigned char* packed = nullptr;  // the engine's batch staging
  CHECK(cudaMallocHost(reinterpret_cast<void**>(&packed), kTotal));
  unsigned char* device = nullptr;
  CHECK(cudaMalloc(&device, kTotal));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const auto poison = [&] { CHECK(cudaMemset(device, 0xA5, kTotal)); };
  bool ok = false;

  for (const bool from_pinned : {true, false}) {
    const unsigned char* host = from_pinned ? pinned : pageable_host.data();
    const Items it = items_of(host, device, kItems, kSize);
    const auto verify = [&] { return device_equals(device, host, kTotal); };
    const std::string from = from_pinned ? "pinned: " : "pageable: ";
    double ms = time_runs(runs, poison, [&] {
      for (std::size_t i = 0; i < kItems; ++i)
        CHECK(cudaMemcpyAsync(it.dst[i], it.src[i], kSize, cudaMemcpyHostToDevice, s));
      CHECK(cudaStreamSynchronize(s));
    }, verify, ok);
    row("tiny", (from + "cudaMemcpyAsync per item").c_str(), kItems, kTotal, ms, ok);
    ms = time_runs(runs, poison, [&] {
      batch(it, cudaMemcpySrcAccessOrderStream, s);
      CHECK(cudaStreamSynchronize(s));
    }, verify, ok);
    row("tiny", (from + "one cudaMemcpyBatchAsync").c_str(), kItems, kTotal, ms, ok);
    ms = time_runs(runs, poison, [&] {
      for (std::size_t i = 0; i < kItems; ++i) std::memcpy(packed + i * kSize, it.src[i], kSize);
      CHECK(cudaMemcpyAsync(device, packed, kTotal, cudaMemcpyHostToDevice, s));
      CHECK(cudaStreamSynchronize(s));
    }, verify, ok);
    row("tiny", (from + "packed by the host into one pinned copy").c_str(), kItems, kTotal, ms, ok);
  }
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(device));
  CHECK(cudaFreeHost(packed));
  CHECK(cudaFreeHost(pinned));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "all";
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 7;
  if (which != "all" && which != "pageable" && which != "tiny") {
    std::fprintf(stderr, "usage: batch_copy_probe [pageable|tiny|all] [runs=7]\n");
    return 2;
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0;
  CHECK(cudaDriverGetVersion(&driver));
  std::printf("batch_copy_probe on %s (driver API %d), median of %d runs after a warm-up, host clock\n", prop.name,
              driver, runs);
  if (which == "all" || which == "pageable") pageable(runs);
  if (which == "all" || which == "tiny") tiny(runs);
  return 0;
}
