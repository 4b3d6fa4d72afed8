// SPDX-License-Identifier: Apache-2.0
// A lane on the host backend: a thread that performs the slot's copies with memcpy and runs
// the operation's host form. Slots complete in the order they were enqueued, as on a stream.

#include "engine_thread.hpp"
#include "lane_executor.hpp"

#include <fmt/format.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

namespace streampipe::pipeline::detail {
namespace {

class HostLane final : public LaneExecutor {
 public:
  // Throws std::system_error naming the lane when its thread cannot start (a process limit).
  explicit HostLane(const LaneConfig& config)
      : config_(config),
        done_(static_cast<std::size_t>(config.slots), 0),
        inputs_done_(static_cast<std::size_t>(config.slots), 0) {
    try {
      thread_ = std::thread([this] { loop(); });
    } catch (const std::system_error& e) {
      throw std::system_error(e.code(), fmt::format("cannot start the thread of host lane {}", config.lane));
    }
  }

  ~HostLane() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  void enqueue(SlotWork& work) override {
    const double t0 = config_.now_ms();
    if (!work.op->host) {
      work.error = std::make_exception_ptr(std::logic_error(
          "operation '" + work.op->name + "' has no host form, so it cannot run on the CPU's lanes"));
      work.error_in_operation = true;
      work.must_wait = false;
      return;
    }
    {
      std::lock_guard lock(mutex_);
      done_.at(static_cast<std::size_t>(work.slot)) = 0;
      inputs_done_.at(static_cast<std::size_t>(work.slot)) = 0;
      queue_.push_back(&work);
    }
    work.must_wait = true;
    work.inputs_fenced = true;
    cv_.notify_all();
    work.enqueue_ms = config_.now_ms() - t0;
  }

  void wait(SlotWork& work) override {
    if (!work.must_wait) return;
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return done_.at(static_cast<std::size_t>(work.slot)) != 0; });
  }

  void wait_inputs(int slot) override {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return inputs_done_.at(static_cast<std::size_t>(slot)) != 0; });
  }

 private:
  void loop() {
    for (;;) {
      SlotWork* work = nullptr;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        work = queue_.front();
        queue_.pop_front();
      }
      run(*work);
      signal(done_, work->slot);
    }
  }

  // Sets a slot's flag and wakes whoever waits for it.
  void signal(std::vector<int>& flags, int slot) {
    {
      std::lock_guard lock(mutex_);
      flags.at(static_cast<std::size_t>(slot)) = 1;
    }
    cv_.notify_all();
  }

  void run(SlotWork& w) {
    if (in_.size() < w.in_bytes) in_.resize(w.in_bytes);
    if (out_.size() < w.out_bytes) out_.resize(w.out_bytes);
    w.h2d_start_ms = config_.now_ms();
    for (const auto& c : w.copies_in) std::memcpy(in_.data() + c.offset, c.src, c.bytes);
    signal(inputs_done_, w.slot);
    w.h2d_end_ms = config_.now_ms();
    const Batch batch(in_.data(), w.in_bytes, out_.data(), w.out_bytes, w.descriptors, nullptr,
                      config_.lane, config_.device, std::nullopt, w.indices, config_.member_lane,
                      device_state_of(config_));
    try {
      // The host form may not wait on its engine: this lane's slot is not done.
      const EngineThreadMark mark(nullptr);
      w.op->host(batch);
    } catch (...) {
      w.error = std::current_exception();
      w.error_in_operation = true;
    }
    w.compute_end_ms = config_.now_ms();
    if (!w.error)
      for (const auto& c : w.copies_out) std::memcpy(c.dst, out_.data() + c.offset, c.bytes);
    w.d2h_end_ms = config_.now_ms();
  }

  LaneConfig config_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<SlotWork*> queue_;
  std::vector<int> done_;
  std::vector<int> inputs_done_;  // the slot's copies in have read host memory
  bool stopping_ = false;
  std::vector<std::byte> in_, out_;  // the "device" memory of this lane
  std::thread thread_;
};

}  // namespace

std::unique_ptr<LaneExecutor> make_host_lane(const LaneConfig& config) {
  return std::make_unique<HostLane>(config);
}

}  // namespace streampipe::pipeline::detail
