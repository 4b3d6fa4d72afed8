// SPDX-License-Identifier: Apache-2.0
// Files sorted by whether nvJPEG will decode them (see gpu_order.hpp).

#include "gpu_order.hpp"

#include "streampipe/io/jpeg_header.hpp"
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

struct FileKind {
  bool gpu_may_decode = false;
  std::uint32_t baseline_width = 0, baseline_height = 0;  // a baseline JPEG's size, else 0
};

// Whether the regular file at `path` starts like a file nvJPEG decodes, and if it is a
// baseline JPEG, its size. Never blocks on a FIFO (opened without waiting, and only a
// regular file is read); "no" on any failure.
FileKind kind_of_file(const std::filesystem::path& path, std::vector<std::byte>& head) {
  FileKind kind;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return kind;
  struct stat st{};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    head.resize(kHeadBytes);
    const ssize_t n = ::pread(fd, head.data(), head.size(), 0);
    const std::span<const std::byte> read(head.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
    kind.gpu_may_decode = n > 0 && gpu_may_decode(read);
    if (kind.gpu_may_decode)
      if (const auto header = io::read_jpeg_header(read); header && header->coding == io::JpegCoding::baseline) {
        kind.baseline_width = header->width;
        kind.baseline_height = header->height;
      }
  }
  ::close(fd);
  return kind;
}

}  // namespace

GpuOrder order_for_gpu_decoding(std::span<const Job> jobs, unsigned threads) {
  std::vector<FileKind> kinds(jobs.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    std::vector<std::byte> head;
    for (std::size_t i = next++; i < jobs.size(); i = next++) kinds[i] = kind_of_file(jobs[i].input, head);
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
    if (!kinds[i].gpu_may_decode) g.order.push_back(i);
  g.gpu_from = g.order.size();
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (kinds[i].gpu_may_decode) {
      g.order.push_back(i);
      g.largest_width = std::max(g.largest_width, kinds[i].baseline_width);
      g.largest_height = std::max(g.largest_height, kinds[i].baseline_height);
    }
  return g;
}

}  // namespace streampipe::tools::gray::detail
