// SPDX-License-Identifier: Apache-2.0
// Whom the disk cache trusts and what it reads (issue 36, classes 5, 12 and 16): a folder
// made 0700 and entries 0600 whatever the umask; a folder or entry others can write, or of
// another kind than a regular file, refused with a warning and never loaded; an entry's size
// and magic checked before the rest is read; an #include that finds a FIFO refused.
#include "streampipe/jit/disk_cache.hpp"
#include "streampipe/jit/errors.hpp"
#include "streampipe/jit/module_cache.hpp"

#include "temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace streampipe::jit;
namespace fs = std::filesystem;

namespace {

const char* twice_source = R"(extern "C" __global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; })";

using streampipe::jit::test_support::TempDir;

CacheOptions disk_at(const fs::path& dir) {
  CacheOptions o;
  o.memory = false;
  o.directory = dir;
  return o;
}

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

// Restores the umask on the way out.
struct Umask {
  mode_t old;
  explicit Umask(mode_t m) : old(::umask(m)) {}
  ~Umask() { ::umask(old); }
};

TEST(DiskCacheTrust, FolderAndEntriesArePrivateWhateverTheUmask) {
  TempDir s;
  const fs::path dir = s.path() / "deep" / "cache";
  const Program p("private.cu", twice_source);
  {
    const Umask open(0);
    LoadStats st;
    (void)compile_cached(p, "sm_90", disk_at(dir), &st);
    EXPECT_EQ(st.origin, LoadOrigin::compiled);
    EXPECT_EQ(st.cache_warning, "");
  }
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_EQ(mode_of(s.path() / "deep"), 0700u);
  const fs::path entry = DiskCache(dir).entry_path(cache_key(p, "sm_90"));
  EXPECT_EQ(mode_of(entry), 0600u);
  LoadStats again;
  (void)compile_cached(p, "sm_90", disk_at(dir), &again);
  EXPECT_EQ(again.origin, LoadOrigin::disk);
}

TEST(DiskCacheTrust, WhatOthersCanWriteIsRefusedNeverLoaded) {
  TempDir s;
  const Program p("shared.cu", twice_source);
  const DiskCache cache(s.path());
  const CacheKey key = cache_key(p, "sm_90");
  ASSERT_EQ(cache.store(key, compile(p, "sm_90")), "");
  ASSERT_EQ(cache.load(key).status, CacheLookup::hit);

  fs::permissions(cache.entry_path(key), fs::perms::others_write, fs::perm_options::add);
  CacheLoad l = cache.load(key);
  EXPECT_EQ(l.status, CacheLookup::refused);
  EXPECT_FALSE(l.result);
  EXPECT_NE(l.detail.find("writable by others"), std::string::npos) << l.detail;
  LoadStats st;
  (void)compile_cached(p, "sm_90", disk_at(s.path()), &st);
  EXPECT_EQ(st.origin, LoadOrigin::compiled);
  EXPECT_NE(st.cache_warning.find("not trusted"), std::string::npos) << st.cache_warning;
  EXPECT_EQ(mode_of(cache.entry_path(key)), 0600u) << "the entry rewritten private";

  fs::permissions(s.path(), fs::perms::group_write, fs::perm_options::add);
  l = cache.load(key);
  EXPECT_EQ(l.status, CacheLookup::refused);
  EXPECT_NE(l.detail.find("writable by its group"), std::string::npos) << l.detail;
  EXPECT_NE(cache.store(key, compile(p, "sm_90")).find("not written"), std::string::npos);
}

TEST(DiskCacheTrust, EntriesOfAnotherUserAreRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  TempDir s;
  const Program p("theirs.cu", twice_source);
  const DiskCache cache(s.path());
  const CacheKey key = cache_key(p, "sm_90");
  ASSERT_EQ(cache.store(key, compile(p, "sm_90")), "");
  ASSERT_EQ(::chown(cache.entry_path(key).c_str(), 65534, 65534), 0);
  const CacheLoad l = cache.load(key);
  EXPECT_EQ(l.status, CacheLookup::refused);
  EXPECT_NE(l.detail.find("belongs to user 65534"), std::string::npos) << l.detail;
}

// A FIFO would block the read until a writer came, /dev/zero never end.
TEST(DiskCacheTrust, EntriesThatAreNotRegularFilesAreNeverOpened) {
  TempDir s;
  const Program p("kinds.cu", twice_source);
  const DiskCache cache(s.path());
  const CacheKey key = cache_key(p, "sm_90");
  const fs::path entry = cache.entry_path(key);
  ASSERT_EQ(::mkfifo(entry.c_str(), 0600), 0);
  CacheLoad l = cache.load(key);
  EXPECT_EQ(l.status, CacheLookup::refused);
  EXPECT_NE(l.detail.find("is a FIFO, not a regular file"), std::string::npos) << l.detail;
  fs::remove(entry);
  fs::create_symlink("/dev/zero", entry);
  l = cache.load(key);
  EXPECT_EQ(l.status, CacheLookup::refused);
  EXPECT_NE(l.detail.find("symbolic link"), std::string::npos) << l.detail;
  EXPECT_NE(cache.store(key, compile(p, "sm_90")), "") << "a link is never replaced either";
}

// Its size and magic before the rest: a large file of garbage costs a few bytes of reading.
TEST(DiskCacheTrust, GarbageIsRejectedFromItsFirstBytes) {
  TempDir s;
  const Program p("garbage.cu", twice_source);
  const DiskCache cache(s.path());
  const CacheKey key = cache_key(p, "sm_90");
  const fs::path entry = cache.entry_path(key);
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  for (const std::uintmax_t size : {std::uintmax_t{900} << 20, std::uintmax_t{3} << 29}) {
    { std::ofstream(entry, std::ios::binary) << ""; }
    fs::resize_file(entry, size);  // sparse: no disk taken
    const CacheLoad l = cache.load(key);
    EXPECT_EQ(l.status, CacheLookup::corrupt) << size;
    EXPECT_NE(l.detail.find(size > (std::uintmax_t{1} << 30) ? "larger than any entry" : "not a streampipe"),
              std::string::npos)
        << l.detail;
    fs::remove(entry);
  }
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 256 * 1024) << "KiB: an entry was read whole";
}

TEST(DiskCacheTrust, AnIncludeThatFindsAFifoIsRefused) {
  TempDir s;
  ASSERT_EQ(::mkfifo((s.path() / "pipe.h").c_str(), 0600), 0);
  Program p("inc.cu", std::string("#include \"pipe.h\"\n") + twice_source);
  p.include_dir(s.path().string());
  try {
    (void)cache_key(p, "sm_90");
    ADD_FAILURE() << "an include of a FIFO was accepted";
  } catch (const JitError& e) {
    EXPECT_NE(std::string(e.what()).find("pipe.h"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("is a FIFO"), std::string::npos) << e.what();
  }
}

}  // namespace
