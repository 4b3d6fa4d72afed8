// SPDX-License-Identifier: Apache-2.0
// `bench gray`: the gray tool timed as a user times it. Photo-like images are generated into
// a folder (not timed); then, for each output format, every row is a whole command run from
// spawn to exit, CUDA initialization, pools, codec handles and exit included:
//   streampipe gray DIR -o OUT --force -q --format F [--compression L | --quality Q]   (defaults)
//   the same with --backend host                         (the tool's own CPU-only run)
//   the same with --backend gpu, with a GPU              (the GPUs alone, no CPU lanes)
//   the same with --devices N, when several GPUs are selected
//   python3 bench/peers/pillow_gray.py DIR OUT ...       (Pillow on every core; skipped,
//                                                         with the reason, without Pillow)
// Rows alternate within each round after the warm-up rounds, which also warm the page
// cache. Every output of every run is checked (gray_rows.hpp); each tool run's --json gives
// its own figures: conversion window, start-up, bound stage. The executable runs itself
// (/proc/self/exe). The peer script is found in the source tree this was built from
// (STREAMPIPE_SOURCE_DIR) unless --pillow-script names it.

#include "benchmarks.hpp"
#include "gray/gray_check.hpp"
#include "gray/gray_inputs.hpp"
#include "gray/gray_rows.hpp"
#include "gray/gray_table.hpp"
#include "harness/command.hpp"
#include "harness/measure.hpp"

#include "streampipe/cuda/device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <thread>

#ifndef STREAMPIPE_SOURCE_DIR
#define STREAMPIPE_SOURCE_DIR ""
#endif

namespace streampipe::bench {
namespace {

namespace fs = std::filesystem;
using gray_bench::CommandRow;
using gray_bench::RowPlan;

struct Config {
  std::uint32_t count = 0, width = 0, height = 0;
  io::ImageFormat input_format = io::ImageFormat::jpeg;
  std::vector<io::ImageFormat> formats;
  int quality = 90, compression = 1, threads = 0, lanes = 0;
  double timeout_s = 0;  // per command; 0: none
  std::string python, pillow_script;
  fs::path keep;
  bool generate_only = false;
};

Config read_config(const State& state) {
  Config c;
  c.count = state.get<std::uint32_t>("images");
  const auto size = state.get<std::string>("size");
  if (std::sscanf(size.c_str(), "%ux%u", &c.width, &c.height) != 2 || c.width == 0 || c.height == 0 ||
      c.width > 65535 || c.height > 65535)
    throw ParameterError(fmt::format("--size '{}' is not of the form WxH (1-65535 each)", size));
  const auto in = io::parse_image_format(state.get<std::string>("input-format"));
  if (!in)
    throw ParameterError(fmt::format("--input-format '{}' is not png or jpeg", state.get<std::string>("input-format")));
  c.input_format = *in;
  for (const auto& name : state.get<std::vector<std::string>>("format")) {
    const auto f = io::parse_image_format(name);
    if (!f) throw ParameterError(fmt::format("--format '{}' is not png or jpeg", name));
    if (std::find(c.formats.begin(), c.formats.end(), *f) == c.formats.end()) c.formats.push_back(*f);
  }
  if (c.formats.empty()) throw ParameterError("--format names no output format (png, jpeg)");
  c.quality = state.get<int>("quality");
  c.compression = state.get<int>("compression");
  c.threads = state.get<int>("threads");
  c.lanes = state.get<int>("lanes");
  c.timeout_s = state.get<int>("timeout");
  c.python = state.get<std::string>("python");
  c.pillow_script = state.get<std::string>("pillow-script");
  if (c.pillow_script.empty() && std::string(STREAMPIPE_SOURCE_DIR).size() > 0)
    c.pillow_script = (fs::path(STREAMPIPE_SOURCE_DIR) / "bench" / "peers" / "pillow_gray.py").string();
  c.keep = state.get<std::string>("keep");
  c.generate_only = state.get<bool>("generate-only");
  if (c.generate_only && c.keep.empty()) throw ParameterError("--generate-only needs --keep DIR (where the images stay)");
  if (!c.keep.empty() && fs::exists(c.keep) && !fs::is_empty(c.keep) && !state.force())
    throw ParameterError(fmt::format("--keep {}: the folder is not empty; the tool would convert what else is in it "
                                     "(an empty or new folder, or --force)",
                                     c.keep.string()));
  return c;
}

// Why the Pillow row cannot run, or nullopt when it can.
std::optional<std::string> pillow_missing(const Config& c, const fs::path& scratch) {
  if (c.pillow_script.empty() || !fs::is_regular_file(c.pillow_script))
    return fmt::format("the peer script {} is not there (--pillow-script PATH)",
                       c.pillow_script.empty() ? std::string("bench/peers/pillow_gray.py") : c.pillow_script);
  const fs::path log = scratch / "pillow-check.log";
  try {
    const CommandRun r = run_command({c.python, "-c", "import PIL"}, log, 60);
    if (r.ok()) return std::nullopt;
    std::string tail = log_tail(log, 300);
    while (!tail.empty() && tail.back() == '\n') tail.pop_back();
    return fmt::format("{} -c 'import PIL': {} ({})", c.python, r.describe(), tail.substr(tail.rfind('\n') + 1));
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::vector<RowPlan> plan_rows(const Config& c, const State& state, io::ImageFormat format, const fs::path& in_dir,
                               const fs::path& scratch, bool have_gpu, bool with_pillow) {
  const std::string exe = self_executable().string();
  const std::string f(io::to_string(format));
  std::vector<RowPlan> plans;
  const auto tool = [&](std::string name, std::vector<std::string> extra) {
    RowPlan p;
    p.name = std::move(name);
    const std::string key = fmt::format("{}-{}", f, plans.size());
    p.out_dir = scratch / ("out-" + key);
    p.json = scratch / ("run-" + key + ".json");
    p.log = scratch / ("log-" + key + ".txt");
    p.limit_s = c.timeout_s;
    p.argv = {exe, "gray", in_dir.string(), "-o", p.out_dir.string(), "--force", "-q", "--format", f};
    if (format == io::ImageFormat::png)
      p.argv.insert(p.argv.end(), {"--compression", std::to_string(c.compression)});
    else
      p.argv.insert(p.argv.end(), {"--quality", std::to_string(c.quality)});
    if (c.threads > 0) p.argv.insert(p.argv.end(), {"--threads", std::to_string(c.threads)});
    if (c.lanes > 0) p.argv.insert(p.argv.end(), {"--lanes", std::to_string(c.lanes)});
    p.argv.insert(p.argv.end(), extra.begin(), extra.end());
    p.argv.insert(p.argv.end(), {"--json", p.json.string()});
    plans.push_back(std::move(p));
  };
  tool("streampipe gray", {});
  tool("streampipe gray --backend host", {"--backend", "host"});
  // The GPUs alone, whatever the run's length: what the GPU path does without the CPU's lanes.
  if (have_gpu) tool("streampipe gray --backend gpu", {"--backend", "gpu"});
  if (have_gpu && state.devices().size() > 1) {
    const std::string one = std::to_string(state.device());
    tool("streampipe gray --devices " + one, {"--devices", one});
  }
  if (with_pillow) {
    const int processes = c.threads > 0 ? c.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    RowPlan p;
    p.name = fmt::format("Pillow Pool({})", processes);
    p.peer = true;
    p.out_dir = scratch / fmt::format("out-{}-pillow", f);
    p.log = scratch / fmt::format("log-{}-pillow.txt", f);
    p.limit_s = c.timeout_s;
    p.argv = {c.python, c.pillow_script, in_dir.string(), p.out_dir.string(), "--format", f};
    if (format == io::ImageFormat::png)
      p.argv.insert(p.argv.end(), {"--compression", std::to_string(c.compression)});
    else
      p.argv.insert(p.argv.end(), {"--quality", std::to_string(c.quality)});
    p.argv.insert(p.argv.end(), {"--processes", std::to_string(processes)});
    plans.push_back(std::move(p));
  }
  return plans;
}

// Every row of one output format, alternated round by round; the table and its notes.
Table measure_format(const State& state, const Config& c, io::ImageFormat format, const gray_bench::Inputs& in,
                     const fs::path& in_dir, const fs::path& scratch, bool have_gpu,
                     const std::optional<std::string>& no_pillow, int check_threads) {
  std::vector<CommandRow> rows;
  for (auto& p : plan_rows(c, state, format, in_dir, scratch, have_gpu, !no_pillow))
    rows.emplace_back(std::move(p), in, format, state.warmup(), check_threads);
  std::vector<Trial> trials;
  int round = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CommandRow& row = rows[i];
    trials.push_back({[&row] { row.poison(); },
                      [&, i] {
                        if (i == 0) {
                          ++round;
                          fmt::print(stderr, "bench gray: {} round {} of {} ({})...\n", io::to_string(format), round,
                                     state.warmup() + state.runs(), round <= state.warmup() ? "warm-up" : "timed");
                        }
                        return row.run();
                      },
                      [&row] { return row.verify(); }});
  }
  const std::vector<Samples> samples = measure_alternating(state.warmup(), state.runs(), trials);
  std::vector<Row> out;
  gray_bench::Yardsticks at;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out.push_back(rows[i].row(samples[i].values, samples[i].verified));
    const int index = static_cast<int>(i);
    if (rows[i].plan().peer) at.peer = index;
    else if (rows[i].plan().name == "streampipe gray") at.tool = index;
    else if (rows[i].plan().name == "streampipe gray --backend host") at.host = index;
  }
  Table t = gray_bench::gray_table(
      std::move(out), at, format,
      fmt::format("bench gray: {} {}x{} {} files ({:.0f} MB) -> {} gray, each command whole (spawn to exit), median of {} "
                  "rounds after {} warm-up; rows alternate within each round, in this order",
                  c.count, c.width, c.height, io::to_string(c.input_format), static_cast<double>(in.bytes) / 1e6,
                  io::to_string(format), state.runs(), state.warmup()));
  t.notes.push_back("wall: spawn to exit; start-up: the tool's own clock from its process start to its first file "
                    "taken; outside conv.: wall minus the tool's conversion window (first file taken to last "
                    "written); bound: the busiest stage against its capacity in that window");
  for (const auto& r : t.rows) {
    if (r.fields.contains("failure"))
      fmt::print(stderr, "bench gray: {}: {}\n", r.name, r.fields["failure"].get<std::string>());
    if (r.fields.contains("gray_difference_vs_reference")) {
      const auto& d = r.fields["gray_difference_vs_reference"];
      t.notes.push_back(fmt::format("{} against the reference: max {} level(s), mean {:.2g} over {} pixels (bound {}: "
                                    "convert('L') rounds its own 16-bit fixed-point luma)",
                                    r.name, d["max_levels"].get<int>(), d["mean_levels"].get<double>(),
                                    d["pixels"].get<std::uint64_t>(), d["bound_max"].get<int>()));
    }
    if (r.fields.contains("gray_difference_vs_cpu_decode")) {
      const auto& d = r.fields["gray_difference_vs_cpu_decode"];
      t.notes.push_back(fmt::format("{}: files nvJPEG decoded against the CPU decode: max {} levels, mean {:.3f} over {} "
                                    "pixels (tolerance {} and {})",
                                    r.name, d["max_levels"].get<int>(), d["mean_levels"].get<double>(),
                                    d["pixels"].get<std::uint64_t>(), tools::gray::LevelDifference::kMaxLevels,
                                    tools::gray::LevelDifference::kMeanLevels));
    }
  }
  if (at.tool >= 0 && t.rows[static_cast<std::size_t>(at.tool)].fields.value("backend", std::string()) == "host")
    t.notes.push_back(have_gpu ? "the tool's defaults ran on the CPU alone here (--backend auto starts no GPU for a run "
                                 "the CPU finishes sooner than a GPU starts, docs/gray.md): both tool rows take the "
                                 "same path"
                               : fmt::format("no GPU here ({}): the tool's defaults run the host backend, so "
                                             "'streampipe gray' and '--backend host' measure the same thing",
                                             Device::unavailable_reason().value_or("?")));
  if (no_pillow) t.notes.push_back("Pillow row skipped: " + *no_pillow);
  gray_bench::add_targets(t, at, format);
  t.fields["pillow"] = no_pillow ? nlohmann::json{{"skipped", *no_pillow}} : nlohmann::json{{"script", c.pillow_script}};
  return t;
}

void run_gray(State& state) {
  const Config c = read_config(state);
  const bool have_gpu = Device::count() > 0;
  if (have_gpu) state.set_device(state.device(), Device(state.device()).name());
  const int check_threads = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));

  gray_bench::ScratchDir scratch;
  const fs::path in_dir = c.keep.empty() ? scratch.path() / "in" : c.keep;
  fmt::print(stderr, "bench gray: generating {} photo-like {}x{} {} images in {} (not timed)...\n", c.count, c.width,
             c.height, io::to_string(c.input_format), in_dir.string());
  const gray_bench::Inputs in =
      gray_bench::generate_inputs(in_dir, c.count, c.width, c.height, c.input_format, 90, check_threads);
  std::vector<std::string> formats;
  for (const auto f : c.formats) formats.emplace_back(io::to_string(f));
  state.result().fields = {{"images", c.count},          {"width", c.width},
                           {"height", c.height},         {"input_format", io::to_string(c.input_format)},
                           {"input_quality", 90},        {"input_bytes", in.bytes},
                           {"output_formats", formats},  {"threads", c.threads},
                           {"generated_into", in_dir.string()}};
  if (c.generate_only) {
    state.print(fmt::format("bench gray: {} images ({:.0f} MB) in {}; nothing timed (--generate-only)\n", c.count,
                            static_cast<double>(in.bytes) / 1e6, in_dir.string()));
    return;
  }
  const auto no_pillow = pillow_missing(c, scratch.path());
  if (no_pillow) fmt::print(stderr, "bench gray: the Pillow row is skipped: {}\n", *no_pillow);
  for (const auto format : c.formats)
    state.add_table(measure_format(state, c, format, in, in_dir, scratch.path(), have_gpu, no_pillow, check_threads));
}

}  // namespace

Benchmark gray_benchmark() {
  Benchmark b;
  b.name = "gray";
  b.description =
      "The gray tool timed as a user times it: each row one whole command (spawn to exit, start-up included) over "
      "generated photo-like images - the tool with its defaults, with --backend host, and a Pillow peer on every "
      "core - alternated, in images/s, with the tool's own start-up and bound stage from its --json. Every output "
      "of every run is verified.";
  b.runs = 5;
  b.warmup = 1;  // a warm-up round runs every command once and warms the page cache
  b.mismatch = "outputs differ from the reference, files failed or a command failed";
  using I = std::int64_t;
  b.parameters = {
      {"images", "number of generated images", I{300}, 1, 100000},
      {"size", "image size WxH", std::string("1920x1080")},
      {"input-format", "generated inputs: jpeg (quality 90) or png", std::string("jpeg"), 0, 0, {"png", "jpeg", "jpg"}},
      {"format", "output formats, each its own table: png, jpeg or both", std::vector<std::string>{"png", "jpeg"}, 0, 0,
       {"png", "jpeg", "jpg"}},
      {"quality", "JPEG output quality (the tool's and Pillow's --quality)", I{90}, 1, 100},
      {"compression", "PNG output level 0-9 (the tool's --compression, Pillow's compress_level)", I{1}, 0, 9},
      {"threads", "the tool's --threads and Pillow's processes; 0: their defaults (every core)", I{0}, 0, 1024},
      {"lanes", "the tool's --lanes (0: its default)", I{0}, 0, 64},
      {"timeout", "seconds a command may run before it is killed and its row fails (0: no limit)", I{300}, 0, 86400},
      {"python", "the Python that runs the Pillow peer", std::string("python3")},
      {"pillow-script", "the Pillow peer (default: bench/peers/pillow_gray.py of the source tree built from)",
       std::string(), 0, 0, {}, false},
      {"keep", "generate the inputs into this folder (new or empty) and keep them", std::string(), 0, 0, {}, false},
      {"generate-only", "only generate the inputs into --keep DIR; time nothing", false},
  };
  b.run = run_gray;
  return b;
}

}  // namespace streampipe::bench
