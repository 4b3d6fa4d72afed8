// SPDX-License-Identifier: Apache-2.0
#pragma once
// life's frames: the PNGs under -o DIR (life-u<universe>-g<generation>.png: which names a run
// writes, the check of the folder before any work, the writing of one frame), and --live's
// frame on the terminal.

#include "outputs.hpp"

#include "streampipe/tools/life/board.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace streampipe::cli {

struct FrameSeries {
  std::string dir;
  int universes = 1;
  std::uint64_t generations = 0;
  std::uint64_t every = 0;  // a frame every so many generations (--snapshot-every), generation 0 included
  unsigned scale = 1;
  bool force = false;
};

// The frames under the folder, checked with one pass however many the run writes: an
// existing one is refused without --force (UsageError), and through `out` (links, special
// files, inputs) with it; no FILE option of `files` (option, path) may name one, or the
// frame would replace it.
void claim_frames(const FrameSeries& frames, Outputs& out,
                  const std::vector<std::pair<const char*, std::string>>& files);

// Writes universe `index`'s board at `generation` (atomically; replaces one only with --force).
void write_snapshot(const FrameSeries& frames, std::size_t index, std::uint64_t generation,
                    const tools::life::Board& board);

// Draws `board` (cropped to the terminal) with its generation and population, then waits a
// frame's time at `fps` frames per second.
void draw_live(std::uint64_t generation, const tools::life::Board& board, std::uint64_t population, double fps);

}  // namespace streampipe::cli
