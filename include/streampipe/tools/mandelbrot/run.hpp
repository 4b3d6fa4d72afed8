// SPDX-License-Identifier: Apache-2.0
#pragma once
// A Mandelbrot run, the library call behind `streampipe mandelbrot`: the image computed on the
// GPUs (a band of rows each, all launched before any is waited for), on the host backend
// (whole, or in bands for simulated devices), or under mpirun a band per rank gathered to rank
// 0; then checked against the host's double reference. report.hpp turns the Summary into the
// text, the JSON and the latency report.
//
// run() is collective under mpirun (every rank calls it once). It throws what the devices and
// kernels throw (CudaError, std::bad_alloc), and std::runtime_error for a rank's band of the
// wrong size.

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

struct Options {
  Params params;  // validated
  Precision precision = Precision::double_;
  bool gpu = false;          // on the GPUs `devices`; else the host backend
  std::vector<int> devices;  // the GPUs, or with `simulated` the host's simulated devices
  bool simulated = false;
  bool verify = true;        // compare with the host's double reference
  const mpi::Job* job = &mpi::Job::single();
};

struct Summary {
  // false on the ranks other than 0: their bands went to rank 0, which checks and reports.
  bool reports = true;
  std::vector<std::uint32_t> counts;  // the whole image's escape counts
  double compute_ms = 0;              // under mpirun: the slowest rank's band
  std::uint64_t total_iterations = 0;
  std::string where;                  // "GPU 0 (NVIDIA H100 ...)", "host backend", "3 ranks (...)"
  std::string device;                 // the GPUs' names, or "none" on the host
  std::vector<std::pair<int, std::string>> gpus;  // this process's GPUs: index, name
  std::vector<BandRun> bands;         // with several devices (simulated or not) or ranks
  std::optional<Comparison> comparison;  // with Options::verify
  // The one query of the latency report: the whole image, ms from its submission.
  report::QueryRecord query;

  // Double must match the reference exactly (the same IEEE operations on both sides): a
  // difference there is a failure in the work.
  [[nodiscard]] bool double_differs(const Options& o) const noexcept {
    return o.precision == Precision::double_ && comparison && comparison->differing > 0;
  }
};

[[nodiscard]] Summary run(const Options& options);

}  // namespace streampipe::tools::mandelbrot
