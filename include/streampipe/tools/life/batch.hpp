// SPDX-License-Identifier: Apache-2.0
#pragma once
// Many Life universes of one size on one GPU, advanced together by the bit-packed kernel:
// their boards lie one after another in one buffer and every launch steps all of them (up
// to 8 generations each), so that 64 universes of 2048^2 run at the rate per cell of one
// 16384^2 board, where 64 DeviceUniverses would pay 64 launches per step. Same rule, torus
// and results as DeviceUniverse; universe i is independent of the others. Enqueueing calls
// return at once on the batch's stream; download(), populations() and synchronize() wait.

#include <array>
#include <cstdint>
#include <vector>

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/stream.hpp"
#include "streampipe/tools/life/board.hpp"

namespace streampipe::tools::life {

class UniverseBatch {
 public:
  // `count` universes of width x height, all dead. Throws std::invalid_argument for an
  // empty board, count 0, or a batch too large for the kernel.
  UniverseBatch(const Device& device, std::uint32_t width, std::uint32_t height, std::uint32_t count);

  [[nodiscard]] std::uint32_t width() const noexcept { return width_; }
  [[nodiscard]] std::uint32_t height() const noexcept { return height_; }
  [[nodiscard]] std::uint32_t count() const noexcept { return count_; }
  [[nodiscard]] StreamRef stream() const { return stream_.ref(); }
  // Bytes of device memory per generation buffer (all universes).
  [[nodiscard]] std::size_t state_bytes() const noexcept { return words_[0].bytes(); }

  // Universe i becomes random_board(width, height, density, first_seed + i), filled on the
  // device (as DeviceUniverse::fill_random does for one).
  void fill_random(std::uint64_t first_seed, double density);
  // Universe `index` alone becomes random_board(width, height, density, seed).
  void fill_random(std::uint32_t index, std::uint64_t seed, double density);
  // Replaces universe `index` (the copy is complete when this returns). Throws
  // std::out_of_range for an index past count(), std::invalid_argument for another size.
  void upload(std::uint32_t index, const Board& board);
  // Enqueues `generations` steps of every universe. With record_population each
  // universe's population after each step is logged for populations().
  void step(std::uint64_t generations, bool record_population = false);
  // Waits; [i] holds universe i's logged populations since the last call (then cleared).
  [[nodiscard]] std::vector<std::vector<std::uint64_t>> populations();
  // Waits and returns universe `index`'s live cells now (std::out_of_range past count()).
  [[nodiscard]] std::uint64_t population(std::uint32_t index);
  // Waits and returns universe `index` (std::out_of_range past count()).
  [[nodiscard]] Board download(std::uint32_t index);
  void synchronize() const { stream_.synchronize(); }

  // As DeviceUniverse's: rows each warp writes (0: fill the GPU once) and the most
  // generations per launch (0: as many as the board allows).
  void set_rows_per_thread(unsigned rows);
  void set_generations_per_launch(unsigned generations);
  [[nodiscard]] unsigned generations_per_launch() const;

 private:
  [[nodiscard]] std::uint64_t* board(int buffer, std::uint32_t index) const;

  Device device_;
  Stream stream_;
  std::uint32_t width_, height_, count_;
  std::size_t board_words_;
  DeviceBuffer<std::uint64_t> words_[2];
  int current_ = 0;
  unsigned rows_per_thread_ = 0, generations_per_launch_ = 0;
  std::array<std::uint32_t, 4> resident_warps_{};
  DeviceBuffer<std::uint64_t> counts_;  // population log: generation-major, count_ per generation
  std::size_t logged_ = 0;              // generations logged since the last populations()
};

}  // namespace streampipe::tools::life
