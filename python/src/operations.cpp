// SPDX-License-Identifier: Apache-2.0
// Operations for engines built from Python. A runtime kernel becomes an operation through a
// launch rule fixed when the operation is made, so the engine's lanes launch it without
// the GIL: kernel(in, out, n, extra...) once per item of a batch, n the item's element count
// (of its output by default), a 1-D grid of ceil(n / block) blocks unless a grid is given.
// A Python function may give the host form (the host backend; it runs under the GIL).
#include "arguments.hpp"
#include "bindings.hpp"
#include "operations.hpp"

#include "streampipe/jit/elementwise.hpp"
#include "streampipe/ops/pipeline_ops.hpp"

#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace streampipe::python {
namespace {

struct LaunchRule {
  unsigned block = 256;
  unsigned grid = 0;  // 0: enough blocks for one thread per element
  std::size_t shared = 0;
  bool count_output = true;  // n counts output elements (else input elements)
  std::size_t in_itemsize = 1;
  std::size_t out_itemsize = 1;
};

std::size_t element_count(const LaunchRule& rule, const pipeline::ItemDescriptor& d) {
  return rule.count_output ? d.out_bytes / rule.out_itemsize : d.in_bytes / rule.in_itemsize;
}

// The host form: fn(in, out, index) with writable memoryviews of the item's bytes.
std::function<void(const pipeline::Batch&)> host_form(nb::object fn) {
  if (fn.is_none()) return {};
  // The function object is released under the GIL (the operation may die on any thread).
  std::shared_ptr<nb::object> holder(new nb::object(std::move(fn)), [](nb::object* p) {
    nb::gil_scoped_acquire gil;
    delete p;
  });
  return [holder](const pipeline::Batch& batch) {
    nb::gil_scoped_acquire gil;
    for (std::size_t k = 0; k < batch.size(); ++k) {
      const auto& d = batch.items()[k];
      nb::object in = nb::steal(PyMemoryView_FromMemory(reinterpret_cast<char*>(batch.in() + d.in_offset),
                                                        static_cast<Py_ssize_t>(d.in_bytes), PyBUF_READ));
      nb::object out = nb::steal(PyMemoryView_FromMemory(reinterpret_cast<char*>(batch.out() + d.out_offset),
                                                         static_cast<Py_ssize_t>(d.out_bytes), PyBUF_WRITE));
      if (!in.is_valid() || !out.is_valid()) throw nb::python_error();
      (*holder)(in, out, batch.index(k));
    }
  };
}

PyOperation builtin(pipeline::Operation op) {
  return PyOperation{std::move(op), true, true};
}

PyOperation kernel_operation(const std::string& name, const jit::Kernel& kernel, const LaunchRule& rule,
                             const nb::list& extra, nb::object host) {
  auto packed = std::make_shared<const std::vector<PackedBytes>>(pack_for_kernel(kernel, extra, 3));
  const auto& sizes = kernel.parameter_sizes();
  if (sizes && sizes->size() != 3 + extra.size())
    throw std::invalid_argument(name + ": the kernel takes " + std::to_string(sizes->size()) +
                                " parameters; an operation's kernel takes (in, out, n) and then " +
                                std::to_string(extra.size()) + " extra argument(s)");
  const std::size_t n_size = sizes ? (*sizes)[2] : sizeof(std::int64_t);
  if (n_size != 4 && n_size != 8) throw std::invalid_argument(name + ": the count parameter n must be a 32- or 64-bit integer");
  PyOperation out;
  out.op.name = name;
  out.op.device = [kernel, rule, packed, n_size](const pipeline::Batch& batch) {
    for (std::size_t k = 0; k < batch.size(); ++k) {
      const auto& d = batch.items()[k];
      const std::size_t n = element_count(rule, d);
      if (n == 0) continue;
      if (n_size == 4 && n > 0x7fffffffu)
        throw std::invalid_argument(batch.items().size() > 1 ? "a batch item is too large for the kernel's 32-bit count"
                                                             : "the item is too large for the kernel's 32-bit count");
      void* in = batch.in() + d.in_offset;
      void* out_ptr = batch.out() + d.out_offset;
      std::int64_t n64 = static_cast<std::int64_t>(n);
      std::int32_t n32 = static_cast<std::int32_t>(n);
      std::vector<void*> args = {&in, &out_ptr, n_size == 8 ? static_cast<void*>(&n64) : static_cast<void*>(&n32)};
      for (const auto& b : *packed) args.push_back(const_cast<std::byte*>(b.data.data()));
      LaunchConfig config;
      const std::size_t blocks = rule.grid != 0 ? rule.grid : (n + rule.block - 1) / rule.block;
      config.grid = dim3(static_cast<unsigned>(std::min<std::size_t>(blocks, 0x7fffffffu)));
      config.block = dim3(rule.block);
      config.dynamic_shared_bytes = rule.shared;
      kernel.launch_raw(batch.stream(), config, args.data(), nullptr, args.size());
    }
  };
  out.has_device = true;
  out.op.host = host_form(std::move(host));
  out.has_host = static_cast<bool>(out.op.host);
  return out;
}

PyOperation elementwise_operation(const std::string& name, std::shared_ptr<const jit::ElementwiseKernel> kernel,
                                  bool count_output, std::size_t in_itemsize, std::size_t out_itemsize,
                                  const nb::list& extra, nb::object host) {
  const auto& params = kernel->params();
  if (params.size() != 2 + extra.size() || !params[0].is_pointer || !params[1].is_pointer)
    throw std::invalid_argument(name + ": an operation's elementwise kernel takes (in array, out array) and then " +
                                std::to_string(extra.size()) + " extra argument(s); it has " +
                                std::to_string(params.size()) + " parameters");
  auto values = std::make_shared<const std::vector<jit::ArgumentValue>>(argument_values(extra));
  const std::size_t in_size = params[0].info.size, out_size = params[1].info.size;
  PyOperation out;
  out.op.name = name;
  out.op.device = [kernel, values, count_output, in_itemsize, out_itemsize, in_size, out_size](const pipeline::Batch& batch) {
    for (std::size_t k = 0; k < batch.size(); ++k) {
      const auto& d = batch.items()[k];
      const std::size_t n = count_output ? d.out_bytes / out_itemsize : d.in_bytes / in_itemsize;
      if (n == 0) continue;
      std::vector<jit::ArgumentValue> args;
      args.reserve(2 + values->size());
      jit::ArgumentValue in, o;
      in.kind = o.kind = jit::ArgumentValue::Kind::pointer;
      in.size = o.size = sizeof(void*);
      in.pointer = batch.in() + d.in_offset;
      in.pointee_size = in_size;
      in.pointee_const = true;
      o.pointer = batch.out() + d.out_offset;
      o.pointee_size = out_size;
      args.push_back(in);
      args.push_back(o);
      args.insert(args.end(), values->begin(), values->end());
      kernel->launch_values(batch.stream(), n, args);
    }
  };
  out.has_device = true;
  out.op.host = host_form(std::move(host));
  out.has_host = static_cast<bool>(out.op.host);
  return out;
}

}  // namespace

void bind_operations(nb::module_& m) {
  nb::class_<PyOperation>(m, "Operation", "What an engine applies to every item.")
      .def_prop_ro("name", [](const PyOperation& o) { return o.op.name; })
      .def_ro("has_device", &PyOperation::has_device)
      .def_ro("has_host", &PyOperation::has_host);

  m.def("gray_operation", [] { return builtin(ops::gray_operation()); },
        "Interleaved RGB bytes in, one luma byte per pixel out.");
  m.def("multiply_divide_operation", [](unsigned blocks, unsigned threads, int repeats) {
    return builtin(ops::multiply_divide_operation({blocks, threads, repeats}));
  }, nb::arg("blocks") = 1, nb::arg("threads") = 64, nb::arg("repeats") = 50,
        "The chapter's single-block kernel over float32 arrays; several arrays batch into one launch.");
  m.def("affine_operation", [](float a, float b) { return builtin(ops::affine_operation(a, b)); },
        nb::arg("a"), nb::arg("b"), "y = a x + b over float32.");
  m.def("kernel_operation", [](const std::string& name, const jit::Kernel& kernel, unsigned block, unsigned grid,
                               std::size_t shared, bool count_output, std::size_t in_itemsize,
                               std::size_t out_itemsize, const nb::list& extra, nb::object host) {
    LaunchRule rule{block, grid, shared, count_output, in_itemsize, out_itemsize};
    if (block == 0 || in_itemsize == 0 || out_itemsize == 0) throw std::invalid_argument(name + ": block and item sizes must be positive");
    return kernel_operation(name, kernel, rule, extra, std::move(host));
  }, nb::arg("name"), nb::arg("kernel"), nb::arg("block"), nb::arg("grid"), nb::arg("shared"),
        nb::arg("count_output"), nb::arg("in_itemsize"), nb::arg("out_itemsize"), nb::arg("extra"),
        nb::arg("host").none());
  m.def("elementwise_operation", [](const std::string& name, std::shared_ptr<const jit::ElementwiseKernel> kernel, bool count_output,
                                    std::size_t in_itemsize, std::size_t out_itemsize, const nb::list& extra,
                                    nb::object host) {
    if (in_itemsize == 0 || out_itemsize == 0) throw std::invalid_argument(name + ": item sizes must be positive");
    return elementwise_operation(name, std::move(kernel), count_output,
                                 in_itemsize, out_itemsize, extra, std::move(host));
  }, nb::arg("name"), nb::arg("kernel"), nb::arg("count_output"), nb::arg("in_itemsize"), nb::arg("out_itemsize"),
        nb::arg("extra"), nb::arg("host").none());
  m.def("host_operation", [](const std::string& name, nb::object host) {
    PyOperation out;
    out.op.name = name;
    out.op.host = host_form(std::move(host));
    out.has_host = true;
    return out;
  }, nb::arg("name"), nb::arg("host"), "A Python function as the host backend's operation (no device form).");
}

}  // namespace streampipe::python
