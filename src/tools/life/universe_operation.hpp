// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/tools/life: Life universes as engine items (run.cpp deals them through the
// engine, a chunk of generations at a time). An item is one universe stepped for some
// generations:
//   input   its state: state_bytes(shape)
//   output  its new state, then from populations_offset(shape) its population after each
//           generation (uint64 each)
// so the generations an item steps follow from its output's size (none: the state passes
// through, as a lane's first batch may, to make its memory), and the output may lie over
// the input (a universe stepped in place: the input is read whole before any output
// is written, on every member). The state is in the layout of the kernel that steps it
// (bit-packed words, or a byte per cell), which the host form steps too
// (bitpacked::step_host, step_host): a universe may step on any member of the set from one
// chunk to the next.
//
// Device form: the bit-packed kernel steps all of a batch's universes at once (one launch
// per up to 8 generations), in the lane's own two buffers; the byte kernels step them one
// after another; then each item's state and populations go to its output. Host form: the
// host references, on `host_threads` threads for the byte layout.
#include "streampipe/pipeline/operation.hpp"
#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/universe.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace streampipe::tools::life::detail {

enum class StateLayout { bytes, words };

struct UniverseShape {
  std::uint32_t width = 0, height = 0;
  Kernel kernel = Kernel::bit_packed;  // on a GPU
  StateLayout layout = StateLayout::words;
  unsigned rows_per_thread = 0;  // the bit-packed kernel's; 0: sized by the GPU
  unsigned host_threads = 1;     // the host form's, for the byte layout
};

// The layout a kernel steps; the byte kernels take bytes, the bit-packed one words.
[[nodiscard]] StateLayout layout_of(Kernel kernel) noexcept;
[[nodiscard]] std::size_t state_bytes(const UniverseShape& shape) noexcept;
// Where an output's populations begin: after the state, at a whole number of uint64.
[[nodiscard]] std::size_t populations_offset(const UniverseShape& shape) noexcept;
// An item's output for `generations` generations.
[[nodiscard]] std::size_t output_bytes(const UniverseShape& shape, std::uint64_t generations) noexcept;

// A board as a state of `shape`'s layout, and back. Words are held as uint64 so that the
// engine reads them aligned. Throws std::invalid_argument for another size.
[[nodiscard]] std::vector<std::uint64_t> to_state(const Board& board, const UniverseShape& shape);
[[nodiscard]] Board to_board(std::span<const std::uint64_t> state, const UniverseShape& shape);

// Rows [first_row, end_row) of random_board(width, height, density, seed) as a state of
// `shape`'s layout, into `state` (state_bytes(shape) long; each row written whole); returns
// their live cells. `threshold` is density_threshold(density). Rows apart may be filled at
// once on several threads.
std::uint64_t fill_random_rows(std::span<std::uint64_t> state, const UniverseShape& shape, std::uint64_t seed,
                               std::uint64_t threshold, std::uint32_t first_row, std::uint32_t end_row) noexcept;

// With a device form only where the layout is the kernel's (a run on the CPU alone steps
// bytes whatever kernel is named). A GPU's lanes make their buffers when it starts, for
// batches of up to `batch_universes` stepping up to `batch_generations` (0: as the first
// batches come, which then wait for the allocation), and grow them for larger batches.
// Throws std::invalid_argument for an empty board.
[[nodiscard]] pipeline::Operation universe_operation(const UniverseShape& shape, std::size_t batch_universes = 0,
                                                     std::uint64_t batch_generations = 0);

}  // namespace streampipe::tools::life::detail
