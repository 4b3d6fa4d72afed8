// SPDX-License-Identifier: Apache-2.0
#include "streampipe/host/atomic_file.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <sys/stat.h>
#include <unistd.h>

namespace streampipe::host {
namespace {

namespace fs = std::filesystem;

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sp-atomic-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path dir_;
};

TEST_F(AtomicFile, CreatesParentsAndWrites) {
  const auto p = dir_ / "a" / "b" / "out.txt";
  write_file_atomically(p, "hello");
  EXPECT_EQ(read(p), "hello");
  write_file_atomically(p, "replaced");
  EXPECT_EQ(read(p), "replaced");
  // No temporary files are left behind.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(p.parent_path())) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST_F(AtomicFile, RefuseKeepsExistingContent) {
  const auto p = dir_ / "keep.txt";
  write_file_atomically(p, "original", Overwrite::refuse);
  EXPECT_THROW(write_file_atomically(p, "new", Overwrite::refuse), std::runtime_error);
  EXPECT_EQ(read(p), "original");
}

TEST_F(AtomicFile, UnwritableLocationIsANamedError) {
  // A regular file where a directory should be: fails for every user, root included.
  const auto blocker = dir_ / "plain-file";
  write_file_atomically(blocker, "x");
  try {
    write_file_atomically(blocker / "x.txt", "data");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("plain-file"), std::string::npos) << e.what();
  }
}

// What a process ending on a second Ctrl-C relies on: the temporary file of a write under
// way is removed and its target is either complete (it finished first) or absent, and a
// later write creates nothing. The registry is process-wide and cannot be undone, so this
// runs in a child process (a death test that exits 0 when every check held).
TEST_F(AtomicFile, AbandonedWritesLeaveNoTemporaryFileAndNoPartialTarget) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  fs::create_directories(dir_);
  const auto before = dir_ / "before.txt";
  write_file_atomically(before, "complete");
  EXPECT_EXIT(
      {
        const std::string big(std::size_t{64} << 20, 'x');  // long enough to be under way
        const auto racing = dir_ / "racing.txt";
        std::thread writer([&] {
          try {
            write_file_atomically(racing, big);
          } catch (const std::runtime_error&) {
          }
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        (void)abandon_writes_in_progress();
        writer.join();
        const auto late = dir_ / "late.txt";
        bool refused = false;
        try {
          write_file_atomically(late, "data");
        } catch (const std::runtime_error& e) {
          refused = std::string(e.what()).find("late.txt") != std::string::npos;
        }
        bool debris = false;
        for (const auto& e : fs::directory_iterator(dir_))
          debris |= e.path().filename().string().find(".tmp-") != std::string::npos;
        const bool racing_ok = !fs::exists(racing) || fs::file_size(racing) == big.size();
        const bool held = refused && !debris && racing_ok && !fs::exists(late);
        std::error_code ec;
        fs::remove_all(dir_, ec);  // the child's own folder (its pid): TearDown does not run here
        std::_Exit(held ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EQ(read(before), "complete");
}

TEST_F(AtomicFile, PathThatIsADirectoryFails) {
  fs::create_directories(dir_ / "d");
  EXPECT_THROW(write_file_atomically(dir_ / "d", "data"), std::runtime_error);
}

// What the system refused carries its errno (Python reports it as NotADirectoryError).
TEST_F(AtomicFile, SystemRefusalsCarryTheErrno) {
  fs::create_directories(dir_);
  { std::ofstream(dir_ / "f") << "a file where a folder would go"; }
  try {
    write_file_atomically(dir_ / "f" / "x.txt", "data");
    ADD_FAILURE() << "no exception";
  } catch (const WriteFileError& e) {
    EXPECT_EQ(e.error_number(), ENOTDIR) << e.what();
    EXPECT_NE(std::string(e.what()).find("Not a directory"), std::string::npos) << e.what();
  }
}

// Flush::later reserves the blocks and starts the write-back, leaving the fsync to
// sync_files() after the last write: the content and the refusal rules are those of
// Flush::each_file.
TEST_F(AtomicFile, LaterFlushWritesTheSameAndSyncFilesPutsThemOnDisk) {
  const std::string big(3 << 20, 'z');
  std::vector<fs::path> written;
  for (const char* name : {"f0", "f1", "f2"}) {
    written.push_back(dir_ / (name[1] == '2' ? "sub" : "") / name);
    write_file_atomically(written.back(), name[1] == '1' ? std::string_view(big) : std::string_view("x"),
                          Overwrite::refuse, Flush::later);
  }
  written.push_back(dir_ / "empty");
  write_file_atomically(written.back(), std::string_view(), Overwrite::refuse, Flush::later);
  EXPECT_EQ(read(dir_ / "f0"), "x");
  EXPECT_EQ(read(dir_ / "f1"), big);
  EXPECT_EQ(fs::file_size(dir_ / "empty"), 0u);
  EXPECT_THROW(write_file_atomically(dir_ / "f0", "y", Overwrite::refuse, Flush::later), std::runtime_error);
  for (const unsigned threads : {1u, 8u}) {
    const auto errors = sync_files(written, threads);
    ASSERT_EQ(errors.size(), written.size());
    for (const auto& e : errors) EXPECT_EQ(e, "");
  }
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 4);  // f0, f1, empty and sub: no temporary file left
  EXPECT_TRUE(sync_files({}, 4).empty());
}

TEST_F(AtomicFile, SyncOfAMissingFileIsItsOwnNamedError) {
  write_file_atomically(dir_ / "here", "x", Overwrite::refuse, Flush::later);
  const std::vector<fs::path> files{dir_ / "here", dir_ / "not-there"};
  const auto errors = sync_files(files, 2);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "");
  EXPECT_NE(errors[1].find("not-there"), std::string::npos) << errors[1];
}

// Only a regular file is replaced: a rename over a FIFO, a device or a link would turn it
// into a regular file (as root, imwrite("/dev/null") did so for the whole machine; issue 36,
// class 3).
TEST_F(AtomicFile, NeverReplacesASpecialFileOrALink) {
  fs::create_directories(dir_);
  const auto fifo = dir_ / "pipe", link = dir_ / "link", target = dir_ / "target.txt";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  write_file_atomically(target, "kept");
  fs::create_symlink("target.txt", link);
  for (const auto& p : {fifo, link}) {
    try {
      write_file_atomically(p, "data", Overwrite::allow);
      ADD_FAILURE() << p << " was replaced";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(read(target), "kept");
  EXPECT_THROW(AtomicFileWriter(fifo, Overwrite::allow), std::runtime_error);
}

// The temporary name adds 12 bytes: a name of 244-255 bytes could never be written (issue
// 36, class 22).
TEST_F(AtomicFile, NamesUpToTheLongestTheFolderTakes) {
  fs::create_directories(dir_);
  for (const std::size_t length : {240u, 244u, 250u, 255u}) {
    const auto p = dir_ / std::string(length, 'n');
    write_file_atomically(p, "long", Overwrite::refuse);
    EXPECT_EQ(read(p), "long") << length;
    AtomicFileWriter w(p, Overwrite::allow);
    w.write("longer");
    w.commit();
    EXPECT_EQ(read(p), "longer") << length;
  }
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

TEST_F(AtomicFile, WriterPublishesOnCommitAndLeavesNothingOtherwise) {
  const auto p = dir_ / "rows.csv";
  {
    AtomicFileWriter w(p, Overwrite::refuse);
    for (int i = 0; i < 100000; ++i) w.write("row\n");  // past the buffer: on disk before commit()
    EXPECT_FALSE(fs::exists(p)) << "visible before commit()";
    w.commit();
  }
  EXPECT_EQ(fs::file_size(p), 400000u);
  {
    AtomicFileWriter w(p, Overwrite::allow);
    w.write(std::string(200000, 'x'));
  }  // not committed: an interrupted run
  EXPECT_EQ(fs::file_size(p), 400000u) << "the target changed without commit()";
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1) << "a temporary file was left";
  EXPECT_THROW(AtomicFileWriter(p, Overwrite::refuse), std::runtime_error);
}

}  // namespace
}  // namespace streampipe::host
