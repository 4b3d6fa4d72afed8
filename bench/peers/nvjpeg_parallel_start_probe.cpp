// SPDX-License-Identifier: Apache-2.0
// Whether GPUs start in parallel, written the plain way (no streampipe): on N GPUs, each on a
// thread of its own, the steps gray's start takes - the context, nvJPEG's default and
// hardware-backend handles, the JPEG engines' count, four lane states of each backend - and
// then the same on one thread, GPU after GPU. Each step is printed with its start and end
// on one clock from the first thread's start, so that steps of different GPUs that wait for
// each other (a lock below the library) show as intervals that never overlap. The last
// lines compare the parallel start's wall time with the serial one's and say how much of
// each step's time ran beside another GPU's same step.
//
//   nvjpeg_parallel_start_probe [GPUS]     (default: every GPU)
#include "plain_nvjpeg.hpp"

#include <algorithm>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Span {
  int gpu = 0;
  std::string step;
  double start = 0, end = 0;
};

std::mutex spans_mutex;
std::vector<Span> spans;

// Runs `body` as step `what` of `gpu`, recording its span against `t0`.
template <typename Body>
void timed(int gpu, const char* what, double t0, Body body) {
  const double start = now_ms() - t0;
  body();
  const double end = now_ms() - t0;
  const std::lock_guard lock(spans_mutex);
  spans.push_back({gpu, what, start, end});
}

// Every handle of one GPU, released in the end by the thread that made them.
void start_gpu(int gpu, double t0) {
  nvjpegHandle_t general{}, hardware{};
  std::vector<nvjpegJpegState_t> states;
  timed(gpu, "context", t0, [&] {
    CHECK(cudaSetDevice(gpu));
    CHECK(cudaFree(nullptr));
  });
  timed(gpu, "nvJPEG handle, default backend", t0,
        [&] { NVJ(nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, nullptr, nullptr, 0, &general)); });
  const bool engines = nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, 0, &hardware) == NVJPEG_STATUS_SUCCESS;
  timed(gpu, "JPEG engines counted", t0, [&] {
    unsigned int n = 0, threads = 0;
    if (engines) (void)nvjpegGetHardwareDecoderInfo(hardware, &n, &threads);
  });
  timed(gpu, "4 lane states, default backend", t0, [&] {
    for (int k = 0; k < 4; ++k) {
      states.emplace_back();
      NVJ(nvjpegJpegStateCreate(general, &states.back()));
    }
  });
  if (engines)
    timed(gpu, "4 lane states, hardware backend", t0, [&] {
      for (int k = 0; k < 4; ++k) {
        states.emplace_back();
        NVJ(nvjpegJpegStateCreate(hardware, &states.back()));
      }
    });
  timed(gpu, "tear-down", t0, [&] {
    for (auto s : states) NVJ(nvjpegJpegStateDestroy(s));
    if (engines) NVJ(nvjpegDestroy(hardware));
    NVJ(nvjpegDestroy(general));
  });
}

// Of each step's time on any GPU, the share that ran while another GPU was in the same step.
double overlap_share(const std::string& step) {
  double total = 0, shared = 0;
  for (const Span& a : spans) {
    if (a.step != step) continue;
    total += a.end - a.start;
    double covered = 0;
    for (const Span& b : spans)
      if (b.step == step && b.gpu != a.gpu)
        covered = std::max(covered, std::min(a.end, b.end) - std::max(a.start, b.start));
    shared += std::max(0.0, covered);
  }
  return total > 0 ? shared / total : 0;
}

void print_spans(const char* title) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  std::printf("%s\n%5s  %-34s %10s %10s %9s\n", title, "GPU", "step", "start ms", "end ms", "ms");
  for (const Span& s : spans)
    std::printf("%5d  %-34s %10.1f %10.1f %9.1f\n", s.gpu, s.step.c_str(), s.start, s.end, s.end - s.start);
}

}  // namespace

int main(int argc, char** argv) {
  int count = 0;
  const double t_init = now_ms();
  CHECK(cudaGetDeviceCount(&count));
  std::printf("CUDA's initialization: %.1f ms; %d GPU(s)\n", now_ms() - t_init, count);
  const int gpus = argc > 1 ? std::min(count, std::atoi(argv[1])) : count;
  if (gpus < 1) {
    std::fprintf(stderr, "no GPU to start\n");
    return 1;
  }
  double t0 = now_ms();
  {
    std::vector<std::thread> threads;
    for (int g = 0; g < gpus; ++g) threads.emplace_back(start_gpu, g, t0);
    for (auto& t : threads) t.join();
  }
  const double parallel_ms = now_ms() - t0;
  print_spans("each GPU on its own thread:");
  std::printf("share of each step's time run beside another GPU's same step:\n");
  for (const char* step : {"context", "nvJPEG handle, default backend", "JPEG engines counted",
                           "4 lane states, default backend", "4 lane states, hardware backend", "tear-down"})
    std::printf("  %-34s %5.0f%%\n", step, 100 * overlap_share(step));
  spans.clear();
  // The contexts exist now: the serial run repeats nvJPEG's steps on warm contexts, the
  // parallel run's own second half, so compare the two without the context step.
  t0 = now_ms();
  for (int g = 0; g < gpus; ++g) start_gpu(g, t0);
  const double serial_ms = now_ms() - t0;
  print_spans("one thread, GPU after GPU (contexts already made):");
  std::printf("wall: %d GPU(s) in parallel %.1f ms (contexts included), one after another %.1f ms\n", gpus,
              parallel_ms, serial_ms);
  return 0;
}
