// SPDX-License-Identifier: Apache-2.0
#pragma once
// The gray tool's run with nvJPEG (builds with nvJPEG only, GPU backend). Files go through
// the engine in groups, one engine item per group, because the GPU's JPEG engines want many
// images per call:
//   produce (a host worker): reads the group's files; a JPEG nvJPEG should take
//     (gpu_decode_refusal) is staged as it is, any other file is decoded to RGB and staged;
//   the lane: decodes the group's JPEGs, batched on the JPEG engines where the GPU has them
//     and the file is baseline, else one by one on nvJPEG's general backend, else (nvJPEG
//     refused it) on the host; converts every file to gray; with GPU encoding, encodes each
//     gray image as JPEG on the GPU;
//   consume (a host worker): encodes on the host what the GPU did not, writes every file.
// A file that fails fails alone (its FileResult's `error`); the others of its group go on.
// One nvJPEG library per device of the set; each lane has its own states and buffers.

#include "gray_file_cursor.hpp"

#include "streampipe/io/image.hpp"
#include "streampipe/pipeline/item.hpp"
#include "streampipe/pipeline/operation.hpp"
#include "streampipe/report/atomic_file.hpp"
#include "streampipe/tools/gray.hpp"

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace streampipe::tools::gray::detail {

struct GpuStageSetup {
  std::vector<int> devices;  // the engine's device set, in its order
  int lanes = 4;             // per device
  bool decode = true;        // nvJPEG decodes the JPEGs it takes (else every file on the host)
  bool encode = false;       // JPEG outputs encoded by nvJPEG
  std::size_t group = 16;    // most files per engine item
  // Asked before each nvJPEG handle and lane state is made (each takes 0.05-0.3 s): once it
  // says true, the set-up stops and the constructor throws StartStopped.
  std::function<bool()> stop_start;
};

// The set-up was stopped (GpuStageSetup::stop_start); what it had made is released.
struct StartStopped : std::exception {
  [[nodiscard]] const char* what() const noexcept override { return "gray's GPU stage: set-up stopped"; }
};

class GpuStage {
 public:
  // `files` is the run's results in job order; `options` the run's. Throws NvjpegError when a
  // device's nvJPEG cannot be set up, StartStopped when the setup's stop_start said so.
  GpuStage(const GpuStageSetup& setup, std::span<FileResult> files, const Options& options);
  ~GpuStage();
  GpuStage(const GpuStage&) = delete;
  GpuStage& operator=(const GpuStage&) = delete;

  // The engine item numbered `index` (the engine numbers items from 0 as they are
  // submitted) for `files`, a group of at most the setup's size; its stages refer to this
  // object, which must outlive the engine.
  [[nodiscard]] pipeline::Item item(std::size_t index, FileRange files, report::Overwrite overwrite);
  // The files of engine item `index`, once item() made it.
  [[nodiscard]] FileRange files_of(std::size_t index) const;
  // The lanes' operation, for the engine.
  [[nodiscard]] pipeline::Operation operation();
  // "7 JPEG engines" or "no JPEG engines (general backend)", for the summary.
  [[nodiscard]] std::string describe() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace streampipe::tools::gray::detail
