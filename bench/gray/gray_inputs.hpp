// SPDX-License-Identifier: Apache-2.0
#pragma once
// The inputs of `bench gray`, not timed: photo-like images (tools/gray/synthetic.hpp)
// written into a folder, or the images a folder holds (--inputs: real photographs,
// bench/gray/photo_set.py); and for each the host reference of the tool's result: the gray
// image of what the CPU decoder reads back from the file as the tool's defaults decode it -
// a YCbCr JPEG's Y plane alone, else the BT.601 luma of the decoded colour (JPEG is lossy, so
// the reference starts from the decoded file, not from the generated pixels).

#include "streampipe/io/image.hpp"

#include <cstdint>
#include <filesystem>
#include <vector>

namespace streampipe::bench::gray_bench {

struct Inputs {
  std::vector<std::filesystem::path> files;            // dir/img-0000.jpg, ... in order
  std::vector<std::vector<std::uint8_t>> reference;    // the gray image each must become
  std::uint64_t bytes = 0;                             // of the files
  std::uint64_t pixels = 0;                            // of the images
};

// Writes `count` images of width x height into `dir` (created; existing files of the same
// names are replaced) as JPEG of `quality` or as PNG, on `threads` threads.
[[nodiscard]] Inputs generate_inputs(const std::filesystem::path& dir, std::uint32_t count, std::uint32_t width,
                                     std::uint32_t height, io::ImageFormat format, int quality, int threads);

// The images in `dir` that `streampipe gray DIR` converts (its *.png, *.jpg, *.jpeg, any case,
// not its subfolders), in name order, read on `threads` threads. Throws std::invalid_argument
// when there is none, when two would give the same output name, or naming a file that cannot
// be decoded.
[[nodiscard]] Inputs read_inputs(const std::filesystem::path& dir, int threads);

}  // namespace streampipe::bench::gray_bench
