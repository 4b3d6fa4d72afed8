// SPDX-License-Identifier: Apache-2.0
// gray's lanes without nvJPEG (see luma_operation.hpp).

#include "luma_operation.hpp"

#include "streampipe/cuda/error.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

namespace streampipe::tools::gray::detail {
namespace {

// True for staged luma, false for RGB.
bool staged_luma(const pipeline::ItemDescriptor& item) {
  if (item.in_bytes == item.out_bytes) return true;
  if (item.in_bytes == 3 * item.out_bytes) return false;
  throw std::invalid_argument(fmt::format("gray: {} bytes staged for {} output bytes (neither luma nor RGB)",
                                          item.in_bytes, item.out_bytes));
}

}  // namespace

pipeline::Operation luma_operation() {
  pipeline::Operation op;
  op.name = "luma";
  op.device = [](const pipeline::Batch& b) {
    for (std::size_t k = 0; k < b.size(); ++k) {
      const auto& item = b.items()[k];
      if (staged_luma(item)) {
        SP_CUDA_CHECK(cudaMemcpyAsync(b.out_as<std::uint8_t>(k), b.in_as<const std::uint8_t>(k), item.out_bytes,
                                      cudaMemcpyDeviceToDevice, b.stream().handle()));
      } else {
        ops::rgb_to_gray(b.stream(), b.in_as<const std::uint8_t>(k), b.out_as<std::uint8_t>(k), item.out_bytes);
      }
    }
  };
  op.host = [](const pipeline::Batch& b) {
    for (std::size_t k = 0; k < b.size(); ++k) {
      const auto& item = b.items()[k];
      if (staged_luma(item)) {
        std::memcpy(b.out_as<std::uint8_t>(k), b.in_as<const std::uint8_t>(k), item.out_bytes);
      } else {
        ops::rgb_to_gray_host({b.in_as<const std::uint8_t>(k), item.in_bytes}, {b.out_as<std::uint8_t>(k), item.out_bytes});
      }
    }
  };
  return op;
}

}  // namespace streampipe::tools::gray::detail
