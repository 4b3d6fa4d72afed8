// SPDX-License-Identifier: Apache-2.0
#include "streampipe/tools/life/pattern.hpp"

#include "streampipe/host/read_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <span>
#include <string_view>
#include <system_error>
#include <vector>

namespace streampipe::tools::life {
namespace {

[[noreturn]] void fail(std::string_view source, std::size_t line, const std::string& what) {
  throw PatternError(fmt::format("{}:{}: {}", source, line, what));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Editors on Windows save UTF-8 with a byte-order mark; it is not part of the first line.
std::string_view without_bom(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  return text;
}

void check_cells(std::uint64_t width, std::uint64_t height, const PatternLimits& limits, std::string_view source,
                 std::size_t line) {
  if (limits.max_cells == 0 || width * height <= limits.max_cells) return;
  fail(source, line, fmt::format("a {}x{} pattern ({} cells) exceeds the limit of {} cells; {} to read it", width,
                                 height, width * height, limits.max_cells, limits.raise_hint));
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find('\n', start);
    std::string_view line = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return lines;
}

// "B3/S23" in any of its spellings: case, spaces, S/B order, or the old "23/3".
bool is_conway_rule(std::string_view rule) {
  std::string r;
  for (char c : rule)
    if (!std::isspace(static_cast<unsigned char>(c))) r += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r == "B3/S23" || r == "S23/B3" || r == "23/3";
}

std::uint32_t parse_dimension(std::string_view value, std::string_view key, std::string_view source,
                              std::size_t line) {
  const std::string v(trim(value));
  if (v.empty() || !std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    fail(source, line, fmt::format("'{}' must be a positive integer, not '{}'", key, v));
  const unsigned long long n = std::stoull(v.size() > 10 ? std::string("99999999999") : v);
  if (n == 0 || n > (1u << 20)) fail(source, line, fmt::format("'{}' = {} is out of range (1 to 1048576)", key, v));
  return static_cast<std::uint32_t>(n);
}

}  // namespace

Pattern parse_rle(std::string_view text, std::string_view source, const PatternLimits& limits) {
  Pattern p;
  const auto lines = split_lines(without_bom(text));
  std::size_t i = 0;
  std::uint32_t width = 0, height = 0;
  bool header = false;
  for (; i < lines.size(); ++i) {
    const std::string_view line = trim(lines[i]);
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line.size() > 1 && line[1] == 'N') p.name = std::string(trim(line.substr(2)));
      if (line.size() > 1 && line[1] == 'r' && !is_conway_rule(trim(line.substr(2))))
        fail(source, i + 1, fmt::format("unsupported rule '{}' (only B3/S23, Conway's Life)", trim(line.substr(2))));
      continue;
    }
    if (line[0] != 'x') fail(source, i + 1, "expected the RLE header 'x = W, y = H[, rule = B3/S23]'");
    std::string_view rest = line;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      const std::size_t eq = item.find('=');
      if (eq == std::string_view::npos) fail(source, i + 1, fmt::format("malformed header item '{}'", trim(item)));
      const std::string_view key = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
      if (key == "x") {
        width = parse_dimension(value, key, source, i + 1);
      } else if (key == "y") {
        height = parse_dimension(value, key, source, i + 1);
      } else if (key == "rule") {
        if (!is_conway_rule(value))
          fail(source, i + 1, fmt::format("unsupported rule '{}' (only B3/S23, Conway's Life)", value));
      } else {
        fail(source, i + 1, fmt::format("unknown header key '{}'", key));
      }
    }
    if (width == 0 || height == 0) fail(source, i + 1, "the header needs both x and y");
    header = true;
    ++i;
    break;
  }
  if (!header) fail(source, lines.size(), "no RLE header line ('x = W, y = H') found");
  check_cells(width, height, limits, source, i);
  p.cells = Board::empty(width, height);

  std::uint64_t x = 0, y = 0, count = 0;
  bool have_count = false, ended = false;
  for (; i < lines.size() && !ended; ++i) {
    for (const char c : lines[i]) {
      if (std::isdigit(static_cast<unsigned char>(c))) {
        count = count * 10 + static_cast<std::uint64_t>(c - '0');
        if (count > (std::uint64_t{1} << 32)) fail(source, i + 1, "run count too large");
        have_count = true;
        continue;
      }
      if (std::isspace(static_cast<unsigned char>(c))) continue;
      const std::uint64_t n = have_count ? count : 1;
      if (have_count && n == 0) fail(source, i + 1, "a run count of 0");
      count = 0;
      have_count = false;
      if (c == 'b' || c == '.') {
        x += n;
      } else if (c == 'o') {
        if (x + n > width || y >= height)
          fail(source, i + 1, fmt::format("live cells at ({}, {}) lie outside the declared {}x{}",
                                          x + n - 1, y, width, height));
        for (std::uint64_t k = 0; k < n; ++k) p.cells.set(static_cast<std::uint32_t>(x + k), static_cast<std::uint32_t>(y), true);
        x += n;
      } else if (c == '$') {
        y += n;
        x = 0;
      } else if (c == '!') {
        ended = true;
        break;
      } else {
        fail(source, i + 1, fmt::format("unexpected character '{}' (Life RLE uses b, o, $ and !)", c));
      }
      if (x > width) fail(source, i + 1, fmt::format("row {} is longer than the declared width {}", y, width));
    }
  }
  if (!ended) fail(source, lines.size(), "the pattern ends without '!' (truncated file?)");
  return p;
}

Pattern parse_plaintext(std::string_view text, std::string_view source, const PatternLimits& limits) {
  Pattern p;
  std::vector<std::string_view> rows;
  std::vector<std::size_t> row_lines;
  const auto lines = split_lines(without_bom(text));
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (!line.empty() && line[0] == '!') {
      if (line.substr(0, 6) == "!Name:") p.name = std::string(trim(line.substr(6)));
      continue;
    }
    std::string_view row = line;
    while (!row.empty() && std::isspace(static_cast<unsigned char>(row.back()))) row.remove_suffix(1);
    for (std::size_t x = 0; x < row.size(); ++x)
      if (row[x] != '.' && row[x] != 'O' && row[x] != '*')
        fail(source, i + 1, fmt::format("unexpected character '{}' in column {} (plaintext uses '.' and 'O')",
                                        row[x], x + 1));
    rows.push_back(row);
    row_lines.push_back(i + 1);
  }
  while (!rows.empty() && rows.back().empty()) rows.pop_back();
  std::size_t width = 0;
  for (const auto r : rows) width = std::max(width, r.size());
  if (rows.empty() || width == 0) fail(source, lines.size(), "the pattern has no cells");
  if (width > (1u << 20) || rows.size() > (1u << 20)) fail(source, lines.size(), "the pattern is too large");
  check_cells(width, rows.size(), limits, source, lines.size());
  p.cells = Board::empty(static_cast<std::uint32_t>(width), static_cast<std::uint32_t>(rows.size()));
  for (std::size_t y = 0; y < rows.size(); ++y)
    for (std::size_t x = 0; x < rows[y].size(); ++x)
      if (rows[y][x] != '.') p.cells.set(static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y), true);
  return p;
}

Pattern load_pattern(const std::filesystem::path& path, const PatternLimits& limits) {
  const std::string name = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw PatternError(fmt::format("{}: is a directory, not a pattern file", name));
  // A regular file only (a FIFO would block, /dev/zero never end), its size checked before
  // it is read: no pattern within the cell limit is larger than this.
  const std::uint64_t cap = limits.max_cells == 0 ? std::uint64_t{0} : 2 * limits.max_cells + (std::uint64_t{1} << 20);
  std::string text;
  try {
    const auto bytes = host::read_regular_file(path, [&](std::span<const std::byte>, std::uint64_t size) {
      if (cap != 0 && size > cap)
        throw PatternError(fmt::format("{}: larger than {} bytes, more than any pattern within the limit of {} "
                                       "cells; {} to read it",
                                       name, cap, limits.max_cells, limits.raise_hint));
    });
    text.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  } catch (const host::ReadFileError& e) {
    constexpr std::string_view open_failed = "cannot open: ";
    const std::string& why = e.reason();
    throw PatternError(why.rfind(open_failed, 0) == 0
                           ? fmt::format("{}: cannot open the pattern file: {}", name, why.substr(open_failed.size()))
                           : fmt::format("{}: {}", name, why));
  }
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".rle") return parse_rle(text, name, limits);
  if (ext == ".cells") return parse_plaintext(text, name, limits);
  for (const auto line : split_lines(without_bom(text))) {
    const auto t = trim(line);
    if (t.empty() || t[0] == '#' || t[0] == '!') continue;
    if (t[0] == 'x' && t.find('=') != std::string_view::npos) return parse_rle(text, name, limits);
    break;
  }
  return parse_plaintext(text, name, limits);
}

void place(Board& board, const Pattern& pattern, std::uint32_t x, std::uint32_t y) {
  const Board& c = pattern.cells;
  if (c.width > board.width || c.height > board.height)
    throw std::invalid_argument(fmt::format("the pattern{} ({}x{}) does not fit on the {}x{} board",
                                            pattern.name.empty() ? "" : " '" + pattern.name + "'", c.width,
                                            c.height, board.width, board.height));
  if (x >= board.width || y >= board.height)
    throw std::invalid_argument(fmt::format("offset {},{} lies outside the {}x{} board", x, y, board.width, board.height));
  for (std::uint32_t py = 0; py < c.height; ++py)
    for (std::uint32_t px = 0; px < c.width; ++px)
      if (c.at(px, py) != 0)
        board.set(static_cast<std::uint32_t>((std::uint64_t{x} + px) % board.width),
                  static_cast<std::uint32_t>((std::uint64_t{y} + py) % board.height), true);
}

}  // namespace streampipe::tools::life
