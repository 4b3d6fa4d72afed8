// SPDX-License-Identifier: Apache-2.0
#include "streampipe/pipeline/host_copy.hpp"

#include "streampipe/cuda/pinned_pool.hpp"
#include "streampipe/report/statistics.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
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

std::size_t copy_piece_bytes(std::size_t total, int threads) noexcept {
  constexpr std::size_t kPage = 4096, kMin = std::size_t{128} << 10, kMax = std::size_t{2} << 20;
  const auto participants = static_cast<std::size_t>(std::max(threads, 1));
  const std::size_t piece = std::clamp(total / (2 * participants), kMin, kMax);
  return (piece + kPage - 1) / kPage * kPage;
}

namespace {

void copy_range(const CopyRange& r, CopyQueue::Store store) noexcept {
  if (store == CopyQueue::Store::streaming)
    streaming_copy(r.dst, r.src, r.bytes);
  else
    std::memcpy(r.dst, r.src, r.bytes);
}

}  // namespace

struct CopyQueue::State {
  struct Job {
    std::vector<CopyRange> pieces;
    Store store = Store::cached;
    std::size_t next = 0;             // guarded by State::mutex
    std::atomic<std::size_t> done{0};
  };
  std::mutex mutex;
  std::deque<std::shared_ptr<Job>> jobs;  // in call order; a job leaves once fully claimed

  // The next piece of the oldest job with pieces left; false when there is none.
  bool claim(std::shared_ptr<Job>& job, std::size_t& piece) {
    std::lock_guard lock(mutex);
    while (!jobs.empty() && jobs.front()->next == jobs.front()->pieces.size()) jobs.pop_front();
    if (jobs.empty()) return false;
    job = jobs.front();
    piece = job->next++;
    return true;
  }

  // Plain stores into staging, not streaming ones: the pieces are small and the slots'
  // staging memory is reused over and over, so it stays in the last-level cache, where the
  // DMA engine reads it; streaming stores would push every byte out to DRAM first (measured:
  // docs/engine.md, the "Staging" part of "What happens to an item").
  static void run(Job& job, std::size_t piece) {
    const CopyRange& r = job.pieces[piece];
    copy_range(r, job.store);
    job.done.fetch_add(1, std::memory_order_release);
  }

  void help() {
    std::shared_ptr<Job> job;
    std::size_t piece = 0;
    while (claim(job, piece)) run(*job, piece);
  }
};

CopyQueue::CopyQueue(int helpers, Spawn spawn)
    : helpers_(std::max(helpers, 0)), spawn_(std::move(spawn)), state_(std::make_shared<State>()) {}

CopyQueue::~CopyQueue() = default;

void CopyQueue::copy(std::span<const CopyRange> ranges, Store store) {
  std::size_t total = 0;
  for (const auto& r : ranges) total += r.bytes;
  if (total < kParallelCopyMin || helpers_ == 0) {
    for (const auto& r : ranges) copy_range(r, store);
    return;
  }
  const std::size_t piece = copy_piece_bytes(total, helpers_ + 1);
  auto job = std::make_shared<State::Job>();
  job->store = store;
  job->pieces.reserve(total / piece + ranges.size());
  for (const auto& r : ranges)
    for (std::size_t off = 0; off < r.bytes; off += piece)
      job->pieces.push_back({static_cast<std::byte*>(r.dst) + off, static_cast<const std::byte*>(r.src) + off,
                             std::min(piece, r.bytes - off)});
  const std::size_t pieces = job->pieces.size();
  {
    std::lock_guard lock(state_->mutex);
    state_->jobs.push_back(job);
  }
  const auto n_helpers = std::min<std::size_t>(static_cast<std::size_t>(helpers_), pieces - 1);
  for (std::size_t h = 0; h < n_helpers; ++h) spawn_([state = state_] { state->help(); });
  // Older calls' pieces first: this call's own pieces are claimed in turn.
  for (;;) {
    {
      std::lock_guard lock(state_->mutex);
      if (job->next == pieces) break;
    }
    std::shared_ptr<State::Job> j;
    std::size_t p = 0;
    if (!state_->claim(j, p)) break;
    State::run(*j, p);
  }
  // Only pieces already being copied by other threads remain.
  while (job->done.load(std::memory_order_acquire) < pieces) std::this_thread::yield();
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
