// SPDX-License-Identifier: Apache-2.0
#pragma once
// The content-keyed disk cache of compiled programs.
// Key: SHA-256 of the key material = a format version, NVRTC's version, the architecture,
// the program's name, source, options, include directories, name expressions, every
// in-memory header, and the contents of every header found on disk that the source
// includes (followed recursively). Headers NVRTC resolves itself (its built-ins) are
// covered by its version.
// Entry: <dir>/<key>.spk holding the key material, the result, and a SHA-256 checksum of
// everything before it. A load checks magic, sizes, checksum and the material itself; a
// corrupt, truncated or foreign entry is reported as such and never loaded (the caller
// recompiles and replaces it). Stores go to a temporary file and are renamed into place,
// so any number of processes may share the directory. An entry is read only when it is a
// regular file, its size plausible and its magic right (checked before the rest is read).
// Who wrote an entry matters as much as its checksum (anyone who can write the folder can
// put another kernel under a valid key): the folder is created 0700 and entries 0600, and
// a folder or entry of another user, or writable by its group or others, is refused with a
// warning and never loaded or written (as ssh treats its keys).
// Location: $STREAMPIPE_CACHE_DIR, else $XDG_CACHE_HOME/streampipe, else
// $HOME/.cache/streampipe. STREAMPIPE_CACHE_DISABLE=1 (or STREAMPIPE_CACHE_DIR=off) turns
// the disk cache off.

#include "streampipe/jit/program.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace streampipe::jit {

inline constexpr int cache_format_version = 1;

struct CacheKey {
  std::string hex;       // 64 hex digits, the entry's file name
  std::string material;  // what was hashed (disk headers by their own SHA-256)
};

// Reads the headers the source includes from the include directories (throws nothing for
// missing ones: they are recorded as unresolved names). Throws JitError naming an include
// that finds a FIFO, a device or a socket, which NVRTC would block on or read forever.
[[nodiscard]] CacheKey cache_key(const Program& program, const std::string& arch);

// refused: the folder or the entry is not to be trusted (its owner, its mode, its kind).
enum class CacheLookup { hit, miss, corrupt, refused };

struct CacheLoad {
  CacheLookup status = CacheLookup::miss;
  std::optional<CompileResult> result;  // set on a hit
  std::string detail;                   // why an entry was rejected
};

class DiskCache {
 public:
  explicit DiskCache(std::filesystem::path directory);

  // The directory from the environment, or nullopt when the cache is disabled or no
  // location can be derived (no HOME).
  [[nodiscard]] static std::optional<std::filesystem::path> directory_from_environment();
  [[nodiscard]] static bool disabled_by_environment();

  [[nodiscard]] const std::filesystem::path& directory() const noexcept { return directory_; }
  [[nodiscard]] std::filesystem::path entry_path(const CacheKey& key) const;

  [[nodiscard]] CacheLoad load(const CacheKey& key) const;
  // Returns an error message instead of throwing (an unwritable or untrusted cache must not
  // stop a compile); empty on success.
  [[nodiscard]] std::string store(const CacheKey& key, const CompileResult& result) const;

 private:
  std::filesystem::path directory_;
};

// Serialized form of an entry, exposed for tests.
[[nodiscard]] std::string encode_entry(const CacheKey& key, const CompileResult& result);
// Throws JitError naming what is wrong.
[[nodiscard]] CompileResult decode_entry(const std::string& bytes, const CacheKey& key);

}  // namespace streampipe::jit
