// SPDX-License-Identifier: Apache-2.0
#include "deflate_run_scan.hpp"

#include <algorithm>
#include <bit>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace streampipe::io::detail {
void scan_runs(std::span<const std::uint8_t> data, std::size_t begin, std::size_t end, std::vector<Run>& runs,
               std::span<std::uint32_t, 256> literals) {
  const std::uint8_t* d = data.data();
  // Four histograms, byte i counted in table i % 4: neighbours that are equal (common in
  // photo grain) then increment different counters instead of waiting on one another.
  std::uint32_t counts[4][256] = {};
  const auto count = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) ++counts[i & 3][d[i]];
  };
  // A run starting at p (its three first bytes checked): as long as the byte repeats.
  const auto take_run = [&](std::size_t p) {
    const std::size_t most = std::min(kMaxRun, end - p);
    std::size_t length = kMinRun;
    while (length < most && d[p + length] == d[p]) ++length;
    runs.push_back({static_cast<std::uint32_t>(p), static_cast<std::uint32_t>(length)});
    return p + length;
  };
  std::size_t i = begin;
  while (i < end) {
#if defined(__SSE2__)
    // Positions i .. i + 15 at once: bit k says whether d[i + k - 1 .. i + k + 2] are equal.
    // Every byte read lies in [i - 1, i + 18), inside the data; the scalar step below takes
    // the first byte of the data and the block's last 17.
    if (i >= 1 && i + 18 <= end) {
      const auto load = [&](std::size_t at) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + at)); };
      const __m128i before = load(i - 1), here = load(i), next = load(i + 1), after = load(i + 2);
      const __m128i equal = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(before, here), _mm_cmpeq_epi8(here, next)),
                                          _mm_cmpeq_epi8(next, after));
      const auto starts = static_cast<unsigned>(_mm_movemask_epi8(equal));
      if (starts == 0) {
        count(i, i + 16);
        i += 16;
        continue;
      }
      const std::size_t first = i + static_cast<std::size_t>(std::countr_zero(starts));
      count(i, first);
      i = take_run(first);
      continue;
    }
#endif
    if (i > 0 && i + kMinRun <= end && d[i - 1] == d[i] && d[i] == d[i + 1] && d[i + 1] == d[i + 2]) {
      i = take_run(i);
    } else {
      ++counts[i & 3][d[i]];
      ++i;
    }
  }
  for (std::size_t b = 0; b < 256; ++b) literals[b] += counts[0][b] + counts[1][b] + counts[2][b] + counts[3][b];
}

}  // namespace streampipe::io::detail
