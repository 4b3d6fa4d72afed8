// SPDX-License-Identifier: Apache-2.0
// GpuPngEncoder (see gpu_png_encoder.hpp): per batch, the device filters and counts
// (png_filter, png_count), the host fits every block's codes and places the blocks
// (gpu_png_plan.hpp), the device writes the bits (png_tile_bits, png_place, png_write), the
// host adds the zlib header and the Adler-32; png_file() then adds the chunks. Each direction
// is one copy per batch: the image list up, the counts down, the tables up, the streams down.

#include "streampipe/io/gpu_png_encoder.hpp"

#include "gpu_png_kernels.hpp"
#include "gpu_png_plan.hpp"
#include "png_fast_encoder.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/pinned_pool.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace streampipe::io {
namespace detail {

// Scratch memory grown by a quarter more than asked, so that slowly growing batches grow it
// rarely, and grown without stalling the GPU: device memory in stream order (a cudaFree waits
// for every stream of the device, and the lanes of a run encode side by side), page-locked
// memory from the process's pool (cudaFreeHost waits for the device too). The old memory is
// free: every batch ends waiting for its stream.
template <typename T>
class DeviceScratch {
 public:
  [[nodiscard]] T* data() const noexcept { return buffer_ ? buffer_->data() : nullptr; }
  void reserve(StreamRef stream, std::size_t count) {
    if (buffer_ && buffer_->size() >= count) return;
    buffer_.reset();
    buffer_.emplace(stream, count + count / 4);
  }

 private:
  std::optional<StreamOrderedBuffer<T>> buffer_;
};

template <typename T>
class HostScratch {
 public:
  [[nodiscard]] T* data() const noexcept { return reinterpret_cast<T*>(block_.data()); }
  [[nodiscard]] T& operator[](std::size_t i) const noexcept { return data()[i]; }
  void reserve(std::size_t count) {
    const std::size_t bytes = count * sizeof(T);
    if (block_ && block_.size() >= bytes) return;
    block_.release();
    block_ = PinnedPool::global().acquire(bytes + bytes / 4);
  }

 private:
  PinnedBlock block_;
};

}  // namespace detail

namespace {

using detail::kPngBins;
using detail::kPngTileBytes;

constexpr std::size_t align16(std::size_t n) noexcept { return (n + 15) / 16 * 16; }
// The output buffer starts with the count of blocks the device placed otherwise than planned.
constexpr std::size_t kStatusBytes = 16;

void copy(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind, StreamRef stream) {
  if (bytes > 0) SP_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, kind, stream.handle()));
}

}  // namespace

struct GpuPngEncoder::Scratch {
  detail::DeviceScratch<detail::PngImageDesc> images;
  detail::DeviceScratch<std::uint8_t> filtered;
  detail::DeviceScratch<detail::PngTileStarts> starts;
  detail::DeviceScratch<detail::PngBlockStats> stats;
  detail::DeviceScratch<std::uint32_t> tile_bits;
  detail::DeviceScratch<unsigned long long> tile_first_bit;
  detail::DeviceScratch<std::uint8_t> tables;  // block plans, code entries, header words
  detail::DeviceScratch<std::uint32_t> out;    // the status, then each image's zlib stream
  detail::HostScratch<detail::PngImageDesc> images_host;
  detail::HostScratch<detail::PngBlockStats> stats_host;
  detail::HostScratch<std::uint8_t> tables_host;
  detail::HostScratch<std::uint8_t> out_host;
};

GpuPngEncoder::GpuPngEncoder(Device device) : device_(device), scratch_(std::make_unique<Scratch>()) {}

GpuPngEncoder::~GpuPngEncoder() = default;

std::vector<std::byte> png_file(const PngStream& stream) {
  if (stream.width == 0 || stream.height == 0 || stream.zlib.size() < 6)
    throw std::invalid_argument(fmt::format("png_file: a {}x{} image with {} bytes of zlib stream", stream.width,
                                            stream.height, stream.zlib.size()));
  return detail::wrap_png(stream.width, stream.height, 1, 8, stream.zlib);
}

std::vector<std::vector<std::byte>> GpuPngEncoder::encode(std::span<const GpuGrayPlane> images, StreamRef stream) {
  const std::vector<PngStream> streams = encode_streams(images, stream);
  std::vector<std::vector<std::byte>> files;
  files.reserve(streams.size());
  for (const PngStream& s : streams) files.push_back(png_file(s));
  return files;
}

std::vector<PngStream> GpuPngEncoder::encode_streams(std::span<const GpuGrayPlane> images, StreamRef stream) {
  if (images.empty()) return {};
  if (stream.device_index() != device_.index())
    throw std::invalid_argument(fmt::format("GPU PNG encode: a stream of device {} for an encoder of device {}",
                                            stream.device_index(), device_.index()));
  Scratch& s = *scratch_;
  const std::size_t n = images.size();
  if (n > UINT32_MAX) throw std::invalid_argument("GPU PNG encode: too many images in one batch");
  s.images_host.reserve(n);
  std::size_t filtered = 0, tiles = 0, blocks = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const GpuGrayPlane& g = images[i];
    const std::uint64_t length = std::uint64_t{g.height} * (std::uint64_t{g.width} + 1);
    if (g.pixels == nullptr || g.width == 0 || g.height == 0 || g.pitch < g.width || length >= detail::kPngMaxFiltered)
      throw std::invalid_argument(fmt::format("GPU PNG encode: image {} of the batch ({}x{}, pitch {}{}) cannot be "
                                              "encoded: it needs pixels, a pitch of at least its width and "
                                              "height * (width + 1) below 2^31",
                                              i, g.width, g.height, g.pitch, g.pixels == nullptr ? ", no pixels" : ""));
    auto& d = s.images_host[i];
    d = {};
    d.pixels = g.pixels;
    d.pitch = g.pitch;
    d.filtered_at = filtered;
    d.width = g.width;
    d.height = g.height;
    d.length = static_cast<std::uint32_t>(length);
    d.first_tile = static_cast<std::uint32_t>(tiles);
    d.first_block = static_cast<std::uint32_t>(blocks);
    filtered += align16(length);
    tiles += (length + kPngTileBytes - 1) / kPngTileBytes;
    blocks += (length + detail::kDeflateBlockBytes - 1) / detail::kDeflateBlockBytes;
  }
  if (tiles > INT32_MAX) throw std::invalid_argument("GPU PNG encode: the batch is too large for one call");
  s.images.reserve(stream, n);
  s.filtered.reserve(stream, filtered);
  s.starts.reserve(stream, tiles);
  s.stats.reserve(stream, blocks);
  s.tile_bits.reserve(stream, tiles);
  s.tile_first_bit.reserve(stream, tiles);
  s.stats_host.reserve(blocks);
  const detail::PngBatch batch{s.images.data(), static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(tiles),
                               static_cast<std::uint32_t>(blocks), s.filtered.data(), s.starts.data()};

  // Pass 1: filter, parse and count; the counts come back.
  copy(s.images.data(), s.images_host.data(), n * sizeof(detail::PngImageDesc), cudaMemcpyHostToDevice, stream);
  SP_CUDA_CHECK(cudaMemsetAsync(s.stats.data(), 0, blocks * sizeof(detail::PngBlockStats), stream.handle()));
  detail::png_filter(stream, batch);
  detail::png_count(stream, batch, s.stats.data());
  copy(s.stats_host.data(), s.stats.data(), blocks * sizeof(detail::PngBlockStats), cudaMemcpyDeviceToHost, stream);
  stream.synchronize();

  // On the host: each image's codes and the place of every block in the output.
  std::vector<detail::PngImagePlan> plans(n);
  std::vector<std::size_t> out_at(n);
  std::size_t out_bytes = kStatusBytes;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& d = s.images_host[i];
    const std::size_t count = (d.length + detail::kDeflateBlockBytes - 1) / detail::kDeflateBlockBytes;
    plans[i] = detail::plan_png_image({s.stats_host.data() + d.first_block, count}, d.length);
    out_at[i] = out_bytes;
    out_bytes = align16(out_bytes + plans[i].zlib_bytes());
  }
  const std::size_t plans_bytes = align16(blocks * sizeof(detail::PngBlockPlan));
  const std::size_t codes_bytes = blocks * kPngBins * sizeof(std::uint32_t);
  const std::size_t header_bytes = blocks * detail::kMaxHeaderWords * sizeof(std::uint32_t);
  s.tables_host.reserve(plans_bytes + codes_bytes + header_bytes);
  auto* block_plans = reinterpret_cast<detail::PngBlockPlan*>(s.tables_host.data());
  auto* codes = reinterpret_cast<std::uint32_t*>(s.tables_host.data() + plans_bytes);
  std::vector<std::uint32_t> header_words;
  header_words.reserve(blocks * detail::kMaxHeaderWords);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& d = s.images_host[i];
    std::uint64_t bit = (std::uint64_t{out_at[i]} + 2) * 8;  // after the zlib header
    for (std::size_t k = 0; k < plans[i].blocks.size(); ++k) {
      const std::size_t b = d.first_block + k;
      detail::pack_block(plans[i].blocks[k], bit, plans[i].block_bits[k], {codes + b * kPngBins, kPngBins},
                         header_words, block_plans[b]);
      bit += plans[i].block_bits[k];
    }
  }
  const std::size_t tables_bytes = plans_bytes + codes_bytes + header_words.size() * sizeof(std::uint32_t);
  std::memcpy(s.tables_host.data() + plans_bytes + codes_bytes, header_words.data(),
              header_words.size() * sizeof(std::uint32_t));

  // Pass 2: the tables up, the bits written, the streams down.
  s.tables.reserve(stream, tables_bytes);
  s.out.reserve(stream, out_bytes / 4);
  s.out_host.reserve(out_bytes);
  copy(s.tables.data(), s.tables_host.data(), tables_bytes, cudaMemcpyHostToDevice, stream);
  SP_CUDA_CHECK(cudaMemsetAsync(s.out.data(), 0, out_bytes, stream.handle()));
  const auto* device_plans = reinterpret_cast<const detail::PngBlockPlan*>(s.tables.data());
  const auto* device_codes = reinterpret_cast<const std::uint32_t*>(s.tables.data() + plans_bytes);
  const auto* device_header = reinterpret_cast<const std::uint32_t*>(s.tables.data() + plans_bytes + codes_bytes);
  detail::png_tile_bits(stream, batch, device_codes, s.tile_bits.data());
  detail::png_place(stream, batch, device_plans, device_header, s.tile_bits.data(), s.tile_first_bit.data(),
                    s.out.data(), s.out.data());
  detail::png_write(stream, batch, device_codes, s.tile_bits.data(), s.tile_first_bit.data(), s.out.data());
  copy(s.out_host.data(), s.out.data(), out_bytes, cudaMemcpyDeviceToHost, stream);
  stream.synchronize();

  std::uint32_t mismatches = 0;
  std::memcpy(&mismatches, s.out_host.data(), sizeof mismatches);
  if (mismatches != 0)
    throw std::logic_error(fmt::format("GPU PNG encode: {} deflate blocks came out another length than planned",
                                       mismatches));
  std::vector<PngStream> streams(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::span<std::uint8_t> zlib(s.out_host.data() + out_at[i], plans[i].zlib_bytes());
    detail::finish_zlib(zlib, plans[i].adler);
    streams[i] = {images[i].width, images[i].height, {zlib.begin(), zlib.end()}};
  }
  return streams;
}

}  // namespace streampipe::io
