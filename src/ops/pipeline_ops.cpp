// SPDX-License-Identifier: Apache-2.0
#include "streampipe/ops/pipeline_ops.hpp"

#include "streampipe/ops/affine.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"

#include <stdexcept>

namespace streampipe::ops {

using pipeline::Batch;
using pipeline::Operation;

Operation gray_operation() {
  Operation op;
  op.name = "rgb to gray";
  op.output_bytes = [](std::size_t in) {
    if (in % 3 != 0) throw std::invalid_argument("RGB input must be a multiple of 3 bytes");
    return in / 3;
  };
  op.device = [](const Batch& b) {
    for (std::size_t k = 0; k < b.size(); ++k)
      rgb_to_gray(b.stream(), b.in_as<const std::uint8_t>(k), b.out_as<std::uint8_t>(k), b.items()[k].out_bytes);
  };
  op.host = [](const Batch& b) {
    for (std::size_t k = 0; k < b.size(); ++k)
      rgb_to_gray_host({b.in_as<const std::uint8_t>(k), b.items()[k].in_bytes},
                       {b.out_as<std::uint8_t>(k), b.items()[k].out_bytes});
  };
  return op;
}

Operation multiply_divide_operation(const MultiplyDivideShape& shape) {
  Operation op;
  op.name = "multiply/divide";
  op.output_bytes = [](std::size_t in) {
    if (in % sizeof(float) != 0) throw std::invalid_argument("float input must be a multiple of 4 bytes");
    return in;
  };
  op.device = [shape](const Batch& b) {
    if (b.size() == 1) {
      multiply_divide(b.stream(), b.in_as<const float>(), b.out_as<float>(), b.items()[0].in_bytes / sizeof(float), shape);
    } else {
      multiply_divide_batched(b.stream(), b.device_items(), b.size(), b.in(), b.out(), shape);
    }
  };
  op.host = [shape](const Batch& b) {
    for (std::size_t k = 0; k < b.size(); ++k) {
      const std::size_t n = b.items()[k].in_bytes / sizeof(float);
      multiply_divide_host({b.in_as<const float>(k), n}, {b.out_as<float>(k), n}, shape.repeats);
    }
  };
  return op;
}

Operation affine_operation(float a, float bias) {
  Operation op;
  op.name = "affine";
  op.output_bytes = [](std::size_t in) { return in; };
  op.device = [a, bias](const Batch& b) {
    for (std::size_t k = 0; k < b.size(); ++k)
      affine(b.stream(), b.in_as<const float>(k), b.out_as<float>(k), b.items()[k].in_bytes / sizeof(float), a, bias);
  };
  op.host = [a, bias](const Batch& b) {
    for (std::size_t k = 0; k < b.size(); ++k) {
      const std::size_t n = b.items()[k].in_bytes / sizeof(float);
      affine_host({b.in_as<const float>(k), n}, {b.out_as<float>(k), n}, a, bias);
    }
  };
  return op;
}

}  // namespace streampipe::ops
