// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where deflate_runs finds its matches: runs of one repeated byte (a match at distance 1),
// taken greedily - a run starts wherever a byte and the two after it repeat the byte before
// it, and lasts while the byte repeats, at most 258 bytes - and the histogram of the
// literal bytes between them. Sixteen positions are tested at once (SSE2 where the target
// has it, else one at a time with the same result): photographs' grain has many pairs of
// equal bytes and few runs, so most 16-byte steps find none.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace streampipe::io::detail {

// Deflate's match lengths: shorter repeats are cheaper as literals, longer ones split.
inline constexpr std::size_t kMinRun = 3, kMaxRun = 258;

struct Run {
  std::uint32_t at;      // its first byte, which repeats the byte at at - 1
  std::uint32_t length;  // 3-258
};

// Scans [begin, end) of `data` (a run may repeat the byte just before `begin`, never one
// past `end`): appends its runs to `runs` in order and adds each literal byte (every byte
// outside a run) to `literals`.
void scan_runs(std::span<const std::uint8_t> data, std::size_t begin, std::size_t end, std::vector<Run>& runs,
               std::span<std::uint32_t, 256> literals);

}  // namespace streampipe::io::detail
