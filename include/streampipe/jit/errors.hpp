// SPDX-License-Identifier: Apache-2.0
#pragma once
// The runtime-kernel errors. Each message says what failed and names the input:
//   NvrtcError    an NVRTC call failed (streampipe::Error, api() NVRTC): the status, the
//                 call with its options, the program's name, and NVRTC's log when there is one;
//   CompileError  an NvrtcError for NVRTC_ERROR_COMPILATION: the program did not compile.
//                 what() holds the full log and the offending source lines, numbered, so the
//                 message alone is enough to fix the source; log() is the raw log;
//   JitError      wrong input caught before NVRTC or the driver is involved (unknown kernel,
//                 wrong argument count or size, bad parameter list, expression or
//                 architecture, a corrupt cache entry): a std::invalid_argument, like core's
//                 launch checks, and not a library failure.
// Driver failures (module load, launch) are streampipe::DriverError, and no driver at all a
// CudaError (streampipe/cuda/error.hpp).

#include "streampipe/cuda/error.hpp"

#include <memory>
#include <stdexcept>
#include <string>

namespace streampipe::jit {

class JitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class NvrtcError : public Error {
 public:
  // `status` is the nvrtcResult; `call` the call with its inputs; `log` NVRTC's log (may be
  // empty), appended to what().
  NvrtcError(int status, std::string call, std::string program_name, const std::string& log, const char* file,
             int line);
  [[nodiscard]] const std::string& program_name() const noexcept { return *program_name_; }

 protected:
  NvrtcError(Failure failure, std::string program_name);

 private:
  std::shared_ptr<const std::string> program_name_;  // shared: copying never throws
};

class CompileError : public NvrtcError {
 public:
  // `call` is the compile call with its options (the message leaves out streampipe's own
  // file:line: the lines that matter are the source's, shown numbered).
  CompileError(std::string program_name, std::string log, const std::string& source, std::string call = {});
  [[nodiscard]] const std::string& log() const noexcept { return *log_; }

 private:
  std::shared_ptr<const std::string> log_;
};

// The source with line numbers, limited to the lines NVRTC's log names (with `context`
// lines around each) or the whole source when the log names none. Used by CompileError.
[[nodiscard]] std::string numbered_source_excerpt(const std::string& program_name,
                                                  const std::string& log,
                                                  const std::string& source, int context = 2);

}  // namespace streampipe::jit
