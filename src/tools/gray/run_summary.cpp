// SPDX-License-Identifier: Apache-2.0
#include "run_summary.hpp"

#include "file_io.hpp"

#include "streampipe/cuda/device.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

namespace streampipe::tools::gray::detail {

void settle_file(FileResult& f, const pipeline::ItemResult& r) {
  f.cancelled = r.status == pipeline::ItemStatus::cancelled;
  f.device = r.device;
  // A file of a group may have failed alone (its error set) while the group went on.
  f.ok = r.ok() && f.error.empty();
  if (r.ok() || !f.error.empty()) return;
  std::string what = r.error;
  if (r.exception) {
    try {
      std::rethrow_exception(r.exception);
    } catch (...) {
      what = current_error(f.input);
    }
  }
  f.error = file_error(f.input, what);
}

namespace {

// "cpu", "gpu" or "cpu+gpu" for the places in `seen`; `none` when empty.
std::string places(const std::set<std::string>& seen, const std::string& none) {
  if (seen.empty()) return none;
  if (seen.size() > 1) return "cpu+gpu";
  return *seen.begin();
}

}  // namespace

void total_up(RunSummary& summary, const std::vector<pipeline::DeviceReport>& members, double call_ms,
              bool gpu_encode) {
  std::map<int, std::size_t> per_device;
  std::set<std::string> decoded_on, encoded_on;
  for (const auto& f : summary.files) {
    summary.bytes_in += f.bytes_in;
    if (f.ok && f.decoder == "gpu") ++summary.gpu_decoded;
    if (!f.fallback.empty()) ++summary.fallbacks[f.fallback];
    if (f.ok) {
      ++summary.ok;
      if (!f.decoded_to.empty()) ++summary.decoded_to[f.decoded_to];
      summary.bytes_out += f.bytes_out;
      summary.pixels += static_cast<std::uint64_t>(f.width) * f.height;
      ++per_device[f.device];
      // Where the run's decoding went: nvJPEG, or the CPU's lanes' own decodes (a GPU's
      // fallbacks to the CPU decoder are counted by reason instead).
      if (f.decoder == "gpu") decoded_on.insert("gpu");
      else if (f.device == pipeline::kCpuDevice) decoded_on.insert("cpu");
      encoded_on.insert(gpu_encode && f.device >= 0 ? "gpu" : "cpu");
    } else if (f.cancelled) {
      ++summary.cancelled;
    } else {
      ++summary.failed;
    }
  }
  summary.decode = places(decoded_on, "cpu");
  summary.encode = places(encoded_on, "cpu");
  std::set<std::string> kinds;
  std::string names;
  const double end_ms = call_ms + summary.setup_ms + summary.wall_ms;
  for (const auto& m : members) {
    DeviceShare share;
    share.device = m;
    if (m.joined_ms >= 0) share.device.joined_ms = m.joined_ms - call_ms;
    share.files = per_device[m.device];
    share.share = summary.ok > 0 ? static_cast<double>(share.files) / static_cast<double>(summary.ok) : 0;
    const double worked_ms = m.joined_ms >= 0 ? end_ms - m.joined_ms : 0;
    share.images_per_s = worked_ms > 0 ? static_cast<double>(share.files) * 1e3 / worked_ms : 0;
    if (share.files > 0) {
      const bool cpu = m.device == pipeline::kCpuDevice;
      kinds.insert(cpu || m.simulated ? "host" : "gpu");
      names += (names.empty() ? "" : ", ") + (cpu || m.simulated ? m.name : Device(m.device).name());
    }
    summary.devices.push_back(std::move(share));
  }
  summary.backend = kinds.size() > 1 ? "host+gpu" : kinds.empty() ? "host" : *kinds.begin();
  summary.device = names.empty() ? "host" : names;
}

}  // namespace streampipe::tools::gray::detail
