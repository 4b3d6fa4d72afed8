// SPDX-License-Identifier: Apache-2.0
// The error hierarchy: every library family is a streampipe::Error saying which API failed,
// with which status, in which call and where. The CUDA runtime and driver families live in
// core; nvJPEG's and cuBLASLt's are checked here too (where configure found them) through
// their layers' own check macros. NVRTC's are in tests/jit/test_errors.cpp.

#include "streampipe/cuda/error.hpp"

#include "driver_api.hpp"  // src/cuda (internal)

#ifdef STREAMPIPE_HAVE_NVJPEG
#include "nvjpeg_check.hpp"  // src/io (internal)
#endif
#ifdef STREAMPIPE_HAVE_CUBLAS
#include "cublaslt_handles.hpp"  // src/serving (internal)
#endif

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

namespace streampipe {
namespace {

static_assert(std::is_base_of_v<std::runtime_error, Error>);
static_assert(std::is_base_of_v<Error, CudaError> && std::is_base_of_v<Error, DriverError>);
// Exceptions are copied when thrown and caught: a copy must not throw.
static_assert(std::is_nothrow_copy_constructible_v<CudaError> && std::is_nothrow_copy_constructible_v<DriverError>);

TEST(CudaError, CarriesStatusCallAndLocation) {
  try {
    SP_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "SP_CUDA_CHECK did not throw";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.status(), cudaErrorInvalidValue);
    EXPECT_EQ(e.status_name(), "cudaErrorInvalidValue");
    EXPECT_EQ(e.call(), "cudaErrorInvalidValue");
    EXPECT_NE(e.file().find("test_error.cpp"), std::string::npos);
    EXPECT_GT(e.line(), 0);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("CUDA runtime error cudaErrorInvalidValue (1): ", 0), 0u) << what;
    EXPECT_NE(what.find("\n  in cudaErrorInvalidValue\n"), std::string::npos) << what;
    EXPECT_NE(what.find("test_error.cpp:"), std::string::npos);
    EXPECT_FALSE(e.sticky());
    EXPECT_EQ(what.find("sticky"), std::string::npos);
  }
}

TEST(CudaError, IsAnErrorOfTheRuntimeApi) {
  try {
    SP_CUDA_CHECK(cudaErrorMemoryAllocation);
    FAIL() << "SP_CUDA_CHECK did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.api(), Error::Api::cuda_runtime);
    EXPECT_STREQ(e.api_name(), "CUDA runtime");
    EXPECT_EQ(e.status(), static_cast<int>(cudaErrorMemoryAllocation));
    EXPECT_EQ(e.status_name(), "cudaErrorMemoryAllocation");
    EXPECT_NE(dynamic_cast<const CudaError*>(&e), nullptr);
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
  const CudaError copy = e;  // shares the strings
  EXPECT_STREQ(copy.what(), e.what());
  EXPECT_EQ(copy.call(), "k<<<1,1>>>");
  EXPECT_EQ(copy.file(), "f.cu");
  EXPECT_EQ(copy.line(), 7);
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

TEST(Error, EveryApiHasItsName) {
  EXPECT_STREQ(Error::name_of(Error::Api::cuda_runtime), "CUDA runtime");
  EXPECT_STREQ(Error::name_of(Error::Api::cuda_driver), "CUDA driver");
  EXPECT_STREQ(Error::name_of(Error::Api::nvrtc), "NVRTC");
  EXPECT_STREQ(Error::name_of(Error::Api::nvjpeg), "nvJPEG");
  EXPECT_STREQ(Error::name_of(Error::Api::cublaslt), "cuBLASLt");
}

TEST(DriverError, IsAnErrorOfTheDriverApi) {
  try {
    throw DriverError(CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid",
                      "cuModuleLoadData(a.cu, CUBIN for sm_90, device 0)", "module.cpp", 88);
  } catch (const Error& e) {
    EXPECT_EQ(e.api(), Error::Api::cuda_driver);
    EXPECT_EQ(e.status(), static_cast<int>(CUDA_ERROR_INVALID_IMAGE));
    EXPECT_EQ(e.status_name(), "CUDA_ERROR_INVALID_IMAGE");
    EXPECT_EQ(e.call(), "cuModuleLoadData(a.cu, CUBIN for sm_90, device 0)");
    EXPECT_EQ(e.file(), "module.cpp");
    EXPECT_EQ(e.line(), 88);
    EXPECT_STREQ(e.what(),
                 "CUDA driver error CUDA_ERROR_INVALID_IMAGE (200): device kernel image is invalid\n"
                 "  in cuModuleLoadData(a.cu, CUBIN for sm_90, device 0)\n"
                 "  at module.cpp:88");
  }
}

// The lazily loaded driver API: with a driver, SP_CU_CHECK throws DriverError with the
// driver's own name for the status; without one (CPU machines), asking for the table throws
// CudaError with a status that means "no GPU here", every time, and the process got this far
// without libcuda. Either branch is a real check.
TEST(DriverApi, ChecksThrowDriverErrorOrTheLoaderSaysThereIsNoDriver) {
  const driver::Api* table = nullptr;
  try {
    table = &driver::api();
  } catch (const CudaError& e) {
    EXPECT_TRUE(is_no_device_status(e.status())) << e.what();
    EXPECT_NE(e.call().find("cudaGetDriverEntryPointByVersion(\"cuGetErrorName\""), std::string::npos) << e.what();
    EXPECT_THROW((void)driver::api(), CudaError) << "the loader fails the same way every time";
    return;
  }
  ASSERT_NE(table, nullptr);
  EXPECT_NE(table->launch_kernel, nullptr);
  try {
    SP_CU_CHECK(CUDA_ERROR_INVALID_VALUE);
    FAIL() << "SP_CU_CHECK did not throw";
  } catch (const Error& e) {
    EXPECT_NE(dynamic_cast<const DriverError*>(&e), nullptr);
    EXPECT_EQ(e.api(), Error::Api::cuda_driver);
    EXPECT_EQ(e.status(), static_cast<int>(CUDA_ERROR_INVALID_VALUE));
    EXPECT_EQ(e.status_name(), "CUDA_ERROR_INVALID_VALUE");
    EXPECT_EQ(e.call(), "CUDA_ERROR_INVALID_VALUE");
    EXPECT_NE(e.file().find("test_error.cpp"), std::string::npos);
  }
  EXPECT_NO_THROW(SP_CU_CHECK(CUDA_SUCCESS));
}

// The non-throwing view of the same table, for callers that carry on without a driver
// (is_device_mapped answers "not mapped"): available() says what api() does; with no driver
// (CPU machines) nothing resolved, optional entries included; with one, the optional
// cuPointerGetAttributes (every driver since CUDA 4) is there.
TEST(DriverApi, ResolvedTableNeverThrowsAndAgreesWithApi) {
  static_assert(noexcept(driver::resolved()) && noexcept(driver::available()));
  const driver::Api& table = driver::resolved();
  EXPECT_EQ(&driver::resolved(), &table) << "resolved once";
  bool api_throws = false;
  try {
    EXPECT_EQ(&driver::api(), &table);
  } catch (const Error& e) {
    api_throws = true;
    if (const auto* cuda = dynamic_cast<const CudaError*>(&e); cuda != nullptr && is_no_device_status(cuda->status())) {
      EXPECT_EQ(table.get_error_name, nullptr);
      EXPECT_EQ(table.launch_kernel, nullptr);
      EXPECT_EQ(table.pointer_get_attributes, nullptr);
    }
  }
  EXPECT_EQ(driver::available(), !api_throws);
  if (!api_throws) {
    EXPECT_NE(table.pointer_get_attributes, nullptr);
  }
}

#ifdef STREAMPIPE_HAVE_NVJPEG
TEST(NvjpegError, IsAnErrorOfNvjpeg) {
  static_assert(std::is_base_of_v<Error, io::NvjpegError> && std::is_nothrow_copy_constructible_v<io::NvjpegError>);
  try {
    SP_NVJPEG_CHECK(NVJPEG_STATUS_BAD_JPEG);
    FAIL() << "SP_NVJPEG_CHECK did not throw";
  } catch (const Error& e) {
    EXPECT_NE(dynamic_cast<const io::NvjpegError*>(&e), nullptr);
    EXPECT_EQ(e.api(), Error::Api::nvjpeg);
    EXPECT_EQ(e.status(), static_cast<int>(NVJPEG_STATUS_BAD_JPEG));
    EXPECT_EQ(e.status_name(), "NVJPEG_STATUS_BAD_JPEG");
    EXPECT_EQ(e.call(), "NVJPEG_STATUS_BAD_JPEG");
    const std::string head = "nvJPEG error NVJPEG_STATUS_BAD_JPEG (" + std::to_string(NVJPEG_STATUS_BAD_JPEG) + ")";
    EXPECT_EQ(std::string(e.what()).rfind(head, 0), 0u) << e.what();
  }
}
#endif

#ifdef STREAMPIPE_HAVE_CUBLAS
TEST(CublasLtError, IsAnErrorOfCublasLt) {
  static_assert(std::is_base_of_v<Error, serving::CublasLtError>);
  try {
    SP_CUBLAS_CHECK(CUBLAS_STATUS_NOT_SUPPORTED);
    FAIL() << "SP_CUBLAS_CHECK did not throw";
  } catch (const Error& e) {
    EXPECT_NE(dynamic_cast<const serving::CublasLtError*>(&e), nullptr);
    EXPECT_EQ(e.api(), Error::Api::cublaslt);
    EXPECT_STREQ(e.api_name(), "cuBLASLt");
    EXPECT_EQ(e.status(), static_cast<int>(CUBLAS_STATUS_NOT_SUPPORTED));
    EXPECT_EQ(e.status_name(), "CUBLAS_STATUS_NOT_SUPPORTED");
    EXPECT_EQ(e.call(), "CUBLAS_STATUS_NOT_SUPPORTED");
    EXPECT_NE(e.file().find("test_error.cpp"), std::string::npos);
  }
}
#endif

}  // namespace
}  // namespace streampipe
