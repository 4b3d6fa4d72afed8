// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal: the MLP layer's GEMM written for Hopper (sm_90a), for the batch sizes where
// cuBLASLt's kernels leave HBM half idle (see docs/batching.md, "GEMMs at small batch").
//
//   Y (rows x out) = act(X (rows x in) · W^T + bias),  W out x in;  all bf16, row-major,
//   fp32 accumulation, act = ReLU or identity.
//
// A CTA computes 128 output features x N batch rows (N = 64, 128 or 256; a batch taller
// than N is cut into row tiles, which read the same W) over 1/S of K. TMA streams tiles of W and X through a multi-stage pipeline
// into 128-byte-swizzled shared memory and two warpgroups multiply them with wgmma. The S
// CTAs of one output tile form a cluster: they sum their fp32 partials through distributed
// shared memory, each reducing 1/S of the rows, then add the bias, apply the activation and
// round to bf16. N and S are chosen so that the tiles x S CTAs fill the SMs in one wave.
//
// The pointers are fixed when the launch is prepared (the TMA descriptors hold them), so a
// prepared launch can be enqueued any number of times, inside a stream capture too.

#include "sm90_gemm_launch.hpp"
#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/stream.hpp"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace streampipe::serving::detail {

struct Sm90GemmShape {
  std::size_t in = 0, out = 0, rows = 0;
  bool relu = false;
};

// Why this kernel cannot run `shape` on `device` (not a compute capability 9.0 GPU, a size
// it does not tile, no CUDA driver); empty when it can.
[[nodiscard]] std::string sm90_gemm_unsupported(const Device& device, const Sm90GemmShape& shape);

// A way to tile and split `shape`: tiles of N = `tile_rows` batch rows (`row_tiles` of them);
// K split over `cluster` CTAs per cluster, which sum their partials in shared memory, and
// `groups` clusters per output tile, which sum theirs through a workspace.
struct Sm90Split {
  int cluster = 1, groups = 1;
  int tiles = 0;              // output tiles: out / 128
  int tile_rows = 256;        // N
  int row_tiles = 1;          // ceil(rows / N)
  int resident_clusters = 0;  // clusters of this size the device holds at once
  [[nodiscard]] int split() const noexcept { return cluster * groups; }
  [[nodiscard]] int ctas() const noexcept { return tiles * row_tiles * split(); }
  [[nodiscard]] bool one_wave() const noexcept { return resident_clusters >= tiles * row_tiles * groups; }
  friend bool operator==(const Sm90Split&, const Sm90Split&) = default;
};

// Every split with cluster x groups <= 8 dividing K into whole stages that can run at all,
// for every tile height from the smallest that holds `rows` in one tile down to 64.
[[nodiscard]] std::vector<Sm90Split> sm90_gemm_splits(const Device& device, const Sm90GemmShape& shape);
// The default: one row tile (the smallest N that holds `rows`) and the largest split that
// runs in one wave on no more CTAs than SMs (the larger cluster on a tie). Throws
// std::invalid_argument when there is none.
[[nodiscard]] Sm90Split sm90_gemm_default_split(const Device& device, const Sm90GemmShape& shape);

// Scratch for splits with groups > 1, shared by the GEMMs of one stream (they run one at a
// time): fp32 slots and arrival counters, which every launch leaves at zero. The owning
// Sm90Workspace hands out the non-owning Sm90WorkspaceRef.
struct Sm90WorkspaceRef {
  float* slots = nullptr;
  std::size_t slot_floats = 0;
  unsigned* counters = nullptr;
  std::size_t counter_count = 0;
};

class Sm90Workspace {
 public:
  Sm90Workspace() = default;
  // Room for any split and tiling of layers up to `max_out` features at up to 256 rows; the counters
  // are zeroed on `stream`, before anything enqueued on it later.
  Sm90Workspace(StreamRef stream, std::size_t max_out);
  [[nodiscard]] Sm90WorkspaceRef ref() const noexcept;

 private:
  DeviceBuffer<float> slots_;
  DeviceBuffer<unsigned> counters_;
};

class Sm90Gemm {
 public:
  // Throws std::invalid_argument when sm90_gemm_unsupported() says why, for a split that
  // sm90_gemm_splits() does not offer, or when `workspace` is too small for it.
  Sm90Gemm(const Device& device, const Sm90GemmShape& shape, const Sm90Split& split, const std::uint16_t* weights,
           const std::uint16_t* bias, const std::uint16_t* x, std::uint16_t* y, Sm90WorkspaceRef workspace);

  // One launch on `stream` (which must belong to the device); no host synchronization.
  void enqueue(StreamRef stream) const;

  [[nodiscard]] int tile_rows() const noexcept { return launch_.tile_rows; }  // N
  [[nodiscard]] const Sm90Split& split() const noexcept { return split_; }
  [[nodiscard]] int stages() const noexcept;
  // e.g. "128x128 tile x 2 row tiles, K split 2x2 (cluster x groups), 6 stages"
  [[nodiscard]] std::string describe() const;

 private:
  int device_ = 0;
  Sm90Split split_;
  Sm90GemmLaunch launch_;
  CUtensorMap w_map_{}, x_map_{};
};

}  // namespace streampipe::serving::detail
