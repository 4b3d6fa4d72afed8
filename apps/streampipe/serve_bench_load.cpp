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
