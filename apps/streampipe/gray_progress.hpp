// SPDX-License-Identifier: Apache-2.0
#pragma once
// gray's progress on stderr while it converts: one line redrawn at most every 100 ms and at
// the end (when enabled: a terminal, not --quiet, not under mpirun), and every failed file
// named with its reason as it finishes, whether enabled or not.

#include "streampipe/tools/gray/convert.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <unordered_set>
#include <vector>

namespace streampipe::cli {

class ProgressBar {
 public:
  // `rank`: " (rank N)" under mpirun, for the failures' lines.
  ProgressBar(std::size_t total, bool enabled, std::string rank);
  // A file finished (gray::Options::on_file), `finished` of the total so far.
  void file_done(const tools::gray::FileResult& f, std::size_t finished);
  // After the run: the files that failed once every one had finished (their outputs could
  // not be flushed to disk), which no file_done() named. The summary counts every failure
  // as "named on stderr above": each is.
  void name_late_failures(const std::vector<tools::gray::FileResult>& files);

 private:
  void say_failed(const tools::gray::FileResult& f);

  std::size_t total_;
  bool enabled_;
  std::string rank_;
  std::size_t failed_ = 0;
  std::chrono::steady_clock::time_point last_{};
  std::unordered_set<std::string> named_;  // inputs whose failure was printed
};

}  // namespace streampipe::cli
