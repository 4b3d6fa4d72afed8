// SPDX-License-Identifier: Apache-2.0
// `bench gray`: the whole gray tool (read + decode, luma, encode + atomic write) over a
// folder of generated photo-like images, on the GPU backend and on the host backend with
// the same worker threads (the CPU-only run of the same tool), in images/s. With JPEG
// inputs, a build with nvJPEG and a GPU, a third row runs the GPU backend with --decode gpu
// (workers only read the files; nvJPEG decodes on the lanes).
//
// Limits: the host codec bound (worker threads / host decode+encode ms per image - the rate
// if the workers did nothing but codec work, which both backends share) and, for the GPU,
// the share of the wall time the device was busy (union of H2D, kernel and D2H on all
// lanes) with the H2D rate against the link. Generation and verification are not timed;
// outputs are deleted before every run and every output of every run is compared with the
// host reference of its decoded input (exactly for PNG, PSNR >= 30 dB for JPEG; --decode gpu
// PNG outputs within the documented tolerance of the CPU decode).

#include "benchmarks.hpp"
#include "gray/gray_check.hpp"
#include "gray/gray_report.hpp"
#include "harness/measure.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"
#include "streampipe/report/atomic_file.hpp"
#include "streampipe/tools/gray.hpp"
#include "streampipe/tools/gray_decode.hpp"
#include "streampipe/tools/gray_pixels.hpp"
#include "streampipe/tools/gray_synthetic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace streampipe::bench {
namespace {

namespace fs = std::filesystem;
namespace gray = streampipe::tools::gray;
using gray_bench::parallel_for;

constexpr double kLinkGbps = 55.0;  // pinned H2D, DESIGN.md (H100, PCIe Gen5 x16)

struct Inputs {
  std::vector<gray::Job> jobs;
  std::vector<std::vector<std::uint8_t>> reference;  // gray of what the tool will decode
  std::uint64_t bytes = 0;
};

Inputs generate(const fs::path& dir, std::uint32_t count, std::uint32_t width, std::uint32_t height,
                io::ImageFormat format, int threads) {
  Inputs in;
  in.jobs.resize(count);
  in.reference.resize(count);
  std::atomic<std::uint64_t> bytes{0};
  fs::create_directories(dir);
  fmt::print(stderr, "bench gray: generating {} photo-like {}x{} {} images...\n", count, width, height, io::to_string(format));
  parallel_for(count, threads, [&](std::size_t i) {
    const io::Image rgb = gray::photo_like(width, height, static_cast<std::uint32_t>(i + 1));
    const auto data = format == io::ImageFormat::jpeg ? io::encode_jpeg(rgb, 90) : io::encode_png(rgb);
    in.jobs[i].input = dir / fmt::format("img-{:04}.{}", i, format == io::ImageFormat::jpeg ? "jpg" : "png");
    report::write_file_atomically(in.jobs[i].input, data);
    bytes += data.size();
    // The reference starts from what the tool will decode (JPEG is lossy).
    const io::Image decoded = io::decode_image(data, {}, in.jobs[i].input.string());
    std::vector<std::uint8_t> rgb8(gray::rgb8_bytes(decoded));
    gray::to_rgb8(decoded, rgb8);
    in.reference[i].resize(rgb8.size() / 3);
    ops::rgb_to_gray_host(rgb8, in.reference[i]);
  });
  in.bytes = bytes.load();
  return in;
}

// One backend and decoder: every run converts every input; the figure is images/s.
Row measure_variant(State& state, Inputs& in, const fs::path& out_dir, const gray::Options& o, io::ImageFormat out_format) {
  Row row;
  const std::string backend(pipeline::backend_name(o.backend)), decode(gray::to_string(o.decode));
  row.name = fmt::format("{} backend, {} decode", backend, decode);
  row.unit = "images/s";
  for (auto& j : in.jobs) j.output = out_dir / j.input.filename().replace_extension(gray::output_extension(out_format));
  const auto n = static_cast<double>(in.jobs.size());
  std::vector<double> shares, decode_ms, encode_ms, h2d;
  std::string device, failure;
  nlohmann::json last_run;
  gray::LevelDifference diff;  // --decode gpu, PNG outputs: against the CPU decode, over every timed run
  gray::RunSummary s;
  int r = 0;  // the run under way, warm-up first
  const Samples rates = measure(state.warmup(), state.runs(), {[&] { fs::remove_all(out_dir); }, [&] {
    const bool timed = r >= state.warmup();
    fmt::print(stderr, "bench gray: {} backend, {} decode, {} run {}...\n", backend, decode, timed ? "timed" : "warm-up",
               timed ? r - state.warmup() + 1 : r + 1);
    s = gray::convert(in.jobs, o);
    device = s.device;
    if (timed) {
      const auto t = gray::split_time(s.records, s.wall_ms);
      shares.push_back(t.device_share());
      decode_ms.push_back(t.decode_ms / n);
      encode_ms.push_back(t.encode_ms / n);
      h2d.push_back(static_cast<double>(s.timeline.bytes_in) / 1e6 / s.wall_ms);
      last_run = gray_run_json(s, false);
    }
    return s.images_per_s();
  }, [&] {
    const bool timed = r++ >= state.warmup();
    const auto fail = [&](const std::string& why) {
      if (failure.empty()) failure = why;
      return false;
    };
    for (const auto& f : s.files)
      if (!f.ok) return fail(f.error);
    gray::LevelDifference run_diff;
    std::mutex m;
    bool ok = true;
    parallel_for(in.jobs.size(), o.threads, [&](std::size_t i) {
      gray::LevelDifference file_diff;
      const std::string why = gray_bench::check_output(in.jobs[i].output, in.reference[i], out_format,
                                                       o.decode == gray::Decode::gpu ? &file_diff : nullptr);
      std::lock_guard lock(m);
      run_diff.add(file_diff);
      if (!why.empty()) ok = fail(why);
    });
    if (o.decode == gray::Decode::gpu && s.gpu_decoded != in.jobs.size())
      ok = fail(fmt::format("--decode gpu: nvJPEG decoded {} of {} files", s.gpu_decoded, in.jobs.size()));
    if (timed) diff.add(run_diff);
    return ok;
  }});
  row.values = rates.values;
  row.verified = rates.verified;
  row.fields = {{"backend", backend},
                {"decode", decode},
                {"device", device},
                {"threads", o.threads},
                {"device_busy_share", report::summarize(shares)},
                {"decode_ms_per_image", report::median(decode_ms)},
                {"encode_ms_per_image", report::median(encode_ms)},
                {"last_run", last_run}};
  if (o.backend == pipeline::Backend::gpu) row.fields["h2d_gbps"] = report::median(h2d), row.fields["link_gbps"] = kLinkGbps;
  if (!failure.empty()) row.fields["failure"] = failure;
  if (diff.count > 0)
    row.fields["gray_difference_vs_cpu_decode"] = {{"max_levels", diff.max},
                                                   {"mean_levels", diff.mean()},
                                                   {"pixels", diff.count},
                                                   {"tolerance_max", gray::LevelDifference::kMaxLevels},
                                                   {"tolerance_mean", gray::LevelDifference::kMeanLevels}};
  return row;
}

// The printed line of each row, against the host backend's rate (the last row).
void add_cells(Table& t) {
  const double host_rate = t.rows.back().summary().median;
  for (auto& r : t.rows) {
    const auto s = r.summary();
    const auto& f = r.fields;
    const double per_image = f["decode_ms_per_image"].get<double>() + f["encode_ms_per_image"].get<double>();
    const double bound = per_image > 0 ? f["threads"].get<double>() * 1e3 / per_image : 0;
    const bool gpu = f["backend"] == "gpu";
    r.fields["speedup_vs_host"] = s.median / host_rate;
    r.fields["host_codec_bound_images_per_s"] = bound;
    r.cells = {f["backend"].get<std::string>(), f["decode"] == "gpu" ? "gpu (nvJPEG)" : "cpu", f["device"].get<std::string>(),
               fmt::format("{:.1f}", s.median), fmt::format("{:.1f}", s.min), fmt::format("{:.1f}", s.max),
               fmt::format("{:.2f}x", s.median / host_rate), fmt::format("{:.1f}", bound),
               bound > 0 ? fmt::format("{:.0f}%", 100 * s.median / bound) : "n/a",
               fmt::format("{:.1f}%", 100 * f["device_busy_share"]["median"].get<double>()),
               gpu ? fmt::format("{:.2f} of {:.0f}", f["h2d_gbps"].get<double>(), kLinkGbps) : "",
               fmt::format("{:.2f}", f["decode_ms_per_image"].get<double>()),
               fmt::format("{:.2f}", f["encode_ms_per_image"].get<double>()), r.verified ? "yes" : "WRONG"};
    if (f.contains("gray_difference_vs_cpu_decode")) {
      const auto& d = f["gray_difference_vs_cpu_decode"];
      t.notes.push_back(fmt::format("--decode gpu against the CPU decode: max {} levels, mean {:.3f} over {} pixels "
                                    "(tolerance {} and {})",
                                    d["max_levels"].get<int>(), d["mean_levels"].get<double>(),
                                    d["pixels"].get<std::uint64_t>(), gray::LevelDifference::kMaxLevels,
                                    gray::LevelDifference::kMeanLevels));
    }
    if (f.contains("failure"))
      fmt::print(stderr, "bench gray: {}: {}\n", r.name, f["failure"].get<std::string>());
  }
}

void run_gray(State& state) {
  const auto count = state.get<std::uint32_t>("images");
  const auto size = state.get<std::string>("size");
  std::uint32_t width = 0, height = 0;
  if (std::sscanf(size.c_str(), "%ux%u", &width, &height) != 2 || width == 0 || height == 0 || width > 65535 || height > 65535)
    throw ParameterError(fmt::format("--size '{}' is not of the form WxH (1-65535 each)", size));
  const auto in_format = io::parse_image_format(state.get<std::string>("input-format"));
  if (!in_format) throw ParameterError(fmt::format("--input-format '{}' is not png or jpeg", state.get<std::string>("input-format")));
  const auto out_format = io::parse_image_format(state.get<std::string>("format"));
  if (!out_format) throw ParameterError(fmt::format("--format '{}' is not png or jpeg", state.get<std::string>("format")));
  const bool have_gpu = Device::count() > 0;
  if (have_gpu) state.set_device(state.device(), Device(state.device()).name());
  const int threads = state.get<int>("threads") > 0 ? state.get<int>("threads")
                                                    : static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));

  gray_bench::ScratchDir scratch;
  Inputs in = generate(scratch.path() / "in", count, width, height, *in_format, threads);
  struct Variant {
    pipeline::Backend backend;
    gray::Decode decode;
    std::vector<int> devices;
  };
  const std::vector<int> first{state.device()};
  std::vector<Variant> variants;
  if (have_gpu) variants.push_back({pipeline::Backend::gpu, gray::Decode::cpu, first});
  // Every GPU --devices selected in one engine: the files spread over them.
  if (have_gpu && state.devices().size() > 1) variants.push_back({pipeline::Backend::gpu, gray::Decode::cpu, state.devices()});
  const bool gpu_decode = have_gpu && gray::gpu_decode_available() && *in_format == io::ImageFormat::jpeg;
  if (gpu_decode) variants.push_back({pipeline::Backend::gpu, gray::Decode::gpu, first});
  variants.push_back({pipeline::Backend::host, gray::Decode::cpu, first});  // last: the rows' yardstick
  Table t;
  t.name = "gray";
  t.title = fmt::format("bench gray: {} {}x{} photo-like {} files ({:.0f} MB) -> {} gray, whole tool run (read, decode, "
                        "luma, encode, atomic write) with {} worker threads, median of {} runs after {} warm-up; "
                        "codec bound = threads / host decode+encode ms per image; busy / wall = lanes (GPU: H2D + "
                        "kernel + D2H) busy over wall time",
                        count, width, height, io::to_string(*in_format), static_cast<double>(in.bytes) / 1e6,
                        io::to_string(*out_format), threads, state.runs(), state.warmup());
  t.headers = {"backend", "decode", "device", "images/s", "min", "max", "vs host", "codec bound", "% of bound",
               "busy / wall", "in GB/s", "decode ms", "encode ms", "ok"};
  t.align.assign(t.headers.size(), report::Align::right);
  t.align[0] = t.align[1] = t.align[2] = t.align[13] = report::Align::left;
  for (const auto& [backend, decoder, devices] : variants) {
    gray::Options o;
    o.backend = backend;
    o.devices = devices;
    o.threads = threads;
    o.lanes = state.get<int>("lanes");
    o.format = *out_format;
    o.png_compression = state.get<int>("compression");
    o.decode = decoder;
    const fs::path out_dir = scratch.path() / fmt::format("out-{}-{}-{}", pipeline::backend_name(backend),
                                                          gray::to_string(decoder), devices.size());
    t.rows.push_back(measure_variant(state, in, out_dir, o, *out_format));
  }
  add_cells(t);
  if (!have_gpu)
    t.notes.push_back(fmt::format("no GPU here ({}): the host backend alone was measured",
                                  Device::unavailable_reason().value_or("?")));
  if (have_gpu && !gpu_decode)
    t.notes.push_back(fmt::format("no --decode gpu row: {}", gray::gpu_decode_available() ? "the inputs are not JPEG"
                                                                                          : "this build has no nvJPEG"));
  state.result().fields = {{"images", count},       {"width", width},
                           {"height", height},      {"input_format", io::to_string(*in_format)},
                           {"input_bytes", in.bytes}, {"output_format", io::to_string(*out_format)},
                           {"threads", threads}};
  state.add_table(std::move(t));
}

}  // namespace

Benchmark gray_benchmark() {
  Benchmark b;
  b.name = "gray";
  b.description =
      "The gray tool end to end (read, decode, luma, encode, write) over generated photo-like images, "
      "GPU backend against the host backend with the same worker threads, in images/s, with the host "
      "codec bound and the share of the time the device was busy; with JPEG inputs and nvJPEG, the GPU backend "
      "with --decode gpu as well. Every output of every run is verified.";
  b.runs = 5;
  b.warmup = 1;  // a warm-up pass is a full run over every image
  b.mismatch = "outputs differ from the reference or files failed";
  using I = std::int64_t;
  b.parameters = {
      // 200 keeps the default run short; the GPU check runs 500.
      {"images", "number of generated images", I{200}, 1, 100000},
      {"size", "image size WxH", std::string("1920x1080")},
      {"input-format", "generated inputs: jpeg (quality 90) or png", std::string("jpeg")},
      {"format", "output format: png or jpeg", std::string("png")},
      {"compression", "PNG output zlib level 0-9 (the tool's --compression)", I{1}, 0, 9},
      {"threads", "worker threads for both backends; 0: hardware threads", I{0}, 0, 1024},
      {"lanes", "lanes (0: the tool's default)", I{0}, 0, 64},
  };
  b.run = run_gray;
  return b;
}

}  // namespace streampipe::bench
