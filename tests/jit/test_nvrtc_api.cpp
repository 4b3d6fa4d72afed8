// SPDX-License-Identifier: Apache-2.0
// NVRTC, loaded when first asked for (src/jit/nvrtc_api.hpp), not linked: the library is
// found, has every entry point jit calls, names its statuses, and is the one file in use.
// No GPU is needed.

#include "nvrtc_api.hpp"
#include "streampipe/jit/program.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace streampipe::jit {
namespace {

TEST(NvrtcApi, LoadsWithEveryEntryPoint) {
  const detail::NvrtcApi& t = detail::nvrtc();
  const void* entries[] = {reinterpret_cast<const void*>(t.version),
                           reinterpret_cast<const void*>(t.get_error_string),
                           reinterpret_cast<const void*>(t.get_num_supported_archs),
                           reinterpret_cast<const void*>(t.get_supported_archs),
                           reinterpret_cast<const void*>(t.create_program),
                           reinterpret_cast<const void*>(t.destroy_program),
                           reinterpret_cast<const void*>(t.add_name_expression),
                           reinterpret_cast<const void*>(t.compile_program),
                           reinterpret_cast<const void*>(t.get_program_log_size),
                           reinterpret_cast<const void*>(t.get_program_log),
                           reinterpret_cast<const void*>(t.get_lowered_name),
                           reinterpret_cast<const void*>(t.get_cubin_size),
                           reinterpret_cast<const void*>(t.get_cubin),
                           reinterpret_cast<const void*>(t.get_ptx_size),
                           reinterpret_cast<const void*>(t.get_ptx)};
  static_assert(sizeof(entries) / sizeof(entries[0]) * sizeof(void*) == sizeof(detail::NvrtcApi),
                "every entry of the table is checked");
  for (const void* e : entries) EXPECT_NE(e, nullptr);
  EXPECT_STREQ(detail::nvrtc_status_name(NVRTC_ERROR_COMPILATION), "NVRTC_ERROR_COMPILATION");
  EXPECT_EQ(&detail::nvrtc(), &t);  // loaded once
}

TEST(NvrtcApi, TheLibraryInUseIsOneFileWithItsSoname) {
  const std::string path = nvrtc_library_path();
  EXPECT_TRUE(std::filesystem::exists(path)) << path;
  EXPECT_EQ(std::filesystem::path(path).filename().string().rfind("libnvrtc.so.", 0), 0u) << path;
  EXPECT_EQ(nvrtc_library_path(), path);
  EXPECT_GE(nvrtc_version(), 12000);
}

}  // namespace
}  // namespace streampipe::jit
