// SPDX-License-Identifier: Apache-2.0
// The peers of `bench gray` (see gray_peers.hpp).

#include "gray/gray_peers.hpp"

#include "harness/command.hpp"

#include "streampipe/cuda/device.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace streampipe::bench::gray_bench {

namespace fs = std::filesystem;

const std::vector<Peer>& peers() {
  // The bounds: the reference is the tool's own decoding, a JPEG's Y plane alone. Pillow
  // takes the luma of the RGB decode, which departs from Y where saturated colours clip
  // (docs/gray.md gives what was measured on the real-photo set), rounds its own 16-bit
  // fixed-point luma and reads 16-bit PNGs by their high byte (truncating: up to half the
  // pixels of such a file a level low). OpenCV and nvImageCodec decode a JPEG's luma only, as
  // the reference does, with their own IDCT (nvImageCodec's nvJPEG); libpng's truncating
  // colour-to-gray makes OpenCV's PNGs half a level low on average.
  static const std::vector<Peer> all{
      {"pillow", "Pillow", "pillow_gray.py", "import PIL", false, {32, 1.0},
       "convert('L') takes the luma of the RGB decode, which misses a JPEG's Y plane where saturated colours "
       "clip, rounds its own 16-bit fixed-point luma and reads 16-bit PNGs by their high byte"},
      {"opencv", "OpenCV", "opencv_gray.py", "import cv2", false, {32, 1.0},
       "IMREAD_GRAYSCALE decodes a JPEG's Y plane, as the reference does, with its own libjpeg-turbo build, and "
       "turns PNGs gray with libpng's truncating weights"},
      {"nvimagecodec", "nvImageCodec", "nvimagecodec_gray.py", "from nvidia import nvimgcodec", true, {32, 1.0},
       "ColorSpec.GRAY decodes a JPEG's Y plane on the GPU with nvJPEG's IDCT; PNGs go through its OpenCV decoder"},
  };
  return all;
}

const Peer& find_peer(const std::string& key) {
  std::string known;
  for (const auto& p : peers()) {
    if (p.key == key) return p;
    known += (known.empty() ? "" : ", ") + p.key;
  }
  throw std::invalid_argument(fmt::format("'{}' is no peer of bench gray ({})", key, known));
}

std::optional<std::string> peer_missing(const Peer& peer, const std::string& python, const fs::path& dir,
                                        bool have_gpu, const fs::path& scratch) {
  const fs::path script = dir / peer.script;
  if (!fs::is_regular_file(script)) return fmt::format("the peer script {} is not there (--peer-dir DIR)", script.string());
  if (peer.on_gpu && !have_gpu)
    return fmt::format("it runs on a GPU and there is none here ({})", Device::unavailable_reason().value_or("?"));
  const fs::path log = scratch / (peer.key + "-check.log");
  try {
    const CommandRun r = run_command({python, "-c", peer.import}, log, 60);
    if (r.ok()) return std::nullopt;
    std::string tail = log_tail(log, 300);
    while (!tail.empty() && tail.back() == '\n') tail.pop_back();
    return fmt::format("{} -c '{}': {} ({})", python, peer.import, r.describe(), tail.substr(tail.rfind('\n') + 1));
  } catch (const std::exception& e) {
    return e.what();
  }
}

RowPlan peer_row(const Peer& peer, const PeerCommand& c) {
  const std::string f(io::to_string(c.format));
  RowPlan p;
  p.name = peer.on_gpu ? fmt::format("{} on the GPU", peer.library)
                       : fmt::format("{} Pool({})", peer.library, c.processes);
  p.peer = true;
  p.library = peer.library;
  p.bound = peer.bound;
  p.bound_why = peer.bound_why;
  p.out_dir = c.scratch / fmt::format("out-{}-{}", f, peer.key);
  p.log = c.scratch / fmt::format("log-{}-{}.txt", f, peer.key);
  p.limit_s = c.limit_s;
  p.argv = {c.python, (c.dir / peer.script).string(), c.in_dir.string(), p.out_dir.string(), "--format", f};
  if (c.format == io::ImageFormat::png)
    p.argv.insert(p.argv.end(), {"--compression", std::to_string(c.compression)});
  else
    p.argv.insert(p.argv.end(), {"--quality", std::to_string(c.quality)});
  p.argv.insert(p.argv.end(), {"--processes", std::to_string(c.processes)});
  return p;
}

}  // namespace streampipe::bench::gray_bench
