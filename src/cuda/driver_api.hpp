// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal to streampipe (not installed): the CUDA driver API, loaded lazily through the
// runtime (cudaGetDriverEntryPointByVersion) so that nothing links libcuda. The library and
// the CLI start on machines with no driver; only a layer that calls the driver (jit's
// modules) asks for it. The table lists the entry points streampipe uses and grows with
// them, so it is not a public contract; what callers see of it is DriverError
// (streampipe/cuda/error.hpp). SP_CU_CHECK turns a failed call into DriverError. This is the
// one place streampipe looks up driver entry points: a caller that needs another adds it here.

#include "streampipe/cuda/error.hpp"

#include <cuda.h>

namespace streampipe::driver {

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
  // Optional (newer drivers; nullptr when absent): parameter introspection and listing a
  // module's kernels.
  decltype(&::cuFuncGetParamInfo) func_get_param_info = nullptr;
  decltype(&::cuModuleGetFunctionCount) module_get_function_count = nullptr;
  decltype(&::cuModuleEnumerateFunctions) module_enumerate_functions = nullptr;
  decltype(&::cuFuncGetName) func_get_name = nullptr;
  // Optional: core's is_device_mapped reads it through resolved() and answers "not mapped"
  // without it.
  decltype(&::cuPointerGetAttributes) pointer_get_attributes = nullptr;
  // Optional: whether a device's primary context exists (tests of which GPUs a process uses).
  decltype(&::cuDevicePrimaryCtxGetState) primary_ctx_get_state = nullptr;
};

// The table, resolved once per process. When there is no usable driver it throws, every
// time it is asked: CudaError with the runtime's status when the runtime cannot reach the
// driver (is_no_device_status() tells "no GPU here"), DriverError (CUDA_ERROR_NOT_FOUND)
// naming the entry point a driver too old lacks.
[[nodiscard]] const Api& api();

// The same table, never throwing: every entry point the driver has, each one it lacks
// nullptr (required ones included), all of them nullptr when the runtime cannot reach a
// driver (no GPU, no driver). For callers that carry on without the driver: test the entry
// you call. Resolved once per process (by the first call of this, api() or available());
// after that a call reads an initialized static.
[[nodiscard]] const Api& resolved() noexcept;

// Never throws: true when api() returns the table (a driver is reachable and has every
// required entry point), false when api() throws.
[[nodiscard]] bool available() noexcept;

// Throws DriverError for `status` with the driver's name and text for it.
[[noreturn]] void throw_error(CUresult status, const char* call, const char* file, int line);

}  // namespace streampipe::driver

#define SP_CU_CHECK(call) SP_STATUS_CHECK(call, CUDA_SUCCESS, ::streampipe::driver::throw_error)
