// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/error.hpp"

#include "driver_presence.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdio>

namespace streampipe {
namespace {

constexpr const char* sticky_note = "  this error is sticky: the CUDA context is unusable and the process must exit";

std::string text(const char* s) { return s != nullptr ? std::string(s) : std::string(); }

// The runtime's text for cudaErrorInsufficientDriver blames the driver's version even where
// there is no driver at all.
std::string describe(cudaError_t status) {
  if (status == cudaErrorInsufficientDriver)
    return detail::no_gpu_reason(status, detail::nvidia_driver(), CUDART_VERSION);
  return text(cudaGetErrorString(status));
}

std::string format_message(const char* api, int status, const std::string& status_name, const std::string& description,
                           const std::string& call, const std::string& file, int line, const std::string& detail) {
  std::string msg = fmt::format("{} error {} ({})", api, status_name, status);
  if (!description.empty()) msg += fmt::format(": {}", description);
  if (!call.empty()) msg += fmt::format("\n  in {}", call);
  if (!file.empty()) msg += fmt::format("\n  at {}:{}", file, line);
  if (!detail.empty()) msg += fmt::format("\n{}", detail);
  return msg;
}

}  // namespace

const char* Error::name_of(Api api) noexcept {
  switch (api) {
    case Api::cuda_runtime: return "CUDA runtime";
    case Api::cuda_driver: return "CUDA driver";
    case Api::nvrtc: return "NVRTC";
    case Api::nvjpeg: return "nvJPEG";
    case Api::cublaslt: return "cuBLASLt";
  }
  return "unknown API";
}

Error::Error(Failure failure)
    : std::runtime_error(format_message(name_of(failure.api), failure.status, failure.status_name,
                                        failure.description, failure.call, failure.file, failure.line,
                                        failure.detail)),
      fields_(std::make_shared<const Fields>(
          Fields{std::move(failure.status_name), std::move(failure.call), std::move(failure.file)})),
      api_(failure.api),
      status_(failure.status),
      line_(failure.line) {}

CudaError::CudaError(cudaError_t status, const char* call, const char* file, int line)
    : Error({.api = Api::cuda_runtime,
             .status = static_cast<int>(status),
             .status_name = cudaGetErrorName(status),
             .description = describe(status),
             .call = text(call),
             .file = text(file),
             .line = line,
             .detail = is_sticky(status) ? sticky_note : ""}) {}

DriverError::DriverError(int status, std::string status_name, std::string description, std::string call,
                         const char* file, int line)
    : Error({.api = Api::cuda_driver,
             .status = status,
             .status_name = std::move(status_name),
             .description = std::move(description),
             .call = std::move(call),
             .file = text(file),
             .line = line,
             .detail = {}}) {}

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
