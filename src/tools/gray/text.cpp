// SPDX-License-Identifier: Apache-2.0
// What `streampipe gray` prints (see tools/gray/text.hpp).

#include "streampipe/tools/gray/text.hpp"

#include "streampipe/tools/gray/report.hpp"

#include "streampipe/cuda/device.hpp"

#include <fmt/format.h>

namespace streampipe::tools::gray {
namespace {

// Where the files were converted, and, when a GPU could have taken part and none did, why
// (the first GPU's state and the gist of its reason, the GPUs' if the set holds none, or no
// driver; -v gives the figures): a reader would otherwise wonder why not the GPU.
std::string where(const RunSummary& s, const RunText& run) {
  const std::string on = s.device == "host" ? "the CPU" : s.device;
  if (!run.gpu_wanted || s.backend != "host") return on;
  const auto gist = [](const std::string& reason) { return reason.substr(0, reason.find(':')); };
  for (const auto& m : s.devices) {
    const auto& d = m.device;
    if (d.device == pipeline::kCpuDevice) continue;
    if (d.state == pipeline::DeviceReport::State::starting)
      return fmt::format("{} ({} was still starting when the run ended)", on, d.name);
    if (!d.reason.empty())
      return fmt::format("{} ({} {}: {})", on, d.name, pipeline::device_state_name(d.state), gist(d.reason));
  }
  if (!s.gpus_left_out.empty()) return fmt::format("{} (no GPU started: {})", on, gist(s.gpus_left_out));
  if (!Device::driver_installed()) return on + " (no NVIDIA driver found)";
  return on;
}

}  // namespace

std::string summary_line(const RunSummary& s, const CommandTime& t, const RunText& run) {
  const double wall_ms = t.command_wall_ms();
  std::string line =
      fmt::format("gray: {} file(s): {} ok, {} failed in {:.2f} s, {:.1f} images/s on {}", run.files, s.ok, s.failed,
                  wall_ms / 1e3, wall_ms > 0 ? static_cast<double>(s.ok) * 1e3 / wall_ms : 0.0, where(s, run));
  if (s.failed > 0) line += " (failures named on stderr above)";
  if (run.unreadable > 0)
    line += fmt::format("; {} folder(s) or file(s) could not be read (named on stderr above)", run.unreadable);
  return line + "\n";
}

std::string full_report(const RunSummary& s, const CommandTime& t, const RunText& run) {
  std::string text = summary_line(s, t, run);
  const auto add = [&text](const std::string& line) { text += "  " + line + "\n"; };
  add(fmt::format("{:.1f} MB in, {:.1f} MB out, {:.1f} Mpixel", static_cast<double>(s.bytes_in) / 1e6,
                  static_cast<double>(s.bytes_out) / 1e6, static_cast<double>(s.pixels) / 1e6));
  add(command_line(s, t));
  add(fmt::format("converting {:.2f} s (first file taken to last written): {:.1f} images/s, {:.1f} Mpixel/s on {}",
                  s.wall_ms / 1e3, s.images_per_s(),
                  s.wall_ms > 0 ? static_cast<double>(s.pixels) / 1e3 / s.wall_ms : 0.0, s.engine));
  if (const std::string bound = bound_line(s); !bound.empty()) add(bound);
  for (const auto& line : device_lines(s)) add(line);
  if (s.gpu_decoded > 0) {
    std::string why;
    std::size_t on_cpu = 0;
    for (const auto& [reason, count] : s.fallbacks) {
      why += fmt::format("{}{} {}", why.empty() ? "" : ", ", count, reason);
      on_cpu += count;
    }
    add(fmt::format("decode: {} file(s) by nvJPEG on the GPU, {} given to the CPU decoder{}; {}, {} files per item",
                    s.gpu_decoded, on_cpu, why.empty() ? "" : fmt::format(" ({})", why), s.codecs, s.group));
  }
  if (!s.decoded_to.empty()) {
    const auto count = [&s](const char* to) {
      const auto at = s.decoded_to.find(to);
      return at == s.decoded_to.end() ? std::size_t{0} : at->second;
    };
    add(fmt::format("decoded to: {} file(s) luma (a JPEG's Y plane alone, or a gray image), {} RGB (the luma "
                    "computed from it)",
                    count("luma"), count("rgb")));
  }
  if (s.encode != "cpu")
    add(fmt::format("encode: {} outputs by {} on the GPU ({})", s.encoder == "nvJPEG" ? "JPEG" : "PNG", s.encoder,
                    s.encode));
  return text + time_table(s);
}

}  // namespace streampipe::tools::gray
