// SPDX-License-Identifier: Apache-2.0
#pragma once
// Host arguments of generated kernels, checked at run time against the parameter list the
// kernel was generated from (the list is a string, so the compiler cannot check them):
// arrays take device pointers whose element size matches (pointers to const only where
// the parameter is const); scalars of built-in arithmetic type are converted like a
// function call would; scalars of other types must match in size.

#include "streampipe/jit/codegen.hpp"

#include <array>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

namespace streampipe::jit {

struct ArgumentValue {
  enum class Kind { pointer, floating, signed_integer, unsigned_integer, other };
  Kind kind = Kind::other;
  std::size_t size = 0;          // of the value itself
  std::size_t pointee_size = 0;  // pointers: sizeof(*p), 0 for void
  bool pointee_const = false;
  const void* pointer = nullptr;
  double f = 0;
  long long s = 0;
  unsigned long long u = 0;
  alignas(16) std::array<std::byte, 64> raw{};  // Kind::other

  template <typename U>
  static ArgumentValue of(U&& value) {
    using T = std::decay_t<U>;  // arrays pass as pointers, like in a call
    const T v = value;
    static_assert(std::is_trivially_copyable_v<T>, "kernel arguments must be trivially copyable");
    ArgumentValue a;
    a.size = sizeof(T);
    if constexpr (std::is_pointer_v<T>) {
      using P = std::remove_pointer_t<T>;
      a.kind = Kind::pointer;
      a.pointer = static_cast<const void*>(v);
      if constexpr (!std::is_void_v<P>) a.pointee_size = sizeof(P);
      a.pointee_const = std::is_const_v<P>;
    } else if constexpr (std::is_floating_point_v<T>) {
      a.kind = Kind::floating;
      a.f = static_cast<double>(v);
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      a.kind = Kind::signed_integer;
      a.s = static_cast<long long>(v);
    } else if constexpr (std::is_integral_v<T>) {
      a.kind = Kind::unsigned_integer;
      a.u = static_cast<unsigned long long>(v);
    } else {
      a.kind = Kind::other;
    }
    if constexpr (!std::is_pointer_v<T>) {
      static_assert(sizeof(T) <= 64, "scalar kernel arguments are limited to 64 bytes");
      std::memcpy(a.raw.data(), &v, sizeof(T));
    }
    return a;
  }
};

// The bytes one parameter receives.
struct PackedArgument {
  alignas(16) std::array<std::byte, 64> bytes{};
  std::size_t size = 0;
};

// Throws JitError naming the kernel, the parameter and what was passed.
[[nodiscard]] std::vector<PackedArgument> pack_arguments(const std::string& kernel,
                                                         const std::vector<codegen::Param>& params,
                                                         const std::vector<ArgumentValue>& args);

}  // namespace streampipe::jit
