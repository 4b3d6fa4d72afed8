// SPDX-License-Identifier: Apache-2.0
#include "gray_host_start.hpp"

#include "gray_file_io.hpp"

#include "streampipe/ops/rgb_to_gray.hpp"
#include "streampipe/tools/gray_pixels.hpp"

#include <stdexcept>

namespace streampipe::tools::gray::detail {

HostStart::HostStart(std::span<FileResult> files, const Options& options, report::Overwrite overwrite,
                     FileCursor& cursor, int threads, Finished finished)
    : files_(files), options_(options), overwrite_(overwrite), cursor_(cursor), finished_(std::move(finished)) {
  if (threads < 1) throw std::invalid_argument("gray's host start needs at least one thread");
  threads_.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) threads_.emplace_back([this] { run(); });
}

HostStart::~HostStart() {
  stop();
  threads_.clear();  // joins
}

void HostStart::stop() noexcept { stopped_.store(true, std::memory_order_release); }

void HostStart::join() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  if (error_) std::rethrow_exception(error_);
}

void HostStart::run() noexcept {
  try {
    while (!stopped_.load(std::memory_order_acquire)) {
      const auto range = cursor_.claim(1);
      if (!range) return;
      convert(range->first);
    }
  } catch (...) {
    stop();
    const std::lock_guard lock(mutex_);
    if (!error_) error_ = std::current_exception();
  }
}

void HostStart::convert(std::size_t index) {
  FileResult& f = files_[index];
  f.host_start = true;
  const double start = pipeline::Timeline::now_ms();
  double decoded = -1;
  try {
    const io::Image image = read_and_decode(f, options_);
    // 8-bit RGB (most JPEGs) is converted where the decoder left it; other layouts first.
    std::vector<std::uint8_t> converted;
    if (image.channels != 3 || image.bit_depth != 8) {
      converted.resize(rgb8_bytes(image));
      to_rgb8(image, converted);
    }
    const std::span<const std::uint8_t> rgb = converted.empty() ? std::span<const std::uint8_t>(image.pixels) : converted;
    std::vector<std::uint8_t> gray(rgb.size() / 3);
    ops::rgb_to_gray_host(rgb, gray);
    decoded = pipeline::Timeline::now_ms();
    write_output(f, encode_output(f, gray, options_), overwrite_);
    f.ok = true;
  } catch (...) {
    f.error = current_error(f.input);
  }
  const double end = pipeline::Timeline::now_ms();
  {
    const std::lock_guard lock(mutex_);
    taken_.push_back(index);
    records_.push_back({pipeline::Stage::stage_in, -1, index, 1, start, decoded >= 0 ? decoded : end, f.bytes_in, -1});
    if (decoded >= 0) records_.push_back({pipeline::Stage::stage_out, -1, index, 1, decoded, end, f.bytes_out, -1});
  }
  finished_(index);
}

}  // namespace streampipe::tools::gray::detail
