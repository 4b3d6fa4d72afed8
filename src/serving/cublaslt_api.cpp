// SPDX-License-Identifier: Apache-2.0
#include "cublaslt_api.hpp"

#include "../cuda/entry_points.hpp"
#include "streampipe/cuda/error.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <string>

namespace streampipe::serving {

CublasLtError::CublasLtError(cublasStatus_t status, const char* call, const char* file, int line)
    : Error({.api = Api::cublaslt,
             .status = static_cast<int>(status),
             .status_name = detail::lt().get_status_name(status),
             .description = detail::lt().get_status_string(status),
             .call = call,
             .file = file,
             .line = line,
             .detail = {}}) {}

CublasLtError::CublasLtError(std::string why, std::string call, const char* file, int line)
    : Error({.api = Api::cublaslt,
             .status = static_cast<int>(CUBLAS_STATUS_NOT_INITIALIZED),
             .status_name = "CUBLAS_STATUS_NOT_INITIALIZED",
             .description = std::move(why),
             .call = std::move(call),
             .file = file,
             .line = line,
             .detail = {}}) {}

}  // namespace streampipe::serving

namespace streampipe::serving::detail {
namespace {

#define SP_STRINGIFY2(x) #x
#define SP_STRINGIFY(x) SP_STRINGIFY2(x)
constexpr const char* kLibrary = "libcublasLt.so." SP_STRINGIFY(CUBLAS_VER_MAJOR);

struct Loaded {
  LtApi table;
  std::string failure;  // empty when every entry point was found
  std::string call;     // the loader call that failed
};

// By its name first (LD_LIBRARY_PATH, the program's run path, the system's cache), then
// next to the CUDA runtime this process uses: where the toolkit keeps both.
void* open_library(std::string& tried) {
  if (void* h = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL)) return h;
  tried = ::dlerror();
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&cudaRuntimeGetVersion), &info) != 0 && info.dli_fname != nullptr) {
    const auto beside = std::filesystem::path(info.dli_fname).parent_path() / kLibrary;
    if (void* h = ::dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    tried += fmt::format("; {}", ::dlerror());
  }
  return nullptr;
}

Loaded load() {
  Loaded l;
  std::string tried;
  void* library = open_library(tried);  // never closed: handles and kernels live until exit
  if (library == nullptr) {
    l.failure = fmt::format("cannot load {} (serve-bench's model needs it): {}", kLibrary, tried);
    l.call = fmt::format("dlopen(\"{}\")", kLibrary);
    return l;
  }
  LtApi& t = l.table;
  ::streampipe::detail::EntryPoints e(library, kLibrary);
  e.resolve("cublasLtCreate", t.create);
  e.resolve("cublasLtDestroy", t.destroy);
  e.resolve("cublasLtGetStatusName", t.get_status_name);
  e.resolve("cublasLtGetStatusString", t.get_status_string);
  e.resolve("cublasLtMatmul", t.matmul);
  e.resolve("cublasLtMatmulDescCreate", t.matmul_desc_create);
  e.resolve("cublasLtMatmulDescDestroy", t.matmul_desc_destroy);
  e.resolve("cublasLtMatmulDescSetAttribute", t.matmul_desc_set_attribute);
  e.resolve("cublasLtMatrixLayoutCreate", t.matrix_layout_create);
  e.resolve("cublasLtMatrixLayoutDestroy", t.matrix_layout_destroy);
  e.resolve("cublasLtMatmulPreferenceCreate", t.matmul_preference_create);
  e.resolve("cublasLtMatmulPreferenceDestroy", t.matmul_preference_destroy);
  e.resolve("cublasLtMatmulPreferenceSetAttribute", t.matmul_preference_set_attribute);
  e.resolve("cublasLtMatmulAlgoGetHeuristic", t.matmul_algo_get_heuristic);
  e.resolve("cublasLtMatmulAlgoInit", t.matmul_algo_init);
  e.resolve("cublasLtMatmulAlgoCheck", t.matmul_algo_check);
  e.resolve("cublasLtMatmulAlgoCapGetAttribute", t.matmul_algo_cap_get_attribute);
  e.resolve("cublasLtMatmulAlgoConfigGetAttribute", t.matmul_algo_config_get_attribute);
  e.resolve("cublasLtMatmulAlgoConfigSetAttribute", t.matmul_algo_config_set_attribute);
  l.failure = e.failure();
  l.call = e.call();
  return l;
}

}  // namespace

const LtApi& lt() {
  static const Loaded loaded = load();
  if (!loaded.failure.empty()) throw CublasLtError(loaded.failure, loaded.call, __FILE__, __LINE__);
  return loaded.table;
}

}  // namespace streampipe::serving::detail
