// SPDX-License-Identifier: Apache-2.0
#pragma once
// PNG encoding of 8-bit gray images on the GPU (the CUDA runtime only; no nvJPEG). The files
// are byte for byte those encode_png writes at level 1 (filter up, strategy fast): the host
// encoder's deflate blocks of runs and fitted Huffman codes (png_fast_encoder.hpp) are
// independent of one another, so the GPU filters, parses and counts every block of a batch
// at once, the host fits the codes from the counts (the host encoder's own code) and places
// the blocks, and the GPU writes every symbol at its bit. The host then adds the checksums
// and the chunks (png_file(), which may run on another thread). One encoder per stream,
// used by one thread at a time; it keeps its device and pinned scratch between batches and
// grows it as needed, in stream order (so every stream it encoded on must outlive
// it) and from the process's pinned pool. Wrong arguments throw std::invalid_argument; CUDA
// failures CudaError; the destructor never throws.

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/stream.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace streampipe::io {

// An 8-bit gray image in device memory of the encoder's device: `height` rows of `width`
// bytes, `pitch` bytes apart (at least `width`). height * (width + 1) must stay below 2^31.
struct GpuGrayPlane {
  const std::uint8_t* pixels = nullptr;
  std::uint32_t width = 0, height = 0;
  std::size_t pitch = 0;
};

// An 8-bit gray image's compressed data (the zlib stream of its filtered rows) and size, as
// the encoder made it; png_file() wraps it into the PNG file (the chunks and their CRC-32s),
// on whichever thread is cheapest, e.g. the one that writes the file.
struct PngStream {
  std::uint32_t width = 0, height = 0;
  std::vector<std::uint8_t> zlib;
};

// Throws std::invalid_argument for an empty stream or size.
[[nodiscard]] std::vector<std::byte> png_file(const PngStream& stream);

class GpuPngEncoder {
 public:
  explicit GpuPngEncoder(Device device);
  ~GpuPngEncoder();
  GpuPngEncoder(const GpuPngEncoder&) = delete;
  GpuPngEncoder& operator=(const GpuPngEncoder&) = delete;

  [[nodiscard]] const Device& device() const noexcept { return device_; }

  // The compressed data of `images`, in order. The pixels are read in `stream` order (a
  // stream of the encoder's device) and must stay until the call returns. The call waits for
  // the stream twice: for the blocks' counts, which the codes are fitted to, and for the
  // bits. Call with the encoder's device current.
  [[nodiscard]] std::vector<PngStream> encode_streams(std::span<const GpuGrayPlane> images, StreamRef stream);
  // The PNG files of `images`: png_file() of each of encode_streams().
  [[nodiscard]] std::vector<std::vector<std::byte>> encode(std::span<const GpuGrayPlane> images, StreamRef stream);

 private:
  struct Scratch;
  Device device_;
  std::unique_ptr<Scratch> scratch_;
};

}  // namespace streampipe::io
