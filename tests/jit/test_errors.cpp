// SPDX-License-Identifier: Apache-2.0
// NVRTC's error families are streampipe::Errors of the NVRTC API: a program that does not
// compile (CompileError, with the log) and any other NVRTC failure (NvrtcError, with the
// status and the call's options). Wrong input is a JitError, a std::invalid_argument and
// not a library failure. NVRTC runs on the CPU: these compile real programs.

#include "streampipe/jit/disk_cache.hpp"
#include "streampipe/jit/errors.hpp"
#include "streampipe/jit/program.hpp"

#include <gtest/gtest.h>
#include <nvrtc.h>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace streampipe::jit {
namespace {

static_assert(std::is_base_of_v<Error, NvrtcError> && std::is_base_of_v<NvrtcError, CompileError>);
static_assert(std::is_base_of_v<std::invalid_argument, JitError> && !std::is_base_of_v<Error, JitError>);
static_assert(std::is_nothrow_copy_constructible_v<CompileError>);

TEST(NvrtcError, CompileErrorIsAnNvrtcErrorWithItsStatus) {
  const std::string source = "extern \"C\" __global__ void k(float* x) {\n  x[0] = nonsense;\n}\n";
  try {
    (void)compile(Program("broken.cu", source).option("-DX=1"), "sm_90");
    FAIL() << "expected a compile error";
  } catch (const Error& e) {
    EXPECT_EQ(e.api(), Error::Api::nvrtc);
    EXPECT_STREQ(e.api_name(), "NVRTC");
    EXPECT_EQ(e.status(), static_cast<int>(NVRTC_ERROR_COMPILATION));
    EXPECT_EQ(e.status_name(), "NVRTC_ERROR_COMPILATION");
    EXPECT_EQ(e.call(), "nvrtcCompileProgram(broken.cu, options [--gpu-architecture=sm_90 -DX=1])");
    EXPECT_TRUE(e.file().empty()) << "the lines that matter are the source's: " << e.file();
    const auto* compile_error = dynamic_cast<const CompileError*>(&e);
    ASSERT_NE(compile_error, nullptr);
    EXPECT_EQ(compile_error->program_name(), "broken.cu");
    EXPECT_NE(compile_error->log().find("nonsense"), std::string::npos);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("NVRTC error NVRTC_ERROR_COMPILATION (6): could not compile broken.cu\n", 0), 0u) << what;
    EXPECT_NE(what.find(">2 |   x[0] = nonsense;"), std::string::npos) << what;
  }
}

TEST(NvrtcError, AnotherNvrtcFailureCarriesStatusCallAndLog) {
  try {
    (void)compile(Program("opts.cu", "extern \"C\" __global__ void k() {}\n").option("--no-such-option"), "sm_90");
    FAIL() << "NVRTC accepted an unknown option";
  } catch (const CompileError& e) {
    FAIL() << "an unknown option is not a compile error: " << e.what();
  } catch (const NvrtcError& e) {
    EXPECT_EQ(e.api(), Error::Api::nvrtc);
    EXPECT_EQ(e.status(), static_cast<int>(NVRTC_ERROR_INVALID_OPTION));
    EXPECT_EQ(e.status_name(), "NVRTC_ERROR_INVALID_OPTION");
    EXPECT_EQ(e.program_name(), "opts.cu");
    EXPECT_NE(e.call().find("--no-such-option"), std::string::npos) << e.call();
    EXPECT_NE(e.file().find("program.cpp"), std::string::npos) << e.file();
    EXPECT_GT(e.line(), 0);
    const std::string what = e.what();
    EXPECT_NE(what.find("program opts.cu"), std::string::npos) << what;
    EXPECT_NE(what.find("no-such-option"), std::string::npos) << what;
  }
}

TEST(JitError, WrongInputIsInvalidArgumentNamingIt) {
  try {
    (void)compile(Program("a.cu", "extern \"C\" __global__ void k() {}\n"), "gfx90a");
    FAIL() << "a foreign architecture was accepted";
  } catch (const Error& e) {
    FAIL() << "wrong input is not a library failure: " << e.what();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(dynamic_cast<const JitError*>(&e), nullptr);
    EXPECT_NE(std::string(e.what()).find("'gfx90a'"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)decode_entry("not an entry", CacheKey{}), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe::jit
