// SPDX-License-Identifier: Apache-2.0
// cuBLASLt, loaded when first asked for (src/serving/cublaslt_api.hpp): the library is found
// and has every entry point the serving layer calls; its status names come through it. No
// GPU is needed to load it.

#include "cublaslt_api.hpp"

#include <gtest/gtest.h>

#include <string>

namespace streampipe::serving {
namespace {

#ifdef STREAMPIPE_HAVE_CUBLAS
TEST(CublasLtApi, LoadsWithEveryEntryPoint) {
  const detail::LtApi& t = detail::lt();
  const void* entries[] = {reinterpret_cast<const void*>(t.create),
                           reinterpret_cast<const void*>(t.destroy),
                           reinterpret_cast<const void*>(t.get_status_name),
                           reinterpret_cast<const void*>(t.get_status_string),
                           reinterpret_cast<const void*>(t.matmul),
                           reinterpret_cast<const void*>(t.matmul_desc_create),
                           reinterpret_cast<const void*>(t.matmul_desc_destroy),
                           reinterpret_cast<const void*>(t.matmul_desc_set_attribute),
                           reinterpret_cast<const void*>(t.matrix_layout_create),
                           reinterpret_cast<const void*>(t.matrix_layout_destroy),
                           reinterpret_cast<const void*>(t.matmul_preference_create),
                           reinterpret_cast<const void*>(t.matmul_preference_destroy),
                           reinterpret_cast<const void*>(t.matmul_preference_set_attribute),
                           reinterpret_cast<const void*>(t.matmul_algo_get_heuristic),
                           reinterpret_cast<const void*>(t.matmul_algo_init),
                           reinterpret_cast<const void*>(t.matmul_algo_check),
                           reinterpret_cast<const void*>(t.matmul_algo_cap_get_attribute),
                           reinterpret_cast<const void*>(t.matmul_algo_config_get_attribute),
                           reinterpret_cast<const void*>(t.matmul_algo_config_set_attribute)};
  static_assert(sizeof(entries) / sizeof(entries[0]) * sizeof(void*) == sizeof(detail::LtApi),
                "every entry of the table is checked");
  for (const void* e : entries) EXPECT_NE(e, nullptr);
  EXPECT_EQ(std::string(t.get_status_name(CUBLAS_STATUS_NOT_SUPPORTED)), "CUBLAS_STATUS_NOT_SUPPORTED");
  EXPECT_EQ(&detail::lt(), &t);  // loaded once
}
#endif

}  // namespace
}  // namespace streampipe::serving
