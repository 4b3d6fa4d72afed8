// SPDX-License-Identifier: Apache-2.0
#include "streampipe/report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace streampipe::report {

Table::Table(std::vector<std::string> headers, std::vector<Align> align)
    : headers_(std::move(headers)), align_(std::move(align)) {
  if (align_.empty()) {
    align_.assign(headers_.size(), Align::right);
    if (!align_.empty()) align_[0] = Align::left;
  }
  if (align_.size() != headers_.size())
    throw std::invalid_argument("Table: one alignment per column");
}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() != headers_.size())
    throw std::invalid_argument(fmt::format("Table: row has {} cells, table has {} columns",
                                            cells.size(), headers_.size()));
  rows_.push_back(std::move(cells));
}

std::string Table::str(const std::string& title) const {
  std::vector<std::size_t> width(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) {
    width[c] = headers_[c].size();
    for (const auto& r : rows_) width[c] = std::max(width[c], r[c].size());
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c) out += "  ";
      out += align_[c] == Align::left ? fmt::format("{:<{}}", cells[c], width[c])
                                      : fmt::format("{:>{}}", cells[c], width[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out;
  if (!title.empty()) out += title + "\n";
  out += line(headers_);
  std::size_t total = 0;
  for (auto w : width) total += w;
  out += std::string(total + 2 * (width.empty() ? 0 : width.size() - 1), '-') + "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

}  // namespace streampipe::report
