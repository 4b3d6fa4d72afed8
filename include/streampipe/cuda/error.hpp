// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every CUDA runtime call goes through SP_CUDA_CHECK. A failure throws CudaError carrying
// the status, its name, the call's text and file:line. The message is formatted only on
// failure (the success path is one compare). Sticky errors (illegal address, launch
// failure, ...) leave the context unusable: CudaError::sticky() says so, and the library
// never clears them.

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace streampipe {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t status, const char* call, const char* file, int line);

  [[nodiscard]] cudaError_t status() const noexcept { return status_; }
  [[nodiscard]] const char* name() const noexcept;
  [[nodiscard]] const std::string& call() const noexcept { return call_; }
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] int line() const noexcept { return line_; }
  // True when the error corrupts the CUDA context: every later call on that device fails,
  // and the process must exit (or at least stop using the device).
  [[nodiscard]] bool sticky() const noexcept { return is_sticky(status_); }

  [[nodiscard]] static bool is_sticky(cudaError_t status) noexcept;

 private:
  cudaError_t status_;
  std::string call_;
  std::string file_;
  int line_;
};

// True when the status means "no usable GPU here" (no device, no driver, driver too old):
// the caller should fall back to the host backend rather than fail.
[[nodiscard]] bool is_no_device_status(cudaError_t status) noexcept;

namespace detail {
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
// For destructors: they must not throw, so the error is written to stderr once per call
// site kind, and sticky errors are never cleared.
void report_cuda_error_in_destructor(cudaError_t status, const char* call, const char* file,
                                     int line) noexcept;
// Clears the thread's last-error slot after an expected, non-sticky failure (a probe that
// was allowed to fail). A sticky error is left in place for the caller to see.
void clear_expected_error() noexcept;
}  // namespace detail

}  // namespace streampipe

#define SP_CUDA_CHECK(call)                                                            \
  do {                                                                                 \
    const cudaError_t sp_status_ = (call);                                             \
    if (sp_status_ != cudaSuccess) [[unlikely]]                                        \
      ::streampipe::detail::throw_cuda_error(sp_status_, #call, __FILE__, __LINE__);   \
  } while (0)

// Destructor-safe variant: reports, never throws.
#define SP_CUDA_CHECK_NOTHROW(call)                                                            \
  do {                                                                                         \
    const cudaError_t sp_status_ = (call);                                                     \
    if (sp_status_ != cudaSuccess) [[unlikely]]                                                \
      ::streampipe::detail::report_cuda_error_in_destructor(sp_status_, #call, __FILE__,       \
                                                            __LINE__);                         \
  } while (0)
