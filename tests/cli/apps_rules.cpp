// SPDX-License-Identifier: Apache-2.0
// What apps/streampipe's files must keep to (issue 37): each is parse -> call -> print, at
// most 150 lines, and none includes a header of bench/: the product does not depend on its
// benchmarks (bench/cli/ adds the bench commands, on the CLI's headers). The build keeps
// bench/'s folder off the CLI's include path; this test names the file and line that broke
// either rule.

#include "tree_snapshot.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace streampipe::testing {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxLines = 150;

const fs::path& source_dir() {
  static const fs::path dir = STREAMPIPE_SOURCE_DIR;
  return dir;
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// "X" of `#include "X"`, or "" for any other line.
std::string quoted_include(const std::string& line) {
  static const std::regex include(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::smatch m;
  return std::regex_search(line, m, include) ? m[1].str() : std::string();
}

// A quoted include reaches bench/ when it names a file there (`harness/benchmark.hpp`,
// `self_check.hpp`) that is not a file of apps/streampipe itself, or spells the way out.
bool reaches_bench(const std::string& header) {
  const fs::path apps = source_dir() / "apps" / "streampipe";
  if (header.starts_with("bench/") || header.find("../") != std::string::npos) return true;
  return !fs::exists(apps / header) && fs::exists(source_dir() / "bench" / header);
}

std::vector<std::string> apps_files() {
  const std::vector<std::string> files = TreeSnapshot::of(source_dir() / "apps" / "streampipe").files();
  EXPECT_GT(files.size(), 10u) << "apps/streampipe not found under " << source_dir();
  return files;
}

TEST(AppsRules, NoFileIsLongerThan150Lines) {
  for (const auto& name : apps_files()) {
    const std::size_t lines = lines_of(source_dir() / "apps" / "streampipe" / name).size();
    EXPECT_LE(lines, kMaxLines) << "apps/streampipe/" << name << " has " << lines
                                << " lines: split it, or move the work into the library";
  }
}

TEST(AppsRules, NoFileIncludesBench) {
  for (const auto& name : apps_files()) {
    const std::vector<std::string> lines = lines_of(source_dir() / "apps" / "streampipe" / name);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string header = quoted_include(lines[i]);
      EXPECT_FALSE(!header.empty() && reaches_bench(header))
          << "apps/streampipe/" << name << ":" << i + 1 << " includes bench/'s \"" << header
          << "\": the CLI must not depend on its benchmarks (a bench command belongs in bench/cli/)";
    }
  }
}

// The rule's own reading of includes, on lines that break it and lines that keep it.
TEST(AppsRules, ReadsIncludesAsTheCompilerWould) {
  EXPECT_EQ(quoted_include("#include \"harness/benchmark.hpp\""), "harness/benchmark.hpp");
  EXPECT_EQ(quoted_include("  #  include \"self_check.hpp\"  // the checks"), "self_check.hpp");
  EXPECT_EQ(quoted_include("#include <CLI/CLI.hpp>"), "");
  EXPECT_EQ(quoted_include("// #include \"x.hpp\" in a comment"), "");
  EXPECT_TRUE(reaches_bench("harness/benchmark.hpp"));
  EXPECT_TRUE(reaches_bench("benchmarks.hpp"));
  EXPECT_TRUE(reaches_bench("../../bench/self_check.hpp"));
  EXPECT_FALSE(reaches_bench("commands.hpp"));
  EXPECT_FALSE(reaches_bench("streampipe/cuda/device.hpp"));
}

}  // namespace
}  // namespace streampipe::testing
