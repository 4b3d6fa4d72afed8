// SPDX-License-Identifier: Apache-2.0
#pragma once
// GPU tests call SP_REQUIRE_GPU() first. Without a usable device they are reported as
// skipped (CTest shows "Skipped"), not passed. With STREAMPIPE_REQUIRE_GPU=1 in the
// environment (scripts/gpu-check sets it) a missing device is a failure instead, so a GPU
// run can never pass by skipping.

#include "streampipe/cuda/device.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace streampipe::testing {
inline bool gpu_required() {
  const char* v = std::getenv("STREAMPIPE_REQUIRE_GPU");
  return v != nullptr && v[0] != '\0' && v[0] != '0';
}
}  // namespace streampipe::testing

#define SP_REQUIRE_GPU()                                                               \
  do {                                                                                 \
    if (::streampipe::Device::count() == 0) {                                          \
      const auto sp_reason = ::streampipe::Device::unavailable_reason().value_or("?"); \
      if (::streampipe::testing::gpu_required())                                       \
        FAIL() << "STREAMPIPE_REQUIRE_GPU is set but no GPU is usable: " << sp_reason; \
      GTEST_SKIP() << "no CUDA device: " << sp_reason;                                 \
    }                                                                                  \
  } while (0)
