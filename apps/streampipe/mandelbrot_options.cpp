// SPDX-License-Identifier: Apache-2.0
#include "mandelbrot_options.hpp"

#include "commands.hpp"
#include "devices_option.hpp"
#include "memory_option.hpp"
#include "option_checks.hpp"
#include "outputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace streampipe::cli {
namespace {

namespace fs = std::filesystem;
using namespace streampipe::tools::mandelbrot;

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

}  // namespace

void add_mandelbrot_flags(CLI::App& app, MandelbrotFlags& o) {
  app.add_option("-o,--output-dir", o.output_dir, "write the image into DIR (created if needed)")
      ->capture_default_str()
      ->check(file_name())
      ->type_name("DIR");
  app.add_option("--image", o.image, "the PNG's file name in that folder")->capture_default_str()->check(file_name());
  app.add_flag("--no-image", o.no_image, "write no image (the figures, --json and --report only)");
  app.add_option("--size", o.size, "image size in pixels")->capture_default_str()->type_name("WxH");
  app.add_option("--region", o.region, "the real and imaginary ranges")->type_name("X0,X1,Y0,Y1");
  app.add_option("--center", o.center, "the centre of the view (default -0.75,0)")->type_name("CX,CY");
  app.add_option("--width", o.width, "width of the view in the complex plane, with --center (default 3.5)")
      ->check(finite_number())
      ->check(CLI::PositiveNumber);
  app.add_option("-i,--iterations", o.iterations, "maximum iterations per pixel")->capture_default_str()
      ->transform(whole_number(1, 100000000));
  app.add_option("--precision", o.precision, "float or double")->capture_default_str()->type_name("TYPE");
  app.add_option("--backend", o.backend,
                 "where the bands run: auto (the CPU and every GPU, each taking bands in proportion to its "
                 "speed), gpu (the GPUs alone) or host (the CPU alone)")
      ->capture_default_str()
      ->type_name("WHERE");
  app.add_flag("!--no-verify", o.verify, "skip the comparison with the host double reference");
  app.add_flag("--force", o.force, "replace existing output files");
  add_allow_special_outputs(app, o.allow_special);
  add_devices_option(app, o.devices,
                     "the GPUs the bands are dealt to: all, or indices (e.g. 0,2); with --backend host, "
                     "simulated GPUs (tests without a GPU)");
  app.add_option("--json", o.json_path, "also write the figures as JSON to FILE ('-': standard output alone)")
      ->check(file_name());
  add_max_memory_option(app, o.max_memory_mib);
}

tools::mandelbrot::Options mandelbrot_options(const MandelbrotFlags& o) {
  tools::mandelbrot::Options options;
  Params& p = options.params;
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
  options.precision = *precision;
  options.verify = o.verify;
  return options;
}

std::string image_path_of(const MandelbrotFlags& o) {
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

}  // namespace streampipe::cli
