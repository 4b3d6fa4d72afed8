// SPDX-License-Identifier: Apache-2.0
#pragma once
// Universes of one size dealt out to GPUs, universe i to gpus[i % n], all stepped at once.
//   batched          each GPU's universes are one UniverseBatch: a step is one launch per
//                    GPU per (up to) 8 generations, whatever the number of universes;
//                    bit-packed kernel only.
//   stream_each      each universe is a DeviceUniverse on a stream of its own: any kernel,
//                    and per-generation timing (a timed step is one generation of one
//                    universe).
// Both give the same boards and populations as step_host. Enqueueing calls return at once;
// populations(), download(), population() and step_timings() wait. An index past count()
// throws std::out_of_range.

#include <cstdint>
#include <memory>
#include <vector>

#include "streampipe/cuda/device.hpp"
#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/batch.hpp"
#include "streampipe/tools/life/universe.hpp"

namespace streampipe::tools::life {

enum class Layout { batched, stream_each };

class DealtUniverses {
 public:
  // Allocates every universe, all dead. Throws std::invalid_argument for no GPU, count 0,
  // an empty board, or Layout::batched with a kernel other than bit_packed.
  DealtUniverses(std::vector<Device> gpus, std::uint32_t width, std::uint32_t height, std::uint32_t count,
                 Kernel kernel, Layout layout);

  [[nodiscard]] std::uint32_t count() const noexcept { return count_; }
  [[nodiscard]] Layout layout() const noexcept { return layout_; }
  // The CUDA index of the GPU universe `index` runs on.
  [[nodiscard]] int device_of(std::uint32_t index) const;

  // Bit-packed kernel: rows each warp writes (0: by size). Throws std::invalid_argument above 65536.
  void set_rows_per_thread(unsigned rows);
  // Universe `index` becomes random_board(width, height, density, seed), filled on its GPU.
  void fill_random(std::uint32_t index, std::uint64_t seed, double density);
  // Replaces universe `index` (complete on return); std::invalid_argument for another size.
  void upload(std::uint32_t index, const Board& board);
  [[nodiscard]] std::uint64_t population(std::uint32_t index);
  // Enqueues `generations` steps of every universe on every GPU, logging each population.
  void step(std::uint64_t generations);
  // Waits for every GPU; [i] holds universe i's populations logged since the last call.
  [[nodiscard]] std::vector<std::vector<std::uint64_t>> populations();
  [[nodiscard]] Board download(std::uint32_t index);

  // stream_each only (std::logic_error when batched): DeviceUniverse::time_steps for every
  // universe, and [i] = universe i's timed generations since the last call.
  void time_steps(bool on);
  [[nodiscard]] std::vector<std::vector<DeviceUniverse::StepTiming>> step_timings();

 private:
  struct Place {
    std::size_t group;   // the batch (batched) or the universe (stream_each)
    std::uint32_t slot;  // its place in the batch
  };
  [[nodiscard]] Place place(std::uint32_t index) const;

  std::vector<Device> gpus_;
  std::uint32_t count_;
  Layout layout_;
  std::vector<std::unique_ptr<UniverseBatch>> batches_;  // batched: [g] holds universes g, g + n, ...
  std::vector<std::unique_ptr<DeviceUniverse>> each_;    // stream_each: [i] is universe i
};

}  // namespace streampipe::tools::life
