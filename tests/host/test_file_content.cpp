// SPDX-License-Identifier: Apache-2.0
// What a file holds, from its first bytes: an output replaces only a file of its own kind
// (issue 36, class 2).
#include "streampipe/host/file_content.hpp"
#include "streampipe/host/read_file.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace streampipe::host {
namespace {

Content of(std::string_view bytes) { return sniff_content(std::as_bytes(std::span(bytes.data(), bytes.size()))); }

TEST(FileContent, KnowsTheKinds) {
  EXPECT_EQ(of(""), Content::empty);
  EXPECT_EQ(of("  \n{\"a\": 1}"), Content::json);
  EXPECT_EQ(of("\xef\xbb\xbf[1, 2]"), Content::json);
  EXPECT_EQ(of("<?xml version=\"1.0\"?><svg/>"), Content::svg);
  EXPECT_EQ(of("generation,universe0\n0,5\n"), Content::text);
  EXPECT_EQ(of(std::string_view("\x89PNG\r\n\x1a\n\0\0", 10)), Content::png);
  EXPECT_EQ(of("\xff\xd8\xff\xe0 jfif"), Content::jpeg);
  EXPECT_EQ(of(std::string_view("ab\0cd", 5)), Content::binary);
}

TEST(FileContent, AnOutputReplacesOnlyItsOwnKind) {
  EXPECT_TRUE(may_replace(Content::json, Content::json));
  EXPECT_TRUE(may_replace(Content::json, Content::empty));
  EXPECT_TRUE(may_replace(Content::json, Content::text));  // an earlier report, a placeholder
  EXPECT_FALSE(may_replace(Content::json, Content::png));
  EXPECT_FALSE(may_replace(Content::json, Content::binary));
  EXPECT_FALSE(may_replace(Content::svg, Content::jpeg));
  EXPECT_TRUE(may_replace(Content::text, Content::svg));
  EXPECT_FALSE(may_replace(Content::text, Content::binary));
  EXPECT_TRUE(may_replace(Content::png, Content::jpeg));
  EXPECT_FALSE(may_replace(Content::png, Content::json));
  EXPECT_EQ(describe(Content::png), "a PNG image");
}

TEST(FileContent, ReadsTheHeadOfRegularFilesOnly) {
  const std::string dir = ::testing::TempDir() + "sp-file-content-" + std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0700);
  const std::string file = dir + "/f.json", fifo = dir + "/p";
  std::ofstream(file) << "{\"x\": 1}";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto head = read_file_head(file, 3);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->size(), 3u);
  EXPECT_EQ(sniff_content(*head), Content::json);
  EXPECT_FALSE(read_file_head(fifo, 64)) << "a FIFO is never read (it would block)";
  EXPECT_FALSE(read_file_head("/dev/zero", 64)) << "a device is never read";
  EXPECT_FALSE(read_file_head(dir + "/absent", 64));
  ::unlink(file.c_str());
  ::unlink(fifo.c_str());
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace streampipe::host
