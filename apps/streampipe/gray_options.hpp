// SPDX-License-Identifier: Apache-2.0
#pragma once
// `streampipe gray`'s options: as given (their registration with the subcommand) and the
// library's tools::gray::Options made from them (format, codecs, limits, the engine's device
// set and the memory the decoded images may take). Everything a user can get wrong is a
// UsageError naming the option, before any file is read.

#include "engine_options.hpp"

#include "streampipe/io/decode_limits.hpp"
#include "streampipe/tools/gray/convert.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace streampipe::cli {

struct GrayFlags {
  std::vector<std::string> inputs;
  std::string output_dir;
  bool recursive = false;
  std::string format = "png";
  int quality = 90;
  int compression = 1;  // the fastest compression, as small on photos (docs/image-io.md)
  bool force = false;
  bool allow_special = false;
  std::string decode = "auto";
  std::string encode = "auto";
  EngineFlags engine;
  int group = 0;
  std::uint64_t max_pixels = io::DecodeLimits::kDefaultMaxPixels;
  bool quiet = false;
  bool verbose = false;
  std::string name{tools::gray::kDefaultOutputName};
  std::string json_path;
  std::string trace_path;
  std::string gantt_path;
  std::uint64_t max_memory_mib = 0;
};

// Adds every option but the --report ones to `app`, bound to `flags`.
void add_gray_flags(CLI::App& app, GrayFlags& flags);
// The conversion's options (engine included; not the stop token or the progress callback).
[[nodiscard]] tools::gray::Options gray_options(const GrayFlags& flags);

}  // namespace streampipe::cli
