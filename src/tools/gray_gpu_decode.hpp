// SPDX-License-Identifier: Apache-2.0
#pragma once
// The gray tool's --decode gpu (built with nvJPEG only). A host worker reads the file; a JPEG
// that gpu_decode_refusal() accepts is copied as it is into the item's pinned staging input,
// and the lane's operation decodes it from there with nvJPEG on the lane's stream into the
// lane's device RGB buffer, then runs the luma kernel from that buffer into the item's output.
// The engine still copies the staged bytes to the device, but they are the compressed file;
// decoded pixels never cross the link. A refused file is decoded by the worker as under
// --decode cpu. A file nvJPEG itself refuses at decode time is decoded on the host in the
// lane's enqueue and uploaded from a per-lane pinned buffer (rare: it stalls that lane).
// One nvJPEG handle is shared; each lane has its own state and buffers, created once.

#include "streampipe/cuda/device.hpp"
#include "streampipe/pipeline/item.hpp"
#include "streampipe/pipeline/operation.hpp"
#include "streampipe/tools/gray.hpp"

#include <cstddef>
#include <memory>
#include <span>

namespace streampipe::tools::gray {

class GpuDecodeStage {
 public:
  // `files[i]` is the result of the engine's item i (submission order).
  GpuDecodeStage(const Device& device, int lanes, std::span<FileResult> files);
  ~GpuDecodeStage();
  GpuDecodeStage(const GpuDecodeStage&) = delete;
  GpuDecodeStage& operator=(const GpuDecodeStage&) = delete;

  // From item `index`'s produce stage, with the file's bytes: true when they were staged for
  // nvJPEG (the result's size and layout are set); false, with the result's `fallback` reason
  // set, when the worker must decode the file itself.
  bool stage(std::size_t index, std::span<const std::byte> data, pipeline::StagingInput& staging);

  // The luma operation for this run: staged JPEGs through nvJPEG, staged RGB as usual. It
  // refers to this object, which must outlive the engine that runs it.
  [[nodiscard]] pipeline::Operation operation();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace streampipe::tools::gray
