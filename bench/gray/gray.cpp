// SPDX-License-Identifier: Apache-2.0
// `bench gray`: the gray tool timed as a user times it. Photo-like images are generated into
// a folder, or --inputs names a folder of real ones (bench/gray/photo_set.py makes such a
// set); then, for each output format, every row is a whole command run from spawn to exit,
// CUDA initialization, pools, codec handles and exit included:
//   streampipe gray DIR -o OUT --force -q --format F [--compression L | --quality Q]   (defaults)
//   the same with --backend host                         (the tool's own CPU-only run)
//   the same with --backend gpu, with a GPU              (the GPUs alone, no CPU lanes)
//   the same with --devices over the first 1, 2, 4, ... GPUs, when several are selected
//   python3 bench/peers/<peer>_gray.py DIR OUT ...       (the peers, gray_peers.hpp: Pillow and
//                                                         OpenCV on every core, nvImageCodec on
//                                                         the GPU; each skipped, with the reason,
//                                                         without its package)
// Rows alternate within each round after the warm-up rounds, which also warm the page
// cache. Every output of every run is checked (gray_rows.hpp); each tool run's --json gives
// its own figures: conversion window, start-up, bound stage. The executable runs itself
// (/proc/self/exe). The peer scripts are found in the source tree this was built from
// (STREAMPIPE_SOURCE_DIR) unless --peer-dir names their folder.

#include "benchmarks.hpp"
#include "gray/gray_check.hpp"
#include "gray/gray_inputs.hpp"
#include "gray/gray_peers.hpp"
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
  std::string python;
  std::vector<const gray_bench::Peer*> peers;
  fs::path peer_dir, keep, inputs;
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
  for (const auto& key : state.get<std::vector<std::string>>("peers"))
    if (key != "none") c.peers.push_back(&gray_bench::find_peer(key));
  c.peer_dir = state.get<std::string>("peer-dir");
  if (c.peer_dir.empty() && std::string(STREAMPIPE_SOURCE_DIR).size() > 0)
    c.peer_dir = fs::path(STREAMPIPE_SOURCE_DIR) / "bench" / "peers";
  c.keep = state.get<std::string>("keep");
  c.generate_only = state.get<bool>("generate-only");
  if (c.generate_only && c.keep.empty()) throw ParameterError("--generate-only needs --keep DIR (where the images stay)");
  c.inputs = state.get<std::string>("inputs");
  if (!c.inputs.empty() && !c.keep.empty())
    throw ParameterError("--inputs DIR runs on the images there; --keep and --generate-only are for generated ones");
  if (!c.inputs.empty() && !fs::is_directory(c.inputs))
    throw ParameterError(fmt::format("--inputs {}: not a folder", c.inputs.string()));
  if (!c.keep.empty() && fs::exists(c.keep) && !fs::is_empty(c.keep) && !state.force())
    throw ParameterError(fmt::format("--keep {}: the folder is not empty; the tool would convert what else is in it "
                                     "(an empty or new folder, or --force)",
                                     c.keep.string()));
  return c;
}

// Each selected peer, with why it cannot run here (nullopt when it can).
using PeerStatus = std::pair<const gray_bench::Peer*, std::optional<std::string>>;

// Why the tool's run took no GPU, from its --json: why its set holds no GPU, else the first
// GPU's reason; empty if it says none.
std::string why_no_gpu(const nlohmann::json& run) {
  if (std::string why = run.value("gpus_left_out", std::string()); !why.empty()) return why;
  for (const auto& d : run.value("devices", nlohmann::json::array()))
    if (d.value("device", nlohmann::json()) != "cpu" && !d.value("reason", std::string()).empty())
      return d["reason"].get<std::string>();
  return {};
}

std::vector<RowPlan> plan_rows(const Config& c, const State& state, io::ImageFormat format, const fs::path& in_dir,
                               const fs::path& scratch, bool have_gpu, const std::vector<PeerStatus>& peers) {
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
  // With several GPUs selected, the defaults over the first 1, 2, 4, ... of them (the row
  // above spreads over all): whether each GPU more makes the run faster.
  if (have_gpu && state.devices().size() > 1) {
    std::string list;
    for (std::size_t k = 0; k < state.devices().size(); ++k) {
      list += (k ? "," : "") + std::to_string(state.devices()[k]);
      const std::size_t count = k + 1;
      if (count < state.devices().size() && (count & (count - 1)) == 0)
        tool(fmt::format("streampipe gray --devices {}", list), {"--devices", list});
    }
  }
  const int processes = c.threads > 0 ? c.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const auto& [peer, missing] : peers)
    if (!missing)
      plans.push_back(gray_bench::peer_row(
          *peer, {c.python, c.peer_dir, in_dir, scratch, format, c.quality, c.compression, processes, c.timeout_s}));
  return plans;
}

// Every row of one output format, alternated round by round; the table and its notes.
Table measure_format(const State& state, const Config& c, io::ImageFormat format, const gray_bench::Inputs& in,
                     const std::string& inputs_text, const fs::path& in_dir, const fs::path& scratch, bool have_gpu,
                     const std::vector<PeerStatus>& peers, int check_threads) {
  std::vector<CommandRow> rows;
  for (auto& p : plan_rows(c, state, format, in_dir, scratch, have_gpu, peers))
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
    if (rows[i].plan().library == "Pillow") at.peer = index;
    else if (rows[i].plan().name == "streampipe gray") at.tool = index;
    else if (rows[i].plan().name == "streampipe gray --backend host") at.host = index;
  }
  Table t = gray_bench::gray_table(
      std::move(out), at, format,
      fmt::format("bench gray: {} -> {} gray, each command whole (spawn to exit), median of {} rounds after {} warm-up; "
                  "rows alternate within each round, in this order",
                  inputs_text, io::to_string(format), state.runs(), state.warmup()));
  t.notes.push_back("wall: spawn to exit; start-up: the tool's own clock from its process start to its first file "
                    "taken; outside conv.: wall minus the tool's conversion window (first file taken to last "
                    "written); bound: the busiest stage against its capacity in that window");
  for (const auto& r : t.rows) {
    if (r.fields.contains("failure"))
      fmt::print(stderr, "bench gray: {}: {}\n", r.name, r.fields["failure"].get<std::string>());
    if (r.fields.contains("gray_difference_vs_reference")) {
      const auto& d = r.fields["gray_difference_vs_reference"];
      t.notes.push_back(fmt::format("{} against the reference: max {} level(s), mean {:.2g} over {} pixels (bounds {} "
                                    "levels and {} on average in a file: {})",
                                    r.name, d["max_levels"].get<int>(), d["mean_levels"].get<double>(),
                                    d["pixels"].get<std::uint64_t>(), d["bound_max"].get<int>(),
                                    d["bound_mean_per_file"].get<double>(), d["bound_why"].get<std::string>()));
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
    t.notes.push_back(have_gpu ? fmt::format("the tool's defaults ran on the CPU alone here (no GPU started: {}): both "
                                             "tool rows take the same path",
                                             why_no_gpu(t.rows[static_cast<std::size_t>(at.tool)].fields.value(
                                                 "last_run", nlohmann::json::object())))
                               : fmt::format("no GPU here ({}): the tool's defaults run the host backend, so "
                                             "'streampipe gray' and '--backend host' measure the same thing",
                                             Device::unavailable_reason().value_or("?")));
  t.fields["peers"] = nlohmann::json::object();
  for (const auto& [peer, missing] : peers) {
    if (missing) t.notes.push_back(fmt::format("{} row skipped: {}", peer->library, *missing));
    t.fields["peers"][peer->key] = missing ? nlohmann::json{{"skipped", *missing}}
                                           : nlohmann::json{{"script", (c.peer_dir / peer->script).string()}};
  }
  gray_bench::add_targets(t, at, format);
  return t;
}

// The inputs, generated or read from --inputs, and the envelope's fields about them; their
// description for the tables' titles.
gray_bench::Inputs prepare_inputs(State& state, const Config& c, const fs::path& in_dir, int threads,
                                  std::string& text) {
  std::vector<std::string> formats;
  for (const auto f : c.formats) formats.emplace_back(io::to_string(f));
  if (!c.inputs.empty()) {
    fmt::print(stderr, "bench gray: reading the images in {} and their references (not timed)...\n", in_dir.string());
    gray_bench::Inputs in;
    try {
      in = gray_bench::read_inputs(in_dir, threads);
    } catch (const std::invalid_argument& e) {
      throw ParameterError(fmt::format("--inputs {}: {}", in_dir.string(), e.what()));
    }
    const double mpx = static_cast<double>(in.pixels) / 1e6 / static_cast<double>(in.files.size());
    text = fmt::format("{} files from {} ({:.0f} MB, {:.2f} Mpx on average)", in.files.size(), in_dir.string(),
                       static_cast<double>(in.bytes) / 1e6, mpx);
    state.result().fields = {{"images", in.files.size()}, {"inputs", in_dir.string()},  {"input_bytes", in.bytes},
                             {"input_pixels", in.pixels}, {"output_formats", formats}, {"threads", c.threads}};
    return in;
  }
  fmt::print(stderr, "bench gray: generating {} photo-like {}x{} {} images in {} (not timed)...\n", c.count, c.width,
             c.height, io::to_string(c.input_format), in_dir.string());
  gray_bench::Inputs in = gray_bench::generate_inputs(in_dir, c.count, c.width, c.height, c.input_format, 90, threads);
  text = fmt::format("{} {}x{} {} files ({:.0f} MB)", c.count, c.width, c.height, io::to_string(c.input_format),
                     static_cast<double>(in.bytes) / 1e6);
  state.result().fields = {{"images", c.count},          {"width", c.width},
                           {"height", c.height},         {"input_format", io::to_string(c.input_format)},
                           {"input_quality", 90},        {"input_bytes", in.bytes},
                           {"output_formats", formats},  {"threads", c.threads},
                           {"generated_into", in_dir.string()}};
  return in;
}

void run_gray(State& state) {
  const Config c = read_config(state);
  const bool have_gpu = Device::count() > 0;
  if (have_gpu) state.set_device(state.device(), Device(state.device()).name());
  const int check_threads = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));

  gray_bench::ScratchDir scratch;
  const fs::path in_dir = !c.inputs.empty() ? c.inputs : c.keep.empty() ? scratch.path() / "in" : c.keep;
  std::string inputs_text;
  const gray_bench::Inputs in = prepare_inputs(state, c, in_dir, check_threads, inputs_text);
  if (c.generate_only) {
    state.print(fmt::format("bench gray: {} images ({:.0f} MB) in {}; nothing timed (--generate-only)\n", c.count,
                            static_cast<double>(in.bytes) / 1e6, in_dir.string()));
    return;
  }
  std::vector<PeerStatus> peers;
  for (const auto* peer : c.peers) {
    peers.emplace_back(peer, gray_bench::peer_missing(*peer, c.python, c.peer_dir, have_gpu, scratch.path()));
    if (peers.back().second)
      fmt::print(stderr, "bench gray: the {} row is skipped: {}\n", peer->library, *peers.back().second);
  }
  for (const auto format : c.formats)
    state.add_table(
        measure_format(state, c, format, in, inputs_text, in_dir, scratch.path(), have_gpu, peers, check_threads));
}

}  // namespace

Benchmark gray_benchmark() {
  Benchmark b;
  b.name = "gray";
  b.description =
      "The gray tool timed as a user times it, whole commands start to exit, beside Pillow, OpenCV and "
      "nvImageCodec; every output verified. See docs/gray.md.";
  b.runs = 5;
  b.warmup = 1;  // a warm-up round runs every command once and warms the page cache
  b.mismatch = "outputs differ from the reference, files failed or a command failed";
  using I = std::int64_t;
  b.parameters = {
      {"images", "number of generated images", I{300}, 1, 100000},
      {"inputs", "run on the images in this folder (its *.png, *.jpg, *.jpeg) instead of generated ones", std::string(),
       0, 0, {}, false},
      {"size", "image size WxH", std::string("1920x1080")},
      {"input-format", "generated inputs: jpeg (quality 90) or png", std::string("jpeg"), 0, 0, {"png", "jpeg", "jpg"}},
      {"format", "output formats, each its own table: png, jpeg or both", std::vector<std::string>{"png", "jpeg"}, 0, 0,
       {"png", "jpeg", "jpg"}},
      {"quality", "JPEG output quality (the tool's and the peers' --quality)", I{90}, 1, 100},
      {"compression", "PNG output level 0-9 (the tool's and the peers' --compression)", I{1}, 0, 9},
      {"threads", "the tool's --threads and the peers' --processes; 0: every core", I{0}, 0, 1024},
      {"lanes", "the tool's --lanes (0: its default)", I{0}, 0, 64},
      {"timeout", "seconds a command may run before it is killed and its row fails (0: no limit)", I{300}, 0, 86400},
      {"peers", "the peers timed beside the tool: pillow, opencv, nvimagecodec (or none)",
       std::vector<std::string>{"pillow", "opencv", "nvimagecodec"}, 0, 0, {"pillow", "opencv", "nvimagecodec", "none"}},
      {"python", "the Python that runs the peers", std::string("python3")},
      {"peer-dir", "the folder of the peers' scripts (default: bench/peers of the source tree built from)",
       std::string(), 0, 0, {}, false},
      {"keep", "generate the inputs into this folder (new or empty) and keep them", std::string(), 0, 0, {}, false},
      {"generate-only", "only generate the inputs into --keep DIR; time nothing", false},
  };
  b.run = run_gray;
  return b;
}

}  // namespace streampipe::bench
