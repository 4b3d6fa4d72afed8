// SPDX-License-Identifier: Apache-2.0
// The gray run's outputs flushed to disk after the last write (sync_outputs): written files
// stay converted, and a file system that cannot be flushed fails its files by name.

#include "test_gray_files.hpp"

#include "file_io.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace streampipe::tools::gray {
namespace {
using namespace testing;

TEST(GrayFileIo, SyncOutputsKeepsWrittenFilesAndFailsThoseItCannotReach) {
  TempDir d;
  std::vector<FileResult> files(4);
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string name = fmt::format("f{}.png", i);
    files[i].input = d / "in" / name;
    files[i].output = d / (i == 2 ? "gone" : "out") / name;
    files[i].ok = i != 3;  // file 3 failed before: left alone
    if (i == 3) files[i].error = "earlier";
  }
  const std::vector<std::byte> data(1000, std::byte{7});
  detail::write_output(files[0], data, host::Overwrite::refuse);
  detail::write_output(files[1], data, host::Overwrite::refuse);
  EXPECT_EQ(files[0].bytes_out, data.size());
  // files[2]'s folder never existed: its flush cannot reach it.
  detail::sync_outputs(files, 3);
  EXPECT_TRUE(files[0].ok) << files[0].error;
  EXPECT_TRUE(files[1].ok) << files[1].error;
  EXPECT_EQ(fs::file_size(files[1].output), data.size());
  EXPECT_FALSE(files[2].ok);
  EXPECT_EQ(files[2].error.rfind(files[2].input.string() + ": written, but ", 0), 0u) << files[2].error;
  EXPECT_EQ(files[3].error, "earlier");
}

}  // namespace
}  // namespace streampipe::tools::gray
