// SPDX-License-Identifier: Apache-2.0
#include "gray/gray_inputs.hpp"

#include "gray/gray_check.hpp"

#include "streampipe/ops/rgb_to_gray.hpp"
#include "streampipe/report/atomic_file.hpp"
#include "streampipe/tools/gray_pixels.hpp"
#include "streampipe/tools/gray_synthetic.hpp"

#include <fmt/format.h>

namespace streampipe::bench::gray_bench {

namespace gray = streampipe::tools::gray;

Inputs generate_inputs(const std::filesystem::path& dir, std::uint32_t count, std::uint32_t width,
                       std::uint32_t height, io::ImageFormat format, int quality, int threads) {
  Inputs in;
  in.files.resize(count);
  in.reference.resize(count);
  std::atomic<std::uint64_t> bytes{0};
  std::filesystem::create_directories(dir);
  const bool jpeg = format == io::ImageFormat::jpeg;
  parallel_for(count, threads, [&](std::size_t i) {
    const io::Image rgb = gray::photo_like(width, height, static_cast<std::uint32_t>(i + 1));
    const auto data = jpeg ? io::encode_jpeg(rgb, quality) : io::encode_png(rgb);
    in.files[i] = dir / fmt::format("img-{:04}.{}", i, jpeg ? "jpg" : "png");
    report::write_file_atomically(in.files[i], data);
    bytes += data.size();
    const io::Image decoded = io::decode_image(data, {}, in.files[i].string());
    std::vector<std::uint8_t> rgb8(gray::rgb8_bytes(decoded));
    gray::to_rgb8(decoded, rgb8);
    in.reference[i].resize(rgb8.size() / 3);
    ops::rgb_to_gray_host(rgb8, in.reference[i]);
  });
  in.bytes = bytes.load();
  return in;
}

}  // namespace streampipe::bench::gray_bench
