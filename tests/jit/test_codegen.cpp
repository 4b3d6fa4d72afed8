// SPDX-License-Identifier: Apache-2.0
// Code generation of ElementwiseKernel and ReductionKernel without a device: parameter
// parsing, vectorization planning, argument packing, and the generated sources compiled by
// NVRTC for sm_90.
#include "streampipe/jit/arguments.hpp"
#include "streampipe/jit/codegen.hpp"
#include "streampipe/jit/elementwise.hpp"
#include "streampipe/jit/errors.hpp"
#include "streampipe/jit/program.hpp"
#include "streampipe/jit/reduction.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

using namespace streampipe::jit;
using namespace streampipe::jit::codegen;

TEST(Codegen, ParsesParameterLists) {
  const auto p = parse_params(" const float* a, float const *b , double *__restrict__ c, float alpha, unsigned int k, MyType t");
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p[0].name, "a");
  EXPECT_EQ(p[0].type, "float");
  EXPECT_TRUE(p[0].is_pointer && p[0].is_const);
  EXPECT_TRUE(p[1].is_pointer && p[1].is_const);
  EXPECT_EQ(p[1].declaration(), "const float* b");
  EXPECT_TRUE(p[2].is_pointer && !p[2].is_const);
  EXPECT_EQ(p[2].info.size, 8u);
  EXPECT_FALSE(p[3].is_pointer);
  EXPECT_EQ(p[3].declaration(), "float alpha");
  EXPECT_EQ(p[4].type, "unsigned int");
  EXPECT_EQ(p[4].info.kind, ScalarKind::unsigned_integer);
  EXPECT_EQ(p[5].info.size, 0u) << "a user type is unknown to the generator";
}

TEST(Codegen, RejectsBadParameterLists) {
  for (const char* bad : {"", "float* a,", "float*", "float** a", "float& a", "float* i", "int n", "float* a, int a",
                          "float* sp_x", "float* 1a", "const float* for"})
    EXPECT_THROW((void)parse_params(bad), JitError) << "'" << bad << "'";
  try {
    (void)parse_params("float* a, float** b");
    FAIL();
  } catch (const JitError& e) {
    EXPECT_NE(std::string(e.what()).find("float** b"), std::string::npos) << e.what();
  }
}

TEST(Codegen, VectorizesPlainElementwiseOperations) {
  const auto p = parse_params("const float* a, const float* b, float* c");
  const VectorPlan plan = plan_vectorization(p, "c[i] = a[i] + b[ i ]");
  ASSERT_TRUE(plan.possible) << plan.reason;
  EXPECT_EQ(plan.elements, 4u);
  EXPECT_EQ(plan.rewritten, "sp_v_c.e[sp_k] = sp_v_a.e[sp_k] + sp_v_b.e[sp_k]");
  EXPECT_TRUE(plan.uses[0].read && !plan.uses[0].written);
  EXPECT_TRUE(plan.uses[1].read && !plan.uses[1].written);
  EXPECT_TRUE(!plan.uses[2].read && plan.uses[2].written) << "an output assigned outright is never loaded";
}

TEST(Codegen, LoadsOutputsThatAreReadOrAssignedConditionally) {
  const auto p = parse_params("const float* a, float* c");
  EXPECT_TRUE(plan_vectorization(p, "c[i] += a[i]").uses[1].read);
  EXPECT_TRUE(plan_vectorization(p, "c[i]++").uses[1].read);
  EXPECT_TRUE(plan_vectorization(p, "c[i] = c[i] * a[i]").uses[1].read);
  EXPECT_TRUE(plan_vectorization(p, "if (a[i] > 0) c[i] = a[i]").uses[1].read);
  EXPECT_TRUE(plan_vectorization(p, "a[i] > 0 && (c[i] = 1)").uses[1].read);
  EXPECT_FALSE(plan_vectorization(p, "c[i] = a[i] == 0 ? 1.0f : a[i]").uses[1].written == false);
  EXPECT_FALSE(plan_vectorization(p, "c[i] = a[i] == 0").uses[1].read);
}

TEST(Codegen, RefusesVectorizationWhenUnsafe) {
  const auto p = parse_params("const float* a, float* c");
  EXPECT_FALSE(plan_vectorization(p, "c[i] = a[i + 1]").possible);
  EXPECT_FALSE(plan_vectorization(p, "c[i] = a[n - 1 - i]").possible);
  EXPECT_FALSE(plan_vectorization(p, "c[i] = *a").possible);
  EXPECT_FALSE(plan_vectorization(parse_params("const float3* a, float* c"), "c[i] = a[i].x").possible);
  EXPECT_FALSE(plan_vectorization(parse_params("const Foo* a, float* c"), "c[i] = a[i].x").possible);
  EXPECT_FALSE(plan_vectorization(parse_params("float alpha"), "(void)alpha").possible);
  // Members and literals that look like array names are not uses.
  const VectorPlan ok = plan_vectorization(p, "c[i] = s.a + a[i] + sizeof(\"a[\")");
  EXPECT_TRUE(ok.possible) << ok.reason;
}

TEST(Codegen, ElementsPerStepFollowTheSmallestType) {
  EXPECT_EQ(plan_vectorization(parse_params("const double* a, double* c"), "c[i] = a[i]").elements, 2u);
  EXPECT_EQ(plan_vectorization(parse_params("const unsigned char* a, float* c"), "c[i] = a[i]").elements, 16u);
  EXPECT_EQ(plan_vectorization(parse_params("const float4* a, float4* c"), "c[i] = a[i]").elements, 1u);
}

TEST(Codegen, PacksAndConvertsArguments) {
  const auto p = parse_params("const float* a, float* c, float alpha, int k, unsigned char u, double d");
  float buf[4] = {};
  const std::vector<ArgumentValue> args = {ArgumentValue::of(static_cast<const float*>(buf)), ArgumentValue::of(buf),
                                           ArgumentValue::of(2),  // int -> float
                                           ArgumentValue::of(3.9), ArgumentValue::of(258), ArgumentValue::of(1.5f)};
  const auto packed = pack_arguments("k", p, args);
  ASSERT_EQ(packed.size(), 6u);
  const float* ptr = nullptr;
  std::memcpy(&ptr, packed[1].bytes.data(), sizeof ptr);
  EXPECT_EQ(ptr, buf);
  float alpha = 0;
  std::memcpy(&alpha, packed[2].bytes.data(), 4);
  EXPECT_EQ(packed[2].size, 4u);
  EXPECT_EQ(alpha, 2.0f);
  int k = 0;
  std::memcpy(&k, packed[3].bytes.data(), 4);
  EXPECT_EQ(k, 3);
  EXPECT_EQ(packed[4].size, 1u);
  EXPECT_EQ(static_cast<unsigned>(packed[4].bytes[0]), 2u);
  double d = 0;
  std::memcpy(&d, packed[5].bytes.data(), 8);
  EXPECT_EQ(d, 1.5);
}

TEST(Codegen, RejectsWrongArguments) {
  const auto p = parse_params("const float* a, float* c, float alpha");
  float f[2] = {};
  double g[2] = {};
  const float* cf = f;
  const auto of = [](auto... v) { return std::vector<ArgumentValue>{ArgumentValue::of(v)...}; };
  EXPECT_THROW((void)pack_arguments("k", p, of(f, f)), JitError);               // count
  EXPECT_THROW((void)pack_arguments("k", p, of(f, f, 1.0f, 2)), JitError);      // count
  EXPECT_THROW((void)pack_arguments("k", p, of(g, f, 1.0f)), JitError);         // element size
  EXPECT_THROW((void)pack_arguments("k", p, of(f, cf, 1.0f)), JitError);        // const into written
  EXPECT_THROW((void)pack_arguments("k", p, of(1.0f, f, 1.0f)), JitError);      // scalar for array
  EXPECT_THROW((void)pack_arguments("k", p, of(f, f, f)), JitError);            // pointer for scalar
  EXPECT_NO_THROW((void)pack_arguments("k", p, of(static_cast<void*>(f), f, 1.0)));
  try {
    (void)pack_arguments("add", p, of(g, f, 1.0f));
    FAIL();
  } catch (const JitError& e) {
    EXPECT_NE(std::string(e.what()).find("argument 1 ('const float* a')"), std::string::npos) << e.what();
  }
  struct Pair { float x, y; };
  const auto q = parse_params("Pair s");
  EXPECT_NO_THROW((void)pack_arguments("k", q, of(Pair{1, 2})));
  EXPECT_THROW((void)pack_arguments("k", q, of(1.0f)), JitError);
}

TEST(Codegen, ElementwiseSourceCompiles) {
  const ElementwiseKernel add("const float* a, const float* b, float* c", "c[i] = a[i] + b[i]");
  ASSERT_TRUE(add.vector_plan().possible);
  EXPECT_NE(add.source().find("void __launch_bounds__(256) sp_elementwise("), std::string::npos) << add.source();
  EXPECT_NE(add.source().find("sp_elementwise_vec("), std::string::npos);
  const CompileResult r = compile(add.program(), "compute_90");
  const std::string ptx(reinterpret_cast<const char*>(r.binary.data()), r.binary.size());
  EXPECT_NE(ptx.find(".entry sp_elementwise_vec"), std::string::npos);
  EXPECT_NE(ptx.find("ld.global.v4"), std::string::npos) << "16-byte loads in the vectorized kernel";
  EXPECT_NE(ptx.find("st.global.v4"), std::string::npos) << "16-byte stores in the vectorized kernel";

  ElementwiseOptions o;
  o.name = "mixed";
  o.preamble = "__device__ float twice(float x) { return 2 * x; }";
  const ElementwiseKernel mixed("const unsigned char* m, const double* x, float* y, float alpha",
                                "y[i] = m[i] ? twice(alpha * (float)x[i]) : y[i]", o);
  EXPECT_TRUE(mixed.vector_plan().possible) << mixed.vector_plan().reason;
  EXPECT_NO_THROW((void)compile(mixed.program(), "sm_90"));
  const ElementwiseKernel stencil("const float* a, float* c", "c[i] = i + 1 < n ? a[i + 1] : 0.0f");
  EXPECT_FALSE(stencil.vector_plan().possible);
  EXPECT_EQ(stencil.source().find("_vec("), std::string::npos);
  EXPECT_NO_THROW((void)compile(stencil.program(), "sm_90"));
}

TEST(Codegen, ElementwiseErrorsNameTheProblem) {
  EXPECT_THROW(ElementwiseKernel("float* a", ""), JitError);
  ElementwiseOptions bad_name;
  bad_name.name = "bad name";
  EXPECT_THROW(ElementwiseKernel("float* a", "a[i] = 0", bad_name), JitError);
  ElementwiseOptions bad_block;
  bad_block.block = 100;
  EXPECT_THROW(ElementwiseKernel("float* a", "a[i] = 0", bad_block), JitError);
  const ElementwiseKernel broken("float* a", "a[i] = nonsense(a[i])");
  try {
    (void)compile(broken.program(), "sm_90");
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("nonsense"), std::string::npos);
  }
}

TEST(Codegen, ReductionSourceCompiles) {
  const ReductionKernel sum("float", "const float* x", "x[i]", "a + b", "0.0f");
  ASSERT_TRUE(sum.vector_plan().possible);
  const CompileResult r = compile(sum.program(), "compute_90");
  const std::string ptx(reinterpret_cast<const char*>(r.binary.data()), r.binary.size());
  for (const char* entry : {".entry sp_reduction_pass1(", ".entry sp_reduction_pass1_vec(", ".entry sp_reduction_pass2("})
    EXPECT_NE(ptx.find(entry), std::string::npos) << entry;
  EXPECT_NE(ptx.find("ld.global.v4"), std::string::npos);
  EXPECT_NE(ptx.find("sp_reduction_result_probe"), std::string::npos);

  ReductionOptions o;
  o.name = "norm";
  o.post_map = "sqrt(a)";
  const ReductionKernel norm("double", "const double* x, const double* y", "(x[i] - y[i]) * (x[i] - y[i])", "a + b", "0.0", o);
  EXPECT_NO_THROW((void)compile(norm.program(), "sm_90"));
  const ReductionKernel maxabs("int", "const int* v, int bias", "abs(v[i] + bias)", "max(a, b)", "0");
  EXPECT_NO_THROW((void)compile(maxabs.program(), "sm_90"));
  EXPECT_THROW(ReductionKernel("float", "const float* x", "x[i]", "", "0"), JitError);
  EXPECT_THROW(ReductionKernel("float", "const float* x", "x[i]", "a + b", " "), JitError);
}
