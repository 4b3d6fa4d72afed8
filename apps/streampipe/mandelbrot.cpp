// SPDX-License-Identifier: Apache-2.0
// `streampipe mandelbrot`: a PNG of the Mandelbrot set computed on the GPU in float or
// double (or on the host without a GPU), checked against the host double reference: the
// number of differing pixels is reported, and how many of them lie on escape boundaries.

#include "commands.hpp"
#include "devices_option.hpp"
#include "json_text.hpp"
#include "mandelbrot_ranks.hpp"
#include "memory_option.hpp"
#include "option_checks.hpp"
#include "outputs.hpp"
#include "ranks.hpp"
#include "report_option.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/report/json_schema.hpp"
#include "streampipe/io/image.hpp"
#include "streampipe/report/host_info.hpp"
#include "streampipe/tools/mandelbrot/compute.hpp"
#include "streampipe/tools/mandelbrot/bands.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <chrono>
#include <filesystem>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>

namespace streampipe::cli {
namespace {

namespace fs = std::filesystem;
using namespace streampipe::tools::mandelbrot;

struct MandelbrotOptions {
  std::string output_dir = ".";
  std::string image = "mandelbrot.png";
  bool no_image = false;
  std::string size = "1920x1080";
  std::string region;  // x0,x1,y0,y1
  std::string center;  // cx,cy
  double width = 0;    // with --center
  std::uint32_t iterations = 1000;
  std::string precision = "double";
  std::string backend = "auto";
  bool verify = true;
  bool force = false;
  bool allow_special = false;
  std::string devices = "all";
  std::string json_path;
  std::uint64_t max_memory_mib = 0;
};

std::vector<double> parse_numbers(const std::string& text, std::size_t count, const char* what) {
  std::vector<double> v;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    std::size_t used = 0;
    double d = 0;
    try {
      d = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size())
      throw UsageError(fmt::format("{} '{}': '{}' is not a number", what, text, item));
    if (!std::isfinite(d)) throw UsageError(fmt::format("{} '{}': '{}' is not a finite number", what, text, item));
    v.push_back(d);
  }
  if (v.size() != count) throw UsageError(fmt::format("{} '{}' needs {} comma-separated numbers", what, text, count));
  return v;
}

// The PNG's path, -o DIR / --image NAME (empty with --no-image). Throws UsageError for a
// folder that is a file (or looks like an image: -o used to name the image itself) and for
// a name with folders in it.
std::string image_path_of(const MandelbrotOptions& o) {
  if (o.no_image) return {};
  Outputs::check_dir("-o", o.output_dir);
  std::string ext = fs::path(o.output_dir).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".png" && !fs::is_directory(o.output_dir))
    throw UsageError(fmt::format("-o {}: -o is the folder the image is written into; name the image with --image",
                                 o.output_dir));
  const fs::path name(o.image);
  if (o.image.empty() || name.has_parent_path() || name.filename() != name || o.image == "." || o.image == "..")
    throw UsageError(fmt::format("--image '{}': give a file name (the folder is -o DIR)", o.image));
  return o.output_dir == "." ? o.image : (fs::path(o.output_dir) / name).string();
}

int run_mandelbrot(const MandelbrotOptions& o, const ReportOptions& report_options) {
  Params p;
  {
    const auto x = o.size.find('x');
    const auto digits = [](const std::string& s) {
      return !s.empty() && s.size() <= 6 && s.find_first_not_of("0123456789") == std::string::npos;
    };
    if (x == std::string::npos || !digits(o.size.substr(0, x)) || !digits(o.size.substr(x + 1)))
      throw UsageError(fmt::format("--size '{}' is not of the form WxH (at most 999999 each)", o.size));
    p.width = static_cast<std::uint32_t>(std::stoul(o.size.substr(0, x)));
    p.height = static_cast<std::uint32_t>(std::stoul(o.size.substr(x + 1)));
  }
  p.max_iterations = o.iterations;
  if (!o.region.empty() && !o.center.empty()) throw UsageError("give either --region or --center, not both");
  if (o.width != 0 && o.center.empty()) throw UsageError("--width is the view's width around --center: give --center");
  if (!o.region.empty()) {
    const auto r = parse_numbers(o.region, 4, "--region");
    p.region = Region{r[0], r[1], r[2], r[3]};
  } else if (!o.center.empty()) {
    const auto c = parse_numbers(o.center, 2, "--center");
    const double w = o.width > 0 ? o.width : 3.5;
    try {
      p.region = Region::centered(c[0], c[1], w, std::max(p.width, 1u), std::max(p.height, 1u));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  } else {
    p.region = Region::centered(-0.75, 0.0, 3.5, std::max(p.width, 1u), std::max(p.height, 1u));
  }
  try {
    p.validate();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const auto precision = parse_precision(o.precision);
  if (!precision) throw UsageError(fmt::format("--precision '{}' is not float or double", o.precision));
  Outputs out(o.force, o.allow_special);
  const std::string image_path = image_path_of(o);
  out.claim_regular("--image", image_path);  // io::write_image replaces it by a rename
  out.claim("--json", o.json_path);
  out.claim("--report-json", report_options.json_path);

  const DeviceChoice choice = resolve_gpu_devices(o.backend, o.devices);
  const bool use_gpu = choice.gpu();
  // On the host, before any of it is allocated: the escape counts (4 bytes a pixel), the
  // reference they are checked against, and the colour image with its encoding (3 + 3).
  check_memory(product({p.width, p.height, 4u + (o.verify ? 4u : 0u) + (image_path.empty() ? 0u : 6u)}),
               o.max_memory_mib, fmt::format("a {}x{} image", p.width, p.height),
               "try a smaller --size, --no-verify or --no-image");
  const Ranks& ranks = Ranks::get();
  if (ranks.several() && report_options.wanted())
    throw UsageError("--report describes one process: under mpirun, --json reports the whole image and every rank");

  std::vector<std::uint32_t> counts;
  double compute_ms = 0;
  std::string where = "host backend";
  std::vector<BandRun> bands;  // with several devices, simulated or not
  // The one query of --report: the whole image, one kernel per device.
  report::QueryRecord query;
  const auto t_submit = std::chrono::steady_clock::now();
  const auto since_submit = [t_submit] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_submit).count();
  };
  const double submit_epoch_ms =
      std::chrono::duration<double, std::milli>(t_submit.time_since_epoch()).count();
  std::vector<Device> gpus;
  for (const int index : use_gpu ? choice.devices : std::vector<int>{}) gpus.emplace_back(index);
  std::vector<std::string> gpu_names;
  std::string device_names;  // what --json and --report call the device: its name, or the names
  for (const auto& gpu : gpus) {
    gpu_names.push_back(fmt::format("{} ({})", gpu.index(), gpu.name()));
    device_names += (device_names.empty() ? "" : ", ") + gpu.name();
  }
  if (ranks.several()) {
    std::optional<RankedImage> ranked = compute_ranked(ranks, choice, p, *precision);
    if (!ranked) return ranks.job_status(0);  // its band went to rank 0, which checks and writes
    counts = std::move(ranked->run.counts);
    compute_ms = ranked->run.compute_ms;
    where = ranked->where;
    bands = std::move(ranked->run.bands);
  } else if (use_gpu || choice.simulated) {
    // Stream and buffer creation are setup, not part of the query.
    SpreadRun run = use_gpu ? compute_spread(gpus, p, *precision) : compute_spread_host(choice.devices, p, *precision);
    if (use_gpu)
      where = gpus.size() == 1 ? "GPU " + gpu_names[0]
                               : fmt::format("{} GPUs: {}", gpus.size(), fmt::join(gpu_names, ", "));
    else
      where = fmt::format("host backend, {} simulated device(s)", choice.devices.size());
    counts = std::move(run.counts);
    compute_ms = run.compute_ms;
    query.submit_ms = query.enqueue_begin_ms = run.enqueue_begin_ms - submit_epoch_ms;
    query.enqueue_end_ms = run.enqueue_end_ms - submit_epoch_ms;
    query.complete_ms = run.complete_ms - submit_epoch_ms;
    query.compute_ms = compute_ms;
    query.d2h_ms = std::accumulate(run.bands.begin(), run.bands.end(), 0.0,
                                   [](double m, const BandRun& b) { return std::max(m, b.d2h_ms); });
    if (run.bands.size() > 1 || choice.simulated) bands = std::move(run.bands);
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    counts = compute_host(p, *precision);
    compute_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    query.enqueue_begin_ms = query.enqueue_end_ms = 0;
    query.complete_ms = since_submit();
  }
  std::uint64_t total_iterations = 0;
  for (const auto c : counts) total_iterations += c;

  out.print("mandelbrot {}x{}, region x [{}, {}] y [{}, {}], {} iterations, {} on {}\n", p.width, p.height,
            p.region.x0, p.region.x1, p.region.y0, p.region.y1, p.max_iterations, to_string(*precision), where);
  out.print("  {:.2f} ms, {:.3g} pixel-iterations/s ({:.3g} pixels x max iterations / s)\n", compute_ms,
            static_cast<double>(total_iterations) / (compute_ms / 1e3),
            static_cast<double>(p.pixels()) * p.max_iterations / (compute_ms / 1e3));
  if (!bands.empty()) {
    if (ranks.several())
      out.print("  {} bands of rows, one per rank on its own GPU (or host); time: the slowest rank's band\n",
                bands.size());
    else if (use_gpu)
      out.print("  {} bands of rows, one per GPU, all launched before any was waited for; time: the first launch to "
                "the last band's end\n",
                bands.size());
    else
      out.print("  {} bands of rows, one per simulated device, one after another on the host's threads\n",
                bands.size());
    for (const auto& b : bands)
      out.print("    rows {}-{} ({}) on {} {}: {:.2f} ms compute{}\n", b.band.first_row,
                b.band.first_row + b.band.rows - (b.band.rows > 0 ? 1 : 0), b.band.rows,
                use_gpu ? "GPU" : (ranks.several() ? "the host, rank" : "simulated device"), b.device, b.compute_ms,
                use_gpu ? fmt::format(", {:.2f} ms copy back", b.d2h_ms) : std::string());
  }

  nlohmann::json j = {{"tool", "mandelbrot"},
                      {"width", p.width},
                      {"height", p.height},
                      {"region", {p.region.x0, p.region.x1, p.region.y0, p.region.y1}},
                      {"iterations", p.max_iterations},
                      {"precision", to_string(*precision)},
                      {"backend", use_gpu ? "gpu" : "host"},
                      {"device", use_gpu ? device_names : std::string("none")},
                      {"devices", nlohmann::json::array()},
                      {"host", report::describe_host()},
                      {"compute_ms", compute_ms},
                      {"iterations_total", total_iterations}};
  for (const auto& gpu : gpus) j["devices"].push_back({{"index", gpu.index()}, {"name", gpu.name()}});
  if (choice.simulated)
    for (const int d : choice.devices) j["devices"].push_back({{"index", d}, {"name", "simulated"}});
  if (!bands.empty()) {
    j["bands"] = nlohmann::json::array();
    for (const auto& b : bands)
      j["bands"].push_back({{"device", b.device}, {"first_row", b.band.first_row}, {"rows", b.band.rows},
                            {"compute_ms", b.compute_ms}, {"d2h_ms", b.d2h_ms}});
  }
  int status = 0;
  if (o.verify) {
    // The host's own whole-image double result is the reference; bands (simulated devices)
    // are checked against it like a GPU's.
    const bool is_reference = !use_gpu && !choice.simulated && *precision == Precision::double_;
    const auto reference = is_reference ? counts : compute_host(p, Precision::double_);
    const Comparison c = compare(reference, counts, p.width, p.height);
    out.print("  against the host double reference: {} pixel(s) differ ({:.4f}%), {} of them on escape boundaries, "
              "largest difference {} iterations\n",
              c.differing, 100.0 * static_cast<double>(c.differing) / static_cast<double>(p.pixels()),
              c.differing_boundary, c.max_difference);
    j["differing_pixels"] = c.differing;
    j["differing_boundary_pixels"] = c.differing_boundary;
    j["max_difference"] = c.max_difference;
    // Double must match exactly (same IEEE operations on both sides); a difference there
    // is a failure in the work.
    if (*precision == Precision::double_ && c.differing > 0) {
      fmt::print(stderr, "streampipe: double-precision result differs from the reference\n");
      status = 1;
    }
  }
  if (!image_path.empty()) {
    io::write_image(image_path, colorize(counts, p.width, p.height, p.max_iterations), io::ImageFormat::png, 90,
                    out.overwrite());
    out.print("  wrote {}\n", image_path);
  }
  out.write(o.json_path, json_text(report::stamped(j, "mandelbrot"), 2));
  if (report_options.wanted()) {
    report::LatencyRun run;
    run.name = fmt::format("mandelbrot {}x{}, {} iterations, {} on {}; query = one image", p.width, p.height,
                           p.max_iterations, to_string(*precision), where);
    run.device = use_gpu ? device_names : std::string("host");
    // cudaStreamSynchronize spins under the default scheduling; the host backend computes
    // on its own threads and joins them.
    run.sync = use_gpu ? report::SyncMode::spin : report::SyncMode::blocking;
    run.limits.iteration_limit = 1;
    run.wall_ms = query.complete_ms - query.submit_ms;
    run.queries.push_back(query);
    emit_report(report_options, run, "mandelbrot", out);
  }
  return ranks.several() ? ranks.job_status(status) : status;
}

Command add_mandelbrot(CLI::App& parent) {
  auto* sub = parent.add_subcommand(
      "mandelbrot",
      "Render the Mandelbrot set to a PNG on every GPU (or the CPU), checked against a double-precision "
      "reference on the host. See docs/mandelbrot.md.");
  auto o = std::make_shared<MandelbrotOptions>();
  sub->add_option("-o,--output-dir", o->output_dir, "write the image into DIR (created if needed)")
      ->capture_default_str()
      ->check(file_name())
      ->type_name("DIR");
  sub->add_option("--image", o->image, "the PNG's file name in that folder")->capture_default_str()->check(file_name());
  sub->add_flag("--no-image", o->no_image, "write no image (the figures, --json and --report only)");
  sub->add_option("--size", o->size, "image size in pixels")->capture_default_str()->type_name("WxH");
  sub->add_option("--region", o->region, "the real and imaginary ranges")->type_name("X0,X1,Y0,Y1");
  sub->add_option("--center", o->center, "the centre of the view (default -0.75,0)")->type_name("CX,CY");
  sub->add_option("--width", o->width, "width of the view in the complex plane, with --center (default 3.5)")
      ->check(finite_number())
      ->check(CLI::PositiveNumber);
  sub->add_option("-i,--iterations", o->iterations, "maximum iterations per pixel")->capture_default_str()
      ->transform(whole_number(1, 100000000));
  sub->add_option("--precision", o->precision, "float or double")->capture_default_str()->type_name("TYPE");
  sub->add_option("--backend", o->backend, "auto (GPU if present), gpu, or host")->capture_default_str()->type_name("WHERE");
  sub->add_flag("!--no-verify", o->verify, "skip the comparison with the host double reference");
  sub->add_flag("--force", o->force, "replace existing output files");
  add_allow_special_outputs(*sub, o->allow_special);
  add_devices_option(*sub, o->devices,
                     "GPUs to spread the image over, a band of rows each: all, or indices (e.g. 0,2); with "
                     "--backend host, simulated ones");
  sub->add_option("--json", o->json_path, "also write the figures as JSON to FILE ('-': standard output alone)")
      ->check(file_name());
  add_max_memory_option(*sub, o->max_memory_mib);
  auto report = add_report_options(*sub, "the whole image, one kernel per device: no H2D; compute between events "
                                           "on one GPU, first launch -> last band's end on several; enqueue -> counts "
                                           "on the host");
  set_examples(*sub, {"streampipe mandelbrot", "streampipe mandelbrot --size 3840x2160 --precision float",
                      "streampipe mandelbrot --center -0.743,0.131 --width 0.01 -i 5000 -o renders/ --image zoom.png"});
  return {sub, [o, report] { return run_mandelbrot(*o, *report); }};
}

}  // namespace

STREAMPIPE_COMMAND(add_mandelbrot);

}  // namespace streampipe::cli
