// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal: cuBLASLt, loaded when the serving layer's MLP first needs it (dlopen of
// libcublasLt.so.<major>), not when a program that links streampipe starts: loading the
// library registers its thousands of kernels, which cost every process that linked it
// about 60 ms and 200 MB of memory before main, whatever it then did (docs/batching.md).
// The table lists the entry points the serving layer calls and grows with them; a caller
// that needs another adds it here.

#include "streampipe/cuda/error.hpp"

#include <cublasLt.h>

#include <string>

namespace streampipe::serving {

// A cuBLASLt call failed (its status, name and text), or the library could not be loaded
// (CUBLAS_STATUS_NOT_INITIALIZED with the loader's reason). Internal to the serving layer;
// callers catch it as streampipe::Error.
class CublasLtError : public Error {
 public:
  CublasLtError(cublasStatus_t status, const char* call, const char* file, int line);
  CublasLtError(std::string why, std::string call, const char* file, int line);
};

}  // namespace streampipe::serving

namespace streampipe::serving::detail {

struct LtApi {
  decltype(&::cublasLtCreate) create = nullptr;
  decltype(&::cublasLtDestroy) destroy = nullptr;
  decltype(&::cublasLtGetStatusName) get_status_name = nullptr;
  decltype(&::cublasLtGetStatusString) get_status_string = nullptr;
  decltype(&::cublasLtMatmul) matmul = nullptr;
  decltype(&::cublasLtMatmulDescCreate) matmul_desc_create = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) matmul_desc_destroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) matmul_desc_set_attribute = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) matrix_layout_create = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) matrix_layout_destroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) matmul_preference_create = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) matmul_preference_destroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) matmul_preference_set_attribute = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) matmul_algo_get_heuristic = nullptr;
  decltype(&::cublasLtMatmulAlgoInit) matmul_algo_init = nullptr;
  decltype(&::cublasLtMatmulAlgoCheck) matmul_algo_check = nullptr;
  decltype(&::cublasLtMatmulAlgoCapGetAttribute) matmul_algo_cap_get_attribute = nullptr;
  decltype(&::cublasLtMatmulAlgoConfigGetAttribute) matmul_algo_config_get_attribute = nullptr;
  decltype(&::cublasLtMatmulAlgoConfigSetAttribute) matmul_algo_config_set_attribute = nullptr;
};

// The table, loaded once per process. Throws CublasLtError (CUBLAS_STATUS_NOT_INITIALIZED)
// naming the library and the loader's reason when it cannot be loaded or lacks an entry
// point - every time it is asked.
[[nodiscard]] const LtApi& lt();

}  // namespace streampipe::serving::detail
