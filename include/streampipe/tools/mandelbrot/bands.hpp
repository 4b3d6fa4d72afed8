// SPDX-License-Identifier: Apache-2.0
#pragma once
// One Mandelbrot image spread over several devices: the image is cut into one contiguous
// band of rows per device, and every band is computed with the whole image's coordinates,
// so the counts are those of the single-device image, bit for bit.
//
// On GPUs each band gets its own stream and device buffer (made before anything is timed);
// every band's kernel is launched before any is waited for, so all GPUs work at once; once
// all are done each band is copied back into its rows of the one counts buffer. The same device may be
// named more than once: its bands then share it (a test runs two bands on GPU 0).

#include "streampipe/cuda/device.hpp"
#include "streampipe/tools/mandelbrot/compute.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace streampipe::tools::mandelbrot {

// `bands` contiguous bands covering rows [0, height) from the top: the first height % bands
// have one row more than the others, so sizes differ by one row at most (bands beyond the
// height have none). Throws std::invalid_argument for 0 bands.
[[nodiscard]] std::vector<RowBand> split_rows(std::uint32_t height, std::size_t bands);

struct BandRun {
  int device = 0;          // the GPU's index, or the simulated device's number
  RowBand band;
  double compute_ms = 0;   // GPU: the kernel between two events; host: the band's wall time
  double d2h_ms = 0;       // GPU: its copy into the counts between two events; host: 0
};

struct SpreadRun {
  std::vector<std::uint32_t> counts;  // the whole image, params.pixels() counts
  std::vector<BandRun> bands;         // one per device, in the devices' order
  // One device: its kernel's event time. Several: the host clock from the first launch to
  // the last band's completion (events of different GPUs cannot be compared).
  double compute_ms = 0;
  // The host's steady_clock in ms since its epoch (setup before enqueue_begin_ms):
  double enqueue_begin_ms = 0;  // the first band is enqueued
  double enqueue_end_ms = 0;    // every band's kernel is enqueued
  double complete_ms = 0;       // every band is in `counts`
};

// The image on `devices`, band i on devices[i]. Throws std::invalid_argument for no device,
// and what compute_device_rows and the CUDA calls throw.
[[nodiscard]] SpreadRun compute_spread(std::span<const Device> devices, const Params& params, Precision precision);

// The same with the bands given, band i on devices[i]: a part of the image (an MPI rank's
// rows); counts outside the bands are left 0. Throws std::invalid_argument unless there is
// one band per device, at least one, and what compute_spread throws.
[[nodiscard]] SpreadRun compute_bands(std::span<const Device> devices, std::span<const RowBand> bands,
                                      const Params& params, Precision precision);

// The host backend's version for simulated devices: band i (computed with every core, one
// band after another) is reported as run by simulated[i]. Throws std::invalid_argument for
// none.
[[nodiscard]] SpreadRun compute_spread_host(std::span<const int> simulated, const Params& params,
                                            Precision precision, unsigned threads = 0);
// The same with the bands given (compute_bands).
[[nodiscard]] SpreadRun compute_bands_host(std::span<const int> simulated, std::span<const RowBand> bands,
                                           const Params& params, Precision precision, unsigned threads = 0);

}  // namespace streampipe::tools::mandelbrot
