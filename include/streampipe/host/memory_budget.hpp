// SPDX-License-Identifier: Apache-2.0
#pragma once
// How much memory this process may still take, and the check of a run's needs against it,
// so that a tool refuses work that cannot fit before it starts instead of being killed by
// the kernel halfway. What is available is the least of: the kernel's estimate of memory
// it can hand out without swapping (MemAvailable in /proc/meminfo) and, for each control
// group the process is in (cgroup v2's memory.max, v1's memory.limit_in_bytes, the group
// and every group above it), its limit less its usage. The parsing and the check are pure
// functions with tests of their own; available_memory() reads the files.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace streampipe::host {

struct MemoryAvailable {
  std::uint64_t bytes = 0;
  std::string source;  // what bounds it: "MemAvailable", "the cgroup /x's limit", or "unknown"
  bool known = false;  // false when no figure could be read: nothing is refused then
};

// MemAvailable of /proc/meminfo's text, in bytes; nullopt when absent or malformed.
[[nodiscard]] std::optional<std::uint64_t> parse_meminfo_available(std::string_view meminfo);
// What a control group still allows: `limit` (memory.max or memory.limit_in_bytes, as read)
// less `usage` (memory.current or memory.usage_in_bytes), 0 when over; nullopt when the
// group has no limit ("max", or v1's page-rounded 2^63) or a text is malformed.
[[nodiscard]] std::optional<std::uint64_t> cgroup_room(std::string_view limit, std::string_view usage);
// The least of the two, when known.
[[nodiscard]] MemoryAvailable least(const MemoryAvailable& a, const MemoryAvailable& b);

// Reads this machine's figures (never throws; unknown when nothing can be read).
[[nodiscard]] MemoryAvailable available_memory() noexcept;

// "1.50 GiB" (powers of 1024; bytes below 1 KiB).
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);

// Why `needed` bytes for `what` cannot be had, naming both figures and the source; nullopt
// when it fits (or nothing is known). `hint` ends the message ("try a smaller --size").
[[nodiscard]] std::optional<std::string> memory_refusal(std::uint64_t needed, const MemoryAvailable& available,
                                                        std::string_view what, std::string_view hint = {});

}  // namespace streampipe::host
