// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the Life pattern parsers (RLE and plaintext .cells). Any text must parse to a
// pattern within the limits, every cell 0 or 1, or throw PatternError; placing a pattern on
// a board of its own size at the origin gives back its cells.

#include "streampipe/tools/life/pattern.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

using namespace streampipe::tools::life;

void check(bool ok) {
  if (!ok) std::abort();  // libFuzzer reports the input
}

template <typename Parse>
void parse_one(Parse parse, std::string_view text, const PatternLimits& limits) {
  Pattern pattern;
  try {
    pattern = parse(text, "fuzz", limits);
  } catch (const PatternError&) {
    return;
  }
  const Board& cells = pattern.cells;
  check(cells.width > 0 && cells.height > 0 && cells.cells.size() == cells.size());
  check(cells.size() <= limits.max_cells);
  for (const auto c : cells.cells) check(c == 0 || c == 1);
  Board board = Board::empty(cells.width, cells.height);
  place(board, pattern, 0, 0);
  check(board == cells);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  PatternLimits limits;
  limits.max_cells = std::uint64_t{1} << 20;  // 1 MiB boards: fast under the sanitizers
  parse_one([](auto t, auto s, const auto& l) { return parse_rle(t, s, l); }, text, limits);
  parse_one([](auto t, auto s, const auto& l) { return parse_plaintext(t, s, l); }, text, limits);
  return 0;
}
