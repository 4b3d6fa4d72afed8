// SPDX-License-Identifier: Apache-2.0
#pragma once
// One error hierarchy for every library streampipe calls. A failed library call throws a
// streampipe::Error (a std::runtime_error) that says which API failed (api()), with which
// status (status(), status_name()), in which call (call()) and, where known, the streampipe
// source line that made it (file(), line()). The families:
//   CudaError              CUDA runtime: SP_CUDA_CHECK (below); sticky() says the context is lost
//   DriverError            CUDA driver: the lazily loaded driver API (jit's module loads and
//                          launches; src/cuda/driver_api.hpp)
//   jit::NvrtcError        NVRTC: an API call failed (streampipe/jit/errors.hpp);
//   jit::CompileError      ... or the program did not compile (carries the log)
//   io::NvjpegError        nvJPEG (streampipe/io/gpu_jpeg_decoder.hpp)
//   serving::CublasLtError cuBLASLt (the serving layer's MLP); catch it as Error
// Wrong input caught before any library is called is not an Error but a
// std::invalid_argument naming what was wrong (launch checks, jit::JitError).
// Messages are formatted only on failure (a check's success path is one compare), and
// copying an Error never throws (its strings are shared).

#include <cuda_runtime_api.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace streampipe {

class Error : public std::runtime_error {
 public:
  enum class Api { cuda_runtime, cuda_driver, nvrtc, nvjpeg, cublaslt };
  // "CUDA runtime", "CUDA driver", "NVRTC", "nvJPEG", "cuBLASLt".
  [[nodiscard]] static const char* name_of(Api api) noexcept;

  [[nodiscard]] Api api() const noexcept { return api_; }
  [[nodiscard]] const char* api_name() const noexcept { return name_of(api_); }
  // The library's numeric status (cudaError_t, CUresult, nvrtcResult, nvjpegStatus_t,
  // cublasStatus_t) and its symbolic name, e.g. "cudaErrorInvalidValue".
  [[nodiscard]] int status() const noexcept { return status_; }
  [[nodiscard]] const std::string& status_name() const noexcept { return fields_->status_name; }
  // The failed call as streampipe made it (its source text, or a description with its inputs).
  [[nodiscard]] const std::string& call() const noexcept { return fields_->call; }
  // Where streampipe made the call: empty and 0 when not known (or not useful: a compile error).
  [[nodiscard]] const std::string& file() const noexcept { return fields_->file; }
  [[nodiscard]] int line() const noexcept { return line_; }

 protected:
  // What a failure says. what() reads
  //   "<api name> error <status_name> (<status>): <description>\n  in <call>\n  at <file>:<line>"
  // then `detail` on lines of its own; empty parts are left out.
  struct Failure {
    Api api = Api::cuda_runtime;
    int status = 0;
    std::string status_name;
    std::string description;  // the library's text for the status, or what was being done
    std::string call;
    std::string file;
    int line = 0;
    std::string detail;  // e.g. a compiler log, a note that the context is lost
  };
  explicit Error(Failure failure);

 private:
  struct Fields {
    std::string status_name, call, file;
  };
  std::shared_ptr<const Fields> fields_;
  Api api_;
  int status_;
  int line_;
};

// A CUDA runtime call failed. status() is the cudaError_t.
class CudaError : public Error {
 public:
  CudaError(cudaError_t status, const char* call, const char* file, int line);

  [[nodiscard]] cudaError_t status() const noexcept { return static_cast<cudaError_t>(Error::status()); }
  // True when the error corrupts the CUDA context: every later call on that device fails,
  // and the process must exit (or at least stop using the device). what() says so too.
  [[nodiscard]] bool sticky() const noexcept { return is_sticky(status()); }

  [[nodiscard]] static bool is_sticky(cudaError_t status) noexcept;
};

// A CUDA driver API call failed. status() is the CUresult; status_name() the driver's name
// for it (cuGetErrorName), the description its text (cuGetErrorString). Thrown by
// SP_CU_CHECK and by the driver API's loader when the driver lacks an entry point.
class DriverError : public Error {
 public:
  DriverError(int status, std::string status_name, std::string description, std::string call, const char* file,
              int line);
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

// The one status check every library's macro is made of: `call` is evaluated once; a status
// other than `success` goes, with the call's text and file:line, to `on_failure`, which
// throws (the SP_*_CHECK macros) or reports (the *_NOTHROW ones, for destructors). The
// success path is one compare.
#define SP_STATUS_CHECK(call, success, on_failure)                      \
  do {                                                                  \
    const auto sp_status_ = (call);                                     \
    if (sp_status_ != (success)) [[unlikely]]                           \
      on_failure(sp_status_, #call, __FILE__, __LINE__);                \
  } while (0)

#define SP_CUDA_CHECK(call) SP_STATUS_CHECK(call, cudaSuccess, ::streampipe::detail::throw_cuda_error)
// Destructor-safe variant: reports, never throws.
#define SP_CUDA_CHECK_NOTHROW(call) \
  SP_STATUS_CHECK(call, cudaSuccess, ::streampipe::detail::report_cuda_error_in_destructor)
