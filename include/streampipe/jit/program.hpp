// SPDX-License-Identifier: Apache-2.0
#pragma once
// An NVRTC program that owns all its strings, and its compilation.
//   Program p("saxpy.cu", source);
//   p.option("-O3").include_dir("/opt/inc").header("my.h", text).name_expression("k<float>");
//   CompileResult r = compile(p, "sm_90");          // or arch from a device: default_arch()
//   r.lowered.at("k<float>")  -> the mangled name to look up in the module
// An architecture "sm_XY" produces a CUBIN, "compute_XY" produces PTX. Source that does not
// compile throws CompileError with the full log and the offending source lines numbered;
// any other NVRTC failure (a bad option, say) NvrtcError with its status and log; a bad
// name or architecture string JitError (jit/errors.hpp).

#include "streampipe/cuda/device.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace streampipe::jit {

struct Header {
  std::string name;      // as written in #include "name"
  std::string contents;
};

class Program {
 public:
  Program(std::string name, std::string source);

  Program& option(std::string opt);                      // e.g. "-O3", "--use_fast_math"
  Program& include_dir(std::string dir);                 // becomes -I<dir>
  Program& header(std::string name, std::string contents);  // in-memory #include
  Program& name_expression(std::string expr);            // e.g. "scale<float>"
  Program& arch(std::string arch);                       // "sm_90" / "compute_90"; empty: device's

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  [[nodiscard]] const std::vector<std::string>& options() const noexcept { return options_; }
  [[nodiscard]] const std::vector<std::string>& include_dirs() const noexcept { return include_dirs_; }
  [[nodiscard]] const std::vector<Header>& headers() const noexcept { return headers_; }
  [[nodiscard]] const std::vector<std::string>& name_expressions() const noexcept { return name_expressions_; }
  [[nodiscard]] const std::string& arch() const noexcept { return arch_; }

 private:
  std::string name_, source_, arch_;
  std::vector<std::string> options_, include_dirs_, name_expressions_;
  std::vector<Header> headers_;
};

enum class BinaryKind { cubin, ptx };

struct CompileResult {
  std::string program_name;
  std::string arch;                          // what it was compiled for
  BinaryKind kind = BinaryKind::cubin;
  std::string log;                           // NVRTC's log; warnings survive a success
  std::map<std::string, std::string> lowered;  // name expression -> mangled name
  std::vector<std::byte> binary;             // CUBIN or PTX (with its terminating NUL)
  double compile_ms = 0.0;                   // 0 when it came from a cache
  bool from_disk_cache = false;

  // The name to look up in a module: the lowered name of a name expression, else `name`.
  [[nodiscard]] std::string symbol(const std::string& name) const;
};

[[nodiscard]] CompileResult compile(const Program& program, const std::string& arch);

// NVRTC is loaded when first needed, not linked: the copy already in the process (another
// library's), else libnvrtc.so.<CUDA major> from the folders named here, then the dynamic
// loader's search path (LD_LIBRARY_PATH, the program's RUNPATH, the system's cache), then
// $CUDA_HOME/lib64, $CUDA_PATH/lib64 and /usr/local/cuda/lib64. A program that ships NVRTC in
// a folder of its own (the Python package: NVIDIA's nvidia-cuda-nvrtc wheel) names it before
// the first compile; once NVRTC is loaded this changes nothing. Where it is not found,
// compile() throws NvrtcError naming every place tried and how to install it.
void set_nvrtc_search_dirs(std::vector<std::string> dirs);
// The NVRTC library file in use, loading it (throws NvrtcError as compile() does).
[[nodiscard]] std::string nvrtc_library_path();

// NVRTC's version as major*1000 + minor*10 (13.0 -> 13000), like CUDART_VERSION; 0 when
// NVRTC cannot be loaded.
[[nodiscard]] int nvrtc_version();
// The SM numbers NVRTC can target (e.g. 75, 80, ..., 120).
[[nodiscard]] const std::vector<int>& nvrtc_supported_archs();
// "sm_XY" for the device, or PTX for the newest supported architecture when the device is
// newer than this NVRTC knows (the driver JIT-compiles it).
[[nodiscard]] std::string default_arch(const Device& device);
[[nodiscard]] std::string arch_for(int sm);

// The CUDA toolkit's include directory (for programs that include CUDA or CCCL headers);
// empty when not found.
[[nodiscard]] std::string cuda_include_dir();

}  // namespace streampipe::jit
