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

// When the data reaches the disk. each_file: fsync before the rename, so the file is durable
// when the call returns. later: the file's blocks are reserved before the data is written
// (fallocate; a full disk fails the call as with each_file), and the caller makes its files
// durable in one go with sync_file_system() after its last write; until then a power loss,
// not a crash of the process, can lose files already renamed into place. Where the file
// system cannot reserve blocks, `later` falls back to each_file for that file.
enum class Flush { each_file, later };

// Throws std::runtime_error naming the target path and the system error (or, after
// abandon_writes_in_progress(), that the process is ending). With Overwrite::refuse an
// existing target is an error (checked before writing and again by the link step).
void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> data,
                           Overwrite overwrite = Overwrite::allow, Flush flush = Flush::each_file);
void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           Overwrite overwrite = Overwrite::allow, Flush flush = Flush::each_file);

// Writes every dirty file of the file system holding `directory` to disk (syncfs), for
// writes made with Flush::later. Throws std::runtime_error naming the directory and the
// error (a write-back failure since the last sync, or an unreadable directory).
void sync_file_system(const std::filesystem::path& directory);

// Removes the temporary file of every write_file_atomically under way in this process and
// makes those writes, and every later one, fail without touching their targets. For a
// process about to end (it cannot be undone); thread-safe, not async-signal-safe (call it
// from a thread that waits for signals, not from a handler). Returns the files removed.
std::size_t abandon_writes_in_progress() noexcept;

}  // namespace streampipe::report
