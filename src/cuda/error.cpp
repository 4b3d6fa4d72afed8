// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/error.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdio>

namespace streampipe {
namespace {

std::string format_message(cudaError_t status, const char* call, const char* file, int line) {
  std::string msg = fmt::format("CUDA error {} ({}): {}\n  in {}\n  at {}:{}",
                                cudaGetErrorName(status), static_cast<int>(status),
                                cudaGetErrorString(status), call, file, line);
  if (CudaError::is_sticky(status))
    msg += "\n  this error is sticky: the CUDA context is unusable and the process must exit";
  return msg;
}

}  // namespace

CudaError::CudaError(cudaError_t status, const char* call, const char* file, int line)
    : std::runtime_error(format_message(status, call, file, line)),
      status_(status),
      call_(call),
      file_(file),
      line_(line) {}

const char* CudaError::name() const noexcept { return cudaGetErrorName(status_); }

bool CudaError::is_sticky(cudaError_t status) noexcept {
  switch (status) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorLaunchTimeout:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

bool is_no_device_status(cudaError_t status) noexcept {
  return status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver ||
         status == cudaErrorInitializationError || status == cudaErrorCompatNotSupportedOnDevice ||
         status == cudaErrorSystemDriverMismatch || status == cudaErrorDevicesUnavailable;
}

namespace detail {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  // Non-sticky errors are also recorded as the thread's "last error"; clear that copy so the
  // next unrelated cudaGetLastError() does not report it twice. Sticky ones stay.
  (void)status;
  clear_expected_error();
  throw CudaError(status, call, file, line);
}

void report_cuda_error_in_destructor(cudaError_t status, const char* call, const char* file,
                                     int line) noexcept {
  // A destructor running during teardown after a sticky error would otherwise spam one
  // line per object; one line per process is enough to explain what happened.
  static std::atomic<bool> reported_sticky{false};
  if (CudaError::is_sticky(status) && reported_sticky.exchange(true)) return;
  std::fprintf(stderr, "streampipe: CUDA error %s (%d) in destructor: %s\n  in %s\n  at %s:%d\n",
               cudaGetErrorName(status), static_cast<int>(status), cudaGetErrorString(status),
               call, file, line);
}

void clear_expected_error() noexcept {
  const cudaError_t pending = cudaPeekAtLastError();
  if (pending != cudaSuccess && !CudaError::is_sticky(pending)) (void)cudaGetLastError();
}

}  // namespace detail
}  // namespace streampipe
