// SPDX-License-Identifier: Apache-2.0
#pragma once
// The classic stream experiments, side by side with what a user would write instead:
//   gray     N RGB 1920x1080 images -> gray: naive loop, one stream per image, engine
//   arrays   N arrays x 1M floats, the single-block 64-thread kernel: naive, stream per array, engine
//   chunked  one large array through a light kernel: lanes x chunk sizes
//   overhead many tiny items: host time per item, batched and not
// Every output is poisoned before and verified after each run; times are medians of wall
// clock around a synchronized run. Used by `streampipe bench streams` and `demo`.

#include <nlohmann/json.hpp>

#include <string>

namespace streampipe::cli {

struct StreamExperimentConfig {
  std::string which = "all";  // all | gray | arrays | chunked | overhead
  int device = 0;
  int runs = 7;
  int warmup = 2;
  int images = 64;
  int arrays = 200;
  std::size_t chunked_mib = 1024;
  int overhead_items = 20000;
  int lanes = 0;         // 0: each experiment's own choice
  int batch = 0;         // arrays per launch for the engine in `arrays` (0: chosen)
  int depth = 0;         // staging slots per lane for the engine rows (0: chosen)
  int host_threads = 0;  // engine staging workers (0: one per core)
  int staging_mib = -1;  // engine input staging budget (-1: the engine's default; 0: a block per slot)
  std::string trace_dir; // where to write Chrome traces and SVG Gantt charts of engine runs
};

// Prints one table per experiment; returns the results as JSON. Sets `all_verified` false
// when any output did not match its reference.
nlohmann::json run_stream_experiments(const StreamExperimentConfig& config, bool& all_verified);

}  // namespace streampipe::cli
