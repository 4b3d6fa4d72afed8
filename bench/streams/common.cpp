// SPDX-License-Identifier: Apache-2.0
#include "streams/experiments.hpp"

#include "streampipe/host/atomic_file.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <unistd.h>
#include <utility>

namespace streampipe::bench::streams {

Row timed_row(const std::string& name, int warmup, int runs, const std::function<void()>& poison,
              const std::function<void()>& body, const std::function<bool()>& verify) {
  // On the host a row can take most of a minute before its table prints: on a terminal,
  // which row runs, on a line of standard error cleared once it is done.
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  if (terminal) {
    fmt::print(stderr, "\r\033[K  running: {} ({} warm-up, {} timed run(s))", name, warmup, runs);
    std::fflush(stderr);
  }
  const Samples s = measure(warmup, runs, {poison, [&] { return wall_ms(body); }, verify});
  if (terminal) std::fputs("\r\033[K", stderr);
  Row row;
  row.name = name;
  row.unit = "ms";
  row.values = s.values;
  row.verified = s.verified;
  return row;
}

void poison_with_complement(std::byte* out, const std::byte* ref, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = ~ref[i];
}

pipeline::EngineOptions engine_options(bool gpu, int device, int lanes, int depth) {
  pipeline::EngineOptions o;
  o.backend = gpu ? pipeline::Backend::gpu : pipeline::Backend::host;
  if (gpu) o.devices = {device};
  o.lanes = lanes;
  o.depth = depth;
  return o;
}

void apply_engine_overrides(const Config& c, pipeline::EngineOptions& o) {
  if (c.depth > 0) o.depth = c.depth;
  if (c.host_threads > 0) o.host_threads = c.host_threads;
  if (c.staging_mib >= 0) o.staging_bytes = static_cast<std::size_t>(c.staging_mib) << 20;
}

void add_engine_details(Row& row, pipeline::Engine& engine) {
  const auto rep = engine.timeline().report();
  row.fields["detail"] = fmt::format("{}; bottleneck {} busy {:.0f}%", engine.describe(),
                                     pipeline::stage_name(rep.bottleneck), 100 * rep.overlap_efficiency);
  row.fields["engine"] = engine.describe();
  row.fields["timeline"] = rep;
}

namespace {

// Every engine run write_trace() may be given, by experiment: what trace_files() declares.
const std::pair<const char*, std::vector<const char*>> kTraced[] = {
    {"gray", {"gray-engine-pinned", "gray-engine-pageable-in", "gray-engine-pageable"}},
    {"arrays", {"arrays-engine-pinned", "arrays-engine-pageable-in", "arrays-engine-pageable"}},
    {"chunked", {"chunked-4-lanes-16MiB"}},
    {"user-kernel", {"user-kernel-engine-pinned", "user-kernel-engine-pageable"}},
};

}  // namespace

std::vector<std::vector<int>> wider_device_sets(const Config& c) {
  std::vector<std::vector<int>> sets;
  for (std::size_t k = 2; k <= c.devices.size(); ++k) sets.emplace_back(c.devices.begin(), c.devices.begin() + k);
  return sets;
}

void write_trace(const Config& c, pipeline::Engine& engine, const std::string& name) {
  if (c.trace_dir.empty() || name.empty()) return;  // an untraced run
  bool declared = false;
  for (const auto& [experiment, runs] : kTraced)
    for (const char* run : runs) declared = declared || name == run;
  if (!declared) throw std::logic_error(fmt::format("trace '{}' is not declared in kTraced", name));
  const auto base = std::filesystem::path(c.trace_dir) / name;
  const auto overwrite = c.force ? host::Overwrite::allow : host::Overwrite::refuse;
  host::write_file_atomically(base.string() + ".trace.json", engine.timeline().chrome_trace(name).dump() + "\n",
                                overwrite);
  host::write_file_atomically(base.string() + ".svg", engine.timeline().gantt_svg(name + "\n" + engine.describe()),
                                overwrite);
}

std::vector<std::string> trace_files(const std::string& trace_dir, const std::string& experiment) {
  std::vector<std::string> files;
  if (trace_dir.empty()) return files;
  for (const auto& [name, runs] : kTraced) {
    if (experiment != "all" && experiment != name) continue;
    for (const char* run : runs)
      for (const char* ext : {".trace.json", ".svg"})
        files.push_back((std::filesystem::path(trace_dir) / (std::string(run) + ext)).string());
  }
  return files;
}

Row engine_row(const Config& c, pipeline::Engine& engine, const std::string& name, int runs, std::size_t n,
               const std::function<pipeline::Item(std::size_t)>& make, const std::function<void()>& poison,
               const std::function<bool()>& verify, const std::string& trace, const std::string& note) {
  Row row = timed_row(name, c.warmup, runs, poison, [&] {
    engine.timeline().clear();
    for (std::size_t i = 0; i < n; ++i) (void)engine.submit(make(i));
    engine.drain();
  }, verify);
  add_engine_details(row, engine);
  if (!note.empty()) row.fields["detail"] = row.fields["detail"].get<std::string>() + "; " + note;
  write_trace(c, engine, trace);
  return row;
}

}  // namespace streampipe::bench::streams
