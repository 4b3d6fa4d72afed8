// SPDX-License-Identifier: Apache-2.0
#include "streampipe/tools/life/batch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "kernels.hpp"
#include "temporal.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/tools/life/bitpacked.hpp"
#include "streampipe/tools/life/random.hpp"

namespace streampipe::tools::life {

UniverseBatch::UniverseBatch(const Device& device, std::uint32_t width, std::uint32_t height, std::uint32_t count)
    : device_(device),
      stream_(device),
      width_(width),
      height_(height),
      count_(count),
      board_words_(std::size_t{bitpacked::words_per_row(width)} * height) {
  if (width == 0 || height == 0 || count == 0)
    throw std::invalid_argument(
        fmt::format("a batch needs universes of at least one cell, not {} of {}x{}", count, width, height));
  // Refuses a batch the kernel cannot index before allocating it.
  (void)detail::plan_temporal(width, height, count, 1, 1);
  for (auto& b : words_) b = DeviceBuffer<std::uint64_t>(device, board_words_ * count);
  resident_warps_ = detail::bitpacked_resident_warps(device);
  const CurrentDeviceGuard on_device(device_);
  for (auto& b : words_) SP_CUDA_CHECK(cudaMemsetAsync(b.data(), 0, b.bytes(), stream_.handle()));
}

std::uint64_t* UniverseBatch::board(int buffer, std::uint32_t index) const {
  if (index >= count_) throw std::out_of_range(fmt::format("universe {} of a batch of {}", index, count_));
  return words_[buffer].data() + board_words_ * index;
}

void UniverseBatch::set_rows_per_thread(unsigned rows) { rows_per_thread_ = detail::checked_strip_rows(rows); }

void UniverseBatch::set_generations_per_launch(unsigned generations) {
  generations_per_launch_ = detail::checked_generations_per_launch(generations);
}

unsigned UniverseBatch::generations_per_launch() const {
  return detail::temporal_generations(width_, generations_per_launch_);
}

void UniverseBatch::fill_random(std::uint64_t first_seed, double density) {
  for (std::uint32_t i = 0; i < count_; ++i) fill_random(i, first_seed + i, density);
}

void UniverseBatch::fill_random(std::uint32_t index, std::uint64_t seed, double density) {
  std::uint64_t* dst = board(current_, index);
  const CurrentDeviceGuard on_device(device_);
  const std::uint64_t threshold = density_threshold(density);
  const std::uint64_t cells = std::uint64_t{width_} * height_;
  StreamOrderedBuffer<std::uint8_t> staging(stream_.ref(), cells);
  detail::fill_random_bytes(stream_.ref(), staging.data(), cells, seed, threshold);
  detail::pack(stream_.ref(), staging.data(), dst, width_, height_);
}

std::uint64_t UniverseBatch::population(std::uint32_t index) {
  const std::uint64_t* src = board(current_, index);
  const CurrentDeviceGuard on_device(device_);
  StreamOrderedBuffer<unsigned long long> count(stream_.ref(), 1);
  SP_CUDA_CHECK(cudaMemsetAsync(count.data(), 0, sizeof(unsigned long long), stream_.handle()));
  detail::count_words(stream_.ref(), src, board_words_, count.data());
  unsigned long long value = 0;
  SP_CUDA_CHECK(cudaMemcpyAsync(&value, count.data(), sizeof(value), cudaMemcpyDeviceToHost, stream_.handle()));
  stream_.synchronize();  // before `count` is freed on the stream and `value` is read
  return value;
}

void UniverseBatch::upload(std::uint32_t index, const Board& board_in) {
  std::uint64_t* dst = board(current_, index);
  if (board_in.width != width_ || board_in.height != height_ || board_in.cells.size() != board_in.size())
    throw std::invalid_argument(fmt::format("a {}x{} board does not fit a batch of {}x{} universes", board_in.width,
                                            board_in.height, width_, height_));
  const CurrentDeviceGuard on_device(device_);
  StreamOrderedBuffer<std::uint8_t> staging(stream_.ref(), board_in.size());
  SP_CUDA_CHECK(cudaMemcpyAsync(staging.data(), board_in.cells.data(), board_in.size(), cudaMemcpyHostToDevice,
                                stream_.handle()));
  detail::pack(stream_.ref(), staging.data(), dst, width_, height_);
  stream_.synchronize();  // the source is the caller's pageable memory
}

void UniverseBatch::step(std::uint64_t generations, bool record_population) {
  const CurrentDeviceGuard on_device(device_);
  const cudaStream_t s = stream_.handle();
  unsigned long long* counts = nullptr;
  if (record_population) {
    const std::size_t need = (logged_ + generations) * count_;
    if (need > counts_.size()) {
      DeviceBuffer<std::uint64_t> bigger(device_, std::max<std::size_t>(std::size_t{1024} * count_, 2 * need));
      if (logged_ > 0)
        SP_CUDA_CHECK(cudaMemcpyAsync(bigger.data(), counts_.data(), logged_ * count_ * sizeof(std::uint64_t),
                                      cudaMemcpyDeviceToDevice, s));
      stream_.synchronize();
      counts_ = std::move(bigger);
    }
    static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
    counts = reinterpret_cast<unsigned long long*>(counts_.data() + logged_ * count_);
    SP_CUDA_CHECK(cudaMemsetAsync(counts, 0, generations * count_ * sizeof(std::uint64_t), s));
    logged_ += generations;
  }
  const detail::BitpackedShape shape{width_,          height_, count_, resident_warps_, generations_per_launch_,
                                     rows_per_thread_};
  const std::uint64_t launches = detail::step_bitpacked(stream_.ref(), words_[current_].data(),
                                                        words_[1 - current_].data(), shape, generations, counts);
  if (launches % 2 == 1) current_ = 1 - current_;
}

std::vector<std::vector<std::uint64_t>> UniverseBatch::populations() {
  const CurrentDeviceGuard on_device(device_);
  std::vector<std::uint64_t> flat(logged_ * count_);
  if (!flat.empty())
    SP_CUDA_CHECK(cudaMemcpyAsync(flat.data(), counts_.data(), flat.size() * sizeof(std::uint64_t),
                                  cudaMemcpyDeviceToHost, stream_.handle()));
  stream_.synchronize();
  std::vector<std::vector<std::uint64_t>> out(count_, std::vector<std::uint64_t>(logged_));
  for (std::size_t g = 0; g < logged_; ++g)
    for (std::uint32_t u = 0; u < count_; ++u) out[u][g] = flat[g * count_ + u];
  logged_ = 0;
  return out;
}

Board UniverseBatch::download(std::uint32_t index) {
  const std::uint64_t* src = board(current_, index);
  const CurrentDeviceGuard on_device(device_);
  Board b = Board::empty(width_, height_);
  StreamOrderedBuffer<std::uint8_t> staging(stream_.ref(), b.size());
  detail::unpack(stream_.ref(), src, staging.data(), width_, height_);
  SP_CUDA_CHECK(cudaMemcpyAsync(b.cells.data(), staging.data(), b.size(), cudaMemcpyDeviceToHost, stream_.handle()));
  stream_.synchronize();  // before `staging` is freed on the stream and `b` is returned
  return b;
}

}  // namespace streampipe::tools::life
