// SPDX-License-Identifier: Apache-2.0
// `streampipe bench gray`: the whole gray tool (read + decode, luma, encode + atomic write)
// over a folder of generated photo-like images, on the GPU backend and on the host backend
// with the same worker threads (the CPU-only run of the same tool), in images/s. With JPEG
// inputs, a build with nvJPEG and a GPU, a third row runs the GPU backend with --decode gpu
// (workers only read the files; nvJPEG decodes on the lanes).
//
// Limits: the host codec bound (worker threads / host decode+encode ms per image - the rate
// if the workers did nothing but codec work, which both backends share) and, for the GPU,
// the share of the wall time the device was busy (union of H2D, kernel and D2H on all
// lanes) with the H2D rate against the link. Generation and verification are not timed;
// outputs are deleted before every run and every output of every run is compared with the
// host reference of its decoded input (exactly for PNG, PSNR >= 30 dB for JPEG; --decode gpu
// PNG outputs within the documented tolerance of the CPU decode: max 8, mean 0.5 levels).

#include "commands.hpp"
#include "gray_report.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/report/atomic_file.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"
#include "streampipe/report/host_info.hpp"
#include "streampipe/report/statistics.hpp"
#include "streampipe/report/table.hpp"
#include "streampipe/tools/gray.hpp"
#include "streampipe/tools/gray_decode.hpp"
#include "streampipe/tools/gray_pixels.hpp"
#include "streampipe/tools/gray_synthetic.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace streampipe::cli {
namespace {

namespace fs = std::filesystem;
namespace gray = streampipe::tools::gray;

struct GrayBenchOptions {
  std::uint32_t images = 200;  // the GPU check runs 500; 200 keeps the default run short
  std::string size = "1920x1080";
  std::string input_format = "jpeg";
  std::string output_format = "png";
  int compression = 1;
  int threads = 0;
  int lanes = 0;
};

// Runs fn(i) for i in [0, n) on `threads` threads; the first exception is rethrown.
template <typename F>
void parallel_for(std::size_t n, int threads, F&& fn) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex m;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < n; i = next++) {
        try {
          fn(i);
        } catch (...) {
          std::lock_guard lock(m);
          if (!error) error = std::current_exception();
          next = n;
        }
      }
    });
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

class ScratchDir {
 public:
  ScratchDir() : path_(fs::temp_directory_path() / fmt::format("streampipe-bench-gray-{}", ::getpid())) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const fs::path& path() const noexcept { return path_; }

 private:
  fs::path path_;
};

// Empty string when the output matches the reference, else why not. `diff` (--decode gpu
// with PNG outputs) collects the difference and applies the tolerance instead of equality.
std::string check_output(const fs::path& output, const std::vector<std::uint8_t>& want, io::ImageFormat format,
                         gray::LevelDifference* diff = nullptr) {
  const io::Image got = io::read_image(output);
  if (got.channels != 1 || got.bit_depth != 8 || got.pixels.size() != want.size())
    return fmt::format("{}: {} channel(s), {}-bit, {} bytes; expected 8-bit gray of {} bytes", output.string(),
                       got.channels, got.bit_depth, got.pixels.size(), want.size());
  if (format == io::ImageFormat::png && diff != nullptr) {
    gray::LevelDifference d;
    d.add(got.pixels, want);
    diff->add(d);
    if (!d.within_tolerance())
      return fmt::format("{}: differs from the CPU decode's result by up to {} levels, {:.3f} on average (tolerance "
                         "{} and {})",
                         output.string(), d.max, d.mean(), gray::LevelDifference::kMaxLevels,
                         gray::LevelDifference::kMeanLevels);
    return {};
  }
  if (format == io::ImageFormat::png) {
    for (std::size_t i = 0; i < want.size(); ++i)
      if (got.pixels[i] != want[i])
        return fmt::format("{}: pixel {} is {}, expected {}", output.string(), i, got.pixels[i], want[i]);
    return {};
  }
  double se = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = static_cast<int>(got.pixels[i]) - static_cast<int>(want[i]);
    se += d * d;
  }
  const double mse = se / static_cast<double>(want.size());
  const double psnr = mse > 0 ? 10 * std::log10(255.0 * 255.0 / mse) : 99;
  return psnr >= 30 ? std::string() : fmt::format("{}: PSNR {:.1f} dB against the reference (< 30)", output.string(), psnr);
}

struct Row {
  std::string backend;
  std::string decode = "cpu";
  std::string device;
  report::Summary images_per_s;
  report::Summary device_share;
  double decode_ms_per_image = 0, encode_ms_per_image = 0;  // medians over runs
  double h2d_gbps = 0;
  int threads = 0;
  nlohmann::json last_run;
  bool verified = true;
  std::string failure;
  gray::LevelDifference diff;  // --decode gpu, PNG outputs: against the CPU decode, over every timed run
};

int run_bench_gray(const BenchOptions& bo, const GrayBenchOptions& g) {
  std::uint32_t width = 0, height = 0;
  if (std::sscanf(g.size.c_str(), "%ux%u", &width, &height) != 2 || width == 0 || height == 0 || width > 65535 ||
      height > 65535)
    throw UsageError(fmt::format("--size '{}' is not of the form WxH (1-65535 each)", g.size));
  const auto in_format = io::parse_image_format(g.input_format);
  if (!in_format) throw UsageError(fmt::format("--input-format '{}' is not png or jpeg", g.input_format));
  const auto out_format = io::parse_image_format(g.output_format);
  if (!out_format) throw UsageError(fmt::format("--format '{}' is not png or jpeg", g.output_format));
  const bool have_gpu = Device::count() > 0;
  if (have_gpu && bo.device >= Device::count())
    throw UsageError(fmt::format("--device {}: this machine has {} GPU(s)", bo.device, Device::count()));
  const int threads = g.threads > 0 ? g.threads : static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));

  ScratchDir scratch;
  const fs::path in_dir = scratch.path() / "in";
  fs::create_directories(in_dir);
  std::vector<gray::Job> jobs(g.images);
  std::vector<std::vector<std::uint8_t>> reference(g.images);
  std::atomic<std::uint64_t> in_bytes{0};
  fmt::print(stderr, "bench gray: generating {} photo-like {}x{} {} images...\n", g.images, width, height,
             io::to_string(*in_format));
  parallel_for(g.images, threads, [&](std::size_t i) {
    const io::Image rgb = gray::photo_like(width, height, static_cast<std::uint32_t>(i + 1));
    const auto data = *in_format == io::ImageFormat::jpeg ? io::encode_jpeg(rgb, 90) : io::encode_png(rgb);
    jobs[i].input = in_dir / fmt::format("img-{:04}.{}", i, *in_format == io::ImageFormat::jpeg ? "jpg" : "png");
    report::write_file_atomically(jobs[i].input, data);
    in_bytes += data.size();
    // The reference starts from what the tool will decode (JPEG is lossy).
    const io::Image decoded = io::decode_image(data, {}, jobs[i].input.string());
    std::vector<std::uint8_t> rgb8(gray::rgb8_bytes(decoded));
    gray::to_rgb8(decoded, rgb8);
    reference[i].resize(rgb8.size() / 3);
    ops::rgb_to_gray_host(rgb8, reference[i]);
  });

  std::vector<std::pair<pipeline::Backend, gray::Decode>> variants;
  if (have_gpu) variants.emplace_back(pipeline::Backend::gpu, gray::Decode::cpu);
  const bool gpu_decode = have_gpu && gray::gpu_decode_available() && *in_format == io::ImageFormat::jpeg;
  if (gpu_decode) variants.emplace_back(pipeline::Backend::gpu, gray::Decode::gpu);
  variants.emplace_back(pipeline::Backend::host, gray::Decode::cpu);  // last: the rows' yardstick
  std::vector<Row> rows;
  for (const auto& [backend, decoder] : variants) {
    Row row;
    row.backend = pipeline::backend_name(backend);
    row.decode = gray::to_string(decoder);
    row.threads = threads;
    const fs::path out_dir = scratch.path() / fmt::format("out-{}-{}", row.backend, row.decode);
    for (auto& j : jobs) j.output = out_dir / j.input.filename().replace_extension(gray::output_extension(*out_format));
    gray::Options o;
    o.backend = backend;
    o.device = bo.device;
    o.threads = threads;
    o.lanes = g.lanes;
    o.format = *out_format;
    o.png_compression = g.compression;
    o.decode = decoder;
    std::vector<double> rates, shares, decode, encode, h2d;
    for (int r = 0; r < bo.warmup + bo.runs; ++r) {
      fs::remove_all(out_dir);  // no output of an earlier run can pass the check
      fmt::print(stderr, "bench gray: {} backend, {} decode, {} run {}...\n", row.backend, row.decode,
                 r < bo.warmup ? "warm-up" : "timed", r < bo.warmup ? r + 1 : r - bo.warmup + 1);
      const gray::RunSummary s = gray::convert(jobs, o);
      row.device = s.device;
      std::mutex m;
      if (s.failed > 0) {
        row.verified = false;
        for (const auto& f : s.files)
          if (!f.ok && row.failure.empty()) row.failure = f.error;
      } else {
        gray::LevelDifference run_diff;
        parallel_for(jobs.size(), threads, [&](std::size_t i) {
          gray::LevelDifference file_diff;
          const std::string why = check_output(jobs[i].output, reference[i], *out_format,
                                               decoder == gray::Decode::gpu ? &file_diff : nullptr);
          std::lock_guard lock(m);
          run_diff.add(file_diff);
          if (!why.empty()) {
            row.verified = false;
            if (row.failure.empty()) row.failure = why;
          }
        });
        if (decoder == gray::Decode::gpu && s.gpu_decoded != jobs.size()) {
          row.verified = false;
          if (row.failure.empty())
            row.failure = fmt::format("--decode gpu: nvJPEG decoded {} of {} files", s.gpu_decoded, jobs.size());
        }
        if (r >= bo.warmup) row.diff.add(run_diff);
      }
      if (r < bo.warmup) continue;
      const auto t = gray::split_time(s.records, s.wall_ms);
      rates.push_back(s.images_per_s());
      shares.push_back(t.device_share());
      decode.push_back(t.decode_ms / static_cast<double>(jobs.size()));
      encode.push_back(t.encode_ms / static_cast<double>(jobs.size()));
      h2d.push_back(static_cast<double>(s.timeline.bytes_in) / 1e6 / s.wall_ms);
      row.last_run = gray_run_json(s, false);
    }
    row.images_per_s = report::summarize(rates);
    row.device_share = report::summarize(shares);
    row.decode_ms_per_image = report::percentile(decode, 0.5);
    row.encode_ms_per_image = report::percentile(encode, 0.5);
    row.h2d_gbps = report::percentile(h2d, 0.5);
    rows.push_back(std::move(row));
  }

  const double host_rate = rows.back().images_per_s.median;
  const double link_gbps = 55.0;  // pinned H2D, DESIGN.md (H100, PCIe Gen5 x16)
  report::Table table({"backend", "decode", "device", "images/s", "min", "max", "vs host", "codec bound", "% of bound",
                       "busy / wall", "in GB/s", "decode ms", "encode ms", "ok"},
                      {report::Align::left, report::Align::left, report::Align::left, report::Align::right,
                       report::Align::right,
                       report::Align::right, report::Align::right, report::Align::right, report::Align::right,
                       report::Align::right, report::Align::right, report::Align::right, report::Align::right,
                       report::Align::left});
  nlohmann::json results = nlohmann::json::array();
  bool all_ok = true;
  for (const auto& r : rows) {
    const double per_image = r.decode_ms_per_image + r.encode_ms_per_image;
    const double bound = per_image > 0 ? r.threads * 1e3 / per_image : 0;
    table.add_row({r.backend, r.decode == "gpu" ? "gpu (nvJPEG)" : "cpu", r.device,
                   fmt::format("{:.1f}", r.images_per_s.median),
                   fmt::format("{:.1f}", r.images_per_s.min), fmt::format("{:.1f}", r.images_per_s.max),
                   fmt::format("{:.2f}x", r.images_per_s.median / host_rate), fmt::format("{:.1f}", bound),
                   bound > 0 ? fmt::format("{:.0f}%", 100 * r.images_per_s.median / bound) : "n/a",
                   fmt::format("{:.1f}%", 100 * r.device_share.median),
                   r.backend == "gpu" ? fmt::format("{:.2f} of {:.0f}", r.h2d_gbps, link_gbps) : "",
                   fmt::format("{:.2f}", r.decode_ms_per_image), fmt::format("{:.2f}", r.encode_ms_per_image),
                   r.verified ? "yes" : "WRONG"});
    all_ok = all_ok && r.verified;
    nlohmann::json j = {{"backend", r.backend},
                        {"decode", r.decode},
                        {"device", r.device},
                        {"threads", r.threads},
                        {"images_per_s", r.images_per_s},
                        {"speedup_vs_host", r.images_per_s.median / host_rate},
                        {"host_codec_bound_images_per_s", bound},
                        {"device_busy_share", r.device_share},
                        {"decode_ms_per_image", r.decode_ms_per_image},
                        {"encode_ms_per_image", r.encode_ms_per_image},
                        {"verified", r.verified},
                        {"last_run", r.last_run}};
    if (r.backend == "gpu") j["h2d_gbps"] = r.h2d_gbps, j["link_gbps"] = link_gbps;
    if (!r.failure.empty()) j["failure"] = r.failure;
    if (r.diff.count > 0)
      j["gray_difference_vs_cpu_decode"] = {{"max_levels", r.diff.max},
                                            {"mean_levels", r.diff.mean()},
                                            {"pixels", r.diff.count},
                                            {"tolerance_max", gray::LevelDifference::kMaxLevels},
                                            {"tolerance_mean", gray::LevelDifference::kMeanLevels}};
    results.push_back(j);
  }
  const std::string gpu_name = have_gpu ? Device(bo.device).name() : std::string("none");
  fmt::print("{}", table.str(fmt::format(
                       "bench gray: {} {}x{} photo-like {} files ({:.0f} MB) -> {} gray, whole tool run (read, decode, "
                       "luma, encode, atomic write) with {} worker threads, median of {} runs after {} warm-up; "
                       "codec bound = threads / host decode+encode ms per image; busy / wall = lanes (GPU: H2D + "
                       "kernel + D2H) busy over wall time",
                       g.images, width, height, io::to_string(*in_format), static_cast<double>(in_bytes.load()) / 1e6,
                       io::to_string(*out_format), threads, bo.runs, bo.warmup)));
  if (!have_gpu)
    fmt::print("no GPU here ({}): the host backend alone was measured\n", Device::unavailable_reason().value_or("?"));
  for (const auto& r : rows)
    if (r.diff.count > 0)
      fmt::print("--decode gpu against the CPU decode: max {} levels, mean {:.3f} over {} pixels (tolerance {} and "
                 "{})\n",
                 r.diff.max, r.diff.mean(), r.diff.count, gray::LevelDifference::kMaxLevels,
                 gray::LevelDifference::kMeanLevels);
  if (have_gpu && !gpu_decode)
    fmt::print("no --decode gpu row: {}\n", gray::gpu_decode_available() ? "the inputs are not JPEG"
                                                                          : "this build has no nvJPEG");
  for (const auto& r : rows)
    if (!r.failure.empty())
      fmt::print(stderr, "bench gray: {} backend, {} decode: {}\n", r.backend, r.decode, r.failure);
  if (!bo.json_path.empty()) {
    nlohmann::json out = {{"benchmark", "gray"},
                          {"device", {{"index", bo.device}, {"name", gpu_name}}},
                          {"host", report::describe_host()},
                          {"images", g.images},
                          {"width", width},
                          {"height", height},
                          {"input_format", io::to_string(*in_format)},
                          {"input_bytes", in_bytes.load()},
                          {"output_format", io::to_string(*out_format)},
                          {"threads", threads},
                          {"runs", bo.runs},
                          {"warmup", bo.warmup},
                          {"results", results}};
    report::write_file_atomically(bo.json_path, out.dump(2) + "\n");
  }
  if (!all_ok) {
    fmt::print(stderr, "bench gray: outputs differ from the reference or files failed\n");
    return 1;
  }
  return 0;
}

Command add_bench_gray(CLI::App& parent) {
  auto* sub = parent.add_subcommand(
      "gray",
      "The gray tool end to end (read, decode, luma, encode, write) over generated photo-like images, "
      "GPU backend against the host backend with the same worker threads, in images/s, with the host "
      "codec bound and the share of the time the device was busy; with JPEG inputs and nvJPEG, the GPU backend "
      "with --decode gpu as well. Every output of every run is verified.");
  auto bo = add_bench_options(*sub, 5);
  bo->warmup = 1;  // a warm-up pass is a full run over every image
  sub->get_option("--warmup")->default_str("1");
  auto g = std::make_shared<GrayBenchOptions>();
  sub->add_option("--images", g->images, "number of generated images")->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  sub->add_option("--size", g->size, "image size WxH")->capture_default_str();
  sub->add_option("--input-format", g->input_format, "generated inputs: jpeg (quality 90) or png")->capture_default_str();
  sub->add_option("--format", g->output_format, "output format: png or jpeg")->capture_default_str();
  sub->add_option("--compression", g->compression, "PNG output zlib level 0-9 (the tool's --compression)")
      ->capture_default_str()->check(CLI::Range(0, 9));
  sub->add_option("--threads", g->threads, "worker threads for both backends; 0: hardware threads")
      ->capture_default_str()->check(CLI::Range(0, 1024));
  sub->add_option("--lanes", g->lanes, "lanes (0: the tool's default)")->capture_default_str()->check(CLI::Range(0, 64));
  return {sub, [bo, g] { return run_bench_gray(*bo, *g); }};
}

}  // namespace

STREAMPIPE_BENCHMARK(add_bench_gray);

}  // namespace streampipe::cli
