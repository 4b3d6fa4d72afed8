// SPDX-License-Identifier: Apache-2.0
#pragma once
// Life pattern files: RLE (.rle, the format of LifeWiki and Golly: header
// "x = W, y = H, rule = B3/S23", runs of b/o/$, ending with !) and plaintext (.cells:
// '!' comment lines, '.' dead, 'O' alive), either with or without a UTF-8 byte-order mark.
// Only rule B3/S23 is accepted; any other rule is refused with its name. Errors throw
// PatternError naming the source and line. A pattern is held as a dense Board of its
// bounding box, so its size is checked against PatternLimits before anything is allocated:
// from the RLE header (a 27-byte file can declare 2^40 cells), from the plaintext's lines,
// and from the file's size before it is read.

#include "streampipe/tools/life/board.hpp"

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace streampipe::tools::life {

class PatternError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PatternLimits {
  // 2^28 cells (16384 x 16384, 256 MiB as a Board), as io::DecodeLimits for images; most
  // LifeWiki patterns are far smaller, the largest (e.g. Caterpillar, 1.4e9 cells) need
  // the limit raised.
  static constexpr std::uint64_t kDefaultMaxCells = std::uint64_t{1} << 28;
  std::uint64_t max_cells = kDefaultMaxCells;  // bounding-box cells; 0 means no limit
  // How a user raises the limit, quoted in refusals (a program sets its own option name).
  std::string raise_hint = "raise PatternLimits::max_cells";
};

struct Pattern {
  std::string name;  // from "#N" (RLE) or "!Name:" (plaintext), else empty
  Board cells;       // the bounding box
};

[[nodiscard]] Pattern parse_rle(std::string_view text, std::string_view source = "<rle>",
                                const PatternLimits& limits = {});
[[nodiscard]] Pattern parse_plaintext(std::string_view text, std::string_view source = "<cells>",
                                      const PatternLimits& limits = {});
// .rle or .cells by extension; any other name is recognised by content (an RLE header line).
// A file larger than any pattern within the limits could be (2 bytes a cell and 1 MiB of
// comments) is refused before it is read whole.
[[nodiscard]] Pattern load_pattern(const std::filesystem::path& path, const PatternLimits& limits = {});

// Sets the pattern's live cells on `board` with its top-left corner at (x, y), wrapping
// around the edges. Throws std::invalid_argument if the pattern is larger than the board
// or the offset lies outside it.
void place(Board& board, const Pattern& pattern, std::uint32_t x, std::uint32_t y);

}  // namespace streampipe::tools::life
