// SPDX-License-Identifier: Apache-2.0
#include "sm90_gemm.hpp"

#include "../jit/driver.hpp"
#include "sm90_gemm_launch.hpp"
#include "streampipe/cuda/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace streampipe::serving::detail {
namespace {

int tile_rows_for(std::size_t rows) { return rows <= 64 ? 64 : rows <= 128 ? 128 : 256; }

// A row-major bf16 tensor of `outer` rows of `inner` elements, read in boxes of 64 x
// box_outer with 128-byte swizzle (the layout the kernel's wgmma descriptors describe).
// Rows past `outer` read as zeros.
CUtensorMap encode_map(const std::uint16_t* base, std::size_t inner, std::size_t outer, int box_outer) {
  const auto& api = jit::driver::api();
  CUtensorMap map{};
  const cuuint64_t dims[2] = {inner, outer};
  const cuuint64_t strides[1] = {inner * sizeof(std::uint16_t)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(kSm90TileK), static_cast<cuuint32_t>(box_outer)};
  const cuuint32_t element_strides[2] = {1, 1};
  SP_CU_CHECK(api.tensor_map_encode_tiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<std::uint16_t*>(base),
                                          dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                          CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

}  // namespace

std::string sm90_gemm_unsupported(const Device& device, const Sm90GemmShape& shape) {
  const auto& p = device.properties();
  if (p.major != 9 || p.minor != 0)
    return fmt::format("built for compute capability 9.0 (sm_90a); {} is {}.{}", p.name, p.major, p.minor);
  if (shape.rows == 0 || shape.rows > 256) return fmt::format("{} rows: 1 to 256 only", shape.rows);
  if (shape.out == 0 || shape.out % kSm90TileOut != 0)
    return fmt::format("{} output features: a multiple of {} only", shape.out, kSm90TileOut);
  if (shape.in == 0 || shape.in % kSm90TileK != 0)
    return fmt::format("{} input features: a multiple of {} only", shape.in, kSm90TileK);
  try {
    if (jit::driver::api().tensor_map_encode_tiled == nullptr) return "the CUDA driver has no cuTensorMapEncodeTiled";
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

std::vector<Sm90Split> sm90_gemm_splits(const Device& device, const Sm90GemmShape& shape) {
  std::vector<Sm90Split> splits;
  if (!sm90_gemm_unsupported(device, shape).empty()) return splits;
  const CurrentDeviceGuard guard(device);
  const auto tiles = static_cast<int>(shape.out / kSm90TileOut);
  const auto rows = static_cast<int>(shape.rows);
  for (int n = tile_rows_for(shape.rows); n >= 64; n /= 2) {
    for (const int cluster : {1, 2, 4, 8}) {
      int resident = 0;
      if (sm90_gemm_max_active_clusters(n, cluster, &resident) != cudaSuccess) {
        (void)cudaGetLastError();  // not sticky: this cluster size is just not offered
        continue;
      }
      if (resident == 0) continue;
      for (const int groups : {1, 2, 4})
        if (cluster * groups <= 8 && shape.in % static_cast<std::size_t>(kSm90TileK * cluster * groups) == 0)
          splits.push_back({cluster, groups, tiles, n, (rows + n - 1) / n, resident});
    }
  }
  return splits;
}

Sm90Split sm90_gemm_default_split(const Device& device, const Sm90GemmShape& shape) {
  const Sm90Split* best = nullptr;
  const auto splits = sm90_gemm_splits(device, shape);
  for (const auto& s : splits)
    if (s.row_tiles == 1 && s.one_wave() && s.ctas() <= device.multiprocessors() &&
        (best == nullptr || s.split() > best->split() || (s.split() == best->split() && s.cluster > best->cluster)))
      best = &s;
  if (best == nullptr)
    throw std::invalid_argument(fmt::format("sm_90a GEMM: no split of {} -> {} at {} rows runs in one wave on {}",
                                            shape.in, shape.out, shape.rows, device.name()));
  return *best;
}

Sm90Workspace::Sm90Workspace(StreamRef stream, std::size_t max_out)
    // groups x row tiles x N x out floats for groups <= 4 and row tiles x N <= 256 (rows <=
    // 256, N >= 64); a counter per row tile (<= 4), tile and rank (<= 8).
    : slots_(stream.device(), 4 * 256 * max_out), counters_(stream.device(), (max_out / kSm90TileOut + 1) * 4 * 8) {
  SP_CUDA_CHECK(cudaMemsetAsync(counters_.data(), 0, counters_.size() * sizeof(unsigned), stream.handle()));
}

Sm90WorkspaceRef Sm90Workspace::ref() const noexcept {
  return {slots_.data(), slots_.size(), counters_.data(), counters_.size()};
}

Sm90Gemm::Sm90Gemm(const Device& device, const Sm90GemmShape& shape, const Sm90Split& split,
                   const std::uint16_t* weights, const std::uint16_t* bias, const std::uint16_t* x, std::uint16_t* y,
                   Sm90WorkspaceRef workspace)
    : device_(device.index()), split_(split) {
  if (const auto why = sm90_gemm_unsupported(device, shape); !why.empty())
    throw std::invalid_argument("sm_90a GEMM: " + why);
  const auto offered = sm90_gemm_splits(device, shape);
  if (std::find(offered.begin(), offered.end(), split) == offered.end())
    throw std::invalid_argument(fmt::format("sm_90a GEMM: K split {}x{} of {}-row tiles is not offered for {} -> {} "
                                            "at {} rows on {}",
                                            split.cluster, split.groups, split.tile_rows, shape.in, shape.out,
                                            shape.rows, device.name()));
  Sm90GemmLaunch& l = launch_;
  l.tile_rows = split.tile_rows;
  l.bias = bias;
  l.y = y;
  l.cluster = split.cluster;
  l.groups = split.groups;
  l.rows = static_cast<int>(shape.rows);
  l.in = static_cast<int>(shape.in);
  l.out = static_cast<int>(shape.out);
  l.ksteps = static_cast<int>(shape.in / static_cast<std::size_t>(kSm90TileK * split.split()));
  l.relu = shape.relu ? 1 : 0;
  if (split.groups > 1) {
    const std::size_t floats = static_cast<std::size_t>(split.groups) * static_cast<std::size_t>(split.row_tiles) *
                               static_cast<std::size_t>(l.tile_rows) * shape.out;
    const std::size_t counters = static_cast<std::size_t>(split.row_tiles) * static_cast<std::size_t>(split.tiles) *
                                 static_cast<std::size_t>(split.cluster);
    if (workspace.slots == nullptr || workspace.slot_floats < floats || workspace.counter_count < counters)
      throw std::invalid_argument(fmt::format("sm_90a GEMM: K split {}x{} needs a workspace of {} floats and {} "
                                              "counters",
                                              split.cluster, split.groups, floats, counters));
    l.workspace = workspace.slots;
    l.counters = workspace.counters;
  }
  const CurrentDeviceGuard guard(device);
  w_map_ = encode_map(weights, shape.in, shape.out, kSm90TileOut);
  x_map_ = encode_map(x, shape.in, shape.rows, l.tile_rows);
}

int Sm90Gemm::stages() const noexcept { return sm90_gemm_stages(launch_.tile_rows); }

void Sm90Gemm::enqueue(StreamRef stream) const {
  if (stream.device_index() != device_)
    throw std::invalid_argument(fmt::format("sm_90a GEMM prepared on device {} enqueued on a stream of device {}",
                                            device_, stream.device_index()));
  SP_CUDA_CHECK(sm90_gemm_launch(w_map_, x_map_, launch_, stream.handle()));
}

std::string Sm90Gemm::describe() const {
  const std::string row_tiles = split_.row_tiles > 1 ? fmt::format(" x {} row tiles", split_.row_tiles) : "";
  return fmt::format("128x{} tile{}, K split {}x{} (cluster x groups), {} stages", launch_.tile_rows, row_tiles,
                     split_.cluster, split_.groups, stages());
}

}  // namespace streampipe::serving::detail
