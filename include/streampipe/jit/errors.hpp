// SPDX-License-Identifier: Apache-2.0
#pragma once
// The runtime-kernel errors. Each message says what failed and names the input:
//   CompileError  NVRTC rejected a program: the full log and the offending source lines,
//                 numbered, so the message alone is enough to fix the source;
//   DriverError   a CUDA driver call failed (module load, launch): call, file:line, name;
//   JitError      misuse caught before the GPU is involved (unknown kernel, wrong
//                 argument count or size, bad parameter list or expression).

#include <stdexcept>
#include <string>

namespace streampipe::jit {

class JitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CompileError : public JitError {
 public:
  CompileError(std::string program_name, std::string log, const std::string& source);
  [[nodiscard]] const std::string& program_name() const noexcept { return program_name_; }
  [[nodiscard]] const std::string& log() const noexcept { return log_; }

 private:
  std::string program_name_;
  std::string log_;
};

class DriverError : public JitError {
 public:
  DriverError(int status, const std::string& call, const std::string& error_name,
              const std::string& error_text, const char* file, int line);
  [[nodiscard]] int status() const noexcept { return status_; }  // a CUresult

 private:
  int status_;
};

// The source with line numbers, limited to the lines NVRTC's log names (with `context`
// lines around each) or the whole source when the log names none. Used by CompileError.
[[nodiscard]] std::string numbered_source_excerpt(const std::string& program_name,
                                                  const std::string& log,
                                                  const std::string& source, int context = 2);

}  // namespace streampipe::jit
