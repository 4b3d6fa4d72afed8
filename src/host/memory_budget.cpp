// SPDX-License-Identifier: Apache-2.0
#include "streampipe/host/memory_budget.hpp"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

namespace streampipe::host {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::optional<std::uint64_t> whole(std::string_view s) {
  s = trim(s);
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A cgroup v1 limit at or above this is "none" (the kernel's page-rounded LONG_MAX).
constexpr std::uint64_t kNoLimit = std::uint64_t{1} << 62;

struct Mount {
  std::string root, point;
};

// Where the memory controller's hierarchy is mounted: cgroup v2, else v1's memory.
std::optional<std::pair<Mount, bool>> memory_mount() {
  std::ifstream in("/proc/self/mountinfo");
  std::optional<std::pair<Mount, bool>> v1;
  for (std::string line; std::getline(in, line);) {
    // id parent major:minor root mount-point options ... - fstype source super-options
    std::istringstream f(line);
    std::string id, parent, dev, root, point;
    f >> id >> parent >> dev >> root >> point;
    const auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string fstype, source, options;
    tail >> fstype >> source >> options;
    if (fstype == "cgroup2") return std::pair{Mount{root, point}, true};
    if (fstype == "cgroup" && ("," + options + ",").find(",memory,") != std::string::npos)
      v1 = std::pair{Mount{root, point}, false};
  }
  return v1;
}

// The process's group in the memory hierarchy (v2: the "0::" line; v1: the memory line).
std::optional<std::string> own_group(bool v2) {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const bool match = v2 ? line.compare(0, a, "0") == 0 && controllers.empty()
                          : ("," + controllers + ",").find(",memory,") != std::string::npos;
    if (match) return line.substr(b + 1);
  }
  return std::nullopt;
}

MemoryAvailable cgroup_available() {
  MemoryAvailable out;
  const auto mount = memory_mount();
  if (!mount) return out;
  const auto& [m, v2] = *mount;
  auto group = own_group(v2);
  if (!group) return out;
  // The mount shows the hierarchy from m.root down (a container sees its own group as /).
  std::string rel = *group;
  if (m.root != "/" && rel.rfind(m.root, 0) == 0) rel = rel.substr(m.root.size());
  for (;;) {
    const std::string dir = m.point + (rel == "/" ? "" : rel);
    const auto room = v2 ? cgroup_room(slurp(dir + "/memory.max"), slurp(dir + "/memory.current"))
                         : cgroup_room(slurp(dir + "/memory.limit_in_bytes"), slurp(dir + "/memory.usage_in_bytes"));
    if (room && (!out.known || *room < out.bytes)) {
      out.bytes = *room;
      out.known = true;
      out.source = fmt::format("the limit of the control group {}", rel.empty() ? "/" : rel);
    }
    if (rel.empty() || rel == "/") break;
    const auto slash = rel.find_last_of('/');
    rel = slash == 0 || slash == std::string::npos ? "/" : rel.substr(0, slash);
  }
  return out;
}

}  // namespace

std::optional<std::uint64_t> parse_meminfo_available(std::string_view meminfo) {
  constexpr std::string_view key = "MemAvailable:";
  for (std::size_t at = 0; at < meminfo.size();) {
    const std::size_t end = std::min(meminfo.find('\n', at), meminfo.size());
    std::string_view line = meminfo.substr(at, end - at);
    at = end + 1;
    if (line.rfind(key, 0) != 0) continue;
    line = trim(line.substr(key.size()));
    if (line.size() < 3 || line.substr(line.size() - 2) != "kB") return std::nullopt;
    const auto kib = whole(line.substr(0, line.size() - 2));
    if (!kib || *kib > (~std::uint64_t{0} >> 10)) return std::nullopt;
    return *kib << 10;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> cgroup_room(std::string_view limit, std::string_view usage) {
  if (trim(limit) == "max") return std::nullopt;
  const auto l = whole(limit), u = whole(usage);
  if (!l || !u || *l >= kNoLimit) return std::nullopt;
  return *l > *u ? *l - *u : 0;
}

MemoryAvailable least(const MemoryAvailable& a, const MemoryAvailable& b) {
  if (!a.known) return b;
  if (!b.known) return a;
  return b.bytes < a.bytes ? b : a;
}

MemoryAvailable available_memory() noexcept {
  try {
    MemoryAvailable machine;
    if (const auto bytes = parse_meminfo_available(slurp("/proc/meminfo"))) {
      machine.bytes = *bytes;
      machine.known = true;
      machine.source = "MemAvailable in /proc/meminfo";
    }
    return least(machine, cgroup_available());
  } catch (...) {
    return {};
  }
}

std::string format_bytes(std::uint64_t bytes) {
  constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  double v = static_cast<double>(bytes) / 1024;
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.2f} {}", v, units[u]);
}

std::optional<std::string> memory_refusal(std::uint64_t needed, const MemoryAvailable& available,
                                          std::string_view what, std::string_view hint) {
  if (!available.known || needed <= available.bytes) return std::nullopt;
  return fmt::format("{} needs {} ({} bytes) of memory, and {} ({} bytes) is available ({}){}{}", what,
                     format_bytes(needed), needed, format_bytes(available.bytes), available.bytes, available.source,
                     hint.empty() ? "" : ": ", hint);
}

}  // namespace streampipe::host
