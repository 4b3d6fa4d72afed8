// SPDX-License-Identifier: Apache-2.0
// Runtime kernels from Python, PyCUDA/CuPy-shaped, on the same NVRTC and the same caches as
// C++ (a kernel compiled from Python is a cache hit in C++ and back). Compiles release the
// GIL. Arguments arrive classified (arguments.hpp).
#include "arguments.hpp"
#include "bindings.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/jit/elementwise.hpp"
#include "streampipe/jit/module.hpp"
#include "streampipe/jit/module_cache.hpp"
#include "streampipe/jit/reduction.hpp"

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace streampipe::python {
namespace {

nb::dict stats_dict(const jit::LoadStats& s) {
  nb::dict d;
  d["origin"] = jit::to_string(s.origin);
  d["key"] = s.key;
  d["compile_ms"] = s.compile_ms;
  d["total_ms"] = s.total_ms;
  d["cache_warning"] = s.cache_warning;
  return d;
}

// A Ctrl-C that came while NVRTC compiled waited for the compile to end (the jit layer
// blocks it meanwhile, so that NVRTC's own handler cannot end the process): raised now.
void raise_pending_signals() {
  if (PyErr_CheckSignals() != 0) throw nb::python_error();
}

jit::CacheOptions cache_options(bool cache) {
  jit::CacheOptions o;
  o.memory = cache;
  o.disk = cache;
  return o;
}

// What Python passes for every generated kernel (ElementwiseOptions, ReductionOptions).
template <typename Options>
Options generated_options(const std::string& name, const std::string& preamble,
                          const std::vector<std::string>& compile_options, unsigned block, bool cache) {
  Options o;
  o.name = name;
  o.preamble = preamble;
  o.compile_options = compile_options;
  o.block = block;
  o.cache = cache_options(cache);
  return o;
}

jit::Program make_program(const std::string& name, const std::string& source, const std::vector<std::string>& options,
                          const std::vector<std::string>& include_dirs, const std::vector<std::string>& name_expressions) {
  // NVRTC reads each as a C string: a NUL byte would cut it short silently.
  jit::Program p(without_nul(name, "name"), without_nul(source, "source"));
  for (const auto& o : options) p.option(without_nul(o, "option"));
  for (const auto& d : include_dirs) p.include_dir(without_nul(d, "include directory"));
  for (const auto& e : name_expressions) p.name_expression(without_nul(e, "name expression"));
  return p;
}

dim3 to_dim3(const std::array<unsigned, 3>& v) { return dim3(v[0], v[1], v[2]); }

nb::list param_list(const std::vector<jit::codegen::Param>& params) {
  nb::list out;
  for (const auto& p : params)
    out.append(nb::make_tuple(p.name, p.type, p.is_pointer, p.is_const, p.info.size));
  return out;
}

class PySourceModule {
 public:
  PySourceModule(const std::string& source, const std::string& name, const std::vector<std::string>& options,
                 const std::vector<std::string>& include_dirs, const std::vector<std::string>& name_expressions,
                 int device, bool cache) {
    const jit::Program program = make_program(name, source, options, include_dirs, name_expressions);
    const Device d = gpu(device);
    {
      nb::gil_scoped_release release;
      module_.emplace(jit::load_module(d, program, cache_options(cache), &stats_));
    }
    raise_pending_signals();
  }
  [[nodiscard]] jit::Kernel function(const std::string& name) const { return module_->kernel(name); }
  [[nodiscard]] std::vector<std::string> kernel_names() const { return module_->kernel_names(); }
  [[nodiscard]] const jit::LoadStats& stats() const noexcept { return stats_; }
  [[nodiscard]] int device() const { return module_->device_index(); }
  [[nodiscard]] const jit::CompileResult& compiled() const { return module_->compiled(); }

 private:
  std::optional<jit::Module> module_;
  jit::LoadStats stats_;
};

void launch_function(const jit::Kernel& k, const std::array<unsigned, 3>& grid, const std::array<unsigned, 3>& block,
                     std::size_t shared, std::uintptr_t stream, const nb::list& args) {
  std::vector<PackedBytes> packed = pack_for_kernel(k, args, 0);
  std::vector<void*> pointers;
  std::vector<std::size_t> sizes;
  for (auto& b : packed) {
    pointers.push_back(b.data.data());
    sizes.push_back(b.size);
  }
  LaunchConfig config;
  config.grid = to_dim3(grid);
  config.block = to_dim3(block);
  config.dynamic_shared_bytes = shared;
  const StreamRef s(stream_from_handle(stream), k.device_index());
  nb::gil_scoped_release release;
  k.launch_raw(s, config, pointers.data(), sizes.data(), pointers.size());
}

nb::dict compile_source(const std::string& source, const std::string& name, const std::vector<std::string>& options,
                        const std::vector<std::string>& include_dirs, const std::vector<std::string>& name_expressions,
                        const std::string& arch, bool cache) {
  const jit::Program program = make_program(name, source, options, include_dirs, name_expressions);
  jit::LoadStats stats;
  jit::CompileResult r;
  {
    nb::gil_scoped_release release;
    r = jit::compile_cached(program, arch, cache_options(cache), &stats);
  }
  raise_pending_signals();
  nb::dict d = stats_dict(stats);
  d["arch"] = r.arch;
  d["kind"] = r.kind == jit::BinaryKind::cubin ? "cubin" : "ptx";
  d["log"] = r.log;
  nb::dict lowered;
  for (const auto& [expression, symbol] : r.lowered) lowered[nb::str(expression.c_str())] = symbol;
  d["lowered"] = lowered;
  d["binary"] = nb::bytes(reinterpret_cast<const char*>(r.binary.data()), r.binary.size());
  return d;
}

// Compiles (or loads) a generated kernel for `device` ahead of its first launch.
template <typename GeneratedKernel>
nb::dict prepare_on(const GeneratedKernel& kernel, int device) {
  const Device d = gpu(device);
  jit::LoadStats s;
  {
    nb::gil_scoped_release release;
    s = kernel.prepare(d);
  }
  raise_pending_signals();
  return stats_dict(s);
}

}  // namespace

void bind_kernels(nb::module_& m) {
  m.def("compile", &compile_source, nb::arg("source"), nb::arg("name"), nb::arg("options"), nb::arg("include_dirs"),
        nb::arg("name_expressions"), nb::arg("arch"), nb::arg("cache") = true,
        "NVRTC through the disk cache, no device needed; a dict with the binary, log and cache origin.");
  m.def("nvrtc_version", &jit::nvrtc_version);
  m.def("set_nvrtc_search_dirs", &jit::set_nvrtc_search_dirs, nb::arg("dirs"),
        "Folders tried for NVRTC before the loader's search path and the toolkit (before the first compile).");
  m.def("nvrtc_library_path", &jit::nvrtc_library_path, "The NVRTC file in use, loading it; raises Error naming where it looked when NVRTC is not installed.");
  m.def("default_arch", [](int device) { return jit::default_arch(gpu(device)); }, nb::arg("device"));
  m.def("clear_memory_cache", &jit::clear_memory_cache);

  nb::class_<jit::Kernel>(m, "Kernel", "A kernel of a loaded module.")
      .def_prop_ro("name", &jit::Kernel::name)
      .def_prop_ro("device", &jit::Kernel::device_index)
      .def_prop_ro("param_sizes", [](const jit::Kernel& k) { return k.parameter_sizes(); })
      .def("max_active_blocks_per_sm", &jit::Kernel::max_active_blocks_per_sm, nb::arg("block"),
           nb::arg("dynamic_shared") = 0)
      .def("launch", &launch_function, nb::arg("grid"), nb::arg("block"), nb::arg("shared"), nb::arg("stream"),
           nb::arg("args"));

  nb::class_<PySourceModule>(m, "Module", "CUDA source compiled (or loaded from the caches) on one device.")
      .def(nb::init<const std::string&, const std::string&, const std::vector<std::string>&,
                    const std::vector<std::string>&, const std::vector<std::string>&, int, bool>(),
           nb::arg("source"), nb::arg("name"), nb::arg("options"), nb::arg("include_dirs"),
           nb::arg("name_expressions"), nb::arg("device"), nb::arg("cache"))
      .def("function", &PySourceModule::function, nb::arg("name"))
      .def("kernel_names", &PySourceModule::kernel_names)
      .def_prop_ro("device", &PySourceModule::device)
      .def_prop_ro("load_stats", [](const PySourceModule& sm) { return stats_dict(sm.stats()); })
      .def_prop_ro("log", [](const PySourceModule& sm) { return sm.compiled().log; })
      .def_prop_ro("arch", [](const PySourceModule& sm) { return sm.compiled().arch; });

  nb::class_<jit::ElementwiseKernel>(m, "ElementwiseKernel")
      .def("__init__", [](jit::ElementwiseKernel* self, const std::string& params, const std::string& operation,
                          const std::string& name, const std::string& preamble,
                          const std::vector<std::string>& options, unsigned block, bool cache) {
             new (self) jit::ElementwiseKernel(
                 params, operation, generated_options<jit::ElementwiseOptions>(name, preamble, options, block, cache));
           }, nb::arg("params"), nb::arg("operation"), nb::arg("name"), nb::arg("preamble"), nb::arg("options"),
           nb::arg("block"), nb::arg("cache"))
      .def_prop_ro("params", [](const jit::ElementwiseKernel& k) { return param_list(k.params()); })
      .def_prop_ro("source", &jit::ElementwiseKernel::source)
      .def("prepare", &prepare_on<jit::ElementwiseKernel>, nb::arg("device"))
      .def("launch", [](const jit::ElementwiseKernel& k, std::uintptr_t stream, int device, std::size_t n,
                        const nb::list& args) {
             const auto values = argument_values(args);
             const StreamRef s(stream_from_handle(stream), gpu(device).index());
             nb::gil_scoped_release release;  // the first launch on a device compiles
             return k.launch_values(s, n, values).vectorized;
           }, nb::arg("stream"), nb::arg("device"), nb::arg("n"), nb::arg("args"));

  nb::class_<jit::ReductionKernel>(m, "ReductionKernel")
      .def("__init__", [](jit::ReductionKernel* self, const std::string& reduce_type, const std::string& params,
                          const std::string& map, const std::string& reduce, const std::string& identity,
                          const std::string& post_map, const std::string& name, const std::string& preamble,
                          const std::vector<std::string>& options, unsigned block, bool cache) {
             auto o = generated_options<jit::ReductionOptions>(name, preamble, options, block, cache);
             o.post_map = post_map;
             new (self) jit::ReductionKernel(reduce_type, params, map, reduce, identity, o);
           }, nb::arg("reduce_type"), nb::arg("params"), nb::arg("map"), nb::arg("reduce"), nb::arg("identity"),
           nb::arg("post_map"), nb::arg("name"), nb::arg("preamble"), nb::arg("options"), nb::arg("block"),
           nb::arg("cache"))
      .def_prop_ro("params", [](const jit::ReductionKernel& k) { return param_list(k.params()); })
      .def_prop_ro("source", &jit::ReductionKernel::source)
      .def("result_size", [](const jit::ReductionKernel& k, int device) {
             const Device d = gpu(device);
             nb::gil_scoped_release release;
             return k.result_size(d);
           }, nb::arg("device"))
      .def("prepare", &prepare_on<jit::ReductionKernel>, nb::arg("device"))
      .def("launch", [](const jit::ReductionKernel& k, std::uintptr_t stream, int device, std::size_t n,
                        std::uintptr_t out, std::size_t out_size, const nb::list& args) {
             const auto values = argument_values(args);
             const StreamRef s(stream_from_handle(stream), gpu(device).index());
             nb::gil_scoped_release release;
             k.launch_values(s, n, reinterpret_cast<void*>(out), out_size, values);
           }, nb::arg("stream"), nb::arg("device"), nb::arg("n"), nb::arg("out"), nb::arg("out_size"),
           nb::arg("args"));
}

}  // namespace streampipe::python
