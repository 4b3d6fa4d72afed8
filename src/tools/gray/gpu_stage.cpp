// SPDX-License-Identifier: Apache-2.0
// GpuStage's set-up and host stages: reading and staging a group, writing its outputs (see
// gpu_stage.hpp). The lanes' part is in gpu_lane.cpp.

#include "gpu_stage_impl.hpp"

#include "file_io.hpp"

#include "streampipe/io/jpeg_header.hpp"
#include "streampipe/pipeline/parts.hpp"
#include "streampipe/tools/gray/decode.hpp"
#include "streampipe/tools/gray/pixels.hpp"

#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <stdexcept>

namespace streampipe::tools::gray::detail {
GpuStage::Impl::Impl(const GpuStageSetup& s, std::span<FileResult> f, const Options& o)
    : setup(s), files(f), options(o), tickets(f.size()), items(f.size()) {
  if (setup.group == 0) throw std::invalid_argument("gray's GPU stage needs a group size");
}

DeviceCodecs::DeviceCodecs(Device device, std::unique_ptr<io::GpuJpegDecoder> engines, bool general_now)
    : device_(device), engines_(std::move(engines)) {
  if (general_now) general_ = std::make_unique<io::GpuJpegDecoder>(device_);
}

DeviceCodecs::~DeviceCodecs() = default;

const io::GpuJpegDecoder& DeviceCodecs::general() {
  const std::lock_guard lock(general_mutex_);
  if (!general_) general_ = std::make_unique<io::GpuJpegDecoder>(device_);
  return *general_;
}

std::shared_ptr<void> GpuStage::Impl::start_device(const pipeline::DeviceStart& start) {
  // Each step takes 0.05-0.3 s (docs/gray.md): a closing engine stops the start between them.
  const auto go_on = [&] {
    if (start.stop_requested && start.stop_requested()) throw std::runtime_error("nvJPEG's set-up was stopped");
  };
  const Device device(start.device);
  const bool png = encodes_png();
  std::unique_ptr<io::GpuJpegDecoder> engines;
  if (setup.decode) {
    try {
      engines = std::make_unique<io::GpuJpegDecoder>(device, io::GpuJpegBackend::hardware);
    } catch (const io::NvjpegError&) {
      engines.reset();  // no JPEG engines on this GPU: the general backend decodes everything
    }
  }
  // Without the engines every file nvJPEG decodes or encodes needs the general handle.
  const bool general_now = !engines && (setup.decode || !png);
  go_on();
  auto codecs = std::make_shared<DeviceCodecs>(device, std::move(engines), general_now);
  if (codecs->engines()) {
    go_on();
    codecs->batched.state = std::make_unique<io::GpuJpegBatchState>(*codecs->engines());
    if (setup.largest_width > 0 && setup.largest_height > 0) {
      try {
        codecs->batched.state->reserve(setup.group, setup.largest_width, setup.largest_height,
                                       options.jpeg_luma ? io::GpuJpegOutput::luma : io::GpuJpegOutput::rgb);
      } catch (const io::NvjpegError&) {
        // Too little memory for the largest file, say: each batch then allocates what it needs.
      }
    }
  }
  // The lanes' decode states are made by each lane when it first needs one (gpu_lane.cpp):
  // made here, one after another, they were most of the GPU's start (docs/gray.md), which
  // the run waited for; made by the lanes, they overlap the other lanes' work.
  codecs->lanes.resize(static_cast<std::size_t>(start.lanes));
  {
    const std::lock_guard lock(described_mutex);
    if (described.empty()) {
      described = setup.decode ? codecs->engines() ? "nvJPEG, the JPEG engines (hardware backend)"
                                                 : "nvJPEG, no JPEG engines (general backend)"
                  : png ? "" : "nvJPEG encoder";
      if (png) described += described.empty() ? "GPU PNG encoder" : " + GPU PNG encoder";
    }
  }
  return codecs;
}

void GpuStage::Impl::produce(std::size_t item, pipeline::StagingInput& staging) {
  const auto [first, count] = files_of(item);
  // The CPU's lanes (the operation's host form) take decoded files only.
  const bool gpu_decodes = setup.decode && !staging.runs_host_form();
  std::vector<std::vector<std::byte>> jpegs(count);
  std::vector<io::Image> images(count);
  // A file per part: the engine's idle host workers read and decode some of the group's
  // files while this one does the rest (a group decoded for the CPU is most of its work).
  pipeline::run_parts(count, [&](std::size_t k) {
    FileResult& f = files[first + k];
    Ticket& t = tickets[first + k];
    try {
      auto data = read_whole_file(f.input);
      f.bytes_in = data.size();
      std::optional<std::string> refusal;
      if (gpu_decodes) refusal = gpu_decode_refusal(data);
      if (gpu_decodes && !refusal) {
        const auto header = io::read_jpeg_header(data);  // gpu_decode_refusal accepted it
        if (!header) throw std::logic_error("gray: an accepted JPEG has no header");
        f.width = header->width;
        f.height = header->height;
        f.channels = header->components;
        f.bit_depth = 8;
        t.kind = Ticket::Kind::jpeg;
        t.baseline = header->coding == io::JpegCoding::baseline;
        t.in_bytes = data.size();
        jpegs[k] = std::move(data);
      } else {
        if (refusal) f.fallback = std::move(*refusal);
        images[k] = decode_file(f, data, options);
        t.kind = staged_as(images[k]) == Staged::luma ? Ticket::Kind::luma : Ticket::Kind::rgb;
        t.in_bytes = staged_bytes(images[k]);
      }
    } catch (...) {
      f.error = current_error(f.input);
      t.kind = Ticket::Kind::failed;
    }
  });
  std::size_t in_bytes = 0, out_bytes = 0;
  for (std::size_t k = 0; k < count; ++k) {
    const FileResult& f = files[first + k];
    Ticket& t = tickets[first + k];
    if (!t.ok()) continue;
    t.in_offset = in_bytes;
    in_bytes = align_up(in_bytes + t.in_bytes);
    t.out_offset = out_bytes;
    out_bytes = align_up(out_bytes + std::size_t{f.width} * f.height);
  }
  if (in_bytes == 0) throw std::runtime_error("no file of its group could be read");
  const std::span<std::byte> in = staging.allocate(in_bytes, output_is_token(staging.runs_host_form()) ? 1 : out_bytes);
  pipeline::run_parts(count, [&](std::size_t k) {
    Ticket& t = tickets[first + k];
    std::byte* at = in.data() + t.in_offset;
    if (t.kind == Ticket::Kind::jpeg) {
      std::memcpy(at, jpegs[k].data(), t.in_bytes);
      t.host = at;
    } else if (t.ok()) {
      stage(images[k], {reinterpret_cast<std::uint8_t*>(at), t.in_bytes});
    }
  });
}

void GpuStage::Impl::consume(std::size_t item, std::span<const std::byte> out, host::Overwrite overwrite) {
  const auto [first, count] = files_of(item);
  // A file per part, as in produce: encoding a group on one worker held the run's end.
  pipeline::run_parts(count, [&](std::size_t k) {
    FileResult& f = files[first + k];
    Ticket& t = tickets[first + k];
    if (!t.ok() || !f.error.empty()) return;
    try {
      const std::size_t pixels = std::size_t{f.width} * f.height;
      const auto* gray = !t.gray.empty() ? t.gray.data() : reinterpret_cast<const std::uint8_t*>(out.data() + t.out_offset);
      if (t.gray.empty() && t.encoded.empty() && t.png.zlib.empty() && out.size() < t.out_offset + pixels)
        throw std::logic_error("gray: a file the GPU was to encode has no encoded data");
      write_output(f,
                   !t.encoded.empty()    ? std::move(t.encoded)
                   : !t.png.zlib.empty() ? io::png_file(t.png)
                                         : encode_output(f, {gray, pixels}, options),
                   overwrite);
    } catch (...) {
      f.error = current_error(f.input);
    }
    t.encoded = {};
    t.png = {};
    t.gray = {};
  });
}

GpuStage::GpuStage(const GpuStageSetup& setup, std::span<FileResult> files, const Options& options)
    : impl_(std::make_unique<Impl>(setup, files, options)) {}

GpuStage::~GpuStage() = default;

FileRange GpuStage::files_of(std::size_t index) const { return impl_->files_of(index); }

pipeline::Item GpuStage::item(std::size_t index, FileRange files, host::Overwrite overwrite) {
  if (files.count == 0 || files.count > impl_->setup.group || files.first + files.count > impl_->files.size() ||
      index >= impl_->items.size())
    throw std::invalid_argument("gray's GPU stage: an item's files must be a group within the run");
  impl_->items[index] = files;
  pipeline::Item item;
  const std::string first = impl_->files[files.first].input.string();
  item.label = files.count == 1 ? first : fmt::format("{} and {} more", first, files.count - 1);
  item.produce = [impl = impl_.get(), index](pipeline::StagingInput& staging) { impl->produce(index, staging); };
  item.consume = [impl = impl_.get(), index, overwrite](std::span<const std::byte> out) {
    impl->consume(index, out, overwrite);
  };
  return item;
}

pipeline::Operation GpuStage::operation() {
  pipeline::Operation op;
  const std::string encode = impl_->encodes_png() ? " + GPU PNG encode" : impl_->setup.encode ? " + nvJPEG encode" : "";
  op.name = (impl_->setup.decode ? "nvJPEG decode + luma" : "luma") + encode;
  op.device = [impl = impl_.get()](const pipeline::Batch& b) { impl->run_lane(b); };
  op.host = [impl = impl_.get()](const pipeline::Batch& b) { impl->run_host(b); };
  op.start_device = [impl = impl_.get()](const pipeline::DeviceStart& start) { return impl->start_device(start); };
  // nvJPEG reads each JPEG from the pinned staging (Ticket::host), on the stream for the JPEG
  // engines: the engine keeps it until the group's work is done.
  op.reads_staged_input = impl_->setup.decode;
  return op;
}

std::string GpuStage::describe() const {
  const std::lock_guard lock(impl_->described_mutex);
  return impl_->described;
}

}  // namespace streampipe::tools::gray::detail
