// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every way the gray tool runs shares: reading an input whole, decoding it on the
// host, encoding a gray image as the output format asks, writing the output, and naming a
// failure after its file.

#include "streampipe/io/image.hpp"
#include "streampipe/host/atomic_file.hpp"
#include "streampipe/tools/gray/convert.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace streampipe::tools::gray::detail {

// The whole regular file (host::read_regular_file); ReadFileError naming it with its kind
// or the system's reason otherwise (a FIFO or a device is refused rather than read: it could
// block or never end), ImageError when its first bytes are no PNG or JPEG (the rest is not
// read then).
[[nodiscard]] std::vector<std::byte> read_whole_file(const std::filesystem::path& path);

// `data`, `file`'s bytes, decoded on this thread (libpng / libjpeg-turbo, Options::limits
// checked from the header first; a YCbCr JPEG to its Y plane alone with Options::jpeg_luma),
// with its layout (the file's: a colour JPEG has 3 channels however it was decoded), decoder
// ("cpu") and decoded_to filled in. Throws what decoding throws.
[[nodiscard]] io::Image decode_file(FileResult& file, std::span<const std::byte> data, const Options& options);

// `file`'s input read whole and decode_file()'d, with its bytes_in filled in.
[[nodiscard]] io::Image read_and_decode(FileResult& file, const Options& options);

// Writes `data` as `file`'s output atomically (host::write_file_atomically, its blocks
// reserved and its write-back started; flushed by sync_outputs) and fills in its bytes_out and write_ms.
// Throws what the write throws.
void write_output(FileResult& file, std::span<const std::byte> data, host::Overwrite overwrite);

// Flushes the written outputs of `files` to disk (host::sync_files on `threads` threads).
// An output that cannot be flushed fails its file (ok false, the error naming the reason).
void sync_outputs(std::span<FileResult> files, unsigned threads);

// The gray image of `file` (its width x height bytes) as the output file Options asks for.
[[nodiscard]] std::vector<std::byte> encode_output(const FileResult& file, std::span<const std::uint8_t> gray,
                                                   const Options& options);

// "<input>: <reason>" for the exception being handled (an image error that starts with the
// name already is kept as it is).
[[nodiscard]] std::string current_error(const std::filesystem::path& input);
[[nodiscard]] std::string file_error(const std::filesystem::path& input, std::string what);

}  // namespace streampipe::tools::gray::detail
