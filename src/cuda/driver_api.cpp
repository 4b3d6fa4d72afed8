// SPDX-License-Identifier: Apache-2.0
#include "driver_api.hpp"

#include "streampipe/cuda/error.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <string>
#include <type_traits>

namespace streampipe::driver {
namespace {

// Why the table is unusable: the runtime could not reach the driver (runtime_status), or the
// driver lacks a required entry point (missing). The first reason found is kept.
struct LoadFailure {
  cudaError_t runtime_status = cudaSuccess;
  const char* symbol = nullptr;  // a string literal
  int line = 0;
  [[nodiscard]] bool failed() const noexcept { return symbol != nullptr; }
};

struct State {
  Api table;
  LoadFailure failure;
};
// Nothing to destroy at exit: modules held in static caches unload during exit, after other
// statics, and still read the table.
static_assert(std::is_trivially_destructible_v<State>);

std::string lookup_call(const char* symbol) {
  return fmt::format("cudaGetDriverEntryPointByVersion(\"{}\", {})", symbol, CUDART_VERSION);
}

template <typename F>
void resolve(const char* symbol, F& out, LoadFailure& failure, bool required) noexcept {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t status =
      cudaGetDriverEntryPointByVersion(symbol, &fn, CUDART_VERSION, cudaEnableDefault, &query);
  if (status == cudaSuccess && query == cudaDriverEntryPointSuccess && fn != nullptr) {
    out = reinterpret_cast<F>(fn);
    return;
  }
  if (status != cudaSuccess) detail::clear_expected_error();  // a failed lookup is not sticky
  if (required && !failure.failed()) failure = LoadFailure{status, symbol, __LINE__};
}

State load() noexcept {
  State st;
  Api& a = st.table;
  LoadFailure& f = st.failure;
  resolve("cuGetErrorName", a.get_error_name, f, true);
  resolve("cuGetErrorString", a.get_error_string, f, true);
  resolve("cuCtxGetCurrent", a.ctx_get_current, f, true);
  resolve("cuCtxPushCurrent", a.ctx_push_current, f, true);
  resolve("cuCtxPopCurrent", a.ctx_pop_current, f, true);
  resolve("cuModuleLoadData", a.module_load_data, f, true);
  resolve("cuModuleUnload", a.module_unload, f, true);
  resolve("cuModuleGetFunction", a.module_get_function, f, true);
  resolve("cuModuleGetGlobal", a.module_get_global, f, true);
  resolve("cuLaunchKernel", a.launch_kernel, f, true);
  resolve("cuFuncSetAttribute", a.func_set_attribute, f, true);
  resolve("cuOccupancyMaxActiveBlocksPerMultiprocessor", a.occupancy, f, true);
  resolve("cuFuncGetParamInfo", a.func_get_param_info, f, false);
  resolve("cuModuleGetFunctionCount", a.module_get_function_count, f, false);
  resolve("cuModuleEnumerateFunctions", a.module_enumerate_functions, f, false);
  resolve("cuFuncGetName", a.func_get_name, f, false);
  resolve("cuPointerGetAttributes", a.pointer_get_attributes, f, false);
  resolve("cuDevicePrimaryCtxGetState", a.primary_ctx_get_state, f, false);
  return st;
}

// Resolved once per process, on first use.
const State& state() noexcept {
  static const State st = load();
  return st;
}

}  // namespace

const Api& resolved() noexcept { return state().table; }

bool available() noexcept { return !state().failure.failed(); }

const Api& api() {
  const State& st = state();
  const LoadFailure& f = st.failure;
  if (f.failed()) {
    const std::string call = lookup_call(f.symbol);
    if (f.runtime_status != cudaSuccess) throw CudaError(f.runtime_status, call.c_str(), __FILE__, f.line);
    throw DriverError(static_cast<int>(CUDA_ERROR_NOT_FOUND), "CUDA_ERROR_NOT_FOUND",
                      fmt::format("the CUDA driver has no entry point {} (a driver older than CUDA {}.{}?)", f.symbol,
                                  CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10),
                      call, __FILE__, f.line);
  }
  return st.table;
}

void throw_error(CUresult status, const char* call, const char* file, int line) {
  const char* name = nullptr;
  const char* text = nullptr;
  const Api& a = api();
  if (a.get_error_name(status, &name) != CUDA_SUCCESS || name == nullptr) name = "CUDA_ERROR_UNKNOWN";
  if (a.get_error_string(status, &text) != CUDA_SUCCESS || text == nullptr) text = "unknown error";
  throw DriverError(static_cast<int>(status), name, text, call != nullptr ? call : "", file, line);
}

}  // namespace streampipe::driver
