// SPDX-License-Identifier: Apache-2.0
// The engine's device set: its members, the start of its GPUs (found, judged worth starting,
// each started on a thread of its own and joined to the set when ready), and what each
// member is and did. engine.cpp's opening comment has the path of an item.

#include "engine_impl.hpp"

#include "streampipe/cuda/device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

namespace streampipe::pipeline {

using detail::clock_ms;
using detail::describe_exception;
using Member = detail::Member;

namespace {

// A start that stop_requested() ended: the engine is being destroyed.
struct StartStopped : std::exception {
  [[nodiscard]] const char* what() const noexcept override { return "its start was stopped: the engine is closing"; }
};

}  // namespace

Member& Engine::Impl::add_member(int device, bool simulated, int lanes) {
  auto m = std::make_unique<Member>();
  m->position = members.size();
  m->device = device;
  m->simulated = simulated;
  m->first_lane = lanes_numbered;
  m->lanes = lanes;
  m->depth = options.depth;
  lanes_numbered += lanes;
  m->report.device = device;
  m->report.simulated = simulated;
  m->report.lanes = lanes;
  m->report.name = member_name(*m);
  m->report.state = DeviceReport::State::starting;
  const std::size_t position =
      free_slots.add_member(m->slot_count(), detail::DeviceChoice::State::starting, m->gpu());
  if (position != m->position) throw std::logic_error("engine: members and free slots out of step");
  members.push_back(std::move(m));
  return *members.back();
}

detail::MemberBuild Engine::Impl::member_build() {
  return {.max_batch = options.batch_items, .use_graphs = options.use_graphs, .staging_bytes = options.staging_bytes,
          .device_memory = options.device_memory, .staging_memory = options.staging_memory, .now_ms = &clock_ms,
          .complete = [this](detail::Slot& slot, detail::LaneExecutor& executor) { complete(slot, executor); }};
}

std::string Engine::Impl::member_name(const Member& m) const {
  if (m.device == kCpuDevice) return "the CPU";
  if (m.simulated) return fmt::format("simulated GPU {}", m.device);
  return fmt::format("GPU {}", m.device);
}

detail::GpuStartFacts Engine::Impl::gpu_start_facts() const {
  detail::GpuStartFacts f;
  // In units of Item::work, like the CPU's measured latency.
  f.expected_work = static_cast<double>(options.expected_items);
  f.work_taken = work_taken;
  f.cpu_in_set = set.cpu;
  f.gpu_start_ms = options.gpu_start_ms;
  f.gpu_stop_ms = options.gpu_stop_ms;
  for (const auto& m : members)
    if (m->device != kCpuDevice && m->report.state == DeviceReport::State::ready) ++f.gpus_joined;
  if (set.cpu) {
    // Whatever kinds of work the CPU has run (a run may have none of kind 0): the slowest,
    // since the work left may all be of it.
    f.cpu_latency_ms = free_slots.choice().slowest_latency_ms(0);
    f.cpu_slots = members.front()->slot_count();
  }
  return f;
}

namespace {

// Why a GPU was not started, with the figures the judgement weighed.
std::string skip_reason(const detail::GpuStartFacts& f, double at_ms) {
  const std::string who =
      f.gpus_joined > 0 ? fmt::format("the CPU and {} GPU(s) finish", f.gpus_joined) : std::string("the CPU finishes");
  if (f.work_taken >= f.expected_work)
    return who + " the run sooner than a GPU pays for itself: every item was taken before it could start";
  return fmt::format("{} the run sooner than a GPU pays for itself: {:.2f} s of work left at {:.2f} s, a GPU's start "
                     "and tear-down count {:.2f} + {} x {:.2f} s",
                     who, detail::set_ms_left(f) / 1e3, at_ms / 1e3, f.gpu_start_ms / 1e3, 2 + f.gpus_joined,
                     f.gpu_stop_ms / 1e3);
}

}  // namespace

void Engine::Impl::start_gpus(const std::stop_token& stop_token) noexcept {
  // Each GPU's start, and the engine's count of those not done, ends here however it ends.
  const auto finish_search = [this](std::size_t not_started, const std::string& why) {
    bool none_left = false;
    {
      std::lock_guard lock(mutex);
      bool any_gpu = false;
      for (auto& m : members) {
        any_gpu = any_gpu || m->device != kCpuDevice;
        if (m->device != kCpuDevice && m->report.state == DeviceReport::State::starting) {
          m->report.state = DeviceReport::State::not_started;
          m->report.reason = why;
          none_left = free_slots.fail(m->position) == 0;
        }
      }
      if (set.find_gpus && !any_gpu) gpus_left_out = why;  // the search never ran: no member says it
      gpus_starting -= std::min(gpus_starting, not_started);
      judging_gpu_start = false;
      none_left = none_left || free_slots.choice().alive_count() == 0;
    }
    slot_freed.notify_all();
    start_changed.notify_all();
    if (none_left) set_fatal("no device of the set is left: " + why);
  };
  const auto judging = [this](bool on) {
    {
      std::lock_guard lock(mutex);
      judging_gpu_start = on;
    }
    start_changed.notify_all();
  };
  detail::GpuStart decision = detail::GpuStart::wait;
  detail::GpuStartFacts facts;
  double decided_ms = 0;
  const auto judge = [&] {
    std::unique_lock lock(mutex);
    start_changed.wait(lock, [&] {
      facts = gpu_start_facts();
      decision = detail::decide_gpu_start(facts);
      return stop_token.stop_requested() || stop.stopped() || decision != detail::GpuStart::wait;
    });
    decided_ms = clock_ms();
  };
  // After a GPU joined, the next is judged on the set's rate measured over a while (a
  // quarter of a start, within bounds: long enough for its first batches to come back).
  const auto judge_after_join = [&](const Member& joined) {
    const double window_ms = std::clamp(options.gpu_start_ms / 4, 20.0, 500.0);
    double since_ms = 0, work_then = 0;
    {
      std::unique_lock lock(mutex);
      since_ms = clock_ms();
      work_then = work_taken;
      while (!stop_token.stop_requested() && !stop.stopped() && clock_ms() - since_ms < window_ms &&
             work_taken < static_cast<double>(options.expected_items) &&
             joined.report.state == DeviceReport::State::ready)
        start_changed.wait_for(lock, std::chrono::milliseconds(10));
      facts = gpu_start_facts();
      decided_ms = clock_ms();
      if (decided_ms > since_ms && work_taken > work_then)
        facts.set_rate = (work_taken - work_then) / (decided_ms - since_ms);
      decision = detail::decide_gpu_start(facts);
    }
  };
  try {
    judge();
    if (stop_token.stop_requested() || decision == detail::GpuStart::skip) {
      // Without a driver there was no GPU to start: saying the run was too short would
      // suggest a longer one uses a GPU.
      finish_search(set.gpus.size() + (set.find_gpus ? 1 : 0),
                    stop_token.stop_requested() ? "the engine closed before it started"
                    : !set.simulated && !Device::driver_installed()
                        ? "no NVIDIA driver found: the run was on the CPU"
                        : skip_reason(facts, decided_ms));
      return;
    }
    judging(false);
    // CUDA starts here, on this thread, while the CPU's lanes already work.
    const int found = set.find_gpus ? Device::count() : 0;
    std::vector<Member*> starting;
    std::string none_found;
    {
      std::lock_guard lock(mutex);
      if (set.find_gpus) {
        for (int d = 0; d < found; ++d) add_member(d, false, options.lanes);
        gpus_starting += static_cast<std::size_t>(found);
        --gpus_starting;  // the search itself
        if (found == 0) {
          gpus_left_out = "no usable GPU: " + Device::unavailable_reason().value_or("none found");
          if (free_slots.choice().alive_count() == 0) none_found = gpus_left_out;
        }
      }
      for (auto& m : members)
        if (m->device != kCpuDevice) starting.push_back(m.get());
    }
    if (!none_found.empty()) set_fatal(none_found);
    start_changed.notify_all();
    // With the run's length known and the CPU in the set, the GPUs start one after another,
    // each judged against the work left at its turn: their set-ups partly serialize below
    // streampipe (docs/gray.md), so in parallel every GPU joins late, and one after
    // another the first joins sooner and a GPU that would not pay is never started.
    if (set.cpu && options.expected_items > 0) {
      for (std::size_t k = 0; k < starting.size(); ++k) {
        if (k > 0) {
          bool previous_joined = false;
          {
            std::lock_guard lock(mutex);
            previous_joined = starting[k - 1]->report.state == DeviceReport::State::ready;
            judging_gpu_start = true;
          }
          if (previous_joined)
            judge_after_join(*starting[k - 1]);
          else
            judge();
        }
        if (stop_token.stop_requested() || stop.stopped() || decision != detail::GpuStart::now) {
          finish_search(starting.size() - k, stop_token.stop_requested() || stop.stopped()
                                                 ? "the engine closed before it started"
                                                 : skip_reason(facts, decided_ms));
          return;
        }
        judging(false);
        start_gpu(*starting[k], stop_token);
      }
      return;
    }
    if (starting.size() == 1) {
      start_gpu(*starting.front(), stop_token);
      return;
    }
    std::vector<std::jthread> threads;
    threads.reserve(starting.size());
    for (Member* m : starting) threads.emplace_back([this, m, &stop_token] { start_gpu(*m, stop_token); });
  } catch (...) {
    finish_search(set.gpus.size() + (set.find_gpus ? 1 : 0), describe_exception(std::current_exception()));
  }
  judging(false);
}

void Engine::Impl::start_gpu(Member& m, const std::stop_token& stop_token) noexcept {
  const double t0 = clock_ms();
  double setup_ms = 0;
  std::string failure;
  try {
    const auto go_on = [&] {
      if (stop_token.stop_requested()) throw StartStopped();
    };
    detail::build_member(m, member_build());
    go_on();
    if (op.start_device) {
      std::optional<CurrentDeviceGuard> on_device;
      if (m.gpu()) on_device.emplace(Device(m.device));
      const double setup_t0 = clock_ms();
      m.state = op.start_device(
          DeviceStart{.device = m.device, .lanes = m.lanes, .stop_requested = [&] { return stop_token.stop_requested(); }});
      setup_ms = clock_ms() - setup_t0;
      go_on();
    }
  } catch (...) {
    failure = describe_exception(std::current_exception());
  }
  bool none_left = false;
  {
    std::lock_guard lock(mutex);
    m.report.start_ms = clock_ms() - t0;
    m.report.setup_ms = setup_ms;
    if (failure.empty()) {
      m.report.state = DeviceReport::State::ready;
      m.report.joined_ms = clock_ms();
      free_slots.join(m.position, m.slots);
      if (m.gpu()) ++gpus_ready;
      if (stop.stopped()) m.staging->stop();
    } else {
      m.report.state = DeviceReport::State::failed;
      m.report.reason = failure;
      none_left = free_slots.fail(m.position) == 0;
    }
    --gpus_starting;
  }
  slot_freed.notify_all();
  start_changed.notify_all();
  if (none_left) set_fatal(fmt::format("{} could not start: {}", m.report.name, failure));
}

std::vector<DeviceReport> Engine::Impl::reports() {
  std::lock_guard lock(mutex);
  std::vector<DeviceReport> out;
  out.reserve(members.size());
  for (const auto& m : members) {
    out.push_back(m->report);
    for (std::size_t k = 0; k < detail::DeviceChoice::kKinds; ++k)
      out.back().ms_per_unit[k] = free_slots.choice().latency_ms(m->position, k);
  }
  return out;
}

void Engine::Impl::stop_staging() {
  std::vector<detail::StagingPool*> pools;
  {
    std::lock_guard lock(mutex);
    for (const auto& m : members)
      if (m->staging && m->report.state == DeviceReport::State::ready) pools.push_back(m->staging.get());
  }
  for (auto* pool : pools) pool->stop();
}

namespace detail {

void release_members(std::vector<std::unique_ptr<Member>>& members) noexcept {
  // An operation's device state (nvJPEG's handles, say) may take long to release: the GPUs
  // in parallel, each on its own device.
  // A member with nothing to release is not made current: since CUDA 12 making a device
  // current creates its context, which for a GPU that never started costs the run's end as
  // much as a start's first step.
  const auto release = [](Member& m) noexcept {
    if (!m.state) return;
    try {
      std::optional<CurrentDeviceGuard> on_device;
      if (m.gpu()) on_device.emplace(Device(m.device));
      m.state.reset();
    } catch (...) {
      m.state.reset();  // without its device current: the state's own destructor copes
    }
  };
  std::size_t with_state = 0;
  for (const auto& m : members) with_state += m->state ? 1 : 0;
  if (with_state > 1) {
    try {
      std::vector<std::jthread> threads;
      for (auto& m : members)
        if (m->state) threads.emplace_back([&release, &m] { release(*m); });
    } catch (const std::system_error&) {
      // No thread to be had: what is left is released below, in order.
    }
  }
  for (auto& m : members) release(*m);
  members.clear();
}

}  // namespace detail
}  // namespace streampipe::pipeline
