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

namespace {

// Empty when `got` is 8-bit gray of the reference's size.
std::string shape_error(const fs::path& output, const io::Image& got, std::size_t want) {
  if (got.channels == 1 && got.bit_depth == 8 && got.pixels.size() == want) return {};
  return fmt::format("{}: {} channel(s), {}-bit, {} bytes; expected 8-bit gray of {} bytes", output.string(),
                     got.channels, got.bit_depth, got.pixels.size(), want);
}

std::string psnr_error(const fs::path& output, const io::Image& got, const std::vector<std::uint8_t>& want) {
  double se = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = static_cast<int>(got.pixels[i]) - static_cast<int>(want[i]);
    se += d * d;
  }
  const double mse = se / static_cast<double>(want.size());
  const double psnr = mse > 0 ? 10 * std::log10(255.0 * 255.0 / mse) : 99;
  return psnr >= 30 ? std::string() : fmt::format("{}: PSNR {:.1f} dB against the reference (< 30)", output.string(), psnr);
}

}  // namespace

std::string check_output(const fs::path& output, const std::vector<std::uint8_t>& want, io::ImageFormat format,
                         tools::gray::LevelDifference* diff) {
  using tools::gray::LevelDifference;
  const io::Image got = io::read_image(output);
  if (auto why = shape_error(output, got, want.size()); !why.empty()) return why;
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
  return psnr_error(output, got, want);
}

std::string check_peer_output(const fs::path& output, const std::vector<std::uint8_t>& want, io::ImageFormat format,
                              const PeerBound& bound, tools::gray::LevelDifference& diff) {
  if (!fs::exists(output)) return fmt::format("{}: missing", output.string());
  const io::Image got = io::read_image(output);
  if (auto why = shape_error(output, got, want.size()); !why.empty()) return why;
  if (format != io::ImageFormat::png) return psnr_error(output, got, want);
  tools::gray::LevelDifference d;
  d.add(got.pixels, want);
  diff.add(d);
  if (d.max > bound.max_levels || d.mean() > bound.mean_levels)
    return fmt::format("{}: up to {} levels from the reference, {:.3f} on average (bounds {} and {})", output.string(),
                       d.max, d.mean(), bound.max_levels, bound.mean_levels);
  return {};
}

}  // namespace streampipe::bench::gray_bench
