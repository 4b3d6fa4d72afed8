#include "serve_bench_load.hpp"

#include "streampipe/batching/mlp_reference.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <mutex>
#include <thread>

namespace streampipe::cli::serve {

using batching::Clock;

LoadResult run_closed_loop(batching::DynamicBatcher& batcher, const InputPool& pool, const LoadOptions& o) {
  using Ms = std::chrono::duration<double, std::milli>;
  const auto window = std::chrono::duration_cast<Clock::duration>(Ms(o.window_ms));
  // Threads start before the clock does, so creating 256 of them is not measured.
  const auto start = Clock::now() + std::chrono::milliseconds(20) + std::chrono::microseconds(50) * o.clients;
  LoadResult result;
  result.measure_begin = start + window * o.warmup_windows;
  result.measure_end = result.measure_begin + window * o.windows;
  std::vector<std::size_t> per_window(static_cast<std::size_t>(o.windows), 0);
  std::mutex mu;

  std::vector<std::thread> clients;
  clients.reserve(static_cast<std::size_t>(o.clients));
  for (int c = 0; c < o.clients; ++c) {
    clients.emplace_back([&, c] {
      const std::size_t out_size = pool.expected.front().size();
      std::vector<float> out(out_size);
      std::vector<std::size_t> windows(per_window.size(), 0);
      std::vector<double> latencies;
      std::size_t completed = 0, errors = 0, verified = 0, mismatched = 0;
      double worst = 0;
      std::string first_error;
      std::this_thread::sleep_until(start);
      for (std::size_t i = 0;; ++i) {
        const auto submit = Clock::now();
        if (submit >= result.measure_end) break;
        const std::size_t row = (static_cast<std::size_t>(c) * 7 + i) % pool.rows.size();
        std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
        const auto r = batcher.submit(batching::Request{pool.rows[row], out}).get();
        const auto done = Clock::now();
        ++completed;
        if (!r.ok()) {
          if (errors++ == 0) first_error = r.error;
          continue;
        }
        if (done >= result.measure_begin && done < result.measure_end) {
          const auto w = static_cast<std::size_t>((done - result.measure_begin) / window);
          if (w < windows.size()) ++windows[w];
          if (submit >= result.measure_begin) latencies.push_back(Ms(done - submit).count());
        }
        if (i % o.verify_every == 0) {
          double e = 0;
          ++verified;
          if (!batching::mlp_output_matches(out, pool.expected[row], 0.03, &e)) ++mismatched;
          worst = std::max(worst, e);
        }
      }
      std::lock_guard lock(mu);
      for (std::size_t w = 0; w < windows.size(); ++w) per_window[w] += windows[w];
      result.latency_ms.insert(result.latency_ms.end(), latencies.begin(), latencies.end());
      result.completed += completed;
      result.errors += errors;
      if (result.first_error.empty()) result.first_error = first_error;
      result.verified += verified;
      result.mismatched += mismatched;
      result.worst_error = std::max(result.worst_error, worst);
    });
  }
  for (auto& t : clients) t.join();
  for (const std::size_t n : per_window) result.window_qps.push_back(static_cast<double>(n) / (o.window_ms / 1e3));
  return result;
}

}  // namespace streampipe::cli::serve

#include <condition_variable>
#include <deque>
#include <future>

namespace streampipe::cli::serve {

OpenLoopResult run_open_loop(batching::DynamicBatcher& batcher, const InputPool& pool, double rate, std::size_t slots,
                             const LoadOptions& o) {
  using Ms = std::chrono::duration<double, std::milli>;
  const auto window = std::chrono::duration_cast<Clock::duration>(Ms(o.window_ms));
  const auto interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
  const auto start = Clock::now() + std::chrono::milliseconds(10);
  OpenLoopResult result;
  LoadResult& load = result.load;
  load.measure_begin = start + window * o.warmup_windows;
  load.measure_end = load.measure_begin + window * o.windows;
  const std::size_t out_size = pool.expected.front().size();
  std::vector<std::vector<float>> outputs(slots, std::vector<float>(out_size));

  struct InFlight {
    std::size_t index, slot, row;
    std::future<batching::RequestResult> future;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<InFlight> in_flight;
  bool done = false;
  std::atomic<std::size_t> collected{0};
  std::vector<std::size_t> per_window(static_cast<std::size_t>(o.windows), 0);

  std::thread collector([&] {
    for (;;) {
      InFlight f;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return !in_flight.empty() || done; });
        if (in_flight.empty()) return;
        f = std::move(in_flight.front());
        in_flight.pop_front();
      }
      const auto r = f.future.get();
      ++load.completed;
      if (r.status == batching::RequestStatus::queue_full) {
        ++result.rejected;
      } else if (!r.ok()) {
        if (load.errors++ == 0) load.first_error = r.error;
      } else {
        if (r.completed >= load.measure_begin && r.completed < load.measure_end) {
          const auto w = static_cast<std::size_t>((r.completed - load.measure_begin) / window);
          if (w < per_window.size()) ++per_window[w];
          if (r.submitted >= load.measure_begin) load.latency_ms.push_back(Ms(r.completed - r.submitted).count());
        }
        if (f.index % o.verify_every == 0) {
          double e = 0;
          ++load.verified;
          if (!batching::mlp_output_matches(outputs[f.slot], pool.expected[f.row], 0.03, &e)) ++load.mismatched;
          load.worst_error = std::max(load.worst_error, e);
        }
      }
      collected.fetch_add(1, std::memory_order_release);
    }
  });

  std::size_t index = 0;
  for (auto due = start; due < load.measure_end; due += interval, ++index) {
    const auto now = Clock::now();
    if (due - now > std::chrono::microseconds(200)) std::this_thread::sleep_until(due - std::chrono::microseconds(100));
    while (Clock::now() < due) std::this_thread::yield();
    // Slots are used in order and collected in order: slot sent % slots is free once the
    // request `slots` earlier has been collected.
    if (result.sent - collected.load(std::memory_order_acquire) >= slots) {
      ++result.dropped;  // every output buffer is in flight: the client cannot keep the schedule
      continue;
    }
    const std::size_t slot = result.sent % slots;
    const std::size_t row = index % pool.rows.size();
    auto& out = outputs[slot];
    std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
    auto future = batcher.submit(batching::Request{pool.rows[row], out});
    ++result.sent;
    {
      std::lock_guard lock(mu);
      in_flight.push_back({result.sent - 1, slot, row, std::move(future)});
    }
    cv.notify_one();
  }
  {
    std::lock_guard lock(mu);
    done = true;
  }
  cv.notify_one();
  collector.join();
  for (const std::size_t n : per_window) load.window_qps.push_back(static_cast<double>(n) / (o.window_ms / 1e3));
  return result;
}

}  // namespace streampipe::cli::serve
