// SPDX-License-Identifier: Apache-2.0
#include "memory_option.hpp"

#include "commands.hpp"
#include "option_checks.hpp"

#include <fmt/format.h>

#include <limits>

namespace streampipe::cli {

void add_max_memory_option(CLI::App& app, std::uint64_t& mib) {
  app.add_option("--max-memory-mib", mib,
                 "memory the run may take, in MiB (0: what the machine has available); a run that needs more is "
                 "refused before it starts")
      ->capture_default_str()
      ->transform(whole_number(0, std::uint64_t{1} << 40));
}

host::MemoryAvailable memory_budget(std::uint64_t mib) {
  host::MemoryAvailable budget = host::available_memory();
  if (mib > 0) budget = host::least(budget, {mib << 20, fmt::format("--max-memory-mib {}", mib), true});
  return budget;
}

void check_memory(std::uint64_t needed, std::uint64_t mib, std::string_view what, std::string_view hint) {
  if (const auto why = host::memory_refusal(needed, memory_budget(mib), what, hint)) throw UsageError(*why);
}

std::uint64_t product(std::initializer_list<std::uint64_t> factors) noexcept {
  std::uint64_t p = 1;
  for (const auto f : factors) {
    if (f != 0 && p > std::numeric_limits<std::uint64_t>::max() / f) return std::numeric_limits<std::uint64_t>::max();
    p *= f;
  }
  return p;
}

}  // namespace streampipe::cli
