// SPDX-License-Identifier: Apache-2.0
#pragma once
// Plain-text tables for terminal reports: columns sized to their widest cell, numbers
// right-aligned, an optional title. Every tool prints its results through this.

#include <iosfwd>
#include <string>
#include <vector>

namespace streampipe::report {

enum class Align { left, right };

class Table {
 public:
  explicit Table(std::vector<std::string> headers, std::vector<Align> align = {});
  void add_row(std::vector<std::string> cells);  // throws std::invalid_argument on width mismatch
  [[nodiscard]] std::string str(const std::string& title = {}) const;
  [[nodiscard]] std::size_t rows() const noexcept { return rows_.size(); }

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace streampipe::report
