// SPDX-License-Identifier: Apache-2.0
// A probe of what the events a lane records between its stages do to kernels that each fill
// a fraction of the GPU, written the plain way (no streampipe code). The chapter's 200 arrays
// x 1M float32 through a single-block 64-thread kernel, a stream per array (copy in, kernel,
// copy out), every stream waited for; one variant per way of recording events around the
// stages, printed as one JSON object each:
//
//   none          no events (the hand-written peer)
//   timed-4       the engine's four events: start, inputs in, computed, done, all timed
//   untimed-4     the same four events created with cudaEventDisableTiming
//   timed-ends    start and done timed, inputs in and computed untimed
//   timed-compute one timed event right after the kernel
//
// Does an event recorded right after a kernel hold the stream's hardware queue until the
// kernel ends (so lanes that share a queue run one kernel at a time)?
//
//   event_concurrency_probe [arrays=200] [runs=5]
#include "plain_cuda.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

__global__ void multiply_divide(const float* in, float* out, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    float x = in[i];
    for (int r = 0; r < 50; ++r) {
      x = x * 2.0f;
      x = x / 2.0f;
    }
    out[i] = x;
  }
}

enum class Events { none, timed4, untimed4, timed_ends, timed_compute };

struct Variant {
  const char* name;
  Events events;
};

}  // namespace

int main(int argc, char** argv) {
  const int arrays = argc > 1 ? std::atoi(argv[1]) : 200;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  constexpr int kElems = 1 << 20;
  constexpr size_t kBytes = kElems * sizeof(float);
  std::vector<cudaStream_t> streams(arrays);
  std::vector<float*> h_in(arrays), h_out(arrays), d_in(arrays), d_out(arrays);
  // Per stream: four timed events and four untimed ones.
  std::vector<cudaEvent_t> timed(4 * arrays), untimed(4 * arrays);
  for (int i = 0; i < arrays; ++i) {
    CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    CHECK(cudaMallocHost(&h_in[i], kBytes));
    CHECK(cudaMallocHost(&h_out[i], kBytes));
    CHECK(cudaMalloc(&d_in[i], kBytes));
    CHECK(cudaMalloc(&d_out[i], kBytes));
    for (int k = 0; k < kElems; ++k) h_in[i][k] = static_cast<float>(k % 1000) + static_cast<float>(i);
    for (int e = 0; e < 4; ++e) {
      CHECK(cudaEventCreateWithFlags(&timed[4 * i + e], e == 1 || e == 3 ? cudaEventBlockingSync : 0));
      CHECK(cudaEventCreateWithFlags(&untimed[4 * i + e], cudaEventDisableTiming));
    }
  }
  const Variant variants[] = {{"none", Events::none},
                              {"timed-4", Events::timed4},
                              {"untimed-4", Events::untimed4},
                              {"timed-ends", Events::timed_ends},
                              {"timed-compute", Events::timed_compute}};
  for (int round = 0; round < 2; ++round) {  // the first round warms up
    for (const Variant& v : variants) {
      std::vector<double> ms;
      for (int run = 0; run < runs; ++run) {
        for (int i = 0; i < arrays; ++i) std::fill(h_out[i], h_out[i] + kElems, -1.0f);
        const double t0 = now_ms();
        for (int i = 0; i < arrays; ++i) {
          cudaStream_t s = streams[i];
          cudaEvent_t* t = &timed[4 * i];
          cudaEvent_t* u = &untimed[4 * i];
          const auto record = [&](int e, bool timed_one) {
            CHECK(cudaEventRecord(timed_one ? t[e] : u[e], s));
          };
          if (v.events == Events::timed4) record(0, true);
          if (v.events == Events::untimed4) record(0, false);
          if (v.events == Events::timed_ends) record(0, true);
          CHECK(cudaMemcpyAsync(d_in[i], h_in[i], kBytes, cudaMemcpyHostToDevice, s));
          if (v.events == Events::timed4) record(1, true);
          if (v.events == Events::untimed4 || v.events == Events::timed_ends) record(1, false);
          multiply_divide<<<1, 64, 0, s>>>(d_in[i], d_out[i], kElems);
          CHECK(cudaGetLastError());
          if (v.events == Events::timed4 || v.events == Events::timed_compute) record(2, true);
          if (v.events == Events::untimed4 || v.events == Events::timed_ends) record(2, false);
          CHECK(cudaMemcpyAsync(h_out[i], d_out[i], kBytes, cudaMemcpyDeviceToHost, s));
          if (v.events == Events::timed4 || v.events == Events::timed_ends) record(3, true);
          if (v.events == Events::untimed4) record(3, false);
        }
        for (int i = 0; i < arrays; ++i) CHECK(cudaStreamSynchronize(streams[i]));
        ms.push_back(now_ms() - t0);
        for (int i = 0; i < arrays; ++i)
          for (int k = 0; k < kElems; k += 4099)
            if (h_out[i][k] != h_in[i][k]) {
              std::fprintf(stderr, "%s: array %d element %d is %g, want %g\n", v.name, i, k, h_out[i][k], h_in[i][k]);
              return 1;
            }
      }
      std::sort(ms.begin(), ms.end());
      if (round == 1)
        std::printf("{\"variant\": \"%s\", \"arrays\": %d, \"median_ms\": %.2f, \"min_ms\": %.2f, \"max_ms\": %.2f}\n",
                    v.name, arrays, ms[ms.size() / 2], ms.front(), ms.back());
    }
  }
  return 0;
}
