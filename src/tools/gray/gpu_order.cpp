// SPDX-License-Identifier: Apache-2.0
// Files sorted by whether nvJPEG will decode them (see gpu_order.hpp).

#include "gpu_order.hpp"

#include "streampipe/tools/gray/decode.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

namespace streampipe::tools::gray::detail {
namespace {

// Enough for a JPEG's markers up to its first scan unless large metadata comes first (the
// file then counts as one the CPU decodes: a guess, which only orders the run).
constexpr std::size_t kHeadBytes = std::size_t{64} << 10;

// Whether the regular file at `path` starts like a file nvJPEG decodes. Never blocks on a
// FIFO (opened without waiting, and only a regular file is read); false on any failure.
bool gpu_may_decode_file(const std::filesystem::path& path, std::vector<std::byte>& head) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st{};
  bool may = false;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    head.resize(kHeadBytes);
    const ssize_t n = ::pread(fd, head.data(), head.size(), 0);
    if (n > 0) may = gpu_may_decode({head.data(), static_cast<std::size_t>(n)});
  }
  ::close(fd);
  return may;
}

}  // namespace

GpuOrder order_for_gpu_decoding(std::span<const Job> jobs, unsigned threads) {
  std::vector<char> may(jobs.size(), 0);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    std::vector<std::byte> head;
    for (std::size_t i = next++; i < jobs.size(); i = next++) may[i] = gpu_may_decode_file(jobs[i].input, head) ? 1 : 0;
  };
  {
    std::vector<std::jthread> pool;
    const unsigned helpers = std::min<unsigned>(std::max(threads, 1u), 8u) - 1;
    for (unsigned t = 0; t < helpers && t + 1 < jobs.size(); ++t) pool.emplace_back(work);
    work();
  }
  GpuOrder g;
  g.order.reserve(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (!may[i]) g.order.push_back(i);
  g.gpu_from = g.order.size();
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (may[i]) g.order.push_back(i);
  return g;
}

}  // namespace streampipe::tools::gray::detail
