// SPDX-License-Identifier: Apache-2.0
// Pattern files: RLE and plaintext parsing, rule checks, errors with line numbers, placing;
// sizes held to PatternLimits before anything is allocated; byte-order marks.

#include "life_boards.hpp"
#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/pattern.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace streampipe::tools::life {
namespace {

using test_support::board_from;

void expect_error(auto&& parse, const std::string& fragment) {
  try {
    (void)parse();
    ADD_FAILURE() << "no error; expected one mentioning '" << fragment << "'";
  } catch (const PatternError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(LifePattern, RleGliderWithHeaderAndComments) {
  const Pattern p = parse_rle("#N Glider\n#C a comment\nx = 3, y = 3, rule = B3/S23\nbob$2bo$3o!\n");
  EXPECT_EQ(p.name, "Glider");
  EXPECT_EQ(p.cells, board_from(3, 3, {{1, 0}, {2, 1}, {0, 2}, {1, 2}, {2, 2}}));
}

TEST(LifePattern, RleRunsAcrossLinesBlankRowsAndNoRule) {
  // Gosper-style multi-line body, a "2$" that skips a row, CRLF line ends.
  const Pattern p = parse_rle("x=5,y=4\r\n2o3b$\r\n5o2$\r\nb\r\n3o!\r\n");
  EXPECT_EQ(p.cells, board_from(5, 4, {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {1, 3}, {2, 3}, {3, 3}}));
  EXPECT_NO_THROW((void)parse_rle("x = 1, y = 1, rule = b3/s23\no!"));
  EXPECT_NO_THROW((void)parse_rle("x = 1, y = 1, rule = 23/3\no!"));
}

TEST(LifePattern, RleErrorsNameTheLine) {
  expect_error([] { return parse_rle("x = 3, y = 3, rule = B36/S23\nbo!", "hl.rle"); }, "hl.rle:1: unsupported rule 'B36/S23'");
  expect_error([] { return parse_rle("#C only comments\n", "a.rle"); }, "no RLE header");
  expect_error([] { return parse_rle("x = 2, y = 2\nbo$3o!", "w.rle"); }, "w.rle:2");
  expect_error([] { return parse_rle("x = 2, y = 1\nbo$o!", "h.rle"); }, "outside the declared 2x1");
  expect_error([] { return parse_rle("x = 2, y = 2\nbx!", "c.rle"); }, "unexpected character 'x'");
  expect_error([] { return parse_rle("x = 2, y = 2\n2o$", "t.rle"); }, "without '!'");
  expect_error([] { return parse_rle("x = 0, y = 2\n!", "z.rle"); }, "out of range");
  expect_error([] { return parse_rle("x = q, y = 2\n!", "q.rle"); }, "positive integer");
  expect_error([] { return parse_rle("#r 34/34\nx = 1, y = 1\no!", "r.rle"); }, "unsupported rule");
}

TEST(LifePattern, Plaintext) {
  const Pattern p = parse_plaintext("!Name: Glider\n!\n.O\n..O\nOOO\n\n");
  EXPECT_EQ(p.name, "Glider");
  EXPECT_EQ(p.cells, board_from(3, 3, {{1, 0}, {2, 1}, {0, 2}, {1, 2}, {2, 2}}));
  // An empty line inside the pattern is a dead row.
  EXPECT_EQ(parse_plaintext("O\n\nO\n").cells, board_from(1, 3, {{0, 0}, {0, 2}}));
  expect_error([] { return parse_plaintext("!c\n.O\n.X\n", "x.cells"); }, "x.cells:3: unexpected character 'X' in column 2");
  expect_error([] { return parse_plaintext("!nothing\n", "e.cells"); }, "no cells");
}

TEST(LifePattern, PlaceWithOffsetWrapsAroundTheBoard) {
  const Pattern glider = parse_rle("x = 3, y = 3\nbob$2bo$3o!");
  Board b = Board::empty(6, 5);
  place(b, glider, 4, 3);
  EXPECT_EQ(b, board_from(6, 5, {{5, 3}, {0, 4}, {4, 0}, {5, 0}, {0, 0}}));
  Board small = Board::empty(2, 2);
  EXPECT_THROW(place(small, glider, 0, 0), std::invalid_argument);
  EXPECT_THROW(place(b, glider, 6, 0), std::invalid_argument);
}

TEST(LifePattern, LoadByExtensionOrContent) {
  const auto dir = std::filesystem::temp_directory_path() / "streampipe_life_patterns";
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "g.rle") << "x = 3, y = 3\nbob$2bo$3o!\n";
    std::ofstream(dir / "g.cells") << "!Name: g\n.O\n..O\nOOO\n";
    std::ofstream(dir / "g.txt") << "#C sniffed\nx = 3, y = 3\nbob$2bo$3o!\n";
  }
  const Board want = board_from(3, 3, {{1, 0}, {2, 1}, {0, 2}, {1, 2}, {2, 2}});
  EXPECT_EQ(load_pattern(dir / "g.rle").cells, want);
  EXPECT_EQ(load_pattern(dir / "g.cells").cells, want);
  EXPECT_EQ(load_pattern(dir / "g.txt").cells, want);
  expect_error([&] { return load_pattern(dir / "missing.rle"); }, "missing.rle: cannot open the pattern file: No such file");
  expect_error([&] { return load_pattern(dir); }, "is a directory");
  // A FIFO would block until a writer came, a device never end: refused by kind, unread
  // (issue 36, class 12).
  ASSERT_EQ(::mkfifo((dir / "pipe.rle").c_str(), 0600), 0);
  expect_error([&] { return load_pattern(dir / "pipe.rle"); }, "pipe.rle: is a FIFO, not a regular file");
  expect_error([&] { return load_pattern("/dev/zero"); }, "/dev/zero: is a character device");
  std::filesystem::remove_all(dir);
}

// ---- limits and encodings (issue 24) ----------------------------------------------------

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

TEST(LifePatternLimits, AHugeRleHeaderIsRefusedBeforeAllocating) {
  // 27 bytes that used to cost 16-64 GiB (a byte per declared cell, allocated before the
  // body was read).
  const double before = peak_rss_mib();
  for (const char* text : {"x = 1048576, y = 16384\n!\n", "x = 1048576, y = 65536\n!\n",
                           "x = 1048576, y = 1048576\n!\n"}) {
    expect_error([&] { return parse_rle(text, "huge.rle"); }, "huge.rle:1: a 1048576x");
    expect_error([&] { return parse_rle(text, "huge.rle"); }, "exceeds the limit of 268435456 cells");
    expect_error([&] { return parse_rle(text, "huge.rle"); }, "raise PatternLimits::max_cells");
  }
  EXPECT_EQ(std::string("x = 1048576, y = 1048576\n!\n").size(), 27u);
  EXPECT_LT(peak_rss_mib() - before, 48.0);
}

TEST(LifePatternLimits, TheCellLimitIsConfigurable) {
  PatternLimits limits;
  limits.max_cells = 100;
  limits.raise_hint = "use --max-cells";
  EXPECT_EQ(parse_rle("x = 10, y = 10\n10o!", "ok.rle", limits).cells.population(), 10u);
  expect_error([&] { return parse_rle("x = 11, y = 10\n!", "big.rle", limits); },
               "big.rle:1: a 11x10 pattern (110 cells) exceeds the limit of 100 cells; use --max-cells to read it");
  expect_error([&] { return parse_plaintext(std::string(101, 'O'), "wide.cells", limits); }, "exceeds the limit");
  limits.max_cells = 0;  // no limit
  EXPECT_EQ(parse_rle("x = 11, y = 10\n!", "big.rle", limits).cells.width, 11u);
}

TEST(LifePatternLimits, APlaintextOfManyLinesIsRefusedBeforeAllocating) {
  // 40 KB of text whose bounding box is 20000 x 20000 (400 million cells).
  std::string text(20000, 'O');
  text += std::string(20000, '\n');
  text += "O\n";
  const double before = peak_rss_mib();
  expect_error([&] { return parse_plaintext(text, "tall.cells"); }, "a 20000x20001 pattern");
  EXPECT_LT(peak_rss_mib() - before, 48.0);
}

TEST(LifePatternLimits, AFileLargerThanAnyPatternWithinTheLimitIsNotReadWhole) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("streampipe_life_limits_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  PatternLimits limits;
  limits.max_cells = 1000;
  {
    std::ofstream out(dir / "long.rle");
    out << "x = 10, y = 10\n";
    for (int i = 0; i < 40000; ++i) out << "#C a comment line that goes on\n";
    out << "!\n";
  }
  expect_error([&] { return load_pattern(dir / "long.rle", limits); }, "long.rle: larger than 1050576 bytes");
  // A device is refused by its kind before anything is read (it used to be read up to the cap).
  if (std::filesystem::exists("/dev/zero"))
    expect_error([&] { return load_pattern("/dev/zero", limits); }, "/dev/zero: is a character device");
  std::filesystem::remove_all(dir);
}

TEST(LifePatternEncoding, AUtf8ByteOrderMarkIsAccepted) {
  const Board glider = board_from(3, 3, {{1, 0}, {2, 1}, {0, 2}, {1, 2}, {2, 2}});
  EXPECT_EQ(parse_rle("\xEF\xBB\xBFx = 3, y = 3\nbob$2bo$3o!\n").cells, glider);
  EXPECT_EQ(parse_rle("\xEF\xBB\xBF#N Glider\nx = 3, y = 3\nbob$2bo$3o!\n").name, "Glider");
  EXPECT_EQ(parse_plaintext("\xEF\xBB\xBF!Name: g\n.O\n..O\nOOO\n").cells, glider);
  EXPECT_EQ(parse_plaintext("\xEF\xBB\xBF.O\n..O\nOOO\n").cells, glider);
  const auto dir = std::filesystem::temp_directory_path() /
                   ("streampipe_life_bom_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "glider") << "\xEF\xBB\xBFx = 3, y = 3\nbob$2bo$3o!\n";  // recognised by content
  std::ofstream(dir / "glider.rle") << "\xEF\xBB\xBF#C made on Windows\r\nx = 3, y = 3\r\nbob$2bo$3o!\r\n";
  EXPECT_EQ(load_pattern(dir / "glider").cells, glider);
  EXPECT_EQ(load_pattern(dir / "glider.rle").cells, glider);
  // Only a leading mark is skipped; one inside the body is still an error.
  expect_error([] { return parse_rle("x = 1, y = 1\n\xEF\xBB\xBFo!", "mid.rle"); }, "mid.rle:2: unexpected character");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace streampipe::tools::life
