// SPDX-License-Identifier: Apache-2.0
#pragma once
// The gray tool's run with nvJPEG (builds with nvJPEG only). Files go through the engine in
// groups, one engine item per group, because the GPU's JPEG engines want many images per
// call. The operation has both forms, so a group may run on the CPU's lanes or on a GPU:
//   produce (a host worker): reads the group's files; for a GPU, a JPEG nvJPEG should take
//     (gpu_decode_refusal) is staged as it is; every other file, and every file of a group
//     the CPU takes, is decoded on the host and staged as its luma or as RGB (pixels.hpp);
//   a GPU's lane: decodes the group's JPEGs - to their luma alone (Options::jpeg_luma),
//     straight into the group's output, else to RGB - batched on the JPEG engines where the
//     GPU has them and the file is baseline, else one by one on nvJPEG's general backend,
//     else (nvJPEG refused it) on the host; takes the luma of what is RGB and copies what is
//     staged luma; with GPU encoding, encodes each gray image on the GPU: JPEG with nvJPEG,
//     PNG with io::GpuPngEncoder (the whole group at once);
//   the CPU's lane: takes the luma of the staged RGB, copies the staged luma;
//   consume (a host worker): encodes on the host what the GPU did not (and wraps the GPU's
//     PNG data into files: chunks and CRC-32s), writes every file.
// A file that fails fails alone (its FileResult's `error`); the others of its group go on.
// Each GPU's nvJPEG libraries and its JPEG engines' state (one per GPU, which its lanes take in
// turn: four kept the engines barely busier, docs/gray.md) are made by the operation's
// start_device, on that GPU's start thread, while the CPU already converts files; the lanes
// make their other states on first use.

#include "streampipe/io/image.hpp"
#include "streampipe/pipeline/item.hpp"
#include "streampipe/pipeline/operation.hpp"
#include "streampipe/host/atomic_file.hpp"
#include "streampipe/tools/gray/convert.hpp"

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace streampipe::tools::gray::detail {

// A group of files: [first, first + count) of the run's files.
struct FileRange {
  std::size_t first = 0;
  std::size_t count = 0;
};

struct GpuStageSetup {
  bool decode = true;        // nvJPEG decodes the JPEGs it takes (else every file on the host)
  bool encode = false;       // outputs encoded on the GPU: JPEG by nvJPEG, PNG by io::GpuPngEncoder
  std::size_t group = 16;    // most files per engine item
  // The run's largest baseline JPEG width and height (0: not known): each GPU allocates its
  // JPEG engines' buffers for them as it starts, once, rather than as larger files come.
  std::uint32_t largest_width = 0, largest_height = 0;
};

class GpuStage {
 public:
  // `files` is the run's results in job order; `options` the run's.
  GpuStage(const GpuStageSetup& setup, std::span<FileResult> files, const Options& options);
  ~GpuStage();
  GpuStage(const GpuStage&) = delete;
  GpuStage& operator=(const GpuStage&) = delete;

  // The engine item numbered `index` (the engine numbers items from 0 as they are
  // submitted) for `files`, a group of at most the setup's size; its stages refer to this
  // object, which must outlive the engine.
  [[nodiscard]] pipeline::Item item(std::size_t index, FileRange files, host::Overwrite overwrite);
  // The files of engine item `index`, once item() made it.
  [[nodiscard]] FileRange files_of(std::size_t index) const;
  // The operation, for the engine: its start_device makes a GPU's nvJPEG libraries and lane
  // states (NvjpegError when it cannot).
  [[nodiscard]] pipeline::Operation operation();
  // "nvJPEG, 7 JPEG engines" or "nvJPEG, no JPEG engines (general backend)" as the first GPU
  // to start found it, "nvJPEG encoder" without GPU decoding; " + GPU PNG encoder" after it,
  // or alone, when the GPU encodes PNG; empty before any GPU started.
  [[nodiscard]] std::string describe() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace streampipe::tools::gray::detail
