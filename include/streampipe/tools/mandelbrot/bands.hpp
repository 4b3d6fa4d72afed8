// SPDX-License-Identifier: Apache-2.0
#pragma once
// One Mandelbrot image (or an MPI rank's rows of it) through the pipeline engine: the rows
// are cut into many bands, each band one engine item whose input is its RowBand and whose
// output is its escape counts, and the engine deals the bands out over its device set (the
// CPU's lane and every GPU by default, or simulated GPUs), each to the device expected to
// finish it first. Every band is computed with the whole image's coordinates, so the
// counts are those of the single-device image, bit for bit, wherever each band ran.

#include "streampipe/pipeline/engine.hpp"
#include "streampipe/report/latency_report.hpp"
#include "streampipe/tools/mandelbrot/compute.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace streampipe::tools::mandelbrot {

// `bands` contiguous bands covering rows [0, height) from the top: the first height % bands
// have one row more than the others, so sizes differ by one row at most (bands beyond the
// height have none). Throws std::invalid_argument for 0 bands.
[[nodiscard]] std::vector<RowBand> split_rows(std::uint32_t height, std::size_t bands);

// How many bands `rows` rows are cut into for a device set of `lanes` lanes in all (the
// CPU's and every GPU's): several per lane, never more than the rows, at least one.
[[nodiscard]] std::size_t band_count(std::uint32_t rows, std::size_t lanes) noexcept;

// The operation an engine applies to a band: the device form launches the escape kernel on
// the batch's stream into the batch's output (the kernel reads the band from the batch's
// input, in device memory); the host form computes the band with `host_threads` threads
// (0: every core), one row at a time to whichever is free. Either throws
// std::invalid_argument for an input that is not a RowBand or an output of another size.
[[nodiscard]] pipeline::Operation band_operation(const Params& params, Precision precision,
                                                 unsigned host_threads = 0);

struct BandRun {
  int device = -1;         // the GPU's index, the simulated GPU's, or pipeline::kCpuDevice
  RowBand band;
  double compute_ms = 0;   // the engine's figure for its item: GPU events, or the CPU's clock
  double d2h_ms = 0;       // its counts' copy back
};

// What one member of the set computed.
struct DeviceShare {
  int device = -1;         // as in BandRun
  bool simulated = false;  // a simulated GPU (host threads)
  int rank = 0;            // under mpirun, the rank it belongs to
  std::string name;        // "the CPU", "GPU 0 (NVIDIA H100 80GB HBM3)", "simulated GPU 1"
  std::string state;       // "ready", "failed", "not started", ...
  std::string reason;      // why it failed, was lost or was not started
  std::size_t bands = 0;
  std::size_t rows = 0;
};

struct BandsRun {
  std::vector<std::uint32_t> counts;  // the part's rows x width counts
  std::vector<BandRun> bands;         // in row order
  std::vector<DeviceShare> devices;   // each member of the set, the CPU first
  bool gpu_ran = false;               // a real GPU computed at least one band
  // The engine's timeline: the first band's compute start to the last band's compute end.
  double compute_ms = 0;
  // The part as one query, on the engine's clock from its first band's submission: enqueue
  // from the first band's to the last's, complete at the last delivery; with gpu_ran the
  // GPUs' stages (H2D and D2H: the time the copies took, overlaps counted once; compute:
  // the first kernel's start to the last one's end).
  report::QueryRecord query;
  std::string engine;                 // Engine::describe()
};

// `part` (rows of the image; empty: nothing to do) through an engine of `op` (band_operation,
// or one wrapping it) on `options`' device set, cut into band_count bands for its lanes (a
// GPU set found by the engine is counted now). The run's length and the callback are set
// here; the rest of `options` is used as given. Throws what the engine and the operation
// throw for a band that failed (the first one's error), std::invalid_argument for a part
// that leaves the image.
[[nodiscard]] BandsRun compute_bands(pipeline::Operation op, pipeline::EngineOptions options, const Params& params,
                                     RowBand part);

}  // namespace streampipe::tools::mandelbrot
