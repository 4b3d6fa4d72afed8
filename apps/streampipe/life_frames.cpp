// SPDX-License-Identifier: Apache-2.0
#include "life_frames.hpp"

#include "commands.hpp"

#include "streampipe/io/image.hpp"
#include "streampipe/tools/life/image.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sys/ioctl.h>
#include <thread>
#include <unistd.h>

namespace streampipe::cli {
namespace {

namespace fs = std::filesystem;

std::string frame_name(std::size_t universe, std::uint64_t generation) {
  return fmt::format("life-u{}-g{:06}.png", universe, generation);
}

// True when `name` is a frame this run writes.
bool frame_of_this_run(const FrameSeries& f, const std::string& name) {
  unsigned long long u = 0, g = 0;
  int used = 0;
  if (std::sscanf(name.c_str(), "life-u%llu-g%llu.png%n", &u, &g, &used) != 2 ||
      static_cast<std::size_t>(used) != name.size() || name != frame_name(u, g))
    return false;
  return u < static_cast<unsigned long long>(f.universes) && g <= f.generations && g % f.every == 0;
}

unsigned terminal_columns(unsigned& lines) {
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    lines = ws.ws_row > 2 ? ws.ws_row - 2u : 1u;
    return ws.ws_col;
  }
  lines = 24;
  return 80;
}

}  // namespace

void claim_frames(const FrameSeries& f, Outputs& out, const std::vector<std::pair<const char*, std::string>>& files) {
  Outputs::check_dir("-o", f.dir);
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(f.dir), ec);
  for (const auto& [option, path] : files) {
    if (path.empty() || path == "-") continue;
    const fs::path file = fs::weakly_canonical(fs::absolute(path), ec);
    if (file.parent_path() == dir && frame_of_this_run(f, file.filename().string()))
      throw UsageError(fmt::format("{} {}: is a frame this run writes under -o {}", option, path, f.dir));
  }
  if (!fs::is_directory(f.dir, ec)) return;
  for (const auto& entry : fs::directory_iterator(f.dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!frame_of_this_run(f, name)) continue;
    if (!f.force) throw UsageError(fmt::format("-o {}: {} exists (use --force to replace it)", f.dir, name));
    out.claim_regular("-o", entry.path().string());
  }
}

void write_snapshot(const FrameSeries& f, std::size_t index, std::uint64_t generation, const tools::life::Board& board) {
  io::write_image(fs::path(f.dir) / frame_name(index, generation), tools::life::render_image(board, f.scale),
                  io::ImageFormat::png, 90, f.force ? host::Overwrite::allow : host::Overwrite::refuse);
}

void draw_live(std::uint64_t generation, const tools::life::Board& board, std::uint64_t population, double fps) {
  unsigned lines = 0;
  const unsigned cols = terminal_columns(lines);
  fmt::print("\x1b[H\x1b[2J{}generation {} population {}\n", tools::life::render_text(board, cols, lines), generation,
             population);
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::duration<double>(1.0 / fps));
}

}  // namespace streampipe::cli
