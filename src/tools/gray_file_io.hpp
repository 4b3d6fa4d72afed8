// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every way the gray tool runs shares: reading an input whole, encoding a gray image
// as the output format asks, and naming a failure after its file.

#include "streampipe/io/image.hpp"
#include "streampipe/tools/gray.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace streampipe::tools::gray::detail {

// The whole regular file; std::runtime_error naming it with the system's reason otherwise
// (a FIFO or a device is refused rather than read: it could block or never end).
[[nodiscard]] std::vector<std::byte> read_whole_file(const std::filesystem::path& path);

// The gray image of `file` (its width x height bytes) as the output file Options asks for.
[[nodiscard]] std::vector<std::byte> encode_output(const FileResult& file, std::span<const std::uint8_t> gray,
                                                   const Options& options);

// "<input>: <reason>" for the exception being handled (an image error that starts with the
// name already is kept as it is).
[[nodiscard]] std::string current_error(const std::filesystem::path& input);
[[nodiscard]] std::string file_error(const std::filesystem::path& input, std::string what);

}  // namespace streampipe::tools::gray::detail
