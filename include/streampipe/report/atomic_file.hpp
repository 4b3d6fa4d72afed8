// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writes a file so that readers see either the old content or the complete new content,
// never a partial one: the data goes to a temporary file in the same directory, is flushed,
// then renamed over the target. Parent directories are created.

#include <filesystem>
#include <span>
#include <string_view>

namespace streampipe::report {

enum class Overwrite { allow, refuse };

// Throws std::runtime_error naming the path and the system error. With Overwrite::refuse an
// existing target is an error (checked before writing and again by the link step).
void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> data,
                           Overwrite overwrite = Overwrite::allow);
void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           Overwrite overwrite = Overwrite::allow);

}  // namespace streampipe::report
