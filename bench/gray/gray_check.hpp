// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `bench gray` needs around the tool: a scratch folder that is removed afterwards,
// a parallel loop for generating and checking images, and the checks of one output file
// against the host reference of its decoded input: the tool's (exact, or within nvJPEG's
// tolerance) and a peer's (within its bound: its luma is taken differently).

#include "streampipe/io/image.hpp"
#include "streampipe/tools/gray/decode.hpp"

#include <atomic>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace streampipe::bench::gray_bench {

// Runs fn(i) for i in [0, n) on `threads` threads; the first exception is rethrown.
template <typename F>
void parallel_for(std::size_t n, int threads, F&& fn) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex m;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < n; i = next++) {
        try {
          fn(i);
        } catch (...) {
          std::lock_guard lock(m);
          if (!error) error = std::current_exception();
          next = n;
        }
      }
    });
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

// A fresh folder under the system's temporary directory, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

// Empty string when the output matches the reference, else why not: exactly for PNG, PSNR
// >= 30 dB for JPEG. `diff` (--decode gpu with PNG outputs) collects the difference and
// applies the documented tolerance instead of equality.
[[nodiscard]] std::string check_output(const std::filesystem::path& output, const std::vector<std::uint8_t>& want,
                                       io::ImageFormat format, tools::gray::LevelDifference* diff = nullptr);

// How far a peer's gray may lie from the reference, per PNG output: each peer takes its luma
// its own way (gray_peers.hpp says how and why).
struct PeerBound {
  int max_levels = 0;        // on any pixel
  double mean_levels = 0;    // over the file's pixels
};

// The same for a peer's output: 8-bit gray of the right size; for PNG within `bound` of the
// reference (the difference is added to `diff`), for JPEG PSNR >= 30 dB.
[[nodiscard]] std::string check_peer_output(const std::filesystem::path& output, const std::vector<std::uint8_t>& want,
                                            io::ImageFormat format, const PeerBound& bound,
                                            tools::gray::LevelDifference& diff);

}  // namespace streampipe::bench::gray_bench
