// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace streampipe {
namespace {

TEST(CudaError, CarriesStatusCallAndLocation) {
  try {
    SP_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "SP_CUDA_CHECK did not throw";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.status(), cudaErrorInvalidValue);
    EXPECT_STREQ(e.name(), "cudaErrorInvalidValue");
    EXPECT_EQ(e.call(), "cudaErrorInvalidValue");
    EXPECT_NE(e.file().find("test_error.cpp"), std::string::npos);
    EXPECT_GT(e.line(), 0);
    const std::string what = e.what();
    EXPECT_NE(what.find("cudaErrorInvalidValue"), std::string::npos);
    EXPECT_NE(what.find("test_error.cpp:"), std::string::npos);
    EXPECT_FALSE(e.sticky());
    EXPECT_EQ(what.find("sticky"), std::string::npos);
  }
}

TEST(CudaError, SuccessDoesNotThrow) { EXPECT_NO_THROW(SP_CUDA_CHECK(cudaSuccess)); }

TEST(CudaError, StickyErrorsAreNamedAsSuch) {
  EXPECT_TRUE(CudaError::is_sticky(cudaErrorIllegalAddress));
  EXPECT_TRUE(CudaError::is_sticky(cudaErrorLaunchFailure));
  EXPECT_TRUE(CudaError::is_sticky(cudaErrorAssert));
  EXPECT_FALSE(CudaError::is_sticky(cudaErrorMemoryAllocation));
  EXPECT_FALSE(CudaError::is_sticky(cudaErrorInvalidConfiguration));
  const CudaError e(cudaErrorIllegalAddress, "k<<<1,1>>>", "f.cu", 7);
  EXPECT_TRUE(e.sticky());
  EXPECT_NE(std::string(e.what()).find("sticky"), std::string::npos);
}

TEST(CudaError, NoDeviceStatusesAreRecognized) {
  EXPECT_TRUE(is_no_device_status(cudaErrorNoDevice));
  EXPECT_TRUE(is_no_device_status(cudaErrorInsufficientDriver));
  EXPECT_FALSE(is_no_device_status(cudaErrorInvalidValue));
}

TEST(CudaError, NothrowVariantReportsWithoutThrowing) {
  testing::internal::CaptureStderr();
  SP_CUDA_CHECK_NOTHROW(cudaErrorInvalidValue);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("cudaErrorInvalidValue"), std::string::npos);
}

}  // namespace
}  // namespace streampipe
