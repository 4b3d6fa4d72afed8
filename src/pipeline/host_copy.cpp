#include "streampipe/pipeline/host_copy.hpp"

#include "streampipe/cuda/pinned_pool.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
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

void split_work(std::size_t bytes, std::size_t piece_bytes, int helpers,
                const std::function<void(std::function<void()>)>& spawn,
                const std::function<void(std::size_t, std::size_t)>& body) {
  piece_bytes = std::max<std::size_t>(piece_bytes, 1);
  const std::size_t pieces = (bytes + piece_bytes - 1) / piece_bytes;
  if (pieces <= 1 || helpers <= 0) {
    if (bytes > 0) body(0, bytes);
    return;
  }
  struct State {
    std::atomic<std::size_t> next{0};
    std::atomic<std::size_t> done{0};
    std::size_t pieces = 0, piece = 0, bytes = 0;
    std::function<void(std::size_t, std::size_t)> body;
  };
  // Shared: a helper may start after the caller has finished every piece and returned.
  auto st = std::make_shared<State>();
  st->pieces = pieces;
  st->piece = piece_bytes;
  st->bytes = bytes;
  st->body = body;
  const auto work = [](State& s) {
    for (std::size_t p; (p = s.next.fetch_add(1)) < s.pieces;) {
      const std::size_t first = p * s.piece;
      s.body(first, std::min(s.bytes, first + s.piece));
      s.done.fetch_add(1, std::memory_order_release);
    }
  };
  const int n_helpers = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(helpers), pieces - 1));
  for (int h = 0; h < n_helpers; ++h) spawn([st, work] { work(*st); });
  work(*st);
  // Only pieces already running on helpers remain: wait for them briefly.
  while (st->done.load(std::memory_order_acquire) < pieces) std::this_thread::yield();
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
      std::sort(ms.begin(), ms.end());
      out.push_back({t, streaming, static_cast<double>(bytes) / (ms[ms.size() / 2] * 1e6)});
    }
    if (threads == 1) break;
  }
  return out;
}

}  // namespace streampipe::pipeline
