// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs the streampipe executable in a fresh temporary folder and reads what --report and
// --report-json produced, for the CPU (host backend) and GPU report tests.

#include "streampipe/io/image.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace streampipe::testing {

class ReportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("sp-report-") + info->name() + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Exit status of `streampipe ARGS` run in the folder; stdout and stderr kept for checks.
  int run(const std::string& args) {
    const std::string cmd = "cd '" + dir_.string() + "' && '" STREAMPIPE_CLI_PATH "' " + args + " >out.txt 2>err.txt";
    const int status = std::system(cmd.c_str());
    stdout_ = read("out.txt");
    stderr_ = read("err.txt");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  [[nodiscard]] std::string read(const std::string& name) const {
    std::ifstream in(dir_ / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  [[nodiscard]] nlohmann::json json(const std::string& name) const { return nlohmann::json::parse(read(name)); }

  // Random RGB PNGs of odd sizes (never all zeros), in a folder `in`.
  void make_images(int count, std::uint32_t width = 13, std::uint32_t height = 9) {
    std::mt19937 rng(7);
    std::filesystem::create_directories(dir_ / "in");
    for (int i = 0; i < count; ++i) {
      const auto k = static_cast<std::uint32_t>(i);
      auto img = io::Image::make(width + 6 * k, height + 4 * k, 3);
      for (auto& p : img.pixels) p = static_cast<std::uint8_t>(rng());
      io::write_image(dir_ / "in" / ("img" + std::to_string(i) + ".png"), img, io::ImageFormat::png);
    }
  }

  std::string context() const { return "stdout:\n" + stdout_ + "\nstderr:\n" + stderr_; }

  std::filesystem::path dir_;
  std::string stdout_, stderr_;
};

// Checks the JSON written by --report-json: the summary matches the queries, every query's
// timestamps are ordered, and GPU fields are present or absent as `h2d`, `compute`, `d2h` say.
inline void expect_report_json(const nlohmann::json& j, const std::string& tool, std::size_t queries,
                               const std::string& sync, bool h2d, bool compute, bool d2h) {
  EXPECT_EQ(j.at("tool"), tool);
  EXPECT_EQ(j.at("sync"), sync);
  EXPECT_FALSE(j.at("query").get<std::string>().empty());
  EXPECT_TRUE(j.at("host").is_object());
  const auto& s = j.at("summary");
  EXPECT_EQ(s.at("queries").get<std::size_t>(), queries);
  EXPECT_GT(s.at("wall_ms").get<double>(), 0.0);
  EXPECT_GT(s.at("throughput_qps").get<double>(), 0.0);
  EXPECT_EQ(s.at("latency_ms").at("count").get<std::size_t>(), queries);
  EXPECT_GT(s.at("latency_ms").at("max").get<double>(), 0.0);
  EXPECT_EQ(s.at("compute_ms").at("count").get<std::size_t>(), compute ? queries : 0u);
  EXPECT_EQ(s.at("h2d_ms").at("count").get<std::size_t>(), h2d ? queries : 0u);
  EXPECT_EQ(s.at("d2h_ms").at("count").get<std::size_t>(), d2h ? queries : 0u);
  EXPECT_EQ(j.at("limits").at("warmup_queries").get<std::size_t>(), 0u);
  const auto& q = j.at("queries");
  ASSERT_EQ(q.size(), queries);
  for (const auto& r : q) {
    const double submit = r.at("submit_ms"), begin = r.at("enqueue_begin_ms"), end = r.at("enqueue_end_ms"),
                 complete = r.at("complete_ms");
    EXPECT_LE(submit, begin + 1e-6) << r;
    EXPECT_LE(begin, end) << r;
    EXPECT_LE(submit, complete) << r;
    EXPECT_EQ(r.at("h2d_ms").is_number(), h2d) << r;
    EXPECT_EQ(r.at("compute_ms").is_number(), compute) << r;
    EXPECT_EQ(r.at("d2h_ms").is_number(), d2h) << r;
    if (compute) {
      EXPECT_GT(r.at("compute_ms").get<double>(), 0.0) << r;
    }
    if (h2d) {
      EXPECT_GT(r.at("h2d_ms").get<double>(), 0.0) << r;
    }
    if (d2h) {
      EXPECT_GT(r.at("d2h_ms").get<double>(), 0.0) << r;
    }
  }
}

}  // namespace streampipe::testing
