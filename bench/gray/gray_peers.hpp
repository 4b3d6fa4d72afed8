// SPDX-License-Identifier: Apache-2.0
#pragma once
// The peers of `bench gray`: what a user writes to turn a folder of images gray without
// streampipe, each a whole command timed like the tool's rows. Each is a script in the peers'
// folder (bench/peers/) with one command line, IN OUT --format F (--compression L |
// --quality Q) --processes N:
//   pillow        Pillow, a process per core: open, convert('L'), save
//   opencv        OpenCV, a process per core: imread with IMREAD_GRAYSCALE, imwrite
//   nvimagecodec  nvImageCodec on the GPU: batches decoded to gray, encoded by nvImageCodec
// Each needs its Python package, and nvImageCodec a GPU; without them its row is skipped with
// the reason. Each takes its luma its own way, so its PNG outputs are held to the reference
// within a bound of its own.

#include "gray/gray_rows.hpp"

#include "streampipe/io/image.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace streampipe::bench::gray_bench {

struct Peer {
  std::string key;        // what --peers names: "pillow"
  std::string library;    // "Pillow": its row's name and the table's backend and decode
  std::string script;     // in the peers' folder: "pillow_gray.py"
  std::string import;     // the Python statement its interpreter must run: "import PIL"
  bool on_gpu = false;    // needs a GPU; false: a process pool over the cores
  PeerBound bound;
  std::string bound_why;  // what the note under the table says of the bound
};

// Every peer, in the order of their rows.
[[nodiscard]] const std::vector<Peer>& peers();

// The peer --peers calls `key`; throws std::invalid_argument naming the known ones.
[[nodiscard]] const Peer& find_peer(const std::string& key);

// Why `peer` cannot run here (its script missing, its import failing with `python`, or no
// GPU), or nullopt. The import's output goes to scratch/<key>-check.log.
[[nodiscard]] std::optional<std::string> peer_missing(const Peer& peer, const std::string& python,
                                                      const std::filesystem::path& dir, bool have_gpu,
                                                      const std::filesystem::path& scratch);

// How a peer's command is made: the interpreter, the peers' folder, the inputs, where its
// outputs and log go, and the settings it shares with the tool's rows.
struct PeerCommand {
  std::string python;
  std::filesystem::path dir, in_dir, scratch;
  io::ImageFormat format = io::ImageFormat::png;
  int quality = 90, compression = 1, processes = 1;
  double limit_s = 0;
};

// The row of `peer`: its whole command, outputs under scratch/out-<format>-<key>.
[[nodiscard]] RowPlan peer_row(const Peer& peer, const PeerCommand& command);

}  // namespace streampipe::bench::gray_bench
