// SPDX-License-Identifier: Apache-2.0
#include "devices_option.hpp"

#include "commands.hpp"

#include "streampipe/cuda/device.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace streampipe::cli {
namespace {

constexpr const char* kForm = "give all, or GPU indices separated by commas, e.g. 0,2";

}  // namespace

std::optional<std::vector<int>> parse_device_list(const std::string& text) {
  if (text == "all") return std::nullopt;
  if (text.empty()) throw UsageError(fmt::format("--devices is empty ({})", kForm));
  std::vector<int> devices;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string entry = text.substr(begin, end - begin);
    if (entry.empty()) throw UsageError(fmt::format("--devices '{}' has an empty entry ({})", text, kForm));
    const bool digits = entry.find_first_not_of("0123456789") == std::string::npos;
    const bool negative = entry.size() > 1 && entry[0] == '-' &&
                          entry.find_first_not_of("0123456789", 1) == std::string::npos;
    if (negative)
      throw UsageError(fmt::format("--devices '{}': {} is negative (GPU indices start at 0)", text, entry));
    if (!digits) throw UsageError(fmt::format("--devices '{}': '{}' is not a GPU index ({})", text, entry, kForm));
    // Nine digits fit an int; no machine has a GPU index anywhere near.
    if (entry.size() > 9) throw UsageError(fmt::format("--devices '{}': {} is too large a GPU index", text, entry));
    const int index = std::stoi(entry);
    if (std::find(devices.begin(), devices.end(), index) != devices.end())
      throw UsageError(fmt::format("--devices '{}': GPU {} is named twice", text, index));
    devices.push_back(index);
    if (end == text.size()) break;
    begin = end + 1;
  }
  return devices;
}

std::vector<int> select_gpus(const std::string& text, const std::vector<std::string>& gpu_names,
                             const std::string& no_gpu_reason) {
  const auto parsed = parse_device_list(text);
  const int count = static_cast<int>(gpu_names.size());
  if (!parsed) {
    std::vector<int> all(gpu_names.size());
    for (int i = 0; i < count; ++i) all[i] = i;
    return all;
  }
  for (const int index : *parsed) {
    if (index < count) continue;
    if (count == 0)
      throw UsageError(fmt::format("--devices {}: this machine has no usable GPU ({})", text, no_gpu_reason));
    std::vector<std::string> listed;
    for (int i = 0; i < count; ++i) listed.push_back(fmt::format("{} ({})", i, gpu_names[i]));
    throw UsageError(fmt::format("--devices {}: there is no GPU {}; this machine has {} GPU{}: {}", text, index, count,
                                 count == 1 ? "" : "s", fmt::join(listed, ", ")));
  }
  return *parsed;
}

std::vector<int> select_gpus(const std::string& text) {
  std::vector<std::string> names;
  const int count = Device::count();
  for (int i = 0; i < count; ++i) names.push_back(Device(i).name());
  return select_gpus(text, names, count == 0 ? Device::unavailable_reason().value_or("?") : std::string());
}

CLI::Option* add_devices_option(CLI::App& app, std::string& devices, const std::string& help) {
  return app.add_option("--devices", devices, help)->capture_default_str()->type_name("LIST");
}

}  // namespace streampipe::cli
