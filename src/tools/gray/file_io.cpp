// SPDX-License-Identifier: Apache-2.0
#include "file_io.hpp"

#include "streampipe/host/read_file.hpp"
#include "streampipe/tools/gray/pixels.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <stdexcept>

namespace streampipe::tools::gray::detail {

std::vector<std::byte> read_whole_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  // Its kind first (a FIFO or device is refused, never read), then its first bytes: a file
  // that is no image costs those, not its whole size.
  return host::read_regular_file(
      path, [&](std::span<const std::byte> head, std::uint64_t size) { io::check_image_head(head, size, name); });
}

io::Image decode_file(FileResult& file, std::span<const std::byte> data, const Options& options) {
  file.decoder = "cpu";
  // 16-bit samples stay 16-bit here, so the result reports the depth of the file; stage()
  // rounds them to 8 bits as libpng's strip_16 would.
  io::ImageReadOptions read;
  read.limits = options.limits;
  read.jpeg_luma = options.jpeg_luma;
  io::Image image = io::decode_image(data, read, file.input.string());
  file.width = image.width;
  file.height = image.height;
  file.channels = image.channels;
  file.bit_depth = image.bit_depth;
  // A colour JPEG decoded to its luma: the file's own layout is what its header says.
  if (const auto header = io::read_image_header(data); header && header->format == io::ImageFormat::jpeg)
    file.channels = header->channels;
  file.decoded_to = to_string(staged_as(image));
  return image;
}

io::Image read_and_decode(FileResult& file, const Options& options) {
  const auto data = read_whole_file(file.input);
  file.bytes_in = data.size();
  return decode_file(file, data, options);
}

void write_output(FileResult& file, std::span<const std::byte> data, host::Overwrite overwrite) {
  const auto start = std::chrono::steady_clock::now();
  host::write_file_atomically(file.output, data, overwrite, host::Flush::later);
  file.write_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  file.bytes_out = data.size();
}

void sync_outputs(std::span<FileResult> files, unsigned threads) {
  std::vector<std::size_t> written;
  std::vector<std::filesystem::path> paths;
  for (std::size_t i = 0; i < files.size(); ++i)
    if (files[i].ok) {
      written.push_back(i);
      paths.push_back(files[i].output);
    }
  const std::vector<std::string> errors = host::sync_files(paths, threads);
  for (std::size_t k = 0; k < written.size(); ++k)
    if (!errors[k].empty()) {
      FileResult& f = files[written[k]];
      f.ok = false;
      f.error = file_error(f.input, fmt::format("written, but not to disk: {}", errors[k]));
    }
}

std::vector<std::byte> encode_output(const FileResult& file, std::span<const std::uint8_t> gray,
                                     const Options& options) {
  io::Image image;
  image.width = file.width;
  image.height = file.height;
  image.channels = 1;
  image.bit_depth = 8;
  image.pixels.assign(gray.begin(), gray.end());
  return options.format == io::ImageFormat::png
             ? io::encode_png(image, {.compression = options.png_compression, .interlaced = false})
             : io::encode_jpeg(image, options.jpeg_quality);
}

std::string file_error(const std::filesystem::path& input, std::string what) {
  const std::string name = input.string();
  if (what.rfind(name + ":", 0) == 0) return what;
  return fmt::format("{}: {}", name, what);
}

std::string current_error(const std::filesystem::path& input) {
  try {
    throw;
  } catch (const std::exception& e) {
    return file_error(input, e.what());
  } catch (...) {
    return file_error(input, "unknown error");
  }
}

}  // namespace streampipe::tools::gray::detail
