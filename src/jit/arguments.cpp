// SPDX-License-Identifier: Apache-2.0
#include "streampipe/jit/arguments.hpp"

#include "streampipe/jit/errors.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace streampipe::jit {
namespace {

using Kind = ArgumentValue::Kind;
using codegen::ScalarKind;

const char* describe(Kind k) {
  switch (k) {
    case Kind::pointer: return "a pointer";
    case Kind::floating: return "a floating-point value";
    case Kind::signed_integer: return "a signed integer";
    case Kind::unsigned_integer: return "an unsigned integer";
    case Kind::other: return "a value";
  }
  return "a value";
}

template <typename T>
T convert(const ArgumentValue& a) {
  switch (a.kind) {
    case Kind::floating: return static_cast<T>(a.f);
    case Kind::signed_integer: return static_cast<T>(a.s);
    default: return static_cast<T>(a.u);
  }
}

template <typename T>
void put(PackedArgument& out, T value) {
  std::memcpy(out.bytes.data(), &value, sizeof(T));
  out.size = sizeof(T);
}

}  // namespace

std::vector<PackedArgument> pack_arguments(const std::string& kernel, const std::vector<codegen::Param>& params,
                                           const std::vector<ArgumentValue>& args) {
  if (args.size() != params.size())
    throw JitError(fmt::format("{} takes {} argument(s) after the size ({}), {} given", kernel, params.size(),
                               [&] {
                                 std::string s;
                                 for (const auto& p : params) s += (s.empty() ? "" : ", ") + p.declaration();
                                 return s;
                               }(),
                               args.size()));
  std::vector<PackedArgument> packed(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    const auto& a = args[i];
    const auto where = [&] { return fmt::format("{}: argument {} ('{}')", kernel, i + 1, p.declaration()); };
    if (p.is_pointer) {
      if (a.kind != Kind::pointer) throw JitError(fmt::format("{} needs a device pointer, got {}", where(), describe(a.kind)));
      if (a.pointee_size != 0 && p.info.size != 0 && a.pointee_size != p.info.size)
        throw JitError(fmt::format("{} has {}-byte elements, the pointer passed has {}-byte elements", where(),
                                   p.info.size, a.pointee_size));
      if (a.pointee_const && !p.is_const)
        throw JitError(fmt::format("{} is written, but a pointer to const was passed", where()));
      put(packed[i], a.pointer);
      continue;
    }
    if (a.kind == Kind::pointer) throw JitError(fmt::format("{} is a scalar, got a pointer", where()));
    const auto info = p.info;
    const bool arithmetic_arg = a.kind != Kind::other;
    if (info.kind == ScalarKind::floating && arithmetic_arg) {
      if (info.size == 4) put(packed[i], convert<float>(a));
      else put(packed[i], convert<double>(a));
    } else if ((info.kind == ScalarKind::signed_integer || info.kind == ScalarKind::unsigned_integer) && arithmetic_arg) {
      const bool is_signed = info.kind == ScalarKind::signed_integer;
      switch (info.size) {
        case 1: is_signed ? put(packed[i], convert<std::int8_t>(a)) : put(packed[i], convert<std::uint8_t>(a)); break;
        case 2: is_signed ? put(packed[i], convert<std::int16_t>(a)) : put(packed[i], convert<std::uint16_t>(a)); break;
        case 4: is_signed ? put(packed[i], convert<std::int32_t>(a)) : put(packed[i], convert<std::uint32_t>(a)); break;
        default: is_signed ? put(packed[i], convert<std::int64_t>(a)) : put(packed[i], convert<std::uint64_t>(a)); break;
      }
    } else {
      // A type the generator does not know, or a non-arithmetic value: the bytes as they are.
      if (info.size != 0 && info.size != a.size)
        throw JitError(fmt::format("{} is {} bytes, got {} of {} bytes", where(), info.size, describe(a.kind), a.size));
      if (arithmetic_arg && info.size == 0)
        throw JitError(fmt::format("{} has a type the generator cannot convert to; pass a value of that type", where()));
      std::memcpy(packed[i].bytes.data(), a.raw.data(), a.size);
      packed[i].size = a.size;
    }
  }
  return packed;
}

}  // namespace streampipe::jit
