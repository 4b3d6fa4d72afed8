// SPDX-License-Identifier: Apache-2.0
#include "arguments.hpp"

#include <nanobind/stl/string.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace streampipe::python {
namespace {

template <typename T>
PackedBytes bytes_of(T v) {
  PackedBytes b;
  std::memcpy(b.data.data(), &v, sizeof(T));
  b.size = sizeof(T);
  return b;
}

[[noreturn]] void fail(std::size_t position, const std::string& why) {
  throw std::invalid_argument("kernel argument " + std::to_string(position) + ": " + why);
}

template <typename Signed>
PackedBytes sized_integer(std::size_t size, Signed v, std::size_t position) {
  using U = std::make_unsigned_t<Signed>;
  const bool is_signed = std::is_signed_v<Signed>;
  switch (size) {
    case 1: return is_signed ? bytes_of(static_cast<std::int8_t>(v)) : bytes_of(static_cast<std::uint8_t>(static_cast<U>(v)));
    case 2: return is_signed ? bytes_of(static_cast<std::int16_t>(v)) : bytes_of(static_cast<std::uint16_t>(static_cast<U>(v)));
    case 4: return is_signed ? bytes_of(static_cast<std::int32_t>(v)) : bytes_of(static_cast<std::uint32_t>(static_cast<U>(v)));
    case 8: return is_signed ? bytes_of(static_cast<std::int64_t>(v)) : bytes_of(static_cast<std::uint64_t>(static_cast<U>(v)));
    default: fail(position, "no " + std::to_string(size) + "-byte integer for this parameter");
  }
}

}  // namespace

PackedBytes pack_for_parameter(const nb::tuple& arg, std::size_t param_size, std::size_t position) {
  const std::string tag = nb::cast<std::string>(arg[0]);
  if (tag == "p") return bytes_of(nb::cast<std::uintptr_t>(arg[1]));
  if (tag == "b") {
    const nb::bytes raw = nb::cast<nb::bytes>(arg[1]);
    if (raw.size() > sizeof(PackedBytes::data)) fail(position, "raw arguments are limited to 64 bytes");
    PackedBytes b;
    std::memcpy(b.data.data(), raw.c_str(), raw.size());
    b.size = raw.size();
    return b;
  }
  std::size_t size = nb::cast<std::size_t>(arg[2]);
  if (size == 0) size = param_size;
  if (size == 0) fail(position, "the driver does not report parameter sizes: pass a sized numpy scalar");
  if (tag == "f") {
    const double v = nb::cast<double>(arg[1]);
    if (size == 4) return bytes_of(static_cast<float>(v));
    if (size == 8) return bytes_of(v);
    fail(position, "no " + std::to_string(size) + "-byte float for this parameter");
  }
  if (tag == "i") return sized_integer<long long>(size, nb::cast<long long>(arg[1]), position);
  if (tag == "u") return sized_integer<unsigned long long>(size, nb::cast<unsigned long long>(arg[1]), position);
  fail(position, "unknown argument tag '" + tag + "'");
}

std::vector<PackedBytes> pack_for_kernel(const jit::Kernel& kernel, const nb::list& args, std::size_t first) {
  const auto& sizes = kernel.parameter_sizes();
  std::vector<PackedBytes> packed;
  packed.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::size_t p = first + i;
    const std::size_t param_size = sizes && p < sizes->size() ? (*sizes)[p] : 0;
    packed.push_back(pack_for_parameter(nb::cast<nb::tuple>(args[i]), param_size, p));
  }
  return packed;
}

std::vector<jit::ArgumentValue> argument_values(const nb::list& args) {
  std::vector<jit::ArgumentValue> out;
  out.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const nb::tuple arg = nb::cast<nb::tuple>(args[i]);
    const std::string tag = nb::cast<std::string>(arg[0]);
    jit::ArgumentValue a;
    if (tag == "p") {
      a.kind = jit::ArgumentValue::Kind::pointer;
      a.size = sizeof(void*);
      a.pointer = reinterpret_cast<const void*>(nb::cast<std::uintptr_t>(arg[1]));
      a.pointee_size = nb::cast<std::size_t>(arg[2]);
    } else if (tag == "f") {
      a.kind = jit::ArgumentValue::Kind::floating;
      a.f = nb::cast<double>(arg[1]);
      a.size = sizeof(double);
    } else if (tag == "i") {
      a.kind = jit::ArgumentValue::Kind::signed_integer;
      a.s = nb::cast<long long>(arg[1]);
      a.size = sizeof(long long);
    } else if (tag == "u") {
      a.kind = jit::ArgumentValue::Kind::unsigned_integer;
      a.u = nb::cast<unsigned long long>(arg[1]);
      a.size = sizeof(unsigned long long);
    } else if (tag == "b") {
      const nb::bytes raw = nb::cast<nb::bytes>(arg[1]);
      if (raw.size() > a.raw.size()) fail(i, "raw arguments are limited to 64 bytes");
      a.kind = jit::ArgumentValue::Kind::other;
      a.size = raw.size();
      std::memcpy(a.raw.data(), raw.c_str(), raw.size());
    } else {
      fail(i, "unknown argument tag '" + tag + "'");
    }
    out.push_back(a);
  }
  return out;
}

}  // namespace streampipe::python
