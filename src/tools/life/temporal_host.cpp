// SPDX-License-Identifier: Apache-2.0
// The bit-packed kernel's warp code (temporal_step.hpp) run on the host: one object
// holds a warp's 32 lanes and every operation acts on all of them, so the kernel's plan,
// shuffles, wrap and masks are checked by CPU tests. Each launch also checks that every
// word of the output was written exactly once.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

#include "temporal_step.hpp"
#include "streampipe/tools/life/bitpacked.hpp"

namespace streampipe::tools::life::detail {
namespace {

struct LaneVec {
  std::array<std::uint32_t, 32> v{};
};

template <class F>
LaneVec each(F f) {
  LaneVec r;
  for (std::uint32_t l = 0; l < 32; ++l) r.v[l] = f(l);
  return r;
}

LaneVec operator&(const LaneVec& a, const LaneVec& b) {
  return each([&](auto l) { return a.v[l] & b.v[l]; });
}
LaneVec operator|(const LaneVec& a, const LaneVec& b) {
  return each([&](auto l) { return a.v[l] | b.v[l]; });
}
LaneVec operator+(const LaneVec& a, const LaneVec& b) {
  return each([&](auto l) { return a.v[l] + b.v[l]; });
}

// The kernel's primitives, lane by lane (found by argument-dependent lookup).
LaneVec fsl1(const LaneVec& lo, const LaneVec& hi) {
  return each([&](auto l) { return detail::fsl1(lo.v[l], hi.v[l]); });
}
LaneVec fsr1(const LaneVec& lo, const LaneVec& hi) {
  return each([&](auto l) { return detail::fsr1(lo.v[l], hi.v[l]); });
}
LaneVec fslc(const LaneVec& lo, const LaneVec& hi, const LaneVec& s) {
  return each([&](auto l) { return detail::fslc(lo.v[l], hi.v[l], s.v[l]); });
}
LaneVec shl(const LaneVec& v, const LaneVec& s) {
  return each([&](auto l) { return v.v[l] << s.v[l]; });
}
LaneVec spread0(const LaneVec& v) {
  return each([&](auto l) { return detail::spread0(v.v[l]); });
}
LaneVec popc2(const LaneVec& a, const LaneVec& b) {
  return each([&](auto l) { return detail::popc2(a.v[l], b.v[l]); });
}
template <unsigned Lut>
LaneVec lop3(const LaneVec& a, const LaneVec& b, const LaneVec& c) {
  return each([&](auto l) { return detail::lop3<Lut>(a.v[l], b.v[l], c.v[l]); });
}

// The launch being emulated: where the output starts and how often each word was written.
struct Launch {
  std::uint64_t* out = nullptr;
  std::vector<std::uint8_t> writes;
};
thread_local Launch* current = nullptr;

struct HostWarp {
  using U = LaneVec;
  static Lanes<U> setup(const TemporalPlan& p, std::uint32_t column) {
    Lanes<U> r;
    for (std::uint32_t l = 0; l < 32; ++l) {
      const LaneSetup s = lane_setup(p, column, l);
      r.word.v[l] = s.word;
      r.west_src.v[l] = s.west_src;
      r.east_src.v[l] = s.east_src;
      r.useful.v[l] = s.useful;
      r.mask_lo.v[l] = s.mask_lo;
      r.mask_hi.v[l] = s.mask_hi;
      r.send_shift.v[l] = s.send_shift;
      r.send_shift2.v[l] = s.send_shift2;
      r.fix_lo.v[l] = s.fix_lo;
      r.fix_hi.v[l] = s.fix_hi;
    }
    return r;
  }
  static U shfl(const U& v, const U& src) {
    return each([&](auto l) { return v.v[src.v[l]]; });
  }
  static Pair<U> load(const std::uint64_t* row, const Lanes<U>& lanes) {
    Pair<U> r;
    for (std::uint32_t l = 0; l < 32; ++l) {
      const std::uint64_t w = row[lanes.word.v[l]];
      r.lo.v[l] = static_cast<std::uint32_t>(w);
      r.hi.v[l] = static_cast<std::uint32_t>(w >> 32);
    }
    return r;
  }
  static void store(std::uint64_t* row, const Lanes<U>& lanes, const Pair<U>& v) {
    for (std::uint32_t l = 0; l < 32; ++l) {
      if (lanes.useful.v[l] == 0) continue;
      std::uint64_t* at = row + lanes.word.v[l];
      *at = (std::uint64_t{v.hi.v[l]} << 32) | v.lo.v[l];
      ++current->writes[static_cast<std::size_t>(at - current->out)];
    }
  }
  static void add_count(unsigned long long* counter, const U& c) {
    for (const std::uint32_t x : c.v) *counter += x;
  }
};

template <int K>
void run_warp(const TemporalPlan& p, bool masked, bool count, const std::uint64_t* in, std::uint64_t* out,
              unsigned long long* counts, std::uint32_t warp) {
  if (masked) {
    if (count)
      advance_warp<K, true, true, HostWarp>(p, in, out, counts, warp);
    else
      advance_warp<K, true, false, HostWarp>(p, in, out, counts, warp);
  } else {
    if (count)
      advance_warp<K, false, true, HostWarp>(p, in, out, counts, warp);
    else
      advance_warp<K, false, false, HostWarp>(p, in, out, counts, warp);
  }
}

}  // namespace
}  // namespace streampipe::tools::life::detail

namespace streampipe::tools::life::bitpacked {

std::vector<std::uint64_t> advance_tiled_host(std::vector<std::uint64_t>& words, std::uint32_t width,
                                              std::uint32_t height, std::uint32_t universes, std::uint64_t generations,
                                              const TiledOptions& options) {
  using namespace detail;
  const std::size_t board = std::size_t{words_per_row(width)} * height;
  if (width == 0 || height == 0 || universes == 0 || words.size() != board * universes)
    throw std::invalid_argument(fmt::format("advance_tiled_host: {} words do not hold {} universes of {}x{}",
                                            words.size(), universes, width, height));
  const unsigned most = temporal_generations(width, checked_generations_per_launch(options.generations_per_launch));
  const bool masked = width % 64 != 0;
  std::vector<unsigned long long> counts(options.count_population ? generations * universes : 0, 0);
  std::vector<std::uint64_t> next(words.size());
  for (std::uint64_t done = 0; done < generations;) {
    const unsigned k = launch_generations(generations - done, most);
    const TemporalPlan p = plan_temporal(width, height, universes, options.resident_warps, k, options.strip_rows);
    Launch launch{next.data(), std::vector<std::uint8_t>(next.size(), 0)};
    current = &launch;
    std::fill(next.begin(), next.end(), 0xa5a5a5a5a5a5a5a5ull);  // an unwritten word shows
    unsigned long long* c = options.count_population ? counts.data() + done * universes : nullptr;
    for (std::uint32_t w = 0; w < p.warps; ++w) {
      switch (k) {
        case 1:
          run_warp<1>(p, masked, c != nullptr, words.data(), next.data(), c, w);
          break;
        case 2:
          run_warp<2>(p, masked, c != nullptr, words.data(), next.data(), c, w);
          break;
        case 4:
          run_warp<4>(p, masked, c != nullptr, words.data(), next.data(), c, w);
          break;
        default:
          run_warp<8>(p, masked, c != nullptr, words.data(), next.data(), c, w);
          break;
      }
    }
    current = nullptr;
    for (std::size_t i = 0; i < launch.writes.size(); ++i)
      if (launch.writes[i] != 1)
        throw std::logic_error(fmt::format("tiled step of {} generations on {}x{}: word {} written {} times", k, width,
                                           height, i, launch.writes[i]));
    std::swap(words, next);
    done += k;
  }
  return {counts.begin(), counts.end()};
}

}  // namespace streampipe::tools::life::bitpacked
