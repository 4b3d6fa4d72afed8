// SPDX-License-Identifier: Apache-2.0
#include "streampipe/report/atomic_file.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <unistd.h>

namespace streampipe::report {
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

TEST_F(AtomicFile, PathThatIsADirectoryFails) {
  fs::create_directories(dir_ / "d");
  EXPECT_THROW(write_file_atomically(dir_ / "d", "data"), std::runtime_error);
}

}  // namespace
}  // namespace streampipe::report
