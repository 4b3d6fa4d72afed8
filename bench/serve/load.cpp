// SPDX-License-Identifier: Apache-2.0
#include "serve/load.hpp"

#include "streampipe/serving/mlp_reference.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <limits>
#include <mutex>
#include <span>
#include <thread>

namespace streampipe::bench::serve {

using serving::Clock;
using Ms = std::chrono::duration<double, std::milli>;

void InputPool::pin() {
  const std::size_t width = rows.empty() ? 0 : rows.front().size();
  pinned_rows = PinnedBuffer<float>(rows.size() * width);
  for (std::size_t r = 0; r < rows.size(); ++r)
    std::copy(rows[r].begin(), rows[r].end(), pinned_rows.begin() + static_cast<std::ptrdiff_t>(r * width));
}

std::span<const float> InputPool::input(std::size_t r) const {
  if (!pinned()) return rows[r];
  const std::size_t width = rows[r].size();
  return {pinned_rows.data() + r * width, width};
}

OutputRows::OutputRows(std::size_t count, std::size_t size, bool pinned) : size_(size) {
  if (pinned) {
    pinned_ = PinnedBuffer<float>(count * size);
    data_ = pinned_.data();
  } else {
    pageable_.resize(count * size);
    data_ = pageable_.data();
  }
}

serving::Request make_request(const InputPool& pool, std::size_t row, std::span<float> out) {
  serving::Request r{pool.input(row), out};
  r.pinned = pool.pinned();
  return r;
}

namespace {

// One client's counts, touched only by whoever completes its current request; merged once
// every client has stopped.
struct Tally {
  std::vector<std::size_t> windows;
  std::vector<double> latencies;
  std::size_t completed = 0, errors = 0, verified = 0, mismatched = 0;
  double worst = 0;
  std::string first_error;

  explicit Tally(std::size_t window_count) : windows(window_count, 0) {}

  // Counts a completed request; false when it failed.
  bool count(const serving::RequestResult& r, Clock::time_point submit, Clock::time_point done,
             const LoadResult& bounds, Clock::duration window) {
    ++completed;
    if (!r.ok()) {
      if (errors++ == 0) first_error = r.error;
      return false;
    }
    if (done >= bounds.measure_begin && done < bounds.measure_end) {
      const auto w = static_cast<std::size_t>((done - bounds.measure_begin) / window);
      if (w < windows.size()) ++windows[w];
      if (submit >= bounds.measure_begin) latencies.push_back(Ms(done - submit).count());
    }
    return true;
  }
  void verify(std::span<const float> out, std::span<const float> expected) {
    double e = 0;
    ++verified;
    if (!serving::mlp_output_matches(out, expected, 0.03, &e)) ++mismatched;
    worst = std::max(worst, e);
  }
  void merge_into(LoadResult& result, std::vector<std::size_t>& per_window) const {
    for (std::size_t w = 0; w < windows.size(); ++w) per_window[w] += windows[w];
    result.latency_ms.insert(result.latency_ms.end(), latencies.begin(), latencies.end());
    result.completed += completed;
    result.errors += errors;
    if (result.first_error.empty()) result.first_error = first_error;
    result.verified += verified;
    result.mismatched += mismatched;
    result.worst_error = std::max(result.worst_error, worst);
  }
};

std::size_t row_of(std::size_t client, std::size_t i, const InputPool& pool) {
  return (client * 7 + i) % pool.rows.size();
}

void poison(std::span<float> out) { std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN()); }

LoadResult run_threads(serving::DynamicBatcher& batcher, const InputPool& pool, const LoadOptions& o,
                       LoadResult result, Clock::duration window, std::vector<std::size_t>& per_window) {
  // Threads start before the clock does, so creating 256 of them is not measured.
  const auto start = result.measure_begin - window * o.warmup_windows;
  std::mutex mu;
  std::vector<std::thread> clients;
  clients.reserve(static_cast<std::size_t>(o.clients));
  const OutputRows outputs(static_cast<std::size_t>(o.clients), pool.expected.front().size(), pool.pinned());
  for (int c = 0; c < o.clients; ++c) {
    clients.emplace_back([&, c] {
      const std::span<float> out = outputs[static_cast<std::size_t>(c)];
      Tally tally(per_window.size());
      std::this_thread::sleep_until(start);
      for (std::size_t i = 0;; ++i) {
        const auto submit = Clock::now();
        if (submit >= result.measure_end) break;
        const std::size_t row = row_of(static_cast<std::size_t>(c), i, pool);
        const bool check = i % o.verify_every == 0;
        if (check) poison(out);
        const auto r = batcher.submit(make_request(pool, row, out)).get();
        if (tally.count(r, submit, Clock::now(), result, window) && check) tally.verify(out, pool.expected[row]);
      }
      std::lock_guard lock(mu);
      tally.merge_into(result, per_window);
    });
  }
  for (auto& t : clients) t.join();
  return result;
}

// Checks sampled outputs away from the lanes: a callback only copies the output and moves
// on. The comparison (~10 us for 4096 values) is the client's work; run in the callback it
// would sit on the batcher's critical path, which the thread-per-client model keeps off it.
class Verifier {
 public:
  Verifier(const InputPool& pool, std::size_t window_count) : pool_(pool), tally_(window_count) {
    thread_ = std::thread([this] { loop(); });
  }
  ~Verifier() { stop(); }
  Verifier(const Verifier&) = delete;
  Verifier& operator=(const Verifier&) = delete;

  void check(std::size_t row, std::span<const float> out) {
    std::vector<float> copy(out.begin(), out.end());
    std::lock_guard lock(mu_);
    queue_.emplace_back(row, std::move(copy));
  }
  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }
  // After stop().
  [[nodiscard]] const Tally& tally() const { return tally_; }

 private:
  // Polls every millisecond: a wake-up per check would cost the lanes a syscall each.
  void loop() {
    std::vector<std::pair<std::size_t, std::vector<float>>> work;
    for (bool last = false; !last;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      {
        std::lock_guard lock(mu_);
        last = stopping_;
        work.swap(queue_);
      }
      for (const auto& [row, out] : work) tally_.verify(out, pool_.expected[row]);
      work.clear();
    }
  }

  const InputPool& pool_;
  Tally tally_;
  std::mutex mu_;
  std::vector<std::pair<std::size_t, std::vector<float>>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

// Clients without threads: each completion submits the client's next request. The batcher
// runs the callbacks on its lanes (what one batch's callbacks submit is queued together).
class AsyncClients {
 public:
  AsyncClients(serving::DynamicBatcher& batcher, const InputPool& pool, const LoadOptions& o,
               const LoadResult& bounds, Clock::duration window)
      : batcher_(batcher), pool_(pool), options_(o), bounds_(bounds), window_(window),
        verifier_(pool, static_cast<std::size_t>(o.windows)),
        outputs_(static_cast<std::size_t>(o.clients), pool.expected.front().size(), pool.pinned()) {
    clients_.reserve(static_cast<std::size_t>(o.clients));
    for (int c = 0; c < o.clients; ++c)
      clients_.push_back(Client{static_cast<std::size_t>(c), outputs_[static_cast<std::size_t>(c)], 0, 0, {},
                                Tally(static_cast<std::size_t>(o.windows))});
  }

  void run(Clock::time_point start) {
    running_ = clients_.size();
    std::this_thread::sleep_until(start);
    for (auto& c : clients_) issue(c);
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return running_ == 0; });
    }
    verifier_.stop();
  }
  void merge_into(LoadResult& result, std::vector<std::size_t>& per_window) const {
    for (const auto& c : clients_) c.tally.merge_into(result, per_window);
    verifier_.tally().merge_into(result, per_window);
  }

 private:
  struct Client {
    std::size_t id;
    std::span<float> out;
    std::size_t i, row;
    Clock::time_point submit;
    Tally tally;
  };

  void issue(Client& c) {
    c.row = row_of(c.id, c.i, pool_);
    if (c.i % options_.verify_every == 0) poison(c.out);
    c.submit = Clock::now();
    batcher_.submit(make_request(pool_, c.row, c.out), [this, &c](serving::RequestResult&& r) { done(c, r); });
  }
  void done(Client& c, const serving::RequestResult& r) {
    const auto now = Clock::now();
    const bool ok = c.tally.count(r, c.submit, now, bounds_, window_);
    if (ok && c.i % options_.verify_every == 0) verifier_.check(c.row, c.out);
    ++c.i;
    // A failed request ends its client: resubmitting a refusal would call back at once.
    if (ok && now < bounds_.measure_end) {
      issue(c);
      return;
    }
    std::lock_guard lock(mu_);
    if (--running_ == 0) cv_.notify_all();
  }

  serving::DynamicBatcher& batcher_;
  const InputPool& pool_;
  const LoadOptions& options_;
  const LoadResult& bounds_;
  const Clock::duration window_;
  Verifier verifier_;
  OutputRows outputs_;
  std::vector<Client> clients_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t running_ = 0;
};

}  // namespace

LoadResult run_closed_loop(serving::DynamicBatcher& batcher, const InputPool& pool, const LoadOptions& o) {
  const auto window = std::chrono::duration_cast<Clock::duration>(Ms(o.window_ms));
  const auto lead = o.model == ClientModel::sync
                        ? std::chrono::milliseconds(20) + std::chrono::microseconds(50) * o.clients
                        : std::chrono::microseconds(std::chrono::milliseconds(20));
  const auto start = Clock::now() + lead;
  LoadResult result;
  result.measure_begin = start + window * o.warmup_windows;
  result.measure_end = result.measure_begin + window * o.windows;
  std::vector<std::size_t> per_window(static_cast<std::size_t>(o.windows), 0);
  if (o.model == ClientModel::sync) {
    result = run_threads(batcher, pool, o, std::move(result), window, per_window);
  } else {
    AsyncClients clients(batcher, pool, o, result, window);
    clients.run(start);
    clients.merge_into(result, per_window);
  }
  for (const std::size_t n : per_window) result.window_qps.push_back(static_cast<double>(n) / (o.window_ms / 1e3));
  return result;
}

OpenLoopResult run_open_loop(serving::DynamicBatcher& batcher, const InputPool& pool, double rate, std::size_t slots,
                             const LoadOptions& o) {
  const auto window = std::chrono::duration_cast<Clock::duration>(Ms(o.window_ms));
  const auto interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
  const auto start = Clock::now() + std::chrono::milliseconds(10);
  OpenLoopResult result;
  LoadResult& load = result.load;
  load.measure_begin = start + window * o.warmup_windows;
  load.measure_end = load.measure_begin + window * o.windows;
  const OutputRows outputs(slots, pool.expected.front().size(), pool.pinned());

  struct InFlight {
    std::size_t index, slot, row;
    std::future<serving::RequestResult> future;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<InFlight> in_flight;
  bool done = false;
  std::atomic<std::size_t> collected{0};
  std::vector<std::size_t> per_window(static_cast<std::size_t>(o.windows), 0);

  Tally tally(per_window.size());
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
      if (r.status == serving::RequestStatus::queue_full) {
        ++tally.completed;
        ++result.rejected;
      } else if (tally.count(r, r.submitted, r.completed, load, window) && f.index % o.verify_every == 0) {
        tally.verify(outputs[f.slot], pool.expected[f.row]);
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
    const std::span<float> out = outputs[slot];
    poison(out);
    auto future = batcher.submit(make_request(pool, row, out));
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
  tally.merge_into(load, per_window);
  for (const std::size_t n : per_window) load.window_qps.push_back(static_cast<double>(n) / (o.window_ms / 1e3));
  return result;
}

}  // namespace streampipe::bench::serve
