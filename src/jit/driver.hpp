// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CUDA driver API, loaded lazily through the runtime (cudaGetDriverEntryPointByVersion)
// so that nothing links libcuda: the library and the CLI start on machines with no driver,
// and only loading a module asks for it. SP_CU_CHECK turns a failed call into DriverError.

#include <cuda.h>

namespace streampipe::jit::driver {

struct Api {
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxPushCurrent) ctx_push_current = nullptr;
  decltype(&::cuCtxPopCurrent) ctx_pop_current = nullptr;
  decltype(&::cuModuleLoadData) module_load_data = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuModuleGetGlobal) module_get_global = nullptr;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;
  decltype(&::cuFuncSetAttribute) func_set_attribute = nullptr;
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor) occupancy = nullptr;
  // Optional (newer drivers): parameter introspection and listing a module's kernels.
  decltype(&::cuFuncGetParamInfo) func_get_param_info = nullptr;
  decltype(&::cuModuleGetFunctionCount) module_get_function_count = nullptr;
  decltype(&::cuModuleEnumerateFunctions) module_enumerate_functions = nullptr;
  decltype(&::cuFuncGetName) func_get_name = nullptr;
  // TMA descriptors (Hopper and newer), for the batching library's sm_90a GEMM.
  decltype(&::cuTensorMapEncodeTiled) tensor_map_encode_tiled = nullptr;
};

// Throws JitError (naming the missing entry point or the runtime's reason) when there is
// no usable driver. Resolved once per process.
const Api& api();

[[noreturn]] void throw_error(CUresult status, const char* call, const char* file, int line);

}  // namespace streampipe::jit::driver

#define SP_CU_CHECK(call)                                                               \
  do {                                                                                  \
    const CUresult sp_cu_status_ = (call);                                              \
    if (sp_cu_status_ != CUDA_SUCCESS) [[unlikely]]                                     \
      ::streampipe::jit::driver::throw_error(sp_cu_status_, #call, __FILE__, __LINE__); \
  } while (0)
