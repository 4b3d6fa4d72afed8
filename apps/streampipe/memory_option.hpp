// SPDX-License-Identifier: Apache-2.0
#pragma once
// --max-memory-mib and the check of a run's memory before any work: a tool that knows what
// it will allocate (life's boards, mandelbrot's counts and image, gray's decoded images)
// refuses, as bad usage (exit 2) naming the bytes needed and the bytes available, what could
// only end with the kernel killing it halfway. The budget is the least of what the machine
// has available (host/memory_budget.hpp) and --max-memory-mib when given.

#include "streampipe/host/memory_budget.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace streampipe::cli {

// Adds --max-memory-mib (0, the default: what the machine has available).
void add_max_memory_option(CLI::App& app, std::uint64_t& mib);

// The budget for a run given --max-memory-mib `mib`.
[[nodiscard]] host::MemoryAvailable memory_budget(std::uint64_t mib);

// Throws UsageError when `needed` bytes for `what` exceed memory_budget(mib); `hint` says
// which options make the run smaller.
void check_memory(std::uint64_t needed, std::uint64_t mib, std::string_view what, std::string_view hint);

// a * b * c..., saturating at 2^64 - 1 (a size no machine has, refused as such).
[[nodiscard]] std::uint64_t product(std::initializer_list<std::uint64_t> factors) noexcept;

}  // namespace streampipe::cli
