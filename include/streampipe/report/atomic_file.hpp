// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writes a file so that readers see either the old content or the complete new content,
// never a partial one: the data goes to a temporary file (".<name>.tmp-XXXXXX") in the same
// directory, is flushed, then renamed over the target. Parent directories are created.
//
// A process that must end at once (a second Ctrl-C) calls abandon_writes_in_progress()
// first: the temporary files of writes under way are removed and no write completes after,
// so an interrupted run leaves neither debris nor a half-written target.

#include <cstddef>
#include <filesystem>
#include <span>
#include <string_view>

namespace streampipe::report {

enum class Overwrite { allow, refuse };

// Throws std::runtime_error naming the target path and the system error (or, after
// abandon_writes_in_progress(), that the process is ending). With Overwrite::refuse an
// existing target is an error (checked before writing and again by the link step).
void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> data,
                           Overwrite overwrite = Overwrite::allow);
void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           Overwrite overwrite = Overwrite::allow);

// Removes the temporary file of every write_file_atomically under way in this process and
// makes those writes, and every later one, fail without touching their targets. For a
// process about to end (it cannot be undone); thread-safe, not async-signal-safe (call it
// from a thread that waits for signals, not from a handler). Returns the files removed.
std::size_t abandon_writes_in_progress() noexcept;

}  // namespace streampipe::report
