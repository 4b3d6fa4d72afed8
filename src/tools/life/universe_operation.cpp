// SPDX-License-Identifier: Apache-2.0
// Life universes as engine items (see universe_operation.hpp).
#include "universe_operation.hpp"

#include "kernels.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/tools/life/bitpacked.hpp"
#include "streampipe/tools/life/random.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace streampipe::tools::life::detail {
namespace {

// What a lane keeps between batches: the universes' two generations and their populations,
// grown for the largest batch it has run (a batch runs on its lane's thread alone).
struct LaneBuffers {
  DeviceBuffer<std::uint64_t> a, b, counts;
};

struct GpuState {
  Device device;
  ResidentWarps resident_warps{};
  std::vector<LaneBuffers> lanes;
};

// `buffer` holds at least `n` elements afterwards; its contents are not kept.
void reserve(DeviceBuffer<std::uint64_t>& buffer, const Device& device, StreamRef stream, std::size_t n) {
  if (buffer.size() >= n) return;
  stream.synchronize();  // the lane's earlier work may still read the old buffer
  buffer = DeviceBuffer<std::uint64_t>(device, std::max(n, 2 * buffer.size()));
}

std::uint64_t generations_of(const pipeline::ItemDescriptor& item, const UniverseShape& shape) {
  const std::size_t state = state_bytes(shape), at = populations_offset(shape);
  if (item.in_bytes != state || item.out_bytes < at || (item.out_bytes - at) % sizeof(std::uint64_t) != 0)
    throw std::invalid_argument(fmt::format("a Life item takes a state of {} bytes and gives it back with a whole "
                                            "number of populations after {} bytes, not {} bytes in and {} out",
                                            state, at, item.in_bytes, item.out_bytes));
  return (item.out_bytes - at) / sizeof(std::uint64_t);
}

// The batch's items all step the same generations (run.cpp submits a chunk at a time).
std::uint64_t batch_generations(const pipeline::Batch& b, const UniverseShape& shape) {
  const std::uint64_t n = generations_of(b.items()[0], shape);
  for (const auto& item : b.items())
    if (generations_of(item, shape) != n)
      throw std::invalid_argument("a batch of Life universes steps one number of generations");
  return n;
}

// What a lane needs for `universes` universes of `words` words stepping `generations`: each
// generation's words, and the populations with the batch's descriptors after them.
struct LaneSizes {
  std::size_t words = 0, counts = 0;
};
LaneSizes lane_sizes(std::size_t universes, std::size_t words, std::uint64_t generations) {
  static_assert(sizeof(pipeline::ItemDescriptor) == 4 * sizeof(std::uint64_t));
  return {universes * words, generations * universes + 4 * universes};
}

void reserve_lane(LaneBuffers& lane, const Device& device, StreamRef stream, const LaneSizes& sizes) {
  reserve(lane.a, device, stream, sizes.words);
  reserve(lane.b, device, stream, sizes.words);
  reserve(lane.counts, device, stream, sizes.counts);
}

void step_on_gpu(const pipeline::Batch& b, const UniverseShape& shape) {
  auto* gpu = b.device_state<GpuState>();
  const StreamRef stream = b.stream();
  const cudaStream_t s = stream.handle();
  const std::size_t state = state_bytes(shape), words = (state + 7) / 8, k = b.size();
  const std::uint64_t n = batch_generations(b, shape);
  LaneBuffers& lane = gpu->lanes.at(static_cast<std::size_t>(b.member_lane()));
  reserve_lane(lane, gpu->device, stream, lane_sizes(k, words, n));
  for (std::size_t u = 0; u < k; ++u)
    SP_CUDA_CHECK(cudaMemcpyAsync(lane.a.data() + u * words, b.in_as<const std::byte>(u), state,
                                  cudaMemcpyDeviceToDevice, s));
  SP_CUDA_CHECK(cudaMemsetAsync(lane.counts.data(), 0, n * k * sizeof(std::uint64_t), s));
  static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
  auto* counts = reinterpret_cast<unsigned long long*>(lane.counts.data());
  std::uint64_t* result = lane.a.data();
  if (shape.layout == StateLayout::words) {
    const BitpackedShape packed{shape.width, shape.height, static_cast<std::uint32_t>(k), gpu->resident_warps, 0,
                                shape.rows_per_thread};
    if (step_bitpacked(stream, lane.a.data(), lane.b.data(), packed, n, counts) % 2 == 1) result = lane.b.data();
  } else {
    // A byte kernel steps one universe at a time, its population counted after each step.
    const auto step = shape.kernel == Kernel::shared_memory ? step_shared : step_global;
    const std::uint64_t cells = std::uint64_t{shape.width} * shape.height;
    for (std::size_t u = 0; u < k; ++u) {
      auto* x = reinterpret_cast<std::uint8_t*>(lane.a.data() + u * words);
      auto* y = reinterpret_cast<std::uint8_t*>(lane.b.data() + u * words);
      for (std::uint64_t g = 0; g < n; ++g) {
        step(stream, x, y, shape.width, shape.height);
        count_bytes(stream, y, cells, counts + g * k + u);
        std::swap(x, y);
      }
    }
    if (n % 2 == 1) result = lane.b.data();
  }
  for (std::size_t u = 0; u < k; ++u)
    SP_CUDA_CHECK(cudaMemcpyAsync(b.out_as<std::byte>(u), result + u * words, state, cudaMemcpyDeviceToDevice, s));
  if (n == 0) return;  // no generation: the states passed through
  // The engine uploads its descriptors only for batches of several items: the lane's own.
  auto* items = reinterpret_cast<pipeline::ItemDescriptor*>(lane.counts.data() + n * k);
  SP_CUDA_CHECK(cudaMemcpyAsync(items, b.items().data(), k * sizeof(pipeline::ItemDescriptor), cudaMemcpyHostToDevice, s));
  scatter_populations(stream, lane.counts.data(), static_cast<std::uint32_t>(k), n, items, b.out(),
                      populations_offset(shape));
}

void step_on_host(const pipeline::Batch& b, const UniverseShape& shape) {
  const std::size_t state = state_bytes(shape);
  const std::uint64_t n = batch_generations(b, shape);
  for (std::size_t u = 0; u < b.size(); ++u) {
    // The output may lie over the input: the state is read whole first, and the
    // populations lie past it.
    auto* populations = reinterpret_cast<std::uint64_t*>(b.out_as<std::byte>(u) + populations_offset(shape));
    std::byte* out_state = b.out_as<std::byte>(u);
    if (shape.layout == StateLayout::words) {
      std::vector<std::uint64_t> now(state / 8), next;
      std::memcpy(now.data(), b.in_as<const std::byte>(u), state);
      for (std::uint64_t g = 0; g < n; ++g) {
        bitpacked::step_host(now, next, shape.width, shape.height);
        now.swap(next);
        std::uint64_t live = 0;
        for (const std::uint64_t w : now) live += static_cast<std::uint64_t>(std::popcount(w));
        populations[g] = live;
      }
      std::memcpy(out_state, now.data(), state);
    } else {
      Board now = Board::empty(shape.width, shape.height), next;
      std::memcpy(now.cells.data(), b.in_as<const std::byte>(u), state);
      for (std::uint64_t g = 0; g < n; ++g) {
        step_host(now, next, shape.host_threads);
        std::swap(now, next);
        populations[g] = now.population();
      }
      std::memcpy(out_state, now.cells.data(), state);
    }
  }
}

}  // namespace

StateLayout layout_of(Kernel kernel) noexcept {
  return kernel == Kernel::bit_packed ? StateLayout::words : StateLayout::bytes;
}

std::size_t state_bytes(const UniverseShape& shape) noexcept {
  return shape.layout == StateLayout::words
             ? std::size_t{bitpacked::words_per_row(shape.width)} * shape.height * sizeof(std::uint64_t)
             : std::size_t{shape.width} * shape.height;
}

std::size_t populations_offset(const UniverseShape& shape) noexcept {
  return (state_bytes(shape) + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t) * sizeof(std::uint64_t);
}

std::size_t output_bytes(const UniverseShape& shape, std::uint64_t generations) noexcept {
  return populations_offset(shape) + generations * sizeof(std::uint64_t);
}

std::vector<std::uint64_t> to_state(const Board& board, const UniverseShape& shape) {
  if (board.width != shape.width || board.height != shape.height)
    throw std::invalid_argument(fmt::format("a {}x{} board is not a state of {}x{} universes", board.width,
                                            board.height, shape.width, shape.height));
  if (shape.layout == StateLayout::words) return bitpacked::pack_host(board);
  std::vector<std::uint64_t> state((board.cells.size() + 7) / 8, 0);
  std::memcpy(state.data(), board.cells.data(), board.cells.size());
  return state;
}

Board to_board(std::span<const std::uint64_t> state, const UniverseShape& shape) {
  const std::size_t bytes = state_bytes(shape);
  if (state.size() * sizeof(std::uint64_t) < bytes)
    throw std::invalid_argument(fmt::format("a state of {} bytes is not one of {}x{} universes",
                                            state.size() * sizeof(std::uint64_t), shape.width, shape.height));
  if (shape.layout == StateLayout::words)
    return bitpacked::unpack_host(std::vector<std::uint64_t>(state.begin(), state.begin() + bytes / 8), shape.width,
                                  shape.height);
  Board board = Board::empty(shape.width, shape.height);
  std::memcpy(board.cells.data(), state.data(), bytes);
  return board;
}

std::uint64_t fill_random_rows(std::span<std::uint64_t> state, const UniverseShape& shape, std::uint64_t seed,
                               std::uint64_t threshold, std::uint32_t first_row, std::uint32_t end_row) noexcept {
  std::uint64_t live = 0;
  const std::uint32_t w = shape.width;
  if (shape.layout == StateLayout::words) {
    const std::uint32_t nw = bitpacked::words_per_row(w);
    for (std::uint32_t y = first_row; y < end_row; ++y)
      for (std::uint32_t k = 0; k < nw; ++k) {
        std::uint64_t word = 0;
        for (std::uint32_t x = 64 * k, bit = 0; x < w && bit < 64; ++x, ++bit)
          if (random_cell(seed, std::uint64_t{y} * w + x, threshold)) word |= std::uint64_t{1} << bit;
        state[std::size_t{y} * nw + k] = word;
        live += static_cast<std::uint64_t>(std::popcount(word));
      }
    return live;
  }
  auto* cells = reinterpret_cast<std::uint8_t*>(state.data());
  for (std::uint64_t i = std::uint64_t{first_row} * w; i < std::uint64_t{end_row} * w; ++i) {
    cells[i] = random_cell(seed, i, threshold) ? 1 : 0;
    live += cells[i];
  }
  return live;
}

pipeline::Operation universe_operation(const UniverseShape& shape, std::size_t batch_universes,
                                       std::uint64_t batch_generations) {
  Board::check_size(shape.width, shape.height);
  pipeline::Operation op;
  op.name = fmt::format("life {} ({}x{})", to_string(shape.kernel), shape.width, shape.height);
  op.host = [shape](const pipeline::Batch& b) { step_on_host(b, shape); };
  if (layout_of(shape.kernel) != shape.layout) return op;
  op.device = [shape](const pipeline::Batch& b) { step_on_gpu(b, shape); };
  op.start_device = [shape, batch_universes,
                      batch_generations](const pipeline::DeviceStart& start) -> std::shared_ptr<void> {
    auto state = std::make_shared<GpuState>(GpuState{Device(start.device), {}, {}});
    if (shape.kernel == Kernel::bit_packed) state->resident_warps = bitpacked_resident_warps(state->device);
    state->lanes.resize(static_cast<std::size_t>(start.lanes));
    // Made now, while the host makes the states, rather than by the first batches.
    if (batch_universes > 0 && batch_generations > 0) {
      const LaneSizes sizes = lane_sizes(batch_universes, (state_bytes(shape) + 7) / 8, batch_generations);
      for (auto& lane : state->lanes)
        lane = {DeviceBuffer<std::uint64_t>(state->device, sizes.words),
                DeviceBuffer<std::uint64_t>(state->device, sizes.words),
                DeviceBuffer<std::uint64_t>(state->device, sizes.counts)};
    }
    return state;
  };
  return op;
}

}  // namespace streampipe::tools::life::detail
