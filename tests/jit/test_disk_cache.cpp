// SPDX-License-Identifier: Apache-2.0
// The disk cache without a device: keys, hit/miss, corruption, truncation, atomic writes,
// concurrent writers (threads and processes), unwritable directories, the environment.
#include "streampipe/jit/disk_cache.hpp"
#include "streampipe/jit/errors.hpp"
#include "streampipe/jit/module_cache.hpp"

#include "temp_dir.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace streampipe::jit;
namespace fs = std::filesystem;

namespace {

const char* source = R"(
extern "C" __global__ void twice(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}
)";

using streampipe::jit::test_support::TempDir;

// Sets an environment variable for a scope (nullptr unsets it), restoring the old value.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~EnvVar() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void write(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << s;
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> v;
  for (const auto& e : fs::directory_iterator(dir)) v.push_back(e.path());
  return v;
}

std::string fmt_name(int k) { return "p" + std::to_string(k) + ".cu"; }

CacheOptions disk_only(const fs::path& dir) {
  CacheOptions o;
  o.memory = false;
  o.directory = dir;
  return o;
}

}  // namespace

TEST(CacheKey, CoversEverythingThatChangesTheBinary) {
  const Program base("k.cu", source);
  const auto key = [](const Program& p, const std::string& arch = "sm_90") { return cache_key(p, arch).hex; };
  const std::string k0 = key(base);
  EXPECT_EQ(k0.size(), 64u);
  EXPECT_EQ(k0, key(Program("k.cu", source))) << "the key is deterministic";
  EXPECT_NE(k0, key(base, "sm_80"));
  EXPECT_NE(k0, key(Program("k.cu", std::string(source) + " ")));
  EXPECT_NE(k0, key(Program("other.cu", source)));
  EXPECT_NE(k0, key(Program(base).option("-DX=1")));
  EXPECT_NE(key(Program(base).option("-DX=1").option("-DY")), key(Program(base).option("-DX=1 -DY")));
  EXPECT_NE(k0, key(Program(base).name_expression("twice")));
  EXPECT_NE(key(Program(base).header("a.h", "1")), key(Program(base).header("a.h", "2")));
  EXPECT_NE(k0, key(Program(base).include_dir("/nonexistent")));
  const std::string material = cache_key(base, "sm_90").material;
  EXPECT_NE(material.find("nvrtc " + std::to_string(nvrtc_version())), std::string::npos);
  EXPECT_NE(material.find("format " + std::to_string(cache_format_version)), std::string::npos);
}

TEST(CacheKey, FollowsHeadersOnDiskRecursively) {
  TempDir dir;
  fs::create_directories(dir.path() / "inc" / "sub");
  write(dir.path() / "inc" / "top.h", "#include \"sub/leaf.h\"\n");
  write(dir.path() / "inc" / "sub" / "leaf.h", "#define LEAF 1\n");
  Program p("k.cu", std::string("#include <top.h>\n#include \"missing.h\"\n") + source);
  p.include_dir((dir.path() / "inc").string());
  const CacheKey k1 = cache_key(p, "sm_90");
  EXPECT_NE(k1.material.find("leaf.h sha256:"), std::string::npos);
  EXPECT_NE(k1.material.find("unresolved:missing.h"), std::string::npos);
  write(dir.path() / "inc" / "sub" / "leaf.h", "#define LEAF 2\n");
  EXPECT_NE(cache_key(p, "sm_90").hex, k1.hex) << "editing an included header changes the key";
  // An in-memory header is used before the include directories, and its own includes followed.
  Program q("k.cu", "#include \"mem.h\"\n");
  q.header("mem.h", "#include \"top.h\"\n").include_dir((dir.path() / "inc").string());
  EXPECT_NE(cache_key(q, "sm_90").material.find("leaf.h sha256:"), std::string::npos);
}

TEST(CacheKey, RemembersOldHeadersButSeesEveryEdit) {
  TempDir dir;
  const fs::path h = dir.path() / "old.h";
  write(h, "#define V 1\n");
  const auto past = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(h, past);
  Program p("k.cu", "#include \"old.h\"\n");
  p.include_dir(dir.path().string());
  const std::string k1 = cache_key(p, "sm_90").hex;
  EXPECT_EQ(cache_key(p, "sm_90").hex, k1);
  // Same size, an older file time than before: a different file as far as the memo knows.
  write(h, "#define V 2\n");
  fs::last_write_time(h, past - std::chrono::minutes(1));
  EXPECT_NE(cache_key(p, "sm_90").hex, k1);
  // Edited just now, same size: never trusted from the memo.
  write(h, "#define V 3\n");
  const std::string k3 = cache_key(p, "sm_90").hex;
  write(h, "#define V 4\n");
  EXPECT_NE(cache_key(p, "sm_90").hex, k3);
}

TEST(DiskCache, MissThenHitReturnsTheSameResult) {
  TempDir dir;
  const Program p = Program("k.cu", source).name_expression("twice");
  LoadStats s1, s2;
  const CompileResult first = compile_cached(p, "sm_90", disk_only(dir.path()), &s1);
  EXPECT_EQ(s1.origin, LoadOrigin::compiled);
  EXPECT_GT(s1.compile_ms, 0.0);
  EXPECT_TRUE(s1.cache_warning.empty()) << s1.cache_warning;
  const CompileResult second = compile_cached(p, "sm_90", disk_only(dir.path()), &s2);
  EXPECT_EQ(s2.origin, LoadOrigin::disk);
  EXPECT_EQ(s1.key, s2.key);
  EXPECT_TRUE(second.from_disk_cache);
  EXPECT_EQ(second.binary, first.binary);
  EXPECT_EQ(second.lowered, first.lowered);
  EXPECT_EQ(second.arch, "sm_90");
  EXPECT_EQ(second.kind, BinaryKind::cubin);
  // Exactly one entry, no temporary files left behind.
  const auto files = files_in(dir.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].filename().string(), s1.key + ".spk");
}

TEST(DiskCache, DisabledCacheWritesNothing) {
  TempDir dir;
  CacheOptions o = disk_only(dir.path());
  o.disk = false;
  LoadStats s;
  (void)compile_cached(Program("k.cu", source), "sm_90", o, &s);
  (void)compile_cached(Program("k.cu", source), "sm_90", o, &s);
  EXPECT_EQ(s.origin, LoadOrigin::compiled);
  EXPECT_TRUE(files_in(dir.path()).empty());
}

TEST(DiskCache, CorruptTruncatedOrForeignEntriesAreRecompiledNeverLoaded) {
  TempDir dir;
  const Program p("k.cu", source);
  const DiskCache cache(dir.path());
  const CacheKey key = cache_key(p, "sm_90");
  LoadStats s;
  const CompileResult good = compile_cached(p, "sm_90", disk_only(dir.path()), &s);
  const fs::path entry = cache.entry_path(key);
  const std::string bytes = read(entry);
  ASSERT_GT(bytes.size(), 100u);

  const auto expect_rejected_then_repaired = [&](const std::string& damaged, const char* what) {
    write(entry, damaged);
    const CacheLoad l = cache.load(key);
    EXPECT_EQ(l.status, CacheLookup::corrupt) << what;
    EXPECT_FALSE(l.result.has_value()) << what;
    EXPECT_NE(l.detail.find(entry.string()), std::string::npos) << what << ": " << l.detail;
    LoadStats r;
    const CompileResult again = compile_cached(p, "sm_90", disk_only(dir.path()), &r);
    EXPECT_EQ(r.origin, LoadOrigin::compiled) << what;
    EXPECT_NE(r.cache_warning.find("rejected"), std::string::npos) << what;
    EXPECT_EQ(again.binary, good.binary) << what;
    EXPECT_EQ(cache.load(key).status, CacheLookup::hit) << what << ": the entry was replaced";
  };
  std::string flipped = bytes;
  flipped[bytes.size() / 2] = static_cast<char>(flipped[bytes.size() / 2] ^ 0x40);
  expect_rejected_then_repaired(flipped, "one flipped bit in the binary");
  expect_rejected_then_repaired(bytes.substr(0, bytes.size() / 2), "truncated to half");
  expect_rejected_then_repaired(bytes.substr(0, 10), "truncated to 10 bytes");
  expect_rejected_then_repaired(std::string(), "empty file");
  expect_rejected_then_repaired("not a cache entry at all, but long enough to hold a checksum......", "foreign file");
  std::string bad_sum = bytes;
  bad_sum.back() = static_cast<char>(bad_sum.back() ^ 1);
  expect_rejected_then_repaired(bad_sum, "checksum damaged");
}

TEST(DiskCache, EntryUnderAnotherKeyIsRejected) {
  TempDir dir;
  const DiskCache cache(dir.path());
  const Program a("a.cu", source), b("b.cu", source);
  const CacheKey ka = cache_key(a, "sm_90"), kb = cache_key(b, "sm_90");
  ASSERT_TRUE(cache.store(ka, compile(a, "sm_90")).empty());
  // An entry copied to another key's file name (a valid checksum, the wrong content).
  fs::copy_file(cache.entry_path(ka), cache.entry_path(kb));
  const CacheLoad l = cache.load(kb);
  EXPECT_EQ(l.status, CacheLookup::corrupt);
  EXPECT_NE(l.detail.find("different key"), std::string::npos) << l.detail;
}

TEST(DiskCache, DecodeRejectsEveryTruncation) {
  const Program p("k.cu", source);
  const CacheKey key = cache_key(p, "compute_90");
  const std::string bytes = encode_entry(key, compile(p, "compute_90"));
  EXPECT_NO_THROW((void)decode_entry(bytes, key));
  for (std::size_t n = 0; n < bytes.size(); n += 1 + n / 8) EXPECT_THROW((void)decode_entry(bytes.substr(0, n), key), JitError) << n;
}

TEST(DiskCache, UnwritableDirectoryIsReportedNotFatal) {
  TempDir dir;
  // A directory below a regular file can be created by nobody, root included.
  write(dir.path() / "file", "x");
  const fs::path impossible = dir.path() / "file" / "cache";
  LoadStats s;
  CompileResult r;
  ASSERT_NO_THROW(r = compile_cached(Program("k.cu", source), "sm_90", disk_only(impossible), &s));
  EXPECT_FALSE(r.binary.empty());
  EXPECT_EQ(s.origin, LoadOrigin::compiled);
  EXPECT_NE(s.cache_warning.find(impossible.string()), std::string::npos) << s.cache_warning;
  if (::geteuid() != 0) {  // permissions do not stop root
    const fs::path ro = dir.path() / "ro";
    fs::create_directories(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    LoadStats t;
    ASSERT_NO_THROW((void)compile_cached(Program("k2.cu", source), "sm_90", disk_only(ro), &t));
    EXPECT_FALSE(t.cache_warning.empty());
  }
}

TEST(DiskCache, DirectoryFromEnvironment) {
  const EnvVar disable("STREAMPIPE_CACHE_DISABLE", nullptr);
  {
    const EnvVar a("STREAMPIPE_CACHE_DIR", "/tmp/sp-a"), b("XDG_CACHE_HOME", "/tmp/xdg"), c("HOME", "/home/u");
    EXPECT_EQ(DiskCache::directory_from_environment(), fs::path("/tmp/sp-a"));
  }
  {
    const EnvVar a("STREAMPIPE_CACHE_DIR", nullptr), b("XDG_CACHE_HOME", "/tmp/xdg"), c("HOME", "/home/u");
    EXPECT_EQ(DiskCache::directory_from_environment(), fs::path("/tmp/xdg/streampipe"));
  }
  {
    const EnvVar a("STREAMPIPE_CACHE_DIR", ""), b("XDG_CACHE_HOME", ""), c("HOME", "/home/u");
    EXPECT_EQ(DiskCache::directory_from_environment(), fs::path("/home/u/.cache/streampipe"));
  }
  {
    const EnvVar a("STREAMPIPE_CACHE_DIR", nullptr), b("XDG_CACHE_HOME", nullptr), c("HOME", nullptr);
    EXPECT_EQ(DiskCache::directory_from_environment(), std::nullopt);
  }
  {
    const EnvVar a("STREAMPIPE_CACHE_DIR", "/tmp/sp-a"), d("STREAMPIPE_CACHE_DISABLE", "1");
    EXPECT_TRUE(DiskCache::disabled_by_environment());
    EXPECT_EQ(DiskCache::directory_from_environment(), std::nullopt);
  }
  {
    const EnvVar a("STREAMPIPE_CACHE_DIR", "off");
    EXPECT_TRUE(DiskCache::disabled_by_environment());
  }
  {
    const EnvVar a("STREAMPIPE_CACHE_DIR", "/tmp/sp-a"), d("STREAMPIPE_CACHE_DISABLE", "0");
    EXPECT_FALSE(DiskCache::disabled_by_environment());
  }
}

TEST(DiskCache, EnvironmentDirectoryIsUsedByDefault) {
  TempDir dir;
  const EnvVar disable("STREAMPIPE_CACHE_DISABLE", nullptr);
  const EnvVar where("STREAMPIPE_CACHE_DIR", dir.path().c_str());
  CacheOptions o;
  o.memory = false;
  LoadStats s;
  (void)compile_cached(Program("env.cu", source), "sm_90", o, &s);
  EXPECT_TRUE(fs::exists(dir.path() / (s.key + ".spk")));
  {
    const EnvVar off("STREAMPIPE_CACHE_DISABLE", "1");
    LoadStats t;
    (void)compile_cached(Program("env2.cu", source), "sm_90", o, &t);
    EXPECT_FALSE(fs::exists(dir.path() / (t.key + ".spk")));
  }
}

TEST(DiskCache, ConcurrentThreadsShareOneDirectory) {
  TempDir dir;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int round = 0; round < 3; ++round) {
          const Program p(fmt_name(round), source);
          const CompileResult r = compile_cached(p, "sm_90", disk_only(dir.path()));
          if (r.binary.empty()) errors[t] = "empty binary";
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors) EXPECT_TRUE(e.empty()) << e;
  const DiskCache cache(dir.path());
  for (int round = 0; round < 3; ++round)
    EXPECT_EQ(cache.load(cache_key(Program(fmt_name(round), source), "sm_90")).status, CacheLookup::hit);
  EXPECT_EQ(files_in(dir.path()).size(), 3u) << "no temporary files remain";
}

// Two processes compiling and storing the same programs at once, a third reading all the
// while: every read is a clean miss or a verified hit, never a corrupt entry.
TEST(DiskCache, ConcurrentProcessesNeverSeeAPartialEntry) {
  TempDir dir;
  constexpr int programs = 4;
  std::vector<pid_t> children;
  std::vector<int> exit_status;
  for (int child = 0; child < 2; ++child) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 0;
      try {
        for (int round = 0; round < 3; ++round)
          for (int k = 0; k < programs; ++k) {
            // Each round bypasses lookups so both processes keep rewriting the same entries.
            const Program p(fmt_name(k), source);
            const DiskCache cache(dir.path());
            if (!cache.store(cache_key(p, "sm_90"), compile(p, "sm_90")).empty()) status = 3;
          }
      } catch (...) {
        status = 4;
      }
      ::_exit(status);
    }
    children.push_back(pid);
    exit_status.push_back(-1);
  }
  const DiskCache cache(dir.path());
  int corrupt = 0, hits = 0;
  for (;;) {
    bool running = false;
    for (std::size_t c = 0; c < children.size(); ++c) {
      if (exit_status[c] != -1) continue;
      int st = 0;
      const pid_t r = ::waitpid(children[c], &st, WNOHANG);
      if (r == 0) running = true;
      else exit_status[c] = r == children[c] && WIFEXITED(st) ? WEXITSTATUS(st) : 100;
    }
    for (int k = 0; k < programs; ++k) {
      const CacheLoad l = cache.load(cache_key(Program(fmt_name(k), source), "sm_90"));
      corrupt += l.status == CacheLookup::corrupt;
      hits += l.status == CacheLookup::hit;
    }
    if (!running) break;
  }
  EXPECT_EQ(corrupt, 0);
  EXPECT_GT(hits, 0);
  for (const int st : exit_status) EXPECT_EQ(st, 0) << "a writer process failed";
  for (int k = 0; k < programs; ++k)
    EXPECT_EQ(cache.load(cache_key(Program(fmt_name(k), source), "sm_90")).status, CacheLookup::hit);
  EXPECT_EQ(files_in(dir.path()).size(), static_cast<std::size_t>(programs));
}
