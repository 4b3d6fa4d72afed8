// SPDX-License-Identifier: Apache-2.0
#include "gray/gray_check.hpp"

#include <fmt/format.h>

#include <cmath>
#include <unistd.h>

namespace streampipe::bench::gray_bench {

namespace fs = std::filesystem;

ScratchDir::ScratchDir() : path_(fs::temp_directory_path() / fmt::format("streampipe-bench-gray-{}", ::getpid())) {
  fs::remove_all(path_);
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string check_output(const fs::path& output, const std::vector<std::uint8_t>& want, io::ImageFormat format,
                         tools::gray::LevelDifference* diff) {
  using tools::gray::LevelDifference;
  const io::Image got = io::read_image(output);
  if (got.channels != 1 || got.bit_depth != 8 || got.pixels.size() != want.size())
    return fmt::format("{}: {} channel(s), {}-bit, {} bytes; expected 8-bit gray of {} bytes", output.string(),
                       got.channels, got.bit_depth, got.pixels.size(), want.size());
  if (format == io::ImageFormat::png && diff != nullptr) {
    LevelDifference d;
    d.add(got.pixels, want);
    diff->add(d);
    if (!d.within_tolerance())
      return fmt::format("{}: differs from the CPU decode's result by up to {} levels, {:.3f} on average (tolerance "
                         "{} and {})",
                         output.string(), d.max, d.mean(), LevelDifference::kMaxLevels, LevelDifference::kMeanLevels);
    return {};
  }
  if (format == io::ImageFormat::png) {
    for (std::size_t i = 0; i < want.size(); ++i)
      if (got.pixels[i] != want[i])
        return fmt::format("{}: pixel {} is {}, expected {}", output.string(), i, got.pixels[i], want[i]);
    return {};
  }
  double se = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = static_cast<int>(got.pixels[i]) - static_cast<int>(want[i]);
    se += d * d;
  }
  const double mse = se / static_cast<double>(want.size());
  const double psnr = mse > 0 ? 10 * std::log10(255.0 * 255.0 / mse) : 99;
  return psnr >= 30 ? std::string() : fmt::format("{}: PSNR {:.1f} dB against the reference (< 30)", output.string(), psnr);
}

}  // namespace streampipe::bench::gray_bench
