// SPDX-License-Identifier: Apache-2.0
// The gray tool's choice of decoder per file (see tools/gray/decode.hpp). Anything doubtful goes to
// the CPU decoder, which either decodes it as the --decode cpu path does or reports the file
// with the same reason.

#include "streampipe/tools/gray/decode.hpp"

#include "streampipe/io/image.hpp"
#include "streampipe/io/jpeg_header.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

namespace streampipe::tools::gray {

void LevelDifference::add(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  if (a.size() != b.size())
    throw std::invalid_argument(fmt::format("gray difference of images of {} and {} bytes", a.size(), b.size()));
  for (std::size_t i = 0; i < a.size(); ++i) {
    const int d = std::abs(static_cast<int>(a[i]) - static_cast<int>(b[i]));
    max = std::max(max, d);
    sum += d;
  }
  count += a.size();
}

void LevelDifference::add(const LevelDifference& other) noexcept {
  max = std::max(max, other.max);
  sum += other.sum;
  count += other.count;
}

namespace {

template <typename Where>
const char* where_name(Where w) noexcept {
  return w == Where::gpu ? "gpu" : w == Where::cpu ? "cpu" : "auto";
}

template <typename Where>
std::optional<Where> parse_where(std::string_view name) noexcept {
  if (name == "auto") return Where::automatic;
  if (name == "cpu") return Where::cpu;
  if (name == "gpu") return Where::gpu;
  return std::nullopt;
}

}  // namespace

const char* to_string(Decode decode) noexcept { return where_name(decode); }
const char* to_string(Encode encode) noexcept { return where_name(encode); }
std::optional<Decode> parse_decode(std::string_view name) noexcept { return parse_where<Decode>(name); }
std::optional<Encode> parse_encode(std::string_view name) noexcept { return parse_where<Encode>(name); }

bool gpu_decode_available() noexcept {
#if defined(STREAMPIPE_HAVE_NVJPEG)
  return true;
#else
  return false;
#endif
}

namespace {

std::optional<std::string> refusal(std::span<const std::byte> file, bool whole) {
  const auto format = io::detect_image_format(file);
  if (format == io::ImageFormat::png) return "PNG file";
  if (format != io::ImageFormat::jpeg) return "not a JPEG file";
  const auto h = io::read_jpeg_header(file);
  if (!h) return "unreadable JPEG markers";
  // Progressive files: nvJPEG decoded two of 66 progressive 4:4:4 photographs up to 179
  // levels wrong and refuses some with restart markers, and the JPEG engines take none
  // (docs/gray.md, "nvJPEG and progressive JPEGs").
  if (h->coding != io::JpegCoding::baseline && h->coding != io::JpegCoding::extended)
    return fmt::format("{} JPEG", io::to_string(h->coding));
  if (h->precision != 8) return fmt::format("{}-bit JPEG", h->precision);
  if (h->components == 4) return "CMYK/YCCK JPEG";
  if (h->components != 1 && h->components != 3) return fmt::format("{}-component JPEG", h->components);
  // nvJPEG takes 3 components as YCbCr; libjpeg reads some files as RGB (its rules, in short).
  if (h->components == 3 && h->adobe_transform == 0) return "RGB JPEG (Adobe marker, no colour transform)";
  if (h->components == 3 && !h->jfif && h->adobe_transform < 0 && h->rgb_ids)
    return "RGB JPEG (components named R, G, B)";
  if (h->width == 0 || h->height == 0) return "JPEG without a size in its frame header";
  // The CPU decoder refuses images above its pixel and decoded-size limits; let it name them.
  const io::ImageReadOptions limits;
  const std::uint64_t rgb_bytes = std::uint64_t{h->width} * h->height * 3;
  if (!limits.limits.allows(h->width, h->height) || rgb_bytes > limits.max_bytes) return "image above the decode limits";
  if (whole && !h->complete) return "incomplete JPEG (no end-of-image marker)";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> gpu_decode_refusal(std::span<const std::byte> file) { return refusal(file, true); }

bool gpu_may_decode(std::span<const std::byte> head) { return !refusal(head, false).has_value(); }

}  // namespace streampipe::tools::gray
