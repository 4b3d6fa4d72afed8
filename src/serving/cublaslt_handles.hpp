// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal: cuBLASLt status checks and owning handles for the MLP, through the lazily
// loaded table (cublaslt_api.hpp). SP_CUBLAS_CHECK(call) throws CublasLtError: a
// streampipe::Error with api() cuBLASLt, the cublasStatus_t, its name and text, the call and
// file:line.

#include "cublaslt_api.hpp"

#include <cstdint>
#include <memory>
#include <type_traits>

namespace streampipe::serving::detail {

[[noreturn]] inline void throw_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  throw CublasLtError(status, call, file, line);
}

#define SP_CUBLAS_CHECK(call) \
  SP_STATUS_CHECK(call, CUBLAS_STATUS_SUCCESS, ::streampipe::serving::detail::throw_cublas)

// Each handle is destroyed through the table it was made with (which is loaded by then).
template <typename Handle, cublasStatus_t (*LtApi::*Destroy)(Handle)>
struct CublasDeleter {
  void operator()(Handle h) const noexcept { (void)(lt().*Destroy)(h); }  // destructors never throw
};

using LtHandle =
    std::unique_ptr<std::remove_pointer_t<cublasLtHandle_t>, CublasDeleter<cublasLtHandle_t, &LtApi::destroy>>;
using MatmulDesc = std::unique_ptr<std::remove_pointer_t<cublasLtMatmulDesc_t>,
                                   CublasDeleter<cublasLtMatmulDesc_t, &LtApi::matmul_desc_destroy>>;
using MatrixLayout = std::unique_ptr<std::remove_pointer_t<cublasLtMatrixLayout_t>,
                                     CublasDeleter<cublasLtMatrixLayout_t, &LtApi::matrix_layout_destroy>>;
using MatmulPreference = std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>,
                                         CublasDeleter<cublasLtMatmulPreference_t, &LtApi::matmul_preference_destroy>>;

inline LtHandle make_handle() {
  cublasLtHandle_t h = nullptr;
  SP_CUBLAS_CHECK(lt().create(&h));
  return LtHandle(h);
}

// bf16 inputs/outputs, fp32 accumulation and scale; D = op(A) · B with op(A) = A^T.
inline MatmulDesc make_tn_desc() {
  cublasLtMatmulDesc_t d = nullptr;
  SP_CUBLAS_CHECK(lt().matmul_desc_create(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  MatmulDesc desc(d);
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  SP_CUBLAS_CHECK(lt().matmul_desc_set_attribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  SP_CUBLAS_CHECK(lt().matmul_desc_set_attribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  return desc;
}

// Column-major bf16 matrix of rows × cols with leading dimension ld.
inline MatrixLayout make_layout(std::uint64_t rows, std::uint64_t cols, std::int64_t ld) {
  cublasLtMatrixLayout_t l = nullptr;
  SP_CUBLAS_CHECK(lt().matrix_layout_create(&l, CUDA_R_16BF, rows, cols, ld));
  return MatrixLayout(l);
}

inline MatmulPreference make_preference(std::size_t workspace_bytes) {
  cublasLtMatmulPreference_t p = nullptr;
  SP_CUBLAS_CHECK(lt().matmul_preference_create(&p));
  MatmulPreference pref(p);
  const std::uint64_t ws = workspace_bytes;
  SP_CUBLAS_CHECK(
      lt().matmul_preference_set_attribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  return pref;
}

constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;  // what cuBLAS suggests for Hopper

}  // namespace streampipe::serving::detail
