// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/tools/life: the universes of a run in one host block, each its state and
// then room for the populations of a chunk of up to `most_generations`. An engine item reads
// a universe's state and writes the stepped state over it, with the populations after it
// (universe_operation.hpp), so the block is all the host holds and nothing is copied
// between chunks. pin() registers the block with CUDA: the engine's copies then read and
// write it where it is, one DMA each way, with no staging pass. It is pinned after the
// states are made, so that the host makes them while the GPUs start.

#include "universe_operation.hpp"

#include "streampipe/cuda/pinned_buffer.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace streampipe::tools::life::detail {

class UniverseStates {
 public:
  // Throws std::invalid_argument for no generation a chunk, std::length_error when the
  // block's size overflows, std::bad_alloc.
  UniverseStates(std::size_t count, const UniverseShape& shape, std::uint64_t most_generations);
  ~UniverseStates() = default;  // unregisters, then frees
  UniverseStates(const UniverseStates&) = delete;
  UniverseStates& operator=(const UniverseStates&) = delete;

  // The block's bytes for such a run, without making it (a run too large to fit is refused
  // before anything is allocated). Saturates rather than overflow.
  [[nodiscard]] static std::uint64_t block_bytes(std::size_t count, const UniverseShape& shape,
                                                 std::uint64_t most_generations) noexcept;

  // Pins the block for every GPU (cudaHostRegister, portable) until destroyed; again is a
  // no-op. Throws CudaError.
  void pin();
  [[nodiscard]] bool pinned() const noexcept { return pinned_.data() != nullptr; }

  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] std::uint64_t most_generations() const noexcept { return most_; }
  // Universe k's state, as whole words (a byte state's last word partly).
  [[nodiscard]] std::span<std::uint64_t> state(std::size_t k) noexcept;
  [[nodiscard]] std::span<const std::uint64_t> state(std::size_t k) const noexcept;
  // An item's input: the state's state_bytes.
  [[nodiscard]] std::span<const std::byte> input(std::size_t k) const noexcept;
  // An item's output for `generations` (0 to most_generations(); std::out_of_range beyond):
  // the state again, then room for the populations.
  [[nodiscard]] std::span<std::byte> output(std::size_t k, std::uint64_t generations);
  // The populations an item of `generations` wrote.
  [[nodiscard]] std::span<const std::uint64_t> populations(std::size_t k, std::uint64_t generations) const;

 private:
  void check(std::uint64_t generations) const;  // std::out_of_range beyond most_

  struct Free {
    void operator()(std::byte* p) const noexcept;
  };
  std::size_t count_;
  UniverseShape shape_;
  std::uint64_t most_;
  std::size_t stride_;                  // bytes from one universe to the next
  std::unique_ptr<std::byte, Free> block_;
  HostRegistration pinned_;             // after block_: unregistered before it is freed
};

}  // namespace streampipe::tools::life::detail
