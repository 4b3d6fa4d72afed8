// SPDX-License-Identifier: Apache-2.0
#include "streampipe/jit/disk_cache.hpp"

#include "streampipe/host/atomic_file.hpp"
#include "streampipe/host/read_file.hpp"
#include "streampipe/jit/errors.hpp"

#include "sha256.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace streampipe::jit {
namespace fs = std::filesystem;
namespace {

constexpr char magic[8] = {'S', 'P', 'J', 'I', 'T', 'C', '\x01', '\n'};

// Entries are a few megabytes (a cubin, a PTX file): anything far larger is no entry.
constexpr std::uint64_t kMaxEntryBytes = std::uint64_t{1} << 30;

// A header's text, or nullopt when it is not a regular file that can be read.
std::optional<std::string> read_header(const fs::path& path) {
  try {
    const auto bytes = host::read_regular_file(path);
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  } catch (const host::ReadFileError&) {
    return std::nullopt;
  }
}

// Why a cache folder or entry is not to be trusted: anyone who can write it can put another
// kernel under a valid key (the checksum is recomputable), so, as ssh does for its keys, it
// must be this user's and writable by nobody else; an entry must be a regular file (not a
// link, a FIFO or a device). nullopt when it is fine or absent.
std::optional<std::string> untrusted(const fs::path& path, bool folder) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  if (folder ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
    return fmt::format("{}: is {}, not a {}", path.string(), host::describe_file_type(st.st_mode),
                       folder ? "folder" : "regular file");
  if (st.st_uid != ::geteuid())
    return fmt::format("{}: belongs to user {}, not to this user ({})", path.string(), st.st_uid, ::geteuid());
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return fmt::format("{}: is writable by {} (mode {:04o}); chmod {} it", path.string(),
                       (st.st_mode & S_IWOTH) != 0 ? "others" : "its group", st.st_mode & 07777,
                       folder ? "700" : "600");
  return std::nullopt;
}

// Creates `dir` and its missing parents private to this user (0700), as mkdir -p -m 700.
void create_private(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) || dir.empty()) return;
  if (dir.has_parent_path() && dir.parent_path() != dir) create_private(dir.parent_path());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw std::runtime_error(fmt::format("cannot create {}: {}", dir.string(), std::strerror(errno)));
}

// The #include targets of a source, in order: (name, angle-bracketed).
std::vector<std::pair<std::string, bool>> includes_of(const std::string& text) {
  std::vector<std::pair<std::string, bool>> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::size_t i = line.find_first_not_of(" \t");
    if (i == std::string::npos || line[i] != '#') continue;
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string::npos || line.compare(i, 7, "include") != 0) continue;
    i = line.find_first_not_of(" \t", i + 7);
    if (i == std::string::npos) continue;
    const char open = line[i];
    const char close = open == '<' ? '>' : open == '"' ? '"' : '\0';
    if (close == '\0') continue;
    const std::size_t end = line.find(close, i + 1);
    if (end == std::string::npos) continue;
    out.emplace_back(line.substr(i + 1, end - i - 1), open == '<');
  }
  return out;
}


struct DiskHeader {
  std::string hash;
  std::vector<std::pair<std::string, bool>> includes;
};

// Headers on disk are remembered per process by path, size and modification time, so a
// warm load with a large include tree (CCCL) does not re-read and re-hash it. Like git's
// "racily clean" rule, a file modified within two seconds of being hashed is never trusted
// from the memo: timestamps are coarse, and an edit in the same tick must not be missed.
std::optional<DiskHeader> header_on_disk(const fs::path& path) {
  struct Entry {
    std::uintmax_t size = 0;
    fs::file_time_type mtime;
    fs::file_time_type hashed_at;
    DiskHeader header;
  };
  static std::mutex mutex;
  static std::map<std::string, Entry>* memo = new std::map<std::string, Entry>;  // never destroyed
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  const auto size = fs::file_size(path, ec);
  if (ec) return std::nullopt;
  const auto mtime = fs::last_write_time(path, ec);
  if (ec) return std::nullopt;
  const std::string key = path.string();
  {
    const std::lock_guard lock(mutex);
    if (const auto it = memo->find(key); it != memo->end() && it->second.size == size && it->second.mtime == mtime &&
                                         mtime + std::chrono::seconds(2) < it->second.hashed_at)
      return it->second.header;
  }
  const auto hashed_at = fs::file_time_type::clock::now();
  auto contents = read_header(path);
  if (!contents) return std::nullopt;
  DiskHeader header{detail::to_hex(detail::sha256(*contents)), includes_of(*contents)};
  const std::lock_guard lock(mutex);
  (*memo)[key] = Entry{size, mtime, hashed_at, header};
  return header;
}

class Writer {
 public:
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>(v >> (8 * i)));
  }
  void str(std::string_view s) {
    u64(s.size());
    bytes_.append(s);
  }
  void raw(std::string_view s) { bytes_.append(s); }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  std::uint64_t u64() {
    need(8, "a length");
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(bytes_[pos_ + i])} << (8 * i);
    pos_ += 8;
    return v;
  }
  std::string str(const char* what) {
    const std::uint64_t n = u64();
    need(n, what);
    std::string s(bytes_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  std::string_view raw(std::size_t n, const char* what) {
    need(n, what);
    const auto s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  [[nodiscard]] bool done() const { return pos_ == bytes_.size(); }

 private:
  void need(std::uint64_t n, const char* what) const {
    if (n > bytes_.size() - pos_)
      throw JitError(fmt::format("truncated: {} needs {} bytes, {} left", what, n, bytes_.size() - pos_));
  }
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

}  // namespace

CacheKey cache_key(const Program& program, const std::string& arch) {
  Writer m;
  m.str(fmt::format("streampipe-jit-cache format {}", cache_format_version));
  m.str(fmt::format("nvrtc {}", nvrtc_version()));
  m.str(arch);
  m.str(program.name());
  m.str(program.source());
  m.u64(program.options().size());
  for (const auto& o : program.options()) m.str(o);
  m.u64(program.include_dirs().size());
  for (const auto& d : program.include_dirs()) m.str(d);
  m.u64(program.name_expressions().size());
  for (const auto& e : program.name_expressions()) m.str(e);
  m.u64(program.headers().size());
  for (const auto& h : program.headers()) {
    m.str(h.name);
    m.str(h.contents);
  }

  // Headers on disk the program includes, followed recursively. NVRTC looks up in-memory
  // headers first, then (for "") the including file's directory, then -I directories.
  std::map<std::string, const Header*> in_memory;
  for (const auto& h : program.headers()) in_memory.emplace(h.name, &h);
  std::set<std::string> seen;
  std::vector<std::string> disk_lines;
  struct Pending {
    std::vector<std::pair<std::string, bool>> includes;
    fs::path dir;  // the including file's directory; empty for the source and in-memory headers
  };
  std::vector<Pending> work{{includes_of(program.source()), {}}};
  std::set<std::string> scanned_memory;
  while (!work.empty()) {
    Pending p = std::move(work.back());
    work.pop_back();
    for (const auto& [name, angle] : p.includes) {
      if (const auto it = in_memory.find(name); it != in_memory.end()) {
        if (scanned_memory.insert(name).second) work.push_back({includes_of(it->second->contents), {}});
        continue;
      }
      std::vector<fs::path> candidates;
      if (!angle && !p.dir.empty()) candidates.push_back(p.dir / name);
      for (const auto& d : program.include_dirs()) candidates.push_back(fs::path(d) / name);
      bool found = false;
      for (const auto& c : candidates) {
        const std::string key = c.lexically_normal().string();
        if (seen.count(key)) {
          found = true;
          break;
        }
        // NVRTC would open it as it is: a FIFO blocks the compile until a writer comes, a
        // device never ends.
        if (struct stat st {}; ::stat(c.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
          throw JitError(fmt::format("{}: #include \"{}\" finds {}, which is {}, not a regular file", program.name(),
                                     name, c.string(), host::describe_file_type(st.st_mode)));
        auto header = header_on_disk(c);
        if (!header) continue;
        seen.insert(key);
        disk_lines.push_back(fmt::format("{} sha256:{}", key, header->hash));
        work.push_back({std::move(header->includes), c.parent_path()});
        found = true;
        break;
      }
      if (!found && seen.insert("unresolved:" + name).second) disk_lines.push_back("unresolved:" + name);
    }
  }
  m.u64(disk_lines.size());
  for (const auto& l : disk_lines) m.str(l);
  CacheKey key;
  key.material = std::move(m.bytes());
  key.hex = detail::to_hex(detail::sha256(key.material));
  return key;
}

std::string encode_entry(const CacheKey& key, const CompileResult& r) {
  Writer w;
  w.raw(std::string_view(magic, sizeof magic));
  w.u64(cache_format_version);
  w.str(key.hex);
  w.str(key.material);
  w.str(r.program_name);
  w.str(r.arch);
  w.str(r.kind == BinaryKind::cubin ? "cubin" : "ptx");
  w.str(r.log);
  w.u64(r.lowered.size());
  for (const auto& [expr, name] : r.lowered) {
    w.str(expr);
    w.str(name);
  }
  w.str(std::string_view(reinterpret_cast<const char*>(r.binary.data()), r.binary.size()));
  const auto sum = detail::sha256(w.bytes());
  w.raw(std::string_view(reinterpret_cast<const char*>(sum.data()), sum.size()));
  return std::move(w.bytes());
}

CompileResult decode_entry(const std::string& bytes, const CacheKey& key) {
  if (bytes.size() < sizeof magic + 32) throw JitError(fmt::format("truncated: {} bytes", bytes.size()));
  if (std::memcmp(bytes.data(), magic, sizeof magic) != 0) throw JitError("not a streampipe kernel cache entry");
  const std::string_view body(bytes.data(), bytes.size() - 32);
  const auto sum = detail::sha256(body);
  if (std::memcmp(sum.data(), bytes.data() + body.size(), 32) != 0)
    throw JitError("checksum mismatch (corrupt or truncated)");
  Reader r(body);
  (void)r.raw(sizeof magic, "magic");
  if (const auto v = r.u64(); v != static_cast<std::uint64_t>(cache_format_version))
    throw JitError(fmt::format("format version {} (this build reads {})", v, cache_format_version));
  if (r.str("key") != key.hex) throw JitError("entry holds a different key");
  if (r.str("key material") != key.material) throw JitError("key material differs (hash collision or tampering)");
  CompileResult result;
  result.program_name = r.str("program name");
  result.arch = r.str("architecture");
  const std::string kind = r.str("binary kind");
  if (kind == "cubin") result.kind = BinaryKind::cubin;
  else if (kind == "ptx") result.kind = BinaryKind::ptx;
  else throw JitError(fmt::format("unknown binary kind '{}'", kind));
  result.log = r.str("log");
  const std::uint64_t names = r.u64();
  if (names > body.size()) throw JitError("implausible count of lowered names");
  for (std::uint64_t i = 0; i < names; ++i) {
    std::string expr = r.str("name expression");
    result.lowered[std::move(expr)] = r.str("lowered name");
  }
  const std::string binary = r.str("binary");
  if (binary.empty()) throw JitError("empty binary");
  if (!r.done()) throw JitError("trailing bytes");
  result.binary.resize(binary.size());
  std::memcpy(result.binary.data(), binary.data(), binary.size());
  result.from_disk_cache = true;
  return result;
}

DiskCache::DiskCache(fs::path directory) : directory_(std::move(directory)) {
  if (directory_.empty()) throw JitError("the kernel cache directory must not be empty");
}

bool DiskCache::disabled_by_environment() {
  const char* d = std::getenv("STREAMPIPE_CACHE_DISABLE");
  if (d != nullptr && *d != '\0' && std::strcmp(d, "0") != 0) return true;
  const char* dir = std::getenv("STREAMPIPE_CACHE_DIR");
  return dir != nullptr && std::strcmp(dir, "off") == 0;
}

std::optional<fs::path> DiskCache::directory_from_environment() {
  if (disabled_by_environment()) return std::nullopt;
  const auto set = [](const char* var) -> const char* {
    const char* v = std::getenv(var);
    return v != nullptr && *v != '\0' ? v : nullptr;
  };
  if (const char* v = set("STREAMPIPE_CACHE_DIR")) return fs::path(v);
  if (const char* v = set("XDG_CACHE_HOME")) return fs::path(v) / "streampipe";
  if (const char* v = set("HOME")) return fs::path(v) / ".cache" / "streampipe";
  return std::nullopt;
}

fs::path DiskCache::entry_path(const CacheKey& key) const { return directory_ / (key.hex + ".spk"); }

CacheLoad DiskCache::load(const CacheKey& key) const {
  CacheLoad out;
  const fs::path path = entry_path(key);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return out;  // miss
  auto why = untrusted(directory_, true);
  if (!why) why = untrusted(path, false);
  if (why) {
    out.status = CacheLookup::refused;
    out.detail = *why;
    return out;
  }
  try {
    // Its size and magic before the rest is read: a huge file of garbage costs 8 bytes.
    const auto bytes = host::read_regular_file(path, [](std::span<const std::byte> head, std::uint64_t size) {
      if (size > kMaxEntryBytes) throw JitError(fmt::format("{} bytes: larger than any entry", size));
      if (size >= sizeof magic && std::memcmp(head.data(), magic, sizeof magic) != 0)
        throw JitError("not a streampipe kernel cache entry");
    });
    out.result = decode_entry(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()), key);
    out.status = CacheLookup::hit;
  } catch (const host::ReadFileError& e) {
    out.status = CacheLookup::corrupt;
    out.detail = e.what();
  } catch (const JitError& e) {
    out.status = CacheLookup::corrupt;
    out.detail = fmt::format("{}: {}", path.string(), e.what());
  }
  return out;
}

std::string DiskCache::store(const CacheKey& key, const CompileResult& result) const {
  try {
    create_private(directory_);
    if (const auto why = untrusted(directory_, true)) return *why + "; not written";
    const std::string bytes = encode_entry(key, result);
    host::write_file_atomically(entry_path(key), std::string_view(bytes), host::Overwrite::allow,
                                  host::Flush::each_file, 0600);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace streampipe::jit
