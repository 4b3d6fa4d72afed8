// SPDX-License-Identifier: Apache-2.0
#include "streampipe/jit/module.hpp"

#include "streampipe/cuda/error.hpp"

#include "../cuda/driver_api.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>

namespace streampipe::jit {

namespace detail {

struct LoadedModule {
  CUmodule module = nullptr;
  CUcontext context = nullptr;
  int device = 0;
  CompileResult compiled;

  LoadedModule() = default;
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;
  ~LoadedModule();
};

}  // namespace detail

namespace {

// Makes the module's context current for a scope when another one (or none) is.
class ContextScope {
 public:
  explicit ContextScope(CUcontext context) {
    const auto& d = driver::api();
    CUcontext current = nullptr;
    SP_CU_CHECK(d.ctx_get_current(&current));
    if (current != context) {
      SP_CU_CHECK(d.ctx_push_current(context));
      pushed_ = true;
    }
  }
  ~ContextScope() {
    if (pushed_) {
      CUcontext popped = nullptr;
      (void)driver::api().ctx_pop_current(&popped);
    }
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  bool pushed_ = false;
};

}  // namespace

detail::LoadedModule::~LoadedModule() {
  if (module == nullptr) return;
  try {
    const auto& d = driver::api();
    const ContextScope scope(context);
    const CUresult status = d.module_unload(module);
    // At process exit the driver may be torn down before static caches: nothing to free then.
    if (status != CUDA_SUCCESS && status != CUDA_ERROR_DEINITIALIZED && status != CUDA_ERROR_CONTEXT_IS_DESTROYED)
      std::fprintf(stderr, "streampipe: cuModuleUnload failed with status %d\n", static_cast<int>(status));
  } catch (const std::exception&) {
    // Destructors never throw; a context that cannot be made current is gone already.
  }
}

Module::Module(const Device& device, CompileResult compiled) {
  if (compiled.binary.empty()) throw JitError(fmt::format("{}: empty binary, nothing to load", compiled.program_name));
  const auto& d = driver::api();
  auto state = std::make_shared<detail::LoadedModule>();
  state->device = device.index();
  {
    const CurrentDeviceGuard guard(device);
    SP_CUDA_CHECK(cudaFree(nullptr));  // creates the primary context if needed
    SP_CU_CHECK(d.ctx_get_current(&state->context));
    if (state->context == nullptr)
      throw std::runtime_error(fmt::format("no CUDA context is current for device {}", device.index()));
    const CUresult status = d.module_load_data(&state->module, compiled.binary.data());
    if (status != CUDA_SUCCESS) {
      const std::string call = fmt::format("cuModuleLoadData({}, {} for {}, device {})", compiled.program_name,
                                           compiled.kind == BinaryKind::cubin ? "CUBIN" : "PTX",
                                           compiled.arch, device.index());
      driver::throw_error(status, call.c_str(), __FILE__, __LINE__);
    }
  }
  state->compiled = std::move(compiled);
  state_ = std::move(state);
}

int Module::device_index() const noexcept { return state_->device; }
const CompileResult& Module::compiled() const noexcept { return state_->compiled; }

std::vector<std::string> Module::kernel_names() const {
  const auto& d = driver::api();
  std::vector<std::string> names;
  if (d.module_get_function_count == nullptr || d.module_enumerate_functions == nullptr || d.func_get_name == nullptr)
    return names;
  unsigned count = 0;
  if (d.module_get_function_count(&count, state_->module) != CUDA_SUCCESS || count == 0) return names;
  std::vector<CUfunction> functions(count);
  if (d.module_enumerate_functions(functions.data(), count, state_->module) != CUDA_SUCCESS) return names;
  for (CUfunction f : functions) {
    const char* name = nullptr;
    if (d.func_get_name(&name, f) == CUDA_SUCCESS && name != nullptr) names.emplace_back(name);
  }
  return names;
}

Kernel Module::kernel(const std::string& name) const {
  const auto& d = driver::api();
  const std::string symbol = state_->compiled.symbol(name);
  CUfunction f = nullptr;
  const CUresult status = d.module_get_function(&f, state_->module, symbol.c_str());
  if (status == CUDA_ERROR_NOT_FOUND) {
    const auto names = kernel_names();
    throw JitError(fmt::format(
        "no kernel '{}' in {} (it has: {}); an extern \"C\" kernel keeps its name, a C++ or template "
        "kernel needs a name expression",
        name, state_->compiled.program_name, names.empty() ? std::string("?") : fmt::format("{}", fmt::join(names, ", "))));
  }
  if (status != CUDA_SUCCESS) {
    const std::string call = fmt::format("cuModuleGetFunction({}, '{}')", state_->compiled.program_name, symbol);
    driver::throw_error(status, call.c_str(), __FILE__, __LINE__);
  }
  return Kernel(state_, f, name, state_->device);
}

std::size_t Module::global_size(const std::string& name) const {
  const auto& d = driver::api();
  CUdeviceptr ptr = 0;
  std::size_t bytes = 0;
  const std::string symbol = state_->compiled.symbol(name);
  const CUresult status = d.module_get_global(&ptr, &bytes, state_->module, symbol.c_str());
  if (status == CUDA_ERROR_NOT_FOUND)
    throw JitError(fmt::format("no __device__ variable '{}' in {}", name, state_->compiled.program_name));
  if (status != CUDA_SUCCESS) driver::throw_error(status, "cuModuleGetGlobal", __FILE__, __LINE__);
  return bytes;
}

Kernel::Kernel(std::shared_ptr<const detail::LoadedModule> module, void* function, std::string name, int device)
    : module_(std::move(module)), function_(function), name_(std::move(name)), device_(device) {
  const auto& d = driver::api();
  if (d.func_get_param_info == nullptr) return;
  std::vector<std::size_t> sizes;
  for (std::size_t i = 0; i < 4096; ++i) {
    std::size_t offset = 0, size = 0;
    const CUresult status = d.func_get_param_info(static_cast<CUfunction>(function_), i, &offset, &size);
    if (status == CUDA_ERROR_INVALID_VALUE) break;  // past the last parameter
    if (status != CUDA_SUCCESS) return;             // the driver cannot tell: no checks
    sizes.push_back(size);
  }
  param_sizes_ = std::move(sizes);
}

int Kernel::max_active_blocks_per_sm(unsigned block, std::size_t dynamic_shared) const {
  const auto& d = driver::api();
  const ContextScope scope(module_->context);
  int blocks = 0;
  SP_CU_CHECK(d.occupancy(&blocks, static_cast<CUfunction>(function_), static_cast<int>(block), dynamic_shared));
  return blocks;
}

void Kernel::check_signature(const std::vector<std::size_t>& sizes, const char* what) const {
  if (!param_sizes_) return;
  const auto& actual = *param_sizes_;
  if (actual.size() != sizes.size())
    throw JitError(fmt::format("kernel '{}' of {} takes {} parameter(s), {} has {}", name_,
                               module_->compiled.program_name, actual.size(), what, sizes.size()));
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (actual[i] != sizes[i])
      throw JitError(fmt::format("kernel '{}' of {}: parameter {} is {} bytes, {} gives {} bytes", name_,
                                 module_->compiled.program_name, i + 1, actual[i], what, sizes[i]));
}

void Kernel::launch_raw(StreamRef stream, const LaunchConfig& config, void** args, const std::size_t* sizes,
                        std::size_t count) const {
  if (stream.device_index() != device_)
    throw JitError(fmt::format("kernel '{}' is loaded on device {} but the stream belongs to device {}", name_,
                               device_, stream.device_index()));
  if (param_sizes_) {
    if (param_sizes_->size() != count)
      throw JitError(fmt::format("kernel '{}' of {} takes {} argument(s), {} given", name_,
                                 module_->compiled.program_name, param_sizes_->size(), count));
    if (sizes != nullptr) check_signature(std::vector<std::size_t>(sizes, sizes + count), "the launch");
  }
  validate(config, Device(device_));
  const auto& d = driver::api();
  const auto f = static_cast<CUfunction>(function_);
  const ContextScope scope(module_->context);
  if (config.dynamic_shared_bytes > 48 * 1024)
    SP_CU_CHECK(d.func_set_attribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     static_cast<int>(config.dynamic_shared_bytes)));
  const CUresult status =
      d.launch_kernel(f, config.grid.x, config.grid.y, config.grid.z, config.block.x, config.block.y,
                      config.block.z, static_cast<unsigned>(config.dynamic_shared_bytes), stream.handle(), args, nullptr);
  if (status != CUDA_SUCCESS) {
    const std::string call = fmt::format("cuLaunchKernel({}, {})", name_, describe(config));
    driver::throw_error(status, call.c_str(), __FILE__, __LINE__);
  }
}

}  // namespace streampipe::jit
