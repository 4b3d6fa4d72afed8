// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the gray tool decodes JPEG files and encodes JPEG outputs. `cpu`: host workers decode
// every file with libjpeg-turbo / libpng (and encode with libjpeg-turbo). `gpu` (builds with
// nvJPEG, GPU backend only): host workers only read the file, nvJPEG decodes it on the lane's
// stream - on the GPU's JPEG engines where it has them - into device RGB and the luma kernel
// converts it there: no host decode, no copy of decoded pixels (and the gray JPEG output is
// encoded by nvJPEG on the lane). `automatic`: gpu wherever a GPU with nvJPEG may take the
// run's files (convert.hpp). Files nvJPEG should not be given (PNG, progressive, 12-bit,
// lossless, arithmetic-coded, CMYK, Adobe RGB, incomplete data - see gpu_decode_refusal)
// and files nvJPEG refuses at decode time go through the CPU decoder with
// the same result as under `cpu`, and the run's summary counts them by reason. nvJPEG's
// IDCT and chroma upsampling differ from libjpeg-turbo's, so gray values of GPU-decoded files
// may differ from the CPU path's by a level (docs/gray.md gives the tolerance).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace streampipe::tools::gray {

enum class Decode { automatic, cpu, gpu };
enum class Encode { automatic, cpu, gpu };

[[nodiscard]] const char* to_string(Decode decode) noexcept;
[[nodiscard]] const char* to_string(Encode encode) noexcept;
// "auto", "cpu" or "gpu"; nullopt otherwise.
[[nodiscard]] std::optional<Decode> parse_decode(std::string_view name) noexcept;
[[nodiscard]] std::optional<Encode> parse_encode(std::string_view name) noexcept;

// True when this build has nvJPEG (configure found CUDA::nvjpeg): decoding and encoding.
[[nodiscard]] bool gpu_decode_available() noexcept;

// Why the file's bytes go to the CPU decoder under --decode gpu (a short reason shared by
// every file of its kind, e.g. "PNG file"), or nullopt when nvJPEG decodes them.
[[nodiscard]] std::optional<std::string> gpu_decode_refusal(std::span<const std::byte> file);
// From a file's first bytes (its markers up to the frame header): whether nvJPEG will
// likely decode it, gpu_decode_refusal's rules but for the end-of-image marker it cannot see.
[[nodiscard]] bool gpu_may_decode(std::span<const std::byte> head);

// How far GPU-decoded gray values are from the CPU decode's, and the documented bound
// (docs/gray.md) that the GPU tests and `bench gray` hold them to.
struct LevelDifference {
  // Both of nvJPEG's backends are asked for interpolated chroma upsampling, close to
  // libjpeg-turbo's; docs/gray.md gives what was measured against this bound.
  static constexpr int kMaxLevels = 2;
  static constexpr double kMeanLevels = 0.01;

  int max = 0;
  double sum = 0;
  std::uint64_t count = 0;

  // Adds the per-pixel differences of two equally sized gray (or RGB) images; throws
  // std::invalid_argument when the sizes differ.
  void add(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);
  void add(const LevelDifference& other) noexcept;
  [[nodiscard]] double mean() const noexcept { return count ? sum / static_cast<double>(count) : 0.0; }
  [[nodiscard]] bool within_tolerance() const noexcept { return max <= kMaxLevels && mean() <= kMeanLevels; }
};

}  // namespace streampipe::tools::gray
