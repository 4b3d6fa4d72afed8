// SPDX-License-Identifier: Apache-2.0
#pragma once
// GpuStage's state, shared by its host stages (gpu_stage.cpp) and its lanes'
// operation (gpu_lane.cpp).

#include "gpu_stage.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/io/gpu_jpeg_batch.hpp"
#include "streampipe/io/gpu_jpeg_decoder.hpp"
#include "streampipe/io/gpu_jpeg_encoder.hpp"
#include "streampipe/io/gpu_png_encoder.hpp"

#include <cstdint>
#include <mutex>
#include <optional>

namespace streampipe::tools::gray::detail {

// Offsets of a group's files in its staging and device buffers: 256-byte aligned.
constexpr std::size_t align_up(std::size_t n) noexcept { return (n + 255) / 256 * 256; }

// Where one file of a group is in the group's staged input and output (written by produce,
// read by the lane and by consume, which the engine orders after it).
struct Ticket {
  // failed: FileResult::error says why; jpeg: staged compressed, for nvJPEG; luma and rgb:
  // decoded on the host and staged as tools/gray/pixels.hpp says.
  enum class Kind { failed, jpeg, luma, rgb };
  Kind kind = Kind::failed;
  const std::byte* host = nullptr;  // jpeg: the file's bytes in the pinned staging input
  std::size_t in_offset = 0, in_bytes = 0;
  std::size_t out_offset = 0;
  bool baseline = false;               // jpeg: may go to the JPEG engines
  std::vector<std::byte> encoded;      // the output file when nvJPEG encoded it
  // Its gray image, copied back for the host to encode: the GPU was to encode it (the group's
  // staged output then holds nothing) and nvJPEG's encoder refused it.
  std::vector<std::uint8_t> gray;
  io::PngStream png;                   // the output's compressed data when the GPU encoded it as PNG
  [[nodiscard]] bool ok() const noexcept { return kind != Kind::failed; }
};

// A lane's states are made on its first use of each (null until then).
struct LaneCodecs {
  std::unique_ptr<io::GpuJpegState> single;          // general backend, one image per call
  std::vector<std::unique_ptr<io::GpuJpegEncoder>> encoders;  // one per file of a group
  std::unique_ptr<io::GpuPngEncoder> png;            // PNG outputs encoded on the GPU
  DeviceBuffer<std::uint8_t> rgb;                    // the group's JPEGs decoded to RGB (not to luma)
  // The group's gray images when the GPU encodes them: only the encoded files go back to the
  // host, so the group's output (pinned staging and its copy back) would be wasted.
  DeviceBuffer<std::uint8_t> gray;
  PinnedBuffer<std::uint8_t> host_gray;              // a file nvJPEG refused: its gray image, made on the host
  std::optional<Event> uploaded;                     // the last upload from host_gray has finished
  // The lane's last group has been decoded: nvJPEG's states hold that group's bitstreams and
  // buffers until then, so the next group's decode on them waits for it.
  std::optional<Event> decoded;
};

// A GPU's JPEG engines' state, which its lanes take in turn. Its buffers are sized for the
// run's largest file, large and slow to allocate: one per GPU, since the engines decode
// nearly as fast from one state as from four (docs/gray.md).
struct SharedBatchState {
  std::mutex mutex;
  std::unique_ptr<io::GpuJpegBatchState> state;  // null where the GPU has no JPEG engines
  // The last batch decoded on it has finished: until then nvJPEG still reads its buffers.
  std::optional<Event> decoded;
};

// A GPU's nvJPEG libraries and its lanes' states, made by Operation::start_device; released
// with the engine. `engines` where the GPU has JPEG engines and nvJPEG decodes: their handle
// also reads the headers and encodes. Beside the engines the general backend's handle only
// decodes the files they refuse, so it is made on the first such file: made at the start it
// held its memory for the run and lengthened the GPU's release at the end (docs/gray.md).
class DeviceCodecs {
  // Declared first, released last: the states below were made from these libraries.
  Device device_;
  std::unique_ptr<io::GpuJpegDecoder> engines_;
  std::mutex general_mutex_;
  std::unique_ptr<io::GpuJpegDecoder> general_;

 public:
  DeviceCodecs(Device device, std::unique_ptr<io::GpuJpegDecoder> engines, bool general_now);
  ~DeviceCodecs();
  DeviceCodecs(const DeviceCodecs&) = delete;
  DeviceCodecs& operator=(const DeviceCodecs&) = delete;

  [[nodiscard]] const io::GpuJpegDecoder* engines() const noexcept { return engines_.get(); }
  // The general backend's handle, made on the first call (any lane's; throws NvjpegError).
  [[nodiscard]] const io::GpuJpegDecoder& general();
  // The handle that reads headers and encodes: the engines', else general().
  [[nodiscard]] const io::GpuJpegDecoder& library() { return engines_ ? *engines_ : general(); }

  SharedBatchState batched;       // with engines()
  std::vector<LaneCodecs> lanes;  // by Batch::member_lane()
};

struct GpuStage::Impl {
  GpuStageSetup setup;
  std::span<FileResult> files;
  const Options& options;
  std::vector<Ticket> tickets;           // per file
  // Per engine item, its files: written by item() before the item is submitted, read by the
  // item's stages and lane after (the engine orders them), so without a lock. There are at
  // most as many items as files.
  std::vector<FileRange> items;
  mutable std::mutex described_mutex;
  std::string described;  // describe(), from the first GPU that started

  Impl(const GpuStageSetup& s, std::span<FileResult> f, const Options& o);

  // Where a group's gray images go on a GPU: its output, unless the GPU encodes them
  // (LaneCodecs::gray); then the output is a token, as produce declared it.
  [[nodiscard]] bool output_is_token(bool host_form) const noexcept { return setup.encode && !host_form; }
  // The GPU encodes PNG outputs (GpuPngEncoder) rather than JPEG ones (nvJPEG).
  [[nodiscard]] bool encodes_png() const noexcept { return setup.encode && options.format == io::ImageFormat::png; }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  [[nodiscard]] FileRange files_of(std::size_t item) const { return items.at(item); }
  void produce(std::size_t item, pipeline::StagingInput& staging);
  void consume(std::size_t item, std::span<const std::byte> out, host::Overwrite overwrite);
  // A GPU's codecs, on its start thread (gpu_stage.cpp).
  std::shared_ptr<void> start_device(const pipeline::DeviceStart& start);
  void run_lane(const pipeline::Batch& b);  // a GPU's lane (gpu_lane.cpp)
  // The group's gray images in `out` (device memory) as PNG data, into their tickets (the
  // host worker that writes a file makes it: the chunks' CRC-32 is per-byte work).
  void encode_png(LaneCodecs& lane, std::size_t first, std::size_t count, const std::uint8_t* out, StreamRef stream);
  void run_host(const pipeline::Batch& b);  // the CPU's lane: the staged luma or RGB to gray
};

}  // namespace streampipe::tools::gray::detail
