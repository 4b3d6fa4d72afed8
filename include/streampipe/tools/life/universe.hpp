// SPDX-License-Identifier: Apache-2.0
#pragma once
// A Life universe resident on one GPU, advanced by one of three kernels on its own stream:
//   global_memory  the lesson's kernel: one thread per cell, eight neighbour loads from
//                  global memory (one byte per cell);
//   shared_memory  a 32x8 tile plus a one-cell halo staged in shared memory, then
//                  __syncthreads (one byte per cell);
//   bit_packed     64 cells per 64-bit word, up to 8 generations per launch: a warp holds
//                  a strip of rows (plus 8 halo rows) one row at a time and carries each
//                  row through every generation in registers, neighbours from the adjacent
//                  lanes by shuffles, 64 cells counted at once with bit-sliced adders
//                  (3-input logic operations); populations are counted in the same launch.
// All three wrap toroidally and agree exactly with step_host for every board size.
// Several universes on separate streams run concurrently; many of one size run faster as
// one UniverseBatch (life_batch.hpp). Enqueueing calls return at once;
// download(), populations() and synchronize() wait for this universe's stream only.

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/stream.hpp"
#include "streampipe/tools/life/board.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace streampipe::tools::life {

enum class Kernel { global_memory, shared_memory, bit_packed };

[[nodiscard]] std::string_view to_string(Kernel kernel) noexcept;
// "global", "shared", "bitpacked" (and the enum spellings); nullopt otherwise.
[[nodiscard]] std::optional<Kernel> parse_kernel(std::string_view name) noexcept;

class DeviceUniverse {
 public:
  // Allocates both generations' buffers on `device` and creates the universe's stream.
  DeviceUniverse(const Device& device, std::uint32_t width, std::uint32_t height, Kernel kernel);

  [[nodiscard]] std::uint32_t width() const noexcept { return width_; }
  [[nodiscard]] std::uint32_t height() const noexcept { return height_; }
  [[nodiscard]] Kernel kernel() const noexcept { return kernel_; }
  [[nodiscard]] StreamRef stream() const { return stream_.ref(); }
  // Bytes of device memory per generation buffer.
  [[nodiscard]] std::size_t state_bytes() const noexcept;

  // Replaces the state (the board must match the size; the copy is complete when this
  // returns). The other buffer is poisoned so that a kernel that skips a cell shows.
  void upload(const Board& board);
  // Fills the same board as random_board(width, height, density, seed), on the device.
  void fill_random(std::uint64_t seed, double density);
  // Enqueues `generations` steps. With record_population, the population after each step
  // is appended to a log that populations() returns.
  void step(std::uint64_t generations, bool record_population = false);
  // Waits for the stream; returns the logged populations since the last call and clears it.
  [[nodiscard]] std::vector<std::uint64_t> populations();
  // Waits for the stream and returns the current state.
  [[nodiscard]] Board download();
  [[nodiscard]] std::uint64_t population();
  void synchronize() const { stream_.synchronize(); }

  // Bit-packed kernel tuning (other kernels ignore it). Rows each warp writes per launch
  // (each of its threads walks them and the halo rows); 0 sizes the strips so that the GPU
  // is filled once. Throws std::invalid_argument above 65536.
  void set_rows_per_thread(unsigned rows);
  // At most this many generations per launch: 1, 2, 4 or 8; 0 (the default) the most the
  // board allows (8, less only for some widths with a last word of under 8 cells). Throws
  // std::invalid_argument for other values.
  void set_generations_per_launch(unsigned generations);
  // The generations a launch takes at most now (1 for the byte kernels).
  [[nodiscard]] unsigned generations_per_launch() const;

  // Per-generation timing, for latency reports. While on, step() records a timing event
  // before and after each generation (its kernel and its population count) and the host
  // time its enqueue took; step_timings() waits for the stream and returns every timed
  // generation since the last call. Costs two event records per generation (host time, and
  // one event pair per generation until step_timings() recycles them). Off by default.
  struct StepTiming {
    double enqueue_begin_ms = 0, enqueue_end_ms = 0;  // host steady_clock, ms since its epoch
    double done_ms = 0;     // the GPU finished the generation, placed on the same clock
    double compute_ms = 0;  // GPU time between the generation's two events
  };
  void time_steps(bool on);  // turning it on synchronizes the stream once (clock anchor)
  [[nodiscard]] std::vector<StepTiming> step_timings();

 private:
  void enqueue_step();
  void enqueue_population(std::uint64_t* slot);

  Device device_;
  Stream stream_;
  std::uint32_t width_, height_;
  Kernel kernel_;
  std::uint32_t words_per_row_ = 0;  // bit-packed only
  unsigned rows_per_thread_ = 0;
  unsigned generations_per_launch_ = 0;
  std::array<std::uint32_t, 4> resident_warps_{};  // for 1, 2, 4 and 8 generations per launch
  DeviceBuffer<std::uint8_t> bytes_[2];     // byte kernels
  DeviceBuffer<std::uint64_t> words_[2];    // bit-packed
  int current_ = 0;
  DeviceBuffer<std::uint64_t> counts_;      // population log on the device
  std::size_t logged_ = 0;                  // entries enqueued since the last populations()

  struct PendingStep {
    double enqueue_begin_ms, enqueue_end_ms;
  };
  bool timing_ = false;
  std::optional<Event> anchor_;             // recorded when timing starts: GPU -> host clock
  double anchor_host_ms_ = 0;
  std::vector<Event> step_events_;          // two per pending generation, reused
  std::vector<PendingStep> pending_;
};

}  // namespace streampipe::tools::life
