// SPDX-License-Identifier: Apache-2.0
#pragma once
// A Mandelbrot run, the library call behind `streampipe mandelbrot`: the image cut into bands
// of rows that the pipeline engine deals out over its device set (the CPU's lane and every
// GPU by default: tools/mandelbrot/bands.hpp), or under mpirun a part of the rows per rank,
// each dealt by the rank's own engine and gathered to rank 0; then checked against the
// host's double reference. report.hpp turns the Summary into the text, the JSON and the
// latency report.
//
// run() is collective under mpirun (every rank calls it once). It throws what the engine,
// the devices and the kernels throw (CudaError, std::bad_alloc), and std::runtime_error for
// a rank's part of the wrong size.

#include "streampipe/mpi/job.hpp"
#include "streampipe/report/latency_report.hpp"
#include "streampipe/tools/mandelbrot/bands.hpp"
#include "streampipe/tools/mandelbrot/compute.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace streampipe::tools::mandelbrot {

// The engine settings a run starts from: 4 lanes per GPU; the CPU as one lane whose bands
// use every core (see run.cpp for why); depth 2.
[[nodiscard]] pipeline::EngineOptions tool_engine_defaults();

struct Options {
  Params params;  // validated
  Precision precision = Precision::double_;
  // Where the bands run: backend, devices and simulate_gpus (the CPU and every usable GPU by
  // default; under mpirun the rank's own GPU). The lanes, depth and worker threads are used
  // as given (defaults: tool_engine_defaults()); the run's length and callback are run()'s.
  pipeline::EngineOptions engine = tool_engine_defaults();
  bool verify = true;        // compare with the host's double reference
  const mpi::Job* job = &mpi::Job::single();
};

struct Summary {
  // false on the ranks other than 0: their bands went to rank 0, which checks and reports.
  bool reports = true;
  std::vector<std::uint32_t> counts;  // the whole image's escape counts
  // The first band's compute start to the last band's end; under mpirun the slowest rank's.
  double compute_ms = 0;
  std::uint64_t total_iterations = 0;
  std::string where;                  // "GPU 0 (NVIDIA H100 ...)", "the CPU and GPU 0 (...)", "3 ranks (...)"
  std::string device;                 // the names of the GPUs that computed bands, or "none"
  bool gpu_ran = false;               // a real GPU computed bands (some rank's, under mpirun)
  std::vector<BandRun> bands;         // every band, in row order
  std::vector<DeviceShare> devices;   // every member of every set (each rank's, under mpirun)
  std::string engine;                 // the engine's description (rank 0's under mpirun)
  std::optional<Comparison> comparison;  // with Options::verify
  // The one query of the latency report: the whole image, ms from its first band's
  // submission (bands.hpp's BandsRun::query; empty under mpirun).
  report::QueryRecord query;

  // Double must match the reference exactly (the same IEEE operations on both sides): a
  // difference there is a failure in the work.
  [[nodiscard]] bool double_differs(const Options& o) const noexcept {
    return o.precision == Precision::double_ && comparison && comparison->differing > 0;
  }
};

[[nodiscard]] Summary run(const Options& options);

}  // namespace streampipe::tools::mandelbrot
