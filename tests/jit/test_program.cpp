// SPDX-License-Identifier: Apache-2.0
// NVRTC runs on the CPU: these compile real kernels without a device.
#include "streampipe/jit/errors.hpp"
#include "streampipe/jit/program.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using namespace streampipe::jit;

namespace {

const char* add_source = R"(
extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
)";

std::string text_of(const CompileResult& r) {
  return std::string(reinterpret_cast<const char*>(r.binary.data()), r.binary.size());
}

}  // namespace

TEST(Program, CompilesToCubinForSm90) {
  const CompileResult r = compile(Program("add.cu", add_source), "sm_90");
  EXPECT_EQ(r.kind, BinaryKind::cubin);
  EXPECT_EQ(r.arch, "sm_90");
  ASSERT_GT(r.binary.size(), 4u);
  EXPECT_EQ(std::memcmp(r.binary.data(), "\x7f" "ELF", 4), 0) << "a CUBIN is an ELF image";
  EXPECT_GT(r.compile_ms, 0.0);
  EXPECT_FALSE(r.from_disk_cache);
}

TEST(Program, CompilesToPtxForComputeArch) {
  const CompileResult r = compile(Program("add.cu", add_source), "compute_90");
  EXPECT_EQ(r.kind, BinaryKind::ptx);
  const std::string ptx = text_of(r);
  EXPECT_NE(ptx.find(".entry add"), std::string::npos);
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos);
}

TEST(Program, NameExpressionsAreLowered) {
  Program p("scale.cu", R"(
template <typename T> __global__ void scale(T* x, T f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= f;
})");
  p.name_expression("scale<float>").name_expression("scale<double>");
  const CompileResult r = compile(p, "compute_90");
  ASSERT_EQ(r.lowered.size(), 2u);
  EXPECT_EQ(r.lowered.at("scale<float>"), "_Z5scaleIfEvPT_S0_i");
  EXPECT_EQ(r.lowered.at("scale<double>"), "_Z5scaleIdEvPT_S0_i");
  EXPECT_EQ(r.symbol("scale<float>"), "_Z5scaleIfEvPT_S0_i");
  EXPECT_EQ(r.symbol("plain"), "plain");
  EXPECT_NE(text_of(r).find("_Z5scaleIdEvPT_S0_i"), std::string::npos);
}

TEST(Program, InMemoryHeadersAndOptions) {
  Program p("h.cu", "#include \"consts.h\"\nextern \"C\" __global__ void k(float* x) { x[0] = FACTOR; }\n");
  p.header("consts.h", "#define FACTOR 2.5f\n").option("-DUNUSED=1").option("--use_fast_math");
  EXPECT_NO_THROW((void)compile(p, "sm_90"));
}

TEST(Program, CompileErrorCarriesLogAndNumberedLines) {
  const std::string source = "// line 1\nextern \"C\" __global__ void k(float* x) {\n  x[0] = undefined_name;\n}\n";
  try {
    (void)compile(Program("broken.cu", source), "sm_90");
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.program_name(), "broken.cu");
    EXPECT_NE(e.log().find("undefined_name"), std::string::npos) << e.log();
    const std::string what = e.what();
    EXPECT_NE(what.find("broken.cu(3)"), std::string::npos) << what;
    EXPECT_NE(what.find(">3 |   x[0] = undefined_name;"), std::string::npos) << what;
    EXPECT_NE(what.find(" 2 | extern"), std::string::npos) << "context lines around the error: " << what;
  }
}

TEST(Program, NumberedExcerptMarksOnlyNamedLines) {
  std::string source;
  for (int i = 1; i <= 20; ++i) source += "line" + std::to_string(i) + "\n";
  const std::string out = numbered_source_excerpt("p.cu", "p.cu(10): error: bad\n", source, 1);
  EXPECT_NE(out.find(">10 | line10"), std::string::npos) << out;
  EXPECT_NE(out.find("  9 | line9"), std::string::npos) << out;
  EXPECT_EQ(out.find("line5\n"), std::string::npos) << out;
  // A log naming no line of the program shows the whole source.
  EXPECT_NE(numbered_source_excerpt("p.cu", "other.h(2): error", source).find("line20"), std::string::npos);
}

TEST(Program, RejectsBadArchitectureAndName) {
  EXPECT_THROW((void)compile(Program("a.cu", add_source), "sm90"), JitError);
  EXPECT_THROW((void)compile(Program("a.cu", add_source), "gfx90a"), JitError);
  EXPECT_THROW(Program("a.cu", add_source).arch("x"), JitError);
  EXPECT_THROW(Program("", add_source), JitError);
}

TEST(Program, VersionAndArchitectures) {
  EXPECT_GE(nvrtc_version(), 12000);
  const auto& archs = nvrtc_supported_archs();
  ASSERT_FALSE(archs.empty());
  EXPECT_EQ(arch_for(90), "sm_90");
  // A device newer than NVRTC knows gets PTX of the newest known architecture.
  EXPECT_EQ(arch_for(archs.back() + 1), "compute_" + std::to_string(archs.back()));
  EXPECT_THROW((void)arch_for(10), JitError);
}

TEST(Program, FindsTheCudaIncludeDirectory) {
  const std::string dir = cuda_include_dir();
  ASSERT_FALSE(dir.empty());
  Program p("inc.cu", "#include <cuda_fp16.h>\nextern \"C\" __global__ void k(__half* x) { x[0] = __float2half(1.0f); }\n");
  p.include_dir(dir);
  EXPECT_NO_THROW((void)compile(p, "sm_90"));
}
