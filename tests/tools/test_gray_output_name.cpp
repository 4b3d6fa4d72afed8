// SPDX-License-Identifier: Apache-2.0
// Output names under --name, and the plan's use of them: a folder holding x.jpg and x.png
// converts with "{stem}.{ext}", the clash without it says how to name them apart, and a file
// given twice is converted once.

#include "test_gray_files.hpp"

#include "streampipe/tools/gray/output_name.hpp"
#include "streampipe/tools/gray/plan.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace streampipe::tools::gray {
namespace {
using namespace testing;

TEST(GrayOutputName, FieldsAndTheFormatsExtension) {
  using io::ImageFormat;
  EXPECT_EQ(output_file_name("a/x.JPG", kDefaultOutputName, ImageFormat::png), "x.png");
  EXPECT_EQ(output_file_name("x.JPG", "{stem}.{ext}", ImageFormat::png), "x.JPG.png");
  EXPECT_EQ(output_file_name("x.jpg", "{stem}.{ext}.png", ImageFormat::png), "x.jpg.png");
  EXPECT_EQ(output_file_name("x.jpg", "{stem}.{ext}.PNG", ImageFormat::png), "x.jpg.PNG");
  EXPECT_EQ(output_file_name("x.png", "gray-{stem}", ImageFormat::jpeg), "gray-x.jpg");
  EXPECT_EQ(output_file_name("noext", "{stem}_{ext}", ImageFormat::png), "noext_.png");
  // The default is the old naming: the extension replaced, whatever the name.
  EXPECT_EQ(output_file_name("a.b.png", kDefaultOutputName, ImageFormat::jpeg), "a.b.jpg");
}

TEST(GrayOutputName, BadPatternsAreNamed) {
  for (const char* bad : {"", "{stem", "stem}", "{name}", "sub/{stem}"}) {
    const std::string why = plan_error([&] { (void)output_file_name("x.png", bad, io::ImageFormat::png); });
    EXPECT_NE(why.find("--name"), std::string::npos) << bad << ": " << why;
    EXPECT_NE(why.find("{stem}"), std::string::npos) << bad << ": " << why;
  }
}

TEST(GrayOutputName, AFolderWithXJpgAndXPngConvertsUnderExt) {
  TempDir d;
  write_small_png(d / "in/x.png", 1);
  write_small_jpeg(d / "in/x.jpg", 2);
  PlanOptions o = plan_into(d / "out");
  const std::vector<fs::path> inputs = {d / "in"};
  const std::string clash = plan_error([&] { (void)plan_jobs(inputs, o); });
  EXPECT_NE(clash.find("would both be written to"), std::string::npos) << clash;
  EXPECT_NE(clash.find("--name '{stem}.{ext}' (x.jpg.png and x.png.png)"), std::string::npos) << clash;
  o.name = "{stem}.{ext}";
  const auto jobs = plan_jobs(inputs, o);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].output, d / "out/x.jpg.png");
  EXPECT_EQ(jobs[1].output, d / "out/x.png.png");
}

TEST(GrayOutputName, FilesOfOneNameFromTwoFoldersNeedTwoOutputFolders) {
  TempDir d;
  write_small_png(d / "a/x.png", 1);
  write_small_png(d / "b/x.png", 2);
  PlanOptions o = plan_into(d / "out");
  const std::vector<fs::path> inputs = {d / "a/x.png", d / "b/x.png"};
  const std::string clash = plan_error([&] { (void)plan_jobs(inputs, o); });
  EXPECT_NE(clash.find("different output folders"), std::string::npos) << clash;
}

TEST(GrayPlan, AFileGivenTwiceIsConvertedOnce) {
  TempDir d;
  write_small_png(d / "in/a.png", 1);
  write_small_png(d / "in/b.png", 2);
  PlanOptions o = plan_into(d / "out");
  const std::vector<fs::path> inputs = {d / "in/a.png", d / "in/./a.png", d / "in", d / "in/b.png"};
  const auto jobs = plan_jobs(inputs, o);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].input, d / "in/a.png");
  EXPECT_EQ(jobs[0].output, d / "out/a.png");
  EXPECT_EQ(jobs[1].output, d / "out/b.png");
}

}  // namespace
}  // namespace streampipe::tools::gray
