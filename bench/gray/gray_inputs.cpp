// SPDX-License-Identifier: Apache-2.0
#include "gray/gray_inputs.hpp"

#include "gray/gray_check.hpp"

#include "streampipe/host/atomic_file.hpp"
#include "streampipe/tools/gray/pixels.hpp"
#include "streampipe/tools/gray/convert.hpp"
#include "streampipe/tools/gray/plan.hpp"
#include "streampipe/tools/gray/synthetic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace streampipe::bench::gray_bench {

namespace fs = std::filesystem;
namespace gray = streampipe::tools::gray;

namespace {

// How the tool decodes by default (tools::gray::Options::jpeg_luma).
io::ImageReadOptions as_the_tool_decodes() {
  io::ImageReadOptions o;
  o.jpeg_luma = gray::Options{}.jpeg_luma;
  return o;
}

}  // namespace

Inputs generate_inputs(const fs::path& dir, std::uint32_t count, std::uint32_t width, std::uint32_t height,
                       io::ImageFormat format, int quality, int threads) {
  Inputs in;
  in.files.resize(count);
  in.reference.resize(count);
  std::atomic<std::uint64_t> bytes{0};
  fs::create_directories(dir);
  const bool jpeg = format == io::ImageFormat::jpeg;
  parallel_for(count, threads, [&](std::size_t i) {
    const io::Image rgb = gray::photo_like(width, height, static_cast<std::uint32_t>(i + 1));
    const auto data = jpeg ? io::encode_jpeg(rgb, quality) : io::encode_png(rgb);
    in.files[i] = dir / fmt::format("img-{:04}.{}", i, jpeg ? "jpg" : "png");
    host::write_file_atomically(in.files[i], data);
    bytes += data.size();
    in.reference[i] = gray::gray8(io::decode_image(data, as_the_tool_decodes(), in.files[i].string()));
  });
  in.bytes = bytes.load();
  in.pixels = std::uint64_t{count} * width * height;
  return in;
}

Inputs read_inputs(const fs::path& dir, int threads) {
  Inputs in;
  std::map<fs::path, fs::path> by_output;  // the tool names each output by its input's stem
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file() || !gray::has_image_extension(entry.path())) continue;
    const auto [at, fresh] = by_output.emplace(entry.path().stem(), entry.path());
    if (!fresh)
      throw std::invalid_argument(fmt::format("{} and {} would give the same output name", at->second.string(),
                                              entry.path().string()));
    in.files.push_back(entry.path());
  }
  if (in.files.empty()) throw std::invalid_argument(fmt::format("{} holds no *.png, *.jpg or *.jpeg", dir.string()));
  std::sort(in.files.begin(), in.files.end());
  in.reference.resize(in.files.size());
  std::atomic<std::uint64_t> bytes{0}, pixels{0};
  parallel_for(in.files.size(), threads, [&](std::size_t i) {
    io::Image decoded;
    try {
      decoded = io::read_image(in.files[i], as_the_tool_decodes());
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("{} cannot be decoded: {}", in.files[i].string(), e.what()));
    }
    bytes += fs::file_size(in.files[i]);
    pixels += std::uint64_t{decoded.width} * decoded.height;
    in.reference[i] = gray::gray8(decoded);
  });
  in.bytes = bytes.load();
  in.pixels = pixels.load();
  return in;
}

}  // namespace streampipe::bench::gray_bench
