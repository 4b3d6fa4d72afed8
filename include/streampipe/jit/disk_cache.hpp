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
// so any number of processes may share the directory.
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
// missing ones: they are recorded as unresolved names).
[[nodiscard]] CacheKey cache_key(const Program& program, const std::string& arch);

enum class CacheLookup { hit, miss, corrupt };

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
  // Returns an error message instead of throwing (an unwritable cache must not stop a
  // compile); empty on success.
  [[nodiscard]] std::string store(const CacheKey& key, const CompileResult& result) const;

 private:
  std::filesystem::path directory_;
};

// Serialized form of an entry, exposed for tests.
[[nodiscard]] std::string encode_entry(const CacheKey& key, const CompileResult& result);
// Throws JitError naming what is wrong.
[[nodiscard]] CompileResult decode_entry(const std::string& bytes, const CacheKey& key);

}  // namespace streampipe::jit
