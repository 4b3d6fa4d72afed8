// SPDX-License-Identifier: Apache-2.0
#pragma once
// Life pattern files: RLE (.rle, the format of LifeWiki and Golly: header
// "x = W, y = H, rule = B3/S23", runs of b/o/$, ending with !) and plaintext (.cells:
// '!' comment lines, '.' dead, 'O' alive). Only rule B3/S23 is accepted; any other rule
// is refused with its name. Errors throw PatternError naming the source and line.

#include "streampipe/tools/life.hpp"

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace streampipe::tools::life {

class PatternError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Pattern {
  std::string name;  // from "#N" (RLE) or "!Name:" (plaintext), else empty
  Board cells;       // the bounding box
};

[[nodiscard]] Pattern parse_rle(std::string_view text, std::string_view source = "<rle>");
[[nodiscard]] Pattern parse_plaintext(std::string_view text, std::string_view source = "<cells>");
// .rle or .cells by extension; any other name is recognised by content (an RLE header line).
[[nodiscard]] Pattern load_pattern(const std::filesystem::path& path);

// Sets the pattern's live cells on `board` with its top-left corner at (x, y), wrapping
// around the edges. Throws std::invalid_argument if the pattern is larger than the board
// or the offset lies outside it.
void place(Board& board, const Pattern& pattern, std::uint32_t x, std::uint32_t y);

}  // namespace streampipe::tools::life
