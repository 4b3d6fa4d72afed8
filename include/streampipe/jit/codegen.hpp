// SPDX-License-Identifier: Apache-2.0
#pragma once
// Source generation shared by ElementwiseKernel and ReductionKernel, separate from any
// device so it is tested on the CPU.
// A parameter list is C-like: "const float* a, const float* b, float* c, float alpha".
// Pointers are arrays indexed by `i` in expressions; everything else is a scalar passed by
// value. `i` (the element index) and `n` (the element count) are reserved names.
// Vectorization: when every array of known element size is only ever used as `name[i]`,
// each thread moves 16 bytes per array per step (uint4 loads and stores), and an array
// written only as `name[i] = ...` is never read. Otherwise the plain kernel is the only one.

#include <cstddef>
#include <string>
#include <vector>

namespace streampipe::jit::codegen {

enum class ScalarKind { floating, signed_integer, unsigned_integer, other };

struct TypeInfo {
  std::size_t size = 0;  // 0: unknown to the generator (a user type from the preamble)
  ScalarKind kind = ScalarKind::other;
};
// Built-in arithmetic and CUDA vector types ("float", "unsigned int", "int64_t", "float4",
// "__half", ...).
[[nodiscard]] TypeInfo type_info(const std::string& type);

struct Param {
  std::string name;
  std::string type;        // without const, pointer or __restrict__: "float"
  bool is_pointer = false;
  bool is_const = false;   // pointer to const
  TypeInfo info;
  [[nodiscard]] std::string declaration() const;  // "const float* a"
};

// Throws JitError naming the offending parameter.
[[nodiscard]] std::vector<Param> parse_params(const std::string& list);

struct ArrayUse {
  bool read = false;     // loaded before the expression runs
  bool written = false;  // stored after it
};

struct VectorPlan {
  bool possible = false;
  std::string reason;             // why not, when not
  unsigned elements = 1;          // per thread per step: 16 / smallest element size
  std::string rewritten;          // the expression with name[i] -> sp_v_name.e[sp_k]
  std::vector<ArrayUse> uses;     // per parameter (scalars: unused)
};

// Plans 16-byte vectorization of `expression` over `params`.
[[nodiscard]] VectorPlan plan_vectorization(const std::vector<Param>& params, const std::string& expression);

// Checks a name is a C identifier.
[[nodiscard]] bool is_identifier(const std::string& s);

// The loads, the unrolled per-element body and the stores of one vectorized step over
// elements [sp_base, sp_base + plan.elements), for use inside a generated kernel.
[[nodiscard]] std::string vector_step(const std::vector<Param>& params, const VectorPlan& plan,
                                      const std::string& body_per_element);

}  // namespace streampipe::jit::codegen
