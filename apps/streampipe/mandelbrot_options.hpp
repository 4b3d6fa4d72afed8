// SPDX-License-Identifier: Apache-2.0
#pragma once
// `streampipe mandelbrot`'s options: as given (their registration with the subcommand), the
// library's tools::mandelbrot::Options made from them (the size, the view, the precision),
// and the image's path. Everything a user can get wrong is a UsageError naming the option.

#include "streampipe/tools/mandelbrot/run.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace streampipe::cli {

struct MandelbrotFlags {
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

// Adds every option but the --report ones to `app`, bound to `flags`.
void add_mandelbrot_flags(CLI::App& app, MandelbrotFlags& flags);
// The image's parameters and precision; the devices are the caller's to set.
[[nodiscard]] tools::mandelbrot::Options mandelbrot_options(const MandelbrotFlags& flags);
// The PNG's path, -o DIR / --image NAME (empty with --no-image). Throws UsageError for a
// folder that is a file (or looks like an image: -o used to name the image itself) and for
// a name with folders in it.
[[nodiscard]] std::string image_path_of(const MandelbrotFlags& flags);

}  // namespace streampipe::cli
