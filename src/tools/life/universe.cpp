// SPDX-License-Identifier: Apache-2.0
#include "streampipe/tools/life/universe.hpp"

#include "kernels.hpp"
#include "temporal.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/tools/life/bitpacked.hpp"
#include "streampipe/tools/life/random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace streampipe::tools::life {

namespace {
double host_now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

std::string_view to_string(Kernel kernel) noexcept {
  switch (kernel) {
    case Kernel::global_memory: return "global";
    case Kernel::shared_memory: return "shared";
    case Kernel::bit_packed: return "bitpacked";
  }
  return "?";
}

std::optional<Kernel> parse_kernel(std::string_view name) noexcept {
  if (name == "global" || name == "global_memory") return Kernel::global_memory;
  if (name == "shared" || name == "shared_memory") return Kernel::shared_memory;
  if (name == "bitpacked" || name == "bit_packed" || name == "bit-packed") return Kernel::bit_packed;
  return std::nullopt;
}

DeviceUniverse::DeviceUniverse(const Device& device, std::uint32_t width, std::uint32_t height, Kernel kernel)
    : device_(device), stream_(device), width_(width), height_(height), kernel_(kernel) {
  if (width == 0 || height == 0)
    throw std::invalid_argument(fmt::format("a universe needs at least one cell, not {}x{}", width, height));
  if (kernel_ == Kernel::bit_packed) {
    words_per_row_ = bitpacked::words_per_row(width);
    for (auto& b : words_) b = DeviceBuffer<std::uint64_t>(device, std::size_t{words_per_row_} * height);
    resident_warps_ = detail::bitpacked_resident_warps(device);
  } else {
    for (auto& b : bytes_) b = DeviceBuffer<std::uint8_t>(device, std::size_t{width} * height);
  }
}

std::size_t DeviceUniverse::state_bytes() const noexcept {
  return kernel_ == Kernel::bit_packed ? words_[0].bytes() : bytes_[0].bytes();
}

void DeviceUniverse::set_rows_per_thread(unsigned rows) {
  rows_per_thread_ = detail::checked_strip_rows(rows);
}

void DeviceUniverse::set_generations_per_launch(unsigned generations) {
  generations_per_launch_ = detail::checked_generations_per_launch(generations);
}

unsigned DeviceUniverse::generations_per_launch() const {
  return kernel_ == Kernel::bit_packed ? detail::temporal_generations(width_, generations_per_launch_) : 1;
}

void DeviceUniverse::upload(const Board& board) {
  const CurrentDeviceGuard on_device(device_);
  if (board.width != width_ || board.height != height_ || board.cells.size() != board.size())
    throw std::invalid_argument(fmt::format("a {}x{} board does not fit a {}x{} universe", board.width,
                                            board.height, width_, height_));
  const cudaStream_t s = stream_.handle();
  const int next = 1 - current_;
  if (kernel_ == Kernel::bit_packed) {
    StreamOrderedBuffer<std::uint8_t> staging(stream_.ref(), board.size());
    SP_CUDA_CHECK(cudaMemcpyAsync(staging.data(), board.cells.data(), board.size(), cudaMemcpyHostToDevice, s));
    detail::pack(stream_.ref(), staging.data(), words_[current_].data(), width_, height_);
    SP_CUDA_CHECK(cudaMemsetAsync(words_[next].data(), 0xff, words_[next].bytes(), s));
  } else {
    SP_CUDA_CHECK(cudaMemcpyAsync(bytes_[current_].data(), board.cells.data(), board.size(),
                                  cudaMemcpyHostToDevice, s));
    SP_CUDA_CHECK(cudaMemsetAsync(bytes_[next].data(), 0xff, bytes_[next].bytes(), s));
  }
  // The source is pageable and owned by the caller: finish the copy before returning.
  stream_.synchronize();
}

void DeviceUniverse::fill_random(std::uint64_t seed, double density) {
  const CurrentDeviceGuard on_device(device_);
  const std::uint64_t threshold = density_threshold(density);
  const std::uint64_t cells = std::uint64_t{width_} * height_;
  const cudaStream_t s = stream_.handle();
  const int next = 1 - current_;
  if (kernel_ == Kernel::bit_packed) {
    StreamOrderedBuffer<std::uint8_t> staging(stream_.ref(), cells);
    detail::fill_random_bytes(stream_.ref(), staging.data(), cells, seed, threshold);
    detail::pack(stream_.ref(), staging.data(), words_[current_].data(), width_, height_);
    SP_CUDA_CHECK(cudaMemsetAsync(words_[next].data(), 0xff, words_[next].bytes(), s));
  } else {
    detail::fill_random_bytes(stream_.ref(), bytes_[current_].data(), cells, seed, threshold);
    SP_CUDA_CHECK(cudaMemsetAsync(bytes_[next].data(), 0xff, bytes_[next].bytes(), s));
  }
}

void DeviceUniverse::enqueue_step() {
  const int next = 1 - current_;
  switch (kernel_) {
    case Kernel::global_memory:
      detail::step_global(stream_.ref(), bytes_[current_].data(), bytes_[next].data(), width_, height_);
      break;
    case Kernel::shared_memory:
      detail::step_shared(stream_.ref(), bytes_[current_].data(), bytes_[next].data(), width_, height_);
      break;
    case Kernel::bit_packed:
      if (detail::step_bitpacked(stream_.ref(), words_[current_].data(), words_[next].data(),
                                 {width_, height_, 1, resident_warps_, generations_per_launch_, rows_per_thread_}, 1,
                                 nullptr) != 1)
        throw std::logic_error("one generation took other than one launch");
      break;
  }
  current_ = next;
}

void DeviceUniverse::enqueue_population(std::uint64_t* slot) {
  static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
  auto* count = reinterpret_cast<unsigned long long*>(slot);
  SP_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof(*count), stream_.handle()));
  if (kernel_ == Kernel::bit_packed)
    detail::count_words(stream_.ref(), words_[current_].data(), words_[current_].size(), count);
  else
    detail::count_bytes(stream_.ref(), bytes_[current_].data(), bytes_[current_].size(), count);
}

void DeviceUniverse::step(std::uint64_t generations, bool record_population) {
  const CurrentDeviceGuard on_device(device_);
  if (record_population && logged_ + generations > counts_.size()) {
    // Growing reallocates: keep what is logged (the copy is ordered on this stream, and
    // the old buffer's cudaFree waits for it).
    DeviceBuffer<std::uint64_t> bigger(device_, std::max<std::size_t>(1024, 2 * (logged_ + generations)));
    if (logged_ > 0)
      SP_CUDA_CHECK(cudaMemcpyAsync(bigger.data(), counts_.data(), logged_ * sizeof(std::uint64_t),
                                    cudaMemcpyDeviceToDevice, stream_.handle()));
    stream_.synchronize();
    counts_ = std::move(bigger);
  }
  if (kernel_ == Kernel::bit_packed && !timing_) {
    // Several generations per launch, the populations counted by the same launches.
    unsigned long long* counts = nullptr;
    if (record_population) {
      counts = reinterpret_cast<unsigned long long*>(counts_.data() + logged_);
      SP_CUDA_CHECK(cudaMemsetAsync(counts, 0, generations * sizeof(std::uint64_t), stream_.handle()));
      logged_ += generations;
    }
    const detail::BitpackedShape shape{width_, height_, 1, resident_warps_, generations_per_launch_,
                                       rows_per_thread_};
    const std::uint64_t launches = detail::step_bitpacked(stream_.ref(), words_[current_].data(),
                                                          words_[1 - current_].data(), shape, generations, counts);
    if (launches % 2 == 1) current_ = 1 - current_;
    return;
  }
  for (std::uint64_t g = 0; g < generations; ++g) {
    if (!timing_) {
      enqueue_step();
      if (record_population) enqueue_population(counts_.data() + logged_++);
      continue;
    }
    const double begin = host_now_ms();
    const std::size_t first = 2 * pending_.size();
    while (step_events_.size() < first + 2) step_events_.emplace_back(device_);
    step_events_[first].record(stream_.ref());
    enqueue_step();
    if (record_population) enqueue_population(counts_.data() + logged_++);
    step_events_[first + 1].record(stream_.ref());
    pending_.push_back({begin, host_now_ms()});
  }
}

void DeviceUniverse::time_steps(bool on) {
  // Pending generations keep the anchor they were timed against.
  if (on && !timing_ && (!anchor_ || pending_.empty())) {
    const CurrentDeviceGuard on_device(device_);
    if (!anchor_) anchor_.emplace(device_);
    anchor_->record(stream_.ref());
    anchor_->synchronize();
    anchor_host_ms_ = host_now_ms();
  }
  timing_ = on;
}

std::vector<DeviceUniverse::StepTiming> DeviceUniverse::step_timings() {
  std::vector<StepTiming> out;
  if (pending_.empty()) return out;
  const CurrentDeviceGuard on_device(device_);
  stream_.synchronize();
  out.reserve(pending_.size());
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    const Event& start = step_events_[2 * i];
    const Event& end = step_events_[2 * i + 1];
    StepTiming t;
    t.enqueue_begin_ms = pending_[i].enqueue_begin_ms;
    t.enqueue_end_ms = pending_[i].enqueue_end_ms;
    t.compute_ms = elapsed(start, end).count();
    t.done_ms = anchor_host_ms_ + elapsed(*anchor_, end).count();
    out.push_back(t);
  }
  pending_.clear();
  return out;
}

std::vector<std::uint64_t> DeviceUniverse::populations() {
  std::vector<std::uint64_t> out(logged_);
  if (logged_ > 0)
    SP_CUDA_CHECK(cudaMemcpyAsync(out.data(), counts_.data(), logged_ * sizeof(std::uint64_t),
                                  cudaMemcpyDeviceToHost, stream_.handle()));
  stream_.synchronize();
  logged_ = 0;
  return out;
}

Board DeviceUniverse::download() {
  const CurrentDeviceGuard on_device(device_);
  Board board = Board::empty(width_, height_);
  const cudaStream_t s = stream_.handle();
  if (kernel_ == Kernel::bit_packed) {
    StreamOrderedBuffer<std::uint8_t> staging(stream_.ref(), board.size());
    detail::unpack(stream_.ref(), words_[current_].data(), staging.data(), width_, height_);
    SP_CUDA_CHECK(cudaMemcpyAsync(board.cells.data(), staging.data(), board.size(), cudaMemcpyDeviceToHost, s));
    stream_.synchronize();  // before `staging` is freed on the stream and `board` is returned
  } else {
    SP_CUDA_CHECK(cudaMemcpyAsync(board.cells.data(), bytes_[current_].data(), board.size(),
                                  cudaMemcpyDeviceToHost, s));
    stream_.synchronize();
  }
  return board;
}

std::uint64_t DeviceUniverse::population() {
  const CurrentDeviceGuard on_device(device_);
  StreamOrderedBuffer<std::uint64_t> count(stream_.ref(), 1);
  enqueue_population(count.data());
  std::uint64_t value = 0;
  SP_CUDA_CHECK(cudaMemcpyAsync(&value, count.data(), sizeof(value), cudaMemcpyDeviceToHost, stream_.handle()));
  stream_.synchronize();
  return value;
}

}  // namespace streampipe::tools::life
