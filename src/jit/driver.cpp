// SPDX-License-Identifier: Apache-2.0
#include "driver.hpp"

#include "streampipe/jit/errors.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <string>

namespace streampipe::jit::driver {
namespace {

template <typename F>
bool resolve(const char* symbol, F& out, std::string& error, bool required) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t status =
      cudaGetDriverEntryPointByVersion(symbol, &fn, CUDART_VERSION, cudaEnableDefault, &query);
  if (status != cudaSuccess || query != cudaDriverEntryPointSuccess || fn == nullptr) {
    if (status != cudaSuccess) (void)cudaGetLastError();  // not sticky: a failed lookup
    if (required && error.empty())
      error = status != cudaSuccess
                  ? fmt::format("cannot reach the CUDA driver for {}: {}", symbol, cudaGetErrorString(status))
                  : fmt::format("the CUDA driver has no entry point {} (driver too old?)", symbol);
    return false;
  }
  out = reinterpret_cast<F>(fn);
  return true;
}

}  // namespace

const Api& api() {
  struct State {
    Api table;
    std::string error;
  };
  // Never destroyed: modules held in static caches unload during exit, after other statics.
  static const State* const state = [] {
    auto* st = new State;
    Api& a = st->table;
    std::string& e = st->error;
    resolve("cuGetErrorName", a.get_error_name, e, true);
    resolve("cuGetErrorString", a.get_error_string, e, true);
    resolve("cuCtxGetCurrent", a.ctx_get_current, e, true);
    resolve("cuCtxPushCurrent", a.ctx_push_current, e, true);
    resolve("cuCtxPopCurrent", a.ctx_pop_current, e, true);
    resolve("cuModuleLoadData", a.module_load_data, e, true);
    resolve("cuModuleUnload", a.module_unload, e, true);
    resolve("cuModuleGetFunction", a.module_get_function, e, true);
    resolve("cuModuleGetGlobal", a.module_get_global, e, true);
    resolve("cuLaunchKernel", a.launch_kernel, e, true);
    resolve("cuFuncSetAttribute", a.func_set_attribute, e, true);
    resolve("cuOccupancyMaxActiveBlocksPerMultiprocessor", a.occupancy, e, true);
    resolve("cuFuncGetParamInfo", a.func_get_param_info, e, false);
    resolve("cuModuleGetFunctionCount", a.module_get_function_count, e, false);
    resolve("cuModuleEnumerateFunctions", a.module_enumerate_functions, e, false);
    resolve("cuFuncGetName", a.func_get_name, e, false);
    resolve("cuTensorMapEncodeTiled", a.tensor_map_encode_tiled, e, false);
    return st;
  }();
  if (!state->error.empty()) throw JitError(state->error);
  return state->table;
}

void throw_error(CUresult status, const char* call, const char* file, int line) {
  const char* name = nullptr;
  const char* text = nullptr;
  const Api& a = api();
  if (a.get_error_name(status, &name) != CUDA_SUCCESS) name = "CUDA_ERROR_UNKNOWN";
  if (a.get_error_string(status, &text) != CUDA_SUCCESS) text = "unknown error";
  throw DriverError(static_cast<int>(status), call, name, text, file, line);
}

}  // namespace streampipe::jit::driver
