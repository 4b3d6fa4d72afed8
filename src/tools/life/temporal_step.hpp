// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/tools/life: what one warp of the temporal-blocking Life kernel does, written
// once for a "warp policy" W and compiled twice: on the GPU (W::U is one lane's 32-bit
// value, kernels.cu) and on the host (W::U holds all 32 lanes,
// temporal_host.cpp), so that CPU tests run the kernel's own indexing.
//
// The warp reads its strip's rows plus K above and below, one row per iteration, and
// pushes each row through K generation levels held in registers: level g lags level g-1 by
// one row, so after row i is read, level g computes its row i-g from level g-1's rows
// i-g-1..i-g+1. Level K is written out. Per level and row: two shuffles bring the carry
// bits of the neighbouring words; funnel shifts give the west and east neighbours; a full
// adder per row gives west+centre+east as two bit slices; three rows' slices make the
// 9-cell sum, and the cell lives next iff the sum is 3, or 4 with the cell alive. nvcc
// turns each 3-input expression into one LOP3.
//
// W provides: U; setup(plan, column) -> Lanes<U>; shfl(U, U src) -> U; load(row, Lanes)
// -> Pair<U>; store(row, Lanes, Pair<U>) (lanes that write); add_count(counter, U) (sum
// over the warp); and for U the operators & | + and the functions lop3, fsl1, fsr1, fslc,
// shl, spread0, popc2 below (found by argument-dependent lookup).

#include <cstddef>
#include <cstdint>
#include <utility>

#include "temporal.hpp"

namespace streampipe::tools::life::detail {

// ---- the 32-bit primitives (the host policy overloads them for whole warps) ------------

// (hi:lo << 1) >> 32: hi shifted left, lo's top bit carried in.
SP_TEMPORAL_HD std::uint32_t fsl1(std::uint32_t lo, std::uint32_t hi) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_l(lo, hi, 1);
#else
  return (hi << 1) | (lo >> 31);
#endif
}
// (hi:lo >> 1) & 0xffffffff: lo shifted right, hi's bit 0 carried in at the top.
SP_TEMPORAL_HD std::uint32_t fsr1(std::uint32_t lo, std::uint32_t hi) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(lo, hi, 1);
#else
  return (lo >> 1) | (hi << 31);
#endif
}
// (hi:lo << min(s, 32)) >> 32.
SP_TEMPORAL_HD std::uint32_t fslc(std::uint32_t lo, std::uint32_t hi, std::uint32_t s) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_lc(lo, hi, s);
#else
  return s >= 32 ? lo : s == 0 ? hi : (hi << s) | (lo >> (32 - s));
#endif
}
SP_TEMPORAL_HD std::uint32_t shl(std::uint32_t v, std::uint32_t s) { return v << s; }
// All ones when bit 0 is set.
SP_TEMPORAL_HD std::uint32_t spread0(std::uint32_t v) { return 0u - (v & 1u); }
SP_TEMPORAL_HD std::uint32_t popc2(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__popc(a) + __popc(b));
#else
  return static_cast<std::uint32_t>(__builtin_popcount(a) + __builtin_popcount(b));
#endif
}

// Any function of three inputs as one instruction (LOP3). nvcc finds LOP3s by itself, but
// regroups the decision below into more of them than it needs; spelt out it is 8 per 32 cells.
template <unsigned Lut>
SP_TEMPORAL_HD std::uint32_t lop3(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
#if defined(__CUDA_ARCH__)
  std::uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(Lut));
  return d;
#else
  std::uint32_t d = 0;
  for (unsigned i = 0; i < 8; ++i)
    if ((Lut >> i) & 1u) d |= ((i & 4u) ? a : ~a) & ((i & 2u) ? b : ~b) & ((i & 1u) ? c : ~c);
  return d;
#endif
}

// The table of f for lop3: f applied to the three inputs' own columns.
template <class F>
constexpr unsigned lut(F f) {
  return f(0xF0u, 0xCCu, 0xAAu) & 0xFFu;
}
inline constexpr unsigned kXor3 = lut([](unsigned a, unsigned b, unsigned c) { return a ^ b ^ c; });
inline constexpr unsigned kMajority = lut([](unsigned a, unsigned b, unsigned c) { return (a & b) | (c & (a ^ b)); });
// With c0, t0 (weight 2) and t1 (weight 4): is c0 + t0 + 2 t1 one, or two?
inline constexpr unsigned kAddsTwo = lut([](unsigned c0, unsigned t0, unsigned t1) { return (c0 ^ t0) & ~t1; });
inline constexpr unsigned kAddsFour =
    lut([](unsigned c0, unsigned t0, unsigned t1) { return (c0 & t0 & ~t1) | (~c0 & ~t0 & t1); });
// The 9-cell sum is 4 and the cell alive (s0: the sum's weight-1 bit).
inline constexpr unsigned kSurvives =
    lut([](unsigned s0, unsigned alive, unsigned four) { return ~s0 & alive & four; });
// ...or the sum is 3.
inline constexpr unsigned kLives =
    lut([](unsigned s0, unsigned two, unsigned survives) { return (s0 & two) | survives; });

template <class U>
struct Pair {
  U lo, hi;  // a 64-bit word's cells 0-31 and 32-63
};

template <class U>
struct Sums {
  Pair<U> ones, twos;  // west + centre + east of each cell, in two bit slices
};

template <class U>
struct Lanes {
  U word, west_src, east_src, useful, mask_lo, mask_hi, send_shift, send_shift2, fix_lo, fix_hi;
};

template <bool Masked, class W, class U>
SP_TEMPORAL_HD Sums<U> row_sums(const Pair<U>& v, const Lanes<U>& l) {
  U from_west, from_east;  // the west word's last cell at bit 31; the east word's cell 0 at bit 0
  if constexpr (Masked) {
    from_west = W::shfl(shl(fslc(v.lo, v.hi, l.send_shift), l.send_shift2), l.west_src);
    from_east = W::shfl(spread0(v.lo), l.east_src);
  } else {
    from_west = W::shfl(v.hi, l.west_src);
    from_east = W::shfl(v.lo, l.east_src);
  }
  const Pair<U> west{fsl1(from_west, v.lo), fsl1(v.lo, v.hi)};  // bit x: cell x - 1
  Pair<U> east{fsr1(v.lo, v.hi), fsr1(v.hi, from_east)};        // bit x: cell x + 1
  if constexpr (Masked) {
    // A partial last word takes its east carry at its last cell, not at bit 63.
    east.lo = east.lo | (from_east & l.fix_lo);
    east.hi = east.hi | (from_east & l.fix_hi);
  }
  Sums<U> s;
  s.ones.lo = lop3<kXor3>(west.lo, v.lo, east.lo);
  s.ones.hi = lop3<kXor3>(west.hi, v.hi, east.hi);
  s.twos.lo = lop3<kMajority>(west.lo, v.lo, east.lo);
  s.twos.hi = lop3<kMajority>(west.hi, v.hi, east.hi);
  return s;
}

// The next state from the row sums above (a), of the row (m, centre included) and below
// (b): the cell lives iff the 9-cell sum is 3, or 4 and it is alive.
template <class U>
SP_TEMPORAL_HD U next_cells(const U& a0, const U& a1, const U& m0, const U& m1, const U& b0, const U& b1,
                            const U& alive) {
  const U s0 = lop3<kXor3>(a0, m0, b0);      // weight 1
  const U c0 = lop3<kMajority>(a0, m0, b0);  // weight 2
  const U t0 = lop3<kXor3>(a1, m1, b1);      // weight 2
  const U t1 = lop3<kMajority>(a1, m1, b1);  // weight 4
  const U two = lop3<kAddsTwo>(c0, t0, t1);
  const U four = lop3<kAddsFour>(c0, t0, t1);
  return lop3<kLives>(s0, two, lop3<kSurvives>(s0, alive, four));
}

// f(integral_constant<int, 0>) ... f(integral_constant<int, N - 1>): indices known at compile
// time, so that the wavefront's arrays stay in registers.
template <class F, int... I>
SP_TEMPORAL_HD void unroll_each(F& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
SP_TEMPORAL_HD void unroll(F&& f) {
  unroll_each(f, std::make_integer_sequence<int, N>{});
}

SP_TEMPORAL_HD constexpr int mod3(int v) { return ((v % 3) + 3) % 3; }

template <int K, bool Masked, bool Count, class W>
struct Wavefront {
  using U = typename W::U;
  Lanes<U> lanes;
  Pair<U> row[K + 1][3];   // level g's rows by row index mod 3 (level 0: as read)
  Sums<U> sums[K][3];      // row sums of level g's rows, g < K
  U count[K];              // cells alive in this warp's rows after each generation
  std::uint32_t rows = 0;  // rows this warp writes

  // Iteration i (i mod 3 == Phase) with row i read. Warm >= 0: the first 2K iterations,
  // i == Warm, where level g is valid only from i == 2g (its row sums from i == 2g - 2).
  template <int Phase, int Warm>
  SP_TEMPORAL_HD void iterate(const Pair<U>& read, std::uint32_t i, std::uint64_t* out_row) {
    row[0][Phase] = read;
    unroll<K>([&](auto level) {
      constexpr int g = decltype(level)::value + 1;
      constexpr int newest = mod3(Phase - (g - 1));  // level g-1's row i-g+1
      constexpr int mid = mod3(newest - 1), above = mod3(newest - 2);
      if constexpr (Warm < 0 || Warm >= 2 * g - 2) sums[g - 1][newest] = row_sums<Masked, W>(row[g - 1][newest], lanes);
      if constexpr (Warm < 0 || Warm >= 2 * g) {
        const Sums<U>& a = sums[g - 1][above];
        const Sums<U>& m = sums[g - 1][mid];
        const Sums<U>& b = sums[g - 1][newest];
        const Pair<U>& alive = row[g - 1][mid];
        Pair<U> next{next_cells(a.ones.lo, a.twos.lo, m.ones.lo, m.twos.lo, b.ones.lo, b.twos.lo, alive.lo),
                     next_cells(a.ones.hi, a.twos.hi, m.ones.hi, m.twos.hi, b.ones.hi, b.twos.hi, alive.hi)};
        if constexpr (Masked) {
          next.lo = next.lo & lanes.mask_lo;
          next.hi = next.hi & lanes.mask_hi;
        }
        row[g][mid] = next;
        if constexpr (Count) {
          // Level g's row i-g is this warp's row i-g-K of the strip.
          const bool in_strip = (Warm < 0 || Warm >= K + g) && i < rows + static_cast<std::uint32_t>(K + g);
          if (in_strip) count[g - 1] = count[g - 1] + popc2(next.lo, next.hi);
        }
      }
    });
    if constexpr (Warm < 0) W::store(out_row, lanes, row[K][mod3(Phase - K)]);
  }
};

// Advances warp `warp` of the launch planned by `p`: reads `in`, writes `out`; with Count,
// adds universe u's population after the launch's generation g to counts[g * universes + u].
template <int K, bool Masked, bool Count, class W>
SP_TEMPORAL_HD void advance_warp(const TemporalPlan& p, const std::uint64_t* in, std::uint64_t* out,
                                 unsigned long long* counts, std::uint32_t warp) {
  const std::uint32_t column = warp % p.columns;
  const std::uint32_t rest = warp / p.columns;
  const std::uint32_t strip = rest % p.strips;
  const std::uint32_t universe = rest / p.strips;
  Wavefront<K, Masked, Count, W> w;
  w.lanes = W::setup(p, column);
  const std::uint32_t y0 = strip * p.strip_rows;
  w.rows = p.height - y0 < p.strip_rows ? p.height - y0 : p.strip_rows;
  if constexpr (Count) unroll<K>([&](auto g) { w.count[decltype(g)::value] = typename W::U{}; });

  const std::size_t board = std::size_t{p.words} * p.height;
  const std::uint64_t* src = in + universe * board;
  std::uint64_t* dst = out + universe * board + std::size_t{y0} * p.words;
  std::uint32_t y = (y0 + p.height - K % p.height) % p.height;  // the first row read: y0 - K
  const auto read_next = [&] {
    const Pair<typename W::U> v = W::load(src + std::size_t{y} * p.words, w.lanes);
    y = y + 1 == p.height ? 0 : y + 1;
    return v;
  };
  // One row is always in flight: row i + 1 is requested before row i is used.
  Pair<typename W::U> ahead = read_next();
  unroll<2 * K>([&](auto it) {
    constexpr int i = decltype(it)::value;
    const Pair<typename W::U> now = ahead;
    ahead = read_next();
    w.template iterate<i % 3, i>(now, static_cast<std::uint32_t>(i), dst);
  });
  const std::uint32_t end = w.rows + 2 * K;
  constexpr int first = (2 * K) % 3;
  for (std::uint32_t i = 2 * K;;) {
    const auto one = [&](auto phase) {
      const Pair<typename W::U> now = ahead;
      ahead = read_next();
      w.template iterate<decltype(phase)::value, -1>(now, i, dst);
      dst += p.words;
      return ++i == end;
    };
    if (one(std::integral_constant<int, first>{})) break;
    if (one(std::integral_constant<int, (first + 1) % 3>{})) break;
    if (one(std::integral_constant<int, (first + 2) % 3>{})) break;
  }
  if constexpr (Count)
    unroll<K>([&](auto g) {
      constexpr int level = decltype(g)::value;
      W::add_count(counts + std::size_t{static_cast<std::uint32_t>(level)} * p.universes + universe,
                   w.count[level] & w.lanes.useful);
    });
}

}  // namespace streampipe::tools::life::detail
