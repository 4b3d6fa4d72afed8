// SPDX-License-Identifier: Apache-2.0
#pragma once
// scan_runs' greedy parse (deflate_run_scan.hpp) without its order: what it does with any
// one position, from where that position's stretch starts and ends. The GPU's PNG encoder
// parses every position at once with it. Why it holds: a run repeats the byte before it, so
// none crosses a change of byte, and scan_runs stops every run at its block's end. Split the
// data at every change of byte and at every block start into segments [g, t); the scan
// enters each at g, not inside a run. If d[g - 1] differs from d[g] (or g is 0) the byte at g
// is a literal and runs may start from g + 1 on; if g is a block start inside a repeat, from
// g itself. From there on the scan takes runs of 258 while at least 3 bytes are left, then
// one of what is left, and leaves fewer than 3 as literals.

#include <cstdint>

#if defined(__CUDACC__)
#define SP_RUN_PARSE_HD __host__ __device__ __forceinline__
#else
#define SP_RUN_PARSE_HD inline
#endif

namespace streampipe::io::detail {

inline constexpr std::int32_t kParsedLiteral = 0;  // parsed_at(): a literal byte
inline constexpr std::int32_t kParsedInside = -1;  // parsed_at(): inside a run started before

// Position `i` of the segment [g, t) (g <= i < t); `fresh`: d[g - 1] != d[g] or g == 0.
// Returns kParsedLiteral, kParsedInside, or the length (3-258) of the run that starts at i.
SP_RUN_PARSE_HD std::int32_t parsed_at(std::uint32_t i, std::uint32_t g, std::uint32_t t, bool fresh) {
  const std::uint32_t from = fresh ? g + 1 : g;  // where runs may start
  if (i < from) return kParsedLiteral;
  const std::uint32_t k = i - from, left = t - from;
  const std::uint32_t whole = left / 258 * 258;  // covered by runs of 258
  if (k < whole) return k % 258 == 0 ? 258 : kParsedInside;
  const std::uint32_t rest = left - whole;
  if (rest < 3) return kParsedLiteral;
  return k == whole ? static_cast<std::int32_t>(rest) : kParsedInside;
}

}  // namespace streampipe::io::detail

#undef SP_RUN_PARSE_HD
