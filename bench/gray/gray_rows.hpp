// SPDX-License-Identifier: Apache-2.0
#pragma once
// One row of `bench gray`: a command a user would type - the tool (with its defaults, or
// --backend host) or a peer (Pillow, OpenCV, nvImageCodec) - run whole and timed from outside, spawn to exit
// (harness/command.hpp). Around each run, untimed: its outputs and report are removed
// before it; after it the exit status is checked, every output is compared with the
// reference (gray_check.hpp: the tool's exactly, or within nvJPEG's tolerance for files its
// --json says the GPU decoded; a peer's within its PeerBound for PNG), and the tool's
// own --json is read back: its conversion window, start-up, bound stage and decoders.

#include "gray/gray_check.hpp"
#include "gray/gray_inputs.hpp"
#include "harness/result.hpp"

#include "streampipe/tools/gray/decode.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace streampipe::bench::gray_bench {

struct RowPlan {
  std::string name;               // "streampipe gray", "Pillow Pool(16)"
  bool peer = false;              // false: the tool, whose --json is read back
  std::string library;            // a peer's: "Pillow", "OpenCV", "nvImageCodec"
  PeerBound bound;                // a peer's PNG outputs against the reference
  std::string bound_why;          // why its bound is what it is
  std::vector<std::string> argv;  // the whole command; the tool's ends with --json <json>
  std::filesystem::path out_dir;  // where it writes the images (removed before each run)
  std::filesystem::path json;     // the tool's --json (removed before each run)
  std::filesystem::path log;      // its standard output and error
  double limit_s = 0;             // killed after this many seconds, and the row fails (0: no limit)
};

class CommandRow {
 public:
  CommandRow(RowPlan plan, const Inputs& inputs, io::ImageFormat format, int warmup, int check_threads);

  void poison() const;
  // Runs the command once; returns files / wall seconds.
  double run();
  // Checks the run just made; false (and the first failure kept) when anything was wrong.
  bool verify();

  [[nodiscard]] const RowPlan& plan() const noexcept { return plan_; }
  // The harness row: images/s per timed run and every figure read back (fields).
  [[nodiscard]] Row row(const std::vector<double>& rates, bool verified) const;

 private:
  [[nodiscard]] std::string check_tool_run(bool timed);
  [[nodiscard]] std::string check_outputs(const std::vector<bool>& gpu_decoded);

  RowPlan plan_;
  const Inputs& inputs_;
  io::ImageFormat format_;
  int warmup_, check_threads_;
  int round_ = 0;           // runs made, warm-up first
  double last_wall_ms_ = 0;
  int last_exit_ = 0;
  std::string last_status_;
  std::string failure_;
  std::vector<double> wall_ms_, tool_conversion_ms_, tool_command_ms_, startup_ms_, outside_ms_;
  tools::gray::LevelDifference diff_;  // GPU-decoded files (tool) or every pixel (peer), PNG
  nlohmann::json last_run_ = nlohmann::json::object();  // the tool's last --json, less the per-file list
  nlohmann::json decoders_ = nlohmann::json::object();  // files per decoder in the last run
};

}  // namespace streampipe::bench::gray_bench
