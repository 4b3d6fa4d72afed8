// SPDX-License-Identifier: Apache-2.0
#include "cublaslt_api.hpp"

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

template <typename F>
void resolve(void* library, const char* symbol, F& out, Loaded& loaded) {
  if (!loaded.failure.empty()) return;
  out = reinterpret_cast<F>(::dlsym(library, symbol));
  if (out == nullptr) {
    loaded.failure = fmt::format("{} has no {}", kLibrary, symbol);
    loaded.call = fmt::format("dlsym(\"{}\")", symbol);
  }
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
  resolve(library, "cublasLtCreate", t.create, l);
  resolve(library, "cublasLtDestroy", t.destroy, l);
  resolve(library, "cublasLtGetStatusName", t.get_status_name, l);
  resolve(library, "cublasLtGetStatusString", t.get_status_string, l);
  resolve(library, "cublasLtMatmul", t.matmul, l);
  resolve(library, "cublasLtMatmulDescCreate", t.matmul_desc_create, l);
  resolve(library, "cublasLtMatmulDescDestroy", t.matmul_desc_destroy, l);
  resolve(library, "cublasLtMatmulDescSetAttribute", t.matmul_desc_set_attribute, l);
  resolve(library, "cublasLtMatrixLayoutCreate", t.matrix_layout_create, l);
  resolve(library, "cublasLtMatrixLayoutDestroy", t.matrix_layout_destroy, l);
  resolve(library, "cublasLtMatmulPreferenceCreate", t.matmul_preference_create, l);
  resolve(library, "cublasLtMatmulPreferenceDestroy", t.matmul_preference_destroy, l);
  resolve(library, "cublasLtMatmulPreferenceSetAttribute", t.matmul_preference_set_attribute, l);
  resolve(library, "cublasLtMatmulAlgoGetHeuristic", t.matmul_algo_get_heuristic, l);
  resolve(library, "cublasLtMatmulAlgoInit", t.matmul_algo_init, l);
  resolve(library, "cublasLtMatmulAlgoCheck", t.matmul_algo_check, l);
  resolve(library, "cublasLtMatmulAlgoCapGetAttribute", t.matmul_algo_cap_get_attribute, l);
  resolve(library, "cublasLtMatmulAlgoConfigGetAttribute", t.matmul_algo_config_get_attribute, l);
  resolve(library, "cublasLtMatmulAlgoConfigSetAttribute", t.matmul_algo_config_set_attribute, l);
  return l;
}

}  // namespace

const LtApi& lt() {
  static const Loaded loaded = load();
  if (!loaded.failure.empty()) throw CublasLtError(loaded.failure, loaded.call, __FILE__, __LINE__);
  return loaded.table;
}

}  // namespace streampipe::serving::detail
