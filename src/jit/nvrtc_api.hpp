// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal to the jit layer: NVRTC, loaded when a program first compiles (dlopen of
// libnvrtc.so.<CUDA major>), not linked. A program that links jit starts where NVRTC is not
// installed, shares the copy another library of the process already loaded (PyTorch, CuPy),
// and a Python wheel takes NVRTC from NVIDIA's nvidia-cuda-nvrtc wheel instead of the build
// machine's toolkit. Where it is looked for: program.hpp (set_nvrtc_search_dirs). The table
// lists the entry points jit calls and grows with them.

#include <nvrtc.h>

#include <string>

namespace streampipe::jit::detail {

struct NvrtcApi {
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcGetErrorString) get_error_string = nullptr;
  decltype(&::nvrtcGetNumSupportedArchs) get_num_supported_archs = nullptr;
  decltype(&::nvrtcGetSupportedArchs) get_supported_archs = nullptr;
  decltype(&::nvrtcCreateProgram) create_program = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&::nvrtcAddNameExpression) add_name_expression = nullptr;
  decltype(&::nvrtcCompileProgram) compile_program = nullptr;
  decltype(&::nvrtcGetProgramLogSize) get_program_log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) get_program_log = nullptr;
  decltype(&::nvrtcGetLoweredName) get_lowered_name = nullptr;
  decltype(&::nvrtcGetCUBINSize) get_cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) get_cubin = nullptr;
  decltype(&::nvrtcGetPTXSize) get_ptx_size = nullptr;
  decltype(&::nvrtcGetPTX) get_ptx = nullptr;
};

// The table, loaded once per process (thread-safe). Throws NvrtcError naming the library,
// every place tried and how to install it when it cannot be loaded or lacks an entry
// point - every time it is asked.
[[nodiscard]] const NvrtcApi& nvrtc();

// The file the table was loaded from (nvrtc() first: throws as it does).
[[nodiscard]] const std::string& nvrtc_path();

// NVRTC's name for a status ("NVRTC_ERROR_COMPILATION"); "NVRTC_ERROR_UNKNOWN" while NVRTC
// is not loaded. Never throws.
[[nodiscard]] const char* nvrtc_status_name(int status) noexcept;

}  // namespace streampipe::jit::detail
