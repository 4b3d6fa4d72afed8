// SPDX-License-Identifier: Apache-2.0
#pragma once
// A DeviceModel for executor tests whose rows are not independent, so stale padding would
// show: out row r is in row (r + 1) mod rows, with rows the bucket. Copies (copied I/O) or
// one row kernel (mapped I/O, row_kernels.hpp); it allocates nothing itself.

#include "row_kernels.hpp"

#include "streampipe/cuda/error.hpp"
#include "streampipe/serving/gpu_executor.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

namespace streampipe::serving::test_support {

class RotatingModel final : public DeviceModel {
 public:
  explicit RotatingModel(bool mapped) : mapped_(mapped) {}
  static constexpr std::size_t kWidth = 8;
  [[nodiscard]] std::size_t input_size() const override { return kWidth; }
  [[nodiscard]] std::size_t output_size() const override { return kWidth; }
  [[nodiscard]] bool accepts_mapped_io() const override { return mapped_; }
  [[nodiscard]] std::unique_ptr<ModelLane> make_lane(StreamRef stream, std::size_t) override {
    struct Lane final : ModelLane {
      explicit Lane(StreamRef s) : stream(s) {}
      StreamRef stream;
      void prepare(std::size_t) override {}
      void enqueue(const float* in, float* out, std::size_t rows) override {
        const std::size_t row = kWidth * sizeof(float);
        SP_CUDA_CHECK(cudaMemcpyAsync(out, in + kWidth, (rows - 1) * row, cudaMemcpyDefault, stream.handle()));
        SP_CUDA_CHECK(cudaMemcpyAsync(out + (rows - 1) * kWidth, in, row, cudaMemcpyDefault, stream.handle()));
      }
      void enqueue_rows(const float* const* in_rows, float* const* out_rows, std::size_t rows) override {
        rotate_rows(stream, in_rows, out_rows, rows, kWidth);
      }
    };
    return std::make_unique<Lane>(stream);
  }

 private:
  bool mapped_;
};

}  // namespace streampipe::serving::test_support
