// SPDX-License-Identifier: Apache-2.0
#include "streampipe/pipeline/host_copy.hpp"

#include "streampipe/cuda/pinned_pool.hpp"
#include "streampipe/report/statistics.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace streampipe::pipeline {

void streaming_copy(void* dst_v, const void* src_v, std::size_t n) noexcept {
  auto* dst = static_cast<std::byte*>(dst_v);
  const auto* src = static_cast<const std::byte*>(src_v);
#if defined(__x86_64__)
  if (n >= 64 * 1024) {
    const std::size_t head = (16 - reinterpret_cast<std::uintptr_t>(dst) % 16) % 16;
    std::memcpy(dst, src, head);
    dst += head;
    src += head;
    n -= head;
    const std::size_t blocks = n / 64;
    for (std::size_t b = 0; b < blocks; ++b) {
      const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
      const __m128i x1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16));
      const __m128i x2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 32));
      const __m128i x3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 48));
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst), x0);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 16), x1);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 32), x2);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 48), x3);
      dst += 64;
      src += 64;
    }
    _mm_sfence();  // streaming stores are weakly ordered: complete them before the DMA starts
    n -= blocks * 64;
  }
#endif
  std::memcpy(dst, src, n);
}

std::size_t copy_piece_bytes(std::size_t total, int threads) noexcept {
  constexpr std::size_t kPage = 4096, kMin = std::size_t{128} << 10, kMax = std::size_t{2} << 20;
  const auto participants = static_cast<std::size_t>(std::max(threads, 1));
  const std::size_t piece = std::clamp(total / (2 * participants), kMin, kMax);
  return (piece + kPage - 1) / kPage * kPage;
}

namespace {

void copy_range(const CopyRange& r, CopyStore store) noexcept {
  if (store == CopyStore::streaming)
    streaming_copy(r.dst, r.src, r.bytes);
  else
    std::memcpy(r.dst, r.src, r.bytes);
}

}  // namespace

void copy_ranges(PartQueue& parts, std::span<const CopyRange> ranges, CopyStore store) {
  std::size_t total = 0;
  for (const auto& r : ranges) total += r.bytes;
  if (total < kParallelCopyMin || parts.helpers() == 0) {
    for (const auto& r : ranges) copy_range(r, store);
    return;
  }
  const std::size_t piece = copy_piece_bytes(total, parts.helpers() + 1);
  std::vector<CopyRange> pieces;
  pieces.reserve(total / piece + ranges.size());
  for (const auto& r : ranges)
    for (std::size_t off = 0; off < r.bytes; off += piece)
      pieces.push_back({static_cast<std::byte*>(r.dst) + off, static_cast<const std::byte*>(r.src) + off,
                        std::min(piece, r.bytes - off)});
  parts.run(pieces.size(), [&](std::size_t k) { copy_range(pieces[k], store); });
}

std::vector<HostCopyFigure> measure_host_copy(std::size_t bytes, int threads, int runs) {
  std::vector<std::byte> src(bytes);
  std::memset(src.data(), 0x5a, bytes);  // touch every page before timing
  PinnedBlock dst = PinnedPool::global().acquire(bytes);
  std::vector<HostCopyFigure> out;
  for (int t : {1, threads}) {
    for (bool streaming : {false, true}) {
      std::vector<double> ms;
      for (int r = 0; r < runs + 1; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<std::thread> pool;
        const std::size_t piece = (bytes + static_cast<std::size_t>(t) - 1) / static_cast<std::size_t>(t);
        for (int k = 0; k < t; ++k)
          pool.emplace_back([&, k] {
            const std::size_t first = static_cast<std::size_t>(k) * piece;
            if (first >= bytes) return;
            const std::size_t len = std::min(piece, bytes - first);
            if (streaming)
              streaming_copy(dst.data() + first, src.data() + first, len);
            else
              std::memcpy(dst.data() + first, src.data() + first, len);
          });
        for (auto& th : pool) th.join();
        const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (r > 0) ms.push_back(elapsed);
      }
      out.push_back({t, streaming, static_cast<double>(bytes) / (report::median(ms) * 1e6)});
    }
    if (threads == 1) break;
  }
  return out;
}

}  // namespace streampipe::pipeline
