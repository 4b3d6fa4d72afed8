// SPDX-License-Identifier: Apache-2.0
// The batching lesson: many clients, each sending one small request, are served far better
// by grouping their requests into batches than by running them one at a time. Eight client
// threads submit requests to a DynamicBatcher; on a GPU the model is a bf16 MLP (cuBLASLt)
// with a CUDA graph per batch-size bucket, reading and writing the pinned staging itself
// (mapped I/O); without one it runs on the host. Then the same clients without threads:
// each request's completion callback submits the client's next one; on a GPU they pin their
// buffers, so the model's kernels read and write them in place. At the end: the batches that
// formed, and the trtexec-style latency report of the threaded clients.

#include "streampipe/serving/batcher.hpp"
#include "streampipe/serving/host_executor.hpp"
#include "streampipe/serving/mlp_reference.hpp"
#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/report/latency_report.hpp"
#if defined(STREAMPIPE_HAVE_CUBLAS)
#include "streampipe/serving/gpu_executor.hpp"
#include "streampipe/serving/mlp_model.hpp"
#endif

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <random>
#include <thread>
#include <vector>

using namespace streampipe;
using namespace streampipe::serving;

int main() {
  const auto weights = make_mlp_weights({512, 1024, 1024, 256}, 1);
  const std::size_t in = weights.input_size(), out = weights.output_size();

  std::unique_ptr<BatchExecutor> executor;
  bool on_gpu = false;
#if defined(STREAMPIPE_HAVE_CUBLAS)
  std::unique_ptr<MlpModel> model;
  if (Device::count() > 0) {
    const Device gpu(0);
    model = std::make_unique<MlpModel>(gpu, weights);
    executor = std::make_unique<GpuExecutor>(
        gpu, *model, GpuExecutorOptions{2, true, report::SyncMode::blocking, BatchIo::mapped});
    on_gpu = true;
  }
#endif
  if (!executor) {
    fmt::print("no GPU: the model runs on the host\n");
    executor = std::make_unique<HostExecutor>(in, out, 2, [&](std::span<const float> x, std::span<float> y, std::size_t rows) {
      for (std::size_t r = 0; r < rows; ++r) mlp_reference(weights, x.subspan(r * in, in), y.subspan(r * out, out));
    });
  }

  BatcherOptions options;
  options.policy.max_batch_size = 32;                                // buckets 1, 2, 4, 8, 16, 32
  options.policy.max_queue_delay = std::chrono::microseconds(200);   // wait this long for company
  options.max_queue_size = 256;
  options.record_queries = true;
  DynamicBatcher batcher(*executor, options);  // captures a plan per bucket (the warm-up)

  constexpr int kClients = 8, kRequests = 200;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> clients;
  std::atomic<int> wrong{0};
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      std::mt19937 rng(static_cast<unsigned>(c));
      std::uniform_real_distribution<float> value(-1, 1);
      std::vector<float> x(in), y(out), want(out);
      for (int i = 0; i < kRequests; ++i) {
        for (auto& v : x) v = value(rng);
        const RequestResult r = batcher.submit(Request{x, y}).get();
        if (!r.ok()) {
          fmt::print("request failed: {}\n", r.error);
          ++wrong;
          continue;
        }
        if (i % 50 == 0) {  // check a sample against the CPU reference
          mlp_reference(weights, x, want);
          if (!mlp_output_matches(y, want)) ++wrong;
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto records = batcher.take_records();

  // The same load from asynchronous clients: no thread waits for a request; the callback
  // (run on the lane that completed it) checks it and submits the client's next one.
  struct AsyncClient {
    std::vector<float> x, y;
    int left = kRequests;
  };
  std::vector<AsyncClient> async_clients(kClients, AsyncClient{std::vector<float>(in, 0.5f), std::vector<float>(out)});
  // Page-locked in place (cudaHostRegister) and marked pinned: no copy through the batcher's
  // staging. The registrations outlive every request (shutdown() comes first).
  std::vector<HostRegistration> pinned;
  if (on_gpu)
    for (auto& a : async_clients) {
      pinned.emplace_back(std::span<float>(a.x));
      pinned.emplace_back(std::span<float>(a.y));
    }
  std::atomic<int> running{kClients};
  std::promise<void> all_done;
  std::function<void(AsyncClient&)> send = [&](AsyncClient& a) {
    Request request{a.x, a.y};
    request.pinned = on_gpu;
    batcher.submit(request, [&, client = &a](RequestResult&& r) {
      if (!r.ok()) ++wrong;
      if (r.ok() && --client->left > 0) {
        send(*client);
        return;
      }
      if (--running == 0) all_done.set_value();
    });
  };
  const auto t1 = std::chrono::steady_clock::now();
  for (auto& a : async_clients) send(a);
  all_done.get_future().wait();
  const double async_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
  std::vector<float> want(out);
  mlp_reference(weights, async_clients.front().x, want);
  for (const auto& a : async_clients)
    if (!mlp_output_matches(a.y, want)) ++wrong;
  fmt::print("threaded clients: {:.0f} requests/s; asynchronous clients: {:.0f} requests/s\n",
             kClients * kRequests / (wall_ms / 1e3), kClients * kRequests / (async_ms / 1e3));
  batcher.shutdown();

  const BatcherStats stats = batcher.stats();
  fmt::print("{} requests in {} batches on {}:\n", stats.completed, stats.batches, executor->device_name());
  for (std::size_t b = 0; b < stats.buckets.size(); ++b)
    fmt::print("  bucket {:>3}: {} batches\n", stats.buckets[b], stats.batches_per_bucket[b]);
  fmt::print("  padding rows computed: {}\n", stats.padded_rows);

  report::LatencyRun run;
  run.name = "MLP 512-1024-1024-256, 8 clients";
  run.device = executor->device_name();
  run.sync = executor->sync_mode();
  run.wall_ms = wall_ms;
  run.queries = std::move(records);
  fmt::print("{}", report::format_report(run, report::summarize(run)));
  return wrong == 0 ? 0 : 1;
}
