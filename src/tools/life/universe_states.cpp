// SPDX-License-Identifier: Apache-2.0
// The universes' states in one host block (see universe_states.hpp).
#include "universe_states.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <new>
#include <stdexcept>

namespace streampipe::tools::life::detail {
namespace {

// Page-aligned, so that pinning it pins no neighbour's memory.
constexpr std::size_t kAlign = 4096;

// 64-byte strides: no two universes share a cache line, for the threads that make them.
std::uint64_t stride_of(const UniverseShape& shape, std::uint64_t most) noexcept {
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() / 2;
  if (most > limit / 16) return limit;
  const std::uint64_t bytes = populations_offset(shape) + most * sizeof(std::uint64_t);
  return bytes > limit ? limit : (bytes + 63) / 64 * 64;
}

}  // namespace

void UniverseStates::Free::operator()(std::byte* p) const noexcept { ::operator delete[](p, std::align_val_t{kAlign}); }

std::uint64_t UniverseStates::block_bytes(std::size_t count, const UniverseShape& shape,
                                          std::uint64_t most_generations) noexcept {
  const std::uint64_t stride = stride_of(shape, most_generations);
  const std::uint64_t n = std::max<std::uint64_t>(count, 1);
  return stride > std::numeric_limits<std::uint64_t>::max() / n ? std::numeric_limits<std::uint64_t>::max()
                                                                 : stride * n;
}

UniverseStates::UniverseStates(std::size_t count, const UniverseShape& shape, std::uint64_t most_generations)
    : count_(count), shape_(shape), most_(most_generations), stride_(stride_of(shape, most_generations)) {
  if (most_ == 0) throw std::invalid_argument("a chunk steps at least one generation");
  const std::uint64_t total = block_bytes(count, shape, most_generations);
  if (total >= std::numeric_limits<std::size_t>::max() / 2)
    throw std::length_error(fmt::format("{} universes with {} generations' populations each do not fit the "
                                        "address space", count, most_));
  block_.reset(static_cast<std::byte*>(::operator new[](static_cast<std::size_t>(total), std::align_val_t{kAlign})));
}

void UniverseStates::pin() {
  if (!pinned()) pinned_ = HostRegistration(block_.get(), stride_ * std::max<std::size_t>(count_, 1));
}

std::span<std::uint64_t> UniverseStates::state(std::size_t k) noexcept {
  return {reinterpret_cast<std::uint64_t*>(block_.get() + k * stride_), (state_bytes(shape_) + 7) / 8};
}

std::span<const std::uint64_t> UniverseStates::state(std::size_t k) const noexcept {
  return {reinterpret_cast<const std::uint64_t*>(block_.get() + k * stride_), (state_bytes(shape_) + 7) / 8};
}

std::span<const std::byte> UniverseStates::input(std::size_t k) const noexcept {
  return {block_.get() + k * stride_, state_bytes(shape_)};
}

void UniverseStates::check(std::uint64_t generations) const {
  if (generations > most_)
    throw std::out_of_range(fmt::format("a chunk of {} generations; this run holds populations for at most {}",
                                        generations, most_));
}

std::span<std::byte> UniverseStates::output(std::size_t k, std::uint64_t generations) {
  check(generations);
  return {block_.get() + k * stride_, output_bytes(shape_, generations)};
}

std::span<const std::uint64_t> UniverseStates::populations(std::size_t k, std::uint64_t generations) const {
  check(generations);
  return {reinterpret_cast<const std::uint64_t*>(block_.get() + k * stride_ + populations_offset(shape_)),
          static_cast<std::size_t>(generations)};
}

}  // namespace streampipe::tools::life::detail
